//===- descriptor_fuzzer.cpp - libFuzzer target: model descriptors --------===//
//
// Builds a kiln_model_desc from the fuzz bytes (counts, names, dtypes, dims,
// executables, dispatches, memory needs, check messages), opens it with
// kiln_model_open_descriptor and, when it opens, describes it and runs it
// with a stand-in entry; also checks the bytes as a model file's checksum
// trailer (kiln_model_open's first step). The runtime must answer every
// descriptor with a status, never a crash or a sanitizer report.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

extern "C" {
#include "internal.h"
}

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

/// Reads values off the fuzz bytes; zeros once they run out.
struct Reader {
  const uint8_t *data;
  size_t size, pos = 0;
  uint8_t u8() { return pos < size ? data[pos++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v |= uint32_t(u8()) << (8 * i);
    return v;
  }
  uint64_t u64() { return uint64_t(u32()) | (uint64_t(u32()) << 32); }
  /// A small count, now and then a large one (a count without its array).
  uint32_t count() {
    uint8_t c = u8();
    return c < 250 ? c % 5 : u32();
  }
  /// A dim: mostly small, sometimes extreme.
  int64_t dim() {
    uint8_t c = u8();
    if (c < 200)
      return c % 7;
    return static_cast<int64_t>(u64());
  }
};

int32_t gEntryResult = 0;
kiln_model_status entry(void *const *, void *const *, void *,
                        kiln_exec_context *) {
  return gEntryResult;
}

struct Built {
  std::deque<std::string> strings;
  std::deque<std::vector<int64_t>> shapes;
  std::vector<kiln_tensor_desc> inputs, outputs;
  std::vector<kiln_dim_symbol> symbols;
  std::vector<kiln_executable_desc> executables;
  std::vector<const char *> kernelNames;
  std::vector<kiln_binding_desc> bindings;
  std::vector<kiln_dispatch_desc> dispatches;
  std::vector<kiln_memory_need> needs;
  std::vector<const char *> checks;
  std::vector<unsigned char> blob = std::vector<unsigned char>(64);
  kiln_model_desc desc{};

  const char *string(Reader &r) {
    uint8_t c = r.u8();
    if (c == 255)
      return nullptr;
    std::string s;
    for (uint8_t i = 0; i < c % 12; ++i)
      s += static_cast<char>(r.u8() % 4 ? 'a' + r.u8() % 26 : r.u8());
    strings.push_back(s);
    return strings.back().c_str();
  }
  void tensors(Reader &r, std::vector<kiln_tensor_desc> &out, uint32_t n) {
    out.resize(n);
    for (kiln_tensor_desc &t : out) {
      t.name = string(r);
      uint8_t d = r.u8();
      t.dtype = d < 240 ? d % 18 : static_cast<int32_t>(r.u32());
      uint8_t rank = r.u8();
      t.rank = rank < 250 ? rank % 5 : static_cast<int32_t>(r.u32() % 64);
      shapes.emplace_back();
      for (int32_t i = 0; i < (t.rank > 0 && t.rank < 64 ? t.rank : 0); ++i)
        shapes.back().push_back(r.dim());
      t.shape = r.u8() == 7 ? nullptr : shapes.back().data();
    }
  }
};

void build(Reader &r, Built &b) {
  kiln_model_desc &d = b.desc;
  uint8_t v = r.u8();
  d.abi_version = v < 250 ? KILN_MODEL_ABI_VERSION : r.u32();
  d.name = b.string(r);
  d.producer = b.string(r);
  d.target_triple = b.string(r);
  d.cpu = b.string(r);
  d.cpu_features = r.u8() % 8 ? "" : b.string(r);
  d.flags = r.u8() == 3 ? r.u32() : 0;

  uint32_t ni = r.count(), no = r.count();
  b.tensors(r, b.inputs, ni < 16 ? ni : 0);
  b.tensors(r, b.outputs, no < 16 ? no : 0);
  d.num_inputs = ni, d.num_outputs = no;
  d.inputs = b.inputs.empty() && r.u8() % 2 ? nullptr : b.inputs.data();
  d.outputs = b.outputs.empty() && r.u8() % 2 ? nullptr : b.outputs.data();

  uint32_t ns = r.u8() % 16 == 0 ? r.count() : 0;
  for (uint32_t i = 0; i < (ns < 16 ? ns : 0); ++i)
    b.symbols.push_back({b.string(r), static_cast<int64_t>(r.u64()),
                         static_cast<int64_t>(r.u64())});
  d.num_symbols = ns;
  d.symbols = b.symbols.empty() ? nullptr : b.symbols.data();
  d.num_dynamic_offsets = r.u8() % 16 == 0 ? r.u32() : 0;

  uint32_t ne = r.u8() % 8 ? 1 : r.count();
  for (uint32_t i = 0; i < (ne < 16 ? ne : 0); ++i) {
    kiln_executable_desc x{};
    x.format = r.u8() % 6;
    x.flags = r.u8() == 9 ? r.u32() : 0;
    x.target = b.string(r);
    if (x.format == KILN_EXECUTABLE_HOST) {
      x.entry = r.u8() % 8 ? entry : nullptr;
    } else {
      x.data = r.u8() % 8 ? b.blob.data() : nullptr;
      x.size = r.u8() % 8 ? b.blob.size() : r.u64();
      x.num_kernels = r.count();
      if (b.kernelNames.empty())
        for (int k = 0; k < 4; ++k)
          b.kernelNames.push_back(b.string(r));
      x.kernel_names = r.u8() % 8 ? b.kernelNames.data() : nullptr;
      if (x.num_kernels > b.kernelNames.size() && x.kernel_names)
        x.num_kernels = static_cast<uint32_t>(b.kernelNames.size());
    }
    b.executables.push_back(x);
  }
  d.num_executables = ne;
  d.executables = b.executables.empty() ? nullptr : b.executables.data();
  d.entry_executable = r.u8() % 8 ? 0 : r.u32();

  uint32_t nd = r.u8() % 8 ? 0 : r.count();
  for (uint32_t i = 0; i < 8; ++i) {
    kiln_binding_desc bd{};
    bd.kind = r.u8() % 4;
    bd.index = r.u8() % 4;
    bd.flags = r.u8() % 3;
    bd.offset = r.u64();
    bd.size = r.u64();
    b.bindings.push_back(bd);
  }
  for (uint32_t i = 0; i < (nd < 16 ? nd : 0); ++i) {
    kiln_dispatch_desc x{};
    x.executable = r.u8() % 4;
    x.kernel = r.u8() % 6;
    x.num_bindings = r.u8() % 10;
    if (x.num_bindings > b.bindings.size())
      x.num_bindings = static_cast<uint32_t>(b.bindings.size());
    x.bindings = r.u8() % 8 ? b.bindings.data() : nullptr;
    b.dispatches.push_back(x);
  }
  d.num_dispatches = nd;
  d.dispatches = b.dispatches.empty() ? nullptr : b.dispatches.data();

  uint32_t nm = r.u8() % 8 ? 1 : r.count();
  for (uint32_t i = 0; i < (nm < 16 ? nm : 0); ++i) {
    kiln_memory_need m{};
    m.kind = r.u8() % 5;
    m.flags = r.u8() == 5 ? r.u32() : 0;
    uint8_t s = r.u8();
    m.size = s < 200 ? s * 64u : r.u64();
    // Sizes a real model may ask for but this process should not allocate
    // thousands of times; sizes from 2^40 up stay (the overflow checks).
    if (m.size > (uint64_t(256) << 20) && m.size < (uint64_t(1) << 40))
      m.size = uint64_t(256) << 20;
    uint8_t a = r.u8();
    m.alignment = a < 200 ? uint64_t(1) << (a % 8) : r.u64();
    m.initial_data = r.u8() % 4 ? nullptr : b.blob.data();
    b.needs.push_back(m);
  }
  d.num_memory_needs = nm;
  d.memory_needs = b.needs.empty() ? nullptr : b.needs.data();

  uint32_t nc = r.count();
  for (uint32_t i = 0; i < (nc < 16 ? nc : 0); ++i)
    b.checks.push_back(b.string(r));
  d.num_check_messages = nc;
  d.check_messages = b.checks.empty() ? nullptr : b.checks.data();
  gEntryResult = static_cast<int32_t>(r.u8() % 8 ? 0 : r.u32());
}

void describeAndRun(kiln_model *model, Reader &r) {
  size_t ni = kiln_model_num_inputs(model), no = kiln_model_num_outputs(model);
  std::vector<kiln_tensor> inputs, outputs;
  std::deque<std::vector<unsigned char>> buffers;
  size_t total = 0;
  for (size_t i = 0; i < ni + no; ++i) {
    kiln_tensor_info info;
    kiln_status s = i < ni ? kiln_model_input_info(model, i, &info)
                           : kiln_model_output_info(model, i - ni, &info);
    if (s) { // describing an opened model must not fail
      kiln_status_free(s);
      abort();
    }
    size_t index = 0;
    s = i < ni ? kiln_model_find_input(model, info.name, &index)
               : kiln_model_find_output(model, info.name, &index);
    kiln_status_free(s);
    size_t bytes = kiln_tensor_info_byte_size(&info);
    // Too large to run here (the open was what counted); compared so that a
    // size near SIZE_MAX cannot wrap the total.
    if (bytes > (size_t(1) << 20) - total)
      return;
    total += bytes;
    buffers.emplace_back(bytes ? bytes : 1, r.u8() % 3);
    kiln_tensor t{
        info.name, info.dtype, info.rank, info.shape, buffers.back().data(),
        bytes};
    if (i < ni)
      inputs.push_back(t);
    else
      outputs.push_back(t);
  }
  if (r.u8() % 2)
    for (kiln_tensor &t : outputs)
      t.data = nullptr; // runtime-allocated
  kiln_status s = kiln_model_run(model, inputs.data(), inputs.size(),
                                 outputs.data(), outputs.size());
  if (!s)
    for (size_t k = 0; k < outputs.size(); ++k)
      if (outputs[k].data != buffers[ni + k].data())
        kiln_tensor_free_data(&outputs[k]);
  kiln_status_free(s);
}

/// The same bytes as a model file: the checksum trailer check reads them
/// with plain file I/O (never dlopen, which trusts its input).
void checkAsFile(const uint8_t *data, size_t size) {
  static std::string path = [] {
    char dir[] = "/tmp/kiln_fuzz_XXXXXX";
    if (!mkdtemp(dir))
      abort();
    return std::string(dir) + "/model.so";
  }();
  FILE *f = fopen(path.c_str(), "wb");
  if (!f)
    return;
  fwrite(data, 1, size, f);
  fclose(f);
  kiln_status_free(kiln_check_artifact(path.c_str(), 1));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 0 && data[0] == 0xA5) {
    checkAsFile(data + 1, size - 1);
    return 0;
  }
  Reader r{data, size};
  Built b;
  build(r, b);
  kiln_model_options options;
  kiln_model_options_init(&options);
  options.num_threads = 1 + r.u8() % 2;
  kiln_model *model = nullptr;
  kiln_status s = kiln_model_open_descriptor(&b.desc, &options, &model);
  if (s) {
    (void)kiln_status_message(s);
    kiln_status_free(s);
    return 0;
  }
  describeAndRun(model, r);
  kiln_model_close(model);
  return 0;
}
