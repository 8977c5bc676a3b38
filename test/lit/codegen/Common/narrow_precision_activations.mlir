// The GPU targets' scope of kiln-narrow-precision (--precision fp16 on vulkan,
// cuda, hip): every product becomes an f16 x f16 contraction with an f32
// accumulator, computed B operands and depthwise convolutions included.
// RUN: kiln-opt %s --split-input-file --kiln-narrow-precision="precision=fp16 activations=true" | FileCheck %s
// bf16 on a GPU target: nothing is narrowed, the first product names its node.
// RUN: not kiln-opt %s --split-input-file --kiln-narrow-precision="precision=bf16 activations=true refuse-on=vulkan" 2>&1 | FileCheck %s --check-prefix=REFUSE

// Attention's products: both operands computed, both converted; the
// accumulator and the result stay f32.
// CHECK-LABEL: func.func @attention
// CHECK: %[[Q:.*]] = linalg.generic
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[K:.*]] = linalg.generic
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: linalg.batch_matmul ins(%[[Q]], %[[K]] : tensor<2x4x8xf16>, tensor<2x8x4xf16>) outs(%{{.*}} : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
// REFUSE: error: {{.*}}node 'scores': --precision bf16 is not supported on the vulkan device (its products compute on fp32 or fp16 operands only: use --precision fp16); 1 more product would be narrowed
func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x8x4xf32>, %acc: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %r = linalg.batch_matmul ins(%q, %k : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%acc : tensor<2x4x4xf32>) -> tensor<2x4x4xf32> loc("scores")
  %w = arith.constant dense<0.5> : tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %a = tensor.extract_slice %r[0, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<2x4x4xf32> to tensor<4x4xf32>
  %s = linalg.matmul ins(%a, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = tensor.insert_slice %s into %r[0, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<4x4xf32> into tensor<2x4x4xf32>
  return %t : tensor<2x4x4xf32>
}

// -----

// A depthwise convolution: its filter stored f16 (converted at compile
// time), its input converted; strides and dilations kept.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: tensor<3x3x4xf32>
// CHECK: %[[W:.*]] = arith.constant dense<2.500000e-01> : tensor<3x3x4xf16>
// CHECK: %[[X:.*]] = linalg.generic
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[X]], %[[W]] : tensor<1x9x9x4xf16>, tensor<3x3x4xf16>) outs(%{{.*}} : tensor<1x4x4x4xf32>)
// CHECK-NOT: tensor<3x3x4xf32>
func.func @depthwise(%x: tensor<1x9x9x4xf32>, %acc: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %w = arith.constant dense<0.25> : tensor<3x3x4xf32>
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
         ins(%x, %w : tensor<1x9x9x4xf32>, tensor<3x3x4xf32>) outs(%acc : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}

// -----

// Dynamic rows (symbolic dims): the converted operand takes its sizes from
// the f32 one.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[D:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x8xf32>
// CHECK: tensor.empty(%[[D]]) : tensor<?x8xf16>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x8xf16>, tensor<8x4xf16>) outs(%{{.*}} : tensor<?x4xf32>)
func.func @dynamic(%a: tensor<?x8xf32>, %b: tensor<8x4xf32>, %acc: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x8xf32>, tensor<8x4xf32>) outs(%acc : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// Ops that are no products, and f16 products already, are left alone.
// CHECK-LABEL: func.func @others
// CHECK-NOT: truncf
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<8x4xf16>) outs(%{{.*}} : tensor<4x4xf32>)
func.func @others(%a: tensor<4x8xf16>, %b: tensor<8x4xf16>, %acc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf16>, tensor<8x4xf16>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// A constant pad read only by the product: the conversion moves before it
// (pad(truncf(x))), so it can fuse into x's producer and the pad copies f16;
// the f32 pad is gone. A pad with another reader stays, converted after.
// CHECK-LABEL: func.func @padded
// CHECK: %[[X:.*]] = linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<1x4x4x2xf32>) outs(%{{.*}} : tensor<1x4x4x2xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[Z:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: tensor.yield %[[Z]] : f16
// CHECK: } : tensor<1x4x4x2xf16> to tensor<1x6x6x2xf16>
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[P]], %{{.*}} : tensor<1x6x6x2xf16>, tensor<3x3x2x3xf16>)
// CHECK-NOT: tensor<1x6x6x2xf32>
// CHECK-LABEL: func.func @padded_twice
// CHECK: %[[P2:.*]] = tensor.pad
// CHECK: } : tensor<1x4x4x2xf32> to tensor<1x6x6x2xf32>
// CHECK: linalg.generic {{.*}} ins(%[[P2]] : tensor<1x6x6x2xf32>) outs(%{{.*}} : tensor<1x6x6x2xf16>)
func.func @padded(%x: tensor<1x4x4x2xf32>, %acc: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x2xf32> to tensor<1x6x6x2xf32>
  %w = arith.constant dense<0.5> : tensor<3x3x2x3xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%p, %w : tensor<1x6x6x2xf32>, tensor<3x3x2x3xf32>) outs(%acc : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  return %r : tensor<1x4x4x3xf32>
}
func.func @padded_twice(%x: tensor<1x4x4x2xf32>, %acc: tensor<1x4x4x3xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x6x6x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x2xf32> to tensor<1x6x6x2xf32>
  %w = arith.constant dense<0.5> : tensor<3x3x2x3xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%p, %w : tensor<1x6x6x2xf32>, tensor<3x3x2x3xf32>) outs(%acc : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  return %r, %p : tensor<1x4x4x3xf32>, tensor<1x6x6x2xf32>
}

// -----

// Gather's embedding table (1024 elements or more, read only by
// tensor.extract): stored f16, each read widened back to f32. A smaller
// table, and one something else reads too, stay f32.
// CHECK-LABEL: func.func @embedding
// CHECK-DAG: %[[T:.*]] = arith.constant dense<2.500000e-01> : tensor<512x4xf16>
// CHECK-DAG: arith.constant dense<5.000000e-01> : tensor<8x4xf32>
// CHECK-DAG: arith.constant dense<7.500000e-01> : tensor<512x4xf32>
// CHECK-NOT: dense<2.500000e-01> : tensor<512x4xf32>
// CHECK: %[[E:.*]] = tensor.extract %[[T]][%{{.*}}, %{{.*}}] : tensor<512x4xf16>
// CHECK: %[[W:.*]] = arith.extf %[[E]] : f16 to f32
// CHECK: arith.addf %[[W]]
func.func @embedding(%ids: tensor<3xindex>) -> (tensor<3x4xf32>, tensor<512x4xf32>) {
  %table = arith.constant dense<0.25> : tensor<512x4xf32>
  %small = arith.constant dense<0.5> : tensor<8x4xf32>
  %shared = arith.constant dense<0.75> : tensor<512x4xf32>
  %e = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<3xindex>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%i: index, %out: f32):
    %j = linalg.index 1 : index
    %a = tensor.extract %table[%i, %j] : tensor<512x4xf32>
    %b = tensor.extract %small[%j, %j] : tensor<8x4xf32>
    %c = tensor.extract %shared[%i, %j] : tensor<512x4xf32>
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<3x4xf32>
  return %r, %shared : tensor<3x4xf32>, tensor<512x4xf32>
}
