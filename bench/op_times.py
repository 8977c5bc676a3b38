#!/usr/bin/env python3
"""Where a compiled model's run time goes, by ONNX op family.

    .venv/bin/python bench/op_times.py MODEL.so [--threads N] [--repeat N] [--top K] [--json F]

Runs `kiln-run MODEL.so --profile TRACE --repeat N --threads T` (seeded random inputs;
one warm-up run, left out) and sums the runtime profile's `kernel` events (one per
parallel loop, named by the ONNX nodes it computes: docs/tools.md, "Profiles") by the op
type of the loop's first node, the op the others were fused into. What is left of each
run is the entry's sequential code (small ops not split over threads), shown as
"(sequential code)". Per family: ms per run, share of the run, kernels per run, and the
op types fused into it. bench/loop_times.py gives the same loops' wall vs busiest-thread
time (waiting at 2 threads); this gives their names.
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


def profile(kiln_run: pathlib.Path, so: str, threads: int, repeat: int) -> dict:
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
    fam = collections.defaultdict(lambda: {"us": 0.0, "calls": 0, "fused": collections.Counter()})
    by_kernel = collections.defaultdict(float)
    for e in kernels:
        ops = OP_RE.findall(e["name"]) or ["(unnamed)"]
        f = fam[ops[0]]
        f["us"] += e["dur"]
        f["calls"] += 1
        for o in set(ops[1:]) - {ops[0]}:
            f["fused"][o] += 1
        by_kernel[e["name"]] += e["dur"]
    kernel_us = sum(f["us"] for f in fam.values())
    rows = [{"family": k, "ms": v["us"] / n / 1e3, "share": v["us"] / run_us,
             "kernels": v["calls"] / n, "fused": sorted(v["fused"])} for k, v in fam.items()]
    rows.append({"family": "(sequential code)", "ms": (run_us - kernel_us) / n / 1e3,
                 "share": (run_us - kernel_us) / run_us, "kernels": 0, "fused": []})
    rows.sort(key=lambda r: -r["ms"])
    top = sorted(by_kernel.items(), key=lambda kv: -kv[1])
    return {"model": so, "threads": threads, "runs": n, "run_ms": run_us / n / 1e3,
            "families": rows, "top_kernels": [{"name": k, "ms": v / n / 1e3} for k, v in top]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", metavar="MODEL.so")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--top", type=int, default=5, help="also list the K slowest kernels")
    p.add_argument("--json", default=None, help="write the figures to this file")
    args = p.parse_args()
    build = pathlib.Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build"))
    res = profile(build / "bin" / "kiln-run", args.model, args.threads, args.repeat)
    print(f"{pathlib.Path(args.model).name}: {res['run_ms']:.3f} ms per run "
          f"({res['runs']} runs, {args.threads} thread(s), profiling on)")
    print(f"{'ms/run':>9} {'%run':>6} {'loops':>6}  family (fused into it)")
    for r in res["families"]:
        fused = f" (+{', '.join(r['fused'])})" if r["fused"] else ""
        print(f"{r['ms']:9.3f} {100 * r['share']:5.1f}% {r['kernels']:6.0f}  {r['family']}{fused}")
    if args.top:
        print("slowest kernels:")
        for k in res["top_kernels"][:args.top]:
            print(f"{k['ms']:9.3f}  {k['name'][:150]}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
