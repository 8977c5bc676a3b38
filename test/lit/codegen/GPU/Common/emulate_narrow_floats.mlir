// RUN: kiln-opt %s -split-input-file -kiln-gpu-emulate-narrow-floats \
// RUN:   -verify-diagnostics | FileCheck %s

// bf16 tensors become i16 ones (the signature too: the same bytes), bf16
// arithmetic and math run in f32 between the exact widening and the rounding
// to nearest even, as integer ops; a named op computing on bf16 becomes a
// generic (its operands are no longer floats), a fill on f32 stays.
// CHECK-LABEL: func.func @bf16
// CHECK-SAME:    (%[[A:.*]]: tensor<4xi16>, %[[B:.*]]: tensor<4x3xi16>, %[[C:.*]]: tensor<3x2xi16>) -> (tensor<4xi16>, tensor<4x2xf32>)
// CHECK-NOT:     bf16
// CHECK:         tensor.empty() : tensor<4xi16>
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[A]] : tensor<4xi16>)
// CHECK:         ^bb0(%[[IN:.*]]: i16, %{{.*}}: i16):
// CHECK:           %[[WIDE:.*]] = arith.extui %[[IN]] : i16 to i32
// CHECK:           %[[SHIFTED:.*]] = arith.shli %[[WIDE]]
// CHECK:           %[[X:.*]] = arith.bitcast %[[SHIFTED]] : i32 to f32
// CHECK:           %[[SUM:.*]] = arith.addf %[[X]], %{{.*}} : f32
// CHECK:           %[[EXP:.*]] = math.exp %[[SUM]] : f32
// CHECK:           arith.bitcast %[[EXP]] : f32 to i32
// CHECK:           %[[NARROW:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK:           %[[R:.*]] = arith.select %{{.*}}, %{{.*}}, %[[NARROW]] : i16
// CHECK:           linalg.yield %[[R]] : i16
// CHECK:         linalg.fill ins(%{{.*}} : f32)
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME:      ins(%[[B]], %[[C]] : tensor<4x3xi16>, tensor<3x2xi16>)
// CHECK:           arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:           arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NOT:     linalg.matmul
func.func @bf16(%a: tensor<4xbf16>, %b: tensor<4x3xbf16>, %c: tensor<3x2xbf16>) -> (tensor<4xbf16>, tensor<4x2xf32>) {
  %e = tensor.empty() : tensor<4xbf16>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<4xbf16>) outs(%e : tensor<4xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %one = arith.constant 1.5 : bf16
    %s = arith.addf %x, %one : bf16
    %t = math.exp %s : bf16
    linalg.yield %t : bf16
  } -> tensor<4xbf16>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m = linalg.matmul ins(%b, %c : tensor<4x3xbf16>, tensor<3x2xbf16>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0, %m : tensor<4xbf16>, tensor<4x2xf32>
}

// -----

// A float8 cast works on the bits already: the bitcasts between the float
// and its byte vanish with the type. Moves (transpose, extract_slice) and
// constants (their bits kept: 0x38 is 1.0 in f8E4M3FN) take i8.
// CHECK-LABEL: func.func @float8
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xi8>) -> (tensor<3x2xf32>, tensor<2xi8>)
// CHECK-NOT:     f8E4M3FN
// CHECK:         arith.constant dense<[56, -72]> : tensor<2xi8>
// CHECK:         linalg.transpose ins(%[[A]] : tensor<2x3xi8>)
// CHECK:         linalg.generic
// CHECK:         ^bb0(%[[IN:.*]]: i8, %{{.*}}: f32):
// CHECK:           arith.extui %[[IN]] : i8 to i32
// CHECK-NOT:       arith.bitcast %[[IN]]
// CHECK:         return %{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<2xi8>
func.func @float8(%a: tensor<2x3xf8E4M3FN>) -> (tensor<3x2xf32>, tensor<2xf8E4M3FN>) {
  %k = arith.constant dense<[1.0, -1.0]> : tensor<2xf8E4M3FN>
  %e = tensor.empty() : tensor<3x2xf8E4M3FN>
  %t = linalg.transpose ins(%a : tensor<2x3xf8E4M3FN>) outs(%e : tensor<3x2xf8E4M3FN>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<3x2xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<3x2xf8E4M3FN>) outs(%e2 : tensor<3x2xf32>) {
  ^bb0(%x: f8E4M3FN, %o: f32):
    %byte = arith.bitcast %x : f8E4M3FN to i8
    %w = arith.extui %byte : i8 to i32
    %f = arith.sitofp %w : i32 to f32
    linalg.yield %f : f32
  } -> tensor<3x2xf32>
  return %0, %k : tensor<3x2xf32>, tensor<2xf8E4M3FN>
}

// -----

// bf16 <-> f64: through f32, the narrowing rounded to odd first (truncated
// toward zero, the last bit set when inexact), so that it rounds once.
// CHECK-LABEL: func.func @bf16_f64
// CHECK-SAME:    (%[[X:.*]]: i16, %[[D:.*]]: f64) -> (f64, i16)
// CHECK:         %[[WIDE:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[F64:.*]] = arith.extf %[[WIDE]] : f32 to f64
// CHECK:         %[[NEAREST:.*]] = arith.truncf %[[D]] : f64 to f32
// CHECK:         %[[BACK:.*]] = arith.extf %[[NEAREST]] : f32 to f64
// CHECK:         arith.cmpf ogt
// CHECK:         arith.subi
// CHECK:         arith.cmpf one, %[[BACK]], %[[D]] : f64
// CHECK:         arith.ori
// CHECK:         arith.trunci %{{.*}} : i32 to i16
// CHECK:         return %[[F64]], %{{.*}} : f64, i16
func.func @bf16_f64(%x: bf16, %d: f64) -> (f64, bf16) {
  %0 = arith.extf %x : bf16 to f64
  %1 = arith.truncf %d : f64 to bf16
  return %0, %1 : f64, bf16
}

// -----

// Arithmetic on a float8 (which the support check refuses first) is an
// error naming the node, never a wrong answer on its byte.
func.func @float8_arithmetic(%a: tensor<4xf8E5M2>) -> tensor<4xf8E5M2> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      outs(%a : tensor<4xf8E5M2>) {
  ^bb0(%x: f8E5M2):
    // expected-error @unknown {{node 'Add_3': 'arith.addf' on 'f8E5M2' has no GPU lowering}}
    %s = arith.addf %x, %x : f8E5M2 loc("Add_3")
    linalg.yield %s : f8E5M2
  } -> tensor<4xf8E5M2>
  return %0 : tensor<4xf8E5M2>
}

// -----

// Without these types the module is left as it is.
// CHECK-LABEL: func.func @untouched
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} : f32
func.func @untouched(%a: f32, %b: f16) -> (f32, f16) {
  %0 = arith.maximumf %a, %a : f32
  return %0, %b : f32, f16
}
