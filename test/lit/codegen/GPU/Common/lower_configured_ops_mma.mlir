// RUN: kiln-opt %s -split-input-file -kiln-gpu-lower-configured-ops -cse \
// RUN:   | FileCheck %s

// matmul_mma (NVIDIA tensor cores). 127x33 f16 outputs in 64x64 tiles: 1 x 2
// workgroups of 128 threads (4 warps, 2x2 of 32x32); K = 65 in 3 steps of
// 32 staged as f16 in workgroup memory, rows padded to 40 halves, B
// transposed ([n][k]); K past 65 staged as zero (select), rows and columns
// clamped (minui). Per step two k16 halves, each 2 x 4 mma.sync.m16n8k16
// per warp on f16x2 registers. Lane l: g = l / 4, t = l % 4; A register 0
// is row g, columns 2t and 2t+1 (PTX ISA fragment layout). The zero fill
// is folded (accumulators start at 0), the f16 truncation fused into the
// guarded stores, the f32 buffer never written.
// CHECK-LABEL: func.func @matmul_f16
// CHECK-SAME:    (%[[A:.*]]: memref<127x65xf16>, %[[B:.*]]: memref<65x33xf16>, %[[Y:.*]]: memref<127x33xf16>)
// CHECK-NOT:   linalg.generic
// CHECK-NOT:   memref.alloc
// CHECK:       gpu.launch blocks(%{{[^,)]*}}, %{{[^,)]*}}, %{{[^,)]*}}) in (%{{[^,)]*}} = %c1, %{{[^,)]*}} = %c2, %{{[^,)]*}} = %c1)
// CHECK-SAME:    threads(%[[TID:[^,)]*]], %{{[^,)]*}}, %{{[^,)]*}}) in (%{{[^,)]*}} = %c128, %{{[^,)]*}} = %c1, %{{[^,)]*}} = %c1)
// CHECK-SAME:    workgroup(%[[AT:[^,)]*]] : memref<64x40xf16, #gpu.address_space<workgroup>>, %[[BT:[^,)]*]] : memref<64x40xf16, #gpu.address_space<workgroup>>)
// CHECK:         %[[LANE:.*]] = arith.remui %[[TID]], %c32
// CHECK:         %[[G:.*]] = arith.divui %[[LANE]], %c4
// CHECK:         %[[T:.*]] = arith.remui %[[LANE]], %c4
// CHECK:         %[[TWOT:.*]] = arith.muli %[[T]], %c2
// CHECK:         %[[ROW:.*]] = arith.addi %{{.*}}, %[[G]]
// CHECK:         scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK:           %[[KA:.*]] = arith.minui %{{.*}}, %c64
// CHECK:           %[[VA:.*]] = memref.load %[[A]][%{{.*}}, %[[KA]]]
// CHECK:           %[[INK:.*]] = arith.cmpi ult, %{{.*}}, %c65
// CHECK:           %[[SA:.*]] = arith.select %[[INK]], %[[VA]], %{{.*}} : f16
// CHECK:           memref.store %[[SA]], %[[AT]]
// CHECK:           memref.store %{{.*}}, %[[BT]]
// CHECK:           gpu.barrier
// CHECK:           %[[A00:.*]] = memref.load %[[AT]][%[[ROW]], %[[TWOT]]]
// CHECK:           llvm.insertelement %[[A00]]
// CHECK:           nvvm.mma.sync A[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]  B[%{{.*}}, %{{.*}}]  C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-15:  nvvm.mma.sync
// CHECK-NOT:       nvvm.mma.sync
// CHECK:           gpu.barrier
// CHECK:           scf.yield
// CHECK:         scf.if
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:           memref.store %{{.*}}, %[[Y]]
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

func.func @matmul_f16(%a: memref<127x65xf16>, %b: memref<65x33xf16>,
                      %y: memref<127x33xf16>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<127x33xf32>
  linalg.generic {indexing_maps = [affine_map<(m, n) -> ()>, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%zero : f32) outs(%c : memref<127x33xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<127x65xf16>, memref<65x33xf16>)
      outs(%c : memref<127x33xf32>)
      attrs = {kiln.gpu_lowering = {kind = "matmul_mma", mma_shape = array<i64: 16, 8, 16>, tile_sizes = array<i64: 64, 64, 32>, warp_tile = array<i64: 32, 32>, workgroup_size = array<i64: 128, 1, 1>}} {
  ^bb0(%x: f16, %w: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %we = arith.extf %w : f16 to f32
    %p = arith.mulf %xe, %we : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<127x33xf32>) outs(%y : memref<127x33xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  return
}

// -----

// --precision tf32: f32 operands rounded to tf32 (cvt.rna) as they are
// staged (the tiles hold the i32 bit patterns, rows padded to 20), K steps
// of 16 as two m16n8k8. The accumulators start from C.
// CHECK-LABEL: func.func @matmul_tf32
// CHECK:       gpu.launch
// CHECK-SAME:    workgroup(%[[AT:[^,)]*]] : memref<64x20xi32, #gpu.address_space<workgroup>>, %[[BT:[^,)]*]] : memref<64x20xi32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-32: memref.load %{{.*}} : memref<127x33xf32>
// CHECK:         scf.for
// CHECK:           %[[S:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK:           %[[R:.*]] = nvvm.convert.float.to.tf32 %[[S]] {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK:           memref.store %[[R]], %[[AT]]
// CHECK:           gpu.barrier
// CHECK:           nvvm.mma.sync A[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]  B[%{{.*}}, %{{.*}}]  C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @matmul_tf32(%a: memref<127x65xf32>, %b: memref<65x33xf32>,
                       %c: memref<127x33xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<127x65xf32>, memref<65x33xf32>)
      outs(%c : memref<127x33xf32>)
      attrs = {kiln.gpu_lowering = {kind = "matmul_mma", mma_shape = array<i64: 16, 8, 8>, tile_sizes = array<i64: 64, 64, 16>, warp_tile = array<i64: 32, 32>, workgroup_size = array<i64: 128, 1, 1>}} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
