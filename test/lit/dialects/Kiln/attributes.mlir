// RUN: kiln-opt %s -split-input-file | FileCheck %s

// The kiln dialect's ABI attributes where they are valid (see invalid.mlir).

// CHECK: module attributes {kiln.check_messages = ["first", "second"], kiln.scratch_size = 128 : i64}
// CHECK-LABEL: func.func @entry
// CHECK-SAME:    (%{{.*}}: memref<128xi8> {kiln.scratch}, %[[N:.*]]: index)
// CHECK:         scf.parallel
// CHECK:         } {kiln.parallel}
module attributes {kiln.check_messages = ["first", "second"], kiln.scratch_size = 128 : i64} {
  func.func @entry(%scratch: memref<128xi8> {kiln.scratch}, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      scf.reduce
    } {kiln.parallel}
    return
  }
}

// -----

// Other kiln.* names are left to the attributes that define them.
// CHECK-LABEL: func.func @other
// CHECK-SAME:    attributes {kiln.other_note = 1 : i64}
func.func @other() attributes {kiln.other_note = 1 : i64} {
  return
}
