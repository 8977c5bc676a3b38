// RUN: kiln-opt %s -split-input-file -kiln-check-target-support=device=vulkan \
// RUN:   -verify-diagnostics | FileCheck %s

// What the vulkan target compiles passes unchanged.
// CHECK-LABEL: func.func @supported
// CHECK:         linalg.generic
func.func @supported(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xf32>, tensor<4xf16>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f16, %o: f32):
    %w = arith.extf %y : f16 to f32
    %s = arith.addf %x, %w : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A run-time check is compiled (a kernel stores a failed check's number in
// the runtime's run status).
// CHECK-LABEL: func.func @check
// CHECK:         kiln.check
func.func @check(%ok: tensor<i1>) {
  kiln.check %ok, "index out of range" : tensor<i1>
  return
}

// -----

// bf16 is compiled (stored as i16, computed in f32 by
// kiln-gpu-emulate-narrow-floats): a cast to it and a bf16 graph input pass.
// CHECK-LABEL: func.func @bf16
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
func.func @bf16(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xbf16> loc("Cast_4")
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4xbf16> loc("Cast_4")
  %1 = arith.extf %0 : tensor<4xbf16> to tensor<4xf32> loc("Cast_4")
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @bf16_input
// CHECK:         arith.extf %{{.*}} : bf16 to f32
func.func @bf16_input(%a: tensor<4xbf16>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<4xbf16>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %t = arith.extf %x : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<4xf32> loc("Cast_5")
  return %0 : tensor<4xf32>
}

// -----

// The 8-bit floats are stored and cast through their bits; arithmetic on one
// is refused naming the node, as on the CPU.
func.func @float8_arithmetic(%a: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  // expected-error @unknown {{node 'Cast_7': the vulkan target does not support arithmetic on 8-bit floats ('arith.truncf'): cast them to float first}}
  %e = tensor.empty() : tensor<4xf8E4M3FN> loc("Cast_7")
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf8E4M3FN>) {
  ^bb0(%x: f32, %o: f8E4M3FN):
    %t = arith.truncf %x : f32 to f8E4M3FN loc("Cast_7")
    linalg.yield %t : f8E4M3FN
  } -> tensor<4xf8E4M3FN> loc("Cast_7")
  return %0 : tensor<4xf8E4M3FN>
}

// -----

// GLSL has no f64 tanh (exp, log and powf on f64 are kiln's own:
// kiln-spirv-expand-f64-math).
func.func @tanh_f64(%a: tensor<4xf64>) -> tensor<4xf64> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<4xf64>) outs(%a : tensor<4xf64>) {
  ^bb0(%x: f64, %o: f64):
    // expected-error @unknown {{node 'Tanh_6': the vulkan target does not support 'math.tanh' on f64}}
    %t = math.tanh %x : f64 loc("Tanh_6")
    linalg.yield %t : f64
  } -> tensor<4xf64> loc("Tanh_6")
  return %0 : tensor<4xf64>
}

// -----

// f64 exp, log and powf pass.
// CHECK-LABEL: func.func @exp_log_pow_f64
// CHECK:         math.exp
// CHECK:         math.log
// CHECK:         math.powf
func.func @exp_log_pow_f64(%a: tensor<4xf64>) -> tensor<4xf64> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<4xf64>) outs(%a : tensor<4xf64>) {
  ^bb0(%x: f64, %o: f64):
    %e = math.exp %x : f64
    %l = math.log %e : f64
    %p = math.powf %l, %x : f64
    linalg.yield %p : f64
  } -> tensor<4xf64> loc("Exp_7")
  return %0 : tensor<4xf64>
}
