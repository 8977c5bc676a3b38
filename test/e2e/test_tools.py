"""The day-to-day tools (docs/tools.md): `kiln check`, `kiln verify` (with its bisection and
reproducer), `--profile` / KILN_PROFILE traces, compile progress and `kiln inspect --sizes`."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import harness
from conftest import fail

REPO = Path(__file__).resolve().parents[2]


def _run(cmd, env=None, timeout=300, cwd=None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop("KILN_PROFILE", None)
    full_env.pop("KILN_TEST_MISCOMPILE_NODE", None)
    full_env.update(env or {})
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=timeout * harness.timeout_scale(), env=full_env, cwd=cwd)


def _save(model: onnx.ModelProto, path: Path, **kwargs) -> Path:
    model.ir_version = 8  # what the pinned onnxruntime reads
    onnx.checker.check_model(model)
    onnx.save(model, str(path), **kwargs)
    return path


def _mlp(path: Path, n: int = 256, **save) -> Path:
    """x[n,n] -> MatMul -> Add -> Relu -> MatMul -> Tanh: big enough that the matmuls and
    the elementwise ops run as parallel loops."""
    rng = np.random.default_rng(1)
    w1 = numpy_helper.from_array((rng.standard_normal((n, n)) * 0.05).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "b1")
    w2 = numpy_helper.from_array((rng.standard_normal((n, n)) * 0.05).astype(np.float32), "w2")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="mm1"),
             helper.make_node("Add", ["h0", "b1"], ["h1"], name="bias1"),
             helper.make_node("Relu", ["h1"], ["h2"], name="relu1"),
             helper.make_node("MatMul", ["h2", "w2"], ["h3"], name="mm2"),
             helper.make_node("Tanh", ["h3"], ["y"], name="tanh1")]
    graph = helper.make_graph(nodes, "mlp",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])],
                              [w1, b1, w2])
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path,
                 **save)


def _one_op(path: Path, op: str, dims=(2, 4)) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu1"),
             helper.make_node(op, ["r"], ["y"], name="the_node")]
    graph = helper.make_graph(nodes, "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


#===----------------------------------------------------------------------===//
# kiln check
#===----------------------------------------------------------------------===//


def test_check_supported(kiln, tmp_path):
    model = _mlp(tmp_path / "mlp.onnx", n=64)
    r = _run([kiln.kiln, "check", model])
    if r.returncode != 0:
        fail(f"kiln check refused a supported model:\n{r.stdout}\n{r.stderr}")
    for node in ("mm1", "bias1", "relu1", "mm2", "tanh1"):
        assert f"ok         {node} (" in r.stdout, r.stdout
    assert "opsets: ai.onnx 17" in r.stdout
    assert "weights: 32.2 KiB (3 initializers" in r.stdout, r.stdout
    assert "dynamic dims: none" in r.stdout
    assert "result: supported" in r.stdout
    # Nothing is compiled.
    assert list(tmp_path.iterdir()) == [model]


@pytest.mark.parametrize("op,why", [
    ("Bernoulli", "operator 'Bernoulli' is not supported by kiln yet (no lowering)"),
    ("Det", "operator 'Det' is not supported by kiln yet (no shape inference)"),
])
def test_check_unsupported_node(kiln, tmp_path, op, why):
    model = _one_op(tmp_path / f"{op}.onnx", op)
    r = _run([kiln.kiln, "check", model])
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"UNSUPPORTED the_node ({op}): {why}" in r.stdout, r.stdout
    assert "result: NOT supported for cpu: 1 unsupported node: the_node" in r.stdout
    # The same verdict as kiln compile's.
    c = _run([kiln.kiln, "compile", model, "-o", tmp_path / "m.so"])
    assert c.returncode == 1 and "the_node" in c.stderr, c.stderr


def test_check_dynamic_dims_and_shape(kiln, tmp_path):
    # Sigmoid takes a symbolic batch (docs/dynamic-shapes.md); Sign not yet.
    model = _one_op(tmp_path / "dyn.onnx", "Sigmoid", dims=("batch", 4))
    r = _run([kiln.kiln, "check", model])
    assert r.returncode == 0, r.stdout
    assert "x float32 [batch,4]" in r.stdout
    assert "dynamic dims: x[0] = batch" in r.stdout
    assert "ok         the_node (Sigmoid)" in r.stdout
    model = _one_op(tmp_path / "dyn_sign.onnx", "Sign", dims=("batch", 4))
    r = _run([kiln.kiln, "check", model])
    assert r.returncode == 1, r.stdout
    assert "symbolic dimension at axis 0" in r.stdout, r.stdout
    assert "fix the model input's dim with --shape" in r.stdout, r.stdout
    r = _run([kiln.kiln, "check", model, "--shape", "x=3,4"])
    assert r.returncode == 0, r.stdout
    assert "ok         the_node (Sign)" in r.stdout


def test_check_external_data(kiln, tmp_path):
    model = _mlp(tmp_path / "ext.onnx", n=64, save_as_external_data=True,
                 all_tensors_to_one_file=True, location="ext.weights", size_threshold=0)
    r = _run([kiln.kiln, "check", model, "--quiet"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "external data: 3 tensors, 32.2 KiB in ext.weights" in r.stdout, r.stdout
    assert "ok  " not in r.stdout  # --quiet lists only problems


def test_check_unknown_device_and_bad_file(kiln, tmp_path):
    model = _mlp(tmp_path / "mlp.onnx", n=8)
    r = _run([kiln.kiln, "check", model, "--device", "nosuch"])
    assert r.returncode == 1 and "nosuch" in r.stdout, r.stdout
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\xff\xfe not a model")
    r = _run([kiln.kiln, "check", junk])
    assert r.returncode == 1 and "is not an ONNX model" in r.stderr, r.stderr


def test_check_bert_mini_is_fast(kiln, models_dir):
    start = time.monotonic()
    r = _run([kiln.kiln, "check", models_dir / "bert_mini.onnx"])
    seconds = time.monotonic() - start
    assert r.returncode == 0, r.stdout + r.stderr
    assert "nodes: 196 (device cpu)" in r.stdout and "ok         /blocks.0/Softmax (Softmax)" in r.stdout, r.stdout
    # docs/tools.md: BERT-base (12x the weights) under 2 s.
    assert seconds < 2.0 * harness.timeout_scale(), f"kiln check took {seconds:.2f} s"


#===----------------------------------------------------------------------===//
# kiln verify
#===----------------------------------------------------------------------===//


def test_verify_matches(kiln, tmp_path):
    model = _mlp(tmp_path / "mlp.onnx", n=32)
    r = _run([kiln.kiln, "verify", model], cwd=tmp_path)
    if r.returncode != 0:
        fail(f"kiln verify:\n{r.stdout}\n{r.stderr}")
    assert "y: max abs error" in r.stdout and "ok" in r.stdout
    assert "result: kiln matches onnxruntime" in r.stdout


def test_verify_given_inputs(kiln, tmp_path):
    model = _mlp(tmp_path / "mlp.onnx", n=16)
    x = tmp_path / "x.npy"
    np.save(x, np.full((16, 16), 0.5, np.float32))
    r = _run([kiln.kiln, "verify", model, "--input", f"x={x}", "--threads", "2"], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([kiln.kiln, "verify", model, "--input", f"x={tmp_path / 'none.npy'}"],
             cwd=tmp_path)
    assert r.returncode == 2 and "cannot read" in r.stderr, r.stderr


def test_verify_finds_the_miscompiled_node(kiln, tmp_path):
    """A kiln that computes node 'relu1' wrong (the KILN_TEST_MISCOMPILE_NODE test hook):
    verify names that node, not the later ones its error flows into, and writes a
    reproducer that fails on its own."""
    model = _mlp(tmp_path / "mlp.onnx", n=32)
    env = {"KILN_TEST_MISCOMPILE_NODE": "relu1"}
    repro_dir = tmp_path / "repro"
    r = _run([kiln.kiln, "verify", model, "--reproducer", repro_dir], env=env, cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "MISMATCH" in r.stdout
    assert "first node that differs (exposed): 'relu1' (Relu)" in r.stdout, r.stdout
    assert "h2: max abs error 1" in r.stdout, r.stdout
    assert "kiln verify fails on it" in r.stdout, r.stdout
    repro = onnx.load(str(repro_dir / "repro.onnx"))
    assert [n.op_type for n in repro.graph.node] == ["Relu"]
    assert [i.name for i in repro.graph.input] == ["h1"]
    recorded = np.load(repro_dir / "h1.npy")
    assert recorded.shape == (32, 32)
    # The reproducer alone: fails with the broken kiln, passes without the hook.
    cmd = [kiln.kiln, "verify", repro_dir / "repro.onnx", "--input", f"h1={repro_dir / 'h1.npy'}"]
    assert _run(cmd, env=env, cwd=tmp_path).returncode == 1
    assert _run(cmd, cwd=tmp_path).returncode == 0


def test_verify_bisects_when_exposing_hides_the_error(tmp_path, monkeypatch):
    """When the model with every value exposed matches (kiln computed the values another
    way), verify bisects over graph order with truncated models."""
    sys.path.insert(0, str(REPO / "python" / "kiln"))
    import verify as kv
    model_path = _mlp(tmp_path / "mlp.onnx", n=8)
    compiled = []

    def fake_kiln_run(self, model_path, output_names, feed_paths):
        m = onnx.load(str(model_path))
        feeds = {n: np.load(p) for n, p in feed_paths.items()}
        got = kv.Runner.ort_run(m, output_names, feeds)
        compiled.append(list(output_names))
        # The "bug": h3 (mm2) is wrong unless h2 is an output too.
        exposed = {o.name for o in m.graph.output}
        for name in list(got):
            if name in ("h3", "y") and "h2" not in exposed:
                got[name] = got[name] + 1.0
        return got

    monkeypatch.setattr(kv.Runner, "kiln_run", fake_kiln_run)
    logs = []
    result = kv.verify(model_path, kiln="unused", reproducer_dir=tmp_path / "r",
                       work_dir=tmp_path / "w", log=logs.append)
    assert not result.ok
    assert result.bad_node is not None, "\n".join(logs)
    assert (result.bad_node.name, result.bad_node.how) == ("mm2", "bisected"), "\n".join(logs)
    # Whole model, everything exposed, then log2-many truncated models.
    assert len(compiled) <= 2 + 4, compiled


#===----------------------------------------------------------------------===//
# Profiles
#===----------------------------------------------------------------------===//


@pytest.fixture(scope="module")
def mlp_so(kiln, tmp_path_factory):
    folder = tmp_path_factory.mktemp("profile")
    model = _mlp(folder / "mlp.onnx")
    out = folder / "mlp.so"
    r = _run([kiln.kiln, "compile", model, "-o", out])
    if r.returncode != 0:
        fail(f"compile failed:\n{r.stderr}")
    return out


def _load_trace(path: Path) -> list[dict]:
    trace = json.loads(path.read_text())
    assert trace["otherData"]["dropped_events"] == 0
    return trace["traceEvents"]


def test_profile_trace_names_nodes(kiln, mlp_so, tmp_path):
    trace = tmp_path / "trace.json"
    r = _run([kiln.kiln, "run", mlp_so, "--profile", trace, "--threads", "2", "--repeat", "3"])
    assert r.returncode == 0, r.stderr
    events = _load_trace(trace)
    runs = [e for e in events if e.get("cat") == "run"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    chunks = [e for e in events if e.get("cat") == "chunk"]
    assert len(runs) == 4, runs  # warm-up + 3
    assert runs[0]["name"] == "run mlp"
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in runs + kernels + chunks)
    names = {e["name"] for e in kernels}
    # Every kernel is named by the ONNX nodes it computes (mm1 / mm2 with what fused
    # into them), never by an address.
    assert not any(n.startswith("kernel at") for n in names), names
    assert any(n.startswith("mm1 (MatMul)") for n in names), names
    assert any(n.startswith("mm2 (MatMul)") for n in names), names
    assert len(kernels) % 4 == 0
    # Chunks name their kernel and lie within a run.
    assert {e["name"] for e in chunks} <= names
    first, last = runs[0]["ts"], runs[-1]["ts"] + runs[-1]["dur"]
    assert all(first <= e["ts"] <= last for e in kernels)
    assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in events)


def test_profile_env_and_summary(kiln, mlp_so, tmp_path):
    # KILN_PROFILE works for any program using the runtime (here kiln-run itself).
    trace = tmp_path / "env.json"
    r = _run([kiln.bin_dir / "kiln-run", mlp_so], env={"KILN_PROFILE": str(trace)})
    assert r.returncode == 0, r.stderr
    assert any("mm2" in e["name"] for e in _load_trace(trace))
    # `-`: the top kernels on stderr.
    r = _run([kiln.kiln, "run", mlp_so, "--profile", "-", "--repeat", "2"])
    assert r.returncode == 0, r.stderr
    assert "kiln profile: 3 runs" in r.stderr, r.stderr
    assert "mm1" in r.stderr and "mm2" in r.stderr, r.stderr


def test_profile_bench(kiln, mlp_so, tmp_path):
    trace = tmp_path / "bench.json"
    r = _run([kiln.kiln, "bench", mlp_so, "--count", "6", "--warmup", "1", "--concurrency", "2",
              "--threads", "2", "--profile", trace])
    assert r.returncode == 0, r.stderr
    events = _load_trace(trace)
    runs = [e for e in events if e.get("cat") == "run"]
    # Two callers, one warm-up run each, then 6 timed runs in all, on two threads.
    assert len(runs) == 2 + 6, len(runs)
    assert len({e["tid"] for e in runs}) == 2


def test_profile_unwritable(kiln, mlp_so, tmp_path):
    r = _run([kiln.kiln, "run", mlp_so, "--profile", tmp_path / "no" / "such" / "t.json"])
    assert r.returncode == 1 and "--profile: cannot write" in r.stderr, r.stderr


def test_profile_off_writes_nothing(kiln, mlp_so, tmp_path):
    r = _run([kiln.kiln, "run", mlp_so], cwd=tmp_path)
    assert r.returncode == 0 and "kiln profile" not in r.stderr
    assert list(tmp_path.iterdir()) == []


#===----------------------------------------------------------------------===//
# Progress and sizes
#===----------------------------------------------------------------------===//


def test_compile_progress(kiln, tmp_path):
    model = _mlp(tmp_path / "mlp.onnx", n=16)
    r = _run([kiln.kiln, "compile", model, "-o", tmp_path / "a.so", "--progress"])
    assert r.returncode == 0, r.stderr
    stages = [line.split()[1] for line in r.stderr.splitlines() if line.startswith("kiln: ")]
    assert stages == ["import", "lower", "codegen", "llvm", "package"], r.stderr
    assert "8 onnx ops" in r.stderr and "total" in r.stderr
    # stderr is not a terminal here: nothing by default, nothing with --quiet.
    for extra in ([], ["--quiet"]):
        r = _run([kiln.kiln, "compile", model, "-o", tmp_path / "b.so", *extra])
        assert r.returncode == 0 and r.stderr == "", r.stderr


def _family_table(out: str) -> dict[str, tuple[int, int, int, int]]:
    """`--sizes`' "by op family" table: family -> (code, weights, kernels, constants)."""
    table = {}
    for line in out.split("  by op family (")[1].splitlines()[2:]:
        if not line.startswith("    "):
            break  # the next section
        parts = line.split(None, 4)
        table[parts[4]] = tuple(int(p) for p in parts[:4])
    return table


def test_inspect_sizes(kiln, mlp_so):
    r = _run([kiln.kiln, "inspect", mlp_so, "--sizes"])
    assert r.returncode == 0, r.stderr
    out = r.stdout
    # Two packed 256x256 f32 weights and the bias.
    assert "weights: 525312 bytes in 3 constants" in out, out
    assert "scratch: 524288 bytes per run context" in out, out
    code = int(out.split("code: ")[1].split()[0])
    assert code > 1000, out
    families = _family_table(out)
    assert families["MatMul"][2] == 2 and families["Tanh"][2] == 1, out
    # Every constant is attributed to the code that reads it: the two packed weights
    # to their MatMuls, and b1 too (bias1 is fused into mm1's kernel, whose code reads
    # it under mm1's name).
    assert families["MatMul"][1] == 525312 and families["MatMul"][3] == 3, out
    assert sum(f[1] for f in families.values()) == 525312, out
    kernel_lines = out.split("kernels by code size:")[1].split("  entry (")[0].splitlines()[1:]
    kernel_sizes = {line.split(None, 1)[1]: int(line.split()[0])
                    for line in kernel_lines if line.startswith("    ") and line.split()[0].isdigit()}
    assert {"mm1 (MatMul)", "mm2 (MatMul)", "tanh1 (Tanh)"} <= set(kernel_sizes), out
    assert all(size > 0 for size in kernel_sizes.values()), out
    assert sum(kernel_sizes.values()) <= code
    assert sum(f[0] for f in families.values()) == sum(kernel_sizes.values()), out
    assert ".rodata" in out and ".text" in out
    r = _run([kiln.bin_dir / "kiln-run", mlp_so, "--sizes"])
    assert r.returncode == 1 and "--sizes needs --inspect" in r.stderr, r.stderr


def test_inspect_sizes_weights_by_op_family(kiln, tmp_path):
    """Conv + MatMul + Add with weights of known sizes: `--sizes` puts each weight under
    the op family of the node that reads it, to the byte."""
    rng = np.random.default_rng(3)

    def init(name, shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    inits = [init("a", (1, 32, 8, 8)), init("wc", (64, 32, 1, 1)), init("bc", (64,)),
             init("wm", (4096, 32))]
    nodes = [helper.make_node("Add", ["x", "a"], ["s"], name="add1"),
             helper.make_node("Conv", ["s", "wc", "bc"], ["c"], name="conv1"),
             helper.make_node("Flatten", ["c"], ["f"], name="flat1"),
             helper.make_node("MatMul", ["f", "wm"], ["y"], name="mm1")]
    graph = helper.make_graph(
        nodes, "cma", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 8, 8])],
        # s an output too: the Add is its own loop, not fused into the Conv's input.
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 32, 8, 8])], inits)
    model = _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                  tmp_path / "cma.onnx")
    so = tmp_path / "cma.so"
    r = _run([kiln.kiln, "compile", model, "-o", so])
    assert r.returncode == 0, r.stderr
    r = _run([kiln.kiln, "inspect", so, "--sizes"])
    assert r.returncode == 0, r.stderr
    out = r.stdout
    nbytes = {t.name: numpy_helper.to_array(t).nbytes for t in inits}
    families = _family_table(out)
    weights = {family: (f[1], f[3]) for family, f in families.items() if f[3]}
    assert weights == {"Add": (nbytes["a"], 1),
                       "Conv": (nbytes["wc"] + nbytes["bc"], 2),
                       "MatMul": (nbytes["wm"], 1)}, out
    total = sum(nbytes.values())
    assert f"weights: {total} bytes in 4 constants" in out, out
    # The largest constant names its reader.
    assert "read by mm1 (MatMul)" in out, out

    # Two CPU variants: weights whose bytes both variants share are stored and counted
    # once (the unpacked Add operand), the conv filter packed per variant twice (v2's
    # panels differ), and so is the MatMul's B: a matrix-vector product's B of at most
    # 1 MiB is packed in each kernel's own panel width (Kernels.h, packedPanelWidth), so
    # v2 and v3 store their own; the kernels' code is
    # found in the variant opened (it once read 0 bytes through the other variant's
    # descriptor symbol).
    if platform.machine() not in ("x86_64", "AMD64"):
        return
    r = _run([kiln.kiln, "compile", model, "-o", tmp_path / "two.so",
              "--cpu", "x86-64-v2,x86-64-v3"])
    assert r.returncode == 0, r.stderr
    r = _run([kiln.kiln, "inspect", tmp_path / "two.so", "--sizes"])
    assert r.returncode == 0, r.stderr
    families = _family_table(r.stdout)
    weights = {family: (f[1], f[3]) for family, f in families.items() if f[3]}
    assert weights == {"Add": (nbytes["a"], 1),
                       "Conv": (2 * (nbytes["wc"] + nbytes["bc"]), 4),
                       "MatMul": (2 * nbytes["wm"], 2)}, r.stdout
    assert all(f[0] > 0 for f in families.values() if f[2]), r.stdout


def test_verify_unknown_input_name(kiln, tmp_path):
    model = _mlp(tmp_path / "mlp.onnx", n=8)
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((8, 8), np.float32))
    r = _run([kiln.kiln, "verify", model, "--input", f"nosuch={x}"], cwd=tmp_path)
    assert r.returncode == 2 and "the model has no input 'nosuch' (its inputs: x)" in r.stderr, \
        r.stderr


def test_verify_dynamic_dims(kiln, tmp_path):
    model = _one_op(tmp_path / "dyn.onnx", "Sigmoid", dims=("batch", 4))
    # Without a shape: a clear error; with --shape or a given input: compiled for it.
    r = _run([kiln.kiln, "verify", model], cwd=tmp_path)
    assert r.returncode == 2 and "give --shape x=D0,D1,... or --input x=FILE.npy" in r.stderr, \
        r.stderr
    r = _run([kiln.kiln, "verify", model, "--shape", "x=3,4"], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    x = tmp_path / "x.npy"
    np.save(x, np.ones((5, 4), np.float32))
    r = _run([kiln.kiln, "verify", model, "--input", f"x={x}"], cwd=tmp_path)
    assert r.returncode == 0 and "result: kiln matches onnxruntime" in r.stdout, \
        r.stdout + r.stderr
