// RUN: kiln-opt %s --split-input-file --kiln-emit-microkernels | FileCheck %s

// VNNI: B (constant, [K=8][N=16] bytes) packed as [N/NR][K/4][NR*4] with each
// column's 4 consecutive reduction steps side by side, plus -128 * sum_k w per
// column (the accumulators' start: the activations' sign bits are flipped to
// make them the unsigned operand of vpdpbusd). The inner loop: 4 bytes of A as
// one i32, sign bits flipped, broadcast; one 64-byte B vector; one vpdpbusd.
// CHECK-DAG: func.func private @llvm.x86.avx512.vpdpbusd.512(vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK-DAG: memref.global "private" constant @w_packed : memref<1x2x64xi8> = dense<"0x01010101020202020303030304040404
// CHECK-DAG: memref.global "private" constant @w_colterm : memref<16xi32> = dense<[-1024, -2048,
// CHECK-LABEL: func.func @matmul_dot4
// CHECK: scf.parallel
// CHECK: %[[T:.*]] = vector.load %{{.*}} : memref<16xi32>, vector<16xi32>
// CHECK: scf.for {{.*}} to %c2
// CHECK: vector.load %{{.*}} : memref<1x2x64xi8>, vector<64xi8>
// CHECK: vector.load %{{.*}} : memref<4x8xi8>, vector<4xi8>
// CHECK: arith.xori %{{.*}}, %c-2139062144_i32 : i32
// CHECK: vector.broadcast
// CHECK: func.call @llvm.x86.avx512.vpdpbusd.512
// CHECK-NOT: linalg.matmul
module {
  memref.global "private" constant @w : memref<8x16xi8> = dense<[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]]>
  func.func @matmul_dot4(%a: memref<4x8xi8>, %c: memref<4x16xi32>) {
    %b = memref.get_global @w : memref<8x16xi8>
    %zero = arith.constant 0 : i32
    linalg.fill ins(%zero : i32) outs(%c : memref<4x16xi32>)
    linalg.matmul {kiln.int8_dot, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 4, vectors = 1, reduction_block = 8>} ins(%a, %b : memref<4x8xi8>, memref<8x16xi8>) outs(%c : memref<4x16xi32>)
    return
  }
}

// -----

// Without the dot product (AVX2, SSE, other targets): one byte per step,
// sign-extended to i32, multiplied and added (exact).
// CHECK-NOT: colterm
// CHECK-LABEL: func.func @matmul_bytes
// CHECK: scf.for {{.*}} to %c8
// CHECK: vector.load %{{.*}} : memref<1x8x8xi8>, vector<8xi8>
// CHECK: arith.extsi %{{.*}} : vector<8xi8> to vector<8xi32>
// CHECK: memref.load %{{.*}} : memref<4x8xi8>
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK-NOT: vpdpbusd
module {
  memref.global "private" constant @w : memref<8x8xi8> = dense<3>
  func.func @matmul_bytes(%a: memref<4x8xi8>, %c: memref<4x8xi32>) {
    %b = memref.get_global @w : memref<8x8xi8>
    %zero = arith.constant 0 : i32
    linalg.fill ins(%zero : i32) outs(%c : memref<4x8xi32>)
    linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 4, vectors = 1, reduction_block = 8>} ins(%a, %b : memref<4x8xi8>, memref<8x8xi8>) outs(%c : memref<4x8xi32>)
    return
  }
}
