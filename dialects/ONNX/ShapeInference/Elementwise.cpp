//===- Elementwise.cpp - Shape inference of element-wise ops --------------===//
//
// Unary math and activations, broadcasting binary/variadic ops, comparisons and
// logic, Where, Clip, PRelu, Softmax-like ops, Dropout, Cast/CastLike and the
// *Like generators.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;

namespace kiln::onnx {
namespace {

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

// Y has the shape and element type of the first input.
LogicalResult inferSameAsInput(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  if (failed(x))
    return failure();
  for (unsigned i = 0, e = op->getNumResults(); i < e; ++i)
    if (failed(setResultType(op, i, x->getShape(), x->getElementType())))
      return failure();
  return success();
}

// Y has the shape of the first input and element type i1 (IsNaN, IsInf).
LogicalResult inferBoolSameShape(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  if (failed(x))
    return failure();
  return setResultType(op, 0, x->getShape(),
                       IntegerType::get(op->getContext(), 1));
}

// Softmax, LogSoftmax, Hardmax, LpNormalization: same as input, `axis` must be
// in range.
LogicalResult inferSameWithAxis(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  if (failed(x))
    return failure();
  if (auto axis = op->getAttrOfType<IntegerAttr>("axis"))
    if (failed(normalizeAxis(op, axis.getInt(), x->getRank())))
      return failure();
  return setResultType(op, 0, x->getShape(), x->getElementType());
}

// CumSum, CumProd: same as x; `axis` is a scalar (its value is read at run
// time).
LogicalResult inferCumulative(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "x");
  FailureOr<RankedTensorType> axis = getInputType(op, 1, "axis");
  if (failed(x) || failed(axis))
    return failure();
  if (axis->getNumElements() != 1 || axis->getRank() > 1) {
    emitNodeError(op) << "input 'axis' must be a scalar, got " << *axis;
    return failure();
  }
  if (std::optional<SmallVector<int64_t>> a =
          getConstantIntValues(op->getOperand(1)))
    if (failed(normalizeAxis(op, (*a)[0], x->getRank())))
      return failure();
  return setResultType(op, 0, x->getShape(), x->getElementType());
}

// Trilu: same as input, rank >= 2, k a scalar when given.
LogicalResult inferTrilu(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  FailureOr<RankedTensorType> k = getOptionalInputType(op, 1, "k");
  if (failed(x) || failed(k))
    return failure();
  if (x->getRank() < 2) {
    emitNodeError(op) << "input must have rank >= 2, got " << *x;
    return failure();
  }
  if (*k && k->getNumElements() != 1) {
    emitNodeError(op) << "input 'k' must be a scalar, got " << *k;
    return failure();
  }
  return setResultType(op, 0, x->getShape(), x->getElementType());
}

// Clip: same as input; min and max, when present, are scalars of the input's
// type.
LogicalResult inferClip(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  if (failed(x))
    return failure();
  const char *names[] = {"min", "max"};
  for (unsigned i = 1; i < 3; ++i) {
    FailureOr<RankedTensorType> bound =
        getOptionalInputType(op, i, names[i - 1]);
    if (failed(bound))
      return failure();
    if (!*bound)
      continue;
    if (bound->getNumElements() != 1 || bound->getRank() > 1) {
      emitNodeError(op) << "input '" << names[i - 1]
                        << "' must be a scalar, got " << *bound;
      return failure();
    }
    if (failed(checkSameElementType(op, {*x, *bound})))
      return failure();
  }
  return setResultType(op, 0, x->getShape(), x->getElementType());
}

// Dropout: output as data; mask i1 of the same shape (typed even when the node
// leaves it out).
LogicalResult inferDropout(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "data");
  if (failed(x))
    return failure();
  if (failed(setResultType(op, 0, x->getShape(), x->getElementType())))
    return failure();
  return setResultType(op, 1, x->getShape(),
                       IntegerType::get(op->getContext(), 1));
}

// Cast: the shape of input, the element type of `to`.
LogicalResult inferCast(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  if (failed(x))
    return failure();
  FailureOr<Type> to =
      getElementTypeFromAttr(op, cast<CastOp>(op).getTo(), "to");
  if (failed(to))
    return failure();
  return setResultType(op, 0, x->getShape(), *to);
}

// CastLike: the shape of input, the element type of target_type.
LogicalResult inferCastLike(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  FailureOr<RankedTensorType> target = getInputType(op, 1, "target_type");
  if (failed(x) || failed(target))
    return failure();
  return setResultType(op, 0, x->getShape(), target->getElementType());
}

// Bernoulli, RandomNormalLike, RandomUniformLike: the shape of input, the
// element type of `dtype` when set, else the input's.
LogicalResult inferLikeWithDtype(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  if (failed(x))
    return failure();
  Type elementType = x->getElementType();
  if (auto dtype = op->getAttrOfType<IntegerAttr>("dtype")) {
    FailureOr<Type> t = getElementTypeFromAttr(op, dtype.getInt(), "dtype");
    if (failed(t))
      return failure();
    elementType = *t;
  }
  return setResultType(op, 0, x->getShape(), elementType);
}

// EyeLike: a 2-D input; dtype or the input's element type.
LogicalResult inferEyeLike(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  if (failed(x))
    return failure();
  if (x->getRank() != 2) {
    emitNodeError(op) << "input must be 2-D, got " << *x;
    return failure();
  }
  return inferLikeWithDtype(op);
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

// The broadcast shape of all (non-none) operands, or failure. `sameElementType`
// checks the operands starting at `firstChecked` share one element type.
FailureOr<SmallVector<int64_t>>
broadcastOperands(Operation *op, SmallVectorImpl<RankedTensorType> &types,
                  bool sameElementType, unsigned firstChecked = 0) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i) {
    std::string name = "input " + std::to_string(i);
    FailureOr<RankedTensorType> t = getInputType(op, i, name);
    if (failed(t))
      return failure();
    types.push_back(*t);
  }
  if (types.empty()) {
    emitNodeError(op) << "expects at least one input";
    return failure();
  }
  for (RankedTensorType t : types)
    shapes.push_back(t.getShape());
  if (sameElementType && failed(checkSameElementType(
                             op, ArrayRef(types).drop_front(firstChecked))))
    return failure();
  return broadcastShapes(op, shapes);
}

// Add, Sub, Mul, Div, Mod, BitShift, Bitwise*, And/Or/Xor, Max, Min, Sum, Mean.
LogicalResult inferBroadcastSameType(Operation *op) {
  SmallVector<RankedTensorType> types;
  FailureOr<SmallVector<int64_t>> shape = broadcastOperands(op, types, true);
  if (failed(shape))
    return failure();
  return setResultType(op, 0, *shape, types[0].getElementType());
}

// Pow: the base's element type (the exponent may differ).
LogicalResult inferPow(Operation *op) {
  SmallVector<RankedTensorType> types;
  FailureOr<SmallVector<int64_t>> shape = broadcastOperands(op, types, false);
  if (failed(shape))
    return failure();
  return setResultType(op, 0, *shape, types[0].getElementType());
}

// Equal, Less, Greater, LessOrEqual, GreaterOrEqual: i1.
LogicalResult inferComparison(Operation *op) {
  SmallVector<RankedTensorType> types;
  FailureOr<SmallVector<int64_t>> shape = broadcastOperands(op, types, true);
  if (failed(shape))
    return failure();
  return setResultType(op, 0, *shape, IntegerType::get(op->getContext(), 1));
}

// Where: condition (i1), X, Y broadcast together; X's element type.
LogicalResult inferWhere(Operation *op) {
  SmallVector<RankedTensorType> types;
  FailureOr<SmallVector<int64_t>> shape =
      broadcastOperands(op, types, true, /*firstChecked=*/1);
  if (failed(shape))
    return failure();
  if (!types[0].getElementType().isInteger(1)) {
    emitNodeError(op) << "input 'condition' must be a bool (i1) tensor, got "
                      << types[0];
    return failure();
  }
  return setResultType(op, 0, *shape, types[1].getElementType());
}

// PRelu: slope broadcasts unidirectionally to X; Y has X's shape.
LogicalResult inferPRelu(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  FailureOr<RankedTensorType> slope = getInputType(op, 1, "slope");
  if (failed(x) || failed(slope) ||
      failed(checkSameElementType(op, {*x, *slope})))
    return failure();
  if (!isUnidirectionalBroadcastable(slope->getShape(), x->getShape())) {
    emitNodeError(op) << "slope " << *slope << " does not broadcast to X "
                      << *x;
    return failure();
  }
  return setResultType(op, 0, x->getShape(), x->getElementType());
}

} // namespace

void registerElementwiseShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferSameAsInput,
                      // Unary math.
                      AbsOp, AcosOp, AcoshOp, AsinOp, AsinhOp, AtanOp, AtanhOp,
                      CeilOp, CosOp, CoshOp, ErfOp, ExpOp, FloorOp, LogOp,
                      NegOp, ReciprocalOp, RoundOp, SignOp, SinOp, SinhOp,
                      SqrtOp, TanOp, TanhOp, NotOp, BitwiseNotOp, IdentityOp,
                      // Activations.
                      ReluOp, SigmoidOp, SoftplusOp, SoftsignOp, CeluOp, EluOp,
                      GeluOp, HardSigmoidOp, HardSwishOp, LeakyReluOp, MishOp,
                      SeluOp, ShrinkOp, ThresholdedReluOp, SwishOp,
                      // Same shape as the data.
                      ScatterElementsOp, ScatterNDOp>(ctx);
    attachInferShapes<inferBoolSameShape, IsNaNOp, IsInfOp>(ctx);
    attachInferShapes<inferSameWithAxis, SoftmaxOp, LogSoftmaxOp, HardmaxOp,
                      LpNormalizationOp>(ctx);
    attachInferShapes<inferCumulative, CumSumOp, CumProdOp>(ctx);
    attachInferShapes<inferTrilu, TriluOp>(ctx);
    attachInferShapes<inferClip, ClipOp>(ctx);
    attachInferShapes<inferDropout, DropoutOp>(ctx);
    attachInferShapes<inferCast, CastOp>(ctx);
    attachInferShapes<inferCastLike, CastLikeOp>(ctx);
    attachInferShapes<inferLikeWithDtype, BernoulliOp, RandomNormalLikeOp,
                      RandomUniformLikeOp>(ctx);
    attachInferShapes<inferEyeLike, EyeLikeOp>(ctx);
    attachInferShapes<inferBroadcastSameType, AddOp, SubOp, MulOp, DivOp, ModOp,
                      BitShiftOp, BitwiseAndOp, BitwiseOrOp, BitwiseXorOp,
                      AndOp, OrOp, XorOp, MaxOp, MinOp, SumOp, MeanOp>(ctx);
    attachInferShapes<inferPow, PowOp>(ctx);
    attachInferShapes<inferComparison, EqualOp, LessOp, GreaterOp,
                      LessOrEqualOp, GreaterOrEqualOp>(ctx);
    attachInferShapes<inferWhere, WhereOp>(ctx);
    attachInferShapes<inferPRelu, PReluOp>(ctx);
  });
}

} // namespace kiln::onnx
