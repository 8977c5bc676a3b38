"""Sequences and optionals at the boundary (docs/runtime-api.md, "Sequences and optionals
at the boundary"): a sequence input compiled for N items (`--sequence NAME=N`) is the
tensor inputs NAME[0] .. NAME[N-1], each with its own dims; a sequence output is its items
NAME[0], NAME[1], ...; an optional input is compiled present (its value) or absent
(`--absent NAME`). Each model is built with the onnx helper, run by kiln (items as files
through `kiln run`) and by onnxruntime (sequences as lists), and compared; bad input
(a missing --sequence, an item of the wrong element type or rank) fails naming the input."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import harness
from conftest import fail

OPSET = 18
F = T.FLOAT
RNG = np.random.RandomState(7)


def vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def seq_vi(name, elem, shape):
    return h.make_tensor_sequence_value_info(name, elem, shape)


def save(tmp_path, nodes, inputs, outputs, initializers=()):
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    path = tmp_path / "model.onnx"
    onnx.save(m, path)
    return path


def ort_outputs(path, feeds):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def kiln_run(kiln, artifact, feeds, tmp_path, expect_ok=True):
    """Runs with each sequence item as the input NAME[i]; returns (result, out_dir)."""
    folder = tmp_path / "inputs"
    folder.mkdir(exist_ok=True)
    files = {}
    for j, (name, value) in enumerate(feeds.items()):
        items = [(f"{name}[{i}]", v) for i, v in enumerate(value)] \
            if isinstance(value, list) else [(name, value)]
        for i, (item, v) in enumerate(items):
            path = folder / f"in{j}_{i}.npy"
            np.save(path, np.array(v, order="C"))
            files[item] = path
    out_dir = tmp_path / "outputs"
    result = kiln.run(artifact, files, out_dir)
    if expect_ok and result.returncode != 0:
        fail("kiln run failed\n" + result.describe())
    return result, out_dir


def compare_outputs(out_dir, reference):
    """Each reference output (a list for a sequence) against kiln's files."""
    problems = []
    for name, want in reference.items():
        items = [(f"{name}_{i}_", w) for i, w in enumerate(want)] \
            if isinstance(want, list) else [(name, want)]
        for stem, w in items:
            path = out_dir / f"{stem}.npy"
            if not path.is_file():
                problems.append(f"no {path.name}")
                continue
            p = harness.compare(stem, np.load(path), np.asarray(w))
            if p:
                problems.append(p)
        if isinstance(want, list) and (out_dir / f"{name}_{len(want)}_.npy").is_file():
            problems.append(f"output {name!r} has more than {len(want)} items")
    if problems:
        fail("\n".join(problems))


def compile_ok(kiln, path, tmp_path, args):
    artifact = tmp_path / "model.so"
    result = kiln.compile(path, artifact, args)
    if result.returncode != 0:
        fail("kiln compile failed\n" + result.describe())
    return artifact


def sequence_model(tmp_path, concat=False):
    """A sequence input of items [?, 3] (each its own size): their count, a sequence output
    with a tensor inserted at the front and the last item erased, SequenceAt of a constant
    position; with `concat`, ConcatFromSequence of them too (an output whose dim is the
    items' sum, which needs their sizes fixed)."""
    nodes = [
        h.make_node("SequenceLength", ["s"], ["n"]),
        h.make_node("Relu", ["t"], ["rt"]),
        h.make_node("SequenceInsert", ["s", "rt", "zero"], ["s1"]),
        h.make_node("SequenceErase", ["s1", "minus_one"], ["out"]),
        h.make_node("SequenceAt", ["s", "one"], ["second"]),
    ]
    inits = [numpy_helper.from_array(np.int64(0), "zero"),
             numpy_helper.from_array(np.int64(1), "one"),
             numpy_helper.from_array(np.int64(-1), "minus_one")]
    outputs = [vi("n", T.INT64, []), seq_vi("out", F, [None, 3]), vi("second", F, [None, 3])]
    if concat:
        nodes.append(h.make_node("ConcatFromSequence", ["s"], ["all"], axis=0))
        outputs.append(vi("all", F, [None, 3]))
    return save(tmp_path, nodes, [seq_vi("s", F, ["rows", 3]), vi("t", F, [2, 3])], outputs,
                inits)


def test_sequence_input_and_output(kiln, tmp_path):
    """One compile (items of symbolic rows) run with items of several sizes."""
    path = sequence_model(tmp_path)
    artifact = compile_ok(kiln, path, tmp_path, ["--sequence", "s=3"])
    for k, rows in enumerate([[2, 5, 1], [4, 4, 4], [1, 7, 3]]):
        feeds = {"s": [RNG.standard_normal((r, 3)).astype(np.float32) for r in rows],
                 "t": RNG.standard_normal((2, 3)).astype(np.float32)}
        want = ort_outputs(path, feeds)
        assert isinstance(want["out"], list) and len(want["out"]) == 3
        work = tmp_path / f"run{k}"
        work.mkdir()
        _, out_dir = kiln_run(kiln, artifact, feeds, work)
        compare_outputs(out_dir, want)


def test_sequence_items_shaped(kiln, tmp_path):
    """Items whose sizes --shape NAME[i] fixes: ConcatFromSequence of them."""
    path = sequence_model(tmp_path, concat=True)
    rows = [2, 5, 1]
    args = ["--sequence", "s=3"]
    for i, r in enumerate(rows):
        args += ["--shape", f"s[{i}]={r},3"]
    artifact = compile_ok(kiln, path, tmp_path, args)
    feeds = {"s": [RNG.standard_normal((r, 3)).astype(np.float32) for r in rows],
             "t": RNG.standard_normal((2, 3)).astype(np.float32)}
    _, out_dir = kiln_run(kiln, artifact, feeds, tmp_path)
    compare_outputs(out_dir, ort_outputs(path, feeds))


def test_split_to_sequence_output(kiln, tmp_path):
    """A sequence output made inside the graph: SplitToSequence's items."""
    path = save(tmp_path, [h.make_node("SplitToSequence", ["x", "split"], ["s"], axis=1)],
                [vi("x", F, [3, 7])], [seq_vi("s", F, [3, None])],
                [numpy_helper.from_array(np.array([2, 4, 1], np.int64), "split")])
    artifact = compile_ok(kiln, path, tmp_path, [])
    feeds = {"x": RNG.standard_normal((3, 7)).astype(np.float32)}
    _, out_dir = kiln_run(kiln, artifact, feeds, tmp_path)
    compare_outputs(out_dir, ort_outputs(path, feeds))


def optional_model(tmp_path):
    nodes = [h.make_node("OptionalHasElement", ["o"], ["has"]),
             h.make_node("Optional", ["x"], ["ox"]),
             h.make_node("OptionalGetElement", ["ox"], ["y"])]
    o = h.make_value_info("o", h.make_optional_type_proto(h.make_tensor_type_proto(F, [4])))
    return save(tmp_path, nodes, [o, vi("x", F, [2])], [vi("has", T.BOOL, []), vi("y", F, [2])])


@pytest.mark.parametrize("present", [True, False], ids=["present", "absent"])
def test_optional_input(kiln, tmp_path, present):
    path = optional_model(tmp_path)
    artifact = compile_ok(kiln, path, tmp_path, [] if present else ["--absent", "o"])
    x = RNG.standard_normal(2).astype(np.float32)
    feeds = {"x": x}
    if present:
        feeds["o"] = RNG.standard_normal(4).astype(np.float32)
    want = ort_outputs(path, {**feeds, "o": feeds.get("o")})
    assert bool(want["has"]) == present
    _, out_dir = kiln_run(kiln, artifact, feeds, tmp_path)
    compare_outputs(out_dir, want)


def test_sequence_errors(kiln, tmp_path):
    path = sequence_model(tmp_path)
    artifact = tmp_path / "model.so"
    # No --sequence: the compile names the input and the flag.
    r = kiln.compile(path, artifact)
    problem = harness.check_clean_failure(
        r, ["input 's' is a sequence: give its number of items with --sequence s=N"],
        "no --sequence")
    if problem:
        fail(problem)
    # --sequence on a tensor input, --absent on a non-optional one.
    for args, message in [
            (["--sequence", "t=2"], "--sequence names 't', which is not a sequence input"),
            (["--absent", "t"], "--absent names 't', which is not an optional input")]:
        r = kiln.compile(path, artifact, args)
        problem = harness.check_clean_failure(r, [message], " ".join(args))
        if problem:
            fail(problem)
    artifact = compile_ok(kiln, path, tmp_path, ["--sequence", "s=2"])
    t = np.zeros((2, 3), np.float32)
    # An item of the wrong element type, of the wrong rank, or missing: errors naming it.
    for name, items, message in [
            ("dtype", [np.zeros((2, 3), np.float64), np.zeros((1, 3), np.float32)], "s[0]"),
            ("rank", [np.zeros((2, 3), np.float32), np.zeros((3,), np.float32)], "s[1]")]:
        work = tmp_path / name
        work.mkdir()
        r, _ = kiln_run(kiln, artifact, {"s": items, "t": t}, work, expect_ok=False)
        if r.returncode == 0 or message not in r.stderr or harness.crash_marker(r.stderr):
            fail(f"{name}: expected a clean error naming {message!r}\n" + r.describe())


def test_python_session_lists(kiln, tmp_path, monkeypatch):
    """kiln.InferenceSession takes a sequence input as a list and returns a sequence
    output as one (as onnxruntime does); a list of the wrong length is an error naming
    the input."""
    kiln_py = pytest.importorskip("kiln")
    if not hasattr(kiln_py._session, "_sequences"):
        pytest.skip("the installed kiln package predates sequence inputs (reinstall it: "
                    "scripts/setup.sh)")
    path = sequence_model(tmp_path)
    monkeypatch.setenv("KILN_EXECUTABLE", str(harness.tool_path("kiln")))
    artifact = kiln_py.compile(path, tmp_path / "model.so", sequence={"s": 3})
    sess = kiln_py.InferenceSession(artifact, threads=1)
    feeds = {"s": [RNG.standard_normal((r, 3)).astype(np.float32) for r in (3, 1, 6)],
             "t": RNG.standard_normal((2, 3)).astype(np.float32)}
    want = ort_outputs(path, feeds)
    got = dict(zip(want, sess.run(None, feeds)))
    assert isinstance(got["out"], list) and len(got["out"]) == len(want["out"])
    for name, w in want.items():
        for i, (g, x) in enumerate(zip(got[name], w) if isinstance(w, list) else [(got[name], w)]):
            p = harness.compare(f"{name}[{i}]", np.asarray(g), np.asarray(x))
            if p:
                fail(p)
    (only,) = sess.run(["out"], feeds)
    assert isinstance(only, list) and len(only) == 3
    with pytest.raises(kiln_py.InvalidArgument, match=r"input 's' is a sequence of 3 tensors"):
        sess.run(None, {"s": feeds["s"][:2], "t": feeds["t"]})


def test_sequence_map(kiln, tmp_path):
    """SequenceMap over a sequence input and a tensor: the body once per item (items of
    different sizes), two sequence outputs."""
    body = h.make_graph(
        [h.make_node("Mul", ["item", "scale"], ["scaled"]),
         h.make_node("ReduceSum", ["item", "axes"], ["sums"], keepdims=0)],
        "body", [vi("item", F, [None, 3]), vi("scale", F, [3])],
        [vi("scaled", F, [None, 3]), vi("sums", F, [None])],
        [numpy_helper.from_array(np.array([1], np.int64), "axes")])
    path = save(tmp_path, [h.make_node("SequenceMap", ["s", "t"], ["a", "b"], body=body)],
                [seq_vi("s", F, [None, 3]), vi("t", F, [3])],
                [seq_vi("a", F, [None, 3]), seq_vi("b", F, [None])])
    artifact = compile_ok(kiln, path, tmp_path, ["--sequence", "s=3"])
    feeds = {"s": [RNG.standard_normal((r, 3)).astype(np.float32) for r in (4, 1, 2)],
             "t": RNG.standard_normal(3).astype(np.float32)}
    _, out_dir = kiln_run(kiln, artifact, feeds, tmp_path)
    compare_outputs(out_dir, ort_outputs(path, feeds))


def if_model(tmp_path, else_items=2):
    """An If whose branches make sequences (then: x and relu(x); else: -x and x * 2, or
    one item), returned as a sequence output and concatenated inside the graph."""
    then_g = h.make_graph(
        [h.make_node("Relu", ["x"], ["r"]), h.make_node("SequenceConstruct", ["x", "r"], ["ts"])],
        "then", [], [seq_vi("ts", F, [2])])
    else_nodes = [h.make_node("Neg", ["x"], ["n"]), h.make_node("Add", ["x", "x"], ["d"])]
    else_nodes.append(h.make_node("SequenceConstruct", ["n", "d"][:else_items], ["es"]))
    else_g = h.make_graph(else_nodes, "else", [], [seq_vi("es", F, [2])])
    nodes = [h.make_node("If", ["c"], ["s"], name="branch", then_branch=then_g,
                         else_branch=else_g),
             h.make_node("ConcatFromSequence", ["s"], ["all"], axis=0, new_axis=1)]
    return save(tmp_path, nodes, [vi("c", T.BOOL, []), vi("x", F, [2])],
                [seq_vi("s", F, [2]), vi("all", F, [2, 2])])


@pytest.mark.parametrize("cond", [True, False], ids=["then", "else"])
def test_if_sequence_output(kiln, tmp_path, cond):
    path = if_model(tmp_path)
    artifact = compile_ok(kiln, path, tmp_path, [])
    feeds = {"c": np.array(cond), "x": RNG.standard_normal(2).astype(np.float32)}
    _, out_dir = kiln_run(kiln, artifact, feeds, tmp_path)
    compare_outputs(out_dir, ort_outputs(path, feeds))


def test_if_sequence_counts_differ(kiln, tmp_path):
    path = if_model(tmp_path, else_items=1)
    r = kiln.compile(path, tmp_path / "model.so")
    problem = harness.check_clean_failure(
        r, ["node 'branch' (If, opset 18): output 0 is a sequence of 2 items in then_branch "
            "but a sequence of 1 items in else_branch"], "counts differ")
    if problem:
        fail(problem)
