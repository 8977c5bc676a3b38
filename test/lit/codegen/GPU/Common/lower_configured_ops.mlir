// RUN: kiln-opt %s -split-input-file -kiln-gpu-lower-configured-ops \
// RUN:   | FileCheck %s

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// 127x33 outputs in 64x64 tiles: 1 x 2 workgroups of 16x8 threads, each
// thread 8 rows (ty + 8i) x 4 columns (tx + 16j); K = 65 in 5 steps of 16
// staged in workgroup memory between barriers; the last step runs 1 column.

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
