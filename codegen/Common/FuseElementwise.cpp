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
    // Transposes as generics fuse like any elementwise op: the NCHW<->NHWC
    // pairs around each convolution then fold into the bias / activation
    // loop between them (one pass over the tensor instead of three).
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk(
        [&](linalg::TransposeOp op) { transposes.push_back(op); });
    for (linalg::TransposeOp op : transposes) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
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
