// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// Scatter*: a loop nest over the updates carrying the output and an in-range
// flag; indices wrap once when negative, are clamped, and the flag becomes a
// kiln.check.

// CHECK-LABEL: func.func @scatter_elements_add
// CHECK:         %[[R:.*]]:2 = scf.for {{.*}} iter_args(%[[OUT:.*]] = %arg0, %[[OK:.*]] = %true)
// CHECK:           scf.for
// CHECK:             %[[RAW:.*]] = tensor.extract %arg1
// CHECK:             arith.cmpi slt, %[[RAW]]
// CHECK:             arith.index_cast
// CHECK:             %[[UPD:.*]] = tensor.extract %arg2
// CHECK:             %[[OLD:.*]] = tensor.extract
// CHECK:             %[[NEW:.*]] = arith.addf %[[OLD]], %[[UPD]]
// CHECK:             tensor.insert %[[NEW]]
// CHECK:         %[[FLAG:.*]] = tensor.from_elements %[[R]]#1 : tensor<i1>
// CHECK:         kiln.check %[[FLAG]], "node (ScatterElements): index out of range"
// CHECK:         return %[[R]]#0
func.func @scatter_elements_add(%d: tensor<3x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %0 = "onnx.ScatterElements"(%d, %i, %u) {axis = 0 : i64, reduction = "add"} : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// ScatterND with k = 1: each index row selects a slice of data.
// CHECK-LABEL: func.func @scatter_nd
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             tensor.extract %arg1
// CHECK:             tensor.insert
// CHECK:         kiln.check
func.func @scatter_nd(%d: tensor<4x2xf32>, %i: tensor<2x1xi64>, %u: tensor<2x2xf32>) -> tensor<4x2xf32> {
  %0 = "onnx.ScatterND"(%d, %i, %u) : (tensor<4x2xf32>, tensor<2x1xi64>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
