#!/usr/bin/env python3
"""Writes the example's ONNX models with the onnx helper API and seeded random weights.

    python make_models.py --out DIR [--seed S] [--only classifier|regressor]

classifier.onnx  image[1,3,16,16] -> Conv 3x3 (8) -> Relu -> MaxPool 2x2 -> Conv 3x3 (16) ->
                 Relu -> GlobalAveragePool -> Flatten -> Gemm (10) -> Softmax -> probs[1,10]
regressor.onnx   features[4,32] -> MatMul (64) + bias -> Tanh -> hidden[4,64]
                                   hidden -> MatMul (3) + bias -> Sigmoid -> score[4,3]
                 (two outputs)

Needs the `onnx` and `numpy` packages (kiln's requirements.txt has both).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _init(name: str, array: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), name)


def classifier(rng: np.random.Generator) -> onnx.ModelProto:
    inits = [
        _init("w1", rng.normal(0, 0.4, (8, 3, 3, 3))),
        _init("b1", rng.normal(0, 0.1, (8,))),
        _init("w2", rng.normal(0, 0.2, (16, 8, 3, 3))),
        _init("b2", rng.normal(0, 0.1, (16,))),
        _init("wf", rng.normal(0, 0.3, (10, 16))),
        _init("bf", rng.normal(0, 0.1, (10,))),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             producer_name="kiln-example", ir_version=8)


def regressor(rng: np.random.Generator) -> onnx.ModelProto:
    inits = [
        _init("w1", rng.normal(0, 0.2, (32, 64))),
        _init("b1", rng.normal(0, 0.1, (64,))),
        _init("w2", rng.normal(0, 0.3, (64, 3))),
        _init("b2", rng.normal(0, 0.1, (3,))),
    ]
    nodes = [
        helper.make_node("MatMul", ["features", "w1"], ["m1"], name="mm1"),
        helper.make_node("Add", ["m1", "b1"], ["a1"], name="add1"),
        helper.make_node("Tanh", ["a1"], ["hidden"], name="tanh"),
        helper.make_node("MatMul", ["hidden", "w2"], ["m2"], name="mm2"),
        helper.make_node("Add", ["m2", "b2"], ["a2"], name="add2"),
        helper.make_node("Sigmoid", ["a2"], ["score"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, "regressor",
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, [4, 32])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [4, 64]),
         helper.make_tensor_value_info("score", TensorProto.FLOAT, [4, 3])],
        initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             producer_name="kiln-example", ir_version=8)


MODELS = {"classifier": classifier, "regressor": regressor}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write into")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights")
    parser.add_argument("--only", choices=sorted(MODELS), help="write just this model")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for index, (name, build) in enumerate(MODELS.items()):
        if args.only and name != args.only:
            continue
        model = build(np.random.default_rng([args.seed, index]))
        onnx.checker.check_model(model)
        onnx.save(model, str(args.out / f"{name}.onnx"))


if __name__ == "__main__":
    main()
