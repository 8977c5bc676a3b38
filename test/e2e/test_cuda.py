"""Every operator case of models.py and the reference models compiled with `--device cuda`
(sm_80, kiln's default): each kernel module's PTX is kept and assembled by the CUDA
toolkit's `ptxas` for sm_80 (the compiler's own cubin, checked to be there) and again for
sm_90 (the PTX of an older chip must assemble for a newer one, as the driver's JIT does);
unsupported ops are rejected naming the node; `kiln inspect` shows the PTX and cubin
executables without a GPU; opening the model where no CUDA driver is fails with a clear
error. Where an NVIDIA GPU and its driver are present, the cases also run and are
compared with onnxruntime (rtol 1e-3, atol 1e-4, or the case's tolerance).

The CUDA toolkit (/usr/local/cuda, or $KILN_CUDA_PATH) missing skips these tests on a
developer's machine and fails them in CI (CI=true or KILN_CI=1), where it is installed.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import numpy as np
import pytest

import harness
import models
import test_models
from conftest import fail

# The tensor-core kernels (matmul_mma) are used only when asked for until they have run on a
# GPU (docs/gpu.md): these tests assemble them with ptxas, so they ask. Set at import, before
# the compile cache builds anything; other modules' cuda builds in this process take them too.
os.environ.setdefault("KILN_CUDA_TENSOR_CORES", "1")
CUDA_PATH = Path(os.environ.get("KILN_CUDA_PATH", "/usr/local/cuda"))
PTXAS = CUDA_PATH / "bin" / "ptxas"
CHIPS = ("sm_80", "sm_90")

# Cases the cuda target rejects, with what its error must say (the node is named too).
REJECTED: dict[str, str] = {}

CASES = models.all_cases("cuda")
CUDA_ARGS = ("--device", "cuda", "--cuda-path", str(CUDA_PATH))
SPECS = {c.name: harness.register(harness.CompileSpec(
    f"cuda-{c.name}", c.save, c.compile_args + CUDA_ARGS + ("--keep-intermediates",)))
    for c in CASES}


def _ci() -> bool:
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("KILN_CI") == "1"


def _gpu() -> str | None:
    """None when a CUDA driver with a device is here, else why not."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "no CUDA driver (libcuda.so.1)"
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or not count.value:
        return "no CUDA device"
    return None


GPU_MISSING = _gpu()


@pytest.fixture(scope="module")
def toolkit():
    if not PTXAS.is_file() or not (CUDA_PATH / "nvvm/libdevice/libdevice.10.bc").is_file():
        problem = f"the CUDA toolkit (ptxas, libdevice) is not at {CUDA_PATH}"
        if _ci():
            pytest.fail(problem + " -- required in CI", pytrace=False)
        pytest.skip(problem)


def _check_modules(artifact: Path, kiln_exe: Path) -> list[str]:
    """Each kept .ptx has its sm_80 .cubin (an ELF file) and assembles for every chip; the
    runtime accepts the descriptor (`kiln inspect` opens it with device "none" where no GPU
    is: every check of descriptor.c, PTX and cubin included, runs)."""
    r = harness.run_command([str(kiln_exe), "inspect", str(artifact)], harness.RUN_TIMEOUT)
    if r.returncode != 0 or "device: cuda" not in r.stdout.splitlines():
        return [f"kiln inspect: {r.describe()}"]
    folder = Path(str(artifact) + ".kiln")
    modules = sorted(folder.glob("*.ptx"))
    if not modules:
        return [f"no .ptx module kept beside {artifact}"]
    problems = []
    for module in modules:
        text = module.read_text()
        if ".target sm_80" not in text or "\0" in text:
            problems.append(f"{module.name}: not NUL-free PTX for sm_80")
        cubin = module.with_suffix(".cubin")
        if not cubin.is_file() or cubin.read_bytes()[:4] != b"\x7fELF":
            problems.append(f"{module.name}: no cubin beside it")
    # One ptxas per chip over every module (ptxas takes one input file at a time, so
    # run them in one shell to keep the process count down).
    for chip in CHIPS:
        script = "; ".join(
            f"'{PTXAS}' -arch={chip} '{m}' -o /dev/null || echo 'FAILED {m.name}'" for m in modules)
        r = harness.run_command(["sh", "-c", script], 600)
        if r.returncode != 0 or "FAILED" in r.stdout or r.stderr.strip():
            problems.append(f"ptxas -arch={chip}: {r.stdout}{r.stderr}")
    return problems


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=pytest.mark.compiles(SPECS[c.name].key)) for c in CASES])
def test_op_cuda(case: models.Case, toolkit, compile_cache, tmp_path):
    compiled = compile_cache.get(SPECS[case.name])
    if case.name in REJECTED:
        r = compiled.result
        assert r is not None and r.returncode == 1, compiled.failure()
        problem = harness.check_clean_failure(r, [REJECTED[case.name]], f"{case.name} on cuda")
        if problem or "node '" not in r.stderr:
            fail(problem or f"{case.name}: the error names no ONNX node\n" + r.describe())
        return
    if not compiled.ok:
        fail(compiled.failure())
    problems = _check_modules(compiled.artifact, compile_cache.kiln.kiln)
    if case.name.startswith("mma_") and not any(
            "mma.sync" in m.read_text()
            for m in Path(str(compiled.artifact) + ".kiln").glob("*.ptx")):
        problems.append("no mma.sync in its PTX (KILN_CUDA_TENSOR_CORES=1 is set above)")
    if problems:
        fail(f"{case.name}: " + "\n".join(problems))
    if GPU_MISSING:
        return  # compiled and assembled; running needs a GPU
    try:
        harness.run_and_compare(compile_cache.kiln, compiled, case.inputs, tmp_path,
                                rtol=case.rtol, atol=case.atol, args=("--device", "cuda"))
    except AssertionError as e:
        fail(f"{case.name} on cuda: {e}")


# The reference models ($KILN_MODELS_DIR) on cuda.
MODEL_SPECS = {name: harness.register(harness.CompileSpec(
    f"cuda-model-{name}", test_models._prepare(name), CUDA_ARGS + ("--keep-intermediates",),
    timeout=harness.COMPILE_TIMEOUT_LARGE)) for name in test_models.MODELS}


@pytest.mark.models
@pytest.mark.parametrize("name", [
    pytest.param(n, id=n, marks=pytest.mark.compiles(MODEL_SPECS[n].key))
    for n in test_models.MODELS])
def test_reference_model_cuda(name, toolkit, models_dir, compile_cache, tmp_path):
    compiled = compile_cache.get(MODEL_SPECS[name])
    if not compiled.ok:
        fail(compiled.failure())
    problems = _check_modules(compiled.artifact, compile_cache.kiln.kiln)
    if problems:
        fail(f"{name}: " + "\n".join(problems))
    if GPU_MISSING:
        return
    feeds = test_models.MODELS[name](np.random.default_rng(2024))
    try:
        harness.run_and_compare(compile_cache.kiln, compiled, feeds, tmp_path,
                                args=("--device", "cuda"))
    except AssertionError as e:
        fail(f"{name} on cuda: {e}")


def test_cuda_inspect(toolkit, compile_cache):
    """`kiln inspect` shows a cuda model without a GPU: each kernel module's PTX and its
    cubin (an alternative of it), one line per dispatch naming the PTX executable, and,
    where the device cannot open, why."""
    compiled = compile_cache.get(SPECS["small_cnn"])
    if not compiled.ok:
        fail(compiled.failure())
    r = harness.run_command([str(compile_cache.kiln.kiln), "inspect", str(compiled.artifact)],
                            harness.RUN_TIMEOUT)
    assert r.returncode == 0, r.describe()
    lines = r.stdout.splitlines()
    assert "device: cuda" in lines, r.stdout
    executables = [line for line in lines if line.startswith("executable ")]
    ptx = [line for line in executables if " ptx sm_80 " in line]
    cubin = [line for line in executables if " cubin sm_80 " in line]
    assert ptx and len(ptx) == len(cubin) == len(executables) // 2, r.stdout
    assert all("alternative of the one before" in line for line in cubin), r.stdout
    ptx_ids = {line.split()[1] for line in ptx}
    dispatches = [line for line in lines if line.startswith("dispatch ")]
    assert dispatches and all(line.split()[3] in ptx_ids for line in dispatches), r.stdout
    nodes = {n.name for n in next(c for c in CASES if c.name == "small_cnn").model.graph.node}
    kernels = {line.split(" kernels: ")[1] for line in ptx}
    assert kernels & {n.replace("/", "_") for n in nodes}, (kernels, nodes)
    if GPU_MISSING:
        assert any(line.startswith("device_error: ") for line in lines), r.stdout


def test_cuda_no_driver(toolkit, compile_cache, tmp_path):
    """Without a CUDA driver (or with KILN_CUDA_DRIVER naming none), running a cuda model
    fails with a clear error naming the library, and never crashes."""
    compiled = compile_cache.get(SPECS["small_cnn"])
    if not compiled.ok:
        fail(compiled.failure())
    case = next(c for c in CASES if c.name == "small_cnn")
    inputs = harness.save_inputs(case.inputs, tmp_path / "inputs")
    old = os.environ.get("KILN_CUDA_DRIVER")
    os.environ["KILN_CUDA_DRIVER"] = "/nonexistent/libcuda.so.1"
    try:
        r = compile_cache.kiln.run(compiled.artifact, inputs, tmp_path / "out",
                                   ("--device", "cuda"))
    finally:
        if old is None:
            del os.environ["KILN_CUDA_DRIVER"]
        else:
            os.environ["KILN_CUDA_DRIVER"] = old
    problem = harness.check_clean_failure(
        r, ["runs on CUDA, but the CUDA driver library '/nonexistent/libcuda.so.1' cannot be "
            "loaded"], "cuda model without a driver")
    if problem:
        fail(problem)


def test_cuda_arch_and_toolkit_errors(toolkit, kiln, tmp_path):
    """`--device cuda:sm_90` builds PTX and cubin for sm_90; an unknown arch, a --cuda-path
    that is no folder and math without libdevice are clean errors (the last naming the
    node and the libdevice function)."""
    case = next(c for c in CASES if c.name == "small_cnn")
    model = case.save(tmp_path)
    out = tmp_path / "m90.so"
    r = kiln.compile(model, out, ("--device", "cuda:sm_90", "--cuda-path", str(CUDA_PATH),
                                  "--keep-intermediates"))
    assert r.returncode == 0, r.describe()
    ptx = sorted(Path(str(out) + ".kiln").glob("*.ptx"))
    assert ptx and all(".target sm_90" in p.read_text() for p in ptx), ptx
    assert all(p.with_suffix(".cubin").is_file() for p in ptx)

    r = kiln.compile(model, tmp_path / "bad.so", ("--device", "cuda:sm_61"))
    problem = harness.check_clean_failure(r, ["unknown CUDA architecture 'sm_61'"], "sm_61")
    if problem:
        fail(problem)
    r = kiln.compile(model, tmp_path / "bad.so", ("--device", "cuda", "--cuda-path",
                                                  str(tmp_path / "nowhere")))
    problem = harness.check_clean_failure(r, ["is not a folder"], "bad --cuda-path")
    if problem:
        fail(problem)
    # A toolkit without libdevice (and without ptxas): Erf needs __nv_erff.
    empty = tmp_path / "empty-toolkit"
    empty.mkdir()
    erf = next((c for c in CASES if any(n.op_type == "Erf" for n in c.model.graph.node)), None)
    if erf is None:
        pytest.skip("no operator case with Erf")
    r = kiln.compile(erf.save(tmp_path / "erf"), tmp_path / "erf.so",
                     erf.compile_args + ("--device", "cuda", "--cuda-path", str(empty)))
    problem = harness.check_clean_failure(r, ["libdevice"], "math without libdevice")
    if problem or "node '" not in r.stderr or "__nv_erf" not in r.stderr:
        fail(problem or "the error names no node or function\n" + r.describe())


def test_cuda_rejects_float8_arithmetic_naming_the_node(kiln, tmp_path):
    """What the cuda target does not compile (arithmetic on a float8, which is only stored
    and cast; bf16 compiles: test_gpu_bf16.py) is an error naming the ONNX node, never a
    wrong answer or a host fallback."""
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["y"], name="add_f8")],
        "f8", [helper.make_tensor_value_info("x", TensorProto.FLOAT8E4M3FN, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, [4])])
    model = tmp_path / "f8.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                                ir_version=9), model)
    r = kiln.compile(model, tmp_path / "f8.so", ("--device", "cuda"))
    problem = harness.check_clean_failure(
        r, ["the cuda target does not support arithmetic on 8-bit floats"], "float8 Add on cuda")
    if problem or "node 'add_f8'" not in r.stderr:
        fail(problem or "the error names no node\n" + r.describe())
