// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s
// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file -canonicalize \
// RUN:   -one-shot-bufferize=bufferize-function-boundaries > /dev/null

// Conv -> channels-last linalg convolutions (what codegen/CPU tiles and
// vectorizes), accumulators zero-filled, bias in a following generic.

// NCHW -> NHWC, zero pad, constant OIHW weights re-laid out to HWIO at
// compile time, conv_2d_nhwc_hwcf, bias generic, back to NCHW.
// CHECK-LABEL: func.func @conv_const_weights_bias_pads
// CHECK-SAME:    %[[X:.*]]: tensor<1x3x8x8xf32>, %[[BIAS:.*]]: tensor<4xf32>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<1x3x8x8xf32>) outs(%{{.*}} : tensor<1x8x8x3xf32>) permutation = [0, 2, 3, 1]
// CHECK:         %[[XP:.*]] = tensor.pad %[[XT]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:           tensor.yield %[[ZERO]]
// CHECK:         %[[W:.*]] = arith.constant dense<1.000000e+00> : tensor<3x3x3x4xf32>
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x4x4x4xf32>)
// CHECK:         %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[XP]], %[[W]] : tensor<1x10x10x3xf32>, tensor<3x3x3x4xf32>) outs(%[[ACC]] : tensor<1x4x4x4xf32>)
// CHECK:         %[[B:.*]] = linalg.generic {{.*}} ins(%[[CONV]], %[[BIAS]] : tensor<1x4x4x4xf32>, tensor<4xf32>)
// CHECK:           arith.addf
// CHECK:         %[[Y:.*]] = linalg.transpose ins(%[[B]] : tensor<1x4x4x4xf32>) outs(%{{.*}} : tensor<1x4x4x4xf32>) permutation = [0, 3, 1, 2]
// CHECK:         return %[[Y]]
func.func @conv_const_weights_bias_pads(%x: tensor<1x3x8x8xf32>, %bias: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<4x3x3x3xf32>}> : () -> tensor<4x3x3x3xf32>
  %0 = "onnx.Conv"(%x, %w, %bias) <{pads = [1, 1, 1, 1], strides = [2, 2]}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @conv_runtime_weights
// CHECK-SAME:    %[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>
// CHECK:         %[[XT:.*]] = linalg.transpose ins(%[[X]] : {{.*}}) permutation = [0, 2, 3, 1]
// CHECK-NOT:     tensor.pad
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<4x3x3x3xf32>) outs(%{{.*}} : tensor<3x3x3x4xf32>) permutation = [2, 3, 1, 0]
// CHECK:         %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[XT]], %[[WT]] : tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>)
// CHECK:         linalg.transpose ins(%[[CONV]] : tensor<1x6x6x4xf32>) outs(%{{.*}} : tensor<1x4x6x6xf32>) permutation = [0, 3, 1, 2]
func.func @conv_runtime_weights(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %none) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// CHECK-LABEL: func.func @conv_depthwise_same
// CHECK:         %[[XP:.*]] = tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:         %[[W3:.*]] = tensor.collapse_shape %{{.*}} {{.*}} : tensor<8x1x3x3xf32> into tensor<8x3x3xf32>
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%[[W3]] : tensor<8x3x3xf32>) outs(%{{.*}} : tensor<3x3x8xf32>) permutation = [1, 2, 0]
// CHECK:         linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%[[XP]], %[[WT]] : tensor<1x7x7x8xf32>, tensor<3x3x8xf32>) outs(%{{.*}} : tensor<1x5x5x8xf32>)
func.func @conv_depthwise_same(%x: tensor<1x8x5x5xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x5x5xf32> {
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %none) <{auto_pad = "SAME_UPPER", group = 8 : i64}> : (tensor<1x8x5x5xf32>, tensor<8x1x3x3xf32>, none) -> tensor<1x8x5x5xf32>
  return %0 : tensor<1x8x5x5xf32>
}

// -----

// Other groups: channels-last too, the input viewed as NHWGC, the filters
// as GFHWC, linalg.conv_2d_nhwgc_gfhwc, the NHWGF result viewed as NHWC.
// CHECK-LABEL: func.func @conv_grouped
// CHECK:         %[[XT:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x4x6x6xf32>) outs(%{{.*}} : tensor<1x6x6x4xf32>) permutation = [0, 2, 3, 1]
// CHECK:         %[[X:.*]] = tensor.expand_shape %[[XT]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 6, 6, 2, 2]
// CHECK:         %[[W5:.*]] = tensor.expand_shape %{{.*}} into tensor<2x3x2x3x3xf32>
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%[[W5]] : {{.*}}) outs(%{{.*}} : tensor<2x3x3x3x2xf32>) permutation = [0, 1, 3, 4, 2]
// CHECK:         %[[CONV:.*]] = linalg.conv_2d_nhwgc_gfhwc {{.*}} ins(%[[X]], %[[WT]] : {{.*}}) outs(%{{.*}} : tensor<1x4x4x2x3xf32>)
// CHECK:         %[[Y:.*]] = tensor.collapse_shape %[[CONV]] {{.*}} into tensor<1x4x4x6xf32>
// CHECK:         %[[B:.*]] = linalg.generic {{.*}} ins(%[[Y]], %{{.*}} : tensor<1x4x4x6xf32>, tensor<6xf32>)
// CHECK:         linalg.transpose ins(%[[B]] : tensor<1x4x4x6xf32>) outs(%{{.*}} : tensor<1x6x4x4xf32>) permutation = [0, 3, 1, 2]
func.func @conv_grouped(%x: tensor<1x4x6x6xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x4x4xf32> {
  %0 = "onnx.Conv"(%x, %w, %b) <{group = 2 : i64}> : (tensor<1x4x6x6xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  return %0 : tensor<1x6x4x4xf32>
}

// -----

// A 1-D conv runs as 2-D with a unit height.
// CHECK-LABEL: func.func @conv_1d_dilated
// CHECK:         tensor.expand_shape %{{.*}} into tensor<2x3x1x10xf32>
// CHECK:         linalg.conv_2d_nhwc_hwcf {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} {{.*}} -> tensor<2x1x6x5xf32>
// CHECK:         tensor.collapse_shape %{{.*}} into tensor<2x5x6xf32>
func.func @conv_1d_dilated(%x: tensor<2x3x10xf32>, %w: tensor<5x3x3xf32>) -> tensor<2x5x6xf32> {
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %none) <{dilations = [2]}> : (tensor<2x3x10xf32>, tensor<5x3x3xf32>, none) -> tensor<2x5x6xf32>
  return %0 : tensor<2x5x6xf32>
}

// -----

// Filters with no elements (no input channels) are not relaid out at compile time: no
// empty constant is made.
// CHECK-LABEL: func.func @conv_no_input_channels
// CHECK-NOT:     kiln_transposed
// CHECK:         linalg.conv_2d_nhwc_hwcf
func.func @conv_no_input_channels(%x: tensor<1x0x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %none = "onnx.NoValue"() : () -> none
  %w = "onnx.Constant"() {value = dense<> : tensor<2x0x3x3xf32>} : () -> tensor<2x0x3x3xf32>
  %0 = "onnx.Conv"(%x, %w, %none) : (tensor<1x0x4x4xf32>, tensor<2x0x3x3xf32>, none) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}
