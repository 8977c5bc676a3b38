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

// -----

// An exported attention block: Shape -> Gather -> Unsqueeze -> Concat chains compute the
// head split's and merge's shapes from the symbols; each Reshape gets a constant shape
// (0 for a dim equal to the input's, sizes otherwise) and the chains are erased. Range's
// symbolic length is recorded as kiln.result_dims for the lowering; the embedding Gather
// takes the indices' symbols; the attention MatMuls multiply over a static K and over the
// symbolic sequence; Softmax runs over the symbolic axis.
// CHECK: #{{map[0-9]*}} = affine_map<()[s0, s1] -> (s1)>
// CHECK-LABEL: func.func @attention
// CHECK-SAME: -> (tensor<?x?x8xf32> {kiln.dims = array<i64: -1, -2, 8>}, tensor<?x?xi64> {kiln.dims = array<i64: -2, -2>})
// CHECK: %[[SEQ:.*]] = onnx.Gather %{{.*}}, %{{.*}} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
// CHECK: onnx.Range %{{.*}}, %[[SEQ]], %{{.*}} {kiln.result_dims = #{{map[0-9]*}}, kiln.symbolic_dims = ["seq"]}
// CHECK: onnx.Gather{{.*}}kiln.symbolic_dims = ["batch", "seq", "8"]
// CHECK-NOT: onnx.Concat
// CHECK: %[[SPLIT:.*]] = onnx.Constant {value = dense<[0, 0, 2, 4]> : tensor<4xi64>}
// CHECK: onnx.Reshape %{{.*}}, %[[SPLIT]] {kiln.symbolic_dims = ["batch", "seq", "2", "4"]}
// CHECK: onnx.MatMul{{.*}}kiln.symbolic_dims = ["batch", "2", "seq", "seq"]
// CHECK: onnx.Softmax{{.*}}kiln.symbolic_dims = ["batch", "2", "seq", "seq"]
// CHECK: onnx.MatMul{{.*}}kiln.symbolic_dims = ["batch", "2", "seq", "4"]
// CHECK-NOT: onnx.Shape
// CHECK: %[[MERGE:.*]] = onnx.Constant {value = dense<[0, 0, 8]> : tensor<3xi64>}
// CHECK: onnx.Reshape %{{.*}}, %[[MERGE]] {kiln.symbolic_dims = ["batch", "seq", "8"]}
// CHECK: onnx.Unsqueeze{{.*}}kiln.symbolic_dims = ["seq", "1"]
// CHECK: onnx.Add{{.*}}kiln.symbolic_dims = ["seq", "seq"]
func.func @attention(%ids: tensor<?x?xi64> {kiln.dims = array<i64: -1, -2>}) -> (none, none)
    attributes {kiln.symbols = [["batch", 1, -1], ["seq", 1, -1]]} {
  %emb = onnx.Constant {value = dense<1.0> : tensor<10x8xf32>} : () -> tensor<10x8xf32>
  %c0 = onnx.Constant {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %c1 = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %ax0 = onnx.Constant {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %heads = onnx.Constant {value = dense<[2, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %hidden = onnx.Constant {value = dense<[8]> : tensor<1xi64>} : () -> tensor<1xi64>
  %shape = "onnx.Shape"(%ids) {start = 0 : i64} : (tensor<?x?xi64>) -> none
  %seq = "onnx.Gather"(%shape, %c1) {axis = 0 : i64} : (none, tensor<i64>) -> none
  %pos = "onnx.Range"(%c0, %seq, %c1) : (tensor<i64>, none, tensor<i64>) -> none
  %x = "onnx.Gather"(%emb, %ids) {axis = 0 : i64} : (tensor<10x8xf32>, tensor<?x?xi64>) -> none
  %xs = "onnx.Shape"(%x) {start = 0 : i64} : (none) -> none
  %b = "onnx.Gather"(%xs, %c0) {axis = 0 : i64} : (none, tensor<i64>) -> none
  %bu = "onnx.Unsqueeze"(%b, %ax0) : (none, tensor<1xi64>) -> none
  %s = "onnx.Gather"(%xs, %c1) {axis = 0 : i64} : (none, tensor<i64>) -> none
  %su = "onnx.Unsqueeze"(%s, %ax0) : (none, tensor<1xi64>) -> none
  %split = "onnx.Concat"(%bu, %su, %heads) {axis = 0 : i64} : (none, none, tensor<2xi64>) -> none
  %q = "onnx.Reshape"(%x, %split) : (none, none) -> none
  %qt = "onnx.Transpose"(%q) {perm = [0, 2, 1, 3]} : (none) -> none
  %kt = "onnx.Transpose"(%q) {perm = [0, 2, 3, 1]} : (none) -> none
  %scores = "onnx.MatMul"(%qt, %kt) : (none, none) -> none
  %probs = "onnx.Softmax"(%scores) {axis = -1 : i64} : (none) -> none
  %ctx = "onnx.MatMul"(%probs, %qt) : (none, none) -> none
  %ctxt = "onnx.Transpose"(%ctx) {perm = [0, 2, 1, 3]} : (none) -> none
  %cs = "onnx.Shape"(%ctxt) {start = 0 : i64} : (none) -> none
  %cb = "onnx.Gather"(%cs, %c0) {axis = 0 : i64} : (none, tensor<i64>) -> none
  %cbu = "onnx.Unsqueeze"(%cb, %ax0) : (none, tensor<1xi64>) -> none
  %css = "onnx.Gather"(%cs, %c1) {axis = 0 : i64} : (none, tensor<i64>) -> none
  %csu = "onnx.Unsqueeze"(%css, %ax0) : (none, tensor<1xi64>) -> none
  %merge = "onnx.Concat"(%cbu, %csu, %hidden) {axis = 0 : i64} : (none, none, tensor<1xi64>) -> none
  %y = "onnx.Reshape"(%ctxt, %merge) : (none, none) -> none
  %pu = "onnx.Unsqueeze"(%pos, %c1) : (none, tensor<i64>) -> none
  %grid = "onnx.Add"(%pu, %pos) : (none, none) -> none
  return %y, %grid : none, none
}

// -----

// Image ops with a symbolic batch: dim 0 follows the batch, the others stay static.
// CHECK-LABEL: func.func @cnn
// CHECK-SAME: -> (tensor<?x4xf32> {kiln.dims = array<i64: -1, 4>})
// CHECK: onnx.Conv{{.*}}kiln.symbolic_dims = ["n", "4", "8", "8"]
// CHECK: onnx.BatchNormalization{{.*}}kiln.symbolic_dims = ["n", "4", "8", "8"]
// CHECK: onnx.MaxPool{{.*}}kiln.symbolic_dims = ["n", "4", "4", "4"]
// CHECK: onnx.GlobalAveragePool{{.*}}kiln.symbolic_dims = ["n", "4", "1", "1"]
func.func @cnn(%x: tensor<?x3x8x8xf32> {kiln.dims = array<i64: -1, 3, 8, 8>}) -> none
    attributes {kiln.symbols = [["n", 1, -1]]} {
  %w = onnx.Constant {value = dense<1.0> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %c = onnx.Constant {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %c) {pads = [1, 1, 1, 1]} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> none
  %1:3 = "onnx.BatchNormalization"(%0, %c, %c, %c, %c) : (none, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (none, none, none)
  %2:2 = "onnx.MaxPool"(%1#0) {kernel_shape = [2, 2], strides = [2, 2]} : (none) -> (none, none)
  %3 = "onnx.GlobalAveragePool"(%2#0) : (none) -> none
  %4 = "onnx.Flatten"(%3) {axis = 1 : i64} : (none) -> none
  return %4 : none
}

// -----

// A CNN's branches with a symbolic batch: ReLU6 (Clip), a channel Split, a spatial Pad
// and a channel Concat keep the batch symbol.
// CHECK-LABEL: func.func @branches
// CHECK-SAME: -> (tensor<?x8x5x5xf32> {kiln.dims = array<i64: -1, 8, 5, 5>})
// CHECK: onnx.Clip{{.*}}kiln.symbolic_dims = ["n", "8", "4", "4"]
// CHECK: onnx.Split{{.*}}kiln.symbolic_dims = ["n", "3", "4", "4"]
// CHECK: onnx.Pad{{.*}}kiln.symbolic_dims = ["n", "3", "5", "5"]
// CHECK: onnx.Pad{{.*}}kiln.symbolic_dims = ["n", "5", "5", "5"]
// CHECK: onnx.Concat{{.*}}kiln.symbolic_dims = ["n", "8", "5", "5"]
func.func @branches(%x: tensor<?x8x4x4xf32> {kiln.dims = array<i64: -1, 8, 4, 4>}) -> none
    attributes {kiln.symbols = [["n", 1, -1]]} {
  %lo = onnx.Constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %hi = onnx.Constant {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
  %split = onnx.Constant {value = dense<[3, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %pads = onnx.Constant {value = dense<[0, 0, 1, 0, 0, 0, 0, 1]> : tensor<8xi64>} : () -> tensor<8xi64>
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Clip"(%x, %lo, %hi) : (tensor<?x8x4x4xf32>, tensor<f32>, tensor<f32>) -> none
  %1:2 = "onnx.Split"(%0, %split) {axis = 1 : i64} : (none, tensor<2xi64>) -> (none, none)
  %2 = "onnx.Pad"(%1#0, %pads, %none, %none) {mode = "constant"} : (none, tensor<8xi64>, none, none) -> none
  %3 = "onnx.Pad"(%1#1, %pads, %none, %none) {mode = "reflect"} : (none, tensor<8xi64>, none, none) -> none
  %4 = "onnx.Concat"(%2, %3) {axis = 1 : i64} : (none, none) -> none
  return %4 : none
}
