"""Several CPU variants of one model in one artifact (`kiln compile --cpu A,B,C` or
`--cpu portable`): the runtime picks the first variant the CPU runs, KILN_CPU /
options.cpu_variant force one, KILN_CPU_DISABLE stands in for a CPU without some features
(this machine may have AVX-512: a v4 variant must give way to v3 without it). Every variant
is checked against onnxruntime; .so, .o and .a; AArch64 under qemu with CPUs of each
level."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import harness
import models
# a64_kiln_run, cmake and cross are conftest.py's fixtures.
from conftest import BUILD_TIMEOUT, fail, qemu_cmd, run_ok  # noqa: F401
from test_embedding import llvm_tool

CASE = {c.name: c for c in models.all_cases()}["small_cnn"]
X86_PORTABLE = ["x86-64-v4", "x86-64-v3", "x86-64-v2"]  # the table's order
A64_PORTABLE = ["armv8.6-a+i8mm", "armv8.2-a+dotprod+fp16", "armv8-a"]


def env_run(env: dict, cmd, timeout=harness.RUN_TIMEOUT) -> harness.Result:
    """harness.run_command with variables set (through env(1), as the runner has none)."""
    return harness.run_command(["env", *(f"{k}={v}" for k, v in env.items()), *cmd], timeout)


def inspect(kiln: harness.Kiln, artifact: Path, env: dict | None = None) -> tuple[str, list]:
    """`kiln inspect`: (the variant opened, [(name, note) per table row])."""
    result = env_run(env or {}, [kiln.kiln, "inspect", artifact])
    assert result.returncode == 0, result.describe()
    opened = re.search(r"^variant: (\S+)$", result.stdout, re.M)
    rows = re.findall(r"^variant \d+ cpu (\S+) features=\S+ \((.*)\)$", result.stdout, re.M)
    assert opened and rows, "inspect lists no variants:\n" + result.describe()
    return opened.group(1), rows


def host_best() -> str:
    return "x86-64-v4" if harness.host_has_avx512() else \
        "x86-64-v3" if harness.host_has_avx2() else "x86-64-v2"


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return CASE.save(tmp_path_factory.mktemp("variants-model"))


@pytest.fixture(scope="module")
def portable_so(kiln, model, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("variants-so") / "cnn.so"
    result = kiln.compile(model, out, [*CASE.compile_args, "--cpu", "portable"])
    assert result.returncode == 0, result.describe()
    assert "warning" not in result.stderr, result.describe()
    return out


def run_outputs(kiln, artifact: Path, tmp_path: Path, env: dict, tag: str,
                names: list) -> dict:
    inputs = harness.save_inputs(CASE.inputs, tmp_path / "inputs")
    out_dir = tmp_path / f"out-{tag}"
    result = env_run(env, kiln.run_cmd(artifact, inputs, out_dir, runner="kiln-run"))
    assert result.returncode == 0, f"{tag}: " + result.describe()
    return harness.load_outputs(out_dir, names)


def test_portable_so_lists_and_picks(kiln, portable_so):
    opened, rows = inspect(kiln, portable_so)
    assert [name for name, _ in rows] == X86_PORTABLE, rows
    assert opened == host_best(), f"opened {opened} on a CPU whose best is {host_best()}"
    assert dict(rows)[opened] == "opened", rows


def test_v4_artifact_without_avx512_opens_v3(kiln, portable_so):
    """The issue's test: a CPU without AVX-512 (KILN_CPU_DISABLE takes it away from this
    one) opens the v3 variant, and says why v4 was left."""
    if not harness.host_has_avx2():
        pytest.skip("this CPU has no AVX2: the v3 variant cannot run here")
    opened, rows = inspect(kiln, portable_so, {"KILN_CPU_DISABLE": "avx512*"})
    assert opened == "x86-64-v3", rows
    assert "lacks" in dict(rows)["x86-64-v4"] and "avx512f" in dict(rows)["x86-64-v4"], rows
    opened, rows = inspect(kiln, portable_so, {"KILN_CPU_DISABLE": "avx2"})
    assert opened == "x86-64-v2", rows


def test_every_variant_matches_onnxruntime(kiln, portable_so, model, tmp_path):
    reference = harness.ort_run(model, CASE.inputs)
    runnable = {"x86-64-v4": harness.host_has_avx512(), "x86-64-v3": harness.host_has_avx2(),
                "x86-64-v2": True}
    problems = []
    for variant in X86_PORTABLE:
        if not runnable[variant]:
            continue
        got = run_outputs(kiln, portable_so, tmp_path, {"KILN_CPU": variant}, variant,
                          list(reference))
        problems += [f"{variant}: {p}" for n in reference
                     if (p := harness.compare(n, got[n], reference[n], CASE.rtol, CASE.atol))]
    if problems:
        fail("\n".join(problems))


def test_variant_is_the_single_variant_build(kiln, portable_so, model, tmp_path):
    """The v3 variant of the portable artifact is the code `--cpu x86-64-v3` builds: the
    same outputs, bit for bit."""
    if not harness.host_has_avx2():
        pytest.skip("this CPU has no AVX2")
    single = tmp_path / "v3.so"
    result = kiln.compile(model, single, [*CASE.compile_args, "--cpu", "x86-64-v3"])
    assert result.returncode == 0, result.describe()
    names = list(harness.ort_run(model, CASE.inputs))
    a = run_outputs(kiln, portable_so, tmp_path, {"KILN_CPU": "x86-64-v3"}, "portable", names)
    b = run_outputs(kiln, single, tmp_path, {}, "single", names)
    for name in a:
        assert np.array_equal(a[name], b[name]), f"{name} differs between the builds"


@pytest.mark.parametrize("env, expect", [
    ({"KILN_CPU": "x86-64-v4", "KILN_CPU_DISABLE": "avx512f"},
     "cannot run variant 'x86-64-v4' of model 'cnn' (chosen by KILN_CPU): this CPU lacks "
     "the feature the model was compiled for: avx512f"),
    ({"KILN_CPU": "x86-64-v9"},
     "model 'cnn' has no CPU variant 'x86-64-v9' (chosen by KILN_CPU); its variants: "
     "x86-64-v4, x86-64-v3, x86-64-v2"),
    ({"KILN_CPU_DISABLE": "sse4.2"}, "no variant of model 'cnn' runs on this CPU (x86-64-v4: "),
])
def test_forced_or_impossible_variant_is_a_clear_error(kiln, portable_so, env, expect):
    result = env_run(env, [kiln.kiln, "inspect", portable_so])
    problem = harness.check_clean_failure(result, [expect], "opening a variant")
    if problem:
        fail(problem)


CHOOSE_C = r"""
#include <stdio.h>
#include <string.h>
#include "kiln/runtime.h"
#include "cnn.h"
#include "libcnn2.h"

/* argv[1]: artifact | descriptor | main; argv[2]: options.cpu_variant or "-".
 * Prints the variant opened and the outputs of a run on a fixed input. */
int main(int argc, char **argv) {
  static float in[CNN_INPUT0_ELEMENTS], out[CNN_OUTPUT0_ELEMENTS];
  for (int i = 0; i < CNN_INPUT0_ELEMENTS; ++i)
    in[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  if (argc > 1 && strcmp(argv[1], "main") == 0) {
    int32_t status = -1;
    cnn_main(in, out, &status);
    printf("variant=%s\n", cnn_descriptor()->cpu);
    for (int i = 0; i < CNN_OUTPUT0_ELEMENTS; ++i)
      printf("%.9g\n", out[i]);
    return status;
  }
  kiln_model_options options;
  kiln_model_options_init(&options);
  if (argc > 2 && strcmp(argv[2], "-") != 0)
    options.cpu_variant = argv[2];
  kiln_model *m = NULL, *other = NULL;
  kiln_status s = argc > 1 && strcmp(argv[1], "descriptor") == 0
                      ? kiln_model_open_descriptor(cnn_descriptor(), &options, &m)
                      : kiln_model_open_artifact(cnn_artifact(), &options, &m);
  if (s) {
    fprintf(stderr, "error: %s\n", kiln_status_message(s));
    return 1;
  }
  /* A second multi-variant model in the same program. */
  s = kiln_model_open_artifact(cnn2_artifact(), NULL, &other);
  if (s) {
    fprintf(stderr, "error: %s\n", kiln_status_message(s));
    return 1;
  }
  kiln_model_close(other);
  printf("variant=%s\n", kiln_model_variant(m)[0] ? kiln_model_variant(m)
                                                   : kiln_model_get_descriptor(m)->cpu);
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


@pytest.fixture(scope="module")
def choose_program(kiln, model, tmp_path_factory) -> Path:
    """A C program linking two portable models (an object and an archive) and the runtime."""
    if len(CASE.inputs) != 1:
        pytest.fail("small_cnn is expected to have one input")
    folder = tmp_path_factory.mktemp("variants-static")
    for name, emit, out in (("cnn", "obj", "cnn.o"), ("cnn2", "static-lib", "libcnn2.a")):
        result = kiln.compile(model, folder / out, [*CASE.compile_args, "--cpu", "portable",
                                                    "--emit", emit, "--name", name])
        assert result.returncode == 0, result.describe()
    header = (folder / "cnn.h").read_text()
    assert "cnn_artifact(void);" in header and "CNN_NUM_CPU_VARIANTS 3" in header, header
    (folder / "choose.c").write_text(CHOOSE_C)
    build = harness.build_dir()
    run_ok([llvm_tool("clang"), "-O1", "-o", folder / "choose", folder / "choose.c",
            folder / "cnn.o", folder / "libcnn2.a", f"-I{harness.REPO / 'runtime' / 'include'}",
            f"-I{folder}", build / "runtime" / "libkiln_runtime.a", "-lpthread", "-ldl", "-lm"],
           "linking two multi-variant models into one program")
    defined = run_ok([llvm_tool("llvm-nm"), "--defined-only", "--extern-only",
                      "--format=just-symbols", folder / "cnn.o"], "llvm-nm").stdout.split()
    stray = [s for s in defined if not s.startswith("cnn_")]
    assert not stray, f"symbols without the model's prefix: {stray}"
    return folder / "choose"


def choose(program: Path, env: dict, *args) -> tuple[str, np.ndarray]:
    result = env_run(env, [program, *args])
    assert result.returncode == 0, result.describe()
    lines = result.stdout.split()
    return lines[0].removeprefix("variant="), np.array([float(v) for v in lines[1:]],
                                                        dtype=np.float32)


@pytest.mark.parametrize("route", ["artifact", "descriptor", "main"])
def test_static_object_picks_like_the_so(route, choose_program, model):
    name = next(iter(CASE.inputs))
    image = (((np.arange(CASE.inputs[name].size) * 37) % 101) / 50.0 - 1.0).astype(np.float32)
    want = next(iter(harness.ort_run(model, {name: image.reshape(CASE.inputs[name].shape)})
                     .values())).ravel()
    variant, got = choose(choose_program, {}, route)
    assert variant == host_best(), f"{route}: opened {variant}"
    problem = harness.compare("output", got, want, CASE.rtol, CASE.atol)
    assert problem is None, f"{route}: {problem}"
    if harness.host_has_avx2():
        variant, masked = choose(choose_program, {"KILN_CPU_DISABLE": "avx512*"}, route)
        assert variant == "x86-64-v3", f"{route} without AVX-512: opened {variant}"
        assert harness.compare("output", masked, want, CASE.rtol, CASE.atol) is None


def test_static_object_cpu_variant_option(choose_program):
    variant, _ = choose(choose_program, {}, "artifact", "x86-64-v2")
    assert variant == "x86-64-v2"
    result = harness.run_command([choose_program, "artifact", "pentium"], harness.RUN_TIMEOUT)
    assert result.returncode == 1 and "has no CPU variant 'pentium' (chosen by " \
        "options.cpu_variant); its variants: x86-64-v4, x86-64-v3, x86-64-v2" in result.stderr, \
        result.describe()


@pytest.mark.parametrize("args, expect", [
    (["--cpu", "x86-64-v3,x86-64-v3"], "--cpu names 'x86-64-v3' twice"),
    (["--cpu", "x86-64-v3,,x86-64-v4"], "has an empty CPU name"),
    (["--cpu", "portable", "--emit", "llvm"], "--emit llvm takes one --cpu"),
    (["--cpu", "portable", "--device", "vulkan"], "are variants of the cpu device"),
    (["--cpu", "portable", "--target", "riscv64-linux-gnu"],
     "--cpu portable has no CPU set for riscv64"),
    (["--cpu", "armv8.2-a+nosuchext", "--target", "aarch64-linux-gnu"],
     "unknown AArch64 extension 'nosuchext'"),
    (["--cpu", "x86-64-v3,nosuchcpu"], "unknown CPU 'nosuchcpu'"),
    (["--cpu", "portable", "--target", "arm64-apple-ios", "--emit", "obj"],
     "several CPU variants in one artifact are not supported for arm64-apple-ios"),
])
def test_cpu_list_errors(args, expect, kiln, model, tmp_path):
    result = kiln.compile(model, tmp_path / "m.so", [*CASE.compile_args, *args])
    problem = harness.check_clean_failure(result, [expect], "kiln compile " + " ".join(args))
    if problem:
        fail(problem)


def test_sizes_grow_by_variant(kiln, model, portable_so, tmp_path):
    """Each variant brings its own code (small_cnn's constants, all under 4 KB, stay in
    it): the portable .so is at most the three single builds together. Shared weights:
    test_variants_share_identical_weights."""
    singles = 0
    for cpu in X86_PORTABLE:
        out = tmp_path / f"{cpu}.so"
        result = kiln.compile(model, out, [*CASE.compile_args, "--cpu", cpu])
        assert result.returncode == 0, result.describe()
        singles += out.stat().st_size
    size = portable_so.stat().st_size
    assert size <= singles, f"portable {size} bytes > the three single builds {singles}"
    assert size > singles // 2, f"portable {size} bytes: are all three variants in it?"


@pytest.mark.parametrize("qemu_cpu, expect", [("cortex-a53", "armv8-a"),
                                              ("cortex-a76", "armv8.2-a+dotprod+fp16"),
                                              ("max", "armv8.6-a+i8mm")])
def test_aarch64_portable_under_qemu(qemu_cpu, expect, a64_kiln_run, kiln, model, tmp_path):
    """AT_HWCAP/AT_HWCAP2 checks: qemu's CPU models of each level open their variant, and
    it computes what onnxruntime does."""
    artifact = tmp_path / "a64.so"
    result = kiln.compile(model, artifact, [*CASE.compile_args, "--cpu", "portable",
                                            "--target", "aarch64-linux-gnu"])
    assert result.returncode == 0, result.describe()
    env = {"QEMU_CPU": qemu_cpu}
    shown = env_run(env, qemu_cmd() + [a64_kiln_run, artifact, "--inspect", "--no-ready-ns"])
    assert shown.returncode == 0, shown.describe()
    rows = re.findall(r"^variant \d+ cpu (\S+) ", shown.stdout, re.M)
    assert rows == A64_PORTABLE, shown.describe()
    opened = re.search(r"^variant: (\S+)$", shown.stdout, re.M)
    assert opened and opened.group(1) == expect, f"{qemu_cpu}:\n" + shown.describe()
    inputs = harness.save_inputs(CASE.inputs, tmp_path / "inputs")
    cmd = qemu_cmd() + [a64_kiln_run, artifact, "--output-dir", tmp_path / "out"]
    for name, path in inputs.items():
        cmd += ["--input", f"{name}={path}"]
    ran = env_run(env, cmd)
    assert ran.returncode == 0, ran.describe()
    reference = harness.ort_run(model, CASE.inputs)
    got = harness.load_outputs(tmp_path / "out", list(reference))
    problems = [p for n in reference
                if (p := harness.compare(n, got[n], reference[n], CASE.rtol, CASE.atol))]
    if problems:
        fail(f"{expect} under qemu {qemu_cpu}:\n" + "\n".join(problems))


def test_runtime_without_tables_opens_the_portable_variant(portable_so):
    """A runtime from before variant tables looks up only kiln_model_descriptor: in a
    multi-variant .so it is the most portable variant (x86-64-v2), under the model's name."""
    import ctypes

    class Head(ctypes.Structure):  # the fields every ABI version starts with, then v2's
        _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p),
                    ("producer", ctypes.c_char_p), ("target_triple", ctypes.c_char_p),
                    ("cpu", ctypes.c_char_p), ("cpu_features", ctypes.c_char_p)]

    library = ctypes.CDLL(str(portable_so))
    library.kiln_model_descriptor.restype = ctypes.POINTER(Head)
    head = library.kiln_model_descriptor().contents
    assert (head.abi_version, head.name, head.cpu) == (3, b"cnn", b"x86-64-v2")
    assert hasattr(library, "kiln_artifact_descriptor")


# --- Weights shared between the variants -------------------------------------------------

def shared_weights_model(folder: Path) -> tuple[Path, dict]:
    """A model whose large constants are packed per kernel or left as they are: an embedding
    table (Gather: the same bytes in every variant), a MatMul and a 3x3 Conv (Winograd) and
    1x1 Conv whose filters are packed in column panels, and one constant twice under two
    names (one copy even in a single-variant build)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(20)

    def init(name, shape, scale=0.5):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32),
                                       name)

    twice = (rng.standard_normal([16, 256]) * 0.1).astype(np.float32)
    inits = [init("table", [500, 64]), init("mm", [64, 256], 0.1), init("w3", [64, 32, 3, 3], 0.1),
             init("w1", [64, 64, 1, 1], 0.1), numpy_helper.from_array(twice, "c1"),
             numpy_helper.from_array(twice.copy(), "c2")]
    nodes = [helper.make_node("Gather", ["table", "ids"], ["emb"]),
             helper.make_node("MatMul", ["emb", "mm"], ["h"]),
             helper.make_node("Add", ["h", "c1"], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h2"]),
             helper.make_node("Add", ["h2", "c2"], ["seq"]),
             helper.make_node("Conv", ["image", "w3"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Conv", ["r", "w1"], ["feat"])]
    graph = helper.make_graph(
        nodes, "shared_weights",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 16]),
         helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 32, 8, 8])],
        [helper.make_tensor_value_info("seq", TensorProto.FLOAT, [1, 16, 256]),
         helper.make_tensor_value_info("feat", TensorProto.FLOAT, [1, 64, 8, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = folder / "shared.onnx"
    onnx.save(model, path)
    feeds = {"ids": rng.integers(0, 500, [1, 16]).astype(np.int64),
             "image": rng.standard_normal([1, 32, 8, 8]).astype(np.float32)}
    return path, feeds


def weight_blobs(so: Path) -> list[bytes]:
    """The bytes of each external weight constant (the local `<prefix>_kw<N>` symbols) of a
    shared library, read through its ELF section and symbol tables."""
    import struct
    data = so.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2, f"{so}: not a 64-bit ELF file"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    blobs = []
    for _, sh_type, _, _, offset, size, link, _, _, entsize in sections:
        if sh_type != 2:  # SHT_SYMTAB
            continue
        strtab = sections[link]
        for at in range(offset, offset + size, entsize):
            name, info, _, shndx, value, sym_size = struct.unpack_from("<IBBHQQ", data, at)
            start = strtab[4] + name
            symbol = data[start:data.index(b"\0", start)].decode()
            if not re.fullmatch(r".+_kw\d+", symbol) or info & 0xF != 1:  # STT_OBJECT
                continue
            _, _, _, addr, sec_offset, _, _, _, _, _ = sections[shndx]
            begin = sec_offset + value - addr
            blobs.append(data[begin:begin + sym_size])
    assert blobs, f"{so}: no external weight symbols (*_kw<N>)"
    return blobs


def test_variants_share_identical_weights(kiln, tmp_path):
    """A portable artifact holds each distinct weight constant once: it is smaller than the
    three single-variant builds together by at least the bytes they hold in common (computed
    from their weight symbols), holds exactly the union of their constants, and every
    variant still matches onnxruntime."""
    model, feeds = shared_weights_model(tmp_path)
    singles, single_blobs = 0, {}
    for cpu in X86_PORTABLE:
        out = tmp_path / f"single-{cpu}.so"
        result = kiln.compile(model, out, ["--cpu", cpu])
        assert result.returncode == 0, result.describe()
        singles += out.stat().st_size
        single_blobs[cpu] = weight_blobs(out)
        # One copy of equal bytes within one build too (c1 and c2).
        count, unique = len(single_blobs[cpu]), len(set(single_blobs[cpu]))
        assert count == unique, f"{cpu}: {count - unique} weight constants stored twice"
    in_singles = sum(len(b) for blobs in single_blobs.values() for b in blobs)
    distinct = {b for blobs in single_blobs.values() for b in blobs}
    shareable = in_singles - sum(len(b) for b in distinct)
    # At least the embedding table, which no kernel packs.
    table = 500 * 64 * 4
    assert shareable >= 2 * table, f"only {shareable} bytes in common between the variants"

    portable = tmp_path / "shared.so"
    result = kiln.compile(model, portable, ["--cpu", "portable"])
    assert result.returncode == 0, result.describe()
    assert "warning" not in result.stderr, result.describe()
    blobs = weight_blobs(portable)
    count, unique = len(blobs), len(set(blobs))
    assert count == unique, f"the portable artifact stores {count - unique} constants twice"
    same = set(blobs) == distinct
    assert same, "the portable artifact's weights are not the variants'"
    size = portable.stat().st_size
    assert size <= singles - shareable, (
        f"portable {size} bytes; the three single builds {singles} bytes, of which "
        f"{shareable} are weights they have in common")

    reference = harness.ort_run(model, feeds)
    inputs = harness.save_inputs(feeds, tmp_path / "inputs")
    runnable = {"x86-64-v4": harness.host_has_avx512(), "x86-64-v3": harness.host_has_avx2(),
                "x86-64-v2": True}
    problems = []
    for variant in X86_PORTABLE:
        if not runnable[variant]:
            continue
        out_dir = tmp_path / f"out-{variant}"
        run = env_run({"KILN_CPU": variant},
                      kiln.run_cmd(portable, inputs, out_dir, runner="kiln-run"))
        assert run.returncode == 0, f"{variant}: " + run.describe()
        got = harness.load_outputs(out_dir, list(reference))
        problems += [f"{variant}: {p}" for n in reference
                     if (p := harness.compare(n, got[n], reference[n]))]
    if problems:
        fail("\n".join(problems))


def test_shared_weights_object_defines_only_the_prefix(kiln, tmp_path):
    """The shared weights' symbols are local to a portable object, as one variant's are."""
    model, _ = shared_weights_model(tmp_path)
    out = tmp_path / "sw.o"
    result = kiln.compile(model, out, ["--cpu", "portable", "--emit", "obj"])
    assert result.returncode == 0, result.describe()
    defined = run_ok([llvm_tool("llvm-nm"), "--defined-only", "--extern-only",
                      "--format=just-symbols", out], "llvm-nm").stdout.split()
    stray = [s for s in defined if not s.startswith("sw_") or "_kw" in s]
    assert not stray, f"global symbols other than the model's entry points: {stray}"
    local = run_ok([llvm_tool("llvm-nm"), "--defined-only", out], "llvm-nm").stdout
    assert re.search(r" r sw_kw\d+$", local, re.M), "no local shared weight symbols:\n" + local
