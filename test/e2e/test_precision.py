"""FP16 and BF16: f16 / bf16 models, `kiln compile --precision bf16|fp16`, and kiln-run's
f16 / bf16 .npy files (docs/precision.md).

Tolerances (stated, and printed with the measured errors; pytest -s shows them):
- f16 models against onnxruntime running the same f16 model: rtol 1e-2, atol 1e-2. Both
  round every op's output to f16 (relative step 4.9e-4); kiln accumulates products in
  f32 where onnxruntime's f16 kernels may not, and rounds at other points, so outputs
  differ by a few f16 steps (observed in the test output).
- bf16 models (onnxruntime has no bf16 Conv/MatMul on the CPU): against onnxruntime
  running the same model in f32 (weights are bf16 values, exact in f32): rtol 3e-2,
  atol 3e-2 (every op's output rounded to bf16: relative step 3.9e-3 to 7.8e-3).
- `--precision bf16|fp16` on an f32 model: against onnxruntime's f32 outputs, the
  issue's rtol 1e-2 / atol 1e-2, on the shared models (mobilenet_v2, squeezenet1_1,
  bert_mini) and a small model of every narrowed op, on the native CPU (vdpbf16ps where
  it has AVX512-BF16) and on x86-64-v4 / x86-64-v3 (no AVX512-BF16: widened + FMA).
- `--precision fp16` on the GPU devices (every product f16 x f16 with f32 accumulation,
  f16 activations between a product and its producer): the same tolerances, on Vulkan
  (lavapipe: the small model, the operator cases with products, mobilenet_v2 and
  bert_mini), and for cuda compiled and checked by ptxas (test_cuda.py's checks).
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import harness
from conftest import fail

X86 = platform.machine() in ("x86_64", "AMD64")

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes comes with onnx
    ml_dtypes = None
    BF16 = None


def _host_flags() -> set[str]:
    try:
        return harness._cpu_flags()
    except Exception:
        return set()


def _small_model(path, elem: int, seed: int = 0):
    """Every narrowed op in one graph: Conv (3 channels: odd, and 8: even), Relu, Gemm,
    LayerNormalization, MatMul, Softmax, ReduceMean, Add, Sigmoid; f32 input and a f32
    output through Casts (as onnxconverter-common's keep_io_types makes them) and one
    output in the model's type. `elem`: FLOAT16, BFLOAT16 or FLOAT (weights rounded to
    bf16 values then, for the bf16 model's reference)."""
    rng = np.random.default_rng(seed)

    def w(name, shape, scale=0.2):
        a = (rng.standard_normal(shape) * scale).astype(np.float32)
        if elem == TensorProto.FLOAT16:
            return numpy_helper.from_array(a.astype(np.float16), name)
        a = a.astype(BF16).astype(np.float32)  # bf16 values
        if elem == TensorProto.BFLOAT16:
            return helper.make_tensor(name, TensorProto.BFLOAT16, shape, vals=a.flatten().tolist())
        return numpy_helper.from_array(a, name)

    inits = [w("Wc", [8, 3, 3, 3]), w("Bc", [8]), w("Wc2", [8, 8, 1, 1]), w("W1", [64, 96]),
             w("B1", [96]), w("G", [96], 1.0), w("Be", [96]), w("W2", [96, 32]),
             numpy_helper.from_array(np.array([8, 64], np.int64), "shp")]
    cast = [] if elem == TensorProto.FLOAT else [helper.make_node("Cast", ["x"], ["xh"], to=elem)]
    xin = "x" if elem == TensorProto.FLOAT else "xh"
    nodes = cast + [
        helper.make_node("Conv", [xin, "Wc", "Bc"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["cr"]),
        helper.make_node("Conv", ["cr", "Wc2"], ["c2"]),
        helper.make_node("Reshape", ["c2", "shp"], ["flat"]),
        helper.make_node("Gemm", ["flat", "W1", "B1"], ["g"]),
        helper.make_node("LayerNormalization", ["g", "G", "Be"], ["ln"], axis=-1),
        helper.make_node("MatMul", ["ln", "W2"], ["m"]),
        helper.make_node("Softmax", ["m"], ["sm"], axis=-1),
        helper.make_node("ReduceMean", ["m"], ["rm"], axes=[-1], keepdims=1),
        helper.make_node("Add", ["sm", "rm"], ["y0"]),
        helper.make_node("Sigmoid", ["m"], ["z"]),
    ]
    if elem == TensorProto.FLOAT:
        nodes.append(helper.make_node("Identity", ["y0"], ["y"]))
    else:
        nodes.append(helper.make_node("Cast", ["y0"], ["y"], to=TensorProto.FLOAT))
    graph = helper.make_graph(
        nodes, "narrow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 32]),
         helper.make_tensor_value_info("z", elem, [8, 32])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def _compile_run(kiln, model, feeds, work, args=()):
    artifact = work / (model.stem + ".so")
    result = kiln.compile(model, artifact, list(args))
    if result.returncode != 0:
        fail(f"kiln compile {model.name} {' '.join(args)} failed\n" + result.describe())
    inputs = harness.save_inputs(feeds, work / "inputs")
    out_dir = work / "outputs"
    out_dir.mkdir(parents=True, exist_ok=True)
    result = kiln.run(artifact, inputs, out_dir)
    if result.returncode != 0:
        fail(f"kiln run {model.name} failed\n" + result.describe())
    return artifact, out_dir


def _errors(got, want):
    g, w = got.astype(np.float64), want.astype(np.float64)
    d = np.abs(g - w)
    return float(d.max()), float((d / np.maximum(np.abs(w), 1e-3)).max())


def _check(what, got, want, rtol, atol):
    max_abs, max_rel = _errors(got, want)
    print(f"{what}: max |diff| {max_abs:.2e}, max rel {max_rel:.2e} (rtol {rtol}, atol {atol})")
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=atol, err_msg=what)


def _feeds(seed=1):
    return {"x": np.random.default_rng(seed).standard_normal((1, 3, 8, 8)).astype(np.float32)}


#===----------------------------------------------------------------------===//
# f16 and bf16 models
#===----------------------------------------------------------------------===//


def test_f16_model_vs_onnxruntime(kiln, tmp_path):
    model = _small_model(tmp_path / "f16.onnx", TensorProto.FLOAT16)
    feeds = _feeds()
    _, out = _compile_run(kiln, model, feeds, tmp_path)
    want = harness.ort_run(model, feeds)
    got = harness.load_outputs(out, ["y", "z"])
    assert got["z"].dtype == np.float16 and got["y"].dtype == np.float32
    for name in ("y", "z"):
        _check(f"f16 model, output {name}", got[name], want[name], 1e-2, 1e-2)


@pytest.mark.skipif(BF16 is None, reason="needs ml_dtypes")
def test_bf16_model_vs_f32_reference(kiln, tmp_path):
    model = _small_model(tmp_path / "bf16.onnx", TensorProto.BFLOAT16)
    reference = _small_model(tmp_path / "ref.onnx", TensorProto.FLOAT)
    feeds = _feeds()
    _, out = _compile_run(kiln, model, feeds, tmp_path)
    want = harness.ort_run(reference, feeds)
    got = harness.load_outputs(out, ["y", "z"])
    # kiln-run writes bfloat16 as numpy does for ml_dtypes: '<V2'.
    assert got["z"].dtype == np.dtype("V2"), got["z"].dtype
    got["z"] = got["z"].view(BF16)
    for name in ("y", "z"):
        _check(f"bf16 model, output {name}", got[name], want[name], 3e-2, 3e-2)


#===----------------------------------------------------------------------===//
# --precision on an f32 model
#===----------------------------------------------------------------------===//

CPUS = ["native"] + (["x86-64-v4", "x86-64-v3"] if X86 else [])


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
@pytest.mark.parametrize("cpu", CPUS)
def test_precision_small_model(kiln, tmp_path, precision, cpu):
    if cpu == "x86-64-v4" and not harness.host_has_avx512():
        pytest.skip("the host has no AVX-512")
    if cpu == "x86-64-v3" and not harness.host_has_avx2():
        pytest.skip("the host has no AVX2")
    model = _small_model(tmp_path / "f32.onnx", TensorProto.FLOAT)
    feeds = _feeds()
    _, out = _compile_run(kiln, model, feeds, tmp_path, ["--precision", precision, "--cpu", cpu])
    want = harness.ort_run(model, feeds)
    got = harness.load_outputs(out, ["y", "z"])
    for name in ("y", "z"):
        assert got[name].dtype == np.float32  # interfaces stay f32
        _check(f"--precision {precision} --cpu {cpu}, output {name}", got[name], want[name],
               1e-2, 1e-2)


def _inspect(kiln, artifact) -> str:
    result = harness.run_command([str(kiln.bin_dir / "kiln-run"), str(artifact), "--inspect",
                                  "--sizes"], 60)
    if result.returncode != 0:
        fail("kiln-run --inspect failed\n" + result.describe())
    return result.stdout


@pytest.mark.skipif(not X86, reason="x86 CPU features")
def test_precision_records_bf16_feature(kiln, tmp_path):
    """The native build records avx512bf16 when the host has it (vdpbf16ps runs there;
    kiln_model_open refuses the model on a CPU without it); x86-64-v4 has no such
    feature, so its bf16 build uses the widening fallback."""
    model = _small_model(tmp_path / "f32.onnx", TensorProto.FLOAT)
    text = _inspect(kiln, _compile_run(kiln, model, _feeds(), tmp_path / "native",
                                       ["--precision", "bf16"])[0])
    assert ("avx512bf16" in text) == ("avx512_bf16" in _host_flags()), text
    if harness.host_has_avx512():
        text = _inspect(kiln, _compile_run(kiln, model, _feeds(), tmp_path / "v4",
                                           ["--precision", "bf16", "--cpu", "x86-64-v4"])[0])
        assert "avx512bf16" not in text, text


def test_precision_bad_value(kiln, tmp_path):
    model = _small_model(tmp_path / "f32.onnx", TensorProto.FLOAT)
    result = kiln.compile(model, tmp_path / "m.so", ["--precision", "fp8"])
    assert result.returncode != 0
    assert "--precision fp8 is not supported (fp32, bf16, fp16 or tf32)" in result.stderr, \
        result.stderr
    # tf32 is the cuda target's tensor-core products (docs/gpu.md): a usage error on any
    # other device, naming it.
    for devices in (["--device", "vulkan"], ["--device", "cpu"],
                    ["--device", "cuda", "--device", "cpu"]):
        result = kiln.compile(model, tmp_path / "m.so", ["--precision", "tf32", *devices])
        assert result.returncode != 0, devices
        assert "--precision tf32 is for the cuda device only" in result.stderr, result.stderr
        assert f"not --device {devices[-1]}" in result.stderr, result.stderr
    result = kiln.compile(model, tmp_path / "m.so", ["--precision", "tf32", "--device",
                                                     "cuda:sm_75"])
    assert result.returncode != 0
    assert "--precision tf32 needs tensor cores with tf32 (sm_80 or newer)" in result.stderr, \
        result.stderr
    # bf16 on a GPU device: refused naming the first node it would narrow (a clean error,
    # exit status 1).
    for device in ("vulkan", "cuda:sm_90", "hip:gfx942"):
        result = kiln.compile(model, tmp_path / "m.so", ["--precision", "bf16", "--device", device])
        problem = harness.check_clean_failure(
            result, [f"node 'Conv_0': --precision bf16 is not supported on the "
                     f"{device.split(':')[0]} device"], f"bf16 on {device}")
        if problem:
            fail(problem)
        assert "use --precision fp16); 3 more products would be narrowed" in result.stderr, \
            result.stderr


#===----------------------------------------------------------------------===//
# The shared models
#===----------------------------------------------------------------------===//


def _image(rng):
    return {"input": rng.standard_normal((1, 3, 224, 224)).astype(np.float32)}


def _bert(rng):
    mask = np.ones((1, 128), np.int64)
    mask[:, 100:] = 0
    return {"input_ids": rng.integers(0, 8192, size=(1, 128), dtype=np.int64),
            "attention_mask": mask}


MODELS = {"mobilenet_v2": _image, "squeezenet1_1": _image, "bert_mini": _bert}


def _prepare(name):
    def prepare(folder):
        path = harness.models_dir() / f"{name}.onnx"
        if not path.is_file():
            raise FileNotFoundError(path)
        return path
    return prepare


SPECS = {(name, p): harness.register(harness.CompileSpec(
    f"precision-{name}-{p}", _prepare(name), ("--precision", p),
    timeout=harness.COMPILE_TIMEOUT_LARGE)) for name in MODELS for p in ("bf16", "fp16")}


@pytest.mark.models
@pytest.mark.parametrize("precision", ["bf16", "fp16"])
@pytest.mark.parametrize("name", list(MODELS))
def test_precision_shared_model(name, precision, models_dir, compile_cache, tmp_path, request):
    request.node.add_marker(pytest.mark.compiles(SPECS[(name, precision)].key))
    feeds = MODELS[name](np.random.default_rng(2024))
    compiled = compile_cache.get(SPECS[(name, precision)])
    if not compiled.ok:
        fail(compiled.failure())
    want = harness.ort_run(compiled.model, feeds)
    inputs = harness.save_inputs(feeds, tmp_path / "inputs")
    out = tmp_path / "outputs"
    out.mkdir()
    result = compile_cache.kiln.run(compiled.artifact, inputs, out)
    if result.returncode != 0:
        fail("kiln run failed\n" + result.describe())
    got = harness.load_outputs(out, list(want))
    for output in want:
        if not np.issubdtype(want[output].dtype, np.floating):
            continue
        assert got[output].dtype == want[output].dtype
        what = f"{name} --precision {precision}, output {output}"
        _check(what, got[output], want[output], 1e-2, 1e-2)
        # Relative to the output's scale: the shared mobilenet_v2's outputs are ~1e-9
        # (its seeded weights), where atol 1e-2 alone would pass anything.
        scale = float(np.abs(want[output]).max())
        scaled = _errors(got[output], want[output])[0] / scale
        print(f"{what}: max |diff| / max |reference| = {scaled:.2e} (|reference| <= {scale:.2e})")
        if precision == "fp16" and scale < 1e-4:
            # Its activations are below f16's smallest normal (6.1e-5), so f16 flushes them
            # (docs/precision.md): only the absolute tolerance is meaningful here.
            continue
        assert scaled < 5e-2, f"{what}: {scaled:.2e} of the output's scale"


#===----------------------------------------------------------------------===//
# kiln-run: f16 and bf16 .npy files
#===----------------------------------------------------------------------===//


def _identity_model(path, elem):
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["y"])], "twice",
        [helper.make_tensor_value_info("x", elem, [2, 3])],
        [helper.make_tensor_value_info("y", elem, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


@pytest.mark.skipif(BF16 is None, reason="needs ml_dtypes")
def test_run_reads_and_writes_bf16_npy(kiln, tmp_path):
    model = _identity_model(tmp_path / "bf16.onnx", TensorProto.BFLOAT16)
    x = np.array([[1.5, -2.25, 3.0], [0.0078125, 100.0, -0.5]], dtype=BF16)
    # np.save of an ml_dtypes bfloat16 array writes '<V2'.
    _, out = _compile_run(kiln, model, {"x": x}, tmp_path)
    y = np.load(out / "y.npy")
    assert y.dtype == np.dtype("V2")
    np.testing.assert_array_equal(y.view(BF16).astype(np.float32), 2 * x.astype(np.float32))
    # uint16 bit patterns are still accepted for a bfloat16 input.
    bits = tmp_path / "bits.npy"
    np.save(bits, x.view(np.uint16))
    out2 = tmp_path / "out2"
    result = kiln.run(tmp_path / "bf16.so", {"x": bits}, out2)
    assert result.returncode == 0, result.describe()
    np.testing.assert_array_equal(np.load(out2 / "y.npy").view(BF16).astype(np.float32),
                                  2 * x.astype(np.float32))


@pytest.mark.skipif(BF16 is None, reason="needs ml_dtypes")
def test_run_refuses_v2_for_other_inputs(kiln, tmp_path):
    model = _identity_model(tmp_path / "f16.onnx", TensorProto.FLOAT16)
    artifact = tmp_path / "f16.so"
    assert kiln.compile(model, artifact).returncode == 0
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, np.ones((2, 3), BF16))
    result = kiln.run(artifact, {"x": wrong}, tmp_path / "out")
    assert result.returncode != 0
    assert "input 'x': expected dtype float16, got bfloat16" in result.stderr, result.stderr


def test_run_reads_and_writes_f16_npy(kiln, tmp_path):
    model = _identity_model(tmp_path / "f16.onnx", TensorProto.FLOAT16)
    x = np.array([[1.5, -2.25, 3.0], [0.0001, 1000.0, -0.5]], dtype=np.float16)
    _, out = _compile_run(kiln, model, {"x": x}, tmp_path)
    y = np.load(out / "y.npy")
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, x + x)


#===----------------------------------------------------------------------===//
# --precision fp16 on the GPU devices
#===----------------------------------------------------------------------===//

import models  # noqa: E402
import test_models  # noqa: E402
from test_cuda import CUDA_ARGS, GPU_MISSING, _check_modules, toolkit  # noqa: E402,F401
from test_vulkan import VK_ARGS, _spirv_val, vulkan  # noqa: E402,F401

FP16 = ("--precision", "fp16")


def _device_memory(kiln, artifact) -> dict[str, int]:
    """Bytes per kind of the `memory I KIND N bytes, align A` lines of kiln-run --inspect
    (device-constant: the weights on the device; device-local: the arena)."""
    sizes: dict[str, int] = {}
    for line in _inspect(kiln, artifact).splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0] == "memory" and parts[4] == "bytes,":
            sizes[parts[2]] = sizes.get(parts[2], 0) + int(parts[3])
    return sizes


def test_precision_fp16_vulkan_small_model(kiln, vulkan, tmp_path):
    """Every narrowed op on Vulkan (lavapipe) against onnxruntime's f32 run; the weights
    on the device take about half the bytes of the f32 build (the biases, LayerNorm's
    scale and shift stay f32) and so does the arena (activations stored f16 between an
    op and the product reading them); every module passes spirv-val."""
    model = _small_model(tmp_path / "f32.onnx", TensorProto.FLOAT)
    feeds = _feeds()
    f32 = kiln.compile(model, tmp_path / "f32.so", list(VK_ARGS))
    if f32.returncode != 0:
        fail("kiln compile --device vulkan failed\n" + f32.describe())
    artifact, out = _compile_run(kiln, model, feeds, tmp_path / "fp16",
                                 [*VK_ARGS, *FP16, "--keep-intermediates"])
    problems = _spirv_val(artifact)
    if problems:
        fail("\n".join(problems))
    want = harness.ort_run(model, feeds)
    got = harness.load_outputs(out, ["y", "z"])
    for name in ("y", "z"):
        assert got[name].dtype == np.float32  # interfaces stay f32
        _check(f"--precision fp16 --device vulkan, output {name}", got[name], want[name],
               1e-2, 1e-2)
    narrow, wide = _device_memory(kiln, artifact), _device_memory(kiln, tmp_path / "f32.so")
    print(f"device memory f32 {wide}, fp16 {narrow}")
    assert narrow["device-constant"] < 0.6 * wide["device-constant"], (wide, narrow)
    assert narrow["device-local"] < wide["device-local"], (wide, narrow)
    # A device without f16 arithmetic or 16-bit storage is refused at open, naming the
    # feature (KILN_VULKAN_MASK_FEATURES takes lavapipe's for absent).
    for feature in ("shaderFloat16", "storageBuffer16BitAccess"):
        env = dict(os.environ, KILN_VULKAN_MASK_FEATURES=feature)
        r = subprocess.run([str(kiln.bin_dir / "kiln-run"), str(artifact), "--device", "vulkan"],
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode != 0 and f"needs the Vulkan feature {feature}" in r.stderr, \
            (r.returncode, r.stderr)


# The operator cases with products (MatMul, Gemm, Conv, Einsum, attention, recurrences) on
# Vulkan with --precision fp16, at the fp16 tolerance.
PRODUCT_CASES = [c for c in models.all_cases() if any(
    k in c.name for k in ("conv", "matmul", "gemm", "einsum", "attention", "lstm", "gru"))]
FP16_VK_SPECS = {c.name: harness.register(harness.CompileSpec(
    f"vulkan-fp16-{c.name}", c.save, c.compile_args + VK_ARGS + FP16 + ("--keep-intermediates",)))
    for c in PRODUCT_CASES}


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=pytest.mark.compiles(FP16_VK_SPECS[c.name].key))
    for c in PRODUCT_CASES])
def test_precision_fp16_vulkan_case(case, vulkan, compile_cache, tmp_path):
    compiled = compile_cache.get(FP16_VK_SPECS[case.name])
    if not compiled.ok:
        fail(compiled.failure())
    problems = _spirv_val(compiled.artifact)
    if problems:
        fail(f"{case.name}: " + "\n".join(problems))
    # fp16 rounds each activation to 11 significant bits: an absolute error that
    # grows with the inputs' scale (the MBConv cases feed +-40 to pass the sigmoid's
    # clamp), so the absolute tolerance is 1e-2 per unit of the largest input.
    scale = max([1.0] + [float(np.abs(v).max()) for v in case.inputs.values()
                         if v.dtype.kind == "f" and v.size])
    try:
        harness.run_and_compare(compile_cache.kiln, compiled, case.inputs, tmp_path,
                                rtol=max(case.rtol, 1e-2), atol=max(case.atol, 1e-2 * scale),
                                args=VK_ARGS)
    except AssertionError as e:
        fail(f"{case.name} --precision fp16 on vulkan: {e}")


GPU_MODELS = ("mobilenet_v2", "bert_mini")
FP16_MODEL_SPECS = {(name, device): harness.register(harness.CompileSpec(
    f"{device}-fp16-model-{name}", test_models._prepare(name),
    args + FP16 + ("--keep-intermediates",), timeout=harness.COMPILE_TIMEOUT_LARGE))
    for name in GPU_MODELS for device, args in (("vulkan", VK_ARGS), ("cuda", CUDA_ARGS))}


def _check_shared_model(name, got, want):
    for output in want:
        if not np.issubdtype(want[output].dtype, np.floating):
            continue
        assert got[output].dtype == want[output].dtype
        what = f"{name} --precision fp16 --device vulkan, output {output}"
        _check(what, got[output], want[output], 1e-2, 1e-2)
        scale = float(np.abs(want[output]).max())
        scaled = _errors(got[output], want[output])[0] / scale
        print(f"{what}: max |diff| / max |reference| = {scaled:.2e} (|reference| <= {scale:.2e})")
        if scale < 1e-4:
            continue  # below f16's range, as on the CPU (test_precision_shared_model)
        assert scaled < 5e-2, f"{what}: {scaled:.2e} of the output's scale"


@pytest.mark.models
@pytest.mark.parametrize("name", [
    pytest.param(n, id=n, marks=pytest.mark.compiles(FP16_MODEL_SPECS[(n, "vulkan")].key))
    for n in GPU_MODELS])
def test_precision_fp16_vulkan_shared_model(name, vulkan, models_dir, compile_cache, tmp_path):
    compiled = compile_cache.get(FP16_MODEL_SPECS[(name, "vulkan")])
    if not compiled.ok:
        fail(compiled.failure())
    problems = _spirv_val(compiled.artifact)
    if problems:
        fail(f"{name}: " + "\n".join(problems))
    feeds = test_models.MODELS[name](np.random.default_rng(2024))
    want = harness.ort_run(compiled.model, feeds)
    inputs = harness.save_inputs(feeds, tmp_path / "inputs")
    out = tmp_path / "outputs"
    out.mkdir()
    result = compile_cache.kiln.run(compiled.artifact, inputs, out, VK_ARGS)
    if result.returncode != 0:
        fail("kiln run failed\n" + result.describe())
    _check_shared_model(name, harness.load_outputs(out, list(want)), want)


def test_precision_fp16_cuda_small_model(kiln, toolkit, tmp_path):
    """The small model for cuda with --precision fp16: PTX that ptxas assembles for sm_80
    and sm_90, converting activations to f16 and reading f16 operands; run where a GPU is."""
    model = _small_model(tmp_path / "f32.onnx", TensorProto.FLOAT)
    artifact = tmp_path / "m.so"
    result = kiln.compile(model, artifact, [*CUDA_ARGS, *FP16, "--keep-intermediates"])
    if result.returncode != 0:
        fail("kiln compile --device cuda --precision fp16 failed\n" + result.describe())
    problems = _check_modules(artifact, kiln.kiln)
    if problems:
        fail("\n".join(problems))
    ptx = "".join(p.read_text() for p in Path(str(artifact) + ".kiln").glob("*.ptx"))
    # Activations converted to f16 on the device, and the products reading f16: widened
    # to f32 (the generic mapping) or on tensor cores (mma.sync ... f16, sm_80+).
    assert "cvt.rn.f16.f32" in ptx, "no f32 -> f16 conversion in the PTX"
    assert "cvt.f32.f16" in ptx or re.search(r"mma\.sync\S*\.f16", ptx), \
        "no product reads f16 in the PTX"
    if GPU_MISSING:
        return
    feeds = _feeds()
    want = harness.ort_run(model, feeds)
    inputs = harness.save_inputs(feeds, tmp_path / "inputs")
    out = tmp_path / "outputs"
    out.mkdir()
    result = kiln.run(artifact, inputs, out, ("--device", "cuda"))
    if result.returncode != 0:
        fail("kiln run failed\n" + result.describe())
    got = harness.load_outputs(out, ["y", "z"])
    for name in ("y", "z"):
        _check(f"--precision fp16 --device cuda, output {name}", got[name], want[name],
               1e-2, 1e-2)


@pytest.mark.models
@pytest.mark.parametrize("name", [
    pytest.param(n, id=n, marks=pytest.mark.compiles(FP16_MODEL_SPECS[(n, "cuda")].key))
    for n in GPU_MODELS])
def test_precision_fp16_cuda_shared_model(name, toolkit, models_dir, compile_cache, tmp_path):
    compiled = compile_cache.get(FP16_MODEL_SPECS[(name, "cuda")])
    if not compiled.ok:
        fail(compiled.failure())
    problems = _check_modules(compiled.artifact, compile_cache.kiln.kiln)
    if problems:
        fail(f"{name}: " + "\n".join(problems))
    if GPU_MISSING:
        return
    feeds = test_models.MODELS[name](np.random.default_rng(2024))
    want = harness.ort_run(compiled.model, feeds)
    inputs = harness.save_inputs(feeds, tmp_path / "inputs")
    out = tmp_path / "outputs"
    out.mkdir()
    result = compile_cache.kiln.run(compiled.artifact, inputs, out, ("--device", "cuda"))
    if result.returncode != 0:
        fail("kiln run failed\n" + result.describe())
    _check_shared_model(name, harness.load_outputs(out, list(want)), want)
