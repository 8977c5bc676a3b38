// RUN: kiln-opt %s -split-input-file -kiln-decompose-pads | FileCheck %s

// Conv + bias + ReLU, padded for the next conv: only the border strips
// (top/bottom rows, then left/right columns of the interior rows) are filled,
// and the epilogue generic writes the interior of the padded tensor, whose
// slice is created before the conv and its fill (so that after bufferization
// the kernel still directly precedes its epilogue).
// CHECK-LABEL: func.func @conv_relu_pad
// CHECK-NOT: tensor.pad
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x10x10x16xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[E]][0, 0, 0, 0] [1, 1, 10, 16] [1, 1, 1, 1]
// CHECK: %[[F0:.*]] = linalg.fill {{.*}} outs(%[[S0]] : tensor<1x1x10x16xf32>)
// CHECK: %[[P0:.*]] = tensor.insert_slice %[[F0]] into %[[E]][0, 0, 0, 0] [1, 1, 10, 16]
// CHECK: tensor.extract_slice %[[P0]][0, 9, 0, 0] [1, 1, 10, 16]
// CHECK: tensor.extract_slice %{{.*}}[0, 1, 0, 0] [1, 8, 1, 16]
// CHECK: tensor.extract_slice %{{.*}}[0, 1, 9, 0] [1, 8, 1, 16]
// CHECK: %[[P3:.*]] = tensor.insert_slice %{{.*}}[0, 1, 9, 0] [1, 8, 1, 16]
// CHECK: %[[IN:.*]] = tensor.extract_slice %[[P3]][0, 1, 1, 0] [1, 8, 8, 16] [1, 1, 1, 1] : tensor<1x10x10x16xf32> to tensor<1x8x8x16xf32>
// CHECK: %[[ACC:.*]] = linalg.fill
// CHECK: %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} outs(%[[ACC]]
// CHECK: %[[ACT:.*]] = linalg.generic {{.*}} ins(%[[CONV]], %{{.*}}) outs(%[[IN]] : tensor<1x8x8x16xf32>)
// CHECK: %[[PADDED:.*]] = tensor.insert_slice %[[ACT]] into %[[P3]][0, 1, 1, 0] [1, 8, 8, 16] [1, 1, 1, 1]
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%[[PADDED]],
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @conv_relu_pad(%x: tensor<1x8x8x16xf32>, %w: tensor<1x1x16x16xf32>, %bias: tensor<16xf32>, %w2: tensor<3x3x16xf32>) -> tensor<1x8x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x8x16xf32>, tensor<1x1x16x16xf32>) outs(%acc : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %act = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv, %bias : tensor<1x8x8x16xf32>, tensor<16xf32>) outs(%e : tensor<1x8x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x16xf32>
  %padded = tensor.pad %act low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x8x16xf32> to tensor<1x10x10x16xf32>
  %dw = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w2 : tensor<1x10x10x16xf32>, tensor<3x3x16xf32>) outs(%acc : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  return %dw : tensor<1x8x8x16xf32>
}

// -----

// A source with no producer to redirect (an argument) is copied into the
// interior; only the padded sides are filled (here -inf, a max pool's pad;
// asymmetric, one dim only): one strip of 1 row on top, 2 at the bottom.
// CHECK-LABEL: func.func @pad_argument
// CHECK-NOT: tensor.pad
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x4x8x5xf32>
// CHECK: tensor.extract_slice %[[E]][0, 0, 0, 0] [1, 4, 1, 5]
// CHECK: linalg.fill ins(%[[NEGINF]] : f32)
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 6, 0] [1, 4, 2, 5]
// CHECK: linalg.fill ins(%[[NEGINF]] : f32)
// CHECK-NOT: linalg.fill
// CHECK: %[[R:.*]] = tensor.insert_slice %arg0 into %{{.*}}[0, 0, 1, 0] [1, 4, 5, 5] [1, 1, 1, 1]
// CHECK: return %[[R]]
func.func @pad_argument(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x8x5xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 1, 0] high[0, 0, 2, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x4x5x5xf32> to tensor<1x4x8x5xf32>
  return %p : tensor<1x4x8x5xf32>
}

// -----

// A producer that reads its init (an accumulation) keeps it: its result is
// copied into the interior. A producer with a second padded user: the first
// pad gets it in place, the second copies it.
// CHECK-LABEL: func.func @not_redirected
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} outs(%arg1 : tensor<4x4xf32>)
// CHECK: tensor.insert_slice %[[ACC]] into %{{.*}}[1, 1] [4, 4] [1, 1]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_redirected(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %acc = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%y : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %p = tensor.pad %acc low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x4xf32> to tensor<6x6xf32>
  return %p : tensor<6x6xf32>
}

// CHECK-LABEL: func.func @two_pads
// CHECK: %[[IN:.*]] = tensor.extract_slice %{{.*}}[1, 1] [4, 4] [1, 1] : tensor<6x6xf32> to tensor<4x4xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} outs(%[[IN]] : tensor<4x4xf32>)
// CHECK: tensor.insert_slice %[[R]] into %{{.*}}[1, 1] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<6x6xf32>
// CHECK: tensor.insert_slice %[[R]] into %{{.*}}[2, 2] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<8x8xf32>
func.func @two_pads(%x: tensor<4x4xf32>) -> (tensor<6x6xf32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %p1 = tensor.pad %r low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x4xf32> to tensor<6x6xf32>
  %p2 = tensor.pad %r low[2, 2] high[2, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x4xf32> to tensor<8x8xf32>
  return %p1, %p2 : tensor<6x6xf32>, tensor<8x8xf32>
}
