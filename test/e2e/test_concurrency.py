"""Concurrent runs on one opened model (docs/runtime-api.md, "Threading").

A real model compiled by kiln (convolutions and a MatMul big enough to use the
thread pool and the scratch arena) is opened once by concurrent_runs.c, built
together with the runtime's C sources under ThreadSanitizer (clang-22
-fsanitize=thread): 4 threads x 100 runs through kiln_model_run on the one
handle, then 4 threads x 100 runs each in its own kiln_run_context; every
output must be bit-equal to the single-threaded run of the same input, and
TSan must report no race. The single-threaded output is also compared with
onnxruntime.
"""

from __future__ import annotations

import os
import subprocess
import time

import numpy as np
import pytest

import harness
import models
from conftest import clang, fail

REPO = harness.REPO
THREADS = 4
RUNS = 100
POOL_THREADS = 2


def concurrency_model() -> models.Case:
    g = models.G("concurrent_runs")
    x = g.input("x", (1, 16, 24, 24))
    h = g.node("Conv", [x, g.weight("w1", (32, 16, 3, 3), -0.3, 0.3), g.weight("b1", (32,))],
               pads=[1, 1, 1, 1])
    h = g.node("Relu", [h])
    h = g.node("Conv", [h, g.weight("w2", (32, 32, 3, 3), -0.2, 0.2)], pads=[1, 1, 1, 1])
    h = g.node("Relu", [h])
    h = g.node("Reshape", [h, g.init("shape", [1, 32, 576], np.int64)])
    g.node("MatMul", [h, g.weight("w3", (576, 64), -0.1, 0.1)], outputs=["y"])
    g.output("y")
    return g.case()


def test_concurrent_runs_on_one_model_under_tsan(kiln, tmp_path):
    case = concurrency_model()
    model = case.save(tmp_path)
    artifact = tmp_path / "model.so"
    result = kiln.compile(model, artifact)
    if result.returncode != 0:
        fail("kiln compile failed\n" + result.describe())
    inspect = harness.run_command([kiln.kiln, "inspect", artifact], 60)
    scratch = [line for line in inspect.stdout.splitlines() if line.startswith("scratch_bytes:")]
    assert scratch and int(scratch[0].split()[1]) > 0, \
        "the test model must use the scratch arena\n" + inspect.describe()

    runner = tmp_path / "concurrent_runs"
    sources = sorted((REPO / "runtime" / "src").rglob("*.c"))  # gpu/ too
    build = harness.run_command(
        [clang(), "-std=c11", "-O1", "-g", "-fsanitize=thread", "-D_GNU_SOURCE",
         "-I", REPO / "runtime" / "include", "-I", REPO / "runtime" / "src",
         REPO / "test" / "e2e" / "concurrent_runs.c", *sources,
         "-o", runner, "-lpthread", "-ldl", "-lm"], 300 * harness.timeout_scale())
    if build.returncode != 0:
        fail("building the TSan runner failed\n" + build.describe())

    # One input per thread: runs that shared an arena would mix them up.
    rng = np.random.default_rng(7)
    feeds = []
    for t in range(THREADS):
        x = rng.uniform(-1, 1, size=(1, 16, 24, 24)).astype(np.float32)
        path = tmp_path / f"in{t}.bin"
        path.write_bytes(x.tobytes())
        feeds.append((x, path))
    out = tmp_path / "out0.bin"
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1")
    cmd = [str(runner), str(artifact), str(THREADS), str(RUNS), str(POOL_THREADS), str(out),
           *[str(p) for _, p in feeds]]
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                          timeout=240 * harness.timeout_scale())
    seconds = time.monotonic() - start
    if proc.returncode != 0 or "WARNING: ThreadSanitizer" in proc.stderr:
        fail(f"concurrent runs failed (exit {proc.returncode} after {seconds:.1f} s)\n"
             f"$ {' '.join(cmd)}\n--- stderr ---\n{proc.stderr[-6000:]}\n"
             f"--- stdout ---\n{proc.stdout[-2000:]}")
    assert proc.stdout.strip() == "ok", proc.stdout

    got = np.frombuffer(out.read_bytes(), dtype=np.float32).reshape(1, 32, 64)
    want = harness.ort_run(model, {"x": feeds[0][0]})["y"]
    np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)
