"""If, Loop and Scan (subgraphs as scf.if / scf.for / scf.while, not unrolled), built with the
onnx helper, compiled by kiln and compared with onnxruntime; and what kiln rejects about
them until shapes may be dynamic (an error naming the node)."""

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

OPSET = 17
F = T.FLOAT


def vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    return m


def body_graph(nodes, inputs, outputs, initializers=()) -> onnx.GraphProto:
    return h.make_graph(nodes, "body", inputs, outputs, initializer=list(initializers))


RNG = np.random.RandomState(17)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


#===----------------------------------------------------------------------===//
# Models
#===----------------------------------------------------------------------===//


def if_tensor_cond() -> Case:
    """If on a computed condition; the branches read the outer x; two outputs."""
    then_g = body_graph([h.make_node("Add", ["x", "x"], ["t"]), h.make_node("Relu", ["x"], ["t2"])],
                        [], [vi("t", F, [4, 8]), vi("t2", F, [4, 8])])
    else_g = body_graph([h.make_node("Mul", ["x", "x"], ["e"]), h.make_node("Neg", ["x"], ["e2"])],
                        [], [vi("e", F, [4, 8]), vi("e2", F, [4, 8])])
    m = model([h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
               h.make_node("Greater", ["s", "zero"], ["c"]),
               h.make_node("If", ["c"], ["y", "z"], then_branch=then_g, else_branch=else_g)],
              [vi("x", F, [4, 8])], [vi("y", F, [4, 8]), vi("z", F, [4, 8])],
              [const("zero", np.float32(0))])
    return Case("if_tensor_cond", m, {"x": rand(4, 8)})


def if_constant_cond() -> Case:
    """A constant condition: only the branch taken is compiled (the other one reshapes to
    a shape given at run time, which kiln rejects on its own)."""
    then_g = body_graph([h.make_node("Sigmoid", ["x"], ["t"])], [], [vi("t", F, [3])])
    else_g = body_graph([h.make_node("Reshape", ["x", "s"], ["e"])], [], [vi("e", F, [3])])
    m = model([h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
              [vi("x", F, [3]), vi("s", T.INT64, [1])], [vi("y", F, [3])],
              [const("c", np.array(True))])
    return Case("if_constant_cond", m, {"x": rand(3), "s": np.array([3], np.int64)})


def if_constant_branch() -> Case:
    """One branch yields a constant, the other a new tensor, and the If's result is then
    the input of elementwise ops (which must not write into the constant); a second If
    yields a graph input or a new tensor."""
    then_g = body_graph([h.make_node("Identity", ["k"], ["t"])], [], [vi("t", F, [4])])
    else_g = body_graph([h.make_node("Neg", ["x"], ["e"])], [], [vi("e", F, [4])])
    pass_g = body_graph([h.make_node("Identity", ["x"], ["p"])], [], [vi("p", F, [4])])
    m = model([h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
               h.make_node("Greater", ["s", "zero"], ["c"]),
               h.make_node("If", ["c"], ["y0"], then_branch=then_g, else_branch=else_g),
               h.make_node("Add", ["y0", "x"], ["y1"]),
               h.make_node("Mul", ["y1", "y1"], ["y2"]),
               h.make_node("If", ["c"], ["w"], then_branch=pass_g, else_branch=else_g),
               h.make_node("Relu", ["w"], ["w2"])],
              [vi("x", F, [4])], [vi("y2", F, [4]), vi("w2", F, [4]), vi("y0", F, [4])],
              [const("k", np.array([1, 2, 3, 4], np.float32)), const("zero", np.float32(0))])
    return Case("if_constant_branch", m, {"x": np.array([1, -2, 3, 4], np.float32)})


def if_constant_branch_else() -> Case:
    case = if_constant_branch()
    case.name = "if_constant_branch_else"
    case.inputs = {"x": np.array([-1, -2, 3, -4], np.float32)}
    return case


def loop_scan_outputs() -> Case:
    """Trip count M, condition input true, a nested If inside the body (on the iteration
    number's parity), loop-carried values and two scan outputs."""
    then_g = body_graph([h.make_node("Add", ["acc_in", "w"], ["t"])], [], [vi("t", F, [2, 3])])
    else_g = body_graph([h.make_node("Mul", ["acc_in", "half"], ["e"])], [], [vi("e", F, [2, 3])])
    body = body_graph(
        [h.make_node("Mod", ["i", "two"], ["r"]),
         h.make_node("Equal", ["r", "zero64"], ["even"]),
         h.make_node("If", ["even"], ["acc_out"], then_branch=then_g, else_branch=else_g),
         h.make_node("Add", ["n_in", "one64"], ["n_out"]),
         h.make_node("ReduceSum", ["acc_out", "axis1"], ["row"], keepdims=0),
         h.make_node("Cast", ["i"], ["fi"], to=F),
         h.make_node("Mul", ["acc_out", "fi"], ["scaled"]),
         h.make_node("Identity", ["c_in"], ["c_out"])],
        [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("acc_in", F, [2, 3]),
         vi("n_in", T.INT64, [])],
        [vi("c_out", T.BOOL, []), vi("acc_out", F, [2, 3]), vi("n_out", T.INT64, []),
         vi("row", F, [2]), vi("scaled", F, [2, 3])],
        [const("two", np.int64(2)), const("zero64", np.int64(0)), const("one64", np.int64(1)),
         const("half", np.float32(0.5)), const("axis1", np.array([1], np.int64))])
    m = model([h.make_node("Loop", ["M", "cond", "acc0", "n0"],
                           ["acc", "n", "rows", "scaled_all"], body=body)],
              [vi("acc0", F, [2, 3]), vi("w", F, [2, 3])],
              [vi("acc", F, [2, 3]), vi("n", T.INT64, []), vi("rows", F, [5, 2]),
               vi("scaled_all", F, [5, 2, 3])],
              [const("M", np.int64(5)), const("cond", np.array(True)), const("n0", np.int64(0))])
    return Case("loop_scan_outputs", m, {"acc0": rand(2, 3), "w": rand(2, 3)})


def loop_swap() -> Case:
    """A body yielding its loop-carried values swapped (each the other's old value): one is
    copied aside before either is overwritten."""
    body = body_graph([h.make_node("Identity", ["c_in"], ["c_out"])],
                      [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("a", F, [3]),
                       vi("b", F, [3])],
                      [vi("c_out", T.BOOL, []), vi("b", F, [3]), vi("a", F, [3])])
    m = model([h.make_node("Loop", ["M", "", "a0", "b0"], ["a", "b"], body=body)],
              [vi("a0", F, [3]), vi("b0", F, [3])], [vi("a", F, [3]), vi("b", F, [3])],
              [const("M", np.int64(5))])
    return Case("loop_swap", m, {"a0": rand(3), "b0": rand(3)})


def loop_while() -> Case:
    """A run-time trip count and a condition the body computes: scf.while."""
    body = body_graph(
        [h.make_node("Mul", ["v_in", "factor"], ["v_out"]),
         h.make_node("ReduceSum", ["v_out"], ["s"], keepdims=0),
         h.make_node("Less", ["s", "limit"], ["c_out"])],
        [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", F, [64])],
        [vi("c_out", T.BOOL, []), vi("v_out", F, [64])],
        [const("factor", np.float32(1.5))])
    m = model([h.make_node("Loop", ["M", "", "v0"], ["v"], body=body)],
              [vi("v0", F, [64]), vi("M", T.INT64, []), vi("limit", F, [])],
              [vi("v", F, [64])])
    v0 = np.abs(rand(64)) + 0.1
    return Case("loop_while", m, {"v0": v0, "M": np.array(100, np.int64),
                                  "limit": np.array(1000, np.float32)})


def loop_while_trip_limit() -> Case:
    """The same loop stopped by its trip count before the condition turns false."""
    case = loop_while()
    case.name = "loop_while_trip_limit"
    case.inputs = dict(case.inputs, M=np.array(3, np.int64))
    return case


def loop_zero_trips() -> Case:
    """A run-time condition false on entry: the initial values come out unchanged."""
    body = body_graph([h.make_node("Add", ["v_in", "v_in"], ["v_out"]),
                       h.make_node("Identity", ["c_in"], ["c_out"])],
                      [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", F, [4])],
                      [vi("c_out", T.BOOL, []), vi("v_out", F, [4])])
    m = model([h.make_node("Loop", ["M", "go", "v0"], ["v"], body=body)],
              [vi("v0", F, [4]), vi("go", T.BOOL, [])], [vi("v", F, [4])],
              [const("M", np.int64(7))])
    return Case("loop_zero_trips", m, {"v0": rand(4), "go": np.array(False)})


def greedy_decode() -> Case:
    """Greedy decoding: each step embeds the last token, runs a tiny MLP (MatMul + bias +
    Tanh + MatMul), takes the argmax as the next token and records it (scan output)."""
    vocab, dim, hidden, steps = 16, 32, 64, 6
    emb = rand(vocab, dim)
    w1, b1, w2 = rand(dim, hidden) * 0.3, rand(hidden), rand(hidden, vocab) * 0.3
    body = body_graph(
        [h.make_node("Gather", ["emb", "tok_in"], ["e"], axis=0),
         h.make_node("Add", ["e", "state_in"], ["x"]),
         h.make_node("MatMul", ["x", "w1"], ["h1"]),
         h.make_node("Add", ["h1", "b1"], ["h2"]),
         h.make_node("Tanh", ["h2"], ["h3"]),
         h.make_node("MatMul", ["h3", "w2"], ["logits"]),
         h.make_node("ArgMax", ["logits"], ["tok_out"], axis=1, keepdims=0),
         h.make_node("Slice", ["h3", "s0", "s1", "s_axis"], ["state_out"]),
         h.make_node("Identity", ["c_in"], ["c_out"])],
        [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("tok_in", T.INT64, [1]),
         vi("state_in", F, [1, dim])],
        [vi("c_out", T.BOOL, []), vi("tok_out", T.INT64, [1]), vi("state_out", F, [1, dim]),
         vi("logits", F, [1, vocab])],
        [const("s0", np.array([0], np.int64)), const("s1", np.array([dim], np.int64)),
         const("s_axis", np.array([1], np.int64))])
    m = model([h.make_node("Loop", ["M", "", "tok0", "state0"],
                           ["tok", "state", "all_logits"], body=body),
               h.make_node("ArgMax", ["all_logits"], ["tokens"], axis=2, keepdims=0)],
              [vi("tok0", T.INT64, [1]), vi("state0", F, [1, dim])],
              [vi("tok", T.INT64, [1]), vi("tokens", T.INT64, [steps, 1]),
               vi("all_logits", F, [steps, 1, vocab])],
              [const("M", np.int64(steps)), const("emb", emb), const("w1", w1),
               const("b1", b1), const("w2", w2)])
    return Case("greedy_decode", m, {"tok0": np.array([3], np.int64),
                                     "state0": rand(1, dim) * 0.1})


def scan_cumsum() -> Case:
    """Scan as a cumulative sum over axis 1, backwards, stacked along the last axis."""
    body = body_graph([h.make_node("Add", ["s_in", "x"], ["s_out"]),
                       h.make_node("Identity", ["s_out"], ["y"])],
                      [vi("s_in", F, [3]), vi("x", F, [3])],
                      [vi("s_out", F, [3]), vi("y", F, [3])])
    m = model([h.make_node("Scan", ["init", "xs"], ["final", "ys"], body=body,
                           num_scan_inputs=1, scan_input_axes=[1], scan_input_directions=[1],
                           scan_output_axes=[-1])],
              [vi("init", F, [3]), vi("xs", F, [3, 7])],
              [vi("final", F, [3]), vi("ys", F, [3, 7])])
    return Case("scan_cumsum", m, {"init": rand(3), "xs": rand(3, 7)})


def scan_rnn_cell() -> Case:
    """A simple RNN cell as a Scan: h' = tanh(x W + h R + b), 12 steps, outputs h per step
    in reverse order."""
    dim, hidden, steps = 48, 256, 12
    w, r, b = rand(dim, hidden) * 0.2, rand(hidden, hidden) * 0.05, rand(hidden)
    body = body_graph(
        [h.make_node("MatMul", ["x", "w"], ["xw"]),
         h.make_node("MatMul", ["h_in", "r"], ["hr"]),
         h.make_node("Add", ["xw", "hr"], ["s"]),
         h.make_node("Add", ["s", "b"], ["s2"]),
         h.make_node("Tanh", ["s2"], ["h_out"]),
         h.make_node("Identity", ["h_out"], ["y"])],
        [vi("h_in", F, [4, hidden]), vi("x", F, [4, dim])],
        [vi("h_out", F, [4, hidden]), vi("y", F, [4, hidden])])
    m = model([h.make_node("Scan", ["h0", "xs"], ["h", "ys"], body=body, num_scan_inputs=1,
                           scan_output_directions=[1])],
              [vi("h0", F, [4, hidden]), vi("xs", F, [steps, 4, dim])],
              [vi("h", F, [4, hidden]), vi("ys", F, [steps, 4, hidden])],
              [const("w", w), const("r", r), const("b", b)])
    return Case("scan_rnn_cell", m, {"h0": rand(4, hidden) * 0.1, "xs": rand(steps, 4, dim)})


def scan_decomposed_ops() -> Case:
    """Ops kiln-decompose expands (LpNormalization, HardSwish) inside a Scan body."""
    body = body_graph([h.make_node("LpNormalization", ["x"], ["n"], axis=-1, p=2),
                       h.make_node("HardSwish", ["n"], ["hs"]),
                       h.make_node("Add", ["s_in", "hs"], ["s_out"]),
                       h.make_node("Identity", ["s_out"], ["y"])],
                      [vi("s_in", F, [2, 4]), vi("x", F, [2, 4])],
                      [vi("s_out", F, [2, 4]), vi("y", F, [2, 4])])
    m = model([h.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1)],
              [vi("s0", F, [2, 4]), vi("xs", F, [3, 2, 4])],
              [vi("s", F, [2, 4]), vi("ys", F, [3, 2, 4])])
    return Case("scan_decomposed_ops", m, {"s0": rand(2, 4), "xs": rand(3, 2, 4)})


def loop_large_body() -> Case:
    """A body whose elementwise ops are large enough for kiln's parallel loops, its
    intermediates in buffers of each iteration."""
    body = body_graph([h.make_node("Mul", ["v_in", "k"], ["a"]),
                       h.make_node("Add", ["a", "x"], ["b"]),
                       h.make_node("Tanh", ["b"], ["v_out"]),
                       h.make_node("Identity", ["c_in"], ["c_out"])],
                      [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", F, [256, 512])],
                      [vi("c_out", T.BOOL, []), vi("v_out", F, [256, 512])],
                      [const("k", np.float32(0.9))])
    m = model([h.make_node("Loop", ["M", "", "x"], ["v"], body=body)],
              [vi("x", F, [256, 512])], [vi("v", F, [256, 512])], [const("M", np.int64(4))])
    return Case("loop_large_body", m, {"x": rand(256, 512)})


def nested_loops() -> Case:
    """A Scan inside a Loop inside a Loop: the innermost body reads a value of the main
    graph (w) and one of the enclosing body (its iteration number j); the outer body
    yields a block argument unchanged and a copy of a value of the main graph."""
    scan_body = body_graph([h.make_node("Mul", ["x", "w"], ["xw"]),
                            h.make_node("Add", ["s_in", "xw"], ["s_mid"]),
                            h.make_node("Add", ["s_mid", "fj"], ["s_out"]),
                            h.make_node("Identity", ["s_out"], ["y"])],
                           [vi("s_in", F, [3]), vi("x", F, [3])],
                           [vi("s_out", F, [3]), vi("y", F, [3])])
    inner = body_graph([h.make_node("Cast", ["j"], ["fj"], to=F),
                        h.make_node("Scan", ["acc_in", "xs"], ["acc_out", "ys"], body=scan_body,
                                    num_scan_inputs=1),
                        h.make_node("ReduceMax", ["ys"], ["mx"], keepdims=0),
                        h.make_node("Identity", ["c_in"], ["c_out"])],
                       [vi("j", T.INT64, []), vi("c_in", T.BOOL, []), vi("acc_in", F, [3])],
                       [vi("c_out", T.BOOL, []), vi("acc_out", F, [3]), vi("mx", F, [])])
    outer = body_graph([h.make_node("Loop", ["three", "", "acc_in"], ["acc_out", "maxes"],
                                    body=inner),
                        h.make_node("Identity", ["w"], ["w_copy"]),
                        h.make_node("Identity", ["c_in"], ["c_out"])],
                       [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("acc_in", F, [3]),
                        vi("keep", F, [2])],
                       [vi("c_out", T.BOOL, []), vi("acc_out", F, [3]), vi("keep", F, [2]),
                        vi("maxes", F, [3]), vi("w_copy", F, [3])],
                       [const("three", np.int64(3))])
    m = model([h.make_node("Loop", ["two", "", "acc0", "k"], ["acc", "k_out", "all_maxes", "ws"],
                           body=outer)],
              [vi("acc0", F, [3]), vi("xs", F, [4, 3]), vi("w", F, [3]), vi("k", F, [2])],
              [vi("acc", F, [3]), vi("k_out", F, [2]), vi("all_maxes", F, [2, 3]),
               vi("ws", F, [2, 3])],
              [const("two", np.int64(2))])
    return Case("nested_loops", m, {"acc0": rand(3), "xs": rand(4, 3), "w": rand(3),
                                    "k": rand(2)})


def loop_without_trip_count() -> Case:
    """No M: the loop runs while the condition its body computes holds."""
    body = body_graph([h.make_node("Add", ["v_in", "one"], ["v_out"]),
                       h.make_node("Less", ["v_out", "ten"], ["c_out"])],
                      [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", F, [])],
                      [vi("c_out", T.BOOL, []), vi("v_out", F, [])],
                      [const("one", np.float32(1)), const("ten", np.float32(10))])
    m = model([h.make_node("Loop", ["", "go", "v0"], ["v"], body=body)],
              [vi("v0", F, []), vi("go", T.BOOL, [])], [vi("v", F, [])])
    return Case("loop_without_trip_count", m, {"v0": np.array(0.25, np.float32),
                                               "go": np.array(True)})


def recurrent_lengths(kind: str, direction: str, constant: bool) -> Case:
    """RNN / GRU / LSTM with sequence_lens shorter than X (0..seq): steps past a sequence's
    length keep its state and output zeros; the reverse direction starts at each
    sequence's own last step."""
    seq, batch, inp, hidden = 5, 4, 3, 6
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind]
    dirs = 2 if direction == "bidirectional" else 1
    w = rand(dirs, gates * hidden, inp) * 0.5
    r = rand(dirs, gates * hidden, hidden) * 0.5
    b = rand(dirs, 2 * gates * hidden) * 0.1
    lens = np.array([5, 2, 3, 1], np.int32)
    inputs = [vi("x", F, [seq, batch, inp])]
    inits = [const("w", w), const("r", r), const("b", b)]
    feeds = {"x": rand(seq, batch, inp)}
    if constant:
        inits.append(const("lens", lens))
    else:
        inputs.append(vi("lens", T.INT32, [batch]))
        feeds["lens"] = lens
    outputs = ["y", "y_h"] + (["y_c"] if kind == "LSTM" else [])
    node = h.make_node(kind, ["x", "w", "r", "b", "lens"], outputs, hidden_size=hidden,
                       direction=direction)
    m = model([node], inputs,
              [vi("y", F, [seq, dirs, batch, hidden]), vi("y_h", F, [dirs, batch, hidden])] +
              ([vi("y_c", F, [dirs, batch, hidden])] if kind == "LSTM" else []), inits)
    name = f"{kind.lower()}_{direction}_lengths_{'constant' if constant else 'input'}"
    return Case(name, m, feeds)


def scan8_batched() -> Case:
    """The opset-8 Scan: batch axis 0, sequence axis 1, one input scanned in reverse; kiln
    scans the batch around a Scan over the sequence."""
    body = body_graph([h.make_node("Add", ["s_in", "x"], ["s_out"]),
                       h.make_node("Mul", ["s_out", "w"], ["y"])],
                      [vi("s_in", F, [2]), vi("x", F, [2]), vi("w", F, [2])],
                      [vi("s_out", F, [2]), vi("y", F, [2])])
    graph = h.make_graph([h.make_node("Scan", ["", "init", "xs", "ws"], ["final", "ys"],
                                      body=body, num_scan_inputs=2, directions=[0, 1])],
                         "g", [vi("init", F, [3, 2]), vi("xs", F, [3, 4, 2]),
                               vi("ws", F, [3, 4, 2])],
                         [vi("final", F, [3, 2]), vi("ys", F, [3, 4, 2])])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 8)], ir_version=4)
    onnx.checker.check_model(m, full_check=True)
    return Case("scan8_batched", m, {"init": rand(3, 2), "xs": rand(3, 4, 2),
                                     "ws": rand(3, 4, 2)})


def loop_slice_at_iteration() -> Case:
    """x[i : i + 2] at the iteration number (a Slice at a run-time offset whose length is
    known because every iteration's slice is in range), accumulated and stacked."""
    body = body_graph([h.make_node("Add", ["i", "two"], ["end"]),
                       h.make_node("Unsqueeze", ["i", "axes"], ["start1"]),
                       h.make_node("Unsqueeze", ["end", "axes"], ["end1"]),
                       h.make_node("Slice", ["x", "start1", "end1"], ["rows"]),
                       h.make_node("Add", ["v_in", "rows"], ["v_out"]),
                       h.make_node("Mul", ["rows", "rows"], ["sq"]),
                       h.make_node("Identity", ["c_in"], ["c_out"])],
                      [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", F, [2, 3])],
                      [vi("c_out", T.BOOL, []), vi("v_out", F, [2, 3]), vi("sq", F, [2, 3])],
                      [const("two", np.int64(2)), const("axes", np.array([0], np.int64))])
    m = model([h.make_node("Loop", ["M", "", "v0"], ["v", "sqs"], body=body)],
              [vi("x", F, [6, 3]), vi("v0", F, [2, 3])],
              [vi("v", F, [2, 3]), vi("sqs", F, [5, 2, 3])], [const("M", np.int64(5))])
    return Case("loop_slice_at_iteration", m, {"x": rand(6, 3), "v0": rand(2, 3)})


def loop_if_scan_output() -> Case:
    """An If nested in a Loop whose result is both added to a carried value and a scan
    output (its buffer's ownership is decided at run time: the deallocation helper is
    inlined, kiln-inline-dealloc-helpers)."""
    then_g = body_graph([h.make_node("Gather", ["st", "zero"], ["first"]),
                         h.make_node("Add", ["item", "first"], ["t"])], [], [vi("t", F, [4])])
    else_g = body_graph([h.make_node("Neg", ["item"], ["e"])], [], [vi("e", F, [4])])
    body = body_graph([h.make_node("Gather", ["st", "i"], ["item"]),
                       h.make_node("ReduceSum", ["item"], ["sum"], keepdims=0),
                       h.make_node("Greater", ["sum", "zerof"], ["pos"]),
                       h.make_node("If", ["pos"], ["picked"], then_branch=then_g,
                                   else_branch=else_g),
                       h.make_node("Add", ["acc_in", "picked"], ["acc_out"]),
                       h.make_node("Identity", ["c_in"], ["c_out"])],
                      [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("acc_in", F, [4])],
                      [vi("c_out", T.BOOL, []), vi("acc_out", F, [4]), vi("picked", F, [4])])
    m = model([h.make_node("Loop", ["M", "", "acc0"], ["acc", "all"], body=body)],
              [vi("st", F, [3, 4]), vi("acc0", F, [4])],
              [vi("acc", F, [4]), vi("all", F, [3, 4])],
              [const("M", np.int64(3)), const("zero", np.int64(0)),
               const("zerof", np.float32(0))])
    st = np.stack([rand(4) + 1.0, rand(4) - 1.0, rand(4)])
    return Case("loop_if_scan_output", m, {"st": st, "acc0": rand(4)})


CASES = [scan8_batched(), loop_slice_at_iteration(), loop_if_scan_output(), if_tensor_cond(), if_constant_cond(), if_constant_branch(), if_constant_branch_else(),
         loop_scan_outputs(), loop_while(),
         loop_while_trip_limit(), loop_zero_trips(), greedy_decode(), scan_cumsum(),
         scan_rnn_cell(), loop_large_body(), nested_loops(), loop_without_trip_count(),
         loop_swap(), scan_decomposed_ops(),
         recurrent_lengths("LSTM", "forward", False), recurrent_lengths("LSTM", "reverse", True),
         recurrent_lengths("LSTM", "bidirectional", False),
         recurrent_lengths("GRU", "bidirectional", True),
         recurrent_lengths("RNN", "reverse", False)]
SPECS = {c.name: harness.register(harness.CompileSpec(f"cf-{c.name}", c.save, c.compile_args))
         for c in CASES}


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=pytest.mark.compiles(SPECS[c.name].key)) for c in CASES])
def test_control_flow(case: Case, compile_cache, tmp_path):
    compiled = compile_cache.get(SPECS[case.name])
    try:
        harness.run_and_compare(compile_cache.kiln, compiled, case.inputs, tmp_path,
                                rtol=case.rtol, atol=case.atol)
    except AssertionError as e:
        fail(f"{case.name}: {e}")


def test_loop_is_not_unrolled(kiln, tmp_path):
    """100000 iterations compile to one loop, not 100000 copies of the body."""
    body = body_graph([h.make_node("Add", ["v_in", "one"], ["v_out"]),
                       h.make_node("Identity", ["c_in"], ["c_out"])],
                      [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", F, [])],
                      [vi("c_out", T.BOOL, []), vi("v_out", F, [])],
                      [const("one", np.float32(1))])
    m = model([h.make_node("Loop", ["M", "", "v0"], ["v"], body=body)],
              [vi("v0", F, [])], [vi("v", F, [])], [const("M", np.int64(100000))])
    path = tmp_path / "model.onnx"
    onnx.save(m, path)
    out = tmp_path / "model.ll"
    result = kiln.compile(path, out, ("--emit", "llvm"))
    if result.returncode != 0:
        fail("kiln compile --emit llvm failed\n" + result.describe())
    adds = out.read_text().count("fadd")
    assert 1 <= adds < 64, f"{adds} fadd instructions: the Loop looks unrolled"
    case = Case("loop_100000", m, {"v0": np.array(0.5, np.float32)})
    compiled = harness.Compiled(harness.CompileSpec("loop_100000", case.save), path,
                                tmp_path / "model.so", kiln.compile(path, tmp_path / "model.so"))
    try:
        harness.run_and_compare(kiln, compiled, case.inputs, tmp_path / "run")
    except AssertionError as e:
        fail(str(e))


#===----------------------------------------------------------------------===//
# Rejected until shapes may be dynamic
#===----------------------------------------------------------------------===//


def if_branch_shapes_differ() -> onnx.ModelProto:
    then_g = body_graph([h.make_node("Identity", ["x"], ["t"])], [], [vi("t", F, [4])])
    else_g = body_graph([h.make_node("Concat", ["x", "x"], ["e"], axis=0)], [], [vi("e", F, [8])])
    return model([h.make_node("If", ["c"], ["y"], name="pick", then_branch=then_g,
                              else_branch=else_g)],
                 [vi("x", F, [4]), vi("c", T.BOOL, [])], [vi("y", F, ["n"])])


def loop_carried_grows() -> onnx.ModelProto:
    body = body_graph([h.make_node("Concat", ["v_in", "v_in"], ["v_out"], axis=0),
                       h.make_node("Identity", ["c_in"], ["c_out"])],
                      [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", F, ["n"])],
                      [vi("c_out", T.BOOL, []), vi("v_out", F, ["m"])])
    return model([h.make_node("Loop", ["M", "", "x"], ["v"], name="grow", body=body)],
                 [vi("x", F, [2])], [vi("v", F, ["n"])], [const("M", np.int64(3))])


def loop_scan_output_dynamic() -> onnx.ModelProto:
    body = body_graph([h.make_node("Identity", ["c_in"], ["c_out"]),
                       h.make_node("Identity", ["v_in"], ["v_out"]),
                       h.make_node("Identity", ["v_in"], ["y"])],
                      [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", F, [2])],
                      [vi("c_out", T.BOOL, []), vi("v_out", F, [2]), vi("y", F, [2])])
    return model([h.make_node("Loop", ["M", "", "x"], ["v", "ys"], name="trips", body=body)],
                 [vi("x", F, [2]), vi("M", T.INT64, [])], [vi("v", F, [2]), vi("ys", F, ["n", 2])])


def loop_run_trips_in_branch() -> onnx.ModelProto:
    """The Loop of loop_scan_output_dynamic inside an If branch: a run-time trip count
    gives its scan outputs a run dim only at the graph's top level."""
    inner = loop_scan_output_dynamic().graph
    then_g = body_graph(list(inner.node), [], [vi("ys", F, ["n", 2])])
    else_g = body_graph([h.make_node("Concat", ["x", "x"], ["e"], axis=0),
                         h.make_node("Reshape", ["e", "shape"], ["ys2"])], [],
                        [vi("ys2", F, [2, 2])], [const("shape", np.array([2, 2], np.int64))])
    return model([h.make_node("If", ["c"], ["y"], name="pick", then_branch=then_g,
                              else_branch=else_g)],
                 [vi("x", F, [2]), vi("M", T.INT64, []), vi("c", T.BOOL, [])],
                 [vi("y", F, ["n", 2])])


def nested_too_deep() -> onnx.ModelProto:
    inner = body_graph([h.make_node("Identity", ["x"], ["t"])], [], [vi("t", F, [2])])
    for depth in range(3):
        inner = body_graph([h.make_node("If", ["c"], [f"r{depth}"], then_branch=inner,
                                        else_branch=inner)], [], [vi(f"r{depth}", F, [2])])
    return model([h.make_node("If", ["c"], ["y"], name="outer", then_branch=inner,
                              else_branch=inner)],
                 [vi("x", F, [2]), vi("c", T.BOOL, [])], [vi("y", F, [2])])


def scan_output_axes_count() -> onnx.ModelProto:
    body = body_graph([h.make_node("Add", ["s_in", "x"], ["s_out"]),
                       h.make_node("Identity", ["s_out"], ["y"])],
                      [vi("s_in", F, [2]), vi("x", F, [2])],
                      [vi("s_out", F, [2]), vi("y", F, [2])])
    graph = h.make_graph([h.make_node("Scan", ["init", "xs"], ["final", "ys"], name="scan",
                                      body=body, num_scan_inputs=1, scan_output_axes=[0, 1])],
                         "g", [vi("init", F, [2]), vi("xs", F, [3, 2])],
                         [vi("final", F, [2]), vi("ys", F, [3, 2])])
    # Not checked: the checker rejects it, which is the point.
    return h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], ir_version=8)


REJECTED = [
    ("if_branch_shapes_differ", if_branch_shapes_differ, (),
     "node 'pick' (If, opset 17): output 0 is 'tensor<4xf32>' in then_branch but "
     "'tensor<8xf32>' in else_branch"),
    ("loop_carried_grows", loop_carried_grows, (),
     "node 'grow' (Loop, opset 17): loop-carried value 0 enters the body as 'tensor<2xf32>' "
     "but the body yields 'tensor<4xf32>'"),
    ("loop_run_trips_in_branch", loop_run_trips_in_branch, (),
     "node 'trips' (Loop, opset 17): the length of the scan outputs, the number of "
     "iterations, depends on a non-constant input 'M'"),
    ("scan_output_axes_count", scan_output_axes_count, (),
     "node 'scan' (Scan, opset 17): scan_output_axes has 2 entries but there are 1"),
    ("nested_too_deep", nested_too_deep, ("--max-subgraph-depth", "3"),
     "subgraphs nest deeper than kiln's limit of 3 (--max-subgraph-depth)"),
]


def test_loop_trip_count_specialized(kiln, tmp_path):
    """A trip count given as an input decides the scan outputs' length: compiled for one
    value with --specialize, the loop runs and matches onnxruntime."""
    path = tmp_path / "model.onnx"
    onnx.save(loop_scan_output_dynamic(), path)
    spec = tmp_path / "M.pb"
    spec.write_bytes(numpy_helper.from_array(np.array(4, np.int64)).SerializeToString())
    artifact = tmp_path / "model.so"
    result = kiln.compile(path, artifact, ("--specialize", f"M={spec}"))
    compiled = harness.Compiled(harness.CompileSpec("loop_specialized", lambda _: path), path,
                                artifact, result)
    try:
        harness.run_and_compare(kiln, compiled, {"x": rand(2), "M": np.array(4, np.int64)},
                                tmp_path / "run")
    except AssertionError as e:
        fail(str(e))


def loop_run_trips_with_cond() -> onnx.ModelProto:
    """Range's `_expanded` form: M and the initial condition computed from the inputs, the
    body yields its own condition, the carried value is also the scan output."""
    body = body_graph([h.make_node("Identity", ["c_in"], ["c_out"]),
                       h.make_node("Add", ["v_in", "d"], ["v_out"]),
                       h.make_node("Identity", ["v_in"], ["y"])],
                      [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", F, [])],
                      [vi("c_out", T.BOOL, []), vi("v_out", F, []), vi("y", F, [])])
    return model([h.make_node("Sub", ["limit", "start"], ["span"]),
                  h.make_node("Div", ["span", "d"], ["q"]),
                  h.make_node("Ceil", ["q"], ["qc"]),
                  h.make_node("Relu", ["qc"], ["qr"]),
                  h.make_node("Cast", ["qr"], ["n"], to=T.INT64),
                  h.make_node("Cast", ["qr"], ["go"], to=T.BOOL),
                  h.make_node("Loop", ["n", "go", "start"], ["last", "range"], name="rng",
                              body=body)],
                 [vi("start", F, []), vi("limit", F, []), vi("d", F, [])],
                 [vi("last", F, []), vi("range", F, ["n"])])


def test_loop_run_time_trip_count(kiln, tmp_path):
    """A trip count decided by the run (a graph input, or computed from the inputs with a
    run-time initial condition): one compile, the scan outputs as long as the loop runs,
    at several counts (0 and negative too) against onnxruntime."""
    cases = [(loop_scan_output_dynamic(),
              [{"x": rand(2), "M": np.array(m, np.int64)} for m in (4, 0, 1, 9, -3)]),
             (loop_run_trips_with_cond(),
              [{"start": np.array(a, np.float32), "limit": np.array(b, np.float32),
                "d": np.array(c, np.float32)}
               for a, b, c in ((1, 5, 1.5), (2, 2, 1), (0, -4, -0.5), (3, 1, 1))])]
    for k, (m, feeds_list) in enumerate(cases):
        path = tmp_path / f"model{k}.onnx"
        onnx.save(m, path)
        artifact = tmp_path / f"model{k}.so"
        result = kiln.compile(path, artifact)
        compiled = harness.Compiled(harness.CompileSpec(f"loop_run_trips{k}", lambda _: path),
                                    path, artifact, result)
        for j, feeds in enumerate(feeds_list):
            try:
                harness.run_and_compare(kiln, compiled, feeds, tmp_path / f"run{k}_{j}")
            except AssertionError as e:
                fail(f"model {k}, feeds {feeds}: {e}")


@pytest.mark.parametrize("name,build,args,message", REJECTED, ids=[r[0] for r in REJECTED])
def test_rejected(kiln, tmp_path, name, build, args, message):
    path = tmp_path / "model.onnx"
    onnx.save(build(), path)
    result = kiln.compile(path, tmp_path / "model.so", args)
    problem = harness.check_clean_failure(result, [message], name)
    if problem:
        fail(problem)
