// The runtime's CUDA back end on descriptors built by hand around a small PTX
// module: the descriptor checks of PTX and cubin executables and their
// alternatives, the device option, no driver (libcuda.so.1 absent, or
// KILN_CUDA_DRIVER naming a library that does not exist), and, where an
// NVIDIA GPU and its driver are present, numbers: an add run through the
// captured CUDA graph and launch by launch, a cubin for another architecture
// passed over for the PTX, a PTX too new for the device refused, a device
// that matches nothing. Without a GPU those tests skip (CI has none).
#include "test_util.h"

#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <dlfcn.h>

using kiln_test::ScopedEnv;
using kiln_test::statusString;

extern "C" unsigned kiln_cuda_parse_sm(const char *target, int *arch_specific);

namespace {

// out[i] = a[i] + b[i] for i < 100, 64 threads per workgroup: the form the
// cuda target gives a kernel (one pointer parameter per binding). PTX 6.3
// for sm_75, so the driver JIT runs it on every GPU CUDA 13 supports.
const char kAddPtx[] = R"(.version 6.3
.target sm_75
.address_size 64

.visible .entry add(
	.param .u64 add_param_0,
	.param .u64 add_param_1,
	.param .u64 add_param_2
)
.maxntid 64, 1, 1
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .f32 %f<4>;
	.reg .b64 %rd<11>;

	ld.param.u64 %rd1, [add_param_0];
	ld.param.u64 %rd2, [add_param_1];
	ld.param.u64 %rd3, [add_param_2];
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %tid.x;
	mad.lo.s32 %r3, %r1, 64, %r2;
	setp.ge.u32 %p1, %r3, 100;
	@%p1 bra DONE;
	cvta.to.global.u64 %rd4, %rd1;
	cvta.to.global.u64 %rd5, %rd2;
	cvta.to.global.u64 %rd6, %rd3;
	mul.wide.u32 %rd7, %r3, 4;
	add.s64 %rd8, %rd4, %rd7;
	add.s64 %rd9, %rd5, %rd7;
	add.s64 %rd10, %rd6, %rd7;
	ld.global.f32 %f1, [%rd8];
	ld.global.f32 %f2, [%rd9];
	add.f32 %f3, %f1, %f2;
	st.global.f32 [%rd10], %f3;
DONE:
	ret;
}
)";

// Stores run-time check number 1 into its one binding (the run status).
const char kFailPtx[] = R"(.version 6.3
.target sm_75
.address_size 64

.visible .entry fail(
	.param .u64 fail_param_0
)
.maxntid 1, 1, 1
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<3>;

	ld.param.u64 %rd1, [fail_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, 1;
	st.global.u32 [%rd2], %r1;
	ret;
}
)";

const char *const kKernels[] = {"add"};
const char *const kFailKernels[] = {"fail"};
const char *const kOtherKernels[] = {"mul"};
const int64_t kShape[] = {100};
const unsigned char kNotElf[] = {'n', 'o', 't', ' ', 'e', 'l', 'f', 0};
const unsigned char kElf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};

// y = x + w, w the weights (device-constant memory need 0).
struct AddModel {
  kiln_tensor_desc inputs[1] = {{"x", KILN_DTYPE_FLOAT32, 1, kShape}};
  kiln_tensor_desc outputs[1] = {{"y", KILN_DTYPE_FLOAT32, 1, kShape}};
  float weights[100];
  kiln_executable_desc executables[3];
  kiln_binding_desc bindings[3] = {
      {KILN_BINDING_INPUT, 0, 0, 0, 0, 0},
      {KILN_BINDING_MEMORY, 0, 0, 0, 0, 0},
      {KILN_BINDING_OUTPUT, 0, 0, 0, 0, 0},
  };
  kiln_dispatch_desc dispatch = {};
  kiln_memory_need memory[1];
  kiln_model_desc desc = {};

  AddModel() {
    for (int i = 0; i < 100; ++i)
      weights[i] = 0.5f * (float)i;
    std::memset(executables, 0, sizeof(executables));
    executables[0] = {
        KILN_EXECUTABLE_PTX, 0, "sm_75", nullptr, nullptr, kAddPtx,
        sizeof(kAddPtx),     1, kKernels};
    memory[0] = {KILN_MEMORY_DEVICE_CONSTANT, 0, sizeof(weights), 256, weights};
    dispatch.executable = 0;
    dispatch.kernel = 0;
    dispatch.workgroup_count[0] = 2;
    dispatch.workgroup_count[1] = dispatch.workgroup_count[2] = 1;
    dispatch.workgroup_size[0] = 64;
    dispatch.workgroup_size[1] = dispatch.workgroup_size[2] = 1;
    dispatch.num_bindings = 3;
    dispatch.bindings = bindings;
    desc.abi_version = KILN_MODEL_ABI_VERSION;
    desc.name = "cuda_test";
    desc.producer = "test";
    desc.target_triple = "x86_64-unknown-linux-gnu";
    desc.cpu = "generic";
    desc.cpu_features = "";
    desc.num_inputs = 1;
    desc.inputs = inputs;
    desc.num_outputs = 1;
    desc.outputs = outputs;
    desc.num_executables = 1;
    desc.executables = executables;
    desc.entry_executable = KILN_NO_EXECUTABLE;
    desc.num_dispatches = 1;
    desc.dispatches = &dispatch;
    desc.num_memory_needs = 1;
    desc.memory_needs = memory;
  }

  // An alternative build after the PTX.
  void addAlternative(uint32_t format, const char *target, const void *data,
                      uint64_t size, const char *const *kernels = kKernels) {
    executables[desc.num_executables++] = {format,  KILN_EXECUTABLE_ALTERNATIVE,
                                           target,  nullptr,
                                           nullptr, data,
                                           size,    1,
                                           kernels};
  }
};

kiln_model *open(const kiln_model_desc *desc, const char *device,
                 std::string *error) {
  kiln_model_options options;
  kiln_model_options_init(&options);
  options.device = device;
  kiln_model *model = nullptr;
  kiln_status status = kiln_model_open_descriptor(desc, &options, &model);
  *error = statusString(status); // frees the status
  return model;
}

// Whether a CUDA device can run the tests: libcuda loads and has a device.
std::string cudaMissing() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return "no CUDA driver (libcuda.so.1)";
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int *);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
  int n = 0;
  if (!init || !count || init(0) != 0 || count(&n) != 0 || n == 0)
    return "no CUDA device";
  return "";
}

#define REQUIRE_CUDA()                                                         \
  do {                                                                         \
    std::string missing = cudaMissing();                                       \
    if (!missing.empty())                                                      \
      GTEST_SKIP() << missing;                                                 \
  } while (0)

TEST(Cuda, ParseSm) {
  int specific = 0;
  EXPECT_EQ(kiln_cuda_parse_sm("sm_80", &specific), 80u);
  EXPECT_EQ(specific, 0);
  EXPECT_EQ(kiln_cuda_parse_sm("sm_90a", &specific), 90u);
  EXPECT_EQ(specific, 1);
  EXPECT_EQ(kiln_cuda_parse_sm("sm_120", &specific), 120u);
  EXPECT_EQ(kiln_cuda_parse_sm("sm_8", &specific), 0u);
  EXPECT_EQ(kiln_cuda_parse_sm("gfx90a", &specific), 0u);
  EXPECT_EQ(kiln_cuda_parse_sm("sm_80x", &specific), 0u);
}

//===----------------------------------------------------------------------===//
// No driver
//===----------------------------------------------------------------------===//

TEST(Cuda, NoDriver) {
  ScopedEnv env("KILN_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  AddModel m;
  std::string error;
  EXPECT_EQ(open(&m.desc, nullptr, &error), nullptr);
  EXPECT_EQ(error.rfind("UNSUPPORTED: model 'cuda_test' runs on CUDA, but the "
                        "CUDA driver library '/nonexistent/libcuda.so.1' "
                        "cannot be loaded (",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("install NVIDIA's driver"), std::string::npos) << error;
}

// Where libcuda.so.1 is absent (this CI), the default name is the one named.
TEST(Cuda, NoDriverByDefault) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib)
    GTEST_SKIP() << "libcuda.so.1 is installed here";
  ScopedEnv env("KILN_CUDA_DRIVER", nullptr);
  AddModel m;
  std::string error;
  EXPECT_EQ(open(&m.desc, "cuda", &error), nullptr);
  EXPECT_EQ(error.rfind("UNSUPPORTED: model 'cuda_test' runs on CUDA, but the "
                        "CUDA driver library 'libcuda.so.1' cannot be loaded (",
                        0),
            0u)
      << error;
}

//===----------------------------------------------------------------------===//
// The device option
//===----------------------------------------------------------------------===//

TEST(Cuda, WrongDevice) {
  AddModel m;
  std::string error;
  EXPECT_EQ(open(&m.desc, "cpu", &error), nullptr);
  EXPECT_EQ(error, "UNSUPPORTED: model 'cuda_test' holds only CUDA code "
                   "(ptx/cubin): it cannot run on device 'cpu' (compile it "
                   "for the CPU, or open it with device 'cuda' or 'auto')");
  EXPECT_EQ(open(&m.desc, "vulkan", &error), nullptr);
  EXPECT_EQ(error, "UNSUPPORTED: model 'cuda_test' holds only CUDA code "
                   "(ptx/cubin): it cannot run on device 'vulkan' (compile it "
                   "for vulkan, or open it with device 'cuda' or 'auto')");
  EXPECT_EQ(open(&m.desc, "cudax", &error), nullptr);
  EXPECT_EQ(error, "INVALID_ARGUMENT: options.device is 'cudax'; expected "
                   "'auto', 'cpu', 'vulkan', 'vulkan:DEVICE', 'cuda', "
                   "'cuda:DEVICE', 'hip', 'hip:DEVICE', 'none' or a "
                   "comma-separated list of devices to try in order "
                   "('vulkan,cpu')");
  // "none": described, never run (kiln inspect where no GPU is).
  kiln_model *model = open(&m.desc, "none", &error);
  ASSERT_NE(model, nullptr) << error;
  EXPECT_STREQ(kiln_model_device(model), "none");
  float x[100] = {0}, y[100];
  kiln_tensor in = {"x", KILN_DTYPE_FLOAT32, 1, kShape, x, 400};
  kiln_tensor out = {"y", KILN_DTYPE_FLOAT32, 1, kShape, y, 400};
  EXPECT_EQ(statusString(kiln_model_run(model, &in, 1, &out, 1)),
            "FAILED_PRECONDITION: model 'cuda_test' was opened with device "
            "'none' (to be described): it cannot run; open it on 'cuda'");
  kiln_model_close(model);
}

//===----------------------------------------------------------------------===//
// Descriptor checks (no device needed: they come before the driver)
//===----------------------------------------------------------------------===//

void expectMalformed(const kiln_model_desc &desc, const std::string &detail) {
  std::string error;
  EXPECT_EQ(open(&desc, nullptr, &error), nullptr);
  EXPECT_EQ(error, "INVALID_ARGUMENT: malformed descriptor of model "
                   "'cuda_test': " +
                       detail);
}

TEST(Cuda, PtxNotTerminated) {
  AddModel m;
  m.executables[0].size = sizeof(kAddPtx) - 1;
  expectMalformed(m.desc, "ptx executable 0 is not NUL-terminated text");
}

TEST(Cuda, KernelNotAnEntry) {
  AddModel m;
  m.executables[0].kernel_names = kOtherKernels;
  expectMalformed(m.desc, "kernel 'mul' is no .entry of ptx executable 0");
}

TEST(Cuda, BadTarget) {
  AddModel m;
  m.executables[0].target = "gfx90a";
  expectMalformed(m.desc, "ptx executable 0 has target 'gfx90a', not a CUDA "
                          "architecture such as 'sm_80'");
}

TEST(Cuda, CubinNotElf) {
  AddModel m;
  m.addAlternative(KILN_EXECUTABLE_CUBIN, "sm_80", kNotElf, sizeof(kNotElf));
  expectMalformed(m.desc, "cubin executable 1 is not an ELF file");
}

TEST(Cuda, AlternativeWithOtherKernels) {
  AddModel m;
  m.addAlternative(KILN_EXECUTABLE_CUBIN, "sm_80", kElf, sizeof(kElf),
                   kOtherKernels);
  expectMalformed(m.desc, "cubin executable 1 is flagged an alternative of "
                          "the executable before it, but that is an "
                          "executable with other kernels");
}

TEST(Cuda, FirstExecutableIsAlternative) {
  AddModel m;
  m.executables[0].flags = KILN_EXECUTABLE_ALTERNATIVE;
  m.dispatch.executable = 0;
  expectMalformed(m.desc, "ptx executable 0 is flagged an alternative of the "
                          "executable before it, but that is none: it is "
                          "first, with other kernels");
}

TEST(Cuda, DispatchNamesAlternative) {
  AddModel m;
  m.addAlternative(KILN_EXECUTABLE_CUBIN, "sm_80", kElf, sizeof(kElf));
  m.dispatch.executable = 1;
  expectMalformed(m.desc, "dispatch 0 names executable 1, an alternative "
                          "(dispatches name the first build of a group)");
}

TEST(Cuda, UnknownExecutableFlag) {
  AddModel m;
  m.executables[0].flags = 4;
  expectMalformed(m.desc, "ptx executable 0 has unknown flags 0x4");
}

TEST(Cuda, MixedWithSpirv) {
  AddModel m;
  static const uint32_t spirv[] = {0x07230203, 0x00010300, 0, 1, 0};
  m.executables[1] = {
      KILN_EXECUTABLE_SPIRV, 0, "vulkan1.1", nullptr, nullptr, spirv,
      sizeof(spirv),         0, nullptr};
  m.desc.num_executables = 2;
  std::string error;
  EXPECT_EQ(open(&m.desc, nullptr, &error), nullptr);
  EXPECT_EQ(error, "UNSUPPORTED: model 'cuda_test' has both spirv and "
                   "ptx/cubin executables: one model runs on one device back "
                   "end");
}

//===----------------------------------------------------------------------===//
// On a GPU
//===----------------------------------------------------------------------===//

void runAdd(kiln_model *model) {
  std::vector<float> x(100), y(100, -1.0f);
  for (int i = 0; i < 100; ++i)
    x[i] = (float)i;
  for (int round = 0; round < 3; ++round) {
    kiln_tensor in = {"x", KILN_DTYPE_FLOAT32, 1, kShape, x.data(), 400};
    kiln_tensor out = {"y", KILN_DTYPE_FLOAT32, 1, kShape, y.data(), 400};
    kiln_status status = kiln_model_run(model, &in, 1, &out, 1);
    ASSERT_EQ(status, nullptr) << statusString(status);
    for (int i = 0; i < 100; ++i)
      ASSERT_EQ(y[i], x[i] + 0.5f * (float)i) << i;
    x[round] += 1000.0f;
  }
}

TEST(Cuda, RunAddGraph) {
  REQUIRE_CUDA();
  AddModel m;
  std::string error;
  kiln_model *model = open(&m.desc, "cuda", &error);
  ASSERT_NE(model, nullptr) << error;
  EXPECT_STREQ(kiln_model_device(model), "cuda");
  kiln_cuda_handles handles;
  ASSERT_EQ(kiln_model_cuda_handles(model, &handles), nullptr);
  EXPECT_GE(handles.compute_capability, 75u);
  EXPECT_NE(handles.context, nullptr);
  runAdd(model);
  kiln_model_close(model);
}

// A kernel that stores a failed check's number into the run-status memory
// need fails the run with that check's message; the runtime clears the status
// before each run.
TEST(Cuda, RunTimeCheck) {
  AddModel m;
  static const char *const messages[] = {
      "node 'Gather_1' (Gather): index 10000 out of range"};
  kiln_memory_need memory[2] = {
      m.memory[0],
      {KILN_MEMORY_DEVICE_LOCAL, KILN_MEMORY_RUN_STATUS, 4, 256, nullptr}};
  kiln_binding_desc status = {KILN_BINDING_MEMORY, 1, 0, 0, 0, 0};
  kiln_dispatch_desc dispatches[2] = {m.dispatch, {}};
  dispatches[1].executable = 1;
  dispatches[1].workgroup_count[0] = dispatches[1].workgroup_count[1] =
      dispatches[1].workgroup_count[2] = 1;
  dispatches[1].workgroup_size[0] = dispatches[1].workgroup_size[1] =
      dispatches[1].workgroup_size[2] = 1;
  dispatches[1].num_bindings = 1;
  dispatches[1].bindings = &status;
  m.executables[1] = {
      KILN_EXECUTABLE_PTX, 0, "sm_75",     nullptr, nullptr, kFailPtx,
      sizeof(kFailPtx),    1, kFailKernels};
  m.desc.num_executables = 2;
  m.desc.num_dispatches = 2;
  m.desc.dispatches = dispatches;
  m.desc.num_memory_needs = 2;
  m.desc.memory_needs = memory;
  m.desc.num_check_messages = 1;
  m.desc.check_messages = messages;
  std::string error;
  // The descriptor is sound (checked without a device), then run where a GPU
  // is.
  kiln_model *model = open(&m.desc, "none", &error);
  ASSERT_NE(model, nullptr) << error;
  kiln_model_close(model);
  REQUIRE_CUDA();
  model = open(&m.desc, "cuda", &error);
  ASSERT_NE(model, nullptr) << error;
  std::vector<float> x(100, 1.0f), y(100);
  for (int round = 0; round < 2; ++round) {
    kiln_tensor in = {"x", KILN_DTYPE_FLOAT32, 1, kShape, x.data(), 400};
    kiln_tensor out = {"y", KILN_DTYPE_FLOAT32, 1, kShape, y.data(), 400};
    EXPECT_EQ(statusString(kiln_model_run(model, &in, 1, &out, 1)),
              "RUNTIME_CHECK_FAILED: node 'Gather_1' (Gather): index 10000 out "
              "of range");
  }
  kiln_model_close(model);
}

// kiln_model_run_device on buffers the caller allocated with the driver API in
// the model's (primary) context.
TEST(Cuda, RunDeviceBuffers) {
  REQUIRE_CUDA();
  AddModel m;
  std::string error;
  kiln_model *model = open(&m.desc, "cuda", &error);
  ASSERT_NE(model, nullptr) << error;
  kiln_cuda_handles handles;
  ASSERT_EQ(kiln_model_cuda_handles(model, &handles), nullptr);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr);
  using Ptr = unsigned long long;
  auto setCurrent =
      reinterpret_cast<int (*)(void *)>(dlsym(lib, "cuCtxSetCurrent"));
  auto alloc =
      reinterpret_cast<int (*)(Ptr *, size_t)>(dlsym(lib, "cuMemAlloc_v2"));
  auto release = reinterpret_cast<int (*)(Ptr)>(dlsym(lib, "cuMemFree_v2"));
  auto toDevice = reinterpret_cast<int (*)(Ptr, const void *, size_t)>(
      dlsym(lib, "cuMemcpyHtoD_v2"));
  auto toHost = reinterpret_cast<int (*)(void *, Ptr, size_t)>(
      dlsym(lib, "cuMemcpyDtoH_v2"));
  ASSERT_TRUE(setCurrent && alloc && release && toDevice && toHost);
  ASSERT_EQ(setCurrent(handles.context), 0);
  Ptr x = 0, y = 0;
  ASSERT_EQ(alloc(&x, 400 + 64), 0);
  ASSERT_EQ(alloc(&y, 400), 0);
  std::vector<float> host(100), out(100, -1.0f);
  for (int i = 0; i < 100; ++i)
    host[i] = 2.0f * (float)i;
  ASSERT_EQ(toDevice(x + 64, host.data(), 400), 0);
  kiln_device_tensor in = {"x", x, 64, 400};
  kiln_device_tensor o = {"y", y, 0, 400};
  kiln_status status = kiln_model_run_device(model, &in, 1, &o, 1);
  ASSERT_EQ(status, nullptr) << statusString(status);
  ASSERT_EQ(setCurrent(handles.context), 0);
  ASSERT_EQ(toHost(out.data(), y, 400), 0);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(out[i], host[i] + 0.5f * (float)i) << i;
  // A range shorter than the tensor is refused before anything runs.
  in.byte_size = 396;
  EXPECT_EQ(statusString(kiln_model_run_device(model, &in, 1, &o, 1)),
            "INVALID_ARGUMENT: input 'x': device buffer has 396 bytes, needs "
            "400");
  release(x);
  release(y);
  kiln_model_close(model);
}

TEST(Cuda, RunAddLaunchByLaunch) {
  REQUIRE_CUDA();
  ScopedEnv env("KILN_CUDA_GRAPH", "0");
  AddModel m;
  std::string error;
  kiln_model *model = open(&m.desc, "cuda:0", &error);
  ASSERT_NE(model, nullptr) << error;
  runAdd(model);
  kiln_model_close(model);
}

// A cubin for another major version is passed over for the PTX (the bytes
// would not load: taking it would fail the open).
TEST(Cuda, CubinOfOtherArchNotTaken) {
  REQUIRE_CUDA();
  AddModel m;
  m.addAlternative(KILN_EXECUTABLE_CUBIN, "sm_10", kElf, sizeof(kElf));
  std::string error;
  kiln_model *model = open(&m.desc, "cuda", &error);
  ASSERT_NE(model, nullptr) << error;
  runAdd(model);
  kiln_model_close(model);
}

TEST(Cuda, PtxTooNew) {
  REQUIRE_CUDA();
  AddModel m;
  m.executables[0].target = "sm_990";
  std::string error;
  EXPECT_EQ(open(&m.desc, "cuda", &error), nullptr);
  EXPECT_EQ(error.rfind("UNSUPPORTED: model 'cuda_test': CUDA device 0 '", 0),
            0u)
      << error;
  EXPECT_NE(error.find("but the module of kernel 'add' (executable 0) was "
                       "built for ptx sm_990 (recompile with `kiln compile "
                       "--device cuda:sm_"),
            std::string::npos)
      << error;
}

TEST(Cuda, NoSuchDevice) {
  REQUIRE_CUDA();
  AddModel m;
  std::string error;
  EXPECT_EQ(open(&m.desc, "cuda:no-such-gpu", &error), nullptr);
  EXPECT_EQ(error.rfind("NOT_FOUND: model 'cuda_test': no CUDA device matches "
                        "'no-such-gpu' (from the device option; the devices: "
                        "0 '",
                        0),
            0u)
      << error;
  ScopedEnv env("KILN_CUDA_DEVICE", "99");
  EXPECT_EQ(open(&m.desc, "cuda", &error), nullptr);
  EXPECT_NE(error.find("(from KILN_CUDA_DEVICE;"), std::string::npos) << error;
}

} // namespace
