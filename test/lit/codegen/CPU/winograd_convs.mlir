// RUN: kiln-opt %s --kiln-select-kernel-strategy --kiln-winograd-convs --split-input-file | FileCheck %s

// An eligible conv (16x16 output: 64 tiles, 32 -> 32 channels) becomes the
// input transform (one result, loops (n, ty, tx, i, j, c) stored
// position-major [i][j][n][ty][tx][c]; taps read with tensor.extract,
// combined by FMAs with +-1), one batch matmul of V viewed as
// [16][tiles][C] by U = G g G^T ([16][C][F], one constant), and an
// all-parallel output transform over the conv's output reading the products
// at (a, n, y floordiv 2, x floordiv 2, f); the bias generic after it is
// untouched. U at position 0 is g[0][0] (1.0 = 0x3F800000 for an all-ones
// filter); the e2e Winograd cases check every value against onnxruntime.
// CHECK-DAG: #[[VMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d4, d0, d1, d2, d5)>
// CHECK-DAG: #[[M0:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d0, d1 floordiv 2, d2 floordiv 2, d3)>
// CHECK-DAG: #[[M15:.*]] = affine_map<(d0, d1, d2, d3) -> (15, d0, d1 floordiv 2, d2 floordiv 2, d3)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @eligible
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// CHECK: %[[PAD:.*]] = tensor.pad %arg0 low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: %[[V:.*]] = linalg.generic {indexing_maps = [#[[VMAP]]]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME: outs(%{{.*}} : tensor<4x4x1x8x8x32xf32>)
// CHECK-COUNT-2: tensor.extract %[[PAD]]
// CHECK: math.fma
// CHECK-COUNT-2: tensor.extract %[[PAD]]
// CHECK: math.fma
// CHECK-NEXT: math.fma
// CHECK-NEXT: linalg.yield
// CHECK: %[[U:.*]] = arith.constant dense_resource<kiln_winograd> : tensor<16x32x32xf32>
// CHECK: %[[VF:.*]] = tensor.collapse_shape %[[V]] {{\[\[}}0, 1], [2, 3, 4], [5]] : tensor<4x4x1x8x8x32xf32> into tensor<16x64x32xf32>
// CHECK: %[[M:.*]] = linalg.batch_matmul ins(%[[VF]], %[[U]] : tensor<16x64x32xf32>, tensor<16x32x32xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: %[[ME:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0], [1, 2, 3], [4]] {{.*}} into tensor<16x1x8x8x32xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[M0]], {{.*}}, #[[M15]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[ME]], %[[ME]],
// CHECK-SAME: outs(%{{.*}} : tensor<1x16x16x32xf32>)
// CHECK: linalg.index 1
// CHECK: linalg.index 2
// CHECK: arith.select
// CHECK: linalg.generic {{.*}} ins(%[[Y]], %{{.*}} : tensor<1x16x16x32xf32>, tensor<32xf32>)
// CHECK: kiln_winograd: "0x040000000000803F0000803F
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @eligible(%x: tensor<1x16x16x32xf32>, %bias: tensor<32xf32>) -> tensor<1x16x16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<1.0> : tensor<3x3x32x32xf32>
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x16x16x32xf32> to tensor<1x18x18x32xf32>
  %empty = tensor.empty() : tensor<1x16x16x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<1x18x18x32xf32>, tensor<3x3x32x32xf32>) outs(%init : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %out = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv, %bias : tensor<1x16x16x32xf32>, tensor<32xf32>) outs(%empty : tensor<1x16x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x16x16x32xf32>
  return %out : tensor<1x16x16x32xf32>
}

// -----

// Odd output size (15x15: 8x8 tiles): the last tile reads one row and column
// past the conv's zero pad, which grows on its high side instead.
// CHECK-LABEL: func.func @odd_size_grows_pad
// CHECK: %[[PAD:.*]] = tensor.pad %arg0 low[0, 1, 1, 0] high[0, 2, 2, 0]
// CHECK: tensor<1x15x15x32xf32> to tensor<1x18x18x32xf32>
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<4x4x1x8x8x32xf32>)
// CHECK: tensor.extract %[[PAD]]
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<16x64x32xf32>, tensor<16x32x32xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x15x15x32xf32>)
func.func @odd_size_grows_pad(%x: tensor<1x15x15x32xf32>) -> tensor<1x15x15x32xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<0.5> : tensor<3x3x32x32xf32>
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x15x15x32xf32> to tensor<1x17x17x32xf32>
  %empty = tensor.empty() : tensor<1x15x15x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x15x15x32xf32>) -> tensor<1x15x15x32xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<1x17x17x32xf32>, tensor<3x3x32x32xf32>) outs(%init : tensor<1x15x15x32xf32>) -> tensor<1x15x15x32xf32>
  return %conv : tensor<1x15x15x32xf32>
}

// -----

// An unpadded input with an odd output (a "valid" conv, 2 images) is padded
// with zeros on the high side; the products have N * 8 * 8 rows. An init
// that is not a fill is read by the output transform (identity map).
// CHECK-DAG: #[[M0:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d0, d1 floordiv 2, d2 floordiv 2, d3)>
// CHECK-DAG: #[[M15:.*]] = affine_map<(d0, d1, d2, d3) -> (15, d0, d1 floordiv 2, d2 floordiv 2, d3)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @unpadded_batch_init
// CHECK: tensor.pad %arg0 low[0, 0, 0, 0] high[0, 1, 1, 0]
// CHECK: tensor<2x17x17x32xf32> to tensor<2x18x18x32xf32>
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<16x128x32xf32>, tensor<16x32x40xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[M0]], {{.*}}, #[[M15]], #[[ID]], #[[ID]]]
// CHECK-SAME: %arg1 : {{.*}}tensor<2x15x15x40xf32>)
func.func @unpadded_batch_init(%x: tensor<2x17x17x32xf32>, %acc: tensor<2x15x15x40xf32>) -> tensor<2x15x15x40xf32> {
  %w = arith.constant dense<0.25> : tensor<3x3x32x40xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x17x17x32xf32>, tensor<3x3x32x40xf32>) outs(%acc : tensor<2x15x15x40xf32>) -> tensor<2x15x15x40xf32>
  return %conv : tensor<2x15x15x40xf32>
}

// -----

// Left alone: stride 2, dilation 2, weights that are not constant, too few
// channels (C = F = 16: the transforms cost more than the saved multiplies)
// and too few tiles (a 5x5 output: 9 tiles).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: linalg.matmul
// CHECK-COUNT-5: linalg.conv_2d_nhwc_hwcf
// CHECK-NOT: linalg.matmul
func.func @left_alone(%x: tensor<1x18x18x32xf32>, %w: tensor<3x3x32x32xf32>, %s: tensor<1x18x18x16xf32>, %t: tensor<1x7x7x32xf32>) -> (tensor<1x8x8x32xf32>, tensor<1x7x7x32xf32>, tensor<1x16x16x32xf32>, tensor<1x16x16x16xf32>, tensor<1x5x5x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %cw = arith.constant dense<1.0> : tensor<3x3x32x32xf32>
  %cw16 = arith.constant dense<1.0> : tensor<3x3x16x16xf32>
  %e8 = tensor.empty() : tensor<1x8x8x32xf32>
  %i8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  %strided = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %cw : tensor<1x18x18x32xf32>, tensor<3x3x32x32xf32>) outs(%i8 : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  %e7 = tensor.empty() : tensor<1x14x14x32xf32>
  %i7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  %dilated = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %cw : tensor<1x18x18x32xf32>, tensor<3x3x32x32xf32>) outs(%i7 : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  %d = tensor.extract_slice %dilated[0, 0, 0, 0] [1, 7, 7, 32] [1, 2, 2, 1] : tensor<1x14x14x32xf32> to tensor<1x7x7x32xf32>
  %e16 = tensor.empty() : tensor<1x16x16x32xf32>
  %i16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %dynamic = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x18x18x32xf32>, tensor<3x3x32x32xf32>) outs(%i16 : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %es = tensor.empty() : tensor<1x16x16x16xf32>
  %is = linalg.fill ins(%zero : f32) outs(%es : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %small = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%s, %cw16 : tensor<1x18x18x16xf32>, tensor<3x3x16x16xf32>) outs(%is : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %e5 = tensor.empty() : tensor<1x5x5x32xf32>
  %i5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<1x5x5x32xf32>) -> tensor<1x5x5x32xf32>
  %few = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%t, %cw : tensor<1x7x7x32xf32>, tensor<3x3x32x32xf32>) outs(%i5 : tensor<1x5x5x32xf32>) -> tensor<1x5x5x32xf32>
  return %strided, %d, %dynamic, %small, %few : tensor<1x8x8x32xf32>, tensor<1x7x7x32xf32>, tensor<1x16x16x32xf32>, tensor<1x16x16x16xf32>, tensor<1x5x5x32xf32>
}
