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
