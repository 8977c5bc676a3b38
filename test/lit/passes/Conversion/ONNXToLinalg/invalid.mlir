// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file -verify-diagnostics

// Every unsupported case is an error naming the node, never a wrong result.

func.func @sqrt_int(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+2 {{node (Sqrt): Sqrt supports float inputs only}}
  // expected-error @+1 {{failed to legalize operation 'onnx.Sqrt'}}
  %0 = "onnx.Sqrt"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @gelu_bad(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{Gelu approximate must be 'none' or 'tanh'}}
  // expected-error @+1 {{failed to legalize operation 'onnx.Gelu'}}
  %0 = "onnx.Gelu"(%a) {approximate = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bitwise_and_float(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{BitwiseAnd supports integer inputs only}}
  // expected-error @+1 {{failed to legalize operation 'onnx.BitwiseAnd'}}
  %0 = "onnx.BitwiseAnd"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dropout_training(%a: tensor<2xf32>) -> tensor<2xf32> {
  %none = "onnx.NoValue"() : () -> none
  %t = "onnx.Constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  // expected-error @+2 {{node (Dropout): training_mode = true is not supported}}
  // expected-error @+1 {{failed to legalize operation 'onnx.Dropout'}}
  %0, %1 = "onnx.Dropout"(%a, %none, %t) : (tensor<2xf32>, none, tensor<i1>) -> (tensor<2xf32>, none)
  return %0 : tensor<2xf32>
}

// -----

func.func @cast_to_int4(%a: tensor<4xf32>) -> tensor<4xi4> {
  // expected-error @+2 {{cast from 'f32' to 'i4' is not supported}}
  // expected-error @+1 {{failed to legalize operation 'onnx.Cast'}}
  %0 = "onnx.Cast"(%a) {to = 22 : i64} : (tensor<4xf32>) -> tensor<4xi4>
  return %0 : tensor<4xi4>
}

// -----

func.func @reduce_dynamic_axes(%a: tensor<2x3xf32>, %axes: tensor<1xi64>) -> tensor<2x1xf32> {
  // expected-error @+2 {{node (ReduceSum): axes must be a constant}}
  // expected-error @+1 {{failed to legalize operation 'onnx.ReduceSum'}}
  %0 = "onnx.ReduceSum"(%a, %axes) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @batchnorm_training(%x: tensor<1x2x3x3xf32>, %s: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  // expected-error @+2 {{training_mode = 1 is not supported}}
  // expected-error @+1 {{failed to legalize operation 'onnx.BatchNormalization'}}
  %0, %1, %2 = "onnx.BatchNormalization"(%x, %s, %s, %s, %s) {training_mode = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3x3xf32>, none, none)
  return %0 : tensor<1x2x3x3xf32>
}

// -----

func.func @softmax_int(%a: tensor<2x5xi32>) -> tensor<2x5xi32> {
  // expected-error @+2 {{supports float inputs only}}
  // expected-error @+1 {{failed to legalize operation 'onnx.Softmax'}}
  %0 = "onnx.Softmax"(%a) : (tensor<2x5xi32>) -> tensor<2x5xi32>
  return %0 : tensor<2x5xi32>
}

// -----

func.func @einsum_bad_sizes(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+2 {{node (Einsum): label 'j' has sizes 3 and 4}}
  // expected-error @+1 {{failed to legalize operation 'onnx.Einsum'}}
  %0 = "onnx.Einsum"(%a, %b) {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @einsum_bool(%a: tensor<2x3xi1>) -> tensor<2xi1> {
  // expected-error @+2 {{node (Einsum): Einsum on 'tensor<2xi1>' is not supported}}
  // expected-error @+1 {{failed to legalize operation 'onnx.Einsum'}}
  %0 = "onnx.Einsum"(%a) {equation = "ij->i"} : (tensor<2x3xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}
