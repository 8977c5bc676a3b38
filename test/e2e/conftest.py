"""pytest fixtures for kiln's end-to-end tests (see harness.py for the environment)."""

from __future__ import annotations

import os
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
