//===- TensorPipeline.cpp - the target-independent tensor passes ----------===//

#include "codegen/Common/TensorPipeline.h"
#include "codegen/Passes.h"

#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln {

void buildTensorPipeline(OpPassManager &pm, const TensorPipelineHooks &hooks) {
  // Keep activations channels-last between convolutions.
  pm.addNestedPass<func::FuncOp>(createKilnPropagateTransposesPass());
  if (hooks.afterLayoutPropagation)
    hooks.afterLayoutPropagation(pm);
  // Elementwise chains become one loop nest each.
  pm.addNestedPass<func::FuncOp>(createKilnFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (hooks.afterFusion)
    hooks.afterFusion(pm);
  pm.addPass(createKilnMaterializeChecksPass());
  // Pads: only the border is filled; the producer writes the interior.
  pm.addNestedPass<func::FuncOp>(createKilnDecomposePadsPass());
  // Last, after every CSE before bufferization: one tensor.empty per use,
  // or one-shot bufferization is quadratic in a chain of like kernels.
  pm.addNestedPass<func::FuncOp>(createKilnUnshareEmptyTensorsPass());
}

} // namespace kiln
