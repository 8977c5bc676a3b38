// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// TopK: a loop over the rows (the dims other than axis), one over the row's
// elements, the count of kept entries at least as good (oge for largest,
// strict insertion order keeps ties by index), the shift of the ones after,
// and the insertion of the value and its index.
// CHECK-LABEL: func.func @topk_largest
// CHECK-SAME:    (%[[X:.*]]: tensor<2x5x3xf32>)
// CHECK-DAG:     %[[V0:.*]] = tensor.empty() : tensor<2x2x3xf32>
// CHECK-DAG:     %[[I0:.*]] = tensor.empty() : tensor<2x2x3xi64>
// CHECK:         %[[R:.*]]:2 = scf.for %[[ROW:.*]] = %{{.*}} to %c6 step %{{.*}} iter_args(%{{.*}} = %[[V0]], %{{.*}} = %[[I0]])
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %c5
// CHECK:             %[[E:.*]] = tensor.extract %[[X]]
// CHECK:             arith.minui %[[J]], %c2
// CHECK:             scf.for
// CHECK:               arith.cmpf oge
// CHECK:             scf.if
// CHECK:               scf.for
// CHECK:               arith.index_cast %[[J]] : index to i64
// CHECK:               tensor.insert %[[E]]
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @topk_largest(%x: tensor<2x5x3xf32>) -> (tensor<2x2x3xf32>, tensor<2x2x3xi64>) {
  %k = onnx.Constant {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %v, %i = "onnx.TopK"(%x, %k) {axis = 1 : i64} : (tensor<2x5x3xf32>, tensor<1xi64>) -> (tensor<2x2x3xf32>, tensor<2x2x3xi64>)
  return %v, %i : tensor<2x2x3xf32>, tensor<2x2x3xi64>
}

// -----

// Smallest of unsigned integers: an unsigned comparison.
// CHECK-LABEL: func.func @topk_smallest_unsigned
// CHECK:         arith.cmpi ule
func.func @topk_smallest_unsigned(%x: tensor<4x7xui8>) -> (tensor<4x3xui8>, tensor<4x3xi64>) {
  %k = onnx.Constant {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %v, %i = "onnx.TopK"(%x, %k) {largest = 0 : i64} : (tensor<4x7xui8>, tensor<1xi64>) -> (tensor<4x3xui8>, tensor<4x3xi64>)
  return %v, %i : tensor<4x3xui8>, tensor<4x3xi64>
}
