"""The hostile-model corpus (hostile/generate.py), compiled by `kiln compile` under a 4 GiB
memory cap and a time limit: each must exit 1 with a message naming the node or value,
never by a signal, never by running out of memory or time. The cases ONNX defines
(zero-sized dims) must compile."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

import harness
from conftest import fail

sys.path.insert(0, str(Path(__file__).parent / "hostile"))
import generate  # noqa: E402

MEMORY_CAP = 4 << 30  # bytes of address space
TIME_LIMIT = 60.0  # seconds; each case takes well under one


def _cap_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _run_capped(cmd: list[str], timeout: float) -> harness.Result:
    """harness.run_command with the memory cap set in the child before it starts."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, text=True,
                            errors="replace", preexec_fn=_cap_memory)
    try:
        out, err = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        harness.kill_group(proc)
        out, err = proc.communicate()
        rc = None
    return harness.Result(cmd, rc, out, err, time.monotonic() - start, timeout)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in generate.cases()])
def test_hostile_compile(case: generate.Case, kiln, tmp_path):
    model = tmp_path / f"{case.name}.onnx"
    model.write_bytes(case.data)
    cmd = kiln.compile_cmd(model, tmp_path / "out.so", case.args)
    result = _run_capped(cmd, TIME_LIMIT * harness.timeout_scale())
    what = f"kiln compile ({case.name})"
    if case.ok:
        if result.returncode != 0:
            fail(f"{what}: ONNX defines this model, it must compile\n" + result.describe())
        return
    problem = harness.check_clean_failure(result, (), what)
    if problem:
        fail(problem)
    if result.returncode != 1:
        fail(f"{what}: exit code {result.returncode}, expected 1\n" + result.describe())
    if "out of memory" in result.stderr:
        fail(f"{what}: ran out of memory instead of hitting a limit\n" + result.describe())
    low = result.stderr.lower()
    missing = [e for e in case.expect if e.lower() not in low]
    if missing:
        fail(f"{what}: the message does not mention {missing}\n" + result.describe())


def test_model_names_like_kiln_intermediates(kiln, tmp_path):
    """Graph inputs named like the values kiln once invented (an opset-11 Hardmax's
    Flatten, the old importer's `<output>/kiln.<Op>.<n>` expansion values) are still what
    their readers read: the importer's added values get names no model value has, and
    kiln-decompose's are SSA values with no name at all. Checked against onnxruntime."""
    import numpy as np
    from onnx import helper
    F = generate.F
    vi = generate._vi
    nodes = [helper.make_node("Hardmax", ["x"], ["y"], name="hm", axis=1),
             helper.make_node("Neg", ["y/kiln.flatten"], ["z"], name="neg_flat"),
             helper.make_node("Neg", ["y/kiln.flatten.0"], ["z0"], name="neg_flat0"),
             helper.make_node("LpNormalization", ["x"], ["n"], name="lp", axis=-1),
             helper.make_node("Neg", ["n/kiln.LpNormalization.0"], ["m"], name="neg_lp")]
    data = generate._model(
        nodes,
        [vi("x", F, [2, 3, 4]), vi("y/kiln.flatten", F, [2, 12]),
         vi("y/kiln.flatten.0", F, [2, 12]), vi("n/kiln.LpNormalization.0", F, [2, 3, 4])],
        [vi("y", F, [2, 3, 4]), vi("z", F, [2, 12]), vi("z0", F, [2, 12]),
         vi("n", F, [2, 3, 4]), vi("m", F, [2, 3, 4])], opset=11)
    model = tmp_path / "names.onnx"
    model.write_bytes(data)
    artifact = tmp_path / "names.so"
    result = kiln.compile(model, artifact)
    if result.returncode != 0:
        fail("kiln compile failed\n" + result.describe())
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((2, 3, 4), np.float32),
             "y/kiln.flatten": rng.standard_normal((2, 12), np.float32),
             "y/kiln.flatten.0": rng.standard_normal((2, 12), np.float32),
             "n/kiln.LpNormalization.0": rng.standard_normal((2, 3, 4), np.float32)}
    reference = harness.ort_run(model, feeds)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    run = kiln.run(artifact, harness.save_inputs(feeds, tmp_path / "in"), out_dir)
    if run.returncode != 0:
        fail("kiln run failed\n" + run.describe())
    got = harness.load_outputs(out_dir, list(reference))
    problems = [p for n in reference
                if (p := harness.compare(n, got[n], reference[n])) is not None]
    if problems:
        fail("\n".join(problems))


def test_conv_without_input_channels_sums_nothing(kiln, tmp_path):
    """A Conv over no input channels is the sum of no products: zeros (onnxruntime
    refuses this model, so the reference is written out)."""
    import numpy as np
    case = next(c for c in generate.cases() if c.name == "conv_zero_in_channels")
    model = tmp_path / "conv.onnx"
    model.write_bytes(case.data)
    artifact = tmp_path / "conv.so"
    result = kiln.compile(model, artifact)
    if result.returncode != 0:
        fail("kiln compile failed\n" + result.describe())
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    feeds = {"x": np.zeros((1, 0, 4, 4), np.float32)}
    run = kiln.run(artifact, harness.save_inputs(feeds, tmp_path / "in"), out_dir)
    if run.returncode != 0:
        fail("kiln run failed\n" + run.describe())
    got = harness.load_outputs(out_dir, ["y"])["y"]
    problem = harness.compare("y", got, np.zeros((1, 2, 2, 2), np.float32))
    if problem:
        fail(problem)


@pytest.mark.parametrize("args,expect", [
    (["--max-tensor-bytes=0"], "needs an integer in [1, 2^62], got '0'"),
    (["--max-unrolled-steps", "many"], "needs an integer in [1, 2^62], got 'many'"),
    (["--max-table-elements"], "'--max-table-elements' needs a value"),
])
def test_limit_flags_reject_bad_values(kiln, tmp_path, args, expect):
    case = next(c for c in generate.cases() if c.name == "conv_zero_in_channels")
    model = tmp_path / "m.onnx"
    model.write_bytes(case.data)
    result = kiln.compile(model, tmp_path / "m.so", args)
    problem = harness.check_clean_failure(result, [expect], "kiln compile " + " ".join(args))
    if problem:
        fail(problem)
