// RUN: kiln-opt %s --split-input-file --kiln-emit-microkernels | FileCheck %s

// vdpbf16ps: B (constant bf16, [K=4][N=16]) packed as [N/NR][K/2][NR*2] with
// each column's 2 consecutive reduction steps side by side. The inner loop
// over K/2 pairs: A's pair of bf16 as one i32, broadcast; one 32-lane B
// vector; one vdpbf16ps into the f32 accumulators.
// CHECK-DAG: func.func private @llvm.x86.avx512bf16.dpbf16ps.512(vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
// CHECK-DAG: memref.global "private" constant @w_packed : memref<1x2x32xbf16> = dense<{{\[}}{{\[}}[1.000000e+00, 2.000000e+00, 1.000000e+00, 2.000000e+00,
// CHECK-LABEL: func.func @matmul_pairs
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} to %c2
// CHECK: vector.load %{{.*}} : memref<1x2x32xbf16>, vector<32xbf16>
// CHECK: vector.load %{{.*}} : memref<4x4xbf16>, vector<2xbf16>
// CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK: vector.bitcast %{{.*}} : vector<16xi32> to vector<32xbf16>
// CHECK: func.call @llvm.x86.avx512bf16.dpbf16ps.512
// CHECK-NOT: linalg.matmul
module {
  memref.global "private" constant @w : memref<4x16xbf16> = dense<[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]]>
  func.func @matmul_pairs(%a: memref<4x4xbf16>, %c: memref<4x16xf32>) {
    %b = memref.get_global @w : memref<4x16xbf16>
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
    linalg.matmul {kiln.bf16_dot = "vdpbf16ps", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 4, vectors = 1, reduction_block = 4>} ins(%a, %b : memref<4x4xbf16>, memref<4x16xbf16>) outs(%c : memref<4x16xf32>)
    return
  }
}

// -----

// Without the pair product (f16; bf16 on CPUs without AVX512-BF16): B packed
// narrow as [N/NR][K][NR], each operand widened to f32 as it is loaded, f32
// FMA.
// CHECK-LABEL: func.func @matmul_widen
// CHECK: scf.for {{.*}} to %c4
// CHECK: vector.load %{{.*}} : memref<1x4x16xf16>, vector<16xf16>
// CHECK: arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// CHECK: memref.load %{{.*}} : memref<4x4xf16>
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: vector.fma
// CHECK-NOT: linalg.matmul
module {
  memref.global "private" constant @w16 : memref<4x16xf16> = dense<1.0>
  func.func @matmul_widen(%a: memref<4x4xf16>, %c: memref<4x16xf32>) {
    %b = memref.get_global @w16 : memref<4x16xf16>
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
    linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 4, vectors = 1, reduction_block = 4>} ins(%a, %b : memref<4x4xf16>, memref<4x16xf16>) outs(%c : memref<4x16xf32>)
    return
  }
}
