// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=16 vector-registers=32 int8-dot=true" | FileCheck %s --check-prefixes=CHECK,VNNI
// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=8 vector-registers=16" | FileCheck %s --check-prefixes=CHECK,AVX2

// 8-bit products into i32 (MatMulInteger / ConvInteger of quantized models):
// a strategy with the whole reduction (no K blocking: K = 1024 > 2 x 256), and
// with a 4-way dot product (VNNI) kiln.int8_dot where the contiguous reduction
// dim comes in groups of 4.
// CHECK-LABEL: func.func @matmul_i8
// VNNI: linalg.matmul {kiln.int8_dot, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 6, vectors = 4, reduction_block = 1024>}
// AVX2: linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 6, vectors = 2, reduction_block = 1024>}
// AVX2-NOT: kiln.int8_dot
func.func @matmul_i8(%a: memref<64x1024xi8>, %b: memref<1024x64xi8>, %c: memref<64x64xi32>) {
  linalg.matmul ins(%a, %b : memref<64x1024xi8>, memref<1024x64xi8>) outs(%c : memref<64x64xi32>)
  return
}

// -----

// 3 channels (a network's first conv): no groups of 4, one byte per step.
// CHECK-LABEL: func.func @conv_i8
// CHECK: linalg.conv_2d_nhwc_hwcf {kiln.kernel_strategy = {{.*}}reduction_block = 27>
// CHECK-NOT: kiln.int8_dot
// CHECK-LABEL: func.func @conv_i8_channels_by_4
// VNNI: linalg.conv_2d_nhwc_hwcf {kiln.int8_dot, kiln.kernel_strategy = {{.*}}reduction_block = 144>
// AVX2-NOT: kiln.int8_dot
func.func @conv_i8(%x: memref<1x10x10x3xi8>, %w: memref<3x3x3x16xi8>, %y: memref<1x8x8x16xi32>) {
  linalg.conv_2d_nhwc_hwcf ins(%x, %w : memref<1x10x10x3xi8>, memref<3x3x3x16xi8>) outs(%y : memref<1x8x8x16xi32>)
  return
}
func.func @conv_i8_channels_by_4(%x: memref<1x10x10x16xi8>, %w: memref<3x3x16x16xi8>, %y: memref<1x8x8x16xi32>) {
  linalg.conv_2d_nhwc_hwcf ins(%x, %w : memref<1x10x10x16xi8>, memref<3x3x16x16xi8>) outs(%y : memref<1x8x8x16xi32>)
  return
}

// -----

// int32 operands (the centered form: per-channel activation zero points, u8
// weights): the same kernels with multiply-add; never Winograd.
// CHECK-LABEL: func.func @conv_i32
// CHECK: linalg.conv_2d_nhwc_hwcf {kiln.kernel_strategy = {{.*}}reduction_block = 288>
// CHECK-NOT: winograd
// CHECK-NOT: kiln.int8_dot
func.func @conv_i32(%x: tensor<1x30x30x32xi32>, %w: tensor<3x3x32x64xi32>, %y: tensor<1x28x28x64xi32>) -> tensor<1x28x28x64xi32> {
  %0 = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x30x30x32xi32>, tensor<3x3x32x64xi32>) outs(%y : tensor<1x28x28x64xi32>) -> tensor<1x28x28x64xi32>
  return %0 : tensor<1x28x28x64xi32>
}

// -----

// Mixed or other integer types keep the generic lowering.
// CHECK-LABEL: func.func @matmul_i16
// CHECK-NOT: kiln.kernel_strategy
func.func @matmul_i16(%a: memref<8x8xi16>, %b: memref<8x8xi16>, %c: memref<8x8xi32>) {
  linalg.matmul ins(%a, %b : memref<8x8xi16>, memref<8x8xi16>) outs(%c : memref<8x8xi32>)
  return
}
