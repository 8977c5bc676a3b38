#!/usr/bin/env python3
"""Compile time against graph size: chains of N Relu nodes, compiled by kiln.

    .venv/bin/python bench/compile_scaling.py [--sizes 1000,4000,16000] [--kiln build/bin/kiln]
                                              [--out bench/results/compile_scaling.json]
                                              [--chart bench/results/compile_scaling.png]

Each model is x float32 [1,64] -> Relu -> Relu -> ... (N nodes) -> y, built with the onnx
helper API (no weights: it measures the passes' cost per op, not weight handling). Each size is
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
    parser.add_argument("--sizes", default="1000,4000,16000",
                        help="comma-separated chain lengths (default 1000,4000,16000)")
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
    results = []
    if args.results_from:
        results = json.loads(args.results_from.read_text())
        sizes = []
    print(f"{'nodes':>7} {'wall s':>9} {'cpu s':>9} {'peak MB':>9} {'cpu us/node':>12}",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="kiln-scaling-") as tmp:
        for n in sizes:
            model = pathlib.Path(tmp) / f"chain{n}.onnx"
            model.write_bytes(relu_chain(n).SerializeToString())
            r = compile_once(args.kiln, model, pathlib.Path(tmp) / f"chain{n}.so",
                             args.timeout, args.time_report)
            r["nodes"] = n
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
        ax.set_xlabel("Relu nodes in the chain")
        ax.set_ylabel("kiln compile, CPU s")
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        args.chart.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.chart, dpi=120)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
