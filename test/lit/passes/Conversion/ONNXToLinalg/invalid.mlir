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

func.func @cast_to_float6(%a: tensor<4xf32>) -> tensor<4xf6E2M3FN> {
  // expected-error @+2 {{cast from 'f32' to 'f6E2M3FN' is not supported}}
  // expected-error @+1 {{failed to legalize operation 'onnx.Cast'}}
  %0 = "onnx.Cast"(%a) {to = 27 : i64} : (tensor<4xf32>) -> tensor<4xf6E2M3FN>
  return %0 : tensor<4xf6E2M3FN>
}

// -----

// Axes read at run time: the data's shape must be static, the sets of axes
// few enough, and every set's result must fit the result type.
func.func @reduce_runtime_axes_symbolic_data(%a: tensor<?x3xf32>, %axes: tensor<1xi64>) -> tensor<?x?xf32> {
  // expected-error @+2 {{node (ReduceSum): axes read at run time need a static shape of 'data', got 'tensor<?x3xf32>'}}
  // expected-error @+1 {{failed to legalize operation 'onnx.ReduceSum'}}
  %0 = "onnx.ReduceSum"(%a, %axes) : (tensor<?x3xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @reduce_runtime_axes_too_many_sets(%a: tensor<1x1x1x1x1x1x1x1x1xf32>, %axes: tensor<4xi64>) -> tensor<1x1x1x1x1x1x1x1x1xf32> {
  // expected-error @+2 {{node (ReduceMax): axes read at run time: 4 of 9 axes is too many sets of axes to compile (at most 70); make 'axes' a constant}}
  // expected-error @+1 {{failed to legalize operation 'onnx.ReduceMax'}}
  %0 = "onnx.ReduceMax"(%a, %axes) : (tensor<1x1x1x1x1x1x1x1x1xf32>, tensor<4xi64>) -> tensor<1x1x1x1x1x1x1x1x1xf32>
  return %0 : tensor<1x1x1x1x1x1x1x1x1xf32>
}

// -----

func.func @reduce_runtime_axes_result_mismatch(%a: tensor<2x3xf32>, %axes: tensor<1xi64>) -> tensor<2x1xf32> {
  // expected-error @+2 {{node (ReduceSum): result type 'tensor<2x1xf32>' does not match the reduction of 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to legalize operation 'onnx.ReduceSum'}}
  %0 = "onnx.ReduceSum"(%a, %axes) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @reduce_runtime_axes_more_than_rank(%a: tensor<2x3xf32>, %axes: tensor<3xi64>) -> tensor<1x1xf32> {
  // expected-error @+2 {{node (ReduceSum): input 'axes' holds 3 values, more than the rank 2 of 'data' (the axes must be distinct)}}
  // expected-error @+1 {{failed to legalize operation 'onnx.ReduceSum'}}
  %0 = "onnx.ReduceSum"(%a, %axes) : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
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

// int4 and the other packed / scale types are only cast and moved.
func.func @add_int4(%a: tensor<4xi4>) -> tensor<4xi4> {
  // expected-error @+1 {{operator 'Add' on 'i4' (int4, uint4, int2, uint2, float4e2m1 or float8e8m0) is not supported: kiln only casts and moves these types}}
  %0 = "onnx.Add"(%a, %a) : (tensor<4xi4>, tensor<4xi4>) -> tensor<4xi4>
  return %0 : tensor<4xi4>
}

// -----

// A packed graph input's byte size must be known at compile time.
// expected-error @+1 {{graph input 0: a packed type (int4, uint4, float4e2m1, int2, uint2) with symbolic dims is not supported}}
func.func @packed_symbolic(%a: tensor<?xui4>) -> tensor<?xf32> {
  %0 = "onnx.Cast"(%a) {to = 1 : i64} : (tensor<?xui4>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// A run-time axis must be one integer (the value itself is checked at run
// time).
func.func @cumsum_axis_two_values(%x: tensor<2x3xf32>, %axis: tensor<2xi64>) -> tensor<2x3xf32> {
  // expected-error @+2 {{node (CumSum): input 'axis' must be one integer}}
  // expected-error @+1 {{failed to legalize operation 'onnx.CumSum'}}
  %0 = "onnx.CumSum"(%x, %axis) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
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
