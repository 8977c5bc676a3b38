// RUN: kiln-opt %s -split-input-file -kiln-spirv-set-entry-points -verify-diagnostics \
// RUN:   | FileCheck %s

// The Vulkan 1.1 environment on the kernel module; the workgroup size of the
// kernel's launch as its entry-point ABI. A kernel never launched gets none.
// CHECK:      gpu.module @k attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader, Int8, Int16, Int64, Float16, Float64, StorageBuffer8BitAccess, StorageBuffer16BitAccess], [SPV_KHR_storage_buffer_storage_class, SPV_KHR_8bit_storage, SPV_KHR_16bit_storage]>, api=Vulkan, #spirv.resource_limits<>>}
// CHECK:        gpu.func @k(%{{.*}}: memref<4xf32>) kernel attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [64, 1, 1]>}
// CHECK:        gpu.func @unused() kernel {
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel { gpu.return }
    gpu.func @unused() kernel { gpu.return }
  }
  func.func @entry(%in: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%in : memref<4xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel { gpu.return }
  }
  func.func @two_sizes(%in: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%in : memref<4xf32>)
    // expected-error @+1 {{a kernel launched with two workgroup sizes}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c2, %c1, %c1) args(%in : memref<4xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel { gpu.return }
  }
  func.func @dynamic_size(%in: memref<4xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{a kernel launch without a static workgroup size}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%in : memref<4xf32>)
    return
  }
}

// -----

// More threads per workgroup than the target environment's limit (128, the
// Vulkan minimum kiln compiles for).
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel { gpu.return }
  }
  func.func @too_many_threads(%in: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    // expected-error @+1 {{a kernel of 256 threads per workgroup, more than the 128 the Vulkan target environment allows}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c16, %c16, %c1) args(%in : memref<4xf32>)
    return
  }
}
