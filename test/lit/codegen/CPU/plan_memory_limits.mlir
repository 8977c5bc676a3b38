// RUN: not kiln-opt %s --kiln-plan-memory -split-input-file 2>&1 | FileCheck %s

// Buffer sizes are computed without wrapping and bounded by the bytes-per-buffer limit
// (default 2^36); errors name the ONNX node of the buffer's location.

// 2^62 floats once wrapped to a 0-byte buffer in a tiny arena.
// CHECK: error: node 'sum': a buffer of type 'memref<4611686018427387904xf32>' is over kiln's limit of 68719476736 bytes per buffer (--max-tensor-bytes)
func.func @wrapping_buffer(%out: memref<f32>) {
  %a = memref.alloc() : memref<4611686018427387904xf32> loc(fused["sum", "model.onnx":0:0])
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<4611686018427387904xf32>
  memref.store %v, %out[] : memref<f32>
  return
}

// -----

// Two 40 GiB buffers live at once: each is within the limit, the arena is not.
// CHECK: error: node 'copy': the scratch arena would be over kiln's limit of 68719476736 bytes per buffer (--max-tensor-bytes)
func.func @arena_over_limit(%out: memref<f32>) {
  %a = memref.alloc() : memref<10737418240xf32> loc(fused["copy", "model.onnx":0:0])
  %b = memref.alloc() : memref<10737418240xf32> loc(fused["copy", "model.onnx":0:0])
  memref.copy %a, %b : memref<10737418240xf32> to memref<10737418240xf32>
  %c0 = arith.constant 0 : index
  %y = memref.load %b[%c0] : memref<10737418240xf32>
  memref.store %y, %out[] : memref<f32>
  return
}
