// RUN: kiln-opt %s -kiln-decompose -split-input-file | FileCheck %s

// DFT: the signal axis next to the components, flattened, times a constant
// [N * C, K * 2] matrix (row 1 of the 8-point transform: e^-i2pi k/8), moved
// back. One-sided: K = 8 / 2 + 1 bins.
// CHECK-LABEL: func.func @dft_onesided
// CHECK-NOT: onnx.DFT
// CHECK: %[[W:.*]] = onnx.Constant {value = dense<{{\[}}[1.000000e+00, -0.000000e+00, 1.000000e+00, {{.*}}], [1.000000e+00, -0.000000e+00, 0.707106769, -0.707106769, {{.*}}]]> : tensor<8x10xf32>}
// CHECK: %[[T:.*]] = onnx.Transpose %arg0 {perm = [0, 2, 1, 3]} {{.*}} -> tensor<2x3x8x1xf32>
// CHECK: %[[R:.*]] = onnx.Reshape %[[T]], {{.*}} -> tensor<2x3x8xf32>
// CHECK: %[[P:.*]] = onnx.MatMul %[[R]], %[[W]] {{.*}} -> tensor<2x3x10xf32>
// CHECK: %[[U:.*]] = onnx.Reshape %[[P]], {{.*}} -> tensor<2x3x5x2xf32>
// CHECK: onnx.Transpose %[[U]] {perm = [0, 2, 1, 3]} {{.*}} -> tensor<2x5x3x2xf32>
func.func @dft_onesided(%x: tensor<2x8x3x1xf32>) -> tensor<2x5x3x2xf32> {
  %none = onnx.NoValue : () -> none
  %axis = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %0 = onnx.DFT %x, %none, %axis {onesided = 1 : i64} : (tensor<2x8x3x1xf32>, none, tensor<i64>) -> tensor<2x5x3x2xf32>
  return %0 : tensor<2x5x3x2xf32>
}

// -----

// Inverse of a complex signal at the default axis (-2): no transposes; 1/L
// in the matrix: (xr + i xi)(cos + i sin) / 4.
// CHECK-LABEL: func.func @dft_inverse
// CHECK: %[[W:.*]] = onnx.Constant {value = dense<{{\[}}[2.500000e-01, 0.000000e+00, {{.*}}], [-0.000000e+00, 2.500000e-01, {{.*}}]{{.*}} : tensor<8x8xf32>}
// CHECK-NOT: onnx.Transpose
// CHECK: %[[R:.*]] = onnx.Reshape %arg0, {{.*}} -> tensor<3x8xf32>
// CHECK: %[[P:.*]] = onnx.MatMul %[[R]], %[[W]]
// CHECK: onnx.Reshape %[[P]], {{.*}} -> tensor<3x4x2xf32>
func.func @dft_inverse(%x: tensor<3x4x2xf32>) -> tensor<3x4x2xf32> {
  %none = onnx.NoValue : () -> none
  %0 = onnx.DFT %x, %none, %none {inverse = 1 : i64} : (tensor<3x4x2xf32>, none, none) -> tensor<3x4x2xf32>
  return %0 : tensor<3x4x2xf32>
}

// -----

// STFT: frames gathered with constant indices, times the window, then the
// matrix of one frame's transform.
// CHECK-LABEL: func.func @stft
// CHECK-NOT: onnx.STFT
// CHECK: %[[I:.*]] = onnx.Constant {value = dense<{{\[}}[0, 1, 2, 3, 4, 5, 6, 7], [4, 5, 6, 7, 8, 9, 10, 11], {{.*}}]> : tensor<7x8xi64>}
// CHECK: %[[F:.*]] = onnx.Gather %arg0, %[[I]] {axis = 1 : i64} {{.*}} -> tensor<1x7x8x1xf32>
// CHECK: %[[WIN:.*]] = onnx.Reshape %arg1, {{.*}} -> tensor<1x1x8x1xf32>
// CHECK: %[[FW:.*]] = onnx.Mul %[[F]], %[[WIN]]
// CHECK: %[[W:.*]] = onnx.Constant {{.*}} : tensor<8x10xf32>}
// CHECK: %[[R:.*]] = onnx.Reshape %[[FW]], {{.*}} -> tensor<1x7x8xf32>
// CHECK: %[[P:.*]] = onnx.MatMul %[[R]], %[[W]]
// CHECK: onnx.Reshape %[[P]], {{.*}} -> tensor<1x7x5x2xf32>
func.func @stft(%x: tensor<1x32x1xf32>, %w: tensor<8xf32>) -> tensor<1x7x5x2xf32> {
  %none = onnx.NoValue : () -> none
  %step = onnx.Constant {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %0 = onnx.STFT %x, %step, %w, %none : (tensor<1x32x1xf32>, tensor<i64>, tensor<8xf32>, none) -> tensor<1x7x5x2xf32>
  return %0 : tensor<1x7x5x2xf32>
}
