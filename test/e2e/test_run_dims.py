"""Run dims (docs/dynamic-shapes.md, "Run dims"): ops whose output shape depends on the
values of a non-constant input, compiled without --specialize. Models built with the onnx
helper whose Reshape `shape` is a graph input, run at several shapes through `kiln run`
and the Python InferenceSession and matched against onnxruntime: 0 and -1, allowzero, a
symbolic batch beside the run dims, a run dim flowing through elementwise ops before the
output, a static output beside a run output; a shape that does not fit the data is a
run-time error naming the node."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import harness

OPSET = 17


def vi(name, shape, elem=T.FLOAT):
    return h.make_tensor_value_info(name, elem, shape)


def save(path: Path, nodes, inputs, outputs, initializers=(), opset=OPSET) -> Path:
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, str(path))
    return path


def reshape_model(path: Path, allowzero: int = 0, data_shape=(2, 3, 4), rank: int = 3) -> Path:
    """data [2,3,4] reshaped to `shape`, a graph input of `rank` int64s."""
    node = h.make_node("Reshape", ["data", "shape"], ["reshaped"], name="reshape",
                       allowzero=allowzero)
    return save(path, [node], [vi("data", list(data_shape)), vi("shape", [rank], T.INT64)],
                [vi("reshaped", [f"r{i}" for i in range(rank)])])


def chain_model(path: Path) -> Path:
    """The run dims flow through Relu, Mul (by itself) and Add of a [1,1] constant before
    the output; a static output (Sigmoid of the data) beside it."""
    nodes = [
        h.make_node("Reshape", ["data", "shape"], ["r"], name="reshape"),
        h.make_node("Relu", ["r"], ["relu"], name="relu"),
        h.make_node("Mul", ["relu", "r"], ["sq"], name="mul"),
        h.make_node("Add", ["sq", "one"], ["out"], name="add"),
        h.make_node("Sigmoid", ["data"], ["sig"], name="sig"),
    ]
    one = numpy_helper.from_array(np.full((1, 1), 0.25, np.float32), "one")
    return save(path, nodes, [vi("data", [4, 6]), vi("shape", [2], T.INT64)],
                [vi("out", ["o0", "o1"]), vi("sig", [4, 6])], [one])


def batch_model(path: Path) -> Path:
    """x [batch, 6] (a dim_param) reshaped to a run-time shape of 2 entries; Relu(x) a
    symbolic output of the usual kind beside it."""
    nodes = [h.make_node("Reshape", ["x", "shape"], ["y"], name="reshape"),
             h.make_node("Relu", ["x"], ["rx"], name="relu")]
    return save(path, nodes, [vi("x", ["batch", 6]), vi("shape", [2], T.INT64)],
                [vi("y", ["y0", "y1"]), vi("rx", ["batch", 6])])


def slice_model(path: Path) -> Path:
    """Slice of x [5, 6] with starts, ends, axes and steps all graph inputs, then Relu."""
    nodes = [h.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["s"], name="slice"),
             h.make_node("Relu", ["s"], ["y"], name="relu")]
    ints = [vi(n, [2], T.INT64) for n in ("starts", "ends", "axes", "steps")]
    return save(path, nodes, [vi("x", [5, 6])] + ints, [vi("y", ["y0", "y1"])])


def split_model(path: Path) -> Path:
    """Split of x [7, 3] along axis 0 into three parts whose sizes are a graph input."""
    node = h.make_node("Split", ["x", "split"], ["a", "b", "c"], name="split", axis=0)
    return save(path, [node], [vi("x", [7, 3]), vi("split", [3], T.INT64)],
                [vi("a", ["a0", 3]), vi("b", ["b0", 3]), vi("c", ["c0", 3])])


def axes_model(path: Path) -> Path:
    """Unsqueeze of x [2, 3] at two run-time axes, then Squeeze of y [1, 3, 1] at one."""
    nodes = [h.make_node("Unsqueeze", ["x", "uaxes"], ["u"], name="unsqueeze"),
             h.make_node("Squeeze", ["y", "saxes"], ["q"], name="squeeze")]
    return save(path, nodes, [vi("x", [2, 3]), vi("uaxes", [2], T.INT64),
                              vi("y", [1, 3, 1]), vi("saxes", [1], T.INT64)],
                [vi("u", ["u0", "u1", "u2", "u3"]), vi("q", ["q0", "q1"])])


def topk_model(path: Path) -> Path:
    """TopK of x [3, 8] along axis 1 with K a graph input; both outputs."""
    node = h.make_node("TopK", ["x", "k"], ["values", "indices"], name="topk", axis=1)
    return save(path, [node], [vi("x", [3, 8]), vi("k", [1], T.INT64)],
                [vi("values", [3, "k0"]), vi("indices", [3, "k1"], T.INT64)])


def pad_model(path: Path, mode: str) -> Path:
    """Pad of x [3, 4] with pads a graph input, in `mode`."""
    inputs = ["x", "pads"] + (["value"] if mode == "constant" else [])
    node = h.make_node("Pad", inputs, ["y"], name="pad", mode=mode)
    ins = [vi("x", [3, 4]), vi("pads", [4], T.INT64)]
    inits = [numpy_helper.from_array(np.array(1.5, np.float32), "value")] \
        if mode == "constant" else []
    return save(path, [node], ins, [vi("y", ["y0", "y1"])], inits)


SPECS = {
    "topk": harness.register(harness.CompileSpec("run_dims_topk",
                                                 lambda d: topk_model(d / "m.onnx"))),
    "pad_constant": harness.register(harness.CompileSpec(
        "run_dims_pad_constant", lambda d: pad_model(d / "m.onnx", "constant"))),
    "pad_reflect": harness.register(harness.CompileSpec(
        "run_dims_pad_reflect", lambda d: pad_model(d / "m.onnx", "reflect"))),
    "pad_edge": harness.register(harness.CompileSpec(
        "run_dims_pad_edge", lambda d: pad_model(d / "m.onnx", "edge"))),
    "pad_wrap": harness.register(harness.CompileSpec(
        "run_dims_pad_wrap", lambda d: pad_model(d / "m.onnx", "wrap"))),
    "slice": harness.register(harness.CompileSpec("run_dims_slice",
                                                  lambda d: slice_model(d / "m.onnx"))),
    "split": harness.register(harness.CompileSpec("run_dims_split",
                                                  lambda d: split_model(d / "m.onnx"))),
    "axes": harness.register(harness.CompileSpec("run_dims_axes",
                                                 lambda d: axes_model(d / "m.onnx"))),
    "reshape": harness.register(harness.CompileSpec("run_dims_reshape",
                                                    lambda d: reshape_model(d / "m.onnx"))),
    "allowzero": harness.register(harness.CompileSpec(
        "run_dims_allowzero", lambda d: reshape_model(d / "m.onnx", allowzero=1))),
    "chain": harness.register(harness.CompileSpec("run_dims_chain",
                                                  lambda d: chain_model(d / "m.onnx"))),
    "batch": harness.register(harness.CompileSpec("run_dims_batch",
                                                  lambda d: batch_model(d / "m.onnx"))),
}


def data(*shape, seed=0):
    return np.random.RandomState(seed).standard_normal(shape).astype(np.float32)


def shape(*v):
    return np.array(v, dtype=np.int64)


@pytest.mark.parametrize("target", [
    (4, 2, 3), (2, -1, 4), (0, 6, 2), (24, 1, 1), (1, -1, 1), (0, 0, -1), (-1, 2, 2)])
def test_reshape_shape_from_input(kiln, compile_cache, tmp_path, target):
    compiled = compile_cache.get(SPECS["reshape"])
    harness.run_and_compare(kiln, compiled, {"data": data(2, 3, 4), "shape": shape(*target)},
                            tmp_path)


@pytest.mark.parametrize("target", [(4, 2, 3), (2, 0, -1)])
def test_reshape_allowzero(kiln, compile_cache, tmp_path, target):
    # allowzero = 1: a 0 is a 0-sized dim (here: an error unless the data is empty), not
    # a copy of the input's dim.
    compiled = compile_cache.get(SPECS["allowzero"])
    feeds = {"data": data(2, 3, 4), "shape": shape(*target)}
    if 0 in target:
        out = tmp_path / "out"
        out.mkdir()
        result = kiln.run(compiled.artifact, harness.save_inputs(feeds, tmp_path / "in"), out)
        assert result.returncode != 0
        assert "node 'reshape' (Reshape, opset 17): shape does not fit the input's elements" \
            in result.stderr, result.describe()
        return
    harness.run_and_compare(kiln, compiled, feeds, tmp_path)


# (..., 2**62, ...): sizes whose product wraps around 64 bits to the input's 24 elements.
@pytest.mark.parametrize("target", [(5, 5, 1), (-1, -1, 24), (2, -2, 4), (1, 1, 1),
                                    (3, 2**62 + 1, 8), (2**62, 2**62, 24)])
def test_reshape_mismatch_is_a_run_time_error(kiln, compile_cache, tmp_path, target):
    compiled = compile_cache.get(SPECS["reshape"])
    assert compiled.ok, compiled.failure()
    feeds = {"data": data(2, 3, 4), "shape": shape(*target)}
    out = tmp_path / "out"
    out.mkdir()
    result = kiln.run(compiled.artifact, harness.save_inputs(feeds, tmp_path / "in"), out)
    assert result.returncode != 0, result.describe()
    assert "node 'reshape' (Reshape, opset 17): shape does not fit the input's elements" \
        in result.stderr, result.describe()
    assert harness.crash_marker(result.stderr) is None, result.describe()


@pytest.mark.parametrize("target", [(6, 4), (-1, 2), (2, 12), (24, 1), (1, -1)])
def test_run_dims_through_elementwise_ops(kiln, compile_cache, tmp_path, target):
    compiled = compile_cache.get(SPECS["chain"])
    harness.run_and_compare(kiln, compiled, {"data": data(4, 6, seed=3), "shape": shape(*target)},
                            tmp_path)


@pytest.mark.parametrize("batch,target", [(1, (2, 3)), (4, (-1, 3)), (5, (0, 6)), (7, (-1, 21)),
                                          (2, (12, 1))])
def test_run_dims_beside_a_symbolic_batch(kiln, compile_cache, tmp_path, batch, target):
    compiled = compile_cache.get(SPECS["batch"])
    harness.run_and_compare(kiln, compiled, {"x": data(batch, 6, seed=batch),
                                             "shape": shape(*target)}, tmp_path)


def test_inspect_shows_the_run_symbols(kiln, compile_cache):
    compiled = compile_cache.get(SPECS["chain"])
    assert compiled.ok, compiled.failure()
    result = harness.run_command([str(kiln.kiln), "inspect", str(compiled.artifact)], 60)
    assert result.returncode == 0, result.describe()
    assert "out.dim0" in result.stdout and "out.dim1" in result.stdout, result.stdout


def test_python_inference_session(compile_cache):
    """kiln.InferenceSession runs the models with runtime-allocated outputs (data = NULL:
    the entry's buffer handed over) at several run shapes, as onnxruntime does."""
    kiln_py = pytest.importorskip("kiln")
    import onnxruntime
    for key, feeds_list in [
        ("reshape", [{"data": data(2, 3, 4), "shape": shape(4, 2, 3)},
                     {"data": data(2, 3, 4, seed=1), "shape": shape(-1, 1, 4)},
                     {"data": data(2, 3, 4, seed=2), "shape": shape(0, 0, -1)}]),
        ("chain", [{"data": data(4, 6), "shape": shape(3, 8)},
                   {"data": data(4, 6, seed=5), "shape": shape(-1, 12)}]),
        ("batch", [{"x": data(3, 6), "shape": shape(9, 2)},
                   {"x": data(8, 6, seed=8), "shape": shape(-1, 4)}]),
    ]:
        compiled = compile_cache.get(SPECS[key])
        assert compiled.ok, compiled.failure()
        ours = kiln_py.InferenceSession(str(compiled.artifact), threads=1)
        theirs = onnxruntime.InferenceSession(str(compiled.model))
        names = [o.name for o in theirs.get_outputs()]
        for feeds in feeds_list:
            got = ours.run(names, feeds)
            want = theirs.run(names, feeds)
            for name, g, w in zip(names, got, want):
                assert g.shape == w.shape, (key, name, g.shape, w.shape)
                np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-4, err_msg=f"{key} {name}")


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ((0, 1), (5, 6), (0, 1), (1, 1)), ((1, 0), (4, 6), (0, 1), (2, 3)),
    ((-1, -1), (-6, -7), (0, 1), (-1, -2)), ((0, 2), (1000, -1), (-1, -2), (1, 1)),
    ((4, 9), (0, 10), (0, 1), (-2, 1)), ((2, 0), (2, 6), (0, 1), (1, 1)),
    ((0, 2**62), (5, 2**63 - 1), (1, 0), (2**63 - 1, 1))])
def test_slice_run_time(kiln, compile_cache, tmp_path, starts, ends, axes, steps):
    compiled = compile_cache.get(SPECS["slice"])
    harness.run_and_compare(kiln, compiled, {"x": data(5, 6, seed=4), "starts": shape(*starts),
                                             "ends": shape(*ends), "axes": shape(*axes),
                                             "steps": shape(*steps)}, tmp_path)


@pytest.mark.parametrize("axes,steps", [((0, 0), (1, 1)), ((0, 2), (1, 1)), ((0, 1), (0, 1))])
def test_slice_bad_values_are_run_time_errors(kiln, compile_cache, tmp_path, axes, steps):
    compiled = compile_cache.get(SPECS["slice"])
    assert compiled.ok, compiled.failure()
    feeds = {"x": data(5, 6), "starts": shape(0, 0), "ends": shape(3, 3),
             "axes": shape(*axes), "steps": shape(*steps)}
    out = tmp_path / "out"
    out.mkdir()
    result = kiln.run(compiled.artifact, harness.save_inputs(feeds, tmp_path / "in"), out)
    assert result.returncode != 0, result.describe()
    assert "node 'slice' (Slice, opset 17): axes out of range or repeated, or a step is 0" \
        in result.stderr, result.describe()


@pytest.mark.parametrize("split", [(2, 2, 3), (0, 7, 0), (7, 0, 0), (1, 5, 1)])
def test_split_run_time(kiln, compile_cache, tmp_path, split):
    compiled = compile_cache.get(SPECS["split"])
    harness.run_and_compare(kiln, compiled, {"x": data(7, 3, seed=2), "split": shape(*split)},
                            tmp_path)


@pytest.mark.parametrize("split", [(2, 2, 2), (-1, 4, 4), (8, 0, -1), (2**62, 2**62, 7)])
def test_split_bad_sizes_are_run_time_errors(kiln, compile_cache, tmp_path, split):
    compiled = compile_cache.get(SPECS["split"])
    assert compiled.ok, compiled.failure()
    feeds = {"x": data(7, 3), "split": shape(*split)}
    out = tmp_path / "out"
    out.mkdir()
    result = kiln.run(compiled.artifact, harness.save_inputs(feeds, tmp_path / "in"), out)
    assert result.returncode != 0, result.describe()
    assert "node 'split' (Split, opset 17): split sizes are negative or do not sum" \
        in result.stderr, result.describe()


@pytest.mark.parametrize("uaxes,saxes", [((0, 1), (0,)), ((3, 0), (2,)), ((-1, 1), (-1,)),
                                         ((2, -4), (-3,))])
def test_unsqueeze_squeeze_run_time_axes(kiln, compile_cache, tmp_path, uaxes, saxes):
    compiled = compile_cache.get(SPECS["axes"])
    harness.run_and_compare(kiln, compiled, {"x": data(2, 3), "uaxes": shape(*uaxes),
                                             "y": data(1, 3, 1, seed=1),
                                             "saxes": shape(*saxes)}, tmp_path)


@pytest.mark.parametrize("uaxes,saxes,what", [
    ((0, 0), (0,), "node 'unsqueeze' (Unsqueeze, opset 17): axes out of range or repeated"),
    ((0, 4), (0,), "node 'unsqueeze' (Unsqueeze, opset 17): axes out of range or repeated"),
    ((0, 1), (1,), "node 'squeeze' (Squeeze, opset 17): axes out of range or repeated, or a "
                   "squeezed dim is not 1")])
def test_bad_axes_are_run_time_errors(kiln, compile_cache, tmp_path, uaxes, saxes, what):
    compiled = compile_cache.get(SPECS["axes"])
    assert compiled.ok, compiled.failure()
    feeds = {"x": data(2, 3), "uaxes": shape(*uaxes), "y": data(1, 3, 1), "saxes": shape(*saxes)}
    out = tmp_path / "out"
    out.mkdir()
    result = kiln.run(compiled.artifact, harness.save_inputs(feeds, tmp_path / "in"), out)
    assert result.returncode != 0, result.describe()
    assert what in result.stderr, result.describe()


@pytest.mark.parametrize("k", [0, 1, 3, 8])
def test_topk_run_time_k(kiln, compile_cache, tmp_path, k):
    compiled = compile_cache.get(SPECS["topk"])
    # Distinct values: the indices of ties are not compared.
    x = np.random.RandomState(7).permutation(24).astype(np.float32).reshape(3, 8)
    harness.run_and_compare(kiln, compiled, {"x": x, "k": shape(k)}, tmp_path)


@pytest.mark.parametrize("k", [-1, 9])
def test_topk_k_out_of_range_is_a_run_time_error(kiln, compile_cache, tmp_path, k):
    compiled = compile_cache.get(SPECS["topk"])
    assert compiled.ok, compiled.failure()
    feeds = {"x": data(3, 8), "k": shape(k)}
    out = tmp_path / "out"
    out.mkdir()
    result = kiln.run(compiled.artifact, harness.save_inputs(feeds, tmp_path / "in"), out)
    assert result.returncode != 0, result.describe()
    assert "node 'topk' (TopK, opset 17): K is negative or above the axis' size" \
        in result.stderr, result.describe()


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
@pytest.mark.parametrize("pads", [(0, 0, 0, 0), (1, 2, 2, 1), (0, 3, 0, 0), (-1, 1, 1, -2)])
def test_pad_run_time_pads(kiln, compile_cache, tmp_path, mode, pads):
    compiled = compile_cache.get(SPECS[f"pad_{mode}"])
    harness.run_and_compare(kiln, compiled, {"x": data(3, 4, seed=9), "pads": shape(*pads)},
                            tmp_path)


@pytest.mark.parametrize("pads", [(-4, 0, 0, 0), (0, 0, 2**62, 2**62)])
def test_pad_bad_pads_are_run_time_errors(kiln, compile_cache, tmp_path, pads):
    compiled = compile_cache.get(SPECS["pad_constant"])
    assert compiled.ok, compiled.failure()
    feeds = {"x": data(3, 4), "pads": shape(*pads)}
    out = tmp_path / "out"
    out.mkdir()
    result = kiln.run(compiled.artifact, harness.save_inputs(feeds, tmp_path / "in"), out)
    assert result.returncode != 0, result.describe()
    assert "node 'pad' (Pad, opset 17): pads crop more than the dim" in result.stderr, \
        result.describe()


# Sizes read at run time (RunTimeSizes.cpp): Range, ConstantOfShape, Expand, Tile, OneHot
# and CenterCropPad with their sizes graph inputs, or computed in the graph (Range's limit
# from a ReduceMax of data), one compile run at several values; bad values fail checks
# naming the node.

def range_model(path: Path, elem=T.FLOAT) -> Path:
    node = h.make_node("Range", ["start", "limit", "delta"], ["y"], name="range")
    return save(path, [node], [vi("start", [], elem), vi("limit", [], elem),
                               vi("delta", [], elem)], [vi("y", ["n"], elem)])


def computed_range_model(path: Path) -> Path:
    """Range(0, ReduceMax(x) as int64, 1) -> Cast to float -> Add 0.5: a size computed in
    the graph, through ops."""
    nodes = [h.make_node("ReduceMax", ["x"], ["m"], name="max", keepdims=0),
             h.make_node("Cast", ["m"], ["limit"], name="cast", to=T.INT64),
             h.make_node("Range", ["zero", "limit", "one"], ["r"], name="range"),
             h.make_node("Cast", ["r"], ["rf"], name="cast2", to=T.FLOAT),
             h.make_node("Add", ["rf", "half"], ["y"], name="add")]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    return save(path, nodes, [vi("x", [4])], [vi("y", ["n"])], inits)


def constant_of_shape_model(path: Path) -> Path:
    value = numpy_helper.from_array(np.array([7], np.int32), "value")
    node = h.make_node("ConstantOfShape", ["s"], ["y"], name="cos", value=value)
    return save(path, [node], [vi("s", [3], T.INT64)], [vi("y", ["a", "b", "c"], T.INT32)])


def expand_model(path: Path) -> Path:
    node = h.make_node("Expand", ["x", "s"], ["y"], name="expand")
    return save(path, [node], [vi("x", [3, 1]), vi("s", [3], T.INT64)],
                [vi("y", ["a", 3, "c"])])


def tile_model(path: Path) -> Path:
    node = h.make_node("Tile", ["x", "r"], ["y"], name="tile")
    return save(path, [node], [vi("x", [2, 3], T.INT64), vi("r", [2], T.INT64)],
                [vi("y", ["a", "b"], T.INT64)])


def onehot_model(path: Path, axis: int) -> Path:
    node = h.make_node("OneHot", ["i", "depth", "values"], ["y"], name="onehot", axis=axis)
    values = numpy_helper.from_array(np.array([-1.0, 2.5], np.float32), "values")
    return save(path, [node], [vi("i", [2, 3], T.INT64), vi("depth", [], T.FLOAT)],
                [vi("y", ["d", 2, 3] if axis == 0 else [2, 3, "d"])], [values])


def center_crop_pad_model(path: Path) -> Path:
    node = h.make_node("CenterCropPad", ["x", "s"], ["y"], name="ccp", axes=[0, -1])
    return save(path, [node], [vi("x", [5, 2, 6]), vi("s", [2], T.INT64)],
                [vi("y", ["a", 2, "c"])], opset=18)


SPECS.update({
    "range_float": harness.register(harness.CompileSpec(
        "run_dims_range_float", lambda d: range_model(d / "m.onnx"))),
    "range_int32": harness.register(harness.CompileSpec(
        "run_dims_range_int32", lambda d: range_model(d / "m.onnx", T.INT32))),
    "range_computed": harness.register(harness.CompileSpec(
        "run_dims_range_computed", lambda d: computed_range_model(d / "m.onnx"))),
    "constant_of_shape": harness.register(harness.CompileSpec(
        "run_dims_constant_of_shape", lambda d: constant_of_shape_model(d / "m.onnx"))),
    "expand": harness.register(harness.CompileSpec(
        "run_dims_expand", lambda d: expand_model(d / "m.onnx"))),
    "tile": harness.register(harness.CompileSpec(
        "run_dims_tile", lambda d: tile_model(d / "m.onnx"))),
    "onehot_last": harness.register(harness.CompileSpec(
        "run_dims_onehot_last", lambda d: onehot_model(d / "m.onnx", -1))),
    "onehot_first": harness.register(harness.CompileSpec(
        "run_dims_onehot_first", lambda d: onehot_model(d / "m.onnx", 0))),
    "center_crop_pad": harness.register(harness.CompileSpec(
        "run_dims_center_crop_pad", lambda d: center_crop_pad_model(d / "m.onnx"))),
})


def _run_time_error(kiln, compiled, feeds, tmp_path, what):
    assert compiled.ok, compiled.failure()
    out = tmp_path / "out"
    out.mkdir()
    result = kiln.run(compiled.artifact, harness.save_inputs(feeds, tmp_path / "in"), out)
    assert result.returncode != 0, result.describe()
    assert what in result.stderr, result.describe()
    assert harness.crash_marker(result.stderr) is None, result.describe()


@pytest.mark.parametrize("start,limit,delta", [(0, 5, 1), (1.5, 4, 0.5), (10, 2, -3),
                                               (3, 3, 1), (5, 1, 1), (-2.5, 2.5, 0.7)])
def test_range_run_time(kiln, compile_cache, tmp_path, start, limit, delta):
    compiled = compile_cache.get(SPECS["range_float"])
    feeds = {k: np.array(v, np.float32) for k, v in
             [("start", start), ("limit", limit), ("delta", delta)]}
    harness.run_and_compare(kiln, compiled, feeds, tmp_path)


@pytest.mark.parametrize("start,limit,delta", [(0, 7, 2), (10, -3, -4), (-5, 5, 5), (4, 4, 1),
                                               (2**31 - 2, -2**31, -2**30)])
def test_range_int32_run_time(kiln, compile_cache, tmp_path, start, limit, delta):
    compiled = compile_cache.get(SPECS["range_int32"])
    feeds = {k: np.array(v, np.int32) for k, v in
             [("start", start), ("limit", limit), ("delta", delta)]}
    harness.run_and_compare(kiln, compiled, feeds, tmp_path)


@pytest.mark.parametrize("x", [(1, 3, 2, 0), (0, 0, 0, 0), (9.7, 1, 2, 3), (-4, -1, -2, -3)])
def test_range_computed_in_the_graph(kiln, compile_cache, tmp_path, x):
    compiled = compile_cache.get(SPECS["range_computed"])
    harness.run_and_compare(kiln, compiled, {"x": np.array(x, np.float32)}, tmp_path)


@pytest.mark.parametrize("feeds", [{"start": 0, "limit": 5, "delta": 0},
                                   {"start": 0, "limit": 1e30, "delta": 1},
                                   {"start": 0, "limit": float("nan"), "delta": 1}])
def test_range_bad_values_are_run_time_errors(kiln, compile_cache, tmp_path, feeds):
    compiled = compile_cache.get(SPECS["range_float"])
    _run_time_error(kiln, compiled, {k: np.array(v, np.float32) for k, v in feeds.items()},
                    tmp_path, "node 'range' (Range, opset 17): delta is 0, or the range has "
                    "more than 2^40 elements")


@pytest.mark.parametrize("s", [(2, 3, 4), (1, 0, 5), (1, 1, 1)])
def test_constant_of_shape_run_time(kiln, compile_cache, tmp_path, s):
    compiled = compile_cache.get(SPECS["constant_of_shape"])
    harness.run_and_compare(kiln, compiled, {"s": shape(*s)}, tmp_path)


@pytest.mark.parametrize("s", [(2, -1, 3), (2**21, 2**21, 2**21), (0, 2**62, 2**62)])
def test_constant_of_shape_bad_values_are_run_time_errors(kiln, compile_cache, tmp_path, s):
    compiled = compile_cache.get(SPECS["constant_of_shape"])
    _run_time_error(kiln, compiled, {"s": shape(*s)}, tmp_path,
                    "node 'cos' (ConstantOfShape, opset 17): the shape has a negative size "
                    "or more than 2^40 elements")


@pytest.mark.parametrize("s", [(2, 3, 4), (1, 1, 1), (1, 3, 0), (4, 3, 1), (2, 1, 5)])
def test_expand_run_time(kiln, compile_cache, tmp_path, s):
    compiled = compile_cache.get(SPECS["expand"])
    harness.run_and_compare(kiln, compiled, {"x": data(3, 1, seed=5), "s": shape(*s)}, tmp_path)


@pytest.mark.parametrize("s", [(2, 2, 4), (1, 0, 1), (1, 3, -2)])
def test_expand_bad_shapes_are_run_time_errors(kiln, compile_cache, tmp_path, s):
    compiled = compile_cache.get(SPECS["expand"])
    _run_time_error(kiln, compiled, {"x": data(3, 1), "s": shape(*s)}, tmp_path,
                    "node 'expand' (Expand, opset 17): shape does not broadcast with the "
                    "input's [3,1]")


@pytest.mark.parametrize("r", [(1, 1), (2, 3), (0, 4), (3, 0), (1, 5)])
def test_tile_run_time(kiln, compile_cache, tmp_path, r):
    compiled = compile_cache.get(SPECS["tile"])
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    harness.run_and_compare(kiln, compiled, {"x": x, "r": shape(*r)}, tmp_path)


@pytest.mark.parametrize("r", [(-1, 2), (2**40, 2**40)])
def test_tile_bad_repeats_are_run_time_errors(kiln, compile_cache, tmp_path, r):
    compiled = compile_cache.get(SPECS["tile"])
    _run_time_error(kiln, compiled, {"x": np.zeros((2, 3), np.int64), "r": shape(*r)},
                    tmp_path, "node 'tile' (Tile, opset 17): repeats has a negative value")


@pytest.mark.parametrize("axis", ["last", "first"])
@pytest.mark.parametrize("depth", [1, 4, 6.7, 10])
def test_onehot_run_time_depth(kiln, compile_cache, tmp_path, axis, depth):
    compiled = compile_cache.get(SPECS[f"onehot_{axis}"])
    i = np.array([[0, 3, -1], [5, -4, 9]], np.int64)  # negative and out-of-range indices
    harness.run_and_compare(kiln, compiled, {"i": i, "depth": np.array(depth, np.float32)},
                            tmp_path)


@pytest.mark.parametrize("depth", [0, -3, float("inf")])
def test_onehot_bad_depth_is_a_run_time_error(kiln, compile_cache, tmp_path, depth):
    compiled = compile_cache.get(SPECS["onehot_last"])
    _run_time_error(kiln, compiled, {"i": np.zeros((2, 3), np.int64),
                                     "depth": np.array(depth, np.float32)}, tmp_path,
                    "node 'onehot' (OneHot, opset 17): depth is below 1")


@pytest.mark.parametrize("s", [(5, 6), (3, 4), (8, 9), (2, 7), (0, 6), (6, 1)])
def test_center_crop_pad_run_time(kiln, compile_cache, tmp_path, s):
    compiled = compile_cache.get(SPECS["center_crop_pad"])
    harness.run_and_compare(kiln, compiled, {"x": data(5, 2, 6, seed=6), "s": shape(*s)},
                            tmp_path)


def test_center_crop_pad_negative_size_is_a_run_time_error(kiln, compile_cache, tmp_path):
    compiled = compile_cache.get(SPECS["center_crop_pad"])
    _run_time_error(kiln, compiled, {"x": data(5, 2, 6), "s": shape(3, -1)}, tmp_path,
                    "node 'ccp' (CenterCropPad, opset 18): the shape has a negative size")


@pytest.mark.parametrize("model,node,op,input", [
    (range_model, "range", "Range", "start"), (tile_model, "tile", "Tile", "repeats"),
    (constant_of_shape_model, "cos", "ConstantOfShape", "input"),
    (expand_model, "expand", "Expand", "shape"),
    (lambda p: onehot_model(p, -1), "onehot", "OneHot", "depth")])
def test_gpu_devices_refuse_run_time_sizes(kiln, tmp_path, model, node, op, input):
    """Devices other than the cpu have no run dims: the error of before, naming the node
    and the input to --specialize."""
    path = model(tmp_path / "m.onnx")
    r = kiln.compile(path, tmp_path / "m.so", ["--device", "vulkan"])
    assert r.returncode == 1, r.describe()
    assert (f"node '{node}' ({op}, opset 17): output shape depends on a non-constant input "
            f"'{input}' (sizes decided by the run's values are supported on the cpu device "
            f"only so far)") in r.stderr, r.describe()
    assert harness.crash_marker(r.stderr) is None, r.describe()


def pad_then_slice_model(path: Path) -> Path:
    """Pad of x [4, 5] by run-time pads, then a Slice of the run-dim result by run-time
    starts and ends (CenterCropPad's expansion does this)."""
    nodes = [h.make_node("Pad", ["x", "pads"], ["p"], name="pad"),
             h.make_node("Slice", ["p", "starts", "ends"], ["y"], name="slice")]
    return save(path, nodes, [vi("x", [4, 5]), vi("pads", [4], T.INT64),
                              vi("starts", [2], T.INT64), vi("ends", [2], T.INT64)],
                [vi("y", ["a", "b"])])


def symbolic_slice_model(path: Path) -> Path:
    """x [batch, 6] sliced along axis 1 by run-time starts and ends: the batch stays."""
    node = h.make_node("Slice", ["x", "starts", "ends", "axes"], ["y"], name="slice")
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    return save(path, [node], [vi("x", ["batch", 6]), vi("starts", [1], T.INT64),
                               vi("ends", [1], T.INT64)], [vi("y", ["batch", "w"])], [axes])


SPECS.update({
    "pad_then_slice": harness.register(harness.CompileSpec(
        "run_dims_pad_then_slice", lambda d: pad_then_slice_model(d / "m.onnx"))),
    "symbolic_slice": harness.register(harness.CompileSpec(
        "run_dims_symbolic_slice", lambda d: symbolic_slice_model(d / "m.onnx"))),
})


@pytest.mark.parametrize("pads,starts,ends", [((1, 0, 2, 3), (0, 1), (7, 8)),
                                              ((0, 0, 0, 0), (1, -3), (3, 100)),
                                              ((2, 2, 2, 2), (3, 0), (1, 9))])
def test_slice_of_a_run_dim_tensor(kiln, compile_cache, tmp_path, pads, starts, ends):
    compiled = compile_cache.get(SPECS["pad_then_slice"])
    harness.run_and_compare(kiln, compiled, {"x": data(4, 5, seed=8), "pads": shape(*pads),
                                             "starts": shape(*starts), "ends": shape(*ends)},
                            tmp_path)


@pytest.mark.parametrize("batch,start,end", [(1, 0, 6), (3, 2, 5), (5, -1, -7)])
def test_slice_of_a_symbolic_batch_at_run_time(kiln, compile_cache, tmp_path, batch, start,
                                               end):
    compiled = compile_cache.get(SPECS["symbolic_slice"])
    harness.run_and_compare(kiln, compiled, {"x": data(batch, 6, seed=batch),
                                             "starts": shape(start), "ends": shape(end)},
                            tmp_path)
