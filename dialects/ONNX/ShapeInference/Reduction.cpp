//===- Reduction.cpp - Shape inference of reductions ----------------------===//
//
// Reduce* (axes input, keepdims, noop_with_empty_axes), ArgMax/ArgMin, TopK.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;

namespace kiln::onnx {
namespace {

// The shape of `shape` reduced over `axes` (normalized), keeping them as 1 or
// dropping them.
SmallVector<int64_t> reduceShape(ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> axes, bool keepDims) {
  SmallVector<int64_t> result;
  for (int64_t i = 0, e = shape.size(); i < e; ++i) {
    if (!llvm::is_contained(axes, i))
      result.push_back(shape[i]);
    else if (keepDims)
      result.push_back(1);
  }
  return result;
}

// Whether operand `index` is present and a tensor of static shape with no
// elements.
bool isEmptyTensor(Operation *op, unsigned index) {
  if (index >= op->getNumOperands() || isNoneValue(op->getOperand(index)))
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getOperand(index).getType());
  return type && type.hasStaticShape() && type.getNumElements() == 0;
}

// Reduce*(data, axes): axes is an optional constant; absent or empty reduces
// every axis, or none with noop_with_empty_axes = 1. Axes read at run time
// give run dims.
LogicalResult inferReduce(Operation *op) {
  FailureOr<RankedTensorType> data = getInputType(op, 0, "data");
  if (failed(data))
    return failure();
  bool keepDims = getIntAttr(op, "keepdims", 1) != 0;
  int64_t rank = data->getRank();
  // Axes the run decides (a graph input, ...): as many distinct axes as the
  // input has values, so the rank is known; each reduced-or-kept dim is a
  // run dim (docs/dynamic-shapes.md), except a dim of 1, which stays 1 with
  // keepdims, and all axes reduced.
  if (isRunTimeOperand(op, 1) && !isEmptyTensor(op, 1)) {
    FailureOr<int64_t> n = getRunTimeValuesLength(op, 1, "axes");
    if (failed(n))
      return failure();
    if (!data->hasStaticShape()) {
      emitNodeError(op) << "axes read at run time need a static shape of "
                           "'data', got "
                        << *data;
      return failure();
    }
    if (*n > rank) {
      emitNodeError(op) << "input 'axes' holds " << *n
                        << " values, more than the rank " << rank
                        << " of 'data' (the axes must be distinct)";
      return failure();
    }
    SmallVector<int64_t> shape;
    if (keepDims)
      for (int64_t d : data->getShape())
        shape.push_back(d == 1 || *n == rank ? 1 : ShapedType::kDynamic);
    else
      shape.assign(rank - *n, ShapedType::kDynamic);
    return setResultType(op, 0, shape, data->getElementType());
  }
  // An axes input with no elements (a graph input of shape [0]) is an
  // empty list whatever its origin.
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      isEmptyTensor(op, 1) ? FailureOr<std::optional<SmallVector<int64_t>>>(
                                 std::optional(SmallVector<int64_t>()))
                           : getOptionalConstantInts(op, 1, "axes");
  if (failed(axes))
    return failure();
  bool noop = getIntAttr(op, "noop_with_empty_axes", 0) != 0;
  SmallVector<int64_t> reduced;
  if (!*axes || (*axes)->empty()) {
    if (noop)
      return setResultType(op, 0, data->getShape(), data->getElementType());
    for (int64_t i = 0; i < rank; ++i)
      reduced.push_back(i);
  } else {
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(op, **axes, rank);
    if (failed(normalized))
      return failure();
    reduced = *normalized;
  }
  return setResultType(op, 0, reduceShape(data->getShape(), reduced, keepDims),
                       data->getElementType());
}

// ArgMax, ArgMin: i64, one axis reduced.
LogicalResult inferArgReduce(Operation *op) {
  FailureOr<RankedTensorType> data = getInputType(op, 0, "data");
  if (failed(data))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(op, getIntAttr(op, "axis", 0), data->getRank());
  if (failed(axis))
    return failure();
  bool keepDims = getIntAttr(op, "keepdims", 1) != 0;
  return setResultType(op, 0, reduceShape(data->getShape(), {*axis}, keepDims),
                       IntegerType::get(op->getContext(), 64));
}

// TopK(X, K): Values (X's type) and Indices (i64) with dim `axis` replaced by
// K.
LogicalResult inferTopK(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(op, getIntAttr(op, "axis", -1), x->getRank());
  if (failed(axis))
    return failure();
  // K read at run time (run dims): the results' axis is decided by its value
  // (the lowering checks 0 <= K <= the axis' size).
  if (isRunTimeOperand(op, 1)) {
    FailureOr<int64_t> length = getRunTimeValuesLength(op, 1, "K");
    if (failed(length))
      return failure();
    if (*length != 1) {
      emitNodeError(op) << "input 'K' must hold one value, got " << *length;
      return failure();
    }
    SmallVector<int64_t> shape(x->getShape());
    shape[*axis] = ShapedType::kDynamic;
    if (failed(setResultType(op, 0, shape, x->getElementType())))
      return failure();
    return setResultType(op, 1, shape, IntegerType::get(op->getContext(), 64));
  }
  FailureOr<SmallVector<int64_t>> k = getConstantInts(op, 1, "K");
  if (failed(k))
    return failure();
  if (k->size() != 1) {
    emitNodeError(op) << "input 'K' must hold one value, got " << k->size();
    return failure();
  }
  int64_t kValue = (*k)[0];
  if (kValue < 0 || kValue > x->getDimSize(*axis)) {
    emitNodeError(op) << "K = " << kValue << " is out of range for axis "
                      << *axis << " of size " << x->getDimSize(*axis);
    return failure();
  }
  SmallVector<int64_t> shape(x->getShape());
  shape[*axis] = kValue;
  if (failed(setResultType(op, 0, shape, x->getElementType())))
    return failure();
  return setResultType(op, 1, shape, IntegerType::get(op->getContext(), 64));
}

} // namespace

void registerReductionShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferReduce, ReduceSumOp, ReduceMeanOp, ReduceMaxOp,
                      ReduceMinOp, ReduceProdOp, ReduceL1Op, ReduceL2Op,
                      ReduceLogSumOp, ReduceLogSumExpOp, ReduceSumSquareOp>(
        ctx);
    attachInferShapes<inferArgReduce, ArgMaxOp, ArgMinOp>(ctx);
    attachInferShapes<inferTopK, TopKOp>(ctx);
  });
}

} // namespace kiln::onnx
