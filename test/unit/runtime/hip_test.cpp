// The runtime's HIP back end (cuda.c over HIP's module API) on descriptors
// built by hand: the checks of hsaco executables, the device option, no
// library (libamdhip64.so absent, or KILN_HIP_LIBRARY naming one that does
// not exist), and, through fake_hip.c (a stand-in library that runs the
// kernels "add" and "fail" on the host), every step of a run: device pick,
// code object choice among alternatives, weights upload, the captured graph
// and launch by launch, the run status, device buffers. No AMD GPU has run
// this back end yet (docs/gpu.md).
#include "test_util.h"

#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using kiln_test::ScopedEnv;
using kiln_test::statusString;

namespace {

// The first bytes of an AMD GPU code object: an ELF64 header (EM_AMDGPU,
// e_flags' machine byte `mach`: 0x3f gfx90a, 0x4c gfx942) and a string table
// naming the kernel descriptors.
std::vector<unsigned char> codeObject(unsigned char mach,
                                      const char *kernels) {
  std::vector<unsigned char> bytes(64, 0);
  const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 64, 3};
  std::memcpy(bytes.data(), ident, sizeof(ident));
  bytes[16] = 3;   // ET_DYN
  bytes[18] = 224; // EM_AMDGPU
  bytes[20] = 1;
  bytes[48] = mach;
  bytes.push_back(0);
  bytes.insert(bytes.end(), kernels, kernels + std::strlen(kernels) + 1);
  return bytes;
}

const char *const kKernels[] = {"add"};
const char *const kFailKernels[] = {"fail"};
const int64_t kShape[] = {100};

// y = x + w, w the weights (device-constant memory need 0), for gfx90a.
struct AddModel {
  kiln_tensor_desc inputs[1] = {{"x", KILN_DTYPE_FLOAT32, 1, kShape}};
  kiln_tensor_desc outputs[1] = {{"y", KILN_DTYPE_FLOAT32, 1, kShape}};
  float weights[100];
  std::vector<unsigned char> gfx90a = codeObject(0x3f, "add.kd");
  std::vector<unsigned char> gfx942 = codeObject(0x4c, "add.kd");
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
    executables[0] = {KILN_EXECUTABLE_HSACO, 0, "gfx90a", nullptr, nullptr,
                      gfx90a.data(), gfx90a.size(), 1, kKernels};
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
    desc.name = "hip_test";
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

void expectMalformed(const kiln_model_desc &desc, const std::string &detail) {
  std::string error;
  EXPECT_EQ(open(&desc, "none", &error), nullptr);
  EXPECT_NE(error.find(detail), std::string::npos) << error;
}

//===----------------------------------------------------------------------===//
// No library, descriptor checks, the device option
//===----------------------------------------------------------------------===//

TEST(Hip, NoLibrary) {
  ScopedEnv env("KILN_HIP_LIBRARY", "/nonexistent/libamdhip64.so");
  AddModel m;
  std::string error;
  EXPECT_EQ(open(&m.desc, nullptr, &error), nullptr);
  EXPECT_EQ(error.rfind("UNSUPPORTED: model 'hip_test' runs on HIP, but the "
                        "HIP driver library '/nonexistent/libamdhip64.so' "
                        "cannot be loaded (/nonexistent/libamdhip64.so: ",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("install ROCm's HIP runtime"), std::string::npos)
      << error;
}

TEST(Hip, Descriptor) {
  AddModel m;
  std::string error;
  kiln_model *model = open(&m.desc, "none", &error);
  ASSERT_NE(model, nullptr) << error;
  kiln_model_close(model);

  AddModel badTarget;
  badTarget.executables[0].target = "sm_80";
  expectMalformed(badTarget.desc, "hsaco executable 0 has target 'sm_80', not "
                                  "an AMD GPU such as 'gfx90a'");
  AddModel notElf;
  notElf.gfx90a[18] = 62; // EM_X86_64
  expectMalformed(notElf.desc, "hsaco executable 0 is not an AMD GPU ELF file");
  AddModel noKernel;
  noKernel.executables[0].kernel_names = kFailKernels;
  expectMalformed(noKernel.desc,
                  "hsaco executable 0 has no kernel descriptor 'fail.kd'");
}

TEST(Hip, WrongDevice) {
  AddModel m;
  std::string error;
  EXPECT_EQ(open(&m.desc, "cuda", &error), nullptr);
  EXPECT_EQ(error, "UNSUPPORTED: model 'hip_test' holds only HIP code "
                   "(hsaco): it cannot run on device 'cuda' (compile it "
                   "for cuda, or open it with device 'hip' or 'auto')");
}

//===----------------------------------------------------------------------===//
// Runs through the stand-in library
//===----------------------------------------------------------------------===//

class FakeHip : public ::testing::Test {
protected:
  ScopedEnv library{"KILN_HIP_LIBRARY", KILN_FAKE_HIP};
};

TEST_F(FakeHip, RunAddGraph) {
  AddModel m;
  std::string error;
  kiln_model *model = open(&m.desc, "hip", &error);
  ASSERT_NE(model, nullptr) << error;
  EXPECT_STREQ(kiln_model_device(model), "hip");
  runAdd(model);
  kiln_model_close(model);
}

TEST_F(FakeHip, RunAddLaunchByLaunch) {
  ScopedEnv graph("KILN_HIP_GRAPH", "0");
  AddModel m;
  std::string error;
  kiln_model *model = open(&m.desc, "hip:0", &error);
  ASSERT_NE(model, nullptr) << error;
  runAdd(model);
  kiln_model_close(model);
}

// The code objects of a group are tried in order: a gfx942 build first (its
// load fails on the gfx90a device), then the gfx90a alternative.
TEST_F(FakeHip, AlternativeForAnotherChip) {
  AddModel m;
  m.executables[0] = {KILN_EXECUTABLE_HSACO, 0, "gfx942", nullptr, nullptr,
                      m.gfx942.data(), m.gfx942.size(), 1, kKernels};
  m.executables[1] = {KILN_EXECUTABLE_HSACO, KILN_EXECUTABLE_ALTERNATIVE,
                      "gfx90a", nullptr, nullptr, m.gfx90a.data(),
                      m.gfx90a.size(), 1, kKernels};
  m.desc.num_executables = 2;
  std::string error;
  kiln_model *model = open(&m.desc, "hip", &error);
  ASSERT_NE(model, nullptr) << error;
  runAdd(model);
  kiln_model_close(model);
  // Only the gfx942 build: refused, naming what it was built for.
  m.desc.num_executables = 1;
  EXPECT_EQ(open(&m.desc, "hip", &error), nullptr);
  EXPECT_EQ(error, "INTERNAL: model 'hip_test' on HIP device 0 'Fake AMD "
                   "Instinct (gfx90a)': cannot load the code object of kernel "
                   "'add' (executable 0, built for gfx942; recompile with "
                   "`kiln compile --device hip:GFX` naming this device's gfx "
                   "architecture): hipErrorNoBinaryForGpu (no kernel image is "
                   "available for execution on the device)");
}

TEST_F(FakeHip, NoDevice) {
  ScopedEnv none("KILN_FAKE_HIP_NO_DEVICE", "1");
  AddModel m;
  std::string error;
  EXPECT_EQ(open(&m.desc, "hip", &error), nullptr);
  EXPECT_EQ(error, "UNSUPPORTED: model 'hip_test' runs on HIP, but the driver "
                   "found no HIP device (hipErrorNoDevice)");
}

TEST_F(FakeHip, NoSuchDevice) {
  AddModel m;
  std::string error;
  EXPECT_EQ(open(&m.desc, "hip:nvidia", &error), nullptr);
  EXPECT_EQ(error, "NOT_FOUND: model 'hip_test': no HIP device matches "
                   "'nvidia' (from the device option; the devices: 0 'Fake "
                   "AMD Instinct (gfx90a)')");
}

// A kernel that stores a failed check's number into the run-status memory
// need fails the run with that check's message, every run.
TEST_F(FakeHip, RunTimeCheck) {
  AddModel m;
  static const char *const messages[] = {
      "node 'Gather_1' (Gather): index 10000 out of range"};
  std::vector<unsigned char> failObject = codeObject(0x3f, "fail.kd");
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
  m.executables[1] = {KILN_EXECUTABLE_HSACO, 0, "gfx90a", nullptr, nullptr,
                      failObject.data(), failObject.size(), 1, kFailKernels};
  m.desc.num_executables = 2;
  m.desc.num_dispatches = 2;
  m.desc.dispatches = dispatches;
  m.desc.num_memory_needs = 2;
  m.desc.memory_needs = memory;
  m.desc.num_check_messages = 1;
  m.desc.check_messages = messages;
  std::string error;
  kiln_model *model = open(&m.desc, "hip", &error);
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

// kiln_model_run_device with the stand-in's device pointers (host memory).
TEST_F(FakeHip, RunDeviceBuffers) {
  AddModel m;
  std::string error;
  kiln_model *model = open(&m.desc, "hip", &error);
  ASSERT_NE(model, nullptr) << error;
  std::vector<float> x(100 + 16), y(100 + 8, -1.0f);
  for (int i = 0; i < 100; ++i)
    x[16 + i] = 2.0f * (float)i;
  kiln_device_tensor in = {"x", (uint64_t)(uintptr_t)x.data(), 64, 400};
  kiln_device_tensor out = {"y", (uint64_t)(uintptr_t)y.data(), 32, 400};
  kiln_status status = kiln_model_run_device(model, &in, 1, &out, 1);
  ASSERT_EQ(status, nullptr) << statusString(status);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(y[8 + i], 2.0f * (float)i + 0.5f * (float)i) << i;
  kiln_model_close(model);
}

} // namespace
