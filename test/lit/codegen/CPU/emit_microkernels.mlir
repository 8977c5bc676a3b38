// RUN: kiln-opt %s --kiln-select-kernel-strategy="vector-width=8 vector-registers=16" --kiln-emit-microkernels | FileCheck %s

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

// A constant B of a batch matmul (the Winograd products' 16 filters) is
// packed per batch: [batch][panels][K][NR], read at the task's batch.
// CHECK: memref.global "private" constant @bw_packed : memref<2x1x8x16xf32>
// CHECK-LABEL: func.func @batch_matmul_packed
// CHECK: %[[P:.*]] = memref.get_global @bw_packed
// CHECK: scf.parallel (%[[T:.*]]) =
// CHECK: %[[B:.*]] = arith.divui %[[T]], %c1
// CHECK: scf.for %[[K:.*]] = {{.*}} iter_args
// CHECK: vector.load %[[P]][%[[B]], %{{.*}}, %[[K]], %c0{{.*}}] : memref<2x1x8x16xf32>
memref.global "private" constant @bw : memref<2x8x16xf32> = dense<1.0> {alignment = 64 : i64}
func.func @batch_matmul_packed(%a: memref<2x6x8xf32>, %c: memref<2x6x16xf32>) {
  %b = memref.get_global @bw : memref<2x8x16xf32>
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
// CHECK: linalg.copy
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
func.func @fill_overwritten(%i: memref<1x6x6x4xf32>, %w: memref<3x3x4x16xf32>, %p: memref<1x4x4x16xf32>) -> memref<1x4x4x16xf32> {
  %cst = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x4x4x16xf32>
  linalg.fill ins(%cst : f32) outs(%acc : memref<1x4x4x16xf32>)
  linalg.copy ins(%p : memref<1x4x4x16xf32>) outs(%acc : memref<1x4x4x16xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x4xf32>, memref<3x3x4x16xf32>) outs(%acc : memref<1x4x4x16xf32>)
  return %acc : memref<1x4x4x16xf32>
}

// Output pixels (n, y, x) are flattened into the rows of a register block: a
// 4x4 output is two blocks of 6 rows (the second spans output rows 1 to 2),
// then a block of the 4 left. Each row's pixel is a div/rem of its flat index
// (outside the reduction loops).
// CHECK-LABEL: func.func @conv_rows_span
// CHECK: scf.parallel
// CHECK: scf.for %[[BLK:.*]] =
// CHECK: %[[M0:.*]] = arith.muli %[[BLK]], %c6
// CHECK: %[[R0:.*]] = arith.remui %[[M0]], %c16
// CHECK: %[[N0:.*]] = arith.divui %[[M0]], %c16
// CHECK: %[[Y0:.*]] = arith.divui %[[R0]], %c4
// CHECK: %[[X0:.*]] = arith.remui %[[R0]], %c4
// CHECK: %[[M5:.*]] = arith.addi %[[M0]], %c5
// CHECK: %[[R5:.*]] = arith.remui %[[M5]], %c16
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.store %{{.*}}, %arg2[%[[N0]], %[[Y0]], %[[X0]], %{{.*}}]
// CHECK: arith.remui %c12{{.*}}, %c16
// CHECK: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
func.func @conv_rows_span(%i: memref<1x6x6x4xf32>, %w: memref<3x3x4x16xf32>, %o: memref<1x4x4x16xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x4xf32>, memref<3x3x4x16xf32>) outs(%o : memref<1x4x4x16xf32>)
  return
}

// A short tail block is latency-bound (1 row x 2 vectors: two FMA chains), so
// the last full block and the tail run as two balanced blocks: 13 rows are
// one block of 6 in the loop, then 4 + 3 (not 6 + 6 + 1).
// CHECK-LABEL: func.func @matmul_balanced_tail
// CHECK: scf.for %[[BLK:.*]] = %{{.*}} to %{{.*}} step
// CHECK: arith.muli %[[BLK]], %c6
// CHECK: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK: memref.load %arg0[%c6
// CHECK: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK: memref.load %arg0[%c10
// CHECK-NOT: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>) {
func.func @matmul_balanced_tail(%a: memref<13x32xf32>, %b: memref<32x16xf32>, %c: memref<13x16xf32>) {
  linalg.matmul ins(%a, %b : memref<13x32xf32>, memref<32x16xf32>) outs(%c : memref<13x16xf32>)
  return
}

// A constant filter without dilation along W: a filter row's taps (kw, c) are
// contiguous in the input, so they are one reduction loop over the input
// viewed as [n][h][w * c], and the packed panels are [panels][kh][kw * c][NR].
// Both panels of 16 columns are in each task (8 row groups of 16 blocks are
// tasks enough, and an even number): each register block runs over them. The panel (3 x 12 x 16
// floats) fits L1: no prefetch.
// CHECK: memref.global "private" constant @cw_packed : memref<2x3x12x16xf32>
// CHECK-LABEL: func.func @conv_merged_taps
// CHECK: %[[PACKED:.*]] = memref.get_global @cw_packed
// CHECK: %[[ROWS:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<1x26x34x4xf32> into memref<1x26x136xf32>
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c8{{.*}})
// CHECK: scf.for %[[BLK:.*]] =
// CHECK: arith.muli %[[BLK]], %c6
// CHECK: scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: scf.for
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.load %[[PACKED]][%[[P]], %{{.*}}, %{{.*}}, %{{.*}}] : memref<2x3x12x16xf32>, vector<8xf32>
// CHECK: memref.load %[[ROWS]]
// CHECK: vector.fma
// CHECK-NOT: memref.prefetch
// CHECK-LABEL: func.func @conv_even_tasks
memref.global "private" constant @cw : memref<3x3x4x32xf32> = dense<1.0> {alignment = 64 : i64}
func.func @conv_merged_taps(%i: memref<1x26x34x4xf32>, %o: memref<1x24x32x32xf32>) {
  %w = memref.get_global @cw : memref<3x3x4x32xf32>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x26x34x4xf32>, memref<3x3x4x32xf32>) outs(%o : memref<1x24x32x32xf32>)
  return
}

// 225 pixels are 3 row groups; 3 chunks of the 5 column panels would make 9
// tasks (two threads: 5 and 4), so there are 4 chunks (12 tasks), chunk c
// holding panels [c * 5 / 4, (c + 1) * 5 / 4).
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c12{{.*}})
// CHECK: %[[CH:.*]] = arith.remui %{{.*}}, %c4
// CHECK: %[[S:.*]] = arith.muli %[[CH]], %c5
// CHECK: %[[P0:.*]] = arith.divui %[[S]], %c4
// CHECK: %[[NEXT:.*]] = arith.addi %[[CH]], %c1
// CHECK: %[[E:.*]] = arith.muli %[[NEXT]], %c5
// CHECK: %[[P1:.*]] = arith.divui %[[E]], %c4
// CHECK: scf.for %{{.*}} = %[[P0]] to %[[P1]]
// CHECK-LABEL: func.func @conv_prefetch
func.func @conv_even_tasks(%i: memref<1x15x15x8xf32>, %w: memref<1x1x8x80xf32>, %o: memref<1x15x15x80xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x15x15x8xf32>, memref<1x1x8x80xf32>) outs(%o : memref<1x15x15x80xf32>)
  return
}

// A packed panel larger than L1 (512 x 16 floats) is read from L2 by every
// block: it is prefetched 8 reduction steps ahead.
// CHECK: scf.for %[[C:.*]] = %c0{{.*}} to %c512 {{.*}} iter_args
// CHECK: %[[AHEAD:.*]] = arith.addi %[[C]], %c8
// CHECK: memref.prefetch %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[AHEAD]], %{{.*}}], read, locality<3>, data : memref<1x1x1x512x16xf32>
// CHECK: vector.fma
memref.global "private" constant @cw1x1 : memref<1x1x512x16xf32> = dense<1.0> {alignment = 64 : i64}
func.func @conv_prefetch(%i: memref<1x2x2x512xf32>, %o: memref<1x2x2x16xf32>) {
  %w = memref.get_global @cw1x1 : memref<1x1x512x16xf32>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x2x2x512xf32>, memref<1x1x512x16xf32>) outs(%o : memref<1x2x2x16xf32>)
  return
}

// K > 1024: the reduction runs in blocks of 512. All blocks but the last store
// partial sums to C (the first starts from the fill, later ones from C); the
// last block (peeled, here [1024, 1040)) starts from C and stores through the
// epilogue into its output.
// CHECK-LABEL: func.func @matmul_blocked_epilogue
// CHECK: %[[C:.*]] = memref.alloc() : memref<7x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.parallel
// CHECK: scf.for %[[K0:.*]] = %c0{{.*}} to %c1024{{.*}} step %c512
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K0]], %c0
// CHECK: scf.if %[[FIRST]] -> (vector<8xf32>)
// CHECK: } else {
// CHECK: vector.load %[[C]]
// CHECK: scf.for %{{.*}} = %[[K0]] to %{{.*}} step %{{.*}} iter_args
// CHECK: vector.fma
// CHECK: vector.store %{{.*}}, %[[C]]
// CHECK: scf.for %{{.*}} = %c1024{{.*}} to %c1040{{.*}} step %{{.*}} iter_args
// CHECK: vector.fma
// CHECK: vector.load %arg2
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}}, %arg3
// CHECK-NOT: linalg.generic
#col = affine_map<(d0, d1) -> (d1)>
func.func @matmul_blocked_epilogue(%a: memref<7x1040xf32>, %b: memref<1040x16xf32>, %bias: memref<16xf32>, %o: memref<7x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<7x16xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<7x16xf32>)
  linalg.matmul ins(%a, %b : memref<7x1040xf32>, memref<1040x16xf32>) outs(%c : memref<7x16xf32>)
  linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<7x16xf32>, memref<16xf32>) outs(%o : memref<7x16xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// NHWC max pooling runs as the depthwise kernel with max in place of the FMA:
// the -inf fill is the accumulators' initial value, the window's taps are
// input vector loads (20 channels: a full vector and a masked one of 4 lanes),
// the output is stored once.
// CHECK-LABEL: func.func @maxpool
// CHECK-NOT: linalg.fill
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.maskedload %arg0
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK: vector.maskedstore %arg1
// CHECK: vector.load %arg0
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK: vector.store {{.*}}, %arg1
// CHECK: kiln.parallel
// CHECK-NOT: linalg.pooling_nhwc_max
func.func @maxpool(%in: memref<1x9x9x20xf32>, %out: memref<1x4x4x20xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %win = memref.alloc() : memref<3x3xf32>
  linalg.fill ins(%ninf : f32) outs(%out : memref<1x4x4x20xf32>)
  linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%in, %win : memref<1x9x9x20xf32>, memref<3x3xf32>) outs(%out : memref<1x4x4x20xf32>)
  return
}

// AveragePool: a sum pooling whose division by the window's count fuses as
// the epilogue.
// CHECK-LABEL: func.func @avgpool
// CHECK: scf.parallel
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK: scf.yield
// CHECK: arith.divf {{.*}} : vector<8xf32>
// CHECK: vector.store {{.*}}, %arg1
// CHECK-NOT: linalg.pooling_nhwc_sum
// CHECK-NOT: linalg.generic
func.func @avgpool(%in: memref<1x8x8x16xf32>, %out: memref<1x4x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %count = arith.constant 4.0 : f32
  %win = memref.alloc() : memref<2x2xf32>
  %sum = memref.alloc() : memref<1x4x4x16xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<1x4x4x16xf32>)
  linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%in, %win : memref<1x8x8x16xf32>, memref<2x2xf32>) outs(%sum : memref<1x4x4x16xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sum : memref<1x4x4x16xf32>) outs(%out : memref<1x4x4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %count : f32
    linalg.yield %d : f32
  }
  return
}

// The epilogue reads the kernel's output through a reshape that only adds a
// unit dim (BERT: the matmul's [8, 16] viewed as [1, 8, 16] for the bias
// add), into a buffer allocated after the kernel: the allocation moves before
// the kernel, which stores at (0, row, col).
// CHECK-LABEL: func.func @epilogue_through_unit_reshape
// CHECK: %[[Y:.*]] = memref.alloc() {{.*}} : memref<1x8x16xf32>
// CHECK: scf.parallel
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK: vector.load %arg1
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[Y]][%c0{{[_0-9]*}}, 
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#last3 = affine_map<(d0, d1, d2) -> (d2)>
func.func @epilogue_through_unit_reshape(%a: memref<8x16xf32>, %bias: memref<16xf32>) -> memref<1x8x16xf32> {
  %w = memref.get_global @w16 : memref<16x16xf32>
  %cst = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x16xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%a, %w : memref<8x16xf32>, memref<16x16xf32>) outs(%c : memref<8x16xf32>)
  %e = memref.expand_shape %c [[0, 1], [2]] output_shape [1, 8, 16] : memref<8x16xf32> into memref<1x8x16xf32>
  %y = memref.alloc() {alignment = 64 : i64} : memref<1x8x16xf32>
  linalg.generic {indexing_maps = [#last3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bias, %e : memref<16xf32>, memref<1x8x16xf32>) outs(%y : memref<1x8x16xf32>) {
  ^bb0(%b: f32, %x: f32, %out: f32):
    %s = arith.addf %b, %x : f32
    linalg.yield %s : f32
  }
  return %y : memref<1x8x16xf32>
}
memref.global "private" constant @w16 : memref<16x16xf32> = dense<1.0> {alignment = 64 : i64}

// Attention scores: batch_matmul [2, 8, 16] read as [1, 2, 8, 16], scaled,
// plus a mask broadcast over heads and rows (a map with zeros): fused.
// CHECK-LABEL: func.func @epilogue_broadcast_mask
// CHECK: scf.parallel
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK: arith.divf {{.*}} : vector<8xf32>
// CHECK: vector.load %arg2[%c0{{[_0-9]*}}, %c0{{[_0-9]*}}, %c0{{[_0-9]*}}, 
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK: vector.store {{.*}}, %arg3[%c0{{[_0-9]*}}, 
// CHECK-NOT: linalg.generic
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#mask = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
func.func @epilogue_broadcast_mask(%q: memref<2x8x4xf32>, %k: memref<2x4x16xf32>, %m: memref<1x1x1x16xf32>, %o: memref<1x2x8x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %scale = arith.constant 2.0 : f32
  %s = memref.alloc() : memref<2x8x16xf32>
  linalg.fill ins(%cst : f32) outs(%s : memref<2x8x16xf32>)
  linalg.batch_matmul ins(%q, %k : memref<2x8x4xf32>, memref<2x4x16xf32>) outs(%s : memref<2x8x16xf32>)
  %e = memref.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 16] : memref<2x8x16xf32> into memref<1x2x8x16xf32>
  linalg.generic {indexing_maps = [#id4, #mask, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%e, %m : memref<1x2x8x16xf32>, memref<1x1x1x16xf32>) outs(%o : memref<1x2x8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %d = arith.divf %x, %scale : f32
    %r = arith.addf %d, %y : f32
    linalg.yield %r : f32
  }
  return
}

// A reshape that splits a dim that is not 1 ([8, 16] as [2, 4, 16]) is not a
// unit-dim view: the generic stays a separate loop.
// CHECK-LABEL: func.func @no_epilogue_through_split
// CHECK: vector.fma
// CHECK: memref.expand_shape
// CHECK: linalg.generic
func.func @no_epilogue_through_split(%a: memref<8x16xf32>, %bias: memref<16xf32>, %y: memref<2x4x16xf32>) {
  %w = memref.get_global @w16 : memref<16x16xf32>
  %cst = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x16xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%a, %w : memref<8x16xf32>, memref<16x16xf32>) outs(%c : memref<8x16xf32>)
  %e = memref.expand_shape %c [[0, 1], [2]] output_shape [2, 4, 16] : memref<8x16xf32> into memref<2x4x16xf32>
  linalg.generic {indexing_maps = [#last3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bias, %e : memref<16xf32>, memref<2x4x16xf32>) outs(%y : memref<2x4x16xf32>) {
  ^bb0(%b: f32, %x: f32, %out: f32):
    %s = arith.addf %b, %x : f32
    linalg.yield %s : f32
  }
  return
}

// Concat of conv outputs: bias + ReLU writes the conv's slice of a buffer
// allocated (and sliced) after the conv. Allocation and subview move before
// the kernel, which stores into the slice.
// CHECK-LABEL: func.func @epilogue_into_concat_slice
// CHECK: %[[CAT:.*]] = memref.alloc() : memref<1x4x4x32xf32>
// CHECK: %[[SLICE:.*]] = memref.subview %[[CAT]][0, 0, 0, 16] [1, 4, 4, 16]
// CHECK: scf.parallel
// CHECK: vector.fma
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK: vector.store {{.*}}, %[[SLICE]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[CAT]]
func.func @epilogue_into_concat_slice(%i: memref<1x6x6x4xf32>, %w: memref<3x3x4x16xf32>, %bias: memref<16xf32>) -> memref<1x4x4x32xf32> {
  %cst = arith.constant 0.0 : f32
  %x = memref.alloc() : memref<1x4x4x16xf32>
  linalg.fill ins(%cst : f32) outs(%x : memref<1x4x4x16xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x4xf32>, memref<3x3x4x16xf32>) outs(%x : memref<1x4x4x16xf32>)
  %cat = memref.alloc() : memref<1x4x4x32xf32>
  %slice = memref.subview %cat[0, 0, 0, 16] [1, 4, 4, 16] [1, 1, 1, 1] : memref<1x4x4x32xf32> to memref<1x4x4x16xf32, strided<[512, 128, 32, 1], offset: 16>>
  linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %bias : memref<1x4x4x16xf32>, memref<16xf32>) outs(%slice : memref<1x4x4x16xf32, strided<[512, 128, 32, 1], offset: 16>>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %cst : f32
    linalg.yield %r : f32
  }
  return %cat : memref<1x4x4x32xf32>
}

// A buffer bufferization reuses: its earlier value is used before the kernel
// (done with by then), so the epilogue still fuses. A view of the output
// taken before the kernel may be read after it: no fusion then.
// CHECK-LABEL: func.func @epilogue_reused_buffer
// CHECK: linalg.copy
// CHECK: linalg.copy
// CHECK: scf.parallel
// CHECK: vector.fma
// CHECK: vector.store {{.*}}, %arg3
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @no_epilogue_view_read_later
// CHECK: scf.parallel
// CHECK: linalg.generic
func.func @epilogue_reused_buffer(%i: memref<1x6x6x4xf32>, %w: memref<3x3x4x16xf32>, %bias: memref<16xf32>, %o: memref<1x4x4x16xf32>, %a: memref<1x4x4x16xf32>, %b: memref<1x4x4x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %x = memref.alloc() : memref<1x4x4x16xf32>
  linalg.copy ins(%a : memref<1x4x4x16xf32>) outs(%x : memref<1x4x4x16xf32>)
  linalg.copy ins(%x : memref<1x4x4x16xf32>) outs(%b : memref<1x4x4x16xf32>)
  linalg.fill ins(%cst : f32) outs(%x : memref<1x4x4x16xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x4xf32>, memref<3x3x4x16xf32>) outs(%x : memref<1x4x4x16xf32>)
  linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %bias : memref<1x4x4x16xf32>, memref<16xf32>) outs(%o : memref<1x4x4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  return
}
func.func @no_epilogue_view_read_later(%i: memref<1x6x6x4xf32>, %w: memref<3x3x4x16xf32>, %bias: memref<16xf32>, %o: memref<1x4x4x16xf32>, %b: memref<1x4x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %x = memref.alloc() : memref<1x4x4x16xf32>
  %row = memref.subview %x[0, 0, 0, 0] [1, 1, 4, 16] [1, 1, 1, 1] : memref<1x4x4x16xf32> to memref<1x4x16xf32, strided<[256, 16, 1]>>
  linalg.fill ins(%cst : f32) outs(%x : memref<1x4x4x16xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : memref<1x6x6x4xf32>, memref<3x3x4x16xf32>) outs(%x : memref<1x4x4x16xf32>)
  linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %bias : memref<1x4x4x16xf32>, memref<16xf32>) outs(%o : memref<1x4x4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  memref.copy %row, %b : memref<1x4x16xf32, strided<[256, 16, 1]>> to memref<1x4x16xf32>
  return
}
