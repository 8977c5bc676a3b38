// RUN: kiln-opt %s --kiln-lower-reductions | FileCheck %s

// A row reduction: the output element is loaded before the reduction loop,
// carried as an iter_arg and stored after it (not on every step); the
// reassociable max becomes LLVM's NaN-propagating maximum intrinsic.
// CHECK-LABEL: func.func @row_max
// CHECK: scf.for %[[R:.*]] = %c0 to %c4
// CHECK: %[[INIT:.*]] = memref.load %arg1[%[[R]]]
// CHECK: %[[ACC:.*]] = scf.for %[[K:.*]] = %c0{{.*}} to %c128{{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (f32)
// CHECK: %[[V:.*]] = memref.load %arg0[%[[R]], %[[K]]]
// CHECK: %[[M:.*]] = llvm.intr.maximum(%[[V]], %[[A]]) {fastmathFlags = #llvm.fastmath<reassoc>}
// CHECK: scf.yield %[[M]]
// CHECK: memref.store %[[ACC]], %arg1[%[[R]]]
// CHECK-NOT: linalg.generic
func.func @row_max(%in: memref<4x128xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%in : memref<4x128xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %b fastmath<reassoc> : f32
    linalg.yield %m : f32
  }
  return
}

// A sum over two reduction loops with an extra input (the row mean) and
// linalg.index: both reduction loops carry the accumulator; the index is
// the loop's induction variable. Without `reassoc` arith ops stay arith.
// CHECK-LABEL: func.func @centered_sum
// CHECK: scf.for %[[R:.*]] =
// CHECK: memref.load %arg2[%[[R]]]
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args
// CHECK: scf.for %[[J:.*]] = {{.*}} iter_args
// CHECK: memref.load %arg0[%[[R]], %[[I]], %[[J]]]
// CHECK: memref.load %arg1[%[[R]]]
// CHECK: arith.index_cast %[[J]]
// CHECK: arith.addf
// CHECK: memref.store
// CHECK-NOT: linalg.generic
func.func @centered_sum(%in: memref<2x3x5xf32>, %mean: memref<2xf32>, %out: memref<2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%in, %mean : memref<2x3x5xf32>, memref<2xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %j = linalg.index 2 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %d = arith.subf %a, %m : f32
    %w = arith.mulf %d, %jf : f32
    %s = arith.addf %w, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// A reduction that is not innermost (pooling-like: the channel loop after
// the window) is left to convert-linalg-to-loops.
// CHECK-LABEL: func.func @reduction_not_innermost
// CHECK: linalg.generic
func.func @reduction_not_innermost(%in: memref<3x8xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%in : memref<3x8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}
