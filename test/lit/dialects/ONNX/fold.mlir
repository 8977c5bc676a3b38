// RUN: kiln-opt %s -canonicalize -split-input-file | FileCheck %s

// The exporters' shape arithmetic: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
// CHECK-LABEL: func.func @shape_chain
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  // CHECK-NEXT: %[[SHAPE:.*]] = onnx.Constant {value = dense<[-1, 4]> : tensor<2xi64>}
  // CHECK-NEXT: %[[R:.*]] = onnx.Reshape %{{.*}}, %[[SHAPE]]
  // CHECK-NEXT: return %[[R]]
  %s = onnx.Shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %i2 = onnx.Constant {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %d2 = onnx.Gather %s, %i2 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %ax = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %u = onnx.Unsqueeze %d2, %ax : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %m1 = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %c = onnx.Concat %m1, %u {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = onnx.Reshape %x, %c : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  return %r : tensor<6x4xf32>
}

// -----

// CHECK-LABEL: func.func @shape_start_end
func.func @shape_start_end(%x: tensor<2x3x4xf32>) -> (tensor<2xi64>, tensor<i64>) {
  // CHECK-DAG: onnx.Constant {value = dense<[3, 4]> : tensor<2xi64>}
  // CHECK-DAG: onnx.Constant {value = dense<24> : tensor<i64>}
  %s = onnx.Shape %x {start = -2 : i64} : (tensor<2x3x4xf32>) -> tensor<2xi64>
  %n = onnx.Size %x : (tensor<2x3x4xf32>) -> tensor<i64>
  return %s, %n : tensor<2xi64>, tensor<i64>
}

// -----

// Dynamic dimensions do not fold.
// CHECK-LABEL: func.func @shape_dynamic
func.func @shape_dynamic(%x: tensor<?x3xf32>) -> tensor<2xi64> {
  // CHECK: onnx.Shape
  %s = onnx.Shape %x : (tensor<?x3xf32>) -> tensor<2xi64>
  return %s : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @identity
func.func @identity(%x: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK-NEXT: return %arg0
  %y = onnx.Identity %x : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @arith
func.func @arith() -> (tensor<2x2xi64>, tensor<2xi64>, tensor<2xf32>, tensor<2xf32>, tensor<2xi1>) {
  // CHECK-DAG: dense<{{\[}}[11, 22], [13, 24]]> : tensor<2x2xi64>
  // CHECK-DAG: dense<[-9, -14]> : tensor<2xi64>
  // CHECK-DAG: dense<[1.500000e+00, 3.000000e+00]> : tensor<2xf32>
  // CHECK-DAG: dense<[5.000000e-01, 1.000000e+00]> : tensor<2xf32>
  // CHECK-DAG: dense<[false, true]> : tensor<2xi1>
  %a = onnx.Constant {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %b = onnx.Constant {value = dense<[[10, 20], [12, 22]]> : tensor<2x2xi64>} : () -> tensor<2x2xi64>
  %add = onnx.Add %a, %b : (tensor<2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  %c = onnx.Constant {value = dense<[10, 9]> : tensor<2xi64>} : () -> tensor<2xi64>
  %sub = onnx.Sub %a, %c : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %mul = onnx.Mul %sub, %a : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %f = onnx.Constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %h = onnx.Constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %fm = onnx.Mul %f, %h : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %fadd = onnx.Add %fm, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %fs = onnx.Div %fadd, %h : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %fd = onnx.Div %f, %h : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %e = onnx.Equal %f, %h : (tensor<2xf32>, tensor<f32>) -> tensor<2xi1>
  return %add, %mul, %fs, %fd, %e : tensor<2x2xi64>, tensor<2xi64>, tensor<2xf32>, tensor<2xf32>, tensor<2xi1>
}

// -----

// Integer division with a negative inexact quotient is left alone (truncation and
// flooring disagree); exact and non-negative ones fold.
// CHECK-LABEL: func.func @int_div
func.func @int_div() -> (tensor<2xi64>, tensor<i64>) {
  // CHECK-DAG: dense<[3, 2]> : tensor<2xi64>
  // CHECK-DAG: onnx.Div %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %a = onnx.Constant {value = dense<[7, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %b = onnx.Constant {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %q = onnx.Div %a, %b : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %m = onnx.Constant {value = dense<-7> : tensor<i64>} : () -> tensor<i64>
  %r = onnx.Div %m, %b : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %q, %r : tensor<2xi64>, tensor<i64>
}

// -----

// Overflow of the element type is not folded.
// CHECK-LABEL: func.func @overflow
func.func @overflow() -> tensor<1xi8> {
  // CHECK: onnx.Add
  %a = onnx.Constant {value = dense<100> : tensor<1xi8>} : () -> tensor<1xi8>
  %s = onnx.Add %a, %a : (tensor<1xi8>, tensor<1xi8>) -> tensor<1xi8>
  return %s : tensor<1xi8>
}

// -----

// CHECK-LABEL: func.func @where_equal
func.func @where_equal() -> tensor<3xi64> {
  // CHECK-NEXT: onnx.Constant {value = dense<[7, 2, 7]> : tensor<3xi64>}
  %a = onnx.Constant {value = dense<[-1, 2, -1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %m1 = onnx.Constant {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %c = onnx.Equal %a, %m1 : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %seven = onnx.Constant {value = dense<7> : tensor<1xi64>} : () -> tensor<1xi64>
  %w = onnx.Where %c, %seven, %a : (tensor<3xi1>, tensor<1xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %w : tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @cast
func.func @cast() -> (tensor<3xf32>, tensor<3xi32>, tensor<3xi1>) {
  // CHECK-DAG: dense<[-2.000000e+00, 0.000000e+00, 3.000000e+00]> : tensor<3xf32>
  // CHECK-DAG: dense<[-1, 0, 2]> : tensor<3xi32>
  // CHECK-DAG: dense<[true, false, true]> : tensor<3xi1>
  %a = onnx.Constant {value = dense<[-2, 0, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  %f = onnx.Cast %a {to = 1 : i64} : (tensor<3xi64>) -> tensor<3xf32>
  %g = onnx.Constant {value = dense<[-1.7, 0.2, 2.9]> : tensor<3xf32>} : () -> tensor<3xf32>
  %i = onnx.Cast %g {to = 6 : i64} : (tensor<3xf32>) -> tensor<3xi32>
  %b = onnx.Cast %a {to = 9 : i64} : (tensor<3xi64>) -> tensor<3xi1>
  return %f, %i, %b : tensor<3xf32>, tensor<3xi32>, tensor<3xi1>
}

// -----

// CHECK-LABEL: func.func @slice
func.func @slice() -> (tensor<3xi64>, tensor<2x1xi64>) {
  // CHECK-DAG: dense<[5, 3, 1]> : tensor<3xi64>
  // CHECK-DAG: dense<{{\[}}[1], [4]]> : tensor<2x1xi64>
  %a = onnx.Constant {value = dense<[1, 2, 3, 4, 5]> : tensor<5xi64>} : () -> tensor<5xi64>
  %st = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %en = onnx.Constant {value = dense<-9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %sp = onnx.Constant {value = dense<-2> : tensor<1xi64>} : () -> tensor<1xi64>
  %r = onnx.Slice %a, %st, %en, %ax, %sp : (tensor<5xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %m = onnx.Constant {value = dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>} : () -> tensor<2x3xi64>
  %s2 = onnx.Constant {value = dense<[0, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %e2 = onnx.Constant {value = dense<[100, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %none = onnx.NoValue : () -> none
  %r2 = onnx.Slice %m, %s2, %e2, %none, %none : (tensor<2x3xi64>, tensor<2xi64>, tensor<2xi64>, none, none) -> tensor<2x1xi64>
  return %r, %r2 : tensor<3xi64>, tensor<2x1xi64>
}

// -----

// CHECK-LABEL: func.func @transpose
func.func @transpose() -> (tensor<3x2xi32>, tensor<2x3xi32>) {
  // CHECK-DAG: dense<{{\[}}[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi32>
  // CHECK-DAG: dense<{{\[}}[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %m = onnx.Constant {value = dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>} : () -> tensor<2x3xi32>
  %t = onnx.Transpose %m : (tensor<2x3xi32>) -> tensor<3x2xi32>
  %tt = onnx.Transpose %t {perm = [1, 0]} : (tensor<3x2xi32>) -> tensor<2x3xi32>
  return %t, %tt : tensor<3x2xi32>, tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @reshapes
func.func @reshapes() -> (tensor<1x6xf32>, tensor<3x1x2xf32>, tensor<6xf32>, tensor<2x2x3xf32>) {
  // CHECK-DAG: dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<1x6xf32>
  // CHECK-DAG: : tensor<3x1x2xf32>
  // CHECK-DAG: : tensor<6xf32>
  // CHECK-DAG: dense<{{\[}}{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]], {{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]]> : tensor<2x2x3xf32>
  // CHECK-NOT: onnx.Flatten
  // CHECK-NOT: onnx.Unsqueeze
  // CHECK-NOT: onnx.Squeeze
  // CHECK-NOT: onnx.Expand
  %m = onnx.Constant {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %f = onnx.Flatten %m {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<1x6xf32>
  %s = onnx.Constant {value = dense<[3, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r = onnx.Reshape %m, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  %ax = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %u = onnx.Unsqueeze %r, %ax : (tensor<3x2xf32>, tensor<1xi64>) -> tensor<3x1x2xf32>
  %none = onnx.NoValue : () -> none
  %q = onnx.Squeeze %f, %none : (tensor<1x6xf32>, none) -> tensor<6xf32>
  %es = onnx.Constant {value = dense<[2, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %e = onnx.Expand %m, %es : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<2x2x3xf32>
  return %f, %u, %q, %e : tensor<1x6xf32>, tensor<3x1x2xf32>, tensor<6xf32>, tensor<2x2x3xf32>
}

// -----

// A result type that disagrees with the computed shape is never folded.
// CHECK-LABEL: func.func @reshape_mismatch
func.func @reshape_mismatch() -> tensor<6xf32> {
  // CHECK: onnx.Reshape
  %m = onnx.Constant {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %s = onnx.Constant {value = dense<[3, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r = onnx.Reshape %m, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<6xf32>
  return %r : tensor<6xf32>
}

// -----

// CHECK-LABEL: func.func @range_constant_of_shape
func.func @range_constant_of_shape() -> (tensor<4xi64>, tensor<2x2xi32>, tensor<3xf32>) {
  // CHECK-DAG: dense<[0, 3, 6, 9]> : tensor<4xi64>
  // CHECK-DAG: dense<5> : tensor<2x2xi32>
  // CHECK-DAG: dense<0.000000e+00> : tensor<3xf32>
  %s = onnx.Constant {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %l = onnx.Constant {value = dense<10> : tensor<i64>} : () -> tensor<i64>
  %d = onnx.Constant {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %r = onnx.Range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %shape = onnx.Constant {value = dense<2> : tensor<2xi64>} : () -> tensor<2xi64>
  %c = onnx.ConstantOfShape %shape {value = dense<5> : tensor<1xi32>} : (tensor<2xi64>) -> tensor<2x2xi32>
  %shape1 = onnx.Constant {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %z = onnx.ConstantOfShape %shape1 : (tensor<1xi64>) -> tensor<3xf32>
  return %r, %c, %z : tensor<4xi64>, tensor<2x2xi32>, tensor<3xf32>
}

// -----

// Resource-backed constants are read too.
// CHECK-LABEL: func.func @resource
func.func @resource() -> tensor<2xi64> {
  // CHECK-NEXT: onnx.Constant {value = dense<[3, 5]> : tensor<2xi64>}
  %a = onnx.Constant {value = dense_resource<shape> : tensor<2xi64>} : () -> tensor<2xi64>
  %b = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %r = onnx.Add %a, %b : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}

{-#
  dialect_resources: {
    builtin: {
      shape: "0x0800000002000000000000000400000000000000"
    }
  }
#-}

// -----

// CHECK-LABEL: func.func @gather_2d
func.func @gather_2d() -> tensor<2x2xi64> {
  // CHECK-NEXT: onnx.Constant {value = dense<{{\[}}[3, 1], [6, 4]]> : tensor<2x2xi64>}
  %m = onnx.Constant {value = dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>} : () -> tensor<2x3xi64>
  %i = onnx.Constant {value = dense<[-1, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %g = onnx.Gather %m, %i {axis = 1 : i64} : (tensor<2x3xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  return %g : tensor<2x2xi64>
}

// -----

// Comparisons, logic, Neg/Abs/Not, Min/Max and Mod of small constants fold
// (the shape arithmetic in ONNX's own function bodies, e.g. Attention's GQA
// check: Equal -> Not, Mod -> Equal -> And -> Where).
// CHECK-LABEL: func.func @compare_logic_unary
func.func @compare_logic_unary() -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi1>) {
  // CHECK-NOT: onnx.Less
  // CHECK-NOT: onnx.Mod
  // CHECK-DAG: dense<[true, false, false]> : tensor<3xi1>
  // CHECK-DAG: dense<[false, true, true]> : tensor<3xi1>
  // CHECK-DAG: dense<[3, 0, -2]> : tensor<3xi64>
  // CHECK-DAG: dense<[3, 0, 2]> : tensor<3xi64>
  // CHECK-DAG: dense<[-3, 0, -2]> : tensor<3xi64>
  // CHECK-DAG: dense<[0, 0, 1]> : tensor<3xi64>
  // CHECK-DAG: dense<[0, 0, 2]> : tensor<3xi64>
  // CHECK-DAG: dense<false> : tensor<3xi1>
  %a = onnx.Constant {value = dense<[-3, 0, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %b = onnx.Constant {value = dense<[0, 0, -2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %three = onnx.Constant {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %lt = "onnx.Less"(%a, %b) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %not = "onnx.Not"(%lt) : (tensor<3xi1>) -> tensor<3xi1>
  %neg = "onnx.Neg"(%a) : (tensor<3xi64>) -> tensor<3xi64>
  %abs = "onnx.Abs"(%a) : (tensor<3xi64>) -> tensor<3xi64>
  %min = "onnx.Min"(%a, %b) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  // Mod: the result takes the divisor's sign; fmod = 1 the dividend's.
  %mod = "onnx.Mod"(%neg, %three) {fmod = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %fmod = "onnx.Mod"(%a, %three) {fmod = 1 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %and = "onnx.And"(%not, %lt) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return %lt, %not, %neg, %abs, %min, %mod, %fmod, %and : tensor<3xi1>, tensor<3xi1>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi1>
}

// -----

// Neg of the most negative i8 does not fit: left alone.
// CHECK-LABEL: func.func @neg_overflow
func.func @neg_overflow() -> tensor<1xi8> {
  // CHECK: onnx.Neg
  %a = onnx.Constant {value = dense<-128> : tensor<1xi8>} : () -> tensor<1xi8>
  %n = "onnx.Neg"(%a) : (tensor<1xi8>) -> tensor<1xi8>
  return %n : tensor<1xi8>
}
