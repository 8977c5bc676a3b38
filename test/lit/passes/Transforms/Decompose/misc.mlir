// RUN: kiln-opt %s -kiln-decompose -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-decompose=keep-ops=Swish,Hardmax -split-input-file | FileCheck %s --check-prefix=KEEP

// Swish: X * Sigmoid(alpha * X).
// CHECK-LABEL: func.func @swish
// CHECK-NOT: onnx.Swish
// CHECK: %[[A:.*]] = onnx.Constant {{.*}}dense<2.000000e+00> : tensor<f32>
// CHECK: %[[S:.*]] = onnx.Mul %arg0, %[[A]]
// CHECK: %[[G:.*]] = onnx.Sigmoid %[[S]]
// CHECK: %[[Y:.*]] = onnx.Mul %arg0, %[[G]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: return %[[Y]]
// KEEP-LABEL: func.func @swish
// KEEP: onnx.Swish
// KEEP-NOT: onnx.Sigmoid
func.func @swish(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = onnx.Swish %x {alpha = 2.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Hardmax: one-hot of the first ArgMax along the axis.
// CHECK-LABEL: func.func @hardmax
// CHECK-NOT: onnx.Hardmax
// CHECK: %[[IDX:.*]] = onnx.ArgMax %arg0 {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xi64>
// CHECK: %[[IOTA:.*]] = onnx.Constant {{.*}}dense<{{\[\[}}0, 1, 2]]> : tensor<1x3xi64>
// CHECK: %[[HIT:.*]] = onnx.Equal %[[IOTA]], %[[IDX]]
// CHECK: onnx.Cast %[[HIT]] {to = 1 : i64} : (tensor<2x3xi1>) -> tensor<2x3xf32>
// KEEP-LABEL: func.func @hardmax
// KEEP: onnx.Hardmax
func.func @hardmax(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = onnx.Hardmax %x {axis = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// OneHot: Where(wrapped indices == iota, on, off).
// CHECK-LABEL: func.func @one_hot
// CHECK-NOT: onnx.OneHot
// CHECK: onnx.Less
// CHECK: onnx.Where
// CHECK: onnx.Unsqueeze
// CHECK: onnx.Equal {{.*}} -> tensor<2x4xi1>
// CHECK: onnx.Gather
// CHECK: onnx.Gather
// CHECK: onnx.Where {{.*}} -> tensor<2x4xf32>
func.func @one_hot(%i: tensor<2xi64>, %v: tensor<2xf32>) -> tensor<2x4xf32> {
  %d = onnx.Constant {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %0 = onnx.OneHot %i, %d, %v : (tensor<2xi64>, tensor<i64>, tensor<2xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CenterCropPad: a centered Slice where the target is smaller, a Pad where it is larger.
// CHECK-LABEL: func.func @center_crop_pad
// CHECK-NOT: onnx.CenterCropPad
// CHECK: onnx.Slice {{.*}} -> tensor<2x6xf32>
// CHECK: onnx.Pad {{.*}} -> tensor<2x8xf32>
func.func @center_crop_pad(%x: tensor<4x6xf32>) -> tensor<2x8xf32> {
  %s = onnx.Constant {value = dense<[2, 8]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnx.CenterCropPad %x, %s : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// EyeLike and the windows are constants.
// CHECK-LABEL: func.func @constants
// CHECK-NOT: onnx.EyeLike
// CHECK-NOT: onnx.HannWindow
// CHECK-DAG: onnx.Constant {{.*}}dense<{{\[\[}}0.000000e+00, 1.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 1.000000e+00]]> : tensor<2x3xf32>
// CHECK-DAG: onnx.Constant {{.*}}dense<[0.000000e+00, 5.000000e-01, 1.000000e+00, 5.000000e-01]> : tensor<4xf32>
func.func @constants(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<4xf32>) {
  %0 = onnx.EyeLike %x {k = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %n = onnx.Constant {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %1 = onnx.HannWindow %n : (tensor<i64>) -> tensor<4xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<4xf32>
}

// -----

// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
// CHECK-LABEL: func.func @shrink
// CHECK-NOT: onnx.Shrink
// CHECK: %[[NL:.*]] = onnx.Constant {{.*}}dense<-1.500000e+00>
// CHECK: %[[BELOW:.*]] = onnx.Less %arg0, %[[NL]]
// CHECK: %[[ABOVE:.*]] = onnx.Greater %arg0, %{{.*}}
// CHECK: %[[SUB:.*]] = onnx.Sub %arg0, %{{.*}}
// CHECK: %[[UP:.*]] = onnx.Where %[[ABOVE]], %[[SUB]], %{{.*}}
// CHECK: %[[ADD:.*]] = onnx.Add %arg0, %{{.*}}
// CHECK: onnx.Where %[[BELOW]], %[[ADD]], %[[UP]]
func.func @shrink(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = onnx.Shrink %x {bias = 1.5 : f32, lambd = 1.5 : f32} : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// AffineGrid: a constant base grid of (x, y, 1) rows (x along W; align_corners:
// -1 and 1 at the corner centers) times theta^T.
// CHECK-LABEL: func.func @affine_grid
// CHECK-NOT: onnx.AffineGrid
// CHECK: %[[B:.*]] = onnx.Constant {value = dense<{{\[}}[-1.000000e+00, -1.000000e+00, 1.000000e+00], [0.000000e+00, -1.000000e+00, 1.000000e+00], [1.000000e+00, -1.000000e+00, 1.000000e+00], [-1.000000e+00, 1.000000e+00, 1.000000e+00], {{.*}}]> : tensor<6x3xf32>}
// CHECK: %[[T:.*]] = onnx.Transpose %arg0 {perm = [0, 2, 1]}
// CHECK: %[[P:.*]] = onnx.MatMul %[[B]], %[[T]] {{.*}} -> tensor<2x6x2xf32>
// CHECK: onnx.Reshape %[[P]], {{.*}} -> tensor<2x2x3x2xf32>
func.func @affine_grid(%theta: tensor<2x2x3xf32>) -> tensor<2x2x3x2xf32> {
  %size = onnx.Constant {value = dense<[2, 1, 2, 3]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = onnx.AffineGrid %theta, %size {align_corners = 1 : i64} : (tensor<2x2x3xf32>, tensor<4xi64>) -> tensor<2x2x3x2xf32>
  return %0 : tensor<2x2x3x2xf32>
}

// -----

// ReverseSequence: GatherElements along time with t < len ? len - 1 - t : t
// (len clamped to [0, T]).
// CHECK-LABEL: func.func @reverse_sequence
// CHECK-NOT: onnx.ReverseSequence
// CHECK: %[[T:.*]] = onnx.Constant {value = dense<{{\[}}[0], [1], [2], [3]]> : tensor<4x1xi64>}
// CHECK: %[[MIN:.*]] = onnx.Min %arg1
// CHECK: %[[LEN:.*]] = onnx.Max %[[MIN]]
// CHECK: %[[L:.*]] = onnx.Unsqueeze %[[LEN]], {{.*}} -> tensor<1x3xi64>
// CHECK: %[[L1:.*]] = onnx.Sub %[[L]]
// CHECK: %[[REV:.*]] = onnx.Sub %[[L1]], %[[T]]
// CHECK: %[[IN:.*]] = onnx.Less %[[T]], %[[L]]
// CHECK: %[[IDX:.*]] = onnx.Where %[[IN]], %[[REV]], %[[T]]
// CHECK: %[[U:.*]] = onnx.Unsqueeze %[[IDX]], {{.*}} -> tensor<4x3x1xi64>
// CHECK: %[[E:.*]] = onnx.Expand %[[U]], {{.*}} -> tensor<4x3x2xi64>
// CHECK: onnx.GatherElements %arg0, %[[E]]
func.func @reverse_sequence(%x: tensor<4x3x2xf32>, %lens: tensor<3xi64>) -> tensor<4x3x2xf32> {
  %0 = onnx.ReverseSequence %x, %lens {batch_axis = 1 : i64, time_axis = 0 : i64} : (tensor<4x3x2xf32>, tensor<3xi64>) -> tensor<4x3x2xf32>
  return %0 : tensor<4x3x2xf32>
}
