"""pytest fixtures for kiln's end-to-end tests (see harness.py for the environment)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import harness  # noqa: E402


def models_required() -> bool:
    """In CI the reference models must exist; elsewhere their tests are skipped."""
    return os.environ.get("CI", "").lower() == "true" or \
        os.environ.get("KILN_REQUIRE_MODELS", "") == "1"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    # After -k/-m deselection: what the selected tests compile, in the order they run.
    keys: list[str] = []
    for item in items:
        for mark in item.iter_markers("compiles"):
            for key in mark.args:
                if key not in keys:
                    keys.append(key)
    config._kiln_compile_keys = keys


def pytest_report_header(config):
    d = harness.models_dir()
    return [f"kiln: {harness.tool_path('kiln')}"
            f"{'' if harness.tool_path('kiln').exists() else ' (missing)'}",
            f"reference models: {d}{'' if d.is_dir() else ' (missing)'}"]


@pytest.fixture(scope="session")
def kiln() -> harness.Kiln:
    k = harness.Kiln()
    try:
        k.check()
        return k
    except harness.ToolMissing as e:
        problem = str(e)
    pytest.fail(problem, pytrace=False)


@pytest.fixture(scope="session")
def models_dir() -> Path:
    d = harness.models_dir()
    names = ("mobilenet_v2.onnx", "squeezenet1_1.onnx", "bert_mini.onnx")
    missing = [n for n in names if not (d / n).is_file()]
    if missing:
        msg = (f"reference models not found: {', '.join(missing)} in {d} "
               f"(set KILN_MODELS_DIR to the folder holding them)")
        if models_required():
            pytest.fail(msg + " -- required in CI", pytrace=False)
        pytest.skip(msg)
    return d


@pytest.fixture(scope="session")
def compile_cache(kiln, tmp_path_factory, request):
    cache = harness.CompileCache(kiln, tmp_path_factory.mktemp("compiled"), harness.default_jobs())
    for key in getattr(request.config, "_kiln_compile_keys", []):
        spec = harness.SPECS.get(key)
        if spec is not None:
            cache.submit(spec)
    yield cache
    cache.close()


def fail(message: str) -> None:
    pytest.fail(message, pytrace=False)


def clang() -> str:
    """clang-22, which builds the C drivers of test_concurrency.py and
    test_dynamic_shapes.py with the runtime's sources under ThreadSanitizer."""
    for candidate in ("/usr/bin/clang-22", shutil.which("clang-22"), "/usr/lib/llvm-22/bin/clang"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    fail("clang-22 not found: install it (scripts/setup.sh)")


#===----------------------------------------------------------------------===//
# AArch64 Linux: cross tools, qemu and a cross-built kiln-run (test_embedding.py,
# test_quantized.py)
#===----------------------------------------------------------------------===//

REPO = harness.REPO
TOOLCHAIN = REPO / "cmake" / "toolchains" / "aarch64-linux-gnu.cmake"
CROSS_SYSROOT = Path("/usr/aarch64-linux-gnu")
BUILD_TIMEOUT = 900


def run_ok(cmd, what: str, timeout: float = 300, cwd=None) -> harness.Result:
    result = harness.run_command(cmd, timeout * harness.timeout_scale(), cwd=cwd)
    if result.returncode != 0:
        fail(f"{what} failed\n" + result.describe())
    return result


def cross_required() -> bool:
    return os.environ.get("CI", "").lower() == "true" or \
        os.environ.get("KILN_REQUIRE_CROSS", "") == "1"


def cross_problem() -> str | None:
    """What is missing for building and running AArch64 Linux programs, or None."""
    missing = [tool for tool in ("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "qemu-aarch64")
               if not shutil.which(tool)]
    if not (CROSS_SYSROOT / "lib" / "libc.so.6").exists():
        missing.append(f"libc6-dev-arm64-cross ({CROSS_SYSROOT}/lib/libc.so.6)")
    if not list(Path("/usr/lib/gcc-cross/aarch64-linux-gnu").glob("*/crtbeginS.o")):
        missing.append("libgcc-12-dev-arm64-cross (/usr/lib/gcc-cross/aarch64-linux-gnu)")
    if not missing:
        return None
    return ("AArch64 cross tools missing: " + ", ".join(missing) +
            " (apt-get install gcc-aarch64-linux-gnu g++-aarch64-linux-gnu "
            "libc6-dev-arm64-cross libgcc-12-dev-arm64-cross qemu-user, or run scripts/setup.sh)")


@pytest.fixture(scope="session")
def cross():
    problem = cross_problem()
    if problem:
        if cross_required():
            pytest.fail(problem + " -- required in CI", pytrace=False)
        pytest.skip(problem)


def qemu_cmd() -> list[str]:
    return ["qemu-aarch64", "-L", str(CROSS_SYSROOT)]


@pytest.fixture(scope="session")
def cmake() -> str:
    path = shutil.which("cmake")
    if not path or not shutil.which("ninja"):
        pytest.fail("cmake and ninja are needed (scripts/setup.sh installs them)", pytrace=False)
    return path


@pytest.fixture(scope="session")
def a64_kiln_run(cross, cmake, tmp_path_factory) -> Path:
    """kiln-run (and the runtime) cross-built for AArch64 Linux with the toolchain file."""
    build = tmp_path_factory.mktemp("kiln-run-aarch64")
    run_ok([cmake, "-G", "Ninja", "-S", REPO, "-B", build, f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN}",
            "-DKILN_BUILD_COMPILER=OFF", "-DKILN_BUILD_TESTS=OFF", "-DCMAKE_BUILD_TYPE=Release"],
           "configuring the runtime and kiln-run for aarch64", BUILD_TIMEOUT)
    run_ok([cmake, "--build", build, "--target", "kiln-run"], "cross-building kiln-run",
           BUILD_TIMEOUT)
    runner = build / "bin" / "kiln-run"
    assert runner.is_file(), f"no {runner} after the build"
    return runner
