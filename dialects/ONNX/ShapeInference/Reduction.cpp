//===- Reduction.cpp - Shape inference of reductions ----------------------===//
//
// Reduce* (axes input, keepdims, noop_with_empty_axes), ArgMax/ArgMin, TopK.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

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

// Reduce*(data, axes): axes is an optional constant; absent or empty reduces
// every axis, or none with noop_with_empty_axes = 1.
LogicalResult inferReduce(Operation *op) {
  FailureOr<RankedTensorType> data = getInputType(op, 0, "data");
  if (failed(data))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      getOptionalConstantInts(op, 1, "axes");
  if (failed(axes))
    return failure();
  bool keepDims = getIntAttr(op, "keepdims", 1) != 0;
  bool noop = getIntAttr(op, "noop_with_empty_axes", 0) != 0;
  int64_t rank = data->getRank();
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
