// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// Resize: one linalg.generic per resized axis, reading compile-time tables of
// source indices (and weights) computed like ONNX's reference.

// Nearest (half_pixel, round_prefer_floor) 2x along the last axis: a plain
// gather, source index per output position [0, 0, 1, 1].
// CHECK-LABEL: func.func @nearest_upsample
// CHECK:         %[[IDX:.*]] = arith.constant dense<{{\[}}[0], [0], [1], [1]]> : tensor<4x1xi64>
// CHECK:         linalg.generic {{.*}} ins(%[[IDX]] : tensor<4x1xi64>)
// CHECK:           arith.index_cast
// CHECK:           tensor.extract
// CHECK-NOT:       arith.mulf
// CHECK:         return
func.func @nearest_upsample(%x: tensor<1x2xf32>) -> tensor<1x4xf32> {
  %none = "onnx.NoValue"() : () -> none
  %scales = onnx.Constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "onnx.Resize"(%x, %none, %scales, %none) {mode = "nearest"} : (tensor<1x2xf32>, none, tensor<2xf32>, none) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

// Linear, asymmetric, 2x: two taps per output with weights (0, 1), (.5, .5), ...
// CHECK-LABEL: func.func @linear_asymmetric
// CHECK-DAG:     arith.constant dense<{{\[}}[0, 0], [0, 1], [0, 1], [1, 1]]> : tensor<4x2xi64>
// CHECK-DAG:     arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+00], [5.000000e-01, 5.000000e-01], [0.000000e+00, 1.000000e+00], [5.000000e-01, 5.000000e-01]]> : tensor<4x2xf32>
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:           arith.mulf
// CHECK:           arith.addf
func.func @linear_asymmetric(%x: tensor<1x2xf32>) -> tensor<1x4xf32> {
  %none = "onnx.NoValue"() : () -> none
  %scales = onnx.Constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "onnx.Resize"(%x, %none, %scales, %none) {mode = "linear", coordinate_transformation_mode = "asymmetric"} : (tensor<1x2xf32>, none, tensor<2xf32>, none) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}
