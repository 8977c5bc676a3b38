"""The `kiln` Python package (python/): InferenceSession, compile, the compile cache,
errors, threads, and an onnxruntime script run unchanged through kiln.

Needs the package installed into .venv (scripts/setup.sh does it); skipped without it,
except in CI. Small models built here; the whole file takes a few seconds."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import harness

try:
    import kiln
except ImportError as e:  # pragma: no cover - depends on the environment
    if os.environ.get("CI", "").lower() == "true":
        raise
    pytest.skip(f"the kiln Python package is not installed (scripts/setup.sh installs "
                f"it into .venv): {e}", allow_module_level=True)

HERE = Path(__file__).parent
OPSET = [helper.make_opsetid("", 17)]


@pytest.fixture(scope="module", autouse=True)
def _kiln_env(tmp_path_factory):
    """The build's kiln and a private cache: never the user's ~/.cache/kiln."""
    exe = harness.tool_path("kiln")
    if not exe.is_file():
        pytest.fail(f"{exe} not found: build kiln first", pytrace=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KILN_EXECUTABLE", str(exe))
        mp.setenv("KILN_CACHE_DIR", str(tmp_path_factory.mktemp("kiln-cache")))
        yield


def _mlp() -> onnx.ModelProto:
    """x [4,32] -> MatMul, Add, Relu -> y [4,16]; Gather(h, idx) -> rows [3,16]."""
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((32, 16)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "b")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul0"),
        helper.make_node("Add", ["xw", "b"], ["h"], name="add0"),
        helper.make_node("Relu", ["h"], ["y"], name="relu0"),
        helper.make_node("Gather", ["h", "idx"], ["rows"], name="pick_rows", axis=0),
    ]
    g = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32]),
         helper.make_tensor_value_info("idx", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16]),
         helper.make_tensor_value_info("rows", TensorProto.FLOAT, [3, 16])],
        initializer=[w, b])
    return helper.make_model(g, opset_imports=OPSET, ir_version=8)


@pytest.fixture(scope="module")
def models(_kiln_env, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("py-models")
    onnx.save(_mlp(), d / "mlp.onnx")
    # An op from a domain kiln does not know: a compile error naming the node.
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu0"),
         helper.make_node("NoSuchOp", ["r"], ["y"], name="mystery_node",
                          domain="test.kiln")], "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    onnx.save(helper.make_model(g, opset_imports=OPSET + [helper.make_opsetid("test.kiln", 1)], ir_version=8),
              d / "bad.onnx")
    # A 16 MiB input reduced to 4 KiB: shows whether the input was copied.
    g = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "axes"], ["s"], name="sum0", keepdims=0)], "big",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024, 4096])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [1024])],
        initializer=[numpy_helper.from_array(np.array([1], np.int64), "axes")])
    onnx.save(helper.make_model(g, opset_imports=OPSET, ir_version=8), d / "big.onnx")
    # bool, float16, int32, uint8 in and out.
    ins = [helper.make_tensor_value_info("m", TensorProto.BOOL, [3]),
           helper.make_tensor_value_info("h", TensorProto.FLOAT16, [3]),
           helper.make_tensor_value_info("i", TensorProto.INT32, [3]),
           helper.make_tensor_value_info("u", TensorProto.UINT8, [3])]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in ("mf", "hf", "if")]
    outs += [helper.make_tensor_value_info("nm", TensorProto.BOOL, [3]),
             helper.make_tensor_value_info("h2", TensorProto.FLOAT16, [3]),
             helper.make_tensor_value_info("u2", TensorProto.UINT8, [3])]
    nodes = [helper.make_node("Cast", [a], [b], to=TensorProto.FLOAT)
             for a, b in (("m", "mf"), ("h", "hf"), ("i", "if"))]
    nodes += [helper.make_node("Not", ["m"], ["nm"]), helper.make_node("Add", ["h", "h"], ["h2"]),
              helper.make_node("Add", ["u", "u"], ["u2"])]
    onnx.save(helper.make_model(helper.make_graph(nodes, "types", ins, outs),
                                opset_imports=OPSET, ir_version=8), d / "types.onnx")
    kiln.compile(d / "mlp.onnx", d / "mlp.so")
    kiln.compile(d / "big.onnx", d / "big.so")
    return d


@pytest.fixture(scope="module")
def sess(models) -> "kiln.InferenceSession":
    return kiln.InferenceSession(models / "mlp.so", threads=2)


def _feeds(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((4, 32)).astype(np.float32),
            "idx": rng.integers(-4, 4, 3).astype(np.int64)}


#===--- onnxruntime's interface ---------------------------------------------===#

def test_same_script_through_onnxruntime_and_kiln(models, tmp_path):
    script = (HERE / "python_ort_script.py").read_text()
    swapped = script.replace("import onnxruntime as rt", "import kiln as rt", 1)
    assert swapped != script
    (tmp_path / "with_kiln.py").write_text(swapped)
    results = {}
    for name, path in (("ort", HERE / "python_ort_script.py"),
                       ("kiln", tmp_path / "with_kiln.py")):
        out = tmp_path / f"{name}.npz"
        proc = subprocess.run([sys.executable, str(path), str(models / "mlp.onnx"), str(out)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"{name}:\n{proc.stderr}"
        results[name] = dict(np.load(out))
    ort, kln = results["ort"], results["kiln"]
    assert json.loads(str(kln["described"])) == json.loads(str(ort["described"]))
    assert sorted(kln) == sorted(ort)
    for key in ort:
        if key != "described":
            assert kln[key].dtype == ort[key].dtype and kln[key].shape == ort[key].shape, key
            np.testing.assert_allclose(kln[key], ort[key], rtol=1e-4, atol=1e-5, err_msg=key)


def test_get_inputs_and_outputs(sess):
    ins, outs = sess.get_inputs(), sess.get_outputs()
    assert [(a.name, a.type, a.shape) for a in ins] == [
        ("x", "tensor(float)", [4, 32]), ("idx", "tensor(int64)", [3])]
    assert [(a.name, a.type, a.shape) for a in outs] == [
        ("y", "tensor(float)", [4, 16]), ("rows", "tensor(float)", [3, 16])]
    assert repr(ins[0]) == "NodeArg(name='x', type='tensor(float)', shape=[4, 32])"
    assert sess.num_threads == 2
    assert sess.onnx_path is None and sess.cache_hit is None


def test_run_selects_outputs(sess, models):
    feeds = _feeds(0)
    y, rows = sess.run(None, feeds)
    assert y.dtype == np.float32 and y.shape == (4, 16) and y.flags.c_contiguous
    assert (y >= 0).all()
    assert sess.run([], feeds)[0].tolist() == y.tolist()
    (only_rows,) = sess.run(["rows"], feeds)
    np.testing.assert_array_equal(only_rows, rows)
    rows2, y2 = sess.run(["rows", "y"], feeds)
    np.testing.assert_array_equal(y2, y)
    want = harness.ort_run(models / "mlp.onnx", feeds)
    np.testing.assert_allclose(y, want["y"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(rows, want["rows"], rtol=1e-4, atol=1e-5)


def test_element_types_match_onnxruntime(models):
    import onnxruntime
    feeds = {"m": np.array([True, False, True]), "h": np.array([1.5, -2, 3], np.float16),
             "i": np.array([1, -2, 3], np.int32), "u": np.array([1, 2, 200], np.uint8)}
    ours = kiln.InferenceSession(models / "types.onnx", threads=1)
    theirs = onnxruntime.InferenceSession(models / "types.onnx")
    for get in ("get_inputs", "get_outputs"):
        assert [(a.name, a.type, a.shape) for a in getattr(ours, get)()] == \
            [(a.name, a.type, a.shape) for a in getattr(theirs, get)()]
    for got, want in zip(ours.run(None, feeds), theirs.run(None, feeds)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_inputs_in_other_layouts_and_python_values(sess):
    feeds = _feeds(1)
    want = sess.run(None, feeds)
    # A transposed copy's transpose is Fortran-ordered: copied, same result.
    fortran = np.asfortranarray(feeds["x"])
    assert not fortran.flags.c_contiguous
    got = sess.run(None, {"x": fortran, "idx": feeds["idx"].tolist()})  # list -> int64
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    strided = np.zeros((4, 64), np.float32)
    strided[:, ::2] = feeds["x"]
    np.testing.assert_array_equal(sess.run(["y"], {"x": strided[:, ::2], "idx": feeds["idx"]})[0],
                                  want[0])
    # Read-only and big-endian arrays are fine too.
    ro = feeds["x"].copy()
    ro.setflags(write=False)
    np.testing.assert_array_equal(
        sess.run(["y"], {"x": ro.astype(">f4"), "idx": feeds["idx"]})[0], want[0])


def test_contiguous_inputs_are_not_copied(models):
    big = kiln.InferenceSession(models / "big.so", threads=1)
    x = np.ones((1024, 4096), np.float32)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        (s,) = big.run(None, {"x": x})
        in_place = tracemalloc.get_traced_memory()[1]
        fortran = np.asfortranarray(x)
        tracemalloc.reset_peak()
        big.run(None, {"x": fortran})
        copied = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (s == 4096).all()
    assert in_place < 1 << 20, f"a contiguous float32 input was copied ({in_place} bytes)"
    assert copied >= x.nbytes, "the Fortran-ordered input was expected to be copied"


#===--- errors --------------------------------------------------------------===#

@pytest.mark.parametrize("feeds,cls,message", [
    (lambda f: {"x": f["x"].astype(np.float64), "idx": f["idx"]}, kiln.InvalidArgument,
     "input 'x': expected dtype float32, got float64"),
    (lambda f: {"x": f["x"][:2], "idx": f["idx"]}, kiln.InvalidArgument,
     "input 'x': expected shape [4,32], got [2,32]"),
    (lambda f: {"x": f["x"].ravel(), "idx": f["idx"]}, kiln.InvalidArgument,
     "input 'x': expected rank 2, got 1 (expected shape [4,32], got [128])"),
    (lambda f: {"x": f["x"]}, kiln.InvalidArgument, "missing input 'idx' (int64 [3])"),
    (lambda f: {**f, "z": f["x"]}, kiln.NotFound,
     "unknown input 'z' (the model's inputs: 'x', 'idx')"),
    (lambda f: {"x": f["x"].astype(np.complex64), "idx": f["idx"]}, kiln.InvalidArgument,
     "input 'x': numpy dtype complex64 is not a tensor element type kiln runs"),
    (lambda f: {"x": f["x"], "idx": np.array([0, 1, 9])}, kiln.RuntimeCheckFailed,
     "node 'pick_rows' (Gather, opset 17): index out of range"),
])
def test_bad_feeds_raise_with_the_runtimes_message(sess, feeds, cls, message):
    with pytest.raises(cls) as info:
        sess.run(None, feeds(_feeds(2)))
    assert str(info.value) == message
    assert isinstance(info.value, kiln.KilnError)
    assert info.value.code == cls.code
    sess.run(None, _feeds(2))  # the session still works


def test_bad_arguments(sess, models):
    with pytest.raises(kiln.NotFound, match=r"^unknown output 'z' \(the model's outputs: 'y', 'rows'\)$"):
        sess.run(["y", "z"], _feeds(0))
    with pytest.raises(kiln.InvalidArgument, match="input_feed must be a mapping"):
        sess.run(None, [_feeds(0)["x"]])
    with pytest.raises(kiln.InvalidArgument, match="run_options"):
        sess.run(None, _feeds(0), object())
    with pytest.raises(kiln.InvalidArgument,
                       match=r"device 'tpu' is not supported: .*'cuda:DEVICE' or 'hip:DEVICE'"):
        kiln.InferenceSession(models / "mlp.so", device="tpu")
    # "cuda" passes through to the runtime, which refuses a CPU model.
    with pytest.raises(kiln.Unsupported,
                       match=r"holds only CPU code: it cannot run on device 'cuda'"):
        kiln.InferenceSession(models / "mlp.so", device="cuda")
    with pytest.raises(kiln.InvalidArgument, match="threads must be an integer >= 0"):
        kiln.InferenceSession(models / "mlp.so", threads=-1)
    with pytest.raises(kiln.InvalidArgument, match="apply to an .onnx model"):
        kiln.InferenceSession(models / "mlp.so", shape={"x": [4, 32]})
    with pytest.raises(kiln.NotFound, match="cannot open model '.*missing.so': No such file"):
        kiln.InferenceSession(models / "missing.so")
    # Not a kiln artifact: refused before the loader sees it (no checksum trailer).
    with pytest.raises(kiln.InvalidArgument,
                       match="cannot open model '.*notelf.so': .*not a kiln model library"):
        kiln.InferenceSession(_copy(models, "mlp.onnx", "notelf.so"))
    with pytest.raises(kiln.InvalidArgument, match="takes a path"):
        kiln.InferenceSession((models / "mlp.onnx").read_bytes())
    with pytest.raises(kiln.InvalidArgument, match="cpu_variant must be a string"):
        kiln.InferenceSession(models / "mlp.so", cpu_variant=3)
    one = kiln.InferenceSession(models / "mlp.so", device="cpu", threads=1)
    assert (one.num_threads, one.device, one.cpu_variant) == (1, "cpu", None)


def _copy(models: Path, src: str, dst: str) -> Path:
    (models / dst).write_bytes((models / src).read_bytes())
    return models / dst


#===--- threads -------------------------------------------------------------===#

def test_runs_from_several_threads_on_one_session(sess):
    feeds = [_feeds(100 + i) for i in range(8)]
    want = [sess.run(None, f) for f in feeds]
    errors: list[str] = []

    def worker(t: int) -> None:
        try:
            for i in range(60):
                k = (t + i) % len(feeds)
                got = sess.run(None, feeds[k])
                for g, w in zip(got, want[k]):
                    if not np.array_equal(g, w):
                        errors.append(f"thread {t} run {i}: outputs differ")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"thread {t}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


#===--- compiling -----------------------------------------------------------===#

def test_onnx_is_compiled_on_first_use_then_cached(models, tmp_path, monkeypatch):
    real = os.environ["KILN_EXECUTABLE"]
    log = tmp_path / "calls"
    wrapper = tmp_path / "kiln"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("KILN_EXECUTABLE", str(wrapper))
    cache = tmp_path / "cache"
    monkeypatch.setenv("KILN_CACHE_DIR", str(cache))
    assert kiln.cache_dir() == cache

    calls = lambda: log.read_text().splitlines() if log.exists() else []  # noqa: E731
    first = kiln.InferenceSession(models / "mlp.onnx")
    assert first.cache_hit is False and len(calls()) == 1
    assert first.model_path.parent.parent == cache and first.model_path.is_file()
    key = json.loads((first.model_path.parent / "key.json").read_text())
    assert key["options"] == {"shape": {}, "cpu": None, "device": None}
    second = kiln.InferenceSession(models / "mlp.onnx", threads=1)
    assert second.cache_hit is True and len(calls()) == 1
    assert second.model_path == first.model_path
    feeds = _feeds(3)
    for a, b in zip(first.run(None, feeds), second.run(None, feeds)):
        np.testing.assert_array_equal(a, b)

    # Other options or another model are other entries.
    third = kiln.InferenceSession(models / "mlp.onnx", cpu="generic")
    assert third.cache_hit is False and len(calls()) == 2 and "--cpu generic" in calls()[-1]
    changed = _mlp()
    changed.graph.node[2].op_type = "Sigmoid"
    onnx.save(changed, tmp_path / "mlp.onnx")
    fourth = kiln.InferenceSession(tmp_path / "mlp.onnx")
    assert fourth.cache_hit is False and len(calls()) == 3
    assert len({s.model_path for s in (first, third, fourth)}) == 3
    assert not (fourth.run(["y"], feeds)[0] == first.run(["y"], feeds)[0]).all()
    assert not any(p.name.startswith(".tmp-") for p in cache.iterdir())


def test_cache_key_covers_external_data(tmp_path, monkeypatch):
    """New weights in the external data file beside an unchanged .onnx are a new compile,
    not the cached one (the key once hashed the .onnx alone)."""
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "m"
    folder.mkdir()
    model = _mlp()
    onnx.save(model, folder / "mlp.onnx", save_as_external_data=True,
              all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    from kiln import _compile
    assert _compile._external_data_files(folder / "mlp.onnx") == ["weights.bin"]
    feeds = _feeds(3)
    first = kiln.InferenceSession(folder / "mlp.onnx")
    assert first.cache_hit is False
    y1 = first.run(["y"], feeds)[0]
    assert kiln.InferenceSession(folder / "mlp.onnx").cache_hit is True
    # Same size, other values: only the data file changes.
    data = bytearray((folder / "weights.bin").read_bytes())
    data[:64] = bytes(64)
    (folder / "weights.bin").write_bytes(bytes(data))
    second = kiln.InferenceSession(folder / "mlp.onnx")
    assert second.cache_hit is False and second.model_path != first.model_path
    assert not np.array_equal(second.run(["y"], feeds)[0], y1)
    # Models without external data, or files that do not parse, have none.
    onnx.save(_mlp(), tmp_path / "inline.onnx")
    assert _compile._external_data_files(tmp_path / "inline.onnx") == []
    (tmp_path / "junk.onnx").write_bytes(b"\xff" * 100)
    assert _compile._external_data_files(tmp_path / "junk.onnx") == []


def test_compile_and_its_errors(models, tmp_path, monkeypatch):
    out = kiln.compile(models / "mlp.onnx", tmp_path / "m.so", name="my_mlp", cpu="generic")
    assert out == tmp_path / "m.so"
    feeds = _feeds(4)
    np.testing.assert_allclose(kiln.InferenceSession(out).run(["y"], feeds)[0],
                               harness.ort_run(models / "mlp.onnx", feeds)["y"],
                               rtol=1e-4, atol=1e-5)
    assert "func" in kiln.compile(models / "mlp.onnx", tmp_path / "m.mlir",
                                  emit="mlir").read_text()

    with pytest.raises(kiln.CompileError) as info:
        kiln.compile(models / "bad.onnx", tmp_path / "bad.so")
    assert "node 'mystery_node' (NoSuchOp" in str(info.value)
    assert info.value.returncode == 1
    with pytest.raises(kiln.CompileError, match="node 'mystery_node'"):
        kiln.InferenceSession(models / "bad.onnx")
    # --precision is passed on (docs/precision.md): bf16 products, f32 interfaces.
    narrow = kiln.compile(models / "mlp.onnx", tmp_path / "p.so", precision="bf16")
    want = harness.ort_run(models / "mlp.onnx", feeds)["y"]
    # bf16 keeps 8 significant bits: within 1% of the outputs' scale (up to ~17 here).
    np.testing.assert_allclose(kiln.InferenceSession(narrow).run(["y"], feeds)[0], want,
                               rtol=1e-2, atol=1e-2 * float(np.abs(want).max()))
    with pytest.raises(kiln.CompileError, match=r"--precision fp8 is not supported"):
        kiln.compile(models / "mlp.onnx", tmp_path / "p8.so", precision="fp8")
    with pytest.raises(kiln.InvalidArgument, match="device 'gpu' is not supported"):
        kiln.compile(models / "mlp.onnx", tmp_path / "d.so", device="gpu")
    with pytest.raises(kiln.InvalidArgument, match="shape of input 'x'"):
        kiln.compile(models / "mlp.onnx", tmp_path / "s.so", shape={"x": "four"})

    monkeypatch.setenv("KILN_EXECUTABLE", str(tmp_path / "no-kiln"))
    with pytest.raises(kiln.KilnNotFound, match="KILN_EXECUTABLE=.*no-kiln is not an executable"):
        kiln.compile(models / "mlp.onnx", tmp_path / "x.so")


#===--- Devices and CPU variants --------------------------------------------===#

# lavapipe, when nothing else is chosen: the ICD CI runs on (as test_vulkan.py).
LAVAPIPE_ICD = Path("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")


@pytest.fixture
def vulkan(monkeypatch):
    """A Vulkan device: missing fails in CI (CI=true or KILN_CI=1), else skips."""
    import ctypes
    if "VK_ICD_FILENAMES" not in os.environ and LAVAPIPE_ICD.is_file():
        monkeypatch.setenv("VK_ICD_FILENAMES", str(LAVAPIPE_ICD))
    problem = None
    try:
        ctypes.CDLL("libvulkan.so.1")
    except OSError:
        problem = "the Vulkan loader (libvulkan.so.1) is not installed"
    if not problem and "VK_ICD_FILENAMES" not in os.environ and \
            not Path("/usr/share/vulkan/icd.d").is_dir():
        problem = "no Vulkan driver (ICD) is installed"
    if problem:
        if os.environ.get("CI", "").lower() == "true" or os.environ.get("KILN_CI") == "1":
            pytest.fail(problem + " -- required in CI", pytrace=False)
        pytest.skip(problem)


def test_vulkan_session_matches_onnxruntime(models, vulkan):
    """An .onnx opened with device="vulkan" is compiled with --device vulkan (its own
    cache entry, apart from the CPU one) and runs on the Vulkan device."""
    gpu = kiln.InferenceSession(models / "mlp.onnx", device="vulkan")
    assert gpu.device == "vulkan" and gpu.cpu_variant is None
    cpu = kiln.InferenceSession(models / "mlp.onnx", device="cpu")
    assert cpu.device == "cpu"
    assert gpu.model_path != cpu.model_path
    assert json.loads((gpu.model_path.parent / "key.json").read_text())["options"]["device"] == "vulkan"
    for seed in (0, 1):
        feeds = _feeds(seed)
        want = harness.ort_run(models / "mlp.onnx", feeds)
        y, rows = gpu.run(None, feeds)
        np.testing.assert_allclose(y, want["y"], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(rows, want["rows"], rtol=1e-4, atol=1e-4)
    # A second session takes the Vulkan artifact from the cache.
    again = kiln.InferenceSession(models / "mlp.onnx", device="vulkan:0")
    assert again.cache_hit and again.model_path == gpu.model_path and again.device == "vulkan"
    # kiln.compile(device=...) is `kiln compile --device`.
    so = kiln.compile(models / "mlp.onnx", models / "mlp-vk.so", device="vulkan")
    assert kiln.InferenceSession(so).device == "vulkan"


def test_cpu_artifact_on_vulkan_raises_the_runtimes_message(models, vulkan):
    with pytest.raises(kiln.Unsupported,
                       match=r"holds only CPU code: it cannot run on device 'vulkan'"):
        kiln.InferenceSession(models / "mlp.so", device="vulkan")


def test_several_devices_in_one_artifact(models, vulkan, monkeypatch, tmp_path):
    """device="vulkan,cpu" (or a list) compiles one artifact holding both devices (one cache
    entry whatever the order) and opens the first that runs here; kiln.compile(device=[...])
    repeats --device; the runtime's error names the devices an artifact holds."""
    monkeypatch.setenv("KILN_CUDA_DRIVER", "/nonexistent/libcuda.so.1")
    both = kiln.InferenceSession(models / "mlp.onnx", device="vulkan,cpu")
    assert both.device == "vulkan"
    key = json.loads((both.model_path.parent / "key.json").read_text())
    assert key["options"]["device"] == ["vulkan", "cpu"]
    other = kiln.InferenceSession(models / "mlp.onnx", device=["cpu", "vulkan"])
    assert other.cache_hit and other.model_path == both.model_path and other.device == "cpu"
    feeds = _feeds(3)
    want = harness.ort_run(models / "mlp.onnx", feeds)
    for session in (both, other):
        y, rows = session.run(None, feeds)
        np.testing.assert_allclose(y, want["y"], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(rows, want["rows"], rtol=1e-4, atol=1e-4)
    so = kiln.compile(models / "mlp.onnx", tmp_path / "mlp-2.so", device=["cpu", "vulkan"])
    assert kiln.InferenceSession(so).device == "vulkan"  # auto: CUDA absent, then Vulkan
    assert kiln.InferenceSession(so, device="cpu").device == "cpu"
    with pytest.raises(kiln.Unsupported,
                       match=r"holds no code for device 'cuda' \(from options.device\); "
                             r"it holds: vulkan, cpu"):
        kiln.InferenceSession(so, device="cuda")
    with pytest.raises(kiln.InvalidArgument, match="device 'vulkan,tpu' is not supported"):
        kiln.InferenceSession(so, device="vulkan,tpu")


def _has_avx2() -> bool:
    try:
        return " avx2 " in Path("/proc/cpuinfo").read_text().replace("\n", " ")
    except OSError:
        return False


def test_cpu_variant_of_a_portable_artifact(models, tmp_path):
    import platform
    if platform.machine() != "x86_64" or not _has_avx2():
        pytest.skip("needs an x86-64 CPU with AVX2 (x86-64-v3)")
    so = kiln.compile(models / "mlp.onnx", tmp_path / "portable.so", cpu="portable")
    v3 = kiln.InferenceSession(so, cpu_variant="x86-64-v3")
    assert (v3.cpu_variant, v3.device) == ("x86-64-v3", "cpu")
    feeds = _feeds(5)
    np.testing.assert_allclose(v3.run(["y"], feeds)[0],
                               harness.ort_run(models / "mlp.onnx", feeds)["y"],
                               rtol=1e-4, atol=1e-5)
    assert kiln.InferenceSession(so).cpu_variant in ("x86-64-v4", "x86-64-v3")
    with pytest.raises(kiln.InvalidArgument, match=r"no CPU variant 'zz'.*its variants: x86-64-v4"):
        kiln.InferenceSession(so, cpu_variant="zz")


_GIL_SCRIPT = r'''
import ctypes, sys, threading, time
import numpy as np
import kiln

path = sys.argv[1]
sess = kiln.InferenceSession(path, threads=1)
gate = ctypes.CDLL(path)  # the same loaded library as the session's
entered = ctypes.c_int.in_dll(gate, "fake_add_gate_entered")
opened = ctypes.c_int.in_dll(gate, "fake_add_gate_open")
b = np.ones((2, 3), np.float32)
held = np.full((2, 3), 2.0, np.float32)
held[0, 0] = -5000  # the fake model waits in this run until the gate opens
result = {}
t = threading.Thread(target=lambda: result.setdefault("held", sess.run(["sum"], {"a": held, "b": b})))
t.start()
deadline = time.monotonic() + 30
while not entered.value:  # Python runs here only if the run released the GIL
    if time.monotonic() > deadline:
        sys.exit("the held run never started")
    time.sleep(0.001)
# A second run on the same session while the first is inside the model.
(other,) = sess.run(["sum"], {"a": np.full((2, 3), 3.0, np.float32), "b": b})
assert t.is_alive() and other.tolist() == [[4.0] * 3] * 2, other
opened.value = 1
t.join()
assert result["held"][0][0, 1] == 3.0, result
print("ok")
'''


def test_run_releases_the_gil(tmp_path):
    """The unit tests' fake model holds a run (a[0] == -5000) until its gate opens;
    meanwhile this Python thread must run, and run the session again. In a
    subprocess with a time limit: a run that kept the GIL would hang it."""
    fake = harness.build_dir() / "test" / "unit" / "runtime" / "models" / "fake_model.so"
    if not fake.is_file():
        pytest.skip(f"{fake} not built (the runtime's unit tests build it)")
    script = tmp_path / "gil.py"
    script.write_text(_GIL_SCRIPT)
    try:
        proc = subprocess.run([sys.executable, str(script), str(fake)], capture_output=True,
                              text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("a run held the GIL: the script hung", pytrace=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


#===--- symbolic dims (a model compiled once, run at any size) --------------===#

def test_symbolic_dims_run_at_any_size_and_match_onnxruntime(tmp_path):
    """An .onnx with dynamic batch and sequence compiles once; NodeArg.shape names
    the symbols as onnxruntime names dim_params; each run's outputs have that
    run's sizes and own the runtime's buffers."""
    import onnxruntime as ort
    import dynamic_models

    path = tmp_path / "bert.onnx"
    dynamic_models.bert_like(path)
    sess = kiln.InferenceSession(path, threads=1)
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert sess.get_symbols() == {"batch": (1, None), "seq": (1, None)}
    assert [i.shape for i in sess.get_inputs()] == [i.shape for i in ref.get_inputs()]
    assert [o.shape for o in sess.get_outputs()] == [["batch", "seq", 64], ["batch", 64]]
    kept = []
    for batch, seq in [(1, 7), (3, 33), (1, 1)]:
        feeds = dynamic_models.bert_feeds(batch, seq)
        got, want = sess.run(None, feeds), ref.run(None, feeds)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-4)
        kept.append((got, want))
        pooled, = sess.run(["pooler_output"], feeds)
        np.testing.assert_array_equal(pooled, got[1])
    del sess  # the outputs own their buffers: they outlive the session
    for got, want in kept:
        np.testing.assert_allclose(got[0], want[0], rtol=1e-3, atol=1e-4)


def test_symbolic_dims_bounds_and_errors(tmp_path):
    import dynamic_models

    path = tmp_path / "cnn.onnx"
    dynamic_models.cnn(path)
    sess = kiln.InferenceSession(path, threads=1, shape={"x": ["1..4", 3, 32, 32]})
    assert sess.get_symbols() == {"batch": (1, 4)}
    x = np.random.default_rng(0).standard_normal((4, 3, 32, 32)).astype(np.float32)
    assert sess.run(None, {"x": x})[0].shape == (4, 10)
    with pytest.raises(kiln.InvalidArgument,
                       match=r"input 'x' dim 0 \('batch'\) is 5, outside its bounds 1\.\.4"):
        sess.run(None, {"x": np.zeros((5, 3, 32, 32), np.float32)})
    fixed = kiln.InferenceSession(path, threads=1, shape={"x": [2, 3, 32, 32]})
    assert fixed.get_symbols() == {} and fixed.get_outputs()[0].shape == [2, 10]
    for bad in (["1...4", 3, 32, 32], "1..4", [1.5, 3, 32, 32], [True, 3, 32, 32]):
        with pytest.raises(kiln.InvalidArgument, match="shape of input 'x': expected"):
            kiln.InferenceSession(path, shape={"x": bad})

    bert = tmp_path / "bert.onnx"
    dynamic_models.bert_like(bert)
    feeds = dynamic_models.bert_feeds(1, 7)
    feeds["attention_mask"] = feeds["attention_mask"][:, :5]
    with pytest.raises(kiln.InvalidArgument, match=r"input 'attention_mask' dim 1 is 5, but "
                       r"input 'input_ids' dim 1 gave symbol 'seq' the value 7"):
        kiln.InferenceSession(bert, threads=1).run(None, feeds)


def test_float8_inputs_and_outputs(tmp_path):
    """float8 tensors travel as ml_dtypes arrays (their uint8 bit patterns in the
    extension), as bfloat16 does."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    f8 = TensorProto.FLOAT8E4M3FN
    g = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["wide"], to=TensorProto.FLOAT),
         helper.make_node("Cast", ["wide"], ["narrow"], to=f8)],
        "f8", [helper.make_tensor_value_info("x", f8, [2, 3])],
        [helper.make_tensor_value_info("wide", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("narrow", f8, [2, 3])])
    path = tmp_path / "f8.onnx"
    path.write_bytes(helper.make_model(g, opset_imports=OPSET).SerializeToString())
    sess = kiln.InferenceSession(path, threads=1)
    assert [i.type for i in sess.get_inputs()] == ["tensor(float8e4m3fn)"]
    x = np.array([[0.5, -3, 448], [1e-3, -0.0, 240]], np.float32).astype(ml_dtypes.float8_e4m3fn)
    wide, narrow = sess.run(None, {"x": x})
    np.testing.assert_array_equal(wide, x.astype(np.float32))
    assert narrow.dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(narrow.view(np.uint8), x.view(np.uint8))
    # Its bit patterns as uint8 are taken too; another float8 format is not.
    np.testing.assert_array_equal(sess.run(["wide"], {"x": x.view(np.uint8)})[0], wide)
    with pytest.raises(kiln.InvalidArgument, match="input 'x'"):
        sess.run(None, {"x": x.astype(ml_dtypes.float8_e5m2)})
