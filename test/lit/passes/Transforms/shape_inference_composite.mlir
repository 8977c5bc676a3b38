// RUN: kiln-opt %s -kiln-shape-inference -split-input-file | FileCheck %s

// Shape inference of the ops the importer now builds as themselves and kiln-decompose
// expands later.

// CHECK-LABEL: func.func @recurrent
// CHECK: onnx.LSTM {{.*}} -> (tensor<5x2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>)
// CHECK: onnx.GRU {{.*}} -> (tensor<3x5x1x4xf32>, tensor<3x1x4xf32>)
// CHECK: onnx.RNN {{.*}} -> (tensor<5x1x3x6xf32>, tensor<1x3x6xf32>)
func.func @recurrent(%x: tensor<5x3x2xf32>, %w: tensor<2x16x2xf32>, %r: tensor<2x16x4xf32>,
                     %xb: tensor<3x5x2xf32>, %wg: tensor<1x12x2xf32>, %rg: tensor<1x12x4xf32>,
                     %wr: tensor<1x6x2xf32>, %rr: tensor<1x6x6xf32>) {
  %n = onnx.NoValue : () -> none
  %0:3 = "onnx.LSTM"(%x, %w, %r, %n, %n, %n, %n, %n) {direction = "bidirectional"} : (tensor<5x3x2xf32>, tensor<2x16x2xf32>, tensor<2x16x4xf32>, none, none, none, none, none) -> (none, none, none)
  %1:2 = "onnx.GRU"(%xb, %wg, %rg, %n, %n, %n) {layout = 1 : i64} : (tensor<3x5x2xf32>, tensor<1x12x2xf32>, tensor<1x12x4xf32>, none, none, none) -> (none, none)
  %2:2 = "onnx.RNN"(%x, %wr, %rr, %n, %n, %n) {hidden_size = 6 : i64} : (tensor<5x3x2xf32>, tensor<1x6x2xf32>, tensor<1x6x6xf32>, none, none, none) -> (none, none)
  return
}

// -----

// CHECK-LABEL: func.func @attention
// CHECK: onnx.Attention {{.*}} -> (tensor<2x3x12xf32>, tensor<2x2x7x4xf32>, tensor<2x2x7x6xf32>, tensor<2x2x3x7xf32>)
// CHECK: onnx.Attention {{.*}} -> (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x4x3x5xf32>)
func.func @attention(%q: tensor<2x3x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x12xf32>,
                     %pk: tensor<2x2x2x4xf32>, %pv: tensor<2x2x2x6xf32>,
                     %q4: tensor<1x4x3x8xf32>, %k4: tensor<1x2x5x8xf32>, %m: tensor<3x5xf32>) {
  %n = onnx.NoValue : () -> none
  %0:4 = "onnx.Attention"(%q, %k, %v, %n, %pk, %pv, %n) {q_num_heads = 2 : i64, kv_num_heads = 2 : i64} : (tensor<2x3x8xf32>, tensor<2x5x8xf32>, tensor<2x5x12xf32>, none, tensor<2x2x2x4xf32>, tensor<2x2x2x6xf32>, none) -> (none, none, none, none)
  %1:4 = "onnx.Attention"(%q4, %k4, %k4, %m, %n, %n, %n) {qk_matmul_output_mode = 2 : i64} : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<3x5xf32>, none, none, none) -> (none, none, none, none)
  return
}

// -----

// CHECK-LABEL: func.func @losses
// CHECK: onnx.NegativeLogLikelihoodLoss {{.*}} -> tensor<f32>
// CHECK: onnx.NegativeLogLikelihoodLoss {{.*}} -> tensor<3x2xf32>
// CHECK: onnx.SoftmaxCrossEntropyLoss {{.*}} -> (tensor<f32>, tensor<3x5x2xf32>)
func.func @losses(%x: tensor<3x5x2xf32>, %t: tensor<3x2xi64>) {
  %n = onnx.NoValue : () -> none
  %0 = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %n) : (tensor<3x5x2xf32>, tensor<3x2xi64>, none) -> none
  %1 = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %n) {reduction = "none"} : (tensor<3x5x2xf32>, tensor<3x2xi64>, none) -> none
  %2:2 = "onnx.SoftmaxCrossEntropyLoss"(%x, %t, %n) {reduction = "sum"} : (tensor<3x5x2xf32>, tensor<3x2xi64>, none) -> (none, none)
  return
}

// -----

// CHECK-LABEL: func.func @crop_and_windows
// CHECK: onnx.CenterCropPad {{.*}} -> tensor<4x2x9xf32>
// CHECK: onnx.HannWindow {{.*}} -> tensor<10xf32>
// CHECK: onnx.BlackmanWindow {{.*}} -> tensor<10xf64>
func.func @crop_and_windows(%x: tensor<4x6x8xf32>) {
  %s = onnx.Constant {value = dense<[2, 9]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.CenterCropPad"(%x, %s) {axes = [1, -1]} : (tensor<4x6x8xf32>, tensor<2xi64>) -> none
  %size = onnx.Constant {value = dense<10> : tensor<i32>} : () -> tensor<i32>
  %1 = "onnx.HannWindow"(%size) : (tensor<i32>) -> none
  %2 = "onnx.BlackmanWindow"(%size) {output_datatype = 11 : i64} : (tensor<i32>) -> none
  return
}
