//===- TensorPipeline.h - the target-independent tensor passes --*- C++ -*-===//
//
// Every target starts from linalg-on-tensors (the output of
// convert-onnx-to-linalg) with the same steps: layout propagation, elementwise
// fusion, run-time checks, pad decomposition. A target inserts its own
// tensor-level steps at the hook points and appends its bufferization,
// kernels and lowering after them (codegen/Target.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_COMMON_TENSORPIPELINE_H
#define KILN_CODEGEN_COMMON_TENSORPIPELINE_H

#include "mlir/Pass/PassManager.h"

#include <functional>

namespace kiln {

/// Where a target adds passes to the shared tensor pipeline. Each hook gets
/// the module-level pass manager; an empty hook adds nothing.
struct TensorPipelineHooks {
  using Hook = std::function<void(mlir::OpPassManager &)>;
  /// After kiln-propagate-transposes, before kiln-fuse-elementwise: algorithm
  /// choices on tensors whose results fusion must see (the CPU's Winograd
  /// convolutions, whose output transform fuses with the ops after it).
  Hook afterLayoutPropagation;
  /// After fusion and its cleanup, before kiln-materialize-checks: rewrites
  /// of the fused ops (e.g. a GPU target forming its dispatch regions).
  Hook afterFusion;
};

/// Appends the tensor-level passes every target shares, with `hooks` at
/// their points. The module is on tensors before and after.
void buildTensorPipeline(mlir::OpPassManager &pm,
                         const TensorPipelineHooks &hooks = {});

} // namespace kiln

#endif // KILN_CODEGEN_COMMON_TENSORPIPELINE_H
