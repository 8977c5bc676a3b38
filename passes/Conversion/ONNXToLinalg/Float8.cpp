//===- Float8.cpp - scalar conversions between f32 and the 8-bit floats ---===//

#include "passes/Conversion/ONNXToLinalg/Float8.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_to_linalg {

namespace {

/// What tells the four formats apart. Codes are of the magnitude (the 7 bits
/// below the sign) unless said otherwise.
struct Format {
  unsigned mantissaBits;
  int bias;
  uint32_t maxCode;  ///< the largest finite value
  bool unsignedZero; ///< FNUZ: no -0; 0x80 (the whole byte) is the one NaN
  bool hasInfinity;  ///< E5M2: 0x7C is infinity
  uint32_t nanCode;  ///< the NaN written (FNUZ: the whole byte, 0x80)
};

Format formatOf(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return {3, 7, 0x7E, false, false, 0x7F};
  if (isa<Float8E4M3FNUZType>(type))
    return {3, 8, 0x7F, true, false, 0x80};
  if (isa<Float8E5M2Type>(type))
    return {2, 15, 0x7B, false, true, 0x7E};
  assert(isa<Float8E5M2FNUZType>(type) && "not an 8-bit float of ONNX's");
  return {2, 16, 0x7F, true, false, 0x80};
}

/// Scalar i32/f32 arithmetic with less noise.
struct Ops {
  OpBuilder &b;
  Location loc;

  Value i32(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(int32_t(v)));
  }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(v)));
  }
  Value shr(Value x, int64_t n) { return arith::ShRUIOp::create(b, loc, x, i32(n)); }
  Value shl(Value x, int64_t n) { return arith::ShLIOp::create(b, loc, x, i32(n)); }
  Value band(Value x, int64_t m) { return arith::AndIOp::create(b, loc, x, i32(m)); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value eq(Value x, int64_t v) { return cmp(arith::CmpIPredicate::eq, x, i32(v)); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value bitsOf(Value f) {
    return arith::BitcastOp::create(b, loc, b.getI32Type(), f);
  }
  Value floatOf(Value i) {
    return arith::BitcastOp::create(b, loc, b.getF32Type(), i);
  }
};

} // namespace

Value decodeFloat8(OpBuilder &b, Location loc, Value value) {
  Format f = formatOf(value.getType());
  Ops o{b, loc};
  Value byte = arith::BitcastOp::create(b, loc, b.getI8Type(), value);
  Value x = arith::ExtUIOp::create(b, loc, b.getI32Type(), byte);
  unsigned m = f.mantissaBits;
  Value sign = o.shl(o.shr(x, 7), 31);
  Value magnitude = o.band(x, 0x7F);
  Value exponent = o.shr(magnitude, m);
  Value mantissa = o.band(magnitude, (1 << m) - 1);
  // A normal number: rebias the exponent, widen the mantissa.
  Value normal = o.bor(o.shl(o.add(exponent, o.i32(127 - f.bias)), 23),
                       o.shl(mantissa, 23 - m));
  // A subnormal one (exponent 0): mantissa * 2^(1 - bias - m), exact in f32.
  Value scaled = arith::MulFOp::create(
      b, loc, arith::SIToFPOp::create(b, loc, b.getF32Type(), mantissa),
      o.f32(std::ldexp(1.0, 1 - f.bias - int(m))));
  Value bits = o.select(o.eq(exponent, 0), o.bitsOf(scaled), normal);
  Value nan = o.i32(0x7FC00000);
  if (f.unsignedZero) {
    bits = o.select(o.eq(x, 0x80), nan, o.bor(bits, sign));
  } else if (f.hasInfinity) { // E5M2: exponent 31 is infinity or NaN
    Value special = o.select(o.eq(mantissa, 0), o.i32(0x7F800000), nan);
    bits = o.bor(o.select(o.eq(exponent, 31), special, bits), sign);
  } else { // E4M3FN: S.1111.111 is NaN, there is no infinity
    bits = o.bor(o.select(o.eq(magnitude, 0x7F), nan, bits), sign);
  }
  return o.floatOf(bits);
}

Value encodeFloat8(OpBuilder &b, Location loc, Value value, FloatType type,
                   bool saturate) {
  Format f = formatOf(type);
  Ops o{b, loc};
  unsigned m = f.mantissaBits;
  Value bits = o.bitsOf(value);
  Value sign = o.shr(bits, 31);
  Value a = o.band(bits, 0x7FFFFFFF);
  using P = arith::CmpIPredicate;
  // Normal in the target: round f32's mantissa to m bits, to nearest even (the
  // carry may step the exponent, which is right), then rebias the exponent.
  unsigned shift = 23 - m;
  Value lsb = o.band(o.shr(a, shift), 1);
  Value rounded =
      o.shr(o.add(o.add(a, o.i32((1 << (shift - 1)) - 1)), lsb), shift);
  Value normal = o.sub(rounded, o.i32((127 - f.bias) << m));
  // Below the target's smallest normal: a multiple of its subnormal step
  // 2^(1 - bias - m), rounded to nearest even (2^m is the smallest normal).
  Value scaled = arith::MulFOp::create(b, loc, o.floatOf(a),
                                       o.f32(std::ldexp(1.0, f.bias - 1 + int(m))));
  Value subnormal = arith::FPToSIOp::create(
      b, loc, b.getI32Type(), math::RoundEvenOp::create(b, loc, scaled));
  Value isSubnormal = o.cmp(P::ult, a, o.i32(uint32_t(128 - f.bias) << 23));
  Value code = o.select(isSubnormal, subnormal, normal);
  // Infinities round past the largest code too; NaN is told apart first.
  Value isNan = o.cmp(P::ugt, a, o.i32(0x7F800000));
  Value overflow = o.cmp(P::sgt, code, o.i32(f.maxCode));
  Value result;
  if (f.unsignedZero) {
    Value nan = isNan;
    if (!saturate)
      nan = arith::OrIOp::create(b, loc, isNan, overflow);
    code = o.select(overflow, o.i32(f.maxCode), code);
    Value signedCode = o.select(o.eq(code, 0), code, o.bor(code, o.shl(sign, 7)));
    result = o.select(nan, o.i32(f.nanCode), signedCode);
  } else {
    uint32_t beyond = saturate ? f.maxCode : f.hasInfinity ? 0x7C : f.nanCode;
    code = o.select(overflow, o.i32(beyond), code);
    code = o.select(isNan, o.i32(f.nanCode), code);
    result = o.bor(code, o.shl(sign, 7));
  }
  Value byte = arith::TruncIOp::create(b, loc, b.getI8Type(), result);
  return arith::BitcastOp::create(b, loc, type, byte);
}

} // namespace kiln::onnx_to_linalg
