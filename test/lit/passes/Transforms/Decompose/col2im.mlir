// RUN: kiln-opt %s -kiln-decompose="keep-ops=ConvTranspose" | FileCheck %s

// Col2Im: a grouped ConvTranspose with a one-hot kernel over the blocks
// ([N, C * K, L] seen as [N, C * K, Lh, Lw]); output_padding reaches the
// image (5 + 0 + 1 - (2 * (2 - 1) + 3) = 1 along W).
// CHECK-LABEL: func.func @col2im
// CHECK-NOT: onnx.Col2Im
// CHECK: %[[W:.*]] = onnx.Constant {value = dense<{{\[\[\[\[}}1.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00]]], {{\[\[\[}}0.000000e+00, 1.000000e+00, 0.000000e+00], {{.*}} : tensor<12x1x2x3xf32>}
// CHECK: %[[X:.*]] = onnx.Reshape %arg0, {{.*}} -> tensor<1x12x4x2xf32>
// CHECK: onnx.ConvTranspose %[[X]], %[[W]], {{.*}} {dilations = [1, 1], group = 2 : i64, kernel_shape = [2, 3], output_padding = [0, 1], pads = [0, 0, 0, 1], strides = [1, 2]} {{.*}} -> tensor<1x2x5x5xf32>
func.func @col2im(%x: tensor<1x12x8xf32>) -> tensor<1x2x5x5xf32> {
  %image = onnx.Constant {value = dense<[5, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %block = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnx.Col2Im %x, %image, %block {pads = [0, 0, 0, 1], strides = [1, 2]} : (tensor<1x12x8xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x5x5xf32>
}
