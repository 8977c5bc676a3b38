// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// The prefix names the node (the innermost NameLoc, here inside a FusedLoc) and the
// model's opset. The location has no line of this file: hence @unknown.
module attributes {onnx.opset = 17 : i64} {
  func.func @conv_x_rank(%x: tensor<3x8xf32>, %w: tensor<4x3x3x3xf32>, %none: none) {
    // expected-error @unknown {{node 'conv1' (Conv, opset 17): input X must have rank >= 3, got 2}}
    %0 = onnx.Conv %x, %w, %none : (tensor<3x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32> loc(fused["graph"("conv1"), "other"])
    return
  }
}

// -----

func.func @conv_w_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3xf32>, %none: none) {
  // expected-error @+1 {{node (Conv): weight W must have rank >= 3, got 2}}
  %0 = onnx.Conv %x, %w, %none : (tensor<1x3x8x8xf32>, tensor<4x3xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @conv_rank_mismatch(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>, %none: none) {
  // expected-error @+1 {{input X (rank 4) and weight W (rank 3) must have the same rank}}
  %0 = onnx.Conv %x, %w, %none : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @conv_group(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %none: none) {
  // expected-error @+1 {{group must be >= 1, got 0}}
  %0 = onnx.Conv %x, %w, %none {group = 0 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @conv_bias_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{bias B must have rank 1, got 2}}
  %0 = onnx.Conv %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @conv_kernel_shape_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %none: none) {
  // expected-error @+1 {{kernel_shape has 1 values, expected 2}}
  %0 = onnx.Conv %x, %w, %none {kernel_shape = [3]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @conv_strides_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %none: none) {
  // expected-error @+1 {{strides has 3 values, expected 2}}
  %0 = onnx.Conv %x, %w, %none {strides = [1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @conv_dilations_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %none: none) {
  // expected-error @+1 {{dilations has 1 values, expected 2}}
  %0 = onnx.Conv %x, %w, %none {dilations = [1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @conv_pads_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %none: none) {
  // expected-error @+1 {{pads has 2 values, expected 4}}
  %0 = onnx.Conv %x, %w, %none {pads = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @conv_strides_positive(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %none: none) {
  // expected-error @+1 {{strides values must be >= 1, got 0}}
  %0 = onnx.Conv %x, %w, %none {strides = [1, 0]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @conv_pads_negative(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %none: none) {
  // expected-error @+1 {{pads values must be >= 0, got -1}}
  %0 = onnx.Conv %x, %w, %none {pads = [0, 0, -1, 0]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @conv_kernel_shape_mismatch(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %none: none) {
  // expected-error @+1 {{kernel_shape[1] = 5 does not match weight dimension 3}}
  %0 = onnx.Conv %x, %w, %none {kernel_shape = [3, 5]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x6x8x8xf32>, %w: tensor<4x3x3x3xf32>, %none: none) {
  // expected-error @+1 {{input channels (6) must equal weight channels (3) times group (1)}}
  %0 = onnx.Conv %x, %w, %none : (tensor<1x6x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @gemm_a_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>, %none: none) {
  // expected-error @+1 {{operand A must have rank 2, got 3}}
  %0 = onnx.Gemm %a, %b, %none : (tensor<2x3x4xf32>, tensor<4x5xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @gemm_b_rank(%a: tensor<3x4xf32>, %b: tensor<4xf32>, %none: none) {
  // expected-error @+1 {{operand B must have rank 2, got 1}}
  %0 = onnx.Gemm %a, %b, %none : (tensor<3x4xf32>, tensor<4xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @gemm_c_rank(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<1x3x5xf32>) {
  // expected-error @+1 {{operand C must have rank <= 2, got 3}}
  %0 = onnx.Gemm %a, %b, %c : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<1x3x5xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @gemm_inner(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %none: none) {
  // expected-error @+1 {{inner dimensions differ: 3 vs 4}}
  %0 = onnx.Gemm %a, %b, %none {transA = 1 : i64} : (tensor<3x4xf32>, tensor<4x5xf32>, none) -> tensor<*xf32>
  return
}

// -----

func.func @matmul_a_rank(%a: tensor<f32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{operand A must have rank >= 1}}
  %0 = onnx.MatMul %a, %b : (tensor<f32>, tensor<4x5xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @matmul_b_rank(%a: tensor<3x4xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{operand B must have rank >= 1}}
  %0 = onnx.MatMul %a, %b : (tensor<3x4xf32>, tensor<f32>) -> tensor<*xf32>
  return
}

// -----

func.func @matmul_inner(%a: tensor<2x3x4xf32>, %b: tensor<5x6xf32>) {
  // expected-error @+1 {{inner dimensions differ: 4 vs 5}}
  %0 = onnx.MatMul %a, %b : (tensor<2x3x4xf32>, tensor<5x6xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @reshape_shape_rank(%x: tensor<2x3xf32>, %s: tensor<1x2xi64>) {
  // expected-error @+1 {{shape must have rank 1, got 2}}
  %0 = onnx.Reshape %x, %s : (tensor<2x3xf32>, tensor<1x2xi64>) -> tensor<*xf32>
  return
}

// -----

func.func @reshape_negative(%x: tensor<2x3xf32>) {
  %s = onnx.Constant {value = dense<[-2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{shape values must be >= -1, got -2}}
  %0 = onnx.Reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return
}

// -----

func.func @reshape_two_minus_one(%x: tensor<2x3xf32>) {
  %s = onnx.Constant {value = dense<[-1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{shape has 2 dimensions of -1, at most one is allowed}}
  %0 = onnx.Reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return
}

// -----

func.func @reshape_allowzero(%x: tensor<2x3xf32>) {
  %s = onnx.Constant {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{shape cannot contain both 0 and -1 when allowzero = 1}}
  %0 = onnx.Reshape %x, %s {allowzero = 1 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return
}

// -----

func.func @transpose_perm_size(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm has 3 values, expected the input rank 2}}
  %0 = onnx.Transpose %x {perm = [0, 2, 1]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @transpose_not_permutation(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm is not a permutation of [0, 2)}}
  %0 = onnx.Transpose %x {perm = [1, 1]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @concat_no_inputs() {
  // expected-error @+1 {{needs at least one input}}
  %0 = onnx.Concat {axis = 0 : i64} : () -> tensor<*xf32>
  return
}

// -----

func.func @concat_ranks(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{inputs have different ranks (2 and 1)}}
  %0 = onnx.Concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = onnx.Concat %a, %b {axis = -3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<*xf32>
  return
}
