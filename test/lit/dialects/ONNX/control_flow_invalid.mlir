// RUN: kiln-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// The region verifiers of onnx.If, onnx.Loop and onnx.Scan ("test.foo" stands for a
// block that does not end in onnx.Yield).

func.func @if_cond_not_bool(%c: tensor<f32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{node (If): cond must be a bool tensor of one element, got 'tensor<f32>'}}
  %0 = onnx.If %c : tensor<f32> -> tensor<2xf32> {
    onnx.Yield %x : tensor<2xf32>
  } else {
    onnx.Yield %x : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @if_yield_count(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{else_branch yields 2 values but the If has 1 outputs}}
  %0 = onnx.If %c : tensor<i1> -> tensor<2xf32> {
    onnx.Yield %x : tensor<2xf32>
  } else {
    onnx.Yield %x, %x : tensor<2xf32>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @if_yield_type(%c: tensor<i1>, %x: tensor<2xf32>, %y: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{then_branch yields 'tensor<3xf32>' as output 0 but the If's output is 'tensor<2xf32>'}}
  %0 = onnx.If %c : tensor<i1> -> tensor<2xf32> {
    onnx.Yield %y : tensor<3xf32>
  } else {
    onnx.Yield %x : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @if_no_yield(%c: tensor<i1>, %x: tensor<2xf32>) {
  // expected-error @+1 {{then_branch must end in onnx.Yield}}
  "onnx.If"(%c) ({
    "test.foo"() : () -> ()
  }, {
    onnx.Yield
  }) : (tensor<i1>) -> ()
  return
}

// -----

func.func @loop_m_type(%m: tensor<i32>, %x: tensor<2xf32>, %none: none) -> tensor<2xf32> {
  // expected-error @+1 {{M must be an int64 tensor of one element, got 'tensor<i32>'}}
  %0 = onnx.Loop %m, %none, %x : (tensor<i32>, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
    onnx.Yield %c, %v : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_cond_type(%m: tensor<i64>, %cond: tensor<2xi1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{cond must be a bool tensor of one element, got 'tensor<2xi1>'}}
  %0 = onnx.Loop %m, %cond, %x : (tensor<i64>, tensor<2xi1>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
    onnx.Yield %c, %v : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_arg_count(%m: tensor<i64>, %x: tensor<2xf32>, %none: none) -> tensor<2xf32> {
  // expected-error @+1 {{body takes 2 arguments but the Loop passes 3 (iteration number, condition, 1 loop-carried values)}}
  %0 = onnx.Loop %m, %none, %x : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>):
    onnx.Yield %c, %x : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_arg_kinds(%m: tensor<i64>, %x: tensor<2xf32>, %none: none) -> tensor<2xf32> {
  // expected-error @+1 {{body's first two arguments must be the iteration number (int64) and the condition (bool), got 'tensor<i32>' and 'tensor<i1>'}}
  %0 = onnx.Loop %m, %none, %x : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i32>, %c: tensor<i1>, %v: tensor<2xf32>):
    onnx.Yield %c, %v : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_arg_type(%m: tensor<i64>, %x: tensor<2xf32>, %none: none) -> tensor<2xf32> {
  // expected-error @+1 {{body argument 2 is 'tensor<3xf32>' but the loop-carried value passed is 'tensor<2xf32>'}}
  %0 = onnx.Loop %m, %none, %x : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
    onnx.Yield %c, %x : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_result_count(%m: tensor<i64>, %x: tensor<2xf32>, %none: none) {
  // expected-error @+1 {{has 0 outputs but 1 loop-carried values}}
  "onnx.Loop"(%m, %none, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
    onnx.Yield %c, %v : tensor<i1>, tensor<2xf32>
  }) : (tensor<i64>, none, tensor<2xf32>) -> ()
  return
}

// -----

func.func @loop_no_yield(%m: tensor<i64>, %x: tensor<2xf32>, %none: none) -> tensor<2xf32> {
  // expected-error @+1 {{body must end in onnx.Yield}}
  %0 = "onnx.Loop"(%m, %none, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
    "test.foo"() : () -> ()
  }) : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_yield_count(%m: tensor<i64>, %x: tensor<2xf32>, %none: none) -> tensor<2xf32> {
  // expected-error @+1 {{body yields 1 values but the Loop needs 2 (condition, 1 loop-carried values, 0 scan outputs)}}
  %0 = onnx.Loop %m, %none, %x : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
    onnx.Yield %c : tensor<i1>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_yield_cond(%m: tensor<i64>, %x: tensor<2xf32>, %none: none) -> tensor<2xf32> {
  // expected-error @+1 {{body's first output (the condition) must be a bool tensor of one element, got 'tensor<i64>'}}
  %0 = onnx.Loop %m, %none, %x : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
    onnx.Yield %i, %v : tensor<i64>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_carried_changes(%m: tensor<i64>, %x: tensor<2xf32>, %y: tensor<3xf32>, %none: none) -> tensor<2xf32> {
  // expected-error @+1 {{loop-carried value 0 enters the body as 'tensor<2xf32>' but the body yields 'tensor<3xf32>'}}
  %0 = onnx.Loop %m, %none, %x : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
    onnx.Yield %c, %y : tensor<i1>, tensor<3xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_result_type(%m: tensor<i64>, %x: tensor<2xf32>, %none: none) -> tensor<3xf32> {
  // expected-error @+1 {{output 0 is 'tensor<3xf32>' but its loop-carried value is 'tensor<2xf32>'}}
  %0 = onnx.Loop %m, %none, %x : (tensor<i64>, none, tensor<2xf32>) -> tensor<3xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
    onnx.Yield %c, %v : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<3xf32>
}

// -----

func.func @scan_num_inputs(%s: tensor<2xf32>, %x: tensor<4x2xf32>) {
  // expected-error @+1 {{num_scan_inputs is 3 but must be in [1, 2]}}
  %0:2 = onnx.Scan %s, %x {num_scan_inputs = 3 : i64} : (tensor<2xf32>, tensor<4x2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>) {
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    onnx.Yield %a, %b : tensor<2xf32>, tensor<2xf32>
  }
  return
}

// -----

func.func @scan_result_count(%s: tensor<2xf32>, %t: tensor<2xf32>, %x: tensor<4x2xf32>) {
  // expected-error @+1 {{has 1 outputs but 2 states}}
  %0 = onnx.Scan %s, %t, %x {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<2xf32>, tensor<4x2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>, %c: tensor<2xf32>, %b: tensor<2xf32>):
    onnx.Yield %a : tensor<2xf32>
  }
  return
}

// -----

func.func @scan_axes_count(%s: tensor<2xf32>, %x: tensor<4x2xf32>) {
  // expected-error @+1 {{scan_input_axes has 2 entries but there are 1}}
  %0:2 = onnx.Scan %s, %x {num_scan_inputs = 1 : i64, scan_input_axes = [0, 1]} : (tensor<2xf32>, tensor<4x2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>) {
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    onnx.Yield %a, %b : tensor<2xf32>, tensor<2xf32>
  }
  return
}

// -----

func.func @scan_direction(%s: tensor<2xf32>, %x: tensor<4x2xf32>) {
  // expected-error @+1 {{scan_output_directions entries must be 0 or 1, got 2}}
  %0:2 = onnx.Scan %s, %x {num_scan_inputs = 1 : i64, scan_output_directions = [2]} : (tensor<2xf32>, tensor<4x2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>) {
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    onnx.Yield %a, %b : tensor<2xf32>, tensor<2xf32>
  }
  return
}

// -----

func.func @scan_arg_count(%s: tensor<2xf32>, %x: tensor<4x2xf32>) {
  // expected-error @+1 {{body takes 1 arguments but the Scan passes 2 (states and scan input slices)}}
  %0:2 = onnx.Scan %s, %x {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<4x2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>) {
  ^bb0(%a: tensor<2xf32>):
    onnx.Yield %a, %a : tensor<2xf32>, tensor<2xf32>
  }
  return
}

// -----

func.func @scan_state_arg(%s: tensor<2xf32>, %x: tensor<4x2xf32>) {
  // expected-error @+1 {{body argument 0 is 'tensor<3xf32>' but the state passed is 'tensor<2xf32>'}}
  %0:2 = onnx.Scan %s, %x {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<4x2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>) {
  ^bb0(%a: tensor<3xf32>, %b: tensor<2xf32>):
    onnx.Yield %s, %b : tensor<2xf32>, tensor<2xf32>
  }
  return
}

// -----

func.func @scan_no_yield(%s: tensor<2xf32>, %x: tensor<4x2xf32>) {
  // expected-error @+1 {{body must end in onnx.Yield}}
  %0:2 = "onnx.Scan"(%s, %x) ({
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    "test.foo"() : () -> ()
  }) {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<4x2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>)
  return
}

// -----

func.func @scan_yield_count(%s: tensor<2xf32>, %x: tensor<4x2xf32>) {
  // expected-error @+1 {{body yields 1 values but the Scan has 2 outputs}}
  %0:2 = onnx.Scan %s, %x {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<4x2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>) {
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    onnx.Yield %a : tensor<2xf32>
  }
  return
}

// -----

func.func @scan_state_changes(%s: tensor<2xf32>, %x: tensor<4x2xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{state 0 enters the body as 'tensor<2xf32>' but the body yields 'tensor<3xf32>'}}
  %0:2 = onnx.Scan %s, %x {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<4x2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>) {
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    onnx.Yield %y, %b : tensor<3xf32>, tensor<2xf32>
  }
  return
}

// -----

func.func @scan_state_result(%s: tensor<2xf32>, %x: tensor<4x2xf32>) {
  // expected-error @+1 {{output 0 is 'tensor<5xf32>' but its state is 'tensor<2xf32>'}}
  %0:2 = onnx.Scan %s, %x {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<4x2xf32>) -> (tensor<5xf32>, tensor<4x2xf32>) {
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    onnx.Yield %a, %b : tensor<2xf32>, tensor<2xf32>
  }
  return
}

// -----

func.func @yield_parent(%x: tensor<2xf32>) {
  // expected-error @+1 {{expects parent op to be one of 'onnx.If, onnx.Loop, onnx.Scan'}}
  onnx.Yield %x : tensor<2xf32>
}
