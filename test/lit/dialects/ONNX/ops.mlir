// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s -mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @conv
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK: %[[NONE:.*]] = onnx.NoValue : () -> none
  %none = onnx.NoValue : () -> none
  // CHECK: onnx.Conv %{{.*}}, %{{.*}}, %[[NONE]] {kernel_shape = [3, 3], pads = [0, 0, 0, 0]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  %y = onnx.Conv %x, %w, %none {kernel_shape = [3, 3], pads = [0, 0, 0, 0]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// CHECK-LABEL: func.func @attributes
func.func @attributes(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<5xf32>) -> tensor<3x5xf32> {
  // Attributes equal to their schema default are not printed.
  // CHECK: onnx.Gemm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f32} : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %y = onnx.Gemm %a, %b, %c {alpha = 0.5 : f32, transB = 0 : i64} : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @variadic
func.func @variadic(%a: tensor<2xf32>, %b: tensor<3xf32>) -> (tensor<5xf32>, tensor<2xf32>, tensor<3xf32>) {
  // CHECK: onnx.Concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>
  %c = onnx.Concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>
  // CHECK: onnx.Split %{{.*}}, %{{.*}} : (tensor<5xf32>, tensor<2xi64>) -> (tensor<2xf32>, tensor<3xf32>)
  %s = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %p:2 = onnx.Split %c, %s {axis = 0 : i64} : (tensor<5xf32>, tensor<2xi64>) -> (tensor<2xf32>, tensor<3xf32>)
  return %c, %p#0, %p#1 : tensor<5xf32>, tensor<2xf32>, tensor<3xf32>
}

// Absent optional outputs have `none` type.
// CHECK-LABEL: func.func @optional_outputs
func.func @optional_outputs(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: onnx.LayerNormalization %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999974E-5 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, none, none)
  %y:3 = onnx.LayerNormalization %x, %s, %b {epsilon = 1.0e-4 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, none, none)
  return %y#0 : tensor<2x3xf32>
}

// Constants: inline for small tensors, resource blobs for weights.
// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<2xi64>, tensor<2xf32>) {
  // CHECK: onnx.Constant {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a = onnx.Constant {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  // CHECK: onnx.Constant {value = dense_resource<weights> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = onnx.Constant {value = dense_resource<weights> : tensor<2xf32>} : () -> tensor<2xf32>
  return %a, %b : tensor<2xi64>, tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F00000040"
    }
  }
#-}
