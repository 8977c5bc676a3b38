// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s -mlir-print-op-generic | kiln-opt | FileCheck %s

// If, Loop and Scan print and parse back, in the custom and the generic form.

// CHECK-LABEL: func.func @control_flow
// CHECK:         onnx.If %arg0 : tensor<i1> -> tensor<2xf32> {
// CHECK:           onnx.Yield %arg1 : tensor<2xf32>
// CHECK:         } else {
// CHECK:         onnx.Loop %{{.*}}, %{{.*}}, %arg1 : (tensor<i64>, none, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
// CHECK:         ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<i1>, %{{.*}}: tensor<2xf32>):
// CHECK:         onnx.Scan %arg1, %arg2 {num_scan_inputs = 1 : i64, scan_input_directions = [1]} : (tensor<2xf32>, tensor<4x2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>) {
func.func @control_flow(%c: tensor<i1>, %x: tensor<2xf32>, %xs: tensor<4x2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<4x2xf32>) {
  %0 = onnx.If %c : tensor<i1> -> tensor<2xf32> {
    onnx.Yield %x : tensor<2xf32>
  } else {
    %n = onnx.Neg %x : (tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %n : tensor<2xf32>
  }
  %none = onnx.NoValue : () -> none
  %m = onnx.Constant {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %1:2 = onnx.Loop %m, %none, %x : (tensor<i64>, none, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2xf32>):
    onnx.Yield %cond, %v, %v : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  %2:2 = onnx.Scan %x, %xs {num_scan_inputs = 1 : i64, scan_input_directions = [1]} : (tensor<2xf32>, tensor<4x2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>) {
  ^bb0(%s: tensor<2xf32>, %e: tensor<2xf32>):
    %a = onnx.Add %s, %e : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %a, %a : tensor<2xf32>, tensor<2xf32>
  }
  return %0, %1#0, %1#1, %2#0, %2#1 : tensor<2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<4x2xf32>
}
