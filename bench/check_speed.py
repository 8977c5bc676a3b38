#!/usr/bin/env python3
"""How long `kiln check` takes on a BERT-base-sized encoder (docs/tools.md: under 2 s).

Builds a BERT-base-shaped ONNX encoder with onnx.helper (12 layers, hidden 768, 12 heads,
FFN 3072, vocab 30522, sequence 128: 415 nodes, 414 MiB of random weights; no trained model
is available offline, and `check` does not depend on the values) in a temporary folder,
then times `build/bin/kiln check` on it.

    .venv/bin/python bench/check_speed.py [--runs N] [--kiln PATH]
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parent.parent


def build_model(path):
    """Writes the encoder to `path`; returns its node count."""
    H, NH, FF, V, S, L = 768, 12, 3072, 30522, 128, 12
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    def w(name, shape):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.02).astype(np.float32), name))
        return name
    def c(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name)); return name
    n = [0]
    def node(op, ins, attrs=None, name=None):
        n[0] += 1
        out = f"t{n[0]}"
        nodes.append(helper.make_node(op, ins, [out], name=name or f"/{op}_{n[0]}", **(attrs or {})))
        return out
    def ln(x, p):
        return node("LayerNormalization", [x, w(p + ".g", [H]), w(p + ".b", [H])], {"axis": -1, "epsilon": 1e-12})
    emb = node("Gather", [w("word_emb", [V, H]), "input_ids"])
    emb = node("Add", [emb, w("pos_emb", [1, S, H])])
    x = ln(emb, "emb_ln")
    mask = node("Cast", ["attention_mask"], {"to": TensorProto.FLOAT})
    mask = node("Unsqueeze", [mask, c("ax12", np.array([1, 2], np.int64))])
    mask = node("Sub", [c("one", np.array(1.0, np.float32)), mask])
    mask = node("Mul", [mask, c("neg", np.array(-10000.0, np.float32))])
    shp_h = c("shp_h", np.array([1, S, NH, H // NH], np.int64))
    shp_o = c("shp_o", np.array([1, S, H], np.int64))
    for l in range(L):
        p = f"l{l}"
        def proj(nm, t):
            return node("Add", [node("MatMul", [t, w(f"{p}.{nm}.w", [H, H])]), w(f"{p}.{nm}.b", [H])])
        q = node("Transpose", [node("Reshape", [proj("q", x), shp_h])], {"perm": [0, 2, 1, 3]})
        k = node("Transpose", [node("Reshape", [proj("k", x), shp_h])], {"perm": [0, 2, 3, 1]})
        v = node("Transpose", [node("Reshape", [proj("v", x), shp_h])], {"perm": [0, 2, 1, 3]})
        s = node("Div", [node("MatMul", [q, k]), c(f"{p}.sc", np.array(8.0, np.float32))])
        a = node("Softmax", [node("Add", [s, mask])], {"axis": -1})
        o = node("Reshape", [node("Transpose", [node("MatMul", [a, v])], {"perm": [0, 2, 1, 3]}), shp_o])
        x = ln(node("Add", [proj("o", o), x]), f"{p}.ln1")
        h = node("Add", [node("MatMul", [x, w(f"{p}.f1.w", [H, FF])]), w(f"{p}.f1.b", [FF])])
        g = node("Mul", [node("Mul", [h, node("Add", [node("Erf", [node("Div", [h, c(f"{p}.s2", np.array(1.4142135, np.float32))])]), c(f"{p}.o1", np.array(1.0, np.float32))])]), c(f"{p}.h", np.array(0.5, np.float32))])
        f = node("Add", [node("MatMul", [g, w(f"{p}.f2.w", [FF, H])]), w(f"{p}.f2.b", [H])])
        x = ln(node("Add", [f, x]), f"{p}.ln2")
    nodes[-1].output[0] = "output"
    graph = helper.make_graph(nodes, "bert_base", [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, S]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, S])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, S, H])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return len(nodes)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--kiln", default=str(ROOT / "build" / "bin" / "kiln"))
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = pathlib.Path(tmp) / "bert_base.onnx"
        n = build_model(model)
        print(f"{model.name}: {n} nodes, {model.stat().st_size / 2**20:.0f} MiB")
        times = []
        for _ in range(args.runs):
            start = time.monotonic()
            r = subprocess.run([args.kiln, "check", str(model), "--quiet"],
                               capture_output=True, text=True)
            times.append(time.monotonic() - start)
            if r.returncode != 0:
                sys.exit(f"kiln check failed:\n{r.stdout}{r.stderr}")
        print("kiln check: " + ", ".join(f"{t:.2f} s" for t in times) +
              f" (median {sorted(times)[len(times) // 2]:.2f} s)")


if __name__ == "__main__":
    main()
