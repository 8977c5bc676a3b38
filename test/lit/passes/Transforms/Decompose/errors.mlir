// RUN: not kiln-opt %s -kiln-decompose -split-input-file 2>&1 | FileCheck %s

// Errors name the ONNX node of the op being decomposed (its NameLoc) and the opset.

// CHECK: error: {{.*}}node 'mm' (MatMulInteger, opset 21): needs 8-bit integer inputs (got 'ui16' and 'ui16')
// 16-bit products could overflow the int32 accumulator: not decomposed.
module attributes {onnx.opset = 21 : i64} {
func.func @matmul_integer_16bit(%a: tensor<1x8xui16>, %b: tensor<8x4xui16>) -> tensor<1x4xi32> {
  %none = onnx.NoValue : () -> none
  %0 = onnx.MatMulInteger %a, %b, %none, %none : (tensor<1x8xui16>, tensor<8x4xui16>, none, none) -> tensor<1x4xi32> loc("mm")
  return %0 : tensor<1x4xi32>
}
}

// -----

// CHECK: error: {{.*}}node 'rnn' (LSTM): sequence_lens must be an integer tensor of shape [1]
// An input the decomposition cannot read is an error naming the node.
func.func @lstm_lengths_shape(%x: tensor<3x1x2xf32>, %w: tensor<1x8x2xf32>, %r: tensor<1x8x2xf32>) -> tensor<3x1x1x2xf32> {
  %none = onnx.NoValue : () -> none
  %lens = onnx.Constant {value = dense<2> : tensor<2xi32>} : () -> tensor<2xi32>
  %y, %h, %c = onnx.LSTM %x, %w, %r, %none, %lens, %none, %none, %none : (tensor<3x1x2xf32>, tensor<1x8x2xf32>, tensor<1x8x2xf32>, none, tensor<2xi32>, none, none, none) -> (tensor<3x1x1x2xf32>, none, none) loc("rnn")
  return %y : tensor<3x1x1x2xf32>
}

// -----

// CHECK: error: {{.*}}node 'long' (LSTM): a sequence of 5000 steps is over kiln's limit of 4096 unrolled steps (--max-unrolled-steps)
// The recurrence is unrolled one cell per step: a long sequence is refused, not unrolled.
func.func @lstm_too_many_steps(%x: tensor<5000x1x1xf32>, %w: tensor<1x4x1xf32>, %r: tensor<1x4x1xf32>) -> tensor<5000x1x1x1xf32> {
  %none = onnx.NoValue : () -> none
  %y, %h, %c = onnx.LSTM %x, %w, %r, %none, %none, %none, %none, %none : (tensor<5000x1x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>, none, none, none, none, none) -> (tensor<5000x1x1x1xf32>, none, none) loc("long")
  return %y : tensor<5000x1x1x1xf32>
}

// -----

// CHECK: error: {{.*}}node 'hann' (HannWindow): the window would be a table of 33554432 elements, over kiln's limit of 16777216 elements per generated table (--max-table-elements)
func.func @window_too_large() -> tensor<33554432xf32> {
  %n = onnx.Constant {value = dense<33554432> : tensor<i64>} : () -> tensor<i64>
  %0 = onnx.HannWindow %n : (tensor<i64>) -> tensor<33554432xf32> loc("hann")
  return %0 : tensor<33554432xf32>
}

// -----

// CHECK: error: {{.*}}node 'eye' (EyeLike): the identity matrix would be a table of 25000000 elements, over kiln's limit of 16777216 elements per generated table
func.func @eye_like_too_large(%x: tensor<5000x5000xf32>) -> tensor<5000x5000xf32> {
  %0 = onnx.EyeLike %x {k = 9223372036854775807 : i64} : (tensor<5000x5000xf32>) -> tensor<5000x5000xf32> loc("eye")
  return %0 : tensor<5000x5000xf32>
}

// -----

// CHECK: error: {{.*}}node 'attn' (Attention): q heads (2) must be a multiple of kv heads (0)
// No K/V head: an error, not a division by zero.
func.func @attention_zero_kv_heads(%q: tensor<1x2x3x4xf32>, %k: tensor<1x0x3x4xf32>, %v: tensor<1x0x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %none = onnx.NoValue : () -> none
  %y, %pk, %pv, %qk = onnx.Attention %q, %k, %v, %none, %none, %none, %none : (tensor<1x2x3x4xf32>, tensor<1x0x3x4xf32>, tensor<1x0x3x4xf32>, none, none, none, none) -> (tensor<1x2x3x4xf32>, none, none, none) loc("attn")
  return %y : tensor<1x2x3x4xf32>
}

// -----

// CHECK: error: {{.*}}node 'shrink' (Shrink): bias 5.000000e-01 on integer input 'tensor<4xi32>' is not a whole number
func.func @shrink_int_fraction(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = onnx.Shrink %x {bias = 0.5 : f32} : (tensor<4xi32>) -> tensor<4xi32> loc("shrink")
  return %0 : tensor<4xi32>
}

// -----

// CHECK: error: {{.*}}node 'lrn' (LRN): size must be positive, got 0
func.func @lrn_size(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %0 = onnx.LRN %x {size = 0 : i64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("lrn")
  return %0 : tensor<1x4x2x2xf32>
}
