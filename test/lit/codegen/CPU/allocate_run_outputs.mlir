// RUN: kiln-opt %s -split-input-file -allow-unregistered-dialect -kiln-allocate-run-outputs | FileCheck %s

// After deallocation: a run output's view (kiln-bind-symbolic-dims) becomes a buffer
// the entry allocates (memref.alloc without alignment: malloc's own pointer, which the
// runtime frees), and the argument the slot (memref<1xi64>) holding its address.

// CHECK-LABEL: func.func @run_main
// CHECK-SAME:    (%[[SYM:.*]]: memref<1xi64>, %[[SLOT:.*]]: memref<1xi64>, %{{.*}}: memref<i32>)
// CHECK-NOT:     kiln.run_output
// CHECK:         %[[D:.*]] = "test.size"()
// CHECK:         %[[BUF:.*]] = memref.alloc(%[[D]]) : memref<?x2xf32>
// CHECK-NOT:     alignment
// CHECK:         %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[BUF]]
// CHECK:         %[[W:.*]] = arith.index_cast %[[P]] : index to i64
// CHECK:         memref.store %[[W]], %[[SLOT]][%{{.*}}] : memref<1xi64>
// CHECK:         "test.write"(%[[BUF]])
// CHECK-NOT:     memref.dealloc
func.func @run_main(%sym: memref<1xi64>, %y: memref<1xf32> {kiln.run_output}, %status: memref<i32>) {
  %d = "test.size"() : () -> index
  %v = memref.reinterpret_cast %y to offset: [0], sizes: [%d, 2], strides: [2, 1] : memref<1xf32> to memref<?x2xf32>
  "test.write"(%v) : (memref<?x2xf32>) -> ()
  return
}

// -----

// Other arguments are left alone.
// CHECK-LABEL: func.func @plain_main
// CHECK-SAME:    (%{{.*}}: memref<4xf32>, %{{.*}}: memref<i32>)
// CHECK-NOT:     memref.alloc
func.func @plain_main(%x: memref<4xf32>, %status: memref<i32>) {
  "test.use"(%x) : (memref<4xf32>) -> ()
  return
}
