// RUN: kiln-opt %s -kiln-decompose -split-input-file | FileCheck %s

// RMSNormalization: X / Sqrt(ReduceMean(X * X, axes >= axis) + epsilon) * scale.
// CHECK-LABEL: func.func @rms
// CHECK-NOT: onnx.RMSNormalization
// CHECK: %[[SQ:.*]] = onnx.Mul %arg0, %arg0
// CHECK: %[[AX:.*]] = onnx.Constant {{.*}}dense<1> : tensor<1xi64>
// CHECK: %[[MS:.*]] = onnx.ReduceMean %[[SQ]], %[[AX]] : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
// CHECK: onnx.Add %[[MS]]
// CHECK: onnx.Sqrt
// CHECK: onnx.Div %arg0
// CHECK: onnx.Mul {{.*}}, %arg1 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
func.func @rms(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = onnx.RMSNormalization %x, %s : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// GroupNormalization: statistics over [N, groups, -1], scale and bias per channel.
// CHECK-LABEL: func.func @group_norm
// CHECK-NOT: onnx.GroupNormalization
// CHECK: onnx.Reshape %arg0, {{.*}} -> tensor<1x2x4xf32>
// CHECK: onnx.ReduceMean {{.*}} -> tensor<1x2x1xf32>
// CHECK: onnx.Reshape {{.*}} -> tensor<1x4x2x1xf32>
// CHECK: onnx.Reshape %arg1, {{.*}} -> tensor<1x4x1x1xf32>
// CHECK: onnx.Reshape %arg2, {{.*}} -> tensor<1x4x1x1xf32>
// CHECK: onnx.Add {{.*}} -> tensor<1x4x2x1xf32>
func.func @group_norm(%x: tensor<1x4x2x1xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4x2x1xf32> {
  %0 = onnx.GroupNormalization %x, %s, %b {num_groups = 2 : i64} : (tensor<1x4x2x1xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x1xf32>
  return %0 : tensor<1x4x2x1xf32>
}

// -----

// LpNormalization (p = 1): x / ReduceSum(|x|), 0 where the norm is 0.
// CHECK-LABEL: func.func @lp_norm
// CHECK-NOT: onnx.LpNormalization
// CHECK: onnx.Abs %arg0
// CHECK: %[[N:.*]] = onnx.ReduceSum {{.*}} -> tensor<2x1xf32>
// CHECK: %[[Z:.*]] = onnx.Equal %[[N]]
// CHECK: %[[D:.*]] = onnx.Div %arg0, %[[N]]
// CHECK: onnx.Where %[[Z]], {{.*}}, %[[D]] : {{.*}} -> tensor<2x3xf32>
func.func @lp_norm(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = onnx.LpNormalization %x {p = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// LRN: X^2 as [N, 1, C, rest], summed over the channel window by an
// AveragePool that counts the pads (its mean is square_sum / size).
// CHECK-LABEL: func.func @lrn
// CHECK-NOT: onnx.LRN
// CHECK: %[[SQ:.*]] = onnx.Mul %arg0, %arg0
// CHECK: %[[R:.*]] = onnx.Reshape %[[SQ]], {{.*}} -> tensor<1x1x5x6xf32>
// CHECK: %[[AVG:.*]] = onnx.AveragePool %[[R]] {count_include_pad = 1 : i64, kernel_shape = [4, 1], pads = [1, 0, 2, 0]}
// CHECK: %[[M:.*]] = onnx.Reshape %[[AVG]], {{.*}} -> tensor<1x5x3x2xf32>
// CHECK: %[[A:.*]] = onnx.Mul %[[M]], {{.*}}
// CHECK: %[[B:.*]] = onnx.Add {{.*}}, %[[A]]
// CHECK: %[[P:.*]] = onnx.Pow %[[B]], {{.*}}
// CHECK: onnx.Div %arg0, %[[P]]
func.func @lrn(%x: tensor<1x5x3x2xf32>) -> tensor<1x5x3x2xf32> {
  %0 = onnx.LRN %x {size = 4 : i64, alpha = 2.0e-4 : f32} : (tensor<1x5x3x2xf32>) -> tensor<1x5x3x2xf32>
  return %0 : tensor<1x5x3x2xf32>
}

// -----

// MeanVarianceNormalization: the spec's body over axes [0, 2, 3].
// CHECK-LABEL: func.func @mvn
// CHECK-NOT: onnx.MeanVarianceNormalization
// CHECK: %[[MEAN:.*]] = onnx.ReduceMean %arg0, {{.*}} -> tensor<1x3x1x1xf32>
// CHECK: %[[SQ:.*]] = onnx.Mul %arg0, %arg0
// CHECK: %[[MSQ:.*]] = onnx.ReduceMean %[[SQ]], {{.*}} -> tensor<1x3x1x1xf32>
// CHECK: %[[M2:.*]] = onnx.Mul %[[MEAN]], %[[MEAN]]
// CHECK: %[[VAR:.*]] = onnx.Sub %[[MSQ]], %[[M2]]
// CHECK: %[[STD:.*]] = onnx.Sqrt %[[VAR]]
// CHECK: %[[DEN:.*]] = onnx.Add %[[STD]], {{.*}}
// CHECK: %[[C:.*]] = onnx.Sub %arg0, %[[MEAN]]
// CHECK: onnx.Div %[[C]], %[[DEN]]
func.func @mvn(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {
  %0 = onnx.MeanVarianceNormalization %x : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// BatchNormalization, training_mode 1: the batch's mean and population
// variance over every dim but C; the running statistics blend in with
// momentum. The inference form is kept (convert-onnx-to-linalg lowers it).
// CHECK-LABEL: func.func @batchnorm_training
// CHECK: %[[MEAN:.*]] = onnx.ReduceMean %arg0, {{.*}} -> tensor<1x3x1x1xf32>
// CHECK: %[[C:.*]] = onnx.Sub %arg0, %[[MEAN]]
// CHECK: %[[SQ:.*]] = onnx.Mul %[[C]], %[[C]]
// CHECK: %[[VAR:.*]] = onnx.ReduceMean %[[SQ]], {{.*}} -> tensor<1x3x1x1xf32>
// CHECK: onnx.Sqrt
// CHECK: %[[Y:.*]] = onnx.Add {{.*}} -> tensor<2x3x4x4xf32>
// CHECK: %[[KM:.*]] = onnx.Mul %arg3, {{.*}}
// CHECK: %[[BM:.*]] = onnx.Reshape %[[MEAN]], {{.*}} -> tensor<3xf32>
// CHECK: %[[AM:.*]] = onnx.Mul %[[BM]], {{.*}}
// CHECK: %[[RM:.*]] = onnx.Add %[[KM]], %[[AM]]
// CHECK: %[[KV:.*]] = onnx.Mul %arg4, {{.*}}
// CHECK: %[[RV:.*]] = onnx.Add %[[KV]], {{.*}}
// CHECK: onnx.BatchNormalization %arg0, {{.*}} -> (tensor<2x3x4x4xf32>, none, none)
// CHECK: return %[[Y]], %[[RM]], %[[RV]], %{{.*}}
func.func @batchnorm_training(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3x4x4xf32>) {
  %0, %1, %2 = onnx.BatchNormalization %x, %s, %b, %m, %v {training_mode = 1 : i64, momentum = 0.8 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  %3, %4, %5 = onnx.BatchNormalization %x, %s, %b, %m, %v : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, none, none)
  return %0, %1, %2, %3 : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3x4x4xf32>
}
