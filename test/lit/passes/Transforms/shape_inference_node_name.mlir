// RUN: not kiln-opt %s -kiln-shape-inference 2>&1 | FileCheck %s

// Errors name the ONNX node (the NameLoc the importer gives every op) and the opset (the
// module's onnx.opset).

// CHECK: error: {{.*}}node 'mul_1' (Mul, opset 17): cannot broadcast shapes [2, 3] [2, 2] (dimension 2 vs 3)
module attributes {onnx.opset = 17 : i64} {
  func.func @broadcast_mismatch_named(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) {
    %0 = "onnx.Mul"(%a, %b) : (tensor<2x3xf32>, tensor<2x2xf32>) -> none loc("mul_1")
    return
  }
}
