//===- Passes.td - kiln graph passes over the onnx dialect -*- tablegen -*-===//
#ifndef KILN_PASSES_TRANSFORMS_PASSES_TD
#define KILN_PASSES_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnShapeInferencePass
    : Pass<"kiln-shape-inference", "mlir::func::FuncOp"> {
  let summary = "Infer static result types of onnx ops";
  let description = [{
    Walks the function's ops in order and calls
    `ShapeInferenceOpInterface::inferShapes()` on every op that implements it, setting
    every result to a statically shaped `tensor` (absent optional outputs get a type too
    when it is computable). Then sets the function's result types to the types of the
    returned values.

    Fails with an error naming the ONNX node when an op's shapes are inconsistent, when a
    result shape depends on a non-constant input (dynamic shapes are not supported yet), or
    when an `onnx` op has no shape inference.

    ```mlir
    %0 = "onnx.Add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> none
    // becomes
    %0 = onnx.Add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
}

#endif // KILN_PASSES_TRANSFORMS_PASSES_TD
