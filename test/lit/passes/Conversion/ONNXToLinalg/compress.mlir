// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// Compress: one loop counts the true conditions (the result's run dim), a second copies
// each selected slice to the next place; without an axis over the flattened input; a
// condition shorter than the axis stops at its end.
// CHECK-LABEL: func.func @rows
// CHECK: %[[COUNT:.*]] = scf.for {{.*}} -> (index)
// CHECK:   tensor.extract %arg1
// CHECK:   arith.select
// CHECK: %[[OUT:.*]] = tensor.empty(%[[COUNT]]) : tensor<?x4xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[OUT]], %{{.*}} = %{{.*}}) -> (tensor<?x4xf32>, index)
// CHECK:   scf.if
// CHECK:     tensor.extract_slice %arg0[%{{.*}}, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<1x4xf32>
// CHECK:     tensor.insert_slice
func.func @rows(%x: tensor<3x4xf32>, %c: tensor<3xi1>) -> tensor<?x4xf32> {
  %0 = "onnx.Compress"(%x, %c) {axis = 0 : i64} : (tensor<3x4xf32>, tensor<3xi1>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @flat_short_condition
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<2x3xi64> into tensor<6xi64>
// CHECK: scf.for %{{.*}} = %c0 to %c2
// CHECK: tensor.extract_slice %[[FLAT]]
func.func @flat_short_condition(%x: tensor<2x3xi64>, %c: tensor<2xi1>) -> tensor<?xi64> {
  %0 = "onnx.Compress"(%x, %c) : (tensor<2x3xi64>, tensor<2xi1>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}
