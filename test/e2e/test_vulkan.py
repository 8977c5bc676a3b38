"""Every operator case of models.py compiled with `--device vulkan`, run by the runtime's
Vulkan back end (Mesa's lavapipe where no GPU is present, as in CI) and compared with
onnxruntime; every SPIR-V module the compiler kept passes spirv-val.

Vulkan missing (no loader, no device, no spirv-val) skips these tests on a developer's
machine and fails them in CI (CI=true or KILN_CI=1), where setup installs lavapipe.
"""

from __future__ import annotations

import ctypes
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import harness
import models
import test_models
from conftest import fail

# lavapipe, when nothing else is chosen: the ICD CI runs on.
LAVAPIPE_ICD = Path("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
if "VK_ICD_FILENAMES" not in os.environ and LAVAPIPE_ICD.is_file():
    os.environ["VK_ICD_FILENAMES"] = str(LAVAPIPE_ICD)

# Cases the vulkan target rejects, with what its error must say (the node is named too).
# None today: keep this list short and honest.
REJECTED: dict[str, str] = {}

CASES = models.all_cases("vulkan")
VK_ARGS = ("--device", "vulkan")
SPECS = {c.name: harness.register(harness.CompileSpec(
    f"vulkan-{c.name}", c.save, c.compile_args + VK_ARGS + ("--keep-intermediates",)))
    for c in CASES}


def _ci() -> bool:
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("KILN_CI") == "1"


def _vulkan_missing() -> str | None:
    try:
        ctypes.CDLL("libvulkan.so.1")
    except OSError:
        return "the Vulkan loader (libvulkan.so.1) is not installed"
    if "VK_ICD_FILENAMES" not in os.environ and not Path("/usr/share/vulkan/icd.d").is_dir():
        return "no Vulkan driver (ICD) is installed"
    if shutil.which("spirv-val") is None:
        return "spirv-val (spirv-tools) is not installed"
    return None


@pytest.fixture(scope="module")
def vulkan():
    problem = _vulkan_missing()
    if problem:
        if _ci():
            pytest.fail(problem + " -- required in CI", pytrace=False)
        pytest.skip(problem)


def _spirv_val(artifact: Path) -> list[str]:
    modules = sorted(Path(str(artifact) + ".kiln").glob("*.spv"))
    if not modules:
        return [f"no .spv module kept beside {artifact}"]
    problems = []
    for module in modules:
        r = harness.run_command(["spirv-val", "--target-env", "vulkan1.1", str(module)], 60)
        if r.returncode != 0:
            problems.append(f"spirv-val {module.name}: {r.stdout}{r.stderr}")
    return problems


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=pytest.mark.compiles(SPECS[c.name].key)) for c in CASES])
def test_op_vulkan(case: models.Case, vulkan, compile_cache, tmp_path):
    compiled = compile_cache.get(SPECS[case.name])
    if case.name in REJECTED:
        r = compiled.result
        assert r is not None and r.returncode == 1, compiled.failure()
        problem = harness.check_clean_failure(r, [REJECTED[case.name]], f"{case.name} on vulkan")
        if problem or "node '" not in r.stderr:
            fail(problem or f"{case.name}: the error names no ONNX node\n" + r.describe())
        return
    if not compiled.ok:
        fail(compiled.failure())
    problems = _spirv_val(compiled.artifact)
    if problems:
        fail(f"{case.name}: " + "\n".join(problems))
    try:
        harness.run_and_compare(compile_cache.kiln, compiled, case.inputs, tmp_path,
                                rtol=case.rtol, atol=case.atol, args=VK_ARGS)
    except AssertionError as e:
        fail(f"{case.name} on vulkan: {e}")


# The reference models ($KILN_MODELS_DIR) on vulkan.
MODEL_SPECS = {name: harness.register(harness.CompileSpec(
    f"vulkan-model-{name}", test_models._prepare(name), VK_ARGS + ("--keep-intermediates",),
    timeout=harness.COMPILE_TIMEOUT_LARGE)) for name in test_models.MODELS}
REJECTED_MODELS: dict[str, str] = {}


@pytest.mark.models
@pytest.mark.parametrize("name", [
    pytest.param(n, id=n, marks=pytest.mark.compiles(MODEL_SPECS[n].key))
    for n in test_models.MODELS])
def test_reference_model_vulkan(name, vulkan, models_dir, compile_cache, tmp_path):
    compiled = compile_cache.get(MODEL_SPECS[name])
    if name in REJECTED_MODELS:
        r = compiled.result
        assert r is not None, compiled.failure()
        problem = harness.check_clean_failure(r, [REJECTED_MODELS[name]], f"{name} on vulkan")
        if problem or "node '" not in r.stderr:
            fail(problem or f"{name}: the error names no ONNX node\n" + r.describe())
        return
    if not compiled.ok:
        fail(compiled.failure())
    problems = _spirv_val(compiled.artifact)
    if problems:
        fail(f"{name}: " + "\n".join(problems))
    feeds = test_models.MODELS[name](np.random.default_rng(2024))
    try:
        harness.run_and_compare(compile_cache.kiln, compiled, feeds, tmp_path, args=VK_ARGS)
    except AssertionError as e:
        fail(f"{name} on vulkan: {e}")


# A vulkan artifact for another host: an object holding the descriptor, the SPIR-V modules
# and the weights, with no undefined symbol (no host code, no runtime call).
CROSS_TARGETS = {
    "aarch64-linux": ("aarch64-linux-gnu", "elf64-littleaarch64", False),
    "android": ("aarch64-linux-android24", "elf64-littleaarch64", False),
    "ios": ("arm64-apple-ios", "Mach-O arm64", True),
}


@pytest.mark.parametrize("target", list(CROSS_TARGETS))
def test_vulkan_object_for_other_hosts(target, kiln, tmp_path):
    from test_embedding import llvm_tool, run_ok, symbols
    triple, fmt, macho = CROSS_TARGETS[target]
    case = next(c for c in CASES if c.name == "small_cnn")
    model = case.save(tmp_path)
    obj = tmp_path / "cnn.o"
    r = kiln.compile(model, obj, ("--device", "vulkan", "--target", triple, "--emit", "obj",
                                  "--name", "cnn"))
    if r.returncode != 0 or not obj.is_file():
        fail(f"kiln compile --device vulkan --target {triple} failed\n" + r.describe())
    readobj = run_ok([llvm_tool("llvm-readobj"), "--file-header", obj], "llvm-readobj").stdout
    assert f"Format: {fmt}" in readobj, readobj
    assert symbols(obj, macho, "undefined") == set()
    defined = symbols(obj, macho, "defined")
    assert "cnn_descriptor" in defined and "cnn_kiln_weights" in defined, defined
    modules = [s for s in defined if s.startswith("cnn_kiln_module")]
    # Every module is there, each starting with the SPIR-V magic number.
    assert modules and obj.read_bytes().count(b"\x03\x02\x23\x07") >= len(modules), modules
    header = (tmp_path / "cnn.h").read_text()
    assert "cnn_descriptor(void)" in header and "cnn_main(" not in header, header


def test_vulkan_inspect(vulkan, compile_cache):
    """`kiln inspect` shows the device, each module's kernel (named after its ONNX node) and
    one line per dispatch."""
    compiled = compile_cache.get(SPECS["small_cnn"])
    if not compiled.ok:
        fail(compiled.failure())
    r = harness.run_command([str(compile_cache.kiln.kiln), "inspect", str(compiled.artifact)],
                            harness.RUN_TIMEOUT)
    assert r.returncode == 0, r.describe()
    lines = r.stdout.splitlines()
    assert "device: vulkan" in lines, r.stdout
    executables = [line for line in lines if line.startswith("executable ")]
    dispatches = [line for line in lines if line.startswith("dispatch ")]
    assert executables and all(" spirv vulkan1.1 " in line for line in executables), r.stdout
    assert f"dispatches: {len(dispatches)}" in lines and dispatches, r.stdout
    nodes = {n.name for n in next(c for c in CASES if c.name == "small_cnn").model.graph.node}
    kernels = {line.split(" kernels: ")[1] for line in executables}
    assert kernels & {n.replace("/", "_") for n in nodes}, (kernels, nodes)
    assert any(line.startswith("memory ") and "device-constant" in line for line in lines)


def test_vulkan_run_time_check(vulkan, compile_cache, tmp_path):
    """A run-time check on the device (a Gather index out of range) fails the run with the
    check's message naming the node, as on the CPU; valid indices run."""
    case = next(c for c in CASES if c.name == "gather_embedding_runtime_indices")
    compiled = compile_cache.get(SPECS[case.name])
    if not compiled.ok:
        fail(compiled.failure())
    (name, ids), = case.inputs.items()
    bad = ids.copy()
    bad.flat[3] = 10_000
    inputs = harness.save_inputs({name: bad}, tmp_path / "inputs")
    r = compile_cache.kiln.run(compiled.artifact, inputs, tmp_path / "out", VK_ARGS)
    problem = harness.check_clean_failure(r, ["index out of range"], "bad Gather index on vulkan")
    if problem or "node 'Gather_1'" not in r.stderr:
        fail(problem or "the error names no node\n" + r.describe())
