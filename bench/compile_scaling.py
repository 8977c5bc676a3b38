#!/usr/bin/env python3
"""Compile time against graph size: chains of N nodes (or N transformer layers), compiled by kiln.

    .venv/bin/python bench/compile_scaling.py [--model relu|matmul_tanh|transformer|bert_base]
                                              [--sizes 1000,4000,16000] [--kiln build/bin/kiln]
                                              [--out bench/results/compile_scaling.json]
                                              [--chart bench/results/compile_scaling.png]
                                              [--save-models DIR]

Every model is built with the onnx helper API, weights seeded (numpy default_rng(0)):
- relu (default): x float32 [1,64] -> Relu -> Relu -> ... (N nodes) -> y; no weights: it
  measures the passes' cost per op, not weight handling.
- matmul_tanh: x float32 [ROWS,WIDTH] -> (MatMul by a WIDTHxWIDTH weight -> Tanh) x N/2 -> y,
  N nodes (N/2 pairs); --width/--rows (default 64x64; 4x32 is the small-kernel case). Each
  pair is a loop nest too small for the thread pool: the case for function size and
  bufferization.
- transformer: N nodes of post-LN BERT-style encoder layers built from primitive ops (MatMul,
  Add, Reshape, Transpose, Softmax, LayerNormalization, erf-GELU: 34 nodes a layer, the layer
  count rounded up), hidden --width (default 64), 4 heads, sequence --rows (default 16).
- bert_base: BERT-base's shape (12 layers, hidden 768, 12 heads, intermediate 3072, sequence
  128, input embeddings [1,128,768]; 436 MB of weights like the exported model's encoder);
  --sizes is ignored (one model). For compile time, when torch (bench/export_models.py) is not
  at hand.
Each size is
compiled once to a shared library under /usr/bin/time when it exists (peak RSS) and timed
wall-clock; a compile that takes longer than --timeout seconds stops the sweep. Prints one line
per size (wall seconds, CPU seconds = user + system, peak MB, CPU microseconds per node) and,
with --time-report, kiln's own phase breakdown. Linear growth shows as a flat per-node column;
CPU time is the figure to compare on a loaded machine.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def relu_chain(n: int, width: int = 64):
    """The onnx.ModelProto of the chain (onnx imported here: drawing a chart from saved
    results needs only matplotlib)."""
    from onnx import TensorProto, helper
    nodes = []
    prev = "x"
    for i in range(n):
        out = "y" if i == n - 1 else f"t{i}"
        nodes.append(helper.make_node("Relu", [prev], [out], name=f"relu{i}"))
        prev = out
    graph = helper.make_graph(
        nodes, f"relu_chain_{n}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _graph(name, nodes, inputs, outputs, inits):
    from onnx import helper
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    # IR version 8 (opset 17's): onnxruntime reads it.
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def matmul_tanh_chain(n: int, rows: int = 64, width: int = 64):
    """n nodes: n/2 MatMul (weights [width,width], seeded) + Tanh pairs."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    prev = "x"
    pairs = max(1, n // 2)
    for i in range(pairs):
        w = f"w{i}"
        inits.append(numpy_helper.from_array(
            rng.uniform(-1.5 / width ** 0.5, 1.5 / width ** 0.5, (width, width))
            .astype(np.float32), w))
        nodes.append(helper.make_node("MatMul", [prev, w], [f"m{i}"], name=f"mm{i}"))
        out = "y" if i == pairs - 1 else f"t{i}"
        nodes.append(helper.make_node("Tanh", [f"m{i}"], [out], name=f"tanh{i}"))
        prev = out
    return _graph(f"matmul_tanh_{n}", nodes,
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, width])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, width])], inits)


NODES_PER_LAYER = 34


def encoder(layers: int, seq: int = 16, hidden: int = 64, heads: int = 4,
            intermediate: int | None = None, name: str = "encoder"):
    """`layers` post-LN BERT encoder layers of primitive ONNX ops (34 nodes each), input
    x float32 [1,seq,hidden] -> y, weights seeded."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    intermediate = intermediate or 4 * hidden
    head = hidden // heads
    nodes, inits = [], []

    def const(cname, value, dtype=np.float32):
        inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), cname))
        return cname

    def weight(wname, shape):
        scale = 1.0 / np.sqrt(shape[0])
        return const(wname, rng.uniform(-scale, scale, shape).astype(np.float32))

    def node(op, inputs, out, **attrs):
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    split = const("split_heads", [1, seq, heads, head], np.int64)
    merge = const("merge_heads", [1, seq, hidden], np.int64)
    scale = const("attn_scale", np.float32(np.sqrt(head)))
    sqrt2 = const("sqrt2", np.float32(np.sqrt(2.0)))
    one = const("one", np.float32(1.0))
    half = const("half", np.float32(0.5))
    x = "x"
    for l in range(layers):
        p = f"l{l}_"

        def linear(inp, n_in, n_out, tag):
            mm = node("MatMul", [inp, weight(p + tag + "_w", [n_in, n_out])], p + tag + "_mm")
            return node("Add", [mm, weight(p + tag + "_b", [n_out])], p + tag)

        def split_heads(t, tag):
            r = node("Reshape", [t, split], p + tag + "_r")
            return node("Transpose", [r], p + tag + "_t", perm=[0, 2, 1, 3])

        q = split_heads(linear(x, hidden, hidden, "q"), "q")
        k = split_heads(linear(x, hidden, hidden, "k"), "k")
        v = split_heads(linear(x, hidden, hidden, "v"), "v")
        kt = node("Transpose", [k], p + "kt", perm=[0, 1, 3, 2])
        scores = node("Div", [node("MatMul", [q, kt], p + "qk"), scale], p + "scores")
        probs = node("Softmax", [scores], p + "probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], p + "pv")], p + "ctx_t",
                   perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, merge], p + "ctx")
        h1 = node("LayerNormalization", [node("Add", [linear(ctx, hidden, hidden, "o"), x],
                                              p + "res1"),
                                         const(p + "ln1_s", np.ones(hidden)),
                                         const(p + "ln1_b", np.zeros(hidden))],
                  p + "ln1", axis=-1, epsilon=1e-12)
        ff = linear(h1, hidden, intermediate, "ff1")
        erf = node("Erf", [node("Div", [ff, sqrt2], p + "gelu_div")], p + "gelu_erf")
        gelu = node("Mul", [node("Mul", [ff, node("Add", [erf, one], p + "gelu_add")],
                                 p + "gelu_mul"), half], p + "gelu")
        h2 = node("Add", [linear(gelu, intermediate, hidden, "ff2"), h1], p + "res2")
        x = node("LayerNormalization", [h2, const(p + "ln2_s", np.ones(hidden)),
                                        const(p + "ln2_b", np.zeros(hidden))],
                 "y" if l == layers - 1 else p + "ln2", axis=-1, epsilon=1e-12)
    return _graph(name, nodes,
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, hidden])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, hidden])],
                  inits)


def build_model(kind: str, n: int, rows: int | None, width: int | None):
    if kind == "relu":
        return relu_chain(n, width or 64)
    if kind == "matmul_tanh":
        return matmul_tanh_chain(n, rows or 64, width or 64)
    if kind == "transformer":
        layers = -(-n // NODES_PER_LAYER)
        return encoder(layers, seq=rows or 16, hidden=width or 64, name=f"encoder_{n}")
    if kind == "bert_base":
        return encoder(12, seq=128, hidden=768, heads=12, intermediate=3072, name="bert_base")
    raise ValueError(kind)


def compile_once(kiln: pathlib.Path, model: pathlib.Path, out: pathlib.Path, timeout: float,
                 time_report: bool) -> dict:
    cmd = [str(kiln), "compile", str(model), "-o", str(out)]
    if time_report:
        cmd.append("--time-report")
    gnu_time = pathlib.Path("/usr/bin/time")
    if gnu_time.is_file():
        cmd = [str(gnu_time), "-f", "KILN_PEAK_KB=%M KILN_CPU=%U+%S", *cmd]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "timed_out": True, "seconds": timeout}
    seconds = time.monotonic() - start
    match = re.search(r"KILN_PEAK_KB=(\d+) KILN_CPU=([\d.]+)\+([\d.]+)", proc.stderr)
    return {"ok": proc.returncode == 0, "seconds": round(seconds, 3),
            "cpu_s": round(float(match.group(2)) + float(match.group(3)), 2) if match else None,
            "peak_mb": round(int(match.group(1)) / 1024, 1) if match else None,
            "stderr": proc.stderr if proc.returncode != 0 or time_report else ""}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="relu",
                        choices=["relu", "matmul_tanh", "transformer", "bert_base"],
                        help="the graph family (default relu)")
    parser.add_argument("--sizes", default="1000,4000,16000",
                        help="comma-separated node counts (default 1000,4000,16000)")
    parser.add_argument("--rows", type=int, help="matmul_tanh: x's rows; transformer: sequence")
    parser.add_argument("--width", type=int, help="x's columns (transformer: hidden size)")
    parser.add_argument("--save-models", type=pathlib.Path, metavar="DIR",
                        help="keep the .onnx files in DIR")
    parser.add_argument("--kiln", type=pathlib.Path,
                        default=ROOT / os.environ.get("KILN_BUILD_DIR", "build") / "bin" / "kiln")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds per compile; a longer one ends the sweep")
    parser.add_argument("--time-report", action="store_true",
                        help="print kiln's --time-report for each size")
    parser.add_argument("--out", type=pathlib.Path, help="write the results as JSON")
    parser.add_argument("--chart", type=pathlib.Path,
                        help="write a PNG chart (needs matplotlib)")
    parser.add_argument("--compare", type=pathlib.Path, metavar="JSON",
                        help="an earlier --out file (e.g. of main) drawn beside this run")
    parser.add_argument("--results-from", type=pathlib.Path, metavar="JSON",
                        help="take this run's results from an earlier --out file (compile nothing)")
    parser.add_argument("--label", default="kiln", help="this run's name in the chart")
    parser.add_argument("--compare-label", default="before", help="the --compare run's name")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.model == "bert_base":
        sizes = [12 * NODES_PER_LAYER]
    results = []
    if args.results_from:
        results = json.loads(args.results_from.read_text())
        sizes = []
    print(f"{'nodes':>7} {'wall s':>9} {'cpu s':>9} {'peak MB':>9} {'cpu us/node':>12}",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="kiln-scaling-") as tmp:
        for n in sizes:
            folder = args.save_models or pathlib.Path(tmp)
            folder.mkdir(parents=True, exist_ok=True)
            model = folder / f"{args.model}{n}.onnx"
            model.write_bytes(build_model(args.model, n, args.rows, args.width)
                              .SerializeToString())
            r = compile_once(args.kiln, model, pathlib.Path(tmp) / f"chain{n}.so",
                             args.timeout, args.time_report)
            r["nodes"] = n
            r["model"] = args.model
            results.append(r)
            if not r["ok"]:
                why = "timed out" if r.get("timed_out") else "failed"
                print(f"{n:>7} {why} after {r['seconds']} s\n{r.get('stderr', '')}", flush=True)
                break
            cpu = r["cpu_s"] if r["cpu_s"] is not None else r["seconds"]
            print(f"{n:>7} {r['seconds']:>9.2f} {cpu:>9.2f} {r['peak_mb'] or 0:>9.1f} "
                  f"{1e6 * cpu / n:>12.0f}", flush=True)
            if args.time_report:
                print(r["stderr"], flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(
            [{k: v for k, v in r.items() if k != "stderr"} for r in results], indent=1) + "\n")
    if args.chart:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(5, 3.5))
        series = [(args.label, results)]
        if args.compare:
            series.insert(0, (args.compare_label, json.loads(args.compare.read_text())))
        for label, rows in series:
            ok = [r for r in rows if r["ok"]]
            ax.plot([r["nodes"] for r in ok], [r["cpu_s"] or r["seconds"] for r in ok], "o-",
                    label=label)
        ax.legend()
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel({"relu": "Relu nodes in the chain",
                       "matmul_tanh": "MatMul + Tanh nodes in the chain",
                       "transformer": "nodes of the encoder layers"}.get(args.model, "nodes"))
        ax.set_ylabel("kiln compile, CPU s")
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        args.chart.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.chart, dpi=120)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
