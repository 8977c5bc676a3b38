//===- ApproximateMath.cpp - vectorizable exp / erf / tanh / log ----------===//
//
// math.exp, erf, tanh, log... would become libm calls (expf, erff), one per
// element: LLVM cannot vectorize a loop around them (no vector libm is
// linked into a model). MLIR's polynomial approximations are plain arith /
// math.fma / math.floor code that the loop vectorizer handles; f16 / bf16
// operands are computed in f32.
//
// erf is kiln's own (`FastErf` below): two polynomials evaluated by Estrin's
// scheme, no division and no exp.
//
// Accuracy (bench/approx_accuracy.c against double libm over every 64th f32
// bit pattern, both signs: 67M inputs), max error in ulp of the result:
//   exp 5.3 (near overflow, x = 88.72), erf 3.5, tanh 4.8, log 0.9;
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

/// A constant of `type` (f32 or a vector of f32) splatted with `v`.
Value f32Constant(OpBuilder &b, Location loc, Type type, float v) {
  Attribute attr = b.getF32FloatAttr(v);
  if (auto shaped = dyn_cast<ShapedType>(type))
    attr = DenseElementsAttr::get(shaped, attr);
  return arith::ConstantOp::create(b, loc, type, cast<TypedAttr>(attr));
}

/// MLIR's log approximation reads the exponent field, so it is wrong for
/// subnormal inputs (log(1e-44) came out as -87.3, not -101.3). Those are
/// scaled by 2^23 first and 23 * log(2) taken off afterwards.
Value scaleSubnormalLog(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  Type type = x.getType();
  auto cst = [&](float v) { return f32Constant(b, loc, type, v); };
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

/// Evaluates the polynomial sum(c[i] * t^i) by Estrin's scheme: pairs
/// c[i] + c[i+1] * t, then pairs of those with t^2, t^4, ...: log2(n) dependent
/// FMAs instead of n. The dependency chain, not the FMA count, bounds erf in a
/// kernel epilogue, where the accumulators leave no registers to overlap
/// several evaluations.
Value estrin(OpBuilder &b, Location loc, Value t, ArrayRef<float> lowFirst) {
  Type type = t.getType();
  SmallVector<Value> terms;
  for (float c : lowFirst)
    terms.push_back(f32Constant(b, loc, type, c));
  Value power = t;
  while (terms.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i < terms.size(); i += 2)
      next.push_back(i + 1 < terms.size()
                         ? math::FmaOp::create(b, loc, terms[i + 1], power,
                                               terms[i])
                               .getResult()
                         : terms[i]);
    terms = std::move(next);
    if (terms.size() > 1)
      power = arith::MulFOp::create(b, loc, power, power);
  }
  return terms.front();
}

/// f32 erf in two pieces, both evaluated and one selected (vector lanes):
///   |x| < 1:        erf(x) = x + x * P(x^2)      (P of degree 6)
///   1 <= |x| < 3.9: erf(x) = Q(u), u = (|x| - 2.45) / 1.45 in [-1, 1]
///                                                 (Q of degree 12)
///   3.9 <= |x|:     1 (erf(3.9) is within 0.6 ulp of 1)
/// then the sign of x. No exp and no division: MLIR's approximation selects a
/// rational function's coefficients per interval and divides, ~80 cycles of
/// dependent operations per 8 lanes on Zen 1, which made BERT's fused GELU
/// cost more than the last 10% of its matmul. The coefficients are
/// least-squares fits (Chebyshev for Q) to double-precision erf, refined on
/// the error; evaluated in f32 they are within 1.2 ulp below 1 and 3.5 ulp
/// above (bench/approx_accuracy.py). NaN propagates (abs, minimumf and the
/// polynomials; the compares are false).
struct FastErf : OpRewritePattern<math::ErfOp> {
  // Ahead of MLIR's erf approximation.
  FastErf(MLIRContext *context) : OpRewritePattern(context, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(math::ErfOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    Location loc = op.getLoc();
    auto cst = [&](float v) { return f32Constant(rewriter, loc, type, v); };
    static const float kSmall[] = {
        0x1.06eba8p-3f,  -0x1.81273ep-2f, 0x1.ce2d2p-4f,  -0x1.b7fbb4p-6f,
        0x1.5419f2p-8f,  -0x1.a485d6p-11f, 0x1.4ae494p-14f};
    static const float kLarge[] = {
        0x1.ffba76p-1f,  0x1.091dc2p-8f,  -0x1.d70458p-7f, 0x1.ff46ep-6f,
        -0x1.7326aep-5f, 0x1.6e5248p-5f,  -0x1.c805ep-6f,  0x1.7b9494p-8f,
        0x1.0bfa14p-7f,  -0x1.1cc1cep-7f, 0x1.06da2ap-9f,  0x1.9e146ap-10f,
        -0x1.9d40a2p-11f};
    const float kSaturated = 3.9f;
    Value x = op.getOperand();
    Value ax = math::AbsFOp::create(rewriter, loc, x);
    Value t = arith::MulFOp::create(rewriter, loc, ax, ax);
    Value small = math::FmaOp::create(
        rewriter, loc, ax, estrin(rewriter, loc, t, kSmall), ax);
    Value clamped = arith::MinimumFOp::create(rewriter, loc, ax, cst(kSaturated));
    Value u = math::FmaOp::create(rewriter, loc, clamped, cst(0x1.611a7cp-1f),
                                  cst(-0x1.b08d3ep+0f));
    Value large = arith::SelectOp::create(
        rewriter, loc,
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGE, ax,
                              cst(kSaturated)),
        cst(1.0f), estrin(rewriter, loc, u, kLarge));
    Value isSmall = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OLT, ax, cst(1.0f));
    Value magnitude =
        arith::SelectOp::create(rewriter, loc, isSmall, small, large);
    rewriter.replaceOpWithNewOp<math::CopySignOp>(op, magnitude, x);
    return success();
  }
};

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
    patterns.add<FastErf>(&getContext());
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
