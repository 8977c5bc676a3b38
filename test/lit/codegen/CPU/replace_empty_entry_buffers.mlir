// RUN: kiln-opt %s -kiln-replace-empty-entry-buffers | FileCheck %s

// A zero-element argument becomes memref<1xT> (still one pointer); the body
// uses a local zero-sized buffer, and a call passes a placeholder.

// CHECK-LABEL: func.func @m_main_ctx
// CHECK-SAME:    (%[[A:.*]]: memref<1xi64>, %[[B:.*]]: memref<2xf32>)
// CHECK:         %[[LOCAL:.*]] = memref.alloca() : memref<3x0x5xi64>
// CHECK:         memref.copy %[[LOCAL]], %[[LOCAL]]
func.func @m_main_ctx(%a: memref<3x0x5xi64>, %b: memref<2xf32>) {
  memref.copy %a, %a : memref<3x0x5xi64> to memref<3x0x5xi64>
  return
}

// CHECK-LABEL: func.func @m_main
// CHECK-SAME:    (%{{.*}}: memref<1xi64>, %[[B2:.*]]: memref<2xf32>)
// CHECK:         %[[P:.*]] = memref.alloca() : memref<1xi64>
// CHECK:         call @m_main_ctx(%[[P]], %[[B2]]) : (memref<1xi64>, memref<2xf32>) -> ()
func.func @m_main(%a: memref<3x0x5xi64>, %b: memref<2xf32>) {
  call @m_main_ctx(%a, %b) : (memref<3x0x5xi64>, memref<2xf32>) -> ()
  return
}

// Arguments with elements are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-SAME:    (%{{.*}}: memref<4xf32>)
// CHECK-NOT:     memref.alloca
func.func @untouched(%a: memref<4xf32>) {
  return
}
