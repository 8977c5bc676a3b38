"""Smoke test of the benchmark harness (bench/bench.py): a tiny model built with the onnx
helper API goes through every stage (compile, start-up, interleaved latency at 1 and 2
threads with the output check, peak RSS, reports), and a model kiln cannot compile becomes a
failure row instead of aborting the run. Needs neither torch nor matplotlib: the chart is
skipped (the harness says so). Nothing here fails because something was slow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import harness

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench.py"
LOOP_TIMES = BENCH.parent / "loop_times.py"


def tiny_model(path: Path) -> None:
    """input_ids [1,8] -> embedding (1000 x 16), times attention_mask, MatMul + Add + Relu."""
    rng = np.random.default_rng(0)
    emb = numpy_helper.from_array(rng.standard_normal((1000, 16)).astype(np.float32), "emb")
    w = numpy_helper.from_array(rng.standard_normal((16, 4)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal((4,)).astype(np.float32), "b")
    axes = numpy_helper.from_array(np.array([2], np.int64), "axes")
    nodes = [
        helper.make_node("Gather", ["emb", "input_ids"], ["e"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["m", "axes"], ["m3"]),
        helper.make_node("Mul", ["e", "m3"], ["em"]),
        helper.make_node("MatMul", ["em", "w"], ["y"]),
        helper.make_node("Add", ["y", "b"], ["yb"]),
        helper.make_node("Relu", ["yb"], ["output"]),
    ]
    graph = helper.make_graph(
        nodes, "bench_smoke",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, 8]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, 8])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 8, 4])],
        [emb, w, b, axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path.write_bytes(model.SerializeToString())


def unsupported_model(path: Path) -> None:
    """One node of an operator kiln does not know: kiln compile must fail."""
    graph = helper.make_graph(
        [helper.make_node("NoSuchOp", ["x"], ["y"], domain="kiln.bench.test")], "bench_fail",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("kiln.bench.test", 1)],
                              ir_version=8)
    path.write_bytes(model.SerializeToString())


def test_bench_harness_smoke(kiln, tmp_path):
    tiny_model(tmp_path / "tiny.onnx")
    unsupported_model(tmp_path / "bad.onnx")
    out = tmp_path / "out"
    env = dict(os.environ, KILN_BENCH_PYTHON=str(tmp_path / "no-bench-python"))
    cmd = [sys.executable, str(BENCH), "--build", str(harness.build_dir()),
           "--model", f"tiny={tmp_path / 'tiny.onnx'}", "--model", f"bad={tmp_path / 'bad.onnx'}",
           "--out", str(out), "--work", str(tmp_path / "work"), "--threads", "1,2",
           "--rounds", "2", "--repeat", "3", "--startup-runs", "2"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       timeout=600 * harness.timeout_scale())
    log = f"command: {' '.join(cmd)}\nstdout:\n{r.stdout[-4000:]}\nstderr:\n{r.stderr[-4000:]}"
    assert r.returncode == 1, f"one model fails, so exit status 1 is expected\n{log}"
    doc = json.loads((out / "results.json").read_text())
    rows = {row["model"]: row for row in doc["results"]}
    assert list(rows) == ["tiny", "bad"], log

    tiny = rows["tiny"]
    assert tiny["ok"], f"{tiny.get('failed_stage')}: {tiny.get('error')}\n{log}"
    assert tiny["compile"]["ok"] and tiny["compile_s"] > 0 and tiny["artifact_mb"] > 0
    assert tiny["startup_ms"]["kiln"] > 0 and tiny["startup_ms"]["ort"] > 0
    s = tiny["startup_ms"]
    assert 0 < s["kiln_open"] < s["kiln"] < s["kiln_process"], s
    for t in ("1", "2"):
        e = tiny["latency"][t]
        assert e["matched"], f"kiln and onnxruntime differ at {t} thread(s): {e}\n{log}"
        assert e["ratio"] is not None and e["ratio"] > 0
        assert e["kiln_ms"] > 0 and e["ort_ms"] > 0 and len(e["round_ratios"]) == 2
    assert tiny["max_abs_err"] <= 1e-3 and tiny["outputs_match"]
    rss = tiny["peak_rss_mb"]
    assert rss["kiln"] > 0 and rss["ort"] > 0 and rss["ort_baseline"] > 0

    bad = rows["bad"]
    assert not bad["ok"] and bad["failed_stage"] == "compile", bad
    assert "NoSuchOp" in bad["error"] or "kiln.bench.test" in bad["error"], bad["error"]

    md = (out / "results.md").read_text()
    assert "| tiny |" in md and "| bad |" in md and "FAILED (compile)" in md, md
    assert doc["chart"].startswith("chart skipped"), doc["chart"]
    assert not (out / "ratios.png").exists()
    # A second run reuses the compile cache.
    r2 = subprocess.run(cmd[:4] + ["--model", f"tiny={tmp_path / 'tiny.onnx'}", "--compile-only",
                                   "--out", str(tmp_path / "out2"), "--work", str(tmp_path / "work")],
                        capture_output=True, text=True, env=env, timeout=120)
    assert r2.returncode == 0, r2.stdout + r2.stderr
    doc2 = json.loads((tmp_path / "out2" / "results.json").read_text())
    assert doc2["results"][0]["compile"]["cached"] is True


def test_bench_dynamic_column(kiln, tmp_path):
    """--dynamic: the tiny model is also compiled with its batch dim symbolic, timed in the
    same rounds at the bench size, its outputs checked against onnxruntime, and reported as
    kiln-dynamic ms and dynamic/static (results.json and a table of its own in results.md);
    a model whose inputs have no static dim 0 gets a note, its static row stays."""
    tiny_model(tmp_path / "tiny.onnx")
    scalar = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "bench_scalar",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    (tmp_path / "scalar.onnx").write_bytes(helper.make_model(
        scalar, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString())
    out = tmp_path / "out"
    env = dict(os.environ, KILN_BENCH_PYTHON=str(tmp_path / "no-bench-python"))
    cmd = [sys.executable, str(BENCH), "--build", str(harness.build_dir()),
           "--model", f"tiny={tmp_path / 'tiny.onnx'}",
           "--model", f"scalar={tmp_path / 'scalar.onnx'}", "--dynamic",
           "--out", str(out), "--work", str(tmp_path / "work"), "--threads", "1",
           "--rounds", "2", "--repeat", "3", "--startup-runs", "1", "--no-chart"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       timeout=600 * harness.timeout_scale())
    log = f"command: {' '.join(cmd)}\nstdout:\n{r.stdout[-4000:]}\nstderr:\n{r.stderr[-4000:]}"
    assert r.returncode == 0, log
    doc = json.loads((out / "results.json").read_text())
    rows = {row["model"]: row for row in doc["results"]}
    tiny = rows["tiny"]
    assert tiny["ok"] and tiny["dynamic_compile"]["ok"] and "dynamic_error" not in tiny, log
    d = tiny["latency"]["1"]["dynamic"]
    assert d["matched"] and d["ms"] > 0 and d["ratio"] > 0 and len(d["round_ratios"]) == 2, d
    # The compiled model really has the symbol.
    so = next((tmp_path / "work" / "cache").glob("tiny_dynamic-*/tiny_dynamic.so"))
    inspect = harness.run_command([kiln.kiln, "inspect", so], 60)
    assert "input input_ids int64 [batch,8]" in inspect.stdout, inspect.describe()
    scalar_row = rows["scalar"]
    assert scalar_row["ok"] and "no input with a static dim 0" in scalar_row["dynamic_error"]
    md = (out / "results.md").read_text()
    assert "| model | compile s static / dynamic | kiln-dynamic 1t ms | dynamic/static 1t |" \
        in md, md
    assert "| tiny |" in md.split("kiln-dynamic:")[1] and "**scalar** dynamic:" in md, md


def test_loop_times(kiln, tmp_path):
    """bench/loop_times.py lists every thread-pool loop of a run (a matmul and a
    softmax here) with its times, and the run's total."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((128, 96)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]),
         helper.make_node("Softmax", ["y"], ["output"], axis=-1)], "loops",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 128])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [256, 96])], [w])
    onnx_path = tmp_path / "loops.onnx"
    onnx_path.write_bytes(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString())
    so = tmp_path / "loops.so"
    subprocess.run([str(harness.build_dir() / "bin" / "kiln"), "compile", str(onnx_path),
                    "-o", str(so)], check=True, timeout=300 * harness.timeout_scale())
    env = dict(os.environ, KILN_BUILD_DIR=str(harness.build_dir()))
    r = subprocess.run([sys.executable, str(LOOP_TIMES), str(so), "2", "3"],
                       capture_output=True, text=True, env=env,
                       timeout=300 * harness.timeout_scale())
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.strip().splitlines()
    head = lines[0].split()
    assert head[0] == "loops:" and head[2:5] == ["loops", "per", "run,"], r.stdout
    loops = int(head[1])
    assert loops >= 2, r.stdout  # the matmul's loop and the softmax rows
    rows = [line.split() for line in lines[2:-1]]
    assert [int(row[0]) for row in rows] == list(range(loops)), r.stdout
    assert all(float(row[2]) > 0 for row in rows), r.stdout
    total = lines[-1].split()
    assert total[0] == "run" and float(total[1]) >= float(total[4]) > 0, r.stdout


def test_op_times(kiln, tmp_path):
    """bench/op_times.py sums a run's profiled kernels by op family (Conv split into
    grouped / depthwise by --onnx), the sequential rest makes up the run, and --ort puts
    onnxruntime's per-node profile of the same model beside it."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((16, 8, 3, 3)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((16, 1, 3, 3)).astype(np.float32), "w2")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1"], ["g"], group=2, pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["g"], ["r"]),
         helper.make_node("Conv", ["r", "w2"], ["output"], group=16, pads=[1, 1, 1, 1])],
        "convs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 64, 64])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 16, 64, 64])], [w1, w2])
    onnx_path = tmp_path / "convs.onnx"
    onnx_path.write_bytes(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString())
    so = tmp_path / "convs.so"
    subprocess.run([str(harness.build_dir() / "bin" / "kiln"), "compile", str(onnx_path),
                    "-o", str(so)], check=True, timeout=300 * harness.timeout_scale())
    env = dict(os.environ, KILN_BUILD_DIR=str(harness.build_dir()))
    out = tmp_path / "ops.json"
    r = subprocess.run([sys.executable, str(BENCH.parent / "op_times.py"), str(so), "--repeat",
                        "3", "--onnx", str(onnx_path), "--ort", "--json", str(out)],
                       capture_output=True, text=True, env=env,
                       timeout=300 * harness.timeout_scale())
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(out.read_text())
    fams = {f["family"]: f for f in res["families"]}
    assert res["runs"] == 3 and res["run_ms"] > 0, r.stdout
    assert "Conv grouped 3x3" in fams and "Conv depthwise 3x3" in fams, r.stdout
    assert "(sequential code)" in fams, r.stdout
    assert abs(sum(f["ms"] for f in res["families"]) - res["run_ms"]) < 1e-6 * res["run_ms"] + 1e-9
    ort_fams = {f["family"] for f in res["ort"]["families"]}
    assert res["ort"]["run_ms"] > 0 and any(f.startswith("Conv") for f in ort_fams), r.stdout
