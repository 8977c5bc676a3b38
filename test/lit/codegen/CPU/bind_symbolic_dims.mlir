// RUN: kiln-opt %s -split-input-file -allow-unregistered-dialect -kiln-bind-symbolic-dims | FileCheck %s

// The entry of a model with symbols takes the symbols' values first; each
// argument with `?` dims becomes one pointer (memref<1xT>) reinterpreted with
// its run-time sizes (from the symbols) and row-major strides.

// CHECK-LABEL: func.func @m_main
// CHECK-SAME:    (%[[SYM:.*]]: memref<2xi64>, %[[X:.*]]: memref<1xf32>, %[[W:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<1xf32>, %[[S:.*]]: memref<i32>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[B:.*]] = memref.load %[[SYM]][%[[C0]]] : memref<2xi64>
// CHECK:         %[[BI:.*]] = arith.index_cast %[[B]] : i64 to index
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[Q:.*]] = memref.load %[[SYM]][%[[C1]]] : memref<2xi64>
// CHECK:         %[[QI:.*]] = arith.index_cast %[[Q]] : i64 to index
// CHECK:         %[[ST:.*]] = arith.muli %{{.*}}, %[[QI]] : index
// CHECK:         %[[XV:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[BI]], %[[QI]], 4], strides: [%[[ST]], 4, 1] : memref<1xf32> to memref<?x?x4xf32>
// CHECK:         %[[YV:.*]] = memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [%[[BI]], 8], strides: [8, 1] : memref<1xf32> to memref<?x8xf32>
// CHECK:         "test.use"(%[[XV]], %[[W]], %[[YV]], %[[S]])
func.func @m_main(%x: memref<?x?x4xf32>, %w: memref<4x8xf32>, %y: memref<?x8xf32>, %status: memref<i32>)
    attributes {kiln.symbols = [["batch", 1, 8], ["seq", 1, -1]],
                kiln.input_dims = [array<i64: -1, -2, 4>, array<i64>],
                kiln.output_dims = [array<i64: -1, 8>]} {
  "test.use"(%x, %w, %y, %status) : (memref<?x?x4xf32>, memref<4x8xf32>, memref<?x8xf32>, memref<i32>) -> ()
  return
}

// -----

// A static model is left as it is.
// CHECK-LABEL: func.func @static_main
// CHECK-SAME:    (%{{.*}}: memref<2x4xf32>, %{{.*}}: memref<i32>)
// CHECK-NOT:     reinterpret_cast
func.func @static_main(%x: memref<2x4xf32>, %status: memref<i32>) {
  "test.use"(%x, %status) : (memref<2x4xf32>, memref<i32>) -> ()
  return
}

// -----

// An expand_shape of a contiguous buffer splitting one `?` dim into two
// becomes a reinterpret_cast (upstream expand-strided-metadata crashes on it).
// CHECK-LABEL: func.func @split_main
// CHECK:         %[[ST:.*]] = arith.muli %{{.*}}, %[[D1:.*]] : index
// CHECK:         memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%{{.*}}, %[[D1]], 32], strides: [%[[ST]], 32, 1] : memref<?x32xf32> to memref<?x?x32xf32>
// CHECK-NOT:     memref.expand_shape
func.func @split_main(%d0: index, %d1: index, %n: index)
    attributes {kiln.symbols = [["batch", 1, -1], ["seq", 1, -1]],
                kiln.input_dims = [], kiln.output_dims = []} {
  %a = memref.alloc(%n) : memref<?x32xf32>
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [%d0, %d1, 32] : memref<?x32xf32> into memref<?x?x32xf32>
  "test.use"(%e) : (memref<?x?x32xf32>) -> ()
  return
}

// -----

// A run output (its dims name a run symbol, [name, 0, -1, 1]): one pointer too,
// viewed with the sizes of the value copied into it (memref.dim at the copy), which
// are stored into the run symbols' slots; the argument is marked kiln.run_output for
// kiln-allocate-run-outputs.
// CHECK-LABEL: func.func @run_main
// CHECK-SAME:    (%[[SYM:.*]]: memref<1xi64>, %[[X:.*]]: memref<6xf32>, %[[Y:.*]]: memref<1xf32> {kiln.run_output}, %{{.*}}: memref<i32>)
// CHECK:         %[[SRC:.*]] = "test.source"()
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[D0:.*]] = memref.dim %[[SRC]], %[[C0]] : memref<?x2xf32>
// CHECK:         %[[V:.*]] = arith.index_cast %[[D0]] : index to i64
// CHECK:         memref.store %[[V]], %[[SYM]][%{{.*}}] : memref<1xi64>
// CHECK:         %[[YV:.*]] = memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [%[[D0]], 2], strides: [2, 1] : memref<1xf32> to memref<?x2xf32>
// CHECK:         memref.copy %[[SRC]], %[[YV]]
func.func @run_main(%x: memref<6xf32>, %y: memref<?x2xf32>, %status: memref<i32>)
    attributes {kiln.symbols = [["y.dim0", 0, -1, 1]],
                kiln.input_dims = [array<i64>],
                kiln.output_dims = [array<i64: -1, 2>]} {
  %src = "test.source"() : () -> memref<?x2xf32>
  memref.copy %src, %y : memref<?x2xf32> to memref<?x2xf32>
  return
}
