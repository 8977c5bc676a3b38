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


def torch_reference(name: str, count: int) -> dict | None:
    """Median ms of the same architecture (random weights) in PyTorch on the GPU, eager and
    CUDA-graph replay, fp32 (TF32 off), batch 1: a speed reference, not a correctness one.
    For an entry named ...-fp16 (gpu_bundle.py --precision fp16): the network and input in
    half precision (net.half()), PyTorch's own f16 inference."""
    try:
        import torch
        import torchvision
    except ImportError:
        return None
    half = name.endswith("-fp16")
    arch = {"model-mobilenet_v2": "mobilenet_v2", "model-squeezenet1_1": "squeezenet1_1",
            "model-resnet50": "resnet50"}.get(name.removesuffix("-fp16"))
    if arch is None or not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    net = getattr(torchvision.models, arch)().eval().cuda()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    if half:
        net, x = net.half(), x.half()
    result = {}
    with torch.inference_mode():
        for _ in range(20):
            net(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(count):
            t = time.perf_counter()
            net(x)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t) * 1e3)
        result["eager_ms"] = float(np.median(times))
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                net(x)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            net(x)
        times = []
        for _ in range(count):
            t = time.perf_counter()
            g.replay()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t) * 1e3)
        result["graph_ms"] = float(np.median(times))
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--device", action="append", help="only these devices (default: all)")
    ap.add_argument("--count", type=int, default=200, help="timed runs per benchmark")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--torch", action="store_true", help="time the PyTorch references too")
    ap.add_argument("--cpu-bench", action="store_true",
                    help="also time each benchmarked model's CPU code when the artifact has it")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    bundle = args.bundle.resolve()
    runner = bundle / "kiln-run"
    manifest = json.loads((bundle / "manifest.json").read_text())
    if args.device:
        manifest = [e for e in manifest
                    if e["device"] in args.device or e.get("run_device") in args.device]

    results = []
    failures = 0
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
        if problem:
            failures += 1
            c["failed"] += 1
            row["problem"] = problem
            print(f"FAIL {entry['device']} {entry['name']}: {problem}", flush=True)
        else:
            c["passed"] += 1
            if entry.get("bench"):
                row["kiln"] = bench_entry(bundle, runner, entry, args.count, args.timeout * 4)
                if args.torch:
                    row["torch"] = torch_reference(entry["name"], args.count)
        results.append(row)

    print(f"\n{len(manifest)} entries in {time.monotonic() - start:.0f} s")
    for device, c in counts.items():
        print(f"  {device}: {c['passed']} passed, {c['failed']} failed, "
              f"{c['rejected']} rejected at compile time")
    print("\nmodel                    device   kiln p50 ms  torch eager ms  torch graph ms")
    for row in results:
        if row.get("status") == "passed" and row.get("kiln") is not None:
            k = row["kiln"].get("p50", float("nan"))
            t = row.get("torch") or {}
            print(f"{row['name']:24s} {row['device']:8s} {k:11.3f}  "
                  f"{t.get('eager_ms', float('nan')):14.3f}  {t.get('graph_ms', float('nan')):14.3f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
