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

def KilnDecomposePass : Pass<"kiln-decompose", "mlir::func::FuncOp"> {
  let summary = "Replace composite onnx ops by the simpler onnx ops of their ONNX function";
  let description = [{
    The importer translates every ONNX node into one onnx op, so Attention, LSTM/GRU/RNN,
    QuantizeLinear/DequantizeLinear, QLinearMatMul/QLinearConv, MatMulInteger/ConvInteger,
    the losses, ConvTranspose, ... reach the pass pipeline as themselves. This pass
    rewrites each of them as the computation the ONNX spec's function body (or reference)
    gives, in simpler onnx ops that kiln lowers: e.g. an LSTM unrolled over its static
    sequence, QLinearMatMul as a float MatMul between integer casts (when float32
    accumulation is exact). New ops keep the location of the op they replace, so errors
    still name its ONNX node; their result types come from the dialect's shape inference
    and constant operands are folded as the ops are built.

    Ops named in `keep-ops` (e.g. `kiln-decompose{keep-ops=Attention,QLinearMatMul}`)
    stay as they are, for a later pass that has a kernel for them; from C++,
    `createKilnDecomposePass(keep)` takes a predicate deciding per op.

    Fails with an error naming the ONNX node on a variant the decomposition does not
    cover (e.g. LSTM sequence_lens shorter than the sequence).

    ```mlir
    %y = onnx.Swish %x {alpha = 2.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
    // becomes
    %a = onnx.Mul %x, %c2 ...   %s = onnx.Sigmoid %a ...   %y = onnx.Mul %x, %s ...
    ```
  }];
  let options = [
    ListOption<"keepOps", "keep-ops", "std::string",
               "onnx ops (without the dialect prefix) to leave undecomposed">,
  ];
}

def KilnFoldQDQPass : Pass<"kiln-fold-qdq", "mlir::func::FuncOp"> {
  let summary = "Compute the Conv/MatMul/Gemm of QDQ models on integers";
  let description = [{
    Models quantized in QDQ format (onnxruntime.quantization.quantize_static) compute
    each Conv, MatMul and Gemm on DequantizeLinear'd 8-bit inputs and quantize the
    result. This pass rewrites
    `QuantizeLinear(Relu?(Conv|MatMul|Gemm(DequantizeLinear(x), DequantizeLinear(w),
    DequantizeLinear(bias)?)))` into the int32 product of the zero-point-centered
    8-bit values (as kiln-decompose expands ConvInteger/MatMulInteger), the int32 bias
    added, and the requantization onnxruntime's QLinearConv/QLinearMatMul apply:
    `saturate(round_half_even(float(acc) * (x_scale * w_scale / y_scale)) + y_zp)`;
    a Relu raises the lower saturation bound to y_zp (exact: quantization is
    monotonic and maps 0 to y_zp). Without a QuantizeLinear after it, the product is
    `float(acc) * x_scale * w_scale`.

    Folded only when exact: 8-bit activations per tensor, 8-bit weights per tensor or
    per output channel, an int32 bias dequantized with scale x_scale * w_scale and
    zero point 0, Gemm with alpha = beta = 1 and transA = 0. Anything else is left
    as it is.

    ```mlir
    %x = onnx.DequantizeLinear %xq, %xs, %xz ...   %w = onnx.DequantizeLinear %wq, ...
    %y = onnx.Conv %x, %w, %b ...   %q = onnx.QuantizeLinear %y, %ys, %yz ...
    // becomes
    %acc = onnx.Conv %xc, %wc ... : (tensor<..xi32>, tensor<..xi32>) -> tensor<..xi32>
    ... onnx.Mul (float(acc + bias), multiplier), onnx.Round, onnx.Add, onnx.Clip, onnx.Cast
    ```
  }];
}

def KilnSymbolicShapesPass
    : Pass<"kiln-symbolic-shapes", "mlir::func::FuncOp"> {
  let summary = "Follow the symbols of symbolic input dims through the graph";
  let description = [{
    For a function with symbolic input dims (`kiln.symbols` on the function,
    `kiln.dims` on its arguments, both set by the importer), gives every `?` dim
    of every value an expression over the symbols (a symbol, or sums and products
    of symbols and constants), checking the equalities elementwise broadcasting
    implies, and sets `kiln.dims` on the function's results (model_abi.h's
    encoding: a size, or -(symbol id) - 1). A function without `kiln.symbols`
    is left as it is.

    Each op that takes symbolic dims has a rule (elementwise and unary ops,
    Softmax, LayerNormalization, ReduceMean/Sum/Max over static axes,
    MatMul/Gemm with a symbolic M, Transpose, Flatten, Reshape with a constant
    shape). Anything else is an error naming the ONNX node and the dim:
    another op reading a symbolic dim, two different symbols broadcast against
    each other, a reduction over a symbolic axis, an output dim of several
    symbols (docs/dynamic-shapes.md).

    ```mlir
    func.func @main_graph(%x: tensor<?x4xf32> {kiln.dims = array<i64: -1, 4>})
        -> tensor<?x4xf32> attributes {kiln.symbols = [["batch", 1, 8]]}
    // the result gets {kiln.dims = array<i64: -1, 4>}
    ```
  }];
  let options = [
    Option<"annotate", "annotate", "bool", /*default=*/"false",
           "set kiln.symbolic_dims (the expressions, by symbol name) on every op "
           "with a symbolic result (for tests)">,
    Option<"runDims", "run-dims", "bool", /*default=*/"true",
           "give run symbols to the dims an op's run-time values decide (false "
           "for devices without run dims: an error naming the node and the "
           "input, as before, which --specialize fixes)">,
    Option<"batchLoop", "batch-loop", "bool", /*default=*/"false",
           "set kiln.batch_loop on a function whose one symbol is a batch "
           "(axis 0 of every symbolic value) whose images are computed "
           "apart, which the driver then compiles for one image and runs "
           "once per image">,
  ];
}

#endif // KILN_PASSES_TRANSFORMS_PASSES_TD
