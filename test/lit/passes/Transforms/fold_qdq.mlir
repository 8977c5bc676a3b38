// RUN: kiln-opt %s -kiln-fold-qdq -canonicalize -split-input-file | FileCheck %s

// DQ -> Conv (per-channel symmetric s8 weights, int32 bias) -> Relu -> Q: a
// ConvInteger on the 8-bit values (the form lowered to 8-bit kernels), the bias
// added in int32, the multiplier x_scale * w_scale / y_scale folded, the Relu as
// the lower saturation bound y_zp = 5.
// CHECK-LABEL: func.func @conv_relu
// CHECK-NOT: onnx.DequantizeLinear
// CHECK-NOT: onnx.Relu
// CHECK: %[[ACC:.*]] = onnx.ConvInteger %arg0, {{.*}} : (tensor<1x2x4x4xui8>, tensor<3x2x1x1xi8>, tensor<ui8>, tensor<3xi8>) -> tensor<1x3x4x4xi32>
// CHECK: %[[B:.*]] = onnx.Add %[[ACC]], {{.*}} : (tensor<1x3x4x4xi32>, tensor<1x3x1x1xi32>) -> tensor<1x3x4x4xi32>
// CHECK: %[[F:.*]] = onnx.Cast %[[B]] {to = 1 : i64}
// CHECK: onnx.Mul %[[F]], {{.*}} : (tensor<1x3x4x4xf32>, tensor<1x3x1x1xf32>)
// CHECK: onnx.Round
// CHECK: onnx.Clip {{.*}} -> tensor<1x3x4x4xf32>
// CHECK: onnx.Cast {{.*}} {to = 2 : i64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xui8>
// CHECK-NOT: onnx.QuantizeLinear
func.func @conv_relu(%x: tensor<1x2x4x4xui8>) -> tensor<1x3x4x4xui8> {
  %none = onnx.NoValue : () -> none
  %xs = onnx.Constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
  %wq = onnx.Constant {value = dense<[[[[1]], [[-2]]], [[[3]], [[4]]], [[[-5]], [[6]]]]> : tensor<3x2x1x1xi8>} : () -> tensor<3x2x1x1xi8>
  %ws = onnx.Constant {value = dense<[0.25, 0.125, 0.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  %wz = onnx.Constant {value = dense<0> : tensor<3xi8>} : () -> tensor<3xi8>
  %bq = onnx.Constant {value = dense<[10, -20, 30]> : tensor<3xi32>} : () -> tensor<3xi32>
  %bs = onnx.Constant {value = dense<[0.125, 0.0625, 0.25]> : tensor<3xf32>} : () -> tensor<3xf32>
  %ys = onnx.Constant {value = dense<0.75> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant {value = dense<5> : tensor<ui8>} : () -> tensor<ui8>
  %xd = onnx.DequantizeLinear %x, %xs, %xz : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %wd = onnx.DequantizeLinear %wq, %ws, %wz {axis = 0 : i64} : (tensor<3x2x1x1xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x2x1x1xf32>
  %bd = onnx.DequantizeLinear %bq, %bs, %none {axis = 0 : i64} : (tensor<3xi32>, tensor<3xf32>, none) -> tensor<3xf32>
  %c = onnx.Conv %xd, %wd, %bd : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %r = onnx.Relu %c : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %q = onnx.QuantizeLinear %r, %ys, %yz : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xui8>
  return %q : tensor<1x3x4x4xui8>
}

// -----

// DQ -> MatMul -> Q with s8 activations: an int32 MatMul, requantized to i8.
// CHECK-LABEL: func.func @matmul_s8
// CHECK-NOT: onnx.DequantizeLinear
// CHECK: onnx.Constant {{.*}}dense<-1.280000e+02> : tensor<f32>
// CHECK: onnx.MatMul {{.*}} : (tensor<2x3x8xi32>, tensor<8x4xi32>) -> tensor<2x3x4xi32>
// CHECK: onnx.Cast {{.*}} {to = 3 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xi8>
// CHECK-NOT: onnx.QuantizeLinear
func.func @matmul_s8(%a: tensor<2x3x8xi8>, %b: tensor<8x4xi8>) -> tensor<2x3x4xi8> {
  %s = onnx.Constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant {value = dense<1> : tensor<i8>} : () -> tensor<i8>
  %ad = onnx.DequantizeLinear %a, %s, %z : (tensor<2x3x8xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3x8xf32>
  %bd = onnx.DequantizeLinear %b, %s, %z : (tensor<8x4xi8>, tensor<f32>, tensor<i8>) -> tensor<8x4xf32>
  %m = onnx.MatMul %ad, %bd : (tensor<2x3x8xf32>, tensor<8x4xf32>) -> tensor<2x3x4xf32>
  %q = onnx.QuantizeLinear %m, %s, %z : (tensor<2x3x4xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3x4xi8>
  return %q : tensor<2x3x4xi8>
}

// -----

// Gemm with transB and an int32 bias: the constant B is transposed at compile time.
// CHECK-LABEL: func.func @gemm_trans_b
// CHECK-NOT: onnx.Gemm
// CHECK: %[[B:.*]] = onnx.Constant {{.*}}dense<{{\[\[}}1, 3], [2, 4]]> : tensor<2x2xi8>
// CHECK: %[[ACC:.*]] = onnx.MatMulInteger %arg0, %[[B]], {{.*}} -> tensor<1x2xi32>
// CHECK: onnx.Add %[[ACC]], {{.*}} : (tensor<1x2xi32>, tensor<2xi32>) -> tensor<1x2xi32>
// CHECK: onnx.Cast {{.*}} -> tensor<1x2xui8>
func.func @gemm_trans_b(%a: tensor<1x2xui8>) -> tensor<1x2xui8> {
  %none = onnx.NoValue : () -> none
  %s = onnx.Constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %wq = onnx.Constant {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>} : () -> tensor<2x2xi8>
  %ws = onnx.Constant {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %bq = onnx.Constant {value = dense<[7, -7]> : tensor<2xi32>} : () -> tensor<2xi32>
  %bs = onnx.Constant {value = dense<0.125> : tensor<f32>} : () -> tensor<f32>
  %ad = onnx.DequantizeLinear %a, %s, %z : (tensor<1x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2xf32>
  %wd = onnx.DequantizeLinear %wq, %ws, %none : (tensor<2x2xi8>, tensor<f32>, none) -> tensor<2x2xf32>
  %bd = onnx.DequantizeLinear %bq, %bs, %none : (tensor<2xi32>, tensor<f32>, none) -> tensor<2xf32>
  %g = onnx.Gemm %ad, %wd, %bd {transB = 1 : i64} : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %q = onnx.QuantizeLinear %g, %s, %z : (tensor<1x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2xui8>
  return %q : tensor<1x2xui8>
}

// -----

// No QuantizeLinear after the MatMul: the dequantized int32 product,
// float(acc) * a_scale * b_scale.
// CHECK-LABEL: func.func @matmul_float_out
// CHECK-NOT: onnx.DequantizeLinear
// CHECK: %[[ACC:.*]] = onnx.MatMul {{.*}} -> tensor<3x4xi32>
// CHECK: %[[F:.*]] = onnx.Cast %[[ACC]] {to = 1 : i64}
// CHECK: %[[Y:.*]] = onnx.Mul %[[F]], {{.*}} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
// CHECK: return %[[Y]]
func.func @matmul_float_out(%a: tensor<3x8xui8>, %b: tensor<8x4xui8>) -> tensor<3x4xf32> {
  %s = onnx.Constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant {value = dense<7> : tensor<ui8>} : () -> tensor<ui8>
  %ad = onnx.DequantizeLinear %a, %s, %z : (tensor<3x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<3x8xf32>
  %bd = onnx.DequantizeLinear %b, %s, %z : (tensor<8x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<8x4xf32>
  %m = onnx.MatMul %ad, %bd : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  return %m : tensor<3x4xf32>
}

// -----

// Not exact, not folded: the bias's scale is not x_scale * w_scale, and 16-bit weights.
// CHECK-LABEL: func.func @bias_scale_mismatch
// CHECK: onnx.DequantizeLinear
// CHECK: onnx.Conv {{.*}} -> tensor<1x1x2x2xf32>
// CHECK: onnx.QuantizeLinear
// CHECK-LABEL: func.func @weights_16bit
// CHECK: onnx.MatMul {{.*}} -> tensor<2x2xf32>
// CHECK: onnx.QuantizeLinear
func.func @bias_scale_mismatch(%x: tensor<1x1x2x2xui8>) -> tensor<1x1x2x2xui8> {
  %none = onnx.NoValue : () -> none
  %s = onnx.Constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %wq = onnx.Constant {value = dense<3> : tensor<1x1x1x1xi8>} : () -> tensor<1x1x1x1xi8>
  %bq = onnx.Constant {value = dense<5> : tensor<1xi32>} : () -> tensor<1xi32>
  %bs = onnx.Constant {value = dense<0.3> : tensor<f32>} : () -> tensor<f32>
  %xd = onnx.DequantizeLinear %x, %s, %none : (tensor<1x1x2x2xui8>, tensor<f32>, none) -> tensor<1x1x2x2xf32>
  %wd = onnx.DequantizeLinear %wq, %s, %none : (tensor<1x1x1x1xi8>, tensor<f32>, none) -> tensor<1x1x1x1xf32>
  %bd = onnx.DequantizeLinear %bq, %bs, %none : (tensor<1xi32>, tensor<f32>, none) -> tensor<1xf32>
  %c = onnx.Conv %xd, %wd, %bd : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  %q = onnx.QuantizeLinear %c, %s, %none : (tensor<1x1x2x2xf32>, tensor<f32>, none) -> tensor<1x1x2x2xui8>
  return %q : tensor<1x1x2x2xui8>
}
func.func @weights_16bit(%a: tensor<2x2xui8>, %b: tensor<2x2xi16>) -> tensor<2x2xui8> {
  %none = onnx.NoValue : () -> none
  %s = onnx.Constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %ad = onnx.DequantizeLinear %a, %s, %none : (tensor<2x2xui8>, tensor<f32>, none) -> tensor<2x2xf32>
  %bd = onnx.DequantizeLinear %b, %s, %none : (tensor<2x2xi16>, tensor<f32>, none) -> tensor<2x2xf32>
  %m = onnx.MatMul %ad, %bd : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %q = onnx.QuantizeLinear %m, %s, %none : (tensor<2x2xf32>, tensor<f32>, none) -> tensor<2x2xui8>
  return %q : tensor<2x2xui8>
}

// -----

// DQ -> Conv -> Clip(0, 6) -> Q (ReLU6): the Clip folds into the saturation
// bounds, its bounds quantized with y_scale 0.75 and y_zp 5: [0 / 0.75 + 5,
// 6 / 0.75 + 5] = [5, 13]. A Clip whose bound is not a constant stays, after
// the dequantized product.
// CHECK-LABEL: func.func @conv_relu6
// CHECK-DAG: %[[LO:.*]] = onnx.Constant {value = dense<5.000000e+00> : tensor<f32>}
// CHECK-DAG: %[[HI:.*]] = onnx.Constant {value = dense<1.300000e+01> : tensor<f32>}
// CHECK-NOT: onnx.DequantizeLinear
// CHECK: onnx.ConvInteger
// CHECK: onnx.Round
// CHECK: onnx.Clip %{{.*}}, %[[LO]], %[[HI]] : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x3x4x4xf32>
// CHECK: onnx.Cast {{.*}} {to = 2 : i64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xui8>
// CHECK-NOT: onnx.QuantizeLinear
// CHECK-LABEL: func.func @conv_clip_runtime_bound
// CHECK: onnx.ConvInteger
// CHECK: %[[D:.*]] = onnx.Mul
// CHECK: %[[C:.*]] = onnx.Clip %[[D]], %{{.*}}, %arg1
// CHECK: onnx.QuantizeLinear %[[C]]
func.func @conv_relu6(%x: tensor<1x2x4x4xui8>) -> tensor<1x3x4x4xui8> {
  %none = onnx.NoValue : () -> none
  %xs = onnx.Constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
  %wq = onnx.Constant {value = dense<[[[[1]], [[-2]]], [[[3]], [[4]]], [[[-5]], [[6]]]]> : tensor<3x2x1x1xi8>} : () -> tensor<3x2x1x1xi8>
  %ws = onnx.Constant {value = dense<[0.25, 0.125, 0.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  %ys = onnx.Constant {value = dense<0.75> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant {value = dense<5> : tensor<ui8>} : () -> tensor<ui8>
  %lo = onnx.Constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %hi = onnx.Constant {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
  %xd = onnx.DequantizeLinear %x, %xs, %xz : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %wd = onnx.DequantizeLinear %wq, %ws, %none {axis = 0 : i64} : (tensor<3x2x1x1xi8>, tensor<3xf32>, none) -> tensor<3x2x1x1xf32>
  %c = onnx.Conv %xd, %wd, %none : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, none) -> tensor<1x3x4x4xf32>
  %r = onnx.Clip %c, %lo, %hi : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x3x4x4xf32>
  %q = onnx.QuantizeLinear %r, %ys, %yz : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xui8>
  return %q : tensor<1x3x4x4xui8>
}
func.func @conv_clip_runtime_bound(%x: tensor<1x2x4x4xui8>, %hi: tensor<f32>) -> tensor<1x3x4x4xui8> {
  %none = onnx.NoValue : () -> none
  %xs = onnx.Constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
  %wq = onnx.Constant {value = dense<[[[[1]], [[-2]]], [[[3]], [[4]]], [[[-5]], [[6]]]]> : tensor<3x2x1x1xi8>} : () -> tensor<3x2x1x1xi8>
  %ws = onnx.Constant {value = dense<[0.25, 0.125, 0.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  %ys = onnx.Constant {value = dense<0.75> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant {value = dense<5> : tensor<ui8>} : () -> tensor<ui8>
  %lo = onnx.Constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %xd = onnx.DequantizeLinear %x, %xs, %xz : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %wd = onnx.DequantizeLinear %wq, %ws, %none {axis = 0 : i64} : (tensor<3x2x1x1xi8>, tensor<3xf32>, none) -> tensor<3x2x1x1xf32>
  %c = onnx.Conv %xd, %wd, %none : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, none) -> tensor<1x3x4x4xf32>
  %r = onnx.Clip %c, %lo, %hi : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x3x4x4xf32>
  %q = onnx.QuantizeLinear %r, %ys, %yz : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xui8>
  return %q : tensor<1x3x4x4xui8>
}

// -----

// DQ(a), DQ(b) -> Add -> Q (one 8-bit type, per-tensor constants, one shape):
// onnxruntime's QLinearAdd, fma(a, rA, fma(b, rB, F)) on the raw values with
// rA = 0.5 / 0.125 = 4, rB = 0.25 / 0.125 = 2 and F = 0 - fma(4, 3, 2 * 7) =
// -26, each fma a product and sum in f64 rounded to f32 once; then rounded
// half to even and saturated. The Relu before a zero point at the type's
// minimum (0) goes (a no-op after saturation; onnxruntime drops it too).
// CHECK-LABEL: func.func @add
// CHECK-NOT: onnx.DequantizeLinear
// CHECK-NOT: onnx.Relu
// CHECK-DAG: %[[RB:.*]] = onnx.Constant {value = dense<2.000000e+00> : tensor<f64>}
// CHECK-DAG: %[[F:.*]] = onnx.Constant {value = dense<-2.600000e+01> : tensor<f64>}
// CHECK-DAG: %[[RA:.*]] = onnx.Constant {value = dense<4.000000e+00> : tensor<f64>}
// CHECK: %[[B64:.*]] = onnx.Cast %arg1 {to = 11 : i64} : (tensor<1x4x2x2xui8>) -> tensor<1x4x2x2xf64>
// CHECK: %[[BR:.*]] = onnx.Mul %[[B64]], %[[RB]]
// CHECK: %[[T1:.*]] = onnx.Add %[[BR]], %[[F]]
// CHECK: %[[T1F:.*]] = onnx.Cast %[[T1]] {to = 1 : i64} : (tensor<1x4x2x2xf64>) -> tensor<1x4x2x2xf32>
// CHECK: %[[A64:.*]] = onnx.Cast %arg0 {to = 11 : i64}
// CHECK: %[[AR:.*]] = onnx.Mul %[[A64]], %[[RA]]
// CHECK: %[[T1D:.*]] = onnx.Cast %[[T1F]] {to = 11 : i64}
// CHECK: %[[T2:.*]] = onnx.Add %[[AR]], %[[T1D]]
// CHECK: %[[T2F:.*]] = onnx.Cast %[[T2]] {to = 1 : i64}
// CHECK: %[[R:.*]] = onnx.Round %[[T2F]]
// CHECK: onnx.Clip %[[R]]
// CHECK: onnx.Cast {{.*}} {to = 2 : i64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xui8>
// CHECK-NOT: onnx.QuantizeLinear
func.func @add(%a: tensor<1x4x2x2xui8>, %b: tensor<1x4x2x2xui8>) -> tensor<1x4x2x2xui8> {
  %sa = onnx.Constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %za = onnx.Constant {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
  %sb = onnx.Constant {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %zb = onnx.Constant {value = dense<7> : tensor<ui8>} : () -> tensor<ui8>
  %sc = onnx.Constant {value = dense<0.125> : tensor<f32>} : () -> tensor<f32>
  %zc = onnx.Constant {value = dense<0> : tensor<ui8>} : () -> tensor<ui8>
  %ad = onnx.DequantizeLinear %a, %sa, %za : (tensor<1x4x2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x2x2xf32>
  %bd = onnx.DequantizeLinear %b, %sb, %zb : (tensor<1x4x2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x2x2xf32>
  %s = onnx.Add %ad, %bd : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %r = onnx.Relu %s : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %q = onnx.QuantizeLinear %r, %sc, %zc : (tensor<1x4x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x2x2xui8>
  return %q : tensor<1x4x2x2xui8>
}

// -----

// Left as written: a per-channel broadcast operand (onnxruntime's QLinearAdd
// reads it in one-element spans, whose scalar path rounds differently), a Relu before a zero point above the minimum
// (onnxruntime keeps it, and the Add, unfused), operands of another type.
// CHECK-LABEL: func.func @add_kept
// CHECK-COUNT-2: onnx.DequantizeLinear
// CHECK: onnx.Add
// CHECK: onnx.QuantizeLinear
// CHECK-COUNT-2: onnx.DequantizeLinear
// CHECK: onnx.Add
// CHECK: onnx.Relu
// CHECK: onnx.QuantizeLinear
// CHECK-COUNT-2: onnx.DequantizeLinear
// CHECK: onnx.Add
// CHECK: onnx.QuantizeLinear
func.func @add_kept(%a: tensor<1x4x2x2xui8>, %b: tensor<1x4x1x1xui8>, %c: tensor<1x4x2x2xi8>) -> (tensor<1x4x2x2xui8>, tensor<1x4x2x2xui8>, tensor<1x4x2x2xui8>) {
  %s1 = onnx.Constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %z1 = onnx.Constant {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
  %z2 = onnx.Constant {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ad = onnx.DequantizeLinear %a, %s1, %z1 : (tensor<1x4x2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x2x2xf32>
  %bd = onnx.DequantizeLinear %b, %s1, %z1 : (tensor<1x4x1x1xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x1x1xf32>
  %s = onnx.Add %ad, %bd : (tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x2x2xf32>
  %q = onnx.QuantizeLinear %s, %s1, %z1 : (tensor<1x4x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x2x2xui8>
  %ad2 = onnx.DequantizeLinear %a, %s1, %z1 : (tensor<1x4x2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x2x2xf32>
  %ad3 = onnx.DequantizeLinear %a, %s1, %z1 : (tensor<1x4x2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x2x2xf32>
  %t = onnx.Add %ad2, %ad3 : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %r = onnx.Relu %t : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %q2 = onnx.QuantizeLinear %r, %s1, %z1 : (tensor<1x4x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x2x2xui8>
  %ad4 = onnx.DequantizeLinear %a, %s1, %z1 : (tensor<1x4x2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x2x2xf32>
  %cd = onnx.DequantizeLinear %c, %s1, %z2 : (tensor<1x4x2x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4x2x2xf32>
  %u = onnx.Add %ad4, %cd : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %q3 = onnx.QuantizeLinear %u, %s1, %z1 : (tensor<1x4x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x2x2xui8>
  return %q, %q2, %q3 : tensor<1x4x2x2xui8>, tensor<1x4x2x2xui8>, tensor<1x4x2x2xui8>
}
