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

// -----

// Constant W and R (initializers): W^T and R^T become constants at compile time, so no
// Transpose of the weights runs (the ONNX folders leave constants over 4096 elements
// alone; these are small, the path is the same).
// CHECK-LABEL: func.func @lstm_constant_weights
// CHECK-DAG: %[[WT:.*]] = onnx.Constant {value = dense<{{\[}}[1.000000e+00, 3.000000e+00, 5.000000e+00, 7.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00]]> : tensor<2x4xf32>}
// CHECK-DAG: %[[RT:.*]] = onnx.Constant {value = dense<{{\[}}[1.000000e-01, 2.000000e-01, 3.000000e-01, 4.000000e-01]]> : tensor<1x4xf32>}
// CHECK-NOT: onnx.Transpose
// CHECK: onnx.MatMul %arg0, %[[WT]] : (tensor<3x1x2xf32>, tensor<2x4xf32>) -> tensor<3x1x4xf32>
// CHECK: onnx.MatMul %{{.*}}, %[[RT]] : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NOT: onnx.Transpose
func.func @lstm_constant_weights(%x: tensor<3x1x2xf32>) -> tensor<3x1x1x1xf32> {
  %none = onnx.NoValue : () -> none
  %w = onnx.Constant {value = dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]]> : tensor<1x4x2xf32>} : () -> tensor<1x4x2xf32>
  %r = onnx.Constant {value = dense<[[[0.1], [0.2], [0.3], [0.4]]]> : tensor<1x4x1xf32>} : () -> tensor<1x4x1xf32>
  %y, %h, %c = onnx.LSTM %x, %w, %r, %none, %none, %none, %none, %none {hidden_size = 1 : i64} : (tensor<3x1x2xf32>, tensor<1x4x2xf32>, tensor<1x4x1xf32>, none, none, none, none, none) -> (tensor<3x1x1x1xf32>, none, none)
  return %y : tensor<3x1x1x1xf32>
}

// -----

// GRU with constant R: R_h^T (the rows of the h gate) is a constant of its own, made once
// and read by every step, not sliced at every step.
// CHECK-LABEL: func.func @gru_constant_weights
// CHECK-DAG: %[[RHT:.*]] = onnx.Constant {value = dense<{{\[}}[0.899999976, 1.100000e+00], [1.000000e+00, 1.200000e+00]]> : tensor<2x2xf32>}
// CHECK-NOT: onnx.Transpose
// CHECK: onnx.MatMul %{{.*}}, %[[RHT]] : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
// CHECK: onnx.MatMul %{{.*}}, %[[RHT]] : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
func.func @gru_constant_weights(%x: tensor<2x1x1xf32>) -> tensor<1x1x2xf32> {
  %none = onnx.NoValue : () -> none
  %w = onnx.Constant {value = dense<0.5> : tensor<1x6x1xf32>} : () -> tensor<1x6x1xf32>
  %r = onnx.Constant {value = dense<[[[0.1, 0.2], [0.3, 0.4], [0.5, 0.6], [0.7, 0.8], [0.9, 1.0], [1.1, 1.2]]]> : tensor<1x6x2xf32>} : () -> tensor<1x6x2xf32>
  %y, %h = onnx.GRU %x, %w, %r, %none, %none, %none {hidden_size = 2 : i64} : (tensor<2x1x1xf32>, tensor<1x6x1xf32>, tensor<1x6x2xf32>, none, none, none) -> (none, tensor<1x1x2xf32>)
  return %h : tensor<1x1x2xf32>
}
