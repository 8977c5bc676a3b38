// RUN: kiln-opt %s -kiln-shape-inference -split-input-file -verify-diagnostics | FileCheck %s

// Control-flow ops type their regions first (block arguments from the operands, then the
// body's ops in order), then their results from what the regions yield. Untyped results
// are `none`, as the importer creates them.

// CHECK-LABEL: func.func @if_types
// CHECK:         onnx.If %{{.*}} : tensor<i1> -> tensor<2x3xf32>
// CHECK:           onnx.Add {{.*}} -> tensor<2x3xf32>
// CHECK:           onnx.Mul {{.*}} -> tensor<2x3xf32>
// CHECK:         return {{.*}} : tensor<2x3xf32>
func.func @if_types(%c: tensor<i1>, %x: tensor<2x3xf32>) -> none {
  %0 = "onnx.If"(%c) ({
    %a = "onnx.Add"(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> none
    onnx.Yield %a : none
  }, {
    %m = "onnx.Mul"(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> none
    onnx.Yield %m : none
  }) : (tensor<i1>) -> none
  return %0 : none
}

// -----

// Scan outputs of a Loop that runs exactly M times (constant M, no condition, the body
// passing its condition on) stack M slices.
// CHECK-LABEL: func.func @loop_scan_outputs
// CHECK:         onnx.Loop {{.*}} -> (tensor<3xf32>, tensor<4x3xf32>)
// CHECK:         ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<i1>, %{{.*}}: tensor<3xf32>):
// CHECK:           onnx.Add {{.*}} -> tensor<3xf32>
func.func @loop_scan_outputs(%x: tensor<3xf32>) -> (none, none) {
  %none = onnx.NoValue : () -> none
  %m = onnx.Constant {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %0:2 = "onnx.Loop"(%m, %none, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
    %a = "onnx.Add"(%v, %x) : (tensor<3xf32>, tensor<3xf32>) -> none
    onnx.Yield %c, %a, %a : tensor<i1>, none, none
  }) : (tensor<i64>, none, tensor<3xf32>) -> (none, none)
  return %0#0, %0#1 : none, none
}

// -----

// CHECK-LABEL: func.func @scan_axes
// CHECK:         onnx.Scan {{.*}} -> (tensor<2xf32>, tensor<2x5xf32>)
// CHECK:         ^bb0(%{{.*}}: tensor<2xf32>, %{{.*}}: tensor<2xf32>):
func.func @scan_axes(%s: tensor<2xf32>, %x: tensor<2x5xf32>) -> (none, none) {
  %0:2 = "onnx.Scan"(%s, %x) ({
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    %y = "onnx.Add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> none
    onnx.Yield %y, %y : none, none
  }) {num_scan_inputs = 1 : i64, scan_input_axes = [1], scan_output_axes = [-1]} : (tensor<2xf32>, tensor<2x5xf32>) -> (none, none)
  return %0#0, %0#1 : none, none
}

// -----

func.func @if_branches_differ(%c: tensor<i1>, %x: tensor<2xf32>, %y: tensor<3xf32>) -> none {
  // expected-error @+1 {{node (If): output 0 is 'tensor<2xf32>' in then_branch but 'tensor<3xf32>' in else_branch; branches whose outputs differ in shape or type need dynamic shapes, which kiln does not support yet}}
  %0 = "onnx.If"(%c) ({
    onnx.Yield %x : tensor<2xf32>
  }, {
    onnx.Yield %y : tensor<3xf32>
  }) : (tensor<i1>) -> none
  return %0 : none
}

// -----

func.func @loop_carried_grows(%x: tensor<2xf32>) -> none {
  %none = onnx.NoValue : () -> none
  %m = onnx.Constant {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{node (Loop): loop-carried value 0 enters the body as 'tensor<2xf32>' but the body yields 'tensor<4xf32>'; a value whose shape changes between iterations needs dynamic shapes, which kiln does not support yet}}
  %0 = "onnx.Loop"(%m, %none, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
    %y = "onnx.Concat"(%v, %v) {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> none
    onnx.Yield %c, %y : tensor<i1>, none
  }) : (tensor<i64>, none, tensor<2xf32>) -> none
  return %0 : none
}

// -----

// A run-time M at a function's top level gives the scan outputs a run dim (`?`,
// test/lit/passes/Transforms/symbolic_shapes_run_dims.mlir); inside another subgraph it
// is still an error.
// CHECK-LABEL: func.func @loop_scan_output_run_length
// CHECK: -> (tensor<3xf32>, tensor<?x3xf32>)
func.func @loop_scan_output_run_length(%x: tensor<3xf32>, %m: tensor<i64>) -> (none, none) {
  %none = onnx.NoValue : () -> none
  %0:2 = "onnx.Loop"(%m, %none, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
    onnx.Yield %c, %v, %v : tensor<i1>, tensor<3xf32>, tensor<3xf32>
  }) : (tensor<i64>, none, tensor<3xf32>) -> (none, none)
  return %0#0, %0#1 : none, none
}

// -----

func.func @loop_scan_output_dynamic(%x: tensor<3xf32>, %m: tensor<i64>) -> none {
  %none = onnx.NoValue : () -> none
  %two = onnx.Constant {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.Loop"(%two, %none, %x) ({
  ^bb0(%j: tensor<i64>, %d: tensor<i1>, %w: tensor<3xf32>):
    // expected-error @+1 {{node (Loop): the length of the scan outputs, the number of iterations, depends on a non-constant input 'M' (dynamic shapes are not supported yet)}}
    %1:2 = "onnx.Loop"(%m, %none, %w) ({
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
      onnx.Yield %c, %v, %v : tensor<i1>, tensor<3xf32>, tensor<3xf32>
    }) : (tensor<i64>, none, tensor<3xf32>) -> (none, none)
    onnx.Yield %d, %1#0 : tensor<i1>, none
  }) : (tensor<i64>, none, tensor<3xf32>) -> none
  return %0 : none
}

// -----

func.func @loop_data_dependent_cond(%x: tensor<3xf32>, %lim: tensor<f32>) -> (none, none) {
  %none = onnx.NoValue : () -> none
  %m = onnx.Constant {value = dense<5> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{has scan outputs, but how many iterations it runs is known only at run time}}
  %0:2 = "onnx.Loop"(%m, %none, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
    %s = "onnx.ReduceSum"(%v, %none) {keepdims = 0 : i64} : (tensor<3xf32>, none) -> none
    %go = "onnx.Less"(%s, %lim) : (none, tensor<f32>) -> none
    onnx.Yield %go, %v, %v : none, tensor<3xf32>, tensor<3xf32>
  }) : (tensor<i64>, none, tensor<3xf32>) -> (none, none)
  return %0#0, %0#1 : none, none
}

// -----

func.func @scan_lengths_differ(%s: tensor<2xf32>, %x: tensor<4x2xf32>, %y: tensor<5x2xf32>) -> (none, none) {
  // expected-error @+1 {{node (Scan): scan input 1 has 5 slices along its axis 0 but the first scan input has 4}}
  %0:2 = "onnx.Scan"(%s, %x, %y) ({
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>, %c: tensor<2xf32>):
    onnx.Yield %a, %b : tensor<2xf32>, tensor<2xf32>
  }) {num_scan_inputs = 2 : i64} : (tensor<2xf32>, tensor<4x2xf32>, tensor<5x2xf32>) -> (none, none)
  return %0#0, %0#1 : none, none
}


// -----

// x[i : i + 2] at the iteration number i of a Loop of 5 iterations over 6 rows: every
// slice is in range, so it has 2 rows (whatever the condition does).
// CHECK-LABEL: func.func @slice_at_iteration_number
// CHECK:         onnx.Slice {{.*}} -> tensor<2x3xf32>
func.func @slice_at_iteration_number(%x: tensor<6x3xf32>, %go: tensor<i1>) -> none {
  %none = onnx.NoValue : () -> none
  %m = onnx.Constant {value = dense<5> : tensor<i64>} : () -> tensor<i64>
  %two = onnx.Constant {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %axes = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %init = onnx.Constant {value = dense<0.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %0 = "onnx.Loop"(%m, %go, %init) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2x3xf32>):
    %end = "onnx.Add"(%i, %two) : (tensor<i64>, tensor<i64>) -> none
    %s = "onnx.Unsqueeze"(%i, %axes) : (tensor<i64>, tensor<1xi64>) -> none
    %e = "onnx.Unsqueeze"(%end, %axes) : (none, tensor<1xi64>) -> none
    %rows = "onnx.Slice"(%x, %s, %e, %none, %none) : (tensor<6x3xf32>, none, none, none, none) -> none
    %a = "onnx.Add"(%v, %rows) : (tensor<2x3xf32>, none) -> none
    onnx.Yield %c, %a : tensor<i1>, none
  }) : (tensor<i64>, tensor<i1>, tensor<2x3xf32>) -> none
  return %0 : none
}

// -----

// Six iterations would slice rows 5..7 of 6 at the last one: not a length known at
// compile time.
func.func @slice_at_iteration_number_out_of_range(%x: tensor<6x3xf32>) -> none {
  %none = onnx.NoValue : () -> none
  %m = onnx.Constant {value = dense<6> : tensor<i64>} : () -> tensor<i64>
  %two = onnx.Constant {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %axes = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %init = onnx.Constant {value = dense<0.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %0 = "onnx.Loop"(%m, %none, %init) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2x3xf32>):
    %end = "onnx.Add"(%i, %two) : (tensor<i64>, tensor<i64>) -> none
    %s = "onnx.Unsqueeze"(%i, %axes) : (tensor<i64>, tensor<1xi64>) -> none
    %e = "onnx.Unsqueeze"(%end, %axes) : (none, tensor<1xi64>) -> none
    // expected-error @+1 {{output shape depends on a non-constant input 'starts'}}
    %rows = "onnx.Slice"(%x, %s, %e, %none, %none) : (tensor<6x3xf32>, none, none, none, none) -> none
    %a = "onnx.Add"(%v, %rows) : (tensor<2x3xf32>, none) -> none
    onnx.Yield %c, %a : tensor<i1>, none
  }) : (tensor<i64>, none, tensor<2x3xf32>) -> none
  return %0 : none
}

// -----

// A trip count given at run time: the Loop is named as what the length depends on.
func.func @slice_at_iteration_number_runtime_trips(%x: tensor<6x3xf32>, %m: tensor<i64>) -> none {
  %none = onnx.NoValue : () -> none
  %two = onnx.Constant {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %axes = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %init = onnx.Constant {value = dense<0.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  // expected-error @+1 {{node (Loop): a Slice at the iteration number (node 'Slice') has a length known only for a known trip count: output shape depends on a non-constant input 'M'}}
  %0 = "onnx.Loop"(%m, %none, %init) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2x3xf32>):
    %end = "onnx.Add"(%i, %two) : (tensor<i64>, tensor<i64>) -> none
    %s = "onnx.Unsqueeze"(%i, %axes) : (tensor<i64>, tensor<1xi64>) -> none
    %e = "onnx.Unsqueeze"(%end, %axes) : (none, tensor<1xi64>) -> none
    %rows = "onnx.Slice"(%x, %s, %e, %none, %none) : (tensor<6x3xf32>, none, none, none, none) -> none
    %a = "onnx.Add"(%v, %rows) : (tensor<2x3xf32>, none) -> none
    onnx.Yield %c, %a : tensor<i1>, none
  }) : (tensor<i64>, none, tensor<2x3xf32>) -> none
  return %0 : none
}
