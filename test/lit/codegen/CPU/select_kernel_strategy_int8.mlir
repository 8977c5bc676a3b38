// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=16 vector-registers=32 int8-dot=vpdpbusd" | FileCheck %s --check-prefixes=CHECK,VNNI
// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=8 vector-registers=16 int8-dot=pmaddwd" | FileCheck %s --check-prefixes=CHECK,AVX2
// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=4 vector-registers=32 int8-dot=sdot" | FileCheck %s --check-prefixes=CHECK,SDOT
// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=4 vector-registers=32" | FileCheck %s --check-prefixes=CHECK,NEON
// RUN: not kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=4 vector-registers=32 int8-dot=vpdpbusd" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: int8-dot must be vpdpbusd (vector width 8 or 16), pmaddwd (4, 8 or 16), sdot (4) or empty, got 'vpdpbusd' at vector width 4

// 8-bit products into i32 (MatMulInteger / ConvInteger of quantized models):
// a strategy with the whole reduction (no K blocking: K = 1024 > 2 x 256), and
// the target's product instruction (kiln.int8_dot) where the contiguous
// reduction dim comes in its groups (4 vpdpbusd / sdot, 2 pmaddwd); plain NEON
// none.
// CHECK-LABEL: func.func @matmul_i8
// VNNI: linalg.matmul {kiln.int8_dot = "vpdpbusd", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 6, vectors = 4, reduction_block = 1024>}
// AVX2: linalg.matmul {kiln.int8_dot = "pmaddwd", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 6, vectors = 2, reduction_block = 1024>}
// SDOT: linalg.matmul {kiln.int8_dot = "sdot", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4
// NEON: linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4
// NEON-NOT: kiln.int8_dot
func.func @matmul_i8(%a: memref<64x1024xi8>, %b: memref<1024x64xi8>, %c: memref<64x64xi32>) {
  linalg.matmul ins(%a, %b : memref<64x1024xi8>, memref<1024x64xi8>) outs(%c : memref<64x64xi32>)
  return
}

// -----

// 3 channels (a network's first conv): no groups of 2 or 4, one byte per
// step; 6 channels: pmaddwd's pairs, not groups of 4.
// CHECK-LABEL: func.func @conv_i8
// CHECK: linalg.conv_2d_nhwc_hwcf {kiln.kernel_strategy = {{.*}}reduction_block = 27>
// CHECK-NOT: kiln.int8_dot
// CHECK-LABEL: func.func @conv_i8_channels_by_2
// VNNI: linalg.conv_2d_nhwc_hwcf {kiln.kernel_strategy
// AVX2: linalg.conv_2d_nhwc_hwcf {kiln.int8_dot = "pmaddwd", kiln.kernel_strategy = {{.*}}reduction_block = 54>
// SDOT: linalg.conv_2d_nhwc_hwcf {kiln.kernel_strategy
// CHECK-LABEL: func.func @conv_i8_channels_by_4
// VNNI: linalg.conv_2d_nhwc_hwcf {kiln.int8_dot = "vpdpbusd", kiln.kernel_strategy = {{.*}}reduction_block = 144>
// AVX2: linalg.conv_2d_nhwc_hwcf {kiln.int8_dot = "pmaddwd"
// SDOT: linalg.conv_2d_nhwc_hwcf {kiln.int8_dot = "sdot"
// NEON-NOT: kiln.int8_dot
func.func @conv_i8(%x: memref<1x10x10x3xi8>, %w: memref<3x3x3x16xi8>, %y: memref<1x8x8x16xi32>) {
  linalg.conv_2d_nhwc_hwcf ins(%x, %w : memref<1x10x10x3xi8>, memref<3x3x3x16xi8>) outs(%y : memref<1x8x8x16xi32>)
  return
}
func.func @conv_i8_channels_by_2(%x: memref<1x10x10x6xi8>, %w: memref<3x3x6x16xi8>, %y: memref<1x8x8x16xi32>) {
  linalg.conv_2d_nhwc_hwcf ins(%x, %w : memref<1x10x10x6xi8>, memref<3x3x6x16xi8>) outs(%y : memref<1x8x8x16xi32>)
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

// -----

// 8-bit depthwise (i8 input and filter into i32): the depthwise strategy, and
// the lane product of the target's instruction set where it has one (with VNNI
// vpdpwssd, named by kiln.int8_dot = "vpdpbusd"; pmaddwd); none on AArch64.
// CHECK-LABEL: func.func @depthwise_i8
// VNNI: linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, kiln.int8_dot = "vpdpbusd", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, {{.*}}reduction_block = 9>
// AVX2: linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, kiln.int8_dot = "pmaddwd", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, {{.*}}reduction_block = 9>
// SDOT: linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4
// NEON: linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4
// SDOT-NOT: kiln.int8_dot
// NEON-NOT: kiln.int8_dot
func.func @depthwise_i8(%x: memref<1x10x10x32xi8>, %w: memref<3x3x32xi8>, %y: memref<1x8x8x32xi32>) {
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x10x10x32xi8>, memref<3x3x32xi8>) outs(%y : memref<1x8x8x32xi32>)
  return
}
