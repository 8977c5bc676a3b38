//===- UnsignedIndexCasts.cpp - zero-extend index values known >= 0 -------===//
//
// Mesa 22.3's lavapipe (Debian 12's Vulkan-on-CPU driver, the one CI runs)
// miscompiles an OpSConvert to 64 bits of a value computed by OpUMod when the
// result is then compared: Trilu's `column <= row + k` on i64 indices gave
// wrong elements although the module passes spirv-val, and the same kernel
// with OpUConvert is right. Index arithmetic in kiln's kernels (thread ids
// delinearized with divui/remui, loop induction variables from zero) is
// non-negative, where the sign- and zero-extension agree: this pass proves
// it with MLIR's integer range analysis and writes the unsigned form, so
// convert-gpu-to-spirv emits OpUConvert. Casts it cannot prove stay signed.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/Passes.h"

#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlow/Utils.h"
#include "mlir/Analysis/DataFlowFramework.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSPIRVUNSIGNEDINDEXCASTSPASS
#include "codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct UnsignedIndexCastsPass
    : kiln::impl::KilnSPIRVUnsignedIndexCastsPassBase<UnsignedIndexCastsPass> {
  void runOnOperation() override {
    DataFlowSolver solver;
    dataflow::loadBaselineAnalyses(solver);
    solver.load<dataflow::IntegerRangeAnalysis>();
    if (failed(solver.initializeAndRun(getOperation())))
      return signalPassFailure();

    auto nonNegative = [&](Value v) {
      return succeeded(dataflow::staticallyNonNegative(solver, v));
    };
    SmallVector<Operation *> signedCasts;
    getOperation().walk([&](Operation *op) {
      if (isa<arith::IndexCastOp, arith::ExtSIOp>(op) &&
          nonNegative(op->getOperand(0)))
        signedCasts.push_back(op);
    });
    for (Operation *op : signedCasts) {
      OpBuilder b(op);
      Value in = op->getOperand(0);
      Type type = op->getResult(0).getType();
      Value unsignedCast =
          isa<arith::IndexCastOp>(op)
              ? arith::IndexCastUIOp::create(b, op->getLoc(), type, in)
                    .getResult()
              : arith::ExtUIOp::create(b, op->getLoc(), type, in).getResult();
      op->getResult(0).replaceAllUsesWith(unsignedCast);
      op->erase();
    }
  }
};

} // namespace
