// RUN: kiln-opt %s -pass-pipeline='builtin.module(gpu.module(kiln-nvvm-align-workgroup-memory))' \
// RUN:   | FileCheck %s
// RUN: kiln-opt %s --kiln-nvvm-lower-kernels | FileCheck %s --check-prefix=NVVM

// Every workgroup buffer gets a 16-byte alignment (an existing larger one
// stays), which the shared-memory globals of convert-gpu-to-nvvm carry.
// CHECK-LABEL: gpu.func @tiles
// CHECK-SAME:    workgroup(%{{.*}} : memref<64x40xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 32 : i64})
// NVVM-DAG:    llvm.mlir.global internal @__wg_tiles_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<2560 x f16>
// NVVM-DAG:    llvm.mlir.global internal @__wg_tiles_1() {addr_space = 3 : i32, alignment = 32 : i64} : !llvm.array<8 x f32>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @tiles(%out: memref<2xf32>)
        workgroup(%a: memref<64x40xf16, #gpu.address_space<workgroup>>,
                  %b: memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 32 : i64})
        kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %x = memref.load %a[%c0, %c1] : memref<64x40xf16, #gpu.address_space<workgroup>>
      %y = arith.extf %x : f16 to f32
      %z = memref.load %b[%c1] : memref<8xf32, #gpu.address_space<workgroup>>
      memref.store %y, %out[%c0] : memref<2xf32>
      memref.store %z, %out[%c1] : memref<2xf32>
      gpu.return
    }
  }
}
