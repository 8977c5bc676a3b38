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
// Exact f64 multiply-adds as f32 fma (targets with FMA): kiln-fold-qdq writes
// onnxruntime's QLinearAdd, fma(a, rA, fma(b, rB, F)) in f32, as f64 products
// and sums rounded to f32 once, exact in f64 for its constants. Here
// truncf(x * c + y) in f64, with x an integer of at most 24 bits converted,
// c an f32-exact constant and y an f32-exact constant or an extf'ed f32, is
// `math.fma` in f32 where the f64 sum is provably exact (every term a
// multiple of 2^low, the sum's bound below 2^(low + 53), from the constants
// and what y is computed from): then both are the one rounding of the exact
// value, and the f32 form takes half the vector registers and no
// conversions. Anything else stays as it is.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <climits>
#include <cmath>
#include <optional>

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

/// Whether `v` is the f32 constant 1 (a scalar or a splat).
bool isOneF32(Value v) {
  FloatAttr scalar;
  if (matchPattern(v, m_Constant(&scalar)))
    return scalar.getType().isF32() && scalar.getValueAsDouble() == 1.0;
  DenseElementsAttr dense;
  return matchPattern(v, m_Constant(&dense)) && dense.isSplat() &&
         dense.getElementType().isF32() &&
         dense.getSplatValue<APFloat>().isExactlyValue(1.0);
}

/// An i32 constant of the shape of `type` (i32, or a vector of i32).
Value i32Constant(OpBuilder &b, Location loc, Type type, int32_t v) {
  Attribute attr = b.getI32IntegerAttr(v);
  if (auto shaped = dyn_cast<ShapedType>(type))
    attr = DenseElementsAttr::get(shaped, attr);
  return arith::ConstantOp::create(b, loc, type, cast<TypedAttr>(attr));
}

/// f32 sigmoid, 1 / (1 + exp(y)) with y = -x (ONNX Sigmoid, SiLU's half),
/// in kernel epilogues and loops alike: 15 vector operations and the
/// division where MLIR's exp alone took 21 (a SiLU fused into EfficientNet's
/// convolutions cost ~20 cycles per 16-lane vector, more than the depthwise
/// convolution it followed). Only what the sigmoid needs of exp:
///   y clamped to [-88, 88] (NaN stays: the selects' compares are false),
///   k = round(y / ln 2) by the 1.5 * 2^23 shifter (t = y * log2(e) + 2^23 *
///   1.5, k = t - that; t's low bits hold k), r = y - k ln 2 in two parts,
///   e^r by a degree-5 polynomial (relative error 7.5e-8 on |r| <= ln(2)/2),
///   2^k = bits (t + 127) << 23 (|k| <= 127; 2^-127 comes out as 0, where
///   1 + e^y is 1 anyway), 1 + e^y = fma(e^r, 2^k, 1) (at most 2.4e38), and
///   the division.
/// No overflow or infinity on the way: max error 4.4 ulp (relative 2.7e-7)
/// down to the smallest normal result (bench/approx_accuracy.py); below it
/// (x < -87.3) at most 6.1e-39 (x <= -88, where the exact value is smaller);
/// NaN propagates (through the selects, the polynomial and the fma).
bool rewriteSigmoid(arith::DivFOp div) {
  if (!getElementTypeOrSelf(div.getType()).isF32() || !isOneF32(div.getLhs()))
    return false;
  auto add = div.getRhs().getDefiningOp<arith::AddFOp>();
  if (!add || !add->hasOneUse())
    return false;
  math::ExpOp exp;
  for (int i = 0; i < 2 && !exp; ++i)
    if (isOneF32(add->getOperand(1 - i)))
      exp = add->getOperand(i).getDefiningOp<math::ExpOp>();
  if (!exp || !exp->hasOneUse())
    return false;
  OpBuilder b(div);
  Location loc = div.getLoc();
  Type type = div.getType();
  Type intType = type;
  if (auto vector = dyn_cast<VectorType>(type))
    intType = vector.clone(b.getI32Type());
  else
    intType = b.getI32Type();
  auto cst = [&](float v) { return f32Constant(b, loc, type, v); };
  auto fma = [&](Value x, Value y, Value z) -> Value {
    return math::FmaOp::create(b, loc, x, y, z);
  };
  // exp(s * z), s = -1 for exp(-x) (Sigmoid's form: the negation folds into
  // the constants below), else 1.
  Value y = exp.getOperand();
  float sign = 1.0f;
  if (auto neg = y.getDefiningOp<arith::NegFOp>()) {
    y = neg.getOperand();
    sign = -1.0f;
  }
  Value hi = cst(88.0f), lo = cst(-88.0f);
  y = arith::SelectOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, y, hi), hi, y);
  y = arith::SelectOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, y, lo), lo, y);
  Value shifter = cst(0x1.8p23f);
  Value t = fma(y, cst(sign * 0x1.715476p+0f), shifter);
  Value k = arith::SubFOp::create(b, loc, t, shifter);
  // ln 2 = 0.693359375 - 2.12194440e-4 (Cody and Waite's split); q = s * r
  // for r = s * z - k ln 2, and e^r = sum(c[i] * s^i * q^i).
  Value q = fma(k, cst(-sign * 0.693359375f), y);
  q = fma(k, cst(sign * 2.12194440e-4f), q);
  static const float kExp[] = {0x1.000002p+0f, 0x1.fffff6p-1f,
                               0x1.fffd18p-2f, 0x1.555a0ep-3f,
                               0x1.575f88p-5f, 0x1.0feabap-7f};
  auto coefficient = [&](int i) { return cst(i % 2 ? sign * kExp[i] : kExp[i]); };
  Value p = coefficient(5);
  for (int i = 4; i >= 0; --i)
    p = fma(p, q, coefficient(i));
  Value bits = arith::BitcastOp::create(b, loc, intType, t);
  bits = arith::AddIOp::create(b, loc, bits, i32Constant(b, loc, intType, 127));
  bits = arith::ShLIOp::create(b, loc, bits, i32Constant(b, loc, intType, 23));
  Value scale = arith::BitcastOp::create(b, loc, type, bits);
  Value den = fma(p, scale, cst(1.0f));
  Value result = arith::DivFOp::create(b, loc, div.getLhs(), den);
  div.getResult().replaceAllUsesWith(result);
  Operation *negation = exp.getOperand().getDefiningOp<arith::NegFOp>();
  div.erase();
  add.erase();
  exp.erase();
  if (negation && negation->use_empty())
    negation->erase();
  return true;
}

/// What is known of an f64 (or f32) value for the exactness of a sum: every
/// value it takes is a multiple of 2^low with magnitude at most `bound`.
struct Magnitude {
  double bound;
  int low;
};

/// The lowest bit of a nonzero f32-exact `x` (or of an integer multiple of it).
int lowestBit(double x) { return std::ilogb(x) - 23; }

/// A constant that is exactly an f32 (normal, or 0), or null.
std::optional<double> f32ExactConstant(Value v) {
  FloatAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  double x = attr.getValueAsDouble();
  if (double(float(x)) != x || (x != 0 && !std::isnormal(float(x))))
    return std::nullopt;
  return x;
}

/// The magnitude of a converted integer of at most 24 bits (exact in f32).
std::optional<double> integerMagnitude(Value v) {
  Operation *def = v.getDefiningOp();
  if (!isa_and_nonnull<arith::UIToFPOp, arith::SIToFPOp>(def))
    return std::nullopt;
  auto it = dyn_cast<IntegerType>(def->getOperand(0).getType());
  if (!it || it.getWidth() > 24)
    return std::nullopt;
  return std::ldexp(1.0, int(it.getWidth()) - isa<arith::SIToFPOp>(def));
}

std::optional<Magnitude> magnitudeOf(Value v, int depth);

/// x * c with x a converted integer and c an f32-exact constant.
std::optional<Magnitude> productMagnitude(arith::MulFOp mul) {
  for (int i = 0; i < 2; ++i) {
    std::optional<double> x = integerMagnitude(mul->getOperand(i));
    std::optional<double> c = f32ExactConstant(mul->getOperand(1 - i));
    if (x && c)
      return *c == 0 ? Magnitude{0, INT_MAX}
                     : Magnitude{*x * std::fabs(*c), lowestBit(*c)};
  }
  return std::nullopt;
}

std::optional<Magnitude> magnitudeOf(Value v, int depth) {
  if (depth > 8)
    return std::nullopt;
  if (std::optional<double> c = f32ExactConstant(v))
    return *c == 0 ? Magnitude{0, INT_MAX} : Magnitude{std::fabs(*c), lowestBit(*c)};
  Operation *def = v.getDefiningOp();
  if (auto ext = dyn_cast_or_null<arith::ExtFOp>(def))
    return magnitudeOf(ext.getIn(), depth + 1);
  // Rounding to f32 keeps a multiple of 2^low one (no subnormals: low is at
  // least that of a normal f32) and grows the bound by at most an ulp.
  if (auto trunc = dyn_cast_or_null<arith::TruncFOp>(def)) {
    std::optional<Magnitude> m = magnitudeOf(trunc.getIn(), depth + 1);
    if (!m || m->low < -126 - 23)
      return std::nullopt;
    return Magnitude{m->bound * (1 + 0x1p-22), m->low};
  }
  // An f32 fma this rewrite made: one rounding of x * c + y, as truncf.
  if (auto fma = dyn_cast_or_null<math::FmaOp>(def)) {
    std::optional<double> x = integerMagnitude(fma.getA());
    std::optional<double> c = f32ExactConstant(fma.getB());
    std::optional<Magnitude> y = magnitudeOf(fma.getC(), depth + 1);
    if (!x || !c || !y || *c == 0)
      return std::nullopt;
    return Magnitude{(*x * std::fabs(*c) + y->bound) * (1 + 0x1p-22),
                     std::min(lowestBit(*c), y->low)};
  }
  if (auto mul = dyn_cast_or_null<arith::MulFOp>(def))
    return productMagnitude(mul);
  if (auto add = dyn_cast_or_null<arith::AddFOp>(def)) {
    std::optional<Magnitude> a = magnitudeOf(add.getLhs(), depth + 1);
    std::optional<Magnitude> b = magnitudeOf(add.getRhs(), depth + 1);
    if (!a || !b)
      return std::nullopt;
    Magnitude m{a->bound + b->bound, std::min(a->low, b->low)};
    // The sum itself must be exact (in its own type: f64 here).
    if (m.bound != 0 && std::ilogb(m.bound) + 1 - m.low > 53)
      return std::nullopt;
    return m;
  }
  return std::nullopt;
}

/// truncf(addf(mulf(int_to_fp(i), c), y)) : f64 -> f32, exact in f64, as
/// math.fma(int_to_fp(i) : f32, c : f32, y : f32).
struct ExactMultiplyAddToFma : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp trunc,
                                PatternRewriter &rewriter) const override {
    if (!trunc.getType().isF32() || !trunc.getIn().getType().isF64())
      return failure();
    auto add = trunc.getIn().getDefiningOp<arith::AddFOp>();
    if (!add || !add->hasOneUse())
      return failure();
    for (int i = 0; i < 2; ++i) {
      auto mul = add->getOperand(i).getDefiningOp<arith::MulFOp>();
      Value y = add->getOperand(1 - i);
      if (!mul || !mul->hasOneUse() || !productMagnitude(mul))
        continue;
      // y as an f32: an f32-exact constant or an extf'ed f32.
      std::optional<double> yc = f32ExactConstant(y);
      auto ext = y.getDefiningOp<arith::ExtFOp>();
      if (!yc && !(ext && ext.getIn().getType().isF32()))
        continue;
      if (!magnitudeOf(add.getResult(), 0))
        continue; // the f64 sum may round: keep it
      Location loc = trunc.getLoc();
      Type f32 = rewriter.getF32Type();
      Value x, c;
      for (int j = 0; j < 2; ++j)
        if (integerMagnitude(mul->getOperand(j)) &&
            f32ExactConstant(mul->getOperand(1 - j))) {
          Operation *conv = mul->getOperand(j).getDefiningOp();
          Value in = conv->getOperand(0);
          x = isa<arith::UIToFPOp>(conv)
                  ? Value(arith::UIToFPOp::create(rewriter, loc, f32, in))
                  : Value(arith::SIToFPOp::create(rewriter, loc, f32, in));
          c = arith::ConstantOp::create(
              rewriter, loc,
              rewriter.getF32FloatAttr(
                  float(*f32ExactConstant(mul->getOperand(1 - j)))));
          break;
        }
      Value y32 = yc ? Value(arith::ConstantOp::create(
                           rewriter, loc, rewriter.getF32FloatAttr(float(*yc))))
                     : ext.getIn();
      rewriter.replaceOpWithNewOp<math::FmaOp>(trunc, x, c, y32);
      return success();
    }
    return failure();
  }
};

struct ApproximateMathPass
    : kiln::impl::KilnApproximateMathPassBase<ApproximateMathPass> {
  using Base::Base;

  void runOnOperation() override {
    // Exact f64 multiply-adds as f32 fma where the target has FMA.
    if (!expandFma) {
      SmallVector<Operation *> truncs;
      getOperation()->walk([&](arith::TruncFOp op) {
        if (op.getType().isF32() && op.getIn().getType().isF64())
          truncs.push_back(op);
      });
      if (!truncs.empty()) {
        RewritePatternSet patterns(&getContext());
        patterns.add<ExactMultiplyAddToFma>(&getContext());
        GreedyRewriteConfig config;
        config.setStrictness(GreedyRewriteStrictness::ExistingOps);
        config.enableFolding(false);
        if (failed(applyOpPatternsGreedily(truncs, std::move(patterns), config)))
          return signalPassFailure();
      }
    }
    if (exactFmaOnly)
      return;
    if (fastSigmoid) {
      SmallVector<arith::DivFOp> divs;
      getOperation()->walk([&](arith::DivFOp div) { divs.push_back(div); });
      for (arith::DivFOp div : divs)
        rewriteSigmoid(div);
    }
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
