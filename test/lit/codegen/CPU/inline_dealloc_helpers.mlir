// RUN: kiln-opt %s --kiln-inline-dealloc-helpers | FileCheck %s

// The helper bufferization-lower-deallocations made (memref<?xindex>
// arguments, which the bare-pointer calling convention cannot lower) is
// copied in place of each call and erased; other functions stay.

// CHECK-NOT:   func.func private @dealloc_helper
// CHECK-LABEL: func.func @entry
// CHECK-NOT:     call @dealloc_helper
// CHECK:         %[[N:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?xindex>
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[N]]
// CHECK:           memref.store %{{.*}}, %{{.*}} : memref<?xi1>
// CHECK:         call @other
// CHECK:         return
// CHECK-LABEL: func.func private @other
func.func private @dealloc_helper(%to_dealloc: memref<?xindex>, %cond: memref<?xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %false = arith.constant false
  %n = memref.dim %to_dealloc, %c0 : memref<?xindex>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %false, %cond[%i] : memref<?xi1>
  }
  return
}

func.func @entry(%a: memref<2xindex>, %b: memref<2xi1>) {
  %da = memref.cast %a : memref<2xindex> to memref<?xindex>
  %db = memref.cast %b : memref<2xi1> to memref<?xi1>
  call @dealloc_helper(%da, %db) : (memref<?xindex>, memref<?xi1>) -> ()
  call @other() : () -> ()
  return
}

func.func private @other() {
  return
}
