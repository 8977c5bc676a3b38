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
    compiled = compile_cache.get(SPECS[case.name])
    try:
        harness.run_and_compare(compile_cache.kiln, compiled, case.inputs, tmp_path,
                                rtol=case.rtol, atol=case.atol)
        return
    except AssertionError as e:
        problem = f"{case.name}: {e}"
    fail(problem)
