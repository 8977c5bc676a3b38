//===- UnshareEmptyTensors.cpp - one tensor.empty per use -----------------===//
//
// One-shot bufferization decides in place or copy for every tensor operand
// by looking at all uses of the values it may alias. After CSE, one
// `tensor.empty` of a common shape is the init of every kernel of that
// shape, which makes that search quadratic in the number of kernels. A
// `tensor.empty` holds no data, so cloning it for each use changes nothing
// but the analysis' cost (and lets each use bufferize on its own).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace kiln {
#define GEN_PASS_DEF_KILNUNSHAREEMPTYTENSORSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct UnshareEmptyTensorsPass
    : kiln::impl::KilnUnshareEmptyTensorsPassBase<UnshareEmptyTensorsPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> shared;
    getOperation().walk([&](tensor::EmptyOp empty) {
      if (!empty->hasOneUse() && !empty->use_empty())
        shared.push_back(empty);
    });
    OpBuilder builder(&getContext());
    for (tensor::EmptyOp empty : shared) {
      // Every use gets a clone right before it (its dynamic sizes, if any,
      // dominate the original, so the clone too); then the original goes.
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : empty->getUses())
        uses.push_back(&use);
      for (OpOperand *use : uses) {
        // In the original's block: before the user, or before the op whose
        // region holds it.
        Operation *ancestor =
            empty->getBlock()->findAncestorOpInBlock(*use->getOwner());
        if (!ancestor)
          continue;
        builder.setInsertionPoint(ancestor);
        use->set(builder.clone(*empty)->getResult(0));
      }
      if (empty->use_empty())
        empty->erase();
    }
  }
};

} // namespace
