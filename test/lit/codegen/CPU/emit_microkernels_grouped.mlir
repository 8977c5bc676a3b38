// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=4 vector-registers=16" | FileCheck %s --check-prefix=SSE
// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=8 vector-registers=16" | FileCheck %s --check-prefix=AVX2
// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=16 vector-registers=32" | FileCheck %s --check-prefix=AVX512
// RUN: kiln-opt %s --split-input-file --kiln-select-kernel-strategy="vector-width=8 vector-registers=16" --kiln-emit-microkernels | FileCheck %s --check-prefix=EMIT

// Grouped conv (8 groups of 4 input and 4 output channels, ResNeXt-50's
// first stage): the columns are the 32 output channels, one vector per
// panel. With 4 and 8 lanes the block-diagonal form: a panel of 8 (AVX2)
// covers 2 groups and reduces over their 8 input channels (reduction
// 3 x 3 x 8 = 72). With 16 lanes (4 groups to a vector) the shuffle form
// (reduction 3 x 3 x 4; rows x 1 with 2 x rows + 2 registers).
// SSE:    linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 16, rows = 12, vectors = 1, reduction_block = 36>
// AVX2:   linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 12, vectors = 1, reduction_block = 72>
// AVX512: linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 12, vectors = 1, reduction_block = 36>
// The filters packed block-diagonally per panel: [4 panels][3][3][8][8].
// EMIT: memref.global "private" constant @gw_packed : memref<4x3x3x8x8xf32>
// EMIT-LABEL: func.func @grouped
// EMIT-NOT: linalg.fill
// EMIT-DAG: %[[P:.*]] = memref.get_global @gw_packed
// EMIT-DAG: %[[I:.*]] = memref.collapse_shape %arg0 {{\[\[}}0], [1], [2], [3, 4]] : memref<1x14x14x8x4xf32> into memref<1x14x14x32xf32>
// EMIT-DAG: %[[O:.*]] = memref.collapse_shape %arg1 {{\[\[}}0], [1], [2], [3, 4]] : memref<1x12x12x8x4xf32> into memref<1x12x12x32xf32>
// EMIT: scf.parallel
// EMIT: %[[C0:.*]] = arith.muli %{{.*}}, %c8
// EMIT: %[[G:.*]] = arith.divui %[[C0]], %c4
// EMIT: %[[S0:.*]] = arith.muli %[[G]], %c4
// EMIT: %[[S:.*]] = arith.minui %[[S0]], %c24
// EMIT: scf.for {{.*}} iter_args
// EMIT: scf.for {{.*}} iter_args
// EMIT: scf.for %[[K:[^ ]*]] = %c0{{.*}} to %c8{{.*}} iter_args
// EMIT: vector.load %[[P]]
// EMIT: %[[CH:.*]] = arith.addi %[[S]], %[[K]]
// EMIT: memref.load %[[I]][%{{.*}}, %{{.*}}, %{{.*}}, %[[CH]]]
// EMIT: vector.fma
// EMIT: vector.store %{{.*}}, %[[O]]
// EMIT: kiln.parallel
// EMIT-NOT: linalg.conv_2d_nhwgc_gfhwc
memref.global "private" constant @gw : memref<8x4x3x3x4xf32> = dense<1.0> {alignment = 64 : i64}
func.func @grouped(%i: memref<1x14x14x8x4xf32>, %o: memref<1x12x12x8x4xf32>) {
  %w = memref.get_global @gw : memref<8x4x3x3x4xf32>
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%o : memref<1x12x12x8x4xf32>)
  linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x14x14x8x4xf32>, memref<8x4x3x3x4xf32>) outs(%o : memref<1x12x12x8x4xf32>)
  return
}

// -----

// 3 groups of 3 inputs and 5 outputs (15 columns): the block-diagonal
// form, a panel of 8 touches 2 groups and reduces over their 6 input
// channels from min(col0 / 5 * 3, 9 - 6); the filters packed with zeros at
// the other group's channels. The last panel's 7 columns are stored masked.
// Stride 2 and dilation 2. The bias + Relu generic reading the result as
// NHWC (G and F merged) is applied to the accumulators.
// AVX2:   linalg.conv_2d_nhwgc_gfhwc {dilations = dense<2> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 12, vectors = 1, reduction_block = 54>
// EMIT: memref.global "private" constant @ow_packed : memref<2x3x3x6x8xf32>
// EMIT-LABEL: func.func @grouped_odd_epilogue
// EMIT: scf.parallel
// EMIT: arith.minui %{{.*}}, %c3
// EMIT: scf.for %{{.*}} = %c0{{.*}} to %c6{{.*}} iter_args
// EMIT: vector.fma
// EMIT: arith.maximumf
// EMIT: vector.maskedstore %arg2
// EMIT-NOT: linalg.generic
// EMIT-NOT: linalg.conv_2d_nhwgc_gfhwc
memref.global "private" constant @ow : memref<3x5x3x3x3xf32> = dense<1.0> {alignment = 64 : i64}
func.func @grouped_odd_epilogue(%i: memref<1x11x11x3x3xf32>, %bias: memref<15xf32>, %r: memref<1x4x4x15xf32>) {
  %w = memref.get_global @ow : memref<3x5x3x3x3xf32>
  %o = memref.alloc() {alignment = 64 : i64} : memref<1x4x4x3x5xf32>
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%o : memref<1x4x4x3x5xf32>)
  linalg.conv_2d_nhwgc_gfhwc {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%i, %w : memref<1x11x11x3x3xf32>, memref<3x5x3x3x3xf32>) outs(%o : memref<1x4x4x3x5xf32>)
  %v = memref.collapse_shape %o [[0], [1], [2], [3, 4]] : memref<1x4x4x3x5xf32> into memref<1x4x4x15xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v, %bias : memref<1x4x4x15xf32>, memref<15xf32>) outs(%r : memref<1x4x4x15xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    %m = arith.maximumf %s, %cst : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// The shuffle form at 8 lanes: 5 groups of 2 (4 groups to a vector; 10
// columns, 8 + 2). Each row's input vector is loaded once per tap (masked
// in the last panel), channel c of each group spread over its 2 lanes, the
// accumulators stored masked in the last panel. The filters: each column's
// own 2 weights, [2 panels][3][3][2][8].
// AVX2:   linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 6, vectors = 1, reduction_block = 18>
// EMIT: memref.global "private" constant @tw_packed : memref<2x3x3x2x8xf32>
// EMIT-LABEL: func.func @grouped_shuffle_tail
// EMIT: vector.load %{{.*}} : memref<1x6x6x10xf32>, vector<8xf32>
// EMIT: vector.shuffle %{{.*}}, %{{.*}} [0, 0, 2, 2, 4, 4, 6, 6]
// EMIT: vector.fma
// EMIT: vector.shuffle %{{.*}}, %{{.*}} [1, 1, 3, 3, 5, 5, 7, 7]
// EMIT: vector.fma
// EMIT: vector.store
// EMIT: vector.maskedload %{{.*}} : memref<1x6x6x10xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// EMIT: vector.shuffle
// EMIT: vector.fma
// EMIT: vector.maskedstore
memref.global "private" constant @tw : memref<5x2x3x3x2xf32> = dense<1.0> {alignment = 64 : i64}
func.func @grouped_shuffle_tail(%i: memref<1x6x6x5x2xf32>, %o: memref<1x4x4x5x2xf32>) {
  %w = memref.get_global @tw : memref<5x2x3x3x2xf32>
  linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x5x2xf32>, memref<5x2x3x3x2xf32>) outs(%o : memref<1x4x4x5x2xf32>)
  return
}

// -----

// A filter that is no constant: no packing, the op keeps the generic lowering.
// EMIT-LABEL: func.func @grouped_runtime_filter
// EMIT: linalg.conv_2d_nhwgc_gfhwc
func.func @grouped_runtime_filter(%i: memref<1x6x6x2x4xf32>, %w: memref<2x4x3x3x4xf32>, %o: memref<1x4x4x2x4xf32>) {
  linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x2x4xf32>, memref<2x4x3x3x4xf32>) outs(%o : memref<1x4x4x2x4xf32>)
  return
}
