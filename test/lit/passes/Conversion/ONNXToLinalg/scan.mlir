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

// A run-time axis: normalized, checked in [0, rank) (kiln.check naming the
// node), then an scf.index_switch whose cases are the static-axis scans.
// CHECK-LABEL: func.func @cumsum_runtime_axis
// CHECK:         %[[A:.*]] = tensor.extract %arg1[%c0] : tensor<1xi32>
// CHECK:         %[[I:.*]] = arith.index_cast %[[A]] : i32 to index
// CHECK:         %[[NEG:.*]] = arith.cmpi slt, %[[I]], %c0
// CHECK:         %[[ADD:.*]] = arith.addi %[[I]], %c3
// CHECK:         %[[N:.*]] = arith.select %[[NEG]], %[[ADD]], %[[I]]
// CHECK:         kiln.check %{{.*}}, "node 'cs' (CumSum): axis out of range" : tensor<i1>
// CHECK:         %[[R:.*]] = scf.index_switch %[[N]] -> tensor<2x3x4xf32>
// CHECK:         case 0 {
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step
// CHECK:             tensor.extract_slice %arg0[%{{.*}}, 0, 0] [1, 3, 4]
// CHECK:         case 1 {
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c3{{.*}} step
// CHECK:             tensor.extract_slice %arg0[0, %{{.*}}, 0] [2, 1, 4]
// CHECK:         default {
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step
// CHECK:             tensor.extract_slice %arg0[0, 0, %{{.*}}] [2, 3, 1]
// CHECK:         return %[[R]]
func.func @cumsum_runtime_axis(%x: tensor<2x3x4xf32>, %axis: tensor<1xi32>) -> tensor<2x3x4xf32> {
  %0 = "onnx.CumSum"(%x, %axis) : (tensor<2x3x4xf32>, tensor<1xi32>) -> tensor<2x3x4xf32> loc("cs")
  return %0 : tensor<2x3x4xf32>
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
