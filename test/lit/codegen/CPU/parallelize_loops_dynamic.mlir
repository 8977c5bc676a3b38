// RUN: kiln-opt %s --kiln-parallelize-loops | FileCheck %s

// An op with run-time loop ranges (symbolic dims): when the run's work
// reaches 32768 elements, a kiln.parallel loop over its leading parallel
// loops but the innermost (here rows x cols of [?, ?, 64]: one iteration per
// (row, col), delinearized with the run-time count), each running the op on
// a [1, 1, 64] subview; below that, the op as it is.
// CHECK-LABEL: func.func @tanh_rows
// CHECK: %[[D0:.*]] = memref.dim %arg0, %c0
// CHECK: %[[D1:.*]] = memref.dim %arg0, %c1
// CHECK: %[[W0:.*]] = arith.muli %[[D0]], %[[D1]]
// CHECK: %[[N:.*]] = arith.muli %[[D0]], %[[D1]]
// CHECK: %[[W:.*]] = arith.muli %[[W0]], %c64
// CHECK: %[[ENOUGH:.*]] = arith.cmpi uge, %[[W]], %c32768
// CHECK: scf.if %[[ENOUGH]] {
// CHECK:   scf.parallel (%[[IV:.*]]) = (%c0{{.*}}) to (%[[N]])
// CHECK:     %[[J:.*]] = arith.remui %[[IV]], %[[D1]]
// CHECK:     %[[I:.*]] = arith.divui %[[IV]], %[[D1]]
// CHECK:     memref.subview %arg0[%[[I]], %[[J]], 0] [1, 1, 64] [1, 1, 1]
// CHECK:     linalg.generic
// CHECK:   } {kiln.parallel}
// CHECK: } else {
// CHECK:   linalg.generic {{.*}} ins(%arg0 : memref<?x?x64xf32>) outs(%arg1 : memref<?x?x64xf32>)
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @tanh_rows(%x: memref<?x?x64xf32>, %y: memref<?x?x64xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<?x?x64xf32>) outs(%y : memref<?x?x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  }
  return
}
