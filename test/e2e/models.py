#!/usr/bin/env python3
"""Small ONNX graphs for kiln's end-to-end tests: one or more per operator, plus models
that must be rejected.

Every graph is built with onnx's helper API from seeded numpy data (the seed comes from
the case's name, so a case does not change when others are added), so the same files come
out on every machine.

  python test/e2e/models.py --list            # names of the cases
  python test/e2e/models.py --out DIR [NAME..] # write DIR/<case>/model.onnx + inputs
  python test/e2e/models.py --check           # check every case with onnx + onnxruntime
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import sys
import zlib
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DEFAULT_OPSET = 17
IR_VERSION = {6: 3, 11: 6, 13: 7, 17: 8, 18: 8, 20: 9}
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


@dataclasses.dataclass
class Case:
    name: str
    model: onnx.ModelProto
    inputs: dict[str, np.ndarray]
    shape_args: tuple[str, ...] = ()  # `--shape NAME=d0,d1,...` values for kiln compile
    files: dict[str, bytes] = dataclasses.field(default_factory=dict)  # beside model.onnx
    rtol: float = 1e-3
    atol: float = 1e-4
    # The devices the case is for (kiln's device names, "cpu", "vulkan", "cuda", "hip");
    # empty: every one. Tests and scripts/gpu_bundle.py skip the others (for_device).
    devices: tuple[str, ...] = ()

    def for_device(self, device: str) -> bool:
        """Whether the case is meant for `device` ("cuda:sm_90" counts as "cuda")."""
        return not self.devices or device.split(":")[0] in self.devices

    extra_args: tuple[str, ...] = ()  # more `kiln compile` flags (--precision tf32)
    # Floating-point operations of one run (2*M*N*K of a product): non-zero makes the case
    # a benchmark that scripts/gpu_bundle.py marks for timing; gpu_check.py reports TFLOP/s.
    bench_flops: int = 0
    # More keys of its manifest entry: which PyTorch reference gpu_check.py times beside it
    # ({"arch": "matmul4096", "batch": 1, "precision": "fp16"}: cuBLAS, gpu_torch_reference.py).
    bench_info: dict = dataclasses.field(default_factory=dict)

    @property
    def compile_args(self) -> tuple[str, ...]:
        args: list[str] = []
        for s in self.shape_args:
            args += ["--shape", s]
        return tuple(args) + self.extra_args

    def save(self, folder: Path) -> Path:
        """Writes model.onnx and its side files into folder; returns the model's path."""
        folder.mkdir(parents=True, exist_ok=True)
        for rel, data in self.files.items():
            (folder / rel).write_bytes(data)
        path = folder / "model.onnx"
        path.write_bytes(self.model.SerializeToString())
        return path


def _seed(name: str) -> int:
    return zlib.crc32(name.encode())


class G:
    """Builds one graph: inputs (with seeded data), initializers, nodes, outputs."""

    def __init__(self, name: str, opset: int = DEFAULT_OPSET):
        self.name = name
        self.opset = opset
        self.rng = np.random.default_rng(_seed(name))
        self.nodes: list[onnx.NodeProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.feeds: dict[str, np.ndarray] = {}
        self._count = 0

    def rand(self, shape, dtype=np.float32, low=-1.0, high=1.0) -> np.ndarray:
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            return self.rng.integers(0, 2, size=shape).astype(np.bool_)
        if np.issubdtype(dtype, np.integer):
            return self.rng.integers(int(low), int(high), size=shape).astype(dtype)
        return self.rng.uniform(low, high, size=shape).astype(dtype)

    def input(self, name, shape, dtype=np.float32, low=-1.0, high=1.0, data=None,
              dims=None) -> str:
        """A graph input fed with `data` (or seeded random data of `shape`); `dims`
        overrides the declared shape (e.g. a symbolic batch dim)."""
        arr = np.asarray(data, dtype=dtype) if data is not None else self.rand(shape, dtype, low, high)
        self.feeds[name] = arr
        declared = list(arr.shape) if dims is None else dims
        self.inputs.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(arr.dtype), declared))
        return name

    def init(self, name, value, dtype=np.float32, raw=True) -> str:
        """An initializer from an array (raw_data), or typed fields when raw=False."""
        arr = np.asarray(value, dtype=dtype)
        if raw:
            tensor = numpy_helper.from_array(arr, name)
        else:
            tensor = helper.make_tensor(name, helper.np_dtype_to_tensor_dtype(arr.dtype),
                                        arr.shape, arr.flatten().tolist())
        self.inits.append(tensor)
        return name

    def weight(self, name, shape, low=-1.0, high=1.0, dtype=np.float32, raw=True) -> str:
        return self.init(name, self.rand(shape, dtype, low, high), dtype, raw)

    def node(self, op, inputs, outputs=1, name=None, domain="", **attrs):
        """Adds a node; `outputs` is a count (fresh names) or a list of names. Returns the
        output name, or the list of names when there are several."""
        self._count += 1
        if isinstance(outputs, int):
            outputs = [f"{op.lower()}{self._count}_out{i}" if outputs > 1 else f"{op.lower()}{self._count}"
                       for i in range(outputs)]
        self.nodes.append(helper.make_node(op, list(inputs), list(outputs),
                                           name=name or f"{op}_{self._count}", domain=domain,
                                           **attrs))
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def output(self, name, dtype=np.float32, shape=None) -> None:
        self.outputs.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape))

    def model(self) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        model = helper.make_model(graph, producer_name="kiln-e2e",
                                  opset_imports=[helper.make_opsetid("", self.opset)],
                                  ir_version=IR_VERSION[self.opset])
        # Declare the outputs' shapes as exporters do, from onnx's own shape inference.
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
        shapes = {v.name: v.type.tensor_type.shape
                  for v in list(inferred.graph.output) + list(inferred.graph.value_info)}
        for out in model.graph.output:
            tt = out.type.tensor_type
            if not tt.HasField("shape") and out.name in shapes:
                tt.shape.CopyFrom(shapes[out.name])
        return model

    def case(self, **kw) -> Case:
        return Case(self.name, self.model(), dict(self.feeds), **kw)


#===----------------------------------------------------------------------===//
# Cases, one function per operator family. Each returns a list of Case.
#===----------------------------------------------------------------------===//

CASE_FUNCS: list[Callable[[], list[Case]]] = []


def cases(fn):
    CASE_FUNCS.append(fn)
    return fn


def _unary(name, op, shape, low=-1.0, high=1.0, opset=DEFAULT_OPSET, **attrs) -> Case:
    g = G(name, opset)
    y = g.node(op, [g.input("x", shape, low=low, high=high)], **attrs)
    g.output(y)
    return g.case()


@cases
def conv_cases():
    def conv(name, x_shape, w_shape, bias=True, **attrs):
        g = G(name)
        ins = [g.input("x", x_shape), g.weight("w", w_shape)]
        if bias:
            ins.append(g.weight("b", [w_shape[0]]))
        g.output(g.node("Conv", ins, **attrs))
        return g.case()

    def silu_conv(name, x_shape, w_shape, **attrs):
        g = G(name)
        ins = [g.input("x", x_shape, low=-40.0, high=40.0), g.weight("w", w_shape),
               g.weight("b", [w_shape[0]])]
        y = g.node("Conv", ins, **attrs)
        g.output(g.node("Mul", [y, g.node("Sigmoid", [y])]))
        return g.case()

    return [
        conv("conv_nobias", [1, 3, 8, 8], [4, 3, 3, 3], bias=False),
        conv("conv_bias_strides_pads", [1, 3, 9, 9], [8, 3, 3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        conv("conv_asym_pads_rect_kernel", [1, 2, 7, 6], [3, 2, 3, 2], pads=[0, 1, 2, 1],
             strides=[1, 2]),
        conv("conv_dilations", [1, 2, 10, 10], [4, 2, 3, 3], dilations=[2, 2], pads=[2, 2, 2, 2]),
        conv("conv_group", [1, 4, 7, 7], [6, 2, 3, 3], group=2, pads=[1, 1, 1, 1]),
        conv("conv_depthwise", [1, 8, 10, 10], [8, 1, 3, 3], group=8, pads=[1, 1, 1, 1],
             strides=[2, 2]),
        conv("conv_pointwise_batch2", [2, 16, 5, 5], [8, 16, 1, 1]),
        conv("conv_auto_pad_same_upper", [1, 3, 7, 7], [4, 3, 3, 3], auto_pad="SAME_UPPER",
             strides=[2, 2]),
        # EfficientNet's MBConv: depthwise 3x3 / 5x5 (stride 1 and 2) and the 1x1
        # expansion, each with SiLU (x * Sigmoid(x)) fused as the kernel's epilogue
        # (kiln-approximate-math's sigmoid); 40 and 24 channels leave a last vector
        # of 8 lanes at 16 (and none at 8); inputs up to +-40 take the sum past the
        # sigmoid's clamp at +-88 both ways.
        silu_conv("conv_depthwise_silu", [1, 40, 11, 11], [40, 1, 3, 3], group=40,
                  pads=[1, 1, 1, 1]),
        silu_conv("conv_depthwise_silu_stride2_5x5", [1, 24, 13, 13], [24, 1, 5, 5],
                  group=24, pads=[2, 2, 2, 2], strides=[2, 2]),
        silu_conv("conv_pointwise_silu", [1, 16, 9, 9], [40, 16, 1, 1]),
    ]


@cases
def grouped_conv_cases():
    # Grouped convs (1 < group, not depthwise) run the grouped micro-kernel
    # (codegen/CPU/Kernels/GroupedConv.cpp): the shuffle form (2 per group; 4
    # at 16 lanes), column panels spanning several groups (4 and 8 channels
    # per group: ResNeXt, RegNet-Y), panels inside one group (16 and 32), channel counts that fill no vector, strides, pads,
    # dilations, bias, fused Relu and residual Add; a filter that is an input
    # keeps the generic loops.
    def conv(name, x_shape, w_shape, group, bias=True, relu=False, residual=False,
             weight_input=False, **attrs):
        g = G(name)
        x = g.input("x", x_shape)
        w = g.input("w", w_shape) if weight_input else g.weight("w", w_shape, -0.5, 0.5)
        ins = [x, w]
        if bias:
            ins.append(g.weight("b", [w_shape[0]]))
        y = g.node("Conv", ins, group=group, **attrs)
        if residual:
            y = g.node("Add", [y, x])
        if relu:
            y = g.node("Relu", [y])
        g.output(y)
        return g.case()

    return [
        # 4 channels per group (ResNeXt-50's first stage), Relu fused.
        conv("grouped_conv_cpg4_relu", [1, 32, 14, 14], [32, 4, 3, 3], 8, relu=True,
             pads=[1, 1, 1, 1]),
        # 2 per group (the shuffle form at 8 and 16 lanes), 9 groups: a last
        # vector of 2 of 8 / 16 lanes.
        conv("grouped_conv_cpg2_shuffle_tail", [1, 18, 8, 8], [18, 2, 3, 3], 9, relu=True,
             pads=[1, 1, 1, 1]),
        # 8 per group, 13 groups (104 channels: RegNet-Y-400MF), stride 2.
        conv("grouped_conv_cpg8_stride2", [1, 104, 15, 15], [104, 8, 3, 3], 13, relu=True,
             strides=[2, 2], pads=[1, 1, 1, 1]),
        # 16 per group, dilation 2, residual Add.
        conv("grouped_conv_cpg16_dilated_residual", [1, 48, 11, 11], [48, 16, 3, 3], 3,
             residual=True, dilations=[2, 2], pads=[2, 2, 2, 2]),
        # 32 per group, stride 2 without padding, no bias, batch 2.
        conv("grouped_conv_cpg32_batch2", [2, 64, 9, 9], [64, 32, 3, 3], 2, bias=False,
             strides=[2, 2]),
        # 1 channel per group with a multiplier of 2 (the depthwise path).
        conv("grouped_conv_cpg1_multiplier", [1, 6, 8, 8], [12, 1, 3, 3], 6, pads=[1, 1, 1, 1]),
        # Odd counts: 3 groups of 3 inputs and 5 outputs, rect kernel, asymmetric pads.
        conv("grouped_conv_odd_rect", [1, 9, 10, 9], [15, 3, 3, 2], 3,
             pads=[0, 1, 2, 1], strides=[1, 2]),
        # More outputs than inputs per group (4 -> 8), 1x1 kernel.
        conv("grouped_conv_pointwise_expand", [1, 16, 7, 7], [32, 4, 1, 1], 4, relu=True),
        # One output per group (2 inputs each), 5x5 pads.
        conv("grouped_conv_one_output_per_group", [1, 8, 9, 9], [4, 2, 5, 5], 4,
             pads=[2, 2, 2, 2]),
        # 55 groups of 8 (RegNet-Y-400MF's last stage: 440 channels, 7x7).
        conv("grouped_conv_cpg8_wide", [1, 440, 7, 7], [440, 8, 3, 3], 55, relu=True,
             pads=[1, 1, 1, 1]),
        # 1-D grouped conv.
        conv("grouped_conv_1d", [1, 12, 20], [12, 4, 3], 3, pads=[1, 1]),
        # A filter that is an input: the generic loops.
        conv("grouped_conv_weight_input", [1, 8, 6, 6], [8, 4, 3, 3], 2, weight_input=True,
             pads=[1, 1, 1, 1]),
    ]


@cases
def winograd_conv_cases():
    # 3x3 stride-1 convs with constant weights and enough tiles and channels run as
    # Winograd F(2x2, 3x3) (kiln-winograd-convs): even and odd sizes, channel counts
    # that are not multiples of 8, epilogues fused into the output transform.
    out = []

    g = G("winograd_conv_bias_relu")
    c = g.node("Conv", [g.input("x", [1, 32, 16, 16]), g.weight("w", [40, 32, 3, 3]),
                        g.weight("b", [40])], pads=[1, 1, 1, 1])
    g.output(g.node("Relu", [c]))
    out.append(g.case())

    # Odd size (the last tile reaches past the pad) with a residual add.
    g = G("winograd_conv_odd_residual")
    x = g.input("x", [1, 36, 15, 15])
    c = g.node("Conv", [x, g.weight("w", [36, 36, 3, 3]), g.weight("b", [36])],
               pads=[1, 1, 1, 1])
    g.output(g.node("Relu", [g.node("Add", [c, x])]))
    out.append(g.case())

    # Two images, no padding, no bias.
    g = G("winograd_conv_batch2_valid")
    g.output(g.node("Conv", [g.input("x", [2, 36, 13, 13]), g.weight("w", [44, 36, 3, 3])]))
    out.append(g.case())

    # A chain: the second conv pads the first one's output (odd, 9x9).
    g = G("winograd_conv_chain")
    c1 = g.node("Conv", [g.input("x", [1, 24, 9, 9]), g.weight("w1", [48, 24, 3, 3], -0.3, 0.3),
                         g.weight("b1", [48])], pads=[1, 1, 1, 1])
    c2 = g.node("Conv", [g.node("Relu", [c1]), g.weight("w2", [24, 48, 3, 3], -0.3, 0.3),
                         g.weight("b2", [24])], pads=[1, 1, 1, 1])
    g.output(g.node("Relu", [c2]))
    out.append(g.case())
    return out


@cases
def gemm_cases():
    out = []

    g = G("gemm_bias_vector")
    g.output(g.node("Gemm", [g.input("a", [4, 5]), g.weight("b", [5, 6]), g.weight("c", [6])]))
    out.append(g.case())

    g = G("gemm_transB_alpha_beta")
    g.output(g.node("Gemm", [g.input("a", [3, 8]), g.weight("b", [7, 8]), g.weight("c", [1, 7])],
                    transB=1, alpha=0.5, beta=2.0))
    out.append(g.case())

    g = G("gemm_transA_scalar_c")
    g.output(g.node("Gemm", [g.input("a", [6, 4]), g.weight("b", [6, 5]),
                             g.init("c", 0.25)], transA=1))
    out.append(g.case())

    g = G("gemm_no_c")
    g.output(g.node("Gemm", [g.input("a", [2, 3]), g.weight("b", [3, 4])]))
    out.append(g.case())

    g = G("gemm_c_column")
    g.output(g.node("Gemm", [g.input("a", [3, 5]), g.weight("b", [5, 4]), g.weight("c", [3, 1])],
                    beta=0.5))
    out.append(g.case())

    g = G("gemm_runtime_operands_transAB")
    g.output(g.node("Gemm", [g.input("a", [5, 3]), g.input("b", [4, 5]), g.input("c", [3, 4])],
                    transA=1, transB=1, alpha=1.5))
    out.append(g.case())
    return out


@cases
def matmul_cases():
    out = []
    g = G("matmul_2d")
    g.output(g.node("MatMul", [g.input("a", [8, 16]), g.weight("w", [16, 4])]))
    out.append(g.case())

    g = G("matmul_batched")
    g.output(g.node("MatMul", [g.input("a", [2, 3, 4, 5]), g.input("b", [2, 3, 5, 6])]))
    out.append(g.case())

    g = G("matmul_broadcast")
    g.output(g.node("MatMul", [g.input("a", [2, 1, 4, 5]), g.input("b", [3, 5, 6])]))
    out.append(g.case())

    g = G("matmul_linear_3d")
    g.output(g.node("MatMul", [g.input("a", [2, 7, 16]), g.weight("w", [16, 8])]))
    out.append(g.case())
    return out


@cases
def einsum_cases():
    # MatMul-shaped equations become MatMul (kiln-decompose); the rest one linalg.generic.
    def einsum(name, equation, *shapes, weight=None):
        g = G(name)
        ins = [g.input(f"x{i}", s) for i, s in enumerate(shapes)]
        if weight is not None:
            ins.append(g.weight("w", weight))
        g.output(g.node("Einsum", ins, equation=equation))
        return g.case()

    return [
        einsum("einsum_attention_scores", "bhqd,bhkd->bhqk", [2, 3, 5, 8], [2, 3, 7, 8]),
        einsum("einsum_attention_values", "bhqk,bhkd->bqhd", [2, 3, 5, 7], [2, 3, 7, 8]),
        einsum("einsum_linear_weight", "bsi,oi->bso", [2, 5, 16], weight=[12, 16]),
        einsum("einsum_broadcast_batch", "...ij,...jk->...ik", [3, 4, 5], [1, 5, 6]),
        einsum("einsum_two_contracted_and_summed", "abcd,cbde->ea", [3, 4, 5, 6], [5, 4, 6, 2]),
        einsum("einsum_implicit", "ij,jk", [4, 5], [5, 3]),
        einsum("einsum_trace", "ii", [6, 6]),
        einsum("einsum_diagonal_batch", "bii->bi", [2, 5, 5]),
        einsum("einsum_outer", "i,j->ij", [4], [6]),
        einsum("einsum_chain_three", "ij,jk,kl->il", [3, 4], [4, 5], [5, 2]),
        einsum("einsum_bilinear", "bn,anm,bm->ba", [2, 4], [3, 4, 5], [2, 5]),
        einsum("einsum_transpose_sum", "ijk->kj", [2, 3, 4]),
    ]


@cases
def gpu_fast_path_cases():
    """Sizes that are not multiples of the GPU kernels' tiles (kiln-gpu-select-lowering-config:
    64x64 / 32x64 matmul tiles with K steps of 16, row reductions over 32-256 threads), so
    every remainder guard runs; on the CPU they are ordinary cases."""
    out = []
    g = G("gpu_matmul_1x7x13_13x29")
    g.output(g.node("MatMul", [g.input("a", [1, 7, 13]), g.weight("w", [13, 29])]))
    out.append(g.case())

    g = G("gpu_matmul_127x65_65x33")
    g.output(g.node("MatMul", [g.input("a", [127, 65]), g.input("b", [65, 33])]))
    out.append(g.case())

    g = G("gpu_batch_matmul_3x37x19_19x45")
    g.output(g.node("MatMul", [g.input("a", [3, 37, 19]), g.input("b", [3, 19, 45])]))
    out.append(g.case())

    # Gemm with bias and a Relu consumer: the bias/Relu epilogue after the tiled product.
    g = G("gpu_gemm_bias_relu_70x50x90")
    y = g.node("Gemm", [g.input("a", [70, 50]), g.weight("w", [90, 50]), g.weight("c", [90])],
               transB=1)
    g.output(g.node("Relu", [y]))
    out.append(g.case())

    out.append(_unary("gpu_softmax_1000", "Softmax", [3, 1000], low=-5.0, high=5.0, axis=-1))

    g = G("gpu_layernorm_3x7x300")
    g.output(g.node("LayerNormalization", [g.input("x", [3, 7, 300], low=-2.0, high=3.0),
                                           g.weight("scale", [300]), g.weight("bias", [300])],
                    axis=-1, epsilon=1e-5))
    out.append(g.case())

    g = G("gpu_reduce_mean_5x333")
    g.output(g.node("ReduceMean", [g.input("x", [5, 333])], axes=[1], keepdims=1))
    out.append(g.case())

    g = G("gpu_reduce_max_4x100")
    g.output(g.node("ReduceMax", [g.input("x", [4, 100], low=-50.0, high=50.0)], axes=[-1],
                    keepdims=0))
    out.append(g.case())

    g = G("gpu_reduce_sum_all_40x50")
    g.output(g.node("ReduceSum", [g.input("x", [40, 50])], keepdims=0))
    out.append(g.case())

    out.append(_unary("gpu_global_avgpool_1x6x9x11", "GlobalAveragePool", [1, 6, 9, 11]))
    return out


@cases
def tensor_core_cases():
    """Products the cuda target computes on tensor cores (matmul_mma, docs/gpu.md): f16
    operands with f32 accumulation (m16n8k16), and f32 ones under `--precision tf32`
    (m16n8k8, cuda only). Sizes that are not multiples of the 64x64 (32x64) tiles, of the
    K steps (32 f16, 16 tf32) or of the 16x8 instructions, so every clamp, zero fill and
    guard runs. On the CPU the f16 cases are ordinary f16 models.

    Tolerances: f16 outputs against onnxruntime running the same f16 model, rtol 1e-2 atol
    1e-2 as test_precision.py's f16 models (every output rounded to f16, relative step
    4.9e-4; the accumulation orders differ). tf32 against onnxruntime's f32: tf32 keeps 10
    of f32's 23 mantissa bits (cvt.rna: relative error <= 2^-11 = 4.9e-4 per operand,
    ~1e-3 per product), and a sum of K products of inputs in [-1, 1] is off by about
    sqrt(K) * 1e-3 / 3 absolute: rtol 1e-2, atol 1e-2 hold to K = 256 with margin."""
    out = []
    f16 = np.float16
    tol16 = dict(rtol=1e-2, atol=1e-2, devices=("cpu", "cuda"))

    def matmul(name, a_shape, b_shape, b_weight=False):
        g = G(name)
        b = g.weight("w", b_shape, dtype=f16) if b_weight else g.input("b", b_shape, f16)
        g.output(g.node("MatMul", [g.input("a", a_shape, f16), b]), f16)
        return g.case(**tol16)

    out.append(matmul("mma_f16_matmul_1x7x13_13x29", [1, 7, 13], [13, 29], b_weight=True))
    out.append(matmul("mma_f16_matmul_127x65_65x33", [127, 65], [65, 33]))
    out.append(matmul("mma_f16_batch_matmul_3x37x19_19x45", [3, 37, 19], [3, 19, 45]))
    out.append(matmul("mma_f16_matmul_256x256x256", [256, 256], [256, 256]))

    # Gemm (transB) with bias and a Relu consumer: the bias/Relu/f16 epilogue fused.
    g = G("mma_f16_gemm_bias_relu_70x50x90")
    y = g.node("Gemm", [g.input("a", [70, 50], f16), g.weight("w", [90, 50], dtype=f16),
                        g.weight("c", [90], dtype=f16)], transB=1)
    g.output(g.node("Relu", [y]), f16)
    out.append(g.case(**tol16))

    # --precision tf32 (cuda only): f32 models.
    def tf32_case(g):
        return g.case(rtol=1e-2, atol=1e-2, devices=("cuda",),
                      extra_args=("--precision", "tf32"))

    # Convs are implicit GEMMs (M = n*oh*ow, N = f, K = c*kh*kw): the same kernel, operands
    # read through the conv's maps (strides, pads) with clamps and zero fill.
    g = G("mma_f16_conv_bias_relu_1x5x9x9")
    y = g.node("Conv", [g.input("x", [1, 5, 9, 9], f16), g.weight("w", [12, 5, 3, 3], dtype=f16),
                        g.weight("b", [12], dtype=f16)], pads=[1, 1, 1, 1], strides=[2, 1])
    g.output(g.node("Relu", [y]), f16)
    out.append(g.case(**tol16))

    # The tensor-core benchmark (docs/gpu.md): a 4096x4096x4096 f16 product, f32
    # accumulation, f16 output. Its operands are tiled on the device from 64-row / 64-column
    # inputs and its output reduced to row maxima (in f32), so that a run moves 1 MiB
    # between host and device instead of 96 MiB and the bundle stays small; the Tile,
    # Cast and ReduceMax kernels add about 100 MiB of device memory traffic (~40 us on an
    # H200) to the product's 137 GFLOP. The row maxima (~60-90) check the product loosely
    # (rtol 1e-2: f16 output rounding, 0.06 at 64); the other cases check it exactly.
    n = 4096
    g = G("mma_f16_bench_matmul_4096")
    a = g.node("Tile", [g.input("x", [64, n], f16), g.init("ra", [n // 64, 1], np.int64)])
    b = g.node("Tile", [g.input("w", [n, 64], f16), g.init("rb", [1, n // 64], np.int64)])
    c = g.node("MatMul", [a, b], name="bench_matmul")
    g.output(g.node("ReduceMax", [g.node("Cast", [c], to=TensorProto.FLOAT)], axes=[1],
                    keepdims=0))
    out.append(g.case(rtol=1e-2, atol=1e-2, devices=("cuda",), bench_flops=2 * n ** 3,
                      bench_info={"arch": f"matmul{n}", "batch": 1, "precision": "fp16"}))

    g = G("mma_tf32_matmul_127x65_65x33")
    g.output(g.node("MatMul", [g.input("a", [127, 65]), g.input("b", [65, 33])]))
    out.append(tf32_case(g))

    g = G("mma_tf32_batch_matmul_3x37x19_19x45")
    g.output(g.node("MatMul", [g.input("a", [3, 37, 19]), g.input("b", [3, 19, 45])]))
    out.append(tf32_case(g))

    g = G("mma_tf32_gemm_bias_relu_70x50x90")
    y = g.node("Gemm", [g.input("a", [70, 50]), g.weight("w", [90, 50]), g.weight("c", [90])],
               transB=1)
    g.output(g.node("Relu", [y]))
    out.append(tf32_case(g))

    g = G("mma_tf32_conv_1x5x9x9")
    g.output(g.node("Conv", [g.input("x", [1, 5, 9, 9]), g.weight("w", [12, 5, 3, 3]),
                             g.weight("b", [12])], pads=[1, 1, 1, 1], strides=[2, 1]))
    out.append(tf32_case(g))

    g = G("mma_tf32_matmul_256x256x256")
    g.output(g.node("MatMul", [g.input("a", [256, 256]), g.weight("w", [256, 256])]))
    out.append(tf32_case(g))
    return out


@cases
def binary_cases():
    out = []

    def binary(name, op, a, b, b_init=False, a_kw=None, b_kw=None, dtype=np.float32, b_value=None):
        g = G(name)
        x = g.input("a", a, dtype, **(a_kw or {}))
        if b_value is not None:
            y = g.init("b", b_value, dtype)
        elif b_init:
            y = g.init("b", g.rand(b, dtype, **(b_kw or {})), dtype)
        else:
            y = g.input("b", b, dtype, **(b_kw or {}))
        g.output(g.node(op, [x, y]), dtype)
        return g.case()

    out += [
        binary("add_broadcast_vector", "Add", [2, 3, 4, 5], [5], b_init=True),
        binary("add_same_shape", "Add", [4, 5], [4, 5]),
        binary("add_int64", "Add", [2, 3], [3], dtype=np.int64,
               a_kw=dict(low=-100, high=100), b_kw=dict(low=-100, high=100)),
        binary("sub_bidirectional_broadcast", "Sub", [2, 1, 4, 1], [3, 1, 5]),
        binary("mul_scalar", "Mul", [3, 4], [], b_value=1.5),
        binary("pow_broadcast", "Pow", [3, 4], [4], a_kw=dict(low=0.5, high=2.0),
               b_value=[0.5, 1.0, 2.0, 3.0]),
        binary("pow_square", "Pow", [2, 3, 4], [], b_value=2.0),
    ]
    # Div: denominators kept away from zero.
    g = G("div_broadcast")
    den = g.rand([3, 1], low=0.5, high=2.0) * np.where(g.rand([3, 1]) < 0, -1, 1).astype(np.float32)
    g.output(g.node("Div", [g.input("a", [2, 3, 4]), g.input("b", None, data=den)]))
    out.append(g.case())
    return out


@cases
def unary_cases():
    return [
        _unary("sqrt", "Sqrt", [2, 3, 4, 5], low=0.01, high=4.0),
        _unary("erf", "Erf", [2, 3, 16], low=-3.0, high=3.0),
        _unary("relu", "Relu", [2, 3, 4, 5]),
        _unary("sigmoid", "Sigmoid", [2, 3, 10], low=-8.0, high=8.0),
        # Past exp's range both ways (kiln-approximate-math clamps at +-88), small
        # results to the node tests' 1e-7 (onnxruntime's own sigmoid is 0 below -18).
        dataclasses.replace(_unary("sigmoid_wide", "Sigmoid", [4, 1000], low=-100.0,
                                   high=100.0), atol=1e-7),
        _unary("tanh", "Tanh", [2, 3, 10], low=-4.0, high=4.0),
        gelu_decomposed(),
    ]


def gelu_decomposed() -> Case:
    """GELU as PyTorch 1.13 exports it: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    g = G("gelu_decomposed")
    x = g.input("x", [2, 8, 32], low=-4.0, high=4.0)
    d = g.node("Div", [x, g.init("sqrt2", np.float32(np.sqrt(2.0)))])
    e = g.node("Erf", [d])
    a = g.node("Add", [e, g.init("one", np.float32(1.0))])
    m = g.node("Mul", [x, a])
    g.output(g.node("Mul", [m, g.init("half", np.float32(0.5))]))
    return g.case()


@cases
def clip_cases():
    out = []
    g = G("clip_min_max")
    g.output(g.node("Clip", [g.input("x", [3, 4, 5]), g.init("lo", np.float32(-0.5)),
                             g.init("hi", np.float32(0.5))]))
    out.append(g.case())

    # ReLU6 as PyTorch exports it in MobileNetV2: bounds from Constant nodes.
    g = G("clip_relu6_constant_bounds")
    lo = g.node("Constant", [], value=numpy_helper.from_array(np.array(0.0, np.float32)))
    hi = g.node("Constant", [], value=numpy_helper.from_array(np.array(6.0, np.float32)))
    g.output(g.node("Clip", [g.input("x", [1, 4, 5, 5], low=-3.0, high=9.0), lo, hi]))
    out.append(g.case())

    g = G("clip_min_only")
    g.output(g.node("Clip", [g.input("x", [4, 6]), g.init("lo", np.float32(-0.25))]))
    out.append(g.case())

    g = G("clip_max_only")
    g.output(g.node("Clip", [g.input("x", [4, 6]), "", g.init("hi", np.float32(0.25))]))
    out.append(g.case())
    return out


@cases
def pool_cases():
    def pool(name, op, shape, low=-1.0, high=1.0, dtype=np.float32, **attrs):
        g = G(name)
        g.output(g.node(op, [g.input("x", shape, dtype=dtype, low=low, high=high)], **attrs),
                 dtype=dtype)
        return g.case()

    def max_unpool(name, shape):
        # MaxPool's values and Indices scattered back by MaxUnpool (ScatterElements).
        g = G(name)
        x = g.rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32)
        y, i = g.node("MaxPool", [g.input("x", shape, data=x)], outputs=2,
                      kernel_shape=[2, 2], strides=[2, 2])
        g.output(g.node("MaxUnpool", [y, i], kernel_shape=[2, 2], strides=[2, 2]))
        return g.case()

    def maxpool_indices(name, shape, **attrs):
        g = G(name)
        # distinct values: the index of the maximum is unique
        x = g.rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32)
        y, i = g.node("MaxPool", [g.input("x", shape, data=x)], outputs=2, **attrs)
        g.output(y)
        g.output(i, dtype=np.int64)
        return g.case()

    return [
        pool("maxpool_k3_s2", "MaxPool", [1, 3, 9, 9], kernel_shape=[3, 3], strides=[2, 2]),
        # all inputs negative: padding must not contribute zeros
        pool("maxpool_pads_negative_inputs", "MaxPool", [1, 2, 8, 8], low=-2.0, high=-1.0,
             kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        pool("maxpool_ceil_mode", "MaxPool", [1, 2, 8, 8], kernel_shape=[3, 3], strides=[2, 2],
             ceil_mode=1),
        pool("maxpool_dilations", "MaxPool", [1, 1, 9, 9], kernel_shape=[2, 2], dilations=[2, 2]),
        pool("avgpool_count_include_pad", "AveragePool", [1, 2, 6, 6], kernel_shape=[3, 3],
             pads=[1, 1, 1, 1], count_include_pad=1),
        pool("avgpool_exclude_pad", "AveragePool", [1, 2, 6, 6], kernel_shape=[3, 3],
             pads=[1, 1, 1, 1], count_include_pad=0),
        pool("avgpool_k2_s2", "AveragePool", [1, 3, 8, 8], kernel_shape=[2, 2], strides=[2, 2]),
        pool("global_avgpool", "GlobalAveragePool", [2, 8, 7, 7]),
        # 3-D, unsigned and Indices: one linalg.generic over the window
        pool("maxpool_3d_pads_strides", "MaxPool", [1, 2, 7, 6, 5], kernel_shape=[3, 2, 3],
             strides=[2, 1, 2], pads=[1, 0, 1, 1, 1, 0]),
        pool("maxpool_3d_ceil_dilations", "MaxPool", [2, 1, 8, 8, 8], kernel_shape=[2, 2, 2],
             strides=[2, 2, 2], dilations=[2, 1, 2], ceil_mode=1),
        pool("avgpool_3d_exclude_pad_ceil", "AveragePool", [1, 3, 6, 7, 5], kernel_shape=[3, 3, 2],
             strides=[2, 2, 2], pads=[1, 1, 0, 1, 0, 1], ceil_mode=1, count_include_pad=0),
        pool("avgpool_3d_include_pad", "AveragePool", [1, 2, 5, 5, 5], kernel_shape=[2, 3, 3],
             pads=[1, 1, 1, 0, 1, 1], count_include_pad=1),
        pool("maxpool_uint8", "MaxPool", [1, 2, 7, 7], low=0, high=256, dtype=np.uint8,
             kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        maxpool_indices("maxpool_indices_2d", [2, 3, 7, 6], kernel_shape=[3, 2], strides=[2, 2],
                        pads=[1, 0, 1, 1]),
        maxpool_indices("maxpool_indices_2d_column_major", [1, 2, 6, 5], kernel_shape=[2, 2],
                        strides=[2, 2], storage_order=1),
        maxpool_indices("maxpool_indices_3d", [1, 2, 4, 5, 6], kernel_shape=[2, 2, 3],
                        strides=[2, 2, 2]),
        max_unpool("max_unpool_roundtrip", [2, 3, 6, 8]),
    ]


@cases
def decomposed_op_cases():
    # LRN, MeanVarianceNormalization, Shrink (kiln-decompose), SpaceToDepth CRD.
    def one(name, op, shape, low=-1.0, high=1.0, dtype=np.float32, opset=DEFAULT_OPSET,
            **attrs):
        g = G(name, opset)
        g.output(g.node(op, [g.input("x", shape, dtype=dtype, low=low, high=high)], **attrs),
                 dtype=dtype)
        return g.case()

    def batchnorm_training():
        g = G("batchnorm_training_mode", opset=18)
        ins = [g.input("x", [3, 4, 5, 2])] + [g.weight(n, [4]) for n in ("scale", "bias", "mean")]
        ins.append(g.weight("var", [4], low=0.5, high=1.5))
        y, rm, rv = g.node("BatchNormalization", ins, outputs=3, training_mode=1, momentum=0.7)
        for o in (y, rm, rv):
            g.output(o)
        return g.case()

    return [
        one("lrn_size5", "LRN", [2, 7, 4, 3], size=5, alpha=0.02, beta=0.6, bias=1.5),
        one("lrn_size3", "LRN", [1, 6, 5, 5], size=3, beta=1.0),
        # axes written out: onnx's shape inference of the function body fails without
        one("mvn_axes_0_2_3", "MeanVarianceNormalization", [2, 3, 4, 5], axes=[0, 2, 3]),
        one("mvn_last_axis", "MeanVarianceNormalization", [4, 6], axes=[1]),
        one("shrink_soft", "Shrink", [3, 8], low=-3.0, high=3.0, lambd=1.0, bias=0.5),
        one("shrink_int", "Shrink", [16], low=-6, high=6, dtype=np.int32, lambd=1.5, bias=2.0),
        batchnorm_training(),
    ]

@cases
def signal_cases():
    # DFT (opset 17: axis an attribute, adapted to the opset-20 input) and STFT: one MatMul
    # with a constant transform matrix (kiln-decompose).
    def dft(name, shape, length=None, **attrs):
        g = G(name)
        ins = [g.input("x", shape)]
        if length is not None:
            ins.append(g.init("len", np.array(length, dtype=np.int64), dtype=np.int64))
        g.output(g.node("DFT", ins, **attrs))
        return g.case()

    out = [
        dft("dft_real_axis1", [2, 12, 3, 1], axis=1),
        dft("dft_complex_inverse_axis2", [2, 3, 10, 2], axis=2, inverse=1),
        dft("dft_onesided", [4, 16, 1], axis=1, onesided=1),
        dft("dft_length_pad", [3, 6, 2], length=9, axis=1),
        dft("dft_length_truncate", [3, 10, 1], length=7, axis=1),
    ]
    g = G("stft_window")
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(16) / 16)).astype(np.float32)
    g.output(g.node("STFT", [g.input("signal", [2, 100, 1]),
                             g.init("step", np.array(6, dtype=np.int64), dtype=np.int64),
                             g.init("window", window)]))
    out.append(g.case())
    return out

@cases
def grid_and_sequence_cases():
    # AffineGrid (a constant base grid times theta^T) and ReverseSequence (GatherElements).
    out = []
    for name, size, align in (("affine_grid_2d", [2, 3, 5, 7], 0),
                              ("affine_grid_3d_align_corners", [2, 1, 3, 4, 5], 1)):
        g = G(name, opset=20)
        k = len(size) - 2
        theta = g.input("theta", [size[0], k, k + 1])
        g.output(g.node("AffineGrid", [theta, g.init("size", np.array(size, np.int64), np.int64)],
                        align_corners=align))
        out.append(g.case())
    for name, shape, batch_axis, time_axis, lens in (
            ("reverse_sequence_time_major", [5, 4, 3], 1, 0, [5, 1, 3, 0]),
            ("reverse_sequence_batch_major", [3, 6, 2, 2], 0, 1, [2, 6, 4])):
        g = G(name)
        x = g.input("x", shape)
        seq = g.input("lens", [len(lens)], dtype=np.int64, data=lens)
        g.output(g.node("ReverseSequence", [x, seq], batch_axis=batch_axis,
                        time_axis=time_axis))
        out.append(g.case())
    return out

@cases
def col2im_cases():
    # Col2Im as a grouped ConvTranspose with a one-hot kernel (kiln-decompose).
    def col2im(name, n, c, image, block, **attrs):
        s = attrs.get("strides", [1, 1])
        d = attrs.get("dilations", [1, 1])
        p = attrs.get("pads", [0, 0, 0, 0])
        blocks = 1
        for i in range(2):
            blocks *= (image[i] + p[i] + p[2 + i] - (d[i] * (block[i] - 1) + 1)) // s[i] + 1
        g = G(name, opset=18)
        x = g.input("x", [n, c * block[0] * block[1], blocks])
        g.output(g.node("Col2Im", [x, g.init("image", np.array(image, np.int64), np.int64),
                                   g.init("block", np.array(block, np.int64), np.int64)],
                        **attrs))
        return g.case()

    return [
        col2im("col2im_overlapping", 2, 3, [6, 7], [3, 3]),
        col2im("col2im_strides_pads", 1, 2, [7, 8], [2, 3], strides=[2, 2], pads=[1, 0, 0, 2]),
        col2im("col2im_dilations", 1, 4, [9, 6], [2, 2], dilations=[3, 2], strides=[1, 2]),
    ]

@cases
def nhwc_pool_cases():
    # After a Conv, pooling runs channels-last (kiln-propagate-transposes) as a
    # micro-kernel: channels in vectors, masked when not a multiple of 8.
    def conv_pool(name, op, shape, channels, **attrs):
        g = G(name)
        x = g.input("x", shape)
        c = g.node("Conv", [x, g.weight("w", [channels, shape[1], 1, 1]),
                            g.weight("b", [channels])])
        g.output(g.node(op, [c], **attrs))
        return g.case()

    out = [
        conv_pool("nhwc_maxpool_ceil_mode", "MaxPool", [1, 3, 12, 12], 12, kernel_shape=[3, 3],
                  strides=[2, 2], ceil_mode=1),
        conv_pool("nhwc_maxpool_pads", "MaxPool", [1, 3, 9, 9], 20, kernel_shape=[3, 3],
                  strides=[2, 2], pads=[1, 1, 1, 1]),
        conv_pool("nhwc_maxpool_asym_pads_dilations", "MaxPool", [2, 2, 10, 9], 9,
                  kernel_shape=[3, 2], dilations=[2, 2], pads=[0, 1, 2, 1]),
        conv_pool("nhwc_avgpool_exclude_pad", "AveragePool", [1, 3, 7, 7], 20,
                  kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=0),
        conv_pool("nhwc_avgpool_include_pad_ceil", "AveragePool", [1, 3, 8, 8], 16,
                  kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1,
                  count_include_pad=1),
    ]
    # SqueezeNet's fire module: two convs concatenated (each stores its slice
    # of the Concat), then a ceil-mode MaxPool.
    g = G("nhwc_concat_maxpool")
    x = g.input("x", [1, 4, 11, 11])
    e1 = g.node("Relu", [g.node("Conv", [x, g.weight("w1", [8, 4, 1, 1]), g.weight("b1", [8])])])
    e3 = g.node("Relu", [g.node("Conv", [x, g.weight("w3", [12, 4, 3, 3]), g.weight("b3", [12])],
                                pads=[1, 1, 1, 1])])
    cat = g.node("Concat", [e1, e3], axis=1)
    g.output(g.node("MaxPool", [cat], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1))
    out.append(g.case())
    return out


@cases
def shape_op_cases():
    out = []
    for axis in (1, 0, -1):
        g = G(f"flatten_axis{axis}".replace("-", "neg"))
        g.output(g.node("Flatten", [g.input("x", [2, 3, 4, 5])], axis=axis))
        out.append(g.case())

    g = G("concat_axis1_with_initializer")
    g.output(g.node("Concat", [g.input("x", [2, 3, 4]), g.input("y", [2, 5, 4]),
                               g.weight("c", [2, 1, 4])], axis=1))
    out.append(g.case())

    g = G("concat_negative_axis")
    g.output(g.node("Concat", [g.input("x", [2, 3]), g.input("y", [2, 4])], axis=-1))
    out.append(g.case())

    for name, shape in (("reshape_zero_minus1", [0, -1]), ("reshape_zero_middle", [4, 0, -1]),
                        ("reshape_minus1_first", [-1, 2, 2])):
        g = G(name)
        g.output(g.node("Reshape", [g.input("x", [2, 3, 4]), g.init("shape", shape, np.int64)]))
        out.append(g.case())

    g = G("transpose_nchw_to_nhwc")
    g.output(g.node("Transpose", [g.input("x", [2, 3, 4, 5])], perm=[0, 2, 3, 1]))
    out.append(g.case())

    g = G("transpose_default_perm")
    g.output(g.node("Transpose", [g.input("x", [2, 3, 4])]))
    out.append(g.case())

    g = G("unsqueeze_axes")
    g.output(g.node("Unsqueeze", [g.input("x", [3, 4]), g.init("axes", [0, 3], np.int64)]))
    out.append(g.case())

    g = G("unsqueeze_negative_axis")
    g.output(g.node("Unsqueeze", [g.input("x", [3, 4]), g.init("axes", [-1], np.int64)]))
    out.append(g.case())

    g = G("squeeze_axes")
    g.output(g.node("Squeeze", [g.input("x", [1, 3, 1, 4]), g.init("axes", [2], np.int64)]))
    out.append(g.case())

    g = G("squeeze_all")
    g.output(g.node("Squeeze", [g.input("x", [1, 3, 1, 4])]))
    out.append(g.case())
    return out


@cases
def split_cases():
    out = []
    g = G("split_equal")
    ys = g.node("Split", [g.input("x", [2, 6, 3])], outputs=3, axis=1)
    for y in ys:
        g.output(y)
    out.append(g.case())

    g = G("split_explicit_sizes")
    ys = g.node("Split", [g.input("x", [2, 6, 3]), g.init("split", [2, 3, 1], np.int64)],
                outputs=3, axis=1)
    for y in ys:
        g.output(y)
    out.append(g.case())

    g = G("split_num_outputs_opset18", opset=18)
    ys = g.node("Split", [g.input("x", [2, 7])], outputs=3, axis=-1, num_outputs=3)
    for y in ys:
        g.output(y)
    out.append(g.case())
    return out


@cases
def gather_cases():
    out = []
    g = G("gather_axis0_negative_indices")
    g.output(g.node("Gather", [g.input("x", [5, 4]), g.init("idx", [[0, -1], [2, 1]], np.int64)],
                    axis=0))
    out.append(g.case())

    g = G("gather_axis1_negative_indices")
    g.output(g.node("Gather", [g.input("x", [3, 6, 2]), g.init("idx", [-2, 0, 3], np.int64)],
                    axis=1))
    out.append(g.case())

    g = G("gather_scalar_index")
    g.output(g.node("Gather", [g.input("x", [4, 5]), g.init("idx", -1, np.int64)], axis=0))
    out.append(g.case())

    # An embedding lookup with run-time indices, negative ones included.
    g = G("gather_embedding_runtime_indices")
    g.output(g.node("Gather", [g.weight("table", [50, 8]),
                               g.input("ids", [2, 5], np.int64, low=-50, high=50)]))
    out.append(g.case())

    g = G("gather_int32_indices_axis1")
    g.output(g.node("Gather", [g.input("x", [3, 7]),
                               g.input("ids", [4], np.int32, low=-7, high=7)], axis=1))
    out.append(g.case())
    return out


@cases
def slice_cases():
    def sl(name, shape, starts, ends, axes=None, steps=None):
        g = G(name)
        ins = [g.input("x", shape), g.init("starts", starts, np.int64), g.init("ends", ends, np.int64)]
        if axes is not None:
            ins.append(g.init("axes", axes, np.int64))
        if steps is not None:
            if axes is None:
                ins.append("")
            ins.append(g.init("steps", steps, np.int64))
        g.output(g.node("Slice", ins))
        return g.case()

    return [
        sl("slice_basic", [6, 8], [1, 2], [5, 7], axes=[0, 1]),
        sl("slice_steps", [10, 8], [0, 1], [10, 8], axes=[0, 1], steps=[2, 3]),
        sl("slice_negative_step_reverse", [6, 5], [-1], [INT64_MIN], axes=[0], steps=[-1]),
        sl("slice_negative_step_2", [2, 9], [7], [0], axes=[1], steps=[-2]),
        sl("slice_negative_start_clamped_end", [4, 7], [-3], [INT64_MAX], axes=[-1]),
        sl("slice_omitted_axes", [4, 3, 5], [1, 0, 0], [3, 2, 5]),
    ]


@cases
def cast_cases():
    out = []
    for name, src, dst, low, high in (("cast_f32_to_i64", np.float32, np.int64, -5.0, 5.0),
                                      ("cast_i64_to_f32", np.int64, np.float32, -1000, 1000),
                                      ("cast_f32_to_bool", np.float32, np.bool_, -1.0, 1.0),
                                      ("cast_i64_to_i32", np.int64, np.int32, -1000, 1000)):
        g = G(name)
        x = g.input("x", [3, 7], src, low=low, high=high)
        if name == "cast_f32_to_bool":  # exact zeros too
            g.feeds["x"][0, :3] = 0.0
        g.output(g.node("Cast", [x], to=helper.np_dtype_to_tensor_dtype(np.dtype(dst))), dst)
        out.append(g.case())
    return out


@cases
def constant_identity_cases():
    out = []
    g = G("constant_tensor")
    c = g.node("Constant", [], value=numpy_helper.from_array(g.rand([2, 3]), "c"))
    g.output(g.node("Add", [g.input("x", [2, 3]), c]))
    out.append(g.case())

    g = G("constant_value_float")
    c = g.node("Constant", [], value_float=2.5)
    g.output(g.node("Mul", [g.input("x", [2, 3]), c]))
    out.append(g.case())

    g = G("constant_value_ints_as_shape")
    c = g.node("Constant", [], value_ints=[3, -1])
    g.output(g.node("Reshape", [g.input("x", [2, 3, 2]), c]))
    out.append(g.case())

    # Typed fields (float_data, int64_data) instead of raw_data.
    g = G("initializer_typed_fields")
    w = g.weight("w", [3, 4], raw=False)
    s = g.init("shape", [4, 3], np.int64, raw=False)
    g.output(g.node("Reshape", [g.node("Add", [g.input("x", [3, 4]), w]), s]))
    out.append(g.case())

    g = G("identity_chain")
    g.output(g.node("Identity", [g.node("Relu", [g.node("Identity", [g.input("x", [2, 5])])])]))
    out.append(g.case())

    g = G("identity_passthrough")
    g.output(g.node("Identity", [g.input("x", [2, 5])]))
    out.append(g.case())
    return out


@cases
def softmax_cases():
    return [
        _unary("softmax_last_axis", "Softmax", [2, 3, 5], axis=-1),
        _unary("softmax_axis1", "Softmax", [2, 4, 3], axis=1),
        _unary("softmax_axis0", "Softmax", [3, 4], axis=0),
        _unary("softmax_large_values", "Softmax", [2, 10], low=-100.0, high=100.0, axis=-1),
    ]


@cases
def norm_cases():
    out = []
    g = G("layernorm_last_axis")
    g.output(g.node("LayerNormalization", [g.input("x", [2, 5, 16]), g.weight("scale", [16]),
                                           g.weight("bias", [16])], axis=-1, epsilon=1e-5))
    out.append(g.case())

    g = G("layernorm_two_axes")
    g.output(g.node("LayerNormalization", [g.input("x", [2, 4, 6]), g.weight("scale", [4, 6]),
                                           g.weight("bias", [4, 6])], axis=-2))
    out.append(g.case())

    g = G("layernorm_no_bias")
    g.output(g.node("LayerNormalization", [g.input("x", [3, 8], low=-3.0, high=5.0),
                                           g.weight("scale", [8])], axis=1))
    out.append(g.case())

    for name, shape in (("batchnorm_nchw", [2, 4, 5, 5]), ("batchnorm_2d", [3, 4])):
        g = G(name)
        c = shape[1]
        g.output(g.node("BatchNormalization", [
            g.input("x", shape), g.weight("scale", [c]), g.weight("b", [c]),
            g.weight("mean", [c], -0.5, 0.5), g.weight("var", [c], 0.1, 2.0)], epsilon=1e-5))
        out.append(g.case())
    return out


@cases
def shape_chain_cases():
    out = []
    # PyTorch's `x.view(x.size(0), -1)`: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
    g = G("shape_gather_concat_reshape")
    x = g.input("x", [2, 3, 4])
    s = g.node("Shape", [x])
    d0 = g.node("Gather", [s, g.init("zero", 0, np.int64)], axis=0)
    u = g.node("Unsqueeze", [d0, g.init("axes", [0], np.int64)])
    shape = g.node("Concat", [u, g.init("minus1", [-1], np.int64)], axis=0)
    g.output(g.node("Reshape", [x, shape]))
    out.append(g.case())

    g = G("shape_start_reshape")
    x = g.input("x", [2, 3, 4])
    tail = g.node("Shape", [x], start=1)
    shape = g.node("Concat", [g.init("minus1", [-1], np.int64), tail], axis=0)
    r = g.node("Reshape", [g.input("y", [6, 4]), shape])
    g.output(g.node("Add", [r, x]))
    out.append(g.case())

    # An output that is a compile-time constant.
    g = G("shape_as_output")
    g.output(g.node("Shape", [g.input("x", [2, 3, 4])]), np.int64)
    out.append(g.case())
    return out


@cases
def dropout_cases():
    out = []
    g = G("dropout_inference")
    d = g.node("Dropout", [g.input("x", [2, 6]), g.init("ratio", np.float32(0.3))])
    g.output(g.node("Relu", [d]))
    out.append(g.case())

    g = G("dropout_with_mask")
    y, mask = g.node("Dropout", [g.input("x", [2, 6])], outputs=["y", "mask"])
    g.output(y)
    g.output(mask, np.bool_)
    out.append(g.case())
    return out


@cases
def old_opset_cases():
    """Older opsets, for the importer's version adapters."""
    out = []
    g = G("opset6_clip_attributes", opset=6)
    g.output(g.node("Clip", [g.input("x", [3, 5], low=-2.0, high=2.0)], min=-0.5, max=1.25))
    out.append(g.case())

    g = G("opset11_unsqueeze_squeeze_attributes", opset=11)
    u = g.node("Unsqueeze", [g.input("x", [3, 4])], axes=[0, 2])
    r = g.node("Relu", [u])
    g.output(g.node("Squeeze", [r], axes=[0]))
    out.append(g.case())

    g = G("opset11_clip_inputs", opset=11)
    g.output(g.node("Clip", [g.input("x", [2, 6]), g.init("lo", np.float32(-0.3)),
                             g.init("hi", np.float32(0.6))]))
    out.append(g.case())

    g = G("opset11_split_attribute", opset=11)
    ys = g.node("Split", [g.input("x", [3, 4])], outputs=2, axis=0, split=[1, 2])
    for y in ys:
        g.output(y)
    out.append(g.case())

    # Softmax before opset 13 flattens to 2-D at `axis`; on the last axis the old and new
    # semantics agree. (Other axes are rejected cleanly for now: see bad_cases.)
    out.append(_unary("opset11_softmax_last_axis", "Softmax", [2, 3, 4], opset=11, axis=2))
    return out


@cases
def composite_cases():
    out = []
    # A small CNN: Conv-BN-Relu-MaxPool, depthwise Conv + ReLU6, pointwise Conv with a
    # residual Add, global pooling, classifier.
    g = G("small_cnn")
    x = g.input("x", [1, 3, 16, 16])
    c1 = g.node("Conv", [x, g.weight("w1", [8, 3, 3, 3], -0.5, 0.5), g.weight("b1", [8])],
                pads=[1, 1, 1, 1])
    bn = g.node("BatchNormalization", [c1, g.weight("s", [8]), g.weight("o", [8]),
                                       g.weight("m", [8], -0.2, 0.2), g.weight("v", [8], 0.5, 2.0)])
    r = g.node("Relu", [bn])
    p = g.node("MaxPool", [r], kernel_shape=[2, 2], strides=[2, 2])
    dw = g.node("Conv", [p, g.weight("w2", [8, 1, 3, 3], -0.5, 0.5)], group=8, pads=[1, 1, 1, 1])
    r6 = g.node("Clip", [dw, g.init("zero", np.float32(0)), g.init("six", np.float32(6))])
    pw = g.node("Conv", [r6, g.weight("w3", [8, 8, 1, 1], -0.5, 0.5), g.weight("b3", [8])])
    res = g.node("Add", [pw, p])
    gap = g.node("GlobalAveragePool", [res])
    f = g.node("Flatten", [gap])
    g.output(g.node("Gemm", [f, g.weight("fc", [10, 8]), g.weight("fcb", [10])], transB=1))
    out.append(g.case())

    out.append(small_attention())

    # Several outputs, one of them also consumed inside the graph.
    g = G("multiple_outputs")
    x = g.input("x", [3, 4])
    y1 = g.node("Relu", [x], outputs=["relu_out"])
    y2 = g.node("Sigmoid", [y1], outputs=["sigmoid_out"])
    y3 = g.node("Shape", [y2], outputs=["shape_out"])
    g.output(y1)
    g.output(y2)
    g.output(y3, np.int64)
    out.append(g.case())

    # A symbolic batch dim fixed with --shape.
    g = G("dynamic_batch_with_shape_flag")
    x = g.input("x", [3, 4], dims=["N", 4])
    g.output(g.node("Relu", [g.node("MatMul", [x, g.weight("w", [4, 5])])]), shape=["N", 5])
    out.append(g.case(shape_args=("x=3,4",)))

    # Weights in a side file (external data), at an offset.
    g = G("external_data")
    w = g.rand([4, 4])
    tensor = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 4],
                              data_location=TensorProto.EXTERNAL)
    for k, v in (("location", "weights.bin"), ("offset", "16"), ("length", str(w.nbytes))):
        tensor.external_data.add(key=k, value=v)
    g.inits.append(tensor)
    g.output(g.node("MatMul", [g.input("x", [2, 4]), "w"]))
    out.append(g.case(files={"weights.bin": b"\0" * 16 + w.tobytes() + b"\0" * 8}))
    return out


def small_attention() -> Case:
    """One BERT-style encoder layer shaped like PyTorch's export (hidden 16, 2 heads,
    sequence 8): attention with an int64 mask, LayerNorm, erf-GELU feed-forward."""
    g = G("small_attention")
    S, H, NH = 8, 16, 2
    D = H // NH
    x = g.input("hidden", [1, S, H])
    mask = g.input("mask", None, np.int64, data=np.array([[1] * 6 + [0] * 2], np.int64))

    def linear(inp, n_in, n_out, tag):
        return g.node("Add", [g.node("MatMul", [inp, g.weight(f"{tag}_w", [n_in, n_out], -0.4, 0.4)]),
                              g.weight(f"{tag}_b", [n_out], -0.1, 0.1)])

    def heads(t):
        r = g.node("Reshape", [t, g.init(f"shape{g._count}", [1, S, NH, D], np.int64)])
        return g.node("Transpose", [r], perm=[0, 2, 1, 3])

    q, k, v = (heads(linear(x, H, H, n)) for n in ("q", "k", "v"))
    kt = g.node("Transpose", [k], perm=[0, 1, 3, 2])
    scores = g.node("Div", [g.node("MatMul", [q, kt]), g.init("scale", np.float32(np.sqrt(D)))])
    m = g.node("Cast", [g.node("Unsqueeze", [mask, g.init("axes12", [1, 2], np.int64)])],
               to=TensorProto.FLOAT)
    bias = g.node("Mul", [g.node("Sub", [g.init("one", np.float32(1)), m]),
                          g.init("neg", np.float32(-10000.0))])
    probs = g.node("Softmax", [g.node("Add", [scores, bias])], axis=-1)
    ctx = g.node("Transpose", [g.node("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    ctx = g.node("Reshape", [ctx, g.init("merge", [1, S, H], np.int64)])
    h1 = g.node("LayerNormalization", [g.node("Add", [linear(ctx, H, H, "o"), x]),
                                       g.weight("ln1_s", [H]), g.weight("ln1_b", [H])], axis=-1)
    ff = linear(h1, H, 2 * H, "ff1")
    gelu = g.node("Mul", [g.node("Mul", [ff, g.node("Add", [
        g.node("Erf", [g.node("Div", [ff, g.init("sqrt2", np.float32(np.sqrt(2)))])]),
        g.init("one_b", np.float32(1))])]), g.init("half", np.float32(0.5))])
    h2 = g.node("Add", [linear(gelu, 2 * H, H, "ff2"), h1])
    g.output(g.node("LayerNormalization", [h2, g.weight("ln2_s", [H]), g.weight("ln2_b", [H])],
                    axis=-1, outputs=["encoded"]))
    return g.case()


@cases
def recurrent_cases():
    # LSTM / GRU whose W and R are initializers larger than the ONNX folders' limit (4096
    # elements): kiln-decompose transposes them at compile time (one constant per
    # direction, and GRU's R_h^T of its own) instead of at every run; and one whose
    # weights are graph inputs, which keeps the run-time Gather + Transpose.
    out = []

    g = G("lstm_constant_weights_bidirectional")
    H, I = 40, 6
    y, yh, yc = g.node("LSTM", [g.input("x", [5, 2, I]), g.weight("w", [2, 4 * H, I], -0.3, 0.3),
                                g.weight("r", [2, 4 * H, H], -0.3, 0.3),
                                g.weight("b", [2, 8 * H], -0.3, 0.3)],
                       outputs=3, hidden_size=H, direction="bidirectional")
    for v in (y, yh, yc):
        g.output(v)
    out.append(g.case())

    for name, attrs in (("gru_constant_weights", {}),
                        ("gru_constant_weights_reverse_linear_before_reset",
                         {"direction": "reverse", "linear_before_reset": 1})):
        g = G(name)
        H = 48
        y, yh = g.node("GRU", [g.input("x", [6, 1, I]), g.weight("w", [1, 3 * H, I], -0.3, 0.3),
                               g.weight("r", [1, 3 * H, H], -0.3, 0.3),
                               g.weight("b", [1, 6 * H], -0.3, 0.3)],
                       outputs=2, hidden_size=H, **attrs)
        g.output(y)
        g.output(yh)
        out.append(g.case())

    g = G("lstm_weights_as_inputs")
    H = 8
    y = g.node("LSTM", [g.input("x", [4, 1, I]), g.input("w", [1, 4 * H, I], low=-0.5, high=0.5),
                        g.input("r", [1, 4 * H, H], low=-0.5, high=0.5)],
               outputs=["y"], hidden_size=H)
    g.output(y)
    out.append(g.case())
    return out


@functools.cache
def all_cases(device: str = "cpu") -> list[Case]:
    """Every case meant for `device` (Case.devices; "all": every case whatever its
    devices). Built once per process and device; treat the result as read-only."""
    found: list[Case] = []
    for fn in CASE_FUNCS:
        found.extend(fn())
    names = [c.name for c in found]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"duplicate case names: {dup}"
    return found if device == "all" else [c for c in found if c.for_device(device)]


#===----------------------------------------------------------------------===//
# Models that kiln must reject (compile time)
#===----------------------------------------------------------------------===//


@dataclasses.dataclass
class BadCase:
    name: str
    write: Callable[[Path], Path]  # writes files into a fresh folder, returns the model path
    expect_any: tuple[str, ...]  # the message must mention one of these (case-insensitive)
    args: tuple[str, ...] = ()


def _simple_graph(nodes, inits=(), inputs=None, y_shape=(2, 3), opset=DEFAULT_OPSET, name="bad"):
    inputs = inputs if inputs is not None else [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y_shape))]
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=IR_VERSION[opset])


def _writer(model_or_bytes, extra: Callable[[Path], None] | None = None):
    def write(folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        if extra:
            extra(folder)
        path = folder / "model.onnx"
        data = model_or_bytes if isinstance(model_or_bytes, bytes) else \
            model_or_bytes.SerializeToString()
        path.write_bytes(data)
        return path
    return write


def _unparseable(data: bytes) -> bool:
    try:
        onnx.ModelProto.FromString(data)
    except Exception:
        return True
    return False


def _truncated_model() -> bytes:
    """A real model cut short where protobuf parsing fails."""
    full = next(c for c in all_cases() if c.name == "small_cnn").model.SerializeToString()
    cut = len(full) // 2
    while not _unparseable(full[:cut]):
        cut -= 1
    return full[:cut]


def _garbage() -> bytes:
    rng = np.random.default_rng(1234)
    for _ in range(100):
        data = rng.integers(0, 256, size=4096, dtype=np.uint8).tobytes()
        if _unparseable(data):
            return data
    raise RuntimeError("no unparseable random bytes found")


def _external_model(location: str, dims=(4, 4), offset: int | None = None,
                    length: int | None = None) -> onnx.ModelProto:
    tensor = onnx.TensorProto(name="ext_weight", data_type=TensorProto.FLOAT, dims=list(dims),
                              data_location=TensorProto.EXTERNAL)
    tensor.external_data.add(key="location", value=location)
    if offset is not None:
        tensor.external_data.add(key="offset", value=str(offset))
    if length is not None:
        tensor.external_data.add(key="length", value=str(length))
    node = helper.make_node("MatMul", ["x", "ext_weight"], ["y"], name="matmul_ext")
    return _simple_graph([node], [tensor], y_shape=(2, dims[-1]), inputs=[
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])])


WEIGHTS_4x4 = np.arange(16, dtype=np.float32).tobytes()


def bad_cases() -> list[BadCase]:
    relu = helper.make_node("Relu", ["x"], ["y"], name="relu")
    out: list[BadCase] = []
    parse_words = ("pars", "protobuf", "invalid", "malformed", "corrupt", "decode", "truncat",
                   "not an onnx", "model.onnx")

    out.append(BadCase("empty_file", _writer(b""), ("graph", "empty", "model.onnx", "no ")))
    out.append(BadCase("garbage_text", _writer(b"this is not an ONNX model\n" * 20), parse_words))
    out.append(BadCase("garbage_random_bytes", _writer(_garbage()), parse_words))
    out.append(BadCase("truncated_protobuf", _writer(_truncated_model()), parse_words))
    out.append(BadCase("missing_file", lambda folder: folder / "does_not_exist.onnx",
                       ("does_not_exist.onnx",)))

    out.append(BadCase("unknown_op", _writer(_simple_graph(
        [helper.make_node("FrobnicateTensor", ["x"], ["y"], name="frob_node")])),
        ("FrobnicateTensor",)))

    # x -> cyc_add(x, cyc_b) -> cyc_a -> cyc_relu -> cyc_b: a cycle through two nodes.
    out.append(BadCase("graph_cycle", _writer(_simple_graph([
        helper.make_node("Add", ["x", "cyc_b"], ["cyc_a"], name="cyc_add"),
        helper.make_node("Relu", ["cyc_a"], ["cyc_b"], name="cyc_relu"),
        helper.make_node("Identity", ["cyc_b"], ["y"], name="cyc_out")])),
        ("cycle", "cyclic", "topolog", "cyc_a", "cyc_b", "cyc_add", "cyc_relu")))

    out.append(BadCase("undefined_input", _writer(_simple_graph(
        [helper.make_node("Add", ["x", "ghost_value"], ["y"], name="add_ghost")])),
        ("ghost_value",)))

    def with_init(tensor, expect):
        node = helper.make_node("Add", ["x", tensor.name], ["y"], name="add_init")
        return _writer(_simple_graph([node], [tensor])), expect

    neg = onnx.TensorProto(name="neg_weight", data_type=TensorProto.FLOAT, dims=[-3, 2])
    neg.raw_data = b""
    out.append(BadCase("negative_dim_initializer", *with_init(
        neg, ("neg_weight", "negative", "dim"))))

    huge = onnx.TensorProto(name="huge_weight", data_type=TensorProto.FLOAT,
                            dims=[2**31, 2**31, 2**31])
    huge.raw_data = b"\0" * 16
    out.append(BadCase("overflowing_dims_initializer", *with_init(
        huge, ("huge_weight", "overflow", "too large", "dim"))))

    short = onnx.TensorProto(name="short_weight", data_type=TensorProto.FLOAT, dims=[2, 3])
    short.raw_data = b"\0" * 8
    out.append(BadCase("raw_data_too_short", *with_init(
        short, ("short_weight", "raw", "bytes", "size"))))

    few = onnx.TensorProto(name="few_floats", data_type=TensorProto.FLOAT, dims=[2, 3],
                           float_data=[1.0, 2.0])
    out.append(BadCase("float_data_too_short", *with_init(
        few, ("few_floats", "float_data", "element", "size"))))

    out.append(BadCase("negative_dim_input", _writer(_simple_graph(
        [relu], inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, -3])],
        y_shape=(2, -3))),
        ("negative", "dim", "'x'", "\"x\"", "input x")))

    out.append(BadCase("overflowing_dims_input", _writer(_simple_graph(
        [relu], inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                      [2**40, 2**40, 2**40])],
        y_shape=(2**40, 2**40, 2**40))),
        ("overflow", "too large", "dim", "'x'", "\"x\"", "input x")))

    # External data that escapes the model's folder, or is shorter than declared.
    def outside_file(name):
        def extra(folder: Path):
            (folder.parent / f"{folder.name}_{name}").write_bytes(WEIGHTS_4x4)
        return extra

    out.append(BadCase("external_data_dotdot", lambda f: _writer(
        _external_model(f"../{f.name}_outside.bin"), outside_file("outside.bin"))(f),
        ("..", "outside", "escape", "external")))

    out.append(BadCase("external_data_absolute_path", lambda f: _writer(
        _external_model(str((f.parent / f"{f.name}_abs.bin").resolve())),
        outside_file("abs.bin"))(f),
        ("absolute", "outside", "escape", "external")))

    def symlink_extra(folder: Path):
        outside_file("target.bin")(folder)
        os.symlink(folder.parent / f"{folder.name}_target.bin", folder / "link.bin")

    out.append(BadCase("external_data_symlink_escape", _writer(
        _external_model("link.bin"), symlink_extra),
        ("symlink", "link.bin", "outside", "escape", "external")))

    def short_file(folder: Path):
        (folder / "weights.bin").write_bytes(WEIGHTS_4x4[:40])

    out.append(BadCase("external_data_file_too_short", _writer(
        _external_model("weights.bin"), short_file),
        ("weights.bin", "short", "bytes", "size", "external")))

    def exact_file(folder: Path):
        (folder / "weights.bin").write_bytes(WEIGHTS_4x4)

    out.append(BadCase("external_data_length_past_end", _writer(
        _external_model("weights.bin", offset=32, length=64), exact_file),
        ("weights.bin", "short", "bytes", "size", "offset", "length", "external")))

    out.append(BadCase("external_data_missing_file", _writer(_external_model("missing.bin")),
                       ("missing.bin",)))

    # A symbolic dim reaching an op that does not take one yet (docs/dynamic-shapes.md),
    # and --shape mistakes.
    dyn = _simple_graph([helper.make_node("Relu", ["dyn_input"], ["y"], name="relu")], inputs=[
        helper.make_tensor_value_info("dyn_input", TensorProto.FLOAT, ["batch", 3])],
        y_shape=("batch", 3))
    dyn_sign = _simple_graph([helper.make_node("Sign", ["dyn_input"], ["y"], name="sign")],
                             inputs=[helper.make_tensor_value_info("dyn_input", TensorProto.FLOAT,
                                                                   ["batch", 3])],
                             y_shape=("batch", 3))
    out.append(BadCase("dynamic_dim_into_unsupported_op", _writer(dyn_sign),
                       ("sign", "--shape", "symbolic", "batch")))
    out.append(BadCase("shape_flag_unknown_input", _writer(dyn),
                       ("no_such_input",), args=("--shape", "no_such_input=1,3")))
    out.append(BadCase("shape_flag_wrong_rank", _writer(dyn),
                       ("dyn_input", "rank"), args=("--shape", "dyn_input=1,3,5")))

    # Valid ONNX that kiln does not support yet must be rejected naming the node:
    # opset-11 Softmax over the last two of three dims (2-D coercion at axis 1).
    legacy_softmax = _simple_graph(
        [helper.make_node("Softmax", ["x"], ["y"], name="legacy_softmax", axis=1)],
        inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        y_shape=(2, 3, 4), opset=11)
    out.append(BadCase("unsupported_opset11_softmax_coercion", _writer(legacy_softmax),
                       ("legacy_softmax",)))
    return out


#===----------------------------------------------------------------------===//
# Command line
#===----------------------------------------------------------------------===//


def _check(case_list: list[Case]) -> int:
    """onnx's checker (with strict shape inference) and onnxruntime on every case."""
    import tempfile
    sys.path.insert(0, str(Path(__file__).parent))
    from harness import ort_run

    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in case_list:
            try:
                path = case.save(Path(tmp) / case.name)
                onnx.checker.check_model(str(path), full_check=True)
                outs = ort_run(path, case.inputs)
                desc = ", ".join(f"{k}{list(v.shape)}:{v.dtype}" for k, v in outs.items())
                print(f"ok   {case.name}: {desc}")
            except Exception as e:
                failed += 1
                print(f"FAIL {case.name}: {type(e).__name__}: {e}")
    print(f"{len(case_list) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="print the case names")
    ap.add_argument("--check", action="store_true", help="check the cases with onnxruntime")
    ap.add_argument("--out", type=Path, help="write the cases into this folder")
    ap.add_argument("names", nargs="*", help="only these cases")
    args = ap.parse_args()
    selected = [c for c in all_cases("all") if not args.names or c.name in args.names]
    if args.list:
        print("\n".join(c.name for c in selected))
    if args.check:
        return _check(selected)
    if args.out:
        for case in selected:
            folder = args.out / case.name
            case.save(folder)
            for i, (name, value) in enumerate(case.inputs.items()):
                np.save(folder / f"input_{i}_{name}.npy", value)
            if case.shape_args:
                (folder / "shape_args.txt").write_text(" ".join(case.shape_args) + "\n")
        print(f"wrote {len(selected)} models under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
