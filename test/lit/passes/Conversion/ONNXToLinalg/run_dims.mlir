// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s

// Run dims (docs/dynamic-shapes.md): a Reshape whose shape is read at run time. Each
// entry is extracted; 0 copies the input's dim (allowzero = 0), one -1 takes the
// elements left; a kiln.check naming the node guards the element count; the result is a
// view of the input collapsed to 1-D and expanded to the sizes (0 after a failed check).

// CHECK-LABEL: func.func @reshape_run_time
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[S:.*]]: tensor<2xi64>)
// CHECK-DAG:     %[[E0:.*]] = tensor.extract %[[S]][%{{.*}}] : tensor<2xi64>
// CHECK-DAG:     %[[E1:.*]] = tensor.extract %[[S]][%{{.*}}] : tensor<2xi64>
// CHECK:         %[[OK:.*]] = tensor.from_elements %{{.*}} : tensor<i1>
// CHECK:         kiln.check %[[OK]], "node 'r' (Reshape): shape does not fit the input's elements
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK:         %[[DYN:.*]] = tensor.cast %[[FLAT]] : tensor<24xf32> to tensor<?xf32>
// CHECK:         tensor.expand_shape %[[DYN]] {{\[}}[0, 1]] output_shape [%{{.*}}, %{{.*}}] : tensor<?xf32> into tensor<?x?xf32>
func.func @reshape_run_time(%x: tensor<2x3x4xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = "onnx.Reshape"(%x, %s) {allowzero = 0 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc("r")
  return %0 : tensor<?x?xf32>
}

// -----

// A constant shape still takes the static lowering.
// CHECK-LABEL: func.func @reshape_constant
// CHECK-NOT:     kiln.check
// CHECK:         tensor.collapse_shape
func.func @reshape_constant(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %s = onnx.Constant {value = dense<[6, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.Reshape"(%x, %s) {allowzero = 0 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}
