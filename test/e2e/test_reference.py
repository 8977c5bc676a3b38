"""Checks of the test models themselves, without kiln: every case in models.py is a valid
ONNX model (onnx's checker with strict shape inference) that onnxruntime runs to finite
outputs, and every bad model is really bad in the way its name says."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import harness
import models

CASES = models.all_cases()


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_case_is_valid(case: models.Case, tmp_path):
    path = case.save(tmp_path)
    onnx.checker.check_model(str(path), full_check=True)
    outs = harness.ort_run(path, case.inputs)
    assert [o.name for o in case.model.graph.output] == list(outs)
    for name, value in outs.items():
        if np.issubdtype(value.dtype, np.floating):
            assert np.isfinite(value).all(), f"{case.name}: output {name} is not finite"


def _onnx_rejects(path, folder) -> str | None:
    """The error onnx gives loading, checking and reading the model; None if it accepts."""
    try:
        model = onnx.load(str(path), load_external_data=False)
        onnx.checker.check_model(str(path), full_check=True)
        # external data problems show only when the data is read
        onnx.external_data_helper.load_external_data_for_model(model, str(folder))
        for t in model.graph.initializer:
            onnx.numpy_helper.to_array(t)
    except Exception as e:  # what onnx raises varies: DecodeError, ValidationError, ...
        return f"{type(e).__name__}: {e}"
    return None


# Bad for kiln, though onnx's Python package lets them through.
ONNX_ACCEPTS = {
    # valid models; the mistake is on kiln's command line
    "dynamic_dim_into_unsupported_op", "shape_flag_unknown_input", "shape_flag_wrong_rank",
    # onnx's checker does not look at the dims of graph inputs
    "negative_dim_input", "overflowing_dims_input",
    # valid ONNX that kiln rejects cleanly because it does not support it yet
    "unsupported_opset11_softmax_coercion",
}


@pytest.mark.parametrize("bad", [pytest.param(b, id=b.name) for b in models.bad_cases()])
def test_bad_model_is_invalid(bad: models.BadCase, tmp_path):
    """Each compile-time bad input is really invalid ONNX (so kiln accepting it would be a
    bug, not a quirk of the test)."""
    folder = tmp_path / "m"
    folder.mkdir()
    path = bad.write(folder)
    error = _onnx_rejects(path, folder)
    if bad.name in ONNX_ACCEPTS:
        assert error is None, f"{bad.name}: meant to be valid ONNX, but onnx says {error}"
    else:
        assert error is not None, f"{bad.name}: onnx accepts this model"
