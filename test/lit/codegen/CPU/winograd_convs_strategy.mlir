// RUN: kiln-opt %s --kiln-winograd-convs --split-input-file | FileCheck %s

// The choice is the strategy's: an eligible conv whose strategy does not say
// Winograd stays direct.
// CHECK-LABEL: func.func @strategy_says_direct
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK-NOT: linalg.batch_matmul
func.func @strategy_says_direct(%x: tensor<1x18x18x32xf32>, %o: tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %w = arith.constant dense<1.0> : tensor<3x3x32x32xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
    kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 6, vectors = 2, reduction_block = 288>}
    ins(%x, %w : tensor<1x18x18x32xf32>, tensor<3x3x32x32xf32>) outs(%o : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  return %c : tensor<1x16x16x32xf32>
}

// -----

// Without a strategy (kiln-select-kernel-strategy did not run) nothing is
// rewritten.
// CHECK-LABEL: func.func @no_strategy
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK-NOT: linalg.batch_matmul
func.func @no_strategy(%x: tensor<1x18x18x32xf32>, %o: tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %w = arith.constant dense<1.0> : tensor<3x3x32x32xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<1x18x18x32xf32>, tensor<3x3x32x32xf32>) outs(%o : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  return %c : tensor<1x16x16x32xf32>
}

// -----

// A strategy that says Winograd: rewritten.
// CHECK-LABEL: func.func @strategy_says_winograd
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// CHECK: linalg.batch_matmul
func.func @strategy_says_winograd(%x: tensor<1x18x18x32xf32>, %o: tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %w = arith.constant dense<1.0> : tensor<3x3x32x32xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
    kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 6, vectors = 2, reduction_block = 288, winograd = true>}
    ins(%x, %w : tensor<1x18x18x32xf32>, tensor<3x3x32x32xf32>) outs(%o : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  return %c : tensor<1x16x16x32xf32>
}
