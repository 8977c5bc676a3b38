#!/usr/bin/env python3
"""Issue 17's BERT-base sequence sweep: one BERT-base-sized encoder with symbolic batch and
sequence (test/e2e/dynamic_models.py's bert_like, the form torch.onnx.export with
dynamic_axes emits: 12 layers, hidden 768, 12 heads, FFN 3072, vocabulary 30522; seeded
weights), compiled once by kiln without --shape, run at batch 1 and each sequence length
against the same model compiled static for that length and onnxruntime, at each thread
count. Wall-clock p50 (kiln-run --bench; onnxruntime's median of --count runs), the lowest
of --repeat interleaved rounds. With --cpu-time (one thread only): CPU milliseconds per
run instead (kiln-run's user + sys time over --count runs less a 1-run baseline;
onnxruntime's process time), which other work on a shared machine does not inflate.
docs/dynamic-shapes.md, docs/benchmarks.md.

  bench/bert_seq_sweep.py [--build build] [--seqs 16,64,128,384] [--threads 1,2]
                          [--count 20] [--repeat 2] [--layers 12] [--no-static]
                          [--cpu-time]
"""

from __future__ import annotations

import argparse
import pathlib
import re
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "test" / "e2e"))
import dynamic_models  # noqa: E402


def kiln_p50(kiln_run, so, npys, threads, count):
    args = [str(kiln_run), str(so), "--bench", "--count", str(count), "--warmup", "3",
            "--threads", str(threads)]
    for name, npy in npys.items():
        args += ["--input", f"{name}={npy}"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"p50=([0-9.]+)", out).group(1))


def kiln_cpu(kiln_run, so, npys, count):
    def run(n):
        args = [str(kiln_run), str(so), "--bench", "--count", str(n), "--warmup", "1",
                "--threads", "1"]
        for name, npy in npys.items():
            args += ["--input", f"{name}={npy}"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(args, capture_output=True, text=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return (run(count + 1) - run(1)) * 1e3 / count


def ort_cpu(model, feeds, count):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    for _ in range(3):
        sess.run(None, feeds)
    t = time.process_time()
    for _ in range(count):
        sess.run(None, feeds)
    return (time.process_time() - t) * 1e3 / count


def ort_p50(model, feeds, threads, count):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    for _ in range(3):
        sess.run(None, feeds)
    times = []
    for _ in range(count):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--seqs", default="16,64,128,384")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--no-static", action="store_true")
    ap.add_argument("--cpu-time", action="store_true")
    a = ap.parse_args()
    if a.cpu_time:
        a.threads = "1"
    kiln = pathlib.Path(a.build) / "bin" / "kiln"
    kiln_run = pathlib.Path(a.build) / "bin" / "kiln-run"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        model = dynamic_models.bert_like(tmp / "bert_base_dyn.onnx", vocab=30522, hidden=768,
                                         heads=12, layers=a.layers, ffn=3072)
        dyn = tmp / "dyn.so"
        subprocess.run([str(kiln), "compile", str(model), "-o", str(dyn)], check=True)
        print(f"{'seq':>4} {'thr':>3} {'static ms':>10} {'dynamic ms':>11} {'ort ms':>8} "
              f"{'dyn/static':>10} {'dyn/ort':>8}", flush=True)
        for seq in map(int, a.seqs.split(",")):
            feeds = dynamic_models.bert_feeds(1, seq, vocab=30522)
            npys = {}
            for name, array in feeds.items():
                npys[name] = tmp / f"{name}_{seq}.npy"
                np.save(npys[name], array)
            static = None
            if not a.no_static:
                static = tmp / f"static_{seq}.so"
                shapes = []
                for name, array in feeds.items():
                    shapes += ["--shape", f"{name}={','.join(map(str, array.shape))}"]
                subprocess.run([str(kiln), "compile", str(model), "-o", str(static), *shapes],
                               check=True)
            for threads in map(int, a.threads.split(",")):
                s = d = o = float("inf")
                for _ in range(a.repeat):
                    if a.cpu_time:
                        if static:
                            s = min(s, kiln_cpu(kiln_run, static, npys, a.count))
                        d = min(d, kiln_cpu(kiln_run, dyn, npys, a.count))
                        o = min(o, ort_cpu(model, feeds, a.count))
                        continue
                    if static:
                        s = min(s, kiln_p50(kiln_run, static, npys, threads, a.count))
                    d = min(d, kiln_p50(kiln_run, dyn, npys, threads, a.count))
                    o = min(o, ort_p50(model, feeds, threads, a.count))
                ratio = f"{d / s:10.2f}" if static else f"{'-':>10}"
                print(f"{seq:>4} {threads:>3} {s:10.3f} {d:11.3f} {o:8.3f} {ratio} "
                      f"{d / o:8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
