"""int8 latency: a model quantized with onnxruntime.quantization.quantize_static (QDQ, per
channel, u8 activations, s8 weights, seeded random calibration inputs), run by kiln
compiled for the host (VNNI where it has it) and for forced ISAs (--cpu x86-64-v3: AVX2
without VNNI, the pmaddwd kernel), by kiln on the f32 model, and by onnxruntime on the
int8 model, at each thread count, in interleaved rounds (one kiln-run process per kiln
engine per round, then onnxruntime in this process), outputs compared with onnxruntime's.

    .venv/bin/python bench/int8_bench.py [--model /work/shared/models/mobilenet_v2.onnx]
        [--cpu native --cpu x86-64-v3] [--threads 1,2] [--rounds 5] [--repeat 20]

Prints one table (median over rounds of each round's median, ms; and CPU ms per run: kiln-run's
user + system time for N runs minus that for 1 run over N - 1, onnxruntime's process time over
its N runs, the measure that holds on a loaded machine) and writes it as JSON to
--out. Speed is measured here, never by timed tests (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent
LAT_RE = re.compile(r"latency_ms median=([0-9.]+) min=([0-9.]+) max=([0-9.]+)")


class Reader:
    """Seeded random calibration inputs (the bench's models take one float input)."""

    def __init__(self, name, shape, count, seed=11):
        rng = np.random.default_rng(seed)
        self.data = iter([{name: rng.standard_normal(shape).astype(np.float32)}
                          for _ in range(count)])

    def get_next(self):
        return next(self.data, None)


def quantize(src: pathlib.Path, dst: pathlib.Path, calibration: int,
             reduce_range: bool = False) -> None:
    import onnx
    from onnxruntime.quantization import (CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process
    model = onnx.load(str(src))
    inp = model.graph.input[0]
    shape = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
    pre = dst.with_suffix(".pre.onnx")
    quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
    quantize_static(str(pre), str(dst), Reader(inp.name, shape, calibration),
                    quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    calibrate_method=CalibrationMethod.MinMax, reduce_range=reduce_range)
    pre.unlink()


def ort_session(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="/work/shared/models/mobilenet_v2.onnx")
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--work", default=str(REPO / "bench" / "_work" / "int8"))
    p.add_argument("--out", default=str(REPO / "bench" / "results" / "int8.json"))
    p.add_argument("--cpu", action="append", help="kiln --cpu values (default native, "
                   "x86-64-v3)")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--calibration", type=int, default=8)
    p.add_argument("--no-f32", action="store_true", help="skip kiln on the f32 model")
    p.add_argument("--reduce-range", action="store_true", help="quantize_static with "
                   "reduce_range=True (7-bit weights: what onnxruntime advises for AVX2 without "
                   "VNNI, and what kiln's vpmaddubsw kernel needs to be exact)")
    p.add_argument("--baseline-build", help="another kiln build folder (e.g. main before a "
                   "change): its int8 artifacts for each --cpu are timed in the same rounds")
    args = p.parse_args()
    cpus = args.cpu or ["native", "x86-64-v3"]
    build = pathlib.Path(args.build)
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    src = pathlib.Path(args.model)
    qmodel = work / (src.stem + (".int8rr.onnx" if args.reduce_range else ".int8.onnx"))
    if not qmodel.exists():
        quantize(src, qmodel, args.calibration, args.reduce_range)

    import onnx
    inp = onnx.load(str(src)).graph.input[0]
    shape = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
    feed = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    np.save(work / "input.npy", feed)

    engines = {}  # name -> (.so, build folder)
    builds = [("kiln", build)]
    if args.baseline_build:
        builds.append(("baseline", pathlib.Path(args.baseline_build)))
    for label, folder in builds:
        for cpu in cpus:
            so = work / f"{src.stem}.int8.{cpu}.{label}.so"
            subprocess.run([str(folder / "bin" / "kiln"), "compile", str(qmodel), "-o",
                            str(so), "--cpu", cpu], check=True)
            engines[f"{label} int8 ({cpu})"] = (so, folder)
    if not args.no_f32:
        for cpu in cpus:  # f32 at each --cpu: int8 vs f32 on the same vector width
            so = work / f"{src.stem}.f32.{cpu}.so"
            subprocess.run([str(build / "bin" / "kiln"), "compile", str(src), "-o", str(so),
                            "--cpu", cpu], check=True)
            engines[f"kiln f32 ({cpu})"] = (so, build)

    results = {}
    for threads in [int(t) for t in args.threads.split(",")]:
        sess = ort_session(qmodel, threads)
        want = sess.run(None, {inp.name: feed})[0]
        rows = {name: [] for name in list(engines) + ["onnxruntime int8"]}
        cpu_rows = {name: [] for name in rows}
        diffs = {}

        def child_cpu():
            u = resource.getrusage(resource.RUSAGE_CHILDREN)
            return u.ru_utime + u.ru_stime

        for _ in range(args.rounds):
            for name, (so, folder) in engines.items():
                out = work / "out"
                spent = []
                for repeat in (1, args.repeat):  # CPU ms per run: (N runs - 1 run) / (N - 1)
                    cmd = [str(folder / "bin" / "kiln-run"), str(so), "--threads", str(threads),
                           "--repeat", str(repeat), "--input",
                           f"{inp.name}={work / 'input.npy'}", "--output-dir", str(out)]
                    c0 = child_cpu()
                    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
                    spent.append(child_cpu() - c0)
                cpu_rows[name].append((spent[1] - spent[0]) * 1e3 / max(args.repeat - 1, 1))
                rows[name].append(float(LAT_RE.search(r.stdout).group(1)))
                got = np.load(next(out.glob("*.npy")))
                # Relative to the output's largest magnitude (the shared mobilenet_v2's
                # logits are ~1e-9), and whether the top-1 class agrees.
                diffs[name] = (float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)),
                                                                      1e-30)),
                               bool(np.argmax(got) == np.argmax(want)))
            sess.run(None, {inp.name: feed})
            times = []
            c0 = time.process_time()
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                sess.run(None, {inp.name: feed})
                times.append((time.perf_counter() - t0) * 1e3)
            cpu_rows["onnxruntime int8"].append((time.process_time() - c0) * 1e3 / args.repeat)
            rows["onnxruntime int8"].append(statistics.median(times))
        ort_ms = statistics.median(rows["onnxruntime int8"])
        ort_cpu = statistics.median(cpu_rows["onnxruntime int8"])
        results[threads] = {name: {"ms": statistics.median(v),
                                   "rounds": [round(x, 3) for x in v],
                                   "vs_ort": round(statistics.median(v) / ort_ms, 3),
                                   "cpu_ms": round(statistics.median(cpu_rows[name]), 3),
                                   "cpu_rounds": [round(x, 3) for x in cpu_rows[name]],
                                   "cpu_vs_ort": round(statistics.median(cpu_rows[name]) /
                                                       ort_cpu, 3),
                                   "max_rel_diff_top1_vs_ort": diffs.get(name)}
                            for name, v in rows.items()}
    print(f"{qmodel.name}: median ms over {args.rounds} rounds of {args.repeat} runs")
    for threads, table in results.items():
        for name, e in table.items():
            d = e["max_rel_diff_top1_vs_ort"]
            print(f"  {threads} thread(s)  {name:34s} {e['ms']:8.2f} ms  x{e['vs_ort']:.2f} "
                  f"of onnxruntime; CPU {e['cpu_ms']:8.2f} ms x{e['cpu_vs_ort']:.2f}" + (f"  (max |diff| / max |out| {d[0]:.2g}, top-1 "
                                       f"{'agrees' if d[1] else 'differs'})" if d else ""))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"model": str(qmodel), "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
