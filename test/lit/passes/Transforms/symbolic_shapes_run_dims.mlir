// RUN: kiln-opt %s -split-input-file -kiln-shape-inference -kiln-symbolic-shapes=annotate=true | FileCheck %s

// Run dims (docs/dynamic-shapes.md): a Reshape whose shape is a graph input leaves `?`
// dims that no input symbol explains; each gets a fresh run symbol (named after the
// node), flagged run ([name, 0, -1, 1]) in kiln.symbols, which a function without input
// symbols gets. Run symbols propagate like any symbol (unary and elementwise ops, a
// broadcast against 1 or the same symbol) and name the results' kiln.dims.

// CHECK-LABEL: func.func @reshape_from_input
// CHECK-SAME: -> (tensor<?x?xf32> {kiln.dims = array<i64: -1, -2>})
// CHECK-SAME: kiln.symbols = {{\[}}["r.dim0", 0, -1, 1], ["r.dim1", 0, -1, 1]]
// CHECK: onnx.Reshape{{.*}}kiln.symbolic_dims = ["r.dim0", "r.dim1"]{{.*}} -> tensor<?x?xf32>
// CHECK: onnx.Relu{{.*}}kiln.symbolic_dims = ["r.dim0", "r.dim1"]
// CHECK: onnx.Add{{.*}}kiln.symbolic_dims = ["r.dim0", "r.dim1"]
func.func @reshape_from_input(%x: tensor<2x3x4xf32>, %s: tensor<2xi64>) -> none {
  %one = onnx.Constant {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %0 = "onnx.Reshape"(%x, %s) {allowzero = 0 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> none loc("r")
  %1 = "onnx.Relu"(%0) : (none) -> none
  %2 = "onnx.Add"(%1, %one) : (none, tensor<1x1xf32>) -> none
  return %2 : none
}

// -----

// With input symbols: the run symbols come after them; the batch keeps its own.
// CHECK-LABEL: func.func @with_input_symbols
// CHECK-SAME: -> (tensor<?x4xf32> {kiln.dims = array<i64: -1, 4>}, tensor<?xf32> {kiln.dims = array<i64: -2>})
// CHECK-SAME: kiln.symbols = {{\[}}["batch", 1, -1], ["flat.dim0", 0, -1, 1]]
// CHECK: onnx.Reshape{{.*}}kiln.symbolic_dims = ["flat.dim0"]
// CHECK: onnx.Mul{{.*}}kiln.symbolic_dims = ["flat.dim0"]
func.func @with_input_symbols(%x: tensor<?x4xf32> {kiln.dims = array<i64: -1, 4>},
                              %s: tensor<1xi64>) -> (none, none)
    attributes {kiln.symbols = [["batch", 1, -1]]} {
  %0 = "onnx.Relu"(%x) : (tensor<?x4xf32>) -> none
  %1 = "onnx.Reshape"(%x, %s) {allowzero = 0 : i64} : (tensor<?x4xf32>, tensor<1xi64>) -> none loc("flat")
  %2 = "onnx.Mul"(%1, %1) : (none, none) -> none
  return %0, %2 : none, none
}

// -----

// A static model stays static: no table.
// CHECK-LABEL: func.func @static
// CHECK-NOT: kiln.symbols
func.func @static(%x: tensor<2x3xf32>) -> none {
  %s = onnx.Constant {value = dense<[3, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.Reshape"(%x, %s) {allowzero = 0 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> none
  return %0 : none
}

// -----

// Slice with run-time starts and constant axes: the sliced dim gets a run symbol, the
// others keep the input's; Split with a run-time split: each result's axis;
// Unsqueeze with run-time axes: every dim (the rank is static).
// CHECK-LABEL: func.func @slice_split_unsqueeze
// CHECK: onnx.Slice{{.*}}kiln.symbolic_dims = ["3", "s.dim1"]
// CHECK: onnx.Split{{.*}}kiln.symbolic_dims = ["p.out0.dim0", "6"], kiln.symbolic_dims_1 = ["p.out1.dim0", "6"]
// CHECK: onnx.Unsqueeze{{.*}}kiln.symbolic_dims = ["u.dim0", "u.dim1", "u.dim2"]
func.func @slice_split_unsqueeze(%x: tensor<3x6xf32>,
                                 %st: tensor<1xi64>, %sp: tensor<2xi64>, %ax: tensor<1xi64>,
                                 %y: tensor<4x6xf32>, %z: tensor<2x3xf32>) -> (none, none, none, none) {
  %e = onnx.Constant {value = dense<[5]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = onnx.Constant {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %none = onnx.NoValue : () -> none
  %0 = "onnx.Slice"(%x, %st, %e, %a, %none) : (tensor<3x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> none loc("s")
  %1:2 = "onnx.Split"(%y, %sp) {axis = 0 : i64} : (tensor<4x6xf32>, tensor<2xi64>) -> (none, none) loc("p")
  %2 = "onnx.Unsqueeze"(%z, %ax) : (tensor<2x3xf32>, tensor<1xi64>) -> none loc("u")
  return %0, %1#0, %1#1, %2 : none, none, none, none
}

// -----

// TopK with a run-time K: values and indices share one run symbol at the axis. Pad with
// run-time pads and constant axes: the padded dim only.
// CHECK-LABEL: func.func @topk_pad
// CHECK: onnx.TopK{{.*}}kiln.symbolic_dims = ["3", "t.out0.dim1"], kiln.symbolic_dims_1 = ["3", "t.out0.dim1"]
// CHECK: onnx.Pad{{.*}}kiln.symbolic_dims = ["q.dim0", "4"]
func.func @topk_pad(%x: tensor<3x8xf32>, %k: tensor<1xi64>, %y: tensor<3x4xf32>,
                    %pads: tensor<2xi64>) -> (none, none, none) {
  %none = onnx.NoValue : () -> none
  %ax = onnx.Constant {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0:2 = "onnx.TopK"(%x, %k) {axis = 1 : i64, largest = 1 : i64, sorted = 1 : i64} : (tensor<3x8xf32>, tensor<1xi64>) -> (none, none) loc("t")
  %1 = "onnx.Pad"(%y, %pads, %none, %ax) {mode = "constant"} : (tensor<3x4xf32>, tensor<2xi64>, none, tensor<1xi64>) -> none loc("q")
  return %0#0, %0#1, %1 : none, none, none
}

// -----

// NonZero counts its non-zero elements during the run: one run symbol for its count,
// through Transpose and GatherND (the indices' leading dim).
// CHECK-LABEL: func.func @nonzero_gather_nd
// CHECK-SAME: -> (tensor<2x?xi64> {kiln.dims = array<i64: 2, -1>}, tensor<?xf32> {kiln.dims = array<i64: -1>})
// CHECK-SAME: kiln.symbols = {{\[}}["nz.dim1", 0, -1, 1]]
// CHECK: onnx.NonZero{{.*}}kiln.symbolic_dims = ["2", "nz.dim1"]
// CHECK: onnx.Transpose{{.*}}kiln.symbolic_dims = ["nz.dim1", "2"]
// CHECK: onnx.GatherND{{.*}}kiln.symbolic_dims = ["nz.dim1"]
func.func @nonzero_gather_nd(%x: tensor<3x4xf32>) -> (none, none) {
  %0 = "onnx.NonZero"(%x) : (tensor<3x4xf32>) -> none loc("nz")
  %1 = "onnx.Transpose"(%0) {perm = [1, 0]} : (none) -> none loc("tr")
  %2 = "onnx.GatherND"(%x, %1) {batch_dims = 0 : i64} : (tensor<3x4xf32>, none) -> none loc("gnd")
  return %0, %2 : none, none
}

// -----

// Sizes read at run time: ConstantOfShape's shape, Expand's shape (x's dim 3 stays),
// Tile's repeats, OneHot's depth, Range's start and limit: a run symbol per `?` dim.
// CHECK-LABEL: func.func @run_time_sizes
// CHECK-SAME: kiln.symbols = {{\[}}["cos.dim0", 0, -1, 1], ["cos.dim1", 0, -1, 1], ["ex.dim1", 0, -1, 1], ["tile.dim0", 0, -1, 1], ["tile.dim1", 0, -1, 1], ["oh.dim1", 0, -1, 1], ["range.dim0", 0, -1, 1]]
// CHECK: onnx.ConstantOfShape{{.*}}kiln.symbolic_dims = ["cos.dim0", "cos.dim1"]{{.*}} -> tensor<?x?xf32>
// CHECK: onnx.Expand{{.*}}kiln.symbolic_dims = ["3", "ex.dim1"]{{.*}} -> tensor<3x?xf32>
// CHECK: onnx.Tile{{.*}}kiln.symbolic_dims = ["tile.dim0", "tile.dim1"]
// CHECK: onnx.OneHot{{.*}}kiln.symbolic_dims = ["2", "oh.dim1"]{{.*}} -> tensor<2x?xf32>
// CHECK: onnx.Range{{.*}}kiln.symbolic_dims = ["range.dim0"]{{.*}} -> tensor<?xi64>
func.func @run_time_sizes(%s: tensor<2xi64>, %x: tensor<3x1xf32>, %r: tensor<2xi64>, %d: tensor<f32>,
                          %i: tensor<2xi64>, %st: tensor<i64>, %l: tensor<i64>) -> (none, none, none, none, none) {
  %v = onnx.Constant {value = dense<[0.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %one = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.ConstantOfShape"(%s) : (tensor<2xi64>) -> none loc("cos")
  %1 = "onnx.Expand"(%x, %s) : (tensor<3x1xf32>, tensor<2xi64>) -> none loc("ex")
  %2 = "onnx.Tile"(%x, %r) : (tensor<3x1xf32>, tensor<2xi64>) -> none loc("tile")
  %3 = "onnx.OneHot"(%i, %d, %v) {axis = -1 : i64} : (tensor<2xi64>, tensor<f32>, tensor<2xf32>) -> none loc("oh")
  %4 = "onnx.Range"(%st, %l, %one) : (tensor<i64>, tensor<i64>, tensor<i64>) -> none loc("range")
  return %0, %1, %2, %3, %4 : none, none, none, none, none
}

// -----

// Unique: one run symbol (the number of unique slices) for Y's axis, indices and
// counts; inverse_indices has one entry per slice of X.
// CHECK-LABEL: func.func @unique_axis
// CHECK-SAME: -> (tensor<2x?x2xf32> {kiln.dims = array<i64: 2, -1, 2>}, tensor<?xi64> {kiln.dims = array<i64: -1>}, tensor<4xi64>, tensor<?xi64> {kiln.dims = array<i64: -1>})
// CHECK-SAME: kiln.symbols = {{\[}}["uq.out0.dim1", 0, -1, 1]]
// CHECK: onnx.Unique{{.*}}kiln.symbolic_dims = ["2", "uq.out0.dim1", "2"], kiln.symbolic_dims_1 = ["uq.out0.dim1"], kiln.symbolic_dims_3 = ["uq.out0.dim1"]
func.func @unique_axis(%x: tensor<2x4x2xf32>) -> (none, none, none, none) {
  %0:4 = "onnx.Unique"(%x) {axis = 1 : i64, sorted = 1 : i64} : (tensor<2x4x2xf32>) -> (none, none, none, none) loc("uq")
  return %0#0, %0#1, %0#2, %0#3 : none, none, none, none
}

// -----

// A Slice with run-time starts and ends takes data with input symbols (and run dims):
// the dims it does not slice keep theirs.
// CHECK-LABEL: func.func @slice_symbolic_data
// CHECK-SAME: kiln.symbols = {{\[}}["batch", 1, -1], ["s.dim1", 0, -1, 1]]
// CHECK: onnx.Slice{{.*}}kiln.symbolic_dims = ["batch", "s.dim1"]{{.*}} -> tensor<?x?xf32>
func.func @slice_symbolic_data(%x: tensor<?x6xf32> {kiln.dims = array<i64: -1, 6>},
                               %st: tensor<1xi64>, %en: tensor<1xi64>) -> none
    attributes {kiln.symbols = [["batch", 1, -1]]} {
  %axes = onnx.Constant {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %n = onnx.NoValue : () -> none
  %0 = "onnx.Slice"(%x, %st, %en, %axes, %n) : (tensor<?x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> none loc("s")
  return %0 : none
}

// -----

// A Loop whose number of iterations is a run-time value known when it starts (its body
// yields its own condition): shape inference leaves the scan outputs' axis 0 `?`, one run
// symbol for all of them; the carried value stays static.
// CHECK-LABEL: func.func @loop_run_time_trips
// CHECK-SAME: -> (tensor<3xf32>, tensor<?x3xf32> {kiln.dims = array<i64: -1, 3>}, tensor<?xf32> {kiln.dims = array<i64: -1>})
// CHECK-SAME: kiln.symbols = {{\[}}["loop.out1.dim0", 0, -1, 1]]
// CHECK: onnx.Loop{{.*}}kiln.symbolic_dims_1 = ["loop.out1.dim0", "3"], kiln.symbolic_dims_2 = ["loop.out1.dim0"]
func.func @loop_run_time_trips(%x: tensor<3xf32>, %m: tensor<i64>) -> (none, none, none) {
  %none = onnx.NoValue : () -> none
  %0:3 = onnx.Loop %m, %none, %x : (tensor<i64>, none, tensor<3xf32>) -> (none, none, none) {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<3xf32>):
    %a = onnx.Add %v, %x : (tensor<3xf32>, tensor<3xf32>) -> none
    %f = onnx.Cast %i {to = 1 : i64} : (tensor<i64>) -> none
    onnx.Yield %c, %a, %v, %f : tensor<i1>, none, tensor<3xf32>, none
  } loc("loop")
  return %0#0, %0#1, %0#2 : none, none, none
}
