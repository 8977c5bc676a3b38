// RUN: kiln-opt %s --kiln-plan-memory --allow-unregistered-dialect | FileCheck %s

// Buffers sized from the symbols (docs/dynamic-shapes.md) follow the static
// part of the arena (64 bytes here). %a and %c ([s0 * s1, 16] f32: 64 bytes
// per unit of s0 * s1) do not overlap in time and share the region of
// s0 * s1; %b ([s0 * s1, 32]: 128 bytes per unit) overlaps both and follows
// them in that region; %d ([s1] i32) has a region of its own after it. The
// bytes past the static part are kiln.dynamic_scratch_size; a size that is
// not computed from the symbols (%n) keeps its allocation.
// CHECK: #[[MAP:.*]] = affine_map<()[s0, s1] -> ((s0 * s1) * 192 + s1 * 64)>
// CHECK: module attributes {kiln.dynamic_scratch_size = #[[MAP]], kiln.scratch_size = 64 : i64}
// CHECK-LABEL: func.func @symbolic
// CHECK-SAME: %arg3: memref<64xi8> {kiln.scratch}
// CHECK: %[[S0:.*]] = arith.index_cast
// CHECK: %[[S1:.*]] = arith.index_cast
// CHECK: %[[DIM:.*]] = memref.dim
// CHECK: %[[M:.*]] = arith.muli %[[S0]], %[[S1]]
// CHECK: %[[U:.*]] = arith.muli %[[M]], %c128
// CHECK: %[[AOFF:.*]] = arith.addi %[[U]], %c64
// CHECK: memref.view %arg3[%[[AOFF]]][%[[DIM]]] : memref<64xi8> to memref<?x16xf32>
// CHECK: memref.view %arg3[%c64{{.*}}][%[[DIM]]] : memref<64xi8> to memref<?x32xf32>
// CHECK: memref.view %arg3[%{{.*}}][%[[DIM]]] : memref<64xi8> to memref<?x16xf32>
// CHECK: %[[M2:.*]] = arith.muli %[[S0]], %[[S1]]
// CHECK: %[[U2:.*]] = arith.muli %[[M2]], %c192
// CHECK: %[[DOFF:.*]] = arith.addi %[[U2]], %c64
// CHECK: memref.view %arg3[%[[DOFF]]][%{{.*}}] : memref<64xi8> to memref<?xi32>
// CHECK: memref.alloc(%arg2) : memref<?xf32>
// CHECK: memref.view %arg3[%{{.*}}][] : memref<64xi8> to memref<4x4xf32>
func.func @symbolic(%symbols: memref<2xi64>, %in: memref<1xf32>, %n: index)
    attributes {kiln.symbols = [["batch", 1, -1], ["seq", 1, -1]]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l0 = memref.load %symbols[%c0] : memref<2xi64>
  %batch = arith.index_cast %l0 : i64 to index
  %l1 = memref.load %symbols[%c1] : memref<2xi64>
  %seq = arith.index_cast %l1 : i64 to index
  %x = memref.reinterpret_cast %in to offset: [0], sizes: [%batch, %seq, 16], strides: [16, 16, 1] : memref<1xf32> to memref<?x?x16xf32>
  %rows = memref.collapse_shape %x [[0, 1], [2]] : memref<?x?x16xf32> into memref<?x16xf32>
  %m = memref.dim %rows, %c0 : memref<?x16xf32>
  %a = memref.alloc(%m) : memref<?x16xf32>
  %b = memref.alloc(%m) : memref<?x32xf32>
  %c = memref.alloc(%m) : memref<?x16xf32>
  %d = memref.alloc(%seq) : memref<?xi32>
  %e = memref.alloc(%n) : memref<?xf32>
  %f = memref.alloc() : memref<4x4xf32>
  memref.copy %rows, %a : memref<?x16xf32> to memref<?x16xf32>
  "test.use"(%a, %b) : (memref<?x16xf32>, memref<?x32xf32>) -> ()
  memref.copy %rows, %c : memref<?x16xf32> to memref<?x16xf32>
  "test.use"(%b, %c, %d, %e, %f) : (memref<?x32xf32>, memref<?x16xf32>, memref<?xi32>, memref<?xf32>, memref<4x4xf32>) -> ()
  return
}
