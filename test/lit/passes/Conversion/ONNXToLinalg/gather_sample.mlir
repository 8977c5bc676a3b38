// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// GatherND: each index component is range-checked (kiln.check) and clamped;
// one generic gathers the slices.
// CHECK-LABEL: func.func @gather_nd
// CHECK:         kiln.check %{{.*}}, "node (GatherND): index out of range"
// CHECK:         kiln.check %{{.*}}, "node (GatherND): index out of range"
// CHECK:         linalg.generic
// CHECK:           tensor.extract %arg1
// CHECK:           arith.minsi
// CHECK:           tensor.extract %arg0
func.func @gather_nd(%d: tensor<2x2xf32>, %i: tensor<2x2xi64>) -> tensor<2xf32> {
  %0 = "onnx.GatherND"(%d, %i) : (tensor<2x2xf32>, tensor<2x2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// GridSample, bilinear with zero padding: 4 taps, each zeroed outside.
// CHECK-LABEL: func.func @grid_sample
// CHECK:         linalg.generic
// CHECK-COUNT-2:   tensor.extract %arg1
// CHECK:           math.floor
// CHECK-COUNT-4:   tensor.extract %arg0
func.func @grid_sample(%x: tensor<1x1x3x3xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %0 = "onnx.GridSample"(%x, %g) {mode = "linear", padding_mode = "zeros"} : (tensor<1x1x3x3xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
