//===- SPIRVTargetBackend.cpp - Vulkan compute behind the seam ------------===//

#include "codegen/GPU/SPIRV/SPIRVTargetBackend.h"

#include "codegen/CPU/CPUPipeline.h"
#include "codegen/GPU/Common/DeviceTargetBackend.h"
#include "codegen/GPU/Common/GPUPipeline.h"
#include "codegen/GPU/Common/HostPlan.h"
#include "codegen/GPU/Passes.h"
#include "codegen/Passes.h"
#include "dialects/Kiln/ABIAttributes.h"

#include "mlir/Conversion/GPUToSPIRV/GPUToSPIRVPass.h"
#include "mlir/Conversion/MathToSPIRV/MathToSPIRVPass.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Target/SPIRV/Serialization.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln {

namespace {

/// The Vulkan environment the modules are built for (the descriptor's
/// executable target).
constexpr llvm::StringLiteral kVulkanEnv = "vulkan1.1";

/// The spirv.module convert-gpu-to-spirv made of `gpuModule`.
spirv::ModuleOp findSPIRVModule(ModuleOp module, StringRef gpuModule) {
  spirv::ModuleOp found;
  module.walk([&](spirv::ModuleOp spirvModule) {
    std::optional<StringRef> name = spirvModule.getName();
    if (name &&
        (*name == gpuModule || name->ends_with(("__" + gpuModule).str())))
      found = spirvModule;
  });
  return found;
}

/// SPIR-V for Vulkan 1.1 has no bf16 either (DeviceTargetBackend's types).
class SPIRVTargetBackend final : public DeviceTargetBackend {
public:
  using DeviceTargetBackend::DeviceTargetBackend;

  StringRef getDeviceName() const override { return "vulkan"; }

  bool isSupported(Operation *op, std::string &reason) const override {
    if (!DeviceTargetBackend::isSupported(op, reason))
      return false;
    std::string name = op->getName().getStringRef().str();
    // GLSL.std.450 computes these on 16/32-bit floats only (exp, log and
    // powf on f64: kiln-spirv-expand-f64-math).
    if (isa<math::Exp2Op, math::ExpM1Op, math::Log2Op,
            math::Log10Op, math::Log1pOp, math::SinOp,
            math::CosOp, math::TanOp, math::AsinOp, math::AcosOp, math::AtanOp,
            math::Atan2Op, math::SinhOp, math::CoshOp, math::TanhOp,
            math::AsinhOp, math::AcoshOp, math::AtanhOp, math::ErfOp,
            math::ErfcOp, math::CbrtOp>(op) &&
        getElementTypeOrSelf(op->getResult(0).getType()).isF64()) {
      reason = "'" + name + "' on f64";
      return false;
    }
    return true;
  }

  void buildPipeline(OpPassManager &pm) const override {
    // The kernels stay within what every Vulkan device allows: the limits
    // of the target environment kiln-spirv-set-entry-points declares
    // (spirv::getDefaultResourceLimits: 128 invocations, 16 KiB of
    // workgroup memory), which that pass checks each kernel against.
    GPUPipelineOptions options = getPipelineOptions();
    options.maxWorkgroupInvocations = 128;
    options.maxWorkgroupMemory = 16384;
    buildGPUCommonPipeline(pm, options);
    // exp / erf / tanh / log as the CPU computes them (GLSL has no erf and
    // its tanh overflows for large inputs on some drivers).
    // Not kiln's sigmoid: Mesa folds its shifter's (t + s) - s into t,
    // which gave exp(-3) = 2^-4 (Sigmoid and SiLU wrong on lavapipe).
    KilnApproximateMathPassOptions mathOptions;
    mathOptions.fastSigmoid = false;
    pm.addPass(createKilnApproximateMathPass(mathOptions));
    // f64 exp / log / powf as f64 arithmetic (GLSL has them on f32 only).
    pm.addNestedPass<gpu::GPUModuleOp>(createKilnSPIRVExpandF64MathPass());
    pm.addPass(arith::createArithExpandOpsPass());
    pm.addNestedPass<gpu::GPUModuleOp>(createKilnSPIRVLegalizeRemFPass());
    pm.addPass(createKilnSPIRVSetEntryPointsPass());
    pm.addNestedPass<gpu::GPUModuleOp>(
        createKilnSPIRVLowerWorkgroupMemoryPass());
    pm.addPass(memref::createFoldMemRefAliasOpsPass());
    // convert-gpu-to-spirv has no math patterns: GLSL.std.450 ops first.
    pm.addNestedPass<gpu::GPUModuleOp>(createConvertMathToSPIRVPass());
    // Results of scf.for loops that may run zero times: MLIR 22 leaves them
    // undefined (see the pass); nothing may fold the guards before the
    // conversion.
    pm.addNestedPass<gpu::GPUModuleOp>(createKilnSPIRVGuardZeroTripLoopsPass());
    // Non-negative index values zero-extended (OpUConvert): lavapipe
    // miscompiles some OpSConvert (see the pass).
    pm.addNestedPass<gpu::GPUModuleOp>(createKilnSPIRVUnsignedIndexCastsPass());
    pm.addPass(createConvertGPUToSPIRVPass());
    OpPassManager &spirvModule = pm.nest<spirv::ModuleOp>();
    spirvModule.addPass(spirv::createSPIRVLowerABIAttributesPass());
    spirvModule.addPass(createCanonicalizerPass());
    // f64 arithmetic as written (what the f64 expansions rely on).
    spirvModule.addPass(createKilnSPIRVExactF64Pass());
    spirvModule.addPass(spirv::createSPIRVUpdateVCEPass());
  }

  ExecutableInfo getExecutableInfo(ModuleOp module) const override {
    ExecutableInfo info;
    std::shared_ptr<DeviceProgram> program =
        beginExecutableInfo(module, "vulkan", ".spv", info);
    if (!program)
      return info;
    for (DeviceExecutable &executable : program->executables) {
      executable.target = kVulkanEnv.str();
      spirv::ModuleOp spirvModule = findSPIRVModule(module, executable.name);
      SmallVector<uint32_t> words;
      if (!spirvModule || failed(spirv::serialize(spirvModule, words))) {
        module.emitError("cannot serialize the SPIR-V module of '")
            << executable.name << "'";
        return info;
      }
      executable.words.assign(words.begin(), words.end());
    }
    info.device = std::move(program);
    return info;
  }

  LogicalResult printExecutable(ModuleOp module,
                                const SerializeOptions &options,
                                raw_ostream &os,
                                std::string &error) const override {
    // The SPIR-V modules in MLIR's assembly form.
    module.walk([&](spirv::ModuleOp spirvModule) {
      spirvModule.print(os);
      os << "\n";
    });
    return success();
  }
};

} // namespace

std::unique_ptr<TargetBackend>
createSPIRVTargetBackend(const TargetOptions &options, std::string &error) {
  // The host side is the descriptor only: a baseline CPU.
  FailureOr<CPUTarget> host = resolveCPUTarget(
      options.triple, options.cpu.empty() ? "generic" : options.cpu, error);
  if (failed(host))
    return nullptr;
  return std::make_unique<SPIRVTargetBackend>(std::move(*host),
                                              options.precision);
}

} // namespace kiln
