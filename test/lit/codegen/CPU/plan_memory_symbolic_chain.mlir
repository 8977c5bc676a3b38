// RUN: kiln-opt %s --kiln-plan-memory --allow-unregistered-dialect | FileCheck %s

// A chain of buffers each sized by a dim of the one before it, through views
// (a deep model's layers: each layer's sizes are dims of the last layer's
// result). Every one is planned into the symbolic part of the arena: the
// sizes are resolved with a memo, not cut off at a fixed depth (before, the
// buffers past the 16th kept their allocations, malloc'd on every run).
// Consecutive buffers overlap in time (each is read by the next's sizes and
// copied into it), so the region of s0 takes two slots of 64 bytes per unit.
// CHECK: #[[MAP:.*]] = affine_map<()[s0] -> (s0 * 128)>
// CHECK: module attributes {kiln.dynamic_scratch_size = #[[MAP]], kiln.scratch_size = 0 : i64}
// CHECK-LABEL: func.func @chain
// CHECK-NOT: memref.alloc
// CHECK-COUNT-24: memref.view %arg2
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @chain(%symbols: memref<1xi64>, %in: memref<1xf32>)
    attributes {kiln.symbols = [["seq", 1, -1]]} {
  %c0 = arith.constant 0 : index
  %l0 = memref.load %symbols[%c0] : memref<1xi64>
  %seq = arith.index_cast %l0 : i64 to index
  %v0 = memref.reinterpret_cast %in to offset: [0], sizes: [%seq, 16], strides: [16, 1] : memref<1xf32> to memref<?x16xf32>
  %d1 = memref.dim %v0, %c0 : memref<?x16xf32>
  %a1 = memref.alloc(%d1) : memref<?x16xf32>
  memref.copy %v0, %a1 : memref<?x16xf32> to memref<?x16xf32>
  %v1 = memref.reinterpret_cast %a1 to offset: [0], sizes: [%d1, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d2 = memref.dim %v1, %c0 : memref<?x16xf32>
  %a2 = memref.alloc(%d2) : memref<?x16xf32>
  memref.copy %v1, %a2 : memref<?x16xf32> to memref<?x16xf32>
  %v2 = memref.reinterpret_cast %a2 to offset: [0], sizes: [%d2, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d3 = memref.dim %v2, %c0 : memref<?x16xf32>
  %a3 = memref.alloc(%d3) : memref<?x16xf32>
  memref.copy %v2, %a3 : memref<?x16xf32> to memref<?x16xf32>
  %v3 = memref.reinterpret_cast %a3 to offset: [0], sizes: [%d3, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d4 = memref.dim %v3, %c0 : memref<?x16xf32>
  %a4 = memref.alloc(%d4) : memref<?x16xf32>
  memref.copy %v3, %a4 : memref<?x16xf32> to memref<?x16xf32>
  %v4 = memref.reinterpret_cast %a4 to offset: [0], sizes: [%d4, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d5 = memref.dim %v4, %c0 : memref<?x16xf32>
  %a5 = memref.alloc(%d5) : memref<?x16xf32>
  memref.copy %v4, %a5 : memref<?x16xf32> to memref<?x16xf32>
  %v5 = memref.reinterpret_cast %a5 to offset: [0], sizes: [%d5, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d6 = memref.dim %v5, %c0 : memref<?x16xf32>
  %a6 = memref.alloc(%d6) : memref<?x16xf32>
  memref.copy %v5, %a6 : memref<?x16xf32> to memref<?x16xf32>
  %v6 = memref.reinterpret_cast %a6 to offset: [0], sizes: [%d6, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d7 = memref.dim %v6, %c0 : memref<?x16xf32>
  %a7 = memref.alloc(%d7) : memref<?x16xf32>
  memref.copy %v6, %a7 : memref<?x16xf32> to memref<?x16xf32>
  %v7 = memref.reinterpret_cast %a7 to offset: [0], sizes: [%d7, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d8 = memref.dim %v7, %c0 : memref<?x16xf32>
  %a8 = memref.alloc(%d8) : memref<?x16xf32>
  memref.copy %v7, %a8 : memref<?x16xf32> to memref<?x16xf32>
  %v8 = memref.reinterpret_cast %a8 to offset: [0], sizes: [%d8, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d9 = memref.dim %v8, %c0 : memref<?x16xf32>
  %a9 = memref.alloc(%d9) : memref<?x16xf32>
  memref.copy %v8, %a9 : memref<?x16xf32> to memref<?x16xf32>
  %v9 = memref.reinterpret_cast %a9 to offset: [0], sizes: [%d9, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d10 = memref.dim %v9, %c0 : memref<?x16xf32>
  %a10 = memref.alloc(%d10) : memref<?x16xf32>
  memref.copy %v9, %a10 : memref<?x16xf32> to memref<?x16xf32>
  %v10 = memref.reinterpret_cast %a10 to offset: [0], sizes: [%d10, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d11 = memref.dim %v10, %c0 : memref<?x16xf32>
  %a11 = memref.alloc(%d11) : memref<?x16xf32>
  memref.copy %v10, %a11 : memref<?x16xf32> to memref<?x16xf32>
  %v11 = memref.reinterpret_cast %a11 to offset: [0], sizes: [%d11, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d12 = memref.dim %v11, %c0 : memref<?x16xf32>
  %a12 = memref.alloc(%d12) : memref<?x16xf32>
  memref.copy %v11, %a12 : memref<?x16xf32> to memref<?x16xf32>
  %v12 = memref.reinterpret_cast %a12 to offset: [0], sizes: [%d12, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d13 = memref.dim %v12, %c0 : memref<?x16xf32>
  %a13 = memref.alloc(%d13) : memref<?x16xf32>
  memref.copy %v12, %a13 : memref<?x16xf32> to memref<?x16xf32>
  %v13 = memref.reinterpret_cast %a13 to offset: [0], sizes: [%d13, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d14 = memref.dim %v13, %c0 : memref<?x16xf32>
  %a14 = memref.alloc(%d14) : memref<?x16xf32>
  memref.copy %v13, %a14 : memref<?x16xf32> to memref<?x16xf32>
  %v14 = memref.reinterpret_cast %a14 to offset: [0], sizes: [%d14, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d15 = memref.dim %v14, %c0 : memref<?x16xf32>
  %a15 = memref.alloc(%d15) : memref<?x16xf32>
  memref.copy %v14, %a15 : memref<?x16xf32> to memref<?x16xf32>
  %v15 = memref.reinterpret_cast %a15 to offset: [0], sizes: [%d15, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d16 = memref.dim %v15, %c0 : memref<?x16xf32>
  %a16 = memref.alloc(%d16) : memref<?x16xf32>
  memref.copy %v15, %a16 : memref<?x16xf32> to memref<?x16xf32>
  %v16 = memref.reinterpret_cast %a16 to offset: [0], sizes: [%d16, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d17 = memref.dim %v16, %c0 : memref<?x16xf32>
  %a17 = memref.alloc(%d17) : memref<?x16xf32>
  memref.copy %v16, %a17 : memref<?x16xf32> to memref<?x16xf32>
  %v17 = memref.reinterpret_cast %a17 to offset: [0], sizes: [%d17, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d18 = memref.dim %v17, %c0 : memref<?x16xf32>
  %a18 = memref.alloc(%d18) : memref<?x16xf32>
  memref.copy %v17, %a18 : memref<?x16xf32> to memref<?x16xf32>
  %v18 = memref.reinterpret_cast %a18 to offset: [0], sizes: [%d18, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d19 = memref.dim %v18, %c0 : memref<?x16xf32>
  %a19 = memref.alloc(%d19) : memref<?x16xf32>
  memref.copy %v18, %a19 : memref<?x16xf32> to memref<?x16xf32>
  %v19 = memref.reinterpret_cast %a19 to offset: [0], sizes: [%d19, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d20 = memref.dim %v19, %c0 : memref<?x16xf32>
  %a20 = memref.alloc(%d20) : memref<?x16xf32>
  memref.copy %v19, %a20 : memref<?x16xf32> to memref<?x16xf32>
  %v20 = memref.reinterpret_cast %a20 to offset: [0], sizes: [%d20, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d21 = memref.dim %v20, %c0 : memref<?x16xf32>
  %a21 = memref.alloc(%d21) : memref<?x16xf32>
  memref.copy %v20, %a21 : memref<?x16xf32> to memref<?x16xf32>
  %v21 = memref.reinterpret_cast %a21 to offset: [0], sizes: [%d21, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d22 = memref.dim %v21, %c0 : memref<?x16xf32>
  %a22 = memref.alloc(%d22) : memref<?x16xf32>
  memref.copy %v21, %a22 : memref<?x16xf32> to memref<?x16xf32>
  %v22 = memref.reinterpret_cast %a22 to offset: [0], sizes: [%d22, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d23 = memref.dim %v22, %c0 : memref<?x16xf32>
  %a23 = memref.alloc(%d23) : memref<?x16xf32>
  memref.copy %v22, %a23 : memref<?x16xf32> to memref<?x16xf32>
  %v23 = memref.reinterpret_cast %a23 to offset: [0], sizes: [%d23, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  %d24 = memref.dim %v23, %c0 : memref<?x16xf32>
  %a24 = memref.alloc(%d24) : memref<?x16xf32>
  memref.copy %v23, %a24 : memref<?x16xf32> to memref<?x16xf32>
  %v24 = memref.reinterpret_cast %a24 to offset: [0], sizes: [%d24, 16], strides: [16, 1] : memref<?x16xf32> to memref<?x16xf32>
  "test.use"(%v24) : (memref<?x16xf32>) -> ()
  return
}
