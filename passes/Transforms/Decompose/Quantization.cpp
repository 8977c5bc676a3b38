//===- Quantization.cpp - kiln-decompose: quantized ops -------------------===//
//
// Follows the function body the ONNX spec gives for each op (onnx/defs/*/defs.cc of
// onnx 1.23), as the importer expanded it before kiln-decompose existed.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Decompose/Expansion.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/DataTypes.h"
#include "dialects/ONNX/ONNXOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;

namespace kiln::decompose {

//===----------------------------------------------------------------------===//
// Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// QLinearMatMul, QLinearConv, MatMulInteger, ConvInteger
//===----------------------------------------------------------------------===//

/// The ONNX data type of a 2/4/8/16-bit integer element type (kiln's onnx
/// dialect keeps uint types unsigned); 0 if it is none of them.
static int64_t onnxQuantType(Type t) {
  auto i = dyn_cast<IntegerType>(t);
  if (!i)
    return 0;
  bool u = i.isUnsigned();
  switch (i.getWidth()) {
  case 2:
    return u ? KILN_DTYPE_UINT2 : KILN_DTYPE_INT2;
  case 4:
    return u ? KILN_DTYPE_UINT4 : KILN_DTYPE_INT4;
  case 8:
    return u ? KILN_DTYPE_UINT8 : KILN_DTYPE_INT8;
  case 16:
    return u ? KILN_DTYPE_UINT16 : KILN_DTYPE_INT16;
  default:
    return 0;
  }
}

/// The ONNX data type of an 8-bit float element type (FLOAT8E4M3FN, ...) or
/// of FLOAT4E2M1, 0 if it is none: quantizing to one is a cast with the op's
/// saturation, no rounding to integers or clipping.
static int64_t onnxFloat8Type(Type t) {
  return onnx::isFloat8Type(t) || isa<Float4E2M1FNType>(t)
             ? onnx::getOnnxDataType(t)
             : 0;
}

static std::pair<double, double> quantRange(Type t) {
  auto i = cast<IntegerType>(t);
  unsigned w = i.getWidth();
  if (i.isUnsigned())
    return {0.0, double((int64_t(1) << w) - 1)};
  return {-double(int64_t(1) << (w - 1)), double((int64_t(1) << (w - 1)) - 1)};
}

/// A per-axis 1-D `value` of length > 1 reshaped to broadcast along `axis`
/// of a rank-`rank` tensor; scalars and 1-element tensors as they are.
static V alongAxis(Expansion &e, const V &value, int64_t axis,
                      int64_t rank) {
  RankedTensorType t = e.type(value);
  if (!t || t.getRank() == 0 || t.getNumElements() == 1)
    return value;
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = t.getNumElements();
  return e.add("Reshape", {value, e.i64s(shape)});
}

LogicalResult checkAxis(Expansion &e, int64_t &axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    return e.error() << "axis " << axis << " is out of range", failure();
  if (axis < 0)
    axis += rank;
  return success();
}

// y = (x - zero_point) * scale, in the scale's type.
LogicalResult expandDequantizeLinear(Expansion &e) {
  V x = e.input(0), scale = e.input(1), zp = e.input(2);
  RankedTensorType xt = e.type(x), st = e.type(scale);
  if (!xt || !st || !onnxFloatType(st.getElementType()))
    return e.error() << "needs a ranked input and a float scale", failure();
  Type xe = xt.getElementType();
  if (!onnxQuantType(xe) && !xe.isInteger(32) && !onnxFloat8Type(xe))
    return e.error() << "element type " << xe << " is not supported (2/4/8/"
                     << "16-bit integers, int32, the float8 formats and "
                     << "float4e2m1)",
         failure();
  if (e.getInt("block_size", 0) != 0)
    return e.error() << "blocked quantization is not supported yet", failure();
  int64_t axis = e.getInt("axis", 1);
  if (st.getNumElements() > 1 && failed(checkAxis(e, axis, xt.getRank())))
    return failure();
  int64_t floatType = onnxFloatType(st.getElementType());
  V xf = e.add("Cast", {x}, {intAttr("to", floatType)});
  if (!zp.empty())
    xf = e.add("Sub", {xf, e.add("Cast", {alongAxis(e, zp, axis, xt.getRank())},
                                 {intAttr("to", floatType)})});
  V y = e.add("Mul", {xf, alongAxis(e, scale, axis, xt.getRank())});
  int64_t outType = e.getInt("output_dtype", 0);
  if (outType && outType != floatType)
    y = e.add("Cast", {y}, {intAttr("to", outType)});
  e.add("Identity", {y}, {}, e.output(0));
  return success();
}

/// saturate(round_half_even(v) + zero_point) as `target` (v already divided
/// by the scale, a float tensor); `floor` raises the saturation's lower bound
/// (a folded Relu), `ceiling` lowers its upper bound (a folded Clip).
static V quantizeValue(Expansion &e, V v, const V &zpFloat,
                          Type floatElem, Type target,
                          std::optional<double> floor = std::nullopt,
                          std::optional<double> ceiling = std::nullopt) {
  V q = e.add("Round", {v});
  if (!zpFloat.empty())
    q = e.add("Add", {q, zpFloat});
  auto [lo, hi] = quantRange(target);
  if (floor)
    lo = std::min(std::max(lo, *floor), hi);
  if (ceiling)
    hi = std::max(std::min(hi, *ceiling), lo);
  q = e.add("Clip", {q, e.scalar(floatElem, lo), e.scalar(floatElem, hi)});
  return e.add("Cast", {q}, {intAttr("to", onnxQuantType(target))});
}

LogicalResult expandQuantizeLinear(Expansion &e) {
  V x = e.input(0), scale = e.input(1), zp = e.input(2);
  RankedTensorType xt = e.type(x), st = e.type(scale);
  if (!xt || !st || !onnxFloatType(xt.getElementType()))
    return e.error() << "needs a float input", failure();
  if (e.getInt("block_size", 0) != 0)
    return e.error() << "blocked quantization is not supported yet", failure();
  if (e.getInt("precision", 0) != 0)
    return e.error() << "the precision attribute is not supported yet", failure();
  Type target;
  if (!zp.empty()) {
    RankedTensorType zt = e.type(zp);
    target = zt ? zt.getElementType() : Type();
  } else {
    int64_t dtype = e.getInt("output_dtype", KILN_DTYPE_UINT8);
    MLIRContext *ctx = e.ctx.getContext();
    switch (dtype) {
    case KILN_DTYPE_UINT8:
      target = IntegerType::get(ctx, 8, IntegerType::Unsigned);
      break;
    case KILN_DTYPE_INT8:
      target = IntegerType::get(ctx, 8);
      break;
    case KILN_DTYPE_UINT16:
      target = IntegerType::get(ctx, 16, IntegerType::Unsigned);
      break;
    case KILN_DTYPE_INT16:
      target = IntegerType::get(ctx, 16);
      break;
    default:
      target = onnx::getElementTypeOfOnnxDataType(ctx, dtype);
      if (target && !onnxFloat8Type(target) && !onnxQuantType(target))
        target = Type();
      break;
    }
  }
  if (!target || (!onnxQuantType(target) && !onnxFloat8Type(target)))
    return e.error() << "only 2-, 4-, 8- and 16-bit integer, float8 and "
                        "float4e2m1 quantization is supported",
           failure();
  int64_t axis = e.getInt("axis", 1);
  if (st.getNumElements() > 1 && failed(checkAxis(e, axis, xt.getRank())))
    return failure();
  Type fe = xt.getElementType();
  int64_t floatType = onnxFloatType(fe);
  V scaled =
      e.add("Div", {x, e.add("Cast", {alongAxis(e, scale, axis, xt.getRank())},
                             {intAttr("to", floatType)})});
  V zpFloat =
      zp.empty() ? V()
                 : e.add("Cast", {alongAxis(e, zp, axis, xt.getRank())},
                         {intAttr("to", floatType)});
  if (int64_t float8 = onnxFloat8Type(target)) {
    // To an 8-bit float: x / scale + zero_point, cast (rounded to nearest
    // even) with the op's saturation.
    if (!zpFloat.empty())
      scaled = e.add("Add", {scaled, zpFloat});
    e.add("Cast", {scaled},
          {intAttr("to", float8), intAttr("saturate", e.getInt("saturate", 1))},
          e.output(0));
    return success();
  }
  e.add("Identity", {quantizeValue(e, scaled, zpFloat, fe, target)}, {}, e.output(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Integer products: int32 accumulation of zero-point-centered values
//===----------------------------------------------------------------------===//

// The centered operands are int32 (|x - zero_point| <= 255 for 8-bit types, so
// every product is exact and the sums wrap only past 2^31, as the spec allows);
// the onnx MatMul/Conv on int32 lower to linalg.matmul / linalg.conv_* with
// integer multiply-adds. Constant weights are centered at compile time (the ops
// fold as they are built).

static LogicalResult checkQuantInputs(Expansion &e, Type a, Type b) {
  // 16-bit products could overflow int32: only 8-bit operands (as onnxruntime).
  auto is8 = [](Type t) { return onnxQuantType(t) && t.getIntOrFloatBitWidth() == 8; };
  if (!is8(a) || !is8(b))
    return e.error() << "needs 8-bit integer inputs (got " << a << " and " << b << ")",
           failure();
  return success();
}

/// x - zero_point as int32; `axis` < 0: the zero point is a scalar (or 1 element).
static V centered(Expansion &e, const V &x, const V &zp, int64_t axis, int64_t rank) {
  V xi = e.add("Cast", {x}, {intAttr("to", KILN_DTYPE_INT32)});
  if (zp.empty())
    return xi;
  // Reshape the (known-typed) zero point first: the Cast's type is not known yet.
  V shaped = axis < 0 ? zp : alongAxis(e, zp, axis, rank);
  V zi = e.add("Cast", {shaped}, {intAttr("to", KILN_DTYPE_INT32)});
  return e.add("Sub", {xi, zi});
}

/// Constant 8-bit weights whose zero-point-centered values w - w_zp (w_zp absent,
/// one value, or one per output channel along `channelAxis`) all fit in s8:
/// the 8-bit kernels take them as signed bytes (symmetric s8 weights always do).
static bool isCenteredS8Constant(Value w, Value wzp, int64_t channelAxis) {
  auto wt = dyn_cast<RankedTensorType>(w.getType());
  if (!wt || !wt.hasStaticShape() || !onnxQuantType(wt.getElementType()) ||
      wt.getElementType().getIntOrFloatBitWidth() != 8)
    return false;
  std::optional<SmallVector<int64_t>> values = kiln::onnx::getConstantIntValues(w);
  if (!values)
    return false;
  SmallVector<int64_t> zps = {0};
  if (wzp && !isa<NoneType>(wzp.getType())) {
    std::optional<SmallVector<int64_t>> z = kiln::onnx::getConstantIntValues(wzp);
    if (!z || (z->size() != 1 && int64_t(z->size()) != wt.getDimSize(channelAxis)))
      return false;
    zps = *z;
  }
  int64_t inner = 1;
  for (int64_t d = channelAxis + 1; d < wt.getRank(); ++d)
    inner *= wt.getDimSize(d);
  int64_t channels = wt.getDimSize(channelAxis);
  for (auto [i, v] : llvm::enumerate(*values)) {
    int64_t zp = zps.size() == 1 ? zps[0] : zps[(int64_t(i) / inner) % channels];
    if (v - zp < -128 || v - zp > 127)
      return false;
  }
  return true;
}

/// 8-bit activations with one zero point (absent or one element).
static bool isPerTensor8Bit(Value x, Value xzp) {
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  if (!xt || !xt.hasStaticShape() || !onnxQuantType(xt.getElementType()) ||
      xt.getElementType().getIntOrFloatBitWidth() != 8)
    return false;
  if (!xzp || isa<NoneType>(xzp.getType()))
    return true;
  auto zt = dyn_cast<RankedTensorType>(xzp.getType());
  return zt && zt.hasStaticShape() && zt.getNumElements() == 1;
}

static bool isIntegerKernelMatMul(Value a, Value azp, Value b, Value bzp) {
  auto at = dyn_cast<RankedTensorType>(a.getType());
  auto bt = dyn_cast<RankedTensorType>(b.getType());
  return at && bt && at.getRank() >= 2 && bt.getRank() == 2 &&
         isPerTensor8Bit(a, azp) && isCenteredS8Constant(b, bzp, 1);
}

/// A 2-D depthwise conv: one filter per input channel (`group` = the
/// channels, weights [C, 1, KH, KW]).
static bool isDepthwise(RankedTensorType xt, Value w, int64_t group) {
  auto wt = dyn_cast<RankedTensorType>(w.getType());
  return group > 1 && wt && wt.getRank() == 4 && xt.getDimSize(1) == group &&
         wt.getDimSize(0) == group && wt.getDimSize(1) == 1;
}

static bool isIntegerKernelConv(Value x, Value xzp, Value w, Value wzp, int64_t group) {
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  return xt && xt.getRank() == 4 && (group == 1 || isDepthwise(xt, w, group)) &&
         isPerTensor8Bit(x, xzp) &&
         (!xzp || isa<NoneType>(xzp.getType()) || kiln::onnx::getConstantAttr(xzp)) &&
         isCenteredS8Constant(w, wzp, 0);
}

bool keptForIntegerKernel(Operation *op) {
  auto operand = [&](unsigned i) {
    return i < op->getNumOperands() ? op->getOperand(i) : Value();
  };
  if (isa<onnx::MatMulIntegerOp>(op))
    return isIntegerKernelMatMul(operand(0), operand(2), operand(1), operand(3));
  if (auto conv = dyn_cast<onnx::ConvIntegerOp>(op))
    return isIntegerKernelConv(operand(0), operand(2), operand(1), operand(3),
                               conv.getGroup());
  return false;
}

V integerMatMul(Expansion &e, const V &a, const V &azp, const V &b, const V &bzp) {
  RankedTensorType at = e.type(a), bt = e.type(b);
  if (!at || !bt || at.getRank() == 0 || bt.getRank() == 0) {
    e.error() << "needs ranked inputs";
    return V();
  }
  if (failed(checkQuantInputs(e, at.getElementType(), bt.getElementType())))
    return V();
  // The form convert-onnx-to-linalg computes on 8-bit kernels (kept as it is).
  if (isIntegerKernelMatMul(a, azp, b, bzp))
    return e.add("MatMulInteger", {a, b, azp, bzp});
  // a_zero_point is per row of A (axis rank-2), b_zero_point per column of B.
  V ac = centered(e, a, azp, std::max<int64_t>(at.getRank() - 2, 0), at.getRank());
  V bc = centered(e, b, bzp, bt.getRank() - 1, bt.getRank());
  return e.add("MatMul", {ac, bc});
}

V integerConv(Expansion &e, const V &x, const V &xzp, const V &w, const V &wzp,
              ArrayRef<Attr> convAttrs) {
  RankedTensorType xt = e.type(x), wt = e.type(w);
  if (!xt || !wt || !wt.hasStaticShape() || wt.getRank() < 3) {
    e.error() << "needs static inputs";
    return V();
  }
  if (failed(checkQuantInputs(e, xt.getElementType(), wt.getElementType())))
    return V();
  int64_t group = 1;
  for (const Attr &a : convAttrs)
    if (a.name() == "group")
      group = a.i();
  if (isIntegerKernelConv(x, xzp, w, wzp, group))
    return e.add("ConvInteger", {x, w, xzp, wzp}, convAttrs);
  V xc = centered(e, x, xzp, -1, xt.getRank());
  V wc = centered(e, w, wzp, 0, wt.getRank()); // w_zero_point per output channel
  return e.add("Conv", {xc, wc}, convAttrs);
}

V requantize(Expansion &e, const V &acc, const V &multiplier, const V &zp, Type target,
             std::optional<double> floor, std::optional<double> ceiling) {
  Type f32 = Float32Type::get(e.ctx.getContext());
  V v = e.add("Mul", {e.add("Cast", {acc}, {intAttr("to", KILN_DTYPE_FLOAT32)}), multiplier});
  V zpFloat = zp.empty() ? V() : e.add("Cast", {zp}, {intAttr("to", KILN_DTYPE_FLOAT32)});
  return quantizeValue(e, v, zpFloat, f32, target, floor, ceiling);
}

LogicalResult expandMatMulInteger(Expansion &e) {
  V y = integerMatMul(e, e.input(0), e.input(2), e.input(1), e.input(3));
  if (y.empty())
    return failure();
  e.add("Identity", {y}, {}, e.output(0));
  return success();
}

/// a_scale * b_scale / y_scale in float32, in that order (as onnxruntime computes
/// its requantization multiplier).
static V multiplierOf(Expansion &e, const V &aScale, const V &bScale, const V &yScale) {
  auto f32 = [&](const V &v) {
    RankedTensorType t = e.type(v);
    if (t && t.getElementType().isF32())
      return v;
    return e.add("Cast", {v}, {intAttr("to", KILN_DTYPE_FLOAT32)});
  };
  return e.add("Div", {e.add("Mul", {f32(aScale), f32(bScale)}), f32(yScale)});
}

LogicalResult expandQLinearMatMul(Expansion &e) {
  // a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp
  RankedTensorType at = e.type(e.input(0)), yzt = e.type(e.input(7));
  V acc = integerMatMul(e, e.input(0), e.input(2), e.input(3), e.input(5));
  if (acc.empty())
    return failure();
  Type target = yzt ? yzt.getElementType() : at.getElementType();
  if (!onnxQuantType(target))
    return e.error() << "needs an 8- or 16-bit integer output", failure();
  V factor = multiplierOf(e, e.input(1), e.input(4), e.input(6));
  e.add("Identity", {requantize(e, acc, factor, e.input(7), target)}, {}, e.output(0));
  return success();
}

static SmallVector<Attr> forwardedAttrs(Expansion &e) {
  return SmallVector<Attr>(e.node.attribute().begin(), e.node.attribute().end());
}

LogicalResult expandConvInteger(Expansion &e) {
  V y = integerConv(e, e.input(0), e.input(2), e.input(1), e.input(3), forwardedAttrs(e));
  if (y.empty())
    return failure();
  e.add("Identity", {y}, {}, e.output(0));
  return success();
}

LogicalResult expandQLinearConv(Expansion &e) {
  // x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B (int32)
  RankedTensorType xt = e.type(e.input(0)), yzt = e.type(e.input(7));
  V acc = integerConv(e, e.input(0), e.input(2), e.input(3), e.input(5), forwardedAttrs(e));
  if (acc.empty())
    return failure();
  int64_t rank = xt.getRank();
  if (!e.input(8).empty())
    acc = e.add("Add", {acc, alongAxis(e, e.input(8), 1, rank)});
  Type target = yzt ? yzt.getElementType() : xt.getElementType();
  if (!onnxQuantType(target))
    return e.error() << "needs an 8- or 16-bit integer output", failure();
  V factor = multiplierOf(e, e.input(1), alongAxis(e, e.input(4), 1, rank), e.input(6));
  e.add("Identity", {requantize(e, acc, factor, e.input(7), target)}, {}, e.output(0));
  return success();
}

// The function body of the ONNX spec (uint8, range widened to include 0).
LogicalResult expandDynamicQuantizeLinear(Expansion &e) {
  V x = e.input(0);
  RankedTensorType xt = e.type(x);
  if (!xt || !xt.getElementType().isF32())
    return e.error() << "needs a float32 input", failure();
  Type f32 = xt.getElementType();
  V zero = e.scalar(f32, 0.0);
  V lo = e.add("Min", {e.reduce("ReduceMin", x, {}, false), zero});
  V hi = e.add("Max", {e.reduce("ReduceMax", x, {}, false), zero});
  V scale = e.add("Div", {e.add("Sub", {hi, lo}), e.scalar(f32, 255.0)});
  V zpFloat = e.add("Sub", {zero, e.add("Div", {lo, scale})});
  zpFloat = e.add("Round", {e.add("Clip", {zpFloat, zero, e.scalar(f32, 255.0)})});
  V zp = e.add("Cast", {zpFloat}, {intAttr("to", KILN_DTYPE_UINT8)});
  Type u8 = IntegerType::get(e.ctx.getContext(), 8, IntegerType::Unsigned);
  e.add("Identity", {quantizeValue(e, e.add("Div", {x, scale}), zpFloat, f32, u8)}, {},
        e.output(0));
  e.add("Identity", {scale}, {}, e.output(1));
  e.add("Identity", {zp}, {}, e.output(2));
  return success();
}

} // namespace kiln::decompose
