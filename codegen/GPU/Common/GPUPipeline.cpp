//===- GPUPipeline.cpp - linalg-on-tensors to outlined GPU kernels --------===//

#include "codegen/GPU/Common/GPUPipeline.h"
#include "codegen/Common/TensorPipeline.h"
#include "codegen/GPU/Passes.h"
#include "codegen/Passes.h"
#include "codegen/Target.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln {

void buildGPUCommonPipeline(OpPassManager &pm,
                            const GPUPipelineOptions &options) {
  TensorPipelineHooks hooks;
  if (options.precision == "fp16" || options.precision == "bf16") {
    std::string precision = options.precision;
    const TargetBackend *target = options.target;
    hooks.afterLayoutPropagation = [precision, target](OpPassManager &pm) {
      // --precision fp16: every product is an f16 x f16 contraction with
      // an f32 accumulator (weights converted at compile time, activations
      // by truncf generics that fusion merges into their producers, which
      // then store f16); before fusion, like the CPU's. bf16 is refused,
      // naming the first node (no bf16 arithmetic in these targets).
      KilnNarrowPrecisionPassOptions narrowOptions;
      narrowOptions.precision = precision;
      narrowOptions.activations = true;
      if (precision != "fp16" && target)
        narrowOptions.refuseOn = target->getDeviceName().str();
      pm.addPass(createKilnNarrowPrecisionPass(narrowOptions));
      // What narrowing made is checked as the imported ops were.
      if (target)
        pm.addPass(createKilnCheckTargetSupportPass(*target));
    };
  }
  // bf16 and the float8 types as the integers holding their bits (no GPU
  // lowering has these types), bf16 arithmetic in f32; first, so that every
  // later pass sees only types the targets lower.
  pm.addPass(createKilnGPUEmulateNarrowFloatsPass());
  buildTensorPipeline(pm, hooks);

  // Buffers: results become out-parameters, as on the CPU; the runtime binds
  // its device copies of the graph's inputs and outputs.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferizeOptions;
  bufferizeOptions.bufferizeFunctionBoundaries = true;
  bufferizeOptions.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferizeOptions));
  bufferization::BufferResultsToOutParamsPassOptions outParamOptions;
  outParamOptions.modifyPublicFunctions = true;
  outParamOptions.hoistStaticAllocs = true;
  pm.addPass(
      bufferization::createBufferResultsToOutParamsPass(outParamOptions));
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());

  // Every op that computes becomes one parallel loop nest (reductions inside
  // each thread); intermediates go into the arena planned now.
  // No canonicalization from here to the mapping: it would inline the
  // one-iteration loops that keep single-thread work off the host.
  pm.addPass(createKilnGPUPrepareLoopsPass());
  // The kernel of each op (strategy as data) and the workgroup kernels the
  // strategy asked for, before the arena is planned: a kernel that fuses
  // its epilogue keeps all its buffers live at once.
  KilnGPUSelectLoweringConfigPassOptions selectOptions;
  selectOptions.maxWorkgroupInvocations = options.maxWorkgroupInvocations;
  selectOptions.maxWorkgroupMemory = options.maxWorkgroupMemory;
  selectOptions.minWorkgroups = options.minWorkgroups;
  selectOptions.maxTileK = options.maxTileK;
  selectOptions.mmaSync = options.mmaSync;
  selectOptions.tf32 = options.tf32;
  pm.addPass(createKilnGPUSelectLoweringConfigPass(selectOptions));
  pm.addNestedPass<func::FuncOp>(createKilnGPULowerConfiguredOpsPass());
  KilnPlanMemoryPassOptions planOptions;
  planOptions.alignment = 256;
  pm.addPass(createKilnPlanMemoryPass(planOptions));
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  KilnGPUMapLoopsPassOptions mapOptions;
  mapOptions.workgroupSize = options.workgroupSize;
  pm.addNestedPass<func::FuncOp>(createKilnGPUMapLoopsPass(mapOptions));
  pm.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createKilnGPUPlanDispatchesPass());
}

} // namespace kiln
