//===- ONNXNoValue.td - Hand-written onnx ops --------------*- tablegen -*-===//

#ifndef KILN_DIALECTS_ONNX_ONNXNOVALUE_TD
#define KILN_DIALECTS_ONNX_ONNXNOVALUE_TD

include "dialects/ONNX/ONNXBase.td"

def ONNX_NoValueOp : ONNX_Op<"NoValue", [Pure]> {
  let summary = "An absent optional input";
  let description = [{
    Produces the `none` value that stands for an optional input a node leaves out, so every
    op has all its schema inputs as operands.

    ```mlir
    %none = onnx.NoValue : () -> none
    %y = onnx.Conv %x, %w, %none : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none)
        -> tensor<1x4x6x6xf32>
    ```
  }];
  let results = (outs NoneType:$none);
  let builders = [OpBuilder<(ins), [{
    build($_builder, $_state, $_builder.getNoneType());
  }]>];
}

#endif // KILN_DIALECTS_ONNX_ONNXNOVALUE_TD
