// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// int4, uint4, int2, uint2, float4e2m1 and float8e8m0 are held one per i8
// (SubByte.h). A packed graph input crosses the boundary packed: the entry
// takes ceil(n * bits / 8) bytes and unpacks them (low bits first), int4
// sign-extended; a cast from int4 to int8 is then the i8 itself.
// CHECK-LABEL: func.func @int4_input_to_int8
// CHECK-SAME:    (%[[P:.*]]: tensor<3xi8>) -> tensor<5xi8>
// CHECK:         %[[U:.*]] = linalg.generic
// CHECK-SAME:      outs(%{{.*}} : tensor<5xi8>) attrs = {kiln.storage_only}
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           arith.divui %[[I]], %{{.*}} : index
// CHECK:           tensor.extract %[[P]]
// CHECK:           arith.shrui
// CHECK:           arith.shli
// CHECK:           arith.shrsi
// CHECK:         return %[[U]] : tensor<5xi8>
func.func @int4_input_to_int8(%a: tensor<5xi4>) -> tensor<5xi8> {
  %0 = "onnx.Cast"(%a) {to = 3 : i64} : (tensor<5xi4>) -> tensor<5xi8>
  return %0 : tensor<5xi8>
}

// -----

// f32 -> int4: truncated toward zero in int32 (0 from 2^31 on: such an f32's
// low 8 bits are 0; no f64 or i64, which GPUs may lack), then wrapped to 4
// bits and sign-extended; the packed output is ceil(5 / 2) = 3 bytes, two
// elements per byte (the last byte's high nibble 0).
// CHECK-LABEL: func.func @f32_to_int4_output
// CHECK-SAME:    -> tensor<3xi8>
// CHECK:         linalg.generic
// CHECK-NOT:       f64
// CHECK:           arith.constant 2.14748365E+9 : f32
// CHECK:           arith.fptosi %{{.*}} : f32 to i32
// CHECK:           arith.trunci %{{.*}} : i32 to i8
// CHECK:           arith.shli
// CHECK:           arith.shrsi
// CHECK:         } -> tensor<5xi8>
// CHECK:         %[[PK:.*]] = linalg.generic
// CHECK:           arith.minui
// CHECK:           tensor.extract
// CHECK:           arith.select
// CHECK:           arith.ori
// CHECK:         } -> tensor<3xi8>
// CHECK:         return %[[PK]] : tensor<3xi8>
func.func @f32_to_int4_output(%a: tensor<5xf32>) -> tensor<5xi4> {
  %0 = "onnx.Cast"(%a) {to = 22 : i64} : (tensor<5xf32>) -> tensor<5xi4>
  return %0 : tensor<5xi4>
}

// -----

// f64 -> int4: truncated in int64 (0 from 2^63 on).
// CHECK-LABEL: func.func @f64_to_int4
// CHECK:         linalg.generic
// CHECK:           arith.constant 9.2233720368547758E+18 : f64
// CHECK:           arith.fptosi %{{.*}} : f64 to i64
// CHECK:           arith.trunci %{{.*}} : i64 to i8
func.func @f64_to_int4(%a: tensor<4xf64>) -> tensor<4xi4> {
  %0 = "onnx.Cast"(%a) {to = 22 : i64} : (tensor<4xf64>) -> tensor<4xi4>
  return %0 : tensor<4xi4>
}

// -----

// A 2-D uint2 input: four per byte (6 elements -> 2 bytes), unpacked flat and
// expanded to its shape; uint2 zero-extended (logical shift).
// CHECK-LABEL: func.func @uint2_2d
// CHECK-SAME:    (%[[P:.*]]: tensor<2xi8>)
// CHECK:         linalg.generic
// CHECK:           arith.shrui
// CHECK:         } -> tensor<6xi8>
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 3] : tensor<6xi8> into tensor<2x3xi8>
// CHECK:         arith.uitofp %{{.*}} : i8 to f32
func.func @uint2_2d(%a: tensor<2x3xui2>) -> tensor<2x3xf32> {
  %0 = "onnx.Cast"(%a) {to = 1 : i64} : (tensor<2x3xui2>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// float4e2m1: encoded by counting the rounding boundaries passed (ties to
// the even code), saturating at code 7 (6.0); decoded from its exponent and
// mantissa bits.
// CHECK-LABEL: func.func @float4_round_trip
// CHECK:         linalg.generic
// CHECK:           arith.constant 2.500000e-01 : f32
// CHECK:           arith.cmpf ogt
// CHECK:           arith.constant 7.500000e-01 : f32
// CHECK:           arith.cmpf oge
// CHECK:           arith.constant 5.000000e+00 : f32
// CHECK:           arith.cmpf uno
// CHECK:           arith.trunci %{{.*}} : i32 to i8
// CHECK:         linalg.generic
// CHECK:           arith.extui %{{.*}} : i8 to i32
// CHECK:           arith.constant 126 : i32
// CHECK:           arith.bitcast %{{.*}} : i32 to f32
func.func @float4_round_trip(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Cast"(%a) {to = 23 : i64} : (tensor<4xf32>) -> tensor<4xf4E2M1FN>
  %1 = "onnx.Cast"(%0) {to = 1 : i64} : (tensor<4xf4E2M1FN>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// float8e8m0 (one byte, not packed): round_mode "down" is the exponent field;
// saturate keeps infinities at 0xFE.
// CHECK-LABEL: func.func @to_e8m0
// CHECK-SAME:    -> tensor<4xi8>
// CHECK:         linalg.generic
// CHECK:           arith.shrui %{{.*}}, %{{.*}} : i32
// CHECK:           arith.constant 254 : i32
// CHECK:           arith.trunci %{{.*}} : i32 to i8
func.func @to_e8m0(%a: tensor<4xf32>) -> tensor<4xf8E8M0FNU> {
  %0 = "onnx.Cast"(%a) {to = 24 : i64, round_mode = "down"} : (tensor<4xf32>) -> tensor<4xf8E8M0FNU>
  return %0 : tensor<4xf8E8M0FNU>
}

// -----

// Constants: int4 values sign-extended into i8, moved by Reshape as bytes
// (folded here), and the cast to int8 is the i8 itself.
// CHECK-LABEL: func.func @int4_constant
// CHECK:         arith.constant dense<[-8, 7, -1, 0]> : tensor<4xi8>
// CHECK:         %[[R:.*]] = arith.constant dense<{{\[\[}}-8, 7], [-1, 0]]> : tensor<2x2xi8>
// CHECK:         return %[[R]]
func.func @int4_constant() -> tensor<2x2xi8> {
  %c = "onnx.Constant"() {value = dense<[-8, 7, -1, 0]> : tensor<4xi4>} : () -> tensor<4xi4>
  %s = "onnx.Constant"() {value = dense<[2, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r = "onnx.Reshape"(%c, %s) : (tensor<4xi4>, tensor<2xi64>) -> tensor<2x2xi4>
  %0 = "onnx.Cast"(%r) {to = 3 : i64} : (tensor<2x2xi4>) -> tensor<2x2xi8>
  return %0 : tensor<2x2xi8>
}
