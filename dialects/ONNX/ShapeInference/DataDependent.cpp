//===- DataDependent.cpp - Sizes that values decide at run time ---------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;

namespace kiln::onnx {
namespace {

// NonMaxSuppression(boxes [B, N, 4], scores [B, C, N], ...): selected_indices
// [?, 3] int64, the number of rows decided by the run (a run dim).
LogicalResult inferNonMaxSuppression(Operation *op) {
  FailureOr<RankedTensorType> boxes = getInputType(op, 0, "boxes");
  FailureOr<RankedTensorType> scores = getInputType(op, 1, "scores");
  if (failed(boxes) || failed(scores))
    return failure();
  if (boxes->getRank() != 3 || boxes->getDimSize(2) != 4 ||
      scores->getRank() != 3 || boxes->getDimSize(0) != scores->getDimSize(0) ||
      boxes->getDimSize(1) != scores->getDimSize(2)) {
    emitNodeError(op) << "boxes " << *boxes << " and scores " << *scores
                      << " must be [batch, boxes, 4] and [batch, classes, "
                         "boxes]";
    return failure();
  }
  return setResultType(op, 0, {ShapedType::kDynamic, 3},
                       IntegerType::get(op->getContext(), 64));
}

// Compress(input, condition, axis): the input's shape with dim `axis` (of the
// flattened input without `axis`) the number of true conditions, a run dim.
LogicalResult inferCompress(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  FailureOr<RankedTensorType> cond = getInputType(op, 1, "condition");
  if (failed(x) || failed(cond))
    return failure();
  if (cond->getRank() != 1) {
    emitNodeError(op) << "condition must be 1-D, got " << *cond;
    return failure();
  }
  SmallVector<int64_t> shape;
  int64_t dim;
  if (auto axisAttr = op->getAttrOfType<IntegerAttr>("axis")) {
    FailureOr<int64_t> axis = normalizeAxis(op, axisAttr.getInt(), x->getRank());
    if (failed(axis))
      return failure();
    dim = x->getDimSize(*axis);
    shape.assign(x->getShape().begin(), x->getShape().end());
    shape[*axis] = ShapedType::kDynamic;
  } else {
    dim = x->getNumElements();
    shape.push_back(ShapedType::kDynamic);
  }
  if (cond->getDimSize(0) > dim) {
    emitNodeError(op) << "condition has " << cond->getDimSize(0)
                      << " entries, more than the " << dim
                      << " it selects from";
    return failure();
  }
  return setResultType(op, 0, shape, x->getElementType());
}

// NonZero(X): [rank(X), ?] int64, the indices of the non-zero elements (a
// run dim: their number).
LogicalResult inferNonZero(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  if (failed(x))
    return failure();
  if (x->getRank() == 0) {
    // The spec's [0, N] and onnxruntime's (numpy's) [1, N] differ.
    emitNodeError(op) << "a scalar input is not supported (the ONNX spec gives "
                         "[0, N] indices, onnxruntime [1, N])";
    return failure();
  }
  return setResultType(op, 0, {x->getRank(), ShapedType::kDynamic},
                       IntegerType::get(op->getContext(), 64));
}

// Unique(X, axis, sorted): Y is X with dim `axis` (the flattened X without
// one) the number of unique slices, a run dim, shared by indices and counts;
// inverse_indices has one entry per slice of X.
LogicalResult inferUnique(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  if (failed(x))
    return failure();
  SmallVector<int64_t> shape;
  int64_t slices;
  if (auto axisAttr = op->getAttrOfType<IntegerAttr>("axis")) {
    FailureOr<int64_t> axis = normalizeAxis(op, axisAttr.getInt(), x->getRank());
    if (failed(axis))
      return failure();
    slices = x->getDimSize(*axis);
    shape.assign(x->getShape().begin(), x->getShape().end());
    shape[*axis] = ShapedType::kDynamic;
  } else {
    slices = x->getNumElements();
    shape.push_back(ShapedType::kDynamic);
  }
  Type i64 = IntegerType::get(op->getContext(), 64);
  if (failed(setResultType(op, 0, shape, x->getElementType())) ||
      failed(setResultType(op, 1, {ShapedType::kDynamic}, i64)) ||
      failed(setResultType(op, 2, {slices}, i64)) ||
      failed(setResultType(op, 3, {ShapedType::kDynamic}, i64)))
    return failure();
  return success();
}

} // namespace

void registerDataDependentShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferNonMaxSuppression, NonMaxSuppressionOp>(ctx);
    attachInferShapes<inferCompress, CompressOp>(ctx);
    attachInferShapes<inferNonZero, NonZeroOp>(ctx);
    attachInferShapes<inferUnique, UniqueOp>(ctx);
  });
}

} // namespace kiln::onnx
