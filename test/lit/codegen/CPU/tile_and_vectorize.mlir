// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-tile-and-vectorize{vector-width=16}))' | FileCheck %s

// A matmul becomes register blocks of 8 rows x 32 columns, stepping the
// reduction one element at a time, computed by a vector.contract.
// CHECK-LABEL: func.func @matmul
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.contract
// CHECK-SAME: vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
func.func @matmul(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>) -> tensor<64x256xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x256xf32>) -> tensor<64x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%acc : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}

// -----

// An NHWC convolution is tiled to 1-D blocks (8 output columns x 32 filters)
// and vectorized into FMAs on vectors of filters.
// CHECK-LABEL: func.func @conv
// CHECK: scf.for
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// CHECK: vector.{{(contract|fma)}}
func.func @conv(%x: tensor<1x18x18x16xf32>, %w: tensor<3x3x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x16x16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<1x18x18x16xf32>, tensor<3x3x16x32xf32>) outs(%acc : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  return %r : tensor<1x16x16x32xf32>
}

// -----

// Depthwise convolutions vectorize across channels.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK: vector.fma
func.func @depthwise(%x: tensor<1x10x10x48xf32>, %w: tensor<3x3x48xf32>) -> tensor<1x8x8x48xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x8x8x48xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x8x8x48xf32>) -> tensor<1x8x8x48xf32>
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<1x10x10x48xf32>, tensor<3x3x48xf32>) outs(%acc : tensor<1x8x8x48xf32>) -> tensor<1x8x8x48xf32>
  return %r : tensor<1x8x8x48xf32>
}
