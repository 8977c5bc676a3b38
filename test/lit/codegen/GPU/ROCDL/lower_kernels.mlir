// RUN: kiln-opt %s --kiln-rocdl-lower-kernels=chip=gfx942 | FileCheck %s
// RUN: kiln-opt %s --kiln-rocdl-lower-kernels | FileCheck %s --check-prefix=GFX90A
// RUN: kiln-opt %s --kiln-rocdl-lower-kernels=chip=gfx1100 | FileCheck %s --check-prefix=GFX1100

// The default chip is gfx90a; every module is for code object version 5
// (abi 500), 64-lane wavefronts on GFX9, 32 on GFX10 and newer.
// GFX90A: gpu.module @entry_kernel [#rocdl.target<O = 3, chip = "gfx90a", abi = "500">]
// GFX1100: gpu.module @entry_kernel [#rocdl.target<O = 3, chip = "gfx1100", abi = "500", flags = {no_wave64}>]

// An outlined kernel as kiln-gpu-plan-dispatches leaves it: the module gets
// the ROCDL target for gfx942, the kernel becomes an llvm.func with one
// pointer parameter per binding (bare-pointer convention: the kernel adds
// its memref's static offset), f64 math calls go to the device library
// (ocml), the launch's block size bounds the kernel.
// CHECK:       gpu.module @entry_kernel [#rocdl.target<O = 3, chip = "gfx942", abi = "500">]
// CHECK-DAG:     llvm.func @__ocml_exp_f64(f64) -> f64
// CHECK:         llvm.func @Exp_0(%[[A:.*]]: !llvm.ptr, %[[B:.*]]: !llvm.ptr, %[[C:.*]]: !llvm.ptr, %[[D:.*]]: !llvm.ptr)
// CHECK-SAME:      gpu.kernel
// CHECK-SAME:      rocdl.flat_work_group_size = "64,64"
// CHECK-SAME:      rocdl.kernel
// CHECK:           rocdl.workgroup.id.x
// CHECK:           rocdl.workitem.id.x
// CHECK:           llvm.intr.exp({{.*}}) : (f32) -> f32
// tanh goes to ocml even with the NVVM dialect loaded (the host function
// @loads_nvvm below loads it, as kiln-gpu-lower-configured-ops does).
// CHECK-NOT:       llvm.intr.tanh
// CHECK:           llvm.call @__ocml_tanh_f32(
// CHECK:           %[[FOUR:.*]] = llvm.mlir.constant(4 : index) : i64
// CHECK-NEXT:      llvm.getelementptr %{{.*}}[%[[FOUR]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:           llvm.call @__ocml_exp_f64(
// CHECK:       func.func @entry
// CHECK:         gpu.launch_func @entry_kernel::@Exp_0
module attributes {gpu.container_module} {
  gpu.module @entry_kernel {
    gpu.func @Exp_0(%a: memref<128xf32>, %b: memref<128xf32, strided<[1], offset: 4>>,
                    %c: memref<128xf64>, %d: memref<128xi1>) kernel
        attributes {known_block_size = array<i32: 64, 1, 1>} {
      %x = gpu.block_id x
      %t = gpu.thread_id x
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %base = arith.muli %x, %c64 : index
      %i = arith.addi %base, %t : index
      %in = arith.cmpi ult, %i, %c128 : index
      scf.if %in {
        %v = memref.load %a[%i] : memref<128xf32>
        %e = math.exp %v : f32
        %h = math.tanh %e : f32
        memref.store %h, %b[%i] : memref<128xf32, strided<[1], offset: 4>>
        %w = memref.load %c[%i] : memref<128xf64>
        %f = math.exp %w : f64
        memref.store %f, %c[%i] : memref<128xf64>
        %z = arith.constant 0.0 : f32
        %p = arith.cmpf ogt, %v, %z : f32
        memref.store %p, %d[%i] : memref<128xi1>
      }
      gpu.return
    }
  }
  func.func @loads_nvvm() -> i32 {
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    return %tid : i32
  }
  func.func @entry(%a: memref<128xf32>, %b: memref<128xf32, strided<[1], offset: 4>>,
                   %c: memref<128xf64>, %d: memref<128xi1>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @entry_kernel::@Exp_0 blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%a : memref<128xf32>, %b : memref<128xf32, strided<[1], offset: 4>>,
             %c : memref<128xf64>, %d : memref<128xi1>)
    return
  }
}
