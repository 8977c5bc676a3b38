#!/usr/bin/env python3
"""First figures for the shared models: compile time, artifact size, and kiln vs
onnxruntime median latency on the same inputs, one thread, interleaved.

    python bench/first_figures.py [--build build] [--models ../shared/models] [--repeat 20]

A latency ratio is printed only when kiln's outputs matched onnxruntime's
(rtol 1e-3, atol 1e-4) in the same run. (The full benchmark suite is planned.)
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort


def inputs_for(session, rng):
    feeds = {}
    for i in session.get_inputs():
        if "int64" in i.type:
            if "mask" in i.name:
                feeds[i.name] = np.ones(i.shape, np.int64)
            else:
                feeds[i.name] = rng.integers(0, 8192, size=i.shape, dtype=np.int64)
        else:
            feeds[i.name] = rng.standard_normal(i.shape).astype(np.float32)
    return feeds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.environ.get("KILN_BUILD_DIR", "build"))
    parser.add_argument("--models", default=os.environ.get("KILN_MODELS_DIR", "../shared/models"))
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved kiln/ort rounds")
    args = parser.parse_args()
    bindir = pathlib.Path(args.build) / "bin"
    print("| model | compile s | .so MB | kiln ms | onnxruntime ms | kiln/ort | max abs err |")
    print("|---|---|---|---|---|---|---|")
    for name in ["mobilenet_v2", "squeezenet1_1", "bert_mini"]:
        path = pathlib.Path(args.models) / f"{name}.onnx"
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            so = tmp / f"{name}.so"
            start = time.monotonic()
            subprocess.run([bindir / "kiln", "compile", path, "-o", so], check=True)
            compile_s = time.monotonic() - start
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            feeds = inputs_for(session, np.random.default_rng(0))
            cmd = [bindir / "kiln-run", so, "--threads", "1", "--output-dir", tmp / "out"]
            for k, v in feeds.items():
                np.save(tmp / f"{k}.npy", v)
                cmd += ["--input", f"{k}={tmp / (k + '.npy')}"]
            kiln_ms, ort_ms = [], []
            for _ in range(args.rounds):
                out = subprocess.run(cmd + ["--repeat", str(args.repeat)], check=True,
                                     capture_output=True, text=True).stdout
                kiln_ms.append(float(re.search(r"median=([0-9.]+)", out).group(1)))
                session.run(None, feeds)
                times = []
                for _ in range(args.repeat):
                    t = time.perf_counter()
                    expected = session.run(None, feeds)
                    times.append((time.perf_counter() - t) * 1e3)
                ort_ms.append(statistics.median(times))
            err = 0.0
            ok = True
            for o, ref in zip(session.get_outputs(), expected):
                got = np.load(tmp / "out" / f"{o.name}.npy")
                err = max(err, float(np.max(np.abs(got - ref))))
                ok &= bool(np.allclose(got, ref, rtol=1e-3, atol=1e-4))
            k, r = statistics.median(kiln_ms), statistics.median(ort_ms)
            ratio = f"{k / r:.2f}" if ok else "MISMATCH"
            print(f"| {name} | {compile_s:.1f} | {so.stat().st_size / 1e6:.1f} | {k:.2f} | "
                  f"{r:.2f} | {ratio} | {err:.2e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
