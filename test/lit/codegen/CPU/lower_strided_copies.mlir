// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-lower-strided-copies))' | FileCheck %s
// The blocks lower to memcpy, not to the runner library's memrefCopy:
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-lower-strided-copies),convert-scf-to-cf,finalize-memref-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)' | FileCheck %s --check-prefix=LLVM
// LLVM-NOT: memrefCopy

// Copies between strided views with no contiguous block of 32 bytes become
// linalg.copy; contiguous ones stay memref.copy (a memcpy).
// CHECK-LABEL: func.func @copies
// CHECK: linalg.copy ins(%{{.*}} : memref<2x4xf32, strided<[8, 1]>>)
// CHECK: memref.copy %arg0, %arg1 : memref<4x8xf32> to memref<4x8xf32>
func.func @copies(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<2x4xf32>) {
  %v = memref.subview %a[0, 0] [2, 4] [1, 1] : memref<4x8xf32> to memref<2x4xf32, strided<[8, 1]>>
  memref.copy %v, %c : memref<2x4xf32, strided<[8, 1]>> to memref<2x4xf32>
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

// A Concat input written into its channel slice (NHWC): rows of 32 channels
// (128 bytes) are contiguous in both buffers; the copy becomes loops over the
// 56 x 56 pixels around a memcpy of one row. The unit batch gets no loop.
// CHECK-LABEL: func.func @concat_slice
// LLVM-LABEL: llvm.func @concat_slice
// LLVM: llvm.intr.memcpy
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C56:.*]] = arith.constant 56 : index
// CHECK: scf.for %[[H:.*]] = %[[C0]] to %[[C56]] step %[[C1]]
// CHECK: scf.for %[[W:.*]] = %[[C0]] to %[[C56]] step %[[C1]]
// CHECK: %[[FROM:.*]] = memref.subview %arg0[0, %[[H]], %[[W]], 0] [1, 1, 1, 32] [1, 1, 1, 1] : memref<1x56x56x32xf32> to memref<32xf32, strided<[1], offset: ?>>
// CHECK: %[[TO:.*]] = memref.subview %{{.*}}[0, %[[H]], %[[W]], 0] [1, 1, 1, 32] [1, 1, 1, 1] : memref<1x56x56x32xf32, strided<[301056, 5376, 96, 1], offset: 64>> to memref<32xf32, strided<[1], offset: ?>>
// CHECK: memref.copy %[[FROM]], %[[TO]] : memref<32xf32, strided<[1], offset: ?>> to memref<32xf32, strided<[1], offset: ?>>
// CHECK-NEXT: } {llvm.loop_annotation = #[[NOUNROLL:.*]]}
// CHECK-NEXT: } {llvm.loop_annotation = #[[NOUNROLL]]}
// CHECK-NOT: linalg.copy
func.func @concat_slice(%a: memref<1x56x56x32xf32>, %out: memref<1x56x56x96xf32>) {
  %v = memref.subview %out[0, 0, 0, 64] [1, 56, 56, 32] [1, 1, 1, 1] : memref<1x56x56x96xf32> to memref<1x56x56x32xf32, strided<[301056, 5376, 96, 1], offset: 64>>
  memref.copy %a, %v : memref<1x56x56x32xf32> to memref<1x56x56x32xf32, strided<[301056, 5376, 96, 1], offset: 64>>
  return
}

// -----

// Several inner dimensions contiguous in both (channels 4..7 of an NCHW
// batch of 2): the block is the 4 x 8 x 8 channels of one image, one loop over
// the batch.
// CHECK-LABEL: func.func @nchw_channels
// LLVM-LABEL: llvm.func @nchw_channels
// LLVM: llvm.intr.memcpy
// LLVM-NOT: memrefCopy
// CHECK: scf.for %[[N:.*]] =
// CHECK: memref.subview %{{.*}}[%[[N]], 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : memref<2x4x8x8xf32, strided<[512, 64, 8, 1], offset: 256>> to memref<4x8x8xf32, strided<[64, 8, 1], offset: ?>>
// CHECK: memref.subview %arg1[%[[N]], 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : memref<2x4x8x8xf32> to memref<4x8x8xf32, strided<[64, 8, 1], offset: ?>>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x8x8xf32, strided<[64, 8, 1], offset: ?>> to memref<4x8x8xf32, strided<[64, 8, 1], offset: ?>>
// CHECK-NOT: scf.for
func.func @nchw_channels(%a: memref<2x8x8x8xf32>, %b: memref<2x4x8x8xf32>) {
  %v = memref.subview %a[0, 4, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : memref<2x8x8x8xf32> to memref<2x4x8x8xf32, strided<[512, 64, 8, 1], offset: 256>>
  memref.copy %v, %b : memref<2x4x8x8xf32, strided<[512, 64, 8, 1], offset: 256>> to memref<2x4x8x8xf32>
  return
}

// -----

// Dynamic shapes and transposed layouts keep linalg.copy.
// CHECK-LABEL: func.func @not_blocks
// CHECK: linalg.copy ins(%{{.*}} : memref<?x64xf32, strided<[128, 1]>>)
// CHECK: linalg.copy ins(%{{.*}} : memref<64x64xf32, strided<[1, 64]>>)
// CHECK-NOT: memref.copy
func.func @not_blocks(%a: memref<?x64xf32, strided<[128, 1]>>, %b: memref<?x64xf32>,
                      %c: memref<64x64xf32, strided<[1, 64]>>, %d: memref<64x64xf32>) {
  memref.copy %a, %b : memref<?x64xf32, strided<[128, 1]>> to memref<?x64xf32>
  memref.copy %c, %d : memref<64x64xf32, strided<[1, 64]>> to memref<64x64xf32>
  return
}

// -----

// A fill of a strided view (a Pad's left border column, NHWC) becomes a loop
// over the rows filling one contiguous block of 16 channels each; a fill of a
// contiguous buffer and one of rows under 32 bytes stay as they are.
// CHECK-LABEL: func.func @border_fill
// CHECK: %[[CST:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.for %[[H:.*]] =
// CHECK: %[[ROW:.*]] = memref.subview %{{.*}}[0, %[[H]], 0, 0] [1, 1, 1, 16] [1, 1, 1, 1] : memref<1x10x1x16xf32, strided<[1920, 192, 16, 1]>> to memref<16xf32, strided<[1], offset: ?>>
// CHECK: linalg.fill ins(%[[CST]] : f32) outs(%[[ROW]] : memref<16xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: } {llvm.loop_annotation =
// CHECK: linalg.fill ins(%[[CST]] : f32) outs(%arg0 : memref<1x10x12x16xf32>)
// CHECK: linalg.fill ins(%[[CST]] : f32) outs(%{{.*}} : memref<1x10x1x4xf32, strided<[480, 48, 4, 1]>>)
func.func @border_fill(%a: memref<1x10x12x16xf32>, %b: memref<1x10x12x4xf32>) {
  %cst = arith.constant 0.0 : f32
  %col = memref.subview %a[0, 0, 0, 0] [1, 10, 1, 16] [1, 1, 1, 1] : memref<1x10x12x16xf32> to memref<1x10x1x16xf32, strided<[1920, 192, 16, 1]>>
  linalg.fill ins(%cst : f32) outs(%col : memref<1x10x1x16xf32, strided<[1920, 192, 16, 1]>>)
  linalg.fill ins(%cst : f32) outs(%a : memref<1x10x12x16xf32>)
  %narrow = memref.subview %b[0, 0, 0, 0] [1, 10, 1, 4] [1, 1, 1, 1] : memref<1x10x12x4xf32> to memref<1x10x1x4xf32, strided<[480, 48, 4, 1]>>
  linalg.fill ins(%cst : f32) outs(%narrow : memref<1x10x1x4xf32, strided<[480, 48, 4, 1]>>)
  return
}

// -----

// A unit dimension whose stride is not the contiguous one ends the block (the
// block type must be row-major contiguous for MemRefToLLVM's memcpy); a copy
// contiguous as a whole at a static offset is one memcpy, no loop.
// CHECK-LABEL: func.func @unit_dims
// CHECK: scf.for %[[I:.*]] =
// CHECK: memref.subview %arg0[%[[I]], 0, 0] [1, 1, 16] [1, 1, 1] : memref<4x1x16xf32, strided<[16, 7, 1]>> to memref<16xf32, strided<[1], offset: ?>>
// CHECK: memref.copy
// CHECK: }
// CHECK-NOT: scf.for
// CHECK: %[[WHOLE:.*]] = memref.subview %arg2[0, 0] [4, 16] [1, 1] : memref<4x16xf32, strided<[16, 1], offset: 32>> to memref<4x16xf32, strided<[16, 1], offset: 32>>
// CHECK: memref.copy %[[WHOLE]], %{{.*}} : memref<4x16xf32, strided<[16, 1], offset: 32>> to memref<4x16xf32, strided<[16, 1]>>
// LLVM-LABEL: llvm.func @unit_dims
// LLVM-COUNT-2: llvm.intr.memcpy
func.func @unit_dims(%a: memref<4x1x16xf32, strided<[16, 7, 1]>>, %b: memref<4x1x16xf32>,
                     %c: memref<4x16xf32, strided<[16, 1], offset: 32>>, %d: memref<4x16xf32>) {
  memref.copy %a, %b : memref<4x1x16xf32, strided<[16, 7, 1]>> to memref<4x1x16xf32>
  memref.copy %c, %d : memref<4x16xf32, strided<[16, 1], offset: 32>> to memref<4x16xf32>
  return
}
