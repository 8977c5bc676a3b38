// RUN: kiln-opt %s -kiln-shape-inference -split-input-file -verify-diagnostics | FileCheck %s

// Sizes a model controls are computed without wrapping and bounded by the limits of
// dialects/ONNX/Limits.h (defaults: 2^34 elements, 2^36 bytes per tensor, 2^24
// elements per generated table); each error names the node.

func.func @expand_over_element_limit(%x: tensor<1x1xf32>) {
  %s = onnx.Constant {value = dense<[2147483648, 2147483648]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{node (Expand): output 0 would have shape [2147483648, 2147483648], over kiln's limit of 17179869184 elements per tensor (--max-tensor-elements)}}
  %0 = "onnx.Expand"(%x, %s) : (tensor<1x1xf32>, tensor<2xi64>) -> none
  return
}

// -----

func.func @expand_over_byte_limit(%x: tensor<1xf64>) {
  %s = onnx.Constant {value = dense<[17179869184]> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{output 0 would have shape [17179869184] of 'f64', over kiln's limit of 68719476736 bytes per tensor (--max-tensor-bytes)}}
  %0 = "onnx.Expand"(%x, %s) : (tensor<1xf64>, tensor<1xi64>) -> none
  return
}

// -----

// 4 * (2^62 + 1) wraps to 4.
func.func @tile_overflow(%x: tensor<4xf32>) {
  %r = onnx.Constant {value = dense<[4611686018427387905]> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{node (Tile): input shape times repeats overflows 64-bit integers}}
  %0 = "onnx.Tile"(%x, %r) : (tensor<4xf32>, tensor<1xi64>) -> none
  return
}

// -----

// A zero dimension does not hide the others: [0, 2^40, 2^40] is refused too, so no
// product of its dimensions (Flatten, Reshape) can wrap later.
func.func @zero_dim_with_huge_dims(%x: tensor<0x4xf32>) {
  %r = onnx.Constant {value = dense<[1, 1099511627776]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{output 0 would have shape [0, 4398046511104], over kiln's limit}}
  %0 = "onnx.Tile"(%x, %r) : (tensor<0x4xf32>, tensor<2xi64>) -> none
  return
}

// -----

func.func @range_infinite_limit() {
  %s = onnx.Constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %l = onnx.Constant {value = dense<0x7F800000> : tensor<f32>} : () -> tensor<f32>
  %d = onnx.Constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  // expected-error @+1 {{node (Range): start 0.000000e+00, limit INF and delta 1.000000e+00 make INF elements, over kiln's limit of 17179869184 elements per tensor}}
  %0 = "onnx.Range"(%s, %l, %d) : (tensor<f32>, tensor<f32>, tensor<f32>) -> none
  return
}

// -----

func.func @pad_overflow(%x: tensor<4xf32>) {
  %p = onnx.Constant {value = dense<[9223372036854775807, 9223372036854775807]> : tensor<2xi64>} : () -> tensor<2xi64>
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{node (Pad): input shape plus pads overflows 64-bit integers}}
  %0 = "onnx.Pad"(%x, %p, %none, %none) : (tensor<4xf32>, tensor<2xi64>, none, none) -> none
  return
}

// -----

// blocksize^2 wrapped to 0 and the channel check divided by it.
func.func @depth_to_space_blocksize(%x: tensor<1x4x2x2xf32>) {
  // expected-error @+1 {{must be 4-D with channels divisible by blocksize^2 (blocksize = 4294967296)}}
  %0 = "onnx.DepthToSpace"(%x) {blocksize = 4294967296 : i64} : (tensor<1x4x2x2xf32>) -> none
  return
}

// -----

func.func @conv_pads_overflow(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1x1xf32>) {
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{node (Conv): the window's size or padding overflows 64-bit integers}}
  %0 = "onnx.Conv"(%x, %w, %none) {pads = [4611686018427387904, 4611686018427387904, 4611686018427387904, 4611686018427387904]} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>, none) -> none
  return
}

// -----

func.func @onehot_depth(%i: tensor<2xi64>, %v: tensor<2xf32>) {
  %d = onnx.Constant {value = dense<1099511627776> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{node (OneHot): depth 1.099512e+12 is negative or over kiln's limit of 16777216 elements per generated table (--max-table-elements)}}
  %0 = "onnx.OneHot"(%i, %d, %v) : (tensor<2xi64>, tensor<i64>, tensor<2xf32>) -> none
  return
}

// -----

func.func @resize_sizes(%x: tensor<1x1x2x2xf32>) {
  %none = onnx.NoValue : () -> none
  %s = onnx.Constant {value = dense<[1, 1, 9223372036854775805, 9223372036854775805]> : tensor<4xi64>} : () -> tensor<4xi64>
  // expected-error @+1 {{node (Resize): output 0 would have shape [1, 1, 9223372036854775805, 9223372036854775805], over kiln's limit}}
  %0 = "onnx.Resize"(%x, %none, %none, %s) : (tensor<1x1x2x2xf32>, none, none, tensor<4xi64>) -> none
  return
}

// -----

func.func @resize_scales_not_larger(%x: tensor<1x1x2x2xf32>) {
  %none = onnx.NoValue : () -> none
  %s = onnx.Constant {value = dense<[1.0, 1.0, 1.0e30, 1.0e30]> : tensor<4xf32>} : () -> tensor<4xf32>
  // expected-error @+1 {{node (Resize): input 'scales' makes an output dimension of 2.000000e+30, outside [0, 17179869184] (--max-tensor-elements)}}
  %0 = "onnx.Resize"(%x, %none, %s, %none) : (tensor<1x1x2x2xf32>, none, tensor<4xf32>, none) -> none
  return
}

// -----

// No K/V head at all: `Q heads % K heads` was a division by zero.
func.func @attention_zero_kv_heads(%q: tensor<1x2x3x4xf32>, %k: tensor<1x0x3x4xf32>, %v: tensor<1x0x3x4xf32>) {
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{node (Attention): Q has 2 heads, K 0 and V 0; K and V need the same positive number of heads that divides Q's}}
  %y:4 = "onnx.Attention"(%q, %k, %v, %none, %none, %none, %none) : (tensor<1x2x3x4xf32>, tensor<1x0x3x4xf32>, tensor<1x0x3x4xf32>, none, none, none, none) -> (none, none, none, none)
  return
}

// -----

// Slice with any int64 step: the size is computed without overflowing.
// CHECK-LABEL: func.func @slice_huge_steps
// CHECK: onnx.Slice {{.*}} -> tensor<1x1xf32>
func.func @slice_huge_steps(%x: tensor<5x6xf32>) -> tensor<1x1xf32> {
  %s = onnx.Constant {value = dense<[1, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %e = onnx.Constant {value = dense<[9223372036854775807, -9223372036854775808]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a = onnx.Constant {value = dense<[0, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %t = onnx.Constant {value = dense<[9223372036854775807, -9223372036854775808]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.Slice"(%x, %s, %e, %a, %t) : (tensor<5x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}
