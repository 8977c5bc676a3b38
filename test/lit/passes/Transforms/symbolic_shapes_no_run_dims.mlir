// RUN: kiln-opt %s -split-input-file -kiln-symbolic-shapes=run-dims=false -verify-diagnostics

// A device without run dims (-kiln-symbolic-shapes=run-dims=false, every device but the
// cpu): a size the run's values decide is refused naming the node and the input, as
// before run dims, so that --specialize fixes it.

func.func @reshape(%x: tensor<6xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{node (Reshape): output shape depends on a non-constant input 'shape' (sizes decided by the run's values are supported on the cpu device only so far)}}
  %0 = "onnx.Reshape"(%x, %s) {allowzero = 0 : i64} : (tensor<6xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @topk(%x: tensor<2x8xf32>, %k: tensor<1xi64>) -> tensor<2x?xf32> {
  // expected-error @+1 {{node (TopK): output shape depends on a non-constant input 'K'}}
  %0:2 = "onnx.TopK"(%x, %k) {axis = 1 : i64} : (tensor<2x8xf32>, tensor<1xi64>) -> (tensor<2x?xf32>, tensor<2x?xi64>)
  return %0#0 : tensor<2x?xf32>
}

// -----

// The counted ones and the sizes read at run time alike.
func.func @nonzero(%x: tensor<6xf32>) -> tensor<1x?xi64> {
  // expected-error @+1 {{node (NonZero): output shape depends on a non-constant input 'X' (sizes decided by the run's values are supported on the cpu device only so far)}}
  %0 = "onnx.NonZero"(%x) : (tensor<6xf32>) -> tensor<1x?xi64>
  return %0 : tensor<1x?xi64>
}

// -----

func.func @range(%s: tensor<f32>, %l: tensor<f32>, %d: tensor<f32>) -> tensor<?xf32> {
  // expected-error @+1 {{node (Range): output shape depends on a non-constant input 'start'}}
  %0 = "onnx.Range"(%s, %l, %d) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @constant_of_shape(%s: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{node (ConstantOfShape): output shape depends on a non-constant input 'input'}}
  %0 = "onnx.ConstantOfShape"(%s) : (tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @expand(%x: tensor<3x1xf32>, %s: tensor<2xi64>) -> tensor<3x?xf32> {
  // expected-error @+1 {{node (Expand): output shape depends on a non-constant input 'shape'}}
  %0 = "onnx.Expand"(%x, %s) : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<3x?xf32>
  return %0 : tensor<3x?xf32>
}

// -----

func.func @tile(%x: tensor<3x1xf32>, %r: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{node (Tile): output shape depends on a non-constant input 'repeats'}}
  %0 = "onnx.Tile"(%x, %r) : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @onehot(%i: tensor<2xi64>, %d: tensor<f32>, %v: tensor<2xf32>) -> tensor<2x?xf32> {
  // expected-error @+1 {{node (OneHot): output shape depends on a non-constant input 'depth'}}
  %0 = "onnx.OneHot"(%i, %d, %v) {axis = -1 : i64} : (tensor<2xi64>, tensor<f32>, tensor<2xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

func.func @center_crop_pad(%x: tensor<4x5xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{node (CenterCropPad): output shape depends on a non-constant input 'shape'}}
  %0 = "onnx.CenterCropPad"(%x, %s) : (tensor<4x5xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @unique(%x: tensor<6xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{node (Unique): output shape depends on a non-constant input 'X'}}
  %0:4 = "onnx.Unique"(%x) : (tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
  return %0#0 : tensor<?xf32>
}
