"""One artifact holding several devices (`kiln compile --device cpu --device vulkan
[--device cuda:sm_80]`): each device's code in one .so, the device chosen when it is
opened (`kiln run --device cpu|vulkan|auto`, KILN_DEVICE), every way matching
onnxruntime; `kiln inspect` listing the devices and each one's kernels; the errors (a
device the artifact does not hold names the ones it does; the compile-time ones); the
weights of GPU devices stored once; objects and their header.

Vulkan runs on lavapipe (test_vulkan's `vulkan` fixture: skipped without it on a
developer's machine, a failure in CI). The CUDA build is added where the toolkit's ptxas
is (as in CI); no test needs a GPU: KILN_CUDA_DRIVER names a library that does not exist
wherever auto's choice is checked, so CUDA is absent and auto takes Vulkan, then the CPU.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import harness
import models
import test_models
from conftest import fail
from test_cuda import CUDA_PATH, PTXAS
from test_embedding import llvm_tool
from test_vulkan import _spirv_val, vulkan  # noqa: F401 (the fixture; sets VK_ICD_FILENAMES)

HAVE_PTXAS = PTXAS.is_file() and (CUDA_PATH / "nvvm/libdevice/libdevice.10.bc").is_file()
DEVICE_ARGS = ("--device", "cpu", "--device", "vulkan") + (
    ("--device", "cuda:sm_80", "--cuda-path", str(CUDA_PATH)) if HAVE_PTXAS else ())
HELD = ["vulkan", "cuda", "cpu"] if HAVE_PTXAS else ["vulkan", "cpu"]  # the table's order
# CUDA absent whatever the machine has, so that auto's choice is known.
NO_CUDA = {"KILN_CUDA_DRIVER": "/nonexistent/libcuda.so.1"}
NO_VULKAN = {"VK_ICD_FILENAMES": "/nonexistent/icd.json"}

# A few operator cases: convolutions and pooling, a tiled matmul, a workgroup reduction,
# a run-time check (a Gather whose indices come at run time), several outputs.
CASE_NAMES = ["small_cnn", "gpu_matmul_127x65_65x33", "gpu_softmax_1000",
              "gather_embedding_runtime_indices", "multiple_outputs"]
CASES = {c.name: c for c in models.all_cases() if c.name in CASE_NAMES}
SPECS = {name: harness.register(harness.CompileSpec(
    f"multidevice-{name}", c.save, c.compile_args + DEVICE_ARGS + ("--keep-intermediates",)))
    for name, c in CASES.items()}
MODEL = "squeezenet1_1"
MODEL_SPEC = harness.register(harness.CompileSpec(
    f"multidevice-model-{MODEL}", test_models._prepare(MODEL), DEVICE_ARGS,
    timeout=harness.COMPILE_TIMEOUT_LARGE))


def env_run(env: dict, cmd, timeout=harness.RUN_TIMEOUT) -> harness.Result:
    """harness.run_command with variables set (through env(1))."""
    return harness.run_command(["env", *(f"{k}={v}" for k, v in env.items()), *cmd], timeout)


def run_matches(kiln: harness.Kiln, compiled: harness.Compiled, feeds, reference, work: Path,
                device: str | None, env: dict, rtol: float, atol: float) -> None:
    """Runs the artifact (`--device device`, none when None) with `env` and compares each
    output with onnxruntime's."""
    tag = device or "default"
    inputs = harness.save_inputs(feeds, work / "inputs")
    out_dir = work / f"out-{tag}"
    args = ("--device", device) if device else ()
    r = env_run(env, kiln.run_cmd(compiled.artifact, inputs, out_dir, args))
    if r.returncode != 0:
        raise AssertionError(f"kiln run --device {tag} failed\n" + r.describe())
    got = harness.load_outputs(out_dir, list(reference))
    problems = [p for n in reference
                if (p := harness.compare(n, got[n], reference[n], rtol, atol)) is not None]
    if problems:
        raise AssertionError(f"--device {tag}: " + "\n".join(problems))


def inspect(kiln: harness.Kiln, artifact: Path, env: dict | None = None,
            device: str | None = None) -> str:
    cmd = [kiln.kiln, "inspect", artifact] + (["--device", device] if device else [])
    r = env_run(env or {}, cmd)
    assert r.returncode == 0, r.describe()
    return r.stdout


def opened(text: str) -> tuple[str, str]:
    """(`device:` of the opened descriptor, `variant:` the table row opened)."""
    device = re.search(r"^device: (\S+)$", text, re.M)
    variant = re.search(r"^variant: (\S+)$", text, re.M)
    assert device and variant, text
    return device.group(1), variant.group(1)


def check_every_device(kiln, compiled, feeds, work: Path, rtol=harness.RTOL,
                       atol=harness.ATOL) -> None:
    reference = harness.ort_run(compiled.model, feeds)
    for device in ("cpu", "vulkan"):
        run_matches(kiln, compiled, feeds, reference, work, device, NO_CUDA, rtol, atol)
    # auto (the flag, and no flag): CUDA absent, so Vulkan; Vulkan absent too, the CPU.
    for device in ("auto", None):
        run_matches(kiln, compiled, feeds, reference, work / "vk", device, NO_CUDA, rtol, atol)
    assert opened(inspect(kiln, compiled.artifact, NO_CUDA)) == ("vulkan", "vulkan")
    run_matches(kiln, compiled, feeds, reference, work / "cpu", "auto", {**NO_CUDA, **NO_VULKAN},
                rtol, atol)
    device, variant = opened(inspect(kiln, compiled.artifact, {**NO_CUDA, **NO_VULKAN}))
    assert device == "cpu" and variant not in ("vulkan", "cuda"), (device, variant)


@pytest.mark.parametrize("name", [
    pytest.param(n, id=n, marks=pytest.mark.compiles(SPECS[n].key)) for n in CASE_NAMES])
def test_op_every_device(name, vulkan, kiln, compile_cache, tmp_path):
    case = CASES[name]
    compiled = compile_cache.get(SPECS[name])
    if not compiled.ok:
        fail(compiled.failure())
    problems = _spirv_val(compiled.artifact)
    if problems:
        fail(f"{name}: " + "\n".join(problems))
    if HAVE_PTXAS:
        kept = Path(str(compiled.artifact) + ".kiln")
        assert list(kept.glob("*.ptx")) and list(kept.glob("*.cubin")), sorted(kept.iterdir())
    try:
        check_every_device(kiln, compiled, case.inputs, tmp_path, case.rtol, case.atol)
    except AssertionError as e:
        fail(f"{name}: {e}")


@pytest.mark.models
@pytest.mark.compiles(MODEL_SPEC.key)
def test_reference_model_every_device(vulkan, kiln, models_dir, compile_cache, tmp_path):
    compiled = compile_cache.get(MODEL_SPEC)
    if not compiled.ok:
        fail(compiled.failure())
    feeds = test_models.MODELS[MODEL](np.random.default_rng(2024))
    try:
        check_every_device(kiln, compiled, feeds, tmp_path)
    except AssertionError as e:
        fail(f"{MODEL}: {e}")


@pytest.mark.compiles(SPECS["small_cnn"].key)
def test_inspect_lists_devices_and_kernels(vulkan, kiln, compile_cache):
    compiled = compile_cache.get(SPECS["small_cnn"])
    assert compiled.ok, compiled.failure()
    text = inspect(kiln, compiled.artifact, NO_CUDA, device="cpu")
    assert re.search(r"^devices: " + " ".join(HELD) + "$", text, re.M), text
    rows = re.findall(r"^variant (\d+) (\S+) (\S+) features=\S+ \((.*)\)$", text, re.M)
    assert [device for _, device, _, _ in rows] == HELD, rows
    assert opened(text)[0] == "cpu"
    assert rows[-1][3] == "opened", rows
    # The host code's kernels (its parallel loops), then each other device's modules and
    # their kernels, under its variant.
    assert re.search(r"^executable 0 host \S+ static-entry \(entry\)(, \d+ kernels)?$",
                     text, re.M), text
    vk = rows[0][0]
    assert f"variant {vk} device: vulkan" in text.splitlines(), text
    kernels = re.findall(rf"^variant {vk} executable \d+ spirv vulkan1\.\d \d+ bytes, "
                         r"(\d+) kernels: (.+)$", text, re.M)
    assert kernels and all(int(n) == len(k.split()) for n, k in kernels), text
    assert re.search(rf"^variant {vk} dispatches: \d+$", text, re.M), text
    if HAVE_PTXAS:
        cu = rows[1][0]
        assert re.search(rf"^variant {cu} executable \d+ ptx sm_80 .* kernels: ", text, re.M)
        assert re.search(rf"^variant {cu} executable \d+ cubin sm_80 \d+ bytes, alternative "
                         r"of the one before,", text, re.M), text
    # Opened on Vulkan: the Vulkan descriptor above, the CPU's kernels under its variant.
    text = inspect(kiln, compiled.artifact, NO_CUDA, device="vulkan")
    assert opened(text) == ("vulkan", "vulkan"), text
    cpu = rows[-1][0]
    assert re.search(rf"^variant {cpu} executable 0 host \S+ static-entry \(entry\)", text,
                     re.M), text


CPU_VULKAN_SPEC = harness.register(harness.CompileSpec(
    "multidevice-cpu-vulkan-small_cnn", CASES["small_cnn"].save,
    CASES["small_cnn"].compile_args + ("--device", "cpu", "--device", "vulkan")))


@pytest.mark.compiles(CPU_VULKAN_SPEC.key)
def test_device_errors_name_the_held_devices(vulkan, kiln, compile_cache, tmp_path):
    compiled = compile_cache.get(CPU_VULKAN_SPEC)
    assert compiled.ok, compiled.failure()
    art = compiled.artifact
    # A device the artifact does not hold: by option and by KILN_DEVICE.
    r = env_run({}, [kiln.kiln, "run", art, "--device", "cuda"])
    assert r.returncode == 1 and re.search(
        r"model 'model' holds no code for device 'cuda' \(from options\.device\); "
        r"it holds: vulkan, cpu \([^)]+\)$", r.stderr, re.M), r.describe()
    r = env_run({"KILN_DEVICE": "cuda:0"}, [kiln.kiln, "run", art])
    assert r.returncode == 1 and re.search(
        r"holds no code for device 'cuda:0' \(from KILN_DEVICE\); it holds: vulkan, cpu",
        r.stderr), r.describe()
    # A device named alone whose back end cannot start is an error, not a fallback.
    r = env_run(NO_VULKAN, [kiln.kiln, "run", art, "--device", "vulkan"])
    assert r.returncode == 1 and "runs on Vulkan, but the Vulkan loader" in r.stderr, \
        r.describe()
    assert harness.crash_marker(r.stdout + r.stderr) is None, r.describe()
    # KILN_DEVICE picks for auto; an explicit --device wins over it.
    text = inspect(kiln, art, {**NO_CUDA, "KILN_DEVICE": "cpu"})
    assert opened(text)[0] == "cpu", text
    text = inspect(kiln, art, {**NO_CUDA, "KILN_DEVICE": "cpu"}, device="vulkan")
    assert opened(text)[0] == "vulkan", text
    # A list, tried in order: a device missing here (or not held) is passed over.
    text = inspect(kiln, art, NO_VULKAN, device="vulkan,cuda,cpu")
    assert opened(text)[0] == "cpu", text
    r = env_run({"KILN_DEVICE": "tpu"}, [kiln.kiln, "run", art])
    assert r.returncode == 1 and "KILN_DEVICE is 'tpu'; expected 'auto'" in r.stderr, \
        r.describe()
    r = env_run({}, [kiln.kiln, "run", art, "--device", "cpu,tpu"])
    assert r.returncode == 1 and "--device expects auto, cpu" in r.stderr, r.describe()
    if HAVE_PTXAS:
        compiled = compile_cache.get(SPECS["small_cnn"])
        r = env_run(NO_CUDA, [kiln.kiln, "run", compiled.artifact, "--device", "cuda"])
        assert r.returncode == 1 and "runs on CUDA, but the CUDA driver library " \
            "'/nonexistent/libcuda.so.1' cannot be loaded" in r.stderr, r.describe()


def big_weight_model(folder: Path) -> Path:
    """y = x @ W + b with W 256x512 (512 KiB of float32): weights that dominate the size."""
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.standard_normal((256, 512)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(512).astype(np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm"),
         helper.make_node("Add", ["xw", "b"], ["y"], name="bias")],
        "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 512])], [w, b])
    path = folder / "big.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    return path


def test_gpu_devices_share_their_weights(vulkan, kiln, tmp_path):
    """Vulkan and CUDA place the weights alike: an artifact holding both stores them once
    (it is smaller than the two single-device builds together by at least the weights),
    and still runs on Vulkan; the CPU packs its own (not shared), and the CPU+Vulkan
    artifact runs both ways."""
    model = big_weight_model(tmp_path)
    weights = (256 * 512 + 512) * 4
    cuda = ("--device", "cuda:sm_80", "--cuda-path", str(CUDA_PATH)) if HAVE_PTXAS \
        else ("--device", "cuda")
    sizes = {}
    for tag, args in {"vulkan": ("--device", "vulkan"), "cuda": cuda,
                      "both": ("--device", "vulkan") + cuda}.items():
        out = tmp_path / f"{tag}.so"
        r = kiln.compile(model, out, args)
        assert r.returncode == 0, r.describe()
        sizes[tag] = out.stat().st_size
    saved = sizes["vulkan"] + sizes["cuda"] - sizes["both"]
    assert saved >= weights, (sizes, weights)
    feeds = {"x": np.random.default_rng(1).standard_normal((4, 256)).astype(np.float32)}
    reference = harness.ort_run(model, feeds)
    both = harness.Compiled(harness.CompileSpec("big", lambda f: model), model,
                            tmp_path / "both.so", None)
    run_matches(kiln, both, feeds, reference, tmp_path / "run", None, NO_CUDA,
                harness.RTOL, harness.ATOL)
    assert opened(inspect(kiln, both.artifact, NO_CUDA)) == ("vulkan", "vulkan")


@pytest.mark.parametrize("args, expect", [
    (("--device", "vulkan", "--device", "vulkan"),
     "--device names vulkan twice ('vulkan', 'vulkan'): an artifact holds one build per "
     "device"),
    (("--device", "cuda:sm_80", "--device", "cuda:sm_90"),
     "--device names cuda twice ('cuda:sm_80', 'cuda:sm_90')"),
    (("--device", "cpu", "--device", "vulkan", "--emit", "llvm"),
     "--emit llvm takes one --device (got cpu, vulkan)"),
    (("--device", "vulkan", "--device", "cuda", "--cpu", "x86-64-v2,x86-64-v3"),
     "several CPUs (--cpu x86-64-v2,x86-64-v3) are variants of the cpu device, not of "
     "--device vulkan, cuda"),
    (("--device", "cpu", "--device", "vulkan", "--target", "arm64-apple-ios",
      "--emit", "obj"),
     "several devices in one artifact are not supported for arm64-apple-ios"),
    (("--device", "cpu", "--device", "tpu"), "tpu"),
])
def test_compile_errors(args, expect, kiln, tmp_path):
    model = models.all_cases()[0].save(tmp_path)
    r = kiln.compile(model, tmp_path / "m.so", args)
    problem = harness.check_clean_failure(r, [expect], " ".join(args))
    if problem:
        fail(problem)


RUN_C = r"""
#include <stdio.h>
#include "kiln/runtime.h"
#include "cnn.h"

/* argv[1]: the device option. Prints where it ran, then the first output. */
int main(int argc, char **argv) {
  static float in[CNN_INPUT0_ELEMENTS], out[CNN_OUTPUT0_ELEMENTS];
  for (int i = 0; i < CNN_INPUT0_ELEMENTS; ++i)
    in[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  kiln_model_options options;
  kiln_model_options_init(&options);
  options.device = argc > 1 ? argv[1] : NULL;
  kiln_model *m = NULL;
  kiln_status s = kiln_model_open_artifact(cnn_artifact(), &options, &m);
  if (s) {
    fprintf(stderr, "error: %s\n", kiln_status_message(s));
    return 1;
  }
  printf("%s\n", kiln_model_device(m));
  int64_t shape[] = CNN_INPUT0_SHAPE;
  kiln_tensor input = {CNN_INPUT0_NAME, KILN_DTYPE_FLOAT32, CNN_INPUT0_RANK, shape, in,
                       sizeof(in)};
  kiln_tensor output = {CNN_OUTPUT0_NAME, KILN_DTYPE_FLOAT32, 0, NULL, out, sizeof(out)};
  s = kiln_model_run(m, &input, 1, &output, 1);
  if (s) {
    fprintf(stderr, "error: %s\n", kiln_status_message(s));
    return 1;
  }
  for (int i = 0; i < CNN_OUTPUT0_ELEMENTS; ++i)
    printf("%.9g\n", out[i]);
  kiln_model_close(m);
  return 0;
}
"""


def test_object_runs_on_each_device(vulkan, kiln, tmp_path):
    """A cpu+vulkan object linked into a program with the runtime's static library opens
    its table on the device the program asks for, and both match onnxruntime."""
    case = CASES["small_cnn"]
    model = case.save(tmp_path)
    r = kiln.compile(model, tmp_path / "cnn.o", [*case.compile_args, "--emit", "obj",
                                                 "--device", "cpu", "--device", "vulkan"])
    assert r.returncode == 0, r.describe()
    (tmp_path / "run.c").write_text(RUN_C)
    link = harness.run_command(
        [llvm_tool("clang"), "-O1", "-o", tmp_path / "run", tmp_path / "run.c",
         tmp_path / "cnn.o", f"-I{harness.REPO / 'runtime' / 'include'}", f"-I{tmp_path}",
         harness.build_dir() / "runtime" / "libkiln_runtime.a", "-lpthread", "-ldl", "-lm"],
        300)
    assert link.returncode == 0, link.describe()
    name = next(iter(case.inputs))
    size = case.inputs[name].size
    image = (((np.arange(size) * 37) % 101) / 50.0 - 1.0).astype(np.float32)
    want = next(iter(harness.ort_run(model, {name: image.reshape(case.inputs[name].shape)})
                     .values())).ravel()
    for device, env, expect in (("cpu", NO_CUDA, "cpu"), ("vulkan", NO_CUDA, "vulkan"),
                                ("auto", NO_CUDA, "vulkan"),
                                ("auto", {**NO_CUDA, **NO_VULKAN}, "cpu")):
        r = env_run(env, [tmp_path / "run", device])
        assert r.returncode == 0, r.describe()
        lines = r.stdout.split()
        assert lines[0] == expect, (device, env, lines[0])
        got = np.array([float(v) for v in lines[1:]], dtype=np.float32)
        problem = harness.compare("output", got, want, case.rtol, case.atol)
        assert problem is None, f"{device}: {problem}"


@pytest.mark.parametrize("devices, has_main", [(("cpu", "vulkan"), True),
                                               (("vulkan", "cuda"), False)])
def test_object_and_header(devices, has_main, kiln, tmp_path):
    """--emit obj: one object with the table, the header listing the devices; `<p>_main`
    exists where a CPU variant does."""
    case = CASES["small_cnn"]
    model = case.save(tmp_path)
    out = tmp_path / "cnn.o"
    args = [*case.compile_args, "--emit", "obj"]
    for d in devices:
        args += ["--device", d]
    r = kiln.compile(model, out, args)
    assert r.returncode == 0, r.describe()
    header = out.with_suffix(".h").read_text()
    assert "#define CNN_NUM_DEVICES 2\n" in header, header
    order = sorted(devices, key=lambda d: d == "cpu")  # other devices first
    for i, d in enumerate(order):
        assert f'#define CNN_DEVICE{i} "{d}"\n' in header, header
    assert ("void cnn_main(" in header) == has_main, header
    nm = harness.run_command([llvm_tool("llvm-nm"), "--defined-only", "--extern-only", out], 60)
    assert nm.returncode == 0, nm.describe()
    defined = set(re.findall(r" [A-Z] (\S+)$", nm.stdout, re.M))
    assert {"cnn_artifact", "cnn_descriptor"} <= defined, nm.stdout
    assert ("cnn_main" in defined) == has_main, nm.stdout
