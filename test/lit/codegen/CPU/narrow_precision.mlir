// RUN: kiln-opt %s --split-input-file --kiln-narrow-precision="precision=bf16" | FileCheck %s --check-prefixes=CHECK,BF16
// RUN: kiln-opt %s --split-input-file --kiln-narrow-precision="precision=fp16" | FileCheck %s --check-prefixes=CHECK,FP16
// RUN: not kiln-opt %s --split-input-file --kiln-narrow-precision="precision=int4" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: kiln-narrow-precision: precision must be bf16 or fp16, got 'int4'

// A matmul with constant weights: the weights become a narrow constant
// (converted at compile time, rounded to nearest even: 1.00390625 is a tie
// between bf16 1.0 and 1.0078125 and goes to the even 1.0; f16 keeps it),
// A is converted by a truncf generic, the accumulator and result stay f32;
// the f32 weights are gone.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: tensor<2x2xf32>
// BF16: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, -2.500000e+00], [0.000000e+00, 3.000000e+00]]> : tensor<2x2xbf16>
// FP16: %[[W:.*]] = arith.constant dense<{{\[}}[1.003910e+00, -2.500000e+00], [0.000000e+00, 3.000000e+00]]> : tensor<2x2xf16>
// CHECK: %[[A:.*]] = linalg.generic
// BF16: arith.truncf %{{.*}} : f32 to bf16
// FP16: arith.truncf %{{.*}} : f32 to f16
// BF16: linalg.matmul ins(%[[A]], %[[W]] : tensor<4x2xbf16>, tensor<2x2xbf16>) outs(%{{.*}} : tensor<4x2xf32>) -> tensor<4x2xf32>
// FP16: linalg.matmul ins(%[[A]], %[[W]] : tensor<4x2xf16>, tensor<2x2xf16>) outs(%{{.*}} : tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NOT: tensor<2x2xf32>
func.func @matmul(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<[[1.00390625, -2.5], [0.0, 3.0]]> : tensor<2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.matmul ins(%a, %w : tensor<4x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// An NHWC conv with a constant filter: the same; its strides and dilations
// are kept.
// CHECK-LABEL: func.func @conv
// BF16: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x5x5x2xbf16>, tensor<1x1x2x3xbf16>) outs(%{{.*}} : tensor<1x3x3x3xf32>)
// FP16: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x5x5x2xf16>, tensor<1x1x2x3xf16>) outs(%{{.*}} : tensor<1x3x3x3xf32>)
func.func @conv(%x: tensor<1x5x5x2xf32>, %acc: tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %w = arith.constant dense<0.5> : tensor<1x1x2x3xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
         ins(%x, %w : tensor<1x5x5x2xf32>, tensor<1x1x2x3xf32>) outs(%acc : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %r : tensor<1x3x3x3xf32>
}

// -----

// Products without a constant B (attention's Q x K^T) stay f32, and so do
// the depthwise convs and the ops that are no products.
// CHECK-LABEL: func.func @activations
// CHECK-NOT: bf16
// CHECK-NOT: f16
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<2x8x4xf32>)
func.func @activations(%q: tensor<2x4x8xf32>, %k: tensor<2x8x4xf32>, %acc: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %r = linalg.batch_matmul ins(%q, %k : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%acc : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %r : tensor<2x4x4xf32>
}

// -----

// Weights shared by two matmuls are converted once.
// CHECK-LABEL: func.func @shared
// BF16-COUNT-1: arith.constant {{.*}} : tensor<2x2xbf16>
// BF16-NOT: arith.constant {{.*}} : tensor<2x2xbf16>
func.func @shared(%a: tensor<4x2xf32>, %b: tensor<4x2xf32>, %acc: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %w = arith.constant dense<1.0> : tensor<2x2xf32>
  %r = linalg.matmul ins(%a, %w : tensor<4x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<4x2xf32>) -> tensor<4x2xf32>
  %s = linalg.matmul ins(%b, %w : tensor<4x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r, %s : tensor<4x2xf32>, tensor<4x2xf32>
}
