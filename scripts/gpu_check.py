#!/usr/bin/env python3
"""Runs a bundle made by scripts/gpu_bundle.py on a machine with a GPU: each compiled model
through kiln-run on its device, outputs compared with onnxruntime's (saved in the bundle), and the
models marked for timing benchmarked. Needs python3 and numpy only; optionally PyTorch for a
reference timing of the same architectures (--torch).

    python3 gpu_check.py BUNDLE [--device vulkan] [--count 200] [--torch] [--json OUT.json]

Prints one line per failure and a summary table; exits 1 when any compiled model failed to run
or gave different numbers.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str | None:
    if got.dtype != want.dtype:
        return f"output {name!r}: dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"output {name!r}: shape {got.shape}, expected {want.shape}"
    if np.issubdtype(want.dtype, np.floating):
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        both_nan = np.isnan(g) & np.isnan(w)
        bad = ~(np.isclose(g, w, rtol=rtol, atol=atol) | both_nan)
        if bad.any():
            idx = tuple(np.argwhere(bad)[0])
            err = np.abs(g - w)[~both_nan]
            return (f"output {name!r}: {int(bad.sum())} of {want.size} differ "
                    f"(max abs {np.nanmax(err):.3g}); first at {idx}: {g[idx]!r} vs {w[idx]!r}")
    elif not np.array_equal(got, want):
        bad = np.argwhere(got != want)
        idx = tuple(bad[0])
        return f"output {name!r}: {len(bad)} of {want.size} differ; first at {idx}"
    return None


def run_entry(bundle: Path, runner: Path, entry: dict, timeout: float) -> str | None:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [str(runner), str(bundle / entry["artifact"]), "--device",
               entry.get("run_device", entry["device"]), "--output-dir", tmp]
        for name, path in entry["inputs"].items():
            cmd += ["--input", f"{name}={bundle / path}"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"timed out after {timeout:.0f} s"
        if r.returncode != 0:
            return f"kiln-run exit {r.returncode}: {r.stderr.strip()[-400:]}"
        for name, path in entry["expected"].items():
            out = Path(tmp) / f"{name}.npy"
            if not out.is_file():
                return f"no output file for {name!r}"
            problem = compare(name, np.load(out), np.load(bundle / path), entry["rtol"],
                              entry["atol"])
            if problem:
                return problem
    return None


def bench_entry(bundle: Path, runner: Path, entry: dict, count: int, timeout: float,
                device: str | None = None) -> dict | None:
    cmd = [str(runner), str(bundle / entry["artifact"]), "--device",
           device or entry.get("run_device", entry["device"]),
           "--bench", "--warmup", "20", "--count", str(count)]
    for name, path in entry["inputs"].items():
        cmd += ["--input", f"{name}={bundle / path}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        return None
    m = re.search(r"p50=([0-9.]+)\S*\s+p90=([0-9.]+)\S*\s+p99=([0-9.]+)", r.stdout)
    return {"p50": float(m.group(1)), "p90": float(m.group(2)), "p99": float(m.group(3))} \
        if m else {"raw": r.stdout.strip()}


def torch_reference(entry: dict, count: int, rows: list[dict]) -> dict | None:
    """PyTorch's timings of ENTRY's architecture, batch and precision: from ROWS (a
    gpu_torch_reference.py --json file) when they have it, else measured now (eager and CUDA
    graph only) where PyTorch is installed."""
    arch = entry.get("arch") or entry["name"].removeprefix("model-")
    key = (arch, entry.get("batch", 1), entry.get("precision", "fp32"))
    for row in rows:
        if (row["arch"], row["batch"], row["precision"]) == key:
            return row
    try:
        import torch
        import gpu_torch_reference
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    try:
        return gpu_torch_reference.reference(*key, count, False, False)
    except Exception as e:  # an architecture PyTorch does not have (bert_mini)
        return {"error": str(e)[:200]}


def sanitize(bundle: Path, runner: Path, entry: dict, timeout: float) -> str:
    """One run of ENTRY under compute-sanitizer's memcheck, kernel by kernel (no graph):
    'clean', or the sanitizer's summary."""
    import os
    import shutil
    tool = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [tool, "--tool", "memcheck", "--error-exitcode", "9", str(runner),
               str(bundle / entry["artifact"]), "--device", "cuda", "--output-dir", tmp]
        for name, path in entry["inputs"].items():
            cmd += ["--input", f"{name}={bundle / path}"]
        env = dict(os.environ, KILN_CUDA_GRAPH="0")
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except (subprocess.TimeoutExpired, FileNotFoundError) as e:
            return f"not run: {e}"
    summary = [ln for ln in (r.stdout + r.stderr).splitlines() if "ERROR SUMMARY" in ln]
    if r.returncode == 0:
        return "clean" + (f" ({summary[-1].strip()})" if summary else "")
    return f"exit {r.returncode}: " + " | ".join((r.stdout + r.stderr).strip().splitlines()[-6:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--device", action="append", help="only these devices (default: all)")
    ap.add_argument("--count", type=int, default=200, help="timed runs per benchmark")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--torch", action="store_true", help="time the PyTorch references too")
    ap.add_argument("--torch-json", type=Path,
                    help="PyTorch timings measured before (gpu_torch_reference.py --json)")
    ap.add_argument("--sanitize", default="",
                    help="a regex: benchmarked cuda entries whose name matches also run once "
                         "under compute-sanitizer memcheck")
    ap.add_argument("--cpu-bench", action="store_true",
                    help="also time each benchmarked model's CPU code when the artifact has it")
    ap.add_argument("--names", help="only the entries whose name matches this regex")
    ap.add_argument("--no-bench", action="store_true", help="check only, time nothing")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    bundle = args.bundle.resolve()
    runner = bundle / "kiln-run"
    manifest = json.loads((bundle / "manifest.json").read_text())
    if args.device:
        manifest = [e for e in manifest
                    if e["device"] in args.device or e.get("run_device") in args.device]

    if args.names:
        manifest = [e for e in manifest if re.search(args.names, e["name"])]
    results = []
    failures = 0
    torch_rows = json.loads(args.torch_json.read_text()) if args.torch_json and \
        args.torch_json.is_file() else []
    # The CUDA back end's unit tests, where the bundle has them and cuda entries run.
    cuda_tests = bundle / "kiln_cuda_tests"
    if cuda_tests.is_file() and any(e.get("run_device", e["device"]) == "cuda"
                                    for e in manifest):
        r = subprocess.run([str(cuda_tests)], capture_output=True, text=True,
                           timeout=args.timeout)
        tail = "\n".join(r.stdout.strip().splitlines()[-12:])
        print(f"kiln_cuda_tests: exit {r.returncode}\n{tail}", flush=True)
        if r.returncode != 0:
            failures += 1
    counts: dict[str, dict[str, int]] = {}
    start = time.monotonic()
    for entry in manifest:
        c = counts.setdefault(entry["device"], {"passed": 0, "failed": 0, "rejected": 0})
        if "rejected" in entry:
            c["rejected"] += 1
            results.append({**entry, "status": "rejected"})
            continue
        problem = run_entry(bundle, runner, entry, args.timeout)
        row = {"name": entry["name"], "device": entry["device"],
               "status": "failed" if problem else "passed"}
        if entry.get("flops"):
            row["flops"] = entry["flops"]
        if problem:
            failures += 1
            c["failed"] += 1
            row["problem"] = problem
            print(f"FAIL {entry['device']} {entry['name']}: {problem}", flush=True)
        else:
            c["passed"] += 1
            if entry.get("bench") and not args.no_bench:
                row["kiln"] = bench_entry(bundle, runner, entry, args.count, args.timeout * 4)
                if args.torch or torch_rows:
                    row["torch"] = torch_reference(entry, args.count, torch_rows)
            if entry.get("bench") and args.sanitize and entry.get("run_device") == "cuda" and \
                    re.search(args.sanitize, entry["name"]):
                row["sanitizer"] = sanitize(bundle, runner, entry, args.timeout * 4)
                print(f"compute-sanitizer {entry['name']}: {row['sanitizer']}", flush=True)
                if not row["sanitizer"].startswith("clean"):
                    failures += 1
        results.append(row)

    print(f"\n{len(manifest)} entries in {time.monotonic() - start:.0f} s")
    for device, c in counts.items():
        print(f"  {device}: {c['passed']} passed, {c['failed']} failed, "
              f"{c['rejected']} rejected at compile time")
    nan = float("nan")
    print("\nmodel                      device      kiln p50 ms  torch eager  torch graph  "
          "torch.compile  kiln/eager  kiln/compile  TFLOP/s")
    for row in results:
        if row.get("status") == "passed" and row.get("kiln") is not None:
            k = row["kiln"].get("p50", nan)
            t = row.get("torch") or {}
            eager, compiled = t.get("eager_ms", nan), t.get("compiled_ms", nan)
            # Benchmark cases with a FLOP count (models.py bench_flops): TFLOP/s of p50.
            tflops = ""
            if row.get("flops"):
                row["tflops"] = row["flops"] / (k * 1e-3) / 1e12
                tflops = f"{row['tflops']:8.1f}"
            print(f"{row['name']:26s} {row['device']:10s} {k:11.3f}  {eager:11.3f}  "
                  f"{t.get('graph_ms', nan):11.3f}  {compiled:13.3f}  {k / eager:10.2f}  "
                  f"{k / compiled:12.2f}  {tflops}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
