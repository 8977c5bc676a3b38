// RUN: kiln-opt %s -canonicalize -split-input-file | FileCheck %s

// An If whose condition is a constant becomes the branch it takes.

// CHECK-LABEL: func.func @if_true
// CHECK-NOT:     onnx.If
// CHECK:         %[[A:.*]] = onnx.Add %arg0, %arg0
// CHECK-NEXT:    return %[[A]]
func.func @if_true(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = onnx.Constant {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0 = onnx.If %c : tensor<i1> -> tensor<2xf32> {
    %a = onnx.Add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %a : tensor<2xf32>
  } else {
    %m = onnx.Mul %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %m : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @if_false_one_element
// CHECK-NOT:     onnx.If
// CHECK:         %[[M:.*]] = onnx.Mul %arg0, %arg0
// CHECK-NEXT:    return %[[M]]
func.func @if_false_one_element(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = onnx.Constant {value = dense<false> : tensor<1xi1>} : () -> tensor<1xi1>
  %0 = onnx.If %c : tensor<1xi1> -> tensor<2xf32> {
    %a = onnx.Add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %a : tensor<2xf32>
  } else {
    %m = onnx.Mul %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %m : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

// A run-time condition stays.
// CHECK-LABEL: func.func @if_runtime
// CHECK:         onnx.If
func.func @if_runtime(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = onnx.If %c : tensor<i1> -> tensor<2xf32> {
    onnx.Yield %x : tensor<2xf32>
  } else {
    %m = onnx.Mul %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %m : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}
