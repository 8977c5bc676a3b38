"""Cross-compiling and embedding (docs/embedding.md):

- `--target aarch64-linux-gnu` shared libraries, run under qemu-aarch64 by a cross-built
  kiln-run and compared with onnxruntime on the host;
- `--emit obj` / `--emit static-lib` for the host, AArch64 Linux, Android and iOS, checked
  with LLVM's object tools (format, architecture, exported and undefined symbols, NEON) and
  their generated header checked by compiling it for the target;
- the CMake package: kiln_target_triple() for Android/iOS/Linux toolchains, and the example
  project examples/embed (kiln_add_model) configured, built and run for the host, cross-built
  for AArch64 and run under qemu, rebuilt when its model changes, and built against an
  installed kiln; its multi_model program holds three models (one twice) in one executable.

The AArch64 tests need Debian's gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu,
libc6-dev-arm64-cross, libgcc-12-dev-arm64-cross and qemu-user (scripts/setup.sh installs
them). Without them those tests are skipped, saying what is missing, except in CI
(CI=true or KILN_REQUIRE_CROSS=1), where they fail.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import harness
import models
# The AArch64 cross tools, the cross-built kiln-run and run_ok are shared with
# test_quantized.py's AArch64 cases (conftest.py).
from conftest import (BUILD_TIMEOUT, CROSS_SYSROOT, TOOLCHAIN, cross_problem,  # noqa: F401
                      cross_required, fail, qemu_cmd, run_ok)

REPO = harness.REPO
EXAMPLE = REPO / "examples" / "embed"


#===----------------------------------------------------------------------===//
# Tools
#===----------------------------------------------------------------------===//


def llvm_tool(name: str) -> str:
    """LLVM 22's `name` (llvm-nm, llvm-readobj, ...)."""
    for candidate in (f"/usr/lib/llvm-22/bin/{name}", shutil.which(f"{name}-22"),
                      shutil.which(name)):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail(f"{name} (LLVM 22) not found: install llvm-22 (scripts/setup.sh)",
                pytrace=False)


#===----------------------------------------------------------------------===//
# AArch64 Linux shared libraries under qemu
#===----------------------------------------------------------------------===//

A64_CASES = [
    "small_cnn", "small_attention", "conv_depthwise", "conv_group", "conv_bias_strides_pads",
    "gemm_transB_alpha_beta", "matmul_batched", "layernorm_last_axis", "softmax_last_axis",
    "gather_embedding_runtime_indices", "maxpool_k3_s2", "avgpool_count_include_pad", "erf",
    "tanh", "sigmoid", "multiple_outputs", "cast_f32_to_i64", "split_equal",
    "transpose_nchw_to_nhwc", "slice_negative_step_reverse",
]
ALL_CASES = {c.name: c for c in models.all_cases()}
A64_SPECS = {
    name: harness.register(harness.CompileSpec(
        f"a64-{name}", ALL_CASES[name].save,
        ALL_CASES[name].compile_args + ("--target", "aarch64-linux-gnu")))
    for name in A64_CASES}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.compiles(A64_SPECS[n].key)) for n in A64_CASES])
def test_aarch64_so_under_qemu(name, a64_kiln_run, compile_cache, tmp_path):
    """`kiln compile --target aarch64-linux-gnu` -> .so; a cross-built kiln-run runs it under
    qemu; the outputs match onnxruntime's on the host."""
    case = ALL_CASES[name]
    compiled = compile_cache.get(A64_SPECS[name])
    if not compiled.ok:
        fail(compiled.failure())
    reference = harness.ort_run(compiled.model, case.inputs)
    inputs = harness.save_inputs(case.inputs, tmp_path / "inputs")
    out_dir = tmp_path / "outputs"
    cmd = qemu_cmd() + [a64_kiln_run, compiled.artifact, "--output-dir", out_dir]
    for input_name, path in inputs.items():
        cmd += ["--input", f"{input_name}={path}"]
    run_ok(cmd, f"{name}: kiln-run under qemu-aarch64", harness.RUN_TIMEOUT)
    got = harness.load_outputs(out_dir, list(reference))
    problems = [p for n in reference
                if (p := harness.compare(n, got[n], reference[n], case.rtol, case.atol))]
    if problems:
        fail(f"{name} on aarch64 (qemu):\n" + "\n".join(problems))


def _reference_model(name):
    def prepare(folder):
        path = harness.models_dir() / f"{name}.onnx"
        if not path.is_file():
            raise FileNotFoundError(path)
        return path
    return prepare


A64_SQUEEZENET = harness.register(harness.CompileSpec(
    "a64-model-squeezenet1_1", _reference_model("squeezenet1_1"),
    ("--target", "aarch64-linux-gnu"), timeout=harness.COMPILE_TIMEOUT_LARGE))


@pytest.mark.models
@pytest.mark.compiles(A64_SQUEEZENET.key)
def test_aarch64_reference_model_under_qemu(models_dir, a64_kiln_run, compile_cache, tmp_path):
    """squeezenet1_1 (reference model) for aarch64, run under qemu, against onnxruntime."""
    compiled = compile_cache.get(A64_SQUEEZENET)
    if not compiled.ok:
        fail(compiled.failure())
    feeds = {"input": np.random.default_rng(2024).standard_normal((1, 3, 224, 224))
             .astype(np.float32)}
    reference = harness.ort_run(compiled.model, feeds)
    inputs = harness.save_inputs(feeds, tmp_path / "inputs")
    out_dir = tmp_path / "outputs"
    cmd = qemu_cmd() + [a64_kiln_run, compiled.artifact, "--output-dir", out_dir,
                        "--input", f"input={inputs['input']}"]
    run_ok(cmd, "squeezenet1_1 under qemu-aarch64", 3 * harness.RUN_TIMEOUT)
    got = harness.load_outputs(out_dir, list(reference))
    problems = [p for n in reference if (p := harness.compare(n, got[n], reference[n]))]
    if problems:
        fail("squeezenet1_1 on aarch64 (qemu):\n" + "\n".join(problems))


@pytest.mark.compiles(A64_SPECS["small_cnn"].key)
def test_aarch64_so_format_and_neon(cross, compile_cache):
    compiled = compile_cache.get(A64_SPECS["small_cnn"])
    if not compiled.ok:
        fail(compiled.failure())
    headers = run_ok([llvm_tool("llvm-readobj"), "--file-headers", compiled.artifact],
                     "llvm-readobj").stdout
    assert "Format: elf64-littleaarch64" in headers and "Type: SharedObject" in headers, headers
    exported = set(run_ok([llvm_tool("llvm-nm"), "-D", "--defined-only", "--format=just-symbols",
                           compiled.artifact], "llvm-nm").stdout.split())
    assert exported == {"kiln_model_descriptor", "model_descriptor"}, exported
    assert neon_instructions(compiled.artifact) > 0, "no NEON fmla in the aarch64 .so"


#===----------------------------------------------------------------------===//
# Objects and static libraries for every target
#===----------------------------------------------------------------------===//

# target triple (None: the host) -> (readobj Format line, is Mach-O, NEON expected)
OBJECT_TARGETS = {
    "host": (None, "elf64-x86-64", False, False),
    "aarch64-linux": ("aarch64-linux-gnu", "elf64-littleaarch64", False, True),
    "android": ("aarch64-linux-android24", "elf64-littleaarch64", False, True),
    "ios": ("arm64-apple-ios", "Mach-O arm64", True, True),
}

# Undefined symbols a model object may have: C library and libm functions (and what the
# platforms' compilers call for them), plus the kiln runtime.
_MATH = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sqrt", "cbrt", "sin",
         "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
         "atanh", "erf", "erfc", "floor", "ceil", "round", "roundeven", "trunc", "rint",
         "nearbyint", "fmod", "remainder", "fabs", "fmin", "fmax", "fma", "ldexp", "frexp",
         "modf", "lround", "lrint", "copysign", "hypot"]
ALLOWED_UNDEFINED = {f"{m}{s}" for m in _MATH for s in ("", "f", "l")} | {
    "memcpy", "memmove", "memset", "memcmp", "bzero", "memset_pattern16", "malloc", "free",
    "calloc", "realloc", "aligned_alloc", "posix_memalign", "abort", "__chkstk_darwin",
    "__stack_chk_fail", "__stack_chk_guard", "__bzero"}


def neon_instructions(path: Path) -> int:
    """fmla on 4 x f32 lanes, in LLVM's (fmla v0.4s, ...) or Apple's (fmla.4s v0, ...) syntax."""
    text = run_ok([llvm_tool("llvm-objdump"), "-d", path], "llvm-objdump -d").stdout
    return len(re.findall(r"\bfmla(\.4s\s+v\d+|\s+v\d+\.4s)", text))


def symbols(path: Path, macho: bool, which: str) -> set[str]:
    """Global defined (`which` = "defined") or undefined symbols, Mach-O's '_' removed."""
    flag = "--defined-only" if which == "defined" else "--undefined-only"
    out = run_ok([llvm_tool("llvm-nm"), "--extern-only", flag, "--format=just-symbols", path],
                 "llvm-nm").stdout.split()
    names = {s for s in out if not s.endswith(":") and s}
    return {s[1:] if macho and s.startswith("_") else s for s in names}


@pytest.fixture(scope="session")
def example_models(tmp_path_factory) -> Path:
    """classifier.onnx and regressor.onnx from examples/embed/make_models.py (seed 0)."""
    folder = tmp_path_factory.mktemp("example-models")
    run_ok([sys.executable, EXAMPLE / "make_models.py", "--out", folder], "make_models.py")
    return folder


def header_check_source(model_path: Path, prefix: str) -> str:
    """A C file asserting at compile time that the header's constants describe the model."""
    P = prefix.upper()
    graph = onnx.load(str(model_path), load_external_data=False).graph
    lines = [f'#include "{prefix}.h"', "#include <stddef.h>",
             f"_Static_assert({P}_NUM_INPUTS == {len(graph.input)}, \"inputs\");",
             f"_Static_assert({P}_NUM_OUTPUTS == {len(graph.output)}, \"outputs\");"]
    for kind, values in (("INPUT", graph.input), ("OUTPUT", graph.output)):
        for i, value in enumerate(values):
            dims = [d.dim_value for d in value.type.tensor_type.shape.dim]
            m = f"{P}_{kind}{i}"
            elems = int(np.prod(dims)) if dims else 1
            lines += [
                f"_Static_assert({m}_DTYPE == {value.type.tensor_type.elem_type}, \"dtype\");",
                f"_Static_assert({m}_RANK == {len(dims)}, \"rank\");",
                f"_Static_assert({m}_ELEMENTS == {elems}, \"elements\");",
                f"_Static_assert({m}_BYTES == {elems} * sizeof({m}_CTYPE), \"bytes\");",
                f"const long long shape_{kind}{i}[] = {m}_SHAPE;",
                f"_Static_assert(sizeof shape_{kind}{i} == {max(len(dims), 1)} * 8, \"shape\");",
                f"const char name_{kind}{i}[] = {m}_NAME;",
                f"_Static_assert(sizeof name_{kind}{i} == {len(value.name) + 1}, \"name\");",
            ]
    args = ", ".join(["(const void *)0"] * len(graph.input) + ["(void *)0"] * len(graph.output))
    lines += [f"void call_it(void) {{ int32_t s; {prefix}_main({args}, &s); }}",
              f"const kiln_model_desc *get_it(void) {{ return {prefix}_descriptor(); }}"]
    return "\n".join(lines) + "\n"


def compile_object(kiln, model: Path, out: Path, triple: str | None, emit: str,
                   name: str = "clf") -> None:
    args = ["--emit", emit, "--name", name] + (["--target", triple] if triple else [])
    result = kiln.compile(model, out, args)
    if result.returncode != 0 or not out.is_file():
        fail(f"kiln compile --emit {emit} for {triple or 'the host'} failed\n" + result.describe())


@pytest.fixture(scope="session")
def host_object(kiln, example_models, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("host-object") / "clf.o"
    compile_object(kiln, example_models / "classifier.onnx", out, None, "obj")
    return out


@pytest.mark.parametrize("target", list(OBJECT_TARGETS))
@pytest.mark.parametrize("emit", ["obj", "static-lib"])
def test_object_for_target(target, emit, kiln, example_models, host_object, tmp_path):
    triple, fmt, macho, neon = OBJECT_TARGETS[target]
    model = example_models / "classifier.onnx"
    out = tmp_path / ("clf.o" if emit == "obj" else "libclf.a")
    compile_object(kiln, model, out, triple, emit)

    if emit == "static-lib":
        members = run_ok([llvm_tool("llvm-ar"), "t", out], "llvm-ar t").stdout.split()
        assert len(members) == 1 and members[0].endswith(".o"), members
    headers = run_ok([llvm_tool("llvm-readobj"), "--file-headers", out], "llvm-readobj").stdout
    assert f"Format: {fmt}" in headers, f"expected format {fmt}:\n{headers}"
    if triple:
        assert "Arch: aarch64" in headers, headers
    if macho:
        private = run_ok([llvm_tool("llvm-objdump"), "--macho", "--private-headers", out],
                         "llvm-objdump --private-headers").stdout
        assert re.search(r"platform ios\b", private), "no LC_BUILD_VERSION for iOS:\n" + private

    # The same model symbols as the host object, and only prefixed ones.
    defined = symbols(out, macho, "defined")
    host_defined = symbols(host_object, False, "defined")
    assert {"clf_main", "clf_descriptor"} <= host_defined, host_defined
    assert all(s.startswith("clf_") for s in host_defined), \
        f"the host object defines unprefixed symbols: {sorted(host_defined)}"
    assert defined == host_defined, f"{target}: exports {sorted(defined)}, host {sorted(host_defined)}"
    undefined = symbols(out, macho, "undefined")
    unexpected = {s for s in undefined if s not in ALLOWED_UNDEFINED and not s.startswith("kiln_")}
    assert not unexpected, f"{target}: undefined symbols beyond libc/libm and the runtime: " \
                           f"{sorted(unexpected)}"
    if neon:
        assert neon_instructions(out) > 0, f"{target}: no NEON fmla .4s in the disassembly"

    # The header describes the model and compiles for the target.
    header = out.with_suffix(".h")  # clf.h, libclf.h
    assert header.is_file(), f"no header {header}"
    include = tmp_path / "include"
    include.mkdir()
    (include / "clf.h").write_text(header.read_text())
    check = tmp_path / "check_header.c"
    check.write_text(header_check_source(model, "clf"))
    clang = llvm_tool("clang")
    run_ok([clang, f"--target={triple or 'x86_64-linux-gnu'}", "-std=c11", "-ffreestanding",
            "-fsyntax-only", "-Wall", "-Werror", "-I", include, "-I",
            REPO / "runtime" / "include", check],
           f"compiling the generated header for {target}")


def test_shared_library_exports_loader_symbol(kiln, example_models, tmp_path, host_object):
    """A .so exports kiln_model_descriptor (the loader's entry) and the prefixed descriptor;
    an object never defines the fixed name, so objects of several models do not clash."""
    so = tmp_path / "clf.so"
    compile_object(kiln, example_models / "classifier.onnx", so, None, "so")
    exported = set(run_ok([llvm_tool("llvm-nm"), "-D", "--defined-only", "--format=just-symbols",
                           so], "llvm-nm -D").stdout.split())
    assert exported == {"kiln_model_descriptor", "clf_descriptor"}, exported
    assert "kiln_model_descriptor" not in symbols(host_object, False, "defined")


def test_same_name_twice_clashes(kiln, example_models, tmp_path):
    """Control for the several-models tests: two objects with one prefix do clash at link time
    (so a clean link of differently named models means something), two names do not."""
    model = example_models / "classifier.onnx"
    for name in ("one", "two"):
        compile_object(kiln, model, tmp_path / f"{name}.o", None, "obj", name)
    compile_object(kiln, model, tmp_path / "one_again.o", None, "obj", "one")
    main = tmp_path / "main.c"
    main.write_text("const void *one_descriptor(void); const void *two_descriptor(void);\n"
                    "int main(void) { return one_descriptor() == two_descriptor(); }\n")
    clang = llvm_tool("clang")
    ok = harness.run_command([clang, "-fuse-ld=lld", main, tmp_path / "one.o", tmp_path / "two.o",
                              "-lm", "-o", tmp_path / "ok"], 120)
    assert ok.returncode == 0, "two models under two names failed to link\n" + ok.describe()
    clash = harness.run_command([clang, "-fuse-ld=lld", main, tmp_path / "one.o",
                                 tmp_path / "one_again.o", tmp_path / "two.o", "-lm",
                                 "-o", tmp_path / "clash"], 120)
    assert clash.returncode != 0 and "duplicate symbol" in clash.stderr, clash.describe()


@pytest.mark.parametrize("args, expect", [
    (["--target", "nonsense-xyz-unknown"], ["target"]),
    (["--target", "arm64-apple-ios"], ["--emit obj"]),  # a .so for iOS
    (["--target", "aarch64-linux-android24"], ["--emit obj"]),  # a .so without the NDK
    (["--target", "aarch64-linux-gnu", "--cpu", "native"], ["native"]),
    (["--target", "aarch64-linux-android24", "--cpu", "znver4"], ["unknown cpu"]),
    (["--target", "arm64-apple-ios", "--emit", "dylib"], ["--emit"]),
])
def test_target_errors(args, expect, kiln, example_models, tmp_path):
    result = kiln.compile(example_models / "classifier.onnx", tmp_path / "out.so", args,
                          timeout=harness.ERROR_TIMEOUT)
    problem = harness.check_clean_failure(result, expect, " ".join(args))
    if problem:
        fail(problem)


#===----------------------------------------------------------------------===//
# kiln_target_triple(): the toolchain -> kiln's --target
#===----------------------------------------------------------------------===//

TRIPLE_CASES = {
    "native": ({}, ""),
    "linux-aarch64": ({"CMAKE_CROSSCOMPILING": "TRUE", "CMAKE_SYSTEM_NAME": "Linux",
                       "CMAKE_SYSTEM_PROCESSOR": "aarch64"}, "aarch64-linux-gnu"),
    "android-arm64-v8a": ({"CMAKE_CROSSCOMPILING": "TRUE", "CMAKE_SYSTEM_NAME": "Android",
                           "CMAKE_SYSTEM_PROCESSOR": "aarch64", "ANDROID_ABI": "arm64-v8a",
                           "ANDROID_PLATFORM_LEVEL": "24"}, "aarch64-linux-android24"),
    "android-cmake-native": ({"CMAKE_CROSSCOMPILING": "TRUE", "CMAKE_SYSTEM_NAME": "Android",
                              "CMAKE_ANDROID_ARCH_ABI": "arm64-v8a", "CMAKE_SYSTEM_VERSION": "29"},
                             "aarch64-linux-android29"),
    "ios-arm64": ({"CMAKE_CROSSCOMPILING": "TRUE", "CMAKE_SYSTEM_NAME": "iOS",
                   "CMAKE_OSX_ARCHITECTURES": "arm64", "CMAKE_OSX_DEPLOYMENT_TARGET": "14.0",
                   "CMAKE_OSX_SYSROOT": "iphoneos"}, "arm64-apple-ios14.0"),
    "ios-simulator": ({"CMAKE_CROSSCOMPILING": "TRUE", "CMAKE_SYSTEM_NAME": "iOS",
                       "CMAKE_OSX_ARCHITECTURES": "arm64", "CMAKE_OSX_DEPLOYMENT_TARGET": "15.0",
                       "CMAKE_OSX_SYSROOT": "iphonesimulator"}, "arm64-apple-ios15.0-simulator"),
    "override": ({"CMAKE_CROSSCOMPILING": "TRUE", "CMAKE_SYSTEM_NAME": "Android",
                  "ANDROID_ABI": "arm64-v8a", "ANDROID_PLATFORM_LEVEL": "24",
                  "KILN_TARGET_TRIPLE": "aarch64-linux-android33"}, "aarch64-linux-android33"),
    "android-armv7": ({"CMAKE_CROSSCOMPILING": "TRUE", "CMAKE_SYSTEM_NAME": "Android",
                       "ANDROID_ABI": "armeabi-v7a", "ANDROID_PLATFORM_LEVEL": "24"},
                      "error: Android ABI 'armeabi-v7a' is not supported"),
    "ios-fat": ({"CMAKE_CROSSCOMPILING": "TRUE", "CMAKE_SYSTEM_NAME": "iOS",
                 "CMAKE_OSX_ARCHITECTURES": "arm64;x86_64"}, "error: one architecture per build"),
    "windows": ({"CMAKE_CROSSCOMPILING": "TRUE", "CMAKE_SYSTEM_NAME": "Windows",
                 "CMAKE_SYSTEM_PROCESSOR": "AMD64"}, "error: cannot derive a target triple"),
}


def derive_triple(cmake: str, variables: dict, folder: Path) -> harness.Result:
    script = folder / "triple.cmake"
    script.write_text(f'include("{REPO}/cmake/KilnAddModel.cmake")\n'
                      "kiln_target_triple(triple)\nmessage(STATUS \"TRIPLE=[${triple}]\")\n")
    defs = [f"-D{k}={v}" for k, v in variables.items()]
    return harness.run_command([cmake, *defs, "-P", script], 60)


@pytest.mark.parametrize("case", list(TRIPLE_CASES))
def test_kiln_target_triple(case, cmake, kiln, example_models, tmp_path):
    variables, want = TRIPLE_CASES[case]
    result = derive_triple(cmake, variables, tmp_path)
    if want.startswith("error: "):
        assert result.returncode != 0, f"{case}: expected an error\n" + result.describe()
        assert want[len("error: "):] in result.stderr, result.describe()
        return
    assert result.returncode == 0, result.describe()
    got = re.search(r"TRIPLE=\[(.*)\]", result.stdout + result.stderr)
    assert got and got.group(1) == want, f"{case}: want [{want}]\n" + result.describe()
    if want:  # kiln accepts what the toolchain mapping gives it
        compile_object(kiln, example_models / "classifier.onnx", tmp_path / "m.o", want, "obj")


#===----------------------------------------------------------------------===//
# The example CMake project (kiln_add_model)
#===----------------------------------------------------------------------===//


def build_example(cmake: str, build: Path, extra: list[str]) -> harness.Result:
    run_ok([cmake, "-G", "Ninja", "-S", EXAMPLE, "-B", build,
            f"-Dkiln_DIR={harness.build_dir()}", f"-DPython3_EXECUTABLE={sys.executable}",
            *extra], f"configuring {EXAMPLE}", BUILD_TIMEOUT)
    return run_ok([cmake, "--build", build], f"building {EXAMPLE} in {build}", BUILD_TIMEOUT)


@pytest.fixture(scope="session")
def example_host(kiln, cmake, tmp_path_factory) -> Path:
    build = tmp_path_factory.mktemp("example-host")
    build_example(cmake, build, [])
    return build


@pytest.fixture(scope="session")
def example_a64(kiln, cmake, cross, tmp_path_factory) -> Path:
    build = tmp_path_factory.mktemp("example-aarch64")
    build_example(cmake, build, [f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN}"])
    for program in ("embed_demo", "multi_model"):
        headers = run_ok([llvm_tool("llvm-readobj"), "--file-headers", build / program],
                         "llvm-readobj").stdout
        assert "Arch: aarch64" in headers, f"{program} is not an AArch64 program:\n{headers}"
    return build


def run_embed_demo(build: Path, work: Path, seed: int, prefix: list[str]) -> tuple:
    """Runs embed_demo on a seeded input; returns (its output, onnxruntime's)."""
    model = build / "models" / "classifier.onnx"
    image = np.random.default_rng(seed).uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)
    work.mkdir(parents=True, exist_ok=True)
    image.tofile(work / "in.bin")
    run_ok(prefix + [build / "embed_demo", work / "in.bin", work / "out.bin"], "embed_demo",
           harness.RUN_TIMEOUT)
    got = np.fromfile(work / "out.bin", dtype=np.float32).reshape(1, 10)
    return got, harness.ort_run(model, {"image": image})["probs"]


def check_embed_demo(build: Path, work: Path, prefix: list[str]) -> None:
    got, want = run_embed_demo(build, work, 11, prefix)
    problem = harness.compare("probs", got, want)
    if problem:
        fail("embed_demo: " + problem)


def check_multi_model(build: Path, work: Path, prefix: list[str]) -> None:
    """multi_model runs cls_a and cls_b (the classifier, twice) on different inputs and reg;
    each output must match onnxruntime's for its model and input."""
    models_dir = build / "models"
    work.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(5)
    feeds = {
        "cls_a": ("classifier", {"image": rng.uniform(-1, 1, (1, 3, 16, 16))}),
        "cls_b": ("classifier", {"image": rng.uniform(-2, 2, (1, 3, 16, 16))}),
        "reg": ("regressor", {"features": rng.uniform(-1, 1, (4, 32))}),
    }
    for prefix_name, (_, inputs) in feeds.items():
        for i, value in enumerate(inputs.values()):
            value.astype(np.float32).tofile(work / f"{prefix_name}.in{i}.bin")
    run_ok(prefix + [build / "multi_model", work], "multi_model", harness.RUN_TIMEOUT)
    problems = []
    for prefix_name, (model_name, inputs) in feeds.items():
        feed = {k: v.astype(np.float32) for k, v in inputs.items()}
        reference = harness.ort_run(models_dir / f"{model_name}.onnx", feed)
        for j, (out_name, want) in enumerate(reference.items()):
            got = np.fromfile(work / f"{prefix_name}.out{j}.bin", dtype=want.dtype)
            if got.size != want.size:
                problems.append(f"{prefix_name}.{out_name}: {got.size} values, want {want.size}")
                continue
            p = harness.compare(f"{prefix_name}.{out_name}", got.reshape(want.shape), want)
            if p:
                problems.append(p)
    a = np.fromfile(work / "cls_a.out0.bin", dtype=np.float32)
    b = np.fromfile(work / "cls_b.out0.bin", dtype=np.float32)
    if a.size and np.array_equal(a, b):
        problems.append("cls_a and cls_b gave identical outputs for different inputs")
    if problems:
        fail("multi_model:\n" + "\n".join(problems))

    defined = set(run_ok([llvm_tool("llvm-nm"), "--defined-only", "--format=just-symbols",
                          build / "multi_model"], "llvm-nm").stdout.split())
    for p in ("cls_a", "cls_b", "reg"):
        for suffix in ("_main", "_descriptor"):
            assert p + suffix in defined, f"multi_model lacks {p}{suffix}"
    assert "kiln_model_descriptor" not in defined, "an embedded model defines the .so-only name"


def test_example_host(example_host, tmp_path):
    check_embed_demo(example_host, tmp_path, [])


def test_example_host_multi_model(example_host, tmp_path):
    check_multi_model(example_host, tmp_path, [])


def test_example_aarch64_qemu(example_a64, tmp_path):
    check_embed_demo(example_a64, tmp_path, qemu_cmd())


def test_example_aarch64_qemu_multi_model(example_a64, tmp_path):
    check_multi_model(example_a64, tmp_path, qemu_cmd())


def test_example_rebuilds_when_model_changes(example_host, cmake, tmp_path):
    """kiln_add_model's compile depends on the model file: new weights -> new outputs."""
    before, _ = run_embed_demo(example_host, tmp_path / "before", 3, [])
    run_ok([sys.executable, EXAMPLE / "make_models.py", "--out", example_host / "models",
            "--seed", "1234", "--only", "classifier"], "make_models.py --seed 1234")
    rebuild = run_ok([cmake, "--build", example_host], "rebuilding the example", BUILD_TIMEOUT)
    assert "kiln: compiling" in rebuild.stdout, "the model changed but kiln did not run:\n" + \
        rebuild.describe()
    after, want = run_embed_demo(example_host, tmp_path / "after", 3, [])
    problem = harness.compare("probs", after, want)
    assert problem is None, "after the model changed: " + problem
    assert not np.array_equal(before, after), "the outputs did not change with the model"
    again = run_ok([cmake, "--build", example_host], "building again", BUILD_TIMEOUT)
    assert "kiln: compiling" not in again.stdout, "kiln ran again with nothing changed:\n" + \
        again.describe()


def test_example_duplicate_name_is_an_error(cmake, kiln, tmp_path, example_models):
    """Two models of one target under one NAME would clash at link time: configure says so."""
    project = tmp_path / "dup"
    project.mkdir()
    (project / "main.c").write_text("int main(void) { return 0; }\n")
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(dup C)\nfind_package(kiln REQUIRED)\n"
        "add_executable(app main.c)\n"
        f'kiln_add_model(app MODEL "{example_models}/classifier.onnx" NAME m)\n'
        f'kiln_add_model(app MODEL "{example_models}/regressor.onnx" NAME m)\n')
    result = harness.run_command([cmake, "-G", "Ninja", "-S", project, "-B", tmp_path / "b",
                                  f"-Dkiln_DIR={harness.build_dir()}"], 120)
    assert result.returncode != 0 and "already in this target" in result.stderr, \
        result.describe()


def test_example_installed_kiln(cmake, kiln, example_models, tmp_path):
    """`cmake --install` of kiln, then the example against <prefix>/lib/cmake/kiln."""
    prefix = tmp_path / "prefix"
    run_ok([cmake, "--install", harness.build_dir(), "--prefix", prefix], "cmake --install",
           BUILD_TIMEOUT)
    config = prefix / "lib" / "cmake" / "kiln" / "kilnConfig.cmake"
    assert config.is_file(), f"no {config}"
    build = tmp_path / "build"
    run_ok([cmake, "-G", "Ninja", "-S", EXAMPLE, "-B", build,
            f"-Dkiln_DIR={config.parent}", f"-DEMBED_MODEL_DIR={example_models}"],
           "configuring the example against the installed kiln", BUILD_TIMEOUT)
    run_ok([cmake, "--build", build], "building the example against the installed kiln",
           BUILD_TIMEOUT)
    cache = (build / "CMakeCache.txt").read_text()
    assert str(harness.build_dir()) not in cache, "the installed package points into the build tree"
    image = np.random.default_rng(2).uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)
    image.tofile(tmp_path / "in.bin")
    run_ok([build / "embed_demo", tmp_path / "in.bin", tmp_path / "out.bin"], "embed_demo")
    got = np.fromfile(tmp_path / "out.bin", dtype=np.float32).reshape(1, 10)
    want = harness.ort_run(example_models / "classifier.onnx", {"image": image})["probs"]
    problem = harness.compare("probs", got, want)
    assert problem is None, problem
