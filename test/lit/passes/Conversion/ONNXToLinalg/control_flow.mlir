// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// If -> scf.if on the condition's element; Loop -> scf.for when it runs exactly M
// times, else scf.while; Scan -> scf.for over the scanned axis. New loop-carried values
// are copied into their iter_args (in-place bufferization).

// Both branches write the output into one tensor made before the If.
// CHECK-LABEL: func.func @if_to_scf
// CHECK:         %[[C:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK:         %[[DEST:.*]] = tensor.empty() : tensor<2xf32>
// CHECK:         %[[R:.*]] = scf.if %[[C]] -> (tensor<2xf32>) {
// CHECK:           %[[A:.*]] = linalg.generic
// CHECK:             arith.addf
// CHECK:           %[[CA:.*]] = linalg.copy ins(%[[A]] : tensor<2xf32>) outs(%[[DEST]] : tensor<2xf32>)
// CHECK:           scf.yield %[[CA]] : tensor<2xf32>
// CHECK:         } else {
// CHECK:           %[[M:.*]] = linalg.generic
// CHECK:             arith.mulf
// CHECK:           %[[CM:.*]] = linalg.copy ins(%[[M]] : tensor<2xf32>) outs(%[[DEST]] : tensor<2xf32>)
// CHECK:           scf.yield %[[CM]] : tensor<2xf32>
// CHECK:         return %[[R]]
func.func @if_to_scf(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = onnx.If %c : tensor<i1> -> tensor<2xf32> {
    %a = onnx.Add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %a : tensor<2xf32>
  } else {
    %m = onnx.Mul %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %m : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @loop_static
// CHECK:         %[[SCAN:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK:         %[[R:.*]]:2 = scf.for %[[I:.*]] = %c0 to %c4 step %c1 iter_args(%[[V:.*]] = %{{.*}}, %[[S:.*]] = %[[SCAN]]) -> (tensor<3xf32>, tensor<4x3xf32>)
// CHECK:           %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:           %[[IT:.*]] = tensor.from_elements %[[I64]] : tensor<i64>
// CHECK:           %[[ADD:.*]] = linalg.generic
// CHECK:           %[[INS:.*]] = tensor.insert_slice %{{.*}} into %[[S]][%[[I]], 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<4x3xf32>
// CHECK:           %[[NEXT:.*]] = linalg.copy ins(%[[ADD]] : tensor<3xf32>) outs(%[[V]] : tensor<3xf32>)
// CHECK:           scf.yield %[[NEXT]], %[[INS]]
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @loop_static(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  %none = onnx.NoValue : () -> none
  %m = onnx.Constant {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %0:2 = onnx.Loop %m, %none, %x : (tensor<i64>, none, tensor<3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
    %a = onnx.Add %v, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %f = onnx.Cast %i {to = 1 : i64} : (tensor<i64>) -> tensor<f32>
    %s = onnx.Mul %a, %f : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
    onnx.Yield %c, %a, %s : tensor<i1>, tensor<3xf32>, tensor<3xf32>
  }
  return %0#0, %0#1 : tensor<3xf32>, tensor<4x3xf32>
}

// -----

// A condition computed by the body: scf.while over the iteration number, which a false
// condition sets to M.
// CHECK-LABEL: func.func @loop_while
// CHECK:         %[[M:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// CHECK:         %[[COND:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK:         %[[FIRST:.*]] = arith.select %[[COND]], %{{.*}}, %[[M]] : i64
// CHECK:         %[[R:.*]]:2 = scf.while (%[[I:.*]] = %[[FIRST]], %[[V:.*]] = %{{.*}}) : (i64, tensor<3xf32>) -> (i64, tensor<3xf32>) {
// CHECK:           %[[GO:.*]] = arith.cmpi slt, %[[I]], %[[M]] : i64
// CHECK:           scf.condition(%[[GO]]) %[[I]], %[[V]]
// CHECK:         } do {
// CHECK:         ^bb0(%[[I2:.*]]: i64, %[[V2:.*]]: tensor<3xf32>):
// CHECK:           arith.cmpf olt
// CHECK:           %[[NEWC:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK:           %[[INC:.*]] = arith.addi %[[I2]], %{{.*}} : i64
// CHECK:           %[[NEXTI:.*]] = arith.select %[[NEWC]], %[[INC]], %[[M]] : i64
// CHECK:           %[[NEXTV:.*]] = linalg.copy ins(%{{.*}} : tensor<3xf32>) outs(%[[V2]] : tensor<3xf32>)
// CHECK:           scf.yield %[[NEXTI]], %[[NEXTV]]
// CHECK:         return %[[R]]#1
func.func @loop_while(%x: tensor<3xf32>, %m: tensor<i64>, %cond: tensor<i1>, %lim: tensor<f32>) -> tensor<3xf32> {
  %none = onnx.NoValue : () -> none
  %0 = onnx.Loop %m, %cond, %x : (tensor<i64>, tensor<i1>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
    %a = onnx.Add %v, %v : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %s = onnx.ReduceSum %a, %none {keepdims = 0 : i64} : (tensor<3xf32>, none) -> tensor<f32>
    %go = onnx.Less %s, %lim : (tensor<f32>, tensor<f32>) -> tensor<i1>
    onnx.Yield %go, %a : tensor<i1>, tensor<3xf32>
  }
  return %0 : tensor<3xf32>
}

// -----

// Scan along axis 1 backwards; the output slices go forwards along the last axis.
// CHECK-LABEL: func.func @scan_reverse
// CHECK:         %[[OUT:.*]] = tensor.empty() : tensor<2x5xf32>
// CHECK:         %[[R:.*]]:2 = scf.for %[[I:.*]] = %c0 to %c5 step %c1 iter_args(%[[S:.*]] = %{{.*}}, %[[O:.*]] = %[[OUT]]) -> (tensor<2xf32>, tensor<2x5xf32>)
// CHECK:           %[[POS:.*]] = arith.subi %c4, %[[I]] : index
// CHECK:           %[[SLICE:.*]] = tensor.extract_slice %{{.*}}[0, %[[POS]]] [2, 1] [1, 1] : tensor<2x5xf32> to tensor<2xf32>
// CHECK:           %[[ADD:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[SLICE]]
// CHECK:           %[[NEXT:.*]] = linalg.copy ins(%[[ADD]] : tensor<2xf32>) outs(%[[S]] : tensor<2xf32>)
// CHECK:           %[[INS:.*]] = tensor.insert_slice %[[ADD]] into %[[O]][0, %[[I]]] [2, 1] [1, 1] : tensor<2xf32> into tensor<2x5xf32>
// CHECK:           scf.yield %[[NEXT]], %[[INS]]
func.func @scan_reverse(%s: tensor<2xf32>, %x: tensor<2x5xf32>) -> (tensor<2xf32>, tensor<2x5xf32>) {
  %0:2 = onnx.Scan %s, %x {num_scan_inputs = 1 : i64, scan_input_axes = [1], scan_input_directions = [1], scan_output_axes = [-1]} : (tensor<2xf32>, tensor<2x5xf32>) -> (tensor<2xf32>, tensor<2x5xf32>) {
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    %y = onnx.Add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %y, %y : tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<2xf32>, tensor<2x5xf32>
}

// -----

// x[i : i + 2] at the iteration number: an extract_slice at the run-time offset i,
// clamped into [0, 6 - 2].
// CHECK-LABEL: func.func @slice_at_iteration_number
// CHECK:         scf.for
// CHECK:           %[[I:.*]] = tensor.extract %{{.*}}[%{{.*}}] : tensor<1xi64>
// CHECK:           %[[IDX:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK:           %[[LO:.*]] = arith.maxsi %[[IDX]], %{{.*}} : index
// CHECK:           %[[OFF:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK:           tensor.extract_slice %{{.*}}[%[[OFF]], 0] [2, 3] [1, 1] : tensor<6x3xf32> to tensor<2x3xf32>
func.func @slice_at_iteration_number(%x: tensor<6x3xf32>) -> tensor<2x3xf32> {
  %none = onnx.NoValue : () -> none
  %m = onnx.Constant {value = dense<5> : tensor<i64>} : () -> tensor<i64>
  %two = onnx.Constant {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %axes = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %init = onnx.Constant {value = dense<0.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %0 = onnx.Loop %m, %none, %init : (tensor<i64>, none, tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2x3xf32>):
    %end = onnx.Add %i, %two : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %s = onnx.Unsqueeze %i, %axes : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %e = onnx.Unsqueeze %end, %axes : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %rows = onnx.Slice %x, %s, %e, %none, %none : (tensor<6x3xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<2x3xf32>
    %a = onnx.Add %v, %rows : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    onnx.Yield %c, %a : tensor<i1>, tensor<2x3xf32>
  }
  return %0 : tensor<2x3xf32>
}

// -----

// A run-time M whose body yields its own condition: the number of iterations,
// `cond ? max(M, 0) : 0`, is computed before the loop (checked to keep the scan output
// below 2^40 elements); scf.for to it, the scan output that long. The scan slice (the
// carried value itself) is inserted before the carried value's copy overwrites it.
// CHECK-LABEL: func.func @loop_run_time_trips
// CHECK:         %[[M:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// CHECK:         %[[MAX:.*]] = arith.maxsi %[[M]], %{{.*}} : i64
// CHECK:         %[[C:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK:         %[[N:.*]] = arith.select %[[C]], %[[MAX]], %{{.*}} : i64
// CHECK:         %[[OK:.*]] = arith.cmpi sle, %[[N]]
// CHECK:         kiln.check %{{.*}}, "node (Loop): the number of iterations (the scan outputs' length) is above 2^40 elements"
// CHECK:         %[[IDX:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK:         %[[T:.*]] = arith.select %[[OK]], %[[IDX]]
// CHECK:         %[[E:.*]] = tensor.empty(%[[T]]) : tensor<?x3xf32>
// CHECK:         scf.for %[[IV:.*]] = %{{.*}} to %[[T]] step %{{.*}} iter_args(%[[V:.*]] = %{{.*}}, %[[S:.*]] = %[[E]])
// CHECK:           %[[INS:.*]] = tensor.insert_slice %[[V]] into %[[S]][%[[IV]], 0] [1, 3] [1, 1]
// CHECK:           linalg.copy
// CHECK:           scf.yield %{{.*}}, %[[INS]]
func.func @loop_run_time_trips(%x: tensor<3xf32>, %m: tensor<i64>, %cond: tensor<i1>) -> (tensor<3xf32>, tensor<?x3xf32>) {
  %0:2 = onnx.Loop %m, %cond, %x : (tensor<i64>, tensor<i1>, tensor<3xf32>) -> (tensor<3xf32>, tensor<?x3xf32>) {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
    %a = onnx.Add %v, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    onnx.Yield %c, %a, %v : tensor<i1>, tensor<3xf32>, tensor<3xf32>
  }
  return %0#0, %0#1 : tensor<3xf32>, tensor<?x3xf32>
}
