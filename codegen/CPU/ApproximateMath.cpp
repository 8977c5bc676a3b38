//===- ApproximateMath.cpp - vectorizable exp / erf / tanh / log ----------===//
//
// math.exp, erf, tanh, log... would become libm calls (expf, erff), one per
// element: LLVM cannot vectorize a loop around them (no vector libm is
// linked into a model). MLIR's polynomial approximations are plain arith /
// math.fma / math.floor code that the loop vectorizer handles; f16 / bf16
// operands are computed in f32.
//
// Accuracy (bench/approx_accuracy.c against double libm over every 64th f32
// bit pattern, both signs: 67M inputs), max error in ulp of the result:
//   exp 5.3 (near overflow, x = 88.72), erf 4.6, tanh 4.8, log 0.9;
//   relative error <= 3.2e-7 everywhere (tolerances: rtol 1e-3). Without
//   FMA (--cpu x86-64, expand-fma) tanh reaches 6.4 ulp, rel. error 3.8e-7.
// Results below the smallest normal float (exp(x) for x < -87.3) flush to 0;
// NaN and +-inf propagate as in libm (exp(-inf) = 0, tanh(+-inf) = +-1,
// erf(+-inf) = +-1, log(0) = -inf, log(x < 0) = NaN).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_KILNAPPROXIMATEMATHPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

bool isApproximated(StringRef name) {
  return llvm::is_contained(
      {math::ExpOp::getOperationName(), math::ExpM1Op::getOperationName(),
       math::ErfOp::getOperationName(), math::TanhOp::getOperationName(),
       math::LogOp::getOperationName(), math::Log1pOp::getOperationName(),
       math::Log2Op::getOperationName()},
      name);
}

/// MLIR's log approximation reads the exponent field, so it is wrong for
/// subnormal inputs (log(1e-44) came out as -87.3, not -101.3). Those are
/// scaled by 2^23 first and 23 * log(2) taken off afterwards.
Value scaleSubnormalLog(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  Type type = x.getType();
  auto cst = [&](float v) -> Value {
    Attribute attr = b.getF32FloatAttr(v);
    if (auto shaped = dyn_cast<ShapedType>(type))
      attr = DenseElementsAttr::get(shaped, attr);
    return arith::ConstantOp::create(b, loc, type, cast<TypedAttr>(attr));
  };
  bool natural = isa<math::LogOp>(op);
  // NaN compares false and keeps its path; 0 and negatives are scaled
  // harmlessly (-inf and NaN stay what they are).
  Value small = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                      cst(0x1p-126f));
  Value scaled = arith::SelectOp::create(
      b, loc, small, arith::MulFOp::create(b, loc, x, cst(0x1p23f)), x);
  Value result =
      natural ? Value(math::LogOp::create(b, loc, scaled))
              : Value(math::Log2Op::create(b, loc, scaled));
  Value fixed = arith::SubFOp::create(
      b, loc, result, cst(natural ? 23.0f * 0.693147180559945f : 23.0f));
  return arith::SelectOp::create(b, loc, small, fixed, result);
}

struct ApproximateMathPass
    : kiln::impl::KilnApproximateMathPassBase<ApproximateMathPass> {
  using Base::Base;

  void runOnOperation() override {
    // Only the math ops and what their rewrites create: a greedy rewrite of
    // the whole module would also fold and simplify everything else.
    SmallVector<Operation *> logs;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::LogOp, math::Log2Op>(op) &&
          getElementTypeOrSelf(op->getResult(0).getType()).isF32())
        logs.push_back(op);
    });
    for (Operation *op : logs) {
      OpBuilder b(op);
      op->getResult(0).replaceAllUsesWith(scaleSubnormalLog(b, op));
      op->erase();
    }

    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isApproximated(op->getName().getStringRef()) ||
          (expandFma && isa<math::FmaOp>(op)))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateMathF32ExpansionPatterns(patterns, isApproximated);
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    // Without FMA hardware math.fma would be a call to fmaf.
    if (expandFma)
      math::populateExpansionPatterns(patterns, {"fma"});
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    config.enableFolding(false);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
