// RUN: kiln-opt %s -pass-pipeline='builtin.module(gpu.module(kiln-spirv-guard-zero-trip-loops))' \
// RUN:   | FileCheck %s
// Then convert-gpu-to-spirv: the loop's result variable is stored on both
// paths (the else branch stores the init value), the loop's own variable is
// read only after the loop ran at least once.
// RUN: kiln-opt %s -pass-pipeline='builtin.module(gpu.module(kiln-spirv-guard-zero-trip-loops),convert-gpu-to-spirv)' \
// RUN:   | FileCheck %s --check-prefix=SPIRV

// A count over a prefix that is empty for j = 0 (TopK's insertion point):
// MLIR 22 lowers a zero-trip scf.for's result to a variable nobody stored.
// CHECK-LABEL: gpu.func @count
// CHECK-SAME:    (%[[N:.*]]: index, %[[OUT:.*]]: memref<1xindex>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[RUNS:.*]] = arith.cmpi slt, %[[C0]], %[[N]] : index
// CHECK:         %[[R:.*]] = scf.if %[[RUNS]] -> (index) {
// CHECK:           %[[F:.*]] = scf.for %{{.*}} = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[A:.*]] = %[[C1]]) -> (index) {
// CHECK:             arith.addi %[[A]], %[[C1]] : index
// CHECK:           scf.yield %[[F]] : index
// CHECK:         } else {
// CHECK:           scf.yield %[[C1]] : index
// CHECK:         }
// CHECK:         memref.store %[[R]], %[[OUT]][%[[C0]]]

// A loop known to run at least once is left alone, and so is one without
// results.
// CHECK-LABEL: gpu.func @runs
// CHECK-NOT:     scf.if
// CHECK:         scf.for
// CHECK-NOT:     scf.if
// CHECK:         gpu.return

// An unsigned loop is guarded with ult.
// CHECK-LABEL: gpu.func @unsigned
// CHECK:         arith.cmpi ult
// CHECK:         scf.if

// SPIRV-LABEL: spirv.func @count
// SPIRV:         %[[RESULT:.*]] = spirv.Variable : !spirv.ptr<i32, Function>
// SPIRV:         spirv.mlir.selection {
// SPIRV:         ^bb1:
// SPIRV:           %[[LOOPVAR:.*]] = spirv.Variable : !spirv.ptr<i32, Function>
// SPIRV:           spirv.mlir.loop {
// SPIRV:             spirv.Store "Function" %[[LOOPVAR]]
// SPIRV:           }
// SPIRV:           %[[F:.*]] = spirv.Load "Function" %[[LOOPVAR]] : i32
// SPIRV:           spirv.Store "Function" %[[RESULT]], %[[F]] : i32
// SPIRV:         ^bb2:
// SPIRV-NEXT:      spirv.Store "Function" %[[RESULT]], %{{.*}} : i32
// SPIRV:         }
// SPIRV:         spirv.Load "Function" %[[RESULT]] : i32
module attributes {gpu.container_module} {
  gpu.module @k attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader], [SPV_KHR_storage_buffer_storage_class]>, api=Vulkan, #spirv.resource_limits<>>} {
    gpu.func @count(%n: index, %out: memref<1xindex>) kernel attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [1, 1, 1]>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c1) -> (index) {
        %b = arith.addi %a, %c1 : index
        scf.yield %b : index
      }
      memref.store %r, %out[%c0] : memref<1xindex>
      gpu.return
    }
    gpu.func @runs(%x: f32, %out: memref<3xf32>) kernel attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [1, 1, 1]>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> (f32) {
        %b = arith.addf %a, %x : f32
        scf.yield %b : f32
      }
      scf.for %i = %c0 to %c3 step %c1 {
        memref.store %r, %out[%i] : memref<3xf32>
      }
      gpu.return
    }
    gpu.func @unsigned(%n: index, %out: memref<1xindex>) kernel attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [1, 1, 1]>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = scf.for unsigned %i = %c0 to %n step %c1 iter_args(%a = %c0) -> (index) {
        %b = arith.addi %a, %i : index
        scf.yield %b : index
      }
      memref.store %r, %out[%c0] : memref<1xindex>
      gpu.return
    }
  }
}
