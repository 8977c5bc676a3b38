// RUN: kiln-opt %s --split-input-file --kiln-merge-serial-loops | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-merge-serial-loops=kernels=true | FileCheck %s --check-prefix=KERNELS

// Three serial loops (kiln.serial_loop) filling a row: @a and @b differ only
// in the trip count (8, 16) and the offset (0, 32), @c in the constant
// stored, which is a float (not a parameter). @a_shared, a copy of @a taking
// the two constants that differ, replaces both: their calls pass their own
// constants and they go; @c is left alone. The alloca's size (1 in all) and
// the constant equal in all (the start) stay constants.
// CHECK-LABEL: llvm.func private @a_shared(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %[[N:.*]]: i64, %[[O:.*]]: i64)
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-DAG: llvm.mlir.constant(1 : i64)
// CHECK-DAG: llvm.mlir.constant(0 : i64)
// CHECK: llvm.icmp "slt" %{{.*}}, %[[N]]
// CHECK: llvm.add %{{.*}}, %[[O]]
// CHECK-NOT: llvm.func @a(
// CHECK-NOT: llvm.func @b(
// CHECK-LABEL: llvm.func @c(%{{.*}}: !llvm.ptr)
// CHECK-LABEL: llvm.func @entry
// CHECK-DAG: %[[N8:.*]] = llvm.mlir.constant(8 : i64)
// CHECK-DAG: %[[O0:.*]] = llvm.mlir.constant(0 : i64)
// CHECK: llvm.call @a_shared(%{{.*}}, %[[N8]], %[[O0]])
// CHECK-DAG: %[[N16:.*]] = llvm.mlir.constant(16 : i64)
// CHECK-DAG: %[[O32:.*]] = llvm.mlir.constant(32 : i64)
// CHECK: llvm.call @a_shared(%{{.*}}, %[[N16]], %[[O32]])
// CHECK: llvm.call @c(%{{.*}})
module {
  llvm.func @a(%p: !llvm.ptr) attributes {kiln.serial_loop, passthrough = ["noinline"]} {
    %zero = llvm.mlir.constant(0 : i64) : i64
    %one = llvm.mlir.constant(1 : i64) : i64
    %n = llvm.mlir.constant(8 : i64) : i64
    %off = llvm.mlir.constant(0 : i64) : i64
    %f = llvm.mlir.constant(1.0 : f32) : f32
    %tmp = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
    llvm.br ^loop(%zero : i64)
  ^loop(%i: i64):
    %cond = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %cond, ^body, ^exit
  ^body:
    %j = llvm.add %i, %off : i64
    %addr = llvm.getelementptr %p[%j] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %f, %addr : f32, !llvm.ptr
    %next = llvm.add %i, %one : i64
    llvm.br ^loop(%next : i64)
  ^exit:
    llvm.return
  }
  llvm.func @b(%p: !llvm.ptr) attributes {kiln.serial_loop, passthrough = ["noinline"]} {
    %zero = llvm.mlir.constant(0 : i64) : i64
    %one = llvm.mlir.constant(1 : i64) : i64
    %n = llvm.mlir.constant(16 : i64) : i64
    %off = llvm.mlir.constant(32 : i64) : i64
    %f = llvm.mlir.constant(1.0 : f32) : f32
    %tmp = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
    llvm.br ^loop(%zero : i64)
  ^loop(%i: i64):
    %cond = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %cond, ^body, ^exit
  ^body:
    %j = llvm.add %i, %off : i64
    %addr = llvm.getelementptr %p[%j] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %f, %addr : f32, !llvm.ptr
    %next = llvm.add %i, %one : i64
    llvm.br ^loop(%next : i64)
  ^exit:
    llvm.return
  }
  llvm.func @c(%p: !llvm.ptr) attributes {kiln.serial_loop, passthrough = ["noinline"]} {
    %zero = llvm.mlir.constant(0 : i64) : i64
    %one = llvm.mlir.constant(1 : i64) : i64
    %n = llvm.mlir.constant(16 : i64) : i64
    %off = llvm.mlir.constant(32 : i64) : i64
    %f = llvm.mlir.constant(2.0 : f32) : f32
    %tmp = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
    llvm.br ^loop(%zero : i64)
  ^loop(%i: i64):
    %cond = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %cond, ^body, ^exit
  ^body:
    %j = llvm.add %i, %off : i64
    %addr = llvm.getelementptr %p[%j] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %f, %addr : f32, !llvm.ptr
    %next = llvm.add %i, %one : i64
    llvm.br ^loop(%next : i64)
  ^exit:
    llvm.return
  }
  llvm.func @entry(%p: !llvm.ptr) {
    llvm.call @a(%p) : (!llvm.ptr) -> ()
    llvm.call @b(%p) : (!llvm.ptr) -> ()
    llvm.call @c(%p) : (!llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// Not marked kiln.serial_loop: left alone (@d, @e). @g and @h are merged;
// @h, whose address is taken, stays as a thunk passing its constant.
// CHECK-LABEL: llvm.func @d(
// CHECK: llvm.mlir.constant(4 : i64)
// CHECK-LABEL: llvm.func @e(
// CHECK: llvm.mlir.constant(5 : i64)
// CHECK-LABEL: llvm.func private @g_shared(
// CHECK-SAME: %[[P:.*]]: !llvm.ptr, %[[V:.*]]: i64)
// CHECK-NEXT: llvm.store %[[V]], %[[P]]
// CHECK-NOT: llvm.func @g(
// CHECK-LABEL: llvm.func @h(
// CHECK-NEXT: %[[C7:.*]] = llvm.mlir.constant(7 : i64)
// CHECK-NEXT: llvm.call @g_shared(%{{.*}}, %[[C7]])
// CHECK-LABEL: llvm.func @entry2
// CHECK: llvm.call @d(%{{.*}}) :
// CHECK: llvm.call @e(%{{.*}}) :
// CHECK: %[[C6:.*]] = llvm.mlir.constant(6 : i64)
// CHECK-NEXT: llvm.call @g_shared(%{{.*}}, %[[C6]])
// CHECK: %[[C7B:.*]] = llvm.mlir.constant(7 : i64)
// CHECK-NEXT: llvm.call @g_shared(%{{.*}}, %[[C7B]])
module {
  llvm.func @d(%p: !llvm.ptr) {
    %n = llvm.mlir.constant(4 : i64) : i64
    llvm.store %n, %p : i64, !llvm.ptr
    llvm.return
  }
  llvm.func @e(%p: !llvm.ptr) {
    %n = llvm.mlir.constant(5 : i64) : i64
    llvm.store %n, %p : i64, !llvm.ptr
    llvm.return
  }
  llvm.func @g(%p: !llvm.ptr) attributes {kiln.serial_loop} {
    %n = llvm.mlir.constant(6 : i64) : i64
    llvm.store %n, %p : i64, !llvm.ptr
    llvm.return
  }
  llvm.func @h(%p: !llvm.ptr) attributes {kiln.serial_loop} {
    %n = llvm.mlir.constant(7 : i64) : i64
    llvm.store %n, %p : i64, !llvm.ptr
    llvm.return
  }
  llvm.func @entry2(%p: !llvm.ptr) -> !llvm.ptr {
    llvm.call @d(%p) : (!llvm.ptr) -> ()
    llvm.call @e(%p) : (!llvm.ptr) -> ()
    llvm.call @g(%p) : (!llvm.ptr) -> ()
    llvm.call @h(%p) : (!llvm.ptr) -> ()
    %addr = llvm.mlir.addressof @h : !llvm.ptr
    llvm.return %addr : !llvm.ptr
  }
}

// -----

// Two kernel bodies (kiln.kernels) that differ in one constant, called
// through the thread pool (their addresses taken): merged only with
// kernels=true, each kept as a thunk passing its constant.
// CHECK-LABEL: llvm.func @k0(
// CHECK: llvm.mlir.constant(8 : i64)
// CHECK-LABEL: llvm.func @k1(
// CHECK: llvm.mlir.constant(16 : i64)
// KERNELS-LABEL: llvm.func private @k0_shared(
// KERNELS-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %[[N:.*]]: i64)
// KERNELS: llvm.icmp "slt" %{{.*}}, %[[N]]
// KERNELS-LABEL: llvm.func @k0(
// KERNELS-SAME: %[[P0:.*]]: !llvm.ptr, %[[B0:.*]]: i64, %[[E0:.*]]: i64)
// KERNELS-NEXT: %[[C8:.*]] = llvm.mlir.constant(8 : i64)
// KERNELS-NEXT: llvm.call @k0_shared(%[[P0]], %[[B0]], %[[E0]], %[[C8]])
// KERNELS-NEXT: llvm.return
// KERNELS-LABEL: llvm.func @k1(
// KERNELS-SAME: %[[P1:.*]]: !llvm.ptr, %[[B1:.*]]: i64, %[[E1:.*]]: i64)
// KERNELS-NEXT: %[[C16:.*]] = llvm.mlir.constant(16 : i64)
// KERNELS-NEXT: llvm.call @k0_shared(%[[P1]], %[[B1]], %[[E1]], %[[C16]])
// KERNELS-NEXT: llvm.return
module attributes {kiln.kernels = [["k0", "n0"], ["k1", "n1"]]} {
  llvm.func @k0(%p: !llvm.ptr, %begin: i64, %end: i64) {
    %one = llvm.mlir.constant(1 : i64) : i64
    %n = llvm.mlir.constant(8 : i64) : i64
    %f = llvm.mlir.constant(1.0 : f32) : f32
    llvm.br ^loop(%begin : i64)
  ^loop(%i: i64):
    %cond = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %cond, ^body, ^exit
  ^body:
    %addr = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %f, %addr : f32, !llvm.ptr
    %next = llvm.add %i, %one : i64
    llvm.br ^loop(%next : i64)
  ^exit:
    llvm.return
  }
  llvm.func @k1(%p: !llvm.ptr, %begin: i64, %end: i64) {
    %one = llvm.mlir.constant(1 : i64) : i64
    %n = llvm.mlir.constant(16 : i64) : i64
    %f = llvm.mlir.constant(1.0 : f32) : f32
    llvm.br ^loop(%begin : i64)
  ^loop(%i: i64):
    %cond = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %cond, ^body, ^exit
  ^body:
    %addr = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %f, %addr : f32, !llvm.ptr
    %next = llvm.add %i, %one : i64
    llvm.br ^loop(%next : i64)
  ^exit:
    llvm.return
  }
  llvm.func @entry3() -> !llvm.ptr {
    %a = llvm.mlir.addressof @k0 : !llvm.ptr
    %b = llvm.mlir.addressof @k1 : !llvm.ptr
    llvm.return %a : !llvm.ptr
  }
}

// -----

// A constant element offset of a GEP (a static memref offset) becomes a
// constant operand first, so functions that differ only there merge; a
// struct field index stays.
// CHECK-LABEL: llvm.func private @x_shared(
// CHECK-SAME: %[[P:.*]]: !llvm.ptr, %[[OFF:.*]]: i64)
// CHECK: llvm.getelementptr %[[P]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, i64)>
// CHECK: llvm.getelementptr %[[P]][%[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NOT: llvm.func @y(
// CHECK-LABEL: llvm.func @entry4
// CHECK: %[[C256:.*]] = llvm.mlir.constant(256 : i64)
// CHECK-NEXT: llvm.call @x_shared(%{{.*}}, %[[C256]])
// CHECK: %[[C224:.*]] = llvm.mlir.constant(224 : i64)
// CHECK-NEXT: llvm.call @x_shared(%{{.*}}, %[[C224]])
module {
  llvm.func @x(%p: !llvm.ptr) attributes {kiln.serial_loop} {
    %f = llvm.mlir.constant(1.0 : f32) : f32
    %field = llvm.getelementptr %p[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, i64)>
    %q = llvm.getelementptr %p[256] : (!llvm.ptr) -> !llvm.ptr, f32
    llvm.store %f, %q : f32, !llvm.ptr
    llvm.return
  }
  llvm.func @y(%p: !llvm.ptr) attributes {kiln.serial_loop} {
    %f = llvm.mlir.constant(1.0 : f32) : f32
    %field = llvm.getelementptr %p[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, i64)>
    %q = llvm.getelementptr %p[224] : (!llvm.ptr) -> !llvm.ptr, f32
    llvm.store %f, %q : f32, !llvm.ptr
    llvm.return
  }
  llvm.func @entry4(%p: !llvm.ptr) {
    llvm.call @x(%p) : (!llvm.ptr) -> ()
    llvm.call @y(%p) : (!llvm.ptr) -> ()
    llvm.return
  }
}
