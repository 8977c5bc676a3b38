"""Every operator case of models.py and the reference models compiled with `--device hip`
for gfx90a (kiln's default) and gfx942: each kernel module is kept as an HSA code object
(.hsaco) and `llvm-readelf` confirms, for every dispatch of the host plan that `kiln
inspect` prints, that its executable is an AMD GPU ELF for the chip holding the kernel
(its symbol, its `.kd` kernel descriptor and its `amdhsa.kernels` metadata entry) with a
workgroup limit that admits the dispatch's size; gfx1100 (32-lane wavefronts) for the
reference models; unsupported ops are rejected naming the node; opening the model where
no HIP runtime is fails with a clear error. No AMD GPU exists here: nothing runs the code
(docs/gpu.md); the runtime's HIP back end is tested through a stand-in library by
kiln_hip_tests.

The ROCm device libraries (Debian's rocm-device-libs) missing skips these tests on a
developer's machine and fails them in CI (CI=true or KILN_CI=1), where setup installs them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import harness
import models
import test_models
from conftest import fail

READELF = Path("/usr/lib/llvm-22/bin/llvm-readelf")
DEVICE_LIBS = [Path(p) for p in (os.environ.get("ROCM_PATH", "/opt/rocm"),
                                 "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu")]
CASE_CHIPS = ("gfx90a", "gfx942")
MODEL_CHIPS = ("gfx90a", "gfx942", "gfx1100")

CASES = models.all_cases("hip")
SPECS = {(c.name, chip): harness.register(harness.CompileSpec(
    f"hip-{chip}-{c.name}", c.save,
    c.compile_args + ("--device", f"hip:{chip}", "--keep-intermediates")))
    for c in CASES for chip in CASE_CHIPS}


def _ci() -> bool:
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("KILN_CI") == "1"


@pytest.fixture(scope="module")
def toolchain():
    missing = []
    if not READELF.is_file():
        missing.append(str(READELF))
    if not any((p / "amdgcn/bitcode/ocml.bc").is_file() for p in DEVICE_LIBS):
        missing.append("the ROCm device libraries (amdgcn/bitcode/ocml.bc: rocm-device-libs)")
    if missing:
        problem = "missing " + ", ".join(missing)
        if _ci():
            pytest.fail(problem + " -- required in CI", pytrace=False)
        pytest.skip(problem)


def _readelf(path: Path) -> tuple[str, dict[str, dict[str, str]]]:
    """(ELF header flags line, kernel name -> its amdhsa.kernels fields) of a code
    object, or raises with what is wrong."""
    r = harness.run_command([str(READELF), "-h", "--dyn-syms", "--notes", str(path)], 120)
    if r.returncode != 0:
        raise AssertionError(f"llvm-readelf {path.name}: {r.describe()}")
    if not re.search(r"Machine:\s+EM_AMDGPU", r.stdout):
        raise AssertionError(f"{path.name}: not an AMD GPU ELF file")
    flags = next((line for line in r.stdout.splitlines() if "Flags:" in line), "")
    symbols = set(re.findall(r"^\s*\d+: [0-9a-f]+\s+\d+ \w+\s+GLOBAL\s+\w+\s+\d+ (\S+)$",
                             r.stdout, re.M))
    kernels: dict[str, dict[str, str]] = {}
    # amdhsa.kernels: one "  - ." item per kernel; its own fields are indented by 4
    # (deeper lines are its .args).
    for block in re.split(r"^  - (?=\.)", r.stdout, flags=re.M)[1:]:
        fields = dict(re.findall(r"^(?:    )?\.([a-z_]+):[ \t]+(\S+)$", block, re.M))
        name = fields.get("name")
        if name and fields.get("symbol") == name + ".kd":
            if name not in symbols or name + ".kd" not in symbols:
                raise AssertionError(f"{path.name}: kernel {name} or its descriptor is "
                                     f"not a global symbol ({sorted(symbols)})")
            kernels[name] = fields
    return flags, kernels


def _check_artifact(artifact: Path, kiln_exe: Path, chip: str) -> list[str]:
    """Every dispatch `kiln inspect` lists runs a kernel that its executable's code
    object (kept beside the artifact, of the same size and kernels) defines for `chip`,
    with a flat workgroup size limit at least the dispatch's."""
    r = harness.run_command([str(kiln_exe), "inspect", str(artifact)], harness.RUN_TIMEOUT)
    lines = r.stdout.splitlines()
    if r.returncode != 0 or "device: hip" not in lines:
        return [f"kiln inspect: {r.describe()}"]
    executables = {}
    for line in lines:
        m = re.match(r"executable (\d+) hsaco (\S+) (\d+) bytes, \d+ kernels: (.*)$", line)
        if m:
            executables[int(m[1])] = (m[2], int(m[3]), set(m[4].split(", ")))
    if not executables:
        return [f"kiln inspect shows no hsaco executable:\n{r.stdout}"]
    # The kept modules in the descriptor's order: PREFIX_main_kernel, then _0, _1, ...
    def order(path: Path) -> int:
        m = re.search(r"_(\d+)$", path.stem)
        return int(m[1]) if m else -1

    paths = sorted(Path(str(artifact) + ".kiln").glob("*.hsaco"), key=order)
    if len(paths) != len(executables):
        return [f"{len(executables)} hsaco executables but {len(paths)} kept code objects"]
    problems = []
    objects = {}
    for (index, (target, size, names)), path in zip(sorted(executables.items()), paths):
        try:
            flags, kernels = _readelf(path)
        except AssertionError as e:
            problems.append(str(e))
            continue
        if target != chip or chip not in re.split(r"[\s,]+", flags):
            problems.append(f"executable {index} ({path.name}) is for {target} / "
                            f"{flags.strip()}, not {chip}")
        if path.stat().st_size != size or set(kernels) != names:
            problems.append(f"executable {index} ({size} bytes, kernels {sorted(names)}) is "
                            f"not {path.name} ({path.stat().st_size} bytes, kernels "
                            f"{sorted(kernels)})")
        objects[index] = kernels
    dispatches = 0
    for line in lines:
        m = re.match(r"dispatch (\d+) executable (\d+) kernel (\S+) workgroups \S+ x "
                     r"\[(\d+),(\d+),(\d+)\]", line)
        if not m:
            continue
        dispatches += 1
        kernels = objects.get(int(m[2]))
        if kernels is None:
            continue
        fields = kernels.get(m[3])
        threads = int(m[4]) * int(m[5]) * int(m[6])
        if fields is None:
            problems.append(f"dispatch {m[1]}: kernel {m[3]} is not in its code object")
        elif int(fields.get("max_flat_workgroup_size", "0")) < threads:
            problems.append(f"dispatch {m[1]}: {threads} threads, but kernel {m[3]} allows "
                            f"{fields.get('max_flat_workgroup_size')}")
    if not dispatches:
        problems.append("kiln inspect shows no dispatch")
    if not any(line.startswith("device_error: ") for line in lines) and not problems:
        problems.append("no device_error line where no HIP runtime is:\n" + r.stdout)
    return problems


@pytest.mark.parametrize("case,chip", [
    pytest.param(c, chip, id=f"{c.name}-{chip}", marks=pytest.mark.compiles(
        SPECS[(c.name, chip)].key)) for c in CASES for chip in CASE_CHIPS])
def test_op_hip(case: models.Case, chip: str, toolchain, compile_cache):
    compiled = compile_cache.get(SPECS[(case.name, chip)])
    if not compiled.ok:
        fail(compiled.failure())
    problems = _check_artifact(compiled.artifact, compile_cache.kiln.kiln, chip)
    if problems:
        fail(f"{case.name} for {chip}: " + "\n".join(problems))


MODEL_SPECS = {(name, chip): harness.register(harness.CompileSpec(
    f"hip-{chip}-model-{name}", test_models._prepare(name),
    ("--device", f"hip:{chip}", "--keep-intermediates"),
    timeout=harness.COMPILE_TIMEOUT_LARGE))
    for name in test_models.MODELS for chip in MODEL_CHIPS}


@pytest.mark.models
@pytest.mark.parametrize("name,chip", [
    pytest.param(n, chip, id=f"{n}-{chip}", marks=pytest.mark.compiles(
        MODEL_SPECS[(n, chip)].key)) for n in test_models.MODELS for chip in MODEL_CHIPS])
def test_reference_model_hip(name, chip, toolchain, models_dir, compile_cache):
    compiled = compile_cache.get(MODEL_SPECS[(name, chip)])
    if not compiled.ok:
        fail(compiled.failure())
    problems = _check_artifact(compiled.artifact, compile_cache.kiln.kiln, chip)
    if problems:
        fail(f"{name} for {chip}: " + "\n".join(problems))


def test_hip_wavefront_size(toolchain, kiln, tmp_path):
    """GFX9 chips run 64-lane wavefronts, GFX11 32: the code objects say so."""
    case = next(c for c in CASES if c.name == "small_cnn")
    model = case.save(tmp_path)
    for chip, lanes in (("gfx942", "64"), ("gfx1100", "32")):
        out = tmp_path / f"{chip}.so"
        r = kiln.compile(model, out, case.compile_args + ("--device", f"hip:{chip}",
                                                          "--keep-intermediates"))
        assert r.returncode == 0, r.describe()
        objects = sorted(Path(str(out) + ".kiln").glob("*.hsaco"))
        assert objects
        for path in objects:
            _, kernels = _readelf(path)
            assert kernels and all(k["wavefront_size"] == lanes for k in kernels.values()), (
                path, kernels)


def test_hip_errors(toolchain, kiln, compile_cache, tmp_path):
    """An unknown chip, a --rocm-path that is no folder and math without the device
    libraries are clean compile errors (the last naming the node and the ocml function);
    running a hip model where no HIP runtime is fails naming the library."""
    case = next(c for c in CASES if c.name == "small_cnn")
    model = case.save(tmp_path)
    r = kiln.compile(model, tmp_path / "bad.so", ("--device", "hip:gfx123"))
    problem = harness.check_clean_failure(r, ["unknown AMD GPU 'gfx123'"], "gfx123")
    if problem:
        fail(problem)
    r = kiln.compile(model, tmp_path / "bad.so", ("--device", "hip", "--rocm-path",
                                                  str(tmp_path / "nowhere")))
    problem = harness.check_clean_failure(r, ["is not a folder"], "bad --rocm-path")
    if problem:
        fail(problem)
    # f64 Exp needs __ocml_exp_f64 (f32 exp is an AMDGPU instruction).
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Exp", ["x"], ["y"], name="exp64")], "exp64",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [64])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [64])])
    exp64 = tmp_path / "exp64.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), exp64)
    empty = tmp_path / "empty-rocm"
    empty.mkdir()
    r = kiln.compile(exp64, tmp_path / "exp64.so", ("--device", "hip", "--rocm-path",
                                                     str(empty)))
    problem = harness.check_clean_failure(r, ["has no amdgcn/bitcode/ocml.bc"], "no ocml")
    if problem or "node 'exp64'" not in r.stderr or "__ocml_exp_f64" not in r.stderr:
        fail(problem or "the error names no node or function\n" + r.describe())
    # With the device libraries: compiles (ocml linked into the code object).
    r = kiln.compile(exp64, tmp_path / "exp64.so", ("--device", "hip"))
    assert r.returncode == 0, r.describe()

    compiled = compile_cache.get(SPECS[("small_cnn", "gfx90a")])
    if not compiled.ok:
        fail(compiled.failure())
    inputs = harness.save_inputs(case.inputs, tmp_path / "inputs")
    old = os.environ.get("KILN_HIP_LIBRARY")
    os.environ["KILN_HIP_LIBRARY"] = "/nonexistent/libamdhip64.so"
    try:
        r = compile_cache.kiln.run(compiled.artifact, inputs, tmp_path / "out",
                                   ("--device", "hip"))
    finally:
        if old is None:
            del os.environ["KILN_HIP_LIBRARY"]
        else:
            os.environ["KILN_HIP_LIBRARY"] = old
    problem = harness.check_clean_failure(
        r, ["runs on HIP, but the HIP driver library '/nonexistent/libamdhip64.so' cannot "
            "be loaded"], "hip model without a runtime")
    if problem:
        fail(problem)
