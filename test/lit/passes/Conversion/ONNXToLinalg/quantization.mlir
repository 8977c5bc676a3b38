// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// MatMulInteger (u8 activations, constant zero point 130, symmetric s8 weights):
// the activations' sign bit flipped (u8 - 128 as i8), an i8 x i8 -> i32
// linalg.matmul, then - (130 - 128) * sum_k w per column as a constant.
// CHECK-LABEL: func.func @matmul_integer
// CHECK: linalg.generic
// CHECK: arith.xori %{{.*}}, %c-128_i8 : i8
// CHECK: %[[P:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x3xi8>, tensor<3x2xi8>) outs(%{{.*}} : tensor<4x2xi32>)
// CHECK: %[[COL:.*]] = arith.constant dense<[-6, -12]> : tensor<2xi32>
// CHECK: linalg.generic {{.*}} ins(%[[P]], %[[COL]] : tensor<4x2xi32>, tensor<2xi32>)
// CHECK: arith.addi
func.func @matmul_integer(%a: tensor<4x3xui8>) -> tensor<4x2xi32> {
  %w = onnx.Constant {value = dense<[[1, 2], [1, 2], [1, 2]]> : tensor<3x2xi8>} : () -> tensor<3x2xi8>
  %az = onnx.Constant {value = dense<130> : tensor<ui8>} : () -> tensor<ui8>
  %none = onnx.NoValue : () -> none
  %0 = onnx.MatMulInteger %a, %w, %az, %none : (tensor<4x3xui8>, tensor<3x2xi8>, tensor<ui8>, none) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// -----

// A runtime zero point (quantize_dynamic's DynamicQuantizeLinear): the column
// sums times it, subtracted.
// CHECK-LABEL: func.func @matmul_integer_dynamic
// CHECK: tensor.extract %{{.*}}[] : tensor<i8>
// CHECK: arith.extui
// CHECK: linalg.matmul
// CHECK: arith.muli
// CHECK: arith.subi
func.func @matmul_integer_dynamic(%a: tensor<1x4x3xui8>, %az: tensor<ui8>) -> tensor<1x4x2xi32> {
  %w = onnx.Constant {value = dense<[[1, 2], [1, 2], [1, 2]]> : tensor<3x2xi8>} : () -> tensor<3x2xi8>
  %none = onnx.NoValue : () -> none
  %0 = onnx.MatMulInteger %a, %w, %az, %none : (tensor<1x4x3xui8>, tensor<3x2xi8>, tensor<ui8>, none) -> tensor<1x4x2xi32>
  return %0 : tensor<1x4x2xi32>
}

// -----

// ConvInteger (s8 activations, zero point -3): NHWC, padded with the zero point
// itself (those taps cancel with the correction), the 2 channels padded to 4 (the
// filters with zeros) for the 4-way dot product, filters HWCF at compile time.
// CHECK-LABEL: func.func @conv_integer
// CHECK: tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 2]
// CHECK: tensor.yield %c-3_i8 : i8
// CHECK: arith.constant dense{{.*}} : tensor<3x3x4x4xi8>
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x6x6x4xi8>, tensor<3x3x4x4xi8>) outs(%{{.*}} : tensor<1x4x4x4xi32>)
// CHECK: arith.constant dense<54> : tensor<4xi32>
// CHECK: linalg.transpose
func.func @conv_integer(%x: tensor<1x2x4x4xi8>) -> tensor<1x4x4x4xi32> {
  %w = onnx.Constant {value = dense<1> : tensor<4x2x3x3xi8>} : () -> tensor<4x2x3x3xi8>
  %xz = onnx.Constant {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %none = onnx.NoValue : () -> none
  %0 = onnx.ConvInteger %x, %w, %xz, %none {pads = [1, 1, 1, 1]} : (tensor<1x2x4x4xi8>, tensor<4x2x3x3xi8>, tensor<i8>, none) -> tensor<1x4x4x4xi32>
  return %0 : tensor<1x4x4x4xi32>
}

// -----

// Asymmetric u8 weights whose centered values w - w_zp fit in s8: centered at
// compile time into the i8 operand.
// CHECK-LABEL: func.func @matmul_integer_u8_weights
// CHECK: %[[W:.*]] = arith.constant dense<{{\[\[}}2, -8], [0, 12]]> : tensor<2x2xi8>
// CHECK: linalg.matmul ins(%{{.*}}, %[[W]] : tensor<3x2xi8>, tensor<2x2xi8>)
func.func @matmul_integer_u8_weights(%a: tensor<3x2xi8>) -> tensor<3x2xi32> {
  %w = onnx.Constant {value = dense<[[130, 120], [128, 140]]> : tensor<2x2xui8>} : () -> tensor<2x2xui8>
  %wz = onnx.Constant {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %none = onnx.NoValue : () -> none
  %0 = onnx.MatMulInteger %a, %w, %none, %wz : (tensor<3x2xi8>, tensor<2x2xui8>, none, tensor<ui8>) -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}

// -----

// Depthwise ConvInteger (u8 activations, zero point 130, i.e. 2 once signed):
// the channels are the lanes (not padded), the input padded with the zero point,
// filters [C, 1, KH, KW] -> HWC bytes at compile time, the product
// linalg.depthwise_conv_2d_nhwc_hwc of i8 into i32, then - zp * (sum of each
// channel's taps): [1*9, 2*9, 3*9] * -2.
// CHECK-LABEL: func.func @conv_integer_depthwise
// CHECK: arith.xori %{{.*}}, %c-128_i8 : i8
// CHECK: tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: tensor.yield %c2_i8 : i8
// CHECK: %[[W:.*]] = arith.constant dense<{{\[\[\[}}1, 2, 3]{{.*}}> : tensor<3x3x3xi8>
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%{{.*}}, %[[W]] : tensor<1x6x6x3xi8>, tensor<3x3x3xi8>) outs(%{{.*}} : tensor<1x2x2x3xi32>)
// CHECK: arith.constant dense<[-18, -36, -54]> : tensor<3xi32>
// CHECK: linalg.transpose
func.func @conv_integer_depthwise(%x: tensor<1x3x4x4xui8>) -> tensor<1x3x2x2xi32> {
  %w = onnx.Constant {value = dense<[[[[1, 1, 1], [1, 1, 1], [1, 1, 1]]], [[[2, 2, 2], [2, 2, 2], [2, 2, 2]]], [[[3, 3, 3], [3, 3, 3], [3, 3, 3]]]]> : tensor<3x1x3x3xi8>} : () -> tensor<3x1x3x3xi8>
  %xz = onnx.Constant {value = dense<130> : tensor<ui8>} : () -> tensor<ui8>
  %none = onnx.NoValue : () -> none
  %0 = onnx.ConvInteger %x, %w, %xz, %none {group = 3 : i64, pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x4x4xui8>, tensor<3x1x3x3xi8>, tensor<ui8>, none) -> tensor<1x3x2x2xi32>
  return %0 : tensor<1x3x2x2xi32>
}
