//===- LegalizeRemF.cpp - arith.remf with fmod's infinite-divisor case ----===//
//
// convert-arith-to-spirv turns arith.remf into OpFRem, which Vulkan computes
// as x - y * trunc(x / y): for a finite x and y = +-inf that is NaN, where C
// fmod (what the CPU computes and ONNX Mod's lowering assumes) returns x.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSPIRVLEGALIZEREMFPASS
#include "codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct LegalizeRemFPass
    : kiln::impl::KilnSPIRVLegalizeRemFPassBase<LegalizeRemFPass> {
  void runOnOperation() override {
    SmallVector<arith::RemFOp> rems;
    getOperation().walk([&](arith::RemFOp rem) { rems.push_back(rem); });
    for (arith::RemFOp rem : rems) {
      OpBuilder b(rem->getContext());
      b.setInsertionPointAfter(rem);
      Location loc = rem.getLoc();
      Value x = rem.getLhs(), y = rem.getRhs();
      Value yInf = math::IsInfOp::create(b, loc, y);
      Value xFinite = math::IsFiniteOp::create(b, loc, x);
      Value keepX = arith::AndIOp::create(b, loc, yInf, xFinite);
      Value result = arith::SelectOp::create(b, loc, keepX, x, rem.getResult());
      rem.getResult().replaceAllUsesExcept(result, result.getDefiningOp());
    }
  }
};

} // namespace
