"""One small graph per operator (models.py), compiled by kiln and compared with onnxruntime."""

from __future__ import annotations

import pytest

import harness
import models
from conftest import fail

CASES = models.all_cases()
SPECS = {c.name: harness.register(harness.CompileSpec(f"op-{c.name}", c.save, c.compile_args))
         for c in CASES}


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=pytest.mark.compiles(SPECS[c.name].key)) for c in CASES])
def test_op(case: models.Case, compile_cache, tmp_path):
    _run_case(case, SPECS[case.name], compile_cache, tmp_path, case.name)


def _run_case(case: models.Case, spec: harness.CompileSpec, compile_cache, tmp_path,
              label: str):
    compiled = compile_cache.get(spec)
    try:
        harness.run_and_compare(compile_cache.kiln, compiled, case.inputs, tmp_path,
                                rtol=case.rtol, atol=case.atol)
        return
    except AssertionError as e:
        problem = f"{label}: {e}"
    fail(problem)


# On an AVX-512 host the cases above run kiln's 32-register kernels; the kernel
# families again at `--cpu x86-64-v3` run the 16-register AVX2 ones (other
# register blocks, masks and edges), which such a host would otherwise never
# execute. On other hosts native already is the AVX2 form.
AVX2_CASES = [c for fn in (models.conv_cases, models.winograd_conv_cases, models.gemm_cases,
                           models.matmul_cases, models.pool_cases, models.nhwc_pool_cases)
              for c in fn()] + [c for c in CASES if c.name in ("small_cnn", "small_attention")]
AVX2_SPECS = {c.name: harness.register(harness.CompileSpec(
    f"op-{c.name}-x86-64-v3", c.save, c.compile_args + ("--cpu", "x86-64-v3")))
    for c in AVX2_CASES} if harness.host_has_avx512() else {}


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=pytest.mark.compiles(AVX2_SPECS[c.name].key))
    for c in AVX2_CASES if c.name in AVX2_SPECS])
def test_op_avx2_kernels(case: models.Case, compile_cache, tmp_path):
    _run_case(case, AVX2_SPECS[case.name], compile_cache, tmp_path,
              f"{case.name} (--cpu x86-64-v3)")
