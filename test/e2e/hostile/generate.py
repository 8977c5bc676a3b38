"""Hostile models for `kiln compile`: one small file per class of attack that once crashed
kiln, made it run out of memory or time, or compiled a model that writes out of bounds or
answers wrong (issue 19), plus the classics (cycles, undefined inputs, negative and
overflowing dims, raw_data size mismatch, deep nesting, garbage).

Each case is tiny on disk and asks for something huge or impossible; `kiln compile` must
exit 1 with a message naming the node or value (`expect`) under a memory cap, never by a
signal. Cases with `ok=True` are ones ONNX defines (zero-sized dims): they must compile.

    python test/e2e/hostile/generate.py OUT_DIR    # writes OUT_DIR/<name>.onnx
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
U8 = TensorProto.UINT8


@dataclasses.dataclass
class Case:
    name: str
    data: bytes
    expect: tuple[str, ...]  # the message must contain all of these (case-insensitive)
    args: tuple[str, ...] = ()
    ok: bool = False  # ONNX defines it: it must compile


def _model(nodes, inputs, outputs, inits=(), opset=17) -> bytes:
    graph = helper.make_graph(nodes, "hostile", inputs, outputs, list(inits))
    ir = 8 if opset <= 18 else 10
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=ir)
    return model.SerializeToString()


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _i64(name, values):
    return helper.make_tensor(name, I64, [len(values)], values)


def _scalar(name, elem, value):
    return helper.make_tensor(name, elem, [], [value])


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _deeply_nested_type_model(depth: int) -> bytes:
    """A graph input whose type is a sequence of a sequence of ... `depth` deep, far past
    protobuf's recursion limit; written by hand (the Python protobuf refuses to build it)."""
    t = helper.make_tensor_type_proto(F, [2]).SerializeToString()
    for _ in range(depth):
        t = _field(4, _field(1, t))  # TypeProto.sequence_type{elem_type}
    extra_input = _field(11, _field(1, b"deep") + _field(2, t))  # GraphProto.input
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"], name="id")],
                              "hostile", [_vi("x", F, [2])], [_vi("y", F, [2])])
    model = helper.make_model(helper.make_graph([], "g", [], []),
                              opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    model.ClearField("graph")
    return model.SerializeToString() + _field(7, graph.SerializeToString() + extra_input)


def cases() -> list[Case]:
    out: list[Case] = []
    add = out.append

    # Expand to [2^31, 2^31] then ReduceSum: the element count times bytes wrapped to 0
    # and the run wrote past a 128-byte arena.
    add(Case("expand_reducesum_overflow", _model(
        [helper.make_node("Expand", ["x", "shape"], ["big"], name="expand_huge"),
         helper.make_node("ReduceSum", ["big"], ["y"], name="sum", keepdims=0)],
        [_vi("x", F, [1, 1])], [_vi("y", F, [])], [_i64("shape", [2**31, 2**31])]),
        ("expand_huge", "max-tensor-elements")))

    # Tile: d * r wrapped (repeats 2^62 + 1 on a dim of 4 -> 4).
    add(Case("tile_repeats_overflow", _model(
        [helper.make_node("Tile", ["x", "reps"], ["y"], name="tile_wrap")],
        [_vi("x", F, [4])], [_vi("y", F, [4])], [_i64("reps", [2**62 + 1])]),
        ("tile_wrap", "overflow")))

    # Range with an infinite limit became shape [0].
    add(Case("range_infinite_limit", _model(
        [helper.make_node("Range", ["s", "l", "d"], ["y"], name="range_inf")],
        [], [_vi("y", F, None)],
        [_scalar("s", F, 0.0), _scalar("l", F, float("inf")), _scalar("d", F, 1.0)],
        opset=17),
        ("range_inf", "limit")))

    # Attention with 0 KV heads: qHeads % kvHeads was a SIGFPE.
    add(Case("attention_zero_kv_heads", _model(
        [helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn_zero_kv")],
        [_vi("q", F, [1, 2, 3, 4]), _vi("k", F, [1, 0, 3, 4]), _vi("v", F, [1, 0, 3, 4])],
        [_vi("y", F, None)], opset=23),
        ("attn_zero_kv", "heads")))

    # ConvInteger / QLinearConv with 0 output channels divided by W's dim 0 (SIGFPE).
    # ONNX defines an empty output: they compile.
    add(Case("convinteger_zero_out_channels", _model(
        [helper.make_node("ConvInteger", ["x", "w"], ["y"], name="convint_zero")],
        [_vi("x", U8, [1, 1, 4, 4]), _vi("w", U8, [0, 1, 3, 3])],
        [_vi("y", TensorProto.INT32, [1, 0, 2, 2])]), (), ok=True))
    add(Case("qlinearconv_zero_out_channels", _model(
        [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                          ["y"], name="qconv_zero")],
        [_vi("x", U8, [1, 1, 4, 4]), _vi("w", U8, [0, 1, 3, 3])],
        [_vi("y", U8, [1, 0, 2, 2])],
        [_scalar("xs", F, 0.5), _scalar("xz", U8, 1), _scalar("ws", F, 0.25),
         _scalar("wz", U8, 2), _scalar("ys", F, 1.0), _scalar("yz", U8, 3)]), (), ok=True))

    # Conv with no input or no output channels: an empty filter once became an empty
    # LLVM global, and the translation divided by its element count (SIGFPE).
    add(Case("conv_zero_in_channels", _model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_cin0")],
        [_vi("x", F, [1, 0, 4, 4])], [_vi("y", F, [1, 2, 2, 2])],
        [helper.make_tensor("w", F, [2, 0, 3, 3], [])]), (), ok=True))
    add(Case("conv_zero_out_channels", _model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_cout0")],
        [_vi("x", F, [1, 2, 4, 4])], [_vi("y", F, [1, 0, 2, 2])],
        [helper.make_tensor("w", F, [0, 2, 3, 3], [])]), (), ok=True))

    # Out-of-memory from tiny files.
    add(Case("constantofshape_huge", _model(
        [helper.make_node("ConstantOfShape", ["shape"], ["y"], name="cos_huge")],
        [], [_vi("y", F, None)], [_i64("shape", [2**40, 2**40])]),
        ("cos_huge", "max-tensor-elements")))
    add(Case("hannwindow_huge", _model(
        [helper.make_node("HannWindow", ["size"], ["y"], name="hann_huge")],
        [], [_vi("y", F, None)], [_scalar("size", I64, 2**30)]),
        ("hann_huge", "max-table-elements")))
    add(Case("onehot_huge_depth", _model(
        [helper.make_node("OneHot", ["i", "depth", "vals"], ["y"], name="onehot_huge")],
        [_vi("i", I64, [2])], [_vi("y", F, None)],
        [_scalar("depth", I64, 2**40), helper.make_tensor("vals", F, [2], [0.0, 1.0])]),
        ("onehot_huge", "max-table-elements")))
    add(Case("resize_sizes_near_int64_max", _model(
        [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize_huge")],
        [_vi("x", F, [1, 1, 2, 2])], [_vi("y", F, None)],
        [_i64("sizes", [1, 1, 2**63 - 2, 2**63 - 2])]),
        ("resize_huge", "max-tensor-elements")))
    hidden = 1
    add(Case("lstm_huge_sequence", _model(
        [helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="lstm_long",
                          hidden_size=hidden)],
        [_vi("x", F, [100000, 1, 1])], [_vi("y", F, None)],
        [helper.make_tensor("w", F, [1, 4 * hidden, 1], [0.1] * 4),
         helper.make_tensor("r", F, [1, 4 * hidden, hidden], [0.1] * 4)]),
        ("lstm_long", "max-unrolled-steps")))
    # 4 GiB declared, 16 bytes given: checked before anything is allocated.
    big = onnx.TensorProto(name="big_weight", data_type=F, dims=[2**30])
    big.raw_data = b"\0" * 16
    add(Case("initializer_declares_huge_shape", _model(
        [helper.make_node("Add", ["x", "big_weight"], ["y"], name="add_big")],
        [_vi("x", F, [1])], [_vi("y", F, None)], [big]),
        ("big_weight", "raw_data")))
    huge = onnx.TensorProto(name="huge_weight", data_type=F, dims=[2**20, 2**20, 2**10])
    add(Case("initializer_over_tensor_limit", _model(
        [helper.make_node("Add", ["x", "huge_weight"], ["y"], name="add_huge")],
        [_vi("x", F, [1])], [_vi("y", F, None)], [huge]),
        ("huge_weight", "max-tensor-elements")))

    # Other dimension arithmetic a model controls.
    add(Case("pad_overflow", _model(
        [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad_wrap")],
        [_vi("x", F, [4])], [_vi("y", F, None)], [_i64("pads", [2**63 - 1, 2**63 - 1])]),
        ("pad_wrap", "overflow")))
    add(Case("depthtospace_blocksize_overflow", _model(
        [helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s_wrap", blocksize=2**32)],
        [_vi("x", F, [1, 4, 2, 2])], [_vi("y", F, None)]),
        ("d2s_wrap", "blocksize")))
    add(Case("conv_pads_overflow", _model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_wrap",
                          pads=[2**62, 2**62, 2**62, 2**62])],
        [_vi("x", F, [1, 1, 4, 4])], [_vi("y", F, None)],
        [helper.make_tensor("w", F, [1, 1, 1, 1], [1.0])]),
        ("conv_wrap", "overflow")))
    add(Case("reshape_zero_elements_huge_dims", _model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape_huge")],
        [_vi("x", F, [0, 4])], [_vi("y", F, None)], [_i64("shape", [2**62, 4, 0])]),
        ("reshape_huge", "64-bit")))

    # Unusable models.
    add(Case("duplicate_output_names", _model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [_vi("x", F, [2])], [_vi("y", F, [2]), _vi("y", F, [2])]),
        ("'y'", "twice")))

    # Limits lowered by flags.
    add(Case("constant_bytes_flag", _model(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add_w")],
        [_vi("x", F, [1024])], [_vi("y", F, [1024])],
        [helper.make_tensor("w", F, [1024], np.zeros(1024, np.float32).tolist())]),
        ("'w'", "max-constant-bytes"), args=("--max-constant-bytes", "1000")))
    add(Case("tensor_elements_flag", _model(
        [helper.make_node("Tile", ["x", "reps"], ["y"], name="tile_big")],
        [_vi("x", F, [4])], [_vi("y", F, None)], [_i64("reps", [1000])]),
        ("tile_big", "max-tensor-elements"), args=("--max-tensor-elements=1000",)))

    # Classics.
    add(Case("cycle", _model(
        [helper.make_node("Add", ["x", "b"], ["a"], name="cyc_add"),
         helper.make_node("Relu", ["a"], ["b"], name="cyc_relu"),
         helper.make_node("Identity", ["b"], ["y"], name="cyc_out")],
        [_vi("x", F, [2])], [_vi("y", F, [2])]), ("cycle",)))
    add(Case("undefined_input", _model(
        [helper.make_node("Add", ["x", "ghost"], ["y"], name="add_ghost")],
        [_vi("x", F, [2])], [_vi("y", F, [2])]), ("add_ghost", "'ghost'")))
    add(Case("negative_input_dim", _model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [_vi("x", F, [2, -5])], [_vi("y", F, None)]), ("'x'", "negative")))
    add(Case("overflowing_input_dims", _model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [_vi("x", F, [2**31, 2**31, 2**31])], [_vi("y", F, None)]),
        ("'x'", "max-tensor-elements")))
    short = onnx.TensorProto(name="short_weight", data_type=F, dims=[4, 4])
    short.raw_data = b"\0" * 7
    add(Case("raw_data_size_mismatch", _model(
        [helper.make_node("Add", ["x", "short_weight"], ["y"], name="add_short")],
        [_vi("x", F, [4, 4])], [_vi("y", F, [4, 4])], [short]),
        ("short_weight", "raw_data")))
    # Subgraphs nested 20 deep (If in If in ...) compile; with --max-subgraph-depth 10 the
    # If at depth 10 (if_9) is named. (Protobuf's recursion limit of 100 messages stops
    # a file at about 32 levels, below the default limit of 64.)
    def nested_ifs(levels):
        leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "leaf", [],
                                 [_vi("y", F, [2])])
        inner = leaf
        for depth in range(levels):
            node = helper.make_node("If", ["c"], ["y"], name=f"if_{depth}",
                                    then_branch=inner, else_branch=leaf)
            inner = helper.make_graph([node], f"g{depth + 1}", [], [_vi("y", F, [2])])
        return _model(list(inner.node), [_vi("c", TensorProto.BOOL, []), _vi("x", F, [2])],
                      [_vi("y", F, [2])])
    add(Case("nested_subgraphs", nested_ifs(20), (), ok=True))
    add(Case("deeply_nested_subgraphs", nested_ifs(20),
             ("if_9", "If", "max-subgraph-depth"), ("--max-subgraph-depth", "10")))
    add(Case("deeply_nested_type", _deeply_nested_type_model(5000), ("model",)))
    add(Case("garbage", bytes(range(256)) * 64, ("model",)))
    valid = _model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                   [_vi("x", F, [2])], [_vi("y", F, [2])])
    add(Case("truncated", valid[: len(valid) // 2], ("model",)))
    # A required attribute left out (found by kiln_fuzz_import: the op's accessor was
    # dereferenced by shape inference before the verifier ran).
    add(Case("cast_without_to", _model(
        [helper.make_node("Cast", ["x"], ["y"], name="cast_no_to")],
        [_vi("x", F, [2])], [_vi("y", F, [2])]), ("cast_no_to", "'to'", "missing")))
    add(Case("concat_without_axis", _model(
        [helper.make_node("Concat", ["x", "x"], ["y"], name="concat_no_axis")],
        [_vi("x", F, [2])], [_vi("y", F, [4])]), ("concat_no_axis", "'axis'", "missing")))
    # Clip-6's float `max` (NaN) turned into an int8 input: casting NaN to an integer was
    # undefined (found by kiln_fuzz_compile; UBSan).
    add(Case("clip6_nan_bound_int8", _model(
        [helper.make_node("Clip", ["x"], ["y"], name="clip_nan", min=-1.0, max=float("nan"))],
        [_vi("x", TensorProto.INT8, [3])], [_vi("y", TensorProto.INT8, [3])], opset=6),
        ("clip_nan", "'max'", "does not fit")))
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for case in cases():
        (folder / f"{case.name}.onnx").write_bytes(case.data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
