//===- Recurrent.cpp - kiln-decompose: RNN, GRU, LSTM ---------------------===//
//
// Follows the function body the ONNX spec gives for each op (onnx/defs/*/defs.cc of
// onnx 1.23), as the importer expanded it before kiln-decompose existed.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Decompose/Expansion.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Limits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;

namespace kiln::decompose {

//===----------------------------------------------------------------------===//
// RNN, GRU, LSTM
//===----------------------------------------------------------------------===//

// The recurrence unrolled over the (static) sequence: X * W^T (+ the input
// biases) for all steps at once, then per step H * R^T, the gates and their
// activations, as the equations of the ONNX spec for each op. layout = 1
// inputs/outputs are transposed around it.
class Recurrence {
public:
  Recurrence(Expansion &e, StringRef kind, int64_t gates)
      : e(e), kind(kind), gates(gates) {}

  LogicalResult run() {
    V x = e.input(0), w = e.input(1), r = e.input(2);
    V b = e.input(3), seqLens = e.input(4), h0 = e.input(5);
    RankedTensorType xType = e.type(x), wType = e.type(w);
    if (!xType || !wType || !xType.hasStaticShape() || xType.getRank() != 3 ||
        !wType.hasStaticShape() || wType.getRank() != 3)
      return e.error() << "needs static X of rank 3 and W of rank 3", failure();
    elem = xType.getElementType();
    std::string direction = e.getString("direction", "forward");
    if (direction != "forward" && direction != "reverse" &&
        direction != "bidirectional")
      return e.error() << "unknown direction '" << direction << "'", failure();
    dirs = direction == "bidirectional" ? 2 : 1;
    layout = e.getInt("layout", 0);
    if (layout == 1)
      x = e.add("Transpose", {x}, {intsAttr("perm", {1, 0, 2})});
    seq = xType.getDimSize(layout == 1 ? 1 : 0);
    batch = xType.getDimSize(layout == 1 ? 0 : 1);
    // The recurrence is unrolled: one copy of the cell per step.
    int64_t maxSteps = getCompileLimits().maxUnrolledSteps;
    if (seq > maxSteps)
      return e.error() << "a sequence of " << seq << " steps is over kiln's limit of "
                       << maxSteps << " unrolled steps (--max-unrolled-steps)",
             failure();
    hidden = e.getInt("hidden_size", wType.getDimSize(1) / gates);
    if (wType.getDimSize(0) != dirs || wType.getDimSize(1) != gates * hidden)
      return e.error() << "W must have shape [" << dirs << ", " << gates * hidden
                       << ", input_size]",
             failure();
    if (kind == "LSTM" && e.getInt("input_forget", 0) != 0)
      return e.error() << "input_forget = 1 is not supported yet", failure();
    if (e.hasAttr("clip"))
      clip = e.getFloat("clip", 0.0f);
    if (!seqLens.empty()) {
      // Sequences shorter than X (a constant or a run-time input) mask their steps;
      // full-length ones (a constant of `seq`s) need nothing.
      RankedTensorType t = e.type(seqLens);
      if (!t || t.getRank() != 1 || t.getDimSize(0) != batch ||
          !isa<IntegerType>(t.getElementType()))
        return e.error() << "sequence_lens must be an integer tensor of shape [" << batch
                         << "]",
               failure();
      std::optional<SmallVector<int64_t>> lens = e.constantInts(seqLens);
      if (!lens || llvm::any_of(*lens, [&](int64_t len) { return len != seq; }))
        lengths = e.add("Cast", {seqLens}, {intAttr("to", 7 /*INT64*/)});
    }
    if (failed(readActivations()))
      return failure();

    SmallVector<V> ys, lastH, lastC;
    for (int64_t d = 0; d < dirs; ++d) {
      bool reverse = direction == "reverse" || d == 1;
      V wt = transposed(w, d), rt = transposed(r, d);
      // GRU's R_h^T, once per direction: a constant of its own when R is one.
      if (kind == "GRU")
        gruRhT = isConstantF32(r) ? transposed(r, d, 2 * hidden, 3 * hidden)
                                  : slice(rt, 1, 2 * hidden, 3 * hidden);
      V xw = e.add("MatMul", {x, wt}); // [seq, batch, gates*hidden]
      V wb, rb;                         // [gates*hidden] each
      if (!b.empty()) {
        V bd = pick(b, d);
        wb = slice(bd, 0, 0, gates * hidden);
        rb = slice(bd, 0, gates * hidden, 2 * gates * hidden);
        xw = e.add("Add", {xw, wb});
      }
      V h = h0.empty() ? zeros() : pick(h0, d);
      V c;
      if (kind == "LSTM")
        c = e.input(6).empty() ? zeros() : pick(e.input(6), d);
      V peephole =
          kind == "LSTM" && !e.input(7).empty() ? pick(e.input(7), d) : V();
      // With sequence lengths, a reverse direction walks each sequence back from its
      // own last step: X's steps are permuted per batch entry (step i reads time
      // len - 1 - i while i < len), the recurrence runs forward over them, and Y is
      // permuted back (the permutation is its own inverse).
      V order;
      if (!lengths.empty() && reverse) {
        SmallVector<int64_t> iota = llvm::to_vector(llvm::seq<int64_t>(0, seq));
        V steps = e.unsqueeze(e.i64s(iota), {1}); // [seq, 1]
        V valid = e.add("Less", {steps, lengths});  // [seq, batch]
        V back = e.add("Sub", {e.add("Sub", {lengths, e.scalar(i64(), 1)}), steps});
        order = e.add("Where", {valid, back, e.add("Expand", {steps, e.i64s({seq, batch})})});
        xw = permuteSteps(xw, order, gates * hidden);
      }
      SmallVector<V> steps(seq);
      for (int64_t i = 0; i < seq; ++i) {
        int64_t t = reverse && lengths.empty() ? seq - 1 - i : i;
        V xt = e.add("Gather", {xw, e.scalar(i64(), t)}, {intAttr("axis", 0)});
        FailureOr<std::pair<V, V>> next =
            step(d, xt, h, c, rt, rb, peephole);
        if (failed(next))
          return failure();
        if (lengths.empty()) {
          h = next->first;
          c = next->second;
          steps[t] = e.unsqueeze(h, {0});
          continue;
        }
        // Past its length a sequence keeps its state and outputs zeros.
        V running = e.unsqueeze(e.add("Less", {e.scalar(i64(), i), lengths}), {1});
        steps[t] = e.unsqueeze(e.add("Where", {running, next->first, zeros()}), {0});
        h = e.add("Where", {running, next->first, h});
        if (kind == "LSTM")
          c = e.add("Where", {running, next->second, c});
      }
      V y = seq == 1 ? steps[0] : e.add("Concat", steps, {intAttr("axis", 0)});
      if (!order.empty())
        y = permuteSteps(y, order, hidden);
      ys.push_back(e.unsqueeze(y, {1}));
      lastH.push_back(e.unsqueeze(h, {0}));
      if (kind == "LSTM")
        lastC.push_back(e.unsqueeze(c, {0}));
    }
    auto join = [&](ArrayRef<V> parts, int64_t axis) {
      return parts.size() == 1 ? parts[0]
                               : e.add("Concat", parts, {intAttr("axis", axis)});
    };
    // Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]),
    // Y_h / Y_c [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
    auto emit = [&](V value, int outIndex, ArrayRef<int64_t> perm) {
      if (e.output(outIndex).empty())
        return;
      if (layout == 1)
        e.add("Transpose", {value}, {intsAttr("perm", perm)}, e.output(outIndex));
      else
        e.add("Identity", {value}, {}, e.output(outIndex));
    };
    emit(join(ys, 1), 0, {2, 0, 1, 3});
    emit(join(lastH, 0), 1, {1, 0, 2});
    if (kind == "LSTM")
      emit(join(lastC, 0), 2, {1, 0, 2});
    return success();
  }

private:
  Type i64() { return IntegerType::get(e.ctx.getContext(), 64); }

  /// `value` [seq, batch, width] with step s of batch entry b read from step
  /// order[s, b].
  V permuteSteps(V value, V order, int64_t width) {
    V index = e.add("Expand", {e.unsqueeze(order, {2}), e.i64s({seq, batch, width})});
    return e.add("GatherElements", {value, index}, {intAttr("axis", 0)});
  }

  bool isConstantF32(const V &value) {
    ElementsAttr attr = kiln::onnx::getConstantAttr(value.get());
    return attr && attr.getElementType().isF32();
  }

  /// Rows [rowBegin, rowEnd) (all when rowEnd < 0) of entry `d` of W or R
  /// ([dirs, rows, cols]), transposed: [cols, rows]. When the weights are an f32
  /// constant this is a new constant, computed here: the ONNX folders leave constants
  /// over kMaxFoldElements alone, so Transpose(Gather(W, d)) would otherwise run at every
  /// run (an LSTM of hidden size 256 spent most of its time on it), and a constant B
  /// lets the MatMuls pack their weights at compile time. Otherwise Gather + Transpose.
  V transposed(const V &value, int64_t d, int64_t rowBegin = 0, int64_t rowEnd = -1) {
    if (ElementsAttr attr = kiln::onnx::getConstantAttr(value.get())) {
      auto type = dyn_cast<RankedTensorType>(attr.getType());
      if (type && type.hasStaticShape() && type.getRank() == 3 &&
          type.getElementType().isF32() && d < type.getDimSize(0)) {
        int64_t rows = type.getDimSize(1), cols = type.getDimSize(2);
        int64_t end = rowEnd < 0 ? rows : rowEnd;
        if (DenseElementsAttr dense =
                kiln::onnx::toDenseElements(attr, type.getNumElements())) {
          SmallVector<float> all = llvm::to_vector(dense.getValues<float>());
          int64_t n = end - rowBegin;
          SmallVector<float> out(n * cols);
          for (int64_t i = 0; i < n; ++i)
            for (int64_t c = 0; c < cols; ++c)
              out[c * n + i] = all[(d * rows + rowBegin + i) * cols + c];
          auto t = RankedTensorType::get({cols, n}, type.getElementType());
          return e.ctx.addConstant(DenseElementsAttr::get(t, ArrayRef<float>(out)),
                                   "recurrent_weights_t");
        }
      }
    }
    V rows = pick(value, d);
    if (rowEnd >= 0)
      rows = slice(rows, 0, rowBegin, rowEnd);
    return e.add("Transpose", {rows}, {intsAttr("perm", {1, 0})});
  }

  /// Entry `d` of a per-direction tensor ([dirs, ...] -> [...]).
  V pick(const V &value, int64_t d) {
    return e.add("Gather", {value, e.scalar(IntegerType::get(e.ctx.getContext(), 64), d)},
                 {intAttr("axis", 0)});
  }
  V slice(const V &value, int64_t axis, int64_t start,
                    int64_t end) {
    return e.add("Slice", {value, e.i64s({start}), e.i64s({end}), e.i64s({axis})});
  }
  /// Gate `g` of a [batch, gates*hidden] value.
  V gate(const V &value, int64_t g) {
    return slice(value, 1, g * hidden, (g + 1) * hidden);
  }
  V zeros() {
    auto t = RankedTensorType::get({batch, hidden}, elem);
    return e.ctx.addConstant(
        DenseElementsAttr::get(t, FloatAttr::get(elem, 0.0)), "zeros");
  }

  struct Activation {
    std::string name;
    std::optional<float> alpha, beta;
  };

  LogicalResult readActivations() {
    SmallVector<std::string> defaults =
        kind == "RNN"   ? SmallVector<std::string>{"Tanh"}
        : kind == "GRU" ? SmallVector<std::string>{"Sigmoid", "Tanh"}
                        : SmallVector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    const Attr *names = findAttr(e.node, "activations");
    // The dialect's RNN holds its schema default ["Tanh", "Tanh"] (one per direction of
    // a bidirectional RNN) when the node gave none: a one-direction RNN then uses Tanh.
    if (names && kind == "RNN" && dirs == 1 && names->strings_size() == 2 &&
        names->strings(0) == "Tanh" && names->strings(1) == "Tanh")
      names = nullptr;
    const Attr *alphas = findAttr(e.node, "activation_alpha");
    const Attr *betas = findAttr(e.node, "activation_beta");
    size_t perDir = defaults.size();
    for (int64_t d = 0; d < dirs; ++d)
      for (size_t i = 0; i < perDir; ++i) {
        size_t k = d * perDir + i;
        Activation a;
        if (names && names->strings_size() > 0) {
          if (static_cast<size_t>(names->strings_size()) != perDir * dirs)
            return e.error() << "'activations' needs " << perDir * dirs
                             << " names",
                   failure();
          a.name = names->strings(k);
        } else {
          a.name = defaults[i];
        }
        if (alphas && static_cast<int>(k) < alphas->floats_size())
          a.alpha = alphas->floats(k);
        if (betas && static_cast<int>(k) < betas->floats_size())
          a.beta = betas->floats(k);
        activations.push_back(a);
      }
    return success();
  }

  FailureOr<V> activate(int64_t d, size_t i, V x) {
    const Activation &a = activations[d * (activations.size() / dirs) + i];
    std::string n = llvm::StringRef(a.name).lower();
    auto alphaAttr = [&](float dflt) { return floatAttr("alpha", a.alpha.value_or(dflt)); };
    auto betaAttr = [&](float dflt) { return floatAttr("beta", a.beta.value_or(dflt)); };
    if (n == "tanh")
      return e.add("Tanh", {x});
    if (n == "sigmoid")
      return e.add("Sigmoid", {x});
    if (n == "relu")
      return e.add("Relu", {x});
    if (n == "softsign")
      return e.add("Softsign", {x});
    if (n == "softplus")
      return e.add("Softplus", {x});
    if (n == "leakyrelu")
      return e.add("LeakyRelu", {x}, {alphaAttr(0.01f)});
    if (n == "thresholdedrelu")
      return e.add("ThresholdedRelu", {x}, {alphaAttr(1.0f)});
    if (n == "elu")
      return e.add("Elu", {x}, {alphaAttr(1.0f)});
    if (n == "hardsigmoid")
      return e.add("HardSigmoid", {x}, {alphaAttr(0.2f), betaAttr(0.5f)});
    if (n == "affine")
      return e.add("Add", {e.add("Mul", {x, e.scalar(elem, a.alpha.value_or(1.0f))}),
                           e.scalar(elem, a.beta.value_or(0.0f))});
    if (n == "scaledtanh") {
      V inner = e.add("Mul", {x, e.scalar(elem, a.beta.value_or(1.0f))});
      return e.add("Mul", {e.add("Tanh", {inner}),
                           e.scalar(elem, a.alpha.value_or(1.0f))});
    }
    return e.error() << "activation '" << a.name << "' is not supported",
           failure();
  }

  /// A gate pre-activation clipped to [-clip, clip] when `clip` is set.
  V clipped(V x) {
    if (!clip)
      return x;
    return e.add("Clip", {x, e.scalar(elem, -*clip), e.scalar(elem, *clip)});
  }

  /// One time step; returns the new H (and C for LSTM).
  FailureOr<std::pair<V, V>>
  step(int64_t d, const V &xt, const V &h,
       const V &c, const V &rt, const V &rb,
       const V &peephole) {
    V hr = e.add("MatMul", {h, rt}); // [batch, gates*hidden]
    if (kind == "RNN") {
      V pre = e.add("Add", {xt, hr});
      if (!rb.empty())
        pre = e.add("Add", {pre, rb});
      FailureOr<V> next = activate(d, 0, clipped(pre));
      if (failed(next))
        return failure();
      return std::make_pair(*next, V());
    }
    if (kind == "GRU") {
      // Gates z, r, h.
      auto rbias = [&](int64_t g) {
        return rb.empty() ? V() : slice(rb, 0, g * hidden, (g + 1) * hidden);
      };
      auto withBias = [&](V v, const V &bias) {
        return bias.empty() ? v : e.add("Add", {v, bias});
      };
      FailureOr<V> z = activate(
          d, 0, clipped(withBias(e.add("Add", {gate(xt, 0), gate(hr, 0)}), rbias(0))));
      FailureOr<V> rg = activate(
          d, 0, clipped(withBias(e.add("Add", {gate(xt, 1), gate(hr, 1)}), rbias(1))));
      if (failed(z) || failed(rg))
        return failure();
      V hPre;
      if (e.getInt("linear_before_reset", 0) != 0) {
        hPre = e.add("Add", {gate(xt, 2),
                             e.add("Mul", {*rg, withBias(gate(hr, 2), rbias(2))})});
      } else {
        V rh = e.add("Mul", {*rg, h});
        V rhR = e.add("MatMul", {rh, gruRhT});
        hPre = withBias(e.add("Add", {gate(xt, 2), rhR}), rbias(2));
      }
      FailureOr<V> candidate = activate(d, 1, clipped(hPre));
      if (failed(candidate))
        return failure();
      // H = (1 - z) * candidate + z * H_prev
      V oneMinusZ = e.add("Sub", {e.scalar(elem, 1.0), *z});
      V next = e.add("Add", {e.add("Mul", {oneMinusZ, *candidate}),
                                       e.add("Mul", {*z, h})});
      return std::make_pair(next, V());
    }
    // LSTM: gates i, o, f, c; peepholes P = [Pi, Po, Pf].
    V pre = e.add("Add", {xt, hr});
    if (!rb.empty())
      pre = e.add("Add", {pre, rb});
    auto peep = [&](int64_t k, const V &cell, V v) {
      if (peephole.empty())
        return v;
      V p = slice(peephole, 0, k * hidden, (k + 1) * hidden);
      return e.add("Add", {v, e.add("Mul", {p, cell})});
    };
    FailureOr<V> i = activate(d, 0, clipped(peep(0, c, gate(pre, 0))));
    FailureOr<V> f = activate(d, 0, clipped(peep(2, c, gate(pre, 2))));
    FailureOr<V> g = activate(d, 1, clipped(gate(pre, 3)));
    if (failed(i) || failed(f) || failed(g))
      return failure();
    V cNext = e.add("Add", {e.add("Mul", {*f, c}), e.add("Mul", {*i, *g})});
    FailureOr<V> o = activate(d, 0, clipped(peep(1, cNext, gate(pre, 1))));
    FailureOr<V> hc = activate(d, 2, cNext);
    if (failed(o) || failed(hc))
      return failure();
    return std::make_pair(e.add("Mul", {*o, *hc}), cNext);
  }

  Expansion &e;
  StringRef kind;
  int64_t gates;
  Type elem;
  int64_t dirs = 1, layout = 0, seq = 0, batch = 0, hidden = 0;
  std::optional<float> clip;
  SmallVector<Activation> activations;
  /// sequence_lens as int64 [batch] when some sequence is shorter than X; empty
  /// otherwise.
  V lengths;
  V gruRhT; // GRU: R_h^T of the current direction ([hidden, hidden])
};

LogicalResult expandRNN(Expansion &e) { return Recurrence(e, "RNN", 1).run(); }
LogicalResult expandGRU(Expansion &e) { return Recurrence(e, "GRU", 3).run(); }
LogicalResult expandLSTM(Expansion &e) { return Recurrence(e, "LSTM", 4).run(); }

} // namespace kiln::decompose
