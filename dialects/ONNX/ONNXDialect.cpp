//===- ONNXDialect.cpp - The onnx dialect ---------------------------------===//

#include "dialects/ONNX/ONNXOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace kiln::onnx;

#include "dialects/ONNX/ONNXDialect.cpp.inc"

#include "dialects/ONNX/ShapeInferenceInterface.cpp.inc"

void ONNXDialect::initialize() {
  // Defined by the sharded op definitions (ONNXOps.cpp.inc, shard 0).
  registerONNXDialectOperations(this);
}

Operation *ONNXDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
