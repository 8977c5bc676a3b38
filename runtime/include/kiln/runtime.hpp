//===- kiln/runtime.hpp - C++ wrapper over the kiln runtime's C API -------===//
//
// Header-only and C++17: RAII handles for models, run contexts and statuses,
// views over the model's tensor descriptions, and exceptions that carry the
// runtime's status code and message. Nothing here adds behaviour: every call
// is one C call (docs/runtime-api.md, "C++: kiln/runtime.hpp").
//
//   kiln::Model model = kiln::Model::open("model.so", {/*threads=*/4});
//   std::vector<float> x(1 * 3 * 224 * 224);
//   std::vector<kiln::Tensor> out =
//       model.run({kiln::Input::of("x", x.data(), {1, 3, 224, 224})});
//   kiln::Span<const float> logits = out[0].data<float>();
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_HPP
#define KILN_RUNTIME_HPP

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

//===--- Status and errors -------------------------------------------------===//

/// Owns a kiln_status (NULL means OK) and frees it.
class Status {
public:
  Status() = default;
  explicit Status(kiln_status status) : status_(status) {}
  Status(Status &&other) noexcept : status_(other.release()) {}
  Status &operator=(Status &&other) noexcept {
    if (this != &other)
      reset(other.release());
    return *this;
  }
  Status(const Status &) = delete;
  Status &operator=(const Status &) = delete;
  ~Status() { reset(nullptr); }

  bool ok() const { return status_ == nullptr; }
  explicit operator bool() const { return ok(); }
  kiln_status_code_t code() const { return kiln_status_code(status_); }
  const char *message() const { return kiln_status_message(status_); }
  kiln_status get() const { return status_; }
  kiln_status release() { return std::exchange(status_, nullptr); }
  void reset(kiln_status status) {
    if (status_)
      kiln_status_free(status_);
    status_ = status;
  }

private:
  kiln_status status_ = nullptr;
};

/// What every failed call throws: the runtime's code and message, unchanged.
class Error : public std::runtime_error {
public:
  Error(kiln_status_code_t code, const std::string &message)
      : std::runtime_error(message), code_(code) {}
  kiln_status_code_t code() const { return code_; }
  const char *codeName() const { return kiln_status_code_string(code_); }

private:
  kiln_status_code_t code_;
};

/// Throws kiln::Error if `status` is an error (and frees it either way).
inline void check(kiln_status status) {
  Status owned(status);
  if (!owned.ok())
    throw Error(owned.code(), owned.message());
}

//===--- Views ------------------------------------------------------------===//

/// A non-owning view of contiguous elements (std::span's subset, for C++17).
template <typename T> class Span {
public:
  Span() = default;
  Span(T *data, size_t size) : data_(data), size_(size) {}
  template <typename C>
  Span(C &container) : data_(container.data()), size_(container.size()) {}
  T *data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T &operator[](size_t i) const { return data_[i]; }
  T *begin() const { return data_; }
  T *end() const { return data_ + size_; }
  std::vector<std::remove_const_t<T>> vec() const { return {begin(), end()}; }

private:
  T *data_ = nullptr;
  size_t size_ = 0;
};

/// The element type of a C++ type, for Input::of and Tensor::data.
template <typename T> constexpr kiln_dtype dtypeOf();
template <> constexpr kiln_dtype dtypeOf<float>() { return KILN_DTYPE_FLOAT32; }
template <> constexpr kiln_dtype dtypeOf<double>() { return KILN_DTYPE_FLOAT64; }
template <> constexpr kiln_dtype dtypeOf<int8_t>() { return KILN_DTYPE_INT8; }
template <> constexpr kiln_dtype dtypeOf<int16_t>() { return KILN_DTYPE_INT16; }
template <> constexpr kiln_dtype dtypeOf<int32_t>() { return KILN_DTYPE_INT32; }
template <> constexpr kiln_dtype dtypeOf<int64_t>() { return KILN_DTYPE_INT64; }
template <> constexpr kiln_dtype dtypeOf<uint8_t>() { return KILN_DTYPE_UINT8; }
template <> constexpr kiln_dtype dtypeOf<uint16_t>() { return KILN_DTYPE_UINT16; }
template <> constexpr kiln_dtype dtypeOf<uint32_t>() { return KILN_DTYPE_UINT32; }
template <> constexpr kiln_dtype dtypeOf<uint64_t>() { return KILN_DTYPE_UINT64; }
template <> constexpr kiln_dtype dtypeOf<bool>() { return KILN_DTYPE_BOOL; }

/// A symbol of a model compiled with symbolic dims (model-owned name): every
/// run binds it to a size in min..max (max KILN_DIM_UNBOUNDED: no bound).
struct SymbolInfo {
  const char *name = nullptr;
  int64_t min = 1;
  int64_t max = KILN_DIM_UNBOUNDED;
};

/// A model input or output as the model describes it (model-owned strings).
struct TensorInfo {
  const char *name = nullptr;
  kiln_dtype dtype = KILN_DTYPE_FLOAT32;
  Span<const int64_t> shape;

  const char *dtypeName() const { return kiln_dtype_name(dtype); }
  /// True when a dim is a symbol (KILN_DIM_IS_SYMBOL): its size is known per
  /// run only, so numElements()/byteSize() do not apply.
  bool hasSymbols() const {
    for (int64_t d : shape)
      if (KILN_DIM_IS_SYMBOL(d))
        return true;
    return false;
  }
  /// Static shapes only (see hasSymbols()).
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t byteSize() const {
    return kiln_dtype_buffer_size(dtype, numElements()); // packed: ceil(n*bits/8)
  }
};

//===--- Tensors ----------------------------------------------------------===//

/// An input: borrowed data, read only during the run. Matched by name.
struct Input {
  std::string name;
  kiln_dtype dtype = KILN_DTYPE_FLOAT32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t byteSize = 0; // 0: not checked

  template <typename T>
  static Input of(std::string name, const T *data, std::vector<int64_t> shape) {
    Input in{std::move(name), dtypeOf<T>(), std::move(shape), data, 0};
    in.byteSize = static_cast<size_t>(in.numElements()) * sizeof(T);
    return in;
  }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// An output buffer the caller owns (`bytes` at `data`). Matched by name.
struct OutputBuffer {
  std::string name;
  void *data = nullptr;
  size_t byteSize = 0;
};

/// A runtime-allocated output, owned (freed with kiln_tensor_free_data).
class Tensor {
public:
  const std::string &name() const { return name_; }
  kiln_dtype dtype() const { return dtype_; }
  const char *dtypeName() const { return kiln_dtype_name(dtype_); }
  const std::vector<int64_t> &shape() const { return shape_; }
  size_t byteSize() const { return byteSize_; }
  const void *raw() const { return data_.get(); }
  void *raw() { return data_.get(); }
  /// Gives up ownership: the caller frees the returned buffer with std::free
  /// (NULL for an output of zero bytes).
  void *release() { return data_.release(); }

  /// The elements as T; throws if T is not the tensor's element type.
  template <typename T> Span<const T> data() const {
    checkType(dtypeOf<T>());
    return {static_cast<const T *>(raw()), byteSize_ / sizeof(T)};
  }
  template <typename T> Span<T> data() {
    checkType(dtypeOf<T>());
    return {static_cast<T *>(raw()), byteSize_ / sizeof(T)};
  }

private:
  friend class Model;
  struct Free {
    void operator()(void *p) const { std::free(p); }
  };
  void checkType(kiln_dtype want) const {
    if (want != dtype_)
      throw Error(KILN_STATUS_INVALID_ARGUMENT,
                  "output '" + name_ + "' has dtype " + dtypeName() +
                      ", not " + kiln_dtype_name(want));
  }

  std::string name_;
  kiln_dtype dtype_ = KILN_DTYPE_FLOAT32;
  std::vector<int64_t> shape_;
  size_t byteSize_ = 0;
  std::unique_ptr<void, Free> data_;
};

//===--- Model and run contexts -------------------------------------------===//

/// kiln_model_options without the field initialisation to remember.
struct Options {
  int32_t threads = 0;       // 0: one per CPU; 1: no worker threads
  void *scratch = nullptr;   // optional caller-owned arena
  size_t scratchSize = 0;
  const char *device = nullptr; // "auto", "cpu", "vulkan[:DEVICE]", "cuda[:DEVICE]"
  const char *cpuVariant = nullptr; // a multi-variant artifact's CPU variant

  kiln_model_options c() const {
    kiln_model_options o;
    kiln_model_options_init(&o);
    o.num_threads = threads;
    o.scratch = scratch;
    o.scratch_size = scratchSize;
    o.device = device;
    o.cpu_variant = cpuVariant;
    return o;
  }
};

class RunContext;

/// An opened model. Move-only; closes the model when destroyed. run() may be
/// called from many threads at once (the runtime's kiln_model_run is
/// thread-safe); destroying the model must not race with a run.
class Model {
public:
  static Model open(const std::string &path, const Options &options = {}) {
    kiln_model_options o = options.c();
    kiln_model *m = nullptr;
    check(kiln_model_open(path.c_str(), &o, &m));
    return Model(m);
  }
  /// A model linked into the program (`<name>_descriptor()`); the descriptor
  /// must outlive the model.
  static Model openDescriptor(const kiln_model_desc *desc,
                              const Options &options = {}) {
    kiln_model_options o = options.c();
    kiln_model *m = nullptr;
    check(kiln_model_open_descriptor(desc, &o, &m));
    return Model(m);
  }
  /// A multi-variant model linked into the program (`<name>_artifact()`):
  /// the variant the options, KILN_CPU or this CPU select.
  static Model openArtifact(const kiln_artifact_desc *artifact,
                            const Options &options = {}) {
    kiln_model_options o = options.c();
    kiln_model *m = nullptr;
    check(kiln_model_open_artifact(artifact, &o, &m));
    return Model(m);
  }

  Model() = default; // no model: get() is NULL
  Model(Model &&other) noexcept : model_(std::exchange(other.model_, nullptr)) {}
  Model &operator=(Model &&other) noexcept {
    if (this != &other) {
      close();
      model_ = std::exchange(other.model_, nullptr);
    }
    return *this;
  }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  ~Model() { close(); }

  void close() {
    if (model_)
      kiln_model_close(std::exchange(model_, nullptr));
  }
  kiln_model *get() const { return model_; }

  const char *name() const { return kiln_model_name(model_); }
  /// The CPU variant opened ("" for a model without variants).
  const char *variant() const { return kiln_model_variant(model_); }
  int32_t numThreads() const { return kiln_model_num_threads(model_); }
  uint64_t scratchSize() const { return kiln_model_scratch_size(model_); }
  size_t numInputs() const { return kiln_model_num_inputs(model_); }
  size_t numOutputs() const { return kiln_model_num_outputs(model_); }

  TensorInfo input(size_t i) const {
    kiln_tensor_info info;
    check(kiln_model_input_info(model_, i, &info));
    return toInfo(info);
  }
  TensorInfo output(size_t i) const {
    kiln_tensor_info info;
    check(kiln_model_output_info(model_, i, &info));
    return toInfo(info);
  }
  std::vector<TensorInfo> inputs() const {
    std::vector<TensorInfo> v;
    for (size_t i = 0; i < numInputs(); ++i)
      v.push_back(input(i));
    return v;
  }
  std::vector<TensorInfo> outputs() const {
    std::vector<TensorInfo> v;
    for (size_t i = 0; i < numOutputs(); ++i)
      v.push_back(output(i));
    return v;
  }
  /// The symbols input dims name (KILN_DIM_SYMBOL_ID(dim) indexes them);
  /// empty for a model with static shapes.
  std::vector<SymbolInfo> symbols() const {
    std::vector<SymbolInfo> v(kiln_model_num_symbols(model_));
    for (size_t i = 0; i < v.size(); ++i)
      check(kiln_model_symbol_info(model_, i, &v[i].name, &v[i].min, &v[i].max));
    return v;
  }
  /// The index of an input/output; throws NOT_FOUND naming the model's names.
  size_t findInput(const std::string &name) const {
    size_t i = 0;
    check(kiln_model_find_input(model_, name.c_str(), &i));
    return i;
  }
  size_t findOutput(const std::string &name) const {
    size_t i = 0;
    check(kiln_model_find_output(model_, name.c_str(), &i));
    return i;
  }

  /// Runs with every output allocated by the runtime; returns them in model order.
  std::vector<Tensor> run(const std::vector<Input> &inputs) {
    return runAllocating(nullptr, inputs);
  }
  /// Runs into caller-provided buffers (every output named once).
  void run(const std::vector<Input> &inputs,
           const std::vector<OutputBuffer> &outputs) {
    runInto(nullptr, inputs, outputs);
  }

private:
  friend class RunContext;
  explicit Model(kiln_model *model) : model_(model) {}

  static TensorInfo toInfo(const kiln_tensor_info &info) {
    return {info.name, info.dtype,
            Span<const int64_t>(info.shape, static_cast<size_t>(info.rank))};
  }
  static std::vector<kiln_tensor> cInputs(const std::vector<Input> &inputs) {
    std::vector<kiln_tensor> v(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Input &in = inputs[i];
      v[i].name = in.name.c_str();
      v[i].dtype = in.dtype;
      v[i].rank = static_cast<int32_t>(in.shape.size());
      v[i].shape = in.shape.data();
      v[i].data = const_cast<void *>(in.data); // the runtime only reads it
      v[i].byte_size = in.byteSize;
    }
    return v;
  }
  kiln_status callRun(RunContext *context, const std::vector<kiln_tensor> &in,
                      std::vector<kiln_tensor> &out);

  std::vector<Tensor> runAllocating(RunContext *context,
                                    const std::vector<Input> &inputs) {
    std::vector<kiln_tensor> in = cInputs(inputs);
    std::vector<kiln_tensor> out(numOutputs());
    for (size_t j = 0; j < out.size(); ++j) {
      out[j] = kiln_tensor{};
      out[j].name = output(j).name;
    }
    check(callRun(context, in, out));
    std::vector<Tensor> result(out.size());
    for (size_t j = 0; j < out.size(); ++j) {
      Tensor &t = result[j];
      t.data_.reset(out[j].data);
      t.name_ = out[j].name;
      t.dtype_ = out[j].dtype;
      t.shape_.assign(out[j].shape, out[j].shape + out[j].rank);
      t.byteSize_ = out[j].byte_size;
    }
    return result;
  }
  void runInto(RunContext *context, const std::vector<Input> &inputs,
               const std::vector<OutputBuffer> &outputs) {
    std::vector<kiln_tensor> in = cInputs(inputs);
    std::vector<kiln_tensor> out(outputs.size());
    for (size_t j = 0; j < outputs.size(); ++j) {
      out[j] = kiln_tensor{};
      out[j].name = outputs[j].name.c_str();
      out[j].data = outputs[j].data;
      out[j].byte_size = outputs[j].byteSize;
      if (!out[j].data) // a NULL buffer would make the runtime allocate
        throw Error(KILN_STATUS_INVALID_ARGUMENT,
                    "output '" + outputs[j].name + "': data is NULL");
    }
    check(callRun(context, in, out));
  }

  kiln_model *model_ = nullptr;
};

/// A run context: one caller's scratch arena, for a thread that runs the same
/// model many times. Must not outlive its model; one thread at a time.
class RunContext {
public:
  explicit RunContext(Model &model) : model_(&model) {
    check(kiln_run_context_create(model.get(), &context_));
  }
  RunContext(RunContext &&other) noexcept
      : model_(other.model_), context_(std::exchange(other.context_, nullptr)) {}
  RunContext &operator=(RunContext &&other) noexcept {
    if (this != &other) {
      reset();
      model_ = other.model_;
      context_ = std::exchange(other.context_, nullptr);
    }
    return *this;
  }
  RunContext(const RunContext &) = delete;
  RunContext &operator=(const RunContext &) = delete;
  ~RunContext() { reset(); }

  kiln_run_context *get() const { return context_; }
  std::vector<Tensor> run(const std::vector<Input> &inputs) {
    return model_->runAllocating(this, inputs);
  }
  void run(const std::vector<Input> &inputs,
           const std::vector<OutputBuffer> &outputs) {
    model_->runInto(this, inputs, outputs);
  }

private:
  void reset() {
    if (context_)
      kiln_run_context_destroy(std::exchange(context_, nullptr));
  }
  Model *model_;
  kiln_run_context *context_ = nullptr;
};

inline kiln_status Model::callRun(RunContext *context,
                                  const std::vector<kiln_tensor> &in,
                                  std::vector<kiln_tensor> &out) {
  if (context)
    return kiln_model_run_with_context(model_, context->get(), in.data(),
                                       in.size(), out.data(), out.size());
  return kiln_model_run(model_, in.data(), in.size(), out.data(), out.size());
}

} // namespace kiln

#endif // KILN_RUNTIME_HPP
