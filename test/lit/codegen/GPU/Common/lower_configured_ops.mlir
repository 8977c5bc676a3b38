// RUN: kiln-opt %s -split-input-file -kiln-gpu-lower-configured-ops -cse \
// RUN:   | FileCheck %s

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// 127x33 outputs in 64x64 tiles: 1 x 2 workgroups of 16x8 threads, each
// thread 8 rows (ty + 8i) x 4 columns (tx + 16j); K = 65 in 5 steps of 16
// staged in workgroup memory between barriers; the last step runs 1 column.
// Loads are clamped into range (min), stores guarded.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME:    (%[[A:.*]]: memref<127x65xf32>, %[[B:.*]]: memref<65x33xf32>, %[[C:.*]]: memref<127x33xf32>)
// CHECK-NOT:   linalg.generic
// CHECK:       gpu.launch blocks(%[[BX:[^,)]*]], %[[BY:[^,)]*]], %{{[^,)]*}}) in (%{{[^,)]*}} = %c1, %{{[^,)]*}} = %c2, %{{[^,)]*}} = %c1)
// CHECK-SAME:    threads(%[[TX:[^,)]*]], %[[TY:[^,)]*]], %{{[^,)]*}}) in (%{{[^,)]*}} = %c16, %{{[^,)]*}} = %c8, %{{[^,)]*}} = %c1)
// CHECK-SAME:    workgroup(%[[AT:[^,)]*]] : memref<64x16xf32, #gpu.address_space<workgroup>>, %[[BT:[^,)]*]] : memref<16x64xf32, #gpu.address_space<workgroup>>)
// CHECK:         %[[ROW:.*]] = arith.minui %{{.*}}, %c126
// CHECK:         %[[COL:.*]] = arith.minui %{{.*}}, %c32
// CHECK:         memref.load %[[C]][%[[ROW]], %[[COL]]]
// CHECK:         %[[ACC:.*]]:32 = scf.for %[[KT:.*]] = %c0 to %c5 step %c1 iter_args
// CHECK:           %[[K0:.*]] = arith.muli %[[KT]], %c16
// CHECK-COUNT-8:   memref.store %{{.*}}, %[[AT]]
// CHECK-COUNT-8:   memref.store %{{.*}}, %[[BT]]
// CHECK:           gpu.barrier
// CHECK:           %[[LEFT:.*]] = arith.subi %c65, %[[K0]]
// CHECK:           %[[KEND:.*]] = arith.minsi %c16, %[[LEFT]]
// CHECK:           %[[INNER:.*]]:32 = scf.for %[[KK:.*]] = %c0 to %[[KEND]] step %c1 iter_args
// CHECK:             memref.load %[[AT]][%[[TY]], %[[KK]]]
// CHECK-COUNT-7:     memref.load %[[AT]]
// CHECK:             memref.load %[[BT]][%[[KK]], %[[TX]]]
// CHECK-COUNT-3:     memref.load %[[BT]]
// CHECK-COUNT-32:    arith.addf
// CHECK:             scf.yield
// CHECK:           gpu.barrier
// CHECK:           scf.yield %[[INNER]]#0,
// CHECK:         %[[INM:.*]] = arith.cmpi ult, %{{.*}}, %c127
// CHECK:         %[[INN:.*]] = arith.cmpi ult, %{{.*}}, %c33
// CHECK:         %[[IN:.*]] = arith.andi %[[INM]], %[[INN]]
// CHECK:         scf.if %[[IN]] {
// CHECK:           memref.store %[[ACC]]#0, %[[C]]
func.func @matmul(%a: memref<127x65xf32>, %b: memref<65x33xf32>,
                  %c: memref<127x33xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<127x65xf32>, memref<65x33xf32>)
      outs(%c : memref<127x33xf32>)
      attrs = {kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 64, 64, 16>, workgroup_size = array<i64: 16, 8, 1>}} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#row = affine_map<(i, j) -> (i, j)>
#out = affine_map<(i, j) -> (i)>

// 3 rows of 1000 on 3 workgroups of 128 threads: strided partial sums from
// the neutral element, a 7-step tree in workgroup memory, thread 0 adds the
// init value.
// CHECK-LABEL: func.func @reduction
// CHECK-SAME:    (%[[X:.*]]: memref<3x1000xf32>, %[[MAX:.*]]: memref<3xf32>, %[[SUM:.*]]: memref<3xf32>)
// CHECK:       gpu.launch blocks(%[[BX:[^,)]*]], %{{[^,)]*}}, %{{[^,)]*}}) in (%{{[^,)]*}} = %c3, %{{[^,)]*}} = %c1, %{{[^,)]*}} = %c1)
// CHECK-SAME:    threads(%[[TX:[^,)]*]], %{{[^,)]*}}, %{{[^,)]*}}) in (%{{[^,)]*}} = %c128, %{{[^,)]*}} = %c1, %{{[^,)]*}} = %c1)
// CHECK-SAME:    workgroup(%[[P:[^,)]*]] : memref<128xf32, #gpu.address_space<workgroup>>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.for %[[ROW:.*]] = %[[BX]] to %c3 step %c3 {
// CHECK:           %[[PART:.*]] = scf.for %[[R:.*]] = %[[TX]] to %c1000 step %c128 iter_args(%[[ACC:.*]] = %[[ZERO]])
// CHECK:             %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[R]]]
// CHECK:             %[[M:.*]] = memref.load %[[MAX]][%[[ROW]]]
// CHECK:             %[[D:.*]] = arith.subf %[[V]], %[[M]]
// CHECK:             %[[E:.*]] = math.exp %[[D]]
// CHECK:             %[[S:.*]] = arith.addf %[[E]], %[[ACC]]
// CHECK:             scf.yield %[[S]]
// CHECK:           memref.store %[[PART]], %[[P]][%[[TX]]]
// CHECK:           gpu.barrier
// CHECK:           %[[LT:.*]] = arith.cmpi ult, %[[TX]], %c64
// CHECK:           scf.if %[[LT]] {
// CHECK:             %[[MINE:.*]] = memref.load %[[P]][%[[TX]]]
// CHECK:             %[[OTHER_AT:.*]] = arith.addi %[[TX]], %c64
// CHECK:             %[[OTHER:.*]] = memref.load %[[P]][%[[OTHER_AT]]]
// CHECK:             %[[SUM2:.*]] = arith.addf %[[OTHER]], %[[MINE]]
// CHECK:             memref.store %[[SUM2]], %[[P]][%[[TX]]]
// CHECK:           gpu.barrier
// CHECK-COUNT-6:   gpu.barrier
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %[[TX]], %c0
// CHECK:           scf.if %[[FIRST]] {
// CHECK:             %[[TOTAL:.*]] = memref.load %[[P]][%c0]
// CHECK:             %[[INIT:.*]] = memref.load %[[SUM]][%[[ROW]]]
// CHECK:             %[[RES:.*]] = arith.addf %[[TOTAL]], %[[INIT]]
// CHECK:             memref.store %[[RES]], %[[SUM]][%[[ROW]]]
// CHECK:           gpu.barrier
func.func @reduction(%x: memref<3x1000xf32>, %max: memref<3xf32>,
                     %sum: memref<3xf32>) {
  linalg.generic {indexing_maps = [#row, #out, #out],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<3x1000xf32>, memref<3xf32>) outs(%sum : memref<3xf32>)
      attrs = {kiln.gpu_lowering = {kind = "row_reduction", workgroup_size = array<i64: 128, 1, 1>}} {
  ^bb0(%v: f32, %m: f32, %acc: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#all = affine_map<(i, j) -> (i, j)>
#none = affine_map<() -> ()>
#alln = affine_map<(i, j) -> ()>

// A full reduction in kiln-gpu-prepare-loops' one-thread loop: the kernel
// replaces the loop; a generic op keeps its loops (the attribute dropped).
// maxnumf starts from -inf; the 49 elements are delinearized row-major.
// CHECK-LABEL: func.func @full
// CHECK-NOT:   scf.parallel
// CHECK:       gpu.launch
// CHECK-SAME:    threads(%[[TX:[^,)]*]], %{{[^,)]*}}, %{{[^,)]*}}) in (%{{[^,)]*}} = %c64, %{{[^,)]*}} = %c1, %{{[^,)]*}} = %c1)
// CHECK:         %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         scf.for %{{.*}} = %[[TX]] to %c49 step %c64 iter_args(%{{.*}} = %[[NEG]])
// CHECK:           %[[J:.*]] = arith.remui %{{.*}}, %c7
// CHECK:           %[[I:.*]] = arith.divui %{{.*}}, %c7
// CHECK:           memref.load %{{.*}}[%[[I]], %[[J]]] : memref<7x7xf32>
// CHECK:           arith.maxnumf
// CHECK:       linalg.generic
// CHECK-NOT:     kiln.gpu_lowering
// CHECK:         arith.negf
func.func @full(%x: memref<7x7xf32>, %out: memref<f32>, %y: memref<7x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    linalg.generic {indexing_maps = [#all, #alln],
                    iterator_types = ["reduction", "reduction"]}
        ins(%x : memref<7x7xf32>) outs(%out : memref<f32>)
        attrs = {kiln.gpu_lowering = {kind = "row_reduction", workgroup_size = array<i64: 64, 1, 1>}} {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.maxnumf %v, %acc : f32
      linalg.yield %s : f32
    }
    scf.reduce
  }
  linalg.generic {indexing_maps = [#all, #all],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<7x7xf32>) outs(%y : memref<7x7xf32>)
      attrs = {kiln.gpu_lowering = {kind = "generic"}} {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  }
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
#scalar = affine_map<(m, n) -> ()>

// The fill of the product's buffer right before it is folded into the
// accumulators' start and the bias + ReLU right after it is applied before
// the store, into its own output: one kernel; the product itself, read by
// nothing else, is never stored (its buffer, now unused, goes).
// CHECK-LABEL: func.func @fill_and_epilogue
// CHECK-SAME:    (%[[A:.*]]: memref<20x8xf32>, %[[B:.*]]: memref<8x40xf32>, %[[BIAS:.*]]: memref<40xf32>, %[[OUT:.*]]: memref<20x40xf32>)
// CHECK:       %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT:   linalg.generic
// CHECK:       gpu.launch
// CHECK:         scf.for %{{.*}} = %c0 to %c1 step %c1 iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]],
// CHECK:         scf.if
// CHECK-NEXT:      %[[BV:.*]] = memref.load %[[BIAS]]
// CHECK:           %[[ADD:.*]] = arith.addf %{{.*}}, %[[BV]]
// CHECK:           %[[RELU:.*]] = arith.maximumf %[[ADD]], %[[ZERO]]
// CHECK:           memref.store %[[RELU]], %[[OUT]]
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @fill_and_epilogue(%a: memref<20x8xf32>, %b: memref<8x40xf32>,
                             %bias: memref<40xf32>, %out: memref<20x40xf32>) {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<20x40xf32>
  linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%zero : f32) outs(%tmp : memref<20x40xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<20x8xf32>, memref<8x40xf32>) outs(%tmp : memref<20x40xf32>)
      attrs = {kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 32, 64, 16>, workgroup_size = array<i64: 16, 8, 1>}} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%tmp, %bias : memref<20x40xf32>, memref<40xf32>) outs(%out : memref<20x40xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %s = arith.addf %v, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#in = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh + kh, ow + kw, c)>
#filter = affine_map<(n, oh, ow, f, kh, kw, c) -> (kh, kw, c, f)>
#out = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh, ow, f)>

// A convolution as an implicit GEMM: a linear M row (n, oh, ow) and K column
// (kh, kw, c) are delinearized row-major, the input read at (oh + kh,
// ow + kw) through affine.apply; M = 100 in 2 tiles of 64.
// CHECK-LABEL: func.func @conv
// CHECK-SAME:    (%[[X:.*]]: memref<1x12x12x3xf32>,
// CHECK:       gpu.launch blocks(%{{[^,)]*}}, %{{[^,)]*}}, %{{[^,)]*}}) in (%{{[^,)]*}} = %c1, %{{[^,)]*}} = %c2, %{{[^,)]*}} = %c1)
// CHECK:         scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args
// CHECK:           %[[M:.*]] = arith.minui %{{.*}}, %c99
// CHECK:           %[[OW:.*]] = arith.remui %[[M]], %c10
// CHECK:           %[[R:.*]] = arith.divui %[[M]], %c10
// CHECK:           %[[OH:.*]] = arith.remui %[[R]], %c10
// CHECK:           %[[N:.*]] = arith.divui %[[R]], %c10
// CHECK:           %[[K:.*]] = arith.minui %{{.*}}, %c26
// CHECK:           %[[C:.*]] = arith.remui %[[K]], %c3
// CHECK:           %[[S:.*]] = arith.divui %[[K]], %c3
// CHECK:           %[[KW:.*]] = arith.remui %[[S]], %c3
// CHECK:           %[[KH:.*]] = arith.divui %[[S]], %c3
// CHECK:           %[[IH:.*]] = affine.apply #{{.*}}(%[[N]], %[[OH]], %[[OW]], %{{[^,]*}}, %[[KH]], %[[KW]], %[[C]])
// CHECK:           %[[IW:.*]] = affine.apply #{{.*}}(%[[N]], %[[OH]], %[[OW]], %{{[^,]*}}, %[[KH]], %[[KW]], %[[C]])
// CHECK:           memref.load %[[X]][%[[N]], %[[IH]], %[[IW]], %[[C]]]
func.func @conv(%x: memref<1x12x12x3xf32>, %w: memref<3x3x3x24xf32>,
                %y: memref<1x10x10x24xf32>) {
  linalg.generic {indexing_maps = [#in, #filter, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x12x12x3xf32>, memref<3x3x3x24xf32>)
      outs(%y : memref<1x10x10x24xf32>)
      attrs = {kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 64, 64, 16>, workgroup_size = array<i64: 16, 8, 1>}} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#scalar = affine_map<(m, n) -> ()>

// f16 operands, an f32 result (an f16 MatMul, or one --precision fp16
// narrowed): the tiles hold f16 (staged as loaded, no conversion), the
// cloned body widens what it reads from them, the accumulators are f32; the
// zero fill is their start and the truncation to f16 the epilogue.
// CHECK-LABEL: func.func @matmul_f16
// CHECK-SAME:    (%[[A:.*]]: memref<20x8xf16>, %[[B:.*]]: memref<8x40xf16>, %[[OUT:.*]]: memref<20x40xf16>)
// CHECK-NOT:   linalg.generic
// CHECK:       gpu.launch
// CHECK-SAME:    workgroup(%[[AT:[^,)]*]] : memref<32x16xf16, #gpu.address_space<workgroup>>, %[[BT:[^,)]*]] : memref<16x64xf16, #gpu.address_space<workgroup>>)
// CHECK:         scf.for
// CHECK:           %[[AV:.*]] = memref.load %[[A]]
// CHECK-NEXT:      memref.store %[[AV]], %[[AT]]
// CHECK:           %[[BV:.*]] = memref.load %[[B]]
// CHECK-NEXT:      memref.store %[[BV]], %[[BT]]
// CHECK:           gpu.barrier
// CHECK:           scf.for
// CHECK:             %[[X:.*]] = memref.load %[[AT]]
// CHECK:             %[[Y:.*]] = memref.load %[[BT]]
// CHECK:             %[[XE:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK:             %[[YE:.*]] = arith.extf %[[Y]] : f16 to f32
// CHECK:             arith.mulf %[[XE]], %[[YE]] : f32
// CHECK:         scf.if
// CHECK:           %[[T:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK:           memref.store %[[T]], %[[OUT]]
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @matmul_f16(%a: memref<20x8xf16>, %b: memref<8x40xf16>,
                      %out: memref<20x40xf16>) {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<20x40xf32>
  linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%zero : f32) outs(%tmp : memref<20x40xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<20x8xf16>, memref<8x40xf16>) outs(%tmp : memref<20x40xf32>)
      attrs = {kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 32, 64, 16>, workgroup_size = array<i64: 16, 8, 1>}} {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%tmp : memref<20x40xf32>) outs(%out : memref<20x40xf16>) {
  ^bb0(%v: f32, %o: f16):
    %t = arith.truncf %v : f32 to f16
    linalg.yield %t : f16
  }
  return
}
