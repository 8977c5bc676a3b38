// RUN: kiln-opt %s --kiln-outline-parallel-loops | FileCheck %s

// The entry becomes @entry_ctx with the exec context as a last argument and
// @entry a wrapper passing null; the marked loop becomes a private
// body function over [begin, end) reading its memrefs from a closure, called
// through the context's parallel_for pointer (field 2 of the header), or
// directly over the whole range when the context is null.
// CHECK-LABEL: func.func private @entry_ctx_parallel_0(%arg0: !llvm.ptr, %arg1: i64, %arg2: i64)
// CHECK: llvm.load {{.*}} -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK: builtin.unrealized_conversion_cast {{.*}} to memref<64xf32>
// CHECK: scf.for
// CHECK: memref.store
// CHECK-LABEL: func.func @entry_ctx(%arg0: memref<64xf32>, %arg1: !llvm.ptr)
// CHECK: llvm.alloca
// CHECK: llvm.store
// CHECK: llvm.icmp "eq" %arg1
// CHECK: scf.if
// CHECK: func.call @entry_ctx_parallel_0
// CHECK: } else {
// CHECK: llvm.getelementptr %arg1[0, 2]
// CHECK: func.constant @entry_ctx_parallel_0
// CHECK: llvm.call %{{.*}}(%arg1,
// CHECK-NOT: scf.parallel
// CHECK-LABEL: func.func @entry(%arg0: memref<64xf32>)
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: call @entry_ctx(%arg0, %[[NULL]])
func.func @entry(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %f, %out[%i] : memref<64xf32>
    scf.reduce
  } {kiln.parallel}
  return
}

// Loops outside the entry (no context there) stay sequential.
// CHECK-LABEL: func.func private @helper
// CHECK: scf.parallel
// CHECK-NOT: kiln.parallel
func.func private @helper(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %f, %out[%i] : memref<64xf32>
    scf.reduce
  } {kiln.parallel}
  return
}
