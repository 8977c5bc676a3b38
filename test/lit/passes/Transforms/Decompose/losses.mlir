// RUN: kiln-opt %s -kiln-decompose -split-input-file | FileCheck %s

// NegativeLogLikelihoodLoss, mean without weights: -input[n, target[n]] averaged.
// CHECK-LABEL: func.func @nll_mean
// CHECK-NOT: onnx.NegativeLogLikelihoodLoss
// CHECK: %[[T:.*]] = onnx.Unsqueeze %arg1
// CHECK: %[[P:.*]] = onnx.GatherElements %arg0, %[[T]] {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x1xi64>) -> tensor<3x1xf32>
// CHECK: %[[S:.*]] = onnx.Squeeze %[[P]]
// CHECK: %[[N:.*]] = onnx.Neg %[[S]]
// CHECK: %[[M:.*]] = onnx.ReduceMean %[[N]], {{.*}} {keepdims = 0 : i64} : (tensor<3xf32>, none) -> tensor<f32>
// CHECK: return %[[M]]
func.func @nll_mean(%x: tensor<3x5xf32>, %t: tensor<3xi64>) -> tensor<f32> {
  %none = onnx.NoValue : () -> none
  %0 = onnx.NegativeLogLikelihoodLoss %x, %t, %none : (tensor<3x5xf32>, tensor<3xi64>, none) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// With weights and ignore_index, mean divides by the sum of the weights that applied.
// CHECK-LABEL: func.func @nll_weight_ignore
// CHECK: onnx.Equal %arg1
// CHECK: onnx.Not
// CHECK: onnx.Where
// CHECK: onnx.GatherElements
// CHECK: onnx.Gather %arg2
// CHECK: onnx.ReduceSum
// CHECK: onnx.ReduceSum
// CHECK: onnx.Div {{.*}} -> tensor<f32>
func.func @nll_weight_ignore(%x: tensor<3x5xf32>, %t: tensor<3xi64>, %w: tensor<5xf32>) -> tensor<f32> {
  %0 = onnx.NegativeLogLikelihoodLoss %x, %t, %w {ignore_index = 1 : i64} : (tensor<3x5xf32>, tensor<3xi64>, tensor<5xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// SoftmaxCrossEntropyLoss: LogSoftmax (the log_prob output), then the
// NegativeLogLikelihoodLoss it creates is decomposed in turn.
// CHECK-LABEL: func.func @sce
// CHECK-NOT: onnx.SoftmaxCrossEntropyLoss
// CHECK-NOT: onnx.NegativeLogLikelihoodLoss
// CHECK: %[[L:.*]] = onnx.LogSoftmax %arg0 {axis = 1 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK: onnx.GatherElements %[[L]]
// CHECK: %[[Y:.*]] = onnx.ReduceSum {{.*}} -> tensor<f32>
// CHECK: return %[[Y]], %[[L]]
func.func @sce(%x: tensor<3x5xf32>, %t: tensor<3xi64>) -> (tensor<f32>, tensor<3x5xf32>) {
  %none = onnx.NoValue : () -> none
  %0, %1 = onnx.SoftmaxCrossEntropyLoss %x, %t, %none {reduction = "sum"} : (tensor<3x5xf32>, tensor<3xi64>, none) -> (tensor<f32>, tensor<3x5xf32>)
  return %0, %1 : tensor<f32>, tensor<3x5xf32>
}
