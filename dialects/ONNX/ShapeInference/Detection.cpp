//===- Detection.cpp - Shape inference of detection post-processing -------===//

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

} // namespace

void registerDetectionShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferNonMaxSuppression, NonMaxSuppressionOp>(ctx);
  });
}

} // namespace kiln::onnx
