// The runtime's Vulkan back end on descriptors built by hand around small
// SPIR-V modules (spirv/*.spvasm, assembled and validated at build time):
// numbers, descriptor validation, device selection, the bad cases (no loader,
// no device, out of device memory, a missing feature), concurrent runs and
// the device-buffer API. They run on Mesa's lavapipe (VK_ICD_FILENAMES is
// pointed at it unless set). Without a usable Vulkan the tests that need one
// skip, and FAIL in CI (CI=true or KILN_CI=1), where lavapipe is installed.
#include "test_util.h"

#include "kiln/runtime.h"

#include <gtest/gtest.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

using kiln_test::ScopedEnv;
using kiln_test::statusString;

// Runtime internals the tests look at (hidden symbols of the static library).
extern "C" uint64_t kiln_spirv_written_bindings(const void *data,
                                                uint64_t size);
extern "C" uint32_t kiln_model_dispatch_barriers(kiln_model *model);

namespace {

//===----------------------------------------------------------------------===//
// Environment
//===----------------------------------------------------------------------===//

bool inCI() {
  const char *ci = std::getenv("CI");
  const char *kci = std::getenv("KILN_CI");
  return (ci && std::string(ci) == "true") || (kci && std::string(kci) == "1");
}

// lavapipe, unless the caller chose a driver.
struct LavapipeByDefault {
  LavapipeByDefault() {
    if (std::getenv("VK_ICD_FILENAMES"))
      return;
    for (const char *path : {"/usr/share/vulkan/icd.d/lvp_icd.x86_64.json",
                             "/usr/share/vulkan/icd.d/lvp_icd.aarch64.json"}) {
      struct stat st;
      if (stat(path, &st) == 0) {
        setenv("VK_ICD_FILENAMES", path, 1);
        return;
      }
    }
  }
} lavapipeByDefault;

std::vector<char> loadSpirv(const std::string &name) {
  std::ifstream in(std::string(KILN_TEST_SPIRV_DIR) + "/" + name + ".spv",
                   std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

//===----------------------------------------------------------------------===//
// Descriptors built by hand
//===----------------------------------------------------------------------===//

struct Binding {
  uint32_t kind, index;
  uint64_t offset = 0, size = 0;
};

// A model of float32 tensors over the test modules; build() gives the
// descriptor (valid while the builder lives and is not changed).
class ModelBuilder {
public:
  explicit ModelBuilder(const char *name = "vk_test") { desc.name = name; }

  uint32_t input(const char *name, std::vector<int64_t> shape,
                 int32_t dtype = KILN_DTYPE_FLOAT32) {
    inputs.push_back(tensor(name, std::move(shape), dtype));
    return (uint32_t)inputs.size() - 1;
  }
  uint32_t output(const char *name, std::vector<int64_t> shape,
                  int32_t dtype = KILN_DTYPE_FLOAT32) {
    outputs.push_back(tensor(name, std::move(shape), dtype));
    return (uint32_t)outputs.size() - 1;
  }
  uint32_t module(const std::string &file, std::vector<const char *> kernels,
                  uint32_t format = KILN_EXECUTABLE_SPIRV) {
    code.push_back(loadSpirv(file));
    names.push_back(std::move(kernels));
    kiln_executable_desc x = {};
    x.format = format;
    x.target = "vulkan1.1";
    executables.push_back(x);
    return (uint32_t)executables.size() - 1;
  }
  uint32_t constants(std::vector<float> data) {
    weights.push_back(std::move(data));
    kiln_memory_need need = {};
    need.kind = KILN_MEMORY_DEVICE_CONSTANT;
    need.size = weights.back().size() * sizeof(float);
    need.alignment = 256;
    need.initial_data =
        weights.back().empty() ? nullptr : weights.back().data();
    needs.push_back(need);
    return (uint32_t)needs.size() - 1;
  }
  uint32_t arena(uint64_t size) {
    kiln_memory_need need = {};
    need.kind = KILN_MEMORY_DEVICE_LOCAL;
    need.size = size;
    need.alignment = 256;
    needs.push_back(need);
    return (uint32_t)needs.size() - 1;
  }
  kiln_dispatch_desc &dispatch(uint32_t executable, uint32_t kernel,
                               uint32_t groups, uint32_t groupSize,
                               std::vector<Binding> binds,
                               std::vector<uint32_t> pushed) {
    std::vector<kiln_binding_desc> b;
    for (const Binding &x : binds) {
      kiln_binding_desc d = {};
      d.kind = x.kind, d.index = x.index, d.offset = x.offset, d.size = x.size;
      b.push_back(d);
    }
    bindings.push_back(std::move(b));
    pushes.push_back(std::move(pushed));
    kiln_dispatch_desc d = {};
    d.executable = executable;
    d.kernel = kernel;
    d.workgroup_count[0] = groups;
    d.workgroup_count[1] = d.workgroup_count[2] = 1;
    d.workgroup_size[0] = groupSize;
    d.workgroup_size[1] = d.workgroup_size[2] = 1;
    dispatches.push_back(d);
    return dispatches.back();
  }

  void setConstants(uint32_t d, std::vector<uint32_t> words) {
    pushes[d] = std::move(words);
  }

  const kiln_model_desc *build() {
    desc.abi_version = KILN_MODEL_ABI_VERSION;
    desc.producer = "vulkan_test";
    desc.target_triple = "x86_64-unknown-linux-gnu";
    desc.cpu = "";
    desc.cpu_features = "";
    desc.num_inputs = (uint32_t)inputs.size();
    desc.inputs = inputs.data();
    desc.num_outputs = (uint32_t)outputs.size();
    desc.outputs = outputs.data();
    for (size_t e = 0; e < executables.size(); ++e) {
      if (executables[e].format == KILN_EXECUTABLE_HOST)
        continue;
      executables[e].data = code[e].data();
      executables[e].size = code[e].size();
      executables[e].num_kernels = (uint32_t)names[e].size();
      executables[e].kernel_names = names[e].data();
    }
    desc.num_executables = (uint32_t)executables.size();
    desc.executables = executables.data();
    desc.entry_executable = KILN_NO_EXECUTABLE;
    for (size_t d = 0; d < dispatches.size(); ++d) {
      dispatches[d].num_bindings = (uint32_t)bindings[d].size();
      dispatches[d].bindings = bindings[d].data();
      dispatches[d].num_constants = (uint32_t)pushes[d].size();
      dispatches[d].constants = pushes[d].data();
    }
    desc.num_dispatches = (uint32_t)dispatches.size();
    desc.dispatches = dispatches.data();
    desc.num_memory_needs = (uint32_t)needs.size();
    desc.memory_needs = needs.data();
    return &desc;
  }

  std::vector<kiln_executable_desc> executables;
  std::vector<kiln_dispatch_desc> dispatches;
  std::vector<kiln_memory_need> needs;
  std::vector<std::vector<char>> code;

private:
  kiln_tensor_desc tensor(const char *name, std::vector<int64_t> shape,
                          int32_t dtype) {
    shapes.push_back(std::move(shape));
    kiln_tensor_desc t = {};
    t.name = name;
    t.dtype = dtype;
    t.rank = (int32_t)shapes.back().size();
    t.shape = shapes.back().data();
    return t;
  }

  kiln_model_desc desc = {};
  std::deque<std::vector<int64_t>> shapes;
  std::vector<kiln_tensor_desc> inputs, outputs;
  std::deque<std::vector<const char *>> names;
  std::deque<std::vector<kiln_binding_desc>> bindings;
  std::deque<std::vector<uint32_t>> pushes;
  std::deque<std::vector<float>> weights;
};

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

constexpr uint32_t IN = KILN_BINDING_INPUT, OUT = KILN_BINDING_OUTPUT,
                   MEM = KILN_BINDING_MEMORY;

// c = a + b over n floats, one dispatch.
void buildAdd(ModelBuilder &m, int64_t n) {
  m.input("a", {n});
  m.input("b", {n});
  m.output("c", {n});
  uint32_t e = m.module("elementwise", {"add", "mul", "scale"});
  m.dispatch(e, 0, (uint32_t)((n + 63) / 64), 64, {{IN, 0}, {IN, 1}, {OUT, 0}},
             {(uint32_t)n});
}

kiln_model *openOn(const kiln_model_desc *desc, const char *device,
                   std::string *error) {
  kiln_model_options options;
  kiln_model_options_init(&options);
  options.device = device;
  kiln_model *model = nullptr;
  kiln_status status = kiln_model_open_descriptor(desc, &options, &model);
  *error = statusString(status);
  return model;
}

// Whether Vulkan can run here at all (a loader, lavapipe or another device).
// Only the first call opens something.
const std::string &vulkanProblem() {
  static const std::string problem = [] {
    ModelBuilder m;
    buildAdd(m, 4);
    std::string error;
    kiln_model *model = openOn(m.build(), "vulkan", &error);
    kiln_model_close(model);
    return model ? std::string() : error;
  }();
  return problem;
}

#define REQUIRE_VULKAN()                                                       \
  do {                                                                         \
    if (!vulkanProblem().empty()) {                                            \
      if (inCI())                                                              \
        FAIL() << "Vulkan is required in CI: " << vulkanProblem();             \
      GTEST_SKIP() << "no usable Vulkan: " << vulkanProblem();                 \
    }                                                                          \
  } while (0)

class ModelHandle {
public:
  explicit ModelHandle(kiln_model *m = nullptr) : model(m) {}
  ~ModelHandle() { kiln_model_close(model); }
  kiln_model *get() const { return model; }

private:
  kiln_model *model;
};

kiln_tensor floatTensor(const char *name, std::vector<float> &data) {
  kiln_tensor t = {};
  t.name = name;
  t.dtype = KILN_DTYPE_FLOAT32;
  t.data = data.data();
  t.byte_size = data.size() * sizeof(float);
  return t;
}

//===----------------------------------------------------------------------===//
// Numbers
//===----------------------------------------------------------------------===//

TEST(Vulkan, AddRunsAndResubmits) {
  REQUIRE_VULKAN();
  const int64_t n = 1000; // not a multiple of the workgroup size
  ModelBuilder m;
  buildAdd(m, n);
  std::string error;
  ModelHandle model(openOn(m.build(), nullptr, &error)); // auto
  ASSERT_TRUE(model.get()) << error;
  EXPECT_STREQ(kiln_model_device(model.get()), "vulkan");
  EXPECT_EQ(kiln_model_num_threads(model.get()), 1);
  std::vector<float> a(n), b(n), c(n, -1.0f);
  int64_t shape[] = {n};
  for (int round = 0; round < 3; ++round) {
    for (int64_t i = 0; i < n; ++i)
      a[i] = (float)i + round, b[i] = 0.5f * (float)i;
    kiln_tensor inputs[2] = {floatTensor("a", a), floatTensor("b", b)};
    inputs[0].rank = inputs[1].rank = 1;
    inputs[0].shape = inputs[1].shape = shape;
    kiln_tensor output = floatTensor("c", c);
    ASSERT_EQ(statusString(kiln_model_run(model.get(), inputs, 2, &output, 1)),
              "OK");
    EXPECT_EQ(output.byte_size, n * sizeof(float));
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(c[i], (float)i + round + 0.5f * (float)i) << i;
  }
  // A runtime-allocated output, as on the CPU.
  kiln_tensor inputs[2] = {floatTensor("a", a), floatTensor("b", b)};
  inputs[0].rank = inputs[1].rank = 1;
  inputs[0].shape = inputs[1].shape = shape;
  kiln_tensor output = {};
  output.name = "c";
  ASSERT_EQ(statusString(kiln_model_run(model.get(), inputs, 2, &output, 1)),
            "OK");
  ASSERT_TRUE(output.data);
  EXPECT_EQ(((float *)output.data)[999], a[999] + b[999]);
  kiln_tensor_free_data(&output);
  // Input checks are the CPU path's.
  inputs[1].dtype = KILN_DTYPE_INT32;
  output.data = c.data(), output.byte_size = n * sizeof(float);
  EXPECT_EQ(statusString(kiln_model_run(model.get(), inputs, 2, &output, 1)),
            "INVALID_ARGUMENT: input 'b': expected dtype float32, got int32");
}

// y = x * w + bias: the weights at 256-aligned offsets of one constant
// buffer, the product in an arena slice that the second dispatch reads.
// Uploaded by mapping (lavapipe's device memory is host-visible), and through
// a staging buffer as on a discrete GPU.
class VulkanWeights : public ::testing::TestWithParam<const char *> {};

TEST_P(VulkanWeights, WeightsAndArena) {
  REQUIRE_VULKAN();
  ScopedEnv mask("KILN_VULKAN_MASK_FEATURES", GetParam());
  const int64_t n = 100;
  ModelBuilder m;
  m.input("x", {n});
  m.output("y", {n});
  // bias[i] in bytes [0, 400), w[i] from byte 512.
  std::vector<float> weights(128 + n, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    weights[i] = 0.25f * (float)i;
    weights[128 + i] = (float)(i % 7) - 3.0f;
  }
  uint32_t c = m.constants(weights);
  uint32_t arena = m.arena(256 + 512);
  uint32_t e = m.module("elementwise", {"add", "mul", "scale"});
  m.dispatch(e, 1, 2, 64,
             {{IN, 0}, {MEM, c, 512, n * 4}, {MEM, arena, 256, n * 4}},
             {(uint32_t)n});
  m.dispatch(e, 0, 2, 64,
             {{MEM, arena, 256, n * 4}, {MEM, c, 0, n * 4}, {OUT, 0}},
             {(uint32_t)n});
  std::string error;
  ModelHandle model(openOn(m.build(), "vulkan", &error));
  ASSERT_TRUE(model.get()) << error;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = 1.5f * (float)i - 20.0f;
  int64_t shape[] = {n};
  kiln_tensor input = floatTensor("x", x);
  input.rank = 1, input.shape = shape;
  kiln_tensor output = floatTensor("y", y);
  ASSERT_EQ(statusString(kiln_model_run(model.get(), &input, 1, &output, 1)),
            "OK");
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], x[i] * weights[128 + i] + weights[i]) << i;
}

INSTANTIATE_TEST_SUITE_P(Upload, VulkanWeights,
                         ::testing::Values(nullptr, "hostVisibleDeviceLocal"),
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param ? "Staged" : "Mapped");
                         });

// What the compiler emits for a model without weights or transients: both
// memory needs, empty.
TEST(Vulkan, EmptyMemoryNeeds) {
  REQUIRE_VULKAN();
  const int64_t n = 10;
  ModelBuilder m;
  buildAdd(m, n);
  m.constants({});
  m.arena(0);
  std::string error;
  ModelHandle model(openOn(m.build(), "vulkan", &error));
  ASSERT_TRUE(model.get()) << error;
  std::vector<float> a(n, 1.5f), b(n, 2.0f), c(n);
  int64_t shape[] = {n};
  kiln_tensor inputs[2] = {floatTensor("a", a), floatTensor("b", b)};
  inputs[0].rank = inputs[1].rank = 1;
  inputs[0].shape = inputs[1].shape = shape;
  kiln_tensor output = floatTensor("c", c);
  ASSERT_EQ(statusString(kiln_model_run(model.get(), inputs, 2, &output, 1)),
            "OK");
  EXPECT_EQ(c[9], 3.5f);
}

// Three dependent dispatches through the arena, each with its own push
// constants: y = ((2x + 1) * 3) - 5.
TEST(Vulkan, ChainOfThreeWithPushConstants) {
  REQUIRE_VULKAN();
  const int64_t n = 77;
  ModelBuilder m;
  m.input("x", {n});
  m.output("y", {n});
  uint32_t arena = m.arena(1024);
  uint32_t e = m.module("elementwise", {"add", "mul", "scale"});
  uint32_t groups = (n + 31) / 32;
  m.dispatch(e, 2, groups, 32, {{IN, 0}, {MEM, arena, 0, n * 4}},
             {(uint32_t)n, bitsOf(2.0f), bitsOf(1.0f)});
  m.dispatch(e, 2, groups, 32, {{MEM, arena, 0, n * 4}, {MEM, arena, 512, 0}},
             {(uint32_t)n, bitsOf(3.0f), bitsOf(0.0f)});
  m.dispatch(e, 2, groups, 32, {{MEM, arena, 512, n * 4}, {OUT, 0}},
             {(uint32_t)n, bitsOf(1.0f), bitsOf(-5.0f)});
  std::string error;
  ModelHandle model(openOn(m.build(), "vulkan", &error));
  ASSERT_TRUE(model.get()) << error;
  EXPECT_EQ(kiln_model_dispatch_barriers(model.get()), 2u);
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = (float)i * 0.5f;
  int64_t shape[] = {n};
  kiln_tensor input = floatTensor("x", x);
  input.rank = 1, input.shape = shape;
  kiln_tensor output = floatTensor("y", y);
  for (int round = 0; round < 2; ++round) {
    ASSERT_EQ(statusString(kiln_model_run(model.get(), &input, 1, &output, 1)),
              "OK");
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i], (2.0f * x[i] + 1.0f) * 3.0f - 5.0f) << i;
  }
}

// Dispatches that only read what the others touch need no barrier: three
// scales of one input into disjoint arena slices run without one, the adds
// that read the slices wait for them. y = 2x + 3x, w = 2x + 4x.
TEST(Vulkan, BarriersOnlyWhereNeeded) {
  REQUIRE_VULKAN();
  const int64_t n = 40;
  ModelBuilder m;
  m.input("x", {n});
  m.output("y", {n});
  m.output("w", {n});
  uint32_t arena = m.arena(3 * 256);
  uint32_t e = m.module("elementwise", {"add", "mul", "scale"});
  for (uint32_t k = 0; k < 3; ++k)
    m.dispatch(e, 2, 2, 32, {{IN, 0}, {MEM, arena, 256 * k, n * 4}},
               {(uint32_t)n, bitsOf(2.0f + k), bitsOf(0.0f)});
  m.dispatch(e, 0, 1, 64,
             {{MEM, arena, 0, n * 4}, {MEM, arena, 256, n * 4}, {OUT, 0}},
             {(uint32_t)n});
  m.dispatch(e, 0, 1, 64,
             {{MEM, arena, 0, n * 4}, {MEM, arena, 512, n * 4}, {OUT, 1}},
             {(uint32_t)n});
  std::string error;
  ModelHandle model(openOn(m.build(), "vulkan", &error));
  ASSERT_TRUE(model.get()) << error;
  // One, before the first add: it covers the second add too, which shares
  // only a slice both read with the first.
  EXPECT_EQ(kiln_model_dispatch_barriers(model.get()), 1u);
  std::vector<float> x(n), y(n), w(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = (float)i - 7.0f;
  int64_t shape[] = {n};
  kiln_tensor input = floatTensor("x", x);
  input.rank = 1, input.shape = shape;
  kiln_tensor outputs[2] = {floatTensor("y", y), floatTensor("w", w)};
  ASSERT_EQ(statusString(kiln_model_run(model.get(), &input, 1, outputs, 2)),
            "OK");
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(y[i], 2.0f * x[i] + 3.0f * x[i]) << i;
    ASSERT_EQ(w[i], 2.0f * x[i] + 4.0f * x[i]) << i;
  }
}

TEST(Spirv, WrittenBindings) {
  std::vector<char> elementwise = loadSpirv("elementwise");
  ASSERT_FALSE(elementwise.empty());
  // add/mul write binding 2, scale binding 1; binding 0 is only read.
  EXPECT_EQ(kiln_spirv_written_bindings(elementwise.data(), elementwise.size()),
            0x6u);
  std::vector<char> convert = loadSpirv("convert");
  EXPECT_EQ(kiln_spirv_written_bindings(convert.data(), convert.size()), 0x2u);
  std::vector<char> check = loadSpirv("check");
  EXPECT_EQ(kiln_spirv_written_bindings(check.data(), check.size()), 0x6u);
  // A damaged module: everything may be written.
  check.resize(check.size() - 4);
  check.back() = 0x7f;
  EXPECT_EQ(kiln_spirv_written_bindings(check.data(), check.size()),
            ~uint64_t(0));
}

// 8- and 16-bit storage: the features the runtime enables when present.
TEST(Vulkan, NarrowTypes) {
  REQUIRE_VULKAN();
  const int64_t n = 50;
  ModelBuilder m;
  m.input("bytes", {n}, KILN_DTYPE_UINT8);
  m.input("halves", {n}, KILN_DTYPE_FLOAT16);
  m.output("from_bytes", {n});
  m.output("from_halves", {n});
  uint32_t e = m.module("convert", {"u8_to_f32", "f16_to_f32"});
  m.dispatch(e, 0, 4, 16, {{IN, 0}, {OUT, 0}}, {(uint32_t)n});
  m.dispatch(e, 1, 4, 16, {{IN, 1}, {OUT, 1}}, {(uint32_t)n});
  std::string error;
  ModelHandle model(openOn(m.build(), "vulkan", &error));
  ASSERT_TRUE(model.get()) << error;
  std::vector<uint8_t> bytes(n);
  std::vector<uint16_t> halves(n);
  for (int64_t i = 0; i < n; ++i) {
    bytes[i] = (uint8_t)(i * 5);
    halves[i] = (uint16_t)(0x3c00 + (i << 4)); // 1.0 + i/64
  }
  std::vector<float> fb(n), fh(n);
  int64_t shape[] = {n};
  kiln_tensor inputs[2] = {};
  inputs[0].name = "bytes", inputs[0].dtype = KILN_DTYPE_UINT8;
  inputs[0].data = bytes.data();
  inputs[1].name = "halves", inputs[1].dtype = KILN_DTYPE_FLOAT16;
  inputs[1].data = halves.data();
  for (kiln_tensor &t : inputs)
    t.rank = 1, t.shape = shape;
  kiln_tensor outputs[2] = {floatTensor("from_bytes", fb),
                            floatTensor("from_halves", fh)};
  ASSERT_EQ(statusString(kiln_model_run(model.get(), inputs, 2, outputs, 2)),
            "OK");
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(fb[i], (float)bytes[i]) << i;
    ASSERT_EQ(fh[i], 1.0f + (float)i / 64.0f) << i;
  }
}

// A run-time check in a kernel: the run-status memory need.
TEST(Vulkan, RunTimeCheck) {
  REQUIRE_VULKAN();
  const int64_t n = 20;
  ModelBuilder m;
  m.input("x", {n});
  m.output("y", {n});
  m.output("z", {n});
  uint32_t arena = m.arena(512);
  uint32_t status = m.arena(4);
  m.needs[status].flags = KILN_MEMORY_RUN_STATUS;
  uint32_t e = m.module("check", {"copy_nonnegative"});
  // Two checks on the same status, no barrier needed between them.
  m.dispatch(e, 0, 3, 8, {{IN, 0}, {MEM, arena, 0, n * 4}, {MEM, status}},
             {(uint32_t)n, 1});
  m.dispatch(e, 0, 3, 8, {{MEM, arena, 0, n * 4}, {OUT, 0}, {MEM, status}},
             {(uint32_t)n, 2});
  m.dispatch(e, 0, 3, 8, {{IN, 0}, {OUT, 1}, {MEM, status}}, {(uint32_t)n, 3});
  const char *messages[] = {"node 'Gather_0' (Gather, opset 13): index out "
                            "of range",
                            "second", "third"};
  kiln_model_desc desc = *m.build();
  desc.num_check_messages = 3;
  desc.check_messages = messages;
  std::string error;
  ModelHandle model(openOn(&desc, "vulkan", &error));
  ASSERT_TRUE(model.get()) << error;
  std::vector<float> x(n), y(n), z(n);
  int64_t shape[] = {n};
  for (int round = 0; round < 3; ++round) {
    for (int64_t i = 0; i < n; ++i)
      x[i] = (float)i;
    if (round == 1)
      x[7] = -1.0f; // every dispatch fails its check: any may win
    kiln_tensor input = floatTensor("x", x);
    input.rank = 1, input.shape = shape;
    kiln_tensor outputs[2] = {floatTensor("y", y), floatTensor("z", z)};
    std::string result =
        statusString(kiln_model_run(model.get(), &input, 1, outputs, 2));
    if (round == 1) {
      EXPECT_TRUE(result ==
                      "RUNTIME_CHECK_FAILED: " + std::string(messages[0]) ||
                  result == "RUNTIME_CHECK_FAILED: second" ||
                  result == "RUNTIME_CHECK_FAILED: third")
          << result;
      continue;
    }
    // The status is reset each run: a failure does not stick.
    ASSERT_EQ(result, "OK");
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i], x[i]) << i;
  }
  // A status that names no check.
  desc.num_check_messages = 0;
  ModelHandle bad(openOn(&desc, "vulkan", &error));
  ASSERT_TRUE(bad.get()) << error;
  x[3] = -5.0f;
  kiln_tensor input = floatTensor("x", x);
  input.rank = 1, input.shape = shape;
  kiln_tensor outputs[2] = {floatTensor("y", y), floatTensor("z", z)};
  std::string result =
      statusString(kiln_model_run(bad.get(), &input, 1, outputs, 2));
  EXPECT_EQ(result.rfind("INTERNAL: model 'vk_test' stored run status ", 0), 0u)
      << result;
  EXPECT_NE(result.find(", which names no check (it has 0 check messages)"),
            std::string::npos)
      << result;
}

//===----------------------------------------------------------------------===//
// Threads and contexts
//===----------------------------------------------------------------------===//

TEST(Vulkan, ConcurrentRunsOnOneHandle) {
  REQUIRE_VULKAN();
  const int64_t n = 300;
  ModelBuilder m;
  buildAdd(m, n);
  std::string error;
  ModelHandle model(openOn(m.build(), "vulkan", &error));
  ASSERT_TRUE(model.get()) << error;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> a(n), b(n), c(n);
      int64_t shape[] = {n};
      for (int r = 0; r < 15; ++r) {
        for (int64_t i = 0; i < n; ++i)
          a[i] = (float)(t * 1000 + r), b[i] = (float)i;
        kiln_tensor inputs[2] = {floatTensor("a", a), floatTensor("b", b)};
        inputs[0].rank = inputs[1].rank = 1;
        inputs[0].shape = inputs[1].shape = shape;
        kiln_tensor output = floatTensor("c", c);
        kiln_status s = kiln_model_run(model.get(), inputs, 2, &output, 1);
        if (s) {
          kiln_status_free(s);
          ++failures;
          continue;
        }
        for (int64_t i = 0; i < n; ++i)
          if (c[i] != a[i] + b[i]) {
            ++failures;
            break;
          }
      }
    });
  }
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Vulkan, OwnRunContexts) {
  REQUIRE_VULKAN();
  const int64_t n = 64;
  ModelBuilder m;
  buildAdd(m, n);
  std::string error;
  ModelHandle model(openOn(m.build(), "vulkan", &error));
  ASSERT_TRUE(model.get()) << error;
  kiln_run_context *ctx[2] = {};
  for (kiln_run_context *&c : ctx)
    ASSERT_EQ(statusString(kiln_run_context_create(model.get(), &c)), "OK");
  std::vector<float> a(n, 2.0f), b(n, 3.0f), c(n);
  int64_t shape[] = {n};
  kiln_tensor inputs[2] = {floatTensor("a", a), floatTensor("b", b)};
  inputs[0].rank = inputs[1].rank = 1;
  inputs[0].shape = inputs[1].shape = shape;
  kiln_tensor output = floatTensor("c", c);
  for (kiln_run_context *cx : ctx) {
    std::fill(c.begin(), c.end(), 0.0f);
    ASSERT_EQ(statusString(kiln_model_run_with_context(model.get(), cx, inputs,
                                                       2, &output, 1)),
              "OK");
    EXPECT_EQ(c[63], 5.0f);
  }
  for (kiln_run_context *c : ctx)
    kiln_run_context_destroy(c);
}

//===----------------------------------------------------------------------===//
// A kernel that never ends (KILN_VULKAN_TIMEOUT_MS)
//===----------------------------------------------------------------------===//

void buildSpin(ModelBuilder &m) {
  m.input("x", {1});
  m.output("y", {1});
  uint32_t e = m.module("spin", {"spin"});
  m.dispatch(e, 0, 65535, 1, {{IN, 0}, {OUT, 0}}, {}).workgroup_count[1] =
      65535;
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

// The child of VulkanTimeout.KernelThatNeverEnds: exits 0 when every check
// holds, else prints what failed and exits 1. lavapipe cannot abandon a
// kernel (its worker thread spins on until the process ends), so this runs in
// a child process, and alarm() turns a hang into a failure.
[[noreturn]] void spinChild() {
  alarm(60);
  auto failWith = [](const std::string &what) {
    std::fprintf(stderr, "%s\n", what.c_str());
    std::fflush(stderr);
    _exit(1);
  };
  setenv("KILN_VULKAN_TIMEOUT_MS", "200", 1);
  ModelBuilder m;
  buildSpin(m);
  std::string error;
  kiln_model *model = openOn(m.build(), "vulkan", &error);
  if (!model)
    failWith("open: " + error);
  kiln_run_context *ctx[2] = {};
  for (kiln_run_context *&c : ctx)
    if (statusString(kiln_run_context_create(model, &c)) != "OK")
      failWith("cannot create a run context");
  std::vector<float> x(1), y(1);
  int64_t shape[] = {1};
  auto run = [&](kiln_run_context *c, float value) {
    x[0] = value;
    y[0] = 0.0f;
    kiln_tensor input = floatTensor("x", x);
    input.rank = 1, input.shape = shape;
    kiln_tensor output = floatTensor("y", y);
    return statusString(
        kiln_model_run_with_context(model, c, &input, 1, &output, 1));
  };
  std::string r;
  r = run(ctx[0], 0.0f);
  for (const char *part :
       {"INTERNAL: model 'vk_test' on Vulkan device '",
        "the run did not finish within 200 ms (KILN_VULKAN_TIMEOUT_MS)",
        "kernels 'spin' to 'spin'", "this run context is unusable"})
    if (!contains(r, part))
      failWith("timed-out run: '" + r + "' lacks '" + part + "'");
  r = run(ctx[0], -1.0f);
  if (r.rfind("FAILED_PRECONDITION: model 'vk_test': this run context is "
              "unusable: an earlier run on it did not finish within 200 ms",
              0) != 0)
    failWith("run on the unusable context: " + r);
  // The other context is not marked: it runs (its work queues behind the
  // endless kernel, so it times out on its own).
  r = run(ctx[1], -1.0f);
  if (!contains(r, "the run did not finish within 200 ms"))
    failWith("run on the other context: " + r);
  if (contains(r, "unusable: an earlier run"))
    failWith("the other context was marked unusable: " + r);
  // kiln_model_run's pool drops a context that timed out: each run takes a
  // fresh one (which times out too, behind the endless kernel).
  for (int i = 0; i < 2; ++i) {
    x[0] = -1.0f;
    kiln_tensor input = floatTensor("x", x);
    input.rank = 1, input.shape = shape;
    kiln_tensor output = floatTensor("y", y);
    r = statusString(kiln_model_run(model, &input, 1, &output, 1));
    if (!contains(r, "the run did not finish within 200 ms"))
      failWith("pooled run " + std::to_string(i) + ": " + r);
  }
  // Neither destroying nor closing waits for the endless kernel.
  for (kiln_run_context *c : ctx)
    kiln_run_context_destroy(c);
  kiln_model_close(model);
  std::fflush(stderr);
  _exit(0);
}

TEST(VulkanTimeout, KernelThatNeverEnds) {
  REQUIRE_VULKAN();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(spinChild(), ::testing::ExitedWithCode(0), "");
}

TEST(VulkanTimeout, BadSetting) {
  REQUIRE_VULKAN();
  ModelBuilder m;
  buildAdd(m, 4);
  for (const char *bad : {"soon", "0", "-5", "12ms"}) {
    ScopedEnv env("KILN_VULKAN_TIMEOUT_MS", bad);
    std::string error;
    ModelHandle model(openOn(m.build(), "vulkan", &error));
    EXPECT_FALSE(model.get());
    EXPECT_EQ(error, "INVALID_ARGUMENT: KILN_VULKAN_TIMEOUT_MS='" +
                         std::string(bad) +
                         "' is not a number of milliseconds > 0 (e.g. 120000)");
  }
  ScopedEnv env("KILN_VULKAN_TIMEOUT_MS", "5000");
  std::string error;
  ModelHandle model(openOn(m.build(), "vulkan", &error));
  EXPECT_TRUE(model.get()) << error;
}

//===----------------------------------------------------------------------===//
// Device buffers
//===----------------------------------------------------------------------===//

TEST(Vulkan, RunOnDeviceBuffers) {
  REQUIRE_VULKAN();
  const int64_t n = 256;
  ModelBuilder m;
  buildAdd(m, n);
  std::string error;
  ModelHandle model(openOn(m.build(), "vulkan", &error));
  ASSERT_TRUE(model.get()) << error;
  kiln_vulkan_handles h;
  ASSERT_EQ(statusString(kiln_model_vulkan_handles(model.get(), &h)), "OK");
  ASSERT_TRUE(h.device && h.physical_device && h.get_instance_proc_addr);
  auto gipa = (PFN_vkGetInstanceProcAddr)h.get_instance_proc_addr;
  VkInstance instance = (VkInstance)h.instance;
  VkDevice device = (VkDevice)h.device;
#define LOAD(name) auto name = (PFN_##name)gipa(instance, #name)
  LOAD(vkGetPhysicalDeviceMemoryProperties);
  LOAD(vkCreateBuffer);
  LOAD(vkDestroyBuffer);
  LOAD(vkGetBufferMemoryRequirements);
  LOAD(vkAllocateMemory);
  LOAD(vkFreeMemory);
  LOAD(vkBindBufferMemory);
  LOAD(vkMapMemory);
#undef LOAD
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties((VkPhysicalDevice)h.physical_device,
                                      &props);
  // One host-visible buffer: a at 0, b at 1024, c at 4096 (+ 16 to offset).
  VkBufferCreateInfo info = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = 8192;
  info.usage =
      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  VkBuffer buffer;
  ASSERT_EQ(vkCreateBuffer(device, &info, nullptr, &buffer), VK_SUCCESS);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, buffer, &req);
  VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                               VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type = 0;
  while (type < props.memoryTypeCount &&
         !((req.memoryTypeBits & (1u << type)) &&
           (props.memoryTypes[type].propertyFlags & want) == want))
    ++type;
  ASSERT_LT(type, props.memoryTypeCount);
  VkMemoryAllocateInfo alloc = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  VkDeviceMemory memory;
  ASSERT_EQ(vkAllocateMemory(device, &alloc, nullptr, &memory), VK_SUCCESS);
  ASSERT_EQ(vkBindBufferMemory(device, buffer, memory, 0), VK_SUCCESS);
  float *mapped = nullptr;
  ASSERT_EQ(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, (void **)&mapped),
            VK_SUCCESS);
  for (int64_t i = 0; i < n; ++i)
    mapped[i] = (float)i, mapped[256 + i] = 100.0f, mapped[1028 + i] = -1.0f;
  uint64_t handle = 0;
  std::memcpy(&handle, &buffer, sizeof(buffer));
  kiln_device_tensor inputs[2] = {{"b", handle, 1024, 1024},
                                  {"a", handle, 0, 1024}};
  kiln_device_tensor output = {"c", handle, 4112, 1024};
  ASSERT_EQ(
      statusString(kiln_model_run_device(model.get(), inputs, 2, &output, 1)),
      "OK");
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(mapped[1028 + i], (float)i + 100.0f) << i;
  output.byte_size = 1000;
  EXPECT_EQ(
      statusString(kiln_model_run_device(model.get(), inputs, 2, &output, 1)),
      "INVALID_ARGUMENT: output 'c': device buffer has 1000 bytes, "
      "needs 1024");
  EXPECT_EQ(
      statusString(kiln_model_run_device(model.get(), inputs, 1, &output, 0)),
      "INVALID_ARGUMENT: missing input 'a' (float32 [256])");
  vkDestroyBuffer(device, buffer, nullptr);
  vkFreeMemory(device, memory, nullptr);
}

//===----------------------------------------------------------------------===//
// A Vulkan model as a shared library (fake_vulkan_model.c)
//===----------------------------------------------------------------------===//

const float kA[6] = {1, 2, 3, 4, 5, 6};
const float kB[6] = {0.5f, -20, 0.25f, -40, 1, -60};
const float kW[6] = {1, 2, 3, 4, 5, 6}; // the model's weights

TEST(VulkanLibrary, OpenAndRun) {
  REQUIRE_VULKAN();
  kiln_model *raw = nullptr;
  ASSERT_EQ(
      statusString(kiln_model_open(
          kiln_test::modelPath("fake_vulkan_model").c_str(), nullptr, &raw)),
      "OK");
  ModelHandle model(raw);
  EXPECT_STREQ(kiln_model_device(model.get()), "vulkan");
  std::vector<float> a(kA, kA + 6), b(kB, kB + 6), sum(6);
  int64_t shape[] = {2, 3};
  kiln_tensor inputs[2] = {floatTensor("a", a), floatTensor("b", b)};
  for (kiln_tensor &t : inputs)
    t.rank = 2, t.shape = shape;
  kiln_tensor output = floatTensor("sum", sum);
  ASSERT_EQ(statusString(kiln_model_run(model.get(), inputs, 2, &output, 1)),
            "OK");
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(sum[i], (kA[i] + kB[i]) * kW[i]) << i;
}

kiln_test::CommandResult kilnRun(std::vector<std::string> args) {
  args.insert(args.begin(), KILN_RUN_PATH);
  return kiln_test::runCommand(args);
}

TEST(VulkanLibrary, KilnRunDevice) {
  REQUIRE_VULKAN();
  kiln_test::TempDir dir;
  kiln_test::writeNpy(dir.file("a.npy"), "<f4", {2, 3}, kA, sizeof(kA));
  kiln_test::writeNpy(dir.file("b.npy"), "<f4", {2, 3}, kB, sizeof(kB));
  std::string model = kiln_test::modelPath("fake_vulkan_model");
  for (const char *device : {"vulkan", "auto", "vulkan:0"}) {
    std::string out = dir.file(std::string("out_") + device);
    kiln_test::CommandResult r =
        kilnRun({model, "--device", device, "--input", "a=" + dir.file("a.npy"),
                 "--input", "b=" + dir.file("b.npy"), "--output-dir", out});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out, "sum float32 [2,3]\n");
    kiln_test::NpyContents sum = kiln_test::readNpy(out + "/sum.npy");
    ASSERT_EQ(sum.data.size(), 24u);
    float values[6];
    std::memcpy(values, sum.data.data(), sizeof(values));
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(values[i], (kA[i] + kB[i]) * kW[i]) << device << " " << i;
  }
  kiln_test::CommandResult r = kilnRun({model, "--device", "cpu"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err, "kiln-run: error: " + model +
                       ": model 'fake_vulkan' holds only Vulkan code (spirv): "
                       "it cannot run on device 'cpu' (compile it for the "
                       "CPU, or open it with device 'vulkan' or 'auto')\n");
  std::string cpuModel = kiln_test::modelPath("fake_model");
  r = kilnRun({cpuModel, "--device=vulkan"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err, "kiln-run: error: " + cpuModel +
                       ": model 'fake_add' holds only CPU code: it cannot run "
                       "on device 'vulkan' (compile it with `kiln compile "
                       "--device vulkan`, or open it with device 'cpu' or "
                       "'auto')\n");
  r = kilnRun({cpuModel, "--device", "cpu"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  r = kilnRun({cpuModel, "--device", "tpu"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err, "kiln-run: error: --device expects auto, cpu, vulkan, "
                   "vulkan:DEVICE, cuda, cuda:DEVICE, hip, hip:DEVICE or a "
                   "comma-separated list of them, got 'tpu'\n");
}

//===----------------------------------------------------------------------===//
// Device choice
//===----------------------------------------------------------------------===//

TEST(Vulkan, DeviceOption) {
  ModelBuilder m;
  buildAdd(m, 8);
  std::string error;
  EXPECT_EQ(openOn(m.build(), "cpu", &error), nullptr);
  EXPECT_EQ(error, "UNSUPPORTED: model 'vk_test' holds only Vulkan code "
                   "(spirv): it cannot run on device 'cpu' (compile it for "
                   "the CPU, or open it with device 'vulkan' or 'auto')");
  EXPECT_EQ(openOn(m.build(), "gpu", &error), nullptr);
  EXPECT_EQ(error, "INVALID_ARGUMENT: options.device is 'gpu'; expected "
                   "'auto', 'cpu', 'vulkan', 'vulkan:DEVICE', 'cuda', "
                   "'cuda:DEVICE', 'hip', 'hip:DEVICE', 'none' or a "
                   "comma-separated list of devices to try in order "
                   "('vulkan,cpu')");
  REQUIRE_VULKAN();
  {
    ModelHandle model(openOn(m.build(), "vulkan:0", &error));
    EXPECT_TRUE(model.get()) << error;
  }
  EXPECT_EQ(openOn(m.build(), "vulkan:no-such-gpu", &error), nullptr);
  EXPECT_NE(error.find("NOT_FOUND: model 'vk_test': no Vulkan device matches "
                       "'no-such-gpu' (from the device option; the devices: "
                       "0 '"),
            std::string::npos)
      << error;
  {
    ScopedEnv env("KILN_VULKAN_DEVICE", "no-such-gpu");
    EXPECT_EQ(openOn(m.build(), "vulkan", &error), nullptr);
    EXPECT_NE(error.find("(from KILN_VULKAN_DEVICE;"), std::string::npos)
        << error;
    // The option wins over the variable.
    ModelHandle model(openOn(m.build(), "vulkan:0", &error));
    EXPECT_TRUE(model.get()) << error;
  }
}

//===----------------------------------------------------------------------===//
// Bad cases
//===----------------------------------------------------------------------===//

TEST(Vulkan, NoLoader) {
  ScopedEnv env("KILN_VULKAN_LOADER", "/nonexistent/libvulkan.so.1");
  ModelBuilder m;
  buildAdd(m, 8);
  std::string error;
  EXPECT_EQ(openOn(m.build(), nullptr, &error), nullptr);
  EXPECT_EQ(error.rfind("UNSUPPORTED: model 'vk_test' runs on Vulkan, but the "
                        "Vulkan loader '/nonexistent/libvulkan.so.1' cannot "
                        "be loaded (",
                        0),
            0u)
      << error;
}

TEST(Vulkan, NoDevice) {
  REQUIRE_VULKAN(); // the loader is needed to find no device
  ScopedEnv env("VK_ICD_FILENAMES", "/nonexistent/icd.json");
  ScopedEnv env2("VK_DRIVER_FILES", "/nonexistent/icd.json");
  ModelBuilder m;
  buildAdd(m, 8);
  std::string error;
  EXPECT_EQ(openOn(m.build(), "vulkan", &error), nullptr);
  EXPECT_EQ(error.rfind("UNSUPPORTED: model 'vk_test' runs on Vulkan, but the "
                        "Vulkan loader found no device",
                        0),
            0u)
      << error;
}

TEST(Vulkan, DeviceMemoryLimit) {
  REQUIRE_VULKAN();
  ModelBuilder m;
  m.input("x", {16});
  m.output("y", {16});
  std::vector<float> weights(64 * 1024, 1.0f); // 256 KiB
  uint32_t c = m.constants(weights);
  uint32_t arena = m.arena(512 * 1024);
  uint32_t e = m.module("elementwise", {"add", "mul", "scale"});
  m.dispatch(e, 1, 1, 64, {{IN, 0}, {MEM, c, 0, 64}, {MEM, arena, 0, 64}},
             {16});
  m.dispatch(e, 0, 1, 64, {{MEM, arena, 0, 64}, {MEM, c, 0, 64}, {OUT, 0}},
             {16});
  const kiln_model_desc *desc = m.build();
  std::string error;
  {
    ScopedEnv env("KILN_VULKAN_MEMORY_LIMIT", "100K");
    EXPECT_EQ(openOn(desc, "vulkan", &error), nullptr);
    EXPECT_NE(error.find("OUT_OF_MEMORY: model 'vk_test' on Vulkan device '"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("out of device memory: the weights (memory need 0) "
                         "needs "),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("more than KILN_VULKAN_MEMORY_LIMIT=102400"),
              std::string::npos)
        << error;
  }
  {
    ScopedEnv env("KILN_VULKAN_MEMORY_LIMIT", "1200K");
    ModelHandle model(openOn(desc, "vulkan", &error));
    ASSERT_TRUE(model.get()) << error; // weights + one context's arena
    kiln_run_context *ctx = nullptr;
    std::string second =
        statusString(kiln_run_context_create(model.get(), &ctx));
    EXPECT_NE(second.find("OUT_OF_MEMORY: model 'vk_test' on Vulkan device"),
              std::string::npos)
        << second;
    EXPECT_NE(second.find("a run context's device memory"), std::string::npos)
        << second;
    EXPECT_EQ(ctx, nullptr);
    // The model still runs in the context it has.
    std::vector<float> x(16, 2.0f), y(16);
    int64_t shape[] = {16};
    kiln_tensor input = floatTensor("x", x);
    input.rank = 1, input.shape = shape;
    kiln_tensor output = floatTensor("y", y);
    ASSERT_EQ(statusString(kiln_model_run(model.get(), &input, 1, &output, 1)),
              "OK");
    EXPECT_EQ(y[15], 3.0f);
  }
  {
    ScopedEnv env("KILN_VULKAN_MEMORY_LIMIT", "lots");
    EXPECT_EQ(openOn(desc, "vulkan", &error), nullptr);
    EXPECT_EQ(error, "INVALID_ARGUMENT: KILN_VULKAN_MEMORY_LIMIT='lots' is "
                     "not a byte count (e.g. 268435456, 256M, 2G)");
  }
}

// More than the device has: refused before anything reads the weights.
TEST(Vulkan, WeightsLargerThanTheDevice) {
  REQUIRE_VULKAN();
  ModelBuilder m;
  m.input("x", {16});
  m.output("y", {16});
  uint32_t c = m.constants({1.0f});
  m.needs[c].size = uint64_t(1) << 44; // 16 TiB; only 4 bytes behind it
  uint32_t e = m.module("elementwise", {"add", "mul", "scale"});
  m.dispatch(e, 1, 1, 64, {{IN, 0}, {MEM, c, 0, 64}, {OUT, 0}}, {16});
  std::string error;
  EXPECT_EQ(openOn(m.build(), "vulkan", &error), nullptr);
  EXPECT_EQ(error.rfind("OUT_OF_MEMORY: model 'vk_test' on Vulkan device '", 0),
            0u)
      << error;
  EXPECT_NE(error.find("the weights (memory need 0)"), std::string::npos)
      << error;
}

// An arena no device holds: refused when the run context is laid out, not
// wrapped around into a small buffer.
TEST(Vulkan, HugeArena) {
  REQUIRE_VULKAN();
  ModelBuilder m;
  m.input("x", {16});
  m.output("y", {16});
  uint32_t arena = m.arena(uint64_t(1) << 62);
  uint32_t arena2 = m.arena(uint64_t(1) << 62);
  uint32_t e = m.module("elementwise", {"add", "mul", "scale"});
  m.dispatch(e, 2, 1, 32, {{IN, 0}, {MEM, arena, 0, 64}}, {16, 0, 0});
  m.dispatch(e, 2, 1, 32, {{MEM, arena2, 0, 64}, {OUT, 0}}, {16, 0, 0});
  std::string error;
  EXPECT_EQ(openOn(m.build(), "vulkan", &error), nullptr);
  EXPECT_EQ(error, "OUT_OF_MEMORY: model 'vk_test': a run needs more than 2^56 "
                   "bytes of device memory");
}

TEST(Vulkan, MissingDeviceFeature) {
  REQUIRE_VULKAN();
  ScopedEnv env("KILN_VULKAN_MASK_FEATURES", "shaderFloat64,shaderInt8");
  ModelBuilder m;
  m.input("bytes", {4}, KILN_DTYPE_UINT8);
  m.output("y", {4});
  uint32_t e = m.module("convert", {"u8_to_f32", "f16_to_f32"});
  m.dispatch(e, 0, 1, 16, {{IN, 0}, {OUT, 0}}, {4});
  std::string error;
  EXPECT_EQ(openOn(m.build(), "vulkan", &error), nullptr);
  EXPECT_EQ(error.rfind("UNSUPPORTED: model 'vk_test': spirv executable 0 "
                        "(kernels 'u8_to_f32', ...) needs the Vulkan feature "
                        "shaderInt8 (SPIR-V capability Int8), which device '",
                        0),
            0u)
      << error;
}

TEST(Vulkan, NewerVulkanThanTheDevice) {
  REQUIRE_VULKAN();
  ModelBuilder m;
  buildAdd(m, 8);
  m.executables[0].target = "vulkan9.9";
  std::string error;
  EXPECT_EQ(openOn(m.build(), "vulkan", &error), nullptr);
  EXPECT_EQ(error.rfind("UNSUPPORTED: model 'vk_test': spirv executable 0 "
                        "(kernels 'add', ...) is built for vulkan9.9, but "
                        "Vulkan device '",
                        0),
            0u)
      << error;
}

TEST(Vulkan, DeviceLimits) {
  REQUIRE_VULKAN();
  ModelBuilder m;
  buildAdd(m, 8);
  m.setConstants(0, std::vector<uint32_t>(1000, 0));
  std::string error;
  EXPECT_EQ(openOn(m.build(), "vulkan", &error), nullptr);
  EXPECT_NE(error.find("UNSUPPORTED: model 'vk_test': dispatch 0 (kernel "
                       "'add') pushes 4000 bytes of constants; Vulkan device"),
            std::string::npos)
      << error;
}

//===----------------------------------------------------------------------===//
// Descriptor validation (no device needed)
//===----------------------------------------------------------------------===//

class VulkanDescriptor : public ::testing::Test {
protected:
  void SetUp() override { buildAdd(m, 100); }
  std::string open() {
    std::string error;
    kiln_model *model = openOn(m.build(), "vulkan", &error);
    kiln_model_close(model);
    return error;
  }
  kiln_binding_desc &binding(uint32_t d, uint32_t b) {
    m.build();
    return const_cast<kiln_binding_desc &>(m.dispatches[d].bindings[b]);
  }
  ModelBuilder m;
  const std::string malformed =
      "INVALID_ARGUMENT: malformed descriptor of model 'vk_test': ";
};

TEST_F(VulkanDescriptor, BadKernelOrdinal) {
  m.dispatches[0].kernel = 3;
  EXPECT_EQ(open(), malformed + "dispatch 0 names kernel 3 of 3");
}

TEST_F(VulkanDescriptor, BadExecutable) {
  m.dispatches[0].executable = 1;
  EXPECT_EQ(open(), malformed + "dispatch 0 names executable 1, which is no "
                                "device executable");
}

TEST_F(VulkanDescriptor, BindingIndexOutOfRange) {
  binding(0, 1).index = 2;
  EXPECT_EQ(open(), malformed + "dispatch 0 binds index 2 of 2");
}

TEST_F(VulkanDescriptor, BindingPastTheTensor) {
  binding(0, 2).offset = 200;
  binding(0, 2).size = 204;
  EXPECT_EQ(open(), malformed + "binding 2 of dispatch 0 (kernel 'add') covers "
                                "bytes [200, 404) of output 0, which has 400 "
                                "bytes");
}

TEST_F(VulkanDescriptor, BindingPastTheMemoryNeed) {
  uint32_t arena = m.arena(512);
  binding(0, 2) = {KILN_BINDING_MEMORY, arena, 0, 0, 256, 512};
  EXPECT_EQ(open(), malformed + "binding 2 of dispatch 0 (kernel 'add') covers "
                                "bytes [256, 768) of memory need 0 "
                                "(device-local), which has 512 bytes");
}

TEST_F(VulkanDescriptor, MisalignedBinding) {
  binding(0, 0).offset = 6;
  EXPECT_EQ(open(), malformed + "binding 0 of dispatch 0 (kernel 'add') has "
                                "offset 6 and size 0; storage buffers need "
                                "multiples of 4");
}

TEST_F(VulkanDescriptor, HostScratchBinding) {
  kiln_memory_need scratch = {};
  scratch.kind = KILN_MEMORY_HOST_SCRATCH;
  scratch.alignment = 64;
  scratch.size = 1024;
  m.needs.push_back(scratch);
  binding(0, 2) = {KILN_BINDING_MEMORY, 0, 0, 0, 0, 0};
  EXPECT_EQ(open(), malformed + "binding 2 of dispatch 0 (kernel 'add') binds "
                                "memory need 0, of kind host-scratch, which a "
                                "kernel cannot address");
}

TEST_F(VulkanDescriptor, UnknownBindingKind) {
  binding(0, 0).kind = 7;
  EXPECT_EQ(open(), malformed + "dispatch 0 has a binding of unknown kind 7");
}

TEST_F(VulkanDescriptor, ZeroWorkgroups) {
  m.dispatches[0].workgroup_count[1] = 0;
  EXPECT_EQ(open(), malformed + "dispatch 0 (kernel 'add') has workgroup "
                                "count [2,0,1]; each must be > 0");
}

TEST_F(VulkanDescriptor, ZeroWorkgroupSize) {
  m.dispatches[0].workgroup_size[2] = 0;
  EXPECT_EQ(open(), malformed + "dispatch 0 (kernel 'add') has workgroup size "
                                "[64,1,0]; each must be > 0");
}

TEST_F(VulkanDescriptor, WorkgroupSizeDisagreesWithModule) {
  m.dispatches[0].workgroup_size[0] = 128;
  EXPECT_EQ(open(), malformed + "kernel 'add' (dispatch 0) is built for "
                                "workgroup size [64,1,1], but the dispatch "
                                "says [128,1,1]");
}

TEST_F(VulkanDescriptor, KernelNotInModule) {
  ModelBuilder other;
  other.input("x", {4});
  other.output("y", {4});
  uint32_t e = other.module("elementwise", {"add", "no_such_kernel"});
  other.dispatch(e, 1, 1, 64, {{IN, 0}, {OUT, 0}}, {4});
  std::string error;
  kiln_model *model = openOn(other.build(), "vulkan", &error);
  kiln_model_close(model);
  EXPECT_EQ(error, malformed + "kernel 'no_such_kernel' (dispatch 0) is no "
                               "GLCompute entry point of spirv executable 0");
}

TEST_F(VulkanDescriptor, NotSpirv) {
  m.code[0][0] ^= 0x55;
  EXPECT_EQ(open(), malformed + "spirv executable 0 is not a valid module: it "
                                "does not start with the SPIR-V magic number "
                                "0x07230203 (little-endian) but 0x07230256");
  m.code[0][0] ^= 0x55;
  m.code[0].resize(m.code[0].size() - 2);
  EXPECT_EQ(open().rfind(malformed + "spirv executable 0 is not a valid "
                                     "module: its size, ",
                         0),
            0u);
}

TEST_F(VulkanDescriptor, TruncatedInstruction) {
  m.code[0].resize(m.code[0].size() - 4); // OpFunctionEnd's word gone...
  m.code[0].back() = 0x7f;                // ...and a word count past the end
  std::string error = open();
  EXPECT_EQ(error.rfind(malformed + "spirv executable 0 is not a valid "
                                    "module: the instruction at word ",
                        0),
            0u)
      << error;
}

TEST_F(VulkanDescriptor, NotAVulkanTarget) {
  m.executables[0].target = "opencl2.0";
  EXPECT_EQ(open(), malformed + "spirv executable 0 has target 'opencl2.0', "
                                "not a Vulkan environment such as "
                                "'vulkan1.1'");
}

TEST_F(VulkanDescriptor, TooManyPushConstants) {
  m.setConstants(0, std::vector<uint32_t>(1025, 0));
  EXPECT_EQ(open(), malformed + "dispatch 0 (kernel 'add') pushes 1025 "
                                "constant words");
}

TEST_F(VulkanDescriptor, DynamicSharedMemory) {
  m.dispatches[0].shared_memory_size = 1024;
  EXPECT_EQ(open(), "UNSUPPORTED: model 'vk_test': dispatch 0 (kernel 'add') "
                    "asks for 1024 bytes of dynamic workgroup memory, which "
                    "the Vulkan back end does not support");
}

TEST_F(VulkanDescriptor, OtherDeviceFormats) {
  // ptx and cubin go to the CUDA back end, hsaco to the HIP one, which check
  // their form first (cuda_test.cpp, hip_test.cpp).
  const struct {
    uint32_t format;
    const char *target, *error;
  } formats[] = {
      {KILN_EXECUTABLE_PTX, "sm_80",
       "INVALID_ARGUMENT: malformed descriptor of model 'vk_test': ptx "
       "executable 0 is not NUL-terminated text"},
      {KILN_EXECUTABLE_CUBIN, "sm_90",
       "INVALID_ARGUMENT: malformed descriptor of model 'vk_test': cubin "
       "executable 0 is not an ELF file"},
      {KILN_EXECUTABLE_HSACO, "gfx90a",
       "INVALID_ARGUMENT: malformed descriptor of model 'vk_test': hsaco "
       "executable 0 is not an AMD GPU ELF file"}};
  for (const auto &f : formats) {
    m.executables[0].format = f.format;
    m.executables[0].target = f.target;
    EXPECT_EQ(open(), f.error);
  }
}

TEST_F(VulkanDescriptor, RunStatusNeeds) {
  uint32_t status = m.arena(2);
  m.needs[status].flags = KILN_MEMORY_RUN_STATUS;
  EXPECT_EQ(open(), malformed + "memory need 0 holds the run status but is "
                                "device-local memory of 2 bytes; it must be "
                                "device-local, at least 4 bytes");
  m.needs[status].size = 4;
  uint32_t second = m.arena(4);
  m.needs[second].flags = KILN_MEMORY_RUN_STATUS;
  EXPECT_EQ(open(), malformed + "more than one run-status memory need");
  m.needs[second].flags = 2;
  EXPECT_EQ(open(), malformed + "memory need 1 has unknown flags 0x2");
}

TEST_F(VulkanDescriptor, HostVisibleMemoryNotYet) {
  kiln_memory_need need = {};
  need.kind = KILN_MEMORY_HOST_VISIBLE;
  need.alignment = 64;
  need.size = 64;
  m.needs.push_back(need);
  EXPECT_EQ(open(), "UNSUPPORTED: model 'vk_test' needs host-visible memory: "
                    "not supported yet by this runtime's device back end");
}

//===----------------------------------------------------------------------===//
// Several devices in one artifact: the device chosen at open
//===----------------------------------------------------------------------===//

// c = a + b over kMultiN floats on the host: the CPU build of buildAdd.
constexpr int64_t kMultiN = 100;
const int64_t kMultiShape[] = {kMultiN};
const kiln_tensor_desc kMultiInputs[] = {
    {"a", KILN_DTYPE_FLOAT32, 1, kMultiShape},
    {"b", KILN_DTYPE_FLOAT32, 1, kMultiShape}};
const kiln_tensor_desc kMultiOutputs[] = {
    {"c", KILN_DTYPE_FLOAT32, 1, kMultiShape}};

kiln_model_status hostAdd(void *const *inputs, void *const *outputs, void *,
                          kiln_exec_context *) {
  const float *a = (const float *)inputs[0], *b = (const float *)inputs[1];
  float *c = (float *)outputs[0];
  for (int64_t i = 0; i < kMultiN; ++i)
    c[i] = a[i] + b[i];
  return 0;
}

const kiln_executable_desc kHostExecutables[] = {
    {KILN_EXECUTABLE_HOST, 0, "x86_64-unknown-linux-gnu", hostAdd, nullptr,
     nullptr, 0, 0, nullptr}};
const kiln_memory_need kHostScratch[] = {
    {KILN_MEMORY_HOST_SCRATCH, 0, 0, 64, nullptr}};

kiln_model_desc makeHostAdd() {
  kiln_model_desc d = {};
  d.abi_version = KILN_MODEL_ABI_VERSION;
  d.name = "multi";
  d.producer = "kiln unit tests";
  d.target_triple = "x86_64-unknown-linux-gnu";
  d.cpu = "generic";
  d.cpu_features = "";
  d.num_inputs = 2;
  d.num_outputs = 1;
  d.inputs = kMultiInputs;
  d.outputs = kMultiOutputs;
  d.num_executables = 1;
  d.executables = kHostExecutables;
  d.entry_executable = 0;
  d.num_memory_needs = 1;
  d.memory_needs = kHostScratch;
  return d;
}

// The CUDA build: a PTX module whose kernel is never launched here (no GPU);
// the descriptor checks accept it, the back end finds no driver.
const char kMultiPtx[] = ".version 6.3\n.target sm_75\n.address_size 64\n"
                         ".visible .entry add(\n\t.param .u64 p0,\n\t.param "
                         ".u64 p1,\n\t.param .u64 p2\n)\n{\n\tret;\n}\n";
const char *const kMultiPtxKernels[] = {"add"};
const kiln_executable_desc kPtxExecutables[] = {
    {KILN_EXECUTABLE_PTX, 0, "sm_75", nullptr, nullptr, kMultiPtx,
     sizeof(kMultiPtx), 1, kMultiPtxKernels}};
const kiln_binding_desc kPtxBindings[] = {{KILN_BINDING_INPUT, 0, 0, 0, 0, 0},
                                          {KILN_BINDING_INPUT, 1, 0, 0, 0, 0},
                                          {KILN_BINDING_OUTPUT, 0, 0, 0, 0, 0}};

kiln_model_desc gHost, gCuda;
ModelBuilder *gVulkan;
const kiln_model_desc *hostVariant(void) { return &gHost; }
const kiln_model_desc *cudaVariant(void) { return &gCuda; }
const kiln_model_desc *vulkanVariant(void) { return gVulkan->build(); }

class MultiDevice : public ::testing::Test {
protected:
  void SetUp() override {
    gHost = makeHostAdd();
    gCuda = makeHostAdd();
    gCuda.executables = kPtxExecutables;
    gCuda.entry_executable = KILN_NO_EXECUTABLE;
    dispatch.executable = 0;
    dispatch.kernel = 0;
    for (int i = 0; i < 3; ++i)
      dispatch.workgroup_count[i] = dispatch.workgroup_size[i] = 1;
    dispatch.workgroup_count[0] = 2;
    dispatch.workgroup_size[0] = 64;
    dispatch.num_bindings = 3;
    dispatch.bindings = kPtxBindings;
    gCuda.num_dispatches = 1;
    gCuda.dispatches = &dispatch;
    gCuda.num_memory_needs = 0;
    gCuda.memory_needs = nullptr;
    vulkan = std::make_unique<ModelBuilder>("multi");
    buildAdd(*vulkan, kMultiN);
    gVulkan = vulkan.get();
    // The order `kiln compile` writes: other devices first, then the CPUs.
    variants[0] = {"vulkan", "vulkan", "", 0, 0, vulkanVariant};
    variants[1] = {"cuda", "cuda:sm_75", "", 0, 0, cudaVariant};
    variants[2] = {"cpu", "generic", "", 0, 0, hostVariant};
    artifact = {KILN_ARTIFACT_ABI_VERSION, 3, "multi", variants};
  }

  /// Opens the artifact with options.device `device`: "<device> <variant>"
  /// of the model opened, or the status.
  std::string open(const char *device, const char *cpuVariant = nullptr) {
    kiln_model_options options;
    kiln_model_options_init(&options);
    options.num_threads = 1;
    options.device = device;
    options.cpu_variant = cpuVariant;
    kiln_model *model = nullptr;
    kiln_status status = kiln_model_open_artifact(&artifact, &options, &model);
    if (status)
      return statusString(status);
    std::string opened = std::string(kiln_model_device(model)) + " " +
                         kiln_model_variant(model);
    EXPECT_EQ(kiln_model_get_artifact(model), &artifact);
    kiln_model_close(model);
    return opened;
  }

  // No CUDA driver whatever this machine has: auto passes CUDA over.
  ScopedEnv noCuda{"KILN_CUDA_DRIVER", "/nonexistent/libcuda.so.1"};
  ScopedEnv noDeviceEnv{"KILN_DEVICE", nullptr};
  kiln_dispatch_desc dispatch = {};
  std::unique_ptr<ModelBuilder> vulkan;
  kiln_variant_desc variants[3];
  kiln_artifact_desc artifact;
  const std::string cudaMissing =
      "model 'multi' runs on CUDA, but the CUDA driver library "
      "'/nonexistent/libcuda.so.1' cannot be loaded";
};

TEST_F(MultiDevice, AutoTakesCudaThenVulkanThenCpu) {
  REQUIRE_VULKAN();
  // CUDA is absent: auto (and NULL, and "") opens Vulkan.
  EXPECT_EQ(open(nullptr), "vulkan vulkan");
  EXPECT_EQ(open("auto"), "vulkan vulkan");
  EXPECT_EQ(open(""), "vulkan vulkan");
  // Without a Vulkan device either: the CPU.
  {
    ScopedEnv env("VK_ICD_FILENAMES", "/nonexistent/icd.json");
    EXPECT_EQ(open(nullptr), "cpu generic");
  }
  {
    ScopedEnv env("KILN_VULKAN_LOADER", "/nonexistent/libvulkan.so.1");
    EXPECT_EQ(open("auto"), "cpu generic");
  }
}

TEST_F(MultiDevice, NamedDeviceOpensOrFails) {
  EXPECT_EQ(open("cpu"), "cpu generic");
  EXPECT_EQ(open("cpu", "generic"), "cpu generic");
  // A device named alone must open: no fallback, its own error.
  std::string error = open("cuda");
  EXPECT_EQ(error.rfind("UNSUPPORTED: " + cudaMissing, 0), 0u) << error;
  {
    ScopedEnv env("VK_ICD_FILENAMES", "/nonexistent/icd.json");
    error = open("vulkan");
    EXPECT_EQ(error.rfind("UNSUPPORTED: model 'multi' runs on Vulkan, but the "
                          "Vulkan loader",
                          0),
              0u)
        << error;
  }
  REQUIRE_VULKAN();
  EXPECT_EQ(open("vulkan"), "vulkan vulkan");
  EXPECT_EQ(open("vulkan:0"), "vulkan vulkan");
}

TEST_F(MultiDevice, ListsAndTheEnvironment) {
  EXPECT_EQ(open("cuda,cpu"), "cpu generic");
  {
    // KILN_DEVICE stands in for auto; a device in the option wins.
    ScopedEnv env("KILN_DEVICE", "cpu");
    EXPECT_EQ(open(nullptr), "cpu generic");
    EXPECT_EQ(open("auto"), "cpu generic");
  }
  {
    ScopedEnv env("KILN_DEVICE", "tpu");
    EXPECT_EQ(open(nullptr),
              "INVALID_ARGUMENT: KILN_DEVICE is 'tpu'; expected 'auto', "
              "'cpu', 'vulkan', 'vulkan:DEVICE', 'cuda', 'cuda:DEVICE', "
              "'hip', 'hip:DEVICE', 'none' or a comma-separated list of "
              "devices to try in order ('vulkan,cpu')");
    EXPECT_EQ(open("cpu"), "cpu generic");
  }
  EXPECT_EQ(open("cpu,"), "INVALID_ARGUMENT: options.device is 'cpu,'; "
                          "expected 'auto', 'cpu', 'vulkan', "
                          "'vulkan:DEVICE', 'cuda', 'cuda:DEVICE', 'hip', "
                          "'hip:DEVICE', 'none' or a comma-separated list of "
                          "devices to try in order ('vulkan,cpu')");
  EXPECT_EQ(open("cpu:0").rfind("INVALID_ARGUMENT: options.device is 'cpu:0'",
                                0),
            0u);
  REQUIRE_VULKAN();
  EXPECT_EQ(open("vulkan,cpu"), "vulkan vulkan");
  ScopedEnv env("KILN_DEVICE", "cpu,vulkan");
  EXPECT_EQ(open(nullptr), "cpu generic");
  EXPECT_EQ(open("vulkan"), "vulkan vulkan");
}

TEST_F(MultiDevice, DeviceNotHeldNamesTheHeldOnes) {
  artifact.variants = variants + 1; // cuda and cpu
  artifact.num_variants = 2;
  EXPECT_EQ(open("vulkan"),
            "UNSUPPORTED: model 'multi' holds no code for device 'vulkan' "
            "(from options.device); it holds: cuda, cpu (generic)");
  ScopedEnv env("KILN_DEVICE", "vulkan:1");
  EXPECT_EQ(open(nullptr),
            "UNSUPPORTED: model 'multi' holds no code for device 'vulkan:1' "
            "(from KILN_DEVICE); it holds: cuda, cpu (generic)");
  // A list the artifact holds none of.
  EXPECT_EQ(open("vulkan,vulkan:1"),
            "UNSUPPORTED: model 'multi' holds none of the devices "
            "'vulkan,vulkan:1' (from options.device); it holds: cuda, cpu "
            "(generic)");
}

TEST_F(MultiDevice, NothingOpensSaysWhyForEach) {
  artifact.num_variants = 2; // vulkan and cuda, no CPU
  ScopedEnv env("VK_ICD_FILENAMES", "/nonexistent/icd.json");
  std::string error = open(nullptr);
  EXPECT_EQ(error.rfind("UNSUPPORTED: model 'multi' opens on none of the "
                        "devices 'cuda,hip,vulkan,cpu' (from auto): cuda: " +
                            cudaMissing,
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("; vulkan: model 'multi' runs on Vulkan, but the "
                       "Vulkan loader"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("; it holds: vulkan, cuda"), std::string::npos)
      << error;
  // "none" describes the first device auto would try, opening nothing.
  EXPECT_EQ(open("none"), "none cuda:sm_75");
}

TEST_F(MultiDevice, BothWaysGiveTheSameOutputs) {
  REQUIRE_VULKAN();
  std::vector<float> a(kMultiN), b(kMultiN);
  for (int64_t i = 0; i < kMultiN; ++i)
    a[i] = 0.25f * (float)i, b[i] = 3.0f - (float)i;
  std::vector<float> results[2];
  const char *devices[2] = {"cpu", "vulkan"};
  for (int d = 0; d < 2; ++d) {
    kiln_model_options options;
    kiln_model_options_init(&options);
    options.device = devices[d];
    kiln_model *raw = nullptr;
    ASSERT_EQ(statusString(kiln_model_open_artifact(&artifact, &options, &raw)),
              "OK");
    ModelHandle model(raw);
    EXPECT_STREQ(kiln_model_device(model.get()), devices[d]);
    results[d].resize(kMultiN);
    kiln_tensor inputs[2] = {floatTensor("a", a), floatTensor("b", b)};
    kiln_tensor output = floatTensor("c", results[d]);
    for (kiln_tensor *t : {&inputs[0], &inputs[1], &output})
      t->rank = 1, t->shape = kMultiShape;
    ASSERT_EQ(statusString(kiln_model_run(model.get(), inputs, 2, &output, 1)),
              "OK");
  }
  for (int64_t i = 0; i < kMultiN; ++i)
    EXPECT_EQ(results[0][i], results[1][i]) << i;
}

} // namespace
