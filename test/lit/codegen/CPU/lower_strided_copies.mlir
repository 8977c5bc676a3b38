// RUN: kiln-opt %s -pass-pipeline='builtin.module(func.func(kiln-lower-strided-copies))' | FileCheck %s

// Copies between strided views become linalg.copy; contiguous ones stay
// memref.copy (a memcpy).
// CHECK-LABEL: func.func @copies
// CHECK: linalg.copy ins(%{{.*}} : memref<2x4xf32, strided<[8, 1]>>)
// CHECK: memref.copy %arg0, %arg1 : memref<4x8xf32> to memref<4x8xf32>
func.func @copies(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<2x4xf32>) {
  %v = memref.subview %a[0, 0] [2, 4] [1, 1] : memref<4x8xf32> to memref<2x4xf32, strided<[8, 1]>>
  memref.copy %v, %c : memref<2x4xf32, strided<[8, 1]>> to memref<2x4xf32>
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  return
}
