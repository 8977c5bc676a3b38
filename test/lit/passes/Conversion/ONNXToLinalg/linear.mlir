// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s
// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file -canonicalize \
// RUN:   -one-shot-bufferize=bufferize-function-boundaries > /dev/null

// MatMul and Gemm -> linalg.matmul / linalg.batch_matmul on zero-filled
// accumulators; Gemm's alpha/beta/C in one following elementwise generic.

// CHECK-LABEL: func.func @matmul_2d
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32>) outs(%[[FILL]] : tensor<2x4xf32>)
// CHECK:         return %[[MM]]
func.func @matmul_2d(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_batched
// CHECK:         linalg.fill
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%{{.*}} : tensor<2x3x5xf32>)
func.func @matmul_batched(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// A 2-D B: A's batch is folded into M, one linalg.matmul.
// CHECK-LABEL: func.func @matmul_weights_2d
// CHECK:         %[[A:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[A]], %{{.*}} : tensor<6x4xf32>, tensor<4x5xf32>)
// CHECK:         tensor.expand_shape %[[MM]] {{\[}}[0, 1], [2]] output_shape [2, 3, 5] : tensor<6x5xf32> into tensor<2x3x5xf32>
func.func @matmul_weights_2d(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_broadcast_batch
// CHECK:         %[[BC:.*]] = linalg.generic
// CHECK-SAME:      ins(%{{.*}} : tensor<1x3x4xf32>) outs(%{{.*}} : tensor<2x1x3x4xf32>)
// CHECK:         %[[A:.*]] = tensor.collapse_shape %[[BC]] {{.*}} into tensor<2x3x4xf32>
// CHECK:         %[[B:.*]] = tensor.collapse_shape %{{.*}} into tensor<2x4x5xf32>
// CHECK:         %[[BMM:.*]] = linalg.batch_matmul ins(%[[A]], %[[B]] :
// CHECK:         tensor.expand_shape %[[BMM]] {{.*}} into tensor<2x1x3x5xf32>
func.func @matmul_broadcast_batch(%a: tensor<1x3x4xf32>, %b: tensor<2x1x4x5xf32>) -> tensor<2x1x3x5xf32> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<1x3x4xf32>, tensor<2x1x4x5xf32>) -> tensor<2x1x3x5xf32>
  return %0 : tensor<2x1x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_vector_lhs
// CHECK:         tensor.expand_shape %{{.*}} into tensor<1x4xf32>
// CHECK:         linalg.matmul {{.*}} -> tensor<1x5xf32>
// CHECK:         tensor.collapse_shape %{{.*}} into tensor<5xf32>
func.func @matmul_vector_lhs(%a: tensor<4xf32>, %b: tensor<4x5xf32>) -> tensor<5xf32> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_dot
// CHECK:         tensor.expand_shape %{{.*}} into tensor<1x4xf32>
// CHECK:         tensor.expand_shape %{{.*}} into tensor<4x1xf32>
// CHECK:         linalg.matmul {{.*}} -> tensor<1x1xf32>
// CHECK:         tensor.collapse_shape %{{.*}} [] : tensor<1x1xf32> into tensor<f32>
func.func @matmul_dot(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @gemm_plain
// CHECK:         %[[MM:.*]] = linalg.matmul
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[MM]]
func.func @gemm_plain(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Gemm"(%a, %b, %none) : (tensor<2x3xf32>, tensor<3x4xf32>, none) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// A constant B with transB=1 is transposed at compile time into a new
// resource constant: the kernel sees a plain row-major [K, N] B.
// CHECK-LABEL: func.func @gemm_const_transb_bias
// CHECK-SAME:    %[[A:.*]]: tensor<2x3xf32>, %[[C:.*]]: tensor<4xf32>
// CHECK:         %[[BT:.*]] = arith.constant dense_resource<kiln_transposed> : tensor<3x4xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[A]], %[[BT]] : tensor<2x3xf32>, tensor<3x4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[MM]], %[[C]] : tensor<2x4xf32>, tensor<4xf32>)
// CHECK:           %[[ALPHA:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:           %[[Y:.*]] = arith.mulf %{{.*}}, %[[ALPHA]] : f32
// CHECK:           %[[BETA:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:           %[[BC:.*]] = arith.mulf %{{.*}}, %[[BETA]] : f32
// CHECK:           arith.addf %[[Y]], %[[BC]] : f32
// The blob (after its 4-byte alignment header) is B^T row-major:
// [[1,4,7,10],[2,5,8,11],[3,6,9,12]].
// CHECK:       kiln_transposed: "0x40000000{{0*}}803F000080400000E04000002041000000400000A0400000004100003041000040400000C0400000104100004041"
func.func @gemm_const_transb_bias(%a: tensor<2x3xf32>, %c: tensor<4xf32>) -> tensor<2x4xf32> {
  %b = "onnx.Constant"() <{value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]> : tensor<4x3xf32>}> : () -> tensor<4x3xf32>
  %0 = "onnx.Gemm"(%a, %b, %c) <{alpha = 2.0 : f32, beta = 0.5 : f32, transB = 1 : i64}> : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @gemm_transa
// CHECK:         %[[AT:.*]] = linalg.transpose ins(%{{.*}} : tensor<3x2xf32>) outs(%{{.*}} : tensor<2x3xf32>) permutation = [1, 0]
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[AT]], %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[MM]], %{{.*}} : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK:           arith.addf
func.func @gemm_transa(%a: tensor<3x2xf32>, %b: tensor<3x4xf32>, %c: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = "onnx.Gemm"(%a, %b, %c) <{transA = 1 : i64}> : (tensor<3x2xf32>, tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
