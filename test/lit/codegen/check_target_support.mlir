// RUN: kiln-opt %s -split-input-file -kiln-check-target-support -verify-diagnostics \
// RUN:   | FileCheck %s
// RUN: not kiln-opt %s -kiln-check-target-support=device=tpu -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN

// UNKNOWN: error: unknown device 'tpu' (kiln compiles for: cpu, vulkan, cuda, hip)

// What convert-onnx-to-linalg produces passes unchanged.
// CHECK-LABEL: func.func @supported
// CHECK:         linalg.generic
// CHECK:         kiln.check
func.func @supported(%a: tensor<4xf32>, %b: tensor<4xbf16>, %ok: tensor<i1>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xf32>, tensor<4xbf16>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %y: bf16, %o: f32):
    %w = arith.extf %y : bf16 to f32
    %s = arith.addf %x, %w : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  kiln.check %ok, "in range" : tensor<i1>
  return %0 : tensor<4xf32>
}

// -----

// An op of a dialect the CPU has no lowering for, named by its ONNX node.
func.func @unlowered(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @unknown {{node 'Relu_1': the cpu target does not support operation 'onnx.Relu'}}
  %0 = "onnx.Relu"(%a) : (tensor<4xf32>) -> tensor<4xf32> loc("Relu_1")
  return %0 : tensor<4xf32>
}

// -----

// The 8-bit floats are stored but not computed with (Cast works on their bits):
// arithmetic on one is an error for the node.
func.func @float8(%a: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  // expected-error @unknown {{node 'Cast_2': the cpu target does not support arithmetic on 8-bit floats ('arith.truncf'): cast them to float first}}
  %e = tensor.empty() : tensor<4xf8E4M3FN> loc("Cast_2")
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf8E4M3FN>) {
  ^bb0(%x: f32, %o: f8E4M3FN):
    %t = arith.truncf %x : f32 to f8E4M3FN loc("Cast_2")
    linalg.yield %t : f8E4M3FN
  } -> tensor<4xf8E4M3FN> loc("Cast_2")
  return %0 : tensor<4xf8E4M3FN>
}

// -----

// Without a node name the op alone is the location.
// expected-error @+1 {{the cpu target does not support element type complex<f32> (in 'func.func')}}
func.func @complex(%a: tensor<4xcomplex<f32>>) {
  return
}

// -----

// int4 & co. (held as i8) are converted by ops convert-onnx-to-linalg marks
// kiln.storage_only: every target runs them, the GPU ones included (other
// splits of this file are refused on vulkan, hence `not`).
// RUN: not kiln-opt %s -split-input-file -kiln-check-target-support=device=vulkan 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GPU
// GPU-NOT: Cast_i4
// GPU-LABEL: func.func @storage_only
// GPU:         kiln.storage_only
// GPU-NOT: Cast_i4
// CHECK-LABEL: func.func @storage_only
// CHECK:         kiln.storage_only
func.func @storage_only(%a: tensor<4xi8>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<4xi8>) outs(%e : tensor<4xf32>) attrs = {kiln.storage_only} {
  ^bb0(%x: i8, %o: f32):
    %f = arith.sitofp %x : i8 to f32
    linalg.yield %f : f32
  } -> tensor<4xf32> loc("Cast_i4")
  return %0 : tensor<4xf32>
}
