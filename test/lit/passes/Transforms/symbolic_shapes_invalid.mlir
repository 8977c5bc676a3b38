// RUN: kiln-opt %s -split-input-file -kiln-symbolic-shapes -verify-diagnostics

// What kiln-symbolic-shapes cannot express yet is an error naming the node and the dim,
// never a guess. (Ops whose shape inference refuses a symbolic dim are tested in
// shape_inference_invalid.mlir.)

func.func @two_symbols(%a: tensor<?x4xf32> {kiln.dims = array<i64: -1, 4>},
                       %b: tensor<?x4xf32> {kiln.dims = array<i64: -2, 4>}) -> tensor<?x4xf32>
    attributes {kiln.symbols = [["n", 1, -1], ["m", 1, -1]]} {
  // expected-error @+1 {{node (Add): dimension 0 broadcasts 'm' against 'n': a symbolic dimension broadcasts only against 1 or the same symbols}}
  %0 = "onnx.Add"(%a, %b) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @symbol_against_static(%a: tensor<?x4xf32> {kiln.dims = array<i64: -1, 4>},
                                 %b: tensor<3x4xf32>) -> tensor<3x4xf32>
    attributes {kiln.symbols = [["n", 1, -1]]} {
  // expected-error @+1 {{node (Add): dimension 0 broadcasts '3' against 'n'}}
  %0 = "onnx.Add"(%a, %b) : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @reduce_symbolic_axis(%a: tensor<?x4xf32> {kiln.dims = array<i64: -1, 4>}) -> tensor<1x4xf32>
    attributes {kiln.symbols = [["n", 1, -1]]} {
  %ax = onnx.Constant {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{node (ReduceSum): the reduction over dimension 0 ('n'), a symbolic one, is not supported yet}}
  %0 = "onnx.ReduceSum"(%a, %ax) : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @no_rule(%a: tensor<?x4xf32> {kiln.dims = array<i64: -1, 4>}) -> tensor<?x4xf32>
    attributes {kiln.symbols = [["n", 1, -1]]} {
  // expected-error @+1 {{node (Sign): input 0 has the symbolic dimension 'n' at axis 0; Sign does not take symbolic dimensions yet}}
  %0 = "onnx.Sign"(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @product_output(%a: tensor<?x?x4xf32> {kiln.dims = array<i64: -1, -2, 4>}) -> tensor<?x4xf32>
    attributes {kiln.symbols = [["batch", 1, -1], ["seq", 1, -1]]} {
  // expected-error @+1 {{node (Flatten): graph output 0 dimension 0 is '(batch * seq)'; an output dim computed from several symbols is not supported yet}}
  %0 = "onnx.Flatten"(%a) {axis = 2 : i64} : (tensor<?x?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @reshape_mismatch(%a: tensor<?x6xf32> {kiln.dims = array<i64: -1, 6>}) -> tensor<?x4xf32>
    attributes {kiln.symbols = [["n", 1, -1]]} {
  %s = onnx.Constant {value = dense<[0, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{node (Reshape): reshapes '(n * 6)' elements to '(n * 4)'; they must be the same symbols}}
  %0 = "onnx.Reshape"(%a, %s) : (tensor<?x6xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @gather_symbolic_axis(%a: tensor<?x4xf32> {kiln.dims = array<i64: -1, 4>},
                                %i: tensor<2xi64>) -> tensor<2x4xf32>
    attributes {kiln.symbols = [["n", 1, -1]]} {
  // expected-error @+1 {{node (Gather): gathering along dimension 0 ('n'), a symbolic one, takes constant indices below the symbol's minimum only}}
  %0 = "onnx.Gather"(%a, %i) {axis = 0 : i64} : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @matmul_k_mismatch(%a: tensor<?x?xf32> {kiln.dims = array<i64: -1, -2>},
                             %b: tensor<?x?xf32> {kiln.dims = array<i64: -1, -1>}) -> tensor<?x?xf32>
    attributes {kiln.symbols = [["n", 1, -1], ["m", 1, -1]]} {
  // expected-error @+1 {{node (MatMul): the product's K is 'm' in A but 'n' in B}}
  %0 = "onnx.MatMul"(%a, %b) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @reshape_two_new_symbols(%a: tensor<?x?xf32> {kiln.dims = array<i64: -1, -2>}) -> tensor<?x?xf32>
    attributes {kiln.symbols = [["n", 1, -1], ["m", 1, -1]]} {
  %s = "onnx.Shape"(%a) {start = 0 : i64} : (tensor<?x?xf32>) -> tensor<2xi64>
  %c0 = onnx.Constant {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %c1 = onnx.Constant {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %n = "onnx.Gather"(%s, %c0) {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m = "onnx.Gather"(%s, %c1) {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %swapped = "onnx.Concat"(%m, %n) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  // expected-error @+1 {{node (Reshape): shape has two symbolic dims ('n' at 1) that are not the input's at the same axis; not supported yet}}
  %0 = "onnx.Reshape"(%a, %swapped) : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Two run symbols meeting in a broadcast: the run decides both, so kiln cannot know
// they agree.
func.func @two_run_symbols(%x: tensor<6xf32>, %s: tensor<1xi64>, %t: tensor<1xi64>) -> tensor<?xf32> {
  %0 = "onnx.Reshape"(%x, %s) {allowzero = 0 : i64} : (tensor<6xf32>, tensor<1xi64>) -> tensor<?xf32> loc("a")
  %1 = "onnx.Reshape"(%x, %t) {allowzero = 0 : i64} : (tensor<6xf32>, tensor<1xi64>) -> tensor<?xf32> loc("b")
  // expected-error @+1 {{node (Add): dimension 0 broadcasts 'b.dim0' against 'a.dim0': a symbolic dimension broadcasts only against 1 or the same symbols}}
  %2 = "onnx.Add"(%0, %1) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %2 : tensor<?xf32>
}

// -----

// A run symbol against a static size other than 1.
func.func @run_symbol_against_static(%x: tensor<6xf32>, %s: tensor<1xi64>, %c: tensor<6xf32>) -> tensor<?xf32> {
  %0 = "onnx.Reshape"(%x, %s) {allowzero = 0 : i64} : (tensor<6xf32>, tensor<1xi64>) -> tensor<?xf32> loc("a")
  // expected-error @+1 {{node (Add): dimension 0 broadcasts '6' against 'a.dim0'}}
  %1 = "onnx.Add"(%0, %c) : (tensor<?xf32>, tensor<6xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}
