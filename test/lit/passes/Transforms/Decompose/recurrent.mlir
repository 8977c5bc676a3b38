// RUN: kiln-opt %s -kiln-decompose -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-decompose=keep-ops=LSTM,GRU,RNN -split-input-file | FileCheck %s --check-prefix=KEEP

// LSTM over 2 steps: X * W^T for all steps, then per step H * R^T and the gates.
// CHECK-LABEL: func.func @lstm
// CHECK-NOT: onnx.LSTM
// CHECK: onnx.MatMul %arg0, {{.*}} : (tensor<2x1x3xf32>, tensor<3x8xf32>) -> tensor<2x1x8xf32>
// CHECK-COUNT-2: onnx.Sigmoid {{.*}} -> tensor<1x2xf32>
// CHECK: onnx.Tanh
// CHECK: onnx.Sigmoid
// CHECK: onnx.Tanh
// CHECK: onnx.MatMul {{.*}} : (tensor<1x2xf32>, tensor<2x8xf32>) -> tensor<1x8xf32>
// CHECK: onnx.Concat {{.*}} -> tensor<2x1x2xf32>
// CHECK: return {{.*}} : tensor<2x1x1x2xf32>, tensor<1x1x2xf32>
// KEEP-LABEL: func.func @lstm
// KEEP: onnx.LSTM
func.func @lstm(%x: tensor<2x1x3xf32>, %w: tensor<1x8x3xf32>, %r: tensor<1x8x2xf32>) -> (tensor<2x1x1x2xf32>, tensor<1x1x2xf32>) {
  %none = onnx.NoValue : () -> none
  %y, %h, %c = onnx.LSTM %x, %w, %r, %none, %none, %none, %none, %none {hidden_size = 2 : i64} : (tensor<2x1x3xf32>, tensor<1x8x3xf32>, tensor<1x8x2xf32>, none, none, none, none, none) -> (tensor<2x1x1x2xf32>, tensor<1x1x2xf32>, none)
  return %y, %h : tensor<2x1x1x2xf32>, tensor<1x1x2xf32>
}

// -----

// GRU, reverse, one step; only Y_h is used.
// CHECK-LABEL: func.func @gru
// CHECK-NOT: onnx.GRU
// CHECK: onnx.Sigmoid
// CHECK: onnx.Sigmoid
// CHECK: onnx.Tanh
// CHECK: return {{.*}} : tensor<1x2x3xf32>
// KEEP-LABEL: func.func @gru
// KEEP: onnx.GRU
func.func @gru(%x: tensor<1x2x4xf32>, %w: tensor<1x9x4xf32>, %r: tensor<1x9x3xf32>) -> tensor<1x2x3xf32> {
  %none = onnx.NoValue : () -> none
  %y, %h = onnx.GRU %x, %w, %r, %none, %none, %none {direction = "reverse", hidden_size = 3 : i64} : (tensor<1x2x4xf32>, tensor<1x9x4xf32>, tensor<1x9x3xf32>, none, none, none) -> (none, tensor<1x2x3xf32>)
  return %h : tensor<1x2x3xf32>
}

// -----

// RNN, layout 1 (batch first): transposed in and out; the default activation is Tanh.
// CHECK-LABEL: func.func @rnn_batch_first
// CHECK-NOT: onnx.RNN
// CHECK: onnx.Transpose %arg0 {perm = [1, 0, 2]} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
// CHECK-COUNT-3: onnx.Tanh
// CHECK: onnx.Transpose {{.*}} {perm = [2, 0, 1, 3]} : (tensor<3x1x2x5xf32>) -> tensor<2x3x1x5xf32>
func.func @rnn_batch_first(%x: tensor<2x3x4xf32>, %w: tensor<1x5x4xf32>, %r: tensor<1x5x5xf32>) -> tensor<2x3x1x5xf32> {
  %none = onnx.NoValue : () -> none
  %y, %h = onnx.RNN %x, %w, %r, %none, %none, %none {hidden_size = 5 : i64, layout = 1 : i64} : (tensor<2x3x4xf32>, tensor<1x5x4xf32>, tensor<1x5x5xf32>, none, none, none) -> (tensor<2x3x1x5xf32>, none)
  return %y : tensor<2x3x1x5xf32>
}

// -----

// sequence_lens shorter than X: each step's new state is taken only where the step is
// below the sequence's length (Where on Less(step, lengths)), else the state is kept and
// Y gets zeros. Full-length constant lengths need no masks (the other cases).
// CHECK-LABEL: func.func @rnn_lengths
// CHECK:         %[[LENS:.*]] = onnx.Cast %arg3 {to = 7 : i64}
// CHECK:         %[[ACTIVE:.*]] = onnx.Less %{{.*}}, %[[LENS]] : (tensor<i64>, tensor<2xi64>) -> tensor<2xi1>
// CHECK:         %[[R2:.*]] = onnx.Unsqueeze %[[ACTIVE]]
// CHECK:         onnx.Where %[[R2]], %{{.*}}, %{{.*}} : (tensor<2x1xi1>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NOT:     onnx.RNN
func.func @rnn_lengths(%x: tensor<3x2x2xf32>, %w: tensor<1x4x2xf32>, %r: tensor<1x4x4xf32>, %lens: tensor<2xi32>) -> tensor<3x1x2x4xf32> {
  %none = onnx.NoValue : () -> none
  %y, %h = onnx.RNN %x, %w, %r, %none, %lens, %none {hidden_size = 4 : i64} : (tensor<3x2x2xf32>, tensor<1x4x2xf32>, tensor<1x4x4xf32>, none, tensor<2xi32>, none) -> (tensor<3x1x2x4xf32>, none)
  return %y : tensor<3x1x2x4xf32>
}
