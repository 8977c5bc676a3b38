"""Ops whose axes, scales or sizes are a run-time input (a graph input, not a constant), compiled once
without `--specialize` and run at several values against onnxruntime, through `kiln run`
and the Python `kiln.InferenceSession`:

- CumSum / CumProd with a run-time `axis`: every axis, negative ones, exclusive and
  reverse; an axis out of range fails the run with a check naming the node.
- Reduce* whose `axes` input has no elements (a graph input of shape [0]): every axis
  reduced, or none with noop_with_empty_axes.
- Reduce* with run-time `axes` (one or two axes, keepdims 0/1, negative axes, an empty
  dim): the result's dims are run dims; bad axes (out of range, repeated) fail a check
  naming the node; a run-dim result flowing through elementwise ops.
- Resize with run-time `scales` or `sizes` (nearest / linear / cubic, coordinate modes,
  axes, keep_aspect_ratio_policy, tf_crop_and_resize with a run-time roi, antialias); a
  scale that is not positive fails a check naming the node.

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


# ---------------------------------------------------------------------------------------
# Reduce* with axes read at run time (run dims)
# ---------------------------------------------------------------------------------------

def _reduce_rt_model(op, shape, n, keepdims):
    return h.make_graph(
        [h.make_node(op, ["data", "axes"], ["reduced"], name="red", keepdims=keepdims)],
        "reduce", [h.make_tensor_value_info("data", T.FLOAT, list(shape)),
                   h.make_tensor_value_info("axes", T.INT64, [n])],
        [h.make_tensor_value_info("reduced", T.FLOAT, None)])


REDUCE_RT_CASES = [
    # shape, axes values (each run against one compile), keepdims
    ((3, 2, 4), [[0], [1], [2], [-1], [-3]], 1),
    ((3, 2, 4), [[0], [1], [2], [-2]], 0),
    ((2, 3, 4, 5), [[0, 1], [3, 1], [-1, -2], [0, 3]], 1),
    ((2, 3, 4, 5), [[0, 1], [3, 1], [2, 0]], 0),
    ((2, 0, 3), [[1], [0], [2]], 1),  # an empty dim
]


@pytest.mark.parametrize("op", REDUCE_OPS)
@pytest.mark.parametrize("shape,axes_sets,keepdims", REDUCE_RT_CASES,
                         ids=[f"{'x'.join(map(str, c[0]))}-n{len(c[1][0])}-keep{c[2]}"
                              for c in REDUCE_RT_CASES])
def test_reduce_runtime_axes_match_onnxruntime(kiln, tmp_path, op, shape, axes_sets, keepdims):
    if 0 in shape and op in ("ReduceMax", "ReduceMin", "ReduceLogSumExp", "ReduceMean"):
        # max/min/logsumexp of nothing: onnxruntime and the spec differ; the mean of
        # nothing is NaN in the reference (numpy) and kiln, 0 in onnxruntime.
        pytest.skip("an empty reduction whose value onnxruntime defines differently")
    n = len(axes_sets[0])
    path = _save(_reduce_rt_model(op, shape, n, keepdims), tmp_path / "r.onnx")
    artifact = _compile(kiln, path, tmp_path)
    for j, axes in enumerate(axes_sets):
        feeds = {"data": np.random.default_rng(j).uniform(0.5, 2, shape).astype(np.float32),
                 "axes": np.array(axes, np.int64)}
        _compare_all(_run_cli(kiln, artifact, feeds, tmp_path / f"s{j}", ["reduced"]),
                     harness.ort_run(path, feeds), rtol=1e-4)


@pytest.mark.parametrize("axes", [[3], [-4], [1, 1]])
def test_reduce_runtime_axes_bad_values_fail_naming_the_node(kiln, tmp_path, axes):
    shape = (3, 2, 4)
    path = _save(_reduce_rt_model("ReduceSum", shape, len(axes), 1), tmp_path / "r.onnx")
    artifact = _compile(kiln, path, tmp_path)
    feeds = {"data": np.ones(shape, np.float32), "axes": np.array(axes, np.int64)}
    inputs = harness.save_inputs(feeds, tmp_path / "in")
    r = kiln.run(artifact, inputs, tmp_path / "out")
    problem = harness.check_clean_failure(r, ["axes out of range or repeated"], "bad axes")
    if problem or "node 'red' (ReduceSum" not in r.stderr:
        fail(problem or "the error names no node\n" + r.describe())


def test_reduce_runtime_axes_chain_python_session(python_session_env, tmp_path):
    """A run-dim result flowing through elementwise ops (ReduceL2's expanded form:
    Mul -> ReduceSum -> Sqrt), through kiln.InferenceSession."""
    shape = (3, 2, 4)
    g = h.make_graph(
        [h.make_node("Mul", ["data", "data"], ["sq"], name="sq"),
         h.make_node("ReduceSum", ["sq", "axes"], ["s"], name="red", keepdims=0),
         h.make_node("Sqrt", ["s"], ["y"], name="root")],
        "l2", [h.make_tensor_value_info("data", T.FLOAT, list(shape)),
               h.make_tensor_value_info("axes", T.INT64, [1])],
        [h.make_tensor_value_info("y", T.FLOAT, None)])
    path = _save(g, tmp_path / "l2.onnx")
    sess = kiln_py.InferenceSession(path, threads=1)
    for axis in (0, 1, 2, -1):
        feeds = {"data": np.random.default_rng(axis + 7).standard_normal(shape).astype(np.float32),
                 "axes": np.array([axis], np.int64)}
        (got,) = sess.run(None, feeds)
        _compare_all({"y": got}, harness.ort_run(path, feeds), rtol=1e-5)
    with pytest.raises(kiln_py.RuntimeCheckFailed) as info:
        sess.run(None, {"data": np.ones(shape, np.float32), "axes": np.array([3], np.int64)})
    assert str(info.value) == "node 'red' (ReduceSum, opset 18): axes out of range or repeated"


# ---------------------------------------------------------------------------------------
# Resize with scales / sizes read at run time (run dims)
# ---------------------------------------------------------------------------------------

def _resize_model(shape, by, n, **attrs):
    inputs = ["x", "", "scales"] if by == "scales" else ["x", "", "", "sizes"]
    graph_inputs = [h.make_tensor_value_info("x", T.FLOAT, list(shape))]
    if by == "scales":
        graph_inputs.append(h.make_tensor_value_info("scales", T.FLOAT, [n]))
    else:
        graph_inputs.append(h.make_tensor_value_info("sizes", T.INT64, [n]))
    if attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize":
        inputs[1] = "roi"
        graph_inputs.append(h.make_tensor_value_info("roi", T.FLOAT, [2 * n]))
    return h.make_graph([h.make_node("Resize", inputs, ["y"], name="rs", **attrs)], "resize",
                        graph_inputs, [h.make_tensor_value_info("y", T.FLOAT, None)])


RESIZE_CASES = [
    # by, attrs, values (one compile), extra feeds
    ("scales", {"mode": "nearest"}, [[1, 1, 2, 3], [1, 1, 0.5, 0.5], [1, 1, 1.7, 0.8]]),
    ("scales", {"mode": "linear"}, [[1, 1, 2, 2], [1, 1, 0.6, 1.5]]),
    ("scales", {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
     [[1, 1, 2, 1.5], [1, 1, 0.5, 3]]),
    ("scales", {"mode": "cubic"}, [[1, 1, 2, 2], [1, 1, 0.75, 1.25]]),
    ("scales", {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1},
     [[1, 1, 1.5, 0.5]]),
    ("scales", {"mode": "linear", "axes": [3, 2]}, [[2, 0.5], [1.25, 3]]),
    ("sizes", {"mode": "nearest", "nearest_mode": "ceil",
               "coordinate_transformation_mode": "half_pixel"}, [[1, 1, 7, 9], [1, 1, 3, 2]]),
    ("sizes", {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
     [[1, 1, 3, 1], [1, 1, 8, 5]]),
    ("sizes", {"mode": "nearest", "axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"},
     [[7, 8], [3, 20]]),
    ("sizes", {"mode": "linear", "axes": [2, 3], "keep_aspect_ratio_policy": "not_smaller"},
     [[7, 8], [3, 2]]),
    ("sizes", {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize",
               "extrapolation_value": 10.0}, [[1, 1, 3, 3], [1, 1, 5, 2]]),
    # antialias: the tap count follows the scale (a run-time table width)
    ("scales", {"mode": "linear", "antialias": 1}, [[1, 1, 0.5, 0.6], [1, 1, 0.3, 2],
                                                    [1, 1, 1, 1]]),
    ("sizes", {"mode": "cubic", "antialias": 1}, [[1, 1, 2, 3], [1, 1, 3, 5], [1, 1, 1, 2]]),
    ("sizes", {"mode": "cubic", "antialias": 1, "exclude_outside": 1}, [[1, 1, 2, 2]]),
]


@pytest.mark.parametrize("by,attrs,values", RESIZE_CASES,
                         ids=[f"{c[0]}-" + "-".join(f"{k}_{v}" for k, v in c[1].items())
                              .replace(" ", "").replace(",", "_").replace("[", "")
                              .replace("]", "") for c in RESIZE_CASES])
def test_resize_runtime_scales_sizes_match_onnxruntime(kiln, tmp_path, by, attrs, values):
    shape = (1, 1, 4, 6)
    n = len(values[0])
    path = _save(_resize_model(shape, by, n, **attrs), tmp_path / "rs.onnx")
    artifact = _compile(kiln, path, tmp_path)
    for j, v in enumerate(values):
        feeds = {"x": np.random.default_rng(j).standard_normal(shape).astype(np.float32),
                 by: np.array(v, np.float32 if by == "scales" else np.int64)}
        if attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize":
            feeds["roi"] = np.array([0, 0, 0.2 * j, 0.1, 1, 1, 0.9, 1.2 - 0.1 * j], np.float32)
        _compare_all(_run_cli(kiln, artifact, feeds, tmp_path / f"v{j}", ["y"]),
                     harness.ort_run(path, feeds), rtol=1e-4, atol=1e-5)


def test_resize_runtime_scales_python_session_and_bad_scale(python_session_env, tmp_path):
    shape = (1, 2, 3, 4)
    path = _save(_resize_model(shape, "scales", 4, mode="linear"), tmp_path / "rs.onnx")
    sess = kiln_py.InferenceSession(path, threads=1)
    for v in ([1, 1, 2, 2], [1, 1, 0.5, 1.5], [1, 2, 1, 1]):
        feeds = {"x": np.random.default_rng(1).standard_normal(shape).astype(np.float32),
                 "scales": np.array(v, np.float32)}
        (got,) = sess.run(None, feeds)
        _compare_all({"y": got}, harness.ort_run(path, feeds), rtol=1e-4, atol=1e-5)
    with pytest.raises(kiln_py.RuntimeCheckFailed) as info:
        sess.run(None, {"x": np.ones(shape, np.float32),
                        "scales": np.array([1, 1, -2, 1], np.float32)})
    assert "node 'rs' (Resize, opset 18): scales must be positive" in str(info.value)
