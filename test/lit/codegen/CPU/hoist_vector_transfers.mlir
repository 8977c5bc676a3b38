// RUN: kiln-opt %s -pass-pipeline='builtin.module(func.func(kiln-hoist-vector-transfers))' | FileCheck %s

// The accumulator tile is read before the reduction loop, carried in
// registers, and written once after it.
// CHECK-LABEL: func.func @accumulate
// CHECK: vector.transfer_read %arg2
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: vector.transfer_read %arg2
// CHECK-NOT: vector.transfer_write
// CHECK: scf.yield
// CHECK: vector.transfer_write {{.*}} %arg2
func.func @accumulate(%a: memref<8x64xf32>, %b: memref<64x16xf32>, %c: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %f0 = arith.constant 0.0 : f32
  scf.for %k = %c0 to %c64 step %c1 {
    %acc = vector.transfer_read %c[%c0, %c0], %f0 {in_bounds = [true, true]} : memref<8x16xf32>, vector<8x16xf32>
    %va = vector.transfer_read %a[%c0, %k], %f0 {in_bounds = [true, true]} : memref<8x64xf32>, vector<8x1xf32>
    %vb = vector.transfer_read %b[%k, %c0], %f0 {in_bounds = [true, true]} : memref<64x16xf32>, vector<1x16xf32>
    %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %acc : vector<8x1xf32>, vector<1x16xf32> into vector<8x16xf32>
    vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<8x16xf32>, memref<8x16xf32>
  }
  return
}
