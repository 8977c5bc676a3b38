#!/usr/bin/env python3
"""Prepares a GPU check to run on another machine (one with a GPU but without LLVM, MLIR or
onnxruntime): compiles models here for each GPU device, writes their inputs and onnxruntime's
outputs as .npy files, and copies the runtime-only runner (build/bin/kiln-run) beside them.
scripts/gpu_check.py then runs the bundle there with python3 and numpy alone.

    .venv/bin/python scripts/gpu_bundle.py --device vulkan [--device cuda] --out gpu-bundle \
        [--cases all|none|REGEX] [--models mobilenet_v2,squeezenet1_1,bert_mini] \
        [--suite-dir DIR --suite-models resnet50,bert_base] [--batches 1,8] [--periodic-weights] \
        [--precision fp16 [--precision-cases]]

--precision fp16 compiles each model (each batch) a second time with `--precision fp16` (f16
weights, f16 x f16 products with f32 accumulation: docs/precision.md), entries named
model-NAME[-bB]-fp16 with "precision": "fp16" (gpu_check.py --torch times PyTorch's half model
beside them), compared with onnxruntime's f32 outputs at the fp16 tolerance (rtol 1e-2, atol
1e-2, as on the CPU); --precision-cases adds the operator cases with products (CASE-fp16).

--batches compiles each model again at other batch sizes (dim 0 of the inputs and outputs set,
Reshape targets that spelled the batch as 1 changed to 0, "copy it"); --periodic-weights replaces
every float weight of 4096 elements or more by a ternary pattern of period 4093 with the weight's
mean and spread, so that the bundle compresses to almost nothing (the device machine takes 64
MiB; kernels and their speed do not depend on the values, and onnxruntime's reference outputs are
computed from the same rewritten model).

Layout of OUT: kiln-run (and kiln_cuda_tests for a cuda device), manifest.json (one entry per compiled model: device, artifact, inputs,
expected outputs, tolerances, whether to time it) and one folder per device and model. Cases the
compiler rejects for a device are listed in the manifest as rejected (with the error), not run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "test" / "e2e"))

import harness  # noqa: E402  (test/e2e: onnxruntime reference, input files)
import models  # noqa: E402  (test/e2e: the operator cases)
import test_models  # noqa: E402  (test/e2e: inputs of the reference models)


PERIOD = 4093  # prime: the pattern's phase differs from row to row of any weight


def periodic_weights(model) -> int:
    """Rewrites MODEL's float initializers of >= 4096 elements in place (see the docstring);
    returns how many."""
    from onnx import numpy_helper
    pattern = np.random.default_rng(4093).integers(-1, 2, PERIOD).astype(np.float64)
    count = 0
    for i, t in enumerate(model.graph.initializer):
        w = numpy_helper.to_array(t)
        if w.dtype not in (np.float32, np.float16) or w.size < 4096:
            continue
        spread = float(w.std()) * np.sqrt(1.5)  # the pattern's variance is 2/3
        values = float(w.mean()) + spread * np.resize(pattern, w.size)
        new = numpy_helper.from_array(values.astype(w.dtype).reshape(w.shape), t.name)
        model.graph.initializer[i].CopyFrom(new)
        count += 1
    return count


def rebatch(model, batch: int) -> None:
    """Sets dim 0 of MODEL's inputs and outputs that have the first input's dim 0 to BATCH;
    a Reshape whose constant target starts with that size gets 0 there (copy the input's)."""
    from onnx import numpy_helper
    weights = {t.name for t in model.graph.initializer}
    inputs = [v for v in model.graph.input if v.name not in weights]
    old = inputs[0].type.tensor_type.shape.dim[0].dim_value
    for v in [*inputs, *model.graph.output]:
        dims = v.type.tensor_type.shape.dim
        if dims and dims[0].HasField("dim_value") and dims[0].dim_value == old:
            dims[0].dim_value = batch
    targets = {n.input[1] for n in model.graph.node if n.op_type == "Reshape"
               and not any(a.name == "allowzero" and a.i for a in n.attribute)}
    def fix(tensor):
        a = numpy_helper.to_array(tensor).copy()
        if a.ndim == 1 and a.size >= 2 and a[0] == old:
            a[0] = 0
            tensor.CopyFrom(numpy_helper.from_array(a, tensor.name))
    for t in model.graph.initializer:
        if t.name in targets:
            fix(t)
    for n in model.graph.node:
        if n.op_type == "Constant" and n.output[0] in targets:
            for a in n.attribute:
                if a.name == "value":
                    fix(a.t)
    del model.graph.value_info[:]


def transport_model(src: Path, dst: Path, batch: int | None, periodic: bool) -> Path:
    """SRC as the bundle compiles it: at BATCH (None: as exported), its weights periodic."""
    if batch is None and not periodic:
        return src
    import onnx
    model = onnx.load(str(src))
    if batch is not None:
        rebatch(model, batch)
    if periodic:
        periodic_weights(model)
    dst.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(dst))
    return dst


def model_feeds(name: str, model: Path, rng) -> dict:
    """Inputs: the reference models' own (test_models.py) at batch 1; else seeded by the
    graph's input types, as bench/bench.py makes them."""
    import onnxruntime as ort
    sys.path.insert(0, str(ROOT / "bench"))
    import bench  # noqa: E402
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    return bench.make_inputs(session, int(rng.integers(0, 2**31)))


# `--precision P`'s tolerance against onnxruntime's f32 outputs (docs/precision.md: the
# CPU's fp16 tolerance, the rtol 1e-2 / atol 1e-2).
PRECISION_TOLERANCE = {"fp16": (1e-2, 1e-2)}
# The operator cases whose ops --precision narrows (test_precision.py's PRODUCT_CASES).
PRODUCTS = re.compile("conv|matmul|gemm|einsum|attention|lstm|gru")


def compile_model(kiln: Path, model: Path, device: str, out: Path, extra: list[str],
                  timeout: float) -> tuple[bool, str]:
    cmd = [str(kiln), "compile", str(model), "--device", device, "-o", str(out), *extra]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:.0f} s"
    return r.returncode == 0, (r.stderr.strip().splitlines() or [""])[-1]


def add_entry(manifest: list, out: Path, kiln: Path, device: str, name: str, model: Path,
              feeds: dict, extra: list[str], rtol: float, atol: float, bench: bool,
              timeout: float, info: dict | None = None) -> None:
    # Folders named without ':' (cuda:sm_90) so the bundle travels as plain names.
    folder = out / device.replace(":", "_") / name
    folder.mkdir(parents=True, exist_ok=True)
    artifact = folder / "model.so"
    ok, message = compile_model(kiln, model, device, artifact, extra, timeout)
    # What kiln-run opens it on: the device without the compile-time arch ("cuda:sm_90"
    # compiles for sm_90; "cuda:N" at run time would pick GPU N).
    entry = {"name": name, "device": device, "run_device": device.split(":")[0],
             "bench": bench, "rtol": rtol, "atol": atol, **(info or {})}
    if not ok:
        entry["rejected"] = message
        manifest.append(entry)
        print(f"  {device:7s} {name}: rejected: {message}", flush=True)
        return
    reference = harness.ort_run(model, feeds)
    inputs = harness.save_inputs(feeds, folder / "inputs")
    expected = {}
    (folder / "expected").mkdir(exist_ok=True)
    for i, (oname, value) in enumerate(reference.items()):
        path = folder / "expected" / f"out{i}.npy"
        np.save(path, value)
        expected[oname] = str(path.relative_to(out))
    entry.update(artifact=str(artifact.relative_to(out)),
                 inputs={k: str(v.relative_to(out)) for k, v in inputs.items()},
                 expected=expected)
    manifest.append(entry)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", action="append", required=True,
                    help="a GPU device kiln compiles for (vulkan, cuda, cuda:sm_90, ...)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--cases", default="all",
                    help="operator cases of test/e2e/models.py: all, none, or a regex")
    ap.add_argument("--models", default="mobilenet_v2,squeezenet1_1,bert_mini",
                    help="reference models from KILN_MODELS_DIR (comma-separated, or empty)")
    ap.add_argument("--suite-dir", type=Path, help="a folder of bench/export_models.py exports")
    ap.add_argument("--suite-models", default="",
                    help="models of --suite-dir to add (comma-separated: resnet50,bert_base)")
    ap.add_argument("--batches", default="1",
                    help="batch sizes each model is compiled for (comma-separated)")
    ap.add_argument("--periodic-weights", action="store_true",
                    help="rewrite large weights as a periodic pattern (a bundle that compresses)")
    ap.add_argument("--precision", action="append", default=[], choices=["fp16"],
                    help="also compile each model with --precision P (entries ...-P)")
    ap.add_argument("--precision-cases", action="store_true",
                    help="with --precision: the operator cases with products too (CASE-P)")
    ap.add_argument("--tensor-cores", action="store_true",
                    help="compile cuda with KILN_CUDA_TENSOR_CORES=1 (matmul_mma, not yet run "
                         "on a GPU: the check that lets its gate go)")
    ap.add_argument("--build", type=Path, default=ROOT / "build")
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args()

    if args.tensor_cores:
        os.environ["KILN_CUDA_TENSOR_CORES"] = "1"  # inherited by every kiln compile below
    kiln = args.build / "bin" / "kiln"
    runner = args.build / "bin" / "kiln-run"
    for tool in (kiln, runner):
        if not tool.is_file():
            print(f"gpu_bundle: {tool} not found (build kiln first)", file=sys.stderr)
            return 1
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    shutil.copy2(runner, args.out / "kiln-run")
    shutil.copy2(ROOT / "scripts" / "gpu_check.py", args.out / "gpu_check.py")
    shutil.copy2(ROOT / "scripts" / "gpu_torch_reference.py", args.out / "gpu_torch_reference.py")
    # The CUDA back end's unit tests (self-contained: the runtime and gtest linked in); their
    # GPU tests skip here and run there (gpu_check.py runs them first).
    cuda_tests = args.build / "test" / "unit" / "runtime" / "kiln_cuda_tests"
    if any(d.split(":")[0] == "cuda" for d in args.device) and cuda_tests.is_file():
        shutil.copy2(cuda_tests, args.out / "kiln_cuda_tests")

    cases = []
    if args.cases != "none":
        pattern = None if args.cases == "all" else re.compile(args.cases)
        cases = [c for c in models.all_cases("all") if pattern is None or pattern.search(c.name)]
    names = [m for m in args.models.split(",") if m]
    models_dir = Path(os.environ.get("KILN_MODELS_DIR", ROOT.parent / "shared" / "models"))

    manifest: list = []
    start = time.monotonic()
    work = args.out / ".models"
    for device in args.device:
        print(f"{device}: {len(names)} models, {len(cases)} operator cases", flush=True)
        suite = [m for m in args.suite_models.split(",") if m]
        for name in names + suite:
            path = (args.suite_dir if name in suite else models_dir) / f"{name}.onnx"
            if not path.is_file():
                print(f"gpu_bundle: {path} not found (KILN_MODELS_DIR, --suite-dir)",
                      file=sys.stderr)
                return 1
            for batch in [int(b) for b in args.batches.split(",")]:
                model = transport_model(
                    path, work / f"{name}-b{batch}.onnx", None if batch == 1 else batch,
                    args.periodic_weights)
                rng = np.random.default_rng(2024)
                feeds = (test_models.MODELS[name](rng) if name in test_models.MODELS
                         and batch == 1 else model_feeds(name, model, rng))
                entry_name = f"model-{name}" + (f"-b{batch}" if batch != 1 else "")
                add_entry(manifest, args.out, kiln, device, entry_name, model, feeds,
                          [], harness.RTOL, harness.ATOL, True, args.timeout,
                          {"arch": name, "batch": batch, "precision": "fp32"})
                for precision in args.precision:
                    add_entry(manifest, args.out, kiln, device, f"{entry_name}-{precision}",
                              model, feeds, ["--precision", precision],
                              *PRECISION_TOLERANCE[precision], True, args.timeout,
                              {"arch": name, "batch": batch, "precision": precision})
        for case in cases:
            if not case.for_device(device):
                continue  # a case for other devices (tensor-core tf32 cases: cuda only)
            model = case.save(work / case.name)
            add_entry(manifest, args.out, kiln, device, case.name, model, case.inputs,
                      list(case.compile_args), case.rtol, case.atol, case.bench_flops > 0,
                      args.timeout,
                      # gpu_check.py reports TFLOP/s of a case with a FLOP count, and
                      # times the PyTorch reference bench_info names beside it
                      {"flops": case.bench_flops, **case.bench_info}
                      if case.bench_flops else None)
            if not args.precision_cases or not PRODUCTS.search(case.name):
                continue
            for precision in args.precision:
                rtol, atol = PRECISION_TOLERANCE[precision]
                add_entry(manifest, args.out, kiln, device, f"{case.name}-{precision}", model,
                          case.inputs, [*case.compile_args, "--precision", precision],
                          max(rtol, case.rtol), max(atol, case.atol), False, args.timeout)
    shutil.rmtree(work, ignore_errors=True)
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    rejected = sum(1 for e in manifest if "rejected" in e)
    print(f"gpu_bundle: {len(manifest)} entries ({rejected} rejected by the compiler), "
          f"{size / 2**20:.1f} MiB in {args.out}, {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
