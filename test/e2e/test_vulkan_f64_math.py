"""f64 Exp, Log and Pow on Vulkan (kiln-spirv-expand-f64-math: GLSL's exp/log/pow are 32-bit
only, so kiln computes them in f64 arithmetic), checked against numpy over their whole
ranges in ulp of the result, not only at the tolerances of the node tests; and the Pow of
integer tensors (pow in double, as onnxruntime computes it, then converted), exact.

Runs on lavapipe where no GPU is (test_vulkan's rules: skipped without Vulkan here, failed
in CI)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import harness
import test_vulkan
from conftest import fail


@pytest.fixture(scope="module")
def vulkan():
    problem = test_vulkan._vulkan_missing()
    if problem:
        if test_vulkan._ci():
            pytest.fail(problem + " -- required in CI", pytrace=False)
        pytest.skip(problem)


def _run(kiln, model, feeds, work):
    work.mkdir(parents=True, exist_ok=True)
    path = work / "m.onnx"
    path.write_bytes(model.SerializeToString())
    artifact = work / "m.so"
    r = kiln.compile(path, artifact, ["--device", "vulkan", "--keep-intermediates"])
    if r.returncode != 0:
        fail("kiln compile failed\n" + r.describe())
    problems = test_vulkan._spirv_val(artifact)
    if problems:
        fail("\n".join(problems))
    out = work / "out"
    r = kiln.run(artifact, harness.save_inputs(feeds, work / "in"), out, ["--device", "vulkan"])
    if r.returncode != 0:
        fail("kiln run failed\n" + r.describe())
    return harness.load_outputs(out, [o.name for o in model.graph.output])


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in units of the spacing of doubles at `want` (NaN, infinities and
    zeros must be equal: 0 ulp there, else infinite)."""
    got = got.astype(np.float64)
    special = ~np.isfinite(want) | ~np.isfinite(got)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(got - want) / np.spacing(np.abs(want))
    err = np.where(special, np.where(same, 0.0, np.inf), err)
    return np.where(same, 0.0, err)


def _model(nodes, inputs, outputs, opset=18):
    return h.make_model(h.make_graph(nodes, "f64", inputs, outputs),
                        opset_imports=[h.make_opsetid("", opset)], ir_version=8)


def test_exp_log_f64_against_numpy(kiln, vulkan, tmp_path):
    """exp over [-746, 710] (overflow, subnormal results, underflow to 0) and near 0; log
    over every binade of doubles, subnormals included, and near 1; the specials."""
    rng = np.random.default_rng(11)
    ex = np.concatenate([
        rng.uniform(-746, 710, 20000), rng.uniform(-1e-3, 1e-3, 2000),
        rng.uniform(-745.2, -708, 2000),  # subnormal results
        rng.uniform(700, 709.78, 500),
        [0.0, -0.0, 1.0, -1.0, 709.782712893384, 709.79, -745.1332191019411, -745.2,
         1e-300, -1e-300, np.inf, -np.inf, np.nan, 0.5 * np.log(2), -0.5 * np.log(2)]])
    lx = np.concatenate([
        np.exp2(rng.uniform(-1074, 1024, 20000)), rng.uniform(0.5, 2.0, 4000),
        1 + rng.uniform(-1e-6, 1e-6, 1000), np.nextafter(1.0, [0.0, 2.0]),
        [5e-324, 2.2e-308, 1e-310, np.finfo(np.float64).max, 0.0, -0.0, -1.0, np.inf,
         -np.inf, np.nan, np.sqrt(2), np.sqrt(0.5), 1.0]])
    n_e, n_l = ex.size, lx.size
    model = _model(
        [h.make_node("Exp", ["ex"], ["e"]), h.make_node("Log", ["lx"], ["l"])],
        [h.make_tensor_value_info("ex", T.DOUBLE, [n_e]),
         h.make_tensor_value_info("lx", T.DOUBLE, [n_l])],
        [h.make_tensor_value_info("e", T.DOUBLE, [n_e]),
         h.make_tensor_value_info("l", T.DOUBLE, [n_l])])
    got = _run(kiln, model, {"ex": ex, "lx": lx}, tmp_path)
    with np.errstate(all="ignore"):
        want_e, want_l = np.exp(ex), np.log(lx)
    for name, g, w, x in [("exp", got["e"], want_e, ex), ("log", got["l"], want_l, lx)]:
        err = _ulps(g, w)
        worst = int(np.argmax(err))
        print(f"{name}: max {err.max()} ulp over {x.size} arguments")
        assert err.max() <= 2.0, (f"{name}: {err.max()} ulp at x={x[worst]!r}: got "
                                  f"{g[worst]!r}, numpy {w[worst]!r}")


def test_pow_f64_against_numpy(kiln, vulkan, tmp_path):
    """Non-integer exponents (exp(y log x): within 4 + 4 |y log x| ulp, the rounding of
    y log x), integer ones (binary powering: each squaring doubles the relative error, so
    within 2 + |y| ulp; exact for representable results), negative bases, specials."""
    rng = np.random.default_rng(12)
    x = np.concatenate([rng.uniform(0, 100, 4000), np.exp2(rng.uniform(-60, 60, 4000)),
                        rng.uniform(-10, 10, 4000), np.arange(-12, 13, dtype=np.float64),
                        [0.0, -0.0, 1.0, -1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, 2.0, -2.0,
                         0.5, 3.0, 10.0]])
    y = np.concatenate([rng.uniform(-20, 20, 4000), rng.uniform(-5, 5, 4000),
                        np.round(rng.uniform(-30, 30, 4000)), np.arange(25.0) - 3,
                        [0.5, -2.0, np.nan, np.inf, -np.inf, 3.0, 2.0, 0.0, 1024.0, -1075.0,
                         3.0, 2.0 ** 60, 19.0, -300.0]])
    n = x.size
    model = _model([h.make_node("Pow", ["x", "y"], ["p"])],
                   [h.make_tensor_value_info("x", T.DOUBLE, [n]),
                    h.make_tensor_value_info("y", T.DOUBLE, [n])],
                   [h.make_tensor_value_info("p", T.DOUBLE, [n])])
    got = _run(kiln, model, {"x": x, "y": y}, tmp_path)["p"]
    with np.errstate(all="ignore"):
        want = np.power(x, y)
        t = np.abs(y * np.log(np.abs(x)))
    integer = (y == np.floor(y)) & (np.abs(y) < 2 ** 53)
    bound = np.where(integer, 2.0 + np.abs(y), 4.0 + 4.0 * np.nan_to_num(t, posinf=0.0))
    err = _ulps(got, want)
    bad = np.flatnonzero(err > bound)
    print(f"pow: integer exponents max {err[integer].max()} ulp, max ulp/|y| "
          f"{np.max(err[integer] / np.maximum(np.abs(y[integer]), 1))}; others max "
          f"{err[~integer].max()} ulp, max ulp/(1+|y log x|) "
          f"{np.nanmax(err[~integer] / (1 + t[~integer]))}")
    assert bad.size == 0, [(x[i], y[i], got[i], want[i], err[i]) for i in bad[:5]]


@pytest.mark.parametrize("types", [(T.INT32, T.INT32), (T.INT32, T.FLOAT), (T.INT64, T.INT64),
                                   (T.INT64, T.FLOAT)], ids=lambda t: "_".join(
                                       T.DataType.Name(v) for v in t))
def test_integer_pow_is_exact(kiln, vulkan, tmp_path, types):
    """Pow of an integer base (computed in double, as onnxruntime does): every integer
    result that fits the type comes out exact (3^19 = 1162261467, not one below it)."""
    bt, et = types
    base = np.array([3, -3, 2, -2, 7, 10, 0, 1, -1, 5, 6, 9], dtype=np.int64)
    expo = np.array([19, 19, 30, 31, 11, 9, 5, 100, 7, 13, 11, 9], dtype=np.int64)
    npb = h.tensor_dtype_to_np_dtype(bt)
    npe = h.tensor_dtype_to_np_dtype(et)
    if bt == T.INT64:
        base = np.concatenate([base, [3, 7, -5]])
        expo = np.concatenate([expo, [33, 18, 21]])
    b, e = base.astype(npb), expo.astype(npe)
    model = _model([h.make_node("Pow", ["b", "e"], ["p"])],
                   [h.make_tensor_value_info("b", bt, [b.size]),
                    h.make_tensor_value_info("e", et, [e.size])],
                   [h.make_tensor_value_info("p", bt, [b.size])])
    got = _run(kiln, model, {"b": b, "e": e}, tmp_path)["p"]
    want = np.array([int(x) ** int(y) for x, y in zip(base, expo)], dtype=object)
    want = np.array([int(v) for v in want], dtype=npb)
    np.testing.assert_array_equal(got, want)
    ort = harness.ort_run(tmp_path / "m.onnx", {"b": b, "e": e})["p"]
    np.testing.assert_array_equal(got, ort)
