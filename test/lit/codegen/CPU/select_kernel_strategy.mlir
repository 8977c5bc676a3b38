// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=4 vector-registers=16" | FileCheck %s --check-prefixes=CHECK,SSE
// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=8 vector-registers=16" | FileCheck %s --check-prefixes=CHECK,AVX2
// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=16 vector-registers=32" | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=4 vector-registers=32" | FileCheck %s --check-prefixes=CHECK,NEON
// RUN: not kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=6 vector-registers=16" 2>&1 | FileCheck %s --check-prefix=BADOPT

// The register block fits the register file: rows x vectors accumulators +
// vectors B + 1 broadcast. 16 registers (SSE, AVX2): 6x2; 32 (AVX-512,
// NEON): 6x4. With the register count guessed from the width, SSE got NEON's
// 6x4 (29 registers of 16: 84 spills in this MatMul).
// BADOPT: vector-width must be a power of two and vector-registers at least 8, got 6 and 16
// CHECK-LABEL: func.func @matmul
// SSE:    linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 16, rows = 6, vectors = 2, reduction_block = 256>}
// AVX2:   linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 6, vectors = 2, reduction_block = 256>}
// AVX512: linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 6, vectors = 4, reduction_block = 256>}
// NEON:   linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 32, rows = 6, vectors = 4, reduction_block = 256>}
func.func @matmul(%a: memref<64x256xf32>, %b: memref<256x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x256xf32>, memref<256x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// The Winograd products: 49 tiles x 96 filters, 16 batches. The fewest
// padded columns first: AVX-512's 6 vectors are 2 x 3 (8 rows), not 2 x 4.
// CHECK-LABEL: func.func @batch_matmul
// SSE:    linalg.batch_matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 16, rows = 6, vectors = 2, reduction_block = 128>}
// AVX2:   linalg.batch_matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 6, vectors = 2, reduction_block = 128>}
// AVX512: linalg.batch_matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 8, vectors = 3, reduction_block = 128>}
// NEON:   linalg.batch_matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 32, rows = 6, vectors = 4, reduction_block = 128>}
func.func @batch_matmul(%a: memref<16x49x128xf32>, %b: memref<16x128x96xf32>, %c: memref<16x49x96xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<16x49x128xf32>, memref<16x128x96xf32>) outs(%c : memref<16x49x96xf32>)
  return
}

// -----

// A conv's rows are output pixels (144), its columns filters (40): AVX2's 5
// vectors fit 1 per block without padding (12 rows), NEON's 10 fit 2.
// CHECK-LABEL: func.func @conv
// SSE:    linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 16, rows = 6, vectors = 2, reduction_block = 288>
// AVX2:   linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 12, vectors = 1, reduction_block = 288>
// AVX512: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 8, vectors = 3, reduction_block = 288>
// NEON:   linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 32, rows = 12, vectors = 2, reduction_block = 288>
func.func @conv(%i: memref<1x14x14x32xf32>, %w: memref<3x3x32x40xf32>, %o: memref<1x12x12x40xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x14x14x32xf32>, memref<3x3x32x40xf32>) outs(%o : memref<1x12x12x40xf32>)
  return
}

// -----

// Depthwise: output columns x channel vectors (at most 2), one input vector
// per FMA: 4 columns with 16 registers, 8 with 32.
// CHECK-LABEL: func.func @depthwise
// SSE:    linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 16, rows = 4, vectors = 2, reduction_block = 9>
// AVX2:   linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 4, vectors = 2, reduction_block = 9>
// AVX512: linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 8, vectors = 2, reduction_block = 9>
// NEON:   linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 32, rows = 8, vectors = 2, reduction_block = 9>
func.func @depthwise(%i: memref<1x16x16x64xf32>, %w: memref<3x3x64xf32>, %o: memref<1x14x14x64xf32>) {
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x16x16x64xf32>, memref<3x3x64xf32>) outs(%o : memref<1x14x14x64xf32>)
  return
}

// -----

// Pooling is the depthwise kernel; a narrow map (6 columns) caps the rows.
// CHECK-LABEL: func.func @maxpool
// SSE:    kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 16, rows = 4, vectors = 2, reduction_block = 9>
// AVX2:   kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 4, vectors = 2, reduction_block = 9>
// AVX512: kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 6, vectors = 2, reduction_block = 9>
// NEON:   kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 32, rows = 6, vectors = 2, reduction_block = 9>
func.func @maxpool(%i: memref<1x13x13x64xf32>, %o: memref<1x6x6x64xf32>) {
  %win = memref.alloc() : memref<3x3xf32>
  linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%i, %win : memref<1x13x13x64xf32>, memref<3x3xf32>) outs(%o : memref<1x6x6x64xf32>)
  return
}

// -----

// A matrix-vector product (a classifier's last layer): one row, as many
// vectors as the registers hold with the fewest padded columns; K = 1280 is
// blocked by 512.
// CHECK-LABEL: func.func @gemv
// SSE:    kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 16, rows = 1, vectors = 5, reduction_block = 512>
// AVX2:   kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 1, vectors = 5, reduction_block = 512>
// AVX512: kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 1, vectors = 9, reduction_block = 512>
// NEON:   kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 32, rows = 1, vectors = 10, reduction_block = 512>
func.func @gemv(%a: memref<1x1280xf32>, %b: memref<1280x1000xf32>, %c: memref<1x1000xf32>) {
  linalg.matmul ins(%a, %b : memref<1x1280xf32>, memref<1280x1000xf32>) outs(%c : memref<1x1000xf32>)
  return
}

// -----

// K up to twice the block is not blocked; fewer rows than the block's are
// the block's rows. The choice is the same on tensors.
// CHECK-LABEL: func.func @unblocked_k_on_tensors
// SSE:    kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 16, rows = 3, vectors = 2, reduction_block = 1024>
// AVX2:   kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 3, vectors = 2, reduction_block = 1024>
// AVX512: kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 3, vectors = 1, reduction_block = 1024>
// NEON:   kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 32, rows = 3, vectors = 4, reduction_block = 1024>
func.func @unblocked_k_on_tensors(%a: tensor<3x1024xf32>, %b: tensor<1024x16xf32>, %c: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<3x1024xf32>, tensor<1024x16xf32>) outs(%c : tensor<3x16xf32>) -> tensor<3x16xf32>
  return %r : tensor<3x16xf32>
}

// -----

// No strategy (the generic lowering): another element type, a dynamic
// shape, a transposed matmul, an empty output.
// CHECK-LABEL: func.func @no_kernel
// CHECK-NOT: kiln.kernel_strategy
func.func @no_kernel(%a: memref<8x8xf16>, %b: memref<8x8xf16>, %c: memref<8x8xf16>,
                     %d: memref<?x8xf32>, %e: memref<8x8xf32>, %f: memref<?x8xf32>,
                     %g: memref<0x8xf32>, %h: memref<8x8xf32>, %o: memref<0x8xf32>) {
  linalg.matmul ins(%a, %b : memref<8x8xf16>, memref<8x8xf16>) outs(%c : memref<8x8xf16>)
  linalg.matmul ins(%d, %e : memref<?x8xf32>, memref<8x8xf32>) outs(%f : memref<?x8xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%e, %h : memref<8x8xf32>, memref<8x8xf32>) outs(%e : memref<8x8xf32>)
  linalg.matmul ins(%g, %h : memref<0x8xf32>, memref<8x8xf32>) outs(%o : memref<0x8xf32>)
  return
}

// -----

// On tensors a conv with a constant 3x3 filter, stride 1, 64 2x2 output
// tiles and 32 -> 32 channels (C * F / (C + F) = 16 >= 14) is computed as
// Winograd F(2x2, 3x3) (kiln-winograd-convs); 16 -> 16 channels (8) and a
// filter that is an argument are not.
// CHECK-LABEL: func.func @winograd_choice
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}}reduction_block = 288, winograd = true>
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}}reduction_block = 144>
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}}reduction_block = 288>
func.func @winograd_choice(%x: tensor<1x18x18x32xf32>, %y: tensor<1x18x18x16xf32>, %wa: tensor<3x3x32x32xf32>,
                           %o: tensor<1x16x16x32xf32>, %p: tensor<1x16x16x16xf32>) -> (tensor<1x16x16x32xf32>, tensor<1x16x16x16xf32>, tensor<1x16x16x32xf32>) {
  %w = arith.constant dense<1.0> : tensor<3x3x32x32xf32>
  %w16 = arith.constant dense<1.0> : tensor<3x3x16x16xf32>
  %a = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x18x18x32xf32>, tensor<3x3x32x32xf32>) outs(%o : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %b = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%y, %w16 : tensor<1x18x18x16xf32>, tensor<3x3x16x16xf32>) outs(%p : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %wa : tensor<1x18x18x32xf32>, tensor<3x3x32x32xf32>) outs(%o : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  return %a, %b, %c : tensor<1x16x16x32xf32>, tensor<1x16x16x16xf32>, tensor<1x16x16x32xf32>
}
