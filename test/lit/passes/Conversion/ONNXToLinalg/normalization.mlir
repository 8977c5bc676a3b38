// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s
// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file -one-shot-bufferize=bufferize-function-boundaries | FileCheck %s --check-prefix=BUF

// BUF-NOT: tensor.empty

// Numerically stable softmax: max, e = exp(x - max) once, sum(e), e * (1 / sum).
// CHECK-LABEL: func.func @softmax
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           arith.maximumf
// CHECK:         } -> tensor<2xf32>
// CHECK:         tensor.expand_shape {{.*}} : tensor<2xf32> into tensor<2x1xf32>
// CHECK:         %[[E:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:         } -> tensor<2x5xf32>
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[E]]
// CHECK-NOT:       math.exp
// CHECK:           arith.addf
// CHECK:           arith.divf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%[[E]]
// CHECK-NOT:       math.exp
// CHECK:           arith.mulf
// CHECK:         } -> tensor<2x5xf32>
func.func @softmax(%a: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = "onnx.Softmax"(%a) {axis = -1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK:           arith.maximumf
// CHECK:         math.log
// CHECK:         tensor.expand_shape {{.*}} : tensor<5xf32> into tensor<1x5xf32>
// CHECK:         linalg.generic
// CHECK:           arith.subf
// CHECK-NOT:       math.exp
// CHECK:         } -> tensor<2x5xf32>
func.func @log_softmax(%a: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = "onnx.LogSoftmax"(%a) {axis = 0 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// CHECK-LABEL: func.func @layernorm
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4x8xf32>, %[[S:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:         arith.constant 8.000000e+00
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:         arith.constant 9.99999974E-6
// CHECK:         math.sqrt
// CHECK:         %[[MEAN:.*]] = tensor.expand_shape {{.*}} into tensor<2x4x1xf32>
// CHECK:         %[[INV:.*]] = tensor.expand_shape {{.*}} into tensor<2x4x1xf32>
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[X]], %[[S]], %[[B]], %[[MEAN]], %[[INV]] :
func.func @layernorm(%x: tensor<2x4x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %0, %1, %2 = "onnx.LayerNormalization"(%x, %s, %b) {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, none, none)
  return %0 : tensor<2x4x8xf32>
}

// -----

// Mean and InvStdDev outputs have the keepdims shape.
// CHECK-LABEL: func.func @layernorm_stats
// CHECK:         %[[MEAN:.*]] = tensor.expand_shape {{.*}} : tensor<2xf32> into tensor<2x1x1xf32>
// CHECK:         %[[INV:.*]] = tensor.expand_shape {{.*}} : tensor<2xf32> into tensor<2x1x1xf32>
// CHECK:         %[[Y:.*]] = linalg.generic
// CHECK:         return %[[Y]], %[[MEAN]], %[[INV]]
func.func @layernorm_stats(%x: tensor<2x4x8xf32>, %s: tensor<4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) {
  %none = "onnx.NoValue"() : () -> none
  %0, %1, %2 = "onnx.LayerNormalization"(%x, %s, %none) {axis = 1 : i64} : (tensor<2x4x8xf32>, tensor<4x8xf32>, none) -> (tensor<2x4x8xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  return %0, %1, %2 : tensor<2x4x8xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>
}

// -----

// Constant parameters fold into one scale and one shift per channel.
// CHECK: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// CHECK-LABEL: func.func @batchnorm_const
// CHECK-DAG:     %[[A:.*]] = arith.constant dense<1.000000e+00> : tensor<2x1x1xf32>
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<{{\[\[\[}}5.000000e-01]], {{\[\[}}-1.500000e+00]]]> : tensor<2x1x1xf32>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[CH]], #[[CH]], #{{.*}}]
// CHECK-SAME:      ins(%{{.*}}, %[[A]], %[[B]] :
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK-NOT:       math.sqrt
func.func @batchnorm_const(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %s = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "onnx.Constant"() {value = dense<[0.5, -0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %m = "onnx.Constant"() {value = dense<[0.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %v = "onnx.Constant"() {value = dense<[1.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0, %1, %2 = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3x3xf32>, none, none)
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @batchnorm_dynamic
// CHECK-COUNT-4: tensor.expand_shape {{.*}} : tensor<2xf32> into tensor<2x1x1xf32>
// CHECK:         linalg.generic
// CHECK:           math.sqrt
func.func @batchnorm_dynamic(%x: tensor<1x2x3x3xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %0, %1, %2 = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3x3xf32>, none, none)
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @instancenorm
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK:         arith.constant 9.000000e+00
// CHECK:         tensor.expand_shape {{.*}} : tensor<1x2xf32> into tensor<1x2x1x1xf32>
func.func @instancenorm(%x: tensor<1x2x3x3xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = "onnx.InstanceNormalization"(%x, %s, %b) : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}
