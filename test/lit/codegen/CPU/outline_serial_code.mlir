// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-outline-serial-code{max-ops=10})' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-outline-serial-code{loops=true})' | FileCheck %s --check-prefix=LOOPS

// Over max-ops: the ops move to a noinline function taking a closure (the
// alloc with its dealloc: nothing after the run uses it). The subview (pure,
// of an argument) stays in place without cutting the run, constants are
// cloned, the memrefs and the index travel in the closure; the call is where
// the run's last op was.
// CHECK-LABEL: func.func private @two_loops_serial_0(%{{.*}}: !llvm.ptr)
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK-DAG: arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[A:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<8xf32>
// CHECK-DAG: %[[V:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<8xf32, strided<[1], offset: 8>>
// CHECK-DAG: %[[N:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[TMP:.*]] = memref.alloc()
// CHECK: scf.for
// CHECK: memref.load %[[A]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]]
// CHECK: memref.store %{{.*}}, %[[V]]
// CHECK: memref.dealloc %[[TMP]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @two_loops(
// CHECK: memref.subview
// CHECK: %[[CLOSURE:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>, struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>, i64)>
// CHECK-NOT: scf.for
// CHECK: call @two_loops_serial_0(%[[CLOSURE]])
// CHECK-NEXT: return
func.func @two_loops(%a: memref<8xf32>, %b: memref<16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 2.0 : f32
  %tmp = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    %y = arith.mulf %x, %f : f32
    memref.store %y, %tmp[%i] : memref<8xf32>
  }
  %view = memref.subview %b[8] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %tmp[%i] : memref<8xf32>
    memref.store %x, %view[%i] : memref<8xf32, strided<[1], offset: 8>>
  }
  memref.dealloc %tmp : memref<8xf32>
  return
}

// -----

// At most max-ops ops: left alone.
// CHECK-LABEL: func.func @small
// CHECK-NOT: call
// CHECK: scf.for
func.func @small(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %f, %a[%i] : memref<8xf32>
  }
  return
}

// -----

// A pure op with a result no closure holds (a vector) joins the run with its
// users; the f32 it is made of travels in the closure.
// CHECK-LABEL: func.func private @vector_from_above_serial_0
// CHECK: %[[F:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: vector.broadcast %[[F]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK-LABEL: func.func @vector_from_above
// CHECK-NOT: vector.broadcast
// CHECK: call @vector_from_above_serial_0
func.func @vector_from_above(%a: memref<64xf32>, %f: f32) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %v = vector.broadcast %f : f32 to vector<8xf32>
  scf.for %i = %c0 to %c64 step %c8 {
    vector.store %v, %a[%i] : memref<64xf32>, vector<8xf32>
  }
  scf.for %i = %c0 to %c64 step %c8 {
    %x = vector.load %a[%i] : memref<64xf32>, vector<8xf32>
    %y = arith.addf %x, %v : vector<8xf32>
    vector.store %y, %a[%i] : memref<64xf32>, vector<8xf32>
  }
  return
}

// -----

// loops=true: each top-level loop of a public function moves into a function
// of its own marked kiln.serial_loop (for kiln-merge-serial-loops), whatever
// the function's size; the loop with a result, and the private function's
// loop, stay.
// LOOPS-LABEL: func.func private @per_loop_serial_0(%{{.*}}: !llvm.ptr)
// LOOPS-SAME: kiln.serial_loop
// LOOPS: memref.store %{{.*}} : memref<8xf32>
// LOOPS-LABEL: func.func private @per_loop_serial_1(%{{.*}}: !llvm.ptr)
// LOOPS-SAME: kiln.serial_loop
// LOOPS: memref.store %{{.*}} : memref<8xf32, strided<[1], offset: 8>>
// LOOPS-LABEL: func.func @per_loop(
// LOOPS: call @per_loop_serial_0
// LOOPS: memref.subview
// LOOPS: call @per_loop_serial_1
// LOOPS: scf.for {{.*}} iter_args
// LOOPS-LABEL: func.func private @helper(
// LOOPS-NEXT: arith.constant
// LOOPS-NEXT: arith.constant
// LOOPS-NEXT: arith.constant
// LOOPS-NEXT: scf.for
func.func @per_loop(%a: memref<8xf32>, %b: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %f, %a[%i] : memref<8xf32>
  }
  %view = memref.subview %b[8] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %f, %view[%i] : memref<8xf32, strided<[1], offset: 8>>
  }
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %f) -> f32 {
    %x = memref.load %a[%i] : memref<8xf32>
    %y = arith.addf %acc, %x : f32
    scf.yield %y : f32
  }
  return %sum : f32
}
func.func private @helper(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %a[%i] : memref<8xf32>
  }
  return
}
