// RUN: kiln-opt %s -split-input-file \
// RUN:   -pass-pipeline='builtin.module(gpu.module(kiln-spirv-lower-workgroup-memory))' \
// RUN:   -verify-diagnostics | FileCheck %s

// Each workgroup attribution becomes a Workgroup-class alloc at the start of
// the kernel (what convert-gpu-to-spirv turns into a module variable).
// CHECK:       gpu.func @kernel(%[[ARG:.*]]: memref<64xf32>) kernel {
// CHECK:         %[[A:.*]] = memref.alloc() : memref<64xf32, #spirv.storage_class<Workgroup>>
// CHECK:         %[[B:.*]] = memref.alloc() : memref<4x16xi32, #spirv.storage_class<Workgroup>>
// CHECK:         %[[V:.*]] = memref.load %[[ARG]]
// CHECK:         memref.store %[[V]], %[[A]]
// CHECK:         gpu.barrier
// CHECK:         memref.load %[[A]]
// CHECK:         memref.store %{{.*}}, %[[B]]
gpu.module @m {
  gpu.func @kernel(%arg: memref<64xf32>)
      workgroup(%a: memref<64xf32, #gpu.address_space<workgroup>>,
                %b: memref<4x16xi32, #gpu.address_space<workgroup>>) kernel {
    %t = gpu.thread_id x
    %v = memref.load %arg[%t] : memref<64xf32>
    memref.store %v, %a[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %c0 = arith.constant 0 : index
    %w = memref.load %a[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %w, %arg[%t] : memref<64xf32>
    %i = arith.constant 1 : i32
    memref.store %i, %b[%c0, %c0] : memref<4x16xi32, #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @view(%arg: memref<64xf32>)
      workgroup(%a: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
    // expected-error @+1 {{workgroup memory used other than by loads and stores}}
    %s = memref.subview %a[0] [8] [1] : memref<64xf32, #gpu.address_space<workgroup>> to memref<8xf32, strided<[1]>, #gpu.address_space<workgroup>>
    gpu.return
  }
}
