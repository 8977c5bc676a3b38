// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file -verify-diagnostics

// What the Linear/Convolution/Pooling/DataMovement lowerings reject: an error
// naming the node, never a silently wrong result.

// (int32 MatMul is lowered: the centered products of the quantized ops.)
func.func @matmul_int(%a: tensor<2x3xi16>, %b: tensor<3x4xi16>) -> tensor<2x4xi16> {
  // expected-error @+2 {{node (MatMul): integer MatMul is only supported on int32}}
  // expected-error @+1 {{failed to legalize operation 'onnx.MatMul'}}
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x3xi16>, tensor<3x4xi16>) -> tensor<2x4xi16>
  return %0 : tensor<2x4xi16>
}

// -----

// Constant indices are checked at compile time.
func.func @gather_const_out_of_range(%data: tensor<5x4xf32>) -> tensor<2x4xf32> {
  %idx = "onnx.Constant"() <{value = dense<[1, 5]> : tensor<2xi64>}> : () -> tensor<2xi64>
  // expected-error @+2 {{node (Gather): index 5 out of range for a dimension of 5}}
  // expected-error @+1 {{failed to legalize operation 'onnx.Gather'}}
  %0 = "onnx.Gather"(%data, %idx) <{axis = 0 : i64}> : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @conv_3d(%x: tensor<1x1x4x4x4xf32>, %w: tensor<1x1x2x2x2xf32>) -> tensor<1x1x3x3x3xf32> {
  %none = "onnx.NoValue"() : () -> none
  // expected-error @+2 {{node (Conv): only 1-D and 2-D Conv are supported}}
  // expected-error @+1 {{failed to legalize operation 'onnx.Conv'}}
  %0 = "onnx.Conv"(%x, %w, %none) : (tensor<1x1x4x4x4xf32>, tensor<1x1x2x2x2xf32>, none) -> tensor<1x1x3x3x3xf32>
  return %0 : tensor<1x1x3x3x3xf32>
}

// -----

func.func @maxpool_rank2(%x: tensor<4x4xf32>) -> tensor<2x2xf32> {
  // expected-error @+2 {{node (MaxPool): pooling needs an input of rank >= 3 (input 'tensor<4x4xf32>')}}
  // expected-error @+1 {{failed to legalize operation 'onnx.MaxPool'}}
  %0, %1 = "onnx.MaxPool"(%x) <{kernel_shape = [2, 2], strides = [2, 2]}> : (tensor<4x4xf32>) -> (tensor<2x2xf32>, none)
  return %0 : tensor<2x2xf32>
}

// -----

func.func @maxpool_bool(%x: tensor<1x1x4x4xi1>) -> tensor<1x1x2x2xi1> {
  // expected-error @+2 {{node (MaxPool): MaxPool on 'tensor<1x1x4x4xi1>' is not supported}}
  // expected-error @+1 {{failed to legalize operation 'onnx.MaxPool'}}
  %0, %1 = "onnx.MaxPool"(%x) <{kernel_shape = [2, 2], strides = [2, 2]}> : (tensor<1x1x4x4xi1>) -> (tensor<1x1x2x2xi1>, none)
  return %0 : tensor<1x1x2x2xi1>
}

// -----

func.func @pad_runtime_pads(%x: tensor<2x3xf32>, %p: tensor<4xi64>) -> tensor<3x6xf32> {
  %none = "onnx.NoValue"() : () -> none
  // expected-error @+2 {{node (Pad): pads must be a constant}}
  // expected-error @+1 {{failed to legalize operation 'onnx.Pad'}}
  %0 = "onnx.Pad"(%x, %p, %none, %none) : (tensor<2x3xf32>, tensor<4xi64>, none, none) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

func.func @avgpool_wrong_result(%x: tensor<1x1x6x6xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+2 {{does not match the pooled size 2 of spatial dim 0}}
  // expected-error @+1 {{failed to legalize operation 'onnx.AveragePool'}}
  %0 = "onnx.AveragePool"(%x) <{kernel_shape = [3, 3], strides = [2, 2]}> : (tensor<1x1x6x6xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}
