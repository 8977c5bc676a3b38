"""Bad input: kiln must exit non-zero (never by a signal), within a time limit, with a
message on stderr that says what is wrong; at run time the message names the input."""

from __future__ import annotations

import numpy as np
import pytest

import harness
import models
from conftest import fail

#===----------------------------------------------------------------------===//
# kiln compile
#===----------------------------------------------------------------------===//


@pytest.mark.parametrize("bad", [pytest.param(b, id=b.name) for b in models.bad_cases()])
def test_compile_rejects(bad: models.BadCase, kiln, tmp_path):
    folder = tmp_path / "m"  # files "outside the model's folder" go to tmp_path
    folder.mkdir()
    model = bad.write(folder)
    out = tmp_path / "out.so"
    result = kiln.compile(model, out, bad.args, timeout=harness.ERROR_TIMEOUT)
    problem = harness.check_clean_failure(result, bad.expect_any, f"kiln compile ({bad.name})")
    if problem:
        fail(problem)


def test_compile_rejects_unknown_cpu(kiln, tmp_path):
    case = next(c for c in models.all_cases() if c.name == "relu")
    model = case.save(tmp_path / "m")
    result = kiln.compile(model, tmp_path / "out.so", ["--cpu", "no-such-cpu"],
                          timeout=harness.ERROR_TIMEOUT)
    problem = harness.check_clean_failure(result, ["no-such-cpu"], "kiln compile --cpu no-such-cpu")
    if problem:
        fail(problem)


#===----------------------------------------------------------------------===//
# kiln run
#===----------------------------------------------------------------------===//


def _add_model(folder):
    """lhs_tensor[2,3] + rhs_tensor[2,3] -> sum_out (float32)."""
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Add", ["lhs_tensor", "rhs_tensor"], ["sum_out"], name="add")], "add",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3])
         for n in ("lhs_tensor", "rhs_tensor")],
        [helper.make_tensor_value_info("sum_out", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = folder / "add.onnx"
    path.write_bytes(model.SerializeToString())
    return path


ADD = harness.register(harness.CompileSpec("runtime-errors-add", _add_model))
F32 = np.arange(6, dtype=np.float32).reshape(2, 3)

RUNNERS = [pytest.param("kiln", id="kiln-run-subcommand"),
           pytest.param("kiln-run", id="kiln-run-binary")]


def _runner(kiln, runner):
    if runner == "kiln-run" and not kiln.has_kiln_run():
        pytest.skip(f"{kiln.bin_dir / 'kiln-run'} is not built")
    return runner


@pytest.mark.compiles(ADD.key)
@pytest.mark.parametrize("runner", RUNNERS)
def test_run_control(runner, kiln, compile_cache, tmp_path):
    """The model the run-time error tests use runs fine on correct inputs."""
    runner = _runner(kiln, runner)
    compiled = compile_cache.get(ADD)
    feeds = {"lhs_tensor": F32, "rhs_tensor": F32 * 2}
    try:
        harness.run_and_compare(kiln, compiled, feeds, tmp_path, runner=runner)
    except AssertionError as e:
        problem = str(e)
    else:
        return
    fail(problem)


# name -> (inputs as {name: array | path string}, what the message must mention).
# (An input left out is not an error: kiln-run feeds it seeded random data.)
RUN_ERRORS = {
    "wrong_dtype_float64": ({"lhs_tensor": F32.astype(np.float64), "rhs_tensor": F32},
                            ["lhs_tensor"]),
    "wrong_dtype_int32": ({"lhs_tensor": F32, "rhs_tensor": F32.astype(np.int32)},
                          ["rhs_tensor"]),
    "wrong_rank": ({"lhs_tensor": F32.reshape(6), "rhs_tensor": F32}, ["lhs_tensor"]),
    "wrong_rank_extra_dim": ({"lhs_tensor": F32, "rhs_tensor": F32.reshape(1, 2, 3)},
                             ["rhs_tensor"]),
    "wrong_shape": ({"lhs_tensor": F32.reshape(3, 2), "rhs_tensor": F32}, ["lhs_tensor"]),
    "unknown_input": ({"lhs_tensor": F32, "rhs_tensor": F32, "bogus_tensor": F32},
                      ["bogus_tensor"]),
    "input_file_missing": ({"lhs_tensor": F32, "rhs_tensor": "MISSING"}, ["no_such_file.npy"]),
    "input_file_not_npy": ({"lhs_tensor": F32, "rhs_tensor": "GARBAGE"},
                           ["garbage.npy", "rhs_tensor"]),
}


@pytest.mark.compiles(ADD.key)
@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("name", list(RUN_ERRORS))
def test_run_rejects(name, runner, kiln, compile_cache, tmp_path):
    runner = _runner(kiln, runner)
    compiled = compile_cache.get(ADD)
    if not compiled.ok:
        fail(compiled.failure())
    values, expect = RUN_ERRORS[name]
    inputs = {}
    for i, (input_name, value) in enumerate(values.items()):
        if isinstance(value, str) and value == "MISSING":
            inputs[input_name] = tmp_path / "no_such_file.npy"
        elif isinstance(value, str) and value == "GARBAGE":
            path = tmp_path / "garbage.npy"
            path.write_bytes(b"not a numpy file at all\n" * 4)
            inputs[input_name] = path
        else:
            path = tmp_path / f"in{i}.npy"
            np.save(path, value)
            inputs[input_name] = path
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    result = kiln.run(compiled.artifact, inputs, out_dir, runner=runner,
                      timeout=harness.ERROR_TIMEOUT)
    problem = harness.check_clean_failure(result, expect, f"{runner} ({name})")
    if problem:
        fail(problem)


@pytest.mark.parametrize("runner", RUNNERS)
def test_run_rejects_non_model(runner, kiln, tmp_path):
    runner = _runner(kiln, runner)
    fake = tmp_path / "not_a_model.so"
    fake.write_bytes(b"\x7fELF garbage, not a shared object" * 8)
    np.save(tmp_path / "x.npy", F32)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    result = kiln.run(fake, {"x": tmp_path / "x.npy"}, out_dir, runner=runner,
                      timeout=harness.ERROR_TIMEOUT)
    problem = harness.check_clean_failure(result, ["not_a_model.so"], f"{runner} (not a model)")
    if problem:
        fail(problem)
