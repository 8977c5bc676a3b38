//===- FuseElementwise.cpp - elementwise fusion into parallel consumers ---===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_KILNFUSEELEMENTWISEPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {
struct FuseElementwisePass
    : kiln::impl::KilnFuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
          if (!consumer ||
              consumer.getNumLoops() != consumer.getNumParallelLoops())
            return false;
          // Duplicating a producer that has other users recomputes it.
          Operation *producer = fused->get().getDefiningOp();
          return producer && producer->hasOneUse();
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
