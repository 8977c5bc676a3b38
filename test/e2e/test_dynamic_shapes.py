"""Symbolic dims, compiled once (docs/dynamic-shapes.md): models built with the onnx helper
whose batch (and sequence) dims are ONNX dim_params, compiled once by kiln without --shape
(or with bounds) and run at several sizes against onnxruntime; bad dims at run time (out of
bounds, two inputs disagreeing on one symbol) and ops that cannot take a symbolic dim yet
give clear errors. The scratch arena across runs of one opened model (dynamic_arena.c,
through the C API): it grows to each larger run's size and is kept for smaller ones, per
run context with threads running different sizes at once, and a caller's options.scratch
cannot grow (OUT_OF_MEMORY naming both sizes)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import dynamic_models
import harness
from conftest import clang, fail

OPSET = 17
F = T.FLOAT


def vi(name, shape, elem=F):
    return h.make_tensor_value_info(name, elem, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def save(path: Path, nodes, inputs, outputs, initializers=()) -> Path:
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, str(path))
    return path


def weights(seed, *shape):
    return np.random.RandomState(seed).standard_normal(shape).astype(np.float32) * 0.3


def mlp(path: Path) -> Path:
    """A dynamic-batch classifier: Gemm -> Relu -> MatMul + bias -> Tanh -> Gemm ->
    Softmax, batch a dim_param."""
    nodes = [
        h.make_node("Gemm", ["x", "w1", "b1"], ["h1"], name="fc1", transB=1),
        h.make_node("Relu", ["h1"], ["r1"], name="relu1"),
        h.make_node("MatMul", ["r1", "w2"], ["m2"], name="mm2"),
        h.make_node("Add", ["m2", "b2"], ["a2"], name="bias2"),
        h.make_node("Tanh", ["a2"], ["t2"], name="tanh2"),
        h.make_node("Gemm", ["t2", "w3", "b3"], ["logits"], name="fc3"),
        h.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    inits = [const("w1", weights(1, 48, 32)), const("b1", weights(2, 48)),
             const("w2", weights(3, 48, 40)), const("b2", weights(4, 40)),
             const("w3", weights(5, 40, 10)), const("b3", weights(6, 10))]
    return save(path, nodes, [vi("x", ["batch", 32])],
                [vi("probs", ["batch", 10]), vi("logits", ["batch", 10])], inits)


def encoder_block(path: Path) -> Path:
    """Batch and sequence symbolic: LayerNorm, a projection (MatMul on [batch, seq, d]),
    Sigmoid, a residual Add with a second input sharing both symbols, Transpose, Reshape
    [batch, seq, 4, 8] -> [batch, seq, 32], ReduceMean over the hidden axis."""
    d = 32
    nodes = [
        h.make_node("LayerNormalization", ["x", "g", "b"], ["ln"], name="ln", axis=-1,
                    epsilon=1e-5),
        h.make_node("MatMul", ["ln", "w"], ["proj"], name="proj"),
        h.make_node("Sigmoid", ["proj"], ["act"], name="act"),
        h.make_node("Add", ["act", "skip"], ["res"], name="residual"),
        h.make_node("Reshape", ["res", "split_shape"], ["heads"], name="split"),
        h.make_node("Transpose", ["heads"], ["ht"], name="swap", perm=[0, 1, 3, 2]),
        h.make_node("Reshape", ["ht", "merge_shape"], ["merged"], name="merge"),
        h.make_node("ReduceMean", ["merged"], ["mean"], name="mean", axes=[-1], keepdims=1),
        h.make_node("Sub", ["merged", "mean"], ["y"], name="center"),
    ]
    inits = [const("g", weights(7, d) + 1), const("b", weights(8, d)), const("w", weights(9, d, d)),
             const("split_shape", np.array([0, 0, 4, 8], np.int64)),
             const("merge_shape", np.array([0, 0, -1], np.int64))]
    return save(path, nodes, [vi("x", ["batch", "seq", d]), vi("skip", ["batch", "seq", d])],
                [vi("y", ["batch", "seq", d])], inits)


def compile_model(kiln, model: Path, out: Path, args=()) -> Path:
    r = kiln.compile(model, out, list(args), timeout=300)
    if r.returncode != 0:
        raise AssertionError("kiln compile failed\n" + r.describe())
    return out


def run_at(kiln, model: Path, artifact: Path, feeds, work: Path, threads=None):
    reference = harness.ort_run(model, feeds)
    inputs = harness.save_inputs(feeds, work / "inputs")
    out_dir = work / "outputs"
    out_dir.mkdir(parents=True, exist_ok=True)
    args = ["--threads", str(threads)] if threads else []
    r = kiln.run(artifact, inputs, out_dir, args)
    if r.returncode != 0:
        raise AssertionError("kiln run failed\n" + r.describe())
    got = harness.load_outputs(out_dir, list(reference))
    problems = [p for n in reference
                if (p := harness.compare(n, got[n], reference[n], 1e-3, 1e-4)) is not None]
    assert not problems, "\n".join(problems)


def rand(seed, *shape):
    return np.random.RandomState(seed).standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module")
def mlp_artifacts(kiln, tmp_path_factory):
    folder = tmp_path_factory.mktemp("dyn_mlp")
    model = mlp(folder / "mlp.onnx")
    # Unbounded (no --shape) and bounded (1..64) from the same model.
    unbounded = compile_model(kiln, model, folder / "mlp.so")
    bounded = compile_model(kiln, model, folder / "mlp_b.so", ["--shape", "x=1..64,32"])
    return model, unbounded, bounded


@pytest.mark.parametrize("batch", [1, 5, 64, 200])
def test_mlp_dynamic_batch(kiln, mlp_artifacts, tmp_path, batch):
    model, unbounded, _ = mlp_artifacts
    run_at(kiln, model, unbounded, {"x": rand(batch, batch, 32)}, tmp_path)


# Rows of a product with a symbolic M (batch): 64-row blocks, then at most one block of
# each power of two below 64 (130 = 2 x 64 + 2, 33 = 32 + 1, 7 = 4 + 2 + 1), each a static
# kernel; on one thread and on two (the blocks' parallel loops).
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch", [1, 7, 33, 130])
def test_mlp_row_remainders(kiln, mlp_artifacts, tmp_path, batch, threads):
    model, unbounded, _ = mlp_artifacts
    run_at(kiln, model, unbounded, {"x": rand(batch + 10, batch, 32)}, tmp_path, threads)


@pytest.mark.parametrize("batch", [1, 5, 64])
def test_mlp_bounded_batch(kiln, mlp_artifacts, tmp_path, batch):
    model, _, bounded = mlp_artifacts
    run_at(kiln, model, bounded, {"x": rand(100 + batch, batch, 32)}, tmp_path)


def test_random_inputs_take_dim(kiln, mlp_artifacts, tmp_path):
    # kiln run without --input: random data whose symbolic dims come from --dim (else
    # the symbol's minimum); an unknown symbol is an error.
    _, _, bounded = mlp_artifacts
    r = kiln.run(bounded, {}, tmp_path / "out", ["--dim", "batch=7"])
    assert r.returncode == 0, r.describe()
    assert "probs float32 [7,10]" in r.stdout, r.stdout
    r = kiln.run(bounded, {}, tmp_path / "out")
    assert r.returncode == 0 and "probs float32 [1,10]" in r.stdout, r.describe()
    r = kiln.run(bounded, {}, tmp_path / "out", ["--dim", "seq=3"])
    assert r.returncode != 0 and "--dim seq: the model has no such symbol" in r.stderr, \
        r.describe()


def test_mlp_out_of_bounds(kiln, mlp_artifacts, tmp_path):
    model, _, bounded = mlp_artifacts
    inputs = harness.save_inputs({"x": rand(3, 65, 32)}, tmp_path / "in")
    r = kiln.run(bounded, inputs, tmp_path / "out")
    assert r.returncode != 0
    assert "input 'x' dim 0 ('batch') is 65, outside its bounds 1..64" in r.stderr, r.describe()
    assert "Traceback" not in r.stderr and "Segmentation" not in r.stderr


def test_mlp_wrong_static_dim(kiln, mlp_artifacts, tmp_path):
    model, unbounded, _ = mlp_artifacts
    inputs = harness.save_inputs({"x": rand(3, 4, 31)}, tmp_path / "in")
    r = kiln.run(unbounded, inputs, tmp_path / "out")
    assert r.returncode != 0
    assert "input 'x': expected shape [batch,32], got [4,31]" in r.stderr, r.describe()


def test_inspect_and_header_show_symbols(kiln, mlp_artifacts, tmp_path):
    model, _, bounded = mlp_artifacts
    r = harness.run_command([kiln.kiln, "inspect", bounded], 60)
    assert r.returncode == 0, r.describe()
    assert "symbol batch 1..64" in r.stdout, r.stdout
    assert "input x float32 [batch,32]" in r.stdout, r.stdout
    assert "output probs float32 [batch,10]" in r.stdout, r.stdout
    obj = tmp_path / "mlp.o"
    r = kiln.compile(model, obj, ["--emit", "obj", "--shape", "x=1..64,32"], timeout=300)
    assert r.returncode == 0, r.describe()
    header = (tmp_path / "mlp.h").read_text()
    assert "#define MLP_NUM_SYMBOLS 1" in header
    assert '#define MLP_SYMBOL0_NAME "batch"' in header
    assert "#define MLP_SYMBOL0_MAX 64" in header
    assert "#define MLP_INPUT0_SHAPE {KILN_DIM_SYMBOL(0), 32}" in header
    assert "[batch x 32]" in header
    assert "MLP_INPUT0_BYTES" not in header  # depends on the run
    assert "void mlp_main(int64_t *symbols, const void *input0" in header


@pytest.fixture(scope="module")
def encoder_artifact(kiln, tmp_path_factory):
    folder = tmp_path_factory.mktemp("dyn_enc")
    model = encoder_block(folder / "enc.onnx")
    return model, compile_model(kiln, model, folder / "enc.so")


@pytest.mark.parametrize("batch,seq", [(1, 7), (1, 128), (4, 33), (2, 1)])
def test_encoder_dynamic_batch_and_seq(kiln, encoder_artifact, tmp_path, batch, seq):
    model, artifact = encoder_artifact
    feeds = {"x": rand(seq, batch, seq, 32), "skip": rand(seq + 1, batch, seq, 32)}
    run_at(kiln, model, artifact, feeds, tmp_path)


def test_shared_symbol_mismatch_names_both_inputs(kiln, encoder_artifact, tmp_path):
    model, artifact = encoder_artifact
    inputs = harness.save_inputs({"x": rand(1, 2, 7, 32), "skip": rand(2, 2, 8, 32)},
                                 tmp_path / "in")
    r = kiln.run(artifact, inputs, tmp_path / "out")
    assert r.returncode != 0
    assert ("input 'skip' dim 1 is 8, but input 'x' dim 1 gave symbol 'seq' the value 7"
            in r.stderr), r.describe()


def test_unsupported_op_names_node_and_dim(kiln, tmp_path):
    # Tile does not take a symbolic dim yet: an error naming the node, never a guess.
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"),
             h.make_node("Tile", ["r", "reps"], ["y"], name="the_tile")]
    model = save(tmp_path / "tile.onnx", nodes, [vi("x", ["n", 2, 5, 5])],
                 [vi("y", ["n", 2, 5, 10])],
                 [const("reps", np.array([1, 1, 1, 2], np.int64))])
    r = kiln.compile(model, tmp_path / "tile.so", timeout=120)
    assert r.returncode == 1
    assert "node 'the_tile' (Tile" in r.stderr, r.stderr
    assert "symbolic dimension at axis 0" in r.stderr, r.stderr
    # Fixing the dim compiles.
    r = kiln.compile(model, tmp_path / "tile.so", ["--shape", "x=2,2,5,5"], timeout=120)
    assert r.returncode == 0, r.describe()


def test_conv_symbolic_spatial_dim_is_rejected(kiln, tmp_path):
    # Conv takes a symbolic batch only; a symbolic height is an error naming the node.
    nodes = [h.make_node("Conv", ["x", "w"], ["y"], name="the_conv")]
    model = save(tmp_path / "conv.onnx", nodes, [vi("x", [1, 2, "h", 5])],
                 [vi("y", [1, 3, None, 3])], [const("w", weights(1, 3, 2, 3, 3))])
    r = kiln.compile(model, tmp_path / "conv.so", timeout=120)
    assert r.returncode == 1, r.describe()
    assert "node 'the_conv' (Conv" in r.stderr, r.stderr
    assert "takes a symbolic batch (axis 0 of X) only" in r.stderr, r.stderr


def test_different_symbols_broadcast_is_rejected(kiln, tmp_path):
    nodes = [h.make_node("Add", ["a", "b"], ["y"], name="the_add")]
    model = save(tmp_path / "add.onnx", nodes, [vi("a", ["n", 4]), vi("b", ["m", 4])],
                 [vi("y", [None, 4])])
    r = kiln.compile(model, tmp_path / "add.so", timeout=120)
    assert r.returncode == 1
    assert "node 'the_add' (Add" in r.stderr, r.stderr
    assert "dimension 0 broadcasts 'm' against 'n'" in r.stderr, r.stderr


def test_static_dims_in_bounds_syntax(kiln, tmp_path):
    # --shape still fixes dims; a bad range is a clear error.
    model = mlp(tmp_path / "m.onnx")
    r = kiln.compile(model, tmp_path / "m.so", ["--shape", "x=8..2,32"], timeout=120)
    assert r.returncode != 0
    assert "--shape x: '8..2' is not a non-negative size or bounds" in r.stderr, r.stderr
    r = kiln.compile(model, tmp_path / "m.so", ["--shape", "x=3,32"], timeout=300)
    assert r.returncode == 0, r.describe()
    r = harness.run_command([kiln.kiln, "inspect", tmp_path / "m.so"], 60)
    assert "input x float32 [3,32]" in r.stdout and "symbol" not in r.stdout, r.stdout


# A BERT-like encoder and a CNN in the form torch.onnx.export with dynamic_axes emits them
# (dynamic_models.py): one compile each, run at several sizes against onnxruntime.


@pytest.fixture(scope="module")
def bert_artifact(kiln, tmp_path_factory):
    folder = tmp_path_factory.mktemp("dyn_bert")
    model = dynamic_models.bert_like(folder / "bert.onnx")
    return model, compile_model(kiln, model, folder / "bert.so")


@pytest.mark.parametrize("batch,seq", [(1, 7), (1, 128), (4, 384)])
def test_bert_like_dynamic_batch_and_seq(kiln, bert_artifact, tmp_path, batch, seq):
    model, artifact = bert_artifact
    run_at(kiln, model, artifact, dynamic_models.bert_feeds(batch, seq, seed=seq), tmp_path)


# Attention's scores x V with symbols on both sides runs 4 rows of a head at once, then
# the rows left one by one (seq 33: 8 blocks + 1, 130: 32 + 2); ops on symbolic shapes
# run over the thread pool when a run's work is large enough (3 x 130 x 64 elements and
# up), sequentially below (2 x 7); intermediates sized from the symbols live in the arena,
# grown to each run's size.
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch,seq", [(2, 7), (1, 33), (3, 130)])
def test_bert_like_remainders_and_threads(kiln, bert_artifact, tmp_path, batch, seq, threads):
    model, artifact = bert_artifact
    run_at(kiln, model, artifact, dynamic_models.bert_feeds(batch, seq, seed=seq + threads),
           tmp_path, threads)


def test_bert_like_inspect_shows_symbols(kiln, bert_artifact):
    _, artifact = bert_artifact
    r = harness.run_command([kiln.kiln, "inspect", artifact], 60)
    assert r.returncode == 0, r.describe()
    assert "input input_ids int64 [batch,seq]" in r.stdout, r.stdout
    assert "output last_hidden_state float32 [batch,seq,64]" in r.stdout, r.stdout
    assert "output pooler_output float32 [batch,64]" in r.stdout, r.stdout


def test_bert_like_shared_symbol_mismatch_names_both(kiln, bert_artifact, tmp_path):
    _, artifact = bert_artifact
    feeds = dynamic_models.bert_feeds(1, 7)
    feeds["attention_mask"] = np.ones((1, 8), np.int64)
    inputs = harness.save_inputs(feeds, tmp_path / "in")
    r = kiln.run(artifact, inputs, tmp_path / "out")
    assert r.returncode != 0
    assert ("input 'attention_mask' dim 1 is 8, but input 'input_ids' dim 1 gave symbol "
            "'seq' the value 7" in r.stderr), r.describe()
    assert harness.crash_marker(r.stdout + r.stderr) is None, r.describe()


@pytest.fixture(scope="module")
def cnn_artifacts(kiln, tmp_path_factory):
    folder = tmp_path_factory.mktemp("dyn_cnn")
    model = dynamic_models.cnn(folder / "cnn.onnx")
    unbounded = compile_model(kiln, model, folder / "cnn.so")
    bounded = compile_model(kiln, model, folder / "cnn_b.so", ["--shape", "x=1..8,3,32,32"])
    return model, unbounded, bounded


@pytest.mark.parametrize("batch", [1, 5, 32])
def test_cnn_dynamic_batch(kiln, cnn_artifacts, tmp_path, batch):
    model, unbounded, _ = cnn_artifacts
    run_at(kiln, model, unbounded, {"x": rand(batch, batch, 3, 32, 32)}, tmp_path)


@pytest.mark.parametrize("batch", [3, 7])
def test_cnn_dynamic_batch_two_threads(kiln, cnn_artifacts, tmp_path, batch):
    model, unbounded, _ = cnn_artifacts
    run_at(kiln, model, unbounded, {"x": rand(batch + 1, batch, 3, 32, 32)}, tmp_path, 2)


def test_cnn_above_bound(kiln, cnn_artifacts, tmp_path):
    model, _, bounded = cnn_artifacts
    run_at(kiln, model, bounded, {"x": rand(8, 8, 3, 32, 32)}, tmp_path)
    inputs = harness.save_inputs({"x": rand(9, 9, 3, 32, 32)}, tmp_path / "in")
    r = kiln.run(bounded, inputs, tmp_path / "out")
    assert r.returncode != 0
    assert "input 'x' dim 0 ('batch') is 9, outside its bounds 1..8" in r.stderr, r.describe()
    assert harness.crash_marker(r.stdout + r.stderr) is None, r.describe()


@pytest.mark.parametrize("batch", [1, 4])
def test_branchy_cnn_dynamic_batch(kiln, tmp_path, batch):
    # Clip, Split, Pad (constant, reflect) and Concat around convs with a symbolic batch.
    model = dynamic_models.branchy_cnn(tmp_path / "branchy.onnx")
    artifact = compile_model(kiln, model, tmp_path / "branchy.so")
    run_at(kiln, model, artifact, {"x": rand(batch, batch, 3, 16, 16)}, tmp_path)


# The scratch arena across runs in one process (docs/dynamic-shapes.md, "The runtime"):
# buffers sized from the symbols live in the arena past its static part; a run context's
# arena grows when a run needs more and stays grown; options.scratch cannot grow.
# dynamic_arena.c drives the C API, built with the runtime's sources under
# ThreadSanitizer as test_concurrency.py builds concurrent_runs.c.

ARENA_SIZES = ["1", "64", "7", "130", "2"]  # up, down, up past the last, down
NEEDS = re.compile(r"^(\S+) error: model '(\w+)' needs (\d+) scratch bytes for this run, "
                   r"above the (\d+) of options\.scratch$")


@pytest.fixture(scope="module")
def arena_driver(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dynamic_arena")
    runner = folder / "dynamic_arena"
    sources = sorted((harness.REPO / "runtime" / "src").rglob("*.c"))
    build = harness.run_command(
        [clang(), "-std=c11", "-O1", "-g", "-fsanitize=thread", "-D_GNU_SOURCE",
         "-I", harness.REPO / "runtime" / "include", "-I", harness.REPO / "runtime" / "src",
         harness.REPO / "test" / "e2e" / "dynamic_arena.c", *sources,
         "-o", runner, "-lpthread", "-ldl", "-lm"], 300 * harness.timeout_scale())
    if build.returncode != 0:
        fail("building dynamic_arena.c failed\n" + build.describe())
    return runner


def outputs_of(kiln, artifact: Path) -> list[str]:
    """The artifact's output names, in index order (kiln inspect)."""
    r = harness.run_command([kiln.kiln, "inspect", artifact], 60)
    assert r.returncode == 0, r.describe()
    return [line.split()[1] for line in r.stdout.splitlines() if line.startswith("output ")]


def static_scratch(kiln, artifact: Path) -> int:
    r = harness.run_command([kiln.kiln, "inspect", artifact], 60)
    lines = [line for line in r.stdout.splitlines() if line.startswith("scratch_bytes:")]
    assert r.returncode == 0 and lines, r.describe()
    return int(lines[0].split()[1])


def arena_runs(driver, artifact: Path, work: Path, feeds_of, labels, scratch=0,
               threads=2, rounds=3):
    """Writes each run's inputs (feeds_of(label)) under work/<label>/ and runs the driver
    over the labels in order; returns its stdout lines."""
    for label in labels:
        folder = work / label
        folder.mkdir(parents=True, exist_ok=True)
        for name, value in feeds_of(label).items():
            (folder / f"{name}.bin").write_bytes(np.ascontiguousarray(value).tobytes())
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1")
    cmd = [str(driver), str(artifact), str(work), "2", str(threads), str(rounds), str(scratch),
           *labels]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                          timeout=240 * harness.timeout_scale())
    if proc.returncode != 0 or "WARNING: ThreadSanitizer" in proc.stderr:
        fail(f"dynamic_arena failed (exit {proc.returncode})\n$ {' '.join(cmd)}\n"
             f"--- stderr ---\n{proc.stderr[-6000:]}\n--- stdout ---\n{proc.stdout[-2000:]}")
    return proc.stdout.splitlines()


def check_against_ort(model: Path, outputs, work: Path, feeds_of, labels):
    problems = []
    for label in labels:
        want = harness.ort_run(model, feeds_of(label))
        for k, name in enumerate(outputs):
            got = np.fromfile(work / label / f"out{k}.bin", dtype=want[name].dtype)
            got = got.reshape(want[name].shape)
            if (p := harness.compare(f"{name} at {label}", got, want[name], 1e-3, 1e-4)):
                problems.append(p)
    assert not problems, "\n".join(problems)


def mlp_feeds(label):
    return {"x": rand(int(label), int(label), 32)}


def test_arena_grows_across_runs_and_threads(kiln, mlp_artifacts, arena_driver, tmp_path):
    # One process: runs at 1, 64, 7, 130, 2 (the arena grows at 1, 64 and 130, and the
    # smaller runs reuse it), then two threads running those sizes at once, through
    # kiln_model_run and each in its own run context, bit-equal to the first runs.
    model, unbounded, _ = mlp_artifacts
    assert arena_runs(arena_driver, unbounded, tmp_path, mlp_feeds, ARENA_SIZES) == ["ok"]
    check_against_ort(model, outputs_of(kiln, unbounded), tmp_path, mlp_feeds, ARENA_SIZES)


def test_bert_like_arena_across_runs_and_threads(kiln, bert_artifact, arena_driver, tmp_path):
    # Batch and sequence symbolic, attention scores [batch, heads, seq, seq] in the arena.
    labels = ["1x7", "2x64", "1x5", "3x130", "2x33"]

    def feeds(label):
        batch, seq = map(int, label.split("x"))
        return dynamic_models.bert_feeds(batch, seq, seed=seq)

    model, artifact = bert_artifact
    assert arena_runs(arena_driver, artifact, tmp_path, feeds, labels, rounds=2) == ["ok"]
    check_against_ort(model, outputs_of(kiln, artifact), tmp_path, feeds, labels)


def test_caller_scratch_cannot_grow(kiln, mlp_artifacts, arena_driver, tmp_path):
    model, unbounded, _ = mlp_artifacts
    static = static_scratch(kiln, unbounded)
    # options.scratch of the static size: every run needs more (its batch rows).
    lines = arena_runs(arena_driver, unbounded, tmp_path / "static", mlp_feeds, ARENA_SIZES,
                       scratch=static)
    needs = {}
    for line in lines:
        m = NEEDS.match(line)
        assert m and m[2] == "mlp" and int(m[4]) == static, "\n".join(lines)
        needs[m[1]] = int(m[3])
    assert list(needs) == ARENA_SIZES, "\n".join(lines)
    sizes = sorted(ARENA_SIZES, key=int)
    assert static < needs[sizes[0]] and all(
        needs[a] < needs[b] for a, b in zip(sizes, sizes[1:])), needs
    # options.scratch of the size batch 130 needs: every run up to 130 succeeds (in the
    # caller's arena: the driver checks the bytes past it), 131 fails naming both sizes.
    labels = ARENA_SIZES + ["131"]
    lines = arena_runs(arena_driver, unbounded, tmp_path / "fits", mlp_feeds, labels,
                       scratch=needs["130"])
    assert lines[:-1] == [f"{label} ok" for label in ARENA_SIZES], "\n".join(lines)
    m = NEEDS.match(lines[-1])
    assert m and m[1] == "131" and int(m[3]) > needs["130"] and int(m[4]) == needs["130"], \
        "\n".join(lines)
    check_against_ort(model, outputs_of(kiln, unbounded), tmp_path / "fits", mlp_feeds,
                      ARENA_SIZES)


@pytest.fixture(scope="module")
def pool_indices_artifact(kiln, tmp_path_factory):
    """MaxPool with its Indices output and a 3-D MaxPool over a symbolic batch: one image at
    a time, the indices flat over the whole batch (each image's plus its offset)."""
    folder = tmp_path_factory.mktemp("dyn_pool")
    nodes = [h.make_node("MaxPool", ["x"], ["y", "i"], name="pool2d", kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
             h.make_node("MaxPool", ["v"], ["z"], name="pool3d", kernel_shape=[2, 2, 2],
                         strides=[2, 2, 2])]
    model = save(folder / "pool.onnx", nodes,
                 [vi("x", ["batch", 3, 9, 8]), vi("v", ["batch", 2, 4, 6, 4])],
                 [vi("y", ["batch", 3, 5, 4]), vi("i", ["batch", 3, 5, 4], T.INT64),
                  vi("z", ["batch", 2, 2, 3, 2])])
    return model, compile_model(kiln, model, folder / "pool.so")


@pytest.mark.parametrize("batch", [1, 3])
def test_maxpool_indices_dynamic_batch(kiln, pool_indices_artifact, tmp_path, batch):
    model, artifact = pool_indices_artifact
    # distinct values: the index of each maximum is unique
    x = np.random.RandomState(batch).permutation(batch * 3 * 9 * 8).astype(np.float32)
    run_at(kiln, model, artifact, {"x": x.reshape(batch, 3, 9, 8),
                                   "v": rand(batch, batch, 2, 4, 6, 4)}, tmp_path)


# Flattening a symbolic batch before the classifier, the ways exports write it: the
# product's K (the non-batch dims' product) is static, found by shape inference at
# import (the -1 of [x.size(0), -1] is x's static dims over the shape's sizes).
def flatten_model(path: Path, how: str) -> Path:
    """x [n, 8, 4, 4] -> Relu -> flatten to [n, 128] (`how`) -> Gemm/MatMul -> [n, 10]."""
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu")]
    inits = [const("fw", weights(11, 10, 128)), const("fb", weights(12, 10))]
    if how == "view":  # x.view(x.size(0), -1)
        nodes += [h.make_node("Shape", ["r"], ["s"], name="shape"),
                  h.make_node("Gather", ["s", "zero"], ["n0"], name="size0", axis=0),
                  h.make_node("Unsqueeze", ["n0", "axes"], ["n1"], name="unsq"),
                  h.make_node("Concat", ["n1", "minus1"], ["shape_v"], name="cat", axis=0),
                  h.make_node("Reshape", ["r", "shape_v"], ["flat"], name="view")]
        inits += [const("zero", np.array(0, np.int64)), const("axes", np.array([0], np.int64)),
                  const("minus1", np.array([-1], np.int64))]
    elif how == "flatten":  # torch.flatten(x, 1)
        nodes += [h.make_node("Flatten", ["r"], ["flat"], name="flatten", axis=1)]
    elif how == "zero_minus1":
        nodes += [h.make_node("Reshape", ["r", "shape_c"], ["flat"], name="reshape")]
        inits += [const("shape_c", np.array([0, -1], np.int64))]
    elif how == "minus1_128":
        nodes += [h.make_node("Reshape", ["r", "shape_c"], ["flat"], name="reshape")]
        inits += [const("shape_c", np.array([-1, 128], np.int64))]
    else:
        raise ValueError(how)
    if how in ("view", "zero_minus1"):
        nodes += [h.make_node("Gemm", ["flat", "fw", "fb"], ["y"], name="fc", transB=1)]
    else:
        nodes += [h.make_node("MatMul", ["flat", "fwt"], ["m"], name="fc"),
                  h.make_node("Add", ["m", "fb"], ["y"], name="bias")]
        inits += [const("fwt", np.ascontiguousarray(weights(11, 10, 128).T))]
    return save(path, nodes, [vi("x", ["n", 8, 4, 4])], [vi("y", ["n", 10])], inits)


@pytest.fixture(scope="module")
def flatten_artifacts(kiln, tmp_path_factory):
    folder = tmp_path_factory.mktemp("dyn_flatten")
    out = {}
    for how in ("view", "flatten", "zero_minus1", "minus1_128"):
        model = flatten_model(folder / f"{how}.onnx", how)
        looped = compile_model(kiln, model, folder / f"{how}.so")
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("KILN_NO_BATCH_LOOP", "1")
            over_batch = compile_model(kiln, model, folder / f"{how}_over_batch.so")
        out[how] = (model, looped, over_batch)
    return out


@pytest.mark.parametrize("batch", [1, 3, 5])
@pytest.mark.parametrize("which", ["default", "over_batch"])
@pytest.mark.parametrize("how", ["view", "flatten", "zero_minus1", "minus1_128"])
def test_flatten_symbolic_batch_before_classifier(kiln, flatten_artifacts, tmp_path, how,
                                                   which, batch):
    model, looped, over_batch = flatten_artifacts[how]
    artifact = looped if which == "default" else over_batch
    run_at(kiln, model, artifact, {"x": rand(batch, batch, 8, 4, 4)}, tmp_path)


@pytest.mark.parametrize("computed", [False, True])
def test_flatten_minus1_that_does_not_divide(kiln, tmp_path, computed):
    # [n, 4, 5] to [n, 7, -1]: 20 elements per image over 7 do not divide; an error
    # naming the node (at compile time, whatever n is).
    nodes = []
    inits = [const("seven_m1", np.array([7, -1], np.int64))]
    if computed:
        nodes += [h.make_node("Shape", ["x"], ["s"], name="shape"),
                  h.make_node("Gather", ["s", "zero"], ["n0"], name="size0", axis=0),
                  h.make_node("Unsqueeze", ["n0", "axes"], ["n1"], name="unsq"),
                  h.make_node("Concat", ["n1", "seven_m1"], ["shape_v"], name="cat", axis=0)]
        inits += [const("zero", np.array(0, np.int64)), const("axes", np.array([0], np.int64))]
    else:
        inits += [const("shape_v", np.array([0, 7, -1], np.int64))]
    nodes.append(h.make_node("Reshape", ["x", "shape_v"], ["y"], name="the_view"))
    model = tmp_path / "bad.onnx"
    graph = h.make_graph(nodes, "g", [vi("x", ["n", 4, 5])], [vi("y", ["n", 7, None])],
                         initializer=inits)
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], ir_version=8),
              str(model))
    r = kiln.compile(model, tmp_path / "bad.so", timeout=120)
    assert r.returncode == 1, r.describe()
    assert "node 'the_view' (Reshape" in r.stderr, r.stderr
    assert "the -1 would be 20 elements over 7, which do not divide" in r.stderr, r.stderr
    assert harness.crash_marker(r.stdout + r.stderr) is None, r.describe()
