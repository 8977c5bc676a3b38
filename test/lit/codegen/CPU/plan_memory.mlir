// RUN: kiln-opt %s --kiln-plan-memory | FileCheck %s

// %a dies before %c is first used, so they share offset 0; %b overlaps both
// and gets the next 1024 bytes. The arena is the entry's last argument.
// CHECK: module attributes {kiln.scratch_size = 2048 : i64}
// CHECK-LABEL: func.func @entry(%arg0: memref<256xf32>, %arg1: memref<256xf32>, %arg2: memref<2048xi8> {kiln.scratch})
// CHECK-NOT: memref.alloc
// CHECK: %[[Z0:.*]] = arith.constant 0 : index
// CHECK: memref.view %arg2[%[[Z0]]][] : memref<2048xi8> to memref<256xf32>
// CHECK: %[[K:.*]] = arith.constant 1024 : index
// CHECK: memref.view %arg2[%[[K]]][] : memref<2048xi8> to memref<256xf32>
// CHECK: %[[Z1:.*]] = arith.constant 0 : index
// CHECK: memref.view %arg2[%[[Z1]]][] : memref<2048xi8> to memref<256xf32>
func.func @entry(%in: memref<256xf32>, %out: memref<256xf32>) {
  %a = memref.alloc() : memref<256xf32>
  %b = memref.alloc() : memref<256xf32>
  %c = memref.alloc() : memref<256xf32>
  memref.copy %in, %a : memref<256xf32> to memref<256xf32>
  memref.copy %a, %b : memref<256xf32> to memref<256xf32>
  memref.copy %b, %c : memref<256xf32> to memref<256xf32>
  memref.copy %c, %out : memref<256xf32> to memref<256xf32>
  return
}

// A buffer returned from the function keeps its allocation.
// CHECK-LABEL: func.func @escapes
// CHECK: memref.alloc
func.func @escapes(%in: memref<4xf32>) -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %in, %a : memref<4xf32> to memref<4xf32>
  return %a : memref<4xf32>
}
