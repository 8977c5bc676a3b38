"""The 8-bit floats (FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ): Cast and
CastLike to and from them (with and without saturation), QuantizeLinear / DequantizeLinear
with a float8 zero point, float8 model inputs and outputs through kiln-run's V1 .npy files,
on the CPU and on Vulkan (lavapipe where no GPU is: the GPU targets store float8 as i8 and
run the same bit-level code; each kept SPIR-V module passes spirv-val).

The oracle is bit-exact: onnx's reference evaluator (ml_dtypes' round-to-nearest-even and
onnx.numpy_helper.saturate_cast) for the float8 outputs, onnxruntime (which runs these
casts but cannot return most float8 outputs to Python) for the float32 round trips.
Every one of the 256 codes of each format is decoded; the encoded inputs cover zeros,
subnormals, the halfway points between codes, the largest finite value and beyond it,
infinities and NaN."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import harness
import test_vulkan  # (sets VK_ICD_FILENAMES to lavapipe when unset)
from conftest import fail

ml_dtypes = pytest.importorskip("ml_dtypes")

FORMATS = {
    T.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    T.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    T.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    T.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
}


DEVICES = ("cpu", "vulkan")


def _need(device: str) -> None:
    """Vulkan missing skips its cases on a developer's machine and fails them in CI."""
    if device != "vulkan":
        return
    problem = test_vulkan._vulkan_missing()
    if problem:
        if test_vulkan._ci():
            pytest.fail(problem + " -- required in CI", pytrace=False)
        pytest.skip(problem)


def _model(nodes, inputs, outputs, inits=(), opset=21):
    g = h.make_graph(nodes, "float8", inputs, outputs, list(inits))
    # IR 9: what the pinned onnxruntime reads.
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=9)


def _reference(model, feeds):
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(model).run(None, feeds)


def _values(fmt) -> np.ndarray:
    """Inputs that exercise every path of the encoding."""
    info = ml_dtypes.finfo(fmt)
    codes = np.arange(256, dtype=np.uint8).view(fmt).astype(np.float32)
    finite = codes[np.isfinite(codes)]
    ordered = np.unique(finite)
    halfway = (ordered[1:] + ordered[:-1]) / 2  # ties: round to the even code
    nudged = np.concatenate([np.nextafter(halfway, np.float32(np.inf)),
                             np.nextafter(halfway, np.float32(-np.inf))])
    big = float(info.max)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, big * 1.01, -big * 1.2,
                        big * 1.0625, 1e30, -1e-30, float(info.smallest_subnormal) / 3,
                        float(info.smallest_subnormal) * 0.5,
                        float(info.smallest_subnormal) * 0.50001], np.float32)
    rng = np.random.default_rng(0)
    spread = (rng.standard_normal(200) * np.exp2(rng.integers(-20, 18, 200))).astype(np.float32)
    return np.concatenate([finite, halfway, nudged, special, spread]).astype(np.float32)


def _compile_run(kiln, model, feeds, work, device="cpu"):
    _need(device)
    work.mkdir(parents=True, exist_ok=True)
    path = work / "m.onnx"
    path.write_bytes(model.SerializeToString())
    artifact = work / "m.so"
    args = () if device == "cpu" else ("--device", device, "--keep-intermediates")
    result = kiln.compile(path, artifact, args)
    if result.returncode != 0:
        fail("kiln compile failed\n" + result.describe())
    if device == "vulkan":
        modules = sorted(Path(str(artifact) + ".kiln").glob("*.spv"))
        assert modules, "no SPIR-V module kept"
        for module in modules:
            r = harness.run_command(["spirv-val", "--target-env", "vulkan1.1", str(module)], 60)
            assert r.returncode == 0, f"spirv-val {module.name}: {r.stdout}{r.stderr}"
    inputs = harness.save_inputs(feeds, work / "in")
    out = work / "out"
    result = kiln.run(artifact, inputs, out)
    if result.returncode != 0:
        fail("kiln run failed\n" + result.describe())
    return harness.load_outputs(out, [o.name for o in model.graph.output])


def _same(got: np.ndarray, want: np.ndarray, what: str):
    """Equal values (NaN equal to NaN, -0 and 0 told apart by their codes)."""
    if got.dtype == np.dtype("V1") or got.dtype == np.uint8:
        got = got.view(want.dtype)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, got.shape)
    g, w = got.astype(np.float32), want.astype(np.float32)
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    if want.dtype.itemsize == 1:  # a float8: the codes (the sign of zero, which NaN)
        same &= (got.view(np.uint8) == want.view(np.uint8)) | np.isnan(g)
    bad = np.flatnonzero(~same)
    assert bad.size == 0, (f"{what}: {bad.size} of {g.size} differ; first: input index "
                           f"{bad[0]}, got {g.flat[bad[0]]}, want {w.flat[bad[0]]}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("to", list(FORMATS), ids=lambda t: T.DataType.Name(t))
def test_cast_float32_to_float8_and_back(kiln, tmp_path, to, saturate, device):
    fmt = FORMATS[to]
    x = _values(fmt)
    model = _model(
        [h.make_node("Cast", ["x"], ["y"], to=to, saturate=saturate),
         h.make_node("Cast", ["y"], ["z"], to=T.FLOAT)],
        [h.make_tensor_value_info("x", T.FLOAT, [x.size])],
        [h.make_tensor_value_info("y", to, [x.size]),
         h.make_tensor_value_info("z", T.FLOAT, [x.size])])
    got = _compile_run(kiln, model, {"x": x}, tmp_path, device)
    want_y, want_z = _reference(model, {"x": x})
    _same(got["y"], want_y, "y (float8)")
    _same(got["z"], want_z, "z (round trip)")
    if not saturate:
        # onnxruntime 1.31 turns finite values past E5M2's largest into NaN without
        # saturation where the spec (and its reference) says infinity: compare saturated
        # casts only.
        return
    # onnxruntime agrees on the round trip (it cannot return the float8 output itself).
    only_z = _model(list(model.graph.node), list(model.graph.input), [model.graph.output[1]])
    ort_z = harness.ort_run(_saved(only_z, tmp_path / "ort.onnx"), {"x": x})["z"]
    _same(got["z"], ort_z, "z vs onnxruntime")


def _saved(model, path):
    path.write_bytes(model.SerializeToString())
    return path


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("to", list(FORMATS), ids=lambda t: T.DataType.Name(t))
def test_every_float8_code_decodes(kiln, tmp_path, to, device):
    """A float8 model input (a V1 .npy file) cast to float32, float16 and bfloat16, and
    passed through a Reshape and out as a float8 output unchanged."""
    fmt = FORMATS[to]
    x = np.arange(256, dtype=np.uint8).view(fmt).reshape(16, 16)
    model = _model(
        [h.make_node("Cast", ["x"], ["f32"], to=T.FLOAT),
         h.make_node("Cast", ["x"], ["f16"], to=T.FLOAT16),
         h.make_node("CastLike", ["x", "like"], ["bf16"]),
         h.make_node("Reshape", ["x", "shape"], ["same"])],
        [h.make_tensor_value_info("x", to, [16, 16])],
        [h.make_tensor_value_info("f32", T.FLOAT, [16, 16]),
         h.make_tensor_value_info("f16", T.FLOAT16, [16, 16]),
         h.make_tensor_value_info("bf16", T.BFLOAT16, [16, 16]),
         h.make_tensor_value_info("same", to, [256])],
        [numpy_helper.from_array(np.array([256], np.int64), "shape"),
         h.make_tensor("like", T.BFLOAT16, [1], [0])])
    got = _compile_run(kiln, model, {"x": x}, tmp_path, device)
    _same(got["f32"], x.astype(np.float32), "float32")
    _same(got["f16"], x.astype(np.float16), "float16")
    _same(got["bf16"].view(ml_dtypes.bfloat16), x.astype(ml_dtypes.bfloat16), "bfloat16")
    _same(got["same"], x.reshape(256), "passed through")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("to", [T.FLOAT8E4M3FN, T.FLOAT8E5M2FNUZ],
                         ids=lambda t: T.DataType.Name(t))
def test_quantize_dequantize_float8(kiln, tmp_path, to, device):
    """Per-axis QuantizeLinear to a float8 (x / scale + zero point, rounded to nearest
    even, saturated) and DequantizeLinear back, against onnx's reference."""
    fmt = FORMATS[to]
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 4, 5)) * 300).astype(np.float32)
    scale = np.array([0.5, 2.0, 0.125, 1.0], np.float32)
    zero = np.zeros(4, np.float32).astype(fmt)
    model = _model(
        [h.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"], axis=1),
         h.make_node("DequantizeLinear", ["q", "scale", "zero"], ["d"], axis=1)],
        [h.make_tensor_value_info("x", T.FLOAT, list(x.shape))],
        [h.make_tensor_value_info("q", to, list(x.shape)),
         h.make_tensor_value_info("d", T.FLOAT, list(x.shape))],
        [numpy_helper.from_array(scale, "scale"),
         h.make_tensor("zero", to, [4], zero.view(np.uint8).tolist(), raw=False)])
    got = _compile_run(kiln, model, {"x": x}, tmp_path, device)
    want_q, want_d = _reference(model, {"x": x})
    _same(got["q"], want_q, "quantized")
    _same(got["d"], want_d, "dequantized")


@pytest.mark.parametrize("device", DEVICES)
def test_arithmetic_on_float8_is_refused_naming_the_node(kiln, tmp_path, device):
    """ONNX has no Add on float8; a model that has one anyway gets a located error."""
    model = _model(
        [h.make_node("Add", ["x", "x"], ["y"], name="add_f8")],
        [h.make_tensor_value_info("x", T.FLOAT8E4M3FN, [4])],
        [h.make_tensor_value_info("y", T.FLOAT8E4M3FN, [4])])
    path = _saved(model, tmp_path / "add.onnx")
    result = kiln.compile(path, tmp_path / "add.so", ("--device", device))
    assert result.returncode == 1, result.describe()
    assert "add_f8" in result.stderr and "f8E4M3FN" in result.stderr, result.stderr
