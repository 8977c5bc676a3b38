// RUN: kiln-opt %s --kiln-plan-memory -split-input-file | FileCheck %s

// A buffer of a loop body lives for the whole loop: it shares no bytes with the buffer
// carried across iterations (%acc, used before, in and after the loop), nor with the one
// allocated in the branch inside the loop; %after, first used after the loop, reuses the
// body's bytes.
// CHECK: module attributes {kiln.scratch_size = 3072 : i64}
// CHECK-LABEL: func.func @loop_body_buffers
// CHECK-NOT: memref.alloc
// CHECK: %[[C0:c0_[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %{{.*}}[%[[C0]]][] : memref<3072xi8> to memref<256xf32>
// CHECK: scf.for
// CHECK:   %[[C1:.*]] = arith.constant 1024 : index
// CHECK-NEXT:   memref.view %{{.*}}[%[[C1]]][] : memref<3072xi8> to memref<256xf32>
// CHECK:   scf.if
// CHECK:     %[[C2:.*]] = arith.constant 2048 : index
// CHECK-NEXT:     memref.view %{{.*}}[%[[C2]]][] : memref<3072xi8> to memref<256xf32>
// CHECK: %[[C3:.*]] = arith.constant 1024 : index
// CHECK-NEXT: memref.view %{{.*}}[%[[C3]]][] : memref<3072xi8> to memref<256xf32>
func.func @loop_body_buffers(%in: memref<256xf32>, %out: memref<256xf32>, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %acc = memref.alloc() : memref<256xf32>
  memref.copy %in, %acc : memref<256xf32> to memref<256xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %tmp = memref.alloc() : memref<256xf32>
    memref.copy %acc, %tmp : memref<256xf32> to memref<256xf32>
    scf.if %c {
      %branch = memref.alloc() : memref<256xf32>
      memref.copy %tmp, %branch : memref<256xf32> to memref<256xf32>
      memref.copy %branch, %tmp : memref<256xf32> to memref<256xf32>
    }
    memref.copy %tmp, %acc : memref<256xf32> to memref<256xf32>
  }
  %after = memref.alloc() : memref<256xf32>
  memref.copy %acc, %after : memref<256xf32> to memref<256xf32>
  memref.copy %after, %out : memref<256xf32> to memref<256xf32>
  return
}

// -----

// Buffers of an scf.parallel's iterations run at once: they keep their allocation, and
// so does a buffer yielded by a loop.
// CHECK-LABEL: func.func @parallel_and_yielded
// CHECK: scf.parallel
// CHECK:   memref.alloc() : memref<16xf32>
// CHECK: scf.for
// CHECK:   memref.alloc() : memref<8xf32>
func.func @parallel_and_yielded(%in: memref<16xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %t = memref.alloc() : memref<16xf32>
    memref.copy %in, %t : memref<16xf32> to memref<16xf32>
    scf.reduce
  }
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%b = %out) -> memref<8xf32> {
    %n = memref.alloc() : memref<8xf32>
    memref.copy %b, %n : memref<8xf32> to memref<8xf32>
    scf.yield %n : memref<8xf32>
  }
  memref.copy %r, %out : memref<8xf32> to memref<8xf32>
  return
}
