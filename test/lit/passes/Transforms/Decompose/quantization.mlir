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

// MatMulInteger: an int32 MatMul of the zero-point-centered operands (no limit on K).
// CHECK-LABEL: func.func @matmul_integer
// CHECK-NOT: onnx.MatMulInteger
// CHECK: %[[A:.*]] = onnx.Cast %arg0 {to = 6 : i64} : (tensor<2x768xui8>) -> tensor<2x768xi32>
// CHECK: %[[AZ:.*]] = onnx.Cast %arg2 {to = 6 : i64} : (tensor<ui8>) -> tensor<i32>
// CHECK: %[[AC:.*]] = onnx.Sub %[[A]], %[[AZ]]
// CHECK: %[[B:.*]] = onnx.Cast %arg1 {to = 6 : i64} : (tensor<768x4xi8>) -> tensor<768x4xi32>
// CHECK: onnx.MatMul %[[AC]], %[[B]] : (tensor<2x768xi32>, tensor<768x4xi32>) -> tensor<2x4xi32>
func.func @matmul_integer(%a: tensor<2x768xui8>, %b: tensor<768x4xi8>, %az: tensor<ui8>) -> tensor<2x4xi32> {
  %none = onnx.NoValue : () -> none
  %0 = onnx.MatMulInteger %a, %b, %az, %none : (tensor<2x768xui8>, tensor<768x4xi8>, tensor<ui8>, none) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----

// Per-column b_zero_point: broadcast along B's last axis.
// CHECK-LABEL: func.func @matmul_integer_per_column
// CHECK: %[[BZ:.*]] = onnx.Reshape %arg2, {{.*}} -> tensor<1x4xi8>
// CHECK: %[[BZI:.*]] = onnx.Cast %[[BZ]] {to = 6 : i64} : (tensor<1x4xi8>) -> tensor<1x4xi32>
// CHECK: onnx.Sub {{.*}}, %[[BZI]] : (tensor<3x4xi32>, tensor<1x4xi32>) -> tensor<3x4xi32>
func.func @matmul_integer_per_column(%a: tensor<2x3xi8>, %b: tensor<3x4xi8>, %bz: tensor<4xi8>) -> tensor<2x4xi32> {
  %none = onnx.NoValue : () -> none
  %0 = onnx.MatMulInteger %a, %b, %none, %bz : (tensor<2x3xi8>, tensor<3x4xi8>, none, tensor<4xi8>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----

// QLinearMatMul: the int32 product, requantized as onnxruntime does: float(acc) times
// (a_scale * b_scale) / y_scale, rounded half to even, plus y_zero_point, saturated.
// CHECK-LABEL: func.func @qlinear_matmul
// CHECK-NOT: onnx.QLinearMatMul
// CHECK: %[[ACC:.*]] = onnx.MatMul {{.*}} -> tensor<2x4xi32>
// CHECK: %[[AB:.*]] = onnx.Mul %arg1, %arg4
// CHECK: %[[F:.*]] = onnx.Div %[[AB]], %arg6
// CHECK: %[[ACCF:.*]] = onnx.Cast %[[ACC]] {to = 1 : i64} : (tensor<2x4xi32>) -> tensor<2x4xf32>
// CHECK: %[[V:.*]] = onnx.Mul %[[ACCF]], %[[F]]
// CHECK: %[[R:.*]] = onnx.Round %[[V]]
// CHECK: onnx.Add %[[R]]
// CHECK: onnx.Constant {{.*}}dense<0.000000e+00> : tensor<f32>
// CHECK: onnx.Constant {{.*}}dense<2.550000e+02> : tensor<f32>
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

// ConvInteger / QLinearConv: an int32 Conv with the op's attributes; constant weights
// are centered at compile time (w_zero_point per output channel), the int32 bias is
// added before the requantization.
// CHECK-LABEL: func.func @conv_integer
// CHECK-NOT: onnx.ConvInteger
// CHECK: onnx.Conv {{.*}}pads = [1, 1, 1, 1]{{.*}} -> tensor<1x2x4x4xi32>
// CHECK-LABEL: func.func @qlinear_conv
// CHECK-NOT: onnx.QLinearConv
// CHECK: %[[W:.*]] = onnx.Constant {{.*}}dense<{{\[\[\[\[}}-1, 0, 1{{.*}}-4, -2, 0{{.*}}> : tensor<2x1x1x3xi32>
// CHECK: %[[ACC:.*]] = onnx.Conv {{.*}}, %[[W]], {{.*}} -> tensor<1x2x4x4xi32>
// CHECK: onnx.Add %[[ACC]], {{.*}} : (tensor<1x2x4x4xi32>, tensor<1x2x1x1xi32>) -> tensor<1x2x4x4xi32>
// CHECK: onnx.Cast {{.*}} {to = 2 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xui8>
func.func @conv_integer(%x: tensor<1x1x4x4xui8>, %w: tensor<2x1x3x3xui8>) -> tensor<1x2x4x4xi32> {
  %none = onnx.NoValue : () -> none
  %0 = onnx.ConvInteger %x, %w, %none, %none {pads = [1, 1, 1, 1]} : (tensor<1x1x4x4xui8>, tensor<2x1x3x3xui8>, none, none) -> tensor<1x2x4x4xi32>
  return %0 : tensor<1x2x4x4xi32>
}
func.func @qlinear_conv(%x: tensor<1x1x4x4xui8>, %xs: tensor<f32>, %xz: tensor<ui8>,
                        %ws: tensor<2xf32>,
                        %ys: tensor<f32>, %yz: tensor<ui8>, %b: tensor<2xi32>) -> tensor<1x2x4x4xui8> {
  %w = onnx.Constant {value = dense<[[[[1, 2, 3]]], [[[0, 2, 4]]]]> : tensor<2x1x1x3xi8>} : () -> tensor<2x1x1x3xi8>
  %wz = onnx.Constant {value = dense<[2, 4]> : tensor<2xi8>} : () -> tensor<2xi8>
  %0 = onnx.QLinearConv %x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b {pads = [0, 1, 0, 1]} : (tensor<1x1x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<2x1x1x3xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<ui8>, tensor<2xi32>) -> tensor<1x2x4x4xui8>
  return %0 : tensor<1x2x4x4xui8>
}

// -----

// No output channels: an empty output, as ONNX defines it.
// CHECK-LABEL: func.func @conv_integer_no_output_channels
// CHECK-NOT: onnx.ConvInteger
// CHECK: onnx.Conv {{.*}} -> tensor<1x0x2x2xi32>
func.func @conv_integer_no_output_channels(%x: tensor<1x1x4x4xui8>, %w: tensor<0x1x3x3xui8>) -> tensor<1x0x2x2xi32> {
  %none = onnx.NoValue : () -> none
  %0 = onnx.ConvInteger %x, %w, %none, %none : (tensor<1x1x4x4xui8>, tensor<0x1x3x3xui8>, none, none) -> tensor<1x0x2x2xi32>
  return %0 : tensor<1x0x2x2xi32>
}

// -----

// DynamicQuantizeLinear: the spec's function body (range widened to include 0).
// CHECK-LABEL: func.func @dynamic_quantize
// CHECK-NOT: onnx.DynamicQuantizeLinear
// CHECK: onnx.ReduceMin
// CHECK: onnx.ReduceMax
// CHECK: onnx.Round
// CHECK: onnx.Cast {{.*}} {to = 2 : i64} : (tensor<f32>) -> tensor<ui8>
// CHECK: onnx.Cast {{.*}} {to = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xui8>
func.func @dynamic_quantize(%x: tensor<2x3xf32>) -> (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) {
  %y, %s, %z = onnx.DynamicQuantizeLinear %x : (tensor<2x3xf32>) -> (tensor<2x3xui8>, tensor<f32>, tensor<ui8>)
  return %y, %s, %z : tensor<2x3xui8>, tensor<f32>, tensor<ui8>
}

// -----

// Kept for the 8-bit kernels: per-tensor activations and constant weights whose
// centered values fit in s8 (u8 weights with zero point 128 here); not when they
// do not (zero point 7: 255 - 7 > 127).
// CHECK-LABEL: func.func @matmul_integer_kept
// CHECK: onnx.MatMulInteger
// CHECK-LABEL: func.func @matmul_integer_not_kept
// CHECK-NOT: onnx.MatMulInteger
// CHECK: onnx.MatMul {{.*}} -> tensor<3x2xi32>
func.func @matmul_integer_kept(%a: tensor<3x2xui8>) -> tensor<3x2xi32> {
  %w = onnx.Constant {value = dense<[[130, 0], [255, 140]]> : tensor<2x2xui8>} : () -> tensor<2x2xui8>
  %wz = onnx.Constant {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %none = onnx.NoValue : () -> none
  %0 = onnx.MatMulInteger %a, %w, %none, %wz : (tensor<3x2xui8>, tensor<2x2xui8>, none, tensor<ui8>) -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}
func.func @matmul_integer_not_kept(%a: tensor<3x2xui8>) -> tensor<3x2xi32> {
  %w = onnx.Constant {value = dense<[[130, 0], [255, 140]]> : tensor<2x2xui8>} : () -> tensor<2x2xui8>
  %wz = onnx.Constant {value = dense<7> : tensor<ui8>} : () -> tensor<ui8>
  %none = onnx.NoValue : () -> none
  %0 = onnx.MatMulInteger %a, %w, %none, %wz : (tensor<3x2xui8>, tensor<2x2xui8>, none, tensor<ui8>) -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}

// -----

// A depthwise ConvInteger (group = channels, one filter each) with constant s8
// weights and a constant zero point stays for the 8-bit depthwise kernel; a
// grouped one (2 channels per group) becomes the int32 centered Conv.
// CHECK-LABEL: func.func @conv_integer_depthwise
// CHECK: onnx.ConvInteger {{.*}}group = 3 : i64{{.*}} -> tensor<1x3x4x4xi32>
// CHECK-LABEL: func.func @conv_integer_grouped
// CHECK-NOT: onnx.ConvInteger
// CHECK: onnx.Conv {{.*}}group = 2 : i64{{.*}} -> tensor<1x4x4x4xi32>
func.func @conv_integer_depthwise(%x: tensor<1x3x4x4xui8>) -> tensor<1x3x4x4xi32> {
  %w = onnx.Constant {value = dense<5> : tensor<3x1x3x3xi8>} : () -> tensor<3x1x3x3xi8>
  %xz = onnx.Constant {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %none = onnx.NoValue : () -> none
  %0 = onnx.ConvInteger %x, %w, %xz, %none {group = 3 : i64, pads = [1, 1, 1, 1]} : (tensor<1x3x4x4xui8>, tensor<3x1x3x3xi8>, tensor<ui8>, none) -> tensor<1x3x4x4xi32>
  return %0 : tensor<1x3x4x4xi32>
}
func.func @conv_integer_grouped(%x: tensor<1x4x4x4xui8>) -> tensor<1x4x4x4xi32> {
  %w = onnx.Constant {value = dense<5> : tensor<4x2x3x3xi8>} : () -> tensor<4x2x3x3xi8>
  %xz = onnx.Constant {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %none = onnx.NoValue : () -> none
  %0 = onnx.ConvInteger %x, %w, %xz, %none {group = 2 : i64, pads = [1, 1, 1, 1]} : (tensor<1x4x4x4xui8>, tensor<4x2x3x3xi8>, tensor<ui8>, none) -> tensor<1x4x4x4xi32>
  return %0 : tensor<1x4x4x4xi32>
}
