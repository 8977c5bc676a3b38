// RUN: kiln-opt %s --kiln-emit-microkernels=vector-width=8 | FileCheck %s

// A constant B is packed at compile time into [N/NR][K][NR] panels (20
// columns -> one zero-padded panel of 24), the fill becomes the accumulators'
// initial value, the outer loop is parallel, the accumulators are carried
// through the reduction loop and the last vector is stored masked.
// CHECK: memref.global "private" constant @w_packed : memref<1x16x24xf32>
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.fill
// CHECK: memref.get_global @w_packed
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.load {{.*}} : memref<1x16x24xf32>, vector<8xf32>
// CHECK: memref.load %arg0
// CHECK: vector.broadcast
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK: vector.maskedstore %arg1
// CHECK: kiln.parallel
// CHECK-NOT: linalg.matmul
memref.global "private" constant @w : memref<16x20xf32> = dense<1.0> {alignment = 64 : i64}
func.func @matmul(%a: memref<7x16xf32>, %c: memref<7x20xf32>) {
  %b = memref.get_global @w : memref<16x20xf32>
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%c : memref<7x20xf32>)
  linalg.matmul ins(%a, %b : memref<7x16xf32>, memref<16x20xf32>) outs(%c : memref<7x20xf32>)
  return
}

// Without a fill the accumulators start from the output; B is read in place.
// CHECK-LABEL: func.func @batch_matmul
// CHECK: scf.parallel
// CHECK: vector.load %arg2
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.load %arg1
// CHECK: vector.fma
// CHECK-NOT: linalg.batch_matmul
func.func @batch_matmul(%a: memref<2x6x8xf32>, %b: memref<2x8x16xf32>, %c: memref<2x6x16xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x6x8xf32>, memref<2x8x16xf32>) outs(%c : memref<2x6x16xf32>)
  return
}

// NHWC convolution: reduction loops kh, kw, c carry the accumulators.
// CHECK-LABEL: func.func @conv
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.fma
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
func.func @conv(%i: memref<1x6x6x4xf32>, %w: memref<3x3x4x16xf32>, %o: memref<1x4x4x16xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x4xf32>, memref<3x3x4x16xf32>) outs(%o : memref<1x4x4x16xf32>)
  return
}

// Depthwise: input vectors (not broadcasts) times filter vectors.
// CHECK-LABEL: func.func @depthwise
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.load %arg1
// CHECK: vector.load %arg0
// CHECK: vector.fma
// CHECK-NOT: linalg.depthwise_conv_2d_nhwc_hwc
func.func @depthwise(%i: memref<1x6x6x8xf32>, %w: memref<3x3x8xf32>, %o: memref<1x4x4x8xf32>) {
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x8xf32>, memref<3x3x8xf32>) outs(%o : memref<1x4x4x8xf32>)
  return
}

// An elementwise generic reading the kernel's output is applied to the
// accumulators before the store (bias add + ReLU on vectors), and the kernel
// stores straight into the generic's output. The output's initial value comes
// from a fill of another buffer copied in (bufferization shares fills).
// CHECK-LABEL: func.func @epilogue
// CHECK-NOT: memref.copy
// CHECK: scf.parallel
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK: vector.load %arg2
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK: vector.store {{.*}}, %arg3
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @epilogue(%i: memref<1x6x6x4xf32>, %w: memref<3x3x4x16xf32>, %bias: memref<16xf32>, %o: memref<1x4x4x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %zero = memref.alloc() : memref<1x4x4x16xf32>
  linalg.fill ins(%cst : f32) outs(%zero : memref<1x4x4x16xf32>)
  %x = memref.alloc() : memref<1x4x4x16xf32>
  memref.copy %zero, %x : memref<1x4x4x16xf32> to memref<1x4x4x16xf32>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x4xf32>, memref<3x3x4x16xf32>) outs(%x : memref<1x4x4x16xf32>)
  linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %bias : memref<1x4x4x16xf32>, memref<16xf32>) outs(%o : memref<1x4x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %cst : f32
    linalg.yield %r : f32
  }
  return
}

// A recurrence step h = tanh(x + h * R) writing h in place: the epilogue would
// store into h while the kernel still reads it, so it stays a separate loop.
// CHECK-LABEL: func.func @epilogue_writes_kernel_input
// CHECK: vector.fma
// CHECK: linalg.generic
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @epilogue_writes_kernel_input(%h: memref<1x16xf32>, %r: memref<16x16xf32>, %x: memref<1x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x16xf32>
  linalg.fill ins(%cst : f32) outs(%acc : memref<1x16xf32>)
  linalg.matmul ins(%h, %r : memref<1x16xf32>, memref<16x16xf32>) outs(%acc : memref<1x16xf32>)
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %acc : memref<1x16xf32>, memref<1x16xf32>) outs(%h : memref<1x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  }
  return
}
