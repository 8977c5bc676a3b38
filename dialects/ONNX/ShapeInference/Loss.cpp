//===- Loss.cpp - Shape inference of the loss ops -------------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;

namespace kiln::onnx {
namespace {

// The loss of NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss (input or
// scores, target or labels, ...): the target's shape with reduction "none",
// else a scalar; the input's element type.
LogicalResult setLossType(Operation *op, RankedTensorType input,
                          RankedTensorType target) {
  if (input.getRank() < 2) {
    emitNodeError(op) << "the input must have rank >= 2, got " << input;
    return failure();
  }
  auto reductionAttr = op->getAttrOfType<StringAttr>("reduction");
  StringRef reduction = reductionAttr ? reductionAttr.getValue() : "mean";
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    emitNodeError(op) << "unknown reduction '" << reduction << "'";
    return failure();
  }
  ArrayRef<int64_t> shape;
  if (reduction == "none")
    shape = target.getShape();
  return setResultType(op, 0, shape, input.getElementType());
}

LogicalResult inferNegativeLogLikelihoodLoss(Operation *op) {
  FailureOr<RankedTensorType> input = getInputType(op, 0, "input");
  FailureOr<RankedTensorType> target = getInputType(op, 1, "target");
  if (failed(input) || failed(target))
    return failure();
  return setLossType(op, *input, *target);
}

// SoftmaxCrossEntropyLoss also gives log_prob, the scores' shape.
LogicalResult inferSoftmaxCrossEntropyLoss(Operation *op) {
  FailureOr<RankedTensorType> scores = getInputType(op, 0, "scores");
  FailureOr<RankedTensorType> labels = getInputType(op, 1, "labels");
  if (failed(scores) || failed(labels) || failed(setLossType(op, *scores, *labels)))
    return failure();
  return setResultType(op, 1, scores->getShape(), scores->getElementType());
}

} // namespace

void registerLossShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferNegativeLogLikelihoodLoss, NegativeLogLikelihoodLossOp>(ctx);
    attachInferShapes<inferSoftmaxCrossEntropyLoss, SoftmaxCrossEntropyLossOp>(ctx);
  });
}

} // namespace kiln::onnx
