// RUN: kiln-opt %s -kiln-gpu-prepare-loops \
// RUN:   -kiln-plan-memory=alignment=256 -convert-linalg-to-parallel-loops \
// RUN:   -kiln-gpu-map-loops -convert-parallel-loops-to-gpu -lower-affine \
// RUN:   -canonicalize -gpu-launch-sink-index-computations -gpu-kernel-outlining \
// RUN:   -kiln-gpu-plan-dispatches | FileCheck %s

// Bindings per kernel argument: [kind, index, byte offset], kind 0 = entry
// argument, 1 = weights blob, 2 = transient arena. The subview keeps the
// arena as its base: its type's offset (2) addresses the elements. A kernel
// is named after its ONNX node.
// CHECK: module attributes {gpu.container_module, kiln.device_constants_size = 512 : i64, kiln.scratch_size = 256 : i64}
// CHECK: memref.global "private" constant @w : memref<4xf32> = dense<{{.*}}> {kiln.device_offset = 0 : i64}
// CHECK: memref.global "private" constant @v : memref<4xf32> = dense<{{.*}}> {kiln.device_offset = 256 : i64}
// CHECK-LABEL: func.func @entry
// CHECK-SAME:    (%[[IN:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<2xf32>, %[[ARENA:.*]]: memref<256xi8> {kiln.scratch})
// CHECK:       gpu.launch_func @entry_kernel::@Add_0
// CHECK-SAME:    args(%[[IN]] : memref<4xf32>, %{{.*}} : memref<4xf32>, %{{.*}} : memref<4xf32>, %{{.*}} : memref<4xf32>)
// CHECK-SAME:    {kiln.bindings = [array<i64: 0, 0, 0>, array<i64: 1, 0, 0>, array<i64: 1, 0, 256>, array<i64: 2, 0, 0>]}
// CHECK:       gpu.launch_func @entry_kernel_0::@entry_kernel
// CHECK-SAME:    args(%{{.*}} : memref<2xf32, strided<[1], offset: 2>>, %[[OUT]] : memref<2xf32>)
// CHECK-SAME:    {kiln.bindings = [array<i64: 2, 0, 0>, array<i64: 0, 1, 0>]}
memref.global "private" constant @w : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
memref.global "private" constant @v : memref<4xf32> = dense<[5.0, 6.0, 7.0, 8.0]>
func.func @entry(%in: memref<4xf32>, %out: memref<2xf32>, %status: memref<i32>) {
  %zero = arith.constant 0 : i32
  memref.store %zero, %status[] : memref<i32>
  %w = memref.get_global @w : memref<4xf32>
  %v = memref.get_global @v : memref<4xf32>
  %t = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%in, %w, %v : memref<4xf32>, memref<4xf32>, memref<4xf32>) outs(%t : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.mulf %s, %c : f32
    linalg.yield %r : f32
  } loc("Add/0")
  %sub = memref.subview %t[2] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 2>>
  memref.copy %sub, %out : memref<2xf32, strided<[1], offset: 2>> to memref<2xf32>
  return
}
// CHECK:     gpu.module @entry_kernel
// CHECK:       gpu.func @Add_0(
