// RUN: kiln-opt %s -split-input-file -kiln-shape-inference -kiln-symbolic-shapes=batch-loop=true | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-shape-inference -kiln-symbolic-shapes | FileCheck %s --check-prefix=OFF

// batch-loop: kiln.batch_loop marks a function whose one symbol is a batch of images
// computed apart (the driver then compiles it for one image and runs it once per
// image). Without the option nothing is marked.
// OFF-NOT: kiln.batch_loop

// A CNN: a convolution, BatchNormalization (its statistics unused), MaxPool without
// Indices, a classifier Gemm (one row per image: little of the work) and a Reshape
// keeping the batch.
// CHECK-LABEL: func.func @cnn
// CHECK-SAME: kiln.batch_loop
func.func @cnn(%x: tensor<?x3x8x8xf32> {kiln.dims = array<i64: -1, 3, 8, 8>}) -> (none, none)
    attributes {kiln.symbols = [["n", 1, -1]]} {
  %w = onnx.Constant {value = dense<1.0> : tensor<16x3x3x3xf32>} : () -> tensor<16x3x3x3xf32>
  %c = onnx.Constant {value = dense<1.0> : tensor<16xf32>} : () -> tensor<16xf32>
  %fw = onnx.Constant {value = dense<1.0> : tensor<10x16xf32>} : () -> tensor<10x16xf32>
  %fb = onnx.Constant {value = dense<1.0> : tensor<10xf32>} : () -> tensor<10xf32>
  %shape = onnx.Constant {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.Conv"(%x, %w, %c) {pads = [1, 1, 1, 1]} : (tensor<?x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> none
  %1:3 = "onnx.BatchNormalization"(%0, %c, %c, %c, %c) : (none, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (none, none, none)
  %2 = "onnx.Relu"(%1#0) : (none) -> none
  %3:2 = "onnx.MaxPool"(%2) {kernel_shape = [2, 2], strides = [2, 2]} : (none) -> (none, none)
  %4 = "onnx.GlobalAveragePool"(%3#0) : (none) -> none
  %5 = "onnx.Flatten"(%4) {axis = 1 : i64} : (none) -> none
  %6 = "onnx.Gemm"(%5, %fw, %fb) {transB = 1 : i64} : (none, tensor<10x16xf32>, tensor<10xf32>) -> none
  %7 = "onnx.Softmax"(%6) {axis = 1 : i64} : (none) -> none
  %11 = "onnx.Reshape"(%4, %shape) : (none, tensor<2xi64>) -> none
  return %7, %11 : none, none
}

// -----

// An MLP: every product has one row per image (its rows are the batch), better run
// over the whole batch.
// CHECK-LABEL: func.func @mlp
// CHECK-NOT: kiln.batch_loop
// CHECK: return
func.func @mlp(%x: tensor<?x8xf32> {kiln.dims = array<i64: -1, 8>}) -> none
    attributes {kiln.symbols = [["batch", 1, 64]]} {
  %w1 = onnx.Constant {value = dense<1.0> : tensor<8x16xf32>} : () -> tensor<8x16xf32>
  %0 = "onnx.MatMul"(%x, %w1) : (tensor<?x8xf32>, tensor<8x16xf32>) -> none
  %1 = "onnx.Relu"(%0) : (none) -> none
  return %1 : none
}

// -----

// Images mixed: a Softmax over the batch.
// CHECK-LABEL: func.func @softmax_over_batch
// CHECK-NOT: kiln.batch_loop
// CHECK: return
func.func @softmax_over_batch(%x: tensor<?x3x8x8xf32> {kiln.dims = array<i64: -1, 3, 8, 8>}) -> none
    attributes {kiln.symbols = [["n", 1, -1]]} {
  %w = onnx.Constant {value = dense<1.0> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %none) : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> none
  %1 = "onnx.Softmax"(%0) {axis = 0 : i64} : (none) -> none
  return %1 : none
}

// -----

// MaxPool's Indices are flat over the whole batch.
// CHECK-LABEL: func.func @maxpool_indices
// CHECK-NOT: kiln.batch_loop
// CHECK: return
func.func @maxpool_indices(%x: tensor<?x3x8x8xf32> {kiln.dims = array<i64: -1, 3, 8, 8>}) -> (none, none)
    attributes {kiln.symbols = [["n", 1, -1]]} {
  %w = onnx.Constant {value = dense<1.0> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %none) : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> none
  %1:2 = "onnx.MaxPool"(%0) {kernel_shape = [2, 2], strides = [2, 2]} : (none) -> (none, none)
  return %1#0, %1#1 : none, none
}

// -----

// Images picked across the batch: a Gather along axis 0 of batched data (the first
// image).
// CHECK-LABEL: func.func @gather_images
// CHECK-NOT: kiln.batch_loop
// CHECK: return
func.func @gather_images(%x: tensor<?x3x8x8xf32> {kiln.dims = array<i64: -1, 3, 8, 8>}) -> none
    attributes {kiln.symbols = [["n", 1, -1]]} {
  %w = onnx.Constant {value = dense<1.0> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %none) : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> none
  %i = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %1 = "onnx.Gather"(%0, %i) {axis = 0 : i64} : (none, tensor<1xi64>) -> none
  return %1 : none
}

// -----

// Two symbols: the batch and the width.
// CHECK-LABEL: func.func @two_symbols
// CHECK-NOT: kiln.batch_loop
// CHECK: return
func.func @two_symbols(%x: tensor<?x3x8x?xf32> {kiln.dims = array<i64: -1, 3, 8, -2>}) -> none
    attributes {kiln.symbols = [["n", 1, -1], ["w", 1, -1]]} {
  %0 = "onnx.Relu"(%x) : (tensor<?x3x8x?xf32>) -> none
  return %0 : none
}

// -----

// The batch folded into another dim (a Reshape merging it with the channels), then
// split out again.
// CHECK-LABEL: func.func @batch_merged
// CHECK-NOT: kiln.batch_loop
// CHECK: return
func.func @batch_merged(%x: tensor<?x3x8x8xf32> {kiln.dims = array<i64: -1, 3, 8, 8>}) -> none
    attributes {kiln.symbols = [["n", 1, -1]]} {
  %w = onnx.Constant {value = dense<1.0> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %s = onnx.Constant {value = dense<[-1, 36]> : tensor<2xi64>} : () -> tensor<2xi64>
  %t = onnx.Constant {value = dense<[-1, 144]> : tensor<2xi64>} : () -> tensor<2xi64>
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %none) : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> none
  %1 = "onnx.Reshape"(%0, %s) : (none, tensor<2xi64>) -> none
  %2 = "onnx.Relu"(%1) : (none) -> none
  %3 = "onnx.Reshape"(%2, %t) : (none, tensor<2xi64>) -> none
  return %3 : none
}
