// RUN: kiln-opt %s -split-input-file -kiln-shape-inference -kiln-symbolic-shapes=annotate=true | FileCheck %s

// Reductions whose axes, and Resizes whose scales or sizes, are graph inputs: shape
// inference leaves `?` for the dims those values choose; each becomes a run symbol named
// after the node (docs/dynamic-shapes.md, "Axes, scales and sizes read at run time"),
// which follows the result through elementwise ops and CastLike.

// CHECK-LABEL: func.func @reduce_runtime_axes
// CHECK-SAME: -> (tensor<?x1x?xf32> {kiln.dims = array<i64: -1, 1, -2>}, tensor<?x?xf32> {kiln.dims = array<i64: -3, -4>})
// CHECK-SAME: kiln.symbols = {{\[}}["red.dim0", 0, -1, 1], ["red.dim2", 0, -1, 1], ["mean.dim0", 0, -1, 1], ["mean.dim1", 0, -1, 1]]
// CHECK: onnx.ReduceSum{{.*}}kiln.symbolic_dims = ["red.dim0", "1", "red.dim2"]
// CHECK: onnx.Log{{.*}}kiln.symbolic_dims = ["red.dim0", "1", "red.dim2"]
// CHECK: onnx.CastLike{{.*}}kiln.symbolic_dims = ["red.dim0", "1", "red.dim2"]
// CHECK: onnx.ReduceMean{{.*}}kiln.symbolic_dims = ["mean.dim0", "mean.dim1"]
func.func @reduce_runtime_axes(%x: tensor<3x1x4xf32>, %axes: tensor<1xi64>, %like: tensor<f32>) -> (none, none) {
  %0 = "onnx.ReduceSum"(%x, %axes) : (tensor<3x1x4xf32>, tensor<1xi64>) -> none loc("red")
  %1 = "onnx.Log"(%0) : (none) -> none
  %2 = "onnx.CastLike"(%1, %like) : (none, tensor<f32>) -> none
  %3 = "onnx.ReduceMean"(%x, %axes) {keepdims = 0 : i64} : (tensor<3x1x4xf32>, tensor<1xi64>) -> none loc("mean")
  return %2, %3 : none, none
}

// -----

// All axes reduced: static, no run symbol.
// CHECK-LABEL: func.func @reduce_runtime_all_axes
// CHECK-NOT: kiln.symbols
// CHECK: onnx.ReduceMax{{.*}} -> tensor<1x1xf32>
func.func @reduce_runtime_all_axes(%x: tensor<3x4xf32>, %axes: tensor<2xi64>) -> none {
  %0 = "onnx.ReduceMax"(%x, %axes) : (tensor<3x4xf32>, tensor<2xi64>) -> none
  return %0 : none
}

// -----

// CHECK-LABEL: func.func @resize_runtime_sizes
// CHECK-SAME: -> (tensor<1x1x?x?xf32> {kiln.dims = array<i64: 1, 1, -1, -2>})
// CHECK-SAME: kiln.symbols = {{\[}}["rs.dim2", 0, -1, 1], ["rs.dim3", 0, -1, 1]]
// CHECK: onnx.Resize{{.*}}kiln.symbolic_dims = ["1", "1", "rs.dim2", "rs.dim3"]
func.func @resize_runtime_sizes(%x: tensor<1x1x2x4xf32>, %sizes: tensor<2xi64>) -> none {
  %none = onnx.NoValue : () -> none
  %0 = "onnx.Resize"(%x, %none, %none, %sizes) {mode = "nearest", axes = [2, 3]} : (tensor<1x1x2x4xf32>, none, none, tensor<2xi64>) -> none loc("rs")
  return %0 : none
}
