"""Models with symbolic dims built with the onnx helper (seeded random weights), in the
form torch.onnx.export with dynamic_axes emits them; shared by test_dynamic_shapes.py and
bench/dynamic_vs_static.py (docs/dynamic-shapes.md).

- bert_like: a BERT-style encoder, input_ids / token_type_ids / attention_mask
  [batch, seq] (int64): Gather embedding lookups, position ids by Range(0, seq) from
  Shape -> Gather, LayerNormalization, a mask bias from attention_mask via Unsqueeze ->
  Cast -> Sub -> Mul, per layer Q/K/V projections split into heads by Shape -> Gather ->
  Unsqueeze -> Concat -> Reshape, Transposes, the attention batch MatMuls
  [b,h,s,d] x [b,h,d,s] and [b,h,s,s] x [b,h,s,d], Softmax, heads merged by another
  Shape chain, Gelu through Erf, residual Adds, a decomposed LayerNorm (ReduceMean, Sub,
  Pow, Sqrt, Div) in the last layer, and a pooler (Gather of token 0, Gemm, Tanh).
  Outputs last_hidden_state [batch, seq, hidden] and pooler_output [batch, hidden].
- cnn: Conv -> BatchNormalization -> Relu -> MaxPool -> Conv -> BatchNormalization ->
  Relu -> GlobalAveragePool -> Flatten -> Gemm, batch symbolic.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper


def _w(rng, *shape, scale=0.1):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


class _Graph:
    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits = [], []
        self.count = 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, array, base="c"):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def op(self, op_type, inputs, base=None, outputs=1, **attrs):
        base = base or op_type.lower()
        outs = [self.name(base) for _ in range(outputs)]
        self.nodes.append(h.make_node(op_type, inputs, outs, name=outs[0], **attrs))
        return outs[0] if outputs == 1 else outs

    def save(self, path, inputs, outputs, opset=17):
        g = h.make_graph(self.nodes, "g", inputs, outputs, initializer=self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)
        onnx.checker.check_model(m, full_check=True)
        onnx.save(m, str(path))
        return Path(path)


def bert_like(path, vocab=100, hidden=64, heads=4, layers=2, ffn=128, max_pos=512,
              seed=0):
    g = _Graph(seed)
    r = g.rng
    dh = hidden // heads

    def linear(x, n_in, n_out):
        m = g.op("MatMul", [x, g.const(_w(r, n_in, n_out), "w")])
        return g.op("Add", [m, g.const(_w(r, n_out, scale=0.02), "b")])

    def layer_norm(x):
        return g.op("LayerNormalization",
                    [x, g.const(1 + _w(r, hidden), "ln_g"), g.const(_w(r, hidden), "ln_b")],
                    axis=-1, epsilon=1e-12)

    def layer_norm_decomposed(x):
        mean = g.op("ReduceMean", [x], axes=[-1], keepdims=1)
        d = g.op("Sub", [x, mean])
        var = g.op("ReduceMean", [g.op("Pow", [d, g.const(np.float32(2.0))])], axes=[-1],
                   keepdims=1)
        std = g.op("Sqrt", [g.op("Add", [var, g.const(np.float32(1e-12))])])
        n = g.op("Div", [d, std])
        return g.op("Add", [g.op("Mul", [n, g.const(1 + _w(r, hidden))]),
                            g.const(_w(r, hidden))])

    def dim(x, i):
        # Shape -> Gather(i) -> Unsqueeze, as torch exports x.size(i).
        s = g.op("Shape", [x])
        d = g.op("Gather", [s, g.const(np.array(i, np.int64))], axis=0)
        return g.op("Unsqueeze", [d, g.const(np.array([0], np.int64))])

    def split_heads(x):
        shape = g.op("Concat", [dim(x, 0), dim(x, 1), g.const(np.array([heads], np.int64)),
                                g.const(np.array([dh], np.int64))], axis=0)
        return g.op("Reshape", [x, shape])

    ids, types, mask = "input_ids", "token_type_ids", "attention_mask"
    words = g.op("Gather", [g.const(_w(r, vocab, hidden), "word_emb"), ids], axis=0)
    seq = g.op("Gather", [g.op("Shape", [ids]), g.const(np.array(1, np.int64))], axis=0)
    pos = g.op("Range", [g.const(np.array(0, np.int64)), seq, g.const(np.array(1, np.int64))])
    pos = g.op("Unsqueeze", [pos, g.const(np.array([0], np.int64))])
    positions = g.op("Gather", [g.const(_w(r, max_pos, hidden), "pos_emb"), pos], axis=0)
    tokens = g.op("Gather", [g.const(_w(r, 2, hidden), "type_emb"), types], axis=0)
    x = layer_norm(g.op("Add", [g.op("Add", [words, positions]), tokens]))

    # Mask bias: (1 - mask[:, None, None, :]) * -10000.
    m = g.op("Unsqueeze", [mask, g.const(np.array([1, 2], np.int64))])
    m = g.op("Cast", [m], to=T.FLOAT)
    m = g.op("Sub", [g.const(np.float32(1.0)), m])
    bias = g.op("Mul", [m, g.const(np.float32(-10000.0))])

    for layer in range(layers):
        q = g.op("Transpose", [split_heads(linear(x, hidden, hidden))], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [split_heads(linear(x, hidden, hidden))], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [split_heads(linear(x, hidden, hidden))], perm=[0, 2, 1, 3])
        scores = g.op("MatMul", [q, k])
        scores = g.op("Div", [scores, g.const(np.float32(math.sqrt(dh)))])
        scores = g.op("Add", [scores, bias])
        probs = g.op("Softmax", [scores], axis=-1)
        ctx = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        merged_shape = g.op("Concat", [dim(ctx, 0), dim(ctx, 1),
                                       g.const(np.array([hidden], np.int64))], axis=0)
        ctx = g.op("Reshape", [ctx, merged_shape])
        attn = g.op("Add", [linear(ctx, hidden, hidden), x])
        x = layer_norm(attn) if layer + 1 < layers else layer_norm_decomposed(attn)
        f = linear(x, hidden, ffn)
        # Gelu: x * 0.5 * (1 + erf(x / sqrt(2))).
        e = g.op("Erf", [g.op("Div", [f, g.const(np.float32(math.sqrt(2.0)))])])
        f = g.op("Mul", [g.op("Mul", [f, g.op("Add", [e, g.const(np.float32(1.0))])]),
                         g.const(np.float32(0.5))])
        f = g.op("Add", [linear(f, ffn, hidden), x])
        x = layer_norm(f) if layer + 1 < layers else layer_norm_decomposed(f)

    g.nodes.append(h.make_node("Identity", [x], ["last_hidden_state"], name="out_hidden"))
    first = g.op("Gather", [x, g.const(np.array(0, np.int64))], axis=1)
    pooled = g.op("Gemm", [first, g.const(_w(r, hidden, hidden)), g.const(_w(r, hidden))],
                  transB=1)
    g.nodes.append(h.make_node("Tanh", [pooled], ["pooler_output"], name="pooler_tanh"))
    i64 = T.INT64
    return g.save(path,
                  [h.make_tensor_value_info(ids, i64, ["batch", "seq"]),
                   h.make_tensor_value_info(types, i64, ["batch", "seq"]),
                   h.make_tensor_value_info(mask, i64, ["batch", "seq"])],
                  [h.make_tensor_value_info("last_hidden_state", T.FLOAT,
                                            ["batch", "seq", hidden]),
                   h.make_tensor_value_info("pooler_output", T.FLOAT, ["batch", hidden])])


def bert_feeds(batch, seq, vocab=100, seed=0):
    r = np.random.RandomState(seed)
    mask = np.ones((batch, seq), np.int64)
    for b in range(batch):  # padding at the end of some rows
        mask[b, seq - (b * seq) // (batch + 1):] = 0
    mask[:, 0] = 1
    return {"input_ids": r.randint(0, vocab, (batch, seq)).astype(np.int64),
            "token_type_ids": (r.rand(batch, seq) < 0.3).astype(np.int64),
            "attention_mask": mask}


def cnn(path, classes=10, seed=0):
    g = _Graph(seed)
    r = g.rng

    def conv_bn_relu(x, cin, cout, k, stride, pad):
        y = g.op("Conv", [x, g.const(_w(r, cout, cin, k, k, scale=0.3)),
                          g.const(_w(r, cout))],
                 kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4)
        y = g.op("BatchNormalization",
                 [y, g.const(1 + _w(r, cout)), g.const(_w(r, cout)), g.const(_w(r, cout)),
                  g.const((1 + np.abs(_w(r, cout))).astype(np.float32))], epsilon=1e-5)
        return g.op("Relu", [y])

    y = conv_bn_relu("x", 3, 16, 3, 1, 1)
    y = g.op("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    y = conv_bn_relu(y, 16, 32, 3, 2, 1)
    y = g.op("GlobalAveragePool", [y])
    y = g.op("Flatten", [y], axis=1)
    g.nodes.append(h.make_node("Gemm", [y, g.const(_w(r, classes, 32)),
                                        g.const(_w(r, classes))], ["logits"],
                               name="fc", transB=1))
    return g.save(path, [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 32, 32])],
                  [h.make_tensor_value_info("logits", T.FLOAT, ["batch", classes])])



def branchy_cnn(path, classes=10, seed=1):
    """The ops torchvision's CNNs add around Conv with a symbolic batch: ReLU6 (Clip),
    a channel Split into branches, spatial Pad (constant and reflect), a channel Concat."""
    g = _Graph(seed)
    r = g.rng
    y = g.op("Conv", ["x", g.const(_w(r, 16, 3, 3, 3, scale=0.3)), g.const(_w(r, 16))],
             kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    y = g.op("Clip", [y, g.const(np.float32(0)), g.const(np.float32(6))])
    a, b = g.op("Split", [y, g.const(np.array([6, 10], np.int64))], outputs=2, axis=1)
    a = g.op("Pad", [a, g.const(np.array([0, 0, 1, 2, 0, 0, 1, 0], np.int64))])
    a = g.op("Conv", [a, g.const(_w(r, 8, 6, 3, 3, scale=0.3))], kernel_shape=[3, 3])
    b = g.op("Pad", [b, g.const(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))], mode="reflect")
    b = g.op("MaxPool", [b], kernel_shape=[3, 3], strides=[1, 1])
    y = g.op("Concat", [a, b, a], axis=1)
    y = g.op("Clip", [y, g.const(np.float32(-1)), g.const(np.float32(3))])
    y = g.op("GlobalAveragePool", [y])
    y = g.op("Flatten", [y], axis=1)
    g.nodes.append(h.make_node("Gemm", [y, g.const(_w(r, classes, 26)), g.const(_w(r, classes))],
                               ["logits"], name="fc", transB=1))
    return g.save(path, [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 16, 16])],
                  [h.make_tensor_value_info("logits", T.FLOAT, ["batch", classes])])