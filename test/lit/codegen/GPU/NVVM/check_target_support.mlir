// RUN: kiln-opt %s -split-input-file -kiln-check-target-support=device=cuda \
// RUN:   -verify-diagnostics | FileCheck %s

// f64 math compiles for cuda (libdevice has it), unlike for vulkan.
// CHECK-LABEL: func.func @exp_f64
// CHECK:         math.exp
func.func @exp_f64(%a: tensor<4xf64>) -> tensor<4xf64> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<4xf64>) outs(%a : tensor<4xf64>) {
  ^bb0(%x: f64, %o: f64):
    %t = math.exp %x : f64
    linalg.yield %t : f64
  } -> tensor<4xf64>
  return %0 : tensor<4xf64>
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

// bf16 is compiled for cuda (stored as i16, computed in f32:
// kiln-gpu-emulate-narrow-floats).
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
