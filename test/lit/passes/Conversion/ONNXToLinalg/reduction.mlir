// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s
// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file -one-shot-bufferize=bufferize-function-boundaries | FileCheck %s --check-prefix=BUF

// BUF-NOT: tensor.empty

// CHECK: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @reduce_sum_keepdims
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:      outs(%[[F]] : tensor<2x4xf32>)
// CHECK:           arith.addf
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0], [1, 2]] output_shape [2, 1, 4]
// CHECK:         return %[[E]]
func.func @reduce_sum_keepdims(%a: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %axes = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.ReduceSum"(%a, %axes) : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x1x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// -----

// Absent axes reduce everything.
// CHECK-LABEL: func.func @reduce_mean_all
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// CHECK:         arith.constant 6.000000e+00 : f32
// CHECK:         arith.divf
// CHECK:         -> tensor<f32>
func.func @reduce_mean_all(%a: tensor<2x3xf32>) -> tensor<f32> {
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.ReduceMean"(%a, %none) {keepdims = 0 : i64} : (tensor<2x3xf32>, none) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @reduce_max_int
// CHECK:         %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK:         linalg.fill ins(%[[MIN]] : i32)
// CHECK:         arith.maxsi
// CHECK-NOT:     tensor.expand_shape
func.func @reduce_max_int(%a: tensor<2x3xi32>) -> tensor<2xi32> {
  %axes = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.ReduceMax"(%a, %axes) {keepdims = 0 : i64} : (tensor<2x3xi32>, tensor<1xi64>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @reduce_l2
// CHECK:         arith.mulf
// CHECK:         arith.addf
// CHECK:         math.sqrt
func.func @reduce_l2(%a: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %axes = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.ReduceL2"(%a, %axes) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_logsumexp
// CHECK:         arith.maximumf
// CHECK:         math.exp
// CHECK:         math.log
func.func @reduce_logsumexp(%a: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %axes = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.ReduceLogSumExp"(%a, %axes) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_sum_f16
// CHECK:         linalg.generic
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:         } -> tensor<2xf32>
// CHECK:         arith.truncf %{{.*}} : f32 to f16
func.func @reduce_sum_f16(%a: tensor<2x3xf16>) -> tensor<2x1xf16> {
  %axes = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.ReduceSum"(%a, %axes) : (tensor<2x3xf16>, tensor<1xi64>) -> tensor<2x1xf16>
  return %0 : tensor<2x1xf16>
}

// -----

// CHECK-LABEL: func.func @reduce_noop
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    return %[[A]]
func.func @reduce_noop(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.ReduceSum"(%a, %none) {noop_with_empty_axes = 1 : i64} : (tensor<2x3xf32>, none) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// select_last_index = 1 keeps the last maximum (>=).
// CHECK-LABEL: func.func @argmax
// CHECK:         %[[G:.*]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           %[[I:.*]] = linalg.index 1 : index
// CHECK:           arith.index_cast %[[I]] : index to i64
// CHECK:           arith.cmpf oge
// CHECK:         tensor.expand_shape %[[G]]#1 {{.*}} : tensor<2xi64> into tensor<2x1xi64>
func.func @argmax(%a: tensor<2x3xf32>) -> tensor<2x1xi64> {
  %0 = "onnx.ArgMax"(%a) {axis = 1 : i64, select_last_index = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}

// -----

// CHECK-LABEL: func.func @argmin
// CHECK:         %[[G:.*]]:2 = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK:           arith.cmpi slt
// CHECK:         return %[[G]]#1 : tensor<3xi64>
func.func @argmin(%a: tensor<2x3xi32>) -> tensor<3xi64> {
  %0 = "onnx.ArgMin"(%a) {axis = 0 : i64, keepdims = 0 : i64} : (tensor<2x3xi32>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// An axes input with no elements (a graph input of shape [0]) is the empty
// list: every axis reduced.
// CHECK-LABEL: func.func @reduce_empty_axes_input
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK:           arith.addf
func.func @reduce_empty_axes_input(%x: tensor<2x3xf32>, %axes: tensor<0xi64>) -> tensor<1x1xf32> {
  %0 = "onnx.ReduceSum"(%x, %axes) : (tensor<2x3xf32>, tensor<0xi64>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

