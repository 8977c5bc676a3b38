//===- Quantization.cpp - Shape inference of quantization ops -------------===//
//
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear. (QLinearConv and
// QLinearMatMul are with Conv and MatMul.)
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;

namespace kiln::onnx {
namespace {

// QuantizeLinear(x, y_scale, y_zero_point): x's shape; output_dtype when set,
// else y_zero_point's element type, else ui8.
LogicalResult inferQuantizeLinear(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "x");
  FailureOr<RankedTensorType> zeroPoint =
      getOptionalInputType(op, 2, "y_zero_point");
  if (failed(x) || failed(zeroPoint))
    return failure();
  Type elementType =
      IntegerType::get(op->getContext(), 8, IntegerType::Unsigned);
  if (int64_t dtype = getIntAttr(op, "output_dtype", 0)) {
    FailureOr<Type> t = getElementTypeFromAttr(op, dtype, "output_dtype");
    if (failed(t))
      return failure();
    elementType = *t;
  } else if (*zeroPoint) {
    elementType = zeroPoint->getElementType();
  }
  return setResultType(op, 0, x->getShape(), elementType);
}

// DequantizeLinear(x, x_scale, x_zero_point): x's shape; output_dtype when set,
// else x_scale's element type.
LogicalResult inferDequantizeLinear(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "x");
  FailureOr<RankedTensorType> scale = getInputType(op, 1, "x_scale");
  if (failed(x) || failed(scale))
    return failure();
  Type elementType = scale->getElementType();
  if (int64_t dtype = getIntAttr(op, "output_dtype", 0)) {
    FailureOr<Type> t = getElementTypeFromAttr(op, dtype, "output_dtype");
    if (failed(t))
      return failure();
    elementType = *t;
  }
  return setResultType(op, 0, x->getShape(), elementType);
}

// DynamicQuantizeLinear(x): y (ui8, x's shape), y_scale (f32 scalar),
// y_zero_point (ui8 scalar).
LogicalResult inferDynamicQuantizeLinear(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "x");
  if (failed(x))
    return failure();
  MLIRContext *ctx = op->getContext();
  Type u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  if (failed(setResultType(op, 0, x->getShape(), u8)) ||
      failed(setResultType(op, 1, {}, Float32Type::get(ctx))))
    return failure();
  return setResultType(op, 2, {}, u8);
}

} // namespace

void registerQuantizationShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferQuantizeLinear, QuantizeLinearOp>(ctx);
    attachInferShapes<inferDequantizeLinear, DequantizeLinearOp>(ctx);
    attachInferShapes<inferDynamicQuantizeLinear, DynamicQuantizeLinearOp>(ctx);
  });
}

} // namespace kiln::onnx
