// RUN: kiln-opt %s -kiln-decompose -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-decompose=keep-ops=QuantizeLinear,DequantizeLinear,QLinearMatMul -split-input-file | FileCheck %s --check-prefix=KEEP

// DequantizeLinear: (x - zero_point) * scale, in the scale's type.
// CHECK-LABEL: func.func @dequantize
// CHECK-NOT: onnx.DequantizeLinear
// CHECK: %[[X:.*]] = onnx.Cast %arg0 {to = 1 : i64} : (tensor<4xui8>) -> tensor<4xf32>
// CHECK: %[[Z:.*]] = onnx.Cast %arg2 {to = 1 : i64} : (tensor<ui8>) -> tensor<f32>
// CHECK: %[[C:.*]] = onnx.Sub %[[X]], %[[Z]]
// CHECK: onnx.Mul %[[C]], %arg1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// KEEP-LABEL: func.func @dequantize
// KEEP: onnx.DequantizeLinear
func.func @dequantize(%x: tensor<4xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4xf32> {
  %0 = onnx.DequantizeLinear %x, %s, %z : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// QuantizeLinear: saturate(round_half_even(x / scale) + zero_point).
// CHECK-LABEL: func.func @quantize
// CHECK-NOT: onnx.QuantizeLinear
// CHECK: onnx.Div %arg0
// CHECK: onnx.Round
// CHECK: onnx.Add
// CHECK: onnx.Constant {{.*}}dense<-1.280000e+02> : tensor<f32>
// CHECK: onnx.Constant {{.*}}dense<1.270000e+02> : tensor<f32>
// CHECK: onnx.Clip
// CHECK: onnx.Cast {{.*}} {to = 3 : i64} : (tensor<4xf32>) -> tensor<4xi8>
// KEEP-LABEL: func.func @quantize
// KEEP: onnx.QuantizeLinear
func.func @quantize(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4xi8> {
  %0 = onnx.QuantizeLinear %x, %s, %z : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// MatMulInteger: a float MatMul of the zero-point-centered operands, cast to int32.
// CHECK-LABEL: func.func @matmul_integer
// CHECK-NOT: onnx.MatMulInteger
// CHECK: %[[A:.*]] = onnx.Cast %arg0 {to = 1 : i64}
// CHECK: %[[B:.*]] = onnx.Cast %arg1 {to = 1 : i64}
// CHECK: %[[M:.*]] = onnx.MatMul %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK: onnx.Cast %[[M]] {to = 6 : i64} : (tensor<2x4xf32>) -> tensor<2x4xi32>
func.func @matmul_integer(%a: tensor<2x3xui8>, %b: tensor<3x4xi8>) -> tensor<2x4xi32> {
  %none = onnx.NoValue : () -> none
  %0 = onnx.MatMulInteger %a, %b, %none, %none : (tensor<2x3xui8>, tensor<3x4xi8>, none, none) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----

// QLinearMatMul: the centered float MatMul scaled by a_scale * b_scale / y_scale, then
// quantized to y_zero_point's type.
// CHECK-LABEL: func.func @qlinear_matmul
// CHECK-NOT: onnx.QLinearMatMul
// CHECK: onnx.MatMul {{.*}} -> tensor<2x4xf32>
// CHECK: onnx.Mul %arg1, %arg4
// CHECK: onnx.Div
// CHECK: onnx.Round
// CHECK: onnx.Clip
// CHECK: onnx.Cast {{.*}} {to = 2 : i64} : (tensor<2x4xf32>) -> tensor<2x4xui8>
// KEEP-LABEL: func.func @qlinear_matmul
// KEEP: onnx.QLinearMatMul
func.func @qlinear_matmul(%a: tensor<2x3xui8>, %as: tensor<f32>, %az: tensor<ui8>,
                          %b: tensor<3x4xui8>, %bs: tensor<f32>, %bz: tensor<ui8>,
                          %ys: tensor<f32>, %yz: tensor<ui8>) -> tensor<2x4xui8> {
  %0 = onnx.QLinearMatMul %a, %as, %az, %b, %bs, %bz, %ys, %yz : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<3x4xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4xui8>
  return %0 : tensor<2x4xui8>
}

// -----

// ConvInteger / QLinearConv: a float Conv with the op's attributes.
// CHECK-LABEL: func.func @conv_integer
// CHECK-NOT: onnx.ConvInteger
// CHECK: onnx.Conv {{.*}}pads = [1, 1, 1, 1]{{.*}} -> tensor<1x2x4x4xf32>
// CHECK: onnx.Cast {{.*}} {to = 6 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xi32>
// CHECK-LABEL: func.func @qlinear_conv
// CHECK-NOT: onnx.QLinearConv
// CHECK: onnx.Conv {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: onnx.Add {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: onnx.Cast {{.*}} {to = 2 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xui8>
func.func @conv_integer(%x: tensor<1x1x4x4xui8>, %w: tensor<2x1x3x3xui8>) -> tensor<1x2x4x4xi32> {
  %none = onnx.NoValue : () -> none
  %0 = onnx.ConvInteger %x, %w, %none, %none {pads = [1, 1, 1, 1]} : (tensor<1x1x4x4xui8>, tensor<2x1x3x3xui8>, none, none) -> tensor<1x2x4x4xi32>
  return %0 : tensor<1x2x4x4xi32>
}
func.func @qlinear_conv(%x: tensor<1x1x4x4xui8>, %xs: tensor<f32>, %xz: tensor<ui8>,
                        %w: tensor<2x1x3x3xui8>, %ws: tensor<f32>, %wz: tensor<ui8>,
                        %ys: tensor<f32>, %yz: tensor<ui8>, %b: tensor<2xi32>) -> tensor<1x2x4x4xui8> {
  %0 = onnx.QLinearConv %x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b {pads = [1, 1, 1, 1]} : (tensor<1x1x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<2x1x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>, tensor<2xi32>) -> tensor<1x2x4x4xui8>
  return %0 : tensor<1x2x4x4xui8>
}

// -----

// No output channels: an empty output, as ONNX defines it (the accumulation check no
// longer divides by the channel count).
// CHECK-LABEL: func.func @conv_integer_no_output_channels
// CHECK-NOT: onnx.ConvInteger
// CHECK: onnx.Conv {{.*}} -> tensor<1x0x2x2xf32>
// CHECK: onnx.Cast {{.*}} -> tensor<1x0x2x2xi32>
func.func @conv_integer_no_output_channels(%x: tensor<1x1x4x4xui8>, %w: tensor<0x1x3x3xui8>) -> tensor<1x0x2x2xi32> {
  %none = onnx.NoValue : () -> none
  %0 = onnx.ConvInteger %x, %w, %none, %none : (tensor<1x1x4x4xui8>, tensor<0x1x3x3xui8>, none, none) -> tensor<1x0x2x2xi32>
  return %0 : tensor<1x0x2x2xi32>
}
