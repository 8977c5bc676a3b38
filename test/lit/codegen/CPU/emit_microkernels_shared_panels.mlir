// RUN: kiln-opt %s --split-input-file --kiln-emit-microkernels --cse | FileCheck %s

// Constant B is packed in panels of 16 columns wherever the kernel's column
// panel is a multiple of 16 (codegen/CPU/Kernels/Kernels.h,
// packedPanelWidth), so the x86-64-v3 and x86-64-v4 variants of a portable
// artifact pack it alike and share the bytes.

// A kernel panel of 64 columns (16 lanes x 4 vectors, AVX-512) reads B
// packed in panels of 16 columns, as a 16-column (8 x 2, AVX2) kernel packs
// it: the variants of a portable artifact then share the bytes. Vector v of
// kernel panel p is in packed panel 4p + v, at lane 0 (N = 80: 5 packed
// panels; the tail kernel panel has one vector; one row per block keeps
// the A rows' index arithmetic out of the way).
// CHECK: memref.global "private" constant @w16_packed : memref<5x32x16xf32>
// CHECK-LABEL: func.func @matmul_wide_panels
// CHECK: %[[P:.*]] = memref.get_global @w16_packed
// CHECK: scf.parallel
// CHECK: %[[Q:.*]] = arith.muli %{{.*}}, %c4 : index
// CHECK-NEXT: vector.load %[[P]][%[[Q]], %{{.*}}, %c0] : memref<5x32x16xf32>, vector<16xf32>
// CHECK: %[[Q3:.*]] = arith.addi %{{.*}}, %c3 : index
// CHECK-NEXT: vector.load %[[P]][%[[Q3]], %{{.*}}, %c0] : memref<5x32x16xf32>, vector<16xf32>
// CHECK-NOT: linalg.matmul
memref.global "private" constant @w16 : memref<32x80xf32> = dense<1.0> {alignment = 64 : i64}
func.func @matmul_wide_panels(%a: memref<12x32xf32>, %c: memref<12x80xf32>) {
  %b = memref.get_global @w16 : memref<32x80xf32>
  linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 1, vectors = 4, reduction_block = 32>}
    ins(%a, %b : memref<12x32xf32>, memref<32x80xf32>) outs(%c : memref<12x80xf32>)
  return
}

// -----

// A conv's 32-column kernel panel (16 lanes x 2) likewise reads filters in
// 16-column panels; a panel larger than L1 is prefetched in both streams.
// CHECK: memref.global "private" constant @cw32_packed : memref<2x1x1x512x16xf32>
// CHECK-LABEL: func.func @conv_wide_panels
// CHECK: memref.prefetch %{{.*}} : memref<2x1x1x512x16xf32>
// CHECK: memref.prefetch %{{.*}} : memref<2x1x1x512x16xf32>
// CHECK: vector.fma
memref.global "private" constant @cw32 : memref<1x1x512x32xf32> = dense<1.0> {alignment = 64 : i64}
func.func @conv_wide_panels(%i: memref<1x2x2x512xf32>, %o: memref<1x2x2x32xf32>) {
  %w = memref.get_global @cw32 : memref<1x1x512x32xf32>
  linalg.conv_2d_nhwc_hwcf {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 4, vectors = 2, reduction_block = 512>, dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x2x2x512xf32>, memref<1x1x512x32xf32>) outs(%o : memref<1x2x2x32xf32>)
  return
}

// -----

// A matrix-vector product (1 row) whose B fits in L2 packs the kernel's own
// 64-column panel (Kernels.h, kGemvPanelBytes): one stream per reduction
// step, not 4 lines 4 KB-multiples apart (a GRU step's product); vector v
// of panel p is at lane 16v of packed panel p.
// CHECK: memref.global "private" constant @gemv_b_packed : memref<2x32x64xf32>
// CHECK-LABEL: func.func @gemv_own_panel
// CHECK: vector.load %{{.*}}[%{{.*}}, %{{.*}}, %c48] : memref<2x32x64xf32>, vector<16xf32>
memref.global "private" constant @gemv_b : memref<32x128xf32> = dense<1.0> {alignment = 64 : i64}
func.func @gemv_own_panel(%a: memref<1x32xf32>, %c: memref<1x128xf32>) {
  %b = memref.get_global @gemv_b : memref<32x128xf32>
  linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 1, vectors = 4, reduction_block = 32>}
    ins(%a, %b : memref<1x32xf32>, memref<32x128xf32>) outs(%c : memref<1x128xf32>)
  return
}

// -----

// One streamed from memory (here 1024 x 512 floats, 2 MiB) keeps the
// 16-column panels: their streams bring the bandwidth (a classifier head).
// CHECK: memref.global "private" constant @gemv_big_packed : memref<32x1024x16xf32>
// CHECK-LABEL: func.func @gemv_big_matmul
memref.global "private" constant @gemv_big : memref<1024x512xf32> = dense<1.0> {alignment = 64 : i64}
func.func @gemv_big_matmul(%a: memref<1x1024xf32>, %c: memref<1x512xf32>) {
  %b = memref.get_global @gemv_big : memref<1024x512xf32>
  linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 1, vectors = 4, reduction_block = 256>}
    ins(%a, %b : memref<1x1024xf32>, memref<1024x512xf32>) outs(%c : memref<1x512xf32>)
  return
}
