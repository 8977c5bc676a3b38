// RUN: kiln-opt %s --split-input-file --kiln-emit-microkernels | FileCheck %s

// The emitter blocks as the op's #kiln.kernel_strategy says: 4 lanes x 3
// vectors = 12-column panels of the packed B (20 columns: 2 panels), and K
// (32) in reduction blocks of 16 (a loop over the blocks but the last, then
// the last one).
// CHECK: memref.global "private" constant @w_packed : memref<2x32x12xf32>
// CHECK-LABEL: func.func @matmul_as_recorded
// CHECK: scf.parallel
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c16
// CHECK: iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: vector.load {{.*}} : memref<2x32x12xf32>, vector<4xf32>
// CHECK: vector.fma {{.*}} : vector<4xf32>
// CHECK-NOT: linalg.matmul
memref.global "private" constant @w : memref<32x20xf32> = dense<1.0> {alignment = 64 : i64}
func.func @matmul_as_recorded(%a: memref<7x32xf32>, %c: memref<7x20xf32>) {
  %b = memref.get_global @w : memref<32x20xf32>
  linalg.matmul {kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 4, registers = 16, rows = 2, vectors = 3, reduction_block = 16>}
    ins(%a, %b : memref<7x32xf32>, memref<32x20xf32>) outs(%c : memref<7x20xf32>)
  return
}

// -----

// Without a strategy the op keeps the generic lowering (the emitter makes
// no choice of its own).
// CHECK-LABEL: func.func @no_strategy
// CHECK-NOT: vector.fma
// CHECK: linalg.matmul
func.func @no_strategy(%a: memref<7x32xf32>, %b: memref<32x20xf32>, %c: memref<7x20xf32>) {
  linalg.matmul ins(%a, %b : memref<7x32xf32>, memref<32x20xf32>) outs(%c : memref<7x20xf32>)
  return
}

// -----

// The conv and depthwise kernels run their whole reduction per block: a
// strategy that blocks it is not theirs (generic lowering, not a wrong
// answer).
// CHECK-LABEL: func.func @blocked_conv_reduction
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
func.func @blocked_conv_reduction(%i: memref<1x6x6x4xf32>, %w: memref<3x3x4x16xf32>, %o: memref<1x4x4x16xf32>,
                                  %dw: memref<3x3x4xf32>, %do: memref<1x4x4x4xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
    kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 6, vectors = 2, reduction_block = 16>}
    ins(%i, %w : memref<1x6x6x4xf32>, memref<3x3x4x16xf32>) outs(%o : memref<1x4x4x16xf32>)
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
    kiln.kernel_strategy = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 4, vectors = 1, reduction_block = 3>}
    ins(%i, %dw : memref<1x6x6x4xf32>, memref<3x3x4xf32>) outs(%do : memref<1x4x4x4xf32>)
  return
}
