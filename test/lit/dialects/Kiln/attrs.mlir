// RUN: kiln-opt %s | kiln-opt | FileCheck %s

// The strategy attribute prints as it parses (round trip); AVX2's 6x2 block
// uses 15 of 16 registers (12 accumulators, 2 B vectors, 1 broadcast);
// `winograd` is printed only when true.
// CHECK-LABEL: func.func @strategy
// CHECK-SAME: s = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 6, vectors = 2, reduction_block = 512>
// CHECK-SAME: t = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 6, vectors = 4, reduction_block = 9>
// CHECK-SAME: u = #kiln.kernel_strategy<vector_width = 4, registers = 32, rows = 12, vectors = 2, reduction_block = 288, winograd = true>
// CHECK-SAME: v = #kiln.kernel_strategy<vector_width = 4, registers = 32, rows = 12, vectors = 2, reduction_block = 288>}
func.func @strategy() attributes {
    s = #kiln.kernel_strategy<vector_width = 8, registers = 16, rows = 6, vectors = 2, reduction_block = 512>,
    t = #kiln.kernel_strategy<vector_width = 16, registers = 32, rows = 6, vectors = 4, reduction_block = 9>,
    u = #kiln.kernel_strategy<vector_width = 4, registers = 32, rows = 12, vectors = 2, reduction_block = 288, winograd = true>,
    v = #kiln.kernel_strategy<vector_width = 4, registers = 32, rows = 12, vectors = 2, reduction_block = 288, winograd = false>} {
  return
}
