// RUN: kiln-opt %s --split-input-file --kiln-outline-parallel-loops | FileCheck %s

// Each outlined body is recorded in the module's kiln.kernels with the ONNX
// nodes (NameLocs) of the loop and of the ops in it, in order of appearance
// and without repeats: profiles name kernels by them. Constants are not
// named (shared between loops).
// CHECK-LABEL: module attributes
// CHECK-SAME: kiln.kernels = {{\[}}["entry_ctx_parallel_0", "mm1, bias1"], ["entry_ctx_parallel_1", "(unnamed)"]]
// CHECK-LABEL: func.func private @entry_ctx_parallel_0
// CHECK-LABEL: func.func private @entry_ctx_parallel_1
module {
  func.func @entry(%out: memref<64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %f = arith.constant 1.0 : f32
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      %g = arith.constant 2.0 : f32 loc("a_constant"("m.onnx":0:0))
      %s = arith.addf %f, %g : f32
      memref.store %s, %out[%i] : memref<64xf32> loc(fused["bias1"("m.onnx":0:0), "mm1"("m.onnx":0:0)])
      scf.reduce
    } {kiln.parallel} loc("mm1"("m.onnx":0:0))
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      memref.store %f, %out[%i] : memref<64xf32>
      scf.reduce
    } {kiln.parallel}
    return
  }
}

// -----

// No outlined loop: no kiln.kernels.
// CHECK-LABEL: module {
// CHECK-NOT: kiln.kernels
// CHECK-LABEL: func.func @plain
module {
  func.func @plain(%out: memref<64xf32>) {
    return
  }
}
