"""TopK (K a constant), compiled by kiln and compared with onnxruntime: largest and
smallest, every axis position, ties (the lower index first), K = 1 and K = the whole axis,
float, int64, uint8 and float16 data; a K that is a model input runs on the cpu (run dims,
test_run_dims.py) and is refused for --device vulkan naming the node and the input
(kiln compile --specialize fixes it). Every case runs on the cpu and, compiled with
`--device vulkan`, on the runtime's Vulkan back end (lavapipe, found as test_vulkan.py does:
skipped on a developer's machine without Vulkan, failed in CI); its SPIR-V passes spirv-val.
The Vulkan kernel is one serial loop nest that reads back what it stored, with loops that run
zero times for an empty row prefix (kiln-spirv-guard-zero-trip-loops)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import harness
from conftest import fail
from test_vulkan import _spirv_val, vulkan  # noqa: F401 (the fixture; sets VK_ICD_FILENAMES)

NP_TO_ONNX = {np.float32: T.FLOAT, np.float16: T.FLOAT16, np.int64: T.INT64,
              np.uint8: T.UINT8, np.int32: T.INT32}


def _model(shape, k, dtype, **attrs):
    elem = NP_TO_ONNX[dtype]
    axis = attrs.get("axis", -1) % len(shape)
    out = list(shape)
    out[axis] = k
    g = h.make_graph(
        [h.make_node("TopK", ["x", "k"], ["values", "indices"], name="topk", **attrs)],
        "topk", [h.make_tensor_value_info("x", elem, list(shape))],
        [h.make_tensor_value_info("values", elem, out),
         h.make_tensor_value_info("indices", T.INT64, out)],
        [numpy_helper.from_array(np.array([k], np.int64), "k")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9)


def _data(shape, dtype, seed, ties):
    rng = np.random.default_rng(seed)
    if ties:  # few distinct values: many ties to break by index
        return rng.integers(0, 4, shape).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, dtype=dtype)
    return rng.standard_normal(shape).astype(dtype)


CASES = [
    # shape, k, dtype, attrs, ties
    ((3, 10), 4, np.float32, {}, False),
    ((3, 10), 4, np.float32, {"largest": 0}, False),
    ((5, 7, 6), 3, np.float32, {"axis": 1}, False),
    ((5, 7, 6), 5, np.float32, {"axis": 0, "largest": 0}, False),
    ((2, 9), 9, np.float32, {}, False),          # K = the whole axis: a sort
    ((4, 16), 1, np.float32, {}, False),
    ((4, 12), 5, np.float32, {}, True),          # ties: lower index first
    ((4, 12), 5, np.float32, {"largest": 0}, True),
    ((3, 20), 6, np.int64, {}, False),
    ((3, 20), 6, np.int64, {"largest": 0}, True),
    ((2, 3, 17), 4, np.uint8, {"axis": -1}, False),
    ((6, 11), 3, np.float16, {"axis": 1}, False),
    ((1, 1000), 10, np.float32, {}, False),      # a classifier's top 10
]


@pytest.mark.parametrize("device", ["cpu", "vulkan"])
@pytest.mark.parametrize("shape,k,dtype,attrs,ties", CASES,
                         ids=[f"{'x'.join(map(str, c[0]))}-k{c[1]}-{c[2].__name__}-"
                              f"{'-'.join(f'{a}{v}' for a, v in c[3].items()) or 'default'}"
                              f"{'-ties' if c[4] else ''}" for c in CASES])
def test_topk_matches_onnxruntime(kiln, request, tmp_path, shape, k, dtype, attrs, ties,
                                  device):
    args = []
    if device == "vulkan":
        request.getfixturevalue("vulkan")
        args = ["--device", "vulkan", "--keep-intermediates"]
    model = _model(shape, k, dtype, **attrs)
    path = tmp_path / "topk.onnx"
    path.write_bytes(model.SerializeToString())
    artifact = tmp_path / "topk.so"
    result = kiln.compile(path, artifact, args)
    if result.returncode != 0:
        fail("kiln compile failed\n" + result.describe())
    if device == "vulkan":
        problems = _spirv_val(artifact)
        assert not problems, "\n".join(problems)
    feeds = {"x": _data(shape, dtype, len(shape) * 7 + k, ties)}
    inputs = harness.save_inputs(feeds, tmp_path / "in")
    result = kiln.run(artifact, inputs, tmp_path / "out")
    if result.returncode != 0:
        fail("kiln run failed\n" + result.describe())
    want = harness.ort_run(path, feeds)
    got = harness.load_outputs(tmp_path / "out", list(want))
    problems = [p for name in want
                if (p := harness.compare(name, got[name], want[name], 0, 0)) is not None]
    assert not problems, "\n".join(problems)


def test_k_from_a_model_input_is_refused_on_vulkan_naming_the_node(kiln, tmp_path):
    g = h.make_graph(
        [h.make_node("TopK", ["x", "k"], ["values", "indices"], name="pick")],
        "topk", [h.make_tensor_value_info("x", T.FLOAT, [2, 8]),
                 h.make_tensor_value_info("k", T.INT64, [1])],
        [h.make_tensor_value_info("values", T.FLOAT, None),
         h.make_tensor_value_info("indices", T.INT64, None)])
    path = tmp_path / "topk_input_k.onnx"
    path.write_bytes(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString())
    # The cpu compiles it (K read at run time: run dims, docs/dynamic-shapes.md).
    result = kiln.compile(path, tmp_path / "m.so")
    assert result.returncode == 0, result.describe()
    result = kiln.compile(path, tmp_path / "mv.so", ("--device", "vulkan"))
    assert result.returncode == 1, result.describe()
    assert "node 'pick' (TopK" in result.stderr and \
        "non-constant input 'K'" in result.stderr, result.stderr
