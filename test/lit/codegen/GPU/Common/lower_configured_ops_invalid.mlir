// RUN: kiln-opt %s -split-input-file -kiln-gpu-lower-configured-ops \
// RUN:   -verify-diagnostics

#id = affine_map<(i) -> (i)>

func.func @not_a_contraction(%x: memref<7xf32>, %y: memref<7xf32>) {
  // expected-error @+1 {{'matmul_tiled' asked for an op that is not a tiled contraction}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<7xf32>) outs(%y : memref<7xf32>)
      attrs = {kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 64, 64, 16>, workgroup_size = array<i64: 16, 8, 1>}} {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @bad_workgroup(%a: memref<8x8xf32>, %b: memref<8x32xf32>,
                         %c: memref<8x32xf32>) {
  // expected-error @+1 {{'matmul_tiled' needs workgroup_size [16, TY, 1] dividing its tiles}}
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x8xf32>, memref<8x32xf32>) outs(%c : memref<8x32xf32>)
      attrs = {kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 64, 64, 16>, workgroup_size = array<i64: 32, 8, 1>}} {
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

func.func @no_combiner(%x: memref<3x100xf32>, %y: memref<3xf32>) {
  // expected-error @+1 {{'row_reduction' asked for an op that is not a reduction with a known combiner}}
  linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<3x100xf32>) outs(%y : memref<3xf32>)
      attrs = {kiln.gpu_lowering = {kind = "row_reduction", workgroup_size = array<i64: 64, 1, 1>}} {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.subf %acc, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(i) -> (i)>

func.func @malformed(%x: memref<7xf32>, %y: memref<7xf32>) {
  // expected-error @+1 {{malformed 'kiln.gpu_lowering' attribute}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<7xf32>) outs(%y : memref<7xf32>)
      attrs = {kiln.gpu_lowering = {kind = "winograd"}} {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}
