// RUN: not kiln-opt %s -kiln-decompose -split-input-file 2>&1 | FileCheck %s

// Errors name the ONNX node of the op being decomposed (its NameLoc) and the opset.

// CHECK: error: {{.*}}node 'mm' (MatMulInteger, opset 21): the integer accumulation over 768 products could exceed float32's exact range (2^24); not supported yet
// float32 accumulates 768 products of 8-bit values inexactly: not decomposed.
module attributes {onnx.opset = 21 : i64} {
func.func @matmul_integer_inexact(%a: tensor<1x768xui8>, %b: tensor<768x4xui8>) -> tensor<1x4xi32> {
  %none = onnx.NoValue : () -> none
  %0 = onnx.MatMulInteger %a, %b, %none, %none : (tensor<1x768xui8>, tensor<768x4xui8>, none, none) -> tensor<1x4xi32> loc("mm")
  return %0 : tensor<1x4xi32>
}
}

// -----

// CHECK: error: {{.*}}node 'rnn' (LSTM): sequence_lens other than the full length 3 are not supported yet
// A variant the decomposition does not cover is an error naming the node.
func.func @lstm_short_sequence(%x: tensor<3x1x2xf32>, %w: tensor<1x8x2xf32>, %r: tensor<1x8x2xf32>) -> tensor<3x1x1x2xf32> {
  %none = onnx.NoValue : () -> none
  %lens = onnx.Constant {value = dense<2> : tensor<1xi32>} : () -> tensor<1xi32>
  %y, %h, %c = onnx.LSTM %x, %w, %r, %none, %lens, %none, %none, %none : (tensor<3x1x2xf32>, tensor<1x8x2xf32>, tensor<1x8x2xf32>, none, tensor<1xi32>, none, none, none) -> (tensor<3x1x1x2xf32>, none, none) loc("rnn")
  return %y : tensor<3x1x1x2xf32>
}
