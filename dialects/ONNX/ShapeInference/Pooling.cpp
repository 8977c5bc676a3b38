//===- Pooling.cpp - Shape inference of pooling ops -----------------------===//
//
// MaxPool, AveragePool, LpPool (auto_pad, pads, strides, dilations, ceil_mode)
// and the global pools, MaxUnpool.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;

namespace kiln::onnx {
namespace {

// Y is (N, C, O1..On); every further result (MaxPool's Indices) is i64 of the
// same shape.
LogicalResult inferPool(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  if (failed(x))
    return failure();
  if (x->getRank() < 3) {
    emitNodeError(op) << "X must have rank >= 3 (N, C, D1, ...), got " << *x;
    return failure();
  }
  FailureOr<WindowParams> params = getWindowParams(op, x->getRank() - 2);
  if (failed(params))
    return failure();
  FailureOr<SmallVector<int64_t>> spatial =
      computeWindowOutputShape(op, x->getShape().drop_front(2), *params);
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> shape(x->getShape().take_front(2));
  shape.append(spatial->begin(), spatial->end());
  if (failed(setResultType(op, 0, shape, x->getElementType())))
    return failure();
  for (unsigned i = 1, e = op->getNumResults(); i < e; ++i)
    if (failed(setResultType(op, i, shape,
                             IntegerType::get(op->getContext(), 64))))
      return failure();
  return success();
}

// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: (N, C, 1, ..., 1).
LogicalResult inferGlobalPool(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  if (failed(x))
    return failure();
  if (x->getRank() < 2) {
    emitNodeError(op) << "X must have rank >= 2 (N, C, ...), got " << *x;
    return failure();
  }
  SmallVector<int64_t> shape(x->getShape());
  for (int64_t i = 2, e = shape.size(); i < e; ++i)
    shape[i] = 1;
  return setResultType(op, 0, shape, x->getElementType());
}

// MaxUnpool(X [N, C, D1..Dk], I as X, output_shape?) -> output_shape, or
// [N, C, (Di - 1) * stride + kernel - pads] without it.
LogicalResult inferMaxUnpool(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  FailureOr<RankedTensorType> indices = getInputType(op, 1, "I");
  if (failed(x) || failed(indices))
    return failure();
  if (x->getRank() < 3 || indices->getShape() != x->getShape() ||
      !indices->getElementType().isInteger(64)) {
    emitNodeError(op) << "X must have rank >= 3 and I be int64 of its shape, got "
                      << *x << " and " << *indices;
    return failure();
  }
  FailureOr<std::optional<SmallVector<int64_t>>> outputShape =
      getOptionalConstantInts(op, 2, "output_shape");
  if (failed(outputShape))
    return failure();
  if (*outputShape) {
    if (static_cast<int64_t>((*outputShape)->size()) != x->getRank() ||
        (**outputShape)[0] != x->getDimSize(0) ||
        (**outputShape)[1] != x->getDimSize(1)) {
      emitNodeError(op) << "output_shape must be [N, C, D1..Dk] of X " << *x;
      return failure();
    }
    return setResultType(op, 0, **outputShape, x->getElementType());
  }
  int64_t k = x->getRank() - 2;
  std::optional<SmallVector<int64_t>> kernel = getI64ArrayAttr(op, "kernel_shape");
  SmallVector<int64_t> strides =
      getI64ArrayAttr(op, "strides").value_or(SmallVector<int64_t>(k, 1));
  SmallVector<int64_t> pads =
      getI64ArrayAttr(op, "pads").value_or(SmallVector<int64_t>(2 * k, 0));
  if (!kernel || static_cast<int64_t>(kernel->size()) != k ||
      static_cast<int64_t>(strides.size()) != k ||
      static_cast<int64_t>(pads.size()) != 2 * k) {
    emitNodeError(op) << "kernel_shape, strides and pads need one value (pads "
                         "two) per spatial dimension";
    return failure();
  }
  CheckedDims dims;
  SmallVector<int64_t> shape(x->getShape().take_front(2));
  for (int64_t i = 0; i < k; ++i)
    shape.push_back(dims.sub(
        dims.add(dims.mul(x->getDimSize(2 + i) - 1, strides[i]), (*kernel)[i]),
        dims.add(pads[i], pads[k + i])));
  if (failed(dims.check(op)))
    return failure();
  return setResultType(op, 0, shape, x->getElementType());
}

} // namespace

void registerPoolingShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferPool, MaxPoolOp, AveragePoolOp, LpPoolOp>(ctx);
    attachInferShapes<inferGlobalPool, GlobalAveragePoolOp, GlobalMaxPoolOp,
                      GlobalLpPoolOp>(ctx);
    attachInferShapes<inferMaxUnpool, MaxUnpoolOp>(ctx);
  });
}

} // namespace kiln::onnx
