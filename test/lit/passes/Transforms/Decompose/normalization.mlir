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
