// RUN: kiln-opt %s -kiln-shape-inference -split-input-file -verify-diagnostics

// Where the op verifiers already catch an error on typed operands, the operands go
// through an op with a `none` result (as the importer creates them) so that the error
// comes from shape inference. (Errors the verifiers catch even then, such as two -1 in a
// Reshape shape or kernel_shape differing from W, are tested with the verifiers.)

func.func @broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{node (Add): cannot broadcast shapes [2, 3] [4] (dimension 4 vs 3)}}
  %0 = "onnx.Add"(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> none
  return
}

// -----

func.func @element_type_mismatch(%a: tensor<2x3xf32>, %b: tensor<3xf16>) {
  // expected-error @+1 {{inputs have different element types 'f32' and 'f16'}}
  %0 = "onnx.Sub"(%a, %b) : (tensor<2x3xf32>, tensor<3xf16>) -> none
  return
}

// -----

func.func @reshape_count_mismatch(%x: tensor<2x3x4xf32>) {
  %s = onnx.Constant {value = dense<[5, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{cannot reshape 'tensor<2x3x4xf32>' (24 elements) to [5, 5] (25 elements)}}
  %0 = "onnx.Reshape"(%x, %s) : (tensor<2x3x4xf32>, tensor<2xi64>) -> none
  return
}

// -----

func.func @reshape_not_divisible(%x: tensor<2x3x4xf32>) {
  %s = onnx.Constant {value = dense<[5, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{cannot reshape 'tensor<2x3x4xf32>' (24 elements) to [5, -1]}}
  %0 = "onnx.Reshape"(%x, %s) : (tensor<2x3x4xf32>, tensor<2xi64>) -> none
  return
}

// -----

// A shape read at run time (run dims) needs a static length: the result's rank.
func.func @reshape_shape_of_run_time_length(%x: tensor<2x3x4xf32>, %s: tensor<?xi64>) {
  // expected-error @+1 {{input 'shape' must be a 1-D integer tensor of a static length to be read at run time, got 'tensor<?xi64>'}}
  %0 = "onnx.Reshape"(%x, %s) : (tensor<2x3x4xf32>, tensor<?xi64>) -> none
  return
}

// -----

// Starts read at run time (run dims) need a static length.
func.func @slice_starts_of_run_time_length(%x: tensor<10xf32>, %starts: tensor<?xi64>) {
  %e = onnx.Constant {value = dense<[5]> : tensor<1xi64>} : () -> tensor<1xi64>
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{input 'starts' must be a 1-D integer tensor of a static length to be read at run time, got 'tensor<?xi64>'}}
  %0 = "onnx.Slice"(%x, %starts, %e, %none, %none) : (tensor<10xf32>, tensor<?xi64>, tensor<1xi64>, none, none) -> none
  return
}

// -----

func.func @split_run_time_sizes_count(%x: tensor<10xf32>, %split: tensor<3xi64>) {
  // expected-error @+1 {{split has 3 sizes but the node has 2 outputs}}
  %0:2 = "onnx.Split"(%x, %split) {axis = 0 : i64} : (tensor<10xf32>, tensor<3xi64>) -> (none, none)
  return
}

// -----

func.func @squeeze_too_many_run_time_axes(%x: tensor<1x1xf32>, %axes: tensor<3xi64>) {
  // expected-error @+1 {{squeezes 3 axes of 'tensor<1x1xf32>'}}
  %0 = "onnx.Squeeze"(%x, %axes) : (tensor<1x1xf32>, tensor<3xi64>) -> none
  return
}

// -----

func.func @concat_axis_out_of_range(%arg: tensor<2x3xf32>) {
  %a = "onnx.Identity"(%arg) : (tensor<2x3xf32>) -> none
  // expected-error @+1 {{axis 2 is out of range for rank 2 (expected [-2, 1])}}
  %0 = "onnx.Concat"(%a, %a) {axis = 2 : i64} : (none, none) -> none
  return
}

// -----

func.func @concat_dim_mismatch(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+1 {{input 1 'tensor<3x3xf32>' differs from input 0 'tensor<2x3xf32>' in dimension 0 (only axis 1 may differ)}}
  %0 = "onnx.Concat"(%a, %b) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> none
  return
}

// -----

func.func @softmax_axis_out_of_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = "onnx.Softmax"(%a) {axis = -3 : i64} : (tensor<2x3xf32>) -> none
  return
}

// -----

func.func @unsqueeze_axis_out_of_range(%a: tensor<2x3xf32>) {
  %axes = onnx.Constant {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{axes 3 is out of range for rank 3}}
  %0 = "onnx.Unsqueeze"(%a, %axes) : (tensor<2x3xf32>, tensor<1xi64>) -> none
  return
}

// -----

func.func @squeeze_non_one(%a: tensor<2x1xf32>) {
  %axes = onnx.Constant {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{cannot squeeze axis 0 of size 2}}
  %0 = "onnx.Squeeze"(%a, %axes) : (tensor<2x1xf32>, tensor<1xi64>) -> none
  return
}

// -----

func.func @gather_axis_out_of_range(%a: tensor<2x3xf32>, %i: tensor<4xi64>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = "onnx.Gather"(%a, %i) {axis = 2 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> none
  return
}

// -----

func.func @conv_channel_mismatch(%arg: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  %none = onnx.NoValue : () -> none
  %x = "onnx.Identity"(%arg) : (tensor<1x3x8x8xf32>) -> none
  // expected-error @+1 {{input channels 3 do not match W 'tensor<4x2x3x3xf32>' with group 1}}
  %0 = "onnx.Conv"(%x, %w, %none) : (none, tensor<4x2x3x3xf32>, none) -> none
  return
}

// -----

func.func @conv_kernel_too_large(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x7x7xf32>) {
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{kernel of size 7 (with dilation) is larger than the padded input size 6 in spatial dimension 0}}
  %0 = "onnx.Conv"(%x, %w, %none) {pads = [1, 1, 1, 1]} : (tensor<1x3x4x4xf32>, tensor<4x3x7x7xf32>, none) -> none
  return
}

// -----

func.func @conv_bias_mismatch(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{B must be 1-D of size 4, got 'tensor<3xf32>'}}
  %0 = "onnx.Conv"(%x, %w, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> none
  return
}

// -----

func.func @maxpool_rank(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{strides has 1 values, expected 2 for 2 spatial dimensions}}
  %0:2 = "onnx.MaxPool"(%x) {kernel_shape = [2, 2], strides = [2]} : (tensor<1x3x8x8xf32>) -> (none, none)
  return
}

// -----

func.func @matmul_inner_mismatch(%arg: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  %a = "onnx.Identity"(%arg) : (tensor<2x3xf32>) -> none
  // expected-error @+1 {{inner dimensions differ: A has K = 3, B has K = 4}}
  %0 = "onnx.MatMul"(%a, %b) : (none, tensor<4x5xf32>) -> none
  return
}

// -----

func.func @matmul_batch_mismatch(%a: tensor<2x2x3xf32>, %b: tensor<3x3x5xf32>) {
  // expected-error @+1 {{cannot broadcast shapes [2] [3]}}
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x2x3xf32>, tensor<3x3x5xf32>) -> none
  return
}

// -----

func.func @gemm_c_mismatch(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{C 'tensor<3xf32>' does not broadcast to the result shape [2, 4]}}
  %0 = "onnx.Gemm"(%a, %b, %c) : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<3xf32>) -> none
  return
}

// -----

func.func @split_sizes_mismatch(%x: tensor<2x5xf32>) {
  %sizes = onnx.Constant {value = dense<[1, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{split sizes sum to 4, but axis 1 has size 5}}
  %0:2 = "onnx.Split"(%x, %sizes) {axis = 1 : i64} : (tensor<2x5xf32>, tensor<2xi64>) -> (none, none)
  return
}

// -----

func.func @pad_negative_result(%x: tensor<3xf32>) {
  %none = onnx.NoValue : () -> none
  %pads = onnx.Constant {value = dense<[-2, -2]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{output 0 would have negative dimensions [-1]}}
  %0 = "onnx.Pad"(%x, %pads, %none, %none) : (tensor<3xf32>, tensor<2xi64>, none, none) -> none
  return
}

// -----

func.func @cast_unsupported(%x: tensor<3xf32>) {
  // expected-error @+1 {{to = 8 is not a supported ONNX data type}}
  %0 = "onnx.Cast"(%x) {to = 8 : i64} : (tensor<3xf32>) -> none
  return
}

// -----

func.func @dynamic_input(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{input 'X' has a symbolic dimension at axis 0 (shape [?, 3]); Sign does not take symbolic dimensions yet: fix the model input's dim with --shape}}
  %0 = "onnx.Sign"(%x) : (tensor<?x3xf32>) -> none
  return
}

// -----

func.func @missing_required_input(%x: tensor<2x3xf32>) {
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{required input 'B' is missing}}
  %0 = "onnx.MatMul"(%x, %none) : (tensor<2x3xf32>, none) -> none
  return
}

// -----

func.func @topk_k_too_large(%x: tensor<2x3xf32>) {
  %k = onnx.Constant {value = dense<[4]> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{K = 4 is out of range for axis 1 of size 3}}
  %0:2 = "onnx.TopK"(%x, %k) : (tensor<2x3xf32>, tensor<1xi64>) -> (none, none)
  return
}

// -----

func.func @no_shape_inference(%x: tensor<4xf32>) {
  // expected-error @+1 {{node (Det): has no shape inference yet}}
  %0 = "onnx.Det"(%x) : (tensor<4xf32>) -> none
  return
}

// -----

func.func @lstm_rank(%x: tensor<5x3xf32>, %w: tensor<1x8x3xf32>, %r: tensor<1x8x2xf32>) {
  %n = onnx.NoValue : () -> none
  // expected-error @+1 {{node (LSTM): X and W must have rank 3}}
  %0:3 = "onnx.LSTM"(%x, %w, %r, %n, %n, %n, %n, %n) : (tensor<5x3xf32>, tensor<1x8x3xf32>, tensor<1x8x2xf32>, none, none, none, none, none) -> (none, none, none)
  return
}

// -----

func.func @attention_heads(%q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>) {
  %n = onnx.NoValue : () -> none
  // expected-error @+1 {{node (Attention): 3-D inputs need q_num_heads and kv_num_heads that divide the hidden sizes}}
  %0:4 = "onnx.Attention"(%q, %k, %k, %n, %n, %n, %n) {q_num_heads = 3 : i64, kv_num_heads = 2 : i64} : (tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>, none, none, none, none) -> (none, none, none, none)
  return
}

// -----

func.func @loss_reduction(%x: tensor<3x5xf32>, %t: tensor<3xi64>) {
  %n = onnx.NoValue : () -> none
  // expected-error @+1 {{node (NegativeLogLikelihoodLoss): unknown reduction 'max'}}
  %0 = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %n) {reduction = "max"} : (tensor<3x5xf32>, tensor<3xi64>, none) -> none
  return
}

// -----

func.func @center_crop_pad_axes(%x: tensor<4x6xf32>) {
  %s = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{node (CenterCropPad): 'shape' needs one value per axis (1), got 2}}
  %0 = "onnx.CenterCropPad"(%x, %s) {axes = [1]} : (tensor<4x6xf32>, tensor<2xi64>) -> none
  return
}

// -----

func.func @window_size(%x: tensor<2xi64>) {
  %s = onnx.Constant {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{node (HannWindow): size must be one non-negative value}}
  %0 = "onnx.HannWindow"(%s) : (tensor<i64>) -> none
  return
}

// -----

func.func @pad_symbolic_axis(%a: tensor<?x4xf32> {kiln.dims = array<i64: -1, 4>}) -> none
    attributes {kiln.symbols = [["n", 1, -1]]} {
  %pads = onnx.Constant {value = dense<[1, 0, 0, 0]> : tensor<4xi64>} : () -> tensor<4xi64>
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{node (Pad): padding axis 0, a symbolic dimension, is not supported yet}}
  %0 = "onnx.Pad"(%a, %pads, %none, %none) {mode = "constant"} : (tensor<?x4xf32>, tensor<4xi64>, none, none) -> none
  return %0 : none
}

// -----

// Axes read at run time: a static number of distinct axes, at most the rank.
func.func @reduce_runtime_axes_more_than_rank(%x: tensor<2x3xf32>, %axes: tensor<3xi64>) {
  // expected-error @+1 {{node (ReduceSum): input 'axes' holds 3 values, more than the rank 2 of 'data' (the axes must be distinct)}}
  %0 = "onnx.ReduceSum"(%x, %axes) : (tensor<2x3xf32>, tensor<3xi64>) -> none
  return
}

// -----

func.func @split_symbolic_axis(%a: tensor<?x4xf32> {kiln.dims = array<i64: -1, 4>}) -> (none, none)
    attributes {kiln.symbols = [["n", 1, -1]]} {
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{node (Split): splitting along axis 0, a symbolic dimension, is not supported yet}}
  %0:2 = "onnx.Split"(%a, %none) {axis = 0 : i64, num_outputs = 2 : i64} : (tensor<?x4xf32>, none) -> (none, none)
  return %0#0, %0#1 : none, none
}

// -----

func.func @reduce_runtime_axes_unknown_length(%x: tensor<2x3xf32>, %axes: tensor<?xi64>) {
  // expected-error @+1 {{node (ReduceMax): input 'axes' must be a 1-D integer tensor of a static length to be read at run time, got 'tensor<?xi64>'}}
  %0 = "onnx.ReduceMax"(%x, %axes) : (tensor<2x3xf32>, tensor<?xi64>) -> none
  return
}

// -----

func.func @reduce_runtime_axes_symbolic_data(%x: tensor<?x3xf32> {kiln.dims = array<i64: -1, 3>}, %axes: tensor<1xi64>)
    attributes {kiln.symbols = [["n", 1, -1]]} {
  // expected-error @+1 {{node (ReduceSum): axes read at run time need a static shape of 'data', got 'tensor<?x3xf32>'}}
  %0 = "onnx.ReduceSum"(%x, %axes) : (tensor<?x3xf32>, tensor<1xi64>) -> none
  return
}

// -----

// Resize with scales read at run time: a 1-D float tensor, one value per axis.
func.func @resize_runtime_scales_unknown_length(%x: tensor<1x1x2x2xf32>, %scales: tensor<?xf32>) {
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{node (Resize): input 'scales' must be a 1-D float tensor of a static length to be read at run time, got 'tensor<?xf32>'}}
  %0 = "onnx.Resize"(%x, %none, %scales, %none) {mode = "nearest"} : (tensor<1x1x2x2xf32>, none, tensor<?xf32>, none) -> none
  return
}

// -----

func.func @resize_runtime_sizes_wrong_count(%x: tensor<1x1x2x2xf32>, %sizes: tensor<3xi64>) {
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{node (Resize): input 'sizes' has 3 values, expected 2}}
  %0 = "onnx.Resize"(%x, %none, %none, %sizes) {mode = "nearest", axes = [2, 3]} : (tensor<1x1x2x2xf32>, none, none, tensor<3xi64>) -> none
  return
}

// -----

func.func @einsum_rank_mismatch(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{term 'ijk' has 3 letters, but input 0 has rank 2}}
  %0 = "onnx.Einsum"(%a) {equation = "ijk->i"} : (tensor<2x3xf32>) -> none
  return
}

// -----

func.func @einsum_size_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{label 'j' has sizes 3 and 4}}
  %0 = "onnx.Einsum"(%a, %b) {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> none
  return
}

// -----

func.func @einsum_bad_output(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{output label 'k' is in no input term}}
  %0 = "onnx.Einsum"(%a) {equation = "ij->k"} : (tensor<2x3xf32>) -> none
  return
}

// -----

func.func @einsum_term_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{equation 'ij,jk->ik' has 2 input terms, the node has 1 inputs}}
  %0 = "onnx.Einsum"(%a) {equation = "ij,jk->ik"} : (tensor<2x3xf32>) -> none
  return
}

// -----

func.func @einsum_bad_character(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{unexpected character '1' in term 'i1'}}
  %0 = "onnx.Einsum"(%a) {equation = "i1->i"} : (tensor<2x3xf32>) -> none
  return
}

// -----

func.func @dft_axis_on_components(%x: tensor<2x8x1xf32>) {
  %none = onnx.NoValue : () -> none
  %axis = onnx.Constant {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{axis 2 is out of range for input 'tensor<2x8x1xf32>' (the last dim holds the components)}}
  %0 = "onnx.DFT"(%x, %none, %axis) : (tensor<2x8x1xf32>, none, tensor<i64>) -> none
  return
}

// -----

func.func @dft_three_components(%x: tensor<2x8x3xf32>) {
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{input must be [..., signal, 1 or 2], got 'tensor<2x8x3xf32>'}}
  %0 = "onnx.DFT"(%x, %none, %none) : (tensor<2x8x3xf32>, none, none) -> none
  return
}

// -----

func.func @stft_window_length(%x: tensor<1x32x1xf32>, %w: tensor<8xf32>) {
  %step = onnx.Constant {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %len = onnx.Constant {value = dense<16> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{frame_length 16 differs from the window's length 8}}
  %0 = "onnx.STFT"(%x, %step, %w, %len) : (tensor<1x32x1xf32>, tensor<i64>, tensor<8xf32>, tensor<i64>) -> none
  return
}

// -----

func.func @stft_runtime_step(%x: tensor<1x32x1xf32>, %w: tensor<8xf32>, %step: tensor<i64>) {
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{output shape depends on a non-constant input 'frame_step'}}
  %0 = "onnx.STFT"(%x, %step, %w, %none) : (tensor<1x32x1xf32>, tensor<i64>, tensor<8xf32>, none) -> none
  return
}

// -----

func.func @affine_grid_theta(%theta: tensor<2x2x4xf32>) {
  %size = onnx.Constant {value = dense<[2, 1, 4, 5]> : tensor<4xi64>} : () -> tensor<4xi64>
  // expected-error @+1 {{theta 'tensor<2x2x4xf32>' does not fit size [2, 1, 4, 5]}}
  %0 = "onnx.AffineGrid"(%theta, %size) : (tensor<2x2x4xf32>, tensor<4xi64>) -> none
  return
}

// -----

func.func @reverse_sequence_axes(%x: tensor<3x4x2xf32>, %lens: tensor<3xi64>) {
  // expected-error @+1 {{batch_axis and time_axis must be 0 and 1 (in either order) of an input of rank >= 2, got 0 and 0}}
  %0 = "onnx.ReverseSequence"(%x, %lens) {batch_axis = 0 : i64, time_axis = 0 : i64} : (tensor<3x4x2xf32>, tensor<3xi64>) -> none
  return
}

// -----

func.func @reverse_sequence_lens(%x: tensor<3x4x2xf32>, %lens: tensor<3xi64>) {
  // expected-error @+1 {{sequence_lens must be int64 [4], got 'tensor<3xi64>'}}
  %0 = "onnx.ReverseSequence"(%x, %lens) : (tensor<3x4x2xf32>, tensor<3xi64>) -> none
  return
}

// -----

func.func @max_unpool_indices(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi32>) {
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{X must have rank >= 3 and I be int64 of its shape, got 'tensor<1x2x2x2xf32>' and 'tensor<1x2x2x2xi32>'}}
  %0 = "onnx.MaxUnpool"(%x, %i, %none) {kernel_shape = [2, 2]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>, none) -> none
  return
}

// -----

// GatherND takes symbolic (or run) dims in the indices' leading dims only.
func.func @gather_nd_symbolic_depth(%x: tensor<3x4xf32>, %i: tensor<5x?xi64>) {
  // expected-error @+1 {{node (GatherND): data 'tensor<3x4xf32>' and indices 'tensor<5x?xi64>': GatherND takes symbolic dimensions in the indices' leading dims only (not batch_dims' nor the last): fix them with --shape or --specialize}}
  %0 = "onnx.GatherND"(%x, %i) {batch_dims = 0 : i64} : (tensor<3x4xf32>, tensor<5x?xi64>) -> none
  return
}

// -----

func.func @nonzero_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{node (NonZero): a scalar input is not supported (the ONNX spec gives [0, N] indices, onnxruntime [1, N])}}
  %0 = "onnx.NonZero"(%x) : (tensor<f32>) -> none
  return
}

// -----

// A symbolic batch taken whole leaves a -1 of static dims: one that does not divide is
// an error at compile time, whatever the batch (computed shape and constant shape).
func.func @reshape_symbolic_minus_one_does_not_divide(%x: tensor<?x4x5xf32>) {
  %s = "onnx.Shape"(%x) : (tensor<?x4x5xf32>) -> none
  %zero = onnx.Constant {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %n = "onnx.Gather"(%s, %zero) {axis = 0 : i64} : (none, tensor<i64>) -> none
  %axes = onnx.Constant {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %n1 = "onnx.Unsqueeze"(%n, %axes) : (none, tensor<1xi64>) -> none
  %c = onnx.Constant {value = dense<[7, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %shape = "onnx.Concat"(%n1, %c) {axis = 0 : i64} : (none, tensor<2xi64>) -> none
  // expected-error @+1 {{cannot reshape 'tensor<?x4x5xf32>' to [?, 7, -1]: the -1 would be 20 elements over 7, which do not divide}}
  %0 = "onnx.Reshape"(%x, %shape) : (tensor<?x4x5xf32>, none) -> none
  return
}

// -----

func.func @reshape_copied_symbol_minus_one_does_not_divide(%x: tensor<?x4x5xf32>) {
  %c = onnx.Constant {value = dense<[0, 7, -1]> : tensor<3xi64>} : () -> tensor<3xi64>
  // expected-error @+1 {{cannot reshape 'tensor<?x4x5xf32>' to [0, 7, -1]: the -1 would be 20 elements over 7, which do not divide}}
  %0 = "onnx.Reshape"(%x, %c) : (tensor<?x4x5xf32>, tensor<3xi64>) -> none
  return
}

// -----

// A flatten whose -1 stays symbolic (%y's batch need not be %x's) leaves a symbolic K:
// the Gemm's error says so (not the `?` sentinel's value).
func.func @gemm_symbolic_k(%x: tensor<?x8x16xf32>, %y: tensor<?x8x16xf32>, %w: tensor<10x128xf32>) {
  %s = "onnx.Shape"(%x) : (tensor<?x8x16xf32>) -> none
  %zero = onnx.Constant {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %n = "onnx.Gather"(%s, %zero) {axis = 0 : i64} : (none, tensor<i64>) -> none
  %axes = onnx.Constant {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %n1 = "onnx.Unsqueeze"(%n, %axes) : (none, tensor<1xi64>) -> none
  %m1 = onnx.Constant {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %shape = "onnx.Concat"(%n1, %m1) {axis = 0 : i64} : (none, tensor<1xi64>) -> none
  %flat = "onnx.Reshape"(%y, %shape) : (tensor<?x8x16xf32>, none) -> none
  %none = onnx.NoValue : () -> none
  // expected-error @+1 {{inner dimensions differ: A has K = ? (symbolic), B has K = 128 (transA = 0, transB = 1); the product's K must be static here (fix the model input's dims with --shape)}}
  %0 = "onnx.Gemm"(%flat, %w, %none) {transB = 1 : i64} : (none, tensor<10x128xf32>, none) -> none
  return
}
