//===- FuseElementwise.cpp - elementwise fusion into parallel consumers ---===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace kiln {
#define GEN_PASS_DEF_KILNFUSEELEMENTWISEPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Fuses single-use elementwise producers into their consumers in rounds:
/// an op made by a fusion takes part in no other fusion in the same round.
/// A chain of N ops then collapses like a balanced tree (log N rounds, each
/// cloning every body once): O(N log N), where the greedy driver's one-by-one
/// order grew the fused body by one op per fusion and cloned it every time
/// (O(N^2): 75% of the compile of a 4000-node Relu chain). The result is the
/// same fusion forest, so the greedy driver that follows only tidies up.
void fuseInRounds(Operation *root, const linalg::ControlFusionFn &control) {
  IRRewriter rewriter(root->getContext());
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<linalg::GenericOp> consumers;
    root->walk([&](linalg::GenericOp op) { consumers.push_back(op); });
    llvm::SmallPtrSet<Operation *, 16> fusedThisRound;
    for (linalg::GenericOp consumer : consumers) {
      for (OpOperand &operand : consumer->getOpOperands()) {
        Operation *producer = operand.get().getDefiningOp();
        if (!producer || fusedThisRound.contains(producer) ||
            !linalg::areElementwiseOpsFusable(&operand) || !control(&operand))
          continue;
        rewriter.setInsertionPoint(consumer);
        FailureOr<linalg::ElementwiseOpFusionResult> fused =
            linalg::fuseElementwiseOps(rewriter, &operand);
        if (failed(fused))
          continue;
        // As upstream's FuseElementwiseOps: the producer keeps its own uses.
        for (auto [original, replacement] : fused->replacements)
          rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
            return use.get().getDefiningOp() != producer;
          });
        fusedThisRound.insert(fused->fusedOp);
        fusedThisRound.insert(producer);
        rewriter.eraseOp(consumer);
        if (isOpTriviallyDead(producer))
          rewriter.eraseOp(producer);
        changed = true;
        break;
      }
    }
  }
}

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
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
      if (!consumer ||
          consumer.getNumLoops() != consumer.getNumParallelLoops())
        return false;
      // Duplicating a producer that has other users recomputes it.
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    fuseInRounds(getOperation(), control);
    // Fill / constant folding into generics, dead operands, and any fusion
    // those enable.
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
