// RUN: kiln-opt %s --kiln-plan-memory | FileCheck %s

// Booleans take one byte each in memory (the LLVM lowering stores i1 as i8),
// so 100 of them need 100 bytes (128 after 64-byte alignment), not 13.
// CHECK: module attributes {kiln.scratch_size = 128 : i64}
// CHECK: memref.view %{{.*}} : memref<128xi8> to memref<100xi1>
func.func @bools(%in: memref<100xi1>, %out: memref<100xi1>) {
  %a = memref.alloc() : memref<100xi1>
  memref.copy %in, %a : memref<100xi1> to memref<100xi1>
  memref.copy %a, %out : memref<100xi1> to memref<100xi1>
  return
}
