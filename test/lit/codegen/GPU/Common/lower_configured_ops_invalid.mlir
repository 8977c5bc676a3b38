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

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// matmul_mma multiplies f16 (or f32) operands into an f32 result: an f16
// result is not its op.
func.func @mma_f16_result(%a: memref<8x8xf16>, %b: memref<8x32xf16>,
                          %c: memref<8x32xf16>) {
  // expected-error @+1 {{'matmul_mma' asked for an op that is not a contraction out + a * b of f16 or f32 operands with an f32 result}}
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x8xf16>, memref<8x32xf16>) outs(%c : memref<8x32xf16>)
      attrs = {kiln.gpu_lowering = {kind = "matmul_mma", mma_shape = array<i64: 16, 8, 16>, tile_sizes = array<i64: 64, 64, 32>, warp_tile = array<i64: 32, 32>, workgroup_size = array<i64: 128, 1, 1>}} {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// f16 operands take m16n8k16; 4 warps must cover the 64x64 tile.
func.func @mma_bad_shape(%a: memref<8x8xf16>, %b: memref<8x32xf16>,
                         %c: memref<8x32xf32>) {
  // expected-error @+1 {{'matmul_mma' needs workgroup_size [32 * warps, 1, 1] with one warp per warp_tile of the tile, warp tiles of whole 16 x 8 instructions, and mma_shape [16, 8, 16] dividing tile_sizes}}
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x8xf16>, memref<8x32xf16>) outs(%c : memref<8x32xf32>)
      attrs = {kiln.gpu_lowering = {kind = "matmul_mma", mma_shape = array<i64: 16, 8, 8>, tile_sizes = array<i64: 64, 64, 32>, warp_tile = array<i64: 32, 32>, workgroup_size = array<i64: 128, 1, 1>}} {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @mma_no_warp_tile(%a: memref<8x8xf16>, %b: memref<8x32xf16>,
                            %c: memref<8x32xf32>) {
  // expected-error @+1 {{malformed 'kiln.gpu_lowering' attribute}}
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x8xf16>, memref<8x32xf16>) outs(%c : memref<8x32xf32>)
      attrs = {kiln.gpu_lowering = {kind = "matmul_mma", mma_shape = array<i64: 16, 8, 16>, tile_sizes = array<i64: 64, 64, 32>, workgroup_size = array<i64: 128, 1, 1>}} {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
