// RUN: kiln-opt %s -kiln-decompose -split-input-file | FileCheck %s

// ConvTranspose, stride 2: zeros inserted between the input elements, then a stride-1
// Conv with the kernel's channels swapped and flipped.
// CHECK-LABEL: func.func @conv_transpose
// CHECK-NOT: onnx.ConvTranspose
// CHECK: onnx.Reshape %arg0, {{.*}} -> tensor<1x1x3x1x3x1xf32>
// CHECK: onnx.Pad {{.*}} -> tensor<1x1x3x2x3x2xf32>
// CHECK: onnx.Reshape {{.*}} -> tensor<1x1x6x6xf32>
// CHECK: onnx.Slice {{.*}} -> tensor<1x1x5x5xf32>
// CHECK: onnx.Transpose {{.*}} -> tensor<1x2x1x3x3xf32>
// CHECK: onnx.Slice {{.*}} -> tensor<2x1x3x3xf32>
// CHECK: onnx.Conv {{.*}}pads = [2, 2, 2, 2], strides = [1, 1]{{.*}} -> tensor<1x2x7x7xf32>
func.func @conv_transpose(%x: tensor<1x1x3x3xf32>, %w: tensor<1x2x3x3xf32>) -> tensor<1x2x7x7xf32> {
  %none = onnx.NoValue : () -> none
  %0 = onnx.ConvTranspose %x, %w, %none {strides = [2, 2]} : (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>, none) -> tensor<1x2x7x7xf32>
  return %0 : tensor<1x2x7x7xf32>
}

// -----

// LpPool (p = 2): Sqrt(AveragePool(x * x, count_include_pad) * window size).
// CHECK-LABEL: func.func @lp_pool
// CHECK-NOT: onnx.LpPool
// CHECK: %[[SQ:.*]] = onnx.Mul %arg0, %arg0
// CHECK: %[[AVG:.*]] = onnx.AveragePool %[[SQ]] {{{.*}}count_include_pad = 1 : i64{{.*}}kernel_shape = [2, 2]{{.*}}} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
// CHECK: %[[W:.*]] = onnx.Constant {{.*}}dense<4.000000e+00> : tensor<f32>
// CHECK: %[[S:.*]] = onnx.Mul %[[AVG]], %[[W]]
// CHECK: onnx.Sqrt %[[S]]
func.func @lp_pool(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32> {
  %0 = onnx.LpPool %x {kernel_shape = [2, 2]} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// MaxUnpool: X scattered into zeros of MaxPool's input shape (here 4x4) at
// the flat indices, then padded at the end to output_shape.
// CHECK-LABEL: func.func @max_unpool
// CHECK-NOT: onnx.MaxUnpool
// CHECK: %[[Z:.*]] = onnx.Constant {value = dense<0.000000e+00> : tensor<32xf32>}
// CHECK: %[[I:.*]] = onnx.Reshape %arg1, {{.*}} -> tensor<8xi64>
// CHECK: %[[X:.*]] = onnx.Reshape %arg0, {{.*}} -> tensor<8xf32>
// CHECK: %[[S:.*]] = onnx.ScatterElements %[[Z]], %[[I]], %[[X]] :
// CHECK: %[[R:.*]] = onnx.Reshape %[[S]], {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: %[[P:.*]] = onnx.Constant {value = dense<[0, 0, 0, 0, 0, 0, 1, 1]> : tensor<8xi64>}
// CHECK: onnx.Pad %[[R]], %[[P]], {{.*}} -> tensor<1x2x5x5xf32>
func.func @max_unpool(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi64>) -> tensor<1x2x5x5xf32> {
  %shape = onnx.Constant {value = dense<[1, 2, 5, 5]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = onnx.MaxUnpool %x, %i, %shape {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>, tensor<4xi64>) -> tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x5x5xf32>
}
