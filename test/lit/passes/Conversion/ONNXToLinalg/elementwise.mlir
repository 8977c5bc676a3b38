// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s
// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file -one-shot-bufferize=bufferize-function-boundaries | FileCheck %s --check-prefix=BUF

// BUF-NOT: tensor.empty

// Numpy broadcasting is done by indexing maps: a missing leading dim is
// dropped from the map, a size-1 dim reads index 0.
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[ID2]], #[[COL]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<3xf32>) outs(%[[E]] : tensor<2x3xf32>)
// CHECK:           arith.addf
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "onnx.Add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @mul_bidirectional
// CHECK:         linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #{{.*}}]
// CHECK:           arith.mulf
func.func @mul_bidirectional(%a: tensor<4x1xf32>, %b: tensor<1x5xf32>) -> tensor<4x5xf32> {
  %0 = "onnx.Mul"(%a, %b) : (tensor<4x1xf32>, tensor<1x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @sub_scalar
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[SCALAR]], #{{.*}}]
// CHECK:           arith.subf
func.func @sub_scalar(%a: tensor<2x3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  %0 = "onnx.Sub"(%a, %b) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Integer division truncates; unsigned types become signless and use divui.
// CHECK-LABEL: func.func @div_int
// CHECK:         arith.divsi %{{.*}}, %{{.*}} : i32
// CHECK-LABEL: func.func @div_uint
// CHECK-SAME:    tensor<4xi8>
// CHECK:         arith.divui %{{.*}}, %{{.*}} : i8
func.func @div_int(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "onnx.Div"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
func.func @div_uint(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "onnx.Div"(%a, %b) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// A constant exponent of 2 becomes a multiplication.
// CHECK-LABEL: func.func @pow_const2
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}} : tensor<4xf32>)
// CHECK:           %[[SQ:.*]] = arith.mulf %[[IN:.*]], %[[IN]] : f32
// CHECK-NEXT:      linalg.yield %[[SQ]]
// CHECK-NOT:     math.powf
func.func @pow_const2(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %0 = "onnx.Pow"(%a, %c) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @pow_int_exp
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: i64, %{{.*}}: f32):
// CHECK:           %[[YF:.*]] = arith.sitofp %[[Y]] : i64 to f32
// CHECK:           math.powf %[[X]], %[[YF]] : f32
func.func @pow_int_exp(%a: tensor<4xf32>, %b: tensor<4xi64>) -> tensor<4xf32> {
  %0 = "onnx.Pow"(%a, %b) : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @erf_sqrt
// CHECK:         math.erf
// CHECK:         math.sqrt
func.func @erf_sqrt(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Erf"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "onnx.Sqrt"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Transcendentals on f16 are computed in f32.
// CHECK-LABEL: func.func @tanh_f16
// CHECK:         %[[W:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK:         %[[T:.*]] = math.tanh %[[W]] : f32
// CHECK:         arith.truncf %[[T]] : f32 to f16
func.func @tanh_f16(%a: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "onnx.Tanh"(%a) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @relu_sigmoid
// CHECK:         arith.maximumf
// CHECK:         linalg.generic
// CHECK:           arith.negf
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK:           arith.divf
func.func @relu_sigmoid(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "onnx.Sigmoid"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Constant bounds are folded into the body.
// CHECK-LABEL: func.func @clip_const
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}} : tensor<4xf32>)
// CHECK:           %[[LO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[M:.*]] = arith.maximumf %{{.*}}, %[[LO]] : f32
// CHECK:           %[[HI:.*]] = arith.constant 6.000000e+00 : f32
// CHECK:           arith.minimumf %[[M]], %[[HI]] : f32
func.func @clip_const(%a: tensor<4xf32>) -> tensor<4xf32> {
  %lo = "onnx.Constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %hi = "onnx.Constant"() {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
  %0 = "onnx.Clip"(%a, %lo, %hi) : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// An absent max (onnx.NoValue) is skipped and the NoValue erased.
// CHECK-LABEL: func.func @clip_no_max
// CHECK-NOT:     onnx.NoValue
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<f32>)
// CHECK:           arith.maximumf
// CHECK-NOT:       arith.minimumf
func.func @clip_no_max(%a: tensor<4xf32>, %lo: tensor<f32>) -> tensor<4xf32> {
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Clip"(%a, %lo, %none) : (tensor<4xf32>, tensor<f32>, none) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @where_cmp
// CHECK:         %[[C:.*]] = linalg.generic
// CHECK:           arith.cmpf olt
// CHECK:         -> tensor<2x3xi1>
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[C]], %{{.*}}, %{{.*}} : tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>)
// CHECK:           arith.select
func.func @where_cmp(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %c = "onnx.Less"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %0 = "onnx.Where"(%c, %a, %b) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @less_uint
// CHECK:         arith.cmpi ult
func.func @less_uint(%a: tensor<4xui32>, %b: tensor<4xui32>) -> tensor<4xi1> {
  %0 = "onnx.Less"(%a, %b) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @max_variadic
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<1xf32>, tensor<4xf32>)
// CHECK:           %[[M:.*]] = arith.maximumf
// CHECK:           arith.maximumf %[[M]]
func.func @max_variadic(%a: tensor<4xf32>, %b: tensor<1xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Max"(%a, %b, %c) : (tensor<4xf32>, tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Integer Mod with fmod = 0 takes the sign of the divisor.
// CHECK-LABEL: func.func @mod_int
// CHECK:         %[[R:.*]] = arith.remsi
// CHECK:         %[[ADJ:.*]] = arith.addi %[[R]]
// CHECK:         arith.select %{{.*}}, %[[ADJ]], %[[R]]
func.func @mod_int(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "onnx.Mod"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @gelu
// CHECK:         math.erf
// CHECK-LABEL: func.func @gelu_tanh
// CHECK:         arith.constant 4.471500e-02
// CHECK:         math.tanh
func.func @gelu(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Gelu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @gelu_tanh(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Gelu"(%a) {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @round_not
// CHECK:         math.roundeven
// CHECK:         %[[T:.*]] = arith.constant true
// CHECK:         arith.xori %{{.*}}, %[[T]] : i1
func.func @round_not(%a: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xi1>) {
  %0 = "onnx.Round"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "onnx.Not"(%b) : (tensor<4xi1>) -> tensor<4xi1>
  return %0, %1 : tensor<4xf32>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @bitshift
// CHECK:         %[[S:.*]] = arith.shrui
// CHECK:         %[[FAR:.*]] = arith.cmpi uge
// CHECK:         arith.select %[[FAR]], %{{.*}}, %[[S]]
func.func @bitshift(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "onnx.BitShift"(%a, %b) {direction = "RIGHT"} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK: affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// CHECK-LABEL: func.func @prelu
// CHECK:         arith.cmpf olt
// CHECK:         arith.select
func.func @prelu(%a: tensor<1x3x4x4xf32>, %s: tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32> {
  %0 = "onnx.PRelu"(%a, %s) : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// Signed BitShift: arithmetic right shift; a shift by >= the width or by a
// negative amount gives -1 for a negative value, else 0.
// CHECK-LABEL: func.func @bitshift_signed_right
// CHECK:         %[[S:.*]] = arith.shrsi %[[X:.*]], %[[N:.*]] : i8
// CHECK:         arith.cmpi sge, %[[N]]
// CHECK:         arith.cmpi slt, %[[N]]
// CHECK:         %[[SIGN:.*]] = arith.shrsi %[[X]], %{{.*}} : i8
// CHECK:         arith.select %{{.*}}, %[[SIGN]], %[[S]]
func.func @bitshift_signed_right(%a: tensor<4xi8>, %b: tensor<4xi8>) -> tensor<4xi8> {
  %0 = "onnx.BitShift"(%a, %b) {direction = "RIGHT"} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// CHECK-LABEL: func.func @bitwise
// CHECK:         arith.andi
// CHECK:         arith.xori %{{.*}}, %c-1_i32
func.func @bitwise(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "onnx.BitwiseAnd"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = "onnx.BitwiseNot"(%0) : (tensor<4xi32>) -> tensor<4xi32>
  return %1 : tensor<4xi32>
}

// -----

// Float Mod with fmod = 0 takes the divisor's sign, like numpy.mod.
// CHECK-LABEL: func.func @mod_float_python
// CHECK:         %[[R:.*]] = arith.remf
// CHECK:         %[[ADJ:.*]] = arith.addf %[[R]]
// CHECK:         arith.select %{{.*}}, %[[ADJ]], %[[R]]
func.func @mod_float_python(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Mod"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
