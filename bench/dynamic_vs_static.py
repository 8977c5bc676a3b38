#!/usr/bin/env python3
"""The same model compiled with a symbolic batch (one compile) and with the batch fixed
(--shape), run at one size: kiln-run --bench's p50 of each and their ratio (issue 17's
target: dynamic within 1.15x of static). Models are built with the onnx helper (seeded
weights): an MLP classifier, a LayerNorm + projection block with symbolic batch and
sequence, and test/e2e/dynamic_models.py's BERT-like encoder (batch, seq) and CNN
(batch). docs/dynamic-shapes.md, docs/benchmarks.md.

  bench/dynamic_vs_static.py [--build build] [--batch 64] [--seq 32] [--threads 1]
                             [--count 200] [--repeat 3] [--models mlp,block,bert,cnn]

On a shared machine the two are run alternately --repeat times and the lowest p50 of
each is kept (load only adds time).
"""

from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "test" / "e2e"))
import dynamic_models  # noqa: E402
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper


def w(seed, *shape):
    return numpy_helper.from_array(
        (np.random.RandomState(seed).standard_normal(shape) * 0.05).astype(np.float32))


def save(path, nodes, inputs, outputs, inits):
    for i, t in enumerate(inits):
        t.name = t.name or f"w{i}"
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    onnx.save(m, str(path))


def mlp(path):
    inits = [w(1, 512, 784), w(2, 512), w(3, 512, 256), w(4, 256), w(5, 256, 10), w(6, 10)]
    for t, n in zip(inits, ["w1", "b1", "w2", "b2", "w3", "b3"]):
        t.name = n
    nodes = [h.make_node("Gemm", ["x", "w1", "b1"], ["h1"], transB=1),
             h.make_node("Relu", ["h1"], ["r1"]),
             h.make_node("MatMul", ["r1", "w2"], ["m2"]),
             h.make_node("Add", ["m2", "b2"], ["a2"]),
             h.make_node("Relu", ["a2"], ["r2"]),
             h.make_node("Gemm", ["r2", "w3", "b3"], ["logits"]),
             h.make_node("Softmax", ["logits"], ["probs"], axis=-1)]
    save(path, nodes, [h.make_tensor_value_info("x", T.FLOAT, ["batch", 784])],
         [h.make_tensor_value_info("probs", T.FLOAT, ["batch", 10])], inits)
    return {"x": (784,)}


def block(path):
    d = 256
    inits = [w(1, d), w(2, d), w(3, d, d)]
    for t, n in zip(inits, ["g", "b", "w"]):
        t.name = n
    nodes = [h.make_node("LayerNormalization", ["x", "g", "b"], ["ln"], axis=-1),
             h.make_node("MatMul", ["ln", "w"], ["p"]),
             h.make_node("Tanh", ["p"], ["t"]),
             h.make_node("Add", ["t", "x"], ["y"])]
    save(path, nodes, [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", d])],
         [h.make_tensor_value_info("y", T.FLOAT, ["batch", "seq", d])], inits)
    return {"x": ("seq", d)}


def p50(kiln_run, so, npys, threads, count):
    args = [str(kiln_run), str(so), "--bench", "--count", str(count), "--warmup", "20",
            "--threads", str(threads)]
    for name, npy in npys.items():
        args += ["--input", f"{name}={npy}"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"p50=([0-9.]+)", out).group(1))


def feeds_for(name, model, a):
    """The model's inputs at the bench size, and the static --shape of each."""
    if name == "bert":
        dynamic_models.bert_like(model)
        return dynamic_models.bert_feeds(a.batch, a.seq)
    if name == "cnn":
        dynamic_models.cnn(model)
        return {"x": np.random.RandomState(0).standard_normal(
            (a.batch, 3, 32, 32)).astype(np.float32)}
    dims = {"mlp": mlp, "block": block}[name](model)
    rest = [a.seq if d == "seq" else d for d in dims["x"]]
    return {"x": np.random.RandomState(0).standard_normal(
        (a.batch, *rest)).astype(np.float32)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--models", default="mlp,block,bert,cnn")
    a = ap.parse_args()
    kiln = pathlib.Path(a.build) / "bin" / "kiln"
    kiln_run = pathlib.Path(a.build) / "bin" / "kiln-run"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        print(f"{'model':8} {'size':>12} {'static ms':>10} {'dynamic ms':>11} {'ratio':>6}")
        for name in a.models.split(","):
            model = tmp / f"{name}.onnx"
            feeds = feeds_for(name, model, a)
            npys, shapes = {}, []
            for input_name, array in feeds.items():
                npys[input_name] = tmp / f"{name}_{input_name}.npy"
                np.save(npys[input_name], array)
                shapes += ["--shape", f"{input_name}={','.join(map(str, array.shape))}"]
            subprocess.run([str(kiln), "compile", str(model), "-o", str(tmp / f"{name}_s.so"),
                            *shapes], check=True)
            subprocess.run([str(kiln), "compile", str(model), "-o", str(tmp / f"{name}_d.so")],
                           check=True)
            s = d = float("inf")
            for _ in range(a.repeat):
                s = min(s, p50(kiln_run, tmp / f"{name}_s.so", npys, a.threads, a.count))
                d = min(d, p50(kiln_run, tmp / f"{name}_d.so", npys, a.threads, a.count))
            size = "x".join(map(str, next(iter(feeds.values())).shape))
            print(f"{name:8} {size:>12} {s:10.4f} {d:11.4f} {d / s:6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
