"""Ops whose output sizes the run decides from values (issue 17, part 2; run dims,
docs/dynamic-shapes.md): Compress (along an axis, flattened, a condition shorter than the
axis, none or all selected, from a graph input), NonMaxSuppression on its own (both box formats, flipped
corners, identical boxes, ties, the limit per class, score and IoU thresholds at their
boundaries, several batches and classes, thresholds given as graph inputs and as constants)
and a detection head: NMS -> Gather of the survivors' box indices -> Gather of their boxes ->
scaling, one compile run at inputs that select different numbers of boxes. Everything is
compared with onnxruntime, through `kiln run` and Python's kiln.InferenceSession."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import harness
from conftest import fail


def _nms_model(batches, classes, boxes, center=0, inputs_for_thresholds=False,
               with_score_threshold=True):
    names = ["boxes", "scores", "max_out", "iou", "score"]
    if not with_score_threshold:
        names = names[:4]
    node = h.make_node("NonMaxSuppression", names, ["selected"], name="nms",
                       center_point_box=center)
    inputs = [h.make_tensor_value_info("boxes", T.FLOAT, [batches, boxes, 4]),
              h.make_tensor_value_info("scores", T.FLOAT, [batches, classes, boxes])]
    inits = []
    scalars = [("max_out", T.INT64, np.int64), ("iou", T.FLOAT, np.float32),
               ("score", T.FLOAT, np.float32)][:len(names) - 2]
    for name, elem, _ in scalars:
        if inputs_for_thresholds:
            inputs.append(h.make_tensor_value_info(name, elem, [1]))
    g = h.make_graph([node], "nms", inputs,
                     [h.make_tensor_value_info("selected", T.INT64, ["n", 3])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9), scalars


def _with_constants(model, scalars, values):
    for (name, _, dtype), v in zip(scalars, values):
        model.graph.initializer.append(numpy_helper.from_array(np.array([v], dtype), name))
    return model


def _compile(kiln, model, tmp_path, name="m"):
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    artifact = tmp_path / f"{name}.so"
    r = kiln.compile(path, artifact)
    if r.returncode != 0:
        fail("kiln compile failed\n" + r.describe())
    return path, artifact


def _run_and_compare(kiln, path, artifact, feeds, work):
    inputs = harness.save_inputs(feeds, work / "in")
    r = kiln.run(artifact, inputs, work / "out")
    if r.returncode != 0:
        fail("kiln run failed\n" + r.describe())
    want = harness.ort_run(path, feeds)
    got = harness.load_outputs(work / "out", list(want))
    problems = [p for name in want
                if (p := harness.compare(name, got[name], want[name], 0, 0)) is not None]
    assert not problems, "\n".join(problems)
    return want


# The ONNX node tests' cases (boxes [1, 6, 4] unless said), plus ties and boundaries.
BASE_BOXES = np.array([[[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, -0.1, 1.0, 0.9],
                        [0.0, 10.0, 1.0, 11.0], [0.0, 10.1, 1.0, 11.1],
                        [0.0, 100.0, 1.0, 101.0]]], np.float32)
BASE_SCORES = np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]], np.float32)
CENTER_BOXES = np.array([[[0.5, 0.5, 1.0, 1.0], [0.5, 0.6, 1.0, 1.0], [0.5, 0.4, 1.0, 1.0],
                          [0.5, 10.5, 1.0, 1.0], [0.5, 10.6, 1.0, 1.0],
                          [0.5, 100.5, 1.0, 1.0]]], np.float32)
FLIPPED = BASE_BOXES[:, :, [2, 3, 0, 1]].copy()

CASES = {
    # name: boxes, scores, (max_out, iou, score), center
    "suppress_by_iou": (BASE_BOXES, BASE_SCORES, (3, 0.5, 0.0), 0),
    "center_point": (CENTER_BOXES, BASE_SCORES, (3, 0.5, 0.0), 1),
    "flipped": (FLIPPED, BASE_SCORES, (3, 0.5, 0.0), 0),
    "identical": (np.tile(np.array([[[0, 0, 1, 1]]], np.float32), (1, 10, 1)),
                  np.full((1, 1, 10), 0.9, np.float32), (3, 0.5, 0.0), 0),
    "limit": (BASE_BOXES, BASE_SCORES, (2, 0.5, 0.0), 0),
    "no_limit_beyond_boxes": (BASE_BOXES, BASE_SCORES, (100, 0.5, 0.0), 0),
    "zero_max": (BASE_BOXES, BASE_SCORES, (0, 0.5, 0.0), 0),
    "score_threshold": (BASE_BOXES, BASE_SCORES, (3, 0.5, 0.4), 0),
    "score_threshold_equal": (BASE_BOXES, BASE_SCORES, (6, 0.5, 0.6), 0),  # > only
    "iou_boundary": (np.array([[[0, 0, 1, 1], [0, 0.5, 1, 1.5]]], np.float32),
                     np.array([[[0.9, 0.8]]], np.float32), (2, 1 / 3, 0.0), 0),
    "all_below_score": (BASE_BOXES, BASE_SCORES, (3, 0.5, 0.99), 0),
    "ties_lower_index_first": (BASE_BOXES, np.array([[[0.5, 0.5, 0.5, 0.7, 0.7, 0.5]]],
                                                    np.float32), (6, 0.5, 0.0), 0),
    "two_batches_two_classes": (np.concatenate([BASE_BOXES, FLIPPED]),
                                np.concatenate([np.concatenate([BASE_SCORES, BASE_SCORES[:, :, ::-1]], 1)] * 2),
                                (2, 0.5, 0.0), 0),
}


@pytest.mark.parametrize("as_inputs", [False, True], ids=["constants", "inputs"])
@pytest.mark.parametrize("case", list(CASES))
def test_nms_matches_onnxruntime(kiln, tmp_path, case, as_inputs):
    boxes, scores, (max_out, iou, score), center = CASES[case]
    model, scalars = _nms_model(boxes.shape[0], scores.shape[1], boxes.shape[1], center,
                                inputs_for_thresholds=as_inputs)
    feeds = {"boxes": boxes, "scores": np.ascontiguousarray(scores)}
    if as_inputs:
        feeds.update(max_out=np.array([max_out], np.int64), iou=np.array([iou], np.float32),
                     score=np.array([score], np.float32))
    else:
        _with_constants(model, scalars, (max_out, iou, score))
    path, artifact = _compile(kiln, model, tmp_path)
    _run_and_compare(kiln, path, artifact, feeds, tmp_path)


def test_nms_without_score_threshold_and_random_boxes(kiln, tmp_path):
    # 2 batches x 3 classes x 200 random boxes, many overlaps and some tied scores;
    # one compile, thresholds as inputs: every run selects a different number of rows.
    model, _ = _nms_model(2, 3, 200, inputs_for_thresholds=True, with_score_threshold=False)
    path, artifact = _compile(kiln, model, tmp_path)
    counts = set()
    for seed, (max_out, iou) in enumerate([(10, 0.3), (200, 0.5), (1, 0.0), (50, 0.7)]):
        rng = np.random.default_rng(seed)
        corner = rng.uniform(0, 10, (2, 200, 2)).astype(np.float32)
        size = rng.uniform(0.5, 3, (2, 200, 2)).astype(np.float32)
        boxes = np.concatenate([corner, corner + size], axis=2)
        scores = np.round(rng.uniform(0, 1, (2, 3, 200)), 2).astype(np.float32)
        feeds = {"boxes": boxes, "scores": scores, "max_out": np.array([max_out], np.int64),
                 "iou": np.array([iou], np.float32)}
        want = _run_and_compare(kiln, path, artifact, feeds, tmp_path / str(seed))
        counts.add(want["selected"].shape[0])
    assert len(counts) == 4, counts


def _detection_head(boxes, classes):
    """NMS -> the survivors' box indices (Gather of column 2) -> their boxes (Gather
    from boxes[0]) -> scaled by 2: outputs of a size the run decides, through ops."""
    nodes = [
        h.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score"],
                    ["selected"], name="nms"),
        h.make_node("Gather", ["selected", "col2"], ["box_index"], name="pick_index", axis=1),
        h.make_node("Squeeze", ["boxes", "axis0"], ["boxes2d"], name="squeeze"),
        h.make_node("Gather", ["boxes2d", "box_index"], ["kept"], name="pick_boxes", axis=0),
        h.make_node("Mul", ["kept", "two"], ["scaled"], name="scale"),
    ]
    inits = [numpy_helper.from_array(np.array(2, np.int64), "col2"),
             numpy_helper.from_array(np.array([0], np.int64), "axis0"),
             numpy_helper.from_array(np.array(2, np.float32), "two"),
             numpy_helper.from_array(np.array([boxes], np.int64), "max_out"),
             numpy_helper.from_array(np.array([0.45], np.float32), "iou"),
             numpy_helper.from_array(np.array([0.2], np.float32), "score")]
    g = h.make_graph(nodes, "head",
                     [h.make_tensor_value_info("boxes", T.FLOAT, [1, boxes, 4]),
                      h.make_tensor_value_info("scores", T.FLOAT, [1, classes, boxes])],
                     [h.make_tensor_value_info("selected", T.INT64, ["n", 3]),
                      h.make_tensor_value_info("scaled", T.FLOAT, ["n", 4])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9)


def test_detection_head_kiln_run_and_python(kiln, tmp_path):
    import kiln as kiln_py

    model = _detection_head(64, 2)
    path, artifact = _compile(kiln, model, tmp_path, "head")
    session = kiln_py.InferenceSession(str(artifact))
    counts = set()
    for seed in range(3):
        rng = np.random.default_rng(100 + seed)
        corner = rng.uniform(0, 8, (1, 64, 2)).astype(np.float32)
        boxes = np.concatenate([corner, corner + rng.uniform(0.5, 2 + seed, (1, 64, 2))
                                .astype(np.float32)], axis=2)
        scores = rng.uniform(0, 1, (1, 2, 64)).astype(np.float32)
        feeds = {"boxes": boxes, "scores": scores}
        want = _run_and_compare(kiln, path, artifact, feeds, tmp_path / str(seed))
        got = session.run(None, feeds)
        np.testing.assert_array_equal(got[0], want["selected"])
        np.testing.assert_array_equal(got[1], want["scaled"])
        counts.add(want["selected"].shape[0])
    assert len(counts) > 1, counts


COMPRESS_CASES = {
    # name: shape, dtype, axis, condition
    "rows": ((5, 3), np.float32, 0, [1, 0, 1, 1, 0]),
    "columns_short_condition": ((2, 6), np.int64, 1, [0, 1, 1]),
    "negative_axis": ((2, 3, 4), np.float32, -1, [1, 0, 0, 1]),
    "flattened": ((3, 4), np.float32, None, [0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1]),
    "none_selected": ((4, 2), np.float32, 0, [0, 0, 0, 0]),
    "all_selected": ((4, 2), np.int32, 0, [1, 1, 1, 1]),
}


@pytest.mark.parametrize("case", list(COMPRESS_CASES))
def test_compress_matches_onnxruntime(kiln, tmp_path, case):
    shape, dtype, axis, condition = COMPRESS_CASES[case]
    elem = {np.float32: T.FLOAT, np.int64: T.INT64, np.int32: T.INT32}[dtype]
    attrs = {} if axis is None else {"axis": axis}
    g = h.make_graph([h.make_node("Compress", ["x", "c"], ["y"], name="compress", **attrs)],
                     "compress",
                     [h.make_tensor_value_info("x", elem, list(shape)),
                      h.make_tensor_value_info("c", T.BOOL, [len(condition)])],
                     [h.make_tensor_value_info("y", elem, None)])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9)
    path, artifact = _compile(kiln, model, tmp_path)
    rng = np.random.default_rng(len(case))
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    # One compile, two conditions: the selected count differs between the runs.
    for i, cond in enumerate([condition, [not v for v in condition]]):
        _run_and_compare(kiln, path, artifact, {"x": x, "c": np.array(cond, bool)},
                         tmp_path / str(i))


# NonZero (docs/dynamic-shapes.md, "Run dims"): the indices of the non-zero elements,
# [rank, count] int64 in row-major order, a count the run decides; then the ops that use
# them: Transpose -> GatherND (the non-zero values) and Gather of one coordinate row.
NONZERO_CASES = {
    # name: shape, dtype, values (None: random with about half zeros)
    "float_2d": ((3, 4), np.float32, None),
    "int_3d": ((2, 3, 4), np.int64, None),
    "bool_1d": ((7,), np.bool_, [1, 0, 0, 1, 1, 0, 1]),
    "none": ((2, 5), np.float32, np.zeros(10)),
    "all": ((2, 2, 2), np.int32, np.arange(1, 9)),
    "nan_and_negative_zero": ((4,), np.float32, [np.nan, -0.0, 0.0, -1.0]),
}


def _nonzero_model(shape, elem, then=True):
    nodes = [h.make_node("NonZero", ["x"], ["idx"], name="nz")]
    outputs = [h.make_tensor_value_info("idx", T.INT64, [len(shape), "n"])]
    inits = []
    if then:
        # The values at the indices, and each found element's first coordinate times 10.
        nodes += [h.make_node("Transpose", ["idx"], ["idx_t"], name="tr", perm=[1, 0]),
                  h.make_node("GatherND", ["x", "idx_t"], ["vals"], name="gnd"),
                  h.make_node("Gather", ["idx", "row0"], ["first"], name="g", axis=0),
                  h.make_node("Mul", ["first", "ten"], ["scaled"], name="mul")]
        inits = [numpy_helper.from_array(np.array(0, np.int64), "row0"),
                 numpy_helper.from_array(np.array(10, np.int64), "ten")]
        outputs += [h.make_tensor_value_info("vals", elem, ["n"]),
                    h.make_tensor_value_info("scaled", T.INT64, ["n"])]
    g = h.make_graph(nodes, "nonzero", [h.make_tensor_value_info("x", elem, list(shape))],
                     outputs, inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9)


@pytest.mark.parametrize("case", list(NONZERO_CASES))
def test_nonzero_matches_onnxruntime(kiln, tmp_path, case):
    shape, dtype, values = NONZERO_CASES[case]
    elem = {np.float32: T.FLOAT, np.int64: T.INT64, np.int32: T.INT32, np.bool_: T.BOOL}[dtype]
    model = _nonzero_model(shape, elem, then=dtype is not np.bool_)
    path, artifact = _compile(kiln, model, tmp_path, case)
    if values is None:
        rng = np.random.default_rng(len(shape))
        x = (rng.standard_normal(shape) * (rng.uniform(size=shape) > 0.5)).astype(dtype)
    else:
        x = np.array(values, dtype=dtype).reshape(shape)
    want = _run_and_compare(kiln, path, artifact, {"x": x}, tmp_path / "run")
    np.testing.assert_array_equal(want["idx"], np.array(np.nonzero(x)))


def test_nonzero_one_compile_at_several_counts(kiln, tmp_path):
    """One compile, inputs with 0, some and all elements non-zero, through kiln run and
    Python's InferenceSession."""
    import kiln as kiln_py

    path, artifact = _compile(kiln, _nonzero_model((3, 5), T.FLOAT), tmp_path)
    session = kiln_py.InferenceSession(str(artifact))
    counts = set()
    for seed, keep in enumerate([0.0, 0.3, 0.7, 1.0]):
        rng = np.random.default_rng(seed)
        x = ((rng.uniform(size=(3, 5)) < keep) * (1 + rng.uniform(size=(3, 5)))).astype(
            np.float32)
        want = _run_and_compare(kiln, path, artifact, {"x": x}, tmp_path / str(seed))
        got = session.run(None, {"x": x})
        for g, name in zip(got, ["idx", "vals", "scaled"]):
            np.testing.assert_array_equal(g, want[name])
        counts.add(want["idx"].shape[1])
    assert {0, 15} <= counts and len(counts) >= 3, counts


def test_gpu_devices_refuse_nonzero(kiln, tmp_path):
    """Devices other than the cpu have no run dims: NonZero is refused naming the node."""
    path = tmp_path / "m.onnx"
    path.write_bytes(_nonzero_model((3, 4), T.FLOAT).SerializeToString())
    r = kiln.compile(path, tmp_path / "m.so", ["--device", "vulkan"])
    assert r.returncode == 1, r.describe()
    assert ("node 'nz' (NonZero, opset 17): output shape depends on a non-constant input 'X' "
            "(sizes decided by the run's values are supported on the cpu device only so far)"
            in r.stderr), r.describe()
    assert harness.crash_marker(r.stderr) is None, r.describe()


# Unique (docs/dynamic-shapes.md, "Run dims"): its four outputs, sorted and not, with an
# axis and without; the number of unique slices is one run symbol shared by Y, indices
# and counts.
UNIQUE_CASES = {
    # name: shape, dtype, axis, sorted, values (None: random small integers)
    "flat_sorted": ((3, 4), np.float32, None, 1, None),
    "flat_unsorted": ((3, 4), np.int64, None, 0, None),
    "rows_sorted": ((5, 3), np.int8, 0, 1, [[1, 2, 3], [0, 5, 1], [1, 2, 3], [0, -5, 0],
                                             [0, 5, 1]]),
    "rows_unsorted": ((5, 3), np.int8, 0, 0, [[1, 2, 3], [0, 5, 1], [1, 2, 3], [0, 5, 0],
                                               [0, 5, 1]]),
    "middle_axis": ((2, 4, 2), np.float32, 1, 1, [[[1, 1], [0, 1], [2, 1], [0, 1]],
                                                  [[1, 1], [0, 1], [2, 1], [0, 1]]]),
    "negative_axis_unsorted": ((2, 5), np.float32, -1, 0, [[3, 1, 3, 2, 1], [0, 4, 0, 2, 4]]),
    "all_same": ((6,), np.float32, None, 1, [2.5] * 6),
    "one": ((1,), np.int64, None, 1, [7]),
}


def _unique_model(shape, elem, axis, sorted_):
    attrs = {"sorted": sorted_}
    if axis is not None:
        attrs["axis"] = axis
    node = h.make_node("Unique", ["x"], ["y", "indices", "inverse", "counts"], name="uq",
                       **attrs)
    y_shape = ["u"] if axis is None else [
        "u" if i == axis % len(shape) else d for i, d in enumerate(shape)]
    slices = int(np.prod(shape)) if axis is None else shape[axis]
    g = h.make_graph([node], "unique", [h.make_tensor_value_info("x", elem, list(shape))],
                     [h.make_tensor_value_info("y", elem, y_shape),
                      h.make_tensor_value_info("indices", T.INT64, ["u"]),
                      h.make_tensor_value_info("inverse", T.INT64, [slices]),
                      h.make_tensor_value_info("counts", T.INT64, ["u"])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9)


@pytest.mark.parametrize("case", list(UNIQUE_CASES))
def test_unique_matches_onnxruntime(kiln, tmp_path, case):
    shape, dtype, axis, sorted_, values = UNIQUE_CASES[case]
    elem = {np.float32: T.FLOAT, np.int64: T.INT64, np.int8: T.INT8}[dtype]
    path, artifact = _compile(kiln, _unique_model(shape, elem, axis, sorted_), tmp_path, case)
    if values is None:
        x = np.random.default_rng(5).integers(-3, 4, shape).astype(dtype)
    else:
        x = np.array(values, dtype=dtype).reshape(shape)
    want = _run_and_compare(kiln, path, artifact, {"x": x}, tmp_path / "run")
    if sorted_:
        y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True,
                                     return_counts=True, axis=axis)
        np.testing.assert_array_equal(want["y"], y)
        np.testing.assert_array_equal(want["counts"], cnt)


def test_unique_one_compile_at_several_counts(kiln, tmp_path):
    """One compile, inputs with 1, some and all distinct values, through kiln run and
    Python's InferenceSession."""
    import kiln as kiln_py

    path, artifact = _compile(kiln, _unique_model((10,), T.INT64, None, 0), tmp_path)
    session = kiln_py.InferenceSession(str(artifact))
    counts = set()
    for seed, high in enumerate([1, 4, 1000]):
        x = np.random.default_rng(seed).integers(0, high, (10,)).astype(np.int64)
        if high == 1000:
            x = np.arange(10, dtype=np.int64)[::-1].copy()
        want = _run_and_compare(kiln, path, artifact, {"x": x}, tmp_path / str(seed))
        got = session.run(None, {"x": x})
        for g, name in zip(got, ["y", "indices", "inverse", "counts"]):
            np.testing.assert_array_equal(g, want[name])
        counts.add(want["y"].shape[0])
    assert {1, 10} <= counts and len(counts) == 3, counts


def test_unique_of_a_scalar_matches_onnxruntime(kiln, tmp_path):
    model = _unique_model((), T.FLOAT, None, 1)
    path, artifact = _compile(kiln, model, tmp_path)
    _run_and_compare(kiln, path, artifact, {"x": np.array(2.5, np.float32)}, tmp_path / "run")


def test_unique_nan_is_a_run_time_error(kiln, tmp_path):
    """NaN has no defined place among the unique values (numpy keeps one NaN, onnxruntime
    counts every element equal to it): the run fails naming the node; without NaN the
    same compile runs."""
    path, artifact = _compile(kiln, _unique_model((4,), T.FLOAT, None, 1), tmp_path)
    x = np.array([1.0, np.nan, 2.0, 1.0], np.float32)
    out = tmp_path / "out"
    out.mkdir()
    r = kiln.run(artifact, harness.save_inputs({"x": x}, tmp_path / "in"), out)
    assert r.returncode != 0, r.describe()
    assert "node 'uq' (Unique, opset 17): X holds NaN" in r.stderr, r.describe()
    assert harness.crash_marker(r.stderr) is None, r.describe()
    _run_and_compare(kiln, path, artifact, {"x": np.array([3, 1, 3, 0], np.float32)},
                     tmp_path / "ok")


def test_nonzero_of_a_scalar_is_refused(kiln, tmp_path):
    g = h.make_graph([h.make_node("NonZero", ["x"], ["y"], name="nz")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [])],
                     [h.make_tensor_value_info("y", T.INT64, [0, "n"])])
    path = tmp_path / "m.onnx"
    path.write_bytes(h.make_model(g, opset_imports=[h.make_opsetid("", 17)],
                                  ir_version=9).SerializeToString())
    r = kiln.compile(path, tmp_path / "m.so")
    assert r.returncode == 1, r.describe()
    assert "node 'nz' (NonZero, opset 17): a scalar input is not supported" in r.stderr, \
        r.describe()


def test_score_threshold_head_with_nonzero(kiln, tmp_path):
    """Detection-style: Greater(scores, threshold) -> NonZero -> Squeeze -> Gather of the
    boxes -> Mul, the threshold a graph input, one compile at thresholds keeping none,
    some and all boxes."""
    nodes = [h.make_node("Greater", ["scores", "threshold"], ["keep"], name="gt"),
             h.make_node("NonZero", ["keep"], ["idx2d"], name="nz"),
             h.make_node("Squeeze", ["idx2d", "axis0"], ["idx"], name="sq"),
             h.make_node("Gather", ["boxes", "idx"], ["kept"], name="pick", axis=0),
             h.make_node("Mul", ["kept", "two"], ["scaled"], name="scale")]
    inits = [numpy_helper.from_array(np.array([0], np.int64), "axis0"),
             numpy_helper.from_array(np.array(2, np.float32), "two")]
    g = h.make_graph(nodes, "head",
                     [h.make_tensor_value_info("scores", T.FLOAT, [16]),
                      h.make_tensor_value_info("boxes", T.FLOAT, [16, 4]),
                      h.make_tensor_value_info("threshold", T.FLOAT, [])],
                     [h.make_tensor_value_info("idx", T.INT64, ["n"]),
                      h.make_tensor_value_info("scaled", T.FLOAT, ["n", 4])], inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9)
    path, artifact = _compile(kiln, model, tmp_path, "head")
    rng = np.random.default_rng(3)
    scores = rng.uniform(0, 1, 16).astype(np.float32)
    boxes = rng.uniform(0, 10, (16, 4)).astype(np.float32)
    counts = set()
    for i, t in enumerate([1.5, 0.5, 0.8, -1.0]):
        want = _run_and_compare(kiln, path, artifact,
                                {"scores": scores, "boxes": boxes,
                                 "threshold": np.array(t, np.float32)}, tmp_path / str(i))
        counts.add(want["idx"].shape[0])
    assert {0, 16} <= counts and len(counts) == 4, counts
