//===- TargetTest.cpp - the target seam and the shared tensor pipeline ----===//

#include "codegen/GPU/NVVM/NVVMTargetBackend.h"
#include "codegen/GPU/ROCDL/ROCDLTargetBackend.h"
#include "codegen/Target.h"
#include "codegen/CPU/CPUPipeline.h"
#include "codegen/Common/TensorPipeline.h"
#include "codegen/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

/// The pass names of `pm` in the order they run, without options or nesting
/// (`func.func(a),b{x={y}}` -> a, b).
std::vector<std::string> passNames(mlir::OpPassManager &pm) {
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  std::vector<std::string> names;
  std::string current;
  int braces = 0;
  auto flush = [&] {
    if (!current.empty())
      names.push_back(current);
    current.clear();
  };
  for (char c : text) {
    if (c == '{')
      ++braces;
    else if (c == '}')
      --braces;
    else if (braces > 0)
      continue;
    else if (c == '(')
      current.clear(); // an op name nesting a pipeline
    else if (c == ',' || c == ')')
      flush();
    else
      current += c;
  }
  flush();
  return names;
}

TEST(TargetRegistry, CreatesTheCPUTarget) {
  std::string error;
  std::unique_ptr<kiln::TargetBackend> target =
      kiln::createTargetBackend("cpu", kiln::TargetOptions(), error);
  ASSERT_NE(target, nullptr) << error;
  EXPECT_EQ(target->getDeviceName(), "cpu");
  EXPECT_EQ(target->getExecutableFormat(), kiln::ExecutableFormat::HostObject);
  EXPECT_EQ(kiln::getTargetDeviceNames(),
            (llvm::SmallVector<llvm::StringRef>{"cpu", "vulkan", "cuda",
                                                "hip"}));
}

TEST(TargetRegistry, CreatesTheVulkanTarget) {
  std::string error;
  std::unique_ptr<kiln::TargetBackend> target = kiln::createTargetBackend(
      "vulkan", kiln::TargetOptions{"aarch64-linux-android24", ""}, error);
  ASSERT_NE(target, nullptr) << error;
  EXPECT_EQ(target->getDeviceName(), "vulkan");
  EXPECT_EQ(target->getExecutableFormat(),
            kiln::ExecutableFormat::DeviceProgram);
  // The host side (the descriptor) is for the triple asked for.
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  kiln::ExecutableInfo info = target->getExecutableInfo(*module);
  EXPECT_EQ(info.triple, "aarch64-unknown-linux-android24");
  ASSERT_NE(info.device, nullptr);
  EXPECT_EQ(info.device->device, "vulkan");
  EXPECT_TRUE(info.device->dispatches.empty());
}

// "cuda[:sm_XX]": the architecture comes after the device's name; PTX
// versions follow the chip; unknown chips, architectures on devices that take
// none and a --cuda-path that is no folder are errors.
TEST(TargetRegistry, CreatesTheCudaTarget) {
  std::string error;
  for (const char *device : {"cuda", "cuda:sm_90"}) {
    std::unique_ptr<kiln::TargetBackend> target =
        kiln::createTargetBackend(device, kiln::TargetOptions(), error);
    ASSERT_NE(target, nullptr) << error;
    EXPECT_EQ(target->getDeviceName(), "cuda");
    EXPECT_EQ(target->getExecutableFormat(),
              kiln::ExecutableFormat::DeviceProgram);
  }
  EXPECT_EQ(kiln::getPTXVersionForChip("sm_80"), 70u);
  EXPECT_EQ(kiln::getPTXVersionForChip("sm_90"), 78u);
  EXPECT_EQ(kiln::getPTXVersionForChip("sm_90a"), 80u);
  EXPECT_EQ(kiln::getPTXVersionForChip("sm_61"), 0u);
  EXPECT_EQ(kiln::createTargetBackend("cuda:sm_61", kiln::TargetOptions(),
                                      error),
            nullptr);
  EXPECT_EQ(error.rfind("unknown CUDA architecture 'sm_61' (kiln compiles "
                        "for sm_75, sm_80,",
                        0),
            0u)
      << error;
  EXPECT_EQ(kiln::createTargetBackend("cuda:", kiln::TargetOptions(), error),
            nullptr);
  EXPECT_EQ(error, "--device 'cuda:' names no architecture after ':'");
  EXPECT_EQ(kiln::createTargetBackend("vulkan:x", kiln::TargetOptions(), error),
            nullptr);
  EXPECT_EQ(error, "device 'vulkan' takes no architecture (got 'vulkan:x'; "
                   "use --cpu for the cpu)");
  kiln::TargetOptions options;
  options.toolkitPath = "/nonexistent/cuda";
  EXPECT_EQ(kiln::createTargetBackend("cuda", options, error), nullptr);
  EXPECT_EQ(error, "--cuda-path '/nonexistent/cuda' is not a folder");
}

TEST(TargetRegistry, ResolvesACrossTarget) {
  std::string error;
  std::unique_ptr<kiln::TargetBackend> target = kiln::createTargetBackend(
      "cpu", kiln::TargetOptions{"aarch64-linux-gnu", ""}, error);
  ASSERT_NE(target, nullptr) << error;
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  kiln::ExecutableInfo info = target->getExecutableInfo(*module);
  EXPECT_EQ(info.triple, "aarch64-unknown-linux-gnu");
  EXPECT_EQ(info.cpu, "generic");
  EXPECT_EQ(info.runtimeFeatures, "");
  EXPECT_EQ(info.scratchSize, 0);
  EXPECT_TRUE(info.checkMessages.empty());
}

TEST(TargetRegistry, RejectsUnknownDevices) {
  std::string error;
  EXPECT_EQ(kiln::createTargetBackend("tpu", kiln::TargetOptions(), error),
            nullptr);
  EXPECT_EQ(error,
            "unknown device 'tpu' (kiln compiles for: cpu, vulkan, cuda, hip)");
}

// "hip[:gfxNNN]": any gfx name LLVM knows, 64-lane wavefronts before GFX10;
// unknown chips and a --rocm-path that is no folder are errors.
TEST(TargetRegistry, CreatesTheHipTarget) {
  std::string error;
  for (const char *device : {"hip", "hip:gfx942", "hip:gfx1100"}) {
    std::unique_ptr<kiln::TargetBackend> target =
        kiln::createTargetBackend(device, kiln::TargetOptions(), error);
    ASSERT_NE(target, nullptr) << error;
    EXPECT_EQ(target->getDeviceName(), "hip");
    EXPECT_EQ(target->getExecutableFormat(),
              kiln::ExecutableFormat::DeviceProgram);
  }
  bool wave64 = false;
  EXPECT_TRUE(kiln::isKnownAMDGPUChip("gfx90a", wave64));
  EXPECT_TRUE(wave64);
  EXPECT_TRUE(kiln::isKnownAMDGPUChip("gfx1100", wave64));
  EXPECT_FALSE(wave64);
  EXPECT_FALSE(kiln::isKnownAMDGPUChip("sm_80", wave64));
  EXPECT_EQ(kiln::createTargetBackend("hip:gfx123", kiln::TargetOptions(),
                                      error),
            nullptr);
  EXPECT_EQ(error, "unknown AMD GPU 'gfx123' (a gfx name LLVM knows, such as "
                   "gfx90a, gfx942 or gfx1100)");
  kiln::TargetOptions options;
  options.toolkitPath = "/nonexistent/rocm";
  EXPECT_EQ(kiln::createTargetBackend("hip", options, error), nullptr);
  EXPECT_EQ(error, "--rocm-path '/nonexistent/rocm' is not a folder");
}

TEST(TargetRegistry, RejectsAnUnknownCPU) {
  std::string error;
  EXPECT_EQ(
      kiln::createTargetBackend(
          "cpu", kiln::TargetOptions{"x86_64-linux-gnu", "no-such-cpu"}, error),
      nullptr);
  EXPECT_EQ(error,
            "unknown CPU 'no-such-cpu' for target x86_64-unknown-linux-gnu");
}

TEST(CPUTarget, Int8ProductPerISA) {
  // The 8-bit product instruction of the quantized kernels (kiln.int8_dot).
  struct Case {
    const char *triple, *cpu, *dot;
  };
  for (const Case &c : {
           Case{"x86_64-linux-gnu", "icelake-server", "vpdpbusd"}, // AVX512-VNNI
           Case{"x86_64-linux-gnu", "alderlake", "vpdpbusd"},      // AVX-VNNI
           Case{"x86_64-linux-gnu", "skylake-avx512", "pmaddwd"},  // AVX-512BW
           Case{"x86_64-linux-gnu", "x86-64-v3", "pmaddwd"},       // AVX2
           Case{"x86_64-linux-gnu", "x86-64", "pmaddwd"},          // SSE2
           Case{"x86_64-linux-gnu", "sandybridge", ""}, // AVX without AVX2
           Case{"aarch64-linux-gnu", "armv8.2-a+dotprod", "sdot"},
           Case{"aarch64-linux-gnu", "armv8-a", ""}}) {
    std::string error;
    llvm::FailureOr<kiln::CPUTarget> target =
        kiln::resolveCPUTarget(c.triple, c.cpu, error);
    ASSERT_TRUE(llvm::succeeded(target)) << c.cpu << ": " << error;
    EXPECT_EQ(target->int8Dot, c.dot) << c.cpu;
    // What sdot needs is checked at open.
    if (std::string(c.dot) == "sdot")
      EXPECT_NE(target->runtimeFeatures.find("dotprod"), std::string::npos)
          << target->runtimeFeatures;
  }
}

TEST(CPUTarget, BF16ProductPerISA) {
  // The bf16 pair product of --precision bf16 (kiln.bf16_dot) where the CPU
  // has AVX512-BF16, recorded among the features checked at open; none
  // elsewhere (widened to f32 and FMA).
  struct Case {
    const char *cpu, *dot;
  };
  for (const Case &c : {Case{"znver4", "vdpbf16ps"},
                        Case{"cooperlake", "vdpbf16ps"},
                        Case{"sapphirerapids", "vdpbf16ps"},
                        Case{"skylake-avx512", ""}, Case{"x86-64-v4", ""},
                        Case{"x86-64-v3", ""}}) {
    std::string error;
    llvm::FailureOr<kiln::CPUTarget> target =
        kiln::resolveCPUTarget("x86_64-linux-gnu", c.cpu, error);
    ASSERT_TRUE(llvm::succeeded(target)) << c.cpu << ": " << error;
    EXPECT_EQ(target->bf16Dot, c.dot) << c.cpu;
    EXPECT_EQ(target->runtimeFeatures.find("avx512bf16") != std::string::npos,
              std::string(c.dot) == "vdpbf16ps")
        << c.cpu << ": " << target->runtimeFeatures;
  }
}

TEST(TargetRegistry, Precision) {
  std::string error;
  kiln::TargetOptions options;
  options.precision = "bf16";
  EXPECT_NE(kiln::createTargetBackend("cpu", options, error), nullptr) << error;
  // The GPU targets take fp16; bf16 reaches their pipeline, which refuses it
  // naming the first node it would narrow (test/e2e/test_precision.py).
  for (const char *precision : {"fp16", "bf16"})
    for (const char *device : {"vulkan", "cuda:sm_90", "hip:gfx942"}) {
      options.precision = precision;
      EXPECT_NE(kiln::createTargetBackend(device, options, error), nullptr)
          << device << " " << precision << ": " << error;
    }
  options.precision = "int4";
  EXPECT_EQ(kiln::createTargetBackend("vulkan", options, error), nullptr);
  EXPECT_EQ(error,
            "unknown precision 'int4' (the vulkan target computes fp32 or fp16)");
  EXPECT_EQ(kiln::createTargetBackend("cpu", options, error), nullptr);
  EXPECT_EQ(error,
            "unknown precision 'int4' (the cpu target computes fp32, bf16 or "
            "fp16)");
}

TEST(TensorPipeline, HooksRunAtTheirPoints) {
  mlir::MLIRContext context;
  mlir::PassManager pm(&context);
  kiln::TensorPipelineHooks hooks;
  hooks.afterLayoutPropagation = [](mlir::OpPassManager &pm) {
    pm.addNestedPass<mlir::func::FuncOp>(kiln::createKilnWinogradConvsPass());
  };
  hooks.afterFusion = [](mlir::OpPassManager &pm) {
    pm.addPass(mlir::createSymbolDCEPass());
  };
  kiln::buildTensorPipeline(pm, hooks);
  EXPECT_EQ(passNames(pm),
            (std::vector<std::string>{
                "kiln-propagate-transposes", "kiln-winograd-convs",
                "kiln-fuse-elementwise", "canonicalize", "cse", "symbol-dce",
                "kiln-materialize-checks", "kiln-decompose-pads"}));
}

TEST(TensorPipeline, EmptyHooksAddNothing) {
  mlir::MLIRContext context;
  mlir::PassManager pm(&context);
  kiln::buildTensorPipeline(pm);
  EXPECT_EQ(passNames(pm),
            (std::vector<std::string>{"kiln-propagate-transposes",
                                      "kiln-fuse-elementwise", "canonicalize",
                                      "cse", "kiln-materialize-checks",
                                      "kiln-decompose-pads"}));
}

// The CPU's passes in the order they ran before the seam, plus the kernel
// strategy pass before each of its readers (a pass moved,
// added or dropped changes results or speed: update this list only with a
// measurement).
TEST(CPUTarget, PipelineOrder) {
  std::string error;
  std::unique_ptr<kiln::TargetBackend> target = kiln::createTargetBackend(
      "cpu", kiln::TargetOptions{"x86_64-linux-gnu", "x86-64-v3"}, error);
  ASSERT_NE(target, nullptr) << error;
  mlir::MLIRContext context;
  mlir::PassManager pm(&context);
  target->buildPipeline(pm);
  EXPECT_EQ(passNames(pm),
            (std::vector<std::string>{
                // codegen/Common, with the Winograd choice before fusion
                "kiln-propagate-transposes",
                "kiln-select-kernel-strategy",
                "kiln-winograd-convs",
                // x86 8-bit products (pmaddwd here): u8 activations as they
                // come, before fusion folds the sign flip into producers
                "kiln-flip-int8-activations",
                "kiln-fuse-elementwise",
                "canonicalize",
                "cse",
                "kiln-materialize-checks",
                "kiln-decompose-pads",
                // exact f64 multiply-adds (the QLinearAdd fold) to f32 fma
                "kiln-approximate-math",
                // buffers
                "eliminate-empty-tensors",
                "one-shot-bufferize",
                "buffer-results-to-out-params",
                "kiln-bind-symbolic-dims",
                "cse",
                "canonicalize",
                "kiln-select-kernel-strategy",
                "kiln-emit-microkernels",
                "canonicalize",
                "cse",
                "kiln-parallelize-loops",
                "kiln-plan-memory",
                "expand-realloc",
                "canonicalize",
                "ownership-based-buffer-deallocation",
                "canonicalize",
                "buffer-deallocation-simplification",
                "bufferization-lower-deallocations",
                "cse",
                "canonicalize",
                "kiln-allocate-run-outputs",
                "kiln-inline-dealloc-helpers",
                "kiln-drop-redundant-fills",
                "kiln-outline-parallel-loops",
                "kiln-merge-kernels",
                "kiln-replace-empty-entry-buffers",
                // to the LLVM dialect
                "kiln-lower-strided-copies",
                "kiln-lower-reductions",
                "convert-linalg-to-loops",
                "kiln-approximate-math",
                "convert-vector-to-scf",
                "kiln-outline-serial-code",
                "lower-affine",
                "convert-scf-to-cf",
                "expand-strided-metadata",
                "lower-affine",
                "arith-emulate-unsupported-floats",
                "arith-expand",
                "finalize-memref-to-llvm",
                "convert-vector-to-llvm",
                "convert-math-to-llvm",
                "convert-math-to-libm",
                "convert-arith-to-llvm",
                "convert-func-to-llvm",
                "convert-cf-to-llvm",
                "convert-ub-to-llvm",
                "reconcile-unrealized-casts",
                "kiln-merge-serial-loops",
            }));
}

} // namespace
