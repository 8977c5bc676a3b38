//===- Misc.cpp - kiln-decompose: Hardmax, OneHot, CenterCropPad, ... -----===//
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

// 1 at the first maximum along `axis`, 0 elsewhere. The op is in its opset-13 form (the
// importer's version adapter takes an older Hardmax there when it means the same).
LogicalResult expandHardmax(Expansion &e) {
  V x = e.input(0);
  RankedTensorType t = e.type(x);
  if (!t || !t.hasStaticShape() || t.getRank() == 0 ||
      !onnxFloatType(t.getElementType()))
    return e.error() << "needs a static float input of rank >= 1", failure();
  int64_t rank = t.getRank(), axis = e.getInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return e.error() << "axis " << axis << " is out of range", failure();
  if (axis < 0)
    axis += rank;
  V idx = e.add("ArgMax", {x}, {intAttr("axis", axis), intAttr("keepdims", 1)});
  V hit = e.add("Equal", {iota(e, t.getDimSize(axis), axis, rank), idx});
  e.add("Cast", {hit}, {intAttr("to", onnxFloatType(t.getElementType()))}, e.output(0));
  return success();
}

// values[1] where the (wrapped) index equals the position along `axis`,
// values[0] elsewhere.
LogicalResult expandOneHot(Expansion &e) {
  V indices = e.input(0), depth = e.input(1), values = e.input(2);
  RankedTensorType it = e.type(indices), vt = e.type(values);
  if (!it || !it.hasStaticShape() || !vt)
    return e.error() << "needs static indices and values", failure();
  std::optional<SmallVector<int64_t>> depthValue = e.constantInts(depth);
  if (!depthValue) {
    // Float depths are allowed by the spec; read them through a cast.
    return e.error() << "needs a compile-time constant for the non-constant "
                        "input 'depth'",
           failure();
  }
  if (depthValue->size() != 1 || (*depthValue)[0] < 1)
    return e.error() << "depth must be one positive value", failure();
  int64_t n = (*depthValue)[0];
  int64_t rank = it.getRank() + 1, axis = e.getInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return e.error() << "axis " << axis << " is out of range", failure();
  if (axis < 0)
    axis += rank;
  Type i64 = IntegerType::get(e.ctx.getContext(), 64);
  V idx = it.getElementType().isInteger(64)
                        ? indices
                        : e.add("Cast", {indices}, {intAttr("to", KILN_DTYPE_INT64)});
  // Negative indices count from the end.
  V wrapped = e.add(
      "Where", {e.add("Less", {idx, e.scalar(i64, 0)}),
                e.add("Add", {idx, e.scalar(i64, n)}), idx});
  V hit = e.add("Equal", {e.unsqueeze(wrapped, {axis}), iota(e, n, axis, rank)});
  V off = e.add("Gather", {values, e.scalar(i64, 0)}, {intAttr("axis", 0)});
  V on = e.add("Gather", {values, e.scalar(i64, 1)}, {intAttr("axis", 0)});
  e.add("Where", {hit, on, off}, {}, e.output(0));
  return success();
}

// Crop (centered Slice) or zero-pad (centered Pad) each listed axis to the
// target size; an odd difference puts the extra element at the end.
LogicalResult expandCenterCropPad(Expansion &e) {
  V x = e.input(0);
  RankedTensorType t = e.type(x);
  if (!t || !t.hasStaticShape())
    return e.error() << "needs a static input", failure();
  std::optional<SmallVector<int64_t>> target = e.constantInts(e.input(1));
  if (!target)
    return e.error() << "needs a compile-time constant for the non-constant "
                        "input 'shape'",
           failure();
  int64_t rank = t.getRank();
  SmallVector<int64_t> axes;
  if (const Attr *a = findAttr(e.node, "axes"))
    axes.assign(a->ints().begin(), a->ints().end());
  else
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  if (axes.size() != target->size())
    return e.error() << "'shape' needs one value per axis", failure();
  SmallVector<int64_t> starts, ends, sliceAxes, pads(2 * rank, 0);
  bool pad = false;
  for (auto [i, a] : llvm::enumerate(axes)) {
    if (a < -rank || a >= rank)
      return e.error() << "axis " << a << " is out of range", failure();
    int64_t axis = a < 0 ? a + rank : a, dim = t.getDimSize(axis);
    int64_t want = (*target)[i];
    if (want < 0)
      return e.error() << "negative target size " << want, failure();
    if (want < dim) {
      int64_t begin = (dim - want) / 2;
      starts.push_back(begin);
      ends.push_back(begin + want);
      sliceAxes.push_back(axis);
    } else if (want > dim) {
      pads[axis] = (want - dim) / 2;
      pads[rank + axis] = want - dim - pads[axis];
      pad = true;
    }
  }
  V y = x;
  if (!starts.empty())
    y = e.add("Slice", {y, e.i64s(starts), e.i64s(ends), e.i64s(sliceAxes)});
  if (pad)
    y = e.add("Pad", {y, e.i64s(pads)});
  e.add("Identity", {y}, {}, e.output(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Swish, EyeLike, window functions
//===----------------------------------------------------------------------===//

// Y = X * Sigmoid(alpha * X).
LogicalResult expandSwish(Expansion &e) {
  V x = e.input(0);
  RankedTensorType t = e.type(x);
  if (!t || !onnxFloatType(t.getElementType()))
    return e.error() << "needs a float input", failure();
  V scaled = e.add("Mul", {x, e.scalar(t.getElementType(), e.getFloat("alpha", 1.0f))});
  e.add("Mul", {x, e.add("Sigmoid", {scaled})}, {}, e.output(0));
  return success();
}

/// A constant of `shape` x `elem` from doubles (floats or integers).
static V constantOf(Expansion &e, ArrayRef<int64_t> shape, Type elem,
                       ArrayRef<double> values) {
  SmallVector<Attribute> attrs;
  for (double v : values)
    attrs.push_back(isa<FloatType>(elem)
                        ? Attribute(FloatAttr::get(elem, v))
                        : Attribute(IntegerAttr::get(elem, static_cast<int64_t>(v))));
  return e.ctx.addConstant(
      DenseElementsAttr::get(RankedTensorType::get(shape, elem), attrs), "values");
}

/// The element type of an ONNX data type code kiln computes with; null if not.
static Type typeOfCode(MLIRContext *ctx, int64_t code) {
  switch (code) {
  case KILN_DTYPE_FLOAT32: return Float32Type::get(ctx);
  case KILN_DTYPE_FLOAT64: return Float64Type::get(ctx);
  case KILN_DTYPE_FLOAT16: return Float16Type::get(ctx);
  case KILN_DTYPE_BFLOAT16: return BFloat16Type::get(ctx);
  case KILN_DTYPE_INT32: return IntegerType::get(ctx, 32);
  case KILN_DTYPE_INT64: return IntegerType::get(ctx, 64);
  case KILN_DTYPE_INT8: return IntegerType::get(ctx, 8);
  case KILN_DTYPE_UINT8: return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case KILN_DTYPE_INT16: return IntegerType::get(ctx, 16);
  case KILN_DTYPE_UINT16: return IntegerType::get(ctx, 16, IntegerType::Unsigned);
  case KILN_DTYPE_UINT32: return IntegerType::get(ctx, 32, IntegerType::Unsigned);
  case KILN_DTYPE_UINT64: return IntegerType::get(ctx, 64, IntegerType::Unsigned);
  default: return {};
  }
}

// Ones on the k-th diagonal of a 2-D tensor shaped like the input: a constant.
LogicalResult expandEyeLike(Expansion &e) {
  RankedTensorType t = e.type(e.input(0));
  if (!t || !t.hasStaticShape() || t.getRank() != 2)
    return e.error() << "needs a static 2-D input", failure();
  Type elem = e.hasAttr("dtype") ? typeOfCode(e.ctx.getContext(), e.getInt("dtype", 1))
                                 : t.getElementType();
  if (!elem || elem.isInteger(1))
    return e.error() << "dtype " << e.getInt("dtype", 0) << " is not supported", failure();
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1), k = e.getInt("k", 0);
  if (failed(e.checkTable(t.getNumElements(), "the identity matrix")))
    return failure();
  SmallVector<double> values(rows * cols, 0.0);
  for (int64_t i = 0; i < rows; ++i)
    if (k >= -i && k < cols - i) // i + k in [0, cols), for any k
      values[i * cols + i + k] = 1.0;
  e.add("Identity", {constantOf(e, {rows, cols}, elem, values)}, {}, e.output(0));
  return success();
}

// Hann, Hamming and Blackman windows of a constant size: constants.
LogicalResult expandWindow(Expansion &e) {
  std::optional<SmallVector<int64_t>> size = e.constantInts(e.input(0));
  if (!size)
    return e.error() << "needs a compile-time constant for the non-constant "
                        "input 'size'",
           failure();
  if (size->size() != 1 || (*size)[0] < 0)
    return e.error() << "size must be one non-negative value", failure();
  Type elem = typeOfCode(e.ctx.getContext(), e.getInt("output_datatype", 1));
  if (!elem)
    return e.error() << "output_datatype " << e.getInt("output_datatype", 1)
                     << " is not supported",
           failure();
  int64_t n = (*size)[0];
  if (failed(e.checkTable(n, "the window")))
    return failure();
  double denom = e.getInt("periodic", 1) ? double(n) : double(n - 1);
  StringRef op = e.node.op_type();
  SmallVector<double> values;
  for (int64_t i = 0; i < n; ++i) {
    double x = denom == 0 ? 0.0 : 2.0 * M_PI * double(i) / denom;
    if (op == "HannWindow")
      values.push_back(0.5 - 0.5 * std::cos(x));
    else if (op == "HammingWindow")
      values.push_back(25.0 / 46.0 - 21.0 / 46.0 * std::cos(x));
    else
      values.push_back(0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2.0 * x));
  }
  e.add("Identity", {constantOf(e, {n}, elem, values)}, {}, e.output(0));
  return success();
}

// Shrink: x + bias below -lambd, x - bias above lambd, 0 between. On
// integers (compared as numpy compares them with a float lambd: x < -lambd
// is x < trunc(-lambd)) bias must be a whole number.
LogicalResult expandShrink(Expansion &e) {
  V x = e.input(0);
  RankedTensorType t = e.type(x);
  if (!t)
    return e.error() << "needs a ranked input", failure();
  Type elem = t.getElementType();
  double bias = e.getFloat("bias", 0.0f), lambd = e.getFloat("lambd", 0.5f);
  if (!onnxFloatType(elem) && bias != std::trunc(bias))
    return e.error() << "bias " << bias << " on integer input " << t
                     << " is not a whole number",
           failure();
  V below = e.add("Less", {x, e.scalar(elem, -lambd)});
  V above = e.add("Greater", {x, e.scalar(elem, lambd)});
  V zero = e.scalar(elem, 0.0);
  V upper = e.add("Where", {above, e.add("Sub", {x, e.scalar(elem, bias)}), zero});
  e.add("Where", {below, e.add("Add", {x, e.scalar(elem, bias)}), upper}, {},
        e.output(0));
  return success();
}

// AffineGrid: the base grid [D1 * .. * Dk, k + 1] of normalized coordinates
// (x along the last dim, then y, z; and 1), a constant, times theta^T
// [N, k + 1, k], reshaped to [N, D1..Dk, k].
LogicalResult expandAffineGrid(Expansion &e) {
  V theta = e.input(0);
  RankedTensorType t = e.type(theta);
  std::optional<SmallVector<int64_t>> size = e.constantInts(e.input(1));
  if (!t || !size || size->size() < 4 || !onnxFloatType(t.getElementType()))
    return e.error() << "needs a float theta and a constant size", failure();
  SmallVector<int64_t> dims(size->begin() + 2, size->end());
  int64_t k = static_cast<int64_t>(dims.size()), points = 1;
  for (int64_t d : dims)
    points *= d;
  if (failed(e.checkTable(points * (k + 1), "the base grid")))
    return failure();
  bool alignCorners = e.getInt("align_corners", 0) != 0;
  auto coordinate = [&](int64_t i, int64_t n) {
    if (alignCorners)
      return n == 1 ? -1.0 : -1.0 + 2.0 * i / (n - 1);
    return -1.0 + (2.0 * i + 1.0) / n;
  };
  SmallVector<double> base;
  base.reserve(points * (k + 1));
  SmallVector<int64_t> pos(k, 0);
  for (int64_t p = 0; p < points; ++p) {
    // (x, y[, z], 1): x along the last dim.
    for (int64_t j = k - 1; j >= 0; --j)
      base.push_back(coordinate(pos[j], dims[j]));
    base.push_back(1.0);
    for (int64_t j = k - 1; j >= 0; --j) {
      if (++pos[j] < dims[j])
        break;
      pos[j] = 0;
    }
  }
  auto elemType = cast<FloatType>(t.getElementType());
  SmallVector<APFloat> values;
  for (double v : base) {
    APFloat f(v);
    bool losesInfo = false;
    f.convert(elemType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
    values.push_back(f);
  }
  V grid = e.ctx.addConstant(
      DenseElementsAttr::get(RankedTensorType::get({points, k + 1}, elemType), values),
      "base_grid");
  V thetaT = e.add("Transpose", {theta}, {intsAttr("perm", {0, 2, 1})});
  V product = e.add("MatMul", {grid, thetaT});
  SmallVector<int64_t> shape = {(*size)[0]};
  shape.append(dims.begin(), dims.end());
  shape.push_back(k);
  e.add("Reshape", {product, e.i64s(shape)}, {}, e.output(0));
  return success();
}

// ReverseSequence: GatherElements along the time axis with the index
// t < len[b] ? len[b] - 1 - t : t, broadcast to the input's shape (len[b]
// clamped to [0, T]: a length past the sequence reverses all of it).
LogicalResult expandReverseSequence(Expansion &e) {
  V x = e.input(0), lens = e.input(1);
  RankedTensorType t = e.type(x);
  if (!t || !t.hasStaticShape())
    return e.error() << "needs a static input", failure();
  int64_t rank = t.getRank();
  int64_t batchAxis = e.getInt("batch_axis", 1), timeAxis = e.getInt("time_axis", 0);
  Type i64 = IntegerType::get(e.ctx.getContext(), 64);
  // [T, 1] / [1, T] steps and [1, B] / [B, 1] lengths.
  V steps = iota(e, t.getDimSize(timeAxis), timeAxis, 2);
  // Lengths clamped to [0, T]: the index never leaves the input.
  V clamped = e.add("Max", {e.add("Min", {lens, e.scalar(i64, t.getDimSize(timeAxis))}),
                            e.scalar(i64, 0)});
  V lengths = e.unsqueeze(clamped, {timeAxis});
  V reversed = e.add("Sub", {e.add("Sub", {lengths, e.scalar(i64, 1)}), steps});
  V index = e.add("Where", {e.add("Less", {steps, lengths}), reversed, steps});
  if (rank > 2) {
    SmallVector<int64_t> axes;
    for (int64_t d = 2; d < rank; ++d)
      axes.push_back(d);
    index = e.unsqueeze(index, axes);
  }
  index = e.add("Expand", {index, e.i64s(t.getShape())});
  e.add("GatherElements", {x, index}, {intAttr("axis", timeAxis)}, e.output(0));
  return success();
}

} // namespace kiln::decompose
