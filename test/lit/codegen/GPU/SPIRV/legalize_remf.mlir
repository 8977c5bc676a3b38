// RUN: kiln-opt %s -pass-pipeline='builtin.module(gpu.module(kiln-spirv-legalize-remf))' \
// RUN:   | FileCheck %s

// fmod(x, +-inf) = x for a finite x; OpFRem would give NaN.
// CHECK-LABEL: gpu.func @rem
// CHECK-SAME:    (%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[OUT:.*]]: memref<f32>)
// CHECK:         %[[R:.*]] = arith.remf %[[X]], %[[Y]] : f32
// CHECK:         %[[YINF:.*]] = math.isinf %[[Y]] : f32
// CHECK:         %[[XFIN:.*]] = math.isfinite %[[X]] : f32
// CHECK:         %[[KEEP:.*]] = arith.andi %[[YINF]], %[[XFIN]] : i1
// CHECK:         %[[S:.*]] = arith.select %[[KEEP]], %[[X]], %[[R]] : f32
// CHECK:         memref.store %[[S]], %[[OUT]][]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @rem(%x: f32, %y: f32, %out: memref<f32>) kernel {
      %r = arith.remf %x, %y : f32
      memref.store %r, %out[] : memref<f32>
      gpu.return
    }
  }
}
