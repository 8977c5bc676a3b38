"""bf16 models on the GPU targets: the compiler stores bf16 as i16 and computes it in f32
(kiln-gpu-emulate-narrow-floats, docs/gpu.md), so a bf16 model compiled with `--device
vulkan` runs on lavapipe and gives the CPU's answers: elementwise ops bit for bit (each
computed in f32 and rounded to nearest even), a MatMul (f32 accumulation, one rounding)
and Exp (approximated as on the CPU) within a bf16 ulp or two; against numpy with
ml_dtypes too. float8 weights dequantized on the device match the CPU bit for bit. A
device without 16-bit storage or 16-bit integers (bf16), or 8-bit storage (float8), is
refused at open, naming the feature. The cuda target's PTX for the same models assembles
with ptxas.

Vulkan missing skips the Vulkan tests on a developer's machine and fails them in CI
(CI=true or KILN_CI=1); so does the CUDA toolkit for the cuda test.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import harness
from conftest import fail
from test_vulkan import _ci, vulkan  # noqa: F401 (the fixture; sets VK_ICD_FILENAMES)

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = ml_dtypes.bfloat16

CUDA_PATH = Path(os.environ.get("KILN_CUDA_PATH", "/usr/local/cuda"))


def _missing(problem: str | None) -> None:
    if problem:
        if _ci():
            pytest.fail(problem + " -- required in CI", pytrace=False)
        pytest.skip(problem)


def _model(path: Path) -> Path:
    """bf16 in and out: an Add of a bf16 weight, Relu, Exp, a MatMul, a Cast to float, a
    Transpose (a move), and a MatMul by a weight large enough (1280 elements) to be
    imported as a resource blob."""
    rng = np.random.default_rng(3)
    c = (rng.standard_normal((4, 8)) * 4).astype(BF16)
    w = rng.standard_normal((8, 160)).astype(BF16)
    graph = h.make_graph(
        [h.make_node("Add", ["a", "c"], ["s"], name="add"),
         h.make_node("Relu", ["s"], ["r"], name="relu"),
         h.make_node("Exp", ["a"], ["e"], name="exp"),
         h.make_node("MatMul", ["a", "b"], ["m"], name="mm"),
         h.make_node("Cast", ["m"], ["mf"], name="to_f32", to=T.FLOAT),
         h.make_node("Transpose", ["a"], ["t"], name="transpose", perm=[1, 0]),
         h.make_node("MatMul", ["a", "w"], ["mw"], name="mm_weight")],
        "bf16",
        [h.make_tensor_value_info("a", T.BFLOAT16, [4, 8]),
         h.make_tensor_value_info("b", T.BFLOAT16, [8, 5])],
        [h.make_tensor_value_info(n, T.BFLOAT16, s) for n, s in
         (("r", [4, 8]), ("e", [4, 8]), ("m", [4, 5]))] +
        [h.make_tensor_value_info("mf", T.FLOAT, [4, 5]),
         h.make_tensor_value_info("t", T.BFLOAT16, [8, 4]),
         h.make_tensor_value_info("mw", T.BFLOAT16, [4, 160])],
        [numpy_helper.from_array(c, "c"), numpy_helper.from_array(w, "w")])
    import onnx
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)], ir_version=10)
    onnx.save(model, path)
    return path


def _feeds() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((4, 8)) * 3).astype(BF16)
    a[0, :4] = np.array([0.0, -0.0, 1e-40, -3.0e38], np.float32).astype(BF16)  # sub, big
    b = rng.standard_normal((8, 5)).astype(BF16)
    return {"a": a, "b": b}


OUTPUTS = ("r", "e", "m", "mf", "t", "mw")


def _compile_run(kiln, model, feeds, work: Path, args=()):
    artifact = work / "m.so"
    work.mkdir(parents=True, exist_ok=True)
    r = kiln.compile(model, artifact, args)
    if r.returncode != 0:
        fail("kiln compile failed\n" + r.describe())
    inputs = harness.save_inputs(feeds, work / "in")
    r = kiln.run(artifact, inputs, work / "out")
    if r.returncode != 0:
        fail("kiln run failed\n" + r.describe())
    got = harness.load_outputs(work / "out", OUTPUTS)
    return artifact, {k: (v.view(BF16) if v.dtype.itemsize == 2 else v) for k, v in got.items()}


def _numpy(a, b, c, w, a16):
    return {"mw": (a.astype(np.float64) @ w.astype(np.float64)).astype(np.float32).astype(BF16),
            "r": np.maximum((a + c).astype(BF16).astype(np.float32), 0).astype(BF16),
            "e": np.exp(a).astype(BF16),
            "m": (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32).astype(BF16),
            "t": a16.T}


def _close(what, got, want, ulps):
    g, w = got.astype(np.float64), want.astype(np.float64)
    # `ulps` bf16 steps of the larger magnitude (2^-7 relative each), or exact.
    tol = ulps * np.maximum(np.abs(w), 1e-30) * 2.0 ** -7
    with np.errstate(invalid="ignore"):  # inf - inf
        ok = (g == w) | (np.abs(g - w) <= tol) | (np.isnan(g) & np.isnan(w))
    bad = np.flatnonzero(~ok)
    assert bad.size == 0, f"{what}: {bad.size} differ, first at {bad[0]}: {g.flat[bad[0]]} vs {w.flat[bad[0]]}"


def test_bf16_model_on_vulkan(kiln, vulkan, tmp_path):
    model = _model(tmp_path / "bf16.onnx")
    feeds = _feeds()
    artifact, got = _compile_run(kiln, model, feeds, tmp_path / "vk",
                                 ("--device", "vulkan", "--keep-intermediates"))
    for module in sorted(Path(str(artifact) + ".kiln").glob("*.spv")):
        r = harness.run_command(["spirv-val", "--target-env", "vulkan1.1", str(module)], 60)
        assert r.returncode == 0, f"spirv-val {module.name}: {r.stdout}{r.stderr}"
    _, cpu = _compile_run(kiln, model, feeds, tmp_path / "cpu")
    a = feeds["a"].astype(np.float32)
    b = feeds["b"].astype(np.float32)
    import onnx
    inits = onnx.load(model).graph.initializer
    c, w = (numpy_helper.to_array(i).astype(np.float32) for i in inits)
    # numpy: each op in f32 (f64 for the product), rounded to bf16 once.
    with np.errstate(over="ignore", invalid="ignore"):  # the -3e38 row overflows, as kiln's
        want = _numpy(a, b, c, w, feeds["a"])
    want["mf"] = want["m"].astype(np.float32)
    for name in OUTPUTS:
        assert got[name].dtype == cpu[name].dtype, (name, got[name].dtype, cpu[name].dtype)
        assert got[name].shape == want[name].shape, (name, got[name].shape)
    # Elementwise and moves: bit for bit, as the CPU computes them.
    for name in ("r", "t"):
        assert np.array_equal(got[name].view(np.uint16), cpu[name].view(np.uint16)), name
        assert np.array_equal(got[name].view(np.uint16), want[name].view(np.uint16)), name
    _close("exp vs numpy", got["e"], want["e"], 2)
    _close("exp vs cpu", got["e"], cpu["e"], 2)
    for name in ("m", "mf", "mw"):
        _close(f"{name} vs numpy", got[name], want[name], 2)
        _close(f"{name} vs cpu", got[name], cpu[name], 2)
    # A device without 16-bit storage or 16-bit integers is refused at open, naming the
    # feature (KILN_VULKAN_MASK_FEATURES takes lavapipe's for absent).
    for feature in ("storageBuffer16BitAccess", "shaderInt16"):
        env = dict(os.environ, KILN_VULKAN_MASK_FEATURES=feature)
        r = subprocess.run([str(kiln.bin_dir / "kiln-run"), str(artifact), "--device", "vulkan"],
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode != 0 and f"needs the Vulkan feature {feature}" in r.stderr, \
            (feature, r.returncode, r.stderr)


def test_float8_weights_on_vulkan(kiln, vulkan, tmp_path):
    """float8 weights (a resource blob of 2048 codes, every code 8 times) dequantized on
    the device give the CPU's values bit for bit; a device without 8-bit storage is
    refused at open."""
    import onnx
    codes = np.tile(np.arange(256, dtype=np.uint8), 8)
    graph = h.make_graph(
        [h.make_node("DequantizeLinear", ["wq", "scale"], ["w"], name="dq"),
         h.make_node("Add", ["w", "x"], ["y"], name="add"),
         h.make_node("QuantizeLinear", ["y", "scale", "zero"], ["q"], name="q")], "f8",
        [h.make_tensor_value_info("x", T.FLOAT, [2048])],
        [h.make_tensor_value_info("y", T.FLOAT, [2048]),
         h.make_tensor_value_info("q", T.FLOAT8E4M3FN, [2048])],
        [h.make_tensor("wq", T.FLOAT8E4M3FN, [2048], codes.tobytes(), raw=True),
         numpy_helper.from_array(np.array(0.5, np.float32), "scale"),
         h.make_tensor("zero", T.FLOAT8E4M3FN, [], [0])])
    model = tmp_path / "f8.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 21)], ir_version=9), model)
    x = np.random.default_rng(5).standard_normal(2048).astype(np.float32)
    got = {}
    for device in ("cpu", "vulkan"):
        artifact = tmp_path / f"f8-{device}.so"
        r = kiln.compile(model, artifact, ("--device", device))
        if r.returncode != 0:
            fail("kiln compile failed\n" + r.describe())
        inputs = harness.save_inputs({"x": x}, tmp_path / "in")
        r = kiln.run(artifact, inputs, tmp_path / device)
        if r.returncode != 0:
            fail("kiln run failed\n" + r.describe())
        got[device] = harness.load_outputs(tmp_path / device, ["y", "q"])
    for name in ("y", "q"):
        g, c = got["vulkan"][name], got["cpu"][name]
        assert g.shape == c.shape and g.tobytes() == c.tobytes(), name
    want = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32) * 0.5 + x
    assert np.array_equal(got["vulkan"]["y"], want, equal_nan=True)
    env = dict(os.environ, KILN_VULKAN_MASK_FEATURES="storageBuffer8BitAccess")
    r = subprocess.run([str(kiln.bin_dir / "kiln-run"), str(artifact), "--device", "vulkan"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode != 0 and "needs the Vulkan feature storageBuffer8BitAccess" in r.stderr, \
        (r.returncode, r.stderr)


def test_bf16_and_float8_ptx_assemble(kiln, tmp_path):
    """The cuda target compiles the bf16 model and a float8 cast; every PTX module
    assembles with ptxas for sm_80 (no GPU needed)."""
    ptxas = CUDA_PATH / "bin" / "ptxas"
    if not ptxas.is_file() or not (CUDA_PATH / "nvvm/libdevice/libdevice.10.bc").is_file():
        _missing(f"the CUDA toolkit (ptxas, libdevice) is not at {CUDA_PATH}")
    import onnx
    f8 = h.make_graph(
        [h.make_node("Cast", ["x"], ["y"], name="to_f8", to=T.FLOAT8E5M2),
         h.make_node("Cast", ["y"], ["z"], name="to_f16", to=T.FLOAT16)], "f8",
        [h.make_tensor_value_info("x", T.FLOAT, [16])],
        [h.make_tensor_value_info("y", T.FLOAT8E5M2, [16]),
         h.make_tensor_value_info("z", T.FLOAT16, [16])])
    f8_model = tmp_path / "f8.onnx"
    onnx.save(h.make_model(f8, opset_imports=[h.make_opsetid("", 21)], ir_version=9), f8_model)
    for model in (_model(tmp_path / "bf16.onnx"), f8_model):
        artifact = tmp_path / (model.stem + ".so")
        r = kiln.compile(model, artifact, ("--device", "cuda", "--cuda-path", str(CUDA_PATH),
                                           "--keep-intermediates"))
        if r.returncode != 0:
            fail("kiln compile --device cuda failed\n" + r.describe())
        modules = sorted(Path(str(artifact) + ".kiln").glob("*.ptx"))
        assert modules, "no PTX module kept"
        for module in modules:
            r = harness.run_command([str(ptxas), "-arch=sm_80", str(module), "-o", "/dev/null"],
                                    300)
            assert r.returncode == 0, f"ptxas {module.name}: {r.stdout}{r.stderr}"
