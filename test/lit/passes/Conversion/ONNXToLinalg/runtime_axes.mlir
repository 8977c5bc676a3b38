// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// Reductions whose axes are read at run time (kiln.check is bufferized only
// after kiln-materialize-checks, so no bufferization RUN here; reduction.mlir
// has the constant-axes forms).

// Axes read at run time: the reduced axes as a bit mask (normalized, checked
// in range and distinct), one case per set of as many axes as the input
// holds, each the constant-axes reduction cast to the run-dim result.
// CHECK-LABEL: func.func @reduce_mean_runtime_axes
// CHECK:         %[[A:.*]] = tensor.extract %arg1[%{{.*}}] : tensor<1xi64>
// CHECK:         %[[I:.*]] = arith.index_cast %[[A]] : i64 to index
// CHECK:         arith.cmpi slt, %[[I]]
// CHECK:         %[[BIT:.*]] = arith.shli %c1, %{{.*}} : index
// CHECK:         %[[MASK:.*]] = arith.ori %{{.*}}, %[[BIT]] : index
// CHECK:         kiln.check %{{.*}}, "node 'rm' (ReduceMean): axes out of range or repeated" : tensor<i1>
// CHECK:         %[[R:.*]] = scf.index_switch %[[MASK]] -> tensor<?x?xf32>
// CHECK:         case 1 {
// CHECK:           linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]
// CHECK:           arith.constant 3.000000e+00 : f32
// CHECK:           tensor.cast %{{.*}} : tensor<2x4xf32> to tensor<?x?xf32>
// CHECK:         case 2 {
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:           arith.constant 2.000000e+00 : f32
// CHECK:           tensor.cast %{{.*}} : tensor<3x4xf32> to tensor<?x?xf32>
// CHECK:         default {
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:           arith.constant 4.000000e+00 : f32
// CHECK:           tensor.cast %{{.*}} : tensor<3x2xf32> to tensor<?x?xf32>
// CHECK:         return %[[R]]
func.func @reduce_mean_runtime_axes(%x: tensor<3x2x4xf32>, %axes: tensor<1xi64>) -> tensor<?x?xf32> {
  %0 = "onnx.ReduceMean"(%x, %axes) {keepdims = 0 : i64} : (tensor<3x2x4xf32>, tensor<1xi64>) -> tensor<?x?xf32> loc("rm")
  return %0 : tensor<?x?xf32>
}

// -----

// Two axes of three, keepdims: the cases are the sets {0,1}, {0,2}, {1,2};
// a dim of 1 stays 1 in the result type.
// CHECK-LABEL: func.func @reduce_max_runtime_two_axes
// CHECK:         scf.index_switch %{{.*}} -> tensor<?x1x?xi32>
// CHECK:         case 3 {
// CHECK:           arith.maxsi
// CHECK:           tensor.cast %{{.*}} : tensor<1x1x4xi32> to tensor<?x1x?xi32>
// CHECK:         case 5 {
// CHECK:           tensor.cast %{{.*}} : tensor<1x1x1xi32> to tensor<?x1x?xi32>
// CHECK:         default {
// CHECK:           tensor.cast %{{.*}} : tensor<3x1x1xi32> to tensor<?x1x?xi32>
func.func @reduce_max_runtime_two_axes(%x: tensor<3x1x4xi32>, %axes: tensor<2xi32>) -> tensor<?x1x?xi32> {
  %0 = "onnx.ReduceMax"(%x, %axes) : (tensor<3x1x4xi32>, tensor<2xi32>) -> tensor<?x1x?xi32>
  return %0 : tensor<?x1x?xi32>
}
