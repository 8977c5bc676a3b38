// RUN: kiln-opt %s --kiln-lower-reductions | FileCheck %s

// Run-time loop ranges (symbolic dims): a row sum over [?, ?] with the
// accumulator carried by the reduction loop, its bounds read from the
// operands; and softmax's exp(x - max) over [?, ?] with the row's max
// loaded once before the innermost loop (not once per element).

// CHECK-LABEL: func.func @row_sum
// CHECK: %[[R:.*]] = memref.dim %arg0, %c0
// CHECK: %[[C:.*]] = memref.dim %arg0, %c1
// CHECK: scf.for %[[I:.*]] = %c0{{.*}} to %[[R]]
// CHECK:   %[[ACC:.*]] = memref.load %arg1[%[[I]]]
// CHECK:   %[[SUM:.*]] = scf.for %[[J:.*]] = %c0{{.*}} to %[[C]] {{.*}} iter_args(%[[A:.*]] = %[[ACC]]) -> (f32)
// CHECK:     memref.load %arg0[%[[I]], %[[J]]]
// CHECK:     arith.addf {{.*}} fastmath<reassoc>
// CHECK:   memref.store %[[SUM]], %arg1[%[[I]]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_sum(%x: memref<?x?xf32>, %y: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @exp_minus_max
// CHECK: scf.for %[[I:.*]] =
// CHECK:   %[[MAX:.*]] = memref.load %arg1[%[[I]]]
// CHECK:   scf.for %[[J:.*]] =
// CHECK:     %[[X:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK:     %[[D:.*]] = arith.subf %[[X]], %[[MAX]]
// CHECK:     math.exp %[[D]]
// CHECK:     memref.store {{.*}}, %arg2[%[[I]], %[[J]]]
func.func @exp_minus_max(%x: memref<?x?xf32>, %max: memref<?xf32>, %y: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : memref<?x?xf32>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: f32, %m: f32, %out: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  return
}

// The same op with static shapes is left to convert-linalg-to-loops.
// CHECK-LABEL: func.func @static_elementwise
// CHECK: linalg.generic
func.func @static_elementwise(%x: memref<4x8xf32>, %max: memref<4xf32>, %y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : memref<4x8xf32>, memref<4xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %out: f32):
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  }
  return
}
