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

// -----

// Resize with scales read at run time: each size floor(d * scale) in f64,
// checked (a scale that is not positive fails a kiln.check naming the node,
// the sizes 0 then); per resized axis a table generic over (output position,
// tap) computes the clamped indices and weights, and the axis's weighted
// gather reads it into a run-dim result.
// CHECK-LABEL: func.func @resize_linear_runtime_scales
// CHECK:         %[[S:.*]] = tensor.extract %arg1[%c0{{.*}}] : tensor<1xf32>
// CHECK:         %[[SF:.*]] = arith.extf %[[S]] : f32 to f64
// CHECK:         %[[SZ:.*]] = arith.mulf %[[SF]], %{{.*}} : f64
// CHECK:         arith.cmpf ogt, %[[SF]]
// CHECK:         kiln.check %{{.*}}, "node 'rs' (Resize): scales must be positive (and the sizes they give below 2^40)" : tensor<i1>
// CHECK:         %[[W:.*]] = arith.select %{{.*}}, %{{.*}}, %c0{{.*}} : index
// CHECK:         %[[IT:.*]] = tensor.empty(%[[W]]) : tensor<?x2xi64>
// CHECK:         %[[WT:.*]] = tensor.empty(%[[W]]) : tensor<?x2xf32>
// CHECK:         %[[T:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} outs(%[[IT]], %[[WT]] : tensor<?x2xi64>, tensor<?x2xf32>)
// CHECK:           math.floor
// CHECK:           arith.fptosi %{{.*}} : f64 to i64
// CHECK:           arith.truncf %{{.*}} : f64 to f32
// CHECK:         %[[E:.*]] = tensor.empty(%[[W]]) : tensor<1x1x2x?xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<1x1x2x?xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[T]]#0, %[[T]]#1 : tensor<?x2xi64>, tensor<?x2xf32>) outs(%[[Z]] : tensor<1x1x2x?xf32>)
// CHECK:           tensor.extract %arg0[
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         return %[[R]]
func.func @resize_linear_runtime_scales(%x: tensor<1x1x2x4xf32>, %scales: tensor<1xf32>) -> tensor<1x1x2x?xf32> {
  %none = onnx.NoValue : () -> none
  %0 = "onnx.Resize"(%x, %none, %scales, %none) {mode = "linear", axes = [3]} : (tensor<1x1x2x4xf32>, none, tensor<1xf32>, none) -> tensor<1x1x2x?xf32> loc("rs")
  return %0 : tensor<1x1x2x?xf32>
}

// -----

// Sizes and roi read at run time, nearest, keep_aspect_ratio_policy and
// tf_crop_and_resize: one scale (the smaller of sizes / d), each size
// floor(scale * d + 0.5); the table holds one tap and the outside flag, the
// axis's gather selects the extrapolation value where it is set.
// CHECK-LABEL: func.func @resize_nearest_runtime_sizes_roi
// CHECK:         tensor.extract %arg2[%c0{{.*}}] : tensor<2xi64>
// CHECK:         tensor.extract %arg2[%c1{{.*}}] : tensor<2xi64>
// CHECK:         arith.minimumf
// CHECK:         kiln.check %{{.*}}, "node 'rs' (Resize): sizes must not be negative" : tensor<i1>
// CHECK:         tensor.extract %arg1[%c0{{.*}}] : tensor<4xf32>
// CHECK:         tensor.extract %arg1[%c2{{.*}}] : tensor<4xf32>
// CHECK:         %[[T:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<?x1xi64>, tensor<?x1xi1>)
// CHECK:         linalg.generic {{.*}} ins(%[[T]]#0, %[[T]]#1 : tensor<?x1xi64>, tensor<?x1xi1>) outs(%{{.*}} : tensor<1x1x?x4xf32>)
// CHECK:           %[[V:.*]] = tensor.extract %arg0
// CHECK:           arith.select %{{.*}}, %{{.*}}, %[[V]] : f32
// CHECK:         linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<?x1xi64>, tensor<?x1xi1>)
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x?x?xf32>)
func.func @resize_nearest_runtime_sizes_roi(%x: tensor<1x1x2x4xf32>, %roi: tensor<4xf32>, %sizes: tensor<2xi64>) -> tensor<1x1x?x?xf32> {
  %none = onnx.NoValue : () -> none
  %0 = "onnx.Resize"(%x, %roi, %none, %sizes) {mode = "nearest", axes = [2, 3], keep_aspect_ratio_policy = "not_larger", coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 10.0 : f32} : (tensor<1x1x2x4xf32>, tensor<4xf32>, none, tensor<2xi64>) -> tensor<1x1x?x?xf32> loc("rs")
  return %0 : tensor<1x1x?x?xf32>
}

// -----

// Cubic: four taps, the Keys coefficients computed from the ratio.
// CHECK-LABEL: func.func @resize_cubic_runtime_scales
// CHECK:         linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<?x4xi64>, tensor<?x4xf32>)
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<?x4xf32>)
func.func @resize_cubic_runtime_scales(%x: tensor<4x4xf32>, %scales: tensor<2xf32>) -> tensor<?x?xf32> {
  %none = onnx.NoValue : () -> none
  %0 = "onnx.Resize"(%x, %none, %scales, %none) {mode = "cubic", exclude_outside = 1 : i64} : (tensor<4x4xf32>, none, tensor<2xf32>, none) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Antialias: the tap count 2 - 2 * (floor(-support / min(scale, 1)) + 1) is a
// run-time size of the table, whose body normalizes the weights by a loop over
// the taps.
// CHECK-LABEL: func.func @resize_linear_antialias_runtime_scales
// CHECK:         %[[S:.*]] = arith.minimumf %{{.*}}, %{{.*}} : f64
// CHECK:         %[[D:.*]] = arith.divf %{{.*}}, %[[S]] : f64
// CHECK:         math.floor %[[D]]
// CHECK:         %[[T:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         tensor.empty(%{{.*}}, %[[T]]) : tensor<?x?xi64>
// CHECK:         tensor.empty(%{{.*}}, %[[T]]) : tensor<?x?xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<?x?xi64>, tensor<?x?xf32>)
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[T]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f64)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x?xi64>, tensor<?x?xf32>) outs(%{{.*}} : tensor<1x1x2x?xf32>)
func.func @resize_linear_antialias_runtime_scales(%x: tensor<1x1x2x4xf32>, %scales: tensor<1xf32>) -> tensor<1x1x2x?xf32> {
  %none = onnx.NoValue : () -> none
  %0 = "onnx.Resize"(%x, %none, %scales, %none) {mode = "linear", axes = [3], antialias = 1 : i64} : (tensor<1x1x2x4xf32>, none, tensor<1xf32>, none) -> tensor<1x1x2x?xf32>
  return %0 : tensor<1x1x2x?xf32>
}
