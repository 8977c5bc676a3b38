//===- ExpandF64Math.cpp - f64 exp, log and pow as f64 arithmetic ---------===//
//
// GLSL.std.450's Exp, Log and Pow (what convert-math-to-spirv emits) take
// 16/32-bit floats only, and an f32 round trip would lose 29 bits. Each
// scalar f64 math.exp / math.log / math.powf in a kernel module becomes f64
// arithmetic here (add, mul, fma, floor: GLSL and SPIR-V have them on f64),
// the exponent handled with i64 bit operations. The module then declares
// Float64 and Int64, which the runtime checks against the device's
// shaderFloat64 / shaderInt64 like every other capability.
//
// The range reductions need their arithmetic computed as written:
// kiln-spirv-exact-f64 (below) decorates every f64 operation of the SPIR-V
// modules NoContraction, which keeps drivers from reassociating it.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/Passes.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/IR/TypeUtilities.h"

#include <limits>

namespace kiln {
#define GEN_PASS_DEF_KILNSPIRVEXPANDF64MATHPASS
#define GEN_PASS_DEF_KILNSPIRVEXACTF64PASS
#include "codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Scalar f64 / i64 arithmetic with less noise.
struct D {
  OpBuilder &b;
  Location loc;

  Type f64() { return b.getF64Type(); }
  Type i64() { return b.getI64Type(); }
  Value c(double v) {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  }
  Value ci(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value fma(Value x, Value y, Value z) {
    return math::FmaOp::create(b, loc, x, y, z);
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value bitsOf(Value x) { return arith::BitcastOp::create(b, loc, i64(), x); }
  Value fromBits(Value x) { return arith::BitcastOp::create(b, loc, f64(), x); }
  /// 2^k for an i64 k with -1022 <= k <= 1023.
  Value pow2(Value k) {
    Value biased = arith::AddIOp::create(b, loc, k, ci(1023));
    return fromBits(arith::ShLIOp::create(b, loc, biased, ci(52)));
  }
};

constexpr double kLn2Hi = 6.93147180369123816490e-01; // 0x3fe62e42fee00000
constexpr double kLn2Lo = 1.90821492927058770002e-10; // 0x3dea39ef35793c76

/// e^x: x = k ln2 + r with |r| <= ln2/2 (Cody-Waite with fma: k ln2hi is
/// exact), e^r by its Taylor polynomial of degree 13 (the remainder is below
/// 2^-60 of the result), Horner in fma, times 2^k as 2^(k/2) 2^(k - k/2)
/// (both normal for every k the clamped x gives, so a subnormal result is
/// rounded once). x is clamped to [-746, 710] first: beyond it e^x is 0 or
/// +inf either way, which the scaling then produces; NaN is passed through.
Value expandExp(OpBuilder &b, Location loc, Value x) {
  D d{b, loc};
  Value xc = arith::MinimumFOp::create(
      b, loc, arith::MaximumFOp::create(b, loc, x, d.c(-746.0)), d.c(710.0));
  Value kf = math::FloorOp::create(
      b, loc, d.fma(xc, d.c(1.4426950408889634), d.c(0.5)));
  Value negK = arith::NegFOp::create(b, loc, kf);
  Value r = d.fma(negK, d.c(kLn2Hi), xc);
  r = d.fma(negK, d.c(kLn2Lo), r);
  // 1/n! for n = 13 down to 0.
  double coefficient = 1.0;
  SmallVector<double, 14> inverseFactorials;
  for (int n = 0; n <= 13; ++n) {
    if (n > 0)
      coefficient /= n;
    inverseFactorials.push_back(coefficient);
  }
  Value p = d.c(inverseFactorials.back());
  for (int n = 12; n >= 0; --n)
    p = d.fma(p, r, d.c(inverseFactorials[n]));
  // NaN: kf is NaN too, and its conversion undefined; the select below
  // returns x whatever it gave.
  Value k = arith::FPToSIOp::create(b, loc, d.i64(), kf);
  Value k1 = arith::ShRSIOp::create(b, loc, k, d.ci(1));
  Value k2 = arith::SubIOp::create(b, loc, k, k1);
  Value result = d.mul(d.mul(p, d.pow2(k1)), d.pow2(k2));
  Value isNan = d.cmp(arith::CmpFPredicate::UNO, x, x);
  return d.select(isNan, x, result);
}

/// log(x), fdlibm's e_log.c: x = 2^k m with m in [sqrt(2)/2, sqrt(2)),
/// f = m - 1 (exact), s = f / (2 + f), log(1 + f) = f - f^2/2 + s (f^2/2 + R)
/// with R(s^2) its minimax polynomial (error below 2^-58.45), k ln2 added in
/// two parts. Subnormal x is scaled by 2^54 first. log(+-0) = -inf,
/// log(x < 0) = NaN, log(+inf) = +inf, NaN stays NaN.
Value expandLog(OpBuilder &b, Location loc, Value x) {
  D d{b, loc};
  using P = arith::CmpFPredicate;
  Value tiny = d.cmp(P::OLT, x, d.c(0x1p-1022));
  Value xs = d.select(tiny, d.mul(x, d.c(0x1p54)), x);
  Value bits = d.bitsOf(xs);
  Value field = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, d.ci(52)), d.ci(0x7ff));
  Value k = arith::SubIOp::create(b, loc, field, d.ci(1023));
  k = arith::SubIOp::create(b, loc, k,
                            d.select(tiny, d.ci(54), d.ci(0)));
  Value mantissa = arith::AndIOp::create(b, loc, bits, d.ci(0x000fffffffffffffLL));
  Value m = d.fromBits(
      arith::OrIOp::create(b, loc, mantissa, d.ci(0x3ff0000000000000LL)));
  Value big = d.cmp(P::OGT, m, d.c(1.4142135623730951));
  m = d.select(big, d.mul(m, d.c(0.5)), m);
  k = arith::AddIOp::create(b, loc, k,
                            arith::ExtUIOp::create(b, loc, d.i64(), big));
  Value f = d.sub(m, d.c(1.0));
  Value s = d.div(f, d.add(d.c(2.0), f));
  Value dk = arith::SIToFPOp::create(b, loc, d.f64(), k);
  Value z = d.mul(s, s);
  Value w = d.mul(z, z);
  const double lg1 = 6.666666666666735130e-01, lg2 = 3.999999999940941908e-01,
               lg3 = 2.857142874366239149e-01, lg4 = 2.222219843214978396e-01,
               lg5 = 1.818357216161805012e-01, lg6 = 1.531383769920937332e-01,
               lg7 = 1.479819860511658591e-01;
  Value t1 = d.mul(w, d.fma(w, d.fma(w, d.c(lg6), d.c(lg4)), d.c(lg2)));
  Value t2 = d.mul(
      z, d.fma(w, d.fma(w, d.fma(w, d.c(lg7), d.c(lg5)), d.c(lg3)), d.c(lg1)));
  Value rr = d.add(t2, t1);
  Value hfsq = d.mul(d.mul(d.c(0.5), f), f);
  // dk*ln2_hi - ((hfsq - (s*(hfsq+R) + dk*ln2_lo)) - f)
  Value inner = d.add(d.mul(s, d.add(hfsq, rr)), d.mul(dk, d.c(kLn2Lo)));
  Value result =
      d.sub(d.mul(dk, d.c(kLn2Hi)), d.sub(d.sub(hfsq, inner), f));
  double inf = std::numeric_limits<double>::infinity();
  result = d.select(d.cmp(P::OEQ, x, d.c(inf)), x, result);
  result = d.select(d.cmp(P::OEQ, x, d.c(0.0)), d.c(-inf), result);
  // Negative or NaN (unordered).
  return d.select(d.cmp(P::ULT, x, d.c(0.0)),
                  d.c(std::numeric_limits<double>::quiet_NaN()), result);
}

/// x^y. An integer y with |y| < 2^53: binary powering (x^|y|, then 1 / it
/// for y < 0), exact where the result is representable, as integer Pow
/// needs (3^19 must come out as 1162261467, not one below, before its
/// conversion truncates); the loop runs log2|y| times. Any other y:
/// exp(y log x), NaN for x < 0 (|x| for |y| >= 2^53, which is even).
/// x = 1 or y = 0 give 1, NaN otherwise propagates.
Value expandPow(OpBuilder &b, Location loc, Value x, Value y) {
  D d{b, loc};
  using P = arith::CmpFPredicate;
  Value ay = math::AbsFOp::create(b, loc, y);
  Value isInteger = d.cmp(P::OEQ, math::FloorOp::create(b, loc, y), y);
  Value small = d.cmp(P::OLT, ay, d.c(0x1p53));
  Value powering = arith::AndIOp::create(b, loc, isInteger, small);
  Value n = arith::FPToSIOp::create(b, loc, d.i64(),
                                    d.select(powering, ay, d.c(0.0)));
  // while (n != 0) { if (n & 1) acc *= base; base *= base; n >>= 1; }
  Type f64 = d.f64(), i64 = d.i64();
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{f64, f64, i64}, ValueRange{d.c(1.0), x, n},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value more = arith::CmpIOp::create(
            nb, nl, arith::CmpIPredicate::ne, args[2],
            arith::ConstantOp::create(nb, nl, nb.getI64IntegerAttr(0)));
        scf::ConditionOp::create(nb, nl, more, args);
      },
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        D e{nb, nl};
        Value odd = arith::TruncIOp::create(nb, nl, nb.getI1Type(), args[2]);
        Value acc = e.select(odd, e.mul(args[0], args[1]), args[0]);
        Value base = e.mul(args[1], args[1]);
        Value rest = arith::ShRUIOp::create(nb, nl, args[2], e.ci(1));
        scf::YieldOp::create(nb, nl, ValueRange{acc, base, rest});
      });
  Value acc = loop.getResult(0);
  Value integral =
      d.select(d.cmp(P::OLT, y, d.c(0.0)), d.div(d.c(1.0), acc), acc);
  Value base = d.select(small, x, math::AbsFOp::create(b, loc, x));
  Value general = expandExp(b, loc, d.mul(y, expandLog(b, loc, base)));
  Value result = d.select(powering, integral, general);
  // (-1)^+-inf is 1 too, as C's pow says.
  Value unit = arith::AndIOp::create(
      b, loc, d.cmp(P::OEQ, math::AbsFOp::create(b, loc, x), d.c(1.0)),
      d.cmp(P::OEQ, ay, d.c(std::numeric_limits<double>::infinity())));
  Value one = arith::OrIOp::create(
      b, loc,
      arith::OrIOp::create(b, loc, d.cmp(P::OEQ, x, d.c(1.0)),
                           d.cmp(P::OEQ, y, d.c(0.0))),
      unit);
  return d.select(one, d.c(1.0), result);
}

struct ExpandF64MathPass
    : kiln::impl::KilnSPIRVExpandF64MathPassBase<ExpandF64MathPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<math::ExpOp, math::LogOp, math::PowFOp>(op) &&
          op->getResult(0).getType().isF64())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value result;
      if (isa<math::ExpOp>(op))
        result = expandExp(b, loc, op->getOperand(0));
      else if (isa<math::LogOp>(op))
        result = expandLog(b, loc, op->getOperand(0));
      else
        result = expandPow(b, loc, op->getOperand(0), op->getOperand(1));
      op->getResult(0).replaceAllUsesWith(result);
      op->erase();
    }
  }
};

struct ExactF64Pass : kiln::impl::KilnSPIRVExactF64PassBase<ExactF64Pass> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      if (isa<spirv::FAddOp, spirv::FSubOp, spirv::FMulOp, spirv::FDivOp,
              spirv::FNegateOp, spirv::GLFmaOp>(op) &&
          getElementTypeOrSelf(op->getResult(0).getType()).isF64())
        // The serializer writes a unit attribute named after a decoration
        // as that OpDecorate.
        op->setAttr("no_contraction", UnitAttr::get(op->getContext()));
    });
  }
};

} // namespace
