// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Every check of the kiln dialect's attribute verifiers (ABIAttributes.cpp).

func.func @parallel_not_unit(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'kiln.parallel' must be a unit attribute}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {kiln.parallel = 1 : i64}
  return
}

// -----

func.func @parallel_not_a_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'kiln.parallel' is only valid on scf.parallel}}
  scf.for %i = %c0 to %n step %c1 {
  } {kiln.parallel}
  return
}

// -----

func.func @parallel_two_dims(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'kiln.parallel' needs a one-dimensional scf.parallel without reductions}}
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    scf.reduce
  } {kiln.parallel}
  return
}

// -----

func.func @parallel_reduction(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'kiln.parallel' needs a one-dimensional scf.parallel without reductions}}
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%c0) -> index {
    scf.reduce(%i : index) {
    ^bb0(%a: index, %b: index):
      %s = arith.addi %a, %b : index
      scf.reduce.return %s : index
    }
  } {kiln.parallel}
  return %sum : index
}

// -----

func.func @parallel_not_from_zero(%n: index) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'kiln.parallel' needs a loop from 0 with step 1}}
  scf.parallel (%i) = (%c1) to (%n) step (%c1) {
    scf.reduce
  } {kiln.parallel}
  return
}

// -----

func.func @parallel_step_two(%n: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  // expected-error @+1 {{'kiln.parallel' needs a loop from 0 with step 1}}
  scf.parallel (%i) = (%c0) to (%n) step (%c2) {
    scf.reduce
  } {kiln.parallel}
  return
}

// -----

// expected-error @+1 {{'kiln.parallel' is not an argument attribute}}
func.func @parallel_on_argument(%a: index {kiln.parallel}) {
  return
}

// -----

// expected-error @+1 {{'kiln.scratch' is only valid on a function argument}}
func.func @scratch_on_op() attributes {kiln.scratch} {
  return
}

// -----

// expected-error @+1 {{'kiln.scratch' must be a unit attribute}}
func.func @scratch_not_unit(%a: memref<64xi8> {kiln.scratch = 64 : i64}) {
  return
}

// -----

// expected-error @+1 {{'kiln.scratch' needs a memref<Nxi8> argument, got 'memref<16xf32>'}}
func.func @scratch_wrong_type(%a: memref<16xf32> {kiln.scratch}) {
  return
}

// -----

// expected-error @+1 {{'kiln.scratch' needs a memref<Nxi8> argument, got 'memref<?xi8>'}}
func.func @scratch_dynamic(%a: memref<?xi8> {kiln.scratch}) {
  return
}

// -----

// expected-error @+1 {{'kiln.scratch' is not a result attribute}}
func.func @scratch_on_result(%a: memref<64xi8>) -> (memref<64xi8> {kiln.scratch}) {
  return %a : memref<64xi8>
}

// -----

// expected-error @+1 {{'kiln.scratch_size' is only valid on builtin.module}}
func.func @scratch_size_on_func() attributes {kiln.scratch_size = 64 : i64} {
  return
}

// -----

// expected-error @+1 {{'kiln.scratch_size' must be an i64 attribute}}
module attributes {kiln.scratch_size = 64 : i32} {
}

// -----

// expected-error @+1 {{'kiln.scratch_size' must be an i64 attribute}}
module attributes {kiln.scratch_size = "64"} {
}

// -----

// expected-error @+1 {{'kiln.scratch_size' must not be negative, got -64}}
module attributes {kiln.scratch_size = -64 : i64} {
}

// -----

// expected-error @+1 {{'kiln.check_messages' is only valid on builtin.module}}
func.func @messages_on_func() attributes {kiln.check_messages = ["a"]} {
  return
}

// -----

// expected-error @+1 {{'kiln.check_messages' must be an array of strings}}
module attributes {kiln.check_messages = ["a", 1 : i32]} {
}

// -----

// expected-error @+1 {{'kiln.check_messages' must be an array of strings}}
module attributes {kiln.check_messages = "a"} {
}

// -----

// expected-error @+1 {{'kiln.kernels' must be an array of [symbol, nodes] string pairs}}
module attributes {kiln.kernels = [["main_ctx_parallel_0"]]} {
}

// -----

// expected-error @+1 {{'kiln.kernels' must be an array of [symbol, nodes] string pairs}}
module attributes {kiln.kernels = [["main_ctx_parallel_0", 3 : i32]]} {
}

// -----

// #kiln.kernel_strategy (KilnDialect.cpp).

// expected-error @+1 {{vector_width must be a power of two, got 6}}
func.func @width() attributes {s = #kiln.kernel_strategy<vector_width = 6, registers = 16, rows = 6, vectors = 2, reduction_block = 64>} {
  return
}

// -----

// expected-error @+1 {{rows, vectors and reduction_block must be positive, got 0, 2, 64}}
func.func @no_rows() attributes {s = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 0, vectors = 2, reduction_block = 64>} {
  return
}

// -----

// expected-error @+1 {{rows, vectors and reduction_block must be positive, got 6, 2, 0}}
func.func @no_reduction() attributes {s = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 6, vectors = 2, reduction_block = 0>} {
  return
}

// -----

// AVX-512's 6x4 block on a 16-register target: it would spill.
// expected-error @+1 {{a 6x4 register block needs 29 vector registers, the target has 16}}
func.func @too_big() attributes {s = #kiln.kernel_strategy<vector_width = 4, registers = 16, rows = 6, vectors = 4, reduction_block = 64>} {
  return
}
