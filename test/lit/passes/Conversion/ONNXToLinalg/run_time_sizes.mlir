// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// Sizes the run's values decide (docs/dynamic-shapes.md, "Run dims"): NonZero counts,
// then writes the indices (NonZero.cpp); Range, ConstantOfShape, Expand, Tile, OneHot
// and CenterCropPad read their sizes at run time, check them naming the node, and build
// the result by a linalg.generic over it (RunTimeSizes.cpp).

// A loop counts the non-zero elements (NaN counts: une), a second writes each one's
// coordinates (its flat index split by the strides) into the next column.
// CHECK-LABEL: func.func @nonzero
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<3x4xf32> into tensor<12xf32>
// CHECK:         %[[N:.*]] = scf.for {{.*}} -> (index) {
// CHECK:           arith.cmpf une
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<2x?xi64>
// CHECK:         %[[R:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[E]], %{{.*}} = %{{.*}}) -> (tensor<2x?xi64>, index) {
// CHECK:           scf.if
// CHECK:             arith.divui %{{.*}}, %c4
// CHECK:             tensor.insert
// CHECK:             arith.remui
// CHECK:             tensor.insert
// CHECK:         return %[[R]]#0
func.func @nonzero(%x: tensor<3x4xf32>) -> tensor<2x?xi64> {
  %0 = "onnx.NonZero"(%x) : (tensor<3x4xf32>) -> tensor<2x?xi64> loc("nz")
  return %0 : tensor<2x?xi64>
}

// -----

// GatherND whose indices have a run dim (NonZero -> Transpose): the result's dim from
// the indices'.
// CHECK-LABEL: func.func @gather_nd_run_dim
// CHECK:         tensor.extract_slice %arg1[0, 1] [%{{.*}}, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
// CHECK:         kiln.check %{{.*}}, "node 'gnd' (GatherND): index out of range"
// CHECK:         %[[D:.*]] = tensor.dim %arg1, %c0
// CHECK-NEXT:    tensor.empty(%[[D]]) : tensor<?xf32>
// CHECK:         linalg.generic
func.func @gather_nd_run_dim(%x: tensor<3x4xf32>, %i: tensor<?x2xi64>) -> tensor<?xf32> {
  %0 = "onnx.GatherND"(%x, %i) {batch_dims = 0 : i64} : (tensor<3x4xf32>, tensor<?x2xi64>) -> tensor<?xf32> loc("gnd")
  return %0 : tensor<?xf32>
}

// -----

// Integers: the count from the unsigned distance in the step's direction.
// CHECK-LABEL: func.func @range_int
// CHECK:         arith.ceildivui
// CHECK:         kiln.check %{{.*}}, "node 'range' (Range): delta is 0, or the range has more than 2^40 elements"
// CHECK:         tensor.empty(%{{.*}}) : tensor<?xi32>
// CHECK:         linalg.generic
// CHECK:           arith.muli
// CHECK:           arith.addi
func.func @range_int(%s: tensor<i32>, %l: tensor<i32>, %d: tensor<i32>) -> tensor<?xi32> {
  %0 = "onnx.Range"(%s, %l, %d) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<?xi32> loc("range")
  return %0 : tensor<?xi32>
}

// -----

// Floats: ceil((limit - start) / delta) in f64.
// CHECK-LABEL: func.func @range_float
// CHECK:         arith.extf {{.*}} : f16 to f64
// CHECK:         math.ceil
// CHECK:         kiln.check %{{.*}}, "node 'range' (Range): delta is 0
// CHECK:         tensor.empty(%{{.*}}) : tensor<?xf16>
func.func @range_float(%s: tensor<f16>, %l: tensor<f16>, %d: tensor<f16>) -> tensor<?xf16> {
  %0 = "onnx.Range"(%s, %l, %d) : (tensor<f16>, tensor<f16>, tensor<f16>) -> tensor<?xf16> loc("range")
  return %0 : tensor<?xf16>
}

// -----

// CHECK-LABEL: func.func @constant_of_shape
// CHECK:         tensor.extract %arg0
// CHECK:         tensor.extract %arg0
// CHECK:         kiln.check %{{.*}}, "node 'cos' (ConstantOfShape): the shape has a negative size or more than 2^40 elements"
// CHECK:         %[[E:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xi32>
// CHECK:         %[[V:.*]] = arith.constant 7 : i32
// CHECK:         linalg.fill ins(%[[V]] : i32) outs(%[[E]] : tensor<?x?xi32>)
func.func @constant_of_shape(%s: tensor<2xi64>) -> tensor<?x?xi32> {
  %0 = "onnx.ConstantOfShape"(%s) {value = dense<7> : tensor<1xi32>} : (tensor<2xi64>) -> tensor<?x?xi32> loc("cos")
  return %0 : tensor<?x?xi32>
}

// -----

// x's dim 3 stays (the value must be 1 or 3); its dim 1 broadcasts to the value.
// CHECK-LABEL: func.func @expand
// CHECK:         arith.cmpi eq, %{{.*}}, %c3
// CHECK:         kiln.check %{{.*}}, "node 'ex' (Expand): shape does not broadcast with the input's [3,1]
// CHECK:         tensor.empty(%{{.*}}) : tensor<3x?xf32>
// CHECK:         linalg.generic
// CHECK:           %[[I:.*]] = linalg.index 0
// CHECK:           tensor.extract %arg0[%[[I]], %{{.*}}] : tensor<3x1xf32>
func.func @expand(%x: tensor<3x1xf32>, %s: tensor<2xi64>) -> tensor<3x?xf32> {
  %0 = "onnx.Expand"(%x, %s) : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<3x?xf32> loc("ex")
  return %0 : tensor<3x?xf32>
}

// -----

// CHECK-LABEL: func.func @tile
// CHECK:         kiln.check %{{.*}}, "node 'tile' (Tile): repeats has a negative value, or the result has more than 2^40 elements"
// CHECK:         tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xi64>
// CHECK:         linalg.generic
// CHECK:           arith.remui %{{.*}}, %c2
// CHECK:           arith.remui %{{.*}}, %c3
func.func @tile(%x: tensor<2x3xi64>, %r: tensor<2xi64>) -> tensor<?x?xi64> {
  %0 = "onnx.Tile"(%x, %r) : (tensor<2x3xi64>, tensor<2xi64>) -> tensor<?x?xi64> loc("tile")
  return %0 : tensor<?x?xi64>
}

// -----

// A float depth truncated (checked finite and at least 1 first); negative indices
// counted from the end.
// CHECK-LABEL: func.func @onehot
// CHECK:         arith.cmpf oge
// CHECK:         arith.fptosi
// CHECK:         kiln.check %{{.*}}, "node 'oh' (OneHot): depth is below 1, or the result has more than 2^40 elements"
// CHECK:         tensor.empty(%{{.*}}) : tensor<?x2xf32>
// CHECK:         linalg.generic
// CHECK:           arith.cmpi slt
// CHECK:           arith.select
// CHECK:           arith.cmpi eq
func.func @onehot(%i: tensor<2xi64>, %d: tensor<f32>, %v: tensor<2xf32>) -> tensor<?x2xf32> {
  %0 = "onnx.OneHot"(%i, %d, %v) {axis = 0 : i64} : (tensor<2xi64>, tensor<f32>, tensor<2xf32>) -> tensor<?x2xf32> loc("oh")
  return %0 : tensor<?x2xf32>
}

// -----

// Per listed axis an offset (crop: (dim - size) / 2, pad: -(size - dim) / 2); reads
// outside the input are zeros.
// CHECK-LABEL: func.func @center_crop_pad
// CHECK:         kiln.check %{{.*}}, "node 'ccp' (CenterCropPad): the shape has a negative size or more than 2^40 elements"
// CHECK:         tensor.empty(%{{.*}}) : tensor<4x?xf32>
// CHECK:         linalg.generic
// CHECK:           arith.maxsi
// CHECK:           arith.minsi
// CHECK:           tensor.extract %arg0
// CHECK:           arith.select
func.func @center_crop_pad(%x: tensor<4x5xf32>, %s: tensor<1xi64>) -> tensor<4x?xf32> {
  %0 = "onnx.CenterCropPad"(%x, %s) {axes = [1]} : (tensor<4x5xf32>, tensor<1xi64>) -> tensor<4x?xf32> loc("ccp")
  return %0 : tensor<4x?xf32>
}

// -----

// Unique (Unique.cpp): X as [outer, n, inner]; first occurrences (a search among the new
// slices before each), the places of the new slices (sorted: the new slices
// lexicographically below), then one pass writing Y's slices, indices, inverse_indices
// and counts; Y expanded back to X's dims with the run dim at the axis.
// CHECK-LABEL: func.func @unique_axis
// CHECK:         %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2]] output_shape [2, 4, 2] : tensor<16xf32> into tensor<2x4x2xf32>
// CHECK:         %[[FIRST:.*]]:2 = scf.for {{.*}} -> (tensor<4xi64>, index) {
// CHECK:           scf.for
// CHECK:             arith.cmpf une
// CHECK:         %[[PLACE:.*]]:2 = scf.for {{.*}} -> (tensor<4xi64>, index) {
// CHECK:             arith.cmpf olt
// CHECK:         tensor.empty(%[[FIRST]]#1) : tensor<2x?x2xf32>
// CHECK:         %[[OUT:.*]]:4 = scf.for {{.*}} -> (tensor<2x?x2xf32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>) {
// CHECK:             tensor.extract_slice %[[X]]
// CHECK:             tensor.insert_slice
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2]] output_shape [2, %[[FIRST]]#1, 2]
// CHECK:         return
func.func @unique_axis(%x: tensor<2x4x2xf32>) -> (tensor<2x?x2xf32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>) {
  %0:4 = "onnx.Unique"(%x) {axis = 1 : i64, sorted = 1 : i64} : (tensor<2x4x2xf32>) -> (tensor<2x?x2xf32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>) loc("uq")
  return %0#0, %0#1, %0#2, %0#3 : tensor<2x?x2xf32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>
}
