//===- GuardZeroTripLoops.cpp - scf.for results of loops that may not run -===//
//
// MLIR 22's SCF-to-SPIR-V lowering (ForOpConversion) carries an scf.for's
// results through a Function-storage spirv.Variable that only the loop body's
// yield stores into: a loop that runs zero times leaves the variable as it was
// (undefined the first time, the last value of an earlier run of the same
// loop after that, since the variable lives in the function's entry block),
// not the init values. Fixed upstream after 22 (llvm-project PR #206280).
//
// Each scf.for with results whose trip count is not known to be at least one
// is put under an scf.if on `lb < ub` whose else branch yields the init
// values: the scf.if's results are stored in both branches, and the loop
// under it runs at least once.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSPIRVGUARDZEROTRIPLOOPSPASS
#include "codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct GuardZeroTripLoopsPass
    : kiln::impl::KilnSPIRVGuardZeroTripLoopsPassBase<GuardZeroTripLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop.getNumResults() == 0)
        return;
      std::optional<APInt> trips = loop.getStaticTripCount();
      if (trips && !trips->isZero())
        return;
      loops.push_back(loop);
    });
    for (scf::ForOp loop : loops) {
      OpBuilder b(loop);
      Location loc = loop.getLoc();
      Value runs = arith::CmpIOp::create(
          b, loc,
          loop.getUnsignedCmp() ? arith::CmpIPredicate::ult
                                : arith::CmpIPredicate::slt,
          loop.getLowerBound(), loop.getUpperBound());
      auto guard = scf::IfOp::create(b, loc, loop.getResultTypes(), runs,
                                     /*withElseRegion=*/true);
      loop->replaceAllUsesWith(guard.getResults());
      b.setInsertionPointToEnd(guard.thenBlock());
      loop->moveBefore(guard.thenBlock(), guard.thenBlock()->end());
      scf::YieldOp::create(b, loc, loop.getResults());
      b.setInsertionPointToEnd(guard.elseBlock());
      scf::YieldOp::create(b, loc, loop.getInitArgs());
    }
  }
};

} // namespace
