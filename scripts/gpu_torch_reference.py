#!/usr/bin/env python3
"""PyTorch on the same GPU as a speed reference for kiln's GPU builds (issue 15's targets): the
architectures of the bundle's models with random weights, timed eager, replayed as a CUDA graph,
and through torch.compile (default mode), at each batch and precision asked for. Latency: each
timed run is followed by a synchronize; the median of COUNT runs after warm-ups. fp32 runs with
TF32 off (kiln's default is exact f32); fp16 runs the model in half (model.half()).

    python3 gpu_torch_reference.py --configs resnet50:1:fp32,bert_base:8:fp16 [--compile-batches 1]
        [--count 100] [--json OUT.json] [--warm-only]

--warm-only compiles the torch.compile variants and exits: run it in the background while
something else uses the GPU lightly, and the timed run later finds inductor's caches warm.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np


def build(arch: str, batch: int, half: bool):
    import torch
    torch.manual_seed(0)
    if arch.startswith("matmul"):  # matmulN: an N x N x N product (cuBLAS), the peak reference
        n = int(arch.removeprefix("matmul"))
        a = torch.randn(batch, n, n, device="cuda")
        b = torch.randn(batch, n, n, device="cuda")
        if half:
            a, b = a.half(), b.half()
        return (lambda x, y: torch.matmul(x, y)), (a, b)
    if arch == "bert_base":
        import transformers
        config = transformers.BertConfig()  # BERT-base: 12 layers, hidden 768, 12 heads
        net = transformers.BertModel(config, add_pooling_layer=False)
        ids = torch.randint(0, 1000, (batch, 128), device="cuda")
        mask = torch.ones(batch, 128, dtype=torch.long, device="cuda")
        mask[:, 112:] = 0
        args = (ids, mask)
    else:
        import torchvision
        net = getattr(torchvision.models, arch)()
        args = (torch.randn(batch, 3, 224, 224, device="cuda"),)
    net = net.eval().cuda()
    if half and not arch.startswith("matmul"):
        net = net.half()
        args = tuple(a.half() if a.is_floating_point() else a for a in args)
    return net, args


def timed(fn, count: int) -> float:
    import torch
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(count):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def reference(arch: str, batch: int, precision: str, count: int, compile_it: bool,
              warm_only: bool) -> dict:
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    net, args = build(arch, batch, precision == "fp16")
    row = {"arch": arch, "batch": batch, "precision": precision}
    if arch.startswith("matmul"):
        n = int(arch.removeprefix("matmul"))
        ms = timed(lambda: net(*args), count)
        return {**row, "eager_ms": ms, "tflops": 2 * batch * n**3 / (ms * 1e-3) / 1e12}
    with torch.inference_mode():
        if not warm_only:
            row["eager_ms"] = timed(lambda: net(*args), count)
            graph = torch.cuda.CUDAGraph()
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    net(*args)
            torch.cuda.current_stream().wait_stream(stream)
            with torch.cuda.graph(graph):
                net(*args)
            row["graph_ms"] = timed(graph.replay, count)
        if compile_it:
            start = time.perf_counter()
            compiled = torch.compile(net)
            compiled(*args)
            torch.cuda.synchronize()
            row["compile_s"] = time.perf_counter() - start
            if not warm_only:
                row["compiled_ms"] = timed(lambda: compiled(*args), count)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", required=True, help="ARCH:BATCH:PRECISION,...")
    ap.add_argument("--compile-batches", default="1",
                    help="batches also timed through torch.compile (comma-separated; '' none)")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--warm-only", action="store_true")
    ap.add_argument("--deadline", type=float, default=0,
                    help="seconds after which no further configuration starts (0: none)")
    ap.add_argument("--json")
    args = ap.parse_args()
    compile_batches = {int(b) for b in args.compile_batches.split(",") if b}
    start = time.monotonic()
    rows = []
    for config in args.configs.split(","):
        if args.deadline and time.monotonic() - start > args.deadline:
            print(f"torch: deadline reached, {config} skipped", flush=True)
            continue
        arch, batch, precision = config.split(":")
        try:
            row = reference(arch, int(batch), precision, args.count,
                            int(batch) in compile_batches, args.warm_only)
        except Exception as e:  # a reference that cannot run is reported, not fatal
            row = {"arch": arch, "batch": int(batch), "precision": precision,
                   "error": f"{type(e).__name__}: {e}"[:300]}
        print("torch:", json.dumps(row), flush=True)
        rows.append(row)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
