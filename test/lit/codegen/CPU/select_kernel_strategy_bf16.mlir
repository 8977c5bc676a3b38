// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=16 vector-registers=32 bf16-dot=vdpbf16ps" | FileCheck %s --check-prefixes=CHECK,DOT
// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=16 vector-registers=32" | FileCheck %s --check-prefixes=CHECK,NODOT
// RUN: not kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=4 vector-registers=32 bf16-dot=vdpbf16ps" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: bf16-dot must be vdpbf16ps (vector width 8 or 16) or empty, got 'vdpbf16ps' at vector width 4

// bf16 x bf16 -> f32 with a constant B and an even K: the pair product
// where the target has it; the register blocking is f32's either way.
// CHECK-LABEL: func.func @matmul_bf16
// DOT:   linalg.matmul {kiln.bf16_dot = "vdpbf16ps", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 6, vectors = 4, reduction_block = 256>}
// NODOT: linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 6, vectors = 4, reduction_block = 256>}
memref.global "private" constant @w : memref<256x64xbf16> = dense<1.0>
func.func @matmul_bf16(%a: memref<64x256xbf16>, %c: memref<64x64xf32>) {
  %b = memref.get_global @w : memref<256x64xbf16>
  linalg.matmul ins(%a, %b : memref<64x256xbf16>, memref<256x64xbf16>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// An odd K, or a B that is no constant: widened to f32 (a strategy, no pair
// product). f16: never the pair product.
// CHECK-LABEL: func.func @no_pairs
// CHECK: linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 6, vectors = 4, reduction_block = 255>}
// CHECK: linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 6, vectors = 4, reduction_block = 256>}
// CHECK: linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 6, vectors = 4, reduction_block = 256>}
// CHECK-NOT: kiln.bf16_dot
memref.global "private" constant @w16 : memref<256x64xf16> = dense<1.0>
func.func @no_pairs(%a: memref<64x255xbf16>, %b: memref<255x64xbf16>, %a2: memref<64x256xbf16>, %b2: memref<256x64xbf16>, %a3: memref<64x256xf16>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x255xbf16>, memref<255x64xbf16>) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a2, %b2 : memref<64x256xbf16>, memref<256x64xbf16>) outs(%c : memref<64x64xf32>)
  %w = memref.get_global @w16 : memref<256x64xf16>
  linalg.matmul ins(%a3, %w : memref<64x256xf16>, memref<256x64xf16>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// A bf16 conv with an even channel count and a constant filter; the
// Winograd form is f32 only.
// CHECK-LABEL: func.func @conv_bf16
// DOT: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, kiln.bf16_dot = "vdpbf16ps", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 6, vectors = 4, reduction_block = 576>, strides = dense<1> : tensor<2xi64>}
// NODOT: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 6, vectors = 4, reduction_block = 576>, strides = dense<1> : tensor<2xi64>}
func.func @conv_bf16(%x: tensor<1x16x16x64xbf16>, %acc: tensor<1x14x14x64xf32>) -> tensor<1x14x14x64xf32> {
  %w = arith.constant dense<1.0> : tensor<3x3x64x64xbf16>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x16x16x64xbf16>, tensor<3x3x64x64xbf16>) outs(%acc : tensor<1x14x14x64xf32>) -> tensor<1x14x14x64xf32>
  return %r : tensor<1x14x14x64xf32>
}

// -----

// All-bf16 products (no f32 accumulator) keep the generic lowering.
// CHECK-LABEL: func.func @all_bf16
// CHECK-NOT: kiln.kernel_strategy
func.func @all_bf16(%a: memref<8x8xbf16>, %b: memref<8x8xbf16>, %c: memref<8x8xbf16>) {
  linalg.matmul ins(%a, %b : memref<8x8xbf16>, memref<8x8xbf16>) outs(%c : memref<8x8xbf16>)
  return
}
