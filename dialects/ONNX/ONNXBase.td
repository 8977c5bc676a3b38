//===- ONNXBase.td - Base class of onnx ops ----------------*- tablegen -*-===//

#ifndef KILN_DIALECTS_ONNX_ONNXBASE_TD
#define KILN_DIALECTS_ONNX_ONNXBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "dialects/ONNX/ONNXDialect.td"

// Every onnx op prints as `onnx.Op %a, %b {attrs} : (operand types) -> result types`: the
// operands are untyped in ODS (AnyType), so the format spells out every type.
class ONNX_Op<string mnemonic, list<Trait> traits = []>
    : Op<ONNX_Dialect, mnemonic, traits> {
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

#endif // KILN_DIALECTS_ONNX_ONNXBASE_TD
