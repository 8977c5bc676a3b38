//===- kiln_ext.cpp - the kiln._kiln extension: Python over runtime.hpp ---===//
//
// The thin compiled layer of the `kiln` package: a model handle whose run()
// takes numpy arrays in place (no copy) and releases the GIL while the model
// runs. Everything Python-shaped (feeds as dicts, onnxruntime's type strings,
// compiling .onnx files) lives in kiln/*.py.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;

namespace {

/// kiln._errors.from_status(code_name, message): builds the Python exception.
nb::handle errorFactory;

using Description = std::tuple<std::string, std::string, std::vector<int64_t>>;

std::vector<Description> describe(const std::vector<kiln::TensorInfo> &infos) {
  std::vector<Description> v;
  for (const kiln::TensorInfo &t : infos)
    v.emplace_back(t.name, t.dtypeName(), t.shape.vec());
  return v;
}

[[noreturn]] void invalid(const std::string &message) {
  throw kiln::Error(KILN_STATUS_INVALID_ARGUMENT, message);
}

/// The kiln element type of an array; `model` is the model's type for the
/// tensor, which lets uint16 bit patterns stand for bfloat16 and uint8 ones for
/// the float8 formats, float8e8m0, float4e2m1, int4, uint4, int2 and uint2
/// (numpy has none of them; ml_dtypes' arrays hold one element per byte).
kiln_dtype dtypeOf(const nb::dlpack::dtype &t, kiln_dtype model,
                   const std::string &what) {
  using Code = nb::dlpack::dtype_code;
  auto code = static_cast<Code>(t.code);
  if (t.lanes == 1) {
    switch (code) {
    case Code::Int:
      switch (t.bits) {
      case 8: return KILN_DTYPE_INT8;
      case 16: return KILN_DTYPE_INT16;
      case 32: return KILN_DTYPE_INT32;
      case 64: return KILN_DTYPE_INT64;
      }
      break;
    case Code::UInt:
      switch (t.bits) {
      case 8:
        switch (model) {
        case KILN_DTYPE_FLOAT8E4M3FN:
        case KILN_DTYPE_FLOAT8E4M3FNUZ:
        case KILN_DTYPE_FLOAT8E5M2:
        case KILN_DTYPE_FLOAT8E5M2FNUZ:
        case KILN_DTYPE_FLOAT8E8M0:
        case KILN_DTYPE_FLOAT4E2M1: // the packed ones: one element per byte
        case KILN_DTYPE_INT4:
        case KILN_DTYPE_UINT4:
        case KILN_DTYPE_INT2:
        case KILN_DTYPE_UINT2:
          return model;
        default:
          return KILN_DTYPE_UINT8;
        }
      case 16:
        return model == KILN_DTYPE_BFLOAT16 ? KILN_DTYPE_BFLOAT16
                                            : KILN_DTYPE_UINT16;
      case 32: return KILN_DTYPE_UINT32;
      case 64: return KILN_DTYPE_UINT64;
      }
      break;
    case Code::Float:
      switch (t.bits) {
      case 16: return KILN_DTYPE_FLOAT16;
      case 32: return KILN_DTYPE_FLOAT32;
      case 64: return KILN_DTYPE_FLOAT64;
      }
      break;
    case Code::Bfloat:
      if (t.bits == 16)
        return KILN_DTYPE_BFLOAT16;
      break;
    case Code::Bool:
      if (t.bits == 8)
        return KILN_DTYPE_BOOL;
      break;
    default:
      break;
    }
  }
  invalid(what + ": its element type (dlpack code " + std::to_string(t.code) +
          ", " + std::to_string(t.bits) + " bits) is not one kiln runs");
}

/// Row-major and dense, so the runtime can read it in place.
template <typename Array>
void checkContiguous(const Array &a, const std::string &what) {
  int64_t expected = 1;
  for (size_t d = a.ndim(); d-- > 0;) {
    if (a.shape(d) != 1 && a.stride(d) != expected)
      invalid(what + ": the array is not C-contiguous");
    expected *= a.shape(d);
  }
}

class PyModel {
public:
  PyModel(const std::string &path, int32_t threads,
          const std::optional<std::string> &device,
          const std::optional<std::string> &cpuVariant) {
    kiln::Options options;
    options.threads = threads;
    options.device = device ? device->c_str() : nullptr;
    options.cpuVariant = cpuVariant ? cpuVariant->c_str() : nullptr;
    nb::gil_scoped_release release; // opening starts the thread pool
    model_ = kiln::Model::open(path, options);
  }

  /// The feeds as runtime inputs read in place (the arrays outlive the run);
  /// the packed dtypes (int4, ...: one element per byte in numpy) are packed
  /// into `packed`, which must outlive the run too.
  std::vector<kiln::Input>
  toInputs(const std::vector<std::string> &inputNames,
           const std::vector<nb::ndarray<nb::ro, nb::device::cpu>> &inputs,
           std::vector<std::vector<uint8_t>> &packed) {
    if (inputNames.size() != inputs.size())
      invalid("run: names and arrays differ in number");
    std::vector<kiln::Input> in(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const auto &a = inputs[i];
      std::string what = "input '" + inputNames[i] + "'";
      kiln_dtype model = KILN_DTYPE_FLOAT32;
      size_t index;
      kiln_status found =
          kiln_model_find_input(model_.get(), inputNames[i].c_str(), &index);
      if (!found)
        model = model_.input(index).dtype;
      kiln_status_free(found); // an unknown name is the run's error to report
      checkContiguous(a, what);
      in[i].name = inputNames[i];
      in[i].dtype = dtypeOf(a.dtype(), model, what);
      in[i].shape.assign(a.shape_ptr(), a.shape_ptr() + a.ndim());
      in[i].data = a.data();
      in[i].byteSize = a.nbytes();
      if (kiln_dtype_bits(in[i].dtype) < 8) {
        int64_t n = static_cast<int64_t>(a.size());
        std::vector<uint8_t> &bytes = packed.emplace_back(
            kiln_dtype_buffer_size(in[i].dtype, n));
        kiln_pack_elements(in[i].dtype, a.data(), bytes.data(), n);
        in[i].data = bytes.data();
        in[i].byteSize = bytes.size();
      }
    }
    return in;
  }

  /// The model's dtype of output `name` (UNDEFINED for an unknown name).
  kiln_dtype outputDtype(const std::string &name) {
    size_t index;
    kiln_status found = kiln_model_find_output(model_.get(), name.c_str(), &index);
    bool known = !found;
    kiln_status_free(found);
    return known ? model_.output(index).dtype : KILN_DTYPE_UNDEFINED;
  }

  /// Runs with every model output given a caller buffer (numpy arrays the
  /// caller allocated). The arrays stay referenced by the caller's frame.
  void run(const std::vector<std::string> &inputNames,
           const std::vector<nb::ndarray<nb::ro, nb::device::cpu>> &inputs,
           const std::vector<std::string> &outputNames,
           const std::vector<nb::ndarray<nb::device::cpu>> &outputs) {
    if (inputNames.size() != inputs.size() ||
        outputNames.size() != outputs.size())
      invalid("run: names and arrays differ in number");
    std::vector<std::vector<uint8_t>> packed;
    std::vector<kiln::Input> in = toInputs(inputNames, inputs, packed);
    std::vector<kiln::OutputBuffer> out(outputs.size());
    for (size_t j = 0; j < outputs.size(); ++j) {
      checkContiguous(outputs[j], "output '" + outputNames[j] + "'");
      out[j] = {outputNames[j], outputs[j].data(), outputs[j].nbytes()};
    }
    nb::gil_scoped_release release;
    model_.run(in, out);
    // Packed outputs (int4, ...) were written packed into the front of the
    // one-byte-per-element array: unpacked in place.
    for (size_t j = 0; j < outputs.size(); ++j) {
      kiln_dtype dtype = outputDtype(outputNames[j]);
      if (kiln_dtype_bits(dtype) < 8)
        kiln_unpack_elements(dtype, outputs[j].data(), outputs[j].data(),
                             static_cast<int64_t>(outputs[j].size()));
    }
  }

  /// Runs with every output allocated by the runtime at this run's size (the
  /// way to run a model whose outputs have symbolic dims). Returns, per output
  /// in model order, (dtype name, shape, bytes): `bytes` is a 1-D uint8 array
  /// that owns the runtime's buffer (freed with the array).
  std::vector<std::tuple<std::string, std::vector<int64_t>,
                         nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>>>
  runAllocating(const std::vector<std::string> &inputNames,
                const std::vector<nb::ndarray<nb::ro, nb::device::cpu>> &inputs) {
    std::vector<std::vector<uint8_t>> packed;
    std::vector<kiln::Input> in = toInputs(inputNames, inputs, packed);
    std::vector<kiln::Tensor> out;
    {
      nb::gil_scoped_release release;
      out = model_.run(in);
    }
    std::vector<std::tuple<std::string, std::vector<int64_t>,
                           nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>>>
        result;
    for (kiln::Tensor &t : out) {
      size_t bytes = t.byteSize();
      kiln_dtype dtype = t.dtype();
      void *data = t.release();
      if (data && kiln_dtype_bits(dtype) < 8) {
        // Packed (int4, ...): one element per byte for numpy.
        int64_t n = 1;
        for (int64_t d : t.shape())
          n *= d;
        void *unpacked = std::malloc(static_cast<size_t>(n));
        if (!unpacked) {
          std::free(data);
          throw std::bad_alloc();
        }
        kiln_unpack_elements(dtype, data, unpacked, n);
        std::free(data);
        data = unpacked;
        bytes = static_cast<size_t>(n);
      }
      // The capsule frees the buffer when numpy drops the last view of it. An
      // output of zero bytes has no buffer; numpy still wants a pointer.
      static uint8_t empty = 0;
      nb::capsule owner = data ? nb::capsule(data, [](void *p) noexcept { std::free(p); })
                               : nb::capsule(&empty, [](void *) noexcept {});
      result.emplace_back(t.dtypeName(), t.shape(),
                          nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(
                              data ? data : &empty, {bytes}, owner));
    }
    return result;
  }

  kiln::Model model_;
};

} // namespace

NB_MODULE(_kiln, m) {
  m.doc() = "kiln's compiled runtime binding (use the kiln package instead)";
  m.attr("api_version") = kiln_api_version();

  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const kiln::Error &e) {
      nb::object exc = errorFactory(e.codeName(), e.what());
      PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(exc.ptr())),
                      exc.ptr());
    }
  });
  m.def("_set_error_factory", [](nb::object factory) {
    errorFactory.dec_ref();
    errorFactory = factory.release();
  });

  nb::class_<PyModel>(m, "Model")
      .def(nb::init<const std::string &, int32_t,
                    const std::optional<std::string> &,
                    const std::optional<std::string> &>(),
           nb::arg("path"), nb::arg("threads") = 0,
           nb::arg("device").none() = nb::none(),
           nb::arg("cpu_variant").none() = nb::none())
      .def_prop_ro("name", [](PyModel &s) { return std::string(s.model_.name()); })
      .def_prop_ro("device",
                   [](PyModel &s) {
                     return std::string(kiln_model_device(s.model_.get()));
                   })
      .def_prop_ro("variant",
                   [](PyModel &s) { return std::string(s.model_.variant()); })
      .def_prop_ro("num_threads", [](PyModel &s) { return s.model_.numThreads(); })
      .def_prop_ro("scratch_size",
                   [](PyModel &s) { return s.model_.scratchSize(); })
      .def("inputs", [](PyModel &s) { return describe(s.model_.inputs()); })
      .def("symbols",
           [](PyModel &s) {
             std::vector<std::tuple<std::string, int64_t, int64_t>> v;
             for (const kiln::SymbolInfo &sym : s.model_.symbols())
               v.emplace_back(sym.name, sym.min, sym.max);
             return v;
           })
      .def("outputs", [](PyModel &s) { return describe(s.model_.outputs()); })
      .def("find_input",
           [](PyModel &s, const std::string &n) { return s.model_.findInput(n); })
      .def("find_output",
           [](PyModel &s, const std::string &n) { return s.model_.findOutput(n); })
      .def("run", &PyModel::run, nb::arg("input_names"), nb::arg("inputs"),
           nb::arg("output_names"), nb::arg("outputs"))
      .def("run_allocating", &PyModel::runAllocating, nb::arg("input_names"),
           nb::arg("inputs"));
}
