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
    linalg.matmul {kiln.int8_dot = "vpdpbusd", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 4, vectors = 1, reduction_block = 8>} ins(%a, %b : memref<4x8xi8>, memref<8x16xi8>) outs(%c : memref<4x16xi32>)
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

// -----

// pmaddwd (x86 without VNNI): B packed as [N/NR][K/2][NR*2] bytes (2
// reduction steps of a column side by side), sign-extended to i16 as loaded;
// A's 2 bytes sign-extended to i16, one i32, broadcast; vpmaddwd's pair sums
// added to the accumulators. No column term (both operands signed).
// CHECK-DAG: func.func private @llvm.x86.avx2.pmadd.wd(vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK-DAG: memref.global "private" constant @w_packed : memref<1x3x16xi8> = dense<{{\[\[\[}}1, 1, 2, 2, 3, 3, 4, 4,
// CHECK-NOT: colterm
// CHECK-LABEL: func.func @matmul_pmaddwd
// CHECK: scf.for {{.*}} to %c3
// CHECK: vector.load %{{.*}} : memref<1x3x16xi8>, vector<16xi8>
// CHECK: arith.extsi %{{.*}} : vector<16xi8> to vector<16xi16>
// CHECK: vector.load %{{.*}} : memref<4x6xi8>, vector<2xi8>
// CHECK: arith.extsi %{{.*}} : vector<2xi8> to vector<2xi16>
// CHECK-NOT: arith.xori
// CHECK: vector.broadcast
// CHECK: %[[P:.*]] = func.call @llvm.x86.avx2.pmadd.wd
// CHECK: arith.addi %{{.*}}, %[[P]] : vector<8xi32>
module {
  memref.global "private" constant @w : memref<6x8xi8> = dense<[[1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8]]>
  func.func @matmul_pmaddwd(%a: memref<4x6xi8>, %c: memref<4x8xi32>) {
    %b = memref.get_global @w : memref<6x8xi8>
    %zero = arith.constant 0 : i32
    linalg.fill ins(%zero : i32) outs(%c : memref<4x8xi32>)
    linalg.matmul {kiln.int8_dot = "pmaddwd", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 4, vectors = 1, reduction_block = 6>} ins(%a, %b : memref<4x6xi8>, memref<6x8xi8>) outs(%c : memref<4x8xi32>)
    return
  }
}

// -----

// sdot (AArch64 dotprod): the VNNI packing, A's 4 bytes as one i32
// broadcast without the sign flip, no column term: sdot multiplies s8 by s8.
// CHECK-DAG: func.func private @llvm.aarch64.neon.sdot.v4i32.v16i8(vector<4xi32>, vector<16xi8>, vector<16xi8>) -> vector<4xi32>
// CHECK-NOT: colterm
// CHECK-LABEL: func.func @conv_sdot
// CHECK: vector.load %{{.*}} : memref<1x3x6x16xi8>, vector<16xi8>
// CHECK: vector.load %{{.*}} : memref<1x6x24xi8>, vector<4xi8>
// CHECK-NOT: arith.xori
// CHECK: vector.broadcast
// CHECK: func.call @llvm.aarch64.neon.sdot.v4i32.v16i8
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
module {
  memref.global "private" constant @w : memref<3x3x8x4xi8> = dense<5>
  func.func @conv_sdot(%x: memref<1x6x3x8xi8>, %y: memref<1x4x1x4xi32>) {
    %w = memref.get_global @w : memref<3x3x8x4xi8>
    %zero = arith.constant 0 : i32
    linalg.fill ins(%zero : i32) outs(%y : memref<1x4x1x4xi32>)
    linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, kiln.int8_dot = "sdot", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 32, rows = 4, vectors = 1, reduction_block = 72>} ins(%x, %w : memref<1x6x3x8xi8>, memref<3x3x8x4xi8>) outs(%y : memref<1x4x1x4xi32>)
    return
  }
}

// -----

// The requantization (kiln-fold-qdq's form: i32 + bias, to f32, times the
// per-channel multiplier, rounded half to even, + the zero point, clamped,
// to 8 bits) is the kernel's epilogue: applied to the accumulators and
// stored as bytes into the generic's output; the i32 result is not stored.
// CHECK-LABEL: func.func @matmul_requantized
// CHECK: scf.parallel
// CHECK: func.call @llvm.x86.avx512.vpdpbusd.512
// CHECK: arith.addi %{{.*}} : vector<16xi32>
// CHECK: arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: vector.load %{{.*}} : memref<16xf32>, vector<16xf32>
// CHECK: arith.mulf
// CHECK: math.roundeven %{{.*}} : vector<16xf32>
// CHECK: arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi8>
// CHECK: vector.store %{{.*}} : memref<4x16xi8>, vector<16xi8>
// CHECK-NOT: memref<4x16xi32>, vector<16xi32>
// CHECK-NOT: linalg.generic
module {
  memref.global "private" constant @w : memref<8x16xi8> = dense<3>
  memref.global "private" constant @bias : memref<16xi32> = dense<100>
  memref.global "private" constant @scale : memref<16xf32> = dense<0.01>
  func.func @matmul_requantized(%a: memref<4x8xi8>, %y: memref<4x16xi8>) {
    %b = memref.get_global @w : memref<8x16xi8>
    %bias = memref.get_global @bias : memref<16xi32>
    %scale = memref.get_global @scale : memref<16xf32>
    %c = memref.alloc() {alignment = 64 : i64} : memref<4x16xi32>
    %zero = arith.constant 0 : i32
    linalg.fill ins(%zero : i32) outs(%c : memref<4x16xi32>)
    linalg.matmul {kiln.int8_dot = "vpdpbusd", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 4, vectors = 1, reduction_block = 8>} ins(%a, %b : memref<4x8xi8>, memref<8x16xi8>) outs(%c : memref<4x16xi32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias, %scale : memref<4x16xi32>, memref<16xi32>, memref<16xf32>) outs(%y : memref<4x16xi8>) {
    ^bb0(%acc: i32, %b0: i32, %s: f32, %out: i8):
      %sum = arith.addi %acc, %b0 : i32
      %f = arith.sitofp %sum : i32 to f32
      %m = arith.mulf %f, %s : f32
      %r = math.roundeven %m : f32
      %zp = arith.constant 3.0 : f32
      %z = arith.addf %r, %zp : f32
      %lo = arith.constant -128.0 : f32
      %hi = arith.constant 127.0 : f32
      %c0 = arith.maximumf %z, %lo : f32
      %c1 = arith.minimumf %c0, %hi : f32
      %q = arith.fptosi %c1 : f32 to i8
      linalg.yield %q : i8
    }
    return
  }
}

// -----

// A conv's epilogue past a fill of another buffer (the border of the next
// conv's padded input), with a per-channel bias shaped [1, C, 1, 1] read as
// (n, c, 0, 0) in the NHWC loops: viewed as [1, C] and read at the
// accumulator's lanes; the fill stays.
// CHECK-LABEL: func.func @conv_requantized_past_fill
// CHECK: memref.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : memref<1x16x1x1xi32> into memref<1x16xi32>
// CHECK: scf.parallel
// CHECK: func.call @llvm.x86.avx512.vpdpbusd.512
// CHECK: vector.load %{{.*}} : memref<1x16xi32>, vector<16xi32>
// CHECK: arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi8>
// CHECK: vector.store %{{.*}} : memref<1x4x4x16xi8>, vector<16xi8>
// CHECK: linalg.fill ins(%{{.*}} : i8) outs(%{{.*}} : memref<1x6x6x16xi8>)
// CHECK-NOT: linalg.generic
module {
  memref.global "private" constant @w : memref<1x1x8x16xi8> = dense<2>
  memref.global "private" constant @bias : memref<1x16x1x1xi32> = dense<7>
  func.func @conv_requantized_past_fill(%x: memref<1x4x4x8xi8>, %y: memref<1x4x4x16xi8>, %pad: memref<1x6x6x16xi8>) {
    %w = memref.get_global @w : memref<1x1x8x16xi8>
    %bias = memref.get_global @bias : memref<1x16x1x1xi32>
    %c = memref.alloc() {alignment = 64 : i64} : memref<1x4x4x16xi32>
    %zero = arith.constant 0 : i32
    %m128 = arith.constant -128 : i8
    linalg.fill ins(%zero : i32) outs(%c : memref<1x4x4x16xi32>)
    linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, kiln.int8_dot = "vpdpbusd", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 4, vectors = 1, reduction_block = 8>} ins(%x, %w : memref<1x4x4x8xi8>, memref<1x1x8x16xi8>) outs(%c : memref<1x4x4x16xi32>)
    linalg.fill ins(%m128 : i8) outs(%pad : memref<1x6x6x16xi8>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %bias : memref<1x4x4x16xi32>, memref<1x16x1x1xi32>) outs(%y : memref<1x4x4x16xi8>) {
    ^bb0(%acc: i32, %b0: i32, %out: i8):
      %sum = arith.addi %acc, %b0 : i32
      %f = arith.sitofp %sum : i32 to f32
      %s = arith.constant 0.05 : f32
      %m = arith.mulf %f, %s : f32
      %r = math.roundeven %m : f32
      %q = arith.fptosi %r : f32 to i8
      linalg.yield %q : i8
    }
    return
  }
}

// -----

// 8-bit depthwise, VNNI (kiln.int8_dot = "vpdpbusd"): per tap, each input
// vector is 16 bytes sign-extended to i32, each filter vector 16 bytes
// sign-extended to i16 and zero-extended to i32 (the high half 0), and one
// vpdpwssd (s16 pairs into the i32 lane: the input's high half times 0).
// CHECK-DAG: func.func private @llvm.x86.avx512.vpdpwssd.512(vector<16xi32>, vector<32xi16>, vector<32xi16>) -> vector<16xi32>
// CHECK-LABEL: func.func @depthwise_vnni
// CHECK: scf.parallel
// CHECK: vector.load %{{.*}} : memref<3x3x16xi8>, vector<16xi8>
// CHECK: arith.extsi %{{.*}} : vector<16xi8> to vector<16xi16>
// CHECK: arith.extui %{{.*}} : vector<16xi16> to vector<16xi32>
// CHECK: vector.load %{{.*}} : memref<1x6x6x16xi8>, vector<16xi8>
// CHECK: arith.extsi %{{.*}} : vector<16xi8> to vector<16xi32>
// CHECK: func.call @llvm.x86.avx512.vpdpwssd.512
// CHECK-NOT: linalg.depthwise_conv_2d_nhwc_hwc
func.func @depthwise_vnni(%x: memref<1x6x6x16xi8>, %w: memref<3x3x16xi8>, %y: memref<1x4x4x16xi32>) {
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%y : memref<1x4x4x16xi32>)
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, kiln.int8_dot = "vpdpbusd", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 4, vectors = 1, reduction_block = 9>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x6x6x16xi8>, memref<3x3x16xi8>) outs(%y : memref<1x4x4x16xi32>)
  return
}

// -----

// 8-bit depthwise without a lane product (AArch64): both operands
// sign-extended to i32, a multiply and an add; 6 channels at 4 lanes: one
// full vector and a masked one of 2.
// CHECK-LABEL: func.func @depthwise_bytes
// CHECK: vector.maskedload %{{.*}} : memref<3x3x6xi8>, vector<4xi1>, vector<4xi8> into vector<4xi8>
// CHECK: arith.extsi %{{.*}} : vector<4xi8> to vector<4xi32>
// CHECK: arith.muli %{{.*}} : vector<4xi32>
// CHECK: arith.addi %{{.*}} : vector<4xi32>
// CHECK-NOT: func.call
// CHECK-NOT: linalg.depthwise_conv_2d_nhwc_hwc
func.func @depthwise_bytes(%x: memref<1x6x6x6xi8>, %w: memref<3x3x6xi8>, %y: memref<1x4x4x6xi32>) {
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%y : memref<1x4x4x6xi32>)
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 32, rows = 4, vectors = 2, reduction_block = 9>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x6x6x6xi8>, memref<3x3x6xi8>) outs(%y : memref<1x4x4x6xi32>)
  return
}

// -----

// pmaddubsw (x86 AVX2 without VNNI, K in groups of 4, weights whose pairs of
// reduction steps cannot saturate 16 bits: here 7-bit, |w| <= 64): the VNNI
// packing and column term, A's 4 bytes sign-flipped (u8) and broadcast;
// vpmaddubsw's s16 pair sums, then vpmaddwd by ones into i32, added.
// CHECK-DAG: func.func private @llvm.x86.avx2.pmadd.ub.sw(vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// CHECK-DAG: func.func private @llvm.x86.avx2.pmadd.wd(vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK-DAG: memref.global "private" constant @w7_packed : memref<1x2x32xi8> = dense<{{\[\[\[}}64, 64, 64, 64, -64, -64, -64, -64, 1,
// CHECK-DAG: memref.global "private" constant @w7_colterm : memref<8xi32> = dense<[-65536, 65536, -1024,
// CHECK-LABEL: func.func @matmul_pmaddubsw
// CHECK: scf.for {{.*}} to %c2
// CHECK: vector.load %{{.*}} : memref<1x2x32xi8>, vector<32xi8>
// CHECK: vector.load %{{.*}} : memref<4x8xi8>, vector<4xi8>
// CHECK: arith.xori %{{.*}}, %c-2139062144_i32 : i32
// CHECK: vector.broadcast
// CHECK: %[[S:.*]] = func.call @llvm.x86.avx2.pmadd.ub.sw
// CHECK: %[[P:.*]] = func.call @llvm.x86.avx2.pmadd.wd(%[[S]], %{{.*}})
// CHECK: arith.addi %{{.*}}, %[[P]] : vector<8xi32>
module {
  memref.global "private" constant @w7 : memref<8x8xi8> = dense<[[64, -64, 1, 2, 3, 4, 5, 6], [64, -64, 1, 2, 3, 4, 5, 6], [64, -64, 1, 2, 3, 4, 5, 6], [64, -64, 1, 2, 3, 4, 5, 6], [64, -64, 1, 2, 3, 4, 5, 6], [64, -64, 1, 2, 3, 4, 5, 6], [64, -64, 1, 2, 3, 4, 5, 6], [64, -64, 1, 2, 3, 4, 5, 6]]>
  func.func @matmul_pmaddubsw(%a: memref<4x8xi8>, %c: memref<4x8xi32>) {
    %b = memref.get_global @w7 : memref<8x8xi8>
    %zero = arith.constant 0 : i32
    linalg.fill ins(%zero : i32) outs(%c : memref<4x8xi32>)
    linalg.matmul {kiln.int8_dot = "pmaddwd", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 4, vectors = 1, reduction_block = 8>} ins(%a, %b : memref<4x8xi8>, memref<8x8xi8>) outs(%c : memref<4x8xi32>)
    return
  }
}

// -----

// One pair of reduction steps past vpmaddubsw's 16 bits (127 and 2 in
// column 0: 255 * 129 > 32767, which a plain vpmaddubsw would saturate):
// the exact pmaddwd form stays (pairs of steps packed, no column term).
// CHECK-DAG: memref.global "private" constant @wsat_packed : memref<1x4x16xi8> = dense<{{\[\[\[}}127, 2, -64, -64, 1, 1,
// CHECK-NOT: wsat_colterm
// CHECK-LABEL: func.func @matmul_pmaddwd_past_limit
// CHECK-NOT: pmadd.ub.sw
// CHECK: func.call @llvm.x86.avx2.pmadd.wd
// CHECK-NOT: pmadd.ub.sw
module {
  memref.global "private" constant @wsat : memref<8x8xi8> = dense<[[127, -64, 1, 2, 3, 4, 5, 6], [2, -64, 1, 2, 3, 4, 5, 6], [64, -64, 1, 2, 3, 4, 5, 6], [64, -64, 1, 2, 3, 4, 5, 6], [64, -64, 1, 2, 3, 4, 5, 6], [64, -64, 1, 2, 3, 4, 5, 6], [64, -64, 1, 2, 3, 4, 5, 6], [64, -64, 1, 2, 3, 4, 5, 6]]>
  func.func @matmul_pmaddwd_past_limit(%a: memref<4x8xi8>, %c: memref<4x8xi32>) {
    %b = memref.get_global @wsat : memref<8x8xi8>
    %zero = arith.constant 0 : i32
    linalg.fill ins(%zero : i32) outs(%c : memref<4x8xi32>)
    linalg.matmul {kiln.int8_dot = "pmaddwd", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 4, vectors = 1, reduction_block = 8>} ins(%a, %b : memref<4x8xi8>, memref<8x8xi8>) outs(%c : memref<4x8xi32>)
    return
  }
}

// -----

// Sign-flipped activations (kiln-flip-int8-activations: u8 as they come)
// with vpdpbusd: read as they are (no xori), the column term as before.
// CHECK-DAG: memref.global "private" constant @wf_colterm : memref<16xi32>
// CHECK-LABEL: func.func @matmul_vnni_flipped
// CHECK-NOT: arith.xori
// CHECK: vector.load %{{.*}} : memref<4x8xi8>, vector<4xi8>
// CHECK-NOT: arith.xori
// CHECK: vector.broadcast
// CHECK: func.call @llvm.x86.avx512.vpdpbusd.512
// CHECK-NOT: arith.xori
// CHECK: return
module {
  memref.global "private" constant @wf : memref<8x16xi8> = dense<3>
  func.func @matmul_vnni_flipped(%a: memref<4x8xi8>, %c: memref<4x16xi32>) {
    %b = memref.get_global @wf : memref<8x16xi8>
    %zero = arith.constant 0 : i32
    linalg.fill ins(%zero : i32) outs(%c : memref<4x16xi32>)
    linalg.matmul {kiln.int8_flipped_lhs, kiln.int8_dot = "vpdpbusd", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 4, vectors = 1, reduction_block = 8>} ins(%a, %b : memref<4x8xi8>, memref<8x16xi8>) outs(%c : memref<4x16xi32>)
    return
  }
}

// -----

// Sign-flipped activations with pmaddwd: zero-extended to i16, plus the
// column term -128 * sum_k w (3 * 6 * -128 = -2304).
// CHECK-DAG: memref.global "private" constant @wp_colterm : memref<8xi32> = dense<-2304>
// CHECK-LABEL: func.func @matmul_pmaddwd_flipped
// CHECK: vector.load %{{.*}} : memref<4x6xi8>, vector<2xi8>
// CHECK: arith.extui %{{.*}} : vector<2xi8> to vector<2xi16>
// CHECK: func.call @llvm.x86.avx2.pmadd.wd
module {
  memref.global "private" constant @wp : memref<6x8xi8> = dense<3>
  func.func @matmul_pmaddwd_flipped(%a: memref<4x6xi8>, %c: memref<4x8xi32>) {
    %b = memref.get_global @wp : memref<6x8xi8>
    %zero = arith.constant 0 : i32
    linalg.fill ins(%zero : i32) outs(%c : memref<4x8xi32>)
    linalg.matmul {kiln.int8_flipped_lhs, kiln.int8_dot = "pmaddwd", kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 4, vectors = 1, reduction_block = 6>} ins(%a, %b : memref<4x6xi8>, memref<6x8xi8>) outs(%c : memref<4x8xi32>)
    return
  }
}

// -----

// A marked product no kernel takes (here: no strategy): its activations are
// flipped back into a copy, which the generic lowering reads.
// CHECK-LABEL: func.func @flipped_without_kernel
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<4x8xi8>
// CHECK: linalg.generic {{.*}} ins(%arg0 : memref<4x8xi8>) outs(%[[COPY]] : memref<4x8xi8>)
// CHECK: arith.xori
// CHECK: linalg.matmul ins(%[[COPY]], %arg1
// CHECK-NOT: kiln.int8_flipped_lhs
func.func @flipped_without_kernel(%a: memref<4x8xi8>, %b: memref<8x16xi8>, %c: memref<4x16xi32>) {
  linalg.matmul {kiln.int8_flipped_lhs} ins(%a, %b : memref<4x8xi8>, memref<8x16xi8>) outs(%c : memref<4x16xi32>)
  return
}
