//===- Folders.cpp - Folders of onnx ops ----------------------------------===//
//
// Folders for the shape arithmetic exporters emit (Shape -> Gather -> Unsqueeze
// -> Concat
// -> Reshape, ...). They fold only small constants (kMaxFoldElements) into
// DenseElementsAttrs, need a static ranked result type, check that the value
// they compute has exactly that type, and give up (return {}) whenever the ONNX
// semantics are unclear: a wrong fold is worse than none. No pass folds larger
// ones: they stay ops, unless a lowering rewrites constant weights itself (conv
// filters to HWCF, packed matmul panels).
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace {

constexpr int64_t kMaxFoldElements = 4096;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// The op's single result type if it is a static ranked int/float tensor small
// enough to fold into; null otherwise.
RankedTensorType getFoldableResultType(Operation *op) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxFoldElements ||
      !type.getElementType().isIntOrFloat())
    return {};
  return type;
}

DenseElementsAttr getDense(Attribute attr) {
  return toDenseElements(dyn_cast_or_null<ElementsAttr>(attr),
                         kMaxFoldElements);
}

std::optional<SmallVector<int64_t>> getInts(Attribute attr) {
  DenseElementsAttr dense = getDense(attr);
  if (!dense)
    return std::nullopt;
  return getIntValues(cast<ElementsAttr>(dense));
}

bool isUnsignedInt(Type type) {
  auto intType = dyn_cast<IntegerType>(type);
  return intType && (intType.isUnsigned() || intType.getWidth() == 1);
}

// Integer elements of `type`, or null when a value does not fit the element
// type.
DenseElementsAttr makeInts(RankedTensorType type, ArrayRef<int64_t> values) {
  auto intType = dyn_cast<IntegerType>(type.getElementType());
  if (!intType)
    return {};
  unsigned width = intType.getWidth();
  bool isUnsigned = isUnsignedInt(intType);
  SmallVector<APInt> result;
  result.reserve(values.size());
  for (int64_t v : values) {
    if (width < 64) {
      if (isUnsigned ? (v < 0 || v >= (int64_t(1) << width))
                     : (v < -(int64_t(1) << (width - 1)) ||
                        v >= (int64_t(1) << (width - 1))))
        return {};
    } else if (isUnsigned && v < 0) {
      return {};
    }
    result.push_back(APInt(width, static_cast<uint64_t>(v), !isUnsigned,
                           /*implicitTrunc=*/true));
  }
  return DenseElementsAttr::get(type, result);
}

// Float elements of `type`, each rounded to nearest-even from the double.
DenseElementsAttr makeFloats(RankedTensorType type, ArrayRef<double> values) {
  auto floatType = dyn_cast<FloatType>(type.getElementType());
  if (!floatType)
    return {};
  SmallVector<APFloat> result;
  result.reserve(values.size());
  for (double v : values) {
    APFloat x(v);
    bool losesInfo = false;
    x.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
              &losesInfo);
    result.push_back(x);
  }
  return DenseElementsAttr::get(type, result);
}

SmallVector<int64_t> getStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

// Numpy-style broadcast of two shapes; std::nullopt if incompatible.
std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    result[i] = da == 1 ? db : da;
  }
  return result;
}

// For every element of `resultShape`, the linear index of the element of a
// tensor of shape `shape` broadcast to it. `shape` must broadcast to
// `resultShape`.
SmallVector<int64_t> broadcastIndices(ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> resultShape) {
  int64_t n = 1;
  for (int64_t d : resultShape)
    n *= d;
  SmallVector<int64_t> srcStrides = getStrides(shape);
  size_t offset = resultShape.size() - shape.size();
  SmallVector<int64_t> result;
  result.reserve(n);
  SmallVector<int64_t> index(resultShape.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    int64_t src = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] != 1)
        src += index[d + offset] * srcStrides[d];
    result.push_back(src);
    for (int64_t d = static_cast<int64_t>(resultShape.size()) - 1; d >= 0;
         --d) {
      if (++index[d] < resultShape[d])
        break;
      index[d] = 0;
    }
  }
  return result;
}

// Element attributes of a dense constant, in row-major order (splats expanded).
SmallVector<Attribute> getElements(DenseElementsAttr dense) {
  return SmallVector<Attribute>(dense.getValues<Attribute>());
}

// `data` reinterpreted with the result type (same element type and count).
OpFoldResult foldReshapeLike(Operation *op, Attribute data) {
  RankedTensorType resultType = getFoldableResultType(op);
  DenseElementsAttr dense = getDense(data);
  if (!resultType || !dense ||
      dense.getType().getElementType() != resultType.getElementType() ||
      dense.getType().getNumElements() != resultType.getNumElements())
    return {};
  return dense.reshape(resultType);
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

enum class BinaryKind {
  Add, Sub, Mul, Div, Equal, Less, Greater, LessOrEqual, GreaterOrEqual,
  And, Or, Xor, Min, Max, Mod, FMod
};

// Comparisons and logic give bool results whatever their operand type.
bool hasBoolResult(BinaryKind kind) {
  switch (kind) {
  case BinaryKind::Equal:
  case BinaryKind::Less:
  case BinaryKind::Greater:
  case BinaryKind::LessOrEqual:
  case BinaryKind::GreaterOrEqual:
  case BinaryKind::And:
  case BinaryKind::Or:
  case BinaryKind::Xor:
    return true;
  default:
    return false;
  }
}

std::optional<int64_t> applyInt(BinaryKind kind, int64_t a, int64_t b) {
  int64_t r;
  switch (kind) {
  case BinaryKind::Add:
    if (__builtin_add_overflow(a, b, &r))
      return std::nullopt;
    return r;
  case BinaryKind::Sub:
    if (__builtin_sub_overflow(a, b, &r))
      return std::nullopt;
    return r;
  case BinaryKind::Mul:
    if (__builtin_mul_overflow(a, b, &r))
      return std::nullopt;
    return r;
  case BinaryKind::Div:
    // Truncating and flooring division agree unless the quotient is negative
    // and inexact; ONNX leaves that to the backend, so do not fold it.
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
      return std::nullopt;
    if (a % b != 0 && ((a < 0) != (b < 0)))
      return std::nullopt;
    return a / b;
  case BinaryKind::Equal:
    return a == b;
  case BinaryKind::Less:
    return a < b;
  case BinaryKind::Greater:
    return a > b;
  case BinaryKind::LessOrEqual:
    return a <= b;
  case BinaryKind::GreaterOrEqual:
    return a >= b;
  case BinaryKind::And:
    return (a != 0) && (b != 0);
  case BinaryKind::Or:
    return (a != 0) || (b != 0);
  case BinaryKind::Xor:
    return (a != 0) != (b != 0);
  case BinaryKind::Min:
    return std::min(a, b);
  case BinaryKind::Max:
    return std::max(a, b);
  case BinaryKind::Mod:
  case BinaryKind::FMod: {
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
      return std::nullopt;
    int64_t r = a % b; // the sign of the dividend (fmod = 1)
    if (kind == BinaryKind::Mod && r != 0 && ((r < 0) != (b < 0)))
      r += b; // the sign of the divisor (fmod = 0, like Python's %)
    return r;
  }
  }
  return std::nullopt;
}

double applyFloat(BinaryKind kind, double a, double b) {
  // One IEEE operation in double then one rounding to the (narrower) element
  // type gives the correctly rounded result for + - * / (double has > 2p+2 bits
  // for f32/f16/bf16).
  switch (kind) {
  case BinaryKind::Add:
    return a + b;
  case BinaryKind::Sub:
    return a - b;
  case BinaryKind::Mul:
    return a * b;
  case BinaryKind::Div:
    return a / b;
  case BinaryKind::Equal:
    return a == b;
  case BinaryKind::Less:
    return a < b;
  case BinaryKind::Greater:
    return a > b;
  case BinaryKind::LessOrEqual:
    return a <= b;
  case BinaryKind::GreaterOrEqual:
    return a >= b;
  case BinaryKind::Min:
  case BinaryKind::Max:
    if (std::isnan(a) || std::isnan(b))
      return std::nan("");
    return kind == BinaryKind::Min ? std::min(a, b) : std::max(a, b);
  case BinaryKind::FMod:
    return std::fmod(a, b);
  case BinaryKind::And:
  case BinaryKind::Or:
  case BinaryKind::Xor:
  case BinaryKind::Mod:
    break; // not float operations (foldBinary does not get here)
  }
  return 0;
}

OpFoldResult foldBinary(Operation *op, Attribute lhsAttr, Attribute rhsAttr,
                        BinaryKind kind) {
  RankedTensorType resultType = getFoldableResultType(op);
  DenseElementsAttr lhs = getDense(lhsAttr), rhs = getDense(rhsAttr);
  if (!resultType || !lhs || !rhs)
    return {};
  Type elementType = lhs.getType().getElementType();
  if (elementType != rhs.getType().getElementType())
    return {};
  if (hasBoolResult(kind)) {
    if (!resultType.getElementType().isInteger(1))
      return {};
  } else if (resultType.getElementType() != elementType) {
    return {};
  }
  ArrayRef<int64_t> lhsShape = lhs.getType().getShape();
  ArrayRef<int64_t> rhsShape = rhs.getType().getShape();
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(lhsShape, rhsShape);
  if (!shape || ArrayRef<int64_t>(*shape) != resultType.getShape())
    return {};
  SmallVector<int64_t> lhsIndex = broadcastIndices(lhsShape, *shape);
  SmallVector<int64_t> rhsIndex = broadcastIndices(rhsShape, *shape);

  if (isa<IntegerType>(elementType)) {
    std::optional<SmallVector<int64_t>> a =
        getIntValues(cast<ElementsAttr>(lhs));
    std::optional<SmallVector<int64_t>> b =
        getIntValues(cast<ElementsAttr>(rhs));
    if (!a || !b)
      return {};
    SmallVector<int64_t> result;
    for (size_t i = 0; i < lhsIndex.size(); ++i) {
      std::optional<int64_t> r =
          applyInt(kind, (*a)[lhsIndex[i]], (*b)[rhsIndex[i]]);
      if (!r)
        return {};
      result.push_back(*r);
    }
    // makeInts rejects results that overflow narrower element types.
    return makeInts(resultType, result);
  }
  if (!isa<FloatType>(elementType) || elementType.getIntOrFloatBitWidth() > 64)
    return {};
  std::optional<SmallVector<double>> a =
      getFloatValues(cast<ElementsAttr>(lhs));
  std::optional<SmallVector<double>> b =
      getFloatValues(cast<ElementsAttr>(rhs));
  if (!a || !b)
    return {};
  if (kind == BinaryKind::And || kind == BinaryKind::Or ||
      kind == BinaryKind::Xor || kind == BinaryKind::Mod)
    return {};
  if (hasBoolResult(kind)) {
    SmallVector<int64_t> result;
    for (size_t i = 0; i < lhsIndex.size(); ++i)
      result.push_back(applyFloat(kind, (*a)[lhsIndex[i]], (*b)[rhsIndex[i]]) != 0);
    return makeInts(resultType, result);
  }
  SmallVector<double> result;
  for (size_t i = 0; i < lhsIndex.size(); ++i)
    result.push_back(applyFloat(kind, (*a)[lhsIndex[i]], (*b)[rhsIndex[i]]));
  return makeFloats(resultType, result);
}

} // namespace

//===----------------------------------------------------------------------===//
// Constant, Identity
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) {
  if (ElementsAttr value = getValueAttr())
    return value.getType() == getType() ? value : ElementsAttr();
  RankedTensorType type = getFoldableResultType(*this);
  if (!type)
    return {};
  // The scalar / list forms of Constant: rank 0 for value_int/value_float, rank
  // 1 for the lists, as the ONNX spec fixes.
  if (std::optional<uint64_t> v = getValueInt())
    return type.getRank() == 0 ? makeInts(type, {static_cast<int64_t>(*v)})
                               : DenseElementsAttr();
  if (std::optional<ArrayAttr> list = getValueInts()) {
    SmallVector<int64_t> values;
    for (Attribute a : *list)
      values.push_back(cast<IntegerAttr>(a).getInt());
    if (type.getRank() != 1 || type.getNumElements() != (int64_t)values.size())
      return {};
    return makeInts(type, values);
  }
  if (FloatAttr v = getValueFloatAttr())
    return type.getRank() == 0 ? makeFloats(type, {v.getValueAsDouble()})
                               : DenseElementsAttr();
  if (std::optional<ArrayAttr> list = getValueFloats()) {
    SmallVector<double> values;
    for (Attribute a : *list)
      values.push_back(cast<FloatAttr>(a).getValueAsDouble());
    if (type.getRank() != 1 || type.getNumElements() != (int64_t)values.size())
      return {};
    return makeFloats(type, values);
  }
  return {};
}

OpFoldResult IdentityOp::fold(FoldAdaptor) {
  if (getInput().getType() != getType())
    return {};
  return getInput();
}

//===----------------------------------------------------------------------===//
// Shape, Size
//===----------------------------------------------------------------------===//

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  auto inputType = dyn_cast<RankedTensorType>(getData().getType());
  if (!resultType || !inputType)
    return {};
  int64_t rank = inputType.getRank();
  auto clampAxis = [&](int64_t axis) {
    if (axis < 0)
      axis += rank;
    return std::clamp<int64_t>(axis, 0, rank);
  };
  int64_t start = clampAxis(static_cast<int64_t>(getStart()));
  int64_t end = getEnd() ? clampAxis(static_cast<int64_t>(*getEnd())) : rank;
  SmallVector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    if (inputType.isDynamicDim(i))
      return {};
    dims.push_back(inputType.getDimSize(i));
  }
  if (resultType.getRank() != 1 ||
      resultType.getDimSize(0) != (int64_t)dims.size())
    return {};
  return makeInts(resultType, dims);
}

OpFoldResult SizeOp::fold(FoldAdaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  auto inputType = dyn_cast<RankedTensorType>(getData().getType());
  if (!resultType || !inputType || !inputType.hasStaticShape() ||
      resultType.getRank() != 0)
    return {};
  return makeInts(resultType, {inputType.getNumElements()});
}

//===----------------------------------------------------------------------===//
// Gather, Concat, Slice, Transpose
//===----------------------------------------------------------------------===//

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  DenseElementsAttr data = getDense(adaptor.getData());
  std::optional<SmallVector<int64_t>> indices = getInts(adaptor.getIndices());
  auto indicesType = dyn_cast<RankedTensorType>(getIndices().getType());
  if (!resultType || !data || !indices || !indicesType ||
      data.getType().getElementType() != resultType.getElementType())
    return {};
  ArrayRef<int64_t> shape = data.getType().getShape();
  std::optional<int64_t> axis =
      normalizeAxis(static_cast<int64_t>(getAxis()), shape.size());
  if (!axis)
    return {};
  int64_t axisDim = shape[*axis];
  SmallVector<int64_t> outShape(shape.begin(), shape.begin() + *axis);
  llvm::append_range(outShape, indicesType.getShape());
  outShape.append(shape.begin() + *axis + 1, shape.end());
  if (ArrayRef<int64_t>(outShape) != resultType.getShape())
    return {};
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < *axis; ++i)
    outer *= shape[i];
  for (size_t i = *axis + 1; i < shape.size(); ++i)
    inner *= shape[i];
  SmallVector<Attribute> elements = getElements(data), result;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t index : *indices) {
      if (index < -axisDim || index >= axisDim)
        return {};
      if (index < 0)
        index += axisDim;
      for (int64_t i = 0; i < inner; ++i)
        result.push_back(elements[(o * axisDim + index) * inner + i]);
    }
  }
  return DenseElementsAttr::get(resultType, result);
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  if (!resultType)
    return {};
  int64_t rank = resultType.getRank();
  std::optional<int64_t> axis =
      normalizeAxis(static_cast<int64_t>(getAxis()), rank);
  if (!axis)
    return {};
  SmallVector<DenseElementsAttr> inputs;
  int64_t axisTotal = 0;
  for (Attribute attr : adaptor.getInputs()) {
    DenseElementsAttr dense = getDense(attr);
    if (!dense ||
        dense.getType().getElementType() != resultType.getElementType() ||
        dense.getType().getRank() != rank)
      return {};
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis &&
          dense.getType().getDimSize(d) != resultType.getDimSize(d))
        return {};
    axisTotal += dense.getType().getDimSize(*axis);
    inputs.push_back(dense);
  }
  if (inputs.empty() || axisTotal != resultType.getDimSize(*axis))
    return {};
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < *axis; ++i)
    outer *= resultType.getDimSize(i);
  for (int64_t i = *axis + 1; i < rank; ++i)
    inner *= resultType.getDimSize(i);
  SmallVector<SmallVector<Attribute>> elements;
  for (DenseElementsAttr input : inputs)
    elements.push_back(getElements(input));
  SmallVector<Attribute> result;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t k = 0; k < inputs.size(); ++k) {
      int64_t chunk = inputs[k].getType().getDimSize(*axis) * inner;
      llvm::append_range(
          result, ArrayRef<Attribute>(elements[k]).slice(o * chunk, chunk));
    }
  return DenseElementsAttr::get(resultType, result);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  DenseElementsAttr data = getDense(adaptor.getData());
  std::optional<SmallVector<int64_t>> starts = getInts(adaptor.getStarts());
  std::optional<SmallVector<int64_t>> ends = getInts(adaptor.getEnds());
  if (!resultType || !data || !starts || !ends ||
      starts->size() != ends->size() ||
      data.getType().getElementType() != resultType.getElementType())
    return {};
  ArrayRef<int64_t> shape = data.getType().getShape();
  int64_t rank = shape.size();
  size_t n = starts->size();
  SmallVector<int64_t> axes, steps(n, 1);
  if (isNoneValue(getAxes())) {
    for (size_t i = 0; i < n; ++i)
      axes.push_back(i);
  } else {
    std::optional<SmallVector<int64_t>> a = getInts(adaptor.getAxes());
    if (!a || a->size() != n)
      return {};
    axes = *a;
  }
  if (!isNoneValue(getSteps())) {
    std::optional<SmallVector<int64_t>> s = getInts(adaptor.getSteps());
    if (!s || s->size() != n)
      return {};
    steps = *s;
  }
  // Per-dimension start, step and count (ONNX Slice clamping rules).
  SmallVector<int64_t> dimStart(rank, 0), dimStep(rank, 1), dimCount(shape);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    std::optional<int64_t> axis = normalizeAxis(axes[i], rank);
    if (!axis || seen[*axis] || steps[i] == 0)
      return {};
    seen[*axis] = true;
    int64_t dim = shape[*axis], step = steps[i];
    int64_t start = (*starts)[i], end = (*ends)[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    int64_t count = 0;
    if (step > 0 && end > start)
      count = (end - start + step - 1) / step;
    else if (step < 0 && start > end)
      count = (start - end + (-step) - 1) / (-step);
    dimStart[*axis] = start;
    dimStep[*axis] = step;
    dimCount[*axis] = count;
  }
  if (ArrayRef<int64_t>(dimCount) != resultType.getShape())
    return {};
  SmallVector<Attribute> elements = getElements(data), result;
  SmallVector<int64_t> strides = getStrides(shape), index(rank, 0);
  for (int64_t linear = 0, e = resultType.getNumElements(); linear < e;
       ++linear) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += (dimStart[d] + index[d] * dimStep[d]) * strides[d];
    result.push_back(elements[src]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < dimCount[d])
        break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::get(resultType, result);
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  DenseElementsAttr data = getDense(adaptor.getData());
  if (!resultType || !data ||
      data.getType().getElementType() != resultType.getElementType())
    return {};
  ArrayRef<int64_t> shape = data.getType().getShape();
  int64_t rank = shape.size();
  SmallVector<int64_t> perm;
  if (std::optional<ArrayAttr> permAttr = getPerm()) {
    for (Attribute a : *permAttr)
      perm.push_back(cast<IntegerAttr>(a).getInt());
  } else {
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  }
  if ((int64_t)perm.size() != rank)
    return {};
  SmallVector<int64_t> outShape;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank)
      return {};
    outShape.push_back(shape[p]);
  }
  if (ArrayRef<int64_t>(outShape) != resultType.getShape())
    return {};
  SmallVector<Attribute> elements = getElements(data), result;
  SmallVector<int64_t> strides = getStrides(shape), index(rank, 0);
  for (int64_t linear = 0, e = resultType.getNumElements(); linear < e;
       ++linear) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += index[d] * strides[perm[d]];
    result.push_back(elements[src]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < outShape[d])
        break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::get(resultType, result);
}

//===----------------------------------------------------------------------===//
// Reshape, Flatten, Squeeze, Unsqueeze, Expand
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  std::optional<SmallVector<int64_t>> shape = getInts(adaptor.getShape());
  DenseElementsAttr data = getDense(adaptor.getData());
  if (!resultType || !shape || !data)
    return {};
  // Resolve the target shape as ONNX does and require it to be the result
  // type's.
  ArrayRef<int64_t> inShape = data.getType().getShape();
  SmallVector<int64_t> outShape;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < shape->size(); ++i) {
    int64_t d = (*shape)[i];
    if (d == 0 && getAllowzero() == 0) {
      if (i >= inShape.size())
        return {};
      d = inShape[i];
    }
    if (d == -1) {
      if (inferred >= 0)
        return {};
      inferred = i;
    } else if (d < 0) {
      return {};
    } else {
      known *= d;
    }
    outShape.push_back(d);
  }
  int64_t total = data.getType().getNumElements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      return {};
    outShape[inferred] = total / known;
  }
  if (ArrayRef<int64_t>(outShape) != resultType.getShape())
    return {};
  return foldReshapeLike(*this, adaptor.getData());
}

OpFoldResult FlattenOp::fold(FoldAdaptor adaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  auto inputType = dyn_cast<RankedTensorType>(getInput().getType());
  if (!resultType || !inputType || !inputType.hasStaticShape())
    return {};
  int64_t rank = inputType.getRank(), axis = static_cast<int64_t>(getAxis());
  if (axis < -rank || axis > rank)
    return {};
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= inputType.getDimSize(i);
  if (resultType.getShape() != ArrayRef<int64_t>{outer, inner})
    return {};
  return foldReshapeLike(*this, adaptor.getInput());
}

OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  DenseElementsAttr data = getDense(adaptor.getData());
  if (!resultType || !data)
    return {};
  ArrayRef<int64_t> shape = data.getType().getShape();
  int64_t rank = shape.size();
  SmallVector<bool> drop(rank, false);
  if (isNoneValue(getAxes())) {
    for (int64_t i = 0; i < rank; ++i)
      drop[i] = shape[i] == 1;
  } else {
    std::optional<SmallVector<int64_t>> axes = getInts(adaptor.getAxes());
    if (!axes)
      return {};
    for (int64_t a : *axes) {
      std::optional<int64_t> axis = normalizeAxis(a, rank);
      if (!axis || shape[*axis] != 1)
        return {};
      drop[*axis] = true;
    }
  }
  SmallVector<int64_t> outShape;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      outShape.push_back(shape[i]);
  if (ArrayRef<int64_t>(outShape) != resultType.getShape())
    return {};
  return foldReshapeLike(*this, adaptor.getData());
}

OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  DenseElementsAttr data = getDense(adaptor.getData());
  std::optional<SmallVector<int64_t>> axes = getInts(adaptor.getAxes());
  if (!resultType || !data || !axes)
    return {};
  ArrayRef<int64_t> shape = data.getType().getShape();
  int64_t outRank = shape.size() + axes->size();
  SmallVector<bool> inserted(outRank, false);
  for (int64_t a : *axes) {
    std::optional<int64_t> axis = normalizeAxis(a, outRank);
    if (!axis || inserted[*axis])
      return {};
    inserted[*axis] = true;
  }
  SmallVector<int64_t> outShape;
  for (int64_t i = 0, j = 0; i < outRank; ++i)
    outShape.push_back(inserted[i] ? 1 : shape[j++]);
  if (ArrayRef<int64_t>(outShape) != resultType.getShape())
    return {};
  return foldReshapeLike(*this, adaptor.getData());
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  DenseElementsAttr input = getDense(adaptor.getInput());
  std::optional<SmallVector<int64_t>> shape = getInts(adaptor.getShape());
  if (!resultType || !input || !shape ||
      input.getType().getElementType() != resultType.getElementType())
    return {};
  ArrayRef<int64_t> inShape = input.getType().getShape();
  std::optional<SmallVector<int64_t>> outShape =
      broadcastShapes(inShape, *shape);
  if (!outShape || ArrayRef<int64_t>(*outShape) != resultType.getShape())
    return {};
  if (input.isSplat())
    return DenseElementsAttr::get(resultType, input.getSplatValue<Attribute>());
  SmallVector<Attribute> elements = getElements(input), result;
  for (int64_t src : broadcastIndices(inShape, *outShape))
    result.push_back(elements[src]);
  return DenseElementsAttr::get(resultType, result);
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  DenseElementsAttr input = getDense(adaptor.getInput());
  if (!resultType || !input ||
      input.getType().getShape() != resultType.getShape())
    return {};
  Type from = input.getType().getElementType(),
       to = resultType.getElementType();
  // Float8 and other exotic formats have saturation/rounding modes: leave them
  // alone.
  auto isPlainFloat = [](Type t) {
    return t.isF16() || t.isBF16() || t.isF32() || t.isF64();
  };
  if ((isa<FloatType>(from) && !isPlainFloat(from)) ||
      (isa<FloatType>(to) && !isPlainFloat(to)))
    return {};
  if (from == to)
    return input.reshape(resultType);

  if (isa<IntegerType>(from)) {
    std::optional<SmallVector<int64_t>> values =
        getIntValues(cast<ElementsAttr>(input));
    if (!values)
      return {};
    if (to.isInteger(1)) {
      SmallVector<int64_t> result;
      for (int64_t v : *values)
        result.push_back(v != 0);
      return makeInts(resultType, result);
    }
    if (isa<IntegerType>(to))
      return makeInts(resultType, *values); // null when a value does not fit
    // int64 -> double can round; round once, from the exact integer, to the
    // target type.
    SmallVector<APFloat> result;
    auto floatType = cast<FloatType>(to);
    for (int64_t v : *values) {
      APFloat x(floatType.getFloatSemantics());
      x.convertFromAPInt(APInt(64, static_cast<uint64_t>(v), /*isSigned=*/true),
                         /*isSigned=*/true, APFloat::rmNearestTiesToEven);
      result.push_back(x);
    }
    return DenseElementsAttr::get(resultType, result);
  }

  std::optional<SmallVector<double>> values =
      getFloatValues(cast<ElementsAttr>(input));
  if (!values)
    return {};
  if (to.isInteger(1)) {
    SmallVector<int64_t> result;
    for (double v : *values) {
      if (std::isnan(v))
        return {};
      result.push_back(v != 0);
    }
    return makeInts(resultType, result);
  }
  if (isa<IntegerType>(to)) {
    // Truncation toward zero; out-of-range and NaN are undefined in ONNX: do
    // not fold.
    SmallVector<int64_t> result;
    for (double v : *values) {
      if (!std::isfinite(v) || v >= 9.2e18 || v <= -9.2e18)
        return {};
      result.push_back(static_cast<int64_t>(std::trunc(v)));
    }
    return makeInts(resultType, result);
  }
  return makeFloats(resultType, *values);
}

//===----------------------------------------------------------------------===//
// Add, Sub, Mul, Div, Equal, Where
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor.getA(), adaptor.getB(), BinaryKind::Add);
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor.getA(), adaptor.getB(), BinaryKind::Sub);
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor.getA(), adaptor.getB(), BinaryKind::Mul);
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor.getA(), adaptor.getB(), BinaryKind::Div);
}

OpFoldResult EqualOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor.getA(), adaptor.getB(), BinaryKind::Equal);
}

OpFoldResult LessOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor.getA(), adaptor.getB(), BinaryKind::Less);
}

OpFoldResult GreaterOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor.getA(), adaptor.getB(),
                    BinaryKind::Greater);
}

OpFoldResult LessOrEqualOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor.getA(), adaptor.getB(),
                    BinaryKind::LessOrEqual);
}

OpFoldResult GreaterOrEqualOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor.getA(), adaptor.getB(),
                    BinaryKind::GreaterOrEqual);
}

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor.getA(), adaptor.getB(), BinaryKind::And);
}

OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor.getA(), adaptor.getB(), BinaryKind::Or);
}

OpFoldResult XorOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor.getA(), adaptor.getB(), BinaryKind::Xor);
}

OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor.getA(), adaptor.getB(),
                    getFmod() ? BinaryKind::FMod : BinaryKind::Mod);
}

// Min and Max are variadic: the two-operand form folds.
OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  ArrayRef<Attribute> operands = adaptor.getData_0();
  if (operands.size() != 2)
    return {};
  return foldBinary(*this, operands[0], operands[1], BinaryKind::Min);
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  ArrayRef<Attribute> operands = adaptor.getData_0();
  if (operands.size() != 2)
    return {};
  return foldBinary(*this, operands[0], operands[1], BinaryKind::Max);
}

namespace {
enum class UnaryKind { Neg, Abs, Not };

OpFoldResult foldUnary(Operation *op, Attribute operandAttr, UnaryKind kind) {
  RankedTensorType resultType = getFoldableResultType(op);
  DenseElementsAttr operand = getDense(operandAttr);
  if (!resultType || !operand ||
      operand.getType().getElementType() != resultType.getElementType() ||
      operand.getType().getShape() != resultType.getShape())
    return {};
  Type elementType = resultType.getElementType();
  if (isa<IntegerType>(elementType)) {
    std::optional<SmallVector<int64_t>> values =
        getIntValues(cast<ElementsAttr>(operand));
    if (!values)
      return {};
    SmallVector<int64_t> result;
    for (int64_t v : *values) {
      if (kind == UnaryKind::Not) {
        if (!elementType.isInteger(1))
          return {};
        result.push_back(v == 0);
        continue;
      }
      if (v == std::numeric_limits<int64_t>::min())
        return {};
      result.push_back(kind == UnaryKind::Neg ? -v : std::abs(v));
    }
    return makeInts(resultType, result); // rejects -(-128) in i8, etc.
  }
  if (kind == UnaryKind::Not || !isa<FloatType>(elementType) ||
      elementType.getIntOrFloatBitWidth() > 64)
    return {};
  std::optional<SmallVector<double>> values =
      getFloatValues(cast<ElementsAttr>(operand));
  if (!values)
    return {};
  SmallVector<double> result;
  for (double v : *values)
    result.push_back(kind == UnaryKind::Neg ? -v : std::fabs(v));
  return makeFloats(resultType, result);
}
} // namespace

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  return foldUnary(*this, adaptor.getX(), UnaryKind::Neg);
}

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  return foldUnary(*this, adaptor.getX(), UnaryKind::Abs);
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  return foldUnary(*this, adaptor.getX(), UnaryKind::Not);
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  DenseElementsAttr cond = getDense(adaptor.getCondition());
  DenseElementsAttr x = getDense(adaptor.getX()), y = getDense(adaptor.getY());
  if (!resultType || !cond || !x || !y ||
      !cond.getType().getElementType().isInteger(1) ||
      x.getType().getElementType() != resultType.getElementType() ||
      y.getType().getElementType() != resultType.getElementType())
    return {};
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(cond.getType().getShape(), x.getType().getShape());
  if (shape)
    shape = broadcastShapes(*shape, y.getType().getShape());
  if (!shape || ArrayRef<int64_t>(*shape) != resultType.getShape())
    return {};
  std::optional<SmallVector<int64_t>> c =
      getIntValues(cast<ElementsAttr>(cond));
  if (!c)
    return {};
  SmallVector<int64_t> ci = broadcastIndices(cond.getType().getShape(), *shape);
  SmallVector<int64_t> xi = broadcastIndices(x.getType().getShape(), *shape);
  SmallVector<int64_t> yi = broadcastIndices(y.getType().getShape(), *shape);
  SmallVector<Attribute> xs = getElements(x), ys = getElements(y), result;
  for (size_t i = 0; i < ci.size(); ++i)
    result.push_back((*c)[ci[i]] ? xs[xi[i]] : ys[yi[i]]);
  return DenseElementsAttr::get(resultType, result);
}

//===----------------------------------------------------------------------===//
// Range, ConstantOfShape
//===----------------------------------------------------------------------===//

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) {
  // Integer ranges only: float ranges accumulate rounding differently per
  // backend.
  RankedTensorType resultType = getFoldableResultType(*this);
  if (!resultType || !isa<IntegerType>(resultType.getElementType()))
    return {};
  std::optional<SmallVector<int64_t>> start = getInts(adaptor.getStart());
  std::optional<SmallVector<int64_t>> limit = getInts(adaptor.getLimit());
  std::optional<SmallVector<int64_t>> delta = getInts(adaptor.getDelta());
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 ||
      delta->size() != 1 || (*delta)[0] == 0)
    return {};
  int64_t s = (*start)[0], l = (*limit)[0], d = (*delta)[0];
  // n = max(ceil((limit - start) / delta), 0), computed without overflow.
  __int128 span = (__int128)l - s;
  __int128 n = span / d + ((span % d != 0 && ((span > 0) == (d > 0))) ? 1 : 0);
  if (n < 0)
    n = 0;
  if (n > kMaxFoldElements || resultType.getRank() != 1 ||
      resultType.getDimSize(0) != (int64_t)n)
    return {};
  SmallVector<int64_t> values;
  for (int64_t i = 0; i < (int64_t)n; ++i)
    values.push_back(s + i * d);
  return makeInts(resultType, values);
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor adaptor) {
  RankedTensorType resultType = getFoldableResultType(*this);
  std::optional<SmallVector<int64_t>> shape = getInts(adaptor.getInput());
  if (!resultType || !shape ||
      ArrayRef<int64_t>(*shape) != resultType.getShape())
    return {};
  ElementsAttr value = getValueAttr();
  if (!value) // default: a float32 zero
    return resultType.getElementType().isF32()
               ? makeFloats(resultType, SmallVector<double>(
                                            resultType.getNumElements(), 0.0))
               : DenseElementsAttr();
  DenseElementsAttr dense = toDenseElements(value, 1);
  if (!dense || dense.getType().getNumElements() != 1 ||
      dense.getType().getElementType() != resultType.getElementType())
    return {};
  return DenseElementsAttr::get(resultType,
                                *dense.getValues<Attribute>().begin());
}
