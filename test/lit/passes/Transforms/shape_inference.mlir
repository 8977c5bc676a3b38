// RUN: kiln-opt %s -kiln-shape-inference -split-input-file | FileCheck %s

// Every op starts with `none` results (as the importer creates them); the pass sets them
// to static tensor types and updates the function's result types.

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME: -> tensor<2x3xf32>
// CHECK: onnx.Add {{.*}} -> tensor<2x3xf32>
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> none {
  %0 = "onnx.Add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> none
  return %0 : none
}

// -----

// CHECK-LABEL: func.func @binary_multidirectional
// CHECK: onnx.Sub {{.*}} -> tensor<4x2x3xf32>
// CHECK: onnx.Mul {{.*}} -> tensor<4x2x3xf32>
// CHECK: onnx.Div {{.*}} -> tensor<4x2x3xf32>
// CHECK: onnx.Pow {{.*}} -> tensor<4x2x3xf32>
func.func @binary_multidirectional(%a: tensor<4x1x3xf32>, %b: tensor<2x1xf32>, %e: tensor<i64>) -> (none, none, none, none) {
  %0 = "onnx.Sub"(%a, %b) : (tensor<4x1x3xf32>, tensor<2x1xf32>) -> none
  %1 = "onnx.Mul"(%b, %a) : (tensor<2x1xf32>, tensor<4x1x3xf32>) -> none
  %2 = "onnx.Div"(%0, %1) : (none, none) -> none
  %3 = "onnx.Pow"(%2, %e) : (none, tensor<i64>) -> none
  return %0, %1, %2, %3 : none, none, none, none
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK: onnx.Sqrt {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Erf {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Relu {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Sigmoid {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Tanh {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Identity {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Abs {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Neg {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Exp {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Log {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Ceil {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Floor {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Round {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Sin {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Cos {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Reciprocal {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Sign {{.*}} -> tensor<2x5xf32>
// CHECK: onnx.Not {{.*}} -> tensor<2x5xi1>
// CHECK: onnx.IsNaN {{.*}} -> tensor<2x5xi1>
func.func @unary(%x: tensor<2x5xf32>, %b: tensor<2x5xi1>) {
  %0 = "onnx.Sqrt"(%x) : (tensor<2x5xf32>) -> none
  %1 = "onnx.Erf"(%0) : (none) -> none
  %2 = "onnx.Relu"(%1) : (none) -> none
  %3 = "onnx.Sigmoid"(%2) : (none) -> none
  %4 = "onnx.Tanh"(%3) : (none) -> none
  %5 = "onnx.Identity"(%4) : (none) -> none
  %6 = "onnx.Abs"(%x) : (tensor<2x5xf32>) -> none
  %7 = "onnx.Neg"(%x) : (tensor<2x5xf32>) -> none
  %8 = "onnx.Exp"(%x) : (tensor<2x5xf32>) -> none
  %9 = "onnx.Log"(%x) : (tensor<2x5xf32>) -> none
  %10 = "onnx.Ceil"(%x) : (tensor<2x5xf32>) -> none
  %11 = "onnx.Floor"(%x) : (tensor<2x5xf32>) -> none
  %12 = "onnx.Round"(%x) : (tensor<2x5xf32>) -> none
  %13 = "onnx.Sin"(%x) : (tensor<2x5xf32>) -> none
  %14 = "onnx.Cos"(%x) : (tensor<2x5xf32>) -> none
  %15 = "onnx.Reciprocal"(%x) : (tensor<2x5xf32>) -> none
  %16 = "onnx.Sign"(%x) : (tensor<2x5xf32>) -> none
  %17 = "onnx.Not"(%b) : (tensor<2x5xi1>) -> none
  %18 = "onnx.IsNaN"(%x) : (tensor<2x5xf32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @activations
// CHECK: onnx.LeakyRelu {{.*}} -> tensor<3x4xf16>
// CHECK: onnx.Elu {{.*}} -> tensor<3x4xf16>
// CHECK: onnx.Selu {{.*}} -> tensor<3x4xf16>
// CHECK: onnx.HardSigmoid {{.*}} -> tensor<3x4xf16>
// CHECK: onnx.HardSwish {{.*}} -> tensor<3x4xf16>
// CHECK: onnx.Softplus {{.*}} -> tensor<3x4xf16>
// CHECK: onnx.Softsign {{.*}} -> tensor<3x4xf16>
// CHECK: onnx.Gelu {{.*}} -> tensor<3x4xf16>
// CHECK: onnx.Celu {{.*}} -> tensor<3x4xf16>
// CHECK: onnx.Mish {{.*}} -> tensor<3x4xf16>
// CHECK: onnx.ThresholdedRelu {{.*}} -> tensor<3x4xf16>
// CHECK: onnx.PRelu {{.*}} -> tensor<3x4xf16>
func.func @activations(%x: tensor<3x4xf16>, %slope: tensor<4xf16>) {
  %0 = "onnx.LeakyRelu"(%x) {alpha = 0.1 : f32} : (tensor<3x4xf16>) -> none
  %1 = "onnx.Elu"(%x) : (tensor<3x4xf16>) -> none
  %2 = "onnx.Selu"(%x) : (tensor<3x4xf16>) -> none
  %3 = "onnx.HardSigmoid"(%x) : (tensor<3x4xf16>) -> none
  %4 = "onnx.HardSwish"(%x) : (tensor<3x4xf16>) -> none
  %5 = "onnx.Softplus"(%x) : (tensor<3x4xf16>) -> none
  %6 = "onnx.Softsign"(%x) : (tensor<3x4xf16>) -> none
  %7 = "onnx.Gelu"(%x) : (tensor<3x4xf16>) -> none
  %8 = "onnx.Celu"(%x) : (tensor<3x4xf16>) -> none
  %9 = "onnx.Mish"(%x) : (tensor<3x4xf16>) -> none
  %10 = "onnx.ThresholdedRelu"(%x) : (tensor<3x4xf16>) -> none
  %11 = "onnx.PRelu"(%x, %slope) : (tensor<3x4xf16>, tensor<4xf16>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @clip
// CHECK: onnx.Clip {{.*}} -> tensor<2x3xf32>
// CHECK: onnx.Clip {{.*}} -> tensor<2x3xf32>
func.func @clip(%x: tensor<2x3xf32>, %lo: tensor<f32>, %hi: tensor<f32>) {
  %none = onnx.NoValue : () -> none
  %0 = "onnx.Clip"(%x, %lo, %hi) : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> none
  %1 = "onnx.Clip"(%x, %none, %hi) : (tensor<2x3xf32>, none, tensor<f32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @compare_logic
// CHECK: onnx.Equal {{.*}} -> tensor<2x3xi1>
// CHECK: onnx.Less {{.*}} -> tensor<2x3xi1>
// CHECK: onnx.Greater {{.*}} -> tensor<2x3xi1>
// CHECK: onnx.LessOrEqual {{.*}} -> tensor<2x3xi1>
// CHECK: onnx.GreaterOrEqual {{.*}} -> tensor<2x3xi1>
// CHECK: onnx.And {{.*}} -> tensor<2x3xi1>
// CHECK: onnx.Or {{.*}} -> tensor<2x3xi1>
// CHECK: onnx.Xor {{.*}} -> tensor<2x3xi1>
// CHECK: onnx.Where {{.*}} -> tensor<2x3xf32>
func.func @compare_logic(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) {
  %0 = "onnx.Equal"(%a, %b) : (tensor<2x3xf32>, tensor<1x3xf32>) -> none
  %1 = "onnx.Less"(%a, %b) : (tensor<2x3xf32>, tensor<1x3xf32>) -> none
  %2 = "onnx.Greater"(%a, %b) : (tensor<2x3xf32>, tensor<1x3xf32>) -> none
  %3 = "onnx.LessOrEqual"(%a, %b) : (tensor<2x3xf32>, tensor<1x3xf32>) -> none
  %4 = "onnx.GreaterOrEqual"(%a, %b) : (tensor<2x3xf32>, tensor<1x3xf32>) -> none
  %5 = "onnx.And"(%0, %1) : (none, none) -> none
  %6 = "onnx.Or"(%0, %1) : (none, none) -> none
  %7 = "onnx.Xor"(%0, %1) : (none, none) -> none
  %8 = "onnx.Where"(%7, %a, %b) : (none, tensor<2x3xf32>, tensor<1x3xf32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @variadic
// CHECK: onnx.Max {{.*}} -> tensor<2x3x4xf32>
// CHECK: onnx.Min {{.*}} -> tensor<2x3x4xf32>
// CHECK: onnx.Sum {{.*}} -> tensor<4xf32>
// CHECK: onnx.Mean {{.*}} -> tensor<3x4xf32>
func.func @variadic(%a: tensor<2x1x4xf32>, %b: tensor<3x1xf32>, %c: tensor<4xf32>) {
  %0 = "onnx.Max"(%a, %b, %c) : (tensor<2x1x4xf32>, tensor<3x1xf32>, tensor<4xf32>) -> none
  %1 = "onnx.Min"(%a, %b, %c) : (tensor<2x1x4xf32>, tensor<3x1xf32>, tensor<4xf32>) -> none
  %2 = "onnx.Sum"(%c) : (tensor<4xf32>) -> none
  %3 = "onnx.Mean"(%b, %c) : (tensor<3x1xf32>, tensor<4xf32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @cast
// CHECK: onnx.Cast {{.*}} -> tensor<2x3xf32>
// CHECK: onnx.Cast {{.*}} -> tensor<2x3xui8>
// CHECK: onnx.Cast {{.*}} -> tensor<2x3xi8>
// CHECK: onnx.Cast {{.*}} -> tensor<2x3xui16>
// CHECK: onnx.Cast {{.*}} -> tensor<2x3xi16>
// CHECK: onnx.Cast {{.*}} -> tensor<2x3xi32>
// CHECK: onnx.Cast {{.*}} -> tensor<2x3xi64>
// CHECK: onnx.Cast {{.*}} -> tensor<2x3xi1>
// CHECK: onnx.Cast {{.*}} -> tensor<2x3xf16>
// CHECK: onnx.Cast {{.*}} -> tensor<2x3xf64>
// CHECK: onnx.Cast {{.*}} -> tensor<2x3xui32>
// CHECK: onnx.Cast {{.*}} -> tensor<2x3xui64>
// CHECK: onnx.Cast {{.*}} -> tensor<2x3xbf16>
// CHECK: onnx.CastLike {{.*}} -> tensor<2x3xi32>
func.func @cast(%x: tensor<2x3xi64>, %t: tensor<1xi32>) {
  %1 = "onnx.Cast"(%x) {to = 1 : i64} : (tensor<2x3xi64>) -> none
  %2 = "onnx.Cast"(%x) {to = 2 : i64} : (tensor<2x3xi64>) -> none
  %3 = "onnx.Cast"(%x) {to = 3 : i64} : (tensor<2x3xi64>) -> none
  %4 = "onnx.Cast"(%x) {to = 4 : i64} : (tensor<2x3xi64>) -> none
  %5 = "onnx.Cast"(%x) {to = 5 : i64} : (tensor<2x3xi64>) -> none
  %6 = "onnx.Cast"(%x) {to = 6 : i64} : (tensor<2x3xi64>) -> none
  %7 = "onnx.Cast"(%x) {to = 7 : i64} : (tensor<2x3xi64>) -> none
  %9 = "onnx.Cast"(%x) {to = 9 : i64} : (tensor<2x3xi64>) -> none
  %10 = "onnx.Cast"(%x) {to = 10 : i64} : (tensor<2x3xi64>) -> none
  %11 = "onnx.Cast"(%x) {to = 11 : i64} : (tensor<2x3xi64>) -> none
  %12 = "onnx.Cast"(%x) {to = 12 : i64} : (tensor<2x3xi64>) -> none
  %13 = "onnx.Cast"(%x) {to = 13 : i64} : (tensor<2x3xi64>) -> none
  %16 = "onnx.Cast"(%x) {to = 16 : i64} : (tensor<2x3xi64>) -> none
  %17 = "onnx.CastLike"(%x, %t) : (tensor<2x3xi64>, tensor<1xi32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @softmax_family
// CHECK: onnx.Softmax {{.*}} -> tensor<2x3x4xf32>
// CHECK: onnx.LogSoftmax {{.*}} -> tensor<2x3x4xf32>
// CHECK: onnx.Hardmax {{.*}} -> tensor<2x3x4xf32>
func.func @softmax_family(%x: tensor<2x3x4xf32>) {
  %0 = "onnx.Softmax"(%x) {axis = 1 : i64} : (tensor<2x3x4xf32>) -> none
  %1 = "onnx.LogSoftmax"(%x) : (tensor<2x3x4xf32>) -> none
  %2 = "onnx.Hardmax"(%x) {axis = -3 : i64} : (tensor<2x3x4xf32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @dropout
// CHECK: onnx.Dropout {{.*}} -> (tensor<2x3xf32>, tensor<2x3xi1>)
func.func @dropout(%x: tensor<2x3xf32>) {
  %none = onnx.NoValue : () -> none
  %0:2 = "onnx.Dropout"(%x, %none, %none) : (tensor<2x3xf32>, none, none) -> (none, none)
  return
}

// -----

// CHECK-LABEL: func.func @cumsum_trilu_eyelike
// CHECK: onnx.CumSum {{.*}} -> tensor<3x4xf32>
// CHECK: onnx.Trilu {{.*}} -> tensor<3x4xf32>
// CHECK: onnx.EyeLike {{.*}} -> tensor<3x4xi32>
// CHECK: onnx.EyeLike {{.*}} -> tensor<3x4xf32>
func.func @cumsum_trilu_eyelike(%x: tensor<3x4xf32>, %axis: tensor<i64>) {
  %none = onnx.NoValue : () -> none
  %0 = "onnx.CumSum"(%x, %axis) : (tensor<3x4xf32>, tensor<i64>) -> none
  %1 = "onnx.Trilu"(%x, %none) : (tensor<3x4xf32>, none) -> none
  %2 = "onnx.EyeLike"(%x) {dtype = 6 : i64} : (tensor<3x4xf32>) -> none
  %3 = "onnx.EyeLike"(%x) : (tensor<3x4xf32>) -> none
  return
}

//===----------------------------------------------------------------------===//
// Linear
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @matmul
// CHECK: onnx.MatMul {{.*}} -> tensor<2x3xf32>
// CHECK: onnx.MatMul {{.*}} -> tensor<5x2x3xf32>
// CHECK: onnx.MatMul {{.*}} -> tensor<4x1x2x3xf32>
// CHECK: onnx.MatMul {{.*}} -> tensor<4x7x2x1xf32>
// CHECK: onnx.MatMul {{.*}} -> tensor<2xf32>
// CHECK: onnx.MatMul {{.*}} -> tensor<3xf32>
// CHECK: onnx.MatMul {{.*}} -> tensor<f32>
// CHECK: onnx.MatMul {{.*}} -> tensor<5x2xf32>
func.func @matmul(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %ba: tensor<5x2x4xf32>, %bb: tensor<4x1x4x3xf32>, %bc: tensor<7x3x1xf32>, %v: tensor<4xf32>, %bv: tensor<5x2x4xf32>) {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x4xf32>, tensor<4x3xf32>) -> none
  %1 = "onnx.MatMul"(%ba, %b) : (tensor<5x2x4xf32>, tensor<4x3xf32>) -> none
  %2 = "onnx.MatMul"(%a, %bb) : (tensor<2x4xf32>, tensor<4x1x4x3xf32>) -> none
  %3 = "onnx.MatMul"(%2, %bc) : (none, tensor<7x3x1xf32>) -> none
  %4 = "onnx.MatMul"(%a, %v) : (tensor<2x4xf32>, tensor<4xf32>) -> none
  %5 = "onnx.MatMul"(%v, %b) : (tensor<4xf32>, tensor<4x3xf32>) -> none
  %6 = "onnx.MatMul"(%v, %v) : (tensor<4xf32>, tensor<4xf32>) -> none
  %7 = "onnx.MatMul"(%bv, %v) : (tensor<5x2x4xf32>, tensor<4xf32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @gemm
// CHECK: onnx.Gemm {{.*}} -> tensor<2x3xf32>
// CHECK: onnx.Gemm {{.*}} -> tensor<2x3xf32>
// CHECK: onnx.Gemm {{.*}} -> tensor<4x4xf32>
func.func @gemm(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %bt: tensor<3x4xf32>, %c: tensor<3xf32>) {
  %none = onnx.NoValue : () -> none
  %0 = "onnx.Gemm"(%a, %b, %c) : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> none
  %1 = "onnx.Gemm"(%a, %bt, %none) {transB = 1 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>, none) -> none
  %2 = "onnx.Gemm"(%a, %a, %none) {transA = 1 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>, none) -> none
  return
}

// -----

// Einsum: explicit and implicit outputs (implicit: the ellipsis dims, then the
// letters that appear once in ASCII order), diagonals, a size-1 ellipsis dim
// broadcasting.
// CHECK-LABEL: func.func @einsum
// CHECK: onnx.Einsum {{.*}} -> tensor<5x2x4xf32>
// CHECK: onnx.Einsum {{.*}} -> tensor<4x2xf32>
// CHECK: onnx.Einsum {{.*}} -> tensor<3x5xf32>
// CHECK: onnx.Einsum {{.*}} -> tensor<f32>
// CHECK: onnx.Einsum {{.*}} -> tensor<5x2x4xf32>
func.func @einsum(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>, %d: tensor<3x5x5xf32>, %v: tensor<3xf32>, %b1: tensor<1x3x4xf32>) {
  %0 = "onnx.Einsum"(%a, %b) {equation = "bij, bjk -> bik"} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> none
  %1 = "onnx.Einsum"(%a, %b) {equation = "bZj,bjA"} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> none
  %2 = "onnx.Einsum"(%d) {equation = "...ii->...i"} : (tensor<3x5x5xf32>) -> none
  %3 = "onnx.Einsum"(%v, %v) {equation = "i,i"} : (tensor<3xf32>, tensor<3xf32>) -> none
  %4 = "onnx.Einsum"(%a, %b1) {equation = "...ij,...jk->...ik"} : (tensor<5x2x3xf32>, tensor<1x3x4xf32>) -> none
  return
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @conv
// CHECK: onnx.Conv {{.*}} -> tensor<1x8x222x222xf32>
// CHECK: onnx.Conv {{.*}} -> tensor<1x8x112x112xf32>
// CHECK: onnx.Conv {{.*}} -> tensor<1x8x112x112xf32>
// CHECK: onnx.Conv {{.*}} -> tensor<1x8x112x112xf32>
// CHECK: onnx.Conv {{.*}} -> tensor<1x8x111x111xf32>
// CHECK: onnx.Conv {{.*}} -> tensor<1x8x220x218xf32>
func.func @conv(%x: tensor<1x3x224x224xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) {
  %none = onnx.NoValue : () -> none
  // NOTSET, no pads.
  %0 = "onnx.Conv"(%x, %w, %b) {kernel_shape = [3, 3]} : (tensor<1x3x224x224xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> none
  // Explicit pads and strides.
  %1 = "onnx.Conv"(%x, %w, %none) {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x224x224xf32>, tensor<8x3x3x3xf32>, none) -> none
  // SAME_UPPER / SAME_LOWER: ceil(224 / 2).
  %2 = "onnx.Conv"(%x, %w, %b) {auto_pad = "SAME_UPPER", strides = [2, 2]} : (tensor<1x3x224x224xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> none
  %3 = "onnx.Conv"(%x, %w, %b) {auto_pad = "SAME_LOWER", strides = [2, 2]} : (tensor<1x3x224x224xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> none
  // VALID: floor((224 - 3) / 2) + 1.
  %4 = "onnx.Conv"(%x, %w, %b) {auto_pad = "VALID", strides = [2, 2]} : (tensor<1x3x224x224xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> none
  // Dilations: effective kernel 5 and 7.
  %5 = "onnx.Conv"(%x, %w, %b) {dilations = [2, 3]} : (tensor<1x3x224x224xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @conv_group
// CHECK: onnx.Conv {{.*}} -> tensor<2x32x16x16xf32>
// CHECK: onnx.Conv {{.*}} -> tensor<2x16x14xf32>
func.func @conv_group(%x: tensor<2x32x16x16xf32>, %dw: tensor<32x1x3x3xf32>, %x1: tensor<2x8x16xf32>, %w1: tensor<16x4x3xf32>) {
  %none = onnx.NoValue : () -> none
  %0 = "onnx.Conv"(%x, %dw, %none) {group = 32 : i64, pads = [1, 1, 1, 1]} : (tensor<2x32x16x16xf32>, tensor<32x1x3x3xf32>, none) -> none
  %1 = "onnx.Conv"(%x1, %w1, %none) {group = 2 : i64} : (tensor<2x8x16xf32>, tensor<16x4x3xf32>, none) -> none
  return
}

// -----

// CHECK-LABEL: func.func @conv_transpose
// CHECK: onnx.ConvTranspose {{.*}} -> tensor<1x4x10x10xf32>
// CHECK: onnx.ConvTranspose {{.*}} -> tensor<1x4x9x9xf32>
// CHECK: onnx.ConvTranspose {{.*}} -> tensor<1x4x8x8xf32>
func.func @conv_transpose(%x: tensor<1x8x4x4xf32>, %w: tensor<8x4x3x3xf32>) {
  %none = onnx.NoValue : () -> none
  %0 = "onnx.ConvTranspose"(%x, %w, %none) {strides = [2, 2], output_padding = [1, 1]} : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>, none) -> none
  %1 = "onnx.ConvTranspose"(%x, %w, %none) {strides = [2, 2]} : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>, none) -> none
  %2 = "onnx.ConvTranspose"(%x, %w, %none) {strides = [2, 2], auto_pad = "SAME_UPPER"} : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>, none) -> none
  return
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @maxpool
// CHECK: onnx.MaxPool {{.*}} -> (tensor<1x64x56x56xf32>, tensor<1x64x56x56xi64>)
// CHECK: onnx.MaxPool {{.*}} -> (tensor<1x64x56x56xf32>, tensor<1x64x56x56xi64>)
// CHECK: onnx.MaxPool {{.*}} -> (tensor<1x64x55x55xf32>, tensor<1x64x55x55xi64>)
// CHECK: onnx.MaxPool {{.*}} -> (tensor<1x64x56x56xf32>, tensor<1x64x56x56xi64>)
// CHECK: onnx.MaxPool {{.*}} -> (tensor<1x64x55x55xf32>, tensor<1x64x55x55xi64>)
// CHECK: onnx.MaxPool {{.*}} -> (tensor<1x64x54x54xf32>, tensor<1x64x54x54xi64>)
func.func @maxpool(%x: tensor<1x64x112x112xf32>) {
  // ResNet stem: k3 s2 p1: floor((114 - 3) / 2) + 1 = 56.
  %0:2 = "onnx.MaxPool"(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x64x112x112xf32>) -> (none, none)
  %1:2 = "onnx.MaxPool"(%x) {kernel_shape = [3, 3], auto_pad = "SAME_UPPER", strides = [2, 2]} : (tensor<1x64x112x112xf32>) -> (none, none)
  // floor((112 - 3) / 2) + 1 = 55
  %2:2 = "onnx.MaxPool"(%x) {kernel_shape = [3, 3], strides = [2, 2]} : (tensor<1x64x112x112xf32>) -> (none, none)
  // ceil_mode: ceil((112 - 3) / 2) + 1 = 56
  %3:2 = "onnx.MaxPool"(%x) {kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1 : i64} : (tensor<1x64x112x112xf32>) -> (none, none)
  %4:2 = "onnx.MaxPool"(%x) {kernel_shape = [3, 3], strides = [2, 2], auto_pad = "VALID"} : (tensor<1x64x112x112xf32>) -> (none, none)
  // dilations: effective kernel 5: floor((112 - 5) / 2) + 1 = 54
  %5:2 = "onnx.MaxPool"(%x) {kernel_shape = [3, 3], strides = [2, 2], dilations = [2, 2]} : (tensor<1x64x112x112xf32>) -> (none, none)
  return
}

// -----

// The last window of a ceil_mode pool must start inside the input or the begin padding
// (as ONNX and onnxruntime do): ceil((5 + 2 - 2) / 2) + 1 = 4, but window 3 would start
// at 6 >= 5 + 1, so 3.
// CHECK-LABEL: func.func @maxpool_ceil_mode_last_window
// CHECK: onnx.MaxPool {{.*}} -> (tensor<1x1x3xf32>, tensor<1x1x3xi64>)
// CHECK: onnx.AveragePool {{.*}} -> tensor<1x1x3xf32>
func.func @maxpool_ceil_mode_last_window(%x: tensor<1x1x5xf32>) {
  %0:2 = "onnx.MaxPool"(%x) {kernel_shape = [2], pads = [1, 1], strides = [2], ceil_mode = 1 : i64} : (tensor<1x1x5xf32>) -> (none, none)
  %1 = "onnx.AveragePool"(%x) {kernel_shape = [2], pads = [1, 1], strides = [2], ceil_mode = 1 : i64} : (tensor<1x1x5xf32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @avgpool
// CHECK: onnx.AveragePool {{.*}} -> tensor<1x16x4x4xf32>
// CHECK: onnx.AveragePool {{.*}} -> tensor<1x16x3x3xf32>
// CHECK: onnx.GlobalAveragePool {{.*}} -> tensor<1x16x1x1xf32>
// CHECK: onnx.GlobalMaxPool {{.*}} -> tensor<1x16x1x1xf32>
// CHECK: onnx.LpPool {{.*}} -> tensor<1x16x4x4xf32>
func.func @avgpool(%x: tensor<1x16x8x8xf32>) {
  %0 = "onnx.AveragePool"(%x) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x16x8x8xf32>) -> none
  %1 = "onnx.AveragePool"(%x) {kernel_shape = [3, 3], strides = [2, 2], auto_pad = "VALID"} : (tensor<1x16x8x8xf32>) -> none
  %2 = "onnx.GlobalAveragePool"(%x) : (tensor<1x16x8x8xf32>) -> none
  %3 = "onnx.GlobalMaxPool"(%x) : (tensor<1x16x8x8xf32>) -> none
  %4 = "onnx.LpPool"(%x) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x16x8x8xf32>) -> none
  return
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @batchnorm
// CHECK: onnx.BatchNormalization {{.*}} -> (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
func.func @batchnorm(%x: tensor<2x4x5x5xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %0:3 = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (none, none, none)
  return
}

// -----

// CHECK-LABEL: func.func @layernorm
// CHECK: onnx.LayerNormalization {{.*}} -> (tensor<2x5x8xf16>, tensor<2x5x1xf32>, tensor<2x5x1xf32>)
// CHECK: onnx.LayerNormalization {{.*}} -> (tensor<2x5x8xf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
func.func @layernorm(%x: tensor<2x5x8xf16>, %s: tensor<8xf16>, %b: tensor<8xf16>, %s2: tensor<5x8xf16>) {
  %none = onnx.NoValue : () -> none
  %0:3 = "onnx.LayerNormalization"(%x, %s, %b) : (tensor<2x5x8xf16>, tensor<8xf16>, tensor<8xf16>) -> (none, none, none)
  %1:3 = "onnx.LayerNormalization"(%x, %s2, %none) {axis = 1 : i64} : (tensor<2x5x8xf16>, tensor<5x8xf16>, none) -> (none, none, none)
  return
}

// -----

// CHECK-LABEL: func.func @other_norms
// CHECK: onnx.InstanceNormalization {{.*}} -> tensor<2x4x5x5xf32>
// CHECK: onnx.GroupNormalization {{.*}} -> tensor<2x4x5x5xf32>
// CHECK: onnx.LpNormalization {{.*}} -> tensor<2x4x5x5xf32>
func.func @other_norms(%x: tensor<2x4x5x5xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) {
  %0 = "onnx.InstanceNormalization"(%x, %s, %b) : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>) -> none
  %1 = "onnx.GroupNormalization"(%x, %s, %b) {num_groups = 2 : i64} : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>) -> none
  %2 = "onnx.LpNormalization"(%x) {axis = 1 : i64} : (tensor<2x4x5x5xf32>) -> none
  return
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @flatten
// CHECK: onnx.Flatten {{.*}} -> tensor<2x60xf32>
// CHECK: onnx.Flatten {{.*}} -> tensor<1x120xf32>
// CHECK: onnx.Flatten {{.*}} -> tensor<24x5xf32>
// CHECK: onnx.Flatten {{.*}} -> tensor<120x1xf32>
func.func @flatten(%x: tensor<2x3x4x5xf32>) {
  %0 = "onnx.Flatten"(%x) : (tensor<2x3x4x5xf32>) -> none
  %1 = "onnx.Flatten"(%x) {axis = 0 : i64} : (tensor<2x3x4x5xf32>) -> none
  %2 = "onnx.Flatten"(%x) {axis = -1 : i64} : (tensor<2x3x4x5xf32>) -> none
  %3 = "onnx.Flatten"(%x) {axis = 4 : i64} : (tensor<2x3x4x5xf32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @concat
// CHECK: onnx.Concat {{.*}} -> tensor<2x7x4xf32>
// CHECK: onnx.Concat {{.*}} -> tensor<2x3x8xf32>
func.func @concat(%a: tensor<2x3x4xf32>, %b: tensor<2x4x4xf32>) {
  %0 = "onnx.Concat"(%a, %b) {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x4x4xf32>) -> none
  %1 = "onnx.Concat"(%a, %a) {axis = -1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @reshape
// CHECK: onnx.Reshape {{.*}} -> tensor<6x4xf32>
// CHECK: onnx.Reshape {{.*}} -> tensor<2x12xf32>
// CHECK: onnx.Reshape {{.*}} -> tensor<0x5xf32>
func.func @reshape(%x: tensor<2x3x4xf32>, %z: tensor<0x10xf32>) {
  %s0 = onnx.Constant {value = dense<[-1, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.Reshape"(%x, %s0) : (tensor<2x3x4xf32>, tensor<2xi64>) -> none
  // 0 copies the input dimension.
  %s1 = onnx.Constant {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %1 = "onnx.Reshape"(%x, %s1) : (tensor<2x3x4xf32>, tensor<2xi64>) -> none
  // allowzero: 0 is a zero dimension.
  %s2 = onnx.Constant {value = dense<[0, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %2 = "onnx.Reshape"(%z, %s2) {allowzero = 1 : i64} : (tensor<0x10xf32>, tensor<2xi64>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK: onnx.Transpose {{.*}} -> tensor<4x3x2xf32>
// CHECK: onnx.Transpose {{.*}} -> tensor<2x4x3xf32>
func.func @transpose(%x: tensor<2x3x4xf32>) {
  %0 = "onnx.Transpose"(%x) : (tensor<2x3x4xf32>) -> none
  %1 = "onnx.Transpose"(%x) {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @split
// CHECK: onnx.Split {{.*}} -> (tensor<2x1xf32>, tensor<2x4xf32>)
// CHECK: onnx.Split {{.*}} -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1xf32>)
// CHECK: onnx.Split {{.*}} -> (tensor<1x5xf32>, tensor<1x5xf32>)
func.func @split(%x: tensor<2x5xf32>) {
  %none = onnx.NoValue : () -> none
  %sizes = onnx.Constant {value = dense<[1, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0:2 = "onnx.Split"(%x, %sizes) {axis = 1 : i64} : (tensor<2x5xf32>, tensor<2xi64>) -> (none, none)
  // num_outputs: ceil(5 / 3) = 2, the last one smaller.
  %1:3 = "onnx.Split"(%x, %none) {axis = -1 : i64, num_outputs = 3 : i64} : (tensor<2x5xf32>, none) -> (none, none, none)
  // Neither: as many equal parts as results.
  %2:2 = "onnx.Split"(%x, %none) : (tensor<2x5xf32>, none) -> (none, none)
  return
}

// -----

// CHECK-LABEL: func.func @gather
// CHECK: onnx.Gather {{.*}} -> tensor<2x3x4xf32>
// CHECK: onnx.Gather {{.*}} -> tensor<5xf32>
// CHECK: onnx.Gather {{.*}} -> tensor<f32>
// CHECK: onnx.GatherElements {{.*}} -> tensor<2x3xf32>
// CHECK: onnx.GatherND {{.*}} -> tensor<2x3x4xf32>
// CHECK: onnx.GatherND {{.*}} -> tensor<5xf32>
func.func @gather(%data: tensor<5x4xf32>, %idx: tensor<2x3xi64>, %s: tensor<i64>, %i2: tensor<2x3xi32>, %nd: tensor<2x1xi64>, %nd2: tensor<5x1xi64>) {
  %0 = "onnx.Gather"(%data, %idx) : (tensor<5x4xf32>, tensor<2x3xi64>) -> none
  %1 = "onnx.Gather"(%data, %s) {axis = 1 : i64} : (tensor<5x4xf32>, tensor<i64>) -> none
  %2 = "onnx.Gather"(%1, %s) : (none, tensor<i64>) -> none
  %3 = "onnx.GatherElements"(%data, %i2) {axis = 1 : i64} : (tensor<5x4xf32>, tensor<2x3xi32>) -> none
  %4 = "onnx.GatherND"(%0, %nd) : (none, tensor<2x1xi64>) -> none
  %5 = "onnx.GatherND"(%data, %nd2) {batch_dims = 1 : i64} : (tensor<5x4xf32>, tensor<5x1xi64>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @squeeze_unsqueeze
// CHECK: onnx.Unsqueeze {{.*}} -> tensor<1x3x1x4xf32>
// CHECK: onnx.Squeeze {{.*}} -> tensor<3x4xf32>
// CHECK: onnx.Squeeze {{.*}} -> tensor<3x1x4xf32>
func.func @squeeze_unsqueeze(%x: tensor<3x4xf32>) {
  %none = onnx.NoValue : () -> none
  %axes = onnx.Constant {value = dense<[0, -2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.Unsqueeze"(%x, %axes) : (tensor<3x4xf32>, tensor<2xi64>) -> none
  %1 = "onnx.Squeeze"(%0, %none) : (none, none) -> none
  %a0 = onnx.Constant {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %2 = "onnx.Squeeze"(%0, %a0) : (none, tensor<1xi64>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @slice
// CHECK: onnx.Slice {{.*}} -> tensor<2x3xf32>
// CHECK: onnx.Slice {{.*}} -> tensor<10x2xf32>
// CHECK: onnx.Slice {{.*}} -> tensor<4x5xf32>
// CHECK: onnx.Slice {{.*}} -> tensor<10x0xf32>
func.func @slice(%x: tensor<10x5xf32>) {
  %none = onnx.NoValue : () -> none
  %starts = onnx.Constant {value = dense<[1, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %ends = onnx.Constant {value = dense<[3, -2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.Slice"(%x, %starts, %ends, %none, %none) : (tensor<10x5xf32>, tensor<2xi64>, tensor<2xi64>, none, none) -> none
  // axes and steps; ends clamped (INT64_MAX).
  %s1 = onnx.Constant {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e1 = onnx.Constant {value = dense<[9223372036854775807]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a1 = onnx.Constant {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %st1 = onnx.Constant {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %1 = "onnx.Slice"(%x, %s1, %e1, %a1, %st1) : (tensor<10x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> none
  // Negative step: from the end, 9, 7, 5, 3.
  %s2 = onnx.Constant {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a2 = onnx.Constant {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %st2 = onnx.Constant {value = dense<[-2]> : tensor<1xi32>} : () -> tensor<1xi32>
  %e3 = onnx.Constant {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %2 = "onnx.Slice"(%x, %s2, %e3, %a2, %st2) : (tensor<10x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi32>) -> none
  // Empty: start >= end.
  %3 = "onnx.Slice"(%x, %e3, %s1, %s1, %none) : (tensor<10x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> none
  return
}

// -----

// CHECK-LABEL: func.func @shape_size
// CHECK: onnx.Shape {{.*}} -> tensor<4xi64>
// CHECK: onnx.Shape {{.*}} -> tensor<2xi64>
// CHECK: onnx.Shape {{.*}} -> tensor<1xi64>
// CHECK: onnx.Size {{.*}} -> tensor<i64>
func.func @shape_size(%x: tensor<2x3x4x5xf32>) {
  %0 = "onnx.Shape"(%x) : (tensor<2x3x4x5xf32>) -> none
  %1 = "onnx.Shape"(%x) {start = 1 : i64, end = -1 : i64} : (tensor<2x3x4x5xf32>) -> none
  %2 = "onnx.Shape"(%x) {start = -1 : i64} : (tensor<2x3x4x5xf32>) -> none
  %3 = "onnx.Size"(%x) : (tensor<2x3x4x5xf32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @expand_tile_pad
// CHECK: onnx.Expand {{.*}} -> tensor<2x3x4xf32>
// CHECK: onnx.Tile {{.*}} -> tensor<6x8xf32>
// CHECK: onnx.Pad {{.*}} -> tensor<5x7xf32>
// CHECK: onnx.Pad {{.*}} -> tensor<3x6xf32>
func.func @expand_tile_pad(%x: tensor<3x1xf32>, %y: tensor<3x4xf32>) {
  %none = onnx.NoValue : () -> none
  %shape = onnx.Constant {value = dense<[2, 1, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = "onnx.Expand"(%x, %shape) : (tensor<3x1xf32>, tensor<3xi64>) -> none
  %reps = onnx.Constant {value = dense<[2, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %1 = "onnx.Tile"(%y, %reps) : (tensor<3x4xf32>, tensor<2xi64>) -> none
  %pads = onnx.Constant {value = dense<[1, 2, 1, 1]> : tensor<4xi64>} : () -> tensor<4xi64>
  %2 = "onnx.Pad"(%y, %pads, %none, %none) : (tensor<3x4xf32>, tensor<4xi64>, none, none) -> none
  %p1 = onnx.Constant {value = dense<[1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %ax = onnx.Constant {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %3 = "onnx.Pad"(%y, %p1, %none, %ax) {mode = "reflect"} : (tensor<3x4xf32>, tensor<2xi64>, none, tensor<1xi64>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @space_depth
// CHECK: onnx.DepthToSpace {{.*}} -> tensor<1x2x6x8xf32>
// CHECK: onnx.SpaceToDepth {{.*}} -> tensor<1x8x3x4xf32>
func.func @space_depth(%x: tensor<1x8x3x4xf32>) {
  %0 = "onnx.DepthToSpace"(%x) {blocksize = 2 : i64} : (tensor<1x8x3x4xf32>) -> none
  %1 = "onnx.SpaceToDepth"(%0) {blocksize = 2 : i64} : (none) -> none
  return
}

// -----

// CHECK-LABEL: func.func @onehot_scatter
// CHECK: onnx.OneHot {{.*}} -> tensor<2x3x10xf32>
// CHECK: onnx.OneHot {{.*}} -> tensor<10x2x3xf32>
// CHECK: onnx.ScatterElements {{.*}} -> tensor<4x5xf32>
// CHECK: onnx.ScatterND {{.*}} -> tensor<4x5xf32>
func.func @onehot_scatter(%i: tensor<2x3xi64>, %v: tensor<2xf32>, %d: tensor<4x5xf32>, %u: tensor<2x3xf32>, %ndi: tensor<2x1xi64>, %ndu: tensor<2x5xf32>) {
  %depth = onnx.Constant {value = dense<10> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.OneHot"(%i, %depth, %v) : (tensor<2x3xi64>, tensor<i64>, tensor<2xf32>) -> none
  %1 = "onnx.OneHot"(%i, %depth, %v) {axis = 0 : i64} : (tensor<2x3xi64>, tensor<i64>, tensor<2xf32>) -> none
  %2 = "onnx.ScatterElements"(%d, %i, %u) : (tensor<4x5xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> none
  %3 = "onnx.ScatterND"(%d, %ndi, %ndu) : (tensor<4x5xf32>, tensor<2x1xi64>, tensor<2x5xf32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @resize
// CHECK: onnx.Resize {{.*}} -> tensor<1x3x16x24xf32>
// CHECK: onnx.Resize {{.*}} -> tensor<1x3x10x20xf32>
// CHECK: onnx.Resize {{.*}} -> tensor<1x3x10x15xf32>
func.func @resize(%x: tensor<1x3x8x12xf32>) {
  %none = onnx.NoValue : () -> none
  %scales = onnx.Constant {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = "onnx.Resize"(%x, %none, %scales, %none) : (tensor<1x3x8x12xf32>, none, tensor<4xf32>, none) -> none
  %sizes = onnx.Constant {value = dense<[10, 20]> : tensor<2xi64>} : () -> tensor<2xi64>
  %1 = "onnx.Resize"(%x, %none, %none, %sizes) {axes = [2, 3]} : (tensor<1x3x8x12xf32>, none, none, tensor<2xi64>) -> none
  // not_larger: scale = min(10 / 8, 20 / 12) = 1.25.
  %2 = "onnx.Resize"(%x, %none, %none, %sizes) {axes = [2, 3], keep_aspect_ratio_policy = "not_larger"} : (tensor<1x3x8x12xf32>, none, none, tensor<2xi64>) -> none
  return
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @reduce
// CHECK: onnx.ReduceSum {{.*}} -> tensor<2x1x4xf32>
// CHECK: onnx.ReduceMean {{.*}} -> tensor<2x4xf32>
// CHECK: onnx.ReduceMax {{.*}} -> tensor<1x1x1xf32>
// CHECK: onnx.ReduceMin {{.*}} -> tensor<f32>
// CHECK: onnx.ReduceProd {{.*}} -> tensor<2x3x4xf32>
// CHECK: onnx.ReduceL1 {{.*}} -> tensor<1x3x1xf32>
// CHECK: onnx.ReduceL2 {{.*}} -> tensor<2x1x4xf32>
// CHECK: onnx.ReduceLogSum {{.*}} -> tensor<2x1x4xf32>
// CHECK: onnx.ReduceLogSumExp {{.*}} -> tensor<2x1x4xf32>
// CHECK: onnx.ReduceSumSquare {{.*}} -> tensor<2x1x4xf32>
// CHECK: onnx.ArgMax {{.*}} -> tensor<2x1x4xi64>
// CHECK: onnx.ArgMin {{.*}} -> tensor<2x3xi64>
// CHECK: onnx.TopK {{.*}} -> (tensor<2x3x2xf32>, tensor<2x3x2xi64>)
func.func @reduce(%x: tensor<2x3x4xf32>) {
  %none = onnx.NoValue : () -> none
  %a1 = onnx.Constant {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a02 = onnx.Constant {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.ReduceSum"(%x, %a1) : (tensor<2x3x4xf32>, tensor<1xi64>) -> none
  %1 = "onnx.ReduceMean"(%x, %a1) {keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<1xi64>) -> none
  %2 = "onnx.ReduceMax"(%x, %none) : (tensor<2x3x4xf32>, none) -> none
  %3 = "onnx.ReduceMin"(%x, %none) {keepdims = 0 : i64} : (tensor<2x3x4xf32>, none) -> none
  %4 = "onnx.ReduceProd"(%x, %none) {noop_with_empty_axes = 1 : i64} : (tensor<2x3x4xf32>, none) -> none
  %5 = "onnx.ReduceL1"(%x, %a02) : (tensor<2x3x4xf32>, tensor<2xi64>) -> none
  %6 = "onnx.ReduceL2"(%x, %a1) : (tensor<2x3x4xf32>, tensor<1xi64>) -> none
  %7 = "onnx.ReduceLogSum"(%x, %a1) : (tensor<2x3x4xf32>, tensor<1xi64>) -> none
  %8 = "onnx.ReduceLogSumExp"(%x, %a1) : (tensor<2x3x4xf32>, tensor<1xi64>) -> none
  %9 = "onnx.ReduceSumSquare"(%x, %a1) : (tensor<2x3x4xf32>, tensor<1xi64>) -> none
  %10 = "onnx.ArgMax"(%x) {axis = 1 : i64} : (tensor<2x3x4xf32>) -> none
  %11 = "onnx.ArgMin"(%x) {axis = -1 : i64, keepdims = 0 : i64} : (tensor<2x3x4xf32>) -> none
  %k = onnx.Constant {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %12:2 = "onnx.TopK"(%x, %k) : (tensor<2x3x4xf32>, tensor<1xi64>) -> (none, none)
  return
}

// -----

// An axes input with no elements (a graph input of shape [0]) is the empty
// list: every axis reduced, or none with noop_with_empty_axes.
// CHECK-LABEL: func.func @reduce_empty_axes_input
// CHECK: onnx.ReduceSum {{.*}} -> tensor<1x1x1xf32>
// CHECK: onnx.ReduceMax {{.*}} -> tensor<f32>
// CHECK: onnx.ReduceSum {{.*}} -> tensor<2x3x4xf32>
func.func @reduce_empty_axes_input(%x: tensor<2x3x4xf32>, %axes: tensor<0xi64>) {
  %0 = "onnx.ReduceSum"(%x, %axes) : (tensor<2x3x4xf32>, tensor<0xi64>) -> none
  %1 = "onnx.ReduceMax"(%x, %axes) {keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<0xi64>) -> none
  %2 = "onnx.ReduceSum"(%x, %axes) {noop_with_empty_axes = 1 : i64} : (tensor<2x3x4xf32>, tensor<0xi64>) -> none
  return
}

// -----

// Axes read at run time: as many axes as the input holds; each reduced-or-kept
// dim is a run dim (`?`), a dim of 1 stays 1 with keepdims, and all axes
// reduced is static.
// CHECK-LABEL: func.func @reduce_runtime_axes
// CHECK: onnx.ReduceSum {{.*}} -> tensor<?x1x?xf32>
// CHECK: onnx.ReduceMean {{.*}} -> tensor<?x?xf32>
// CHECK: onnx.ReduceMax {{.*}} -> tensor<1x1x1xf32>
// CHECK: onnx.ReduceL2 {{.*}} -> tensor<f32>
func.func @reduce_runtime_axes(%x: tensor<2x1x4xf32>, %a1: tensor<1xi64>, %a3: tensor<3xi32>) {
  %0 = "onnx.ReduceSum"(%x, %a1) : (tensor<2x1x4xf32>, tensor<1xi64>) -> none
  %1 = "onnx.ReduceMean"(%x, %a1) {keepdims = 0 : i64} : (tensor<2x1x4xf32>, tensor<1xi64>) -> none
  %2 = "onnx.ReduceMax"(%x, %a3) : (tensor<2x1x4xf32>, tensor<3xi32>) -> none
  %3 = "onnx.ReduceL2"(%x, %a3) {keepdims = 0 : i64} : (tensor<2x1x4xf32>, tensor<3xi32>) -> none
  return
}

//===----------------------------------------------------------------------===//
// Constants and generators
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @constants
// CHECK: onnx.Constant {{.*}} -> tensor<2x2xf32>
// CHECK: onnx.Constant {{.*}} -> tensor<f32>
// CHECK: onnx.Constant {{.*}} -> tensor<3xi64>
// CHECK: onnx.Constant {{.*}} -> tensor<i64>
// CHECK: onnx.Constant {{.*}} -> tensor<2xf32>
// CHECK: onnx.NoValue : () -> none
func.func @constants() {
  %0 = "onnx.Constant"() {value = dense<1.0> : tensor<2x2xf32>} : () -> none
  %1 = "onnx.Constant"() {value_float = 2.0 : f32} : () -> none
  %2 = "onnx.Constant"() {value_ints = [1, 2, 3]} : () -> none
  %3 = "onnx.Constant"() {value_int = 4 : i64} : () -> none
  %4 = "onnx.Constant"() {value_floats = [1.0 : f32, 2.0 : f32]} : () -> none
  %5 = "onnx.NoValue"() : () -> none
  return
}

// -----

// CHECK-LABEL: func.func @generators
// CHECK: onnx.ConstantOfShape {{.*}} -> tensor<2x3xf32>
// CHECK: onnx.ConstantOfShape {{.*}} -> tensor<4xi64>
// CHECK: onnx.Range {{.*}} -> tensor<4xi64>
// CHECK: onnx.Range {{.*}} -> tensor<3xf32>
func.func @generators() {
  %shape = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.ConstantOfShape"(%shape) : (tensor<2xi64>) -> none
  %s4 = onnx.Constant {value = dense<[4]> : tensor<1xi64>} : () -> tensor<1xi64>
  %1 = "onnx.ConstantOfShape"(%s4) {value = dense<7> : tensor<1xi64>} : (tensor<1xi64>) -> none
  %start = onnx.Constant {value = dense<10> : tensor<i64>} : () -> tensor<i64>
  %limit = onnx.Constant {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %delta = onnx.Constant {value = dense<-2> : tensor<i64>} : () -> tensor<i64>
  %2 = "onnx.Range"(%start, %limit, %delta) : (tensor<i64>, tensor<i64>, tensor<i64>) -> none
  %fs = onnx.Constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %fl = onnx.Constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %fd = onnx.Constant {value = dense<0.4> : tensor<f32>} : () -> tensor<f32>
  %3 = "onnx.Range"(%fs, %fl, %fd) : (tensor<f32>, tensor<f32>, tensor<f32>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @quantization
// CHECK: onnx.QuantizeLinear {{.*}} -> tensor<2x3xi8>
// CHECK: onnx.DequantizeLinear {{.*}} -> tensor<2x3xf32>
// CHECK: onnx.DynamicQuantizeLinear {{.*}} -> (tensor<2x3xui8>, tensor<f32>, tensor<ui8>)
func.func @quantization(%x: tensor<2x3xf32>, %s: tensor<f32>, %zp: tensor<i8>) {
  %0 = "onnx.QuantizeLinear"(%x, %s, %zp) : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> none
  %1 = "onnx.DequantizeLinear"(%0, %s, %zp) : (none, tensor<f32>, tensor<i8>) -> none
  %2:3 = "onnx.DynamicQuantizeLinear"(%x) : (tensor<2x3xf32>) -> (none, none, none)
  return
}

// -----

// A small chain, as the importer would create it, including the function's result type.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%{{.*}}: tensor<1x3x8x8xf32>) -> tensor<1x4xf32>
// CHECK: onnx.Conv {{.*}} -> tensor<1x4x8x8xf32>
// CHECK: onnx.Relu {{.*}} -> tensor<1x4x8x8xf32>
// CHECK: onnx.GlobalAveragePool {{.*}} -> tensor<1x4x1x1xf32>
// CHECK: onnx.Flatten {{.*}} -> tensor<1x4xf32>
// CHECK: return {{.*}} : tensor<1x4xf32>
func.func @chain(%x: tensor<1x3x8x8xf32>) -> none {
  %w = onnx.Constant {value = dense<0.5> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %b = onnx.Constant {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = "onnx.Conv"(%x, %w, %b) {pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> none
  %1 = "onnx.Relu"(%0) : (none) -> none
  %2 = "onnx.GlobalAveragePool"(%1) : (none) -> none
  %3 = "onnx.Flatten"(%2) : (none) -> none
  return %3 : none
}

// -----

// DFT: L bins (L / 2 + 1 one-sided) of 2 components; the one-sided inverse
// gives L = dft_length (default 2 * (N - 1)) real values.
// CHECK-LABEL: func.func @dft
// CHECK: onnx.DFT {{.*}} -> tensor<2x8x3x2xf32>
// CHECK: onnx.DFT {{.*}} -> tensor<2x5x3x2xf32>
// CHECK: onnx.DFT {{.*}} -> tensor<2x14x3x1xf32>
// CHECK: onnx.DFT {{.*}} -> tensor<2x8x6x2xf32>
func.func @dft(%x: tensor<2x8x3x1xf32>) {
  %none = onnx.NoValue : () -> none
  %axis = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %len = onnx.Constant {value = dense<6> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.DFT"(%x, %none, %axis) : (tensor<2x8x3x1xf32>, none, tensor<i64>) -> none
  %1 = "onnx.DFT"(%x, %none, %axis) {onesided = 1 : i64} : (tensor<2x8x3x1xf32>, none, tensor<i64>) -> none
  %2 = "onnx.DFT"(%x, %none, %axis) {onesided = 1 : i64, inverse = 1 : i64} : (tensor<2x8x3x1xf32>, none, tensor<i64>) -> none
  %3 = "onnx.DFT"(%x, %len, %none) : (tensor<2x8x3x1xf32>, tensor<i64>, none) -> none
  return
}

// -----

// STFT: [batch, (length - frame_length) / step + 1, bins, 2].
// CHECK-LABEL: func.func @stft
// CHECK: onnx.STFT {{.*}} -> tensor<1x7x5x2xf32>
// CHECK: onnx.STFT {{.*}} -> tensor<1x5x16x2xf32>
func.func @stft(%x: tensor<1x32x1xf32>, %w: tensor<8xf32>) {
  %none = onnx.NoValue : () -> none
  %step = onnx.Constant {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %len = onnx.Constant {value = dense<16> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.STFT"(%x, %step, %w, %none) : (tensor<1x32x1xf32>, tensor<i64>, tensor<8xf32>, none) -> none
  %1 = "onnx.STFT"(%x, %step, %none, %len) {onesided = 0 : i64} : (tensor<1x32x1xf32>, tensor<i64>, none, tensor<i64>) -> none
  return
}

// -----

// CHECK-LABEL: func.func @affine_grid_reverse_sequence
// CHECK: onnx.AffineGrid {{.*}} -> tensor<2x4x5x6x3xf32>
// CHECK: onnx.ReverseSequence {{.*}} -> tensor<3x4x2xf32>
func.func @affine_grid_reverse_sequence(%theta: tensor<2x3x4xf32>, %x: tensor<3x4x2xf32>, %lens: tensor<3xi64>) {
  %size = onnx.Constant {value = dense<[2, 1, 4, 5, 6]> : tensor<5xi64>} : () -> tensor<5xi64>
  %0 = "onnx.AffineGrid"(%theta, %size) : (tensor<2x3x4xf32>, tensor<5xi64>) -> none
  %1 = "onnx.ReverseSequence"(%x, %lens) {batch_axis = 0 : i64, time_axis = 1 : i64} : (tensor<3x4x2xf32>, tensor<3xi64>) -> none
  return
}

// -----

// MaxUnpool: (D - 1) * stride + kernel - pads, or output_shape.
// CHECK-LABEL: func.func @max_unpool
// CHECK: onnx.MaxUnpool {{.*}} -> tensor<1x2x4x3xf32>
// CHECK: onnx.MaxUnpool {{.*}} -> tensor<1x2x5x5xf32>
func.func @max_unpool(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi64>) {
  %none = onnx.NoValue : () -> none
  %shape = onnx.Constant {value = dense<[1, 2, 5, 5]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = "onnx.MaxUnpool"(%x, %i, %none) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 1]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>, none) -> none
  %1 = "onnx.MaxUnpool"(%x, %i, %shape) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>, tensor<4xi64>) -> none
  return
}

// -----

// A symbolic batch flattened by a shape computed from it (torch's x.view(x.size(0), -1):
// Shape -> Gather -> Unsqueeze -> Concat) and by constants: the -1 is the data's static
// dims over the shape's sizes when every symbolic dim of the data is taken whole (by
// its own dim in the shape, or a 0 at its axis), so the product after it has a static K.
// With the dim of another tensor (%y's `?` need not be %x's), the -1 stays symbolic.
// CHECK-LABEL: func.func @flatten_symbolic_batch
// CHECK: onnx.Reshape {{.*}} -> tensor<?x128xf32>
// CHECK: onnx.Reshape {{.*}} -> tensor<?x8x16xf32>
// CHECK: onnx.Reshape {{.*}} -> tensor<?x?xf32>
// CHECK: onnx.Reshape {{.*}} -> tensor<?x128xf32>
// CHECK: onnx.Reshape {{.*}} -> tensor<?x128xf32>
// CHECK: onnx.Flatten {{.*}} -> tensor<?x128xf32>
func.func @flatten_symbolic_batch(%x: tensor<?x8x4x4xf32>, %y: tensor<?x8x4x4xf32>) {
  %s = "onnx.Shape"(%x) : (tensor<?x8x4x4xf32>) -> none
  %zero = onnx.Constant {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %n = "onnx.Gather"(%s, %zero) {axis = 0 : i64} : (none, tensor<i64>) -> none
  %axes = onnx.Constant {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %n1 = "onnx.Unsqueeze"(%n, %axes) : (none, tensor<1xi64>) -> none
  %m1 = onnx.Constant {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %shape = "onnx.Concat"(%n1, %m1) {axis = 0 : i64} : (none, tensor<1xi64>) -> none
  %0 = "onnx.Reshape"(%x, %shape) : (tensor<?x8x4x4xf32>, none) -> none
  %c8m1 = onnx.Constant {value = dense<[8, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %shape3 = "onnx.Concat"(%n1, %c8m1) {axis = 0 : i64} : (none, tensor<2xi64>) -> none
  %1 = "onnx.Reshape"(%x, %shape3) : (tensor<?x8x4x4xf32>, none) -> none
  %2 = "onnx.Reshape"(%y, %shape) : (tensor<?x8x4x4xf32>, none) -> none
  %c0m1 = onnx.Constant {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %3 = "onnx.Reshape"(%x, %c0m1) : (tensor<?x8x4x4xf32>, tensor<2xi64>) -> none
  %cm1n = onnx.Constant {value = dense<[-1, 128]> : tensor<2xi64>} : () -> tensor<2xi64>
  %4 = "onnx.Reshape"(%x, %cm1n) : (tensor<?x8x4x4xf32>, tensor<2xi64>) -> none
  %5 = "onnx.Flatten"(%x) {axis = 1 : i64} : (tensor<?x8x4x4xf32>) -> none
  return
}
