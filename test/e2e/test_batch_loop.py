"""A symbolic batch of images computed apart (docs/dynamic-shapes.md, "Speed"): a CNN
whose only symbol is its batch is compiled for one image and run once per image
(kiln-symbolic-shapes' kiln.batch_loop, `kiln compile --progress` says so). Checked
against onnxruntime: MobileNetV2 made batch-symbolic at batch 1, 3 and 5 from one
compile; the small CNN of dynamic_models.py both ways (batch loop, and over the batch
with KILN_NO_BATCH_LOOP=1, which keeps the per-op symbolic-batch lowering tested), and
through the header's `<p>_main(symbols, ...)` of an object file (the image entry once per
image, without the runtime)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import dynamic_models
import harness
from conftest import clang, run_ok

ONE_IMAGE = "compiled for one image, run once per image"


def symbolic_batch(src: Path, dst: Path) -> Path:
    """`src` with dim 0 of its inputs and outputs the dim_param "batch"."""
    m = onnx.load(str(src))
    weights = {t.name for t in m.graph.initializer}
    for values in (m.graph.input, m.graph.output):
        for v in values:
            if v.name not in weights:
                v.type.tensor_type.shape.dim[0].dim_param = "batch"
    del m.graph.value_info[:]
    onnx.save(m, str(dst))
    return dst


def compile_ok(kiln, model: Path, out: Path, one_image: bool) -> Path:
    r = kiln.compile(model, out, ["--progress"], timeout=600)
    assert r.returncode == 0, r.describe()
    assert (ONE_IMAGE in r.stderr) == one_image, r.describe()
    return out


def run_and_compare(kiln, model: Path, artifact: Path, feeds, work: Path, threads=1):
    want = harness.ort_run(model, feeds)
    inputs = harness.save_inputs(feeds, work / "inputs")
    r = kiln.run(artifact, inputs, work / "outputs", ["--threads", str(threads)])
    assert r.returncode == 0, r.describe()
    got = harness.load_outputs(work / "outputs", list(want))
    for name, ref in want.items():
        assert got[name].shape == ref.shape, (name, got[name].shape, ref.shape)
        problem = harness.compare(name, got[name], ref, 1e-3, 1e-4)
        assert problem is None, problem
        # The shared MobileNetV2's logits are ~1e-9: also relative to their scale.
        scale = float(np.abs(ref).max())
        assert float(np.abs(got[name] - ref).max()) <= 1e-3 * scale, (name, scale)


def rand(seed, *shape):
    return np.random.RandomState(seed).standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module")
def mobilenet(kiln, models_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("batch_loop_mnv2")
    model = symbolic_batch(models_dir / "mobilenet_v2.onnx", folder / "mnv2_batch.onnx")
    return model, compile_ok(kiln, model, folder / "mnv2_batch.so", one_image=True)


@pytest.mark.parametrize("batch", [1, 3, 5])
def test_mobilenet_v2_symbolic_batch(kiln, mobilenet, tmp_path, batch):
    model, artifact = mobilenet
    name = onnx.load(str(model), load_external_data=False).graph.input[0].name
    run_and_compare(kiln, model, artifact, {name: rand(batch, batch, 3, 224, 224)}, tmp_path)


@pytest.fixture(scope="module")
def cnn(kiln, tmp_path_factory):
    folder = tmp_path_factory.mktemp("batch_loop_cnn")
    model = dynamic_models.cnn(folder / "cnn.onnx")
    looped = compile_ok(kiln, model, folder / "cnn.so", one_image=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KILN_NO_BATCH_LOOP", "1")
        over_batch = compile_ok(kiln, model, folder / "cnn_over_batch.so", one_image=False)
    return model, looped, over_batch


@pytest.mark.parametrize("batch, threads", [(1, 1), (5, 1), (6, 2)])
@pytest.mark.parametrize("which", ["looped", "over_batch"])
def test_small_cnn_both_ways(kiln, cnn, tmp_path, batch, threads, which):
    model, looped, over_batch = cnn
    artifact = looped if which == "looped" else over_batch
    run_and_compare(kiln, model, artifact, {"x": rand(batch, batch, 3, 32, 32)}, tmp_path,
                    threads)


MAIN_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include "cnn.h"

/* argv[1]: the batch; argv[2]: its images (float32); argv[3]: where the logits go. */
int main(int argc, char **argv) {
  if (argc != 4) return 2;
  int64_t symbols[CNN_NUM_SYMBOLS] = {atoll(argv[1])};
  size_t in_n = (size_t)symbols[0] * 3 * 32 * 32, out_n = (size_t)symbols[0] * 10;
  float *in = malloc(in_n * sizeof(float)), *out = malloc(out_n * sizeof(float));
  FILE *f = fopen(argv[2], "rb");
  if (!f || fread(in, sizeof(float), in_n, f) != in_n) return 3;
  fclose(f);
  int32_t status = -1;
  cnn_main(symbols, in, out, &status);
  if (status != 0) return 4;
  f = fopen(argv[3], "wb");
  if (!f || fwrite(out, sizeof(float), out_n, f) != out_n) return 5;
  fclose(f);
  return 0;
}
"""


def test_header_main_runs_each_image(kiln, tmp_path):
    model = dynamic_models.cnn(tmp_path / "cnn.onnx")
    r = kiln.compile(model, tmp_path / "cnn.o", ["--emit", "obj", "--progress"], timeout=600)
    assert r.returncode == 0, r.describe()
    assert ONE_IMAGE in r.stderr, r.describe()
    header = (tmp_path / "cnn.h").read_text()
    assert "void cnn_main(int64_t *symbols, const void *input0" in header, header
    (tmp_path / "main.c").write_text(MAIN_C)
    build = harness.build_dir()
    run_ok([clang(), "-O1", "-o", tmp_path / "main", tmp_path / "main.c", tmp_path / "cnn.o",
            f"-I{harness.REPO / 'runtime' / 'include'}", f"-I{tmp_path}",
            build / "runtime" / "libkiln_runtime.a", "-lpthread", "-ldl", "-lm"],
           "linking the object with its header's cnn_main")
    batch = 3
    x = rand(7, batch, 3, 32, 32)
    x.tofile(tmp_path / "x.bin")
    run_ok([tmp_path / "main", str(batch), tmp_path / "x.bin", tmp_path / "y.bin"],
           "cnn_main at batch 3")
    got = np.fromfile(tmp_path / "y.bin", dtype=np.float32).reshape(batch, 10)
    want = harness.ort_run(model, {"x": x})["logits"]
    problem = harness.compare("logits", got, want, 1e-3, 1e-4)
    assert problem is None, problem


@pytest.mark.parametrize("rest", [128, -1])
def test_flatten_by_computed_shape(kiln, tmp_path, rest):
    # x.view(x.size(0), 128) and x.view(x.size(0), -1) (torch's usual classifier
    # flatten): Shape -> Gather -> Unsqueeze -> Concat -> Reshape between the
    # convolution and the classifier; in the image's graph the computed shape is
    # [1, 128] (or [1, -1]). With -1, import's shape inference finds K = 128 (the
    # Reshape's data's static dims), so the MatMul after it takes it.
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
    r = np.random.RandomState(3)
    inits = [nh.from_array((r.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32), "w"),
             nh.from_array((r.standard_normal((8 * 4 * 4, 10)) * 0.05).astype(np.float32),
                           "fw"),
             nh.from_array(np.array(0, np.int64), "zero"),
             nh.from_array(np.array([0], np.int64), "axes"),
             nh.from_array(np.array([rest], np.int64), "rest")]
    nodes = [h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["r"]),
             h.make_node("AveragePool", ["r"], ["a"], kernel_shape=[4, 4], strides=[4, 4]),
             h.make_node("Shape", ["a"], ["s"]),
             h.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             h.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
             h.make_node("Concat", ["n1", "rest"], ["shape"], axis=0),
             h.make_node("Reshape", ["a", "shape"], ["flat"]),
             h.make_node("MatMul", ["flat", "fw"], ["y"])]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 3, 16, 16])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["n", 10])], initializer=inits)
    model = tmp_path / "view.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8),
              str(model))
    artifact = compile_ok(kiln, model, tmp_path / "view.so", one_image=True)
    for batch in (1, 4):
        run_and_compare(kiln, model, artifact, {"x": rand(batch, batch, 3, 16, 16)},
                        tmp_path / str(batch))
