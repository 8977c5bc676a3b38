// RUN: kiln-opt %s -kiln-decompose -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-decompose=keep-ops=Attention -split-input-file | FileCheck %s --check-prefix=KEEP

// 4-D Attention: Softmax(Q * sqrt(scale) x (K * sqrt(scale))^T) x V, scale = 1/sqrt(8).
// CHECK-LABEL: func.func @attention_4d
// CHECK-NOT: onnx.Attention
// CHECK: %[[C:.*]] = onnx.Constant {{.*}}dense<0.594603539> : tensor<f32>
// CHECK: %[[Q:.*]] = onnx.Mul %arg0, %[[C]]
// CHECK: %[[K:.*]] = onnx.Mul %arg1, %[[C]]
// CHECK: %[[KT:.*]] = onnx.Transpose %[[K]] {perm = [0, 1, 3, 2]} : (tensor<1x2x6x8xf32>) -> tensor<1x2x8x6xf32>
// CHECK: %[[S:.*]] = onnx.MatMul %[[Q]], %[[KT]] : (tensor<1x2x4x8xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x4x6xf32>
// CHECK: %[[P:.*]] = onnx.Softmax %[[S]] : (tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
// CHECK: %[[Y:.*]] = onnx.MatMul %[[P]], %arg2 : (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK: return %[[Y]]
// KEEP-LABEL: func.func @attention_4d
// KEEP: onnx.Attention
// KEEP-NOT: onnx.Softmax
func.func @attention_4d(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> {
  %none = onnx.NoValue : () -> none
  %y, %pk, %pv, %qk = onnx.Attention %q, %k, %v, %none, %none, %none, %none : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, none, none, none, none) -> (tensor<1x2x4x8xf32>, none, none, none)
  return %y : tensor<1x2x4x8xf32>
}

// -----

// 3-D, causal, with a KV cache: heads split and merged, present_key is the cache
// followed by this step's keys, the causal bias is a constant.
// CHECK-LABEL: func.func @attention_3d_causal_past
// CHECK-NOT: onnx.Attention
// CHECK: onnx.Transpose {{.*}} -> tensor<1x2x3x4xf32>
// CHECK: %[[PK:.*]] = onnx.Concat %arg3, {{.*}} {axis = 2 : i64} : (tensor<1x2x2x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x5x4xf32>
// CHECK: onnx.Concat %arg4
// CHECK: onnx.Constant {{.*}} : tensor<3x5xf32>
// CHECK: onnx.Softmax
// CHECK: %[[Y:.*]] = onnx.Reshape {{.*}} -> tensor<1x3x8xf32>
// CHECK: return %[[Y]], %[[PK]]
func.func @attention_3d_causal_past(%q: tensor<1x3x8xf32>, %k: tensor<1x3x8xf32>, %v: tensor<1x3x8xf32>,
                                    %pk: tensor<1x2x2x4xf32>, %pv: tensor<1x2x2x4xf32>) -> (tensor<1x3x8xf32>, tensor<1x2x5x4xf32>) {
  %none = onnx.NoValue : () -> none
  %y, %k2, %v2, %qk = onnx.Attention %q, %k, %v, %none, %pk, %pv, %none {is_causal = 1 : i64, q_num_heads = 2 : i64, kv_num_heads = 2 : i64} : (tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32>, none, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>, none) -> (tensor<1x3x8xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, none)
  return %y, %k2 : tensor<1x3x8xf32>, tensor<1x2x5x4xf32>
}
