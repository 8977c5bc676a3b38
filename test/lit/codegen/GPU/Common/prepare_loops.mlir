// RUN: kiln-opt %s -split-input-file -kiln-gpu-prepare-loops -verify-diagnostics \
// RUN:   | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-gpu-prepare-loops -verify-diagnostics \
// RUN:   | FileCheck %s --check-prefix=CHECKS

// The status out-parameter (last argument) and its write go; named ops become
// generics with the parallel loops outermost; an op without a parallel loop
// runs in a one-iteration scf.parallel; memref.copy becomes a generic too.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @entry
// CHECK-SAME:    (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8x3xf32>, %[[C:.*]]: memref<4x3xf32>, %[[S:.*]]: memref<f32>, %[[R:.*]]: memref<8xf32>, %[[D:.*]]: memref<4x8xf32>)
// CHECK-NOT:   memref.store
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME:    ins(%[[A]], %[[B]] : {{.*}}) outs(%[[C]] : memref<4x3xf32>)
// CHECK:       scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["reduction", "reduction"]
// CHECK-SAME:      outs(%[[S]] : memref<f32>)
// CHECK:         scf.reduce
// CHECK:       linalg.generic
// CHECK-SAME:    indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "reduction"]
// CHECK-SAME:    outs(%[[R]] : memref<8xf32>)
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "parallel"]
// CHECK-SAME:    ins(%[[A]] : memref<4x8xf32>) outs(%[[D]] : memref<4x8xf32>)
// CHECK-NOT:   memref.copy
// CHECK:       return
func.func @entry(%a: memref<4x8xf32>, %b: memref<8x3xf32>, %c: memref<4x3xf32>,
                 %s: memref<f32>, %r: memref<8xf32>, %d: memref<4x8xf32>,
                 %status: memref<i32>) {
  %zero = arith.constant 0 : i32
  memref.store %zero, %status[] : memref<i32>
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  linalg.reduce ins(%a : memref<4x8xf32>) outs(%s : memref<f32>) dimensions = [0, 1]
    (%x: f32, %acc: f32) {
      %sum = arith.addf %x, %acc : f32
      linalg.yield %sum : f32
    }
  linalg.reduce ins(%a : memref<4x8xf32>) outs(%r : memref<8xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %sum = arith.addf %x, %acc : f32
      linalg.yield %sum : f32
    }
  memref.copy %a, %d : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

// A store on the host (not a linalg op) runs in one thread too.
// CHECK-LABEL: func.func @scalar_store
// CHECK-SAME:    (%[[O:.*]]: memref<f32>)
// CHECK:       scf.parallel
// CHECK:         memref.store %{{.*}}, %[[O]][]
func.func @scalar_store(%out: memref<f32>, %status: memref<i32>) {
  %one = arith.constant 1.0 : f32
  memref.store %one, %out[] : memref<f32>
  return
}

// -----

// expected-error @+1 {{expected the status out-parameter (memref<i32>) as the entry's last argument}}
func.func @no_status(%out: memref<4xf32>) {
  return
}

// -----

func.func @status_read(%out: memref<i32>, %status: memref<i32>) {
  // expected-error @+1 {{the status out-parameter is read}}
  memref.copy %status, %out : memref<i32> to memref<i32>
  return
}

// -----

// The status copied from a buffer that is only written: both go.
// CHECK-LABEL: func.func @status_copy
// CHECK-SAME:    (%{{.*}}: memref<f32>)
// CHECK-NOT:   memref.alloc
// CHECK-NOT:   memref.store
// CHECK:       return
func.func @status_copy(%out: memref<f32>, %status: memref<i32>) {
  %zero = arith.constant 0 : i32
  %s = memref.alloc() : memref<i32>
  memref.store %zero, %s[] : memref<i32>
  memref.copy %s, %status : memref<i32> to memref<i32>
  return
}

// -----

// An output computed into a buffer and copied out as the buffer's last use
// is computed in the output argument; an earlier copy of the buffer then
// reads that argument.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME:    (%[[IN:.*]]: memref<4xf32>, %[[O1:.*]]: memref<4xf32>, %[[O2:.*]]: memref<4xf32>, %[[O3:.*]]: memref<4xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.generic {{.*}} ins(%[[IN]] : memref<4xf32>) outs(%[[O1]] : memref<4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[IN]] : memref<4xf32>) outs(%[[O3]] : memref<4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[O3]] : memref<4xf32>) outs(%[[O2]] : memref<4xf32>)
// CHECK-NOT:     memref.copy
func.func @in_place(%in: memref<4xf32>, %o1: memref<4xf32>, %o2: memref<4xf32>,
                    %o3: memref<4xf32>, %status: memref<i32>) {
  %a = memref.alloc() : memref<4xf32>
  linalg.copy ins(%in : memref<4xf32>) outs(%a : memref<4xf32>)
  memref.copy %a, %o1 : memref<4xf32> to memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  linalg.copy ins(%in : memref<4xf32>) outs(%b : memref<4xf32>)
  memref.copy %b, %o2 : memref<4xf32> to memref<4xf32>
  memref.copy %b, %o3 : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A scalar read on the host from a graph input (and what is computed from it)
// moves into the linalg body using it: it is computed by the kernel.
// CHECK-LABEL: func.func @host_scalar
// CHECK-SAME:    (%[[X:.*]]: memref<4xi64>, %[[K:.*]]: memref<i64>, %[[Y:.*]]: memref<4xi64>)
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    linalg.generic
// CHECK:           %[[L:.*]] = memref.load %[[K]][] : memref<i64>
// CHECK-NEXT:      %[[S:.*]] = arith.addi %[[L]], %[[C1]] : i64
// CHECK-NEXT:      arith.addi %{{.*}}, %[[S]] : i64
func.func @host_scalar(%x: memref<4xi64>, %k: memref<i64>, %y: memref<4xi64>,
                       %status: memref<i32>) {
  %c1 = arith.constant 1 : i64
  %0 = memref.load %k[] : memref<i64>
  %1 = arith.addi %0, %c1 : i64
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<4xi64>) outs(%y : memref<4xi64>) {
  ^bb0(%in: i64, %out: i64):
    %2 = arith.addi %in, %1 : i64
    linalg.yield %2 : i64
  }
  return
}

// -----

// With run-time checks the status is computed by a one-thread kernel that
// stores it only when a check failed; the argument is the run status.
// CHECKS-LABEL: func.func @checks
// CHECKS-SAME:    (%[[OK:.*]]: memref<i1>, %[[S:.*]]: memref<i32> {kiln.run_status})
// CHECKS:         scf.parallel
// CHECKS:           %[[L:.*]] = memref.load %[[OK]][] : memref<i1>
// CHECKS:           %[[V:.*]] = arith.select %[[L]], %{{.*}}, %{{.*}} : i32
// CHECKS:           %[[F:.*]] = arith.cmpi ne, %[[V]], %{{.*}} : i32
// CHECKS:           scf.if %[[F]] {
// CHECKS:             memref.store %[[V]], %[[S]][] : memref<i32>
// CHECKS-NOT:     memref.copy
module attributes {kiln.check_messages = ["node 'Gather_0': index out of range"]} {
  func.func @checks(%ok: memref<i1>, %status: memref<i32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %l = memref.load %ok[] : memref<i1>
    %v = arith.select %l, %c0, %c1 : i32
    %b = memref.alloc() : memref<i32>
    memref.store %v, %b[] : memref<i32>
    memref.copy %b, %status : memref<i32> to memref<i32>
    return
  }
}

// -----

// A 0-d element of a bigger buffer (its layout has an offset) is addressed
// through a 1-d view at that index: SPIR-V's lowering drops a 0-d offset.
// A copy nested in a host loop becomes a linalg copy.
// CHECK-DAG: #[[$ONE:.*]] = affine_map<(d0) -> (1)>
// CHECK-LABEL: func.func @zero_dim_offset
// CHECK:         %[[V:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [2], strides: [1] : memref<i32, strided<[], offset: 1>> to memref<2xi32>
// CHECK:         linalg.generic {indexing_maps = [#[[$ONE]], #{{.*}}], {{.*}} ins(%[[V]] : memref<2xi32>)
// CHECK:         scf.for
// CHECK:           linalg.copy
// CHECK-NOT:       memref.copy
func.func @zero_dim_offset(%v: memref<2xi32>, %out: memref<4xi32>, %o2: memref<3x2xi32>,
                           %status: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %s = memref.subview %v[1] [1] [1] : memref<2xi32> to memref<1xi32, strided<[1], offset: 1>>
  %e = memref.collapse_shape %s [] : memref<1xi32, strided<[1], offset: 1>> into memref<i32, strided<[], offset: 1>>
  linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%e : memref<i32, strided<[], offset: 1>>) outs(%out : memref<4xi32>) {
  ^bb0(%x: i32, %o: i32):
    linalg.yield %x : i32
  }
  scf.for %i = %c0 to %c3 step %c1 {
    %row = memref.subview %o2[%i, 0] [1, 2] [1, 1] : memref<3x2xi32> to memref<2xi32, strided<[1], offset: ?>>
    memref.copy %v, %row : memref<2xi32> to memref<2xi32, strided<[1], offset: ?>>
  }
  return
}

// -----

// A host loop computing a scalar that is only stored (a scatter's in-range
// flag) runs with its store in one single-thread kernel at the store.
// CHECK-LABEL: func.func @stored_scalar
// CHECK:         %[[B:.*]] = memref.alloc() : memref<i1>
// CHECK:         scf.parallel
// CHECK-NEXT:      %[[F:.*]] = scf.for
// CHECK:           memref.store %[[F]], %[[B]][] : memref<i1>
// CHECK:           scf.reduce
func.func @stored_scalar(%x: memref<4xi1>, %out: memref<4xf32>, %status: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %true = arith.constant true
  %f = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %true) -> (i1) {
    %v = memref.load %x[%i] : memref<4xi1>
    %a = arith.andi %acc, %v : i1
    scf.yield %a : i1
  }
  %b = memref.alloc() : memref<i1>
  memref.store %f, %b[] : memref<i1>
  return
}
