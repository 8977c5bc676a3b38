"""Quantized test models made the way users make them: small float models (seeded weights)
built with onnx.helper, quantized with onnxruntime.quantization (quantize_static with a
calibration reader over seeded random inputs, QDQ and QOperator formats, per tensor and
per channel, u8 and s8 activations; quantize_dynamic).

Run directly to write the models into a folder:
    python test/e2e/quantized_models.py OUT_DIR
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _weight(rng: np.random.Generator, name: str, shape, scale: float = 0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def _save(graph: onnx.GraphProto, path: Path) -> None:
    # IR 9: what the pinned onnxruntime (and its quantization tool) reads.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=9)
    onnx.save(model, path)


def small_cnn(path: Path) -> dict[str, tuple[int, ...]]:
    """Conv 3x3 + Relu, a strided Conv, a residual Add, MaxPool, GlobalAveragePool, Gemm:
    the shapes of a ResNet block, small."""
    rng = np.random.default_rng(1)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])
    inits = [_weight(rng, "w1", (16, 3, 3, 3)), _weight(rng, "b1", (16,), 0.1),
             _weight(rng, "w2", (16, 16, 3, 3), 0.1), _weight(rng, "b2", (16,), 0.1),
             _weight(rng, "w3", (32, 16, 1, 1), 0.2), _weight(rng, "b3", (32,), 0.1),
             _weight(rng, "w4", (32, 32, 3, 3), 0.08), _weight(rng, "b4", (32,), 0.1),
             _weight(rng, "wf", (10, 32), 0.3), _weight(rng, "bf", (10,), 0.1)]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Add", ["r1", "r2"], ["s2"]),
        helper.make_node("MaxPool", ["s2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p2", "w3", "b3"], ["c3"]),
        helper.make_node("Relu", ["c3"], ["r3"]),
        helper.make_node("Conv", ["r3", "w4", "b4"], ["c4"], pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Relu", ["c4"], ["r4"]),
        helper.make_node("GlobalAveragePool", ["r4"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    graph = helper.make_graph(nodes, "small_cnn", [x], [y], inits)
    _save(graph, path)
    return {"x": (1, 3, 16, 16)}


def mlp_attention(path: Path) -> dict[str, tuple[int, ...]]:
    """A BERT-like block: Q/K/V projections (MatMul + bias Add, K = 96, 384 for the MLP),
    scores Q K^T, Softmax, the weighted V, a two-layer MLP with Relu."""
    rng = np.random.default_rng(2)
    s, d, h = 8, 96, 384
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, s, d])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, s, d])
    inits = [_weight(rng, n, (d, d), 0.1) for n in ("wq", "wk", "wv")]
    inits += [_weight(rng, n, (d,), 0.05) for n in ("bq", "bk", "bv")]
    inits += [_weight(rng, "w1", (d, h), 0.1), _weight(rng, "b1", (h,), 0.05),
              _weight(rng, "w2", (h, d), 0.05), _weight(rng, "b2", (d,), 0.05),
              numpy_helper.from_array(np.array(1 / np.sqrt(d), np.float32), "scale")]
    nodes = []
    for p in ("q", "k", "v"):
        nodes += [helper.make_node("MatMul", ["x", f"w{p}"], [f"{p}m"]),
                  helper.make_node("Add", [f"{p}m", f"b{p}"], [p])]
    nodes += [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["qk"]),
        helper.make_node("Mul", ["qk", "scale"], ["qks"]),
        helper.make_node("Softmax", ["qks"], ["att"], axis=-1),
        helper.make_node("MatMul", ["att", "v"], ["ctx"]),
        helper.make_node("MatMul", ["ctx", "w1"], ["h1m"]),
        helper.make_node("Add", ["h1m", "b1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h1r"]),
        helper.make_node("MatMul", ["h1r", "w2"], ["h2m"]),
        helper.make_node("Add", ["h2m", "b2"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "mlp_attention", [x], [y], inits)
    _save(graph, path)
    return {"x": (1, s, d)}


def residual_cnn(path: Path) -> dict[str, tuple[int, ...]]:
    """A ResNet in small: a stem Conv + Relu, four basic blocks at 16 channels (Conv 3x3,
    Relu, Conv 3x3, the residual Add, Relu), a strided block to 32 channels with a 1x1
    downsample Conv, three more blocks, GlobalAveragePool and Gemm; He-initialized seeded
    weights. Its 8 residual Adds carry a one-step difference of one Add on through the
    blocks, as ResNet-50's do: the model of test_quantized.py's whole-model check."""
    rng = np.random.default_rng(3)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 48, 48])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10])
    inits, nodes = [], []

    def conv(src, cin, cout, k, stride=1, relu=True):
        name = f"c{len(nodes)}"
        inits.append(_weight(rng, name + "w", (cout, cin, k, k),
                             float(np.sqrt(2.0 / (cin * k * k)))))
        inits.append(_weight(rng, name + "b", (cout,), 0.05))
        nodes.append(helper.make_node("Conv", [src, name + "w", name + "b"], [name],
                                      pads=[k // 2] * 4, strides=[stride, stride]))
        if not relu:
            return name
        nodes.append(helper.make_node("Relu", [name], [name + "r"]))
        return name + "r"

    def block(src, cin, cout, stride=1):
        h = conv(conv(src, cin, cout, 3, stride), cout, cout, 3, relu=False)
        skip = src if cin == cout and stride == 1 else conv(src, cin, cout, 1, stride,
                                                            relu=False)
        name = f"add{len(nodes)}"
        nodes.append(helper.make_node("Add", [h, skip], [name]))
        nodes.append(helper.make_node("Relu", [name], [name + "r"]))
        return name + "r"

    t = conv("x", 3, 16, 3)
    for _ in range(4):
        t = block(t, 16, 16)
    t = block(t, 16, 32, 2)
    for _ in range(3):
        t = block(t, 32, 32)
    inits += [_weight(rng, "wf", (10, 32), 0.3), _weight(rng, "bf", (10,), 0.1)]
    nodes += [helper.make_node("GlobalAveragePool", [t], ["g"]),
              helper.make_node("Flatten", ["g"], ["f"]),
              helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1)]
    graph = helper.make_graph(nodes, "residual_cnn", [x], [y], inits)
    _save(graph, path)
    return {"x": (2, 3, 48, 48)}


FLOAT_MODELS = {"small_cnn": small_cnn, "mlp_attention": mlp_attention,
                "residual_cnn": residual_cnn}


def random_inputs(shapes: dict[str, tuple[int, ...]], seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}


class _Calibration:
    """onnxruntime's CalibrationDataReader over 8 seeded random input sets."""

    def __init__(self, shapes: dict[str, tuple[int, ...]], count: int = 8):
        self.sets = iter([random_inputs(shapes, 100 + i) for i in range(count)])

    def get_next(self):
        return next(self.sets, None)


@dataclasses.dataclass(frozen=True)
class Variant:
    model: str              # a FLOAT_MODELS key
    method: str             # "static" or "dynamic"
    fmt: str = "qdq"        # "qdq" or "qoperator" (static)
    per_channel: bool = False
    activations: str = "u8"  # "u8" or "s8"

    @property
    def name(self) -> str:
        if self.method == "dynamic":
            return f"{self.model}-dynamic{'-pc' if self.per_channel else ''}"
        return (f"{self.model}-{self.fmt}-{self.activations}"
                f"{'-per-channel' if self.per_channel else '-per-tensor'}")


# QOperator quantizes Add / pooling / Gemm as com.microsoft ops (QLinearAdd, QGemm, ...),
# which kiln does not import: those stay float in the QOperator variants.
QOPERATOR_OPS = ["Conv", "MatMul"]


def build(variant: Variant, folder: Path) -> tuple[Path, dict[str, tuple[int, ...]]]:
    """Writes the float model and its quantized form into `folder`; returns the quantized
    model's path and the input shapes."""
    from onnxruntime.quantization import (QuantFormat, QuantType, quantize_dynamic,
                                          quantize_static)
    folder.mkdir(parents=True, exist_ok=True)
    float_path = folder / f"{variant.model}.onnx"
    shapes = FLOAT_MODELS[variant.model](float_path)
    out = folder / f"{variant.name}.onnx"
    if variant.method == "dynamic":
        quantize_dynamic(str(float_path), str(out), weight_type=QuantType.QInt8,
                         per_channel=variant.per_channel)
        return out, shapes
    act = QuantType.QUInt8 if variant.activations == "u8" else QuantType.QInt8
    kwargs = {}
    if variant.fmt == "qoperator":
        kwargs["op_types_to_quantize"] = QOPERATOR_OPS
    quantize_static(str(float_path), str(out), _Calibration(shapes),
                    quant_format=QuantFormat.QDQ if variant.fmt == "qdq" else
                    QuantFormat.QOperator,
                    per_channel=variant.per_channel, activation_type=act,
                    weight_type=QuantType.QInt8, **kwargs)
    return out, shapes


def output_quantum(model_path: Path, output: str) -> float | None:
    """The scale of the DequantizeLinear producing graph output `output` (the size of one
    quantized step of it), or None when the output is not dequantized from 8 bits."""
    m = onnx.load(str(model_path))
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    for node in m.graph.node:
        if output in node.output and node.op_type == "DequantizeLinear":
            scale = inits.get(node.input[1])
            return float(scale.reshape(-1)[0]) if scale is not None and scale.size == 1 else None
    return None


VARIANTS = [Variant(m, "static", fmt, pc, act)
            for m in ("small_cnn", "mlp_attention") for fmt in ("qdq", "qoperator")
            for pc in (False, True) for act in ("u8", "s8")] + \
    [Variant(m, "dynamic", per_channel=pc) for m in ("mlp_attention",) for pc in (False, True)]


if __name__ == "__main__":
    out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "quantized_models")
    for v in VARIANTS:
        path, _ = build(v, out_dir)
        print(path)
