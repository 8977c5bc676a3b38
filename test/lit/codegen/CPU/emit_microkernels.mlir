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

// The epilogue may write a strided view of the same shape: the interior of a
// padded buffer (kiln-decompose-pads), created before the kernel.
// CHECK-LABEL: func.func @epilogue_into_padded_interior
// CHECK: %[[INTERIOR:.*]] = memref.subview %arg3[0, 1, 1, 0] [1, 4, 4, 16]
// CHECK: scf.parallel
// CHECK: vector.fma
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK: vector.store {{.*}}, %[[INTERIOR]]
// CHECK-NOT: linalg.generic
func.func @epilogue_into_padded_interior(%i: memref<1x6x6x4xf32>, %w: memref<3x3x4x16xf32>, %bias: memref<16xf32>, %padded: memref<1x6x6x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %interior = memref.subview %padded[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : memref<1x6x6x16xf32> to memref<1x4x4x16xf32, strided<[576, 96, 16, 1], offset: 112>>
  %x = memref.alloc() : memref<1x4x4x16xf32>
  linalg.fill ins(%cst : f32) outs(%x : memref<1x4x4x16xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x4xf32>, memref<3x3x4x16xf32>) outs(%x : memref<1x4x4x16xf32>)
  linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %bias : memref<1x4x4x16xf32>, memref<16xf32>) outs(%interior : memref<1x4x4x16xf32, strided<[576, 96, 16, 1], offset: 112>>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %cst : f32
    linalg.yield %r : f32
  }
  return
}

// A fill shared by two kernels (bufferization): the first gets a copy of it,
// the last writes the filled buffer itself, far from the fill. Both start
// their accumulators from the fill's value; fill and copy disappear.
// CHECK-LABEL: func.func @shared_fill
// CHECK-NOT: linalg.fill
// CHECK-NOT: memref.copy
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
func.func @shared_fill(%i: memref<1x6x6x4xf32>, %w: memref<3x3x4x16xf32>) -> (memref<1x4x4x16xf32>, memref<1x4x4x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %zero = memref.alloc() : memref<1x4x4x16xf32>
  linalg.fill ins(%cst : f32) outs(%zero : memref<1x4x4x16xf32>)
  %x = memref.alloc() : memref<1x4x4x16xf32>
  memref.copy %zero, %x : memref<1x4x4x16xf32> to memref<1x4x4x16xf32>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x4xf32>, memref<3x3x4x16xf32>) outs(%x : memref<1x4x4x16xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x4xf32>, memref<3x3x4x16xf32>) outs(%zero : memref<1x4x4x16xf32>)
  return %x, %zero : memref<1x4x4x16xf32>, memref<1x4x4x16xf32>
}

// The shared fill stays while a copy between it and the kernel still reads
// it (here: into a buffer no kernel writes); a fill followed by another
// write of the buffer before the kernel tells nothing about its value.
// CHECK-LABEL: func.func @shared_fill_still_read
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: scf.parallel
// CHECK-LABEL: func.func @fill_overwritten
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<1x4x4x16xf32>
// CHECK: linalg.fill {{.*}} outs(%[[ACC]]
// CHECK: linalg.pooling_nhwc_max
// CHECK: scf.parallel
// CHECK: vector.load %[[ACC]][
// CHECK: scf.for
func.func @shared_fill_still_read(%i: memref<1x6x6x4xf32>, %w: memref<3x3x4x16xf32>, %o: memref<1x4x4x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %zero = memref.alloc() : memref<1x4x4x16xf32>
  linalg.fill ins(%cst : f32) outs(%zero : memref<1x4x4x16xf32>)
  memref.copy %zero, %o : memref<1x4x4x16xf32> to memref<1x4x4x16xf32>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x4xf32>, memref<3x3x4x16xf32>) outs(%zero : memref<1x4x4x16xf32>)
  return
}
func.func @fill_overwritten(%i: memref<1x6x6x4xf32>, %w: memref<3x3x4x16xf32>, %p: memref<1x9x9x16xf32>) -> memref<1x4x4x16xf32> {
  %cst = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x4x4x16xf32>
  linalg.fill ins(%cst : f32) outs(%acc : memref<1x4x4x16xf32>)
  %win = memref.alloc() : memref<3x3xf32>
  linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %win : memref<1x9x9x16xf32>, memref<3x3xf32>) outs(%acc : memref<1x4x4x16xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x4xf32>, memref<3x3x4x16xf32>) outs(%acc : memref<1x4x4x16xf32>)
  return %acc : memref<1x4x4x16xf32>
}
