// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// Shape and data movement ops -> tensor reshapes/slices, linalg.transpose and
// index-computing linalg.generics. (kiln.check is bufferized only after
// kiln-materialize-checks, so no bufferization RUN line here.)

// CHECK-LABEL: func.func @reshape_collapse
// CHECK:         %[[R:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:         return %[[R]]
func.func @reshape_collapse(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %s = "onnx.Constant"() <{value = dense<[6, 4]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %0 = "onnx.Reshape"(%x, %s) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// Neither a pure collapse nor a pure expand: through 1-D.
// CHECK-LABEL: func.func @reshape_general
// CHECK:         %[[F:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK:         tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
func.func @reshape_general(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %s = "onnx.Constant"() <{value = dense<[4, 6]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %0 = "onnx.Reshape"(%x, %s) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @unsqueeze
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [1, 3, 4] : tensor<3x4xf32> into tensor<1x3x4xf32>
func.func @unsqueeze(%x: tensor<3x4xf32>) -> tensor<1x3x4xf32> {
  %axes = "onnx.Constant"() <{value = dense<[0]> : tensor<1xi64>}> : () -> tensor<1xi64>
  %0 = "onnx.Unsqueeze"(%x, %axes) : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @flatten
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<2x3x4xf32> into tensor<2x12xf32>
func.func @flatten(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %0 = "onnx.Flatten"(%x) <{axis = 1 : i64}> : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  return %0 : tensor<2x12xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = "onnx.Transpose"(%x) <{perm = [2, 0, 1]}> : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat
// CHECK-SAME:    %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x5xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK:         %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1]
// CHECK:         %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, 3] [2, 5] [1, 1]
// CHECK:         return %[[I1]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %0 = "onnx.Concat"(%a, %b) <{axis = -1 : i64}> : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @split
// CHECK:         %[[S0:.*]] = tensor.extract_slice %{{.*}}[0, 0] [2, 4] [1, 1] : tensor<6x4xf32> to tensor<2x4xf32>
// CHECK:         %[[S1:.*]] = tensor.extract_slice %{{.*}}[2, 0] [4, 4] [1, 1] : tensor<6x4xf32> to tensor<4x4xf32>
// CHECK:         return %[[S0]], %[[S1]]
func.func @split(%x: tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>) {
  %s = "onnx.Constant"() <{value = dense<[2, 4]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %0, %1 = "onnx.Split"(%x, %s) <{axis = 0 : i64}> : (tensor<6x4xf32>, tensor<2xi64>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
  return %0, %1 : tensor<2x4xf32>, tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @slice_steps
// CHECK:         tensor.extract_slice %{{.*}}[1, 5] [4, 3] [2, 1] : tensor<10x8xf32> to tensor<4x3xf32>
func.func @slice_steps(%x: tensor<10x8xf32>) -> tensor<4x3xf32> {
  %starts = "onnx.Constant"() <{value = dense<[1, -3]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %ends = "onnx.Constant"() <{value = dense<[9, 1000]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %axes = "onnx.Constant"() <{value = dense<[0, 1]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %steps = "onnx.Constant"() <{value = dense<[2, 1]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %0 = "onnx.Slice"(%x, %starts, %ends, %axes, %steps) : (tensor<10x8xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Negative steps: a generic reading data[offset + i * step].
// CHECK-LABEL: func.func @slice_reverse
// CHECK:         linalg.generic
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[MINUS1:.*]] = arith.constant -1 : index
// CHECK:           %[[M:.*]] = arith.muli %[[I]], %[[MINUS1]] : index
// CHECK:           %[[FOUR:.*]] = arith.constant 4 : index
// CHECK:           %[[P:.*]] = arith.addi %[[M]], %[[FOUR]] : index
// CHECK:           tensor.extract %{{.*}}[%[[P]]] : tensor<5xf32>
func.func @slice_reverse(%x: tensor<5xf32>) -> tensor<5xf32> {
  %starts = "onnx.Constant"() <{value = dense<[-1]> : tensor<1xi64>}> : () -> tensor<1xi64>
  %ends = "onnx.Constant"() <{value = dense<[-9223372036854775807]> : tensor<1xi64>}> : () -> tensor<1xi64>
  %none = "onnx.NoValue"() : () -> none
  %steps = "onnx.Constant"() <{value = dense<[-1]> : tensor<1xi64>}> : () -> tensor<1xi64>
  %0 = "onnx.Slice"(%x, %starts, %ends, %none, %steps) : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>, none, tensor<1xi64>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Run-time indices: an all-in-range reduction feeds kiln.check; the read
// itself normalizes and clamps the index.
// CHECK-LABEL: func.func @gather_runtime
// CHECK-SAME:    %[[DATA:.*]]: tensor<5x4xf32>, %[[IDX:.*]]: tensor<3xi64>
// CHECK:         %[[TRUE:.*]] = arith.constant true
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[TRUE]] : i1) outs(%{{.*}} : tensor<i1>)
// CHECK:         %[[OK:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[IDX]] : tensor<3xi64>) outs(%[[INIT]] : tensor<i1>)
// CHECK:           arith.cmpi sge
// CHECK:           arith.cmpi slt
// CHECK:         kiln.check %[[OK]], "node 'Gather_7' (Gather): index out of range" : tensor<i1>
// CHECK:         linalg.generic {{.*}} ins(%[[IDX]] : tensor<3xi64>) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK:           arith.index_cast
// CHECK:           arith.select
// CHECK:           arith.maxsi
// CHECK:           arith.minsi
// CHECK:           tensor.extract %[[DATA]]
func.func @gather_runtime(%data: tensor<5x4xf32>, %idx: tensor<3xi64>) -> tensor<3x4xf32> {
  %0 = "onnx.Gather"(%data, %idx) <{axis = 0 : i64}> : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32> loc("Gather_7")
  return %0 : tensor<3x4xf32>
}

// -----

// A constant in-range scalar index: a slice, no run-time check.
// CHECK-LABEL: func.func @gather_constant_scalar
// CHECK-NOT:     kiln.check
// CHECK:         %[[S:.*]] = tensor.extract_slice %{{.*}}[0, 3] [5, 1] [1, 1] : tensor<5x4xf32> to tensor<5x1xf32>
// CHECK:         tensor.collapse_shape %[[S]] {{.*}} into tensor<5xf32>
func.func @gather_constant_scalar(%data: tensor<5x4xf32>) -> tensor<5xf32> {
  %idx = "onnx.Constant"() <{value = dense<-1> : tensor<i64>}> : () -> tensor<i64>
  %0 = "onnx.Gather"(%data, %idx) <{axis = 1 : i64}> : (tensor<5x4xf32>, tensor<i64>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// CHECK-LABEL: func.func @gather_elements
// CHECK:         kiln.check %{{.*}}, "node (GatherElements): index out of range" : tensor<i1>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3xi32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:           arith.index_cast %{{.*}} : i32 to index
// CHECK:           %[[J:.*]] = linalg.index 1 : index
// CHECK:           tensor.extract %{{.*}}[%{{.*}}, %[[J]]] : tensor<3x3xf32>
func.func @gather_elements(%data: tensor<3x3xf32>, %idx: tensor<2x3xi32>) -> tensor<2x3xf32> {
  %0 = "onnx.GatherElements"(%data, %idx) <{axis = 0 : i64}> : (tensor<3x3xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-DAG:   #[[$IN:.*]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-LABEL: func.func @expand
// CHECK:         linalg.generic {indexing_maps = [#[[$IN]], {{.*}}]{{.*}} ins(%{{.*}} : tensor<3x1xf32>) outs(%{{.*}} : tensor<2x3x4xf32>)
func.func @expand(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %s = "onnx.Constant"() <{value = dense<[2, 1, 4]> : tensor<3xi64>}> : () -> tensor<3xi64>
  %0 = "onnx.Expand"(%x, %s) : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @tile
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x2x1x3xf32>)
// CHECK:         tensor.collapse_shape %[[T]] {{\[}}[0, 1], [2, 3]] : tensor<2x2x1x3xf32> into tensor<4x3xf32>
func.func @tile(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %r = "onnx.Constant"() <{value = dense<[2, 1]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %0 = "onnx.Tile"(%x, %r) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @pad_constant
// CHECK:         %[[V:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK:         tensor.pad %{{.*}} low[1, 1] high[0, 2]
// CHECK:           tensor.yield %[[V]] : f32
// CHECK:         } : tensor<2x3xf32> to tensor<3x6xf32>
func.func @pad_constant(%x: tensor<2x3xf32>) -> tensor<3x6xf32> {
  %p = "onnx.Constant"() <{value = dense<[1, 1, 0, 2]> : tensor<4xi64>}> : () -> tensor<4xi64>
  %v = "onnx.Constant"() <{value = dense<5.0> : tensor<f32>}> : () -> tensor<f32>
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Pad"(%x, %p, %v, %none) : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>, none) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// CHECK-LABEL: func.func @pad_reflect
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x7xf32>)
// CHECK:           arith.remsi
// CHECK:           arith.select
// CHECK:           tensor.extract %{{.*}} : tensor<2x3xf32>
func.func @pad_reflect(%x: tensor<2x3xf32>) -> tensor<2x7xf32> {
  %p = "onnx.Constant"() <{value = dense<[2, 2]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %axes = "onnx.Constant"() <{value = dense<[1]> : tensor<1xi64>}> : () -> tensor<1xi64>
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Pad"(%x, %p, %none, %axes) <{mode = "reflect"}> : (tensor<2x3xf32>, tensor<2xi64>, none, tensor<1xi64>) -> tensor<2x7xf32>
  return %0 : tensor<2x7xf32>
}

// -----

// CHECK-LABEL: func.func @depth_to_space
// CHECK:         %[[E:.*]] = tensor.expand_shape %{{.*}} into tensor<1x2x2x2x2x3xf32>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[E]] : {{.*}}) outs(%{{.*}} : tensor<1x2x2x2x3x2xf32>) permutation = [0, 3, 4, 1, 5, 2]
// CHECK:         tensor.collapse_shape %[[T]] {{.*}} into tensor<1x2x4x6xf32>
func.func @depth_to_space(%x: tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32> {
  %0 = "onnx.DepthToSpace"(%x) <{blocksize = 2 : i64}> : (tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32>
  return %0 : tensor<1x2x4x6xf32>
}

// -----

// SpaceToDepth CRD: the channel outermost in the depth (DCR: the block offsets).
// CHECK-LABEL: func.func @space_to_depth_crd
// CHECK:         %[[E:.*]] = tensor.expand_shape %arg0 {{.*}} into tensor<1x2x2x2x3x2xf32>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[E]] : tensor<1x2x2x2x3x2xf32>) outs(%{{.*}} : tensor<1x2x2x2x2x3xf32>) permutation = [0, 1, 3, 5, 2, 4]
// CHECK:         tensor.collapse_shape %[[T]] {{.*}} into tensor<1x8x2x3xf32>
func.func @space_to_depth_crd(%x: tensor<1x2x4x6xf32>) -> tensor<1x8x2x3xf32> {
  %0 = onnx.SpaceToDepth %x {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x2x4x6xf32>) -> tensor<1x8x2x3xf32>
  return %0 : tensor<1x8x2x3xf32>
}
