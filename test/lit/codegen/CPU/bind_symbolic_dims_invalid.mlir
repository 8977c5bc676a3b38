// RUN: kiln-opt %s -split-input-file -allow-unregistered-dialect -kiln-bind-symbolic-dims -verify-diagnostics

// A run output must be written by exactly one memref.copy (what
// buffer-results-to-out-params makes of a returned value of `?` dims).
// expected-error @+1 {{run output argument 0 is not written by exactly one memref.copy}}
func.func @run_used_otherwise(%y: memref<?xf32>, %status: memref<i32>)
    attributes {kiln.symbols = [["y.dim0", 0, -1, 1]],
                kiln.input_dims = [], kiln.output_dims = [array<i64: -1>]} {
  "test.use"(%y) : (memref<?xf32>) -> ()
  return
}

// -----

// expected-error @+1 {{run output argument 0 is never written}}
func.func @run_never_written(%y: memref<?xf32>, %status: memref<i32>)
    attributes {kiln.symbols = [["y.dim0", 0, -1, 1]],
                kiln.input_dims = [], kiln.output_dims = [array<i64: -1>]} {
  return
}

// -----

// expected-error @+1 {{entry argument 0 is an input with a run symbol's dim}}
func.func @run_input(%x: memref<?xf32>, %status: memref<i32>)
    attributes {kiln.symbols = [["x.dim0", 0, -1, 1]],
                kiln.input_dims = [array<i64: -1>], kiln.output_dims = []} {
  return
}
