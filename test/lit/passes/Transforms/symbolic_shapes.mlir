// RUN: kiln-opt %s -split-input-file -kiln-shape-inference -kiln-symbolic-shapes=annotate=true | FileCheck %s

// Symbolic input dims (kiln.symbols, kiln.dims as the importer sets them) are followed
// through the graph: each op's symbolic result dims get expressions over the symbols
// (kiln.symbolic_dims with `annotate`), and the function's results get kiln.dims.

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: -> (tensor<?x10xf32> {kiln.dims = array<i64: -1, 10>})
// CHECK: onnx.Gemm {{.*}}kiln.symbolic_dims = ["batch", "16"]{{.*}} -> tensor<?x16xf32>
// CHECK: onnx.Relu {{.*}}kiln.symbolic_dims = ["batch", "16"]{{.*}} -> tensor<?x16xf32>
// CHECK: onnx.MatMul {{.*}}kiln.symbolic_dims = ["batch", "10"]
// CHECK: onnx.Add {{.*}}kiln.symbolic_dims = ["batch", "10"]
// CHECK: onnx.Softmax {{.*}}kiln.symbolic_dims = ["batch", "10"]
func.func @mlp(%x: tensor<?x8xf32> {kiln.dims = array<i64: -1, 8>}) -> none
    attributes {kiln.symbols = [["batch", 1, 64]]} {
  %w1 = onnx.Constant {value = dense<1.0> : tensor<8x16xf32>} : () -> tensor<8x16xf32>
  %b1 = onnx.Constant {value = dense<1.0> : tensor<16xf32>} : () -> tensor<16xf32>
  %w2 = onnx.Constant {value = dense<1.0> : tensor<16x10xf32>} : () -> tensor<16x10xf32>
  %b2 = onnx.Constant {value = dense<1.0> : tensor<1x10xf32>} : () -> tensor<1x10xf32>
  %0 = "onnx.Gemm"(%x, %w1, %b1) : (tensor<?x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> none
  %1 = "onnx.Relu"(%0) : (none) -> none
  %2 = "onnx.MatMul"(%1, %w2) : (none, tensor<16x10xf32>) -> none
  %3 = "onnx.Add"(%2, %b2) : (none, tensor<1x10xf32>) -> none
  %4 = "onnx.Softmax"(%3) {axis = -1 : i64} : (none) -> none
  return %4 : none
}

// -----

// Two inputs sharing `seq` (one symbol); a reshape splits the hidden dim and merges it
// back, Flatten multiplies the symbols; a reduction over a static axis keeps them.
// CHECK-LABEL: func.func @encoder
// CHECK-SAME: -> (tensor<?x?x32xf32> {kiln.dims = array<i64: -1, -2, 32>}, tensor<?x?x1xf32> {kiln.dims = array<i64: -1, -2, 1>})
// CHECK: onnx.Add {{.*}}kiln.symbolic_dims = ["batch", "seq", "32"]
// CHECK: onnx.Reshape {{.*}}kiln.symbolic_dims = ["batch", "seq", "4", "8"]{{.*}} -> tensor<?x?x4x8xf32>
// CHECK: onnx.Transpose {{.*}}kiln.symbolic_dims = ["batch", "seq", "8", "4"]
// CHECK: onnx.Reshape {{.*}}kiln.symbolic_dims = ["batch", "seq", "32"]
// CHECK: onnx.Flatten {{.*}}kiln.symbolic_dims = ["(batch * seq)", "32"]{{.*}} -> tensor<?x32xf32>
// CHECK: onnx.ReduceMean {{.*}}kiln.symbolic_dims = ["batch", "seq", "1"]
func.func @encoder(%x: tensor<?x?x32xf32> {kiln.dims = array<i64: -1, -2, 32>},
                   %y: tensor<?x?x32xf32> {kiln.dims = array<i64: -1, -2, 32>}) -> (none, none)
    attributes {kiln.symbols = [["batch", 1, 8], ["seq", 1, 512]]} {
  %split = onnx.Constant {value = dense<[0, 0, 4, 8]> : tensor<4xi64>} : () -> tensor<4xi64>
  %merge = onnx.Constant {value = dense<[0, 0, -1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = "onnx.Add"(%x, %y) : (tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> none
  %1 = "onnx.Reshape"(%0, %split) : (none, tensor<4xi64>) -> none
  %2 = "onnx.Transpose"(%1) {perm = [0, 1, 3, 2]} : (none) -> none
  %3 = "onnx.Reshape"(%2, %merge) : (none, tensor<3xi64>) -> none
  %4 = "onnx.Flatten"(%3) {axis = 2 : i64} : (none) -> none
  %ax = onnx.Constant {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %5 = "onnx.ReduceMean"(%x, %ax) : (tensor<?x?x32xf32>, tensor<1xi64>) -> none
  return %3, %5 : none, none
}
