//===- Linear.cpp - Shape inference of matrix products --------------------===//
//
// MatMul (numpy semantics: 1-D operands, batch broadcasting), Gemm,
// MatMulInteger, QLinearMatMul, Einsum, DFT, STFT.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/Einsum.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;

namespace kiln::onnx {

/// "inner dimensions differ" for K = `k` of A and `k2` of B; a symbolic K
/// (a `?` that shape inference could not resolve: a flatten's -1 over dims
/// of another tensor, ...) says so instead of printing its sentinel.
static InFlightDiagnostic emitInnerDimsDiffer(Operation *op, int64_t k,
                                              int64_t k2) {
  auto text = [](int64_t d) {
    return ShapedType::isDynamic(d) ? std::string("? (symbolic)")
                                    : std::to_string(d);
  };
  InFlightDiagnostic diag = emitNodeError(op);
  diag << "inner dimensions differ: A has K = " << text(k)
       << ", B has K = " << text(k2);
  return diag;
}

/// The result shape of numpy.matmul(a, b), or an error on `op`.
static FailureOr<SmallVector<int64_t>>
matmulShape(Operation *op, ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (a.empty() || b.empty()) {
    emitNodeError(op) << "MatMul operands must have rank >= 1";
    return failure();
  }
  SmallVector<int64_t> lhs(a), rhs(b);
  bool lhsVector = lhs.size() == 1, rhsVector = rhs.size() == 1;
  if (lhsVector)
    lhs.insert(lhs.begin(), 1);
  if (rhsVector)
    rhs.push_back(1);
  int64_t k = lhs.back(), k2 = rhs[rhs.size() - 2];
  if (k != k2) {
    InFlightDiagnostic diag = emitInnerDimsDiffer(op, k, k2);
    if (ShapedType::isDynamic(k) != ShapedType::isDynamic(k2))
      diag << "; the product's K must be static here (fix the model "
              "input's dims with --shape)";
    return failure();
  }
  FailureOr<SmallVector<int64_t>> batch = broadcastShapes(
      op, {ArrayRef(lhs).drop_back(2), ArrayRef(rhs).drop_back(2)});
  if (failed(batch))
    return failure();
  SmallVector<int64_t> result = *batch;
  if (!lhsVector)
    result.push_back(lhs[lhs.size() - 2]);
  if (!rhsVector)
    result.push_back(rhs.back());
  return result;
}

namespace {

LogicalResult inferMatMul(Operation *op) {
  FailureOr<RankedTensorType> a = getInputType(op, 0, "A");
  FailureOr<RankedTensorType> b = getInputType(op, 1, "B");
  if (failed(a) || failed(b) || failed(checkSameElementType(op, {*a, *b})))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      matmulShape(op, a->getShape(), b->getShape());
  if (failed(shape))
    return failure();
  return setResultType(op, 0, *shape, a->getElementType());
}

// MatMulInteger: int32 result.
LogicalResult inferMatMulInteger(Operation *op) {
  FailureOr<RankedTensorType> a = getInputType(op, 0, "A");
  FailureOr<RankedTensorType> b = getInputType(op, 1, "B");
  if (failed(a) || failed(b))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      matmulShape(op, a->getShape(), b->getShape());
  if (failed(shape))
    return failure();
  return setResultType(op, 0, *shape, IntegerType::get(op->getContext(), 32));
}

// QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
// y_zero_point): y_zero_point's element type.
LogicalResult inferQLinearMatMul(Operation *op) {
  FailureOr<RankedTensorType> a = getInputType(op, 0, "a");
  FailureOr<RankedTensorType> b = getInputType(op, 3, "b");
  FailureOr<RankedTensorType> yZeroPoint = getInputType(op, 7, "y_zero_point");
  if (failed(a) || failed(b) || failed(yZeroPoint))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      matmulShape(op, a->getShape(), b->getShape());
  if (failed(shape))
    return failure();
  return setResultType(op, 0, *shape, yZeroPoint->getElementType());
}

// Gemm: A (M, K) or (K, M) with transA, B (K, N) or (N, K) with transB; C
// broadcasts unidirectionally to (M, N).
LogicalResult inferGemm(Operation *op) {
  auto gemm = cast<GemmOp>(op);
  FailureOr<RankedTensorType> a = getInputType(op, 0, "A");
  FailureOr<RankedTensorType> b = getInputType(op, 1, "B");
  FailureOr<RankedTensorType> c = getOptionalInputType(op, 2, "C");
  if (failed(a) || failed(b) || failed(c) ||
      failed(checkSameElementType(op, {*a, *b, *c})))
    return failure();
  if (a->getRank() != 2 || b->getRank() != 2) {
    emitNodeError(op) << "A and B must be 2-D, got " << *a << " and " << *b;
    return failure();
  }
  bool transA = gemm.getTransA() != 0, transB = gemm.getTransB() != 0;
  int64_t m = a->getDimSize(transA ? 1 : 0), k = a->getDimSize(transA ? 0 : 1);
  int64_t k2 = b->getDimSize(transB ? 1 : 0), n = b->getDimSize(transB ? 0 : 1);
  if (k != k2) {
    InFlightDiagnostic diag = emitInnerDimsDiffer(op, k, k2);
    diag << " (transA = " << transA << ", transB = " << transB << ")";
    if (ShapedType::isDynamic(k) || ShapedType::isDynamic(k2))
      diag << "; the product's K must be static here (fix the model "
              "input's dims with --shape)";
    return failure();
  }
  SmallVector<int64_t> shape = {m, n};
  if (*c && !isUnidirectionalBroadcastable(c->getShape(), shape)) {
    emitNodeError(op) << "C " << *c
                      << " does not broadcast to the result shape [" << m
                      << ", " << n << "]";
    return failure();
  }
  return setResultType(op, 0, shape, a->getElementType());
}

// Einsum: the output labels' sizes (dialects/ONNX/Einsum.h), the inputs'
// element type.
LogicalResult inferEinsum(Operation *op) {
  auto einsum = cast<EinsumOp>(op);
  if (op->getNumOperands() == 0) {
    emitNodeError(op) << "Einsum needs at least one input";
    return failure();
  }
  SmallVector<RankedTensorType> types;
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i) {
    FailureOr<RankedTensorType> t =
        getInputType(op, i, "Inputs[" + std::to_string(i) + "]");
    if (failed(t))
      return failure();
    types.push_back(*t);
  }
  if (failed(checkSameElementType(op, types)))
    return failure();
  SmallVector<ArrayRef<int64_t>> shapes =
      llvm::map_to_vector(types, [](RankedTensorType t) { return t.getShape(); });
  std::string error;
  FailureOr<EinsumEquation> eq =
      parseEinsumEquation(einsum.getEquation(), shapes, error);
  if (failed(eq)) {
    emitNodeError(op) << error;
    return failure();
  }
  return setResultType(op, 0, eq->outputShape(), types[0].getElementType());
}

// DFT (opset 20): input [..., N (at axis), C] with C 1 (real) or 2
// (complex); the signal length L is dft_length (default N, or 2 * (N - 1)
// for the one-sided inverse); the output has L bins (L / 2 + 1 one-sided)
// of 2 components, or L real values for the one-sided inverse.
LogicalResult inferDFT(Operation *op) {
  auto dft = cast<DFTOp>(op);
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  if (rank < 2 || (x->getShape().back() != 1 && x->getShape().back() != 2)) {
    emitNodeError(op) << "input must be [..., signal, 1 or 2], got " << *x;
    return failure();
  }
  if (!isa<FloatType>(x->getElementType())) {
    emitNodeError(op) << "input must be a float tensor, got " << *x;
    return failure();
  }
  FailureOr<std::optional<SmallVector<int64_t>>> length =
      getOptionalConstantInts(op, 1, "dft_length");
  FailureOr<std::optional<SmallVector<int64_t>>> axisValue =
      getOptionalConstantInts(op, 2, "axis");
  if (failed(length) || failed(axisValue))
    return failure();
  int64_t axis = -2;
  if (*axisValue) {
    if ((*axisValue)->size() != 1) {
      emitNodeError(op) << "axis must be one value";
      return failure();
    }
    axis = (**axisValue)[0];
  }
  if (axis < -rank || axis >= rank - 1 || axis == -1) {
    emitNodeError(op) << "axis " << axis << " is out of range for input "
                      << *x << " (the last dim holds the components)";
    return failure();
  }
  if (axis < 0)
    axis += rank;
  bool inverse = dft.getInverse() != 0, onesided = dft.getOnesided() != 0;
  int64_t n = x->getDimSize(axis);
  int64_t l = inverse && onesided ? 2 * (n - 1) : n;
  if (*length) {
    if ((*length)->size() != 1) {
      emitNodeError(op) << "dft_length must be one value";
      return failure();
    }
    l = (**length)[0];
  }
  if (l < 1) {
    emitNodeError(op) << "the signal length (dft_length) must be positive, got "
                      << l;
    return failure();
  }
  SmallVector<int64_t> shape(x->getShape());
  if (inverse && onesided) {
    shape[axis] = l;
    shape.back() = 1;
  } else {
    shape[axis] = onesided ? l / 2 + 1 : l;
    shape.back() = 2;
  }
  return setResultType(op, 0, shape, x->getElementType());
}

// STFT: signal [batch, length, 1 or 2] -> [batch, frames, bins, 2], frames
// = (length - frame_length) / frame_step + 1, frame_length from its input or
// the window's length, bins = frame_length / 2 + 1 when onesided.
LogicalResult inferSTFT(Operation *op) {
  auto stft = cast<STFTOp>(op);
  FailureOr<RankedTensorType> signal = getInputType(op, 0, "signal");
  FailureOr<RankedTensorType> window = getOptionalInputType(op, 2, "window");
  if (failed(signal) || failed(window))
    return failure();
  if (signal->getRank() != 3 ||
      (signal->getDimSize(2) != 1 && signal->getDimSize(2) != 2) ||
      !isa<FloatType>(signal->getElementType())) {
    emitNodeError(op) << "signal must be a float [batch, length, 1 or 2], got "
                      << *signal;
    return failure();
  }
  FailureOr<SmallVector<int64_t>> step = getConstantInts(op, 1, "frame_step");
  if (failed(step))
    return failure();
  if (step->size() != 1 || (*step)[0] < 1) {
    emitNodeError(op) << "frame_step must be one positive value";
    return failure();
  }
  int64_t frameLength = -1;
  if (*window) {
    if (window->getRank() != 1) {
      emitNodeError(op) << "window must be 1-D, got " << *window;
      return failure();
    }
    frameLength = window->getDimSize(0);
  }
  FailureOr<std::optional<SmallVector<int64_t>>> length =
      getOptionalConstantInts(op, 3, "frame_length");
  if (failed(length))
    return failure();
  if (*length) {
    if ((*length)->size() != 1) {
      emitNodeError(op) << "frame_length must be one value";
      return failure();
    }
    if (frameLength >= 0 && frameLength != (**length)[0]) {
      emitNodeError(op) << "frame_length " << (**length)[0]
                        << " differs from the window's length " << frameLength;
      return failure();
    }
    frameLength = (**length)[0];
  }
  if (frameLength < 1 || frameLength > signal->getDimSize(1)) {
    emitNodeError(op) << "needs a frame_length (or a window) between 1 and the "
                         "signal length "
                      << signal->getDimSize(1);
    return failure();
  }
  int64_t frames = (signal->getDimSize(1) - frameLength) / (*step)[0] + 1;
  int64_t bins = stft.getOnesided() != 0 ? frameLength / 2 + 1 : frameLength;
  return setResultType(op, 0, {signal->getDimSize(0), frames, bins, 2},
                       signal->getElementType());
}

} // namespace

void registerLinearShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferMatMul, MatMulOp>(ctx);
    attachInferShapes<inferMatMulInteger, MatMulIntegerOp>(ctx);
    attachInferShapes<inferQLinearMatMul, QLinearMatMulOp>(ctx);
    attachInferShapes<inferGemm, GemmOp>(ctx);
    attachInferShapes<inferEinsum, EinsumOp>(ctx);
    attachInferShapes<inferDFT, DFTOp>(ctx);
    attachInferShapes<inferSTFT, STFTOp>(ctx);
  });
}

} // namespace kiln::onnx
