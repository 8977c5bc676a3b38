"""What a new user meets first (issue 20): help text, `kiln inspect` fields, an output
folder that does not exist yet, kiln's output free of stray compiler warnings, and
kiln_add_model's configure-time checks and CPU default."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import harness
import models
from conftest import fail, run_ok  # (cmake: conftest.py's fixture)
from test_embedding import llvm_tool

CASE = {c.name: c for c in models.all_cases()}["small_cnn"]


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return CASE.save(tmp_path_factory.mktemp("first-use-model"))


@pytest.mark.parametrize("tool", ["kiln", "kiln-run"])
def test_help_ends_with_newline(tool, kiln):
    result = harness.run_command([kiln.bin_dir / tool, "--help"], harness.ERROR_TIMEOUT)
    assert result.returncode == 0, result.describe()
    assert result.stdout.endswith("\n") and not result.stdout.endswith("\n\n"), \
        repr(result.stdout[-80:])
    assert "usage" in result.stdout.lower()


def test_inspect_fields_are_readable(kiln, model, tmp_path):
    artifact = tmp_path / "m.so"
    result = kiln.compile(model, artifact, CASE.compile_args)
    assert result.returncode == 0, result.describe()
    shown = harness.run_command([kiln.kiln, "inspect", artifact], harness.RUN_TIMEOUT)
    assert shown.returncode == 0, shown.describe()
    assert "ready_ns" not in shown.stdout, "kiln inspect prints a raw clock value:\n" + \
        shown.stdout
    assert re.search(r"^open_ms: \d+\.\d{3}$", shown.stdout, re.M), shown.stdout
    assert shown.stdout.endswith("\n")
    # The runner keeps the clock for tools that time a process (bench/spawn_ready.c).
    raw = harness.run_command([kiln.bin_dir / "kiln-run", artifact, "--inspect"],
                              harness.RUN_TIMEOUT)
    assert re.search(r"^ready_ns: \d+$", raw.stdout, re.M), raw.describe()


@pytest.mark.parametrize("emit, name", [("so", "m.so"), ("obj", "m.o")])
def test_missing_output_folder_is_created(emit, name, kiln, model, tmp_path):
    out = tmp_path / "not" / "there" / name
    result = kiln.compile(model, out, [*CASE.compile_args, "--emit", emit])
    assert result.returncode == 0, result.describe()
    assert out.is_file(), f"no {out}"
    if emit == "obj":
        assert out.with_suffix(".h").is_file()
    assert not result.stderr.strip(), "kiln printed something on success:\n" + result.describe()


def test_impossible_output_folder_is_a_clean_error(kiln, model, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    result = kiln.compile(model, blocker / "m.so", CASE.compile_args)
    problem = harness.check_clean_failure(result, ["cannot create the output folder"],
                                          "compiling into a folder under a file")
    if problem:
        fail(problem)
    for raw in ("ld.lld", "clang", "warning"):
        assert raw not in result.stderr, f"'{raw}' in the message:\n" + result.describe()


def test_output_that_is_a_folder_is_a_clean_error(kiln, model, tmp_path):
    folder = tmp_path / "out.so"
    folder.mkdir()
    result = kiln.compile(model, folder, CASE.compile_args)
    problem = harness.check_clean_failure(result, ["it is a folder"], "-o FOLDER")
    if problem:
        fail(problem)
    assert "ld.lld" not in result.stderr and "warning" not in result.stderr, result.describe()


def test_link_error_carries_no_earlier_warnings(kiln, model, tmp_path):
    """A linker failure shows the linker's message alone, not followed by the tail of the
    descriptor compile's log (the log file was reused without truncation)."""
    # A linker that fails after the descriptor's clang has written its log.
    fake = tmp_path / "clang"
    fake.write_text('#!/bin/sh\ncase " $* " in *" -shared "*) echo "fake link error" >&2; '
                    'exit 1;; esac\nexec /usr/lib/llvm-22/bin/clang "$@" '
                    '-Wunused-command-line-argument-xx\n')
    fake.chmod(0o755)
    result = harness.run_command(["env", f"KILN_CLANG={fake}", *kiln.compile_cmd(
        model, tmp_path / "m.so", CASE.compile_args)], harness.COMPILE_TIMEOUT_SMALL)
    assert result.returncode == 1 and "fake link error" in result.stderr, result.describe()
    assert "warning" not in result.stderr, "an earlier tool's warning in the link error:\n" + \
        result.describe()


def test_descriptor_compiles_without_warnings(kiln, model, tmp_path):
    out = tmp_path / "m.so"
    result = kiln.compile(model, out, [*CASE.compile_args, "--keep-intermediates"])
    assert result.returncode == 0, result.describe()
    log = Path(str(out) + ".kiln") / "tool-output.txt"
    text = log.read_text() if log.exists() else ""
    assert "warning" not in text, f"{log}:\n{text}"
    source = next(Path(str(out) + ".kiln").glob("*_descriptor.c")).read_text()
    # The adapter's call to the graph is kept out of line (it is the whole graph).
    assert "[[clang::noinline]]" in source


#===----------------------------------------------------------------------===//
# kiln_add_model
#===----------------------------------------------------------------------===//


def configure(cmake_path: str, project: Path, body: str) -> harness.Result:
    project.mkdir(parents=True, exist_ok=True)
    (project / "main.c").write_text("int main(void) { return 0; }\n")
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(first C)\nfind_package(kiln REQUIRED)\n"
        "add_executable(app main.c)\n" + body)
    return harness.run_command([cmake_path, "-G", "Ninja", "-S", project, "-B", project / "b",
                                f"-Dkiln_DIR={harness.build_dir()}"], 120)


def test_missing_model_fails_at_configure(cmake, kiln, tmp_path):
    result = configure(cmake, tmp_path / "p", "kiln_add_model(app MODEL models/typo.onnx)\n")
    assert result.returncode != 0, result.describe()
    assert "kiln_add_model(app): MODEL 'models/typo.onnx' does not exist" in result.stderr, \
        result.describe()


def test_bad_name_message_names_the_name(cmake, kiln, model, tmp_path):
    result = configure(cmake, tmp_path / "p", f'kiln_add_model(app MODEL "{model}" NAME my-cls)\n')
    assert result.returncode != 0, result.describe()
    text = " ".join(result.stderr.split())
    assert "NAME 'my-cls' is no C identifier" in text and "NAME my_cls" in text, \
        result.describe()
    assert "pass NAME" not in text, "asks for a NAME that was given:\n" + result.describe()


@pytest.mark.parametrize("cpu_arg, want", [("", ["x86_64_v2", "x86_64_v3", "x86_64_v4"]),
                                           ("CPU native", [])])
def test_kiln_add_model_cpu_default(cpu_arg, want, cmake, kiln, model, tmp_path):
    """Without CPU the object holds the portable variants (what ships); `CPU native` one."""
    project = tmp_path / "p"
    result = configure(cmake, project, f'kiln_add_model(app MODEL "{model}" NAME cnn {cpu_arg})\n')
    assert result.returncode == 0, result.describe()
    built = run_ok([cmake, "--build", project / "b"], "building", 600)
    assert ("cpu portable" in built.stdout) == bool(want), built.describe()
    symbols = run_ok([llvm_tool("llvm-nm"), "--defined-only", "--extern-only",
                      "--format=just-symbols", project / "b" / "app"], "llvm-nm").stdout.split()
    variants = sorted({m.group(1) for s in symbols if (m := re.match(r"cnn_(x86_64_v\d)_main$", s))})
    assert variants == want, symbols
    assert "cnn_main" in symbols and "cnn_descriptor" in symbols


def test_docs_say_how_to_install_and_what_kiln_needs():
    """README and docs/embedding.md give the install command line and the LLVM/MLIR 22
    runtime dependency of the installed kiln, and explain the arm64 example's
    Python3_EXECUTABLE (issue 20)."""
    readme = (harness.REPO / "README.md").read_text()
    embedding = (harness.REPO / "docs" / "embedding.md").read_text()
    for text, where in ((readme, "README.md"), (embedding, "docs/embedding.md")):
        assert "cmake --install build --prefix" in text, f"{where}: no install command line"
        assert re.search(r"LLVM and MLIR 22 shared libraries|LLVM and MLIR 22", text), \
            f"{where}: does not say the installed kiln needs LLVM/MLIR 22"
    example = embedding[embedding.index("### Linux arm64"):]
    example = example[:example.index("### Android")]
    assert "Python3_EXECUTABLE` is the example's own need" in example, \
        "the arm64 example's Python3_EXECUTABLE is not explained"
    assert "--cpu portable" in embedding and "CPU native" in embedding
