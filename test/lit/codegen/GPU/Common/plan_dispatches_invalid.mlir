// RUN: kiln-opt %s -split-input-file -kiln-gpu-plan-dispatches -verify-diagnostics

// What is left on the host is an error (naming the node when the location
// has one): never a silent host fallback.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel { gpu.return }
  }
  func.func @host_alloc(%in: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{'memref.alloc' would run on the host: the GPU target runs every op as a kernel and cannot compile this one}}
    %a = memref.alloc() : memref<4xf32>
    // expected-error @+1 {{a kernel buffer that is not a view of a graph input or output, a weight or the transient arena}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: f32) kernel { gpu.return }
  }
  func.func @host_scalar(%in: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{'memref.load' would run on the host}}
    %x = memref.load %in[%c0] : memref<4xf32>
    // expected-error @+1 {{a value computed on the host ('f32') is passed to the kernel}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : f32)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel { gpu.return }
  }
  func.func @dynamic_grid(%in: memref<4xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{a kernel launch without static workgroup counts}}
    gpu.launch_func @k::@k blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%in : memref<4xf32>)
    return
  }
}

// -----

// A buffer allocated inside a kernel (what a Loop or Scan body carries) has
// no storage on the device.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel {
      // expected-error @+1 {{needs a buffer of its own inside a GPU kernel (a value a Loop or Scan body carries or makes): not supported on the GPU yet}}
      %t = memref.alloc() : memref<2xf32>
      gpu.return
    }
  }
  func.func @kernel_alloc(%in: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%in : memref<4xf32>)
    return
  }
}
