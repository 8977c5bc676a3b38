"""The reference models (mobilenet_v2, squeezenet1_1, bert_mini from $KILN_MODELS_DIR),
compiled by kiln and compared with onnxruntime. Skipped when the folder is absent (a
failure in CI)."""

from __future__ import annotations

import numpy as np
import pytest

import harness
from conftest import fail


def image_input(rng):
    return {"input": rng.standard_normal((1, 3, 224, 224)).astype(np.float32)}


def bert_inputs(rng):
    mask = np.ones((1, 128), np.int64)
    mask[:, 100:] = 0  # padding at the end, as a tokenizer leaves it
    return {"input_ids": rng.integers(0, 8192, size=(1, 128), dtype=np.int64),
            "attention_mask": mask}


MODELS = {"mobilenet_v2": image_input, "squeezenet1_1": image_input, "bert_mini": bert_inputs}


def _prepare(name):
    def prepare(folder):
        path = harness.models_dir() / f"{name}.onnx"
        if not path.is_file():
            raise FileNotFoundError(path)
        return path
    return prepare


SPECS = {name: harness.register(harness.CompileSpec(
    f"model-{name}", _prepare(name), timeout=harness.COMPILE_TIMEOUT_LARGE)) for name in MODELS}


@pytest.mark.models
@pytest.mark.parametrize("name", [
    pytest.param(n, id=n, marks=pytest.mark.compiles(SPECS[n].key)) for n in MODELS])
def test_reference_model(name, models_dir, compile_cache, tmp_path):
    rng = np.random.default_rng(2024)
    feeds = MODELS[name](rng)
    compiled = compile_cache.get(SPECS[name])
    try:
        harness.run_and_compare(compile_cache.kiln, compiled, feeds, tmp_path)
        return
    except AssertionError as e:
        problem = f"{name}: {e}"
    fail(problem)
