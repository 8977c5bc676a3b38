// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-propagate-transposes))' | FileCheck %s

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>

// A residual add of two NHWC results, each transposed to NCHW, with a
// per-channel scale: computed in NHWC (the channel operand now indexed by
// the last loop), one transpose after it.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[LAST:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @residual
// CHECK-SAME: (%[[A:.*]]: tensor<1x4x4x8xf32>, %[[B:.*]]: tensor<1x4x4x8xf32>, %[[S:.*]]: tensor<8xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[LAST]], #[[ID]]]
// CHECK-SAME: ins(%[[A]], %[[B]], %[[S]] : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<8xf32>)
// CHECK: -> tensor<1x4x4x8xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[SUM]] : tensor<1x4x4x8xf32>) outs(%{{.*}} : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
// CHECK: return %[[T]]
func.func @residual(%a: tensor<1x4x4x8xf32>, %b: tensor<1x4x4x8xf32>,
                    %s: tensor<8xf32>) -> tensor<1x8x4x4xf32> {
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %ta = linalg.transpose ins(%a : tensor<1x4x4x8xf32>) outs(%e : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
  %tb = linalg.transpose ins(%b : tensor<1x4x4x8xf32>) outs(%e : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
  %r = linalg.generic {indexing_maps = [#id, #id, #chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ta, %tb, %s : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<8xf32>) outs(%e : tensor<1x8x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %out: f32):
    %0 = arith.addf %x, %y : f32
    %1 = arith.mulf %0, %z : f32
    linalg.yield %1 : f32
  } -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// A full-size operand in NCHW (here a function argument) keeps the generic
// where it is: moving it would only add a transpose.
// CHECK-LABEL: func.func @mixed_layouts
// CHECK: linalg.transpose
// CHECK: linalg.generic
// CHECK: -> tensor<1x8x4x4xf32>
// CHECK-NOT: linalg.transpose
func.func @mixed_layouts(%a: tensor<1x4x4x8xf32>, %b: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %ta = linalg.transpose ins(%a : tensor<1x4x4x8xf32>) outs(%e : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ta, %b : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) outs(%e : tensor<1x8x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %0 = arith.addf %x, %y : f32
    linalg.yield %0 : f32
  } -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// ReLU between two convolutions: the transposes around it cancel.
// CHECK-LABEL: func.func @cancel
// CHECK-SAME: (%[[A:.*]]: tensor<1x4x4x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: ins(%[[A]] : tensor<1x4x4x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]]
func.func @cancel(%a: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %ta = linalg.transpose ins(%a : tensor<1x4x4x8xf32>) outs(%e : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ta : tensor<1x8x4x4xf32>) outs(%e : tensor<1x8x4x4xf32>) {
  ^bb0(%x: f32, %out: f32):
    %c0 = arith.constant 0.0 : f32
    %0 = arith.maximumf %x, %c0 : f32
    linalg.yield %0 : f32
  } -> tensor<1x8x4x4xf32>
  %e2 = tensor.empty() : tensor<1x4x4x8xf32>
  %back = linalg.transpose ins(%r : tensor<1x8x4x4xf32>) outs(%e2 : tensor<1x4x4x8xf32>) permutation = [0, 2, 3, 1]
  return %back : tensor<1x4x4x8xf32>
}

// -----

// MaxPool with -inf padding on an NHWC activation: pad the NHWC source
// (pads moved to H and W of NHWC) and pool in NHWC.
// CHECK-LABEL: func.func @maxpool
// CHECK-SAME: (%[[A:.*]]: tensor<1x6x6x8xf32>)
// CHECK: %[[P:.*]] = tensor.pad %[[A]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: %[[FILL:.*]] = linalg.fill {{.*}} -> tensor<1x4x4x8xf32>
// CHECK: %[[POOL:.*]] = linalg.pooling_nhwc_max {{.*}} ins(%[[P]], %{{.*}} : tensor<1x8x8x8xf32>, tensor<2x2xf32>) outs(%[[FILL]] : tensor<1x4x4x8xf32>)
// CHECK: linalg.transpose ins(%[[POOL]] : tensor<1x4x4x8xf32>) outs(%{{.*}} : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
// CHECK-NOT: pooling_nchw
func.func @maxpool(%a: tensor<1x6x6x8xf32>) -> tensor<1x8x4x4xf32> {
  %e = tensor.empty() : tensor<1x8x6x6xf32>
  %ta = linalg.transpose ins(%a : tensor<1x6x6x8xf32>) outs(%e : tensor<1x8x6x6xf32>) permutation = [0, 3, 1, 2]
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %ta low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x8x6x6xf32> to tensor<1x8x8x8xf32>
  %acc0 = tensor.empty() : tensor<1x8x4x4xf32>
  %acc = linalg.fill ins(%ninf : f32) outs(%acc0 : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %w : tensor<1x8x8x8xf32>, tensor<2x2xf32>) outs(%acc : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// GlobalAveragePool's sum over H and W reads the NHWC source directly (the
// kept dims N, C are in the same order there).
// CHECK-LABEL: func.func @global_pool
// CHECK-SAME: (%[[A:.*]]: tensor<1x7x7x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.reduce ins(%[[A]] : tensor<1x7x7x8xf32>) {{.*}} dimensions = [1, 2]
func.func @global_pool(%a: tensor<1x7x7x8xf32>) -> tensor<1x8xf32> {
  %e = tensor.empty() : tensor<1x8x7x7xf32>
  %ta = linalg.transpose ins(%a : tensor<1x7x7x8xf32>) outs(%e : tensor<1x8x7x7xf32>) permutation = [0, 3, 1, 2]
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<1x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %r = linalg.reduce ins(%ta : tensor<1x8x7x7xf32>) outs(%acc : tensor<1x8xf32>) dimensions = [2, 3]
    (%x: f32, %y: f32) {
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  return %r : tensor<1x8xf32>
}

// -----

// A reduction whose kept dims would change order is left alone.
// CHECK-LABEL: func.func @reduce_reordered
// CHECK: linalg.transpose
// CHECK: linalg.reduce ins(%{{.*}} : tensor<4x3x2xf32>) {{.*}} dimensions = [1]
func.func @reduce_reordered(%a: tensor<2x3x4xf32>) -> tensor<4x2xf32> {
  %e = tensor.empty() : tensor<4x3x2xf32>
  %ta = linalg.transpose ins(%a : tensor<2x3x4xf32>) outs(%e : tensor<4x3x2xf32>) permutation = [2, 1, 0]
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<4x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.reduce ins(%ta : tensor<4x3x2xf32>) outs(%acc : tensor<4x2xf32>) dimensions = [1]
    (%x: f32, %y: f32) {
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4x2xf32>
}

// -----

// Concat along channels of two NHWC results: concatenated in NHWC (the
// channel offset moves to the last dim), one transpose after it.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.*]]: tensor<1x4x4x8xf32>, %[[B:.*]]: tensor<1x4x4x8xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x4x4x16xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1]
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, 0, 0, 8] [1, 4, 4, 8] [1, 1, 1, 1]
// CHECK: linalg.transpose ins(%[[I1]] : tensor<1x4x4x16xf32>) {{.*}} permutation = [0, 3, 1, 2]
func.func @concat(%a: tensor<1x4x4x8xf32>, %b: tensor<1x4x4x8xf32>) -> tensor<1x16x4x4xf32> {
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %ta = linalg.transpose ins(%a : tensor<1x4x4x8xf32>) outs(%e : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
  %tb = linalg.transpose ins(%b : tensor<1x4x4x8xf32>) outs(%e : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
  %c = tensor.empty() : tensor<1x16x4x4xf32>
  %0 = tensor.insert_slice %ta into %c[0, 0, 0, 0] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x8x4x4xf32> into tensor<1x16x4x4xf32>
  %1 = tensor.insert_slice %tb into %0[0, 8, 0, 0] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x8x4x4xf32> into tensor<1x16x4x4xf32>
  return %1 : tensor<1x16x4x4xf32>
}

// -----

// A Concat with one piece in NCHW stays.
// CHECK-LABEL: func.func @concat_mixed
// CHECK: linalg.transpose
// CHECK: tensor.insert_slice {{.*}} into tensor<1x16x4x4xf32>
// CHECK: tensor.insert_slice {{.*}} into tensor<1x16x4x4xf32>
// CHECK-NOT: linalg.transpose
func.func @concat_mixed(%a: tensor<1x4x4x8xf32>, %b: tensor<1x8x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %ta = linalg.transpose ins(%a : tensor<1x4x4x8xf32>) outs(%e : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
  %c = tensor.empty() : tensor<1x16x4x4xf32>
  %0 = tensor.insert_slice %ta into %c[0, 0, 0, 0] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x8x4x4xf32> into tensor<1x16x4x4xf32>
  %1 = tensor.insert_slice %b into %0[0, 8, 0, 0] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x8x4x4xf32> into tensor<1x16x4x4xf32>
  return %1 : tensor<1x16x4x4xf32>
}

// -----

// The pad of a conv's input stays after the input transpose (the transpose
// then writes the padded interior).
// CHECK-LABEL: func.func @conv_input_pad
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x6x6xf32>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]]
// CHECK: tensor.pad %[[T]] low[0, 1, 1, 0] high[0, 1, 1, 0]
func.func @conv_input_pad(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x8x8xf32> {
  %e = tensor.empty() : tensor<1x6x6x8xf32>
  %t = linalg.transpose ins(%x : tensor<1x8x6x6xf32>) outs(%e : tensor<1x6x6x8xf32>) permutation = [0, 2, 3, 1]
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %t low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x6x6x8xf32> to tensor<1x8x8x8xf32>
  return %p : tensor<1x8x8x8xf32>
}
