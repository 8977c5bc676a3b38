//===- Passes.td - kiln conversion passes -------------------*- tablegen -*-===//
#ifndef KILN_PASSES_CONVERSION_PASSES_TD
#define KILN_PASSES_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertONNXToLinalgPass : Pass<"convert-onnx-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower the onnx dialect to linalg, tensor, arith and math on tensors";
  let description = [{
    Every `onnx` op becomes linalg/tensor/arith/math ops on tensors; shapes must
    be static (as the importer leaves them). One file per op family under
    passes/Conversion/ONNXToLinalg, each with a `populate...Patterns()`.
    An op without a lowering, or with attributes a lowering does not handle,
    is an error naming the ONNX node, never a silently wrong result.
    Unsigned element types become signless; patterns that care about
    signedness read it from the original op's types.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::tensor::TensorDialect",
    "mlir::scf::SCFDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::vector::VectorDialect", "kiln::KilnDialect"
  ];
}

#endif // KILN_PASSES_CONVERSION_PASSES_TD
