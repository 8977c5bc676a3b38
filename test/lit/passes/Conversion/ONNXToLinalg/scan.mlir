// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// CumSum/CumProd: a loop over the scanned axis carrying the running slice;
// Trilu: a generic comparing the diagonal offset j - i with k.

// CHECK-LABEL: func.func @cumsum_exclusive_reverse
// CHECK:         %[[R:.*]]:2 = scf.for %[[I:.*]] = %c0 to %c3 step %c1 iter_args(%[[ACC:.*]] = %{{.*}}, %[[OUT:.*]] = %{{.*}}) -> (tensor<2x1xf32>, tensor<2x3xf32>)
// CHECK:           %[[POS:.*]] = arith.subi %c2, %[[I]]
// CHECK:           %[[X:.*]] = tensor.extract_slice %{{.*}}[0, %[[POS]]] [2, 1] [1, 1]
// Exclusive: the slice written is the running value before this step's add.
// CHECK:           tensor.insert_slice %[[ACC]] into %[[OUT]][0, %[[POS]]] [2, 1] [1, 1]
// The running value is updated in place.
// CHECK:           linalg.generic {{.*}} ins(%[[X]] : tensor<2x1xf32>) outs(%[[ACC]] : tensor<2x1xf32>)
// CHECK:             arith.addf
// CHECK:         return %[[R]]#1
func.func @cumsum_exclusive_reverse(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %axis = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.CumSum"(%x, %axis) {exclusive = 1 : i64, reverse = 1 : i64} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @cumprod_int
// CHECK:         scf.for
// CHECK:           arith.muli
// CHECK:           tensor.insert_slice
func.func @cumprod_int(%x: tensor<4xi32>) -> tensor<4xi32> {
  %axis = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.CumProd"(%x, %axis) : (tensor<4xi32>, tensor<1xi64>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @trilu_lower_runtime_k
// CHECK:         %[[K:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// CHECK:         linalg.generic
// CHECK:           %[[D:.*]] = arith.subi
// CHECK:           %[[KEEP:.*]] = arith.cmpi sle, %[[D]], %[[K]] : i64
// CHECK:           arith.select %[[KEEP]]
func.func @trilu_lower_runtime_k(%x: tensor<3x4xf32>, %k: tensor<i64>) -> tensor<3x4xf32> {
  %0 = "onnx.Trilu"(%x, %k) {upper = 0 : i64} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @range_float
// CHECK:         %[[START:.*]] = tensor.extract %arg0[]
// CHECK:         %[[DELTA:.*]] = tensor.extract %arg1[]
// CHECK:         linalg.generic
// CHECK:           linalg.index 0
// CHECK:           arith.uitofp
// CHECK:           %[[M:.*]] = arith.mulf %{{.*}}, %[[DELTA]]
// CHECK:           arith.addf %[[START]], %[[M]]
func.func @range_float(%s: tensor<f32>, %d: tensor<f32>) -> tensor<4xf32> {
  %l = onnx.Constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %0 = "onnx.Range"(%s, %l, %d) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
