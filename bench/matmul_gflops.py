#!/usr/bin/env python3
"""GFLOP/s of one MatMul compiled by kiln, checked against onnxruntime.

    python bench/matmul_gflops.py [--size 1024] [--repeat 20] [--build build]

Builds a one-node MatMul model (seeded constant B), compiles it with
`kiln compile`, runs it with `kiln-run --repeat`, checks the output against
onnxruntime on the same input and prints the median latency and GFLOP/s. A
figure is printed only when the outputs matched.
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024, help="M = K = N")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cpu", default="native")
    parser.add_argument("--build", default=os.environ.get("KILN_BUILD_DIR", "build"))
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
        out = subprocess.run(
            [bindir / "kiln-run", tmp / "matmul.so", "--input", f"a={tmp / 'a.npy'}",
             "--output-dir", tmp / "out", "--repeat", str(args.repeat),
             "--threads", str(args.threads)],
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
        gflops = 2.0 * size ** 3 / (median * 1e-3) / 1e9
        print(f"MatMul {size}x{size}x{size} fp32, {args.threads} thread(s), --cpu {args.cpu}: "
              f"median {median:.3f} ms, {gflops:.1f} GFLOP/s (outputs match onnxruntime)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
