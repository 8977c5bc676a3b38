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


# The kernel families again at the other x86 vector width than the host's
# native one. On an AVX-512 host the cases above ran kiln's 32-register
# kernels: at `--cpu x86-64-v3` they run the 16-register AVX2 ones (other
# register blocks, masks and edges), which such a host would otherwise never
# execute. On an AVX2 host the AVX-512 form can only be compiled (a compile
# failure or crash in the 32-register paths still fails here).
OTHER_CPU = "x86-64-v3" if harness.host_has_avx512() else "x86-64-v4"
WIDTH_CASES = [c for fn in (models.conv_cases, models.grouped_conv_cases,
                            models.winograd_conv_cases, models.gemm_cases,
                            models.matmul_cases, models.pool_cases, models.nhwc_pool_cases)
               for c in fn()] + [c for c in CASES if c.name in ("small_cnn", "small_attention")]
WIDTH_SPECS = {c.name: harness.register(harness.CompileSpec(
    f"op-{c.name}-{OTHER_CPU}", c.save, c.compile_args + ("--cpu", OTHER_CPU)))
    for c in WIDTH_CASES} if harness.host_has_avx2() else {}


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=pytest.mark.compiles(WIDTH_SPECS[c.name].key))
    for c in WIDTH_CASES if c.name in WIDTH_SPECS])
def test_op_other_vector_width(case: models.Case, compile_cache, tmp_path):
    spec = WIDTH_SPECS[case.name]
    if OTHER_CPU == "x86-64-v4":
        compiled = compile_cache.get(spec)
        if not compiled.ok:
            fail(f"{case.name} (--cpu {OTHER_CPU}): {compiled.failure()}")
        return
    _run_case(case, spec, compile_cache, tmp_path, f"{case.name} (--cpu {OTHER_CPU})")
