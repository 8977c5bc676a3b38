"""ONNX's packed and scale types: INT4, UINT4, INT2, UINT2, FLOAT4E2M1 (packed two or four
per byte) and FLOAT8E8M0 (the MX scale). Cast and CastLike to and from them, Quantize /
DequantizeLinear through them, graph inputs and outputs (packed at kiln's ABI, one element
per byte in kiln-run's V1 .npy files and ml_dtypes arrays), packed initializers (inline and
resource-sized, odd element counts), and the refusal of arithmetic on them. Each runs on
the cpu device and on Vulkan (lavapipe; every kept SPIR-V module through spirv-val): the GPU
targets run the same unpacking, conversion and packing code as one byte per element, bit
for bit the CPU's; cuda and hip builds of the same models assemble (ptxas) and link.

The oracle is bit-exact: onnx's reference evaluator (ml_dtypes' casts: floats truncate to
int4/int2 and wrap, float4e2m1 rounds to nearest even and saturates to +-6,
onnx.numpy_helper.to_float8e8m0's rounding modes); onnxruntime where it runs the model
(int4/uint4 initializers and Q/DQ; its float -> int4 Cast rounds half away from zero where
the reference truncates, so float -> int4 casts are compared with the reference only)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import harness
import test_vulkan  # noqa: F401  (sets VK_ICD_FILENAMES to lavapipe when unset)
from conftest import fail

ml_dtypes = pytest.importorskip("ml_dtypes")

PACKED = {
    T.INT4: ml_dtypes.int4,
    T.UINT4: ml_dtypes.uint4,
    T.INT2: ml_dtypes.int2,
    T.UINT2: ml_dtypes.uint2,
    T.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
}
BITS = {T.INT4: 4, T.UINT4: 4, T.INT2: 2, T.UINT2: 2, T.FLOAT4E2M1: 4}
NAME = lambda t: T.DataType.Name(t)  # noqa: E731


def _model(nodes, inputs, outputs, inits=(), opset=25, ir=11):
    g = h.make_graph(nodes, "subbyte", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=ir)


def _reference(model, feeds):
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(model).run(None, feeds)


def _saved(model, path):
    path.write_bytes(model.SerializeToString())
    return path


# The devices each test runs on; "vulkan" is Mesa's lavapipe where no GPU is (test_vulkan's
# rules: skipped without Vulkan here, failed in CI).
DEVICES = ["cpu", "vulkan"]


def _device_args(device: str) -> list[str]:
    return [] if device == "cpu" else ["--device", device, "--keep-intermediates"]


def _compile(kiln, model, work, device="cpu"):
    work.mkdir(parents=True, exist_ok=True)
    artifact = work / "m.so"
    result = kiln.compile(_saved(model, work / "m.onnx"), artifact, _device_args(device))
    if result.returncode != 0:
        fail("kiln compile failed\n" + result.describe())
    if device == "vulkan":
        problems = test_vulkan._spirv_val(artifact)
        if problems:
            fail("\n".join(problems))
    return artifact


def _compile_run(kiln, model, feeds, work, device="cpu"):
    if device == "vulkan":
        problem = test_vulkan._vulkan_missing()
        if problem:
            if test_vulkan._ci():
                fail(problem + " -- required in CI")
            pytest.skip(problem)
    artifact = _compile(kiln, model, work, device)
    inputs = harness.save_inputs(feeds, work / "in")
    out = work / "out"
    result = kiln.run(artifact, inputs, out, [] if device == "cpu" else ["--device", device])
    if result.returncode != 0:
        fail("kiln run failed\n" + result.describe())
    return harness.load_outputs(out, [o.name for o in model.graph.output])


def _same(got: np.ndarray, want: np.ndarray, what: str):
    """The same codes (one per byte) and shape; NaN equal to NaN."""
    if got.dtype in (np.dtype("V1"), np.dtype(np.uint8)) and want.dtype.itemsize == 1:
        got = got.view(want.dtype)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    if want.dtype.itemsize == 1 and want.dtype.kind not in "biu":
        g, w = got.view(np.uint8), want.view(np.uint8)
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
    same = (g == w) | (np.isnan(g.astype(np.float64)) & np.isnan(w.astype(np.float64)))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, (f"{what}: {bad.size} of {g.size} differ; first at {bad[0]}: got "
                           f"{got.flat[bad[0]]!r}, want {want.flat[bad[0]]!r}")


def _cast_inputs(to) -> np.ndarray:
    """Halfway points, both sides of them, saturation / wrap-around, specials."""
    codes = np.arange(1 << BITS[to], dtype=np.uint8).view(PACKED[to]).astype(np.float32)
    ordered = np.unique(codes)
    halfway = (ordered[1:] + ordered[:-1]) / 2
    nudged = np.concatenate([np.nextafter(halfway, np.float32(np.inf)),
                             np.nextafter(halfway, np.float32(-np.inf))])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 6.5, -7.0, 100.0, -100.0,
                        16.0, 17.5, -9.0, 3.99, -3.99, 1e10, -1e10, 1e-7], np.float32)
    rng = np.random.default_rng(0)
    spread = (rng.standard_normal(101) * 10).astype(np.float32)
    return np.concatenate([codes, halfway, nudged, special, spread]).astype(np.float32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("to", list(PACKED), ids=NAME)
@pytest.mark.parametrize("src", [T.FLOAT, T.FLOAT16, T.DOUBLE], ids=NAME)
def test_cast_to_packed_and_back(kiln, tmp_path, to, src, device):
    """float -> packed type (an odd element count: the last byte's padding) -> float, and
    int32 -> packed type (wrap-around), against the reference bit for bit."""
    with np.errstate(over="ignore"):  # float16: 1e10 is infinity
        x = _cast_inputs(to).astype(h.tensor_dtype_to_np_dtype(src))
        if to != T.FLOAT4E2M1:  # NaN and infinities are undefined for integers in the spec
            x = x[np.isfinite(x) & (np.abs(x.astype(np.float64)) < 2**31)]
    if x.size % 2 == 0:
        x = x[:-1]
    n = x.size
    ints = np.arange(-70, 70, 3, dtype=np.int32)
    model = _model(
        [h.make_node("Cast", ["x"], ["y"], to=to),
         h.make_node("Cast", ["y"], ["z"], to=T.FLOAT),
         h.make_node("Cast", ["i"], ["j"], to=to),
         h.make_node("CastLike", ["j", "like"], ["k"])],
        [h.make_tensor_value_info("x", src, [n]),
         h.make_tensor_value_info("i", T.INT32, [ints.size])],
        [h.make_tensor_value_info("y", to, [n]), h.make_tensor_value_info("z", T.FLOAT, [n]),
         h.make_tensor_value_info("j", to, [ints.size]),
         h.make_tensor_value_info("k", T.INT64, [ints.size])],
        [h.make_tensor("like", T.INT64, [1], [0])])
    got = _compile_run(kiln, model, {"x": x, "i": ints}, tmp_path, device)
    want = dict(zip(["y", "z", "j", "k"], _reference(model, {"x": x, "i": ints})))
    for name in want:
        _same(got[name], want[name], name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("t", list(PACKED) + [T.FLOAT8E8M0], ids=NAME)
def test_every_code_decodes(kiln, tmp_path, t, device):
    """A graph input holding every code (an odd count: 2*codes+1), cast to float32,
    float16, int8 / uint8 and bool, and passed through Reshape and Identity to a graph
    output unchanged (packed at the ABI both ways)."""
    dt = PACKED.get(t, ml_dtypes.float8_e8m0fnu)
    count = 1 << BITS.get(t, 8)
    codes = np.concatenate([np.arange(count), np.arange(count), [count - 1]]).astype(np.uint8)
    x = codes.view(dt)
    n = x.size
    wide = T.UINT8 if t in (T.UINT4, T.UINT2, T.FLOAT8E8M0) else T.INT8
    model = _model(
        [h.make_node("Cast", ["x"], ["f32"], to=T.FLOAT),
         h.make_node("Cast", ["x"], ["f16"], to=T.FLOAT16),
         h.make_node("Reshape", ["x", "shape"], ["r"]),
         h.make_node("Identity", ["r"], ["same"])]
        + ([h.make_node("Cast", ["x"], ["int"], to=wide),
            h.make_node("Cast", ["x"], ["flag"], to=T.BOOL)]
           if t not in (T.FLOAT4E2M1, T.FLOAT8E8M0) else []),
        [h.make_tensor_value_info("x", t, [n])],
        [h.make_tensor_value_info("f32", T.FLOAT, [n]),
         h.make_tensor_value_info("f16", T.FLOAT16, [n]),
         h.make_tensor_value_info("same", t, [1, n])]
        + ([h.make_tensor_value_info("int", wide, [n]),
            h.make_tensor_value_info("flag", T.BOOL, [n])]
           if t not in (T.FLOAT4E2M1, T.FLOAT8E8M0) else []),
        [numpy_helper.from_array(np.array([1, n], np.int64), "shape")])
    got = _compile_run(kiln, model, {"x": x}, tmp_path, device)
    _same(got["f32"], x.astype(np.float32), "float32")
    with np.errstate(over="ignore"):  # e8m0 past float16's range: infinity
        _same(got["f16"], x.astype(np.float32).astype(np.float16), "float16")
    _same(got["same"], x.reshape(1, n), "passed through")
    if "int" in got:
        _same(got["int"], x.astype(h.tensor_dtype_to_np_dtype(wide)), "int8/uint8")
        _same(got["flag"], x.astype(np.float32) != 0, "bool")


@pytest.mark.parametrize("t", [T.INT4, T.UINT4], ids=NAME)
@pytest.mark.parametrize("n", [7, 5001], ids=["inline", "resource"])
@pytest.mark.parametrize("device", DEVICES)
def test_packed_initializers(kiln, tmp_path, t, n, device):
    """Packed initializers (raw_data, odd counts; 5001 elements exceed the inline limit and
    travel as a resource blob) cast to float, against onnxruntime and the reference."""
    rng = np.random.default_rng(n)
    lo, hi = (-8, 8) if t == T.INT4 else (0, 16)
    values = rng.integers(lo, hi, n).astype(PACKED[t])
    init = numpy_helper.from_array(values, "w")
    assert init.HasField("raw_data") and len(init.raw_data) == (n + 1) // 2
    model = _model([h.make_node("Cast", ["w"], ["y"], to=T.FLOAT)], [],
                   [h.make_tensor_value_info("y", T.FLOAT, [n])], [init], opset=21, ir=10)
    got = _compile_run(kiln, model, {}, tmp_path, device)
    _same(got["y"], values.astype(np.float32), "vs the values")
    ort = harness.ort_run(_saved(model, tmp_path / "ort.onnx"), {})["y"]
    _same(got["y"], ort, "vs onnxruntime")
    # int32_data (one packed byte per int32) too.
    typed = h.make_tensor("w", t, [n], values.view(np.uint8).tolist(), raw=False)
    model.graph.ClearField("initializer")
    model.graph.initializer.append(typed)
    got = _compile_run(kiln, model, {}, tmp_path / "typed", device)
    _same(got["y"], values.astype(np.float32), "int32_data")


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("device", DEVICES)
def test_cast_to_float8e8m0(kiln, tmp_path, mode, saturate, device):
    """float32 -> FLOAT8E8M0 with each round_mode, with and without saturation, against
    onnx.numpy_helper.to_float8e8m0 (positive values: negative ones are undefined), and
    back to float32. Infinities saturate to 2^127 as the spec's table and onnxruntime say
    (the reference writes NaN)."""
    rng = np.random.default_rng(3)
    powers = np.exp2(np.arange(-127, 128, dtype=np.float64)).astype(np.float32)
    x = np.concatenate([
        powers, powers * 1.5, powers * 1.25, np.nextafter(powers, np.float32(np.inf)),
        np.nextafter(powers, np.float32(0)),
        np.abs(rng.standard_normal(64).astype(np.float32)) * 1e3,
        np.array([0.0, np.nan, np.finfo(np.float32).max, 1e-45, 3e-39, 2.0**-127 * 1.5,
                  2.0**-127 * 1.25, 1.1e-38], np.float32)])
    x = x[np.isfinite(x) | np.isnan(x)].astype(np.float32)
    inf = np.array([np.inf], np.float32)
    feeds = {"x": x, "inf": inf}
    model = _model(
        [h.make_node("Cast", ["x"], ["y"], to=T.FLOAT8E8M0, round_mode=mode, saturate=saturate),
         h.make_node("Cast", ["y"], ["z"], to=T.FLOAT),
         h.make_node("Cast", ["inf"], ["e"], to=T.FLOAT8E8M0, saturate=saturate)],
        [h.make_tensor_value_info("x", T.FLOAT, [x.size]),
         h.make_tensor_value_info("inf", T.FLOAT, [1])],
        [h.make_tensor_value_info("y", T.FLOAT8E8M0, [x.size]),
         h.make_tensor_value_info("z", T.FLOAT, [x.size]),
         h.make_tensor_value_info("e", T.FLOAT8E8M0, [1])])
    got = _compile_run(kiln, model, feeds, tmp_path, device)
    want_y, want_z, _ = _reference(model, feeds)
    # f32 subnormals (below 2^-126): the reference reads their exponent field 0 as
    # 2^-127 and rounds 2^-127 itself up to 2^-126; kiln (and onnxruntime) round by
    # value: up gives 2^-127 for x <= 2^-127, nearest for x < 1.5 * 2^-127 (ties up).
    sub = (x > 0) & (x < np.float32(2.0**-126))
    assert sub.sum() >= 4
    tiny = x[sub].astype(np.float64)
    code = {"up": tiny > 2.0**-127, "down": np.zeros_like(tiny, bool),
            "nearest": tiny >= 1.5 * 2.0**-127}[mode].astype(np.uint8)
    want_y = want_y.copy()
    want_y.view(np.uint8)[sub] = code
    want_z = want_y.astype(np.float32)
    _same(got["y"], want_y, "y")
    _same(got["z"], want_z, "z")
    assert got["e"].view(np.uint8)[0] == (0xFE if saturate else 0xFF)
    if mode == "up" and saturate:
        only_z = _model(list(model.graph.node)[:2], [model.graph.input[0]],
                        [model.graph.output[1]])
        ort = harness.ort_run(_saved(only_z, tmp_path / "ort.onnx"), {"x": x})["z"]
        _same(got["z"], ort, "z vs onnxruntime")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("t", [T.INT4, T.UINT4, T.INT2, T.UINT2, T.FLOAT4E2M1], ids=NAME)
def test_quantize_dequantize(kiln, tmp_path, t, device):
    """Per-axis QuantizeLinear to the type (rounding half to even, saturation) and
    DequantizeLinear back, against the reference and (int4/uint4) onnxruntime."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 5, 7)) * 6).astype(np.float32)
    x[0, 0, :4] = [0.5, 1.5, 2.5, -2.5]  # ties at scale 1
    scale = np.array([1.0, 0.5, 2.0, 0.25, 1.5], np.float32)
    zp_values = {T.INT4: [0, 1, -2, 3, -8], T.UINT4: [8, 0, 15, 4, 7], T.INT2: [0, 1, -2, 0, -1],
                 T.UINT2: [1, 0, 3, 2, 1], T.FLOAT4E2M1: [0, 0, 0, 0, 0]}[t]
    zero = np.array(zp_values, np.float32).astype(PACKED[t])
    model = _model(
        [h.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"], axis=1),
         h.make_node("DequantizeLinear", ["q", "scale", "zero"], ["d"], axis=1)],
        [h.make_tensor_value_info("x", T.FLOAT, list(x.shape))],
        [h.make_tensor_value_info("q", t, list(x.shape)),
         h.make_tensor_value_info("d", T.FLOAT, list(x.shape))],
        [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(zero, "zero")])
    got = _compile_run(kiln, model, {"x": x}, tmp_path, device)
    want_q, want_d = _reference(model, {"x": x})
    _same(got["q"], want_q, "quantized")
    _same(got["d"], want_d, "dequantized")
    if t in (T.INT4, T.UINT4):
        only_d = _model(list(model.graph.node), list(model.graph.input),
                        [model.graph.output[1]], list(model.graph.initializer), opset=21, ir=10)
        ort = harness.ort_run(_saved(only_d, tmp_path / "ort.onnx"), {"x": x})["d"]
        _same(got["d"], ort, "dequantized vs onnxruntime")


def test_python_packed_inputs_and_outputs(tmp_path):
    """The Python API takes and returns ml_dtypes' int4 / float4 arrays (one element per
    byte; packed at the ABI by the extension), odd counts included."""
    kiln_py = pytest.importorskip("kiln")
    n = 9
    model = _model(
        [h.make_node("Cast", ["x"], ["wide"], to=T.FLOAT),
         h.make_node("Cast", ["wide"], ["f4"], to=T.FLOAT4E2M1),
         h.make_node("Identity", ["x"], ["same"])],
        [h.make_tensor_value_info("x", T.INT4, [3, 3])],
        [h.make_tensor_value_info("wide", T.FLOAT, [3, 3]),
         h.make_tensor_value_info("f4", T.FLOAT4E2M1, [3, 3]),
         h.make_tensor_value_info("same", T.INT4, [3, 3])])
    sess = kiln_py.InferenceSession(_saved(model, tmp_path / "m.onnx"), threads=1)
    assert [i.type for i in sess.get_inputs()] == ["tensor(int4)"]
    x = np.array([-8, -3, -1, 0, 1, 2, 5, 7, 4], np.int8).reshape(3, 3).astype(ml_dtypes.int4)
    assert x.size == n
    wide, f4, same = sess.run(None, {"x": x})
    np.testing.assert_array_equal(wide, x.astype(np.float32))
    assert f4.dtype == np.dtype(ml_dtypes.float4_e2m1fn)
    np.testing.assert_array_equal(f4.view(np.uint8),
                                  x.astype(np.float32).astype(ml_dtypes.float4_e2m1fn).view(np.uint8))
    assert same.dtype == np.dtype(ml_dtypes.int4)
    np.testing.assert_array_equal(same.view(np.uint8), x.view(np.uint8))


def test_arithmetic_on_int4_is_refused_naming_the_node(kiln, tmp_path):
    model = _model(
        [h.make_node("Add", ["x", "x"], ["y"], name="add_i4")],
        [h.make_tensor_value_info("x", T.INT4, [4])],
        [h.make_tensor_value_info("y", T.INT4, [4])], opset=21, ir=10)
    result = kiln.compile(_saved(model, tmp_path / "add.onnx"), tmp_path / "add.so")
    assert result.returncode == 1, result.describe()
    assert "add_i4" in result.stderr and "only casts and moves" in result.stderr, result.stderr


def test_packed_input_with_symbolic_dims_is_refused(kiln, tmp_path):
    model = _model(
        [h.make_node("Cast", ["x"], ["y"], to=T.FLOAT)],
        [h.make_tensor_value_info("x", T.UINT4, ["n"])],
        [h.make_tensor_value_info("y", T.FLOAT, ["n"])], opset=21, ir=10)
    result = kiln.compile(_saved(model, tmp_path / "sym.onnx"), tmp_path / "sym.so")
    assert result.returncode == 1, result.describe()
    assert "symbolic dims" in result.stderr, result.stderr


@pytest.mark.parametrize("device", DEVICES)
def test_moving_packed_values(kiln, tmp_path, device):
    """Transpose, Concat, Slice, Gather, Unsqueeze, Flatten and Expand move int4 elements
    (one per byte inside, packed at the boundary), against the reference."""
    x = np.arange(-8, 7).reshape(3, 5).astype(ml_dtypes.int4)
    outs = [("t", [5, 3]), ("c", [6, 5]), ("s", [2, 3]), ("g", [3, 3]), ("u", [1, 3, 5]),
            ("f", [3, 5]), ("e", [2, 3, 5])]
    model = _model(
        [h.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
         h.make_node("Concat", ["x", "x"], ["c"], axis=0),
         h.make_node("Slice", ["x", "st", "en"], ["s"]),
         h.make_node("Gather", ["x", "idx"], ["g"], axis=1),
         h.make_node("Unsqueeze", ["x", "ax"], ["u"]),
         h.make_node("Flatten", ["x"], ["f"]),
         h.make_node("Expand", ["x", "shape"], ["e"])],
        [h.make_tensor_value_info("x", T.INT4, [3, 5])],
        [h.make_tensor_value_info(n, T.INT4, s) for n, s in outs],
        [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
         [("st", [1, 1]), ("en", [3, 4]), ("idx", [4, 0, 2]), ("ax", [0]), ("shape", [2, 3, 5])]],
        opset=21, ir=10)
    got = _compile_run(kiln, model, {"x": x}, tmp_path, device)
    for (name, _), want in zip(outs, _reference(model, {"x": x})):
        _same(got[name], want, name)


def _sizes_model(sizes, t=T.INT4):
    """Per size n: input x<n> of type t cast to float (unpacking), and float input f<n>
    cast to t as output y<n> (packing: the last byte's padding for odd n)."""
    nodes, inputs, outputs = [], [], []
    for n in sizes:
        nodes += [h.make_node("Cast", [f"x{n}"], [f"w{n}"], to=T.FLOAT),
                  h.make_node("Cast", [f"f{n}"], [f"y{n}"], to=t)]
        inputs += [h.make_tensor_value_info(f"x{n}", t, [n]),
                   h.make_tensor_value_info(f"f{n}", T.FLOAT, [n])]
        outputs += [h.make_tensor_value_info(f"w{n}", T.FLOAT, [n]),
                    h.make_tensor_value_info(f"y{n}", t, [n])]
    return _model(nodes, inputs, outputs)


@pytest.mark.parametrize("t", [T.INT4, T.UINT2], ids=NAME)
def test_packed_boundary_sizes_on_vulkan(kiln, tmp_path, t):
    """Packed graph inputs and outputs of 1, 2, 3, 5 and 9 elements (1 to 3 bytes, not a
    multiple of 4: the device copies and bindings of such tensors) and one of 4.2 million
    (more threads than the generic mapping's 65535 workgroups x 64 hold: each thread
    loops), unpacked and packed by kernels on Vulkan, bit for bit the reference."""
    sizes = [1, 2, 3, 5, 9, 4_200_001]
    model = _sizes_model(sizes, t)
    rng = np.random.default_rng(7)
    lo, hi = {T.INT4: (-8, 8), T.UINT2: (0, 4)}[t]
    feeds = {}
    for n in sizes:
        feeds[f"x{n}"] = rng.integers(lo, hi, n).astype(PACKED[t])
        feeds[f"f{n}"] = (rng.standard_normal(n) * 6).astype(np.float32)
    got = _compile_run(kiln, model, feeds, tmp_path, "vulkan")
    want = dict(zip([o.name for o in model.graph.output], _reference(model, feeds)))
    for name, w in want.items():
        _same(got[name], w, name)


@pytest.mark.parametrize("device", ["cuda", "hip"])
def test_packed_types_build_for_cuda_and_hip(kiln, tmp_path, device):
    """The packing, the conversions (float4e2m1, e8m0, int4, uint2) and Q/DQ to int4 build
    for the cuda and hip targets too: each kernel's PTX assembles with ptxas (sm_80 and
    sm_90) and the runtime accepts the descriptor, as test_cuda checks every operator case;
    hip code objects as test_hip checks them. They run where a GPU is (gpu_bundle)."""
    model = _sizes_model([3, 8])
    graph = model.graph
    graph.node.extend([
        h.make_node("Cast", ["f3"], ["e"], to=T.FLOAT8E8M0),
        h.make_node("Cast", ["f3"], ["f4"], to=T.FLOAT4E2M1),
        h.make_node("Cast", ["f4"], ["g"], to=T.FLOAT),
        h.make_node("QuantizeLinear", ["f8", "scale", "zero"], ["q"]),
        h.make_node("DequantizeLinear", ["q", "scale", "zero"], ["d"])])
    graph.output.extend([h.make_tensor_value_info("e", T.FLOAT8E8M0, [3]),
                         h.make_tensor_value_info("g", T.FLOAT, [3]),
                         h.make_tensor_value_info("d", T.FLOAT, [8])])
    graph.initializer.extend([numpy_helper.from_array(np.array(0.5, np.float32), "scale"),
                              numpy_helper.from_array(np.array(1, ml_dtypes.int4), "zero")])
    if device == "cuda":
        import test_cuda
        if not test_cuda.PTXAS.is_file():
            if test_cuda._ci():
                fail("the CUDA toolkit is required in CI")
            pytest.skip(f"no ptxas at {test_cuda.PTXAS}")
        artifact = tmp_path / "m.so"
        r = kiln.compile(_saved(model, tmp_path / "m.onnx"), artifact,
                         list(test_cuda.CUDA_ARGS) + ["--keep-intermediates"])
        if r.returncode != 0:
            fail("kiln compile failed\n" + r.describe())
        problems = test_cuda._check_modules(artifact, kiln.kiln)
    else:
        import test_hip
        if not test_hip.READELF.is_file():
            if test_hip._ci():
                fail("llvm-readelf is required in CI")
            pytest.skip(f"no {test_hip.READELF}")
        artifact = tmp_path / "m.so"
        r = kiln.compile(_saved(model, tmp_path / "m.onnx"), artifact,
                         ["--device", "hip", "--keep-intermediates"])
        if r.returncode != 0:
            fail("kiln compile failed\n" + r.describe())
        problems = test_hip._check_artifact(artifact, kiln.kiln, "gfx90a")
    if problems:
        fail("\n".join(problems))
