// RUN: kiln-opt %s -kiln-decompose -split-input-file | FileCheck %s

// A MatMul-shaped Einsum becomes MatMul (batch dims first, M and K flattened).
// CHECK-LABEL: func.func @einsum_batch_matmul
// CHECK-NOT: onnx.Einsum
// CHECK: %[[C:.*]] = onnx.MatMul %arg0, %arg1 {{.*}} -> tensor<5x2x4xf32>
// CHECK: return %[[C]]
func.func @einsum_batch_matmul(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
  %0 = onnx.Einsum %a, %b {equation = "bij, bjk -> bik"} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}

// -----

// Operands transposed to [batch, m, k] / [batch, k, n], two contracted labels
// flattened to one K, a label of B's only summed first, the product
// transposed to the output order.
// CHECK-LABEL: func.func @einsum_general
// CHECK-NOT: onnx.Einsum
// CHECK: %[[AT:.*]] = onnx.Transpose %arg0 {perm = [1, 0, 2, 3]} {{.*}} -> tensor<2x3x4x5xf32>
// CHECK: %[[A:.*]] = onnx.Reshape %[[AT]], {{.*}} -> tensor<2x3x20xf32>
// CHECK: %[[BS:.*]] = onnx.ReduceSum %arg1, {{.*}} {keepdims = 0 : i64} {{.*}} -> tensor<4x2x5x6xf32>
// CHECK: %[[BT:.*]] = onnx.Transpose %[[BS]] {perm = [1, 0, 2, 3]} {{.*}} -> tensor<2x4x5x6xf32>
// CHECK: %[[B:.*]] = onnx.Reshape %[[BT]], {{.*}} -> tensor<2x20x6xf32>
// CHECK: %[[C:.*]] = onnx.MatMul %[[A]], %[[B]] {{.*}} -> tensor<2x3x6xf32>
// CHECK: onnx.Transpose %[[C]] {perm = [2, 0, 1]} {{.*}} -> tensor<6x2x3xf32>
func.func @einsum_general(%a: tensor<3x2x4x5xf32>, %b: tensor<4x2x5x7x6xf32>) -> tensor<6x2x3xf32> {
  %0 = onnx.Einsum %a, %b {equation = "mbkl,kblzn->nbm"} : (tensor<3x2x4x5xf32>, tensor<4x2x5x7x6xf32>) -> tensor<6x2x3xf32>
  return %0 : tensor<6x2x3xf32>
}

// -----

// A size-1 batch dim broadcasts in the MatMul.
// CHECK-LABEL: func.func @einsum_broadcast_batch
// CHECK-NOT: onnx.Einsum
// CHECK: onnx.MatMul %arg0, %arg1 {{.*}} (tensor<3x5x5xf32>, tensor<1x5x4xf32>) -> tensor<3x5x4xf32>
func.func @einsum_broadcast_batch(%a: tensor<3x5x5xf32>, %b: tensor<1x5x4xf32>) -> tensor<3x5x4xf32> {
  %0 = onnx.Einsum %a, %b {equation = "...ij,...jk->...ik"} : (tensor<3x5x5xf32>, tensor<1x5x4xf32>) -> tensor<3x5x4xf32>
  return %0 : tensor<3x5x4xf32>
}

// -----

// Diagonals, single operands, other broadcast dims, outer products and three
// operands stay Einsum (convert-onnx-to-linalg lowers them to one
// linalg.generic).
// CHECK-LABEL: func.func @einsum_kept
// CHECK-COUNT-4: onnx.Einsum
// CHECK-NOT: onnx.MatMul
func.func @einsum_kept(%a: tensor<3x5x5xf32>, %b: tensor<1x4xf32>, %v: tensor<3xf32>, %m: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5x4xf32>, tensor<3x3xf32>, tensor<5xf32>) {
  %0 = onnx.Einsum %a {equation = "...ii->...i"} : (tensor<3x5x5xf32>) -> tensor<3x5xf32>
  %1 = onnx.Einsum %a, %b {equation = "bij,jk->bik"} : (tensor<3x5x5xf32>, tensor<1x4xf32>) -> tensor<3x5x4xf32>
  %2 = onnx.Einsum %v, %v {equation = "i,j->ij"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  %3 = onnx.Einsum %v, %m, %v {equation = "i,ij,i->j"} : (tensor<3xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<5xf32>
  return %0, %1, %2, %3 : tensor<3x5xf32>, tensor<3x5x4xf32>, tensor<3x3xf32>, tensor<5xf32>
}

