// Smoke test of the lit set-up itself: kiln-opt, FileCheck, not, count and
// split-file all resolve, and kiln-opt round-trips upstream IR.

// RUN: split-file %s %t
// RUN: kiln-opt %t/identity.mlir | FileCheck %t/identity.mlir
// RUN: kiln-opt %t/identity.mlir | kiln-opt | FileCheck %t/identity.mlir
// RUN: kiln-opt %t/identity.mlir | grep -c "func.func" | count 1
// RUN: not kiln-opt %t/invalid.mlir 2>&1 | FileCheck %t/invalid.mlir

//--- identity.mlir
// CHECK-LABEL: func.func @identity
// CHECK-SAME:    (%[[ARG:.*]]: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[ARG]] : tensor<2x3xf32>
func.func @identity(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %arg0 : tensor<2x3xf32>
}

//--- invalid.mlir
// CHECK: error: use of undeclared SSA value name
func.func @broken() -> f32 {
  return %undefined : f32
}
