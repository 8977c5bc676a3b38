// RUN: kiln-opt %s -pass-pipeline='builtin.module(gpu.module(kiln-spirv-unsigned-index-casts))' \
// RUN:   | FileCheck %s

// Trilu's kernel on one row of i64: a column delinearized from the thread id
// (remui) widened to i64 and compared. Non-negative: zero-extended (lavapipe
// miscompiles the OpSConvert of an OpUMod result). A loaded value may be
// negative: its casts stay signed.
// CHECK-LABEL: gpu.func @tril
// CHECK:         %[[COL:.*]] = arith.remui
// CHECK:         arith.index_castui %[[COL]] : index to i64
// CHECK:         %[[I32:.*]] = arith.index_castui %[[COL]] : index to i32
// CHECK:         arith.extui %[[I32]] : i32 to i64
// CHECK:         %[[V:.*]] = memref.load
// CHECK:         arith.extsi %[[V]] : i32 to i64
// CHECK:         arith.index_cast %[[V]] : i32 to index
// CHECK-NOT:     arith.index_cast {{.*}} : index to i64
gpu.module @kernels {
  gpu.func @tril(%in: memref<5xi32>, %out: memref<5xi64>) kernel {
    %c5 = arith.constant 5 : index
    %c0_i64 = arith.constant 0 : i64
    %tid = gpu.thread_id x
    %col = arith.remui %tid, %c5 : index
    %col64 = arith.index_cast %col : index to i64
    %col32 = arith.index_cast %col : index to i32
    %wide = arith.extsi %col32 : i32 to i64
    %v = memref.load %in[%col] : memref<5xi32>
    %v64 = arith.extsi %v : i32 to i64
    %vi = arith.index_cast %v : i32 to index
    %keep = arith.cmpi sle, %col64, %c0_i64 : i64
    %sum = arith.addi %wide, %v64 : i64
    %r = arith.select %keep, %sum, %c0_i64 : i64
    memref.store %r, %out[%vi] : memref<5xi64>
    gpu.return
  }
}
