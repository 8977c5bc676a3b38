// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s
// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file -canonicalize \
// RUN:   -one-shot-bufferize=bufferize-function-boundaries > /dev/null

// The Einsums kiln-decompose leaves: one linalg.generic over every label,
// output labels parallel first, summed labels as reductions.

// A diagonal: the repeated label reads the same loop index twice.
// CHECK-DAG: #[[DIAG:.*]] = affine_map<(d0, d1) -> (d0, d1, d1)>
// CHECK-DAG: #[[OUT2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @einsum_batch_diagonal
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x5xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[DIAG]], #[[OUT2]]], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<3x5x5xf32>) outs(%[[INIT]] : tensor<3x5xf32>)
// CHECK:           arith.addf
func.func @einsum_batch_diagonal(%x: tensor<3x5x5xf32>) -> tensor<3x5xf32> {
  %0 = onnx.Einsum %x {equation = "...ii ->...i"} : (tensor<3x5x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// A sum over j and a transposed output.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @einsum_sum_transpose
// CHECK:         linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
func.func @einsum_sum_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x3xf32> {
  %0 = onnx.Einsum %x {equation = "jik->ki"} : (tensor<2x3x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Three operands; a size-1 dim broadcasts (reads index 0).
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1) -> (0, d0)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @einsum_three_broadcast
// CHECK:         linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[A]], #[[O]]], iterator_types = ["parallel", "reduction"]}
// CHECK:           arith.mulf
// CHECK:           arith.mulf
// CHECK:           arith.addf
func.func @einsum_three_broadcast(%v: tensor<3xf32>, %m: tensor<1x5xf32>) -> tensor<5xf32> {
  %0 = onnx.Einsum %v, %m, %v {equation = "i,ij,i->j"} : (tensor<3xf32>, tensor<1x5xf32>, tensor<3xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// bf16 accumulates in f32, rounded once at the end; integers multiply and add
// as integers.
// CHECK-LABEL: func.func @einsum_narrow_and_int
// CHECK:         linalg.generic {{.*}} ins(%arg0 : tensor<3x4xbf16>) outs(%{{.*}} : tensor<3xf32>)
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
// CHECK:         linalg.generic {{.*}} ins(%arg1, %arg1 : tensor<3xi32>, tensor<3xi32>) outs(%{{.*}} : tensor<3x3xi32>)
// CHECK:           arith.muli
// CHECK:           arith.addi
func.func @einsum_narrow_and_int(%x: tensor<3x4xbf16>, %v: tensor<3xi32>) -> (tensor<3xbf16>, tensor<3x3xi32>) {
  %0 = onnx.Einsum %x {equation = "ij->i"} : (tensor<3x4xbf16>) -> tensor<3xbf16>
  %1 = onnx.Einsum %v, %v {equation = "i,j->ij"} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3x3xi32>
  return %0, %1 : tensor<3xbf16>, tensor<3x3xi32>
}

// -----

// A scalar: no loops.
// CHECK-LABEL: func.func @einsum_scalar
// CHECK:         linalg.generic {{.*}} iterator_types = []} ins(%arg0 : tensor<f32>) outs(%{{.*}} : tensor<f32>)
func.func @einsum_scalar(%x: tensor<f32>) -> tensor<f32> {
  %0 = onnx.Einsum %x {equation = "->"} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
