// RUN: kiln-opt %s --split-input-file --kiln-outline-parallel-loops --kiln-merge-kernels | FileCheck %s

// Three loops scaling by a weight: the first two are the same but for the
// weight they read (@w0, @w1), the third reads @w0 too but adds. The first
// two share one body taking the weight as an argument; each keeps its own
// symbol (the kernel table and profiles name it), now a thunk passing its
// global. The third is left alone.
// CHECK-LABEL: module attributes
// CHECK-SAME: kiln.kernels = {{\[}}["entry_ctx_parallel_0", "mul0"], ["entry_ctx_parallel_1", "mul1"], ["entry_ctx_parallel_2", "add2"]]
// CHECK: func.func private @entry_ctx_parallel_0_merged(%[[C:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[E:.*]]: i64, %[[W:.*]]: memref<64xf32>)
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-NOT: memref.get_global
// CHECK: scf.for
// CHECK: memref.load %[[W]]
// CHECK: arith.mulf
// CHECK: return
// CHECK: func.func private @entry_ctx_parallel_0(%[[C0:.*]]: !llvm.ptr, %[[B0:.*]]: i64, %[[E0:.*]]: i64)
// CHECK-NEXT: %[[G0:.*]] = memref.get_global @w0 : memref<64xf32>
// CHECK-NEXT: call @entry_ctx_parallel_0_merged(%[[C0]], %[[B0]], %[[E0]], %[[G0]])
// CHECK-NEXT: return
// CHECK: func.func private @entry_ctx_parallel_1(%[[C1:.*]]: !llvm.ptr, %[[B1:.*]]: i64, %[[E1:.*]]: i64)
// CHECK-NEXT: %[[G1:.*]] = memref.get_global @w1 : memref<64xf32>
// CHECK-NEXT: call @entry_ctx_parallel_0_merged(%[[C1]], %[[B1]], %[[E1]], %[[G1]])
// CHECK-NEXT: return
// CHECK: func.func private @entry_ctx_parallel_2(
// CHECK-NOT: call
// CHECK: memref.get_global @w0
// CHECK: arith.addf
// CHECK-NOT: _merged
module {
  memref.global "private" constant @w0 : memref<64xf32> = dense<1.0>
  memref.global "private" constant @w1 : memref<64xf32> = dense<2.0>
  func.func @entry(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>, %t: memref<64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %w0 = memref.get_global @w0 : memref<64xf32>
    %w1 = memref.get_global @w1 : memref<64xf32>
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      %a = memref.load %x[%i] : memref<64xf32>
      %b = memref.load %w0[%i] : memref<64xf32>
      %p = arith.mulf %a, %b : f32
      memref.store %p, %y[%i] : memref<64xf32>
      scf.reduce
    } {kiln.parallel} loc("mul0"("m.onnx":0:0))
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      %a = memref.load %y[%i] : memref<64xf32>
      %b = memref.load %w1[%i] : memref<64xf32>
      %p = arith.mulf %a, %b : f32
      memref.store %p, %z[%i] : memref<64xf32>
      scf.reduce
    } {kiln.parallel} loc("mul1"("m.onnx":0:0))
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      %a = memref.load %z[%i] : memref<64xf32>
      %b = memref.load %w0[%i] : memref<64xf32>
      %p = arith.addf %a, %b : f32
      memref.store %p, %t[%i] : memref<64xf32>
      scf.reduce
    } {kiln.parallel} loc("add2"("m.onnx":0:0))
    return
  }
}

// -----

// The same body reading the same global: merged with no extra argument.
// Different shapes are not merged.
// CHECK-LABEL: module attributes
// CHECK: func.func private @entry_ctx_parallel_0_merged(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: memref.get_global @w0
// CHECK: func.func private @entry_ctx_parallel_0(
// CHECK-NEXT: call @entry_ctx_parallel_0_merged(
// CHECK: func.func private @entry_ctx_parallel_1(
// CHECK-NEXT: call @entry_ctx_parallel_0_merged(
// CHECK: func.func private @entry_ctx_parallel_2(
// CHECK-NOT: call
// CHECK: memref.get_global @v
module {
  memref.global "private" constant @w0 : memref<64xf32> = dense<1.0>
  memref.global "private" constant @v : memref<32xf32> = dense<1.0>
  func.func @entry(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<32xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %w0 = memref.get_global @w0 : memref<64xf32>
    %v = memref.get_global @v : memref<32xf32>
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      %b = memref.load %w0[%i] : memref<64xf32>
      memref.store %b, %x[%i] : memref<64xf32>
      scf.reduce
    } {kiln.parallel}
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      %b = memref.load %w0[%i] : memref<64xf32>
      memref.store %b, %y[%i] : memref<64xf32>
      scf.reduce
    } {kiln.parallel}
    scf.parallel (%i) = (%c0) to (%c32) step (%c1) {
      %b = memref.load %v[%i] : memref<32xf32>
      memref.store %b, %z[%i] : memref<32xf32>
      scf.reduce
    } {kiln.parallel}
    return
  }
}
