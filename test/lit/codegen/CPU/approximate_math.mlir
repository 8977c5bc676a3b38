// RUN: kiln-opt %s --kiln-approximate-math | FileCheck %s
// RUN: kiln-opt %s --kiln-approximate-math=expand-fma | FileCheck %s --check-prefix=NOFMA

// exp, erf and tanh become polynomials (no math op left for libm), on
// scalars and on vectors; log first scales subnormal inputs by 2^23.
// CHECK-LABEL: func.func @f
// CHECK-NOT: math.exp
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK-NOT: math.log
// CHECK: math.fma
// CHECK: %[[SMALL:.*]] = arith.cmpf olt, %arg0, %{{.*}} : f32
// CHECK: arith.constant 0x4B000000 : f32
// CHECK: return
// NOFMA-LABEL: func.func @f
// NOFMA-NOT: math.fma
// NOFMA: return
func.func @f(%x: f32, %v: vector<8xf32>) -> (f32, f32, vector<8xf32>, f32, f32) {
  %e = math.exp %x : f32
  %r = math.erf %x : f32
  %t = math.tanh %v : vector<8xf32>
  %l = math.log %x : f32
  %h = math.sqrt %x : f32
  return %e, %r, %t, %l, %h : f32, f32, vector<8xf32>, f32, f32
}

// f64 keeps the libm call; sqrt is an instruction anyway.
// CHECK-LABEL: func.func @g
// CHECK: math.exp %{{.*}} : f64
func.func @g(%x: f64) -> f64 {
  %e = math.exp %x : f64
  return %e : f64
}

// f32 erf is kiln's: two Estrin-evaluated polynomials selected on |x| < 1,
// saturating to 1 from 3.9, the sign copied from x; no division, no exp.
// CHECK-LABEL: func.func @erf
// CHECK-NOT: arith.divf
// CHECK-NOT: math.exp
// CHECK: math.absf %arg0 : vector<8xf32>
// CHECK: arith.minimumf
// CHECK: arith.cmpf oge
// CHECK: arith.cmpf olt
// CHECK: math.copysign {{.*}}, %arg0 : vector<8xf32>
// CHECK-NOT: math.erf
func.func @erf(%v: vector<8xf32>) -> vector<8xf32> {
  %r = math.erf %v : vector<8xf32>
  return %r : vector<8xf32>
}
