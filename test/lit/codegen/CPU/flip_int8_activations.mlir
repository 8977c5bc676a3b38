// RUN: kiln-opt %s --split-input-file --kiln-flip-int8-activations | FileCheck %s

// A conv reading u8 activations through convert-onnx-to-linalg's sign flip,
// a transpose and a pad (zero point 3 - 128 = -125 in the signed range):
// the flip goes, the pad pads with the unsigned zero point 3, the conv is
// marked.
// CHECK-LABEL: func.func @conv_through_transpose_and_pad
// CHECK-NOT: arith.xori
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg0
// CHECK: tensor.pad %[[T]]
// CHECK: %[[C:.*]] = arith.constant 3 : i8
// CHECK: tensor.yield %[[C]]
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}}kiln.int8_flipped_lhs
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @conv_through_transpose_and_pad(%x: tensor<1x4x5x5xi8>, %w: tensor<3x3x4x8xi8>) -> tensor<1x5x5x8xi32> {
  %e = tensor.empty() : tensor<1x4x5x5xi8>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x5x5xi8>) outs(%e : tensor<1x4x5x5xi8>) {
  ^bb0(%in: i8, %out: i8):
    %c = arith.constant -128 : i8
    %r = arith.xori %in, %c : i8
    linalg.yield %r : i8
  } -> tensor<1x4x5x5xi8>
  %e2 = tensor.empty() : tensor<1x5x5x4xi8>
  %t = linalg.transpose ins(%s : tensor<1x4x5x5xi8>) outs(%e2 : tensor<1x5x5x4xi8>) permutation = [0, 2, 3, 1]
  %zp = arith.constant -125 : i8
  %p = tensor.pad %t low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zp : i8
  } : tensor<1x5x5x4xi8> to tensor<1x7x7x4xi8>
  %z = arith.constant 0 : i32
  %o = tensor.empty() : tensor<1x5x5x8xi32>
  %f = linalg.fill ins(%z : i32) outs(%o : tensor<1x5x5x8xi32>) -> tensor<1x5x5x8xi32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x7x7x4xi8>, tensor<3x3x4x8xi8>) outs(%f : tensor<1x5x5x8xi32>) -> tensor<1x5x5x8xi32>
  return %y : tensor<1x5x5x8xi32>
}

// -----

// A matmul through a reshape (MatMulInteger's [2, 3, 8] -> [6, 8]).
// CHECK-LABEL: func.func @matmul_through_reshape
// CHECK-NOT: arith.xori
// CHECK: tensor.collapse_shape %arg0
// CHECK: linalg.matmul {kiln.int8_flipped_lhs}
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @matmul_through_reshape(%a: tensor<2x3x8xi8>, %b: tensor<8x16xi8>) -> tensor<6x16xi32> {
  %e = tensor.empty() : tensor<2x3x8xi8>
  %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<2x3x8xi8>) outs(%e : tensor<2x3x8xi8>) {
  ^bb0(%in: i8, %out: i8):
    %c = arith.constant -128 : i8
    %r = arith.xori %c, %in : i8
    linalg.yield %r : i8
  } -> tensor<2x3x8xi8>
  %r = tensor.collapse_shape %s [[0, 1], [2]] : tensor<2x3x8xi8> into tensor<6x8xi8>
  %z = arith.constant 0 : i32
  %o = tensor.empty() : tensor<6x16xi32>
  %f = linalg.fill ins(%z : i32) outs(%o : tensor<6x16xi32>) -> tensor<6x16xi32>
  %y = linalg.matmul ins(%r, %b : tensor<6x8xi8>, tensor<8x16xi8>) outs(%f : tensor<6x16xi32>) -> tensor<6x16xi32>
  return %y : tensor<6x16xi32>
}

// -----

// Left as it is: the flipped tensor has another reader (the flip stays for
// it), and a flip by another constant is no sign flip.
// CHECK-LABEL: func.func @kept
// CHECK: arith.xori
// CHECK: arith.xori
// CHECK-NOT: kiln.int8_flipped_lhs
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @kept(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>) -> (tensor<4x16xi32>, tensor<4x8xi8>, tensor<4x16xi32>) {
  %e = tensor.empty() : tensor<4x8xi8>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xi8>) outs(%e : tensor<4x8xi8>) {
  ^bb0(%in: i8, %out: i8):
    %c = arith.constant -128 : i8
    %r = arith.xori %in, %c : i8
    linalg.yield %r : i8
  } -> tensor<4x8xi8>
  %s2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xi8>) outs(%e : tensor<4x8xi8>) {
  ^bb0(%in: i8, %out: i8):
    %c = arith.constant 64 : i8
    %r = arith.xori %in, %c : i8
    linalg.yield %r : i8
  } -> tensor<4x8xi8>
  %z = arith.constant 0 : i32
  %o = tensor.empty() : tensor<4x16xi32>
  %f = linalg.fill ins(%z : i32) outs(%o : tensor<4x16xi32>) -> tensor<4x16xi32>
  %y = linalg.matmul ins(%s, %b : tensor<4x8xi8>, tensor<8x16xi8>) outs(%f : tensor<4x16xi32>) -> tensor<4x16xi32>
  %y2 = linalg.matmul ins(%s2, %b : tensor<4x8xi8>, tensor<8x16xi8>) outs(%f : tensor<4x16xi32>) -> tensor<4x16xi32>
  return %y, %s, %y2 : tensor<4x16xi32>, tensor<4x8xi8>, tensor<4x16xi32>
}
