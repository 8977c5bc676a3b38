#!/usr/bin/env python3
"""GFLOP/s of one MatMul compiled by kiln, checked against onnxruntime.

    python bench/matmul_gflops.py [--size 1024] [--repeat 20] [--build build]

Builds a one-node MatMul model (seeded constant B), compiles it with
`kiln compile`, runs it with `kiln-run --repeat`, checks the output against
onnxruntime on the same input and prints the median latency and GFLOP/s. A
figure is printed only when the outputs matched.

It also measures one core's FMA peak with a C loop (12 independent FMA
accumulators, 16-lane AVX-512 when the compiler targets it, else 8-lane AVX2),
compiled with clang for the host and run right before and after the MatMul,
and prints the MatMul's share of it. Cross-check: GHz (from /proc/cpuinfo) x
FLOP per cycle (2 FMA ports x lanes x 2 on Intel; AMD splits FMAs wider than its
units: 32 on Zen 4 with AVX-512, 16 on Zen 1 with AVX2), at the nominal clock, which
boosting cores exceed.
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build_model(m, k, n, path):
    rng = np.random.default_rng(0)
    b = rng.standard_normal((k, n), dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"], name="matmul")],
        "matmul",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(b, "b")],
    )
    # onnxruntime 1.31 reads IR versions up to 13; opset 17 needs only IR 8.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save(model, path)


PEAK_C = r"""
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
#ifdef __AVX512F__
typedef __m512 V;
#define FMA _mm512_fmadd_ps
#define SET _mm512_set1_ps
#define LANES 16
#else
typedef __m256 V;
#define FMA _mm256_fmadd_ps
#define SET _mm256_set1_ps
#define LANES 8
#endif
int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 20000000;
  V a0 = SET(1), a1 = SET(1), a2 = SET(1), a3 = SET(1), a4 = SET(1), a5 = SET(1);
  V a6 = SET(1), a7 = SET(1), a8 = SET(1), a9 = SET(1), a10 = SET(1), a11 = SET(1);
  V m = SET(0.999999f), c = SET(1e-7f);
  double best = 0;
  for (int r = 0; r < 7; r++) {
    double t = now();
    for (long i = 0; i < iters; i++) {
      a0 = FMA(a0, m, c); a1 = FMA(a1, m, c); a2 = FMA(a2, m, c);
      a3 = FMA(a3, m, c); a4 = FMA(a4, m, c); a5 = FMA(a5, m, c);
      a6 = FMA(a6, m, c); a7 = FMA(a7, m, c); a8 = FMA(a8, m, c);
      a9 = FMA(a9, m, c); a10 = FMA(a10, m, c); a11 = FMA(a11, m, c);
      __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4),
                       "+x"(a5), "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9),
                       "+x"(a10), "+x"(a11));
    }
    double g = 12.0 * 2 * LANES * iters / (now() - t) / 1e9;
    if (g > best) best = g;
  }
  float sink[LANES];
  memcpy(sink, &a0, sizeof sink);
  printf("%.3f %d %g\n", best, LANES, (double)sink[0] + ((float *)&a11)[0]);
  return 0;
}
"""


def measure_peak(tmp):
    """One core's FMA peak in GFLOP/s (best of 7) and the vector lanes used."""
    clang = os.environ.get("KILN_CLANG") or shutil.which("clang-22") or shutil.which("clang")
    if not clang:
        return None, None
    src = tmp / "peak.c"
    src.write_text("#include <string.h>\n" + PEAK_C)
    subprocess.run([clang, "-O2", "-march=native", src, "-o", tmp / "peak"], check=True)
    out = subprocess.run([tmp / "peak"], check=True, capture_output=True, text=True).stdout
    gflops, lanes, _ = out.split()
    return float(gflops), int(lanes)


def cpu_ghz():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("cpu MHz"):
                return float(line.split(":")[1]) / 1000
    except OSError:
        pass
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024, help="M = K = N")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cpu", default="native")
    parser.add_argument("--build", default=os.environ.get("KILN_BUILD_DIR", "build"))
    parser.add_argument("--no-peak", action="store_true", help="skip the FMA peak loop")
    args = parser.parse_args()

    bindir = pathlib.Path(args.build) / "bin"
    size = args.size
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        model = tmp / "matmul.onnx"
        build_model(size, size, size, model)
        subprocess.run([bindir / "kiln", "compile", model, "-o", tmp / "matmul.so",
                        "--cpu", args.cpu], check=True)
        a = np.random.default_rng(1).standard_normal((size, size), dtype=np.float32)
        np.save(tmp / "a.npy", a)
        cmd = [bindir / "kiln-run", tmp / "matmul.so", "--input", f"a={tmp / 'a.npy'}",
               "--output-dir", tmp / "out", "--threads", str(args.threads)]
        out = subprocess.run(cmd + ["--repeat", str(args.repeat)],
                             check=True, capture_output=True, text=True).stdout
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        expected = session.run(None, {"a": a})[0]
        actual = np.load(tmp / "out" / "c.npy")
        if not np.allclose(actual, expected, rtol=1e-3, atol=1e-4):
            print("MISMATCH: max abs error", float(np.max(np.abs(actual - expected))))
            return 1
        median = float(re.search(r"median=([0-9.]+)", out).group(1))
        best = float(re.search(r"min=([0-9.]+)", out).group(1))
        gflops = 2.0 * size ** 3 / (median * 1e-3) / 1e9
        best_gflops = 2.0 * size ** 3 / (best * 1e-3) / 1e9
        print(f"MatMul {size}x{size}x{size} fp32, {args.threads} thread(s), --cpu {args.cpu}: "
              f"median {median:.3f} ms, {gflops:.1f} GFLOP/s; best {best:.3f} ms, "
              f"{best_gflops:.1f} GFLOP/s (outputs match onnxruntime)")
        if not args.no_peak:
            peaks = [measure_peak(tmp)[0]]
            subprocess.run(cmd + ["--repeat", "3"], check=True, capture_output=True)
            peak2, lanes = measure_peak(tmp)
            peaks.append(peak2)
            if peaks[0] is None:
                print("FMA peak: no clang found to build the peak loop")
                return 0
            peak = max(peaks)
            ghz = cpu_ghz()
            # The nominal clock of a VM's /proc/cpuinfo is below the boost
            # clock the loop runs at, so FLOP/cycle may come out above these.
            cross = (f"; /proc/cpuinfo says {ghz:.2f} GHz (nominal; cores boost above it), "
                     f"i.e. {peak / ghz:.1f} FLOP/cycle (2 ports x {lanes} lanes x 2 = "
                     f"{4 * lanes} on Intel; 32 on AMD Zen 4, whose 512-bit FMAs issue as two "
                     f"256-bit halves, 16 on Zen 1, whose 256-bit ones do)") if ghz else ""
            print(f"FMA peak of one core: {peak:.1f} GFLOP/s ({lanes}-lane FMA, 12 chains, "
                  f"best of 7 before and after){cross}")
            print(f"MatMul at {100 * gflops / (peak * args.threads):.0f}% of "
                  f"{args.threads} core(s)' peak (median), "
                  f"{100 * best_gflops / (peak * args.threads):.0f}% (best run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
