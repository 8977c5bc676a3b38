//===- SetEntryPoints.cpp - Vulkan target environment + entry-point ABI ---===//
//
// convert-gpu-to-spirv converts a gpu.module for the target environment on
// it and a kernel only with an entry-point ABI (its workgroup size). The
// environment declares every capability kiln's element types can need; the
// converter uses the ones an op needs (i64 stays i64 with Int64, instead of
// being narrowed) and spirv-update-vce keeps in each module only what it
// uses, which is what the runtime checks against the device's features.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/Passes.h"
#include "dialects/ONNX/Diagnostics.h"

#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSPIRVSETENTRYPOINTSPASS
#include "codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

spirv::TargetEnvAttr getVulkanTargetEnv(MLIRContext *ctx) {
  using spirv::Capability;
  using spirv::Extension;
  // Vulkan 1.1 consumes SPIR-V 1.3.
  auto triple = spirv::VerCapExtAttr::get(
      spirv::Version::V_1_3,
      {Capability::Shader, Capability::Int8, Capability::Int16,
       Capability::Int64, Capability::Float16, Capability::Float64,
       Capability::StorageBuffer8BitAccess,
       Capability::StorageBuffer16BitAccess},
      {Extension::SPV_KHR_storage_buffer_storage_class,
       Extension::SPV_KHR_8bit_storage, Extension::SPV_KHR_16bit_storage},
      ctx);
  return spirv::TargetEnvAttr::get(triple, spirv::getDefaultResourceLimits(ctx),
                                   spirv::ClientAPI::Vulkan);
}

struct SetEntryPointsPass
    : kiln::impl::KilnSPIRVSetEntryPointsPassBase<SetEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // The workgroup size of each kernel, from its launches.
    llvm::DenseMap<SymbolRefAttr, SmallVector<int32_t>> sizes;
    bool failed = false;
    module.walk([&](gpu::LaunchFuncOp launch) {
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      SmallVector<int32_t> size;
      for (Value value : {block.x, block.y, block.z}) {
        std::optional<int64_t> constant = getConstantIntValue(value);
        if (!constant) {
          kiln::onnx::emitNodeError(launch)
              << "a kernel launch without a static workgroup size";
          failed = true;
          return;
        }
        size.push_back(*constant);
      }
      // The environment's limit (the kernels kiln chooses stay within it).
      int64_t invocations =
          static_cast<int64_t>(size[0]) * size[1] * size[2];
      int64_t limit = spirv::getDefaultResourceLimits(ctx)
                          .getMaxComputeWorkgroupInvocations();
      if (invocations > limit) {
        kiln::onnx::emitNodeError(launch)
            << "a kernel of " << invocations
            << " threads per workgroup, more than the " << limit
            << " the Vulkan target environment allows";
        failed = true;
        return;
      }
      auto [it, inserted] = sizes.try_emplace(launch.getKernel(), size);
      if (!inserted && it->second != size) {
        kiln::onnx::emitNodeError(launch)
            << "a kernel launched with two workgroup sizes";
        failed = true;
      }
    });
    if (failed)
      return signalPassFailure();
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      gpuModule->setAttr(spirv::getTargetEnvAttrName(),
                         getVulkanTargetEnv(ctx));
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
        if (!kernel.isKernel())
          continue;
        auto symbol =
            SymbolRefAttr::get(gpuModule.getNameAttr(),
                               {FlatSymbolRefAttr::get(kernel.getNameAttr())});
        auto found = sizes.find(symbol);
        if (found == sizes.end())
          continue; // never launched: converted with no entry point
        kernel->setAttr(spirv::getEntryPointABIAttrName(),
                        spirv::getEntryPointABIAttr(ctx, found->second));
      }
    }
  }
};

} // namespace
