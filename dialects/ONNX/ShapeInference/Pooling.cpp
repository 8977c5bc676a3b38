//===- Pooling.cpp - Shape inference of pooling ops -----------------------===//
//
// MaxPool, AveragePool, LpPool (auto_pad, pads, strides, dilations, ceil_mode)
// and the global pools.
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

} // namespace

void registerPoolingShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferPool, MaxPoolOp, AveragePoolOp, LpPoolOp>(ctx);
    attachInferShapes<inferGlobalPool, GlobalAveragePoolOp, GlobalMaxPoolOp,
                      GlobalLpPoolOp>(ctx);
  });
}

} // namespace kiln::onnx
