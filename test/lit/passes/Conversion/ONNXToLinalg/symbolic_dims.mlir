// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// Symbolic (`?`) dims in the lowering (docs/dynamic-shapes.md): attention's batch
// MatMul with symbols on both sides (4 rows of C at once as vector accumulators over k,
// along a symbolic N in 16-wide tiles, the last one [N - 16, N) again; an N below 16 as
// row updates: a generic over n per (batch, m, k); a static N as whole vector rows) and a Softmax over a symbolic axis; a product with a symbolic
// M in static row blocks; Conv over a
// symbolic batch, one static image at a time; Range of a symbolic length sized from the
// entry's dims (kiln.result_dims, kiln.input_dims); an embedding Gather of symbolic
// indices.

// CHECK-LABEL: func.func @attention
// CHECK: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2], [3]] : tensor<?x2x?x4xf32> into tensor<?x?x4xf32>
// CHECK: %[[B:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2], [3]] : tensor<?x2x4x?xf32> into tensor<?x4x?xf32>
// CHECK: scf.for %[[IB:[a-z0-9_]+]] = {{.*}} iter_args
// CHECK:   scf.for %[[IM:[a-z0-9_]+]] = {{.*}} step %c4{{.*}} iter_args
// CHECK:     %[[N:.*]] = tensor.dim %[[B]], %c2
// CHECK:     %[[WIDE:.*]] = arith.cmpi uge, %[[N]], %c16
// CHECK:     scf.if %[[WIDE]] -> (tensor<?x?x?xf32>) {
// CHECK:       scf.for %[[N0:[a-z0-9_]+]] = {{.*}} step %c16
// CHECK:         scf.for %[[IK:[a-z0-9_]+]] = {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK:           vector.transfer_read %[[B]][%[[IB]], %[[IK]], %[[N0]]]
// CHECK:           tensor.extract %[[A]][%[[IB]], %[[IM]], %[[IK]]]
// CHECK:           vector.fma
// CHECK:       scf.for {{.*}} step %c16
// CHECK:         arith.subi %[[N]], %c16
// CHECK:     } else {
// CHECK:       scf.for %[[IK2:[a-z0-9_]+]] = {{.*}} iter_args(%[[ROW:.*]] = %{{.*}}) -> (tensor<?xf32>)
// CHECK:         %[[AV:.*]] = tensor.extract %[[A]][%[[IB]], %[[IM]], %[[IK2]]] : tensor<?x?x4xf32>
// CHECK:         %[[BROW:.*]] = tensor.extract_slice %[[B]][%[[IB]], %[[IK2]], 0] [1, 1, %{{.*}}] [1, 1, 1] : tensor<?x4x?xf32> to tensor<?xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[BROW]] : tensor<?xf32>) outs(%[[ROW]] : tensor<?xf32>)
// CHECK:           arith.mulf %[[AV]]
// CHECK:           arith.addf
// CHECK: tensor.expand_shape {{.*}} into tensor<?x2x?x?xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<?x2x?x?xf32>)
// CHECK: math.exp
func.func @attention(%q: tensor<?x2x?x4xf32>, %k: tensor<?x2x4x?xf32>) -> tensor<?x2x?x?xf32> {
  %0 = "onnx.MatMul"(%q, %k) : (tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32>) -> tensor<?x2x?x?xf32>
  %1 = "onnx.Softmax"(%0) {axis = -1 : i64} : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  return %1 : tensor<?x2x?x?xf32>
}

// -----

// Scores x V: N (the head size, 16) static: 4 rows of C at once as vector
// accumulators over k (B's row read once per k for the 4), then the rows left
// one at a time.
// CHECK-LABEL: func.func @scores_v
// CHECK: scf.for %[[IB:[a-z0-9_]+]] = {{.*}} iter_args
// CHECK:   %[[FULL:[a-z0-9_]+]] = arith.muli
// CHECK:   scf.for %[[IM:[a-z0-9_]+]] = %{{.*}} to %[[FULL]] step %c4{{.*}} iter_args
// CHECK:     %[[R:[a-z0-9_]+]]:4 = scf.for %[[IK:[a-z0-9_]+]] = {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK:       %[[BROW:[a-z0-9_]+]] = vector.transfer_read %{{.*}}[%[[IB]], %[[IK]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<?x?x16xf32>, vector<16xf32>
// CHECK:       tensor.extract %{{.*}}[%[[IB]], %[[IM]], %[[IK]]]
// CHECK:       vector.broadcast
// CHECK:       vector.fma %{{.*}}, %[[BROW]]
// CHECK-COUNT-3: vector.fma
// CHECK:     vector.transfer_write %[[R]]#0
// CHECK-COUNT-3: vector.transfer_write
// CHECK:   scf.for %{{.*}} = %[[FULL]] to
// CHECK:     scf.for {{.*}} -> (vector<16xf32>)
// CHECK:       vector.fma
// CHECK: tensor.expand_shape {{.*}} into tensor<?x2x?x16xf32>
func.func @scores_v(%p: tensor<?x2x?x?xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32> {
  %0 = "onnx.MatMul"(%p, %v) : (tensor<?x2x?x?xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  return %0 : tensor<?x2x?x16xf32>
}

// -----

// A product with a symbolic M and a static B: 64-row blocks of static
// linalg.matmul, then at most one block of each power of two below 64.
// CHECK-LABEL: func.func @rows_matmul
// CHECK: scf.for {{.*}} step %c64
// CHECK:   linalg.matmul {{.*}} -> tensor<64x8xf32>
// CHECK: scf.for {{.*}} step %c32
// CHECK:   linalg.matmul {{.*}} -> tensor<32x8xf32>
// CHECK: scf.for {{.*}} step %c16
// CHECK: scf.for {{.*}} step %c8
// CHECK: scf.for {{.*}} step %c4
// CHECK: scf.for {{.*}} step %c2
// CHECK: scf.for {{.*}} step %c1
// CHECK:   linalg.matmul {{.*}} -> tensor<1x8xf32>
func.func @rows_matmul(%x: tensor<?x4xf32>) -> tensor<?x8xf32> {
  %w = onnx.Constant {value = dense<1.0> : tensor<4x8xf32>} : () -> tensor<4x8xf32>
  %0 = "onnx.MatMul"(%x, %w) : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @conv_batch
// CHECK: %[[N:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x3x8x8xf32>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<?x4x8x8xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]])
// CHECK:   tensor.extract_slice %arg0[%[[I]], 0, 0, 0] [1, 3, 8, 8] [1, 1, 1, 1] : tensor<?x3x8x8xf32> to tensor<1x3x8x8xf32>
// CHECK:   linalg.conv_2d_nhwc_hwcf {{.*}} -> tensor<1x8x8x4xf32>
// CHECK:   tensor.insert_slice %{{.*}} into %[[ACC]][%[[I]], 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x8xf32> into tensor<?x4x8x8xf32>
func.func @conv_batch(%x: tensor<?x3x8x8xf32>) -> tensor<?x4x8x8xf32> {
  %w = onnx.Constant {value = dense<1.0> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.Conv"(%x, %w, %none) {pads = [1, 1, 1, 1]} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<?x4x8x8xf32>
  return %0 : tensor<?x4x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @range_and_gather
// CHECK: tensor.from_elements
// CHECK: %[[SEQ:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x?xi64>
// CHECK: %[[R:.*]] = tensor.empty(%[[SEQ]]) : tensor<?xi64>
// CHECK: linalg.generic {{.*}} outs(%[[R]] : tensor<?xi64>)
// CHECK: kiln.check
// CHECK: %[[B:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x?xi64>
// CHECK: %[[S:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x?xi64>
// CHECK: %[[E:.*]] = tensor.empty(%[[B]], %[[S]]) : tensor<?x?x8xf32>
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<?x?xi64>) outs(%[[E]] : tensor<?x?x8xf32>)
func.func @range_and_gather(%ids: tensor<?x?xi64>) -> (tensor<?xi64>, tensor<?x?x8xf32>)
    attributes {kiln.symbols = [["batch", 1, -1], ["seq", 1, -1]],
                kiln.input_dims = [array<i64: -1, -2>]} {
  %emb = onnx.Constant {value = dense<1.0> : tensor<10x8xf32>} : () -> tensor<10x8xf32>
  %c0 = onnx.Constant {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %c1 = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %s = "onnx.Shape"(%ids) {start = 0 : i64} : (tensor<?x?xi64>) -> tensor<2xi64>
  %seq = "onnx.Gather"(%s, %c1) {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %pos = "onnx.Range"(%c0, %seq, %c1) {kiln.result_dims = affine_map<()[s0, s1] -> (s1)>} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %x = "onnx.Gather"(%emb, %ids) {axis = 0 : i64} : (tensor<10x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  return %pos, %x : tensor<?xi64>, tensor<?x?x8xf32>
}

// -----

// Concat and Split with symbolic dims: the sizes are read with tensor.dim; along a
// symbolic axis the offsets are sums of them.
// CHECK-LABEL: func.func @concat_split
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[M:.*]] = tensor.dim %arg1, %c0
// CHECK: %[[NM:.*]] = arith.addi %[[N]], %[[M]]
// CHECK: %[[E:.*]] = tensor.empty(%[[NM]]) : tensor<?x4xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %arg0 into %[[E]][0, 0] [%{{.*}}, 4] [1, 1]
// CHECK: tensor.insert_slice %arg1 into %[[I0]][%[[N]], 0] [%{{.*}}, 4] [1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [%{{.*}}, 1] [1, 1] : tensor<?x4xf32> to tensor<?x1xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 1] [%{{.*}}, 3] [1, 1] : tensor<?x4xf32> to tensor<?x3xf32>
func.func @concat_split(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> (tensor<?x1xf32>, tensor<?x3xf32>) {
  %c = "onnx.Concat"(%a, %b) {axis = 0 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %split = onnx.Constant {value = dense<[1, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %s:2 = "onnx.Split"(%c, %split) {axis = 1 : i64} : (tensor<?x4xf32>, tensor<2xi64>) -> (tensor<?x1xf32>, tensor<?x3xf32>)
  return %s#0, %s#1 : tensor<?x1xf32>, tensor<?x3xf32>
}
