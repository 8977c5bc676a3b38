"""Ops whose axes are a run-time input (a graph input, not a constant), compiled once
without `--specialize` and run at several values against onnxruntime, through `kiln run`
and the Python `kiln.InferenceSession`:

- CumSum / CumProd with a run-time `axis`: every axis, negative ones, exclusive and
  reverse; an axis out of range fails the run with a check naming the node.
- Reduce* whose `axes` input has no elements (a graph input of shape [0]): every axis
  reduced, or none with noop_with_empty_axes.

The compiled model is the same file for every value (one compile per model)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import harness
from conftest import fail

try:
    import kiln as kiln_py
except ImportError:  # pragma: no cover - depends on the environment
    kiln_py = None

def _save(model, path: Path, opset: int = 18) -> Path:
    """CumProd exists from opset 26 (onnxruntime 1.23 runs it)."""
    if any(n.op_type == "CumProd" for n in model.node):
        opset = 26
    path.write_bytes(h.make_model(model, opset_imports=[h.make_opsetid("", opset)],
                                  ir_version=10 if opset > 21 else 9).SerializeToString())
    return path


def _compile(kiln, model_path: Path, tmp_path: Path) -> Path:
    artifact = tmp_path / (model_path.stem + ".so")
    result = kiln.compile(model_path, artifact)
    if result.returncode != 0:
        fail("kiln compile failed\n" + result.describe())
    return artifact


def _run_cli(kiln, artifact: Path, feeds: dict, out: Path, names) -> dict:
    inputs = harness.save_inputs(feeds, out / "in")
    result = kiln.run(artifact, inputs, out / "out")
    if result.returncode != 0:
        fail("kiln run failed\n" + result.describe())
    return harness.load_outputs(out / "out", names)


def _compare_all(got: dict, want: dict, rtol=1e-5, atol=1e-6):
    problems = []
    for name in want:
        if got[name].shape != want[name].shape:
            problems.append(f"{name}: shape {got[name].shape} vs {want[name].shape}")
            continue
        p = harness.compare(name, got[name], want[name], rtol, atol)
        if p:
            problems.append(p)
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def python_session_env(tmp_path_factory):
    """The build's kiln for the Python package, with a private cache."""
    if kiln_py is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("the kiln Python package is not installed")
        pytest.skip("the kiln Python package is not installed (scripts/setup.sh)")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KILN_EXECUTABLE", str(harness.tool_path("kiln")))
        mp.setenv("KILN_CACHE_DIR", str(tmp_path_factory.mktemp("kiln-cache")))
        yield


# ---------------------------------------------------------------------------------------
# CumSum, CumProd
# ---------------------------------------------------------------------------------------

CUM_CASES = [
    # op, dtype, shape, attrs
    ("CumSum", np.float32, (2, 3, 4), {}),
    ("CumSum", np.float32, (2, 3, 4), {"exclusive": 1, "reverse": 1}),
    ("CumSum", np.int64, (3, 5), {"reverse": 1}),
    ("CumProd", np.float32, (2, 3, 4), {"exclusive": 1}),
    ("CumProd", np.int32, (4, 3), {}),
]
NP_TO_ONNX = {np.float32: T.FLOAT, np.int64: T.INT64, np.int32: T.INT32}


def _cum_model(op, dtype, shape, attrs, axis_dtype=T.INT64):
    g = h.make_graph(
        [h.make_node(op, ["x", "axis"], ["y"], name="scan", **attrs)], "cum",
        [h.make_tensor_value_info("x", NP_TO_ONNX[dtype], list(shape)),
         h.make_tensor_value_info("axis", axis_dtype, [])],
        [h.make_tensor_value_info("y", NP_TO_ONNX[dtype], list(shape))])
    return g


def _cum_data(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-3, 4, shape).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(dtype)


@pytest.mark.parametrize("op,dtype,shape,attrs", CUM_CASES,
                         ids=[f"{c[0]}-{c[1].__name__}-{'x'.join(map(str, c[2]))}-"
                              f"{'-'.join(f'{k}{v}' for k, v in c[3].items()) or 'default'}"
                              for c in CUM_CASES])
def test_cumulative_runtime_axis_matches_onnxruntime(kiln, tmp_path, op, dtype, shape, attrs):
    path = _save(_cum_model(op, dtype, shape, attrs), tmp_path / "cum.onnx")
    artifact = _compile(kiln, path, tmp_path)
    rank = len(shape)
    for axis in list(range(rank)) + list(range(-rank, 0)):
        feeds = {"x": _cum_data(dtype, shape, axis + 10), "axis": np.array(axis, np.int64)}
        want = harness.ort_run(path, feeds)
        got = _run_cli(kiln, artifact, feeds, tmp_path / f"axis{axis}", ["y"])
        _compare_all(got, want)


def test_cumulative_runtime_axis_int32_axis(kiln, tmp_path):
    """The axis may be int32 too."""
    path = _save(_cum_model("CumSum", np.float32, (3, 4), {}, T.INT32), tmp_path / "cum32.onnx")
    artifact = _compile(kiln, path, tmp_path)
    for axis in (0, 1, -1):
        feeds = {"x": _cum_data(np.float32, (3, 4), 5), "axis": np.array(axis, np.int32)}
        _compare_all(_run_cli(kiln, artifact, feeds, tmp_path / f"a{axis}", ["y"]),
                     harness.ort_run(path, feeds))


@pytest.mark.parametrize("axis", [3, -4, 100])
def test_cumulative_axis_out_of_range_fails_naming_the_node(kiln, tmp_path, axis):
    path = _save(_cum_model("CumSum", np.float32, (2, 3, 4), {}), tmp_path / "cum.onnx")
    artifact = _compile(kiln, path, tmp_path)
    feeds = {"x": _cum_data(np.float32, (2, 3, 4), 1), "axis": np.array(axis, np.int64)}
    inputs = harness.save_inputs(feeds, tmp_path / "in")
    r = kiln.run(artifact, inputs, tmp_path / "out")
    problem = harness.check_clean_failure(r, ["axis out of range"], "CumSum axis out of range")
    if problem or "node 'scan' (CumSum" not in r.stderr:
        fail(problem or "the error names no node\n" + r.describe())


def test_cumulative_runtime_axis_python_session(python_session_env, tmp_path):
    path = _save(_cum_model("CumProd", np.float32, (2, 3, 4), {"reverse": 1}),
                 tmp_path / "cum.onnx")
    sess = kiln_py.InferenceSession(path, threads=1)
    for axis in (0, 1, 2, -1):
        feeds = {"x": _cum_data(np.float32, (2, 3, 4), axis + 3),
                 "axis": np.array(axis, np.int64)}
        (got,) = sess.run(None, feeds)
        _compare_all({"y": got}, harness.ort_run(path, feeds))
    with pytest.raises(kiln_py.RuntimeCheckFailed) as info:
        sess.run(None, {"x": _cum_data(np.float32, (2, 3, 4), 0), "axis": np.array(5, np.int64)})
    assert str(info.value) == "node 'scan' (CumProd, opset 26): axis out of range"


# ---------------------------------------------------------------------------------------
# Reduce* with an axes input of no elements
# ---------------------------------------------------------------------------------------

REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
              "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]


def _reduce_model(op, shape, axes_len, out_shape, **attrs):
    return h.make_graph(
        [h.make_node(op, ["data", "axes"], ["reduced"], name="red", **attrs)], "reduce",
        [h.make_tensor_value_info("data", T.FLOAT, list(shape)),
         h.make_tensor_value_info("axes", T.INT64, [axes_len])],
        [h.make_tensor_value_info("reduced", T.FLOAT, out_shape)])


@pytest.mark.parametrize("op", REDUCE_OPS)
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_empty_axes_input_reduces_everything(kiln, tmp_path, op, keepdims):
    shape = (3, 2, 4)
    path = _save(_reduce_model(op, shape, 0, None, keepdims=keepdims), tmp_path / "r.onnx")
    artifact = _compile(kiln, path, tmp_path)
    feeds = {"data": np.random.default_rng(2).uniform(0.5, 2, shape).astype(np.float32),
             "axes": np.zeros(0, np.int64)}
    _compare_all(_run_cli(kiln, artifact, feeds, tmp_path, ["reduced"]),
                 harness.ort_run(path, feeds), rtol=1e-4)


def test_reduce_empty_axes_input_noop(kiln, tmp_path):
    shape = (3, 2, 4)
    path = _save(_reduce_model("ReduceSum", shape, 0, None, noop_with_empty_axes=1),
                 tmp_path / "r.onnx")
    artifact = _compile(kiln, path, tmp_path)
    feeds = {"data": np.random.default_rng(3).standard_normal(shape).astype(np.float32),
             "axes": np.zeros(0, np.int64)}
    _compare_all(_run_cli(kiln, artifact, feeds, tmp_path, ["reduced"]),
                 harness.ort_run(path, feeds))
