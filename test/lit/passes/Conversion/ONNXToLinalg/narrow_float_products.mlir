// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// f16 / bf16 MatMul, Gemm and Conv accumulate in f32 (getAccumulatorType):
// the product reads the narrow operands into an f32 accumulator and one
// elementwise generic rounds the sum to the model's type at the end.

// CHECK-LABEL: func.func @matmul_f16
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<3x4xf16>) outs(%[[FILL]] : tensor<2x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[MM]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:         return %[[R]]
func.func @matmul_f16(%a: tensor<2x3xf16>, %b: tensor<3x4xf16>) -> tensor<2x4xf16> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x3xf16>, tensor<3x4xf16>) -> tensor<2x4xf16>
  return %0 : tensor<2x4xf16>
}

// -----

// CHECK-LABEL: func.func @batch_matmul_bf16
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x3x4xbf16>, tensor<2x4x5xbf16>) outs(%{{.*}} : tensor<2x3x5xf32>)
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
func.func @batch_matmul_bf16(%a: tensor<2x3x4xbf16>, %b: tensor<2x4x5xbf16>) -> tensor<2x3x5xbf16> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x3x4xbf16>, tensor<2x4x5xbf16>) -> tensor<2x3x5xbf16>
  return %0 : tensor<2x3x5xbf16>
}

// -----

// Gemm: the product in f32, rounded, then alpha / beta / C in f16.
// CHECK-LABEL: func.func @gemm_f16
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<3x4xf16>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:         arith.truncf %{{.*}} : f32 to f16
// CHECK:         arith.addf %{{.*}}, %{{.*}} : f16
func.func @gemm_f16(%a: tensor<2x3xf16>, %b: tensor<3x4xf16>, %c: tensor<4xf16>) -> tensor<2x4xf16> {
  %0 = "onnx.Gemm"(%a, %b, %c) : (tensor<2x3xf16>, tensor<3x4xf16>, tensor<4xf16>) -> tensor<2x4xf16>
  return %0 : tensor<2x4xf16>
}

// -----

// CHECK-LABEL: func.func @conv_bf16
// CHECK:         linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x4x4x2xbf16>, tensor<1x1x2x3xbf16>) outs(%{{.*}} : tensor<1x4x4x3xf32>)
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
func.func @conv_bf16(%x: tensor<1x2x4x4xbf16>, %w: tensor<3x2x1x1xbf16>) -> tensor<1x3x4x4xbf16> {
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %none) : (tensor<1x2x4x4xbf16>, tensor<3x2x1x1xbf16>, none) -> tensor<1x3x4x4xbf16>
  return %0 : tensor<1x3x4x4xbf16>
}
