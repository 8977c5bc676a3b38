"""The micro-kernels at `--cpu x86-64` (SSE: 4 lanes, 16 xmm registers): register blocks
sized for 16 registers (a 64x256x64 MatMul had 84 spills / reloads in its kernel when they
were sized for 32), and the kernel-family cases run there against onnxruntime (any x86-64
host runs SSE code)."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import harness
import models
from conftest import fail

X86 = platform.machine() in ("x86_64", "AMD64")


def _llc() -> str | None:
    return shutil.which("llc-22") or next(
        (p for p in ("/usr/lib/llvm-22/bin/llc",) if Path(p).is_file()), None)


def _matmul_model(path: Path, constant_b: bool) -> Path:
    """Y[64, 64] = A[64, 256] x B[256, 64]; B a weight (packed at compile time) or an input."""
    inputs = [helper.make_tensor_value_info("A", TensorProto.FLOAT, [64, 256])]
    inits = []
    if constant_b:
        b = np.random.default_rng(0).standard_normal((256, 64)).astype(np.float32)
        inits.append(numpy_helper.from_array(b, "B"))
    else:
        inputs.append(helper.make_tensor_value_info("B", TensorProto.FLOAT, [256, 64]))
    graph = helper.make_graph([helper.make_node("MatMul", ["A", "B"], ["Y"])], "mm", inputs,
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [64, 64])],
                              inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _spills(kiln: harness.Kiln, model: Path, cpu: str, work: Path) -> int:
    """Stack spills + reloads LLVM's register allocator reports for the model's code (the
    `# 16-byte Spill` / `Reload` comments of llc's assembly of kiln's optimized IR)."""
    ll = work / f"{model.stem}.{cpu}.ll"
    result = kiln.compile(model, ll, ["--cpu", cpu, "--emit", "llvm"])
    if result.returncode != 0:
        fail(f"kiln compile --cpu {cpu} --emit llvm failed\n" + result.describe())
    asm = subprocess.run([_llc(), "-O3", str(ll), "-o", "-"], capture_output=True, text=True,
                         timeout=300)
    if asm.returncode != 0:
        fail(f"llc failed on {ll}:\n{asm.stderr[-2000:]}")
    return len(re.findall(r"(?:Spill|Reload)$", asm.stdout, re.MULTILINE))


@pytest.mark.skipif(not X86, reason="x86 code generation")
@pytest.mark.parametrize("constant_b", [True, False], ids=["weights", "inputs"])
@pytest.mark.parametrize("cpu", ["x86-64", "x86-64-v3", "x86-64-v4"])
def test_matmul_kernel_spills(cpu, constant_b, kiln, tmp_path):
    if _llc() is None:
        fail("llc-22 not found (LLVM 22's tools are needed to count the spills)")
    model = _matmul_model(tmp_path / "mm.onnx", constant_b)
    spills = _spills(kiln, model, cpu, tmp_path)
    # The 16- and 32-register blocks keep their accumulators, B vectors and broadcast in
    # registers; what may be left is the loop nest's own bookkeeping (AVX2, B an input: 2).
    limit = 0 if constant_b else 2
    assert spills <= limit, (f"--cpu {cpu}: {spills} spill / reload instructions in a "
                             f"64x256x64 MatMul (at most {limit} expected)")


# The kernel families (as test_ops.py's other-vector-width cases) compiled for SSE.
SSE_CASES = [c for fn in (models.conv_cases, models.winograd_conv_cases, models.gemm_cases,
                          models.matmul_cases, models.pool_cases, models.nhwc_pool_cases)
             for c in fn()] + [c for c in models.all_cases()
                               if c.name in ("small_cnn", "small_attention")]
SSE_SPECS = {c.name: harness.register(harness.CompileSpec(
    f"op-{c.name}-x86-64", c.save, c.compile_args + ("--cpu", "x86-64")))
    for c in SSE_CASES} if X86 else {}


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=pytest.mark.compiles(SSE_SPECS[c.name].key))
    for c in SSE_CASES if c.name in SSE_SPECS])
def test_sse_kernels(case: models.Case, compile_cache, tmp_path):
    compiled = compile_cache.get(SSE_SPECS[case.name])
    try:
        harness.run_and_compare(compile_cache.kiln, compiled, case.inputs, tmp_path,
                                rtol=case.rtol, atol=case.atol)
        return
    except AssertionError as e:
        problem = f"{case.name} (--cpu x86-64): {e}"
    fail(problem)
