//===- Normalization.cpp - Shape inference of normalizations --------------===//
//
// BatchNormalization, LayerNormalization, RMSNormalization,
// InstanceNormalization, GroupNormalization, MeanVarianceNormalization, LRN.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;

namespace kiln::onnx {
namespace {

// Checks that operand `index` (named `name`) is 1-D of size `size`.
LogicalResult checkChannelVector(Operation *op, unsigned index, StringRef name,
                                 int64_t size, bool optional = false) {
  FailureOr<RankedTensorType> t = optional
                                      ? getOptionalInputType(op, index, name)
                                      : getInputType(op, index, name);
  if (failed(t))
    return failure();
  if (*t && (t->getRank() != 1 || t->getDimSize(0) != size)) {
    emitNodeError(op) << "input '" << name << "' must be 1-D of size " << size
                      << ", got " << *t;
    return failure();
  }
  return success();
}

// BatchNormalization (X, scale, B, input_mean, input_var): Y as X; running_mean
// and running_var (C) are typed too, even in inference mode where the node has
// only Y.
LogicalResult inferBatchNormalization(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  if (failed(x))
    return failure();
  if (x->getRank() < 2) {
    emitNodeError(op) << "X must have rank >= 2 (N, C, ...), got " << *x;
    return failure();
  }
  int64_t c = x->getDimSize(1);
  const char *names[] = {"scale", "B", "input_mean", "input_var"};
  for (unsigned i = 1; i <= 4; ++i)
    if (failed(checkChannelVector(op, i, names[i - 1], c)))
      return failure();
  if (failed(setResultType(op, 0, x->getShape(), x->getElementType())))
    return failure();
  Type statType =
      cast<RankedTensorType>(op->getOperand(3).getType()).getElementType();
  for (unsigned i = 1, e = op->getNumResults(); i < e; ++i)
    if (failed(setResultType(op, i, {c}, statType)))
      return failure();
  return success();
}

// The element type of the statistics chosen by stash_type (1 = f32).
FailureOr<Type> getStashType(Operation *op) {
  int64_t stash = 1;
  if (auto attr = op->getAttrOfType<IntegerAttr>("stash_type"))
    stash = attr.getInt();
  return getElementTypeFromAttr(op, stash, "stash_type");
}

// LayerNormalization (X, Scale, B) and RMSNormalization (X, scale): Y as X;
// Scale and B broadcast to X.shape[axis:]. LayerNormalization's Mean and
// InvStdDev have X's shape with the normalized axes kept as 1, in the
// stash_type (typed even when absent).
LogicalResult inferLayerNormLike(Operation *op, unsigned numParams) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  if (failed(x))
    return failure();
  int64_t axisAttr = -1;
  if (auto attr = op->getAttrOfType<IntegerAttr>("axis"))
    axisAttr = attr.getInt();
  FailureOr<int64_t> axis = normalizeAxis(op, axisAttr, x->getRank());
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> normalized = x->getShape().drop_front(*axis);
  const char *names[] = {"Scale", "B"};
  for (unsigned i = 1; i <= numParams; ++i) {
    FailureOr<RankedTensorType> p =
        i == 1 ? getInputType(op, i, names[i - 1])
               : getOptionalInputType(op, i, names[i - 1]);
    if (failed(p))
      return failure();
    if (*p && !isUnidirectionalBroadcastable(p->getShape(), normalized)) {
      emitNodeError(op) << "input '" << names[i - 1] << "' " << *p
                        << " does not broadcast to the normalized shape of X "
                        << *x << " from axis " << *axis;
      return failure();
    }
  }
  if (failed(setResultType(op, 0, x->getShape(), x->getElementType())))
    return failure();
  if (op->getNumResults() == 1)
    return success();
  FailureOr<Type> stash = getStashType(op);
  if (failed(stash))
    return failure();
  SmallVector<int64_t> statShape(x->getShape());
  for (int64_t i = *axis, e = statShape.size(); i < e; ++i)
    statShape[i] = 1;
  for (unsigned i = 1, e = op->getNumResults(); i < e; ++i)
    if (failed(setResultType(op, i, statShape, *stash)))
      return failure();
  return success();
}

LogicalResult inferLayerNormalization(Operation *op) {
  return inferLayerNormLike(op, 2);
}
LogicalResult inferRMSNormalization(Operation *op) {
  return inferLayerNormLike(op, 1);
}

// InstanceNormalization (input, scale, B): scale and B are (C).
LogicalResult inferInstanceNormalization(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  if (failed(x))
    return failure();
  if (x->getRank() < 3) {
    emitNodeError(op) << "input must have rank >= 3 (N, C, D1, ...), got "
                      << *x;
    return failure();
  }
  int64_t c = x->getDimSize(1);
  if (failed(checkChannelVector(op, 1, "scale", c)) ||
      failed(checkChannelVector(op, 2, "B", c)))
    return failure();
  return setResultType(op, 0, x->getShape(), x->getElementType());
}

// GroupNormalization (X, scale, bias): C divisible by num_groups; scale and
// bias are (C).
LogicalResult inferGroupNormalization(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  if (failed(x))
    return failure();
  if (x->getRank() < 3) {
    emitNodeError(op) << "X must have rank >= 3 (N, C, D1, ...), got " << *x;
    return failure();
  }
  int64_t c = x->getDimSize(1);
  int64_t groups = cast<GroupNormalizationOp>(op).getNumGroups();
  if (groups <= 0 || c % groups != 0) {
    emitNodeError(op) << "channels " << c << " are not divisible by num_groups "
                      << groups;
    return failure();
  }
  if (failed(checkChannelVector(op, 1, "scale", c)) ||
      failed(checkChannelVector(op, 2, "bias", c)))
    return failure();
  return setResultType(op, 0, x->getShape(), x->getElementType());
}

// MeanVarianceNormalization, LRN: same as X.
LogicalResult inferSameAsX(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  if (failed(x))
    return failure();
  return setResultType(op, 0, x->getShape(), x->getElementType());
}

} // namespace

void registerNormalizationShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferBatchNormalization, BatchNormalizationOp>(ctx);
    attachInferShapes<inferLayerNormalization, LayerNormalizationOp>(ctx);
    attachInferShapes<inferRMSNormalization, RMSNormalizationOp>(ctx);
    attachInferShapes<inferInstanceNormalization, InstanceNormalizationOp>(ctx);
    attachInferShapes<inferGroupNormalization, GroupNormalizationOp>(ctx);
    attachInferShapes<inferSameAsX, MeanVarianceNormalizationOp, LRNOp>(ctx);
  });
}

} // namespace kiln::onnx
