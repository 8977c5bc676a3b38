//===- Linear.cpp - Shape inference of matrix products --------------------===//
//
// MatMul (numpy semantics: 1-D operands, batch broadcasting), Gemm,
// MatMulInteger, QLinearMatMul, Einsum.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/Einsum.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;

namespace kiln::onnx {

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
    emitNodeError(op) << "inner dimensions differ: A has K = " << k
                      << ", B has K = " << k2;
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
    emitNodeError(op) << "inner dimensions differ: A has K = " << k
                      << ", B has K = " << k2 << " (transA = " << transA
                      << ", transB = " << transB << ")";
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

} // namespace

void registerLinearShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferMatMul, MatMulOp>(ctx);
    attachInferShapes<inferMatMulInteger, MatMulIntegerOp>(ctx);
    attachInferShapes<inferQLinearMatMul, QLinearMatMulOp>(ctx);
    attachInferShapes<inferGemm, GemmOp>(ctx);
    attachInferShapes<inferEinsum, EinsumOp>(ctx);
  });
}

} // namespace kiln::onnx
