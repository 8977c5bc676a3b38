// RUN: kiln-opt %s -convert-onnx-to-linalg | FileCheck %s

// NonMaxSuppression: max_output_boxes_per_class clamped to [0, boxes]; per (batch,
// class) the candidates above score_threshold, then one step per selection: the best
// remaining candidate (a scan for the highest score, the first one among equals), its row
// (batch, class, box) written at `count`, and a sweep dropping the candidates it
// suppresses; the result is the first `count` rows of a buffer sized for every box.
// CHECK-LABEL: func.func @nms
// CHECK: %[[MAX:.*]] = tensor.extract %arg2
// CHECK: arith.maxsi %[[MAX]]
// CHECK: arith.minsi {{.*}} %c6_i64
// CHECK: %[[ROWS:.*]] = tensor.empty() : tensor<12x3xi64>
// CHECK: %[[RES:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[ROWS]], %{{.*}} = %c0
// CHECK:   scf.for
// CHECK:     arith.cmpf ogt
// CHECK:     scf.for {{.*}} -> (tensor<6xi1>, tensor<12x3xi64>, index)
// CHECK:       scf.for {{.*}} -> (index, f32)
// CHECK:       scf.if {{.*}} -> (tensor<6xi1>, tensor<12x3xi64>, index)
// CHECK:         tensor.insert {{.*}} : tensor<12x3xi64>
// CHECK:         scf.for {{.*}} -> (tensor<6xi1>)
// CHECK:           arith.divf
// CHECK: tensor.extract_slice %[[RES]]#0[0, 0] [%[[RES]]#1, 3] [1, 1] : tensor<12x3xi64> to tensor<?x3xi64>
func.func @nms(%boxes: tensor<2x6x4xf32>, %scores: tensor<2x1x6xf32>, %max: tensor<1xi64>,
               %iou: tensor<1xf32>, %sthr: tensor<1xf32>) -> tensor<?x3xi64> {
  %0 = "onnx.NonMaxSuppression"(%boxes, %scores, %max, %iou, %sthr) {center_point_box = 0 : i64} : (tensor<2x6x4xf32>, tensor<2x1x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}
