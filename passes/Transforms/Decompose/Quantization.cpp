//===- Quantization.cpp - kiln-decompose: quantized ops -------------------===//
//
// Follows the function body the ONNX spec gives for each op (onnx/defs/*/defs.cc of
// onnx 1.23), as the importer expanded it before kiln-decompose existed.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Decompose/Expansion.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;

namespace kiln::decompose {

//===----------------------------------------------------------------------===//
// Quantization: QuantizeLinear, DequantizeLinear, QLinearMatMul, QLinearConv,
// MatMulInteger, ConvInteger
//===----------------------------------------------------------------------===//

/// The ONNX data type of an 8/16-bit integer element type (kiln's onnx
/// dialect keeps uint types unsigned); 0 if it is none of them.
static int64_t onnxQuantType(Type t) {
  auto i = dyn_cast<IntegerType>(t);
  if (!i)
    return 0;
  bool u = i.isUnsigned();
  switch (i.getWidth()) {
  case 8:
    return u ? KILN_DTYPE_UINT8 : KILN_DTYPE_INT8;
  case 16:
    return u ? KILN_DTYPE_UINT16 : KILN_DTYPE_INT16;
  default:
    return 0;
  }
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
  if (!onnxQuantType(xe) && !xe.isInteger(32))
    return e.error() << "element type " << xe << " is not supported (8/16-bit "
                     << "integers and int32)",
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
/// by the scale, a float tensor).
static V quantizeValue(Expansion &e, V v, const V &zpFloat,
                          Type floatElem, Type target) {
  V q = e.add("Round", {v});
  if (!zpFloat.empty())
    q = e.add("Add", {q, zpFloat});
  auto [lo, hi] = quantRange(target);
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
      break;
    }
  }
  if (!target || !onnxQuantType(target))
    return e.error() << "only 8- and 16-bit integer quantization is supported",
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
  e.add("Identity", {quantizeValue(e, scaled, zpFloat, fe, target)}, {}, e.output(0));
  return success();
}

// The integer products are accumulated in float32, which is exact while every
// partial sum stays below 2^24: checked from the types and the reduction size.
LogicalResult checkExactAccumulation(Expansion &e, Type a, Type b, int64_t terms) {
  auto bound = [](Type t) {
    auto [lo, hi] = quantRange(t);
    return hi - lo; // |x - zero_point| is at most the type's span
  };
  if (!onnxQuantType(a) || !onnxQuantType(b))
    return e.error() << "needs 8- or 16-bit integer inputs", failure();
  if (bound(a) * bound(b) * double(terms) >= double(1 << 24))
    return e.error() << "the integer accumulation over " << terms
                     << " products could exceed float32's exact range (2^24); "
                        "not supported yet",
           failure();
  return success();
}

static V centered(Expansion &e, const V &x, const V &zp,
                     int64_t axis, int64_t rank) {
  V xf = e.add("Cast", {x}, {intAttr("to", KILN_DTYPE_FLOAT32)});
  if (zp.empty())
    return xf;
  // Reshape the (known-typed) zero point first: the Cast's type is not known yet.
  V shaped = axis < 0 ? zp : alongAxis(e, zp, axis, rank);
  V zf = e.add("Cast", {shaped}, {intAttr("to", KILN_DTYPE_FLOAT32)});
  return e.add("Sub", {xf, zf});
}

LogicalResult expandMatMulInteger(Expansion &e) {
  RankedTensorType at = e.type(e.input(0)), bt = e.type(e.input(1));
  if (!at || !bt || at.getRank() == 0 || bt.getRank() == 0)
    return e.error() << "needs ranked inputs", failure();
  int64_t k = at.getShape().back();
  if (failed(checkExactAccumulation(e, at.getElementType(), bt.getElementType(), k)))
    return failure();
  // a_zero_point is per row of A (axis rank-2), b_zero_point per column of B.
  V a = centered(e, e.input(0), e.input(2), std::max<int64_t>(at.getRank() - 2, 0),
                           at.getRank());
  V b = centered(e, e.input(1), e.input(3), bt.getRank() - 1, bt.getRank());
  e.add("Cast", {e.add("MatMul", {a, b})}, {intAttr("to", KILN_DTYPE_INT32)},
        e.output(0));
  return success();
}

LogicalResult expandQLinearMatMul(Expansion &e) {
  RankedTensorType at = e.type(e.input(0)), bt = e.type(e.input(3));
  RankedTensorType yzt = e.type(e.input(7)), st = e.type(e.input(1));
  if (!at || !bt || !st || at.getRank() == 0)
    return e.error() << "needs ranked inputs", failure();
  if (failed(checkExactAccumulation(e, at.getElementType(), bt.getElementType(),
                                    at.getShape().back())))
    return failure();
  V a = centered(e, e.input(0), e.input(2), -1, at.getRank());
  V b = centered(e, e.input(3), e.input(5), -1, bt.getRank());
  V acc = e.add("MatMul", {a, b});
  // a_scale * b_scale / y_scale in the scales' type, applied in float32.
  V factor = e.add("Div", {e.add("Mul", {e.input(1), e.input(4)}), e.input(6)});
  factor = e.add("Cast", {factor}, {intAttr("to", KILN_DTYPE_FLOAT32)});
  Type f32 = Float32Type::get(e.ctx.getContext());
  V zpFloat =
      e.input(7).empty() ? V()
                         : e.add("Cast", {e.input(7)}, {intAttr("to", KILN_DTYPE_FLOAT32)});
  Type target = yzt ? yzt.getElementType() : at.getElementType();
  if (!onnxQuantType(target))
    return e.error() << "needs an 8- or 16-bit integer output", failure();
  e.add("Identity", {quantizeValue(e, e.add("Mul", {acc, factor}), zpFloat, f32, target)},
        {}, e.output(0));
  return success();
}

/// The products one output element of a conv with filter `wt` sums: the filter's
/// elements per output channel (computed without dividing by the channel count,
/// which may be 0).
static int64_t termsPerOutputChannel(RankedTensorType wt) {
  int64_t terms = 1;
  for (int64_t d : wt.getShape().drop_front())
    terms *= d; // bounded: the type passed the size limits
  return terms;
}

/// Conv over zero-point-centered float copies of integer inputs.
static V integerConv(Expansion &e, const V &x, const V &xzp,
                        const V &w, const V &wzp, int64_t rank) {
  V xf = centered(e, x, xzp, -1, rank);
  V wf = centered(e, w, wzp, 0, rank); // w_zero_point per output channel
  SmallVector<Attr> attrs(e.node.attribute().begin(),
                                          e.node.attribute().end());
  return e.add("Conv", {xf, wf}, attrs);
}

LogicalResult expandConvInteger(Expansion &e) {
  RankedTensorType xt = e.type(e.input(0)), wt = e.type(e.input(1));
  if (!xt || !wt || !wt.hasStaticShape() || wt.getRank() < 3)
    return e.error() << "needs static inputs", failure();
  int64_t terms = termsPerOutputChannel(wt);
  if (failed(checkExactAccumulation(e, xt.getElementType(), wt.getElementType(), terms)))
    return failure();
  V y = integerConv(e, e.input(0), e.input(2), e.input(1), e.input(3), xt.getRank());
  e.add("Cast", {y}, {intAttr("to", KILN_DTYPE_INT32)}, e.output(0));
  return success();
}

LogicalResult expandQLinearConv(Expansion &e) {
  // x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B (int32)
  RankedTensorType xt = e.type(e.input(0)), wt = e.type(e.input(3));
  RankedTensorType yzt = e.type(e.input(7));
  if (!xt || !wt || !wt.hasStaticShape() || wt.getRank() < 3)
    return e.error() << "needs static inputs", failure();
  int64_t terms = termsPerOutputChannel(wt);
  if (failed(checkExactAccumulation(e, xt.getElementType(), wt.getElementType(), terms)))
    return failure();
  V acc = integerConv(e, e.input(0), e.input(2), e.input(3), e.input(5), xt.getRank());
  if (!e.input(8).empty()) {
    V bias = e.add("Cast", {alongAxis(e, e.input(8), 1, xt.getRank())},
                             {intAttr("to", KILN_DTYPE_FLOAT32)});
    acc = e.add("Add", {acc, bias});
  }
  V scale = e.add("Div", {e.add("Mul", {e.input(1), alongAxis(e, e.input(4), 1, xt.getRank())}),
                                    e.input(6)});
  scale = e.add("Cast", {scale}, {intAttr("to", KILN_DTYPE_FLOAT32)});
  Type f32 = Float32Type::get(e.ctx.getContext());
  V zpFloat =
      e.input(7).empty() ? V()
                         : e.add("Cast", {e.input(7)}, {intAttr("to", KILN_DTYPE_FLOAT32)});
  Type target = yzt ? yzt.getElementType() : xt.getElementType();
  if (!onnxQuantType(target))
    return e.error() << "needs an 8- or 16-bit integer output", failure();
  e.add("Identity", {quantizeValue(e, e.add("Mul", {acc, scale}), zpFloat, f32, target)},
        {}, e.output(0));
  return success();
}

} // namespace kiln::decompose
