// RUN: kiln-opt %s -split-input-file -kiln-materialize-checks | FileCheck %s

// Checks become one i32 status result: the first failing check's number.
// CHECK: module attributes {kiln.check_messages = ["first", "second"]}
// CHECK-LABEL: func.func @two_checks
// CHECK-SAME: -> (tensor<4xf32>, tensor<i32>)
// CHECK-NOT: kiln.check
// CHECK: %[[OK2:.*]] = tensor.extract %arg2[]
// CHECK: %[[S2:.*]] = arith.select %[[OK2]], %{{.*}}, %c2_i32
// CHECK: %[[OK1:.*]] = tensor.extract %arg1[]
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
