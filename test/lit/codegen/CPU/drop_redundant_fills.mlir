// RUN: kiln-opt %s --kiln-drop-redundant-fills | FileCheck %s

// The border strip of a padded buffer in the arena is filled again after a
// kernel wrote only the buffer's interior and after writes to other arena
// bytes: the second fill goes. A write to the whole buffer, a different
// value, or a write to arena bytes the buffer shares keeps a fill.
// CHECK-LABEL: func.func @refill
// CHECK: linalg.fill ins(%[[ZERO:.*]] : f32) outs(%[[TOP:.*]] :
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[OTHER:.*]] :
// CHECK-NEXT: linalg.fill ins(%[[ONE:.*]] : f32) outs(%[[TOP]] :
// CHECK-NEXT: linalg.fill ins(%[[ZERO]] : f32) outs(%[[TOP]] :
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[SHARED:.*]] :
// CHECK-NEXT: linalg.fill ins(%[[ZERO]] : f32) outs(%[[TOP]] :
// CHECK-NEXT: return
func.func @refill(%x: memref<1x4x4x8xf32>, %arena: memref<4096xi8>) {
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %c2048 = arith.constant 2048 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %pad = memref.view %arena[%c0][] : memref<4096xi8> to memref<1x6x6x8xf32>
  %top = memref.subview %pad[0, 0, 0, 0] [1, 1, 6, 8] [1, 1, 1, 1] : memref<1x6x6x8xf32> to memref<1x1x6x8xf32, strided<[288, 48, 8, 1]>>
  %interior = memref.subview %pad[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : memref<1x6x6x8xf32> to memref<1x4x4x8xf32, strided<[288, 48, 8, 1], offset: 56>>
  // Bytes [2048, 2176) do not overlap the padded buffer's [0, 1152).
  %other = memref.view %arena[%c2048][] : memref<4096xi8> to memref<32xf32>
  // Bytes [1024, 1152) do.
  %shared = memref.view %arena[%c1024][] : memref<4096xi8> to memref<32xf32>
  linalg.fill ins(%zero : f32) outs(%top : memref<1x1x6x8xf32, strided<[288, 48, 8, 1]>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x4x4x8xf32>) outs(%interior : memref<1x4x4x8xf32, strided<[288, 48, 8, 1], offset: 56>>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.fill ins(%zero : f32) outs(%top : memref<1x1x6x8xf32, strided<[288, 48, 8, 1]>>)
  linalg.fill ins(%one : f32) outs(%other : memref<32xf32>)
  linalg.fill ins(%zero : f32) outs(%top : memref<1x1x6x8xf32, strided<[288, 48, 8, 1]>>)
  // A different value, then the zero again: both stay.
  linalg.fill ins(%one : f32) outs(%top : memref<1x1x6x8xf32, strided<[288, 48, 8, 1]>>)
  linalg.fill ins(%zero : f32) outs(%top : memref<1x1x6x8xf32, strided<[288, 48, 8, 1]>>)
  // Other bytes of the buffer written through another view of the arena.
  linalg.fill ins(%one : f32) outs(%shared : memref<32xf32>)
  linalg.fill ins(%zero : f32) outs(%top : memref<1x1x6x8xf32, strided<[288, 48, 8, 1]>>)
  return
}

// A write through the whole buffer (a copy into it) forgets the fill.
// CHECK-LABEL: func.func @whole_write
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: linalg.fill
func.func @whole_write(%x: memref<1x6x6x8xf32>, %arena: memref<4096xi8>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %pad = memref.view %arena[%c0][] : memref<4096xi8> to memref<1x6x6x8xf32>
  %top = memref.subview %pad[0, 0, 0, 0] [1, 1, 6, 8] [1, 1, 1, 1] : memref<1x6x6x8xf32> to memref<1x1x6x8xf32, strided<[288, 48, 8, 1]>>
  linalg.fill ins(%zero : f32) outs(%top : memref<1x1x6x8xf32, strided<[288, 48, 8, 1]>>)
  memref.copy %x, %pad : memref<1x6x6x8xf32> to memref<1x6x6x8xf32>
  linalg.fill ins(%zero : f32) outs(%top : memref<1x1x6x8xf32, strided<[288, 48, 8, 1]>>)
  return
}
