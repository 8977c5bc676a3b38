// RUN: kiln-opt %s -split-input-file -kiln-gpu-map-loops=workgroup-size=4 \
// RUN:   -verify-diagnostics | FileCheck %s

// 3x5 iterations, linearized row-major: 4 workgroups of 4 threads, the last
// partly idle (guard), j = linear % 5 (the contiguous dim on neighbouring
// threads), i = linear / 5.
// CHECK-LABEL: func.func @map
// CHECK-DAG:   %[[C4:.*]] = arith.constant 4 : index
// CHECK:       scf.parallel (%[[G:.*]]) = (%{{.*}}) to (%[[C4]]) step
// CHECK:         scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%{{.*}}) step
// CHECK:           %[[MUL:.*]] = arith.muli %[[G]], %{{.*}} : index
// CHECK:           %[[LIN:.*]] = arith.addi %[[MUL]], %[[T]] : index
// CHECK:           %[[C15:.*]] = arith.constant 15 : index
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[LIN]], %[[C15]] : index
// CHECK:           scf.if %[[IN]] {
// CHECK:             %[[J:.*]] = arith.remui %[[LIN]], %{{.*}} : index
// CHECK:             %[[I:.*]] = arith.divui %[[LIN]], %{{.*}} : index
// CHECK:             memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// CHECK:       } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
func.func @map(%in: memref<3x5xf32>, %out: memref<3x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c3, %c5) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<3x5xf32>
    memref.store %x, %out[%i, %j] : memref<3x5xf32>
  }
  return
}

// -----

// 8 iterations from 2 step 2: no guard (2 full workgroups); the index is
// 2 + 2 * linear. A nested scf.parallel runs serially in its thread.
// CHECK-LABEL: func.func @strided_nested
// CHECK-NOT:   scf.if
// CHECK:       %[[LIN:.*]] = arith.addi
// CHECK:       %[[S:.*]] = arith.muli %[[LIN]], %{{.*}} : index
// CHECK:       %[[I:.*]] = arith.addi %[[S]], %{{.*}} : index
// CHECK:       scf.for %[[K:.*]] =
// CHECK:         memref.store %{{.*}}, %{{.*}}[%[[I]], %[[K]]]
func.func @strided_nested(%out: memref<18x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c18 = arith.constant 18 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c2) to (%c18) step (%c2) {
    scf.parallel (%k) = (%c0) to (%c3) step (%c1) {
      memref.store %f, %out[%i, %k] : memref<18x3xf32>
    }
  }
  return
}

// -----

// More iterations than 65535 workgroups of 4 threads hold: each thread loops
// (2 iterations: 65536 workgroups' worth in 32768 workgroups).
// CHECK-LABEL: func.func @many
// CHECK:       %[[C32768:.*]] = arith.constant 32768 : index
// CHECK:       scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C32768]])
// CHECK:         scf.parallel
// CHECK:           %[[C2:.*]] = arith.constant 2 : index
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[C2]]
// CHECK-NOT:         scf.if
// CHECK:             memref.store
func.func @many(%out: memref<262144xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 262144 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %f, %out[%i] : memref<262144xf32>
  }
  return
}

// -----

func.func @dynamic(%out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  // expected-error @+1 {{a parallel loop without static bounds cannot be mapped to workgroups}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %f, %out[%i] : memref<?xf32>
  }
  return
}
