// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @constant_dense
// CHECK:         %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK:         return %[[C]]
func.func @constant_dense() -> tensor<2xf32> {
  %0 = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Unsigned constants are retyped to signless with the same bits.
// CHECK-LABEL: func.func @constant_unsigned() -> tensor<2xi8>
// CHECK:         arith.constant dense<[1, -1]> : tensor<2xi8>
func.func @constant_unsigned() -> tensor<2xui8> {
  %0 = "onnx.Constant"() {value = dense<[1, 255]> : tensor<2xui8>} : () -> tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

// Resource blobs keep their handle (weights are never copied inline).
// CHECK-LABEL: func.func @constant_resource
// CHECK:         arith.constant dense_resource<w0> : tensor<2xf32>
// CHECK-LABEL: func.func @constant_resource_unsigned
// CHECK:         arith.constant dense_resource<w1> : tensor<4xi8>
func.func @constant_resource() -> tensor<2xf32> {
  %0 = "onnx.Constant"() {value = dense_resource<w0> : tensor<2xf32>} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @constant_resource_unsigned() -> tensor<4xui8> {
  %0 = "onnx.Constant"() {value = dense_resource<w1> : tensor<4xui8>} : () -> tensor<4xui8>
  return %0 : tensor<4xui8>
}
{-#
  dialect_resources: {
    builtin: {
      w0: "0x040000000000803F00000040",
      w1: "0x0100000001020304"
    }
  }
#-}

// -----

// CHECK-LABEL: func.func @constant_value_ints
// CHECK:         arith.constant dense<[1, 2, 3]> : tensor<3xi64>
// CHECK-LABEL: func.func @constant_value_float
// CHECK:         arith.constant dense<5.000000e-01> : tensor<f32>
func.func @constant_value_ints() -> tensor<3xi64> {
  %0 = "onnx.Constant"() {value_ints = [1, 2, 3]} : () -> tensor<3xi64>
  return %0 : tensor<3xi64>
}
func.func @constant_value_float() -> tensor<f32> {
  %0 = "onnx.Constant"() {value_float = 0.5 : f32} : () -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @identity
// CHECK-SAME:    (%[[A:.*]]: tensor<2xf32>)
// CHECK-NEXT:    return %[[A]]
func.func @identity(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "onnx.Identity"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Inference Dropout forwards its input; a used mask is all true.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME:    (%[[A:.*]]: tensor<2xf32>)
// CHECK:         %[[M:.*]] = arith.constant dense<true> : tensor<2xi1>
// CHECK:         return %[[A]], %[[M]]
func.func @dropout(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xi1>) {
  %none = "onnx.NoValue"() : () -> none
  %0, %1 = "onnx.Dropout"(%a, %none, %none) : (tensor<2xf32>, none, none) -> (tensor<2xf32>, tensor<2xi1>)
  return %0, %1 : tensor<2xf32>, tensor<2xi1>
}

// -----

// CHECK-LABEL: func.func @dropout_no_mask
// CHECK-SAME:    (%[[A:.*]]: tensor<2xf32>)
// CHECK-NOT:     onnx.
// CHECK:         return %[[A]]
func.func @dropout_no_mask(%a: tensor<2xf32>) -> tensor<2xf32> {
  %none = "onnx.NoValue"() : () -> none
  %f = "onnx.Constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %0, %1 = "onnx.Dropout"(%a, %none, %f) : (tensor<2xf32>, none, tensor<i1>) -> (tensor<2xf32>, none)
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @shape_size
// CHECK-DAG:     %[[S:.*]] = arith.constant dense<[3, 4]> : tensor<2xi64>
// CHECK-DAG:     %[[N:.*]] = arith.constant dense<24> : tensor<i64>
// CHECK:         return %[[S]], %[[N]]
func.func @shape_size(%a: tensor<2x3x4xf32>) -> (tensor<2xi64>, tensor<i64>) {
  %0 = "onnx.Shape"(%a) {start = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2xi64>
  %1 = "onnx.Size"(%a) : (tensor<2x3x4xf32>) -> tensor<i64>
  return %0, %1 : tensor<2xi64>, tensor<i64>
}

// -----

// CHECK-LABEL: func.func @shape_negative_end
// CHECK:         arith.constant dense<[2, 3]> : tensor<2xi64>
func.func @shape_negative_end(%a: tensor<2x3x4xf32>) -> tensor<2xi64> {
  %0 = "onnx.Shape"(%a) {end = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// float -> int truncates toward zero (fptosi); -> unsigned uses fptoui.
// CHECK-LABEL: func.func @cast_f32_i32
// CHECK:         arith.fptosi %{{.*}} : f32 to i32
// CHECK-LABEL: func.func @cast_f32_u8
// CHECK:         arith.fptoui %{{.*}} : f32 to i8
// CHECK-LABEL: func.func @cast_u8_i64
// CHECK:         arith.extui %{{.*}} : i8 to i64
// CHECK-LABEL: func.func @cast_i64_i8
// CHECK:         arith.trunci %{{.*}} : i64 to i8
// CHECK-LABEL: func.func @cast_i8_f32
// CHECK:         arith.sitofp %{{.*}} : i8 to f32
// CHECK-LABEL: func.func @cast_f32_bool
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         arith.cmpf une, %{{.*}}, %[[Z]] : f32
// CHECK-LABEL: func.func @cast_bool_f32
// CHECK:         arith.uitofp %{{.*}} : i1 to f32
// CHECK-LABEL: func.func @cast_f16_bf16
// CHECK:         %[[W:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK:         arith.truncf %[[W]] : f32 to bf16
// CHECK-LABEL: func.func @cast_same
// CHECK-SAME:    (%[[A:.*]]: tensor<4xf32>)
// CHECK-NEXT:    return %[[A]]
func.func @cast_f32_i32(%a: tensor<4xf32>) -> tensor<4xi32> {
  %0 = "onnx.Cast"(%a) {to = 6 : i64} : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
func.func @cast_f32_u8(%a: tensor<4xf32>) -> tensor<4xui8> {
  %0 = "onnx.Cast"(%a) {to = 2 : i64} : (tensor<4xf32>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}
func.func @cast_u8_i64(%a: tensor<4xui8>) -> tensor<4xi64> {
  %0 = "onnx.Cast"(%a) {to = 7 : i64} : (tensor<4xui8>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
func.func @cast_i64_i8(%a: tensor<4xi64>) -> tensor<4xi8> {
  %0 = "onnx.Cast"(%a) {to = 3 : i64} : (tensor<4xi64>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
func.func @cast_i8_f32(%a: tensor<4xi8>) -> tensor<4xf32> {
  %0 = "onnx.Cast"(%a) {to = 1 : i64} : (tensor<4xi8>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @cast_f32_bool(%a: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "onnx.Cast"(%a) {to = 9 : i64} : (tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
func.func @cast_bool_f32(%a: tensor<4xi1>) -> tensor<4xf32> {
  %0 = "onnx.Cast"(%a) {to = 1 : i64} : (tensor<4xi1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @cast_f16_bf16(%a: tensor<4xf16>) -> tensor<4xbf16> {
  %0 = "onnx.Cast"(%a) {to = 16 : i64} : (tensor<4xf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}
func.func @cast_same(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Cast"(%a) {to = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The 8-bit floats have no arith.extf/truncf lowering: Cast works on their bits
// (Float8.cpp). To one: round to nearest even (a normal and a subnormal path),
// saturate=1 maps overflow to the largest finite code (0x7E = 126 for E4M3FN).
// CHECK-LABEL: func.func @cast_f32_f8e4m3fn
// CHECK:         linalg.generic
// CHECK:         ^bb0(%[[X:.*]]: f32, %{{.*}}: f8E4M3FN):
// CHECK:           arith.bitcast %[[X]] : f32 to i32
// CHECK:           math.roundeven
// CHECK:           arith.constant 126 : i32
// CHECK:           %[[B:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK:           %[[F:.*]] = arith.bitcast %[[B]] : i8 to f8E4M3FN
// CHECK:           linalg.yield %[[F]] : f8E4M3FN
func.func @cast_f32_f8e4m3fn(%a: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  %0 = "onnx.Cast"(%a) {to = 17 : i64} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}
// From one (E5M2 to f16): decoded to f32 from its bits (exponent 31 is
// infinity or NaN), then the usual truncation.
// CHECK-LABEL: func.func @cast_f8e5m2_f16
// CHECK:         ^bb0(%[[Y:.*]]: f8E5M2, %{{.*}}: f16):
// CHECK:           %[[I:.*]] = arith.bitcast %[[Y]] : f8E5M2 to i8
// CHECK:           arith.extui %[[I]] : i8 to i32
// CHECK:           arith.constant 31 : i32
// CHECK:           %[[W:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK:           arith.truncf %[[W]] : f32 to f16
func.func @cast_f8e5m2_f16(%a: tensor<4xf8E5M2>) -> tensor<4xf16> {
  %0 = "onnx.Cast"(%a) {to = 10 : i64} : (tensor<4xf8E5M2>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// A constant with no elements is an empty tensor: no empty dense global reaches the
// LLVM translation (which divides by the element count).
// CHECK-LABEL: func.func @constant_no_elements
// CHECK-NOT:     arith.constant
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x0x3xf32>
// CHECK:         return %[[E]]
func.func @constant_no_elements() -> tensor<2x0x3xf32> {
  %0 = "onnx.Constant"() {value = dense<> : tensor<2x0x3xf32>} : () -> tensor<2x0x3xf32>
  return %0 : tensor<2x0x3xf32>
}
