// RUN: kiln-opt %s -split-input-file \
// RUN:   -pass-pipeline='builtin.module(gpu.module(kiln-spirv-expand-f64-math))' | FileCheck %s

// exp: clamp, k = floor(x log2(e) + 1/2), Cody-Waite reduction in two fmas,
// the degree-13 polynomial (13 fmas after its first coefficient), 2^k in two
// halves built from i64 bits; NaN passed through.
// CHECK-LABEL: gpu.func @exp
// CHECK-SAME:    (%[[X:.*]]: f64, %[[Y:.*]]: f32
// CHECK-NOT:     math.exp {{.*}} : f64
// CHECK:         arith.maximumf %[[X]]
// CHECK:         arith.minimumf
// CHECK:         math.floor
// CHECK-COUNT-2: math.fma %{{.*}}, %cst{{.*}}, %{{.*}} : f64
// CHECK-COUNT-13: math.fma
// CHECK:         arith.fptosi %{{.*}} : f64 to i64
// CHECK:         arith.shrsi
// CHECK:         arith.shli
// CHECK:         arith.bitcast %{{.*}} : i64 to f64
// CHECK:         arith.cmpf uno, %[[X]], %[[X]] : f64
// CHECK:         %[[R:.*]] = arith.select
// CHECK:         memref.store %[[R]]
// The f32 exp stays for GLSL's Exp.
// CHECK:         math.exp %[[Y]] : f32
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @exp(%x: f64, %y: f32, %out: memref<f64>, %out32: memref<f32>) kernel {
      %r = math.exp %x : f64
      memref.store %r, %out[] : memref<f64>
      %s = math.exp %y : f32
      memref.store %s, %out32[] : memref<f32>
      gpu.return
    }
  }
}

// -----

// log: subnormals scaled by 2^54, the exponent field and the mantissa from
// the i64 bits, m folded into [sqrt(2)/2, sqrt(2)), s = f / (2 + f), then the
// specials (+inf, zero, negative or NaN).
// CHECK-LABEL: gpu.func @log
// CHECK-NOT:     math.log {{.*}} : f64
// CHECK:         arith.cmpf olt, %{{.*}}, %cst{{.*}} : f64
// CHECK:         arith.bitcast %{{.*}} : f64 to i64
// CHECK:         arith.shrui
// CHECK:         arith.ori
// CHECK:         arith.cmpf ogt
// CHECK:         arith.divf
// CHECK:         arith.sitofp %{{.*}} : i64 to f64
// CHECK:         arith.cmpf oeq
// CHECK:         arith.cmpf oeq
// CHECK:         arith.cmpf ult
// CHECK:         %[[R:.*]] = arith.select
// CHECK:         memref.store %[[R]]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @log(%x: f64, %out: memref<f64>) kernel {
      %r = math.log %x : f64
      memref.store %r, %out[] : memref<f64>
      gpu.return
    }
  }
}

// -----

// powf: integer exponents by binary powering (an scf.while over |y|'s bits),
// others through the expanded log and exp; x = 1, y = 0 and (-1)^inf give 1.
// CHECK-LABEL: gpu.func @pow
// CHECK-NOT:     math.powf
// CHECK:         math.floor
// CHECK:         arith.fptosi %{{.*}} : f64 to i64
// CHECK:         %[[W:.*]]:3 = scf.while
// CHECK:           scf.condition
// CHECK:         } do {
// CHECK:           arith.trunci %{{.*}} : i64 to i1
// CHECK:           scf.yield
// CHECK:         arith.divf %{{.*}}, %[[W]]#0
// CHECK:         math.floor
// CHECK:         arith.bitcast
// CHECK:         arith.ori
// CHECK:         %[[R:.*]] = arith.select %{{.*}}, %cst{{.*}}, %{{.*}} : f64
// CHECK-NEXT:    memref.store %[[R]]
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.log
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @pow(%x: f64, %y: f64, %out: memref<f64>) kernel {
      %r = math.powf %x, %y : f64
      memref.store %r, %out[] : memref<f64>
      gpu.return
    }
  }
}
