// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-unshare-empty-tensors))' | FileCheck %s

// One tensor.empty shared by two kernels (what CSE leaves): each gets its own,
// created right before it.
// CHECK-LABEL: func.func @shared_by_two
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[A:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NOT: tensor.empty
func.func @shared_by_two(%x: f32, %y: f32) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.fill ins(%x : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.fill ins(%y : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// Dynamic sizes travel with the clone; a use inside a region gets its clone
// before the op holding that region.
// CHECK-LABEL: func.func @dynamic_and_nested
// CHECK: %[[E0:.*]] = tensor.empty(%[[N:.*]]) : tensor<?xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<?xf32>)
// CHECK: %[[E1:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK-NEXT: scf.if
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<?xf32>)
func.func @dynamic_and_nested(%n: index, %x: f32, %c: i1) -> (tensor<?xf32>, tensor<?xf32>) {
  %e = tensor.empty(%n) : tensor<?xf32>
  %a = linalg.fill ins(%x : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %b = scf.if %c -> tensor<?xf32> {
    %f = linalg.fill ins(%x : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
    scf.yield %f : tensor<?xf32>
  } else {
    scf.yield %a : tensor<?xf32>
  }
  return %a, %b : tensor<?xf32>, tensor<?xf32>
}

// -----

// A single use is left alone.
// CHECK-LABEL: func.func @single_use
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT: tensor.empty
func.func @single_use(%x: f32) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.fill ins(%x : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
