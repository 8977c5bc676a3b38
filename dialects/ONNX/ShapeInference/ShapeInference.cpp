//===- ShapeInference.cpp - Registration of the shape inference models ----===//

#include "dialects/ONNX/ShapeInference/ShapeInference.h"

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "mlir/IR/DialectRegistry.h"

namespace kiln::onnx {

void registerShapeInferenceModels(mlir::DialectRegistry &registry) {
  registerAttentionShapeInference(registry);
  registerConstantShapeInference(registry);
  registerControlFlowShapeInference(registry);
  registerConvolutionShapeInference(registry);
  registerDataMovementShapeInference(registry);
  registerDataDependentShapeInference(registry);
  registerElementwiseShapeInference(registry);
  registerLinearShapeInference(registry);
  registerLossShapeInference(registry);
  registerNormalizationShapeInference(registry);
  registerPoolingShapeInference(registry);
  registerQuantizationShapeInference(registry);
  registerRecurrentShapeInference(registry);
  registerReductionShapeInference(registry);
}

} // namespace kiln::onnx
