// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file | FileCheck %s
// RUN: kiln-opt %s -convert-onnx-to-linalg -split-input-file -canonicalize \
// RUN:   -one-shot-bufferize=bufferize-function-boundaries > /dev/null

// Pooling stays NCHW: tensor.pad + linalg.pooling_nchw_{max,sum}; global
// pools are linalg.reduce over the spatial dims.

// CHECK-LABEL: func.func @maxpool_pads_strides
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[XP:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:           tensor.yield %[[NEGINF]]
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<1x2x3x3xf32>)
// CHECK:         %[[WIN:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK:         linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[XP]], %[[WIN]] : tensor<1x2x8x8xf32>, tensor<3x3xf32>) outs(%[[ACC]] : tensor<1x2x3x3xf32>)
func.func @maxpool_pads_strides(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %0, %1 = "onnx.MaxPool"(%x) <{kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}> : (tensor<1x2x6x6xf32>) -> (tensor<1x2x3x3xf32>, none)
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// ceil_mode: the right/bottom pad grows so the last window exists.
// CHECK-LABEL: func.func @maxpool_ceil
// CHECK:         tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK:         linalg.pooling_nchw_max {{.*}} -> tensor<1x1x3x3xf32>
func.func @maxpool_ceil(%x: tensor<1x1x6x6xf32>) -> tensor<1x1x3x3xf32> {
  %0, %1 = "onnx.MaxPool"(%x) <{ceil_mode = 1 : i64, kernel_shape = [3, 3], strides = [2, 2]}> : (tensor<1x1x6x6xf32>) -> (tensor<1x1x3x3xf32>, none)
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// count_include_pad=0: divide by the compile-time count of real elements.
// CHECK-LABEL: func.func @avgpool_exclude_pad
// CHECK:         %[[SUM:.*]] = linalg.pooling_nchw_sum {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x1x6x6xf32>, tensor<3x3xf32>)
// CHECK-DAG:     %[[CH:.*]] = arith.constant dense<{{\[}}[2.000000e+00], [3.000000e+00], [3.000000e+00], [2.000000e+00]]> : tensor<4x1xf32>
// CHECK-DAG:     %[[CW:.*]] = arith.constant dense<[2.000000e+00, 3.000000e+00, 3.000000e+00, 2.000000e+00]> : tensor<4xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]], %[[CH]], %[[CW]] :
// CHECK:           %[[N:.*]] = arith.mulf
// CHECK:           arith.divf %{{.*}}, %[[N]] : f32
func.func @avgpool_exclude_pad(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %0 = "onnx.AveragePool"(%x) <{kernel_shape = [3, 3], pads = [1, 1, 1, 1]}> : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @avgpool_include_pad
// CHECK:         %[[SUM:.*]] = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x1x2x2xf32>)
// CHECK:           %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK:           arith.divf %{{.*}}, %[[FOUR]] : f32
func.func @avgpool_include_pad(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = "onnx.AveragePool"(%x) <{count_include_pad = 1 : i64, kernel_shape = [2, 2], strides = [2, 2]}> : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// CHECK-LABEL: func.func @global_average_pool
// CHECK:         %[[R:.*]] = linalg.reduce ins(%{{.*}} : tensor<2x3x4x5xf32>) outs(%{{.*}} : tensor<2x3xf32>) dimensions = [2, 3]
// CHECK:           arith.addf
// CHECK:         %[[AVG:.*]] = linalg.generic {{.*}} ins(%[[R]] : tensor<2x3xf32>)
// CHECK:           arith.constant 2.000000e+01 : f32
// CHECK:         tensor.expand_shape %[[AVG]] {{.*}} into tensor<2x3x1x1xf32>
func.func @global_average_pool(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32> {
  %0 = "onnx.GlobalAveragePool"(%x) : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  return %0 : tensor<2x3x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @global_max_pool
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[NEGINF]] : f32)
// CHECK:         linalg.reduce ins(%{{.*}} : tensor<2x3x4x5xf32>) outs(%[[ACC]] : tensor<2x3xf32>) dimensions = [2, 3]
// CHECK:           arith.maximumf
func.func @global_max_pool(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32> {
  %0 = "onnx.GlobalMaxPool"(%x) : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  return %0 : tensor<2x3x1x1xf32>
}

// -----

// 3-D: one linalg.generic over (N, C, out..., window...), the window loops
// sized by an empty window tensor.
// CHECK-DAG: #[[IN3:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2 * 2 + d5, d3 * 2 + d6, d4 * 2 + d7)>
// CHECK-DAG: #[[WIN3:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7)>
// CHECK-LABEL: func.func @maxpool_3d
// CHECK:         %[[WIN:.*]] = tensor.empty() : tensor<2x2x2xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[IN3]], #[[WIN3]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %[[WIN]] : tensor<1x2x4x4x4xf32>, tensor<2x2x2xf32>)
// CHECK:           arith.maximumf
func.func @maxpool_3d(%x: tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x2x2xf32> {
  %0, %1 = "onnx.MaxPool"(%x) <{kernel_shape = [2, 2, 2], strides = [2, 2, 2]}> : (tensor<1x2x4x4x4xf32>) -> (tensor<1x2x2x2x2xf32>, none)
  return %0 : tensor<1x2x2x2x2xf32>
}

// -----

// 3-D average: the generic sums, the divisor has one count constant per
// spatial dim whose counts differ ([out_i, 1, ..., 1]).
// CHECK-LABEL: func.func @avgpool_3d_exclude_pad
// CHECK:         tensor.pad %arg0 low[0, 0, 1, 0, 0] high[0, 0, 1, 0, 0]
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK:           arith.addf
// CHECK:         %[[C:.*]] = arith.constant dense<{{\[}}{{\[}}[2.000000e+00]], {{\[}}[3.000000e+00]], {{\[}}[2.000000e+00]]]> : tensor<3x1x1xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]], %[[C]] :
// CHECK:           arith.divf
func.func @avgpool_3d_exclude_pad(%x: tensor<1x1x3x4x4xf32>) -> tensor<1x1x3x2x2xf32> {
  %0 = "onnx.AveragePool"(%x) <{kernel_shape = [3, 2, 2], pads = [1, 0, 0, 1, 0, 0], strides = [1, 2, 2]}> : (tensor<1x1x3x4x4xf32>) -> tensor<1x1x3x2x2xf32>
  return %0 : tensor<1x1x3x2x2xf32>
}

// -----

// uint8: unsigned max, the pad and the initial value 0.
// CHECK-LABEL: func.func @maxpool_uint8
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK:         linalg.fill ins(%[[ZERO]] : i8)
// CHECK:         linalg.generic
// CHECK:           arith.maxui
func.func @maxpool_uint8(%x: tensor<1x1x5x5xui8>) -> tensor<1x1x3x3xui8> {
  %0, %1 = "onnx.MaxPool"(%x) <{kernel_shape = [3, 3]}> : (tensor<1x1x5x5xui8>) -> (tensor<1x1x3x3xui8>, none)
  return %0 : tensor<1x1x3x3xui8>
}

// -----

// The Indices output: the first maximum (strictly greater replaces) and its
// flat index, here column-major (storage_order 1) over the unpadded input:
// (n * C + c) * H * W + h + w * H, h = oh * 2 + kh - 1.
// CHECK-LABEL: func.func @maxpool_indices
// CHECK:         %[[R:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<1x1x3x2xf32>, tensor<1x1x3x2xi64>)
// CHECK:           %[[GT:.*]] = arith.cmpf ogt, %[[IN:.*]], %[[ACC:.*]] : f32
// CHECK:           arith.muli %{{.*}}, %c5 : index
// CHECK:           %[[FLAT:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK:           %[[V:.*]] = arith.select %[[GT]], %[[IN]], %[[ACC]] : f32
// CHECK:           %[[I:.*]] = arith.select %[[GT]], %[[FLAT]], %{{.*}} : i64
// CHECK:           linalg.yield %[[V]], %[[I]]
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @maxpool_indices(%x: tensor<1x1x5x4xf32>) -> (tensor<1x1x3x2xf32>, tensor<1x1x3x2xi64>) {
  %0, %1 = "onnx.MaxPool"(%x) <{kernel_shape = [2, 2], strides = [2, 2], storage_order = 1 : i64, pads = [1, 0, 0, 0]}> : (tensor<1x1x5x4xf32>) -> (tensor<1x1x3x2xf32>, tensor<1x1x3x2xi64>)
  return %0, %1 : tensor<1x1x3x2xf32>, tensor<1x1x3x2xi64>
}
