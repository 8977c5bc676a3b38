#!/usr/bin/env python3
"""Where a compiled model's run time goes, by ONNX op family.

    .venv/bin/python bench/op_times.py MODEL.so [--threads N] [--repeat N] [--top K] [--json F]
                                       [--onnx MODEL.onnx [--ort]] [--median]

Runs `kiln-run MODEL.so --profile TRACE --repeat N --threads T` (seeded random inputs;
one warm-up run, left out) and sums the runtime profile's `kernel` events (one per
parallel loop, named by the ONNX nodes it computes: docs/tools.md, "Profiles") by the op
type of the loop's first node, the op the others were fused into. What is left of each
run is the entry's sequential code (small ops not split over threads), shown as
"(sequential code)". --ort adds onnxruntime's own profile of the same model by op type,
for setting the two side by side (its fused nodes count under their own types). Per family: ms per run, share of the run, kernels per run, and the
op types fused into it. bench/loop_times.py gives the same loops' wall vs busiest-thread
time (waiting at 2 threads); this gives their names. --median (both sides) takes each
kernel's / node's median time per run over the runs instead of the mean, and the run as
their sum plus the median time outside them: on a shared machine a preempted kernel inflates
the mean by milliseconds, the median not. Note that kiln fuses activations into its
kernels (a SiLU into the conv before it) where onnxruntime runs them as nodes of their own
(QuickGelu): compare a kernel family with the conv plus its activation.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OP_RE = re.compile(r"\(([A-Za-z0-9_]+)\)")


def conv_kinds(onnx_path: str) -> dict[str, str]:
    """ONNX Conv node name -> "Conv 1x1" / "Conv 3x3" / "Conv grouped 3x3" / "Conv depthwise 3x3"."""
    import onnx
    m = onnx.load(onnx_path, load_external_data=False)
    shapes = {t.name: list(t.dims) for t in m.graph.initializer}
    kinds = {}
    for i, n in enumerate(m.graph.node):
        if n.op_type != "Conv":
            continue
        name = n.name or f"Conv_{i}"  # the name kiln's importer gives an unnamed node
        a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        w = shapes.get(n.input[1]) if len(n.input) > 1 else None
        k = list(a.get("kernel_shape", w[2:] if w else []))
        g = a.get("group", 1)
        kind = "depthwise " if g > 1 and w and w[1] == 1 else "grouped " if g > 1 else ""
        kinds[name] = f"Conv {kind}{'x'.join(map(str, k))}".rstrip()
        # onnxruntime names its NCHWc convolutions after their output tensor, that of the
        # activation when one was fused in: "<tensor>_nchwc".
        kinds["tensor:" + n.output[0]] = kinds[name]
    for n in m.graph.node:
        if n.input and "tensor:" + n.input[0] in kinds and n.op_type != "Conv":
            kinds.setdefault("tensor:" + n.output[0], kinds["tensor:" + n.input[0]])
    return kinds


def per_run_medians(runs: list[dict], events: list[dict], key) -> dict[str, float]:
    """Per key (a kernel or node name), the median over `runs` of its time (us) in each
    run: on a shared machine a preempted kernel inflates the mean of its run, not the
    median over runs (--median)."""
    import statistics
    spans = [(r["ts"], r["ts"] + r["dur"]) for r in runs]
    per_run = collections.defaultdict(lambda: [0.0] * len(runs))
    for e in events:
        for i, (lo, hi) in enumerate(spans):
            if lo <= e["ts"] <= hi:
                per_run[key(e)][i] += e["dur"]
                break
    return {k: statistics.median(v) for k, v in per_run.items()}


def profile(kiln_run: pathlib.Path, so: str, threads: int, repeat: int,
            kinds: dict[str, str] | None = None, median: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        trace = pathlib.Path(tmp) / "trace.json"
        cmd = [str(kiln_run), so, "--threads", str(threads), "--repeat", str(repeat),
               "--profile", str(trace)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 or not trace.is_file():
            sys.exit(f"op_times: {' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
        doc = json.loads(trace.read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    runs = sorted((e for e in events if e.get("cat") == "run"), key=lambda e: e["ts"])
    if len(runs) < 2:
        sys.exit("op_times: the trace has fewer than 2 runs")
    timed = runs[1:]  # the first run warms up
    start = timed[0]["ts"]
    kernels = [e for e in events if e.get("cat") == "kernel" and e["ts"] >= start]
    run_us = sum(e["dur"] for e in timed)
    n = len(timed)
    # --median: each kernel's median time per run (times n, so that the sums below
    # divide back to it); the run: those plus the median over runs of the time outside
    # kernels (a preempted run inflates only its own).
    medians = per_run_medians(timed, kernels, lambda e: e["name"]) if median else None
    if median:
        import statistics
        outside = per_run_medians(timed, [{"ts": r["ts"], "dur": r["dur"]} for r in timed]
                                  + [{"ts": e["ts"], "dur": -e["dur"]} for e in kernels],
                                  lambda e: "outside")["outside"]
        run_us = (sum(medians.values()) + outside) * n
    fam = collections.defaultdict(lambda: {"us": 0.0, "calls": 0, "fused": collections.Counter()})
    by_kernel = collections.defaultdict(float)
    for e in kernels:
        ops = OP_RE.findall(e["name"]) or ["(unnamed)"]
        key = ops[0]
        if kinds and ops[0] == "Conv":
            key = kinds.get(e["name"].split(" (", 1)[0], "Conv")
        f = fam[key]
        f["calls"] += 1
        for o in set(ops[1:]) - {ops[0]}:
            f["fused"][o] += 1
        if medians is None:
            f["us"] += e["dur"]
            by_kernel[e["name"]] += e["dur"]
        elif e["name"] not in by_kernel:
            f["us"] += medians[e["name"]] * n
            by_kernel[e["name"]] = medians[e["name"]] * n
    kernel_us = sum(f["us"] for f in fam.values())
    rows = [{"family": k, "ms": v["us"] / n / 1e3, "share": v["us"] / run_us,
             "kernels": v["calls"] / n, "fused": sorted(v["fused"])} for k, v in fam.items()]
    rows.append({"family": "(sequential code)", "ms": (run_us - kernel_us) / n / 1e3,
                 "share": (run_us - kernel_us) / run_us, "kernels": 0, "fused": []})
    rows.sort(key=lambda r: -r["ms"])
    top = sorted(by_kernel.items(), key=lambda kv: -kv[1])
    return {"model": so, "threads": threads, "runs": n, "run_ms": run_us / n / 1e3,
            "families": rows, "top_kernels": [{"name": k, "ms": v / n / 1e3} for k, v in top]}


def ort_profile(onnx_path: str, threads: int, repeat: int, kinds: dict[str, str],
                median: bool = False) -> dict:
    """onnxruntime's own per-node profile of the same model (ORT_ENABLE_ALL, as bench.py),
    summed by op type (Conv split as above; a fused node counts under its own op type, e.g.
    FusedConv), ms per run after one warm-up run."""
    import numpy as np
    import onnxruntime as ort
    sys.path.insert(0, str(ROOT / "bench"))
    import bench  # noqa: E402  (make_inputs: the harness's seeded inputs)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.enable_profiling = True
    with tempfile.TemporaryDirectory() as tmp:
        so.profile_file_prefix = str(pathlib.Path(tmp) / "ort")
        sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        feeds = bench.make_inputs(sess, 0)
        sess.run(None, feeds)
        for _ in range(repeat):
            sess.run(None, feeds)
        events = json.loads(pathlib.Path(sess.end_profiling()).read_text())
    runs = [e for e in events if e.get("cat") == "Session" and e["name"] == "model_run"][1:]
    start = runs[0]["ts"]
    nodes = [e for e in events if e.get("cat") == "Node" and e["ts"] >= start
             and e["name"].endswith("_kernel_time")]
    n = len(runs)
    medians = per_run_medians(runs, nodes, lambda e: e["name"]) if median else None
    fam = collections.defaultdict(float)
    seen = set()
    for e in nodes:
        op = e.get("args", {}).get("op_name", "?")
        node = e["name"][: -len("_kernel_time")]
        if op in ("Conv", "FusedConv"):  # FusedConv: a Conv with its activation fused
            op = kinds.get(node) or kinds.get("tensor:" + node.removesuffix("_nchwc"), op)
        if medians is None:
            fam[op] += e["dur"]
        elif e["name"] not in seen:
            seen.add(e["name"])
            fam[op] += medians[e["name"]] * n
    run_us = sum(e["dur"] for e in runs)
    if median:
        outside = per_run_medians(runs, [{"ts": r["ts"], "dur": r["dur"]} for r in runs]
                                  + [{"ts": e["ts"], "dur": -e["dur"]} for e in nodes],
                                  lambda e: "outside")["outside"]
        run_us = (sum(medians.values()) + outside) * n
    rows = sorted(({"family": k, "ms": v / n / 1e3, "share": v / run_us} for k, v in fam.items()),
                  key=lambda r: -r["ms"])
    return {"run_ms": run_us / n / 1e3, "runs": n, "families": rows}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", metavar="MODEL.so")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--top", type=int, default=5, help="also list the K slowest kernels")
    p.add_argument("--json", default=None, help="write the figures to this file")
    p.add_argument("--onnx", default=None, metavar="MODEL.onnx",
                   help="the source model: split Conv by kind and kernel size")
    p.add_argument("--ort", action="store_true",
                   help="also onnxruntime's per-node profile of --onnx by op type (needs onnxruntime)")
    p.add_argument("--median", action="store_true",
                   help="each kernel's (node's) median time per run over the runs, summed by "
                        "family, and the median run, instead of means: steadier on a loaded "
                        "machine, where a preempted kernel inflates the mean")
    args = p.parse_args()
    build = pathlib.Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build"))
    kinds = conv_kinds(args.onnx) if args.onnx else None
    res = profile(build / "bin" / "kiln-run", args.model, args.threads, args.repeat, kinds,
                  args.median)
    print(f"{pathlib.Path(args.model).name}: {res['run_ms']:.3f} ms per run "
          f"({res['runs']} runs, {args.threads} thread(s), profiling on"
          f"{', medians' if args.median else ''})")
    print(f"{'ms/run':>9} {'%run':>6} {'loops':>6}  family (fused into it)")
    for r in res["families"]:
        fused = f" (+{', '.join(r['fused'])})" if r["fused"] else ""
        print(f"{r['ms']:9.3f} {100 * r['share']:5.1f}% {r['kernels']:6.0f}  {r['family']}{fused}")
    if args.top:
        print("slowest kernels:")
        for k in res["top_kernels"][:args.top]:
            print(f"{k['ms']:9.3f}  {k['name'][:150]}")
    if args.ort:
        if not args.onnx:
            p.error("--ort needs --onnx")
        o = ort_profile(args.onnx, args.threads, args.repeat, kinds, args.median)
        res["ort"] = o
        print(f"onnxruntime: {o['run_ms']:.3f} ms per run ({o['runs']} runs, profiling on"
              f"{', medians' if args.median else ''})")
        for r in o["families"]:
            print(f"{r['ms']:9.3f} {100 * r['share']:5.1f}%  {r['family']}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
