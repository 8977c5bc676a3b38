// RUN: kiln-opt %s --kiln-approximate-math | FileCheck %s
// RUN: kiln-opt %s --kiln-approximate-math=expand-fma | FileCheck %s --check-prefix=NOFMA
// RUN: kiln-opt %s --kiln-approximate-math=exact-fma-only | FileCheck %s --check-prefix=ONLY
// RUN: kiln-opt %s --kiln-approximate-math=fast-sigmoid=false | FileCheck %s --check-prefix=NOSIG

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
// exact-fma-only (run on linalg bodies before the kernels' epilogues) leaves
// the rest for later.
// ONLY-LABEL: func.func @f
// ONLY: math.exp
// ONLY-LABEL: func.func @exact_fma
// ONLY-COUNT-2: math.fma
// ONLY-LABEL: func.func @inexact_fma
// ONLY-NOT: math.fma
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

// kiln-fold-qdq's QLinearAdd: truncf(x * c + y) in f64 with x a converted
// 8-bit integer and c, y f32-exact is exact in f64, so it is the f32 fma (one
// rounding of the same exact value); the second one reads the first through
// extf. Without FMA (expand-fma) the f64 form stays.
// CHECK-LABEL: func.func @exact_fma
// CHECK-DAG: %[[B:.*]] = arith.uitofp %arg1 : i8 to f32
// CHECK-DAG: %[[RB:.*]] = arith.constant 1.43633127 : f32
// CHECK-DAG: %[[F:.*]] = arith.constant -399.571106 : f32
// CHECK: %[[T1:.*]] = math.fma %[[B]], %[[RB]], %[[F]] : f32
// CHECK-DAG: %[[A:.*]] = arith.uitofp %arg0 : i8 to f32
// CHECK-DAG: %[[RA:.*]] = arith.constant 1.68675697 : f32
// CHECK: %[[T2:.*]] = math.fma %[[A]], %[[RA]], %[[T1]] : f32
// CHECK: return %[[T2]]
// NOFMA-LABEL: func.func @exact_fma
// NOFMA-NOT: math.fma
// NOFMA: arith.truncf
// NOFMA: arith.truncf
func.func @exact_fma(%a: i8, %b: i8) -> f32 {
  %ra = arith.constant 1.68675696849823 : f64
  %rb = arith.constant 1.4363312721252441 : f64
  %f = arith.constant -399.57110595703125 : f64
  %bf = arith.uitofp %b : i8 to f64
  %bm = arith.mulf %bf, %rb : f64
  %s1 = arith.addf %bm, %f : f64
  %t1 = arith.truncf %s1 : f64 to f32
  %af = arith.uitofp %a : i8 to f64
  %am = arith.mulf %af, %ra : f64
  %t1d = arith.extf %t1 : f32 to f64
  %s2 = arith.addf %am, %t1d : f64
  %t2 = arith.truncf %s2 : f64 to f32
  return %t2 : f32
}

// Kept in f64: a constant 2^40 apart from the product (the f64 sum could
// round), a constant that is not an f32, an integer wider than 24 bits.
// CHECK-LABEL: func.func @inexact_fma
// CHECK-NOT: math.fma
// CHECK-COUNT-3: arith.truncf
func.func @inexact_fma(%a: i8, %w: i32) -> (f32, f32, f32) {
  %c = arith.constant 1.68675696849823 : f64
  %big = arith.constant 1.099511627776e+12 : f64
  %notf32 = arith.constant 0.1 : f64
  %af = arith.uitofp %a : i8 to f64
  %m1 = arith.mulf %af, %c : f64
  %s1 = arith.addf %m1, %big : f64
  %t1 = arith.truncf %s1 : f64 to f32
  %m2 = arith.mulf %af, %notf32 : f64
  %s2 = arith.addf %m2, %c : f64
  %t2 = arith.truncf %s2 : f64 to f32
  %wf = arith.sitofp %w : i32 to f64
  %m3 = arith.mulf %wf, %c : f64
  %s3 = arith.addf %m3, %c : f64
  %t3 = arith.truncf %s3 : f64 to f32
  return %t1, %t2, %t3 : f32, f32, f32
}

// Sigmoid, 1 / (1 + exp(-x)), on vectors (a SiLU in a kernel epilogue) and
// scalars: clamped to [-88, 88] (NaN kept by the selects), the negation
// folded into the constants, e^r by Horner's scheme, 2^k from the shifter's
// bits, one fma for 1 + e^-x and the division; no exp and no negf left.
// CHECK-LABEL: func.func @sigmoid
// CHECK-NOT: math.exp
// CHECK-NOT: arith.negf
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<8xf32>
// CHECK-DAG: %[[HI:.*]] = arith.constant dense<8.800000e+01> : vector<8xf32>
// CHECK: %[[C1:.*]] = arith.cmpf ogt, %arg0, %[[HI]] : vector<8xf32>
// CHECK: %[[Y1:.*]] = arith.select %[[C1]], %[[HI]], %arg0
// CHECK: %[[C2:.*]] = arith.cmpf olt, %[[Y1]]
// CHECK: %[[Y:.*]] = arith.select %[[C2]], %{{.*}}, %[[Y1]]
// CHECK: %[[SHIFT:.*]] = arith.constant dense<0x4B400000> : vector<8xf32>
// CHECK: %[[LOG2E:.*]] = arith.constant dense<-1.44269502> : vector<8xf32>
// CHECK: %[[T:.*]] = math.fma %[[Y]], %[[LOG2E]], %[[SHIFT]]
// CHECK: %[[K:.*]] = arith.subf %[[T]], %[[SHIFT]]
// CHECK: math.fma %[[K]], {{.*}}, %[[Y]]
// CHECK-COUNT-6: math.fma
// CHECK: %[[BITS:.*]] = arith.bitcast %[[T]] : vector<8xf32> to vector<8xi32>
// CHECK: %[[B:.*]] = arith.addi %[[BITS]]
// CHECK: %[[S:.*]] = arith.shli %[[B]]
// CHECK: %[[SCALE:.*]] = arith.bitcast %[[S]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[DEN:.*]] = math.fma %{{.*}}, %[[SCALE]], %{{.*}} : vector<8xf32>
// CHECK: %[[SIG:.*]] = arith.divf %[[ONE]], %[[DEN]] : vector<8xf32>
// CHECK: arith.mulf %arg0, %[[SIG]]
// NOFMA-LABEL: func.func @sigmoid
// NOFMA-NOT: math.fma
// NOFMA-NOT: math.exp
// NOFMA: arith.divf
func.func @sigmoid(%x: vector<8xf32>) -> vector<8xf32> {
  %one = arith.constant dense<1.0> : vector<8xf32>
  %n = arith.negf %x : vector<8xf32>
  %e = math.exp %n : vector<8xf32>
  %d = arith.addf %e, %one : vector<8xf32>
  %s = arith.divf %one, %d : vector<8xf32>
  %y = arith.mulf %x, %s : vector<8xf32>
  return %y : vector<8xf32>
}

// CHECK-LABEL: func.func @sigmoid_scalar
// CHECK-NOT: math.exp
// CHECK: arith.shli %{{.*}} : i32
// CHECK: arith.divf %{{.*}} : f32
// SPIR-V (fast-sigmoid=false): MLIR's exp, k by math.floor, no shifter
// (drivers may fold its (t + s) - s).
// NOSIG-LABEL: func.func @sigmoid_scalar
// NOSIG-NOT: 0x4B400000
// NOSIG: math.floor
// NOSIG: arith.fptosi
// NOSIG: arith.divf
// NOSIG: return
func.func @sigmoid_scalar(%x: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %n = arith.negf %x : f32
  %e = math.exp %n : f32
  %d = arith.addf %one, %e : f32
  %s = arith.divf %one, %d : f32
  return %s : f32
}

// 2 / (1 + exp(x)), and an exp with another use: MLIR's exp, not the
// sigmoid (no clamp to 88).
// CHECK-LABEL: func.func @not_sigmoid
// CHECK-NOT: 8.800000e+01
// CHECK: return
func.func @not_sigmoid(%x: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>) {
  %two = arith.constant dense<2.0> : vector<8xf32>
  %one = arith.constant dense<1.0> : vector<8xf32>
  %e = math.exp %x : vector<8xf32>
  %d = arith.addf %e, %one : vector<8xf32>
  %s = arith.divf %two, %d : vector<8xf32>
  %e2 = math.exp %x : vector<8xf32>
  %d2 = arith.addf %e2, %one : vector<8xf32>
  %s2 = arith.divf %one, %d2 : vector<8xf32>
  %u = arith.addf %s2, %e2 : vector<8xf32>
  return %s, %u : vector<8xf32>, vector<8xf32>
}
