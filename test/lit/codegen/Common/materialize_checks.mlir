// RUN: kiln-opt %s -split-input-file -kiln-materialize-checks | FileCheck %s

// Checks become one i32 status result: the first failing check's number.
// CHECK: module attributes {kiln.check_messages = ["first", "second"]}
// CHECK-LABEL: func.func @two_checks
// CHECK-SAME: -> (tensor<4xf32>, tensor<i32>)
// CHECK-NOT: kiln.check
// CHECK: %[[OK1:.*]] = tensor.extract %arg1[]
// CHECK: %[[OK2:.*]] = tensor.extract %arg2[]
// CHECK: %[[S2:.*]] = arith.select %[[OK2]], %{{.*}}, %c2_i32
// CHECK: %[[S1:.*]] = arith.select %[[OK1]], %[[S2]], %c1_i32
// CHECK: %[[T:.*]] = tensor.from_elements %[[S1]] : tensor<i32>
// CHECK: return %arg0, %[[T]]
func.func @two_checks(%x: tensor<4xf32>, %a: tensor<i1>, %b: tensor<i1>) -> tensor<4xf32> {
  kiln.check %a, "first" : tensor<i1>
  kiln.check %b, "second" : tensor<i1>
  return %x : tensor<4xf32>
}

// -----

// A function without checks still gets the status result (always 0), so
// every entry has the same ABI.
// CHECK-LABEL: func.func @no_checks
// CHECK-SAME: -> (tensor<4xf32>, tensor<i32>)
// CHECK: %[[Z:.*]] = tensor.from_elements %c0_i32 : tensor<i32>
// CHECK: return %arg0, %[[Z]]
func.func @no_checks(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// A check in a loop holds when it held on every iteration: its flag is and-ed into an
// i1 the loop carries (true on entry).
// CHECK-LABEL: func.func @check_in_for
// CHECK: %[[R:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[X:.*]] = %arg0, %[[ALL:.*]] = %true) -> (tensor<4xf32>, i1)
// CHECK:   %[[OK:.*]] = tensor.extract %arg1[]
// CHECK:   %[[AND:.*]] = arith.andi %[[ALL]], %[[OK]] : i1
// CHECK:   scf.yield %[[X]], %[[AND]]
// CHECK: %[[S:.*]] = arith.select %[[R]]#1, %{{.*}}, %c1_i32
// CHECK: %[[T:.*]] = tensor.from_elements %[[S]] : tensor<i32>
// CHECK: return %[[R]]#0, %[[T]]
func.func @check_in_for(%x: tensor<4xf32>, %ok: tensor<i1>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%v = %x) -> tensor<4xf32> {
    kiln.check %ok, "in loop" : tensor<i1>
    scf.yield %v : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// In a branch: the scf.if returns the flag, true from the other branch (an else branch
// is added when there was none); in a while loop's body, the loop carries it.
// CHECK-LABEL: func.func @check_in_if_in_while
// CHECK: %[[W:.*]]:2 = scf.while (%[[I:.*]] = %c0_i64, %[[A:.*]] = %true) : (i64, i1) -> (i64, i1)
// CHECK:   scf.condition(%{{.*}}) %[[I]], %[[A]] : i64, i1
// CHECK: } do {
// CHECK: ^bb0(%[[I2:.*]]: i64, %[[A2:.*]]: i1):
// CHECK:   %[[F:.*]] = scf.if %arg1 -> (i1) {
// CHECK:     %[[OK:.*]] = tensor.extract %arg2[]
// CHECK:     scf.yield %[[OK]] : i1
// CHECK:   } else {
// CHECK:     scf.yield %true{{.*}} : i1
// CHECK:   %[[AND:.*]] = arith.andi %[[A2]], %[[F]] : i1
// CHECK:   scf.yield %{{.*}}, %[[AND]] : i64, i1
// CHECK: arith.select %[[W]]#1, %{{.*}}, %c1_i32
func.func @check_in_if_in_while(%n: i64, %c: i1, %ok: tensor<i1>) -> i64 {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %r = scf.while (%i = %c0) : (i64) -> i64 {
    %go = arith.cmpi slt, %i, %n : i64
    scf.condition(%go) %i : i64
  } do {
  ^bb0(%i: i64):
    scf.if %c {
      kiln.check %ok, "in branch" : tensor<i1>
    }
    %next = arith.addi %i, %c1 : i64
    scf.yield %next : i64
  }
  return %r : i64
}
