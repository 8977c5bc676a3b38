"""Compile-time machinery: `kiln compile --time-report`, weights placed in the object without
passing through LLVM IR (every --emit kind, host and aarch64), and the chain-scaling bench."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import harness
from conftest import fail

ROOT = Path(__file__).resolve().parents[2]
PHASES = ("import", "graph passes", "ONNX -> linalg", "target passes", "weights",
          "LLVM IR translation", "LLVM optimization", "instruction selection",
          "link / package", "total")


def weighted_model(path: Path) -> np.ndarray:
    """y = x + W with W a 64 KB random initializer (far above the 4 KB threshold), whose
    bytes stay as they are (no packing): they must appear verbatim in every artifact."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((1, 16384)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")], "weighted",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16384])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16384])],
        [numpy_helper.from_array(w, "w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return w


def external_weight_symbols(path: Path) -> list[str]:
    """The object-local symbols kiln gives constants it kept out of LLVM IR."""
    nm = "/usr/lib/llvm-22/bin/llvm-nm"
    out = subprocess.run([nm, "--format=just-symbols", str(path)], capture_output=True,
                         text=True, check=True).stdout.split()
    return [s for s in out if "_kw" in s]


def compile_ok(kiln: harness.Kiln, model: Path, out: Path, *args: str) -> harness.Result:
    result = kiln.compile(model, out, args)
    if result.returncode != 0 or not out.is_file():
        fail(f"kiln compile {' '.join(args)} failed\n" + result.describe())
    return result


def test_time_report(kiln, tmp_path):
    model = tmp_path / "weighted.onnx"
    weighted_model(model)
    result = compile_ok(kiln, model, tmp_path / "weighted.so", "--time-report")
    assert result.stdout.strip() == "", f"the report goes to stderr, not stdout:\n{result.stdout}"
    report = result.stderr
    missing = [p for p in PHASES if p not in report]
    assert not missing, f"phases {missing} missing from the report:\n{report}"
    # Every phase line: wall s, %, cpu s, peak MB, name; the peak is a real figure.
    lines = [line for line in report.splitlines() if line.strip().endswith("total")]
    assert lines, report
    fields = lines[0].split()
    assert float(fields[0]) > 0 and float(fields[3]) > 10, lines[0]
    assert "MLIR passes by name" in report and "KilnFuseElementwisePass" in report, report
    # Without the flag, nothing is printed.
    quiet = compile_ok(kiln, model, tmp_path / "quiet.so")
    assert "time report" not in quiet.stderr, quiet.stderr


@pytest.mark.parametrize("emit", ["so", "obj", "static-lib"])
def test_weights_in_every_artifact(emit, kiln, tmp_path):
    model = tmp_path / "weighted.onnx"
    w = weighted_model(model)
    out = tmp_path / {"so": "weighted.so", "obj": "weighted.o", "static-lib": "libweighted.a"}[emit]
    compile_ok(kiln, model, out, "--emit", emit)
    data = out.read_bytes()
    assert w.tobytes() in data, f"--emit {emit}: the initializer's bytes are not in {out.name}"
    prefix = "libweighted" if emit == "static-lib" else "weighted"
    assert f"{prefix}_main_kw0" in external_weight_symbols(out), \
        f"--emit {emit}: the initializer went through LLVM IR (no {prefix}_main_kw0 symbol)"
    if emit == "so":
        x = np.random.default_rng(1).standard_normal((1, 16384)).astype(np.float32)
        np.save(tmp_path / "x.npy", x)
        run = kiln.run(out, {"x": tmp_path / "x.npy"}, tmp_path / "out")
        if run.returncode != 0:
            fail("kiln run failed\n" + run.describe())
        got = np.load(tmp_path / "out" / "y.npy")
        np.testing.assert_array_equal(got, x + w)


def test_weights_for_aarch64_object(kiln, tmp_path):
    model = tmp_path / "weighted.onnx"
    w = weighted_model(model)
    out = tmp_path / "weighted.o"
    compile_ok(kiln, model, out, "--emit", "obj", "--target", "aarch64-linux-gnu")
    assert w.tobytes() in out.read_bytes(), "the initializer's bytes are not in the object"
    assert "weighted_main_kw0" in external_weight_symbols(out), external_weight_symbols(out)


def test_compile_scaling_script(kiln, tmp_path):
    """The bench script runs and reports one line per size (small sizes: a smoke test)."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "compile_scaling.py"), "--sizes", "20,40",
         "--kiln", str(kiln.kiln), "--out", str(tmp_path / "scaling.json")],
        capture_output=True, text=True, timeout=300 * harness.timeout_scale())
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split() for line in result.stdout.splitlines()[1:] if line.strip()]
    assert [r[0] for r in rows] == ["20", "40"], result.stdout
    assert (tmp_path / "scaling.json").is_file()


def matmul_chain(path: Path, pairs: int = 12, d: int = 32) -> None:
    """x -> (MatMul by a 32x32 constant, Tanh) x pairs: many functions and constants, so a
    module split gives several non-empty parts."""
    rng = np.random.default_rng(3)
    nodes, inits, prev = [], [], "x"
    for i in range(pairs):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal((d, d)) * 0.2).astype(np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"], name=f"mm{i}"))
        out = "y" if i == pairs - 1 else f"t{i}"
        nodes.append(helper.make_node("Tanh", [f"m{i}"], [out], name=f"tanh{i}"))
        prev = out
    graph = helper.make_graph(
        nodes, "mm_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, d])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def defined_globals(path: Path) -> set[str]:
    nm = "/usr/lib/llvm-22/bin/llvm-nm"
    return set(subprocess.run([nm, "--extern-only", "--defined-only", "--format=just-symbols",
                               str(path)], capture_output=True, text=True,
                              check=True).stdout.split())


def test_parallel_codegen_same_results(kiln, tmp_path, monkeypatch):
    """KILN_CODEGEN_THREADS=3 (split after O3, parts on threads, ld.lld -r): the same
    outputs bit for bit, and an object exporting exactly what the one-thread object does."""
    model = tmp_path / "mm.onnx"
    matmul_chain(model)
    x = np.random.default_rng(5).standard_normal((64, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    outputs, exported = {}, {}
    for threads in ("1", "3"):
        monkeypatch.setenv("KILN_CODEGEN_THREADS", threads)
        so = tmp_path / f"mm{threads}" / "mm.so"
        so.parent.mkdir()
        report = compile_ok(kiln, model, so, "--time-report").stderr
        if threads == "3":
            assert "(3 threads, ld.lld -r)" in report, report
        run = kiln.run(so, {"x": tmp_path / "x.npy"}, so.parent / "out")
        if run.returncode != 0:
            fail("kiln run failed\n" + run.describe())
        outputs[threads] = np.load(so.parent / "out" / "y.npy")
        obj = so.parent / "mm.o"
        compile_ok(kiln, model, obj, "--emit", "obj")
        exported[threads] = defined_globals(obj)
    np.testing.assert_array_equal(outputs["3"], outputs["1"])
    assert exported["3"] == exported["1"] == {"mm_main", "mm_main_ctx", "mm_descriptor"}, exported


def _ort_outputs(model_path: Path, feeds: dict) -> list:
    import onnxruntime as ort
    model = onnx.load(model_path)
    model.ir_version = min(model.ir_version, 8)  # what this onnxruntime reads
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.mark.parametrize("kind,size", [("matmul_tanh", 120), ("transformer", 102)])
def test_many_small_kernels_match_onnxruntime(kind, size, kiln, tmp_path):
    """Graphs of many kernels too small for the thread pool (60 MatMul + Tanh pairs; three
    encoder layers): the entry is cut into noinline `_serial_` functions
    (kiln-outline-serial-code) and one-shot bufferization runs on one tensor.empty per use
    (kiln-unshare-empty-tensors); the outputs still match onnxruntime."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import compile_scaling
    finally:
        sys.path.pop(0)
    model = tmp_path / f"{kind}.onnx"
    rows, width = (64, 32) if kind == "matmul_tanh" else (16, 64)
    onnx.save(compile_scaling.build_model(kind, size, rows, width), model)
    ll = tmp_path / f"{kind}.ll"
    compile_ok(kiln, model, ll, "--emit", "llvm")
    lines = ll.read_text().splitlines()
    serial = [line for line in lines if line.startswith("define") and "_serial_" in line]
    noinline = {line.split()[1] for line in lines
                if line.startswith("attributes #") and " noinline " in line}
    if kind == "matmul_tanh":
        assert len(serial) >= 2, "the entry was not cut into _serial_ functions"
        # `define ... @f(...) unnamed_addr #N {`: LLVM must not inline them back.
        assert all(line.split()[-2] in noinline for line in serial), (serial, noinline)
    so = tmp_path / f"{kind}.so"
    compile_ok(kiln, model, so)
    shape = [1, rows, width] if kind == "transformer" else [rows, width]
    x = np.random.default_rng(11).standard_normal(shape).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    run = kiln.run(so, {"x": tmp_path / "x.npy"}, tmp_path / "out")
    if run.returncode != 0:
        fail("kiln run failed\n" + run.describe())
    got = np.load(tmp_path / "out" / "y.npy")
    np.testing.assert_allclose(got, _ort_outputs(model, {"x": x})[0], rtol=1e-3, atol=1e-4)


def concat_pad_model(path: Path) -> None:
    """Concat along the last axis (rows of 32 and 48 floats in a row of 80) and a Pad of
    the two inner axes (interior rows of 80 floats, borders of strided rows)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 10, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 10, 48])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [6, 12, 96])
    pads = numpy_helper.from_array(np.array([0, 1, 8, 0, 1, 8], np.int64), "pads")
    value = numpy_helper.from_array(np.array(0.5, np.float32), "value")
    graph = helper.make_graph(
        [helper.make_node("Concat", ["x", "y"], ["c"], axis=2, name="concat"),
         helper.make_node("Pad", ["c", "pads", "value"], ["z"], name="pad")],
        "concat_pad", [x, y], [z], [pads, value])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_strided_copies_are_row_memcpys(kiln, tmp_path):
    """A Concat's slices and a Pad's interior and borders are written a row at a time
    (kiln-lower-strided-copies: a memcpy / memset per contiguous row, in loops LLVM is told
    not to unroll), not as element loop nests; the outputs still match onnxruntime."""
    model = tmp_path / "concat_pad.onnx"
    concat_pad_model(model)
    ll = tmp_path / "concat_pad.ll"
    compile_ok(kiln, model, ll, "--emit", "llvm")
    text = ll.read_text()
    assert "llvm.loop.unroll.disable" in text, "the row loops lost their no-unroll annotation"
    assert "memrefCopy" not in text
    so = tmp_path / "concat_pad.so"
    compile_ok(kiln, model, so)
    rng = np.random.default_rng(3)
    feeds = {"x": rng.standard_normal((6, 10, 32)).astype(np.float32),
             "y": rng.standard_normal((6, 10, 48)).astype(np.float32)}
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
    run = kiln.run(so, {n: tmp_path / f"{n}.npy" for n in feeds}, tmp_path / "out")
    if run.returncode != 0:
        fail("kiln run failed\n" + run.describe())
    got = np.load(tmp_path / "out" / "z.npy")
    np.testing.assert_array_equal(got, _ort_outputs(model, feeds)[0])
