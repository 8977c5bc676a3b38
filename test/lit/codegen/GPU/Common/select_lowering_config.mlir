// RUN: kiln-opt %s -split-input-file -kiln-gpu-select-lowering-config \
// RUN:   | FileCheck %s
// RUN: kiln-opt %s -split-input-file \
// RUN:   -kiln-gpu-select-lowering-config=max-workgroup-invocations=1024 \
// RUN:   | FileCheck %s --check-prefix=BIG
// RUN: kiln-opt %s -split-input-file \
// RUN:   -kiln-gpu-select-lowering-config=max-workgroup-memory=4096 \
// RUN:   | FileCheck %s --check-prefix=SMALL
// RUN: kiln-opt %s -split-input-file \
// RUN:   -kiln-gpu-select-lowering-config="max-workgroup-invocations=256 max-workgroup-memory=49152 min-workgroups=264 max-tile-k=64" \
// RUN:   | FileCheck %s --check-prefix=CUDA
// RUN: kiln-opt %s -split-input-file \
// RUN:   -kiln-gpu-select-lowering-config=mma-sync=true \
// RUN:   | FileCheck %s --check-prefix=MMA
// RUN: kiln-opt %s -split-input-file \
// RUN:   "-kiln-gpu-select-lowering-config=mma-sync=true tf32=true" \
// RUN:   | FileCheck %s --check-prefix=TF32
// RUN: kiln-opt %s -split-input-file \
// RUN:   "-kiln-gpu-select-lowering-config=mma-sync=true max-workgroup-memory=49152" \
// RUN:   | FileCheck %s --check-prefix=MMA48K

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// An f32 contraction: 64x64 output tiles, K steps of 16; 128 threads (the
// Vulkan minimum) as 16x8, or 16x16 where the target allows 256. With 4 KiB
// of workgroup memory the two 4 KiB tiles do not fit: generic.
// CHECK-LABEL: func.func @matmul
// CHECK:       linalg.generic
// CHECK-SAME:    kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 64, 64, 16>, workgroup_size = array<i64: 16, 8, 1>}
// BIG-LABEL:   func.func @matmul
// BIG:           kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 64, 64, 16>, workgroup_size = array<i64: 16, 16, 1>}
// SMALL-LABEL: func.func @matmul
// SMALL:         kiln.gpu_lowering = {kind = "generic"}
// The cuda target's options: 2 workgroups of 64x64 are far from 264, so the
// tiles shrink to 16x32 (16 workgroups, 128 threads); K (65) takes steps of
// 64.
// CUDA-LABEL:  func.func @matmul
// CUDA:          kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 16, 32, 64>, workgroup_size = array<i64: 16, 8, 1>}
// With mma.sync (cuda, sm_80+) an f32 contraction stays on CUDA cores
// unless tf32 is allowed (--precision tf32): then tensor cores, K steps of
// 16 (two m16n8k8), 2x2 warps of 32x32.
// MMA-LABEL:   func.func @matmul
// MMA:           kind = "matmul_tiled"
// TF32-LABEL:  func.func @matmul
// TF32:          kiln.gpu_lowering = {kind = "matmul_mma", mma_shape = array<i64: 16, 8, 8>, tile_sizes = array<i64: 64, 64, 16>, warp_tile = array<i64: 32, 32>, workgroup_size = array<i64: 128, 1, 1>}
func.func @matmul(%a: memref<127x65xf32>, %b: memref<65x33xf32>,
                  %c: memref<127x33xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<127x65xf32>, memref<65x33xf32>)
      outs(%c : memref<127x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bkn = affine_map<(b, m, n, k) -> (b, k, n)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>

// A batch matmul with M <= 32: 32-row tiles. With the cuda target's options
// 16x32 tiles; K = 13 keeps steps of 16.
// CHECK-LABEL: func.func @batch_matmul
// CHECK:         kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 32, 64, 16>, workgroup_size = array<i64: 16, 8, 1>}
// CUDA-LABEL:  func.func @batch_matmul
// CUDA:          kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 16, 32, 16>, workgroup_size = array<i64: 16, 8, 1>}
func.func @batch_matmul(%a: memref<3x7x13xf32>, %b: memref<3x13x29xf32>,
                        %c: memref<3x7x29xf32>) {
  linalg.generic {indexing_maps = [#bmk, #bkn, #bmn],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<3x7x13xf32>, memref<3x13x29xf32>)
      outs(%c : memref<3x7x29xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// A vector-matrix product (M = 1), and an integer one: one thread per output.
// CHECK-LABEL: func.func @not_tiled
// CHECK:         kiln.gpu_lowering = {kind = "generic"}
// CHECK:         kiln.gpu_lowering = {kind = "generic"}
func.func @not_tiled(%a: memref<1x64xf32>, %b: memref<64x100xf32>,
                     %c: memref<1x100xf32>, %ia: memref<64x64xi32>,
                     %ic: memref<64x64xi32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<1x64xf32>, memref<64x100xf32>)
      outs(%c : memref<1x100xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ia, %ia : memref<64x64xi32>, memref<64x64xi32>)
      outs(%ic : memref<64x64xi32>) {
  ^bb0(%x: i32, %y: i32, %acc: i32):
    %p = arith.muli %x, %y : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

#row = affine_map<(i, j) -> (i, j)>
#out = affine_map<(i, j) -> (i)>

// Rows of 1000 (softmax's sum of exp(x - max)): one workgroup of 128
// threads per row (256 where allowed); rows of 16: serial per thread.
// CHECK-LABEL: func.func @reductions
// CHECK:         kiln.gpu_lowering = {kind = "row_reduction", workgroup_size = array<i64: 128, 1, 1>}
// CHECK:         kiln.gpu_lowering = {kind = "generic"}
// BIG-LABEL:   func.func @reductions
// BIG:           kiln.gpu_lowering = {kind = "row_reduction", workgroup_size = array<i64: 256, 1, 1>}
func.func @reductions(%x: memref<3x1000xf32>, %max: memref<3xf32>,
                      %sum: memref<3xf32>, %short: memref<3x16xf32>) {
  linalg.generic {indexing_maps = [#row, #out, #out],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<3x1000xf32>, memref<3xf32>) outs(%sum : memref<3xf32>) {
  ^bb0(%v: f32, %m: f32, %acc: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#row, #out],
                  iterator_types = ["parallel", "reduction"]}
      ins(%short : memref<3x16xf32>) outs(%sum : memref<3xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.maxnumf %v, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#all = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
#id = affine_map<(i) -> (i)>

// A full reduction (kiln-gpu-prepare-loops' one-thread loop around it): 64
// threads for 49 elements. A body that reads its accumulator twice has no
// combiner: generic. An elementwise op: generic.
// CHECK-LABEL: func.func @full
// CHECK:         scf.parallel
// CHECK:           linalg.generic
// CHECK-SAME:        kiln.gpu_lowering = {kind = "row_reduction", workgroup_size = array<i64: 64, 1, 1>}
// CHECK:         linalg.generic
// CHECK-SAME:      kiln.gpu_lowering = {kind = "generic"}
// CHECK:         linalg.generic
// CHECK-SAME:      kiln.gpu_lowering = {kind = "generic"}
func.func @full(%x: memref<7x7xf32>, %out: memref<f32>, %y: memref<7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    linalg.generic {indexing_maps = [#all, #none],
                    iterator_types = ["reduction", "reduction"]}
        ins(%x : memref<7x7xf32>) outs(%out : memref<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
    scf.reduce
  }
  linalg.generic {indexing_maps = [#all, #none],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<7x7xf32>) outs(%out : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    %t = arith.mulf %s, %acc : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel"]}
      ins(%y : memref<7xf32>) outs(%y : memref<7xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  }
  return
}

// -----

#in = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh + kh, ow + kw, c)>
#filter = affine_map<(n, oh, ow, f, kh, kw, c) -> (kh, kw, c, f)>
#out = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh, ow, f)>
#dwin = affine_map<(n, oh, ow, c, kh, kw) -> (n, oh + kh, ow + kw, c)>
#dwfilter = affine_map<(n, oh, ow, c, kh, kw) -> (kh, kw, c)>
#dwout = affine_map<(n, oh, ow, c, kh, kw) -> (n, oh, ow, c)>

// An NHWC convolution is an implicit GEMM (M = n*oh*ow = 100, N = f = 24,
// K = kh*kw*c = 27): tiled. A depthwise one has no N dim (c is read by both
// inputs: a batch dim): generic.
// CHECK-LABEL: func.func @convs
// CHECK:         kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 64, 64, 16>, workgroup_size = array<i64: 16, 8, 1>}
// CHECK:         kiln.gpu_lowering = {kind = "generic"}
func.func @convs(%x: memref<1x12x12x3xf32>, %w: memref<3x3x3x24xf32>,
                 %y: memref<1x10x10x24xf32>, %dw: memref<3x3x3xf32>,
                 %z: memref<1x10x10x3xf32>) {
  linalg.generic {indexing_maps = [#in, #filter, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x12x12x3xf32>, memref<3x3x3x24xf32>)
      outs(%y : memref<1x10x10x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#dwin, #dwfilter, #dwout],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction"]}
      ins(%x, %dw : memref<1x12x12x3xf32>, memref<3x3x3xf32>)
      outs(%z : memref<1x10x10x3xf32>) {
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

// f16 x f16 accumulated in f32 (what an f16 MatMul imports as): tensor
// cores where the target has mma.sync, m16n8k16 in K steps of 32; M <= 32:
// 32x64 tiles as 1x4 warps of 32x16. Without mma.sync: matmul_tiled with
// f16 tiles (the body widens what it reads from them).
// CHECK-LABEL: func.func @matmul_f16
// CHECK:         kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 32, 64, 16>, workgroup_size = array<i64: 16, 8, 1>}
// MMA-LABEL:   func.func @matmul_f16
// MMA:           kiln.gpu_lowering = {kind = "matmul_mma", mma_shape = array<i64: 16, 8, 16>, tile_sizes = array<i64: 32, 64, 32>, warp_tile = array<i64: 32, 16>, workgroup_size = array<i64: 128, 1, 1>}
// TF32-LABEL:  func.func @matmul_f16
// TF32:          kind = "matmul_mma", mma_shape = array<i64: 16, 8, 16>
func.func @matmul_f16(%a: memref<7x13xf16>, %b: memref<13x29xf16>,
                      %c: memref<7x29xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<7x13xf16>, memref<13x29xf16>)
      outs(%c : memref<7x29xf32>) {
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

// A body that is not out + a * b (here out + a * b + a) is not an mma: the
// CUDA-core tiled kernel (which clones any body) takes it.
// MMA-LABEL:   func.func @not_mma_body
// MMA:           kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 64, 64, 16>, workgroup_size = array<i64: 16, 8, 1>}
func.func @not_mma_body(%a: memref<70x13xf16>, %b: memref<13x29xf16>,
                        %c: memref<70x29xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<70x13xf16>, memref<13x29xf16>)
      outs(%c : memref<70x29xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %q = arith.addf %p, %xe : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// M and N >= 128: 128x128 tiles as 2x2 warps of 64x64 where 20 KiB of
// workgroup memory are allowed (the cuda target's 48 KiB), else 64x64.
// MMA-LABEL:     func.func @matmul_f16_large
// MMA:             kiln.gpu_lowering = {kind = "matmul_mma", mma_shape = array<i64: 16, 8, 16>, tile_sizes = array<i64: 64, 64, 32>, warp_tile = array<i64: 32, 32>, workgroup_size = array<i64: 128, 1, 1>}
// MMA48K-LABEL:  func.func @matmul_f16_large
// MMA48K:          kiln.gpu_lowering = {kind = "matmul_mma", mma_shape = array<i64: 16, 8, 16>, tile_sizes = array<i64: 128, 128, 32>, warp_tile = array<i64: 64, 64>, workgroup_size = array<i64: 128, 1, 1>}
func.func @matmul_f16_large(%a: memref<256x256xf16>, %b: memref<256x130xf16>,
                            %c: memref<256x130xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<256x256xf16>, memref<256x130xf16>)
      outs(%c : memref<256x130xf32>) {
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

// f16 operands, f32 result (--precision fp16's narrowed products) on CUDA
// cores: @matmul's tiles, at 2 bytes per staged element: 64x16 + 16x64 f16
// are 4 KiB, so they fit where the two f32 tiles do not (SMALL).
// CHECK-LABEL: func.func @matmul_f16_tiled
// CHECK:         kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 64, 64, 16>, workgroup_size = array<i64: 16, 8, 1>}
// SMALL-LABEL: func.func @matmul_f16_tiled
// SMALL:         kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 64, 64, 16>, workgroup_size = array<i64: 16, 8, 1>}
// CUDA-LABEL:  func.func @matmul_f16_tiled
// CUDA:          kiln.gpu_lowering = {kind = "matmul_tiled", tile_sizes = array<i64: 16, 32, 64>, workgroup_size = array<i64: 16, 8, 1>}
// An f16 result (no f32 accumulator) stays generic.
// CHECK:         kiln.gpu_lowering = {kind = "generic"}
func.func @matmul_f16_tiled(%a: memref<127x65xf16>, %b: memref<65x33xf16>,
                            %c: memref<127x33xf32>, %h: memref<127x33xf16>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<127x65xf16>, memref<65x33xf16>)
      outs(%c : memref<127x33xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<127x65xf16>, memref<65x33xf16>)
      outs(%h : memref<127x33xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  return
}
