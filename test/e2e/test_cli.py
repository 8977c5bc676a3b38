"""Command-line options of `kiln compile` and `kiln run`: --cpu levels, --threads, --repeat,
and the runtime-only runner kiln-run."""

from __future__ import annotations

import pytest

import harness
import models
from conftest import fail

CASES = {c.name: c for c in models.all_cases()}


def _spec(case_name: str, extra_args=()) -> harness.CompileSpec:
    case = CASES[case_name]
    suffix = "-".join(a.strip("-") for a in extra_args) or "default"
    return harness.register(harness.CompileSpec(f"cli-{case_name}-{suffix}", case.save,
                                                case.compile_args + tuple(extra_args)))


def _check(cache: harness.CompileCache, spec, case, tmp_path, run_args=(), runner=None):
    compiled = cache.get(spec)
    try:
        harness.run_and_compare(cache.kiln, compiled, case.inputs, tmp_path, args=run_args,
                                runner=runner)
        return
    except AssertionError as e:
        problem = f"{case.name} ({' '.join(spec.args)}): {e}"
    fail(problem)


CPU_SPECS = {cpu: _spec("small_cnn", ("--cpu", cpu)) for cpu in ("native", "x86-64-v3", "x86-64-v4")}


@pytest.mark.parametrize("cpu", [
    pytest.param("native", marks=pytest.mark.compiles(CPU_SPECS["native"].key)),
    pytest.param("x86-64-v3", marks=pytest.mark.compiles(CPU_SPECS["x86-64-v3"].key)),
    pytest.param("x86-64-v4", marks=pytest.mark.compiles(CPU_SPECS["x86-64-v4"].key)),
])
def test_cpu_level(cpu, compile_cache, tmp_path):
    runnable = {"x86-64-v4": harness.host_has_avx512,
                "x86-64-v3": harness.host_has_avx2}.get(cpu, lambda: True)
    if not runnable():
        # It must still compile here; it just cannot run on this CPU.
        compiled = compile_cache.get(CPU_SPECS[cpu])
        if not compiled.ok:
            fail(compiled.failure())
        pytest.skip(f"compiled; this CPU lacks the features of {cpu}, so it cannot run here")
    _check(compile_cache, CPU_SPECS[cpu], CASES["small_cnn"], tmp_path)


ATTN = _spec("small_attention")


@pytest.mark.compiles(ATTN.key)
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_threads(threads, compile_cache, tmp_path):
    _check(compile_cache, ATTN, CASES["small_attention"], tmp_path,
           run_args=("--threads", str(threads)))


@pytest.mark.compiles(ATTN.key)
def test_repeat(compile_cache, tmp_path):
    """--repeat N runs the model N times (timing); the outputs are still right."""
    _check(compile_cache, ATTN, CASES["small_attention"], tmp_path, run_args=("--repeat", "3"))


@pytest.mark.compiles(ATTN.key)
def test_kiln_run_binary(compile_cache, tmp_path):
    """kiln-run (runtime only) takes the same flags as `kiln run` and gives the same outputs."""
    if not compile_cache.kiln.has_kiln_run():
        pytest.skip(f"{compile_cache.kiln.bin_dir / 'kiln-run'} is not built")
    _check(compile_cache, ATTN, CASES["small_attention"], tmp_path, runner="kiln-run",
           run_args=("--threads", "2"))


@pytest.mark.compiles(ATTN.key)
def test_kiln_bench(compile_cache):
    """`kiln bench` (kiln-run --bench) runs a compiled model and prints latency percentiles
    and throughput, also with concurrent runs on one opened model."""
    compiled = compile_cache.get(ATTN)
    if not compiled.ok:
        fail(compiled.failure())
    kiln = compile_cache.kiln
    for extra in ((), ("--concurrency", "2")):
        r = harness.run_command([str(kiln.kiln), "bench", str(compiled.artifact), "--count", "20",
                                 "--threads", "1", *extra], harness.RUN_TIMEOUT)
        if r.returncode != 0:
            fail("kiln bench failed\n" + r.describe())
        assert "latency_ms p50=" in r.stdout and "throughput_per_s" in r.stdout, r.describe()


def test_device_not_available(tmp_path):
    """--device names a target of codegen/Target.h (cpu, vulkan, cuda, hip): an unknown
    name is an error listing them (no silent CPU fallback) and writes nothing."""
    case = CASES["small_cnn"]
    model = case.save(tmp_path)
    kiln = harness.Kiln()
    r = kiln.compile(model, tmp_path / "m.so", ("--device", "tpu"))
    assert r.returncode == 1, r.describe()
    assert not (tmp_path / "m.so").exists()
    assert "unknown device 'tpu' (kiln compiles for: cpu, vulkan, cuda, hip)" in r.stderr, (
        r.describe())
