// RUN: kiln-opt %s --kiln-parallelize-loops | FileCheck %s

// Softmax row max: parallel over the 4 x 128 rows, the row (the input's
// contiguous dimension) stays the innermost loop, and the combiner may be
// reassociated so LLVM vectorizes the reduction.
// CHECK-LABEL: func.func @row_max
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c512)
// CHECK: %[[ROW:.*]] = arith.remui %[[I]], %c128
// CHECK: %[[HEAD:.*]] = arith.divui %[[I]], %c128
// CHECK: memref.subview %arg0[0, %[[HEAD]], %[[ROW]], 0] [1, 1, 1, 128]
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc>
// CHECK: } {kiln.parallel}
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#red4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @row_max(%in: memref<1x4x128x128xf32>, %out: memref<1x4x128xf32>) {
  linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%in : memref<1x4x128x128xf32>) outs(%out : memref<1x4x128xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %b : f32
    linalg.yield %m : f32
  }
  return
}

// NHWC max pooling: channels become the innermost loop (after the window),
// parallel over output rows x columns (55 rows alone are fewer than 64).
// CHECK-LABEL: func.func @pool_nhwc
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c3025)
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]
// CHECK-SAME: outs(%{{.*}} : memref<1x1x1x64xf32
// CHECK: } {kiln.parallel}
func.func @pool_nhwc(%in: memref<1x111x111x64xf32>, %w: memref<3x3xf32>, %out: memref<1x55x55x64xf32>) {
  linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%in, %w : memref<1x111x111x64xf32>, memref<3x3xf32>) outs(%out : memref<1x55x55x64xf32>)
  return
}

// NCHW pooling with stride 2: moving the output columns innermost would make
// a stride-2 inner loop, so the order stays; parallel over channels.
// CHECK-LABEL: func.func @pool_nchw_strided
// CHECK: scf.parallel (%[[C:.*]]) = (%{{.*}}) to (%c64)
// CHECK: memref.subview %arg0[0, %[[C]], 0, 0] [1, 1, 111, 111]
// CHECK: linalg.pooling_nchw_max
// CHECK: } {kiln.parallel}
func.func @pool_nchw_strided(%in: memref<1x64x111x111xf32>, %w: memref<3x3xf32>, %out: memref<1x64x55x55xf32>) {
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%in, %w : memref<1x64x111x111xf32>, memref<3x3xf32>) outs(%out : memref<1x64x55x55xf32>)
  return
}

// A 1-D op is cut into blocks of its only loop (a multiple of 16, the last
// one partial).
// CHECK-LABEL: func.func @flat
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c64)
// CHECK: %[[OFF:.*]] = arith.muli %[[I]], %c1568
// CHECK: %[[SIZE:.*]] = affine.min
// CHECK: memref.subview %arg0[%[[OFF]]] [%[[SIZE]]] [1]
// CHECK: math.exp
// CHECK: } {kiln.parallel}
#id1 = affine_map<(d0) -> (d0)>
func.func @flat(%in: memref<100000xf32>, %out: memref<100000xf32>) {
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%in : memref<100000xf32>) outs(%out : memref<100000xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// Small ops (4096 elements) stay sequential.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: linalg.copy
func.func @small(%in: memref<64x64xf32>, %out: memref<64x64xf32>) {
  linalg.copy ins(%in : memref<64x64xf32>) outs(%out : memref<64x64xf32>)
  return
}

// linalg.index in a tile is offset by the tile's position.
// CHECK-LABEL: func.func @index
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c256)
// CHECK: %[[J:.*]] = linalg.index 0
// CHECK: affine.apply #{{.*}}(%[[I]])[%[[J]]]
// CHECK: } {kiln.parallel}
func.func @index(%out: memref<256x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%out : memref<256x256xf32>) {
  ^bb0(%b: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    linalg.yield %f : f32
  }
  return
}

// A column sum (reduction over the outer loop) has no leading parallel loop:
// sequential; ops inside a parallel loop are left alone.
// CHECK-LABEL: func.func @column_sum
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
#col_in = affine_map<(d0, d1) -> (d0, d1)>
#col_out = affine_map<(d0, d1) -> (d1)>
func.func @column_sum(%in: memref<512x512xf32>, %out: memref<512xf32>) {
  linalg.generic {indexing_maps = [#col_in, #col_out], iterator_types = ["reduction", "parallel"]} ins(%in : memref<512x512xf32>) outs(%out : memref<512xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// Softmax-like row ops (a fill, a row max, a per-row select, an elementwise
// op reading the row max through a unit-dim expand_shape) share one parallel
// loop over the 512 rows; each runs on row %i. The expand_shape moves in
// front of the loop.
// CHECK-LABEL: func.func @fused_rows
// CHECK: memref.expand_shape
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c512)
// CHECK: linalg.fill {{.*}} memref<1x1x1xf32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<1x1x1x128xf32
// CHECK: } {kiln.parallel}
// CHECK-NOT: scf.parallel
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bc4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
func.func @fused_rows(%in: memref<1x4x128x128xf32>, %m: memref<1x4x128xf32>, %m2: memref<1x4x128xf32>, %out: memref<1x4x128x128xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%ninf : f32) outs(%m : memref<1x4x128xf32>)
  linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%in : memref<1x4x128x128xf32>) outs(%m : memref<1x4x128xf32>) {
  ^bb0(%a: f32, %b: f32):
    %x = arith.maximumf %a, %b : f32
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m : memref<1x4x128xf32>) outs(%m2 : memref<1x4x128xf32>) {
  ^bb0(%a: f32, %b: f32):
    %z = arith.constant 0.0 : f32
    %c = arith.cmpf oeq, %a, %ninf : f32
    %s = arith.select %c, %z, %a : f32
    linalg.yield %s : f32
  }
  %mk = memref.expand_shape %m2 [[0], [1], [2, 3]] output_shape [1, 4, 128, 1] : memref<1x4x128xf32> into memref<1x4x128x1xf32>
  linalg.generic {indexing_maps = [#id4, #bc4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%in, %mk : memref<1x4x128x128xf32>, memref<1x4x128x1xf32>) outs(%out : memref<1x4x128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  return
}

// A later op reading what an earlier one wrote through a view whose rows the
// pass does not follow (collapsed to 1-D and expanded back) keeps its own
// loop: only views that leave the row dims alone prove row r reads row r.
// CHECK-LABEL: func.func @not_row_local
// CHECK: scf.parallel
// CHECK: } {kiln.parallel}
// CHECK: scf.parallel
// CHECK: } {kiln.parallel}
func.func @not_row_local(%in: memref<1x4x128x128xf32>, %m: memref<1x4x128xf32>, %out: memref<1x4x128x128xf32>) {
  linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%in : memref<1x4x128x128xf32>) outs(%m : memref<1x4x128xf32>) {
  ^bb0(%a: f32, %b: f32):
    %x = arith.maximumf %a, %b : f32
    linalg.yield %x : f32
  }
  %flat = memref.collapse_shape %m [[0, 1, 2]] : memref<1x4x128xf32> into memref<512xf32>
  %back = memref.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 4, 128, 1] : memref<512xf32> into memref<1x4x128x1xf32>
  linalg.generic {indexing_maps = [#id4, #bc4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%in, %back : memref<1x4x128x128xf32>, memref<1x4x128x1xf32>) outs(%out : memref<1x4x128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  return
}
