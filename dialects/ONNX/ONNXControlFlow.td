//===- ONNXControlFlow.td - If, Loop, Scan and their terminator -*- tablegen -*-===//
//
// The ONNX ops with GRAPH attributes, written by hand: each subgraph is a region
// (one block) ending in onnx.Yield. A subgraph may use any value of the graphs
// around it by name; in the region that is a plain use of the enclosing value,
// so the regions are not isolated from above. Their schemas (versions, arities)
// are still generated into ONNXOpSchemas.inc by scripts/gen_onnx_dialect.py.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_ONNXCONTROLFLOW_TD
#define KILN_DIALECTS_ONNX_ONNXCONTROLFLOW_TD

include "dialects/ONNX/ONNXBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def ONNX_YieldOp : ONNX_Op<"Yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["IfOp", "LoopOp", "ScanOp"]>]> {
  let summary = "The outputs of a subgraph (If branch, Loop or Scan body)";
  let description = [{
    Ends the region of an onnx.If, onnx.Loop or onnx.Scan with the subgraph's
    outputs, in the order of the subgraph's `output` list.
  }];
  let arguments = (ins Variadic<AnyType>:$outputs);
  let assemblyFormat = [{ attr-dict ($outputs^ `:` type($outputs))? }];
}

//===----------------------------------------------------------------------===//
// If (opset 25)
//===----------------------------------------------------------------------===//

def ONNX_IfOp : ONNX_Op<"If", [RecursiveMemoryEffects, NoRegionArguments]> {
  let summary = "If conditional";
  let description = [{
    Runs `then_branch` when the single element of `cond` is true, else
    `else_branch`; the results are the outputs of the branch that ran. Both
    branches must produce the same types (kiln computes static shapes only).

    ```mlir
    %r = onnx.If %c : tensor<i1> -> tensor<2xf32> {
      onnx.Yield %a : tensor<2xf32>
    } else {
      onnx.Yield %b : tensor<2xf32>
    }
    ```
  }];
  let arguments = (ins AnyType:$cond);
  let results = (outs Variadic<AnyType>:$outputs);
  let regions = (region SizedRegion<1>:$then_branch, SizedRegion<1>:$else_branch);
  let assemblyFormat = [{
    $cond attr-dict `:` type($cond) (`->` type($outputs)^)? $then_branch `else` $else_branch
  }];
  let hasRegionVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Loop (opset 25)
//===----------------------------------------------------------------------===//

def ONNX_LoopOp : ONNX_Op<"Loop", [RecursiveMemoryEffects]> {
  let summary = "Generic looping construct";
  let description = [{
    Runs `body` while the iteration count is below `M` (absent: no bound) and
    the condition is true (`cond` first, then the body's first output; absent:
    true). The body's block takes (iteration number: tensor<i64>, condition:
    tensor<i1>, the loop-carried values) and yields (condition, the new
    loop-carried values, the scan outputs of this iteration). The results are
    the final loop-carried values, then each scan output's values of all
    iterations stacked along a new first axis.

    ```mlir
    %r = onnx.Loop %m, %none, %x : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32> {
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
      %t = onnx.Constant {value = dense<true> : tensor<i1>} : () -> tensor<i1>
      %y = onnx.Add %v, %v : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      onnx.Yield %t, %y : tensor<i1>, tensor<2xf32>
    }
    ```
  }];
  let arguments = (ins AnyType:$M, AnyType:$cond, Variadic<AnyType>:$v_initial);
  let results = (outs Variadic<AnyType>:$v_final_and_scan_outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results) $body
  }];
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Scan (opset 25)
//===----------------------------------------------------------------------===//

def ONNX_ScanOp : ONNX_Op<"Scan", [RecursiveMemoryEffects]> {
  let summary = "Scan over the slices of its scan inputs";
  let description = [{
    The first (operands - `num_scan_inputs`) operands are the initial states,
    the rest the scan inputs. The body runs once per slice of the scan inputs
    along `scan_input_axes` (default 0; `scan_input_directions` 1 walks
    backwards): its block takes (states, one slice of each scan input, without
    the scanned axis) and yields (new states, one slice of each scan output).
    The results are the final states, then the scan outputs, the slices
    stacked along `scan_output_axes` (default 0) in the order of
    `scan_output_directions`.
  }];
  let arguments = (ins Variadic<AnyType>:$initial_state_and_scan_inputs,
    I64Attr:$num_scan_inputs,
    OptionalAttr<I64ArrayAttr>:$scan_input_axes,
    OptionalAttr<I64ArrayAttr>:$scan_input_directions,
    OptionalAttr<I64ArrayAttr>:$scan_output_axes,
    OptionalAttr<I64ArrayAttr>:$scan_output_directions);
  let results = (outs Variadic<AnyType>:$final_state_and_scan_outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results) $body
  }];
  let hasRegionVerifier = 1;
}

#endif // KILN_DIALECTS_ONNX_ONNXCONTROLFLOW_TD
