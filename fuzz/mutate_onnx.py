"""Structure-aware mutations of ONNX models for kiln_fuzz_compile / kiln_fuzz_import.

libFuzzer mutates bytes, and most mutated models no longer parse or import; this writes
models that still parse, with one to three changes each: an attribute set to an edge
value (0, -1, 2^31 - 1, 2^40, NaN, an unknown string), an input's dimension or element
type changed or a dimension dropped, an initializer's dims or type changed, a node's
input rewired or a node removed. Most drop the declared output shapes and value_info,
so kiln infers them from the changed inputs.

    python fuzz/mutate_onnx.py SEED_DIR OUT_DIR COUNT RANDOM_SEED
    build/bin/kiln_fuzz_compile -runs=0 OUT_DIR/*    # stops at the first crash

SEED_DIR: e.g. build/fuzz/corpus/compile (its *.onnx files, seeded by scripts/fuzz.sh).
"""

from __future__ import annotations

import copy
import pathlib
import random
import sys

import onnx

INTS = [-3, -2, -1, 0, 1, 2, 3, 4, 7, 64, 2**31 - 1, -(2**31), 2**40]
FLOATS = [0.0, -1.0, 1e30, float("nan"), float("inf")]
STRINGS = [b"", b"NOTSET", b"SAME_UPPER", b"VALID", b"linear", b"nearest", b"cubic", b"xyz"]
ELEM_TYPES = [1, 2, 3, 5, 6, 7, 9, 10, 11, 16]


def mutate_attribute(m: onnx.ModelProto) -> None:
    nodes = [n for n in m.graph.node if n.attribute]
    if not nodes:
        return
    a = random.choice(random.choice(nodes).attribute)
    if a.type == onnx.AttributeProto.INT:
        a.i = random.choice(INTS)
    elif a.type == onnx.AttributeProto.INTS and len(a.ints):
        a.ints[random.randrange(len(a.ints))] = random.choice(INTS)
        if random.random() < 0.3:
            a.ints.append(random.choice(INTS))
        if random.random() < 0.3 and len(a.ints) > 1:
            del a.ints[-1]
    elif a.type == onnx.AttributeProto.FLOAT:
        a.f = random.choice(FLOATS)
    elif a.type == onnx.AttributeProto.STRING:
        a.s = random.choice(STRINGS)


def mutate_signature(m: onnx.ModelProto) -> None:
    values = list(m.graph.input) + list(m.graph.output)
    if not values:
        return
    tensor = random.choice(values).type.tensor_type
    dims = tensor.shape.dim
    if len(dims) and random.random() < 0.7:
        random.choice(dims).dim_value = random.choice([0, 1, 2, 3, 5, 8, 17])
    elif random.random() < 0.5:
        tensor.elem_type = random.choice(ELEM_TYPES)
    elif len(dims):
        del dims[-1]


def mutate_initializer(m: onnx.ModelProto) -> None:
    if not m.graph.initializer:
        return
    t = random.choice(m.graph.initializer)
    if t.dims and random.random() < 0.5:
        t.dims[random.randrange(len(t.dims))] = random.choice([0, 1, 2, 3])
    else:
        t.data_type = random.choice([1, 6, 7, 9, 10, 11])


def mutate_graph(m: onnx.ModelProto) -> None:
    nodes = list(m.graph.node)
    if not nodes:
        return
    node = random.choice(nodes)
    if node.input and random.random() < 0.5:
        names = [""] + [o for n in nodes for o in n.output] + [v.name for v in m.graph.input]
        node.input[random.randrange(len(node.input))] = random.choice(names)
    else:
        m.graph.node.remove(node)


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    src, out = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    count, seed = int(argv[3]), int(argv[4])
    random.seed(seed)
    models = []
    for path in sorted(src.glob("*.onnx")):
        try:
            model = onnx.load_from_string(path.read_bytes())
        except Exception:
            continue
        if len(model.graph.node):
            models.append((path.stem, model))
    if not models:
        print(f"mutate_onnx.py: no ONNX models in {src}", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    weights = [(0.45, mutate_attribute), (0.30, mutate_signature),
               (0.15, mutate_initializer), (0.10, mutate_graph)]
    for i in range(count):
        name, original = random.choice(models)
        m = copy.deepcopy(original)
        for _ in range(random.randint(1, 3)):
            random.choices([f for _, f in weights], [w for w, _ in weights])[0](m)
        if random.random() < 0.8:
            # Let kiln infer every shape after the inputs (declared ones would conflict).
            del m.graph.value_info[:]
            for o in m.graph.output:
                if o.type.HasField("tensor_type"):
                    o.type.tensor_type.ClearField("shape")
        (out / f"{name}-{seed}-{i}.onnx").write_bytes(m.SerializeToString())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
