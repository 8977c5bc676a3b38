"""`kiln compile --quantize int8`: kiln calibrates an f32 model (running it, compiled by kiln,
on the calibration inputs), rewrites it in onnxruntime's QDQ form and compiles that onto its
integer kernels (docs/precision.md).

- The QDQ model (`--emit onnx`) is a valid ONNX model: Conv/MatMul/Gemm weights s8 per output
  channel behind DequantizeLinear, u8 activations, the model-output op kept in float; kiln's
  int8 artifact reads packed i8 weights (the integer kernels ran) and matches onnxruntime
  running the same QDQ model within a few quantization steps of the output.
- Calibration sets from a folder (one sub-folder per set, or one .npy per set) give the same
  model; `--keep-float` keeps a node in float; bad input is a clean error.
- On a seeded CNN classifier whose answer varies with its input: the top-1 agreement with
  the f32 model over 200 seeded inputs is at least what onnxruntime's quantize_static gives
  with the same calibration set.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import harness
import models
from conftest import fail

ort = pytest.importorskip("onnxruntime")

SMALL_CNN = next(c for c in models.all_cases() if c.name == "small_cnn")


def _ort(model) -> "ort.InferenceSession":
    return ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])


def _quantize(kiln, model: Path, out: Path, *args: str) -> harness.Result:
    return kiln.compile(model, out, ("--quantize", "int8", *args))


@pytest.fixture(scope="module")
def small_cnn(tmp_path_factory):
    """small_cnn quantized with 8 random calibration sets: (f32 model, QDQ model, int8
    artifact)."""
    kiln = harness.Kiln()
    folder = tmp_path_factory.mktemp("small_cnn")
    model = SMALL_CNN.save(folder)
    qdq, lib = folder / "q.onnx", folder / "q.so"
    for out, extra in ((qdq, ("--emit", "onnx")), (lib, ())):
        r = _quantize(kiln, model, out, "--calibration-random", "8", *extra)
        if r.returncode != 0:
            fail("kiln compile --quantize int8\n" + r.describe())
    return model, qdq, lib


def test_qdq_model_form(small_cnn):
    _, qdq, _ = small_cnn
    m = onnx.load(qdq)
    onnx.checker.check_model(m, full_check=True)
    inits = {t.name: t for t in m.graph.initializer}
    nodes = {n.name: n for n in m.graph.node}
    producer = {o: n for n in m.graph.node for o in n.output}
    # quantized: DQ(s8 weights per channel); Conv_5 is depthwise (the 8-bit depthwise
    # kernel)
    for name in ("Conv_1", "Conv_5", "Conv_7"):
        dq = producer[nodes[name].input[1]]
        assert dq.op_type == "DequantizeLinear", dq
        assert inits[dq.input[0]].data_type == TensorProto.INT8
        scales = numpy_helper.to_array(inits[dq.input[1]])
        assert scales.ndim == 1 and scales.size == inits[dq.input[0]].dims[0] and (scales > 0).all()
        assert [a.i for a in dq.attribute if a.name == "axis"] == [0]
        x = producer[nodes[name].input[0]]  # the activation: u8 Q/DQ
        assert x.op_type == "DequantizeLinear" and inits[x.input[2]].data_type == TensorProto.UINT8
        assert len(nodes[name].input) < 3 or producer[nodes[name].input[2]].op_type == \
            "DequantizeLinear"  # int32 bias
    # The Gemm whose output is the model's stays float.
    assert nodes["Gemm_11"].input[1] in inits


def test_int8_artifact_matches_onnxruntime(small_cnn, tmp_path):
    model, qdq, lib = small_cnn
    kiln = harness.Kiln()
    r = harness.run_command([str(kiln.kiln), "inspect", str(lib), "--sizes"], harness.RUN_TIMEOUT)
    assert r.returncode == 0 and "xi8_packed" in r.stdout, r.describe()  # integer kernels
    rng = np.random.default_rng(7)
    f32, q = _ort(model), _ort(qdq)
    worst = 0.0
    for i in range(8):
        x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
        inputs = harness.save_inputs({"x": x}, tmp_path / f"in{i}")
        r = kiln.run(lib, inputs, tmp_path / f"out{i}")
        assert r.returncode == 0, r.describe()
        (y,) = harness.load_outputs(tmp_path / f"out{i}", ["gemm11"]).values()
        expect = q.run(None, {"x": x})[0]
        scale = np.abs(f32.run(None, {"x": x})[0]).max()
        worst = max(worst, float(np.abs(y - expect).max() / scale))
    # The two engines round the requantized activations independently (one step of an
    # 8-bit scale each); a few steps of the output's range is what that amounts to.
    assert worst < 0.03, worst


def test_calibration_folder_forms(kiln, tmp_path):
    """One sub-folder per set and one .npy per set (one-input model) give the same model,
    and differ from another calibration set's."""
    model = SMALL_CNN.save(tmp_path)
    rng = np.random.default_rng(3)
    sets = [rng.standard_normal((1, 3, 16, 16)).astype(np.float32) for _ in range(3)]
    folders, flat = tmp_path / "folders", tmp_path / "flat"
    for i, x in enumerate(sets):
        (folders / f"set{i}").mkdir(parents=True)
        np.save(folders / f"set{i}" / "x.npy", x)
        flat.mkdir(exist_ok=True)
        np.save(flat / f"{i}.npy", x)
    outs = []
    for name, folder in (("a", folders), ("b", flat)):
        out = tmp_path / f"{name}.onnx"
        r = _quantize(kiln, model, out, "--calibration", str(folder), "--emit", "onnx")
        assert r.returncode == 0, r.describe()
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    shutil.rmtree(flat)
    flat.mkdir()
    np.save(flat / "0.npy", 10 * sets[0])
    r = _quantize(kiln, model, tmp_path / "c.onnx", "--calibration", str(flat), "--emit", "onnx")
    assert r.returncode == 0, r.describe()
    assert (tmp_path / "c.onnx").read_bytes() != outs[0]


def test_keep_float(kiln, tmp_path):
    model = SMALL_CNN.save(tmp_path)
    out = tmp_path / "k.onnx"
    r = _quantize(kiln, model, out, "--calibration-random", "2", "--keep-float", "Conv_7",
                  "--emit", "onnx")
    assert r.returncode == 0, r.describe()
    m = onnx.load(out)
    conv7 = next(n for n in m.graph.node if n.name == "Conv_7")
    assert conv7.input[1] in {t.name for t in m.graph.initializer}
    conv1 = next(n for n in m.graph.node if n.name == "Conv_1")
    assert conv1.input[1] not in {t.name for t in m.graph.initializer}


def test_bias_through_identity(kiln, tmp_path):
    """A Conv whose bias reaches it through an Identity (as some exporters write it) is
    quantized with an int32 bias, so kiln-fold-qdq folds it (a float bias kept the conv in
    float); its int8 artifact agrees with onnxruntime running the QDQ model."""
    rng = np.random.default_rng(3)
    init = lambda name, shape: numpy_helper.from_array(  # noqa: E731
        rng.uniform(-0.5, 0.5, shape).astype(np.float32), name)
    nodes = [helper.make_node("Identity", ["b1"], ["b1_id"], name="Identity_0"),
             helper.make_node("Conv", ["x", "w1", "b1_id"], ["c1"], name="Conv_1", pads=[1] * 4),
             helper.make_node("Relu", ["c1"], ["r1"], name="Relu_2"),
             helper.make_node("Conv", ["r1", "w2"], ["y"], name="Conv_3")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [1, 3, 8, 8])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [init("w1", [8, 3, 3, 3]), init("b1", [8]), init("w2", [4, 8, 1, 1])])
    model = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=9), model)
    qdq, lib = tmp_path / "q.onnx", tmp_path / "q.so"
    for out, extra in ((qdq, ("--emit", "onnx")), (lib, ())):
        r = _quantize(kiln, model, out, "--calibration-random", "4", *extra)
        assert r.returncode == 0, r.describe()
    m = onnx.load(qdq)
    producer = {o: n for n in m.graph.node for o in n.output}
    conv1 = next(n for n in m.graph.node if n.name == "Conv_1")
    dq = producer[conv1.input[2]]
    assert dq.op_type == "DequantizeLinear", dq
    assert {t.name: t for t in m.graph.initializer}[dq.input[0]].data_type == TensorProto.INT32
    # Conv_3 is the model's output: float. Conv_1 runs on integers, requantized.
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    inputs = harness.save_inputs({"x": x}, tmp_path / "in")
    r = kiln.run(lib, inputs, tmp_path / "out")
    assert r.returncode == 0, r.describe()
    (y,) = harness.load_outputs(tmp_path / "out", ["y"]).values()
    expect = _ort(qdq).run(None, {"x": x})[0]
    assert np.abs(y - expect).max() <= 0.03 * np.abs(expect).max()


def _relu_model(path: Path, opset: int = 17) -> Path:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def test_errors(kiln, tmp_path):
    model = SMALL_CNN.save(tmp_path)
    out = tmp_path / "e.so"
    cases = [
        (("--quantize", "int8"), "needs --calibration DIR or --calibration-random N"),
        (("--quantize", "int4", "--calibration-random", "1"), "--quantize int4 is not supported"),
        (("--calibration-random", "2"), "go with --quantize int8"),
        (("--quantize", "int8", "--calibration", str(tmp_path / "none")), "is not a folder"),
        (("--quantize", "int8", "--calibration-random", "1", "--keep-float", "nope"),
         "--keep-float names node 'nope', which the model does not have"),
    ]
    empty = tmp_path / "empty-set"
    (empty / "s0").mkdir(parents=True)
    cases.append((("--quantize", "int8", "--calibration", str(empty)),
                  "has no 'x.npy' for the model's input 'x'"))
    for args, message in cases:
        r = kiln.compile(model, out, args)
        problem = harness.check_clean_failure(r, [message], " ".join(args))
        if problem:
            fail(problem)
        assert not out.exists()
    r = kiln.compile(_relu_model(tmp_path / "relu.onnx"), out,
                     ("--quantize", "int8", "--calibration-random", "1"))
    problem = harness.check_clean_failure(r, ["has no Conv, MatMul or Gemm"], "nothing to quantize")
    if problem:
        fail(problem)
    r = kiln.compile(_relu_model(tmp_path / "relu11.onnx", 11), out,
                     ("--quantize", "int8", "--calibration-random", "1"))
    problem = harness.check_clean_failure(r, ["needs a model of opset 13 or newer"], "opset 11")
    if problem:
        fail(problem)


def _sample(rng) -> np.ndarray:
    """An input of _classifier: noise of a random contrast and per-channel brightness."""
    return (rng.standard_normal((1, 3, 32, 32)) * rng.uniform(0.5, 2.0)
            + 1.5 * rng.standard_normal((1, 3, 1, 1))).astype(np.float32)


def _classifier(path: Path) -> Path:
    """A small CNN classifier with seeded He-initialized weights (conv 3->16, conv 16->32
    stride 2, conv 32->32 with a residual add, global average pool, Gemm 32->10) whose
    classifier bias centers its features (their mean over 64 inputs), so that its top-1
    class varies with the input: the random-weight reference models answer one class for
    every input, which would make agreement vacuous."""
    rng = np.random.default_rng(11)

    def he(*shape):
        fan_in = int(np.prod(shape[1:]))
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    weights = {"w1": he(16, 3, 3, 3), "b1": (0.1 * rng.standard_normal(16)).astype(np.float32),
               "w2": he(32, 16, 3, 3), "b2": (0.1 * rng.standard_normal(32)).astype(np.float32),
               "w3": he(32, 32, 3, 3), "b3": (0.1 * rng.standard_normal(32)).astype(np.float32),
               "wf": he(10, 32), "bf": np.zeros(10, np.float32)}
    conv = lambda i, w, b, o, stride: helper.make_node(  # noqa: E731
        "Conv", [i, w, b], [o], name=o, pads=[1, 1, 1, 1], strides=[stride, stride])
    nodes = [conv("x", "w1", "b1", "c1", 1), helper.make_node("Relu", ["c1"], ["r1"], name="r1"),
             conv("r1", "w2", "b2", "c2", 2), helper.make_node("Relu", ["c2"], ["r2"], name="r2"),
             conv("r2", "w3", "b3", "c3", 1), helper.make_node("Relu", ["c3"], ["r3"], name="r3"),
             helper.make_node("Add", ["r2", "r3"], ["s"], name="add"),
             helper.make_node("GlobalAveragePool", ["s"], ["p"], name="gap"),
             helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1)]

    def save(outputs):
        graph = helper.make_graph(
            nodes, "classifier", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                [1, 3, 32, 32])],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
            [numpy_helper.from_array(a, n) for n, a in weights.items()])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                    ir_version=10), path)

    save(["y", "f"])
    features = _ort(path)
    mean = np.mean([features.run(["f"], {"x": _sample(rng)})[0][0] for _ in range(64)], axis=0)
    weights["bf"] = (-weights["wf"] @ mean).astype(np.float32)
    save(["y"])
    return path


def test_agreement_with_f32(kiln, tmp_path):
    """Top-1 agreement with the f32 model on 200 seeded inputs: kiln's int8 (calibrated on
    16 seeded inputs) at least onnxruntime's quantize_static (QDQ, per channel, u8/s8,
    MinMax) with the same 16."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    model = _classifier(tmp_path / "classifier.onnx")
    f32 = _ort(model)
    rng = np.random.default_rng(2024)
    calib = [_sample(rng) for _ in range(16)]
    folder = tmp_path / "calib"
    folder.mkdir()
    for i, x in enumerate(calib):
        np.save(folder / f"{i:02d}.npy", x)
    lib = tmp_path / "c8.so"
    r = _quantize(kiln, model, lib, "--calibration", str(folder))
    assert r.returncode == 0, r.describe()

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.items = iter([{"x": x} for x in calib])

        def get_next(self):
            return next(self.items, None)

    ort_q = tmp_path / "ort8.onnx"
    quantize_static(str(model), str(ort_q), Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    ort8 = _ort(ort_q)
    n = 200
    xs = np.concatenate([_sample(rng) for _ in range(n)])
    tops, agree_kiln, agree_ort = set(), 0, 0
    for i in range(n):
        x = xs[i:i + 1]
        inputs = harness.save_inputs({"x": x}, tmp_path / "in")
        r = kiln.run(lib, inputs, tmp_path / "out")
        assert r.returncode == 0, r.describe()
        (y,) = harness.load_outputs(tmp_path / "out", ["y"]).values()
        top = f32.run(None, {"x": x})[0].argmax()
        tops.add(int(top))
        agree_kiln += y.argmax() == top
        agree_ort += ort8.run(None, {"x": x})[0].argmax() == top
    print(f"top-1 agreement over {n} inputs ({len(tops)} classes): kiln int8 "
          f"{agree_kiln / n:.3f}, onnxruntime quantize_static {agree_ort / n:.3f}")
    assert len(tops) >= 5, tops  # not vacuous
    assert agree_kiln >= agree_ort, (agree_kiln, agree_ort)
