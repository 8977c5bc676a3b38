// RUN: kiln-opt %s --kiln-select-kernel-strategy="vector-width=8 vector-registers=16" --kiln-emit-microkernels | FileCheck %s

// A matrix-vector product (one row: a classifier's last layer) has no rows to
// give the block independent FMA chains, so its block is 1 row x as many
// vectors as the registers hold with the fewest padded columns: 40 columns ->
// 5 vectors, panels of 40 (with 6 rows or more: 6 rows x 1 vector).
// CHECK: memref.global "private" constant @fc_packed : memref<1x32x40xf32>
// CHECK-LABEL: func.func @gemv
// CHECK: scf.for {{.*}} iter_args({{.*}}, {{.*}}, {{.*}}, {{.*}}, {{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-5: vector.fma
// CHECK: scf.yield
// CHECK-NOT: linalg.matmul
memref.global "private" constant @fc : memref<32x40xf32> = dense<1.0> {alignment = 64 : i64}
func.func @gemv(%a: memref<1x32xf32>, %c: memref<1x40xf32>) {
  %b = memref.get_global @fc : memref<32x40xf32>
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%c : memref<1x40xf32>)
  linalg.matmul ins(%a, %b : memref<1x32xf32>, memref<32x40xf32>) outs(%c : memref<1x40xf32>)
  return
}

// Two rows: up to 5 vectors (2 x 5 accumulators + 5 B + 1 broadcast).
// CHECK: memref.global "private" constant @fc2_packed : memref<1x32x40xf32>
// CHECK-LABEL: func.func @gemv_two_rows
// CHECK-COUNT-10: vector.fma
memref.global "private" constant @fc2 : memref<32x40xf32> = dense<1.0> {alignment = 64 : i64}
func.func @gemv_two_rows(%a: memref<2x32xf32>, %c: memref<2x40xf32>) {
  %b = memref.get_global @fc2 : memref<32x40xf32>
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%c : memref<2x40xf32>)
  linalg.matmul ins(%a, %b : memref<2x32xf32>, memref<32x40xf32>) outs(%c : memref<2x40xf32>)
  return
}
