//===- ShapeInferenceInterface.td - Per-op shape inference -*- tablegen -*-===//

#ifndef KILN_DIALECTS_ONNX_SHAPEINFERENCEINTERFACE_TD
#define KILN_DIALECTS_ONNX_SHAPEINFERENCEINTERFACE_TD

include "mlir/IR/OpBase.td"

def ShapeInferenceOpInterface : OpInterface<"ShapeInferenceOpInterface"> {
  let cppNamespace = "::kiln::onnx";
  let description = [{
    Sets every result type of the op from its operand types (and constant operands), or
    emits an error on the op (`emitNodeError`) and fails. Implemented as external models in
    `dialects/ONNX/ShapeInference/`.
  }];
  let methods = [
    InterfaceMethod<
      "Infer and set the result types from the operands.",
      "::mlir::LogicalResult", "inferShapes">,
  ];
}

#endif // KILN_DIALECTS_ONNX_SHAPEINFERENCEINTERFACE_TD
