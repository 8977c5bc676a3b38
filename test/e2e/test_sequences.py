"""Sequence and Optional ops (followed at compile time by the importer, Sequences.h):
straight-line sequence ops, SequenceAt at a run-time position, SplitToSequence, a Loop
appending to a loop-carried sequence (a scan output, the loop stays a loop), Optional;
built with the onnx helper, compiled by kiln and compared with onnxruntime; and what kiln
rejects about them (an error naming the node or value)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import harness
from conftest import fail
from models import Case

OPSET = 18
F = T.FLOAT


def vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def model(nodes, inputs, outputs, initializers=(), check=True) -> onnx.ModelProto:
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], ir_version=8)
    if check:
        onnx.checker.check_model(m, full_check=True)
    return m


RNG = np.random.RandomState(23)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def seq_float():
    return h.make_tensor_sequence_value_info("unused", F, None).type


#===----------------------------------------------------------------------===//
# Models
#===----------------------------------------------------------------------===//


def seq_straight() -> Case:
    """Construct, insert (front, middle), erase (last), at (constant), length, and
    ConcatFromSequence with and without a new axis."""
    m = model([h.make_node("SequenceConstruct", ["a", "b", "c"], ["s0"]),
               h.make_node("SequenceInsert", ["s0", "d", "one"], ["s1"]),
               h.make_node("SequenceInsert", ["s1", "a", "zero"], ["s2"]),
               h.make_node("SequenceErase", ["s2"], ["s3"]),
               h.make_node("SequenceAt", ["s3", "two"], ["at2"]),
               h.make_node("SequenceLength", ["s3"], ["len"]),
               h.make_node("ConcatFromSequence", ["s3"], ["cat"], axis=1),
               h.make_node("ConcatFromSequence", ["s3"], ["stack"], axis=-1, new_axis=1),
               h.make_node("Slice", ["cat", "z1", "three1", "one1"], ["cat_part"]),
               h.make_node("Mul", ["at2", "cat_part"], ["scaled"])],
              [vi("a", F, [2, 3]), vi("b", F, [2, 3]), vi("c", F, [2, 3]), vi("d", F, [2, 3])],
              [vi("at2", F, [2, 3]), vi("len", T.INT64, []), vi("cat", F, [2, 12]),
               vi("stack", F, [2, 3, 4]), vi("scaled", F, [2, 3])],
              [const("zero", np.int64(0)), const("one", np.int64(1)),
               const("two", np.int64(2)), const("z1", np.array([0], np.int64)),
               const("three1", np.array([3], np.int64)), const("one1", np.array([1], np.int64))])
    return Case("seq_straight", m, {k: rand(2, 3) for k in "abcd"})


def seq_at_runtime(pos: int) -> Case:
    """SequenceAt at a position given at run time (negative too): the items stacked and
    gathered."""
    m = model([h.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
               h.make_node("SequenceAt", ["s", "pos"], ["y"]),
               h.make_node("Relu", ["y"], ["r"])],
              [vi("a", F, [4]), vi("b", F, [4]), vi("c", F, [4]), vi("pos", T.INT64, [])],
              [vi("r", F, [4])])
    return Case(f"seq_at_runtime_{pos}".replace("-", "m"), m,
                {"a": rand(4), "b": rand(4), "c": rand(4), "pos": np.array(pos, np.int64)})


def split_to_sequence() -> Case:
    """SplitToSequence by constant sizes, by a scalar size (the last item shorter), and
    into single elements without keepdims, each put back together."""
    m = model([h.make_node("SplitToSequence", ["x", "sizes"], ["s1"], axis=1),
               h.make_node("SequenceAt", ["s1", "minus1"], ["last"]),
               h.make_node("SplitToSequence", ["x", "two"], ["s2"], axis=1),
               h.make_node("SequenceLength", ["s2"], ["n2"]),
               h.make_node("Sub", ["n2", "one"], ["n2m1"]),
               h.make_node("SequenceAt", ["s2", "n2m1"], ["short"]),
               h.make_node("SplitToSequence", ["x"], ["s3"], axis=0, keepdims=0),
               h.make_node("ConcatFromSequence", ["s3"], ["back"], axis=1, new_axis=1),
               h.make_node("SplitToSequence", ["x"], ["s4"], axis=1),
               h.make_node("SequenceAt", ["s4", "pos"], ["col"])],
              [vi("x", F, [3, 5]), vi("pos", T.INT64, [])],
              [vi("last", F, [3, 4]), vi("n2", T.INT64, []), vi("short", F, [3, 1]),
               vi("back", F, [5, 3]), vi("col", F, [3, 1])],
              [const("sizes", np.array([1, 4], np.int64)), const("two", np.int64(2)),
               const("minus1", np.int64(-1)), const("one", np.int64(1))])
    return Case("split_to_sequence", m, {"x": rand(3, 5), "pos": np.array(3, np.int64)})


def loop_append() -> Case:
    """A Loop appends one tensor per iteration to a sequence that starts with one item;
    after it, the sequence is concatenated (both ways), measured and indexed at run time."""
    body = h.make_graph(
        [h.make_node("Cast", ["i"], ["fi"], to=F),
         h.make_node("Mul", ["v_in", "fi"], ["scaled"]),
         h.make_node("Add", ["scaled", "v_in"], ["v_out"]),
         h.make_node("SequenceInsert", ["seq_in", "v_out"], ["seq_out"]),
         h.make_node("Identity", ["c_in"], ["c_out"])],
        "body",
        [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", F, [2, 3]),
         h.make_tensor_sequence_value_info("seq_in", F, [2, 3])],
        [vi("c_out", T.BOOL, []), vi("v_out", F, [2, 3]),
         h.make_tensor_sequence_value_info("seq_out", F, [2, 3])])
    m = model([h.make_node("SequenceConstruct", ["x"], ["seq0"]),
               h.make_node("Loop", ["M", "", "x", "seq0"], ["v", "seq"], body=body),
               h.make_node("ConcatFromSequence", ["seq"], ["cat"], axis=0),
               h.make_node("ConcatFromSequence", ["seq"], ["stack"], axis=1, new_axis=1),
               h.make_node("SequenceLength", ["seq"], ["len"]),
               h.make_node("SequenceAt", ["seq", "pos"], ["picked"])],
              [vi("x", F, [2, 3]), vi("pos", T.INT64, [])],
              [vi("v", F, [2, 3]), vi("cat", F, [12, 3]), vi("stack", F, [2, 6, 3]),
               vi("len", T.INT64, []), vi("picked", F, [2, 3])],
              [const("M", np.int64(5))])
    return Case("loop_append", m, {"x": rand(2, 3) * 0.5, "pos": np.array(-2, np.int64)})


def greedy_decode_tokens() -> Case:
    """Greedy decoding the way exporters write it: the token of each step (argmax of a
    tiny decoder) is fed back and appended to a list; the list becomes the output."""
    vocab, dim, steps = 12, 16, 7
    emb, w, b = rand(vocab, dim), rand(dim, vocab) * 0.5, rand(vocab)
    body = h.make_graph(
        [h.make_node("Gather", ["emb", "tok_in"], ["e"], axis=0),
         h.make_node("Add", ["e", "h_in"], ["x"]),
         h.make_node("Tanh", ["x"], ["h_out"]),
         h.make_node("MatMul", ["h_out", "w"], ["l0"]),
         h.make_node("Add", ["l0", "b"], ["logits"]),
         h.make_node("ArgMax", ["logits"], ["tok_out"], axis=1, keepdims=0),
         h.make_node("SequenceInsert", ["toks_in", "tok_out"], ["toks_out"]),
         h.make_node("Identity", ["c_in"], ["c_out"])],
        "body",
        [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("tok_in", T.INT64, [1]),
         vi("h_in", F, [1, dim]), h.make_tensor_sequence_value_info("toks_in", T.INT64, [1])],
        [vi("c_out", T.BOOL, []), vi("tok_out", T.INT64, [1]), vi("h_out", F, [1, dim]),
         h.make_tensor_sequence_value_info("toks_out", T.INT64, [1])])
    m = model([h.make_node("SequenceEmpty", [], ["toks0"], dtype=T.INT64),
               h.make_node("Loop", ["M", "", "tok0", "h0", "toks0"], ["tok", "hid", "toks"],
                           body=body),
               h.make_node("ConcatFromSequence", ["toks"], ["tokens"], axis=0)],
              [vi("tok0", T.INT64, [1]), vi("h0", F, [1, dim])],
              [vi("tokens", T.INT64, [steps]), vi("hid", F, [1, dim])],
              [const("M", np.int64(steps)), const("emb", emb), const("w", w), const("b", b)])
    return Case("greedy_decode_tokens", m, {"tok0": np.array([5], np.int64),
                                            "h0": rand(1, dim) * 0.1})


def optionals() -> Case:
    """Optional of a tensor and an empty Optional: HasElement is a constant, GetElement the
    tensor; an If on HasElement takes the branch that has the value."""
    then_g = h.make_graph([h.make_node("OptionalGetElement", ["opt"], ["t"])], "then", [],
                          [vi("t", F, [3])])
    else_g = h.make_graph([h.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", F, [3])])
    m = model([h.make_node("Optional", ["x"], ["opt"]),
               h.make_node("Optional", [], ["none"], type=h.make_tensor_type_proto(F, [3])),
               h.make_node("OptionalHasElement", ["opt"], ["has"]),
               h.make_node("OptionalHasElement", ["none"], ["has_none"]),
               h.make_node("OptionalGetElement", ["opt"], ["got"]),
               h.make_node("Sigmoid", ["got"], ["sig"]),
               h.make_node("If", ["has"], ["picked"], then_branch=then_g, else_branch=else_g)],
              [vi("x", F, [3])],
              [vi("has", T.BOOL, []), vi("has_none", T.BOOL, []), vi("sig", F, [3]),
               vi("picked", F, [3])])
    return Case("optionals", m, {"x": rand(3)})


def seq_in_nested_subgraphs() -> Case:
    """A sequence built in the main graph, read inside a Loop body at the iteration number
    (a run-time position) and inside an If nested in it at a constant one."""
    then_g = h.make_graph([h.make_node("SequenceAt", ["s", "zero"], ["first"]),
                          h.make_node("Add", ["item", "first"], ["t"])],
                         "then", [], [vi("t", F, [4])])
    else_g = h.make_graph([h.make_node("Neg", ["item"], ["e"])], "else", [], [vi("e", F, [4])])
    body = h.make_graph(
        [h.make_node("SequenceAt", ["s", "i"], ["item"]),
         h.make_node("ReduceSum", ["item"], ["sum"], keepdims=0),
         h.make_node("Greater", ["sum", "zerof"], ["pos"]),
         h.make_node("If", ["pos"], ["picked"], then_branch=then_g, else_branch=else_g),
         h.make_node("Add", ["acc_in", "picked"], ["acc_out"]),
         h.make_node("Identity", ["c_in"], ["c_out"])],
        "body",
        [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("acc_in", F, [4])],
        [vi("c_out", T.BOOL, []), vi("acc_out", F, [4]), vi("picked", F, [4])])
    m = model([h.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
               h.make_node("Loop", ["M", "", "acc0"], ["acc", "all"], body=body)],
              [vi("a", F, [4]), vi("b", F, [4]), vi("c", F, [4]), vi("acc0", F, [4])],
              [vi("acc", F, [4]), vi("all", F, [3, 4])],
              [const("M", np.int64(3)), const("zero", np.int64(0)),
               const("zerof", np.float32(0))])
    return Case("seq_in_nested_subgraphs", m,
                {"a": rand(4), "b": rand(4) + 1.0, "c": rand(4) - 1.0, "acc0": rand(4)})


CASES = [seq_in_nested_subgraphs(), seq_straight(), seq_at_runtime(1), seq_at_runtime(-1), split_to_sequence(),
         loop_append(), greedy_decode_tokens(), optionals()]
SPECS = {c.name: harness.register(harness.CompileSpec(f"seq-{c.name}", c.save, c.compile_args))
         for c in CASES}


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=pytest.mark.compiles(SPECS[c.name].key)) for c in CASES])
def test_sequences(case: Case, compile_cache, tmp_path):
    compiled = compile_cache.get(SPECS[case.name])
    try:
        harness.run_and_compare(compile_cache.kiln, compiled, case.inputs, tmp_path,
                                rtol=case.rtol, atol=case.atol)
    except AssertionError as e:
        fail(f"{case.name}: {e}")


def test_appending_loop_is_not_unrolled(kiln, tmp_path):
    """A Loop of 100000 appends stays one loop (its items a scan output)."""
    body = h.make_graph(
        [h.make_node("Add", ["v_in", "one"], ["v_out"]),
         h.make_node("SequenceInsert", ["s_in", "v_out"], ["s_out"]),
         h.make_node("Identity", ["c_in"], ["c_out"])],
        "body",
        [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", F, [1]),
         h.make_tensor_sequence_value_info("s_in", F, [1])],
        [vi("c_out", T.BOOL, []), vi("v_out", F, [1]),
         h.make_tensor_sequence_value_info("s_out", F, [1])],
        [const("one", np.float32([1]))])
    m = model([h.make_node("SequenceEmpty", [], ["s0"]),
               h.make_node("Loop", ["M", "", "v0", "s0"], ["v", "s"], body=body),
               h.make_node("ConcatFromSequence", ["s"], ["all"], axis=0)],
              [vi("v0", F, [1])], [vi("all", F, [100000])], [const("M", np.int64(100000))])
    path = tmp_path / "model.onnx"
    onnx.save(m, path)
    out = tmp_path / "model.ll"
    result = kiln.compile(path, out, ("--emit", "llvm"))
    if result.returncode != 0:
        fail("kiln compile --emit llvm failed\n" + result.describe())
    adds = out.read_text().count("fadd")
    assert 1 <= adds < 64, f"{adds} fadd instructions: the Loop looks unrolled"


#===----------------------------------------------------------------------===//
# Rejected
#===----------------------------------------------------------------------===//


def carried_sequence_read() -> onnx.ModelProto:
    """The body reads the carried sequence (its length), not only appends to it."""
    body = h.make_graph(
        [h.make_node("SequenceLength", ["s_in"], ["n"]),
         h.make_node("Cast", ["n"], ["fn"], to=F),
         h.make_node("Add", ["v_in", "fn"], ["v_out"]),
         h.make_node("SequenceInsert", ["s_in", "v_out"], ["s_out"]),
         h.make_node("Identity", ["c_in"], ["c_out"])],
        "body",
        [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", F, [1]),
         h.make_tensor_sequence_value_info("s_in", F, [1])],
        [vi("c_out", T.BOOL, []), vi("v_out", F, [1]),
         h.make_tensor_sequence_value_info("s_out", F, [1])])
    return model([h.make_node("SequenceEmpty", [], ["s0"]),
                  h.make_node("Loop", ["M", "", "v0", "s0"], ["v", "s"], name="reads", body=body),
                  h.make_node("ConcatFromSequence", ["s"], ["all"], axis=0)],
                 [vi("v0", F, [1])], [vi("all", F, [3])], [const("M", np.int64(3))])


def empty_sequence_output() -> onnx.ModelProto:
    return model([h.make_node("SequenceEmpty", [], ["s"])],
                 [], [h.make_tensor_sequence_value_info("s", F, [1])], check=False)


def empty_optional_get() -> onnx.ModelProto:
    return model([h.make_node("Optional", [], ["o"], type=h.make_tensor_type_proto(F, [3])),
                  h.make_node("OptionalGetElement", ["o"], ["y"], name="get")],
                 [], [vi("y", F, [3])], check=False)


def sequence_into_tensor_op() -> onnx.ModelProto:
    return model([h.make_node("SequenceConstruct", ["x"], ["s"]),
                  h.make_node("Relu", ["s"], ["y"], name="relu")],
                 [vi("x", F, [3])], [vi("y", F, [3])], check=False)


def split_runtime_sizes() -> onnx.ModelProto:
    return model([h.make_node("SplitToSequence", ["x", "n"], ["s"], name="split", axis=0),
                  h.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
                 [vi("x", F, [6]), vi("n", T.INT64, [])], [vi("y", F, [6])])


REJECTED = [
    ("carried_sequence_read", carried_sequence_read,
     "node 'reads' (Loop, opset 18): loop-carried sequence 's0': kiln compiles a sequence a "
     "Loop carries only when the body appends one item to it per iteration"),
    ("empty_sequence_output", empty_sequence_output,
     "graph output 's' is an empty sequence (a sequence output is its items"),
    ("empty_optional_get", empty_optional_get,
     "node 'get' (OptionalGetElement, opset 18): input 'o' is an empty optional"),
    ("sequence_into_tensor_op", sequence_into_tensor_op,
     "node 'relu' (Relu, opset 18): input 's' is a sequence"),
    ("split_runtime_sizes", split_runtime_sizes,
     "node 'split' (SplitToSequence, opset 18): the number of items depends on a "
     "non-constant input 'split' ('n'"),
]


@pytest.mark.parametrize("name,build,message", REJECTED, ids=[r[0] for r in REJECTED])
def test_rejected(kiln, tmp_path, name, build, message):
    path = tmp_path / "model.onnx"
    onnx.save(build(), path)
    result = kiln.compile(path, tmp_path / "model.so")
    problem = harness.check_clean_failure(result, [message], name)
    if problem:
        fail(problem)
