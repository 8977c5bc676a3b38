// RUN: kiln-opt %s --split-input-file --verify-diagnostics

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
