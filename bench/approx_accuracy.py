"""Accuracy of kiln's exp / erf / tanh / log / sigmoid approximations (kiln-approximate-math).

Builds a model computing Exp, Erf, Tanh, Log and Sigmoid of one input, compiles it with
kiln and bench/approx_accuracy.c with clang, and prints the max error (ulp and
relative) against double-precision libm over every STEP-th f32 bit pattern.
Usage: .venv/bin/python bench/approx_accuracy.py [STEP]   (default 64: ~20 s)
"""
import pathlib
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parent.parent
N = 1 << 22  # must match N in approx_accuracy.c


def main():
    step = sys.argv[1] if len(sys.argv) > 1 else "64"
    ops = ["Exp", "Erf", "Tanh", "Log", "Sigmoid"]
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], [op.lower()]) for op in ops], "approx",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N])],
        [helper.make_tensor_value_info(op.lower(), TensorProto.FLOAT, [N]) for op in ops])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        onnx.save(model, tmp / "approx.onnx")
        subprocess.run([ROOT / "build/bin/kiln", "compile", tmp / "approx.onnx",
                        "-o", tmp / "approx.so"], check=True)
        subprocess.run(["clang", "-O2", "-I", ROOT / "runtime/include",
                        ROOT / "bench/approx_accuracy.c", "-o", tmp / "check",
                        "-ldl", "-lm"], check=True)
        subprocess.run([tmp / "check", tmp / "approx.so", step], check=True)


if __name__ == "__main__":
    main()
