//===- OpExpansions.cpp - ONNX ops imported as other ONNX ops -------------===//
//
// Each expansion follows the function body the ONNX spec gives for the op
// (onnx/defs/*/defs.cc of onnx 1.23), writing the same computation with the
// node's own inputs and outputs. See OpExpansions.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/OpExpansions.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>

using namespace mlir;

namespace kiln::import {
namespace {

onnx::AttributeProto intAttr(StringRef name, int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name.str());
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

onnx::AttributeProto intsAttr(StringRef name, ArrayRef<int64_t> values) {
  onnx::AttributeProto a;
  a.set_name(name.str());
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values)
    a.add_ints(v);
  return a;
}

const onnx::AttributeProto *findAttr(const onnx::NodeProto &node,
                                     StringRef name) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

/// Builds the replacement nodes of one node.
class Expansion {
public:
  Expansion(const onnx::NodeProto &node, int64_t opset, AdapterContext &ctx,
            SmallVectorImpl<onnx::NodeProto> &out)
      : node(node), opset(opset), ctx(ctx), out(out) {}

  /// Input `i` of the node, "" when absent.
  std::string input(int i) const {
    return i < node.input_size() ? node.input(i) : std::string();
  }
  /// Output `i` of the node, "" when absent.
  std::string output(int i) const {
    return i < node.output_size() ? node.output(i) : std::string();
  }
  RankedTensorType type(StringRef value) {
    return dyn_cast_or_null<RankedTensorType>(ctx.getValueType(value));
  }
  int64_t getInt(StringRef name, int64_t dflt) const {
    const onnx::AttributeProto *a = findAttr(node, name);
    return a ? a->i() : dflt;
  }
  float getFloat(StringRef name, float dflt) const {
    const onnx::AttributeProto *a = findAttr(node, name);
    return a ? a->f() : dflt;
  }
  std::string getString(StringRef name, StringRef dflt) const {
    const onnx::AttributeProto *a = findAttr(node, name);
    return a ? a->s() : dflt.str();
  }
  bool hasAttr(StringRef name) const { return findAttr(node, name); }
  /// The integer values of the already-built constant `value`, if it is one.
  std::optional<SmallVector<int64_t>> constantInts(StringRef value) {
    return ctx.getConstantInts(value);
  }
  InFlightDiagnostic error() { return ctx.emitNodeError(); }

  /// Adds a node and returns its (first) output: `result`, or a fresh name.
  std::string add(StringRef opType, ArrayRef<std::string> inputs,
                  ArrayRef<onnx::AttributeProto> attrs = {},
                  std::string result = "") {
    onnx::NodeProto n;
    n.set_op_type(opType.str());
    std::string base = node.name().empty() ? node.op_type() : node.name();
    n.set_name(base + "/" + opType.str() + "_" + std::to_string(out.size()));
    for (const std::string &in : inputs)
      n.add_input(in);
    // Fresh names hang off the node's first output: value names are unique in
    // a graph (node names need not be, nor exist).
    if (result.empty()) {
      std::string anchor;
      for (const std::string &o : node.output())
        if (anchor.empty())
          anchor = o;
      // The op type keeps nested expansions (SoftmaxCrossEntropyLoss ->
      // NegativeLogLikelihoodLoss, both writing the same output) apart.
      result = anchor + "/kiln." + node.op_type() + "." + std::to_string(counter++);
    }
    n.add_output(result);
    for (const onnx::AttributeProto &a : attrs)
      *n.add_attribute() = a;
    out.push_back(std::move(n));
    return result;
  }

  /// A 1-D int64 constant.
  std::string i64s(ArrayRef<int64_t> values) {
    auto t = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                   IntegerType::get(ctx.getContext(), 64));
    return ctx.addConstant(DenseElementsAttr::get(t, values), "ints");
  }
  /// A 0-d constant of `elemType` (int or float) holding `value`.
  std::string scalar(Type elemType, double value) {
    auto t = RankedTensorType::get({}, elemType);
    Attribute v;
    if (auto f = dyn_cast<FloatType>(elemType))
      v = FloatAttr::get(f, value);
    else
      v = IntegerAttr::get(elemType, static_cast<int64_t>(value));
    return ctx.addConstant(DenseElementsAttr::get(t, ArrayRef<Attribute>{v}),
                           "scalar");
  }

  // The new nodes are in the newest form of their op, whatever the model's
  // opset (the importer builds them without version adaptation).
  std::string unsqueeze(const std::string &x, ArrayRef<int64_t> axes) {
    return add("Unsqueeze", {x, i64s(axes)});
  }
  std::string squeeze(const std::string &x, ArrayRef<int64_t> axes) {
    return add("Squeeze", {x, i64s(axes)});
  }
  /// Reduce* over `axes` (empty: all axes).
  std::string reduce(StringRef opType, const std::string &x,
                     ArrayRef<int64_t> axes, bool keepdims,
                     std::string result = "") {
    SmallVector<onnx::AttributeProto> attrs = {intAttr("keepdims", keepdims)};
    if (axes.empty())
      return add(opType, {x}, attrs, result);
    return add(opType, {x, i64s(axes)}, attrs, result);
  }

  const onnx::NodeProto &node;
  int64_t opset;
  AdapterContext &ctx;

private:
  SmallVectorImpl<onnx::NodeProto> &out;
  int counter = 0;
};

//===----------------------------------------------------------------------===//
// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
//===----------------------------------------------------------------------===//

// loss[n, d...] = -input[n, target[n, d...], d...] * weight[target[n, d...]],
// 0 where target == ignore_index; reduced by `reduction` (mean divides by the
// sum of the weights that applied).
LogicalResult expandNegativeLogLikelihoodLoss(Expansion &e) {
  std::string input = e.input(0), target = e.input(1), weight = e.input(2);
  RankedTensorType inType = e.type(input), tType = e.type(target);
  if (!inType || !tType || inType.getRank() < 2)
    return e.error() << "needs ranked 'input' of rank >= 2 and 'target'",
           failure();
  std::string reduction = e.getString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return e.error() << "unknown reduction '" << reduction << "'", failure();
  Type elem = inType.getElementType(), tElem = tType.getElementType();

  std::string safeTarget = target, valid;
  bool ignore = e.hasAttr("ignore_index");
  if (ignore) {
    std::string ignored =
        e.add("Equal", {target, e.scalar(tElem, e.getInt("ignore_index", 0))});
    valid = e.add("Not", {ignored});
    safeTarget = e.add("Where", {valid, target, e.scalar(tElem, 0)});
  }
  std::string picked = e.add("GatherElements",
                             {input, e.unsqueeze(safeTarget, {1})},
                             {intAttr("axis", 1)});
  std::string loss = e.add("Neg", {e.squeeze(picked, {1})});
  std::string w; // per-element weight; "" means 1
  if (!weight.empty())
    w = e.add("Gather", {weight, safeTarget}, {intAttr("axis", 0)});
  if (ignore)
    w = e.add("Where", {valid, w.empty() ? e.scalar(elem, 1) : w,
                        e.scalar(elem, 0)});
  std::string out = e.output(0);
  if (reduction == "none") {
    e.add(w.empty() ? "Identity" : "Mul",
          w.empty() ? SmallVector<std::string>{loss}
                    : SmallVector<std::string>{loss, w},
          {}, out);
    return success();
  }
  if (!w.empty())
    loss = e.add("Mul", {loss, w});
  if (reduction == "sum") {
    e.reduce("ReduceSum", loss, {}, false, out);
  } else if (w.empty()) {
    e.reduce("ReduceMean", loss, {}, false, out);
  } else {
    e.add("Div",
          {e.reduce("ReduceSum", loss, {}, false),
           e.reduce("ReduceSum", w, {}, false)},
          {}, out);
  }
  return success();
}

// log_prob = LogSoftmax(scores, axis = 1); output = NegativeLogLikelihoodLoss(
// log_prob, labels, weights) with the same reduction and ignore_index.
LogicalResult expandSoftmaxCrossEntropyLoss(Expansion &e) {
  RankedTensorType scoresType = e.type(e.input(0));
  if (!scoresType || scoresType.getRank() < 2)
    return e.error() << "needs ranked 'scores' of rank >= 2", failure();
  std::string logProb =
      e.add("LogSoftmax", {e.input(0)}, {intAttr("axis", 1)}, e.output(1));
  SmallVector<onnx::AttributeProto> attrs;
  for (const onnx::AttributeProto &a : e.node.attribute())
    if (a.name() == "reduction" || a.name() == "ignore_index")
      attrs.push_back(a);
  SmallVector<std::string> inputs = {logProb, e.input(1)};
  if (!e.input(2).empty())
    inputs.push_back(e.input(2));
  e.add("NegativeLogLikelihoodLoss", inputs, attrs, e.output(0));
  return success();
}

//===----------------------------------------------------------------------===//
// RMSNormalization
//===----------------------------------------------------------------------===//

// Y = Cast(XU / Sqrt(ReduceMean(XU * XU, axes >= axis) + epsilon)) * scale,
// XU = X cast to the stash type (float by default).
LogicalResult expandRMSNormalization(Expansion &e) {
  std::string x = e.input(0), scale = e.input(1);
  RankedTensorType xType = e.type(x);
  if (!xType || xType.getRank() == 0)
    return e.error() << "needs a ranked 'X' of rank >= 1", failure();
  int64_t rank = xType.getRank();
  int64_t axis = e.getInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return e.error() << "axis " << axis << " is out of range for rank " << rank,
           failure();
  if (axis < 0)
    axis += rank;
  int64_t stash = e.getInt("stash_type", 1);
  if (stash != onnx::TensorProto::FLOAT)
    return e.error() << "stash_type " << stash << " is not supported (only 1, "
                     << "float)",
           failure();
  Type f32 = Float32Type::get(e.ctx.getContext());
  bool cast = !xType.getElementType().isF32();
  std::string xu =
      cast ? e.add("Cast", {x}, {intAttr("to", onnx::TensorProto::FLOAT)}) : x;
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d)
    axes.push_back(d);
  std::string meanSquare =
      e.reduce("ReduceMean", e.add("Mul", {xu, xu}), axes, true);
  std::string rms = e.add(
      "Sqrt",
      {e.add("Add", {meanSquare, e.scalar(f32, e.getFloat("epsilon", 1e-5f))})});
  std::string normalized = e.add("Div", {xu, rms});
  if (cast) {
    std::string back = e.add("CastLike", {normalized, x});
    normalized = back;
  }
  e.add("Mul", {normalized, scale}, {}, e.output(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

// Scaled dot-product attention as in the reference of onnx 1.23
// (onnx/reference/ops/op_attention.py), which its function body matches:
// 3-D inputs are split into heads; Q and K are each scaled by sqrt(scale);
// past_key/past_value are concatenated in front of K/V (present_*); the
// causal and sliding-window masks (known at compile time from the shapes)
// and attn_mask (bool: false -> -inf; shorter than the key length: padded
// with -inf) form an additive bias; K/V heads are repeated for grouped-query
// attention; softcap tanh-limits the scores before the bias; rows whose bias
// is -inf everywhere give 0, not NaN.
LogicalResult expandAttention(Expansion &e) {
  std::string q = e.input(0), k = e.input(1), v = e.input(2);
  std::string mask = e.input(3), pastKey = e.input(4), pastValue = e.input(5);
  std::string nonpad = e.input(6);
  if (!nonpad.empty() && !pastKey.empty())
    return e.error() << "nonpad_kv_seqlen cannot be combined with past_key",
           failure();
  if (pastKey.empty() != pastValue.empty())
    return e.error() << "past_key and past_value must be given together",
           failure();
  RankedTensorType qType = e.type(q), kType = e.type(k), vType = e.type(v);
  if (!qType || !kType || !vType || !qType.hasStaticShape() ||
      !kType.hasStaticShape() || !vType.hasStaticShape())
    return e.error() << "needs static shapes", failure();
  int64_t rank = qType.getRank();
  if ((rank != 3 && rank != 4) || kType.getRank() != rank ||
      vType.getRank() != rank)
    return e.error() << "Q, K and V must all have rank 3 or all rank 4",
           failure();
  Type elem = qType.getElementType();
  const double inf = std::numeric_limits<double>::infinity();

  // Heads: [B, S, heads * D] -> [B, heads, S, D].
  int64_t batch = qType.getDimSize(0);
  int64_t qHeads, kvHeads;
  auto toHeads = [&](const std::string &x, RankedTensorType t, int64_t heads) {
    std::string split = e.add(
        "Reshape", {x, e.i64s({batch, t.getDimSize(1), heads, -1})});
    return e.add("Transpose", {split}, {intsAttr("perm", {0, 2, 1, 3})});
  };
  if (rank == 3) {
    qHeads = e.getInt("q_num_heads", 0);
    kvHeads = e.getInt("kv_num_heads", 0);
    if (qHeads <= 0 || kvHeads <= 0 || qType.getDimSize(2) % qHeads ||
        kType.getDimSize(2) % kvHeads || vType.getDimSize(2) % kvHeads)
      return e.error() << "3-D inputs need q_num_heads and kv_num_heads that "
                          "divide the hidden sizes",
             failure();
    q = toHeads(q, qType, qHeads);
    k = toHeads(k, kType, kvHeads);
    v = toHeads(v, vType, kvHeads);
  } else {
    qHeads = qType.getDimSize(1);
    kvHeads = kType.getDimSize(1);
  }
  int64_t headSize =
      rank == 3 ? qType.getDimSize(2) / qHeads : qType.getDimSize(3);
  int64_t qLen = qType.getDimSize(rank == 3 ? 1 : 2);
  int64_t kvLen = kType.getDimSize(rank == 3 ? 1 : 2);

  // present_key / present_value: the cache with this step's keys appended.
  int64_t pastLen = 0;
  if (!pastKey.empty()) {
    RankedTensorType pastType = e.type(pastKey);
    if (!pastType || pastType.getRank() != 4)
      return e.error() << "past_key must have rank 4", failure();
    pastLen = pastType.getDimSize(2);
    k = e.add("Concat", {pastKey, k}, {intAttr("axis", 2)}, e.output(1));
    v = e.add("Concat", {pastValue, v}, {intAttr("axis", 2)}, e.output(2));
  } else {
    if (!e.output(1).empty())
      e.add("Identity", {k}, {}, e.output(1));
    if (!e.output(2).empty())
      e.add("Identity", {v}, {}, e.output(2));
  }
  int64_t totalLen = pastLen + kvLen;

  // The part of the bias known from the shapes: causal and sliding window.
  bool causal = e.getInt("is_causal", 0) != 0;
  int64_t left = e.getInt("left_window_size", -1);
  int64_t right = e.getInt("right_window_size", -1);
  bool shapeMask = causal || left >= 0 || right >= 0;
  SmallVector<double> fixedBias(qLen * totalLen, 0.0);
  bool anyRowFullyMasked = false;
  for (int64_t i = 0; i < qLen; ++i) {
    bool rowOpen = false;
    for (int64_t j = 0; j < totalLen; ++j) {
      int64_t diff = i + pastLen - j;
      bool allowed = (!causal || diff >= 0) && (left < 0 || diff <= left) &&
                     (right < 0 || -diff <= right);
      fixedBias[i * totalLen + j] = allowed ? 0.0 : -inf;
      rowOpen |= allowed;
    }
    anyRowFullyMasked |= !rowOpen;
  }
  std::string bias;
  if (!nonpad.empty()) {
    // An external cache: batch b holds nonpad[b] valid keys, and the causal /
    // window frontier moves with it (offset nonpad[b] - q_len), so the mask
    // is computed at run time: D[b, i, j] = i - j + nonpad[b] - q_len.
    Type i64 = IntegerType::get(e.ctx.getContext(), 64);
    SmallVector<int64_t> diff, keys;
    for (int64_t i = 0; i < qLen; ++i)
      for (int64_t j = 0; j < totalLen; ++j)
        diff.push_back(i - j);
    for (int64_t j = 0; j < totalLen; ++j)
      keys.push_back(j);
    auto diffType = RankedTensorType::get({1, qLen, totalLen}, i64);
    auto keysType = RankedTensorType::get({1, 1, totalLen}, i64);
    std::string diffConst = e.ctx.addConstant(
        DenseElementsAttr::get(diffType, ArrayRef<int64_t>(diff)), "diff");
    std::string keysConst = e.ctx.addConstant(
        DenseElementsAttr::get(keysType, ArrayRef<int64_t>(keys)), "keys");
    std::string lens = e.add("Reshape", {nonpad, e.i64s({batch, 1, 1})});
    std::string allowed = e.add("Less", {keysConst, lens}); // padding
    std::string d = e.add("Add", {diffConst, e.add("Sub", {lens, e.scalar(i64, qLen)})});
    if (causal)
      allowed = e.add("And", {allowed, e.add("GreaterOrEqual", {d, e.scalar(i64, 0)})});
    if (left >= 0)
      allowed = e.add("And", {allowed, e.add("LessOrEqual", {d, e.scalar(i64, left)})});
    if (right >= 0)
      allowed = e.add("And", {allowed, e.add("GreaterOrEqual", {d, e.scalar(i64, -right)})});
    bias = e.unsqueeze(
        e.add("Where", {allowed, e.scalar(elem, 0.0), e.scalar(elem, -inf)}), {1});
    anyRowFullyMasked = true; // not known before the run
  } else if (shapeMask) {
    auto t = RankedTensorType::get({qLen, totalLen}, elem);
    SmallVector<Attribute> values;
    for (double b : fixedBias)
      values.push_back(FloatAttr::get(elem, b));
    bias = e.ctx.addConstant(DenseElementsAttr::get(t, values), "bias");
  }
  if (!mask.empty()) {
    RankedTensorType maskType = e.type(mask);
    if (!maskType || !maskType.hasStaticShape() || maskType.getRank() == 0)
      return e.error() << "attn_mask needs a static shape", failure();
    bool isBool = maskType.getElementType().isInteger(1);
    std::string m = mask;
    if (isBool)
      m = e.add("Where", {mask, e.scalar(elem, 0.0), e.scalar(elem, -inf)});
    int64_t pad = totalLen - maskType.getShape().back();
    if (pad < 0)
      return e.error() << "attn_mask is longer than the key sequence",
             failure();
    if (pad > 0) {
      SmallVector<int64_t> pads(2 * maskType.getRank(), 0);
      pads[2 * maskType.getRank() - 1] = pad;
      m = e.add("Pad", {m, e.i64s(pads), e.scalar(elem, -inf)});
    }
    bias = bias.empty() ? m : e.add("Add", {m, bias});
  }

  // Grouped-query attention: each K/V head serves qHeads / kvHeads Q heads.
  if (qHeads != kvHeads) {
    if (qHeads % kvHeads)
      return e.error() << "q heads (" << qHeads << ") must be a multiple of "
                       << "kv heads (" << kvHeads << ")",
             failure();
    int64_t reps = qHeads / kvHeads;
    auto repeat = [&](const std::string &x, int64_t d) {
      std::string u = e.unsqueeze(x, {2});
      std::string ex =
          e.add("Expand", {u, e.i64s({batch, kvHeads, reps, totalLen, d})});
      return e.add("Reshape", {ex, e.i64s({batch, qHeads, totalLen, d})});
    };
    RankedTensorType vt = e.type(e.input(2));
    int64_t vHead = rank == 3 ? vt.getDimSize(2) / kvHeads : vt.getDimSize(3);
    k = repeat(k, headSize);
    v = repeat(v, vHead);
  }

  // Scores.
  double scale = e.hasAttr("scale") ? e.getFloat("scale", 1.0f)
                                    : 1.0 / std::sqrt(double(headSize));
  std::string sqrtScale = e.scalar(elem, std::sqrt(scale));
  std::string qs = e.add("Mul", {q, sqrtScale});
  std::string kt = e.add("Transpose", {e.add("Mul", {k, sqrtScale})},
                         {intsAttr("perm", {0, 1, 3, 2})});
  std::string scores = e.add("MatMul", {qs, kt});
  float softcap = e.getFloat("softcap", 0.0f);
  if (softcap > 0) {
    std::string c = e.scalar(elem, softcap);
    scores = e.add("Mul", {e.add("Tanh", {e.add("Div", {scores, c})}), c});
  }
  std::string biased = bias.empty() ? scores : e.add("Add", {scores, bias});
  int64_t mode = e.getInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return e.error() << "qk_matmul_output_mode " << mode << " is not 0-3",
           failure();

  // Softmax, in softmax_precision when given.
  std::string logits = biased;
  bool recast = false;
  if (e.hasAttr("softmax_precision")) {
    int64_t precision = e.getInt("softmax_precision", 1);
    logits = e.add("Cast", {biased}, {intAttr("to", precision)});
    recast = true;
  }
  std::string probs = e.add("Softmax", {logits}, {intAttr("axis", -1)});
  if (!mask.empty() || anyRowFullyMasked) {
    // Rows with no attendable key: 0 instead of NaN.
    std::string rowMax = e.reduce("ReduceMax", bias, {-1}, true);
    std::string noKey = e.add("IsInf", {rowMax}, {intAttr("detect_positive", 0)});
    std::string zero = recast ? e.add("CastLike", {e.scalar(elem, 0.0), logits})
                              : e.scalar(elem, 0.0);
    probs = e.add("Where", {noKey, zero, probs});
  }
  if (recast)
    probs = e.add("CastLike", {probs, e.input(0)});
  if (!e.output(3).empty()) {
    std::string exposed = mode == 3 ? probs : mode == 2 ? biased : scores;
    e.add("Identity", {exposed}, {}, e.output(3));
  }

  if (rank == 4) {
    e.add("MatMul", {probs, v}, {}, e.output(0));
  } else {
    std::string y = e.add("MatMul", {probs, v});
    std::string merged =
        e.add("Transpose", {y}, {intsAttr("perm", {0, 2, 1, 3})});
    e.add("Reshape", {merged, e.i64s({batch, qLen, -1})}, {}, e.output(0));
  }
  return success();
}

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
    std::string x = e.input(0), w = e.input(1), r = e.input(2);
    std::string b = e.input(3), seqLens = e.input(4), h0 = e.input(5);
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
      // Only full-length sequences: every batch entry runs all steps.
      RankedTensorType t = e.type(seqLens);
      std::optional<SmallVector<int64_t>> lens;
      if (t)
        lens = e.constantInts(seqLens);
      if (!lens)
        return e.error() << "needs a compile-time constant for the non-constant "
                            "input 'sequence_lens'",
               failure();
      for (int64_t len : *lens)
        if (len != seq)
          return e.error() << "sequence_lens other than the full length "
                           << seq << " are not supported yet",
                 failure();
    }
    if (failed(readActivations()))
      return failure();

    SmallVector<std::string> ys, lastH, lastC;
    for (int64_t d = 0; d < dirs; ++d) {
      bool reverse = direction == "reverse" || d == 1;
      std::string wd = pick(w, d), rd = pick(r, d);
      std::string wt = e.add("Transpose", {wd}, {intsAttr("perm", {1, 0})});
      std::string rt = e.add("Transpose", {rd}, {intsAttr("perm", {1, 0})});
      std::string xw = e.add("MatMul", {x, wt}); // [seq, batch, gates*hidden]
      std::string wb, rb;                         // [gates*hidden] each
      if (!b.empty()) {
        std::string bd = pick(b, d);
        wb = slice(bd, 0, 0, gates * hidden);
        rb = slice(bd, 0, gates * hidden, 2 * gates * hidden);
        xw = e.add("Add", {xw, wb});
      }
      std::string h = h0.empty() ? zeros() : pick(h0, d);
      std::string c;
      if (kind == "LSTM")
        c = e.input(6).empty() ? zeros() : pick(e.input(6), d);
      std::string peephole =
          kind == "LSTM" && !e.input(7).empty() ? pick(e.input(7), d) : "";
      SmallVector<std::string> steps(seq);
      for (int64_t i = 0; i < seq; ++i) {
        int64_t t = reverse ? seq - 1 - i : i;
        std::string xt =
            e.add("Gather", {xw, e.scalar(IntegerType::get(e.ctx.getContext(), 64), t)},
                  {intAttr("axis", 0)});
        FailureOr<std::pair<std::string, std::string>> next =
            step(d, xt, h, c, rt, rb, peephole);
        if (failed(next))
          return failure();
        h = next->first;
        c = next->second;
        steps[t] = e.unsqueeze(h, {0});
      }
      std::string y = seq == 1 ? steps[0] : e.add("Concat", steps, {intAttr("axis", 0)});
      ys.push_back(e.unsqueeze(y, {1}));
      lastH.push_back(e.unsqueeze(h, {0}));
      if (kind == "LSTM")
        lastC.push_back(e.unsqueeze(c, {0}));
    }
    auto join = [&](ArrayRef<std::string> parts, int64_t axis) {
      return parts.size() == 1 ? parts[0]
                               : e.add("Concat", parts, {intAttr("axis", axis)});
    };
    // Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]),
    // Y_h / Y_c [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
    auto emit = [&](std::string value, int outIndex, ArrayRef<int64_t> perm) {
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
  /// Entry `d` of a per-direction tensor ([dirs, ...] -> [...]).
  std::string pick(const std::string &value, int64_t d) {
    return e.add("Gather", {value, e.scalar(IntegerType::get(e.ctx.getContext(), 64), d)},
                 {intAttr("axis", 0)});
  }
  std::string slice(const std::string &value, int64_t axis, int64_t start,
                    int64_t end) {
    return e.add("Slice", {value, e.i64s({start}), e.i64s({end}), e.i64s({axis})});
  }
  /// Gate `g` of a [batch, gates*hidden] value.
  std::string gate(const std::string &value, int64_t g) {
    return slice(value, 1, g * hidden, (g + 1) * hidden);
  }
  std::string zeros() {
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
    const onnx::AttributeProto *names = findAttr(e.node, "activations");
    const onnx::AttributeProto *alphas = findAttr(e.node, "activation_alpha");
    const onnx::AttributeProto *betas = findAttr(e.node, "activation_beta");
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

  FailureOr<std::string> activate(int64_t d, size_t i, std::string x) {
    const Activation &a = activations[d * (activations.size() / dirs) + i];
    std::string n = llvm::StringRef(a.name).lower();
    auto alphaAttr = [&](float dflt) {
      onnx::AttributeProto attr;
      attr.set_name("alpha");
      attr.set_type(onnx::AttributeProto::FLOAT);
      attr.set_f(a.alpha.value_or(dflt));
      return attr;
    };
    auto betaAttr = [&](float dflt) {
      onnx::AttributeProto attr;
      attr.set_name("beta");
      attr.set_type(onnx::AttributeProto::FLOAT);
      attr.set_f(a.beta.value_or(dflt));
      return attr;
    };
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
      std::string inner = e.add("Mul", {x, e.scalar(elem, a.beta.value_or(1.0f))});
      return e.add("Mul", {e.add("Tanh", {inner}),
                           e.scalar(elem, a.alpha.value_or(1.0f))});
    }
    return e.error() << "activation '" << a.name << "' is not supported",
           failure();
  }

  /// A gate pre-activation clipped to [-clip, clip] when `clip` is set.
  std::string clipped(std::string x) {
    if (!clip)
      return x;
    return e.add("Clip", {x, e.scalar(elem, -*clip), e.scalar(elem, *clip)});
  }

  /// One time step; returns the new H (and C for LSTM).
  FailureOr<std::pair<std::string, std::string>>
  step(int64_t d, const std::string &xt, const std::string &h,
       const std::string &c, const std::string &rt, const std::string &rb,
       const std::string &peephole) {
    std::string hr = e.add("MatMul", {h, rt}); // [batch, gates*hidden]
    if (kind == "RNN") {
      std::string pre = e.add("Add", {xt, hr});
      if (!rb.empty())
        pre = e.add("Add", {pre, rb});
      FailureOr<std::string> next = activate(d, 0, clipped(pre));
      if (failed(next))
        return failure();
      return std::make_pair(*next, std::string());
    }
    if (kind == "GRU") {
      // Gates z, r, h.
      auto rbias = [&](int64_t g) {
        return rb.empty() ? std::string() : slice(rb, 0, g * hidden, (g + 1) * hidden);
      };
      auto withBias = [&](std::string v, const std::string &bias) {
        return bias.empty() ? v : e.add("Add", {v, bias});
      };
      FailureOr<std::string> z = activate(
          d, 0, clipped(withBias(e.add("Add", {gate(xt, 0), gate(hr, 0)}), rbias(0))));
      FailureOr<std::string> rg = activate(
          d, 0, clipped(withBias(e.add("Add", {gate(xt, 1), gate(hr, 1)}), rbias(1))));
      if (failed(z) || failed(rg))
        return failure();
      std::string hPre;
      if (e.getInt("linear_before_reset", 0) != 0) {
        hPre = e.add("Add", {gate(xt, 2),
                             e.add("Mul", {*rg, withBias(gate(hr, 2), rbias(2))})});
      } else {
        std::string rh = e.add("Mul", {*rg, h});
        std::string rhR = e.add("MatMul", {rh, slice(rt, 1, 2 * hidden, 3 * hidden)});
        hPre = withBias(e.add("Add", {gate(xt, 2), rhR}), rbias(2));
      }
      FailureOr<std::string> candidate = activate(d, 1, clipped(hPre));
      if (failed(candidate))
        return failure();
      // H = (1 - z) * candidate + z * H_prev
      std::string oneMinusZ = e.add("Sub", {e.scalar(elem, 1.0), *z});
      std::string next = e.add("Add", {e.add("Mul", {oneMinusZ, *candidate}),
                                       e.add("Mul", {*z, h})});
      return std::make_pair(next, std::string());
    }
    // LSTM: gates i, o, f, c; peepholes P = [Pi, Po, Pf].
    std::string pre = e.add("Add", {xt, hr});
    if (!rb.empty())
      pre = e.add("Add", {pre, rb});
    auto peep = [&](int64_t k, const std::string &cell, std::string v) {
      if (peephole.empty())
        return v;
      std::string p = slice(peephole, 0, k * hidden, (k + 1) * hidden);
      return e.add("Add", {v, e.add("Mul", {p, cell})});
    };
    FailureOr<std::string> i = activate(d, 0, clipped(peep(0, c, gate(pre, 0))));
    FailureOr<std::string> f = activate(d, 0, clipped(peep(2, c, gate(pre, 2))));
    FailureOr<std::string> g = activate(d, 1, clipped(gate(pre, 3)));
    if (failed(i) || failed(f) || failed(g))
      return failure();
    std::string cNext = e.add("Add", {e.add("Mul", {*f, c}), e.add("Mul", {*i, *g})});
    FailureOr<std::string> o = activate(d, 0, clipped(peep(1, cNext, gate(pre, 1))));
    FailureOr<std::string> hc = activate(d, 2, cNext);
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
};

LogicalResult expandRNN(Expansion &e) { return Recurrence(e, "RNN", 1).run(); }
LogicalResult expandGRU(Expansion &e) { return Recurrence(e, "GRU", 3).run(); }
LogicalResult expandLSTM(Expansion &e) { return Recurrence(e, "LSTM", 4).run(); }

//===----------------------------------------------------------------------===//
// ConvTranspose
//===----------------------------------------------------------------------===//

// ConvTranspose as the Conv it is the gradient of: the input with s - 1 zeros
// inserted between elements (stride s), padded by d * (k - 1) minus the
// transposed pads (plus output_padding at the end), convolved at stride 1 and
// dilation d with the kernel flipped spatially and its in/out channels swapped
// per group. Pads follow onnx's reference (auto_pad, output_shape).
LogicalResult expandConvTranspose(Expansion &e) {
  std::string x = e.input(0), w = e.input(1), bias = e.input(2);
  RankedTensorType xType = e.type(x), wType = e.type(w);
  if (!xType || !wType || !xType.hasStaticShape() || !wType.hasStaticShape() ||
      xType.getRank() < 3 || wType.getRank() != xType.getRank())
    return e.error() << "needs static X and W of equal rank >= 3", failure();
  int64_t rank = xType.getRank(), spatial = rank - 2;
  int64_t group = e.getInt("group", 1);
  int64_t cin = wType.getDimSize(0), coutPerGroup = wType.getDimSize(1);
  if (group < 1 || cin % group || xType.getDimSize(1) != cin)
    return e.error() << "W's first dimension must be X's channels, divisible "
                        "by group",
           failure();
  auto ints = [&](StringRef name, int64_t dflt) {
    SmallVector<int64_t> v;
    if (const onnx::AttributeProto *a = findAttr(e.node, name))
      v.assign(a->ints().begin(), a->ints().end());
    if (v.empty())
      v.assign(name == "pads" ? 2 * spatial : spatial, dflt);
    return v;
  };
  SmallVector<int64_t> strides = ints("strides", 1), dil = ints("dilations", 1);
  SmallVector<int64_t> outPad = ints("output_padding", 0);
  SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
  if (static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(dil.size()) != spatial ||
      static_cast<int64_t>(outPad.size()) != spatial)
    return e.error() << "strides, dilations and output_padding need one value "
                        "per spatial dimension",
           failure();
  std::string autoPad = e.getString("auto_pad", "NOTSET");
  SmallVector<int64_t> outShape;
  if (const onnx::AttributeProto *a = findAttr(e.node, "output_shape"))
    outShape.assign(a->ints().end() - std::min<int>(a->ints_size(), spatial),
                    a->ints().end());
  SmallVector<int64_t> pb(spatial), pe(spatial);
  auto natural = [&](int64_t i) {
    return strides[i] * (xType.getDimSize(2 + i) - 1) + outPad[i] +
           (kernel[i] - 1) * dil[i] + 1;
  };
  if (!e.hasAttr("pads") && (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")) {
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t out = outShape.empty() ? xType.getDimSize(2 + i) * strides[i]
                                     : outShape[i];
      int64_t total = natural(i) - out;
      pb[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe[i] = total - pb[i];
    }
  } else {
    if (autoPad != "NOTSET" && autoPad != "VALID")
      return e.error() << "unknown auto_pad '" << autoPad << "'", failure();
    SmallVector<int64_t> pads = ints("pads", 0);
    if (static_cast<int64_t>(pads.size()) != 2 * spatial)
      return e.error() << "pads needs two values per spatial dimension",
             failure();
    for (int64_t i = 0; i < spatial; ++i) {
      pb[i] = pads[i];
      pe[i] = pads[spatial + i];
      if (!outShape.empty()) {
        if (static_cast<int64_t>(outShape.size()) != spatial)
          return e.error() << "output_shape needs one value per spatial "
                              "dimension",
                 failure();
        pe[i] += natural(i) - pb[i] - pe[i] - outShape[i];
      }
    }
  }

  // Zeros between the input elements: [N, C, D] -> [N, C, D, 1] -> pad to
  // [N, C, D, s] -> [N, C, D * s] -> keep (D - 1) * s + 1.
  std::string up = x;
  SmallVector<int64_t> upShape(xType.getShape());
  bool strided = llvm::any_of(strides, [](int64_t v) { return v > 1; });
  if (strided) {
    SmallVector<int64_t> split = {upShape[0], upShape[1]};
    for (int64_t i = 0; i < spatial; ++i)
      split.append({upShape[2 + i], 1});
    up = e.add("Reshape", {x, e.i64s(split)});
    SmallVector<int64_t> pads(2 * split.size(), 0);
    for (int64_t i = 0; i < spatial; ++i)
      pads[split.size() + 2 + 2 * i + 1] = strides[i] - 1;
    up = e.add("Pad", {up, e.i64s(pads)});
    SmallVector<int64_t> merged = {upShape[0], upShape[1]};
    SmallVector<int64_t> starts, ends, axes;
    for (int64_t i = 0; i < spatial; ++i) {
      merged.push_back(upShape[2 + i] * strides[i]);
      starts.push_back(0);
      ends.push_back((upShape[2 + i] - 1) * strides[i] + 1);
      axes.push_back(2 + i);
    }
    up = e.add("Reshape", {up, e.i64s(merged)});
    up = e.add("Slice", {up, e.i64s(starts), e.i64s(ends), e.i64s(axes)});
  }
  // Pads of the equivalent convolution; negative ones crop first.
  SmallVector<int64_t> convPads(2 * spatial), cropStart, cropEnd, cropAxes;
  bool crop = false;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t len = (xType.getDimSize(2 + i) - 1) * strides[i] + 1;
    int64_t begin = dil[i] * (kernel[i] - 1) - pb[i];
    int64_t end = dil[i] * (kernel[i] - 1) - pe[i] + outPad[i];
    convPads[i] = std::max<int64_t>(begin, 0);
    convPads[spatial + i] = std::max<int64_t>(end, 0);
    cropStart.push_back(std::max<int64_t>(-begin, 0));
    cropEnd.push_back(len - std::max<int64_t>(-end, 0));
    cropAxes.push_back(2 + i);
    crop |= begin < 0 || end < 0;
  }
  if (crop)
    up = e.add("Slice", {up, e.i64s(cropStart), e.i64s(cropEnd), e.i64s(cropAxes)});

  // Kernel: [Cin, Cout/g, k...] -> [g, Cin/g, Cout/g, k...] -> swap the
  // channel dims -> [Cout, Cin/g, k...], flipped along every spatial dim.
  SmallVector<int64_t> grouped = {group, cin / group, coutPerGroup};
  grouped.append(kernel.begin(), kernel.end());
  SmallVector<int64_t> perm = {0, 2, 1};
  for (int64_t i = 0; i < spatial; ++i)
    perm.push_back(3 + i);
  std::string wg = e.add("Transpose", {e.add("Reshape", {w, e.i64s(grouped)})},
                         {intsAttr("perm", perm)});
  SmallVector<int64_t> convW = {group * coutPerGroup, cin / group};
  convW.append(kernel.begin(), kernel.end());
  std::string wc = e.add("Reshape", {wg, e.i64s(convW)});
  SmallVector<int64_t> flipStart, flipEnd, flipAxes, flipSteps;
  for (int64_t i = 0; i < spatial; ++i) {
    flipStart.push_back(-1);
    flipEnd.push_back(std::numeric_limits<int64_t>::min());
    flipAxes.push_back(2 + i);
    flipSteps.push_back(-1);
  }
  wc = e.add("Slice", {wc, e.i64s(flipStart), e.i64s(flipEnd), e.i64s(flipAxes),
                       e.i64s(flipSteps)});

  SmallVector<std::string> inputs = {up, wc};
  if (!bias.empty())
    inputs.push_back(bias);
  e.add("Conv", inputs,
        {intsAttr("dilations", dil), intAttr("group", group),
         intsAttr("kernel_shape", kernel), intsAttr("pads", convPads),
         intsAttr("strides", SmallVector<int64_t>(spatial, 1))},
        e.output(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Hardmax, OneHot, LpNormalization, LpPool
//===----------------------------------------------------------------------===//

/// The ONNX TensorProto data type of a float element type; 0 if none.
int64_t onnxFloatType(Type t) {
  if (t.isF32())
    return onnx::TensorProto::FLOAT;
  if (t.isF16())
    return onnx::TensorProto::FLOAT16;
  if (t.isF64())
    return onnx::TensorProto::DOUBLE;
  if (t.isBF16())
    return onnx::TensorProto::BFLOAT16;
  return 0;
}

/// [0, 1, ..., n - 1] as int64 with shape [1, .., n, .., 1] (n at `axis`).
std::string iota(Expansion &e, int64_t n, int64_t axis, int64_t rank) {
  SmallVector<int64_t> values, shape(rank, 1);
  for (int64_t i = 0; i < n; ++i)
    values.push_back(i);
  shape[axis] = n;
  auto t = RankedTensorType::get(shape, IntegerType::get(e.ctx.getContext(), 64));
  return e.ctx.addConstant(DenseElementsAttr::get(t, ArrayRef<int64_t>(values)),
                           "iota");
}

// 1 at the first maximum along `axis`, 0 elsewhere (opset < 13: along axis 1
// of the input flattened to 2-D at `axis`).
LogicalResult expandHardmax(Expansion &e) {
  std::string x = e.input(0);
  RankedTensorType t = e.type(x);
  if (!t || !t.hasStaticShape() || t.getRank() == 0 ||
      !onnxFloatType(t.getElementType()))
    return e.error() << "needs a static float input of rank >= 1", failure();
  int64_t rank = t.getRank(), axis = e.getInt("axis", e.opset < 13 ? 1 : -1);
  if (axis < -rank || axis >= rank + (e.opset < 13 ? 1 : 0))
    return e.error() << "axis " << axis << " is out of range", failure();
  if (axis < 0)
    axis += rank;
  std::string in = x;
  int64_t workRank = rank, workAxis = axis, n = t.getDimSize(axis < rank ? axis : 0);
  if (e.opset < 13) {
    in = e.add("Flatten", {x}, {intAttr("axis", axis)});
    workRank = 2;
    workAxis = 1;
    n = 1;
    for (int64_t d = axis; d < rank; ++d)
      n *= t.getDimSize(d);
  }
  std::string idx = e.add("ArgMax", {in}, {intAttr("axis", workAxis), intAttr("keepdims", 1)});
  std::string hit = e.add("Equal", {iota(e, n, workAxis, workRank), idx});
  std::string y = e.add("Cast", {hit}, {intAttr("to", onnxFloatType(t.getElementType()))});
  if (e.opset < 13)
    e.add("Reshape", {y, e.i64s(t.getShape())}, {}, e.output(0));
  else
    e.add("Identity", {y}, {}, e.output(0));
  return success();
}

// values[1] where the (wrapped) index equals the position along `axis`,
// values[0] elsewhere.
LogicalResult expandOneHot(Expansion &e) {
  std::string indices = e.input(0), depth = e.input(1), values = e.input(2);
  RankedTensorType it = e.type(indices), vt = e.type(values);
  if (!it || !it.hasStaticShape() || !vt)
    return e.error() << "needs static indices and values", failure();
  std::optional<SmallVector<int64_t>> depthValue = e.constantInts(depth);
  if (!depthValue) {
    // Float depths are allowed by the spec; read them through a cast.
    return e.error() << "needs a compile-time constant for the non-constant "
                        "input 'depth'",
           failure();
  }
  if (depthValue->size() != 1 || (*depthValue)[0] < 1)
    return e.error() << "depth must be one positive value", failure();
  int64_t n = (*depthValue)[0];
  int64_t rank = it.getRank() + 1, axis = e.getInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return e.error() << "axis " << axis << " is out of range", failure();
  if (axis < 0)
    axis += rank;
  Type i64 = IntegerType::get(e.ctx.getContext(), 64);
  std::string idx = it.getElementType().isInteger(64)
                        ? indices
                        : e.add("Cast", {indices}, {intAttr("to", onnx::TensorProto::INT64)});
  // Negative indices count from the end.
  std::string wrapped = e.add(
      "Where", {e.add("Less", {idx, e.scalar(i64, 0)}),
                e.add("Add", {idx, e.scalar(i64, n)}), idx});
  std::string hit = e.add("Equal", {e.unsqueeze(wrapped, {axis}), iota(e, n, axis, rank)});
  std::string off = e.add("Gather", {values, e.scalar(i64, 0)}, {intAttr("axis", 0)});
  std::string on = e.add("Gather", {values, e.scalar(i64, 1)}, {intAttr("axis", 0)});
  e.add("Where", {hit, on, off}, {}, e.output(0));
  return success();
}

// x / (sum |x|^p along axis)^(1/p), p = 1 or 2; 0 where the norm is 0.
LogicalResult expandLpNormalization(Expansion &e) {
  std::string x = e.input(0);
  RankedTensorType t = e.type(x);
  if (!t || t.getRank() == 0)
    return e.error() << "needs a ranked input", failure();
  int64_t p = e.getInt("p", 2), axis = e.getInt("axis", -1), rank = t.getRank();
  if (p != 1 && p != 2)
    return e.error() << "p must be 1 or 2 (got " << p << ")", failure();
  if (axis < -rank || axis >= rank)
    return e.error() << "axis " << axis << " is out of range", failure();
  if (axis < 0)
    axis += rank;
  std::string norm =
      p == 1 ? e.reduce("ReduceSum", e.add("Abs", {x}), {axis}, true)
             : e.add("Sqrt", {e.reduce("ReduceSum", e.add("Mul", {x, x}), {axis}, true)});
  // A zero norm gives 0, not 0/0 = NaN (as onnx's reference does).
  Type elem = t.getElementType();
  std::string isZero = e.add("Equal", {norm, e.scalar(elem, 0.0)});
  e.add("Where", {isZero, e.scalar(elem, 0.0), e.add("Div", {x, norm})}, {},
        e.output(0));
  return success();
}

// (sum over the window of |x|^p)^(1/p): AveragePool counting the padding,
// times the window size.
LogicalResult expandLpPool(Expansion &e) {
  std::string x = e.input(0);
  RankedTensorType t = e.type(x);
  const onnx::AttributeProto *kernel = findAttr(e.node, "kernel_shape");
  if (!t || !kernel || !onnxFloatType(t.getElementType()))
    return e.error() << "needs a float input and kernel_shape", failure();
  Type elem = t.getElementType();
  double p = e.hasAttr("p") ? static_cast<double>(e.getInt("p", 2)) : 2.0;
  int64_t window = 1;
  for (int64_t k : kernel->ints())
    window *= k;
  std::string powed = p == 2.0 ? e.add("Mul", {x, x})
                               : e.add("Pow", {e.add("Abs", {x}), e.scalar(elem, p)});
  SmallVector<onnx::AttributeProto> attrs;
  for (const onnx::AttributeProto &a : e.node.attribute())
    if (a.name() != "p")
      attrs.push_back(a);
  attrs.push_back(intAttr("count_include_pad", 1));
  std::string avg = e.add("AveragePool", {powed}, attrs);
  std::string sum = e.add("Mul", {avg, e.scalar(elem, double(window))});
  if (p == 2.0)
    e.add("Sqrt", {sum}, {}, e.output(0));
  else
    e.add("Pow", {sum, e.scalar(elem, 1.0 / p)}, {}, e.output(0));
  return success();
}

// Crop (centered Slice) or zero-pad (centered Pad) each listed axis to the
// target size; an odd difference puts the extra element at the end.
LogicalResult expandCenterCropPad(Expansion &e) {
  std::string x = e.input(0);
  RankedTensorType t = e.type(x);
  if (!t || !t.hasStaticShape())
    return e.error() << "needs a static input", failure();
  std::optional<SmallVector<int64_t>> target = e.constantInts(e.input(1));
  if (!target)
    return e.error() << "needs a compile-time constant for the non-constant "
                        "input 'shape'",
           failure();
  int64_t rank = t.getRank();
  SmallVector<int64_t> axes;
  if (const onnx::AttributeProto *a = findAttr(e.node, "axes"))
    axes.assign(a->ints().begin(), a->ints().end());
  else
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  if (axes.size() != target->size())
    return e.error() << "'shape' needs one value per axis", failure();
  SmallVector<int64_t> starts, ends, sliceAxes, pads(2 * rank, 0);
  bool pad = false;
  for (auto [i, a] : llvm::enumerate(axes)) {
    if (a < -rank || a >= rank)
      return e.error() << "axis " << a << " is out of range", failure();
    int64_t axis = a < 0 ? a + rank : a, dim = t.getDimSize(axis);
    int64_t want = (*target)[i];
    if (want < 0)
      return e.error() << "negative target size " << want, failure();
    if (want < dim) {
      int64_t begin = (dim - want) / 2;
      starts.push_back(begin);
      ends.push_back(begin + want);
      sliceAxes.push_back(axis);
    } else if (want > dim) {
      pads[axis] = (want - dim) / 2;
      pads[rank + axis] = want - dim - pads[axis];
      pad = true;
    }
  }
  std::string y = x;
  if (!starts.empty())
    y = e.add("Slice", {y, e.i64s(starts), e.i64s(ends), e.i64s(sliceAxes)});
  if (pad)
    y = e.add("Pad", {y, e.i64s(pads)});
  e.add("Identity", {y}, {}, e.output(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Quantization: QuantizeLinear, DequantizeLinear, QLinearMatMul, QLinearConv,
// MatMulInteger, ConvInteger
//===----------------------------------------------------------------------===//

/// The ONNX data type of an 8/16-bit integer element type (kiln's onnx
/// dialect keeps uint types unsigned); 0 if it is none of them.
int64_t onnxQuantType(Type t) {
  auto i = dyn_cast<IntegerType>(t);
  if (!i)
    return 0;
  bool u = i.isUnsigned();
  switch (i.getWidth()) {
  case 8:
    return u ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
  case 16:
    return u ? onnx::TensorProto::UINT16 : onnx::TensorProto::INT16;
  default:
    return 0;
  }
}

std::pair<double, double> quantRange(Type t) {
  auto i = cast<IntegerType>(t);
  unsigned w = i.getWidth();
  if (i.isUnsigned())
    return {0.0, double((int64_t(1) << w) - 1)};
  return {-double(int64_t(1) << (w - 1)), double((int64_t(1) << (w - 1)) - 1)};
}

/// A per-axis 1-D `value` of length > 1 reshaped to broadcast along `axis`
/// of a rank-`rank` tensor; scalars and 1-element tensors as they are.
std::string alongAxis(Expansion &e, const std::string &value, int64_t axis,
                      int64_t rank) {
  RankedTensorType t = e.type(value);
  if (!t || t.getRank() == 0 || t.getNumElements() == 1)
    return value;
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = t.getNumElements();
  return e.add("Reshape", {value, e.i64s(shape)});
}

LogicalResult checkAxis(Expansion &e, int64_t &axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    return e.error() << "axis " << axis << " is out of range", failure();
  if (axis < 0)
    axis += rank;
  return success();
}

// y = (x - zero_point) * scale, in the scale's type.
LogicalResult expandDequantizeLinear(Expansion &e) {
  std::string x = e.input(0), scale = e.input(1), zp = e.input(2);
  RankedTensorType xt = e.type(x), st = e.type(scale);
  if (!xt || !st || !onnxFloatType(st.getElementType()))
    return e.error() << "needs a ranked input and a float scale", failure();
  Type xe = xt.getElementType();
  if (!onnxQuantType(xe) && !xe.isInteger(32))
    return e.error() << "element type " << xe << " is not supported (8/16-bit "
                     << "integers and int32)",
         failure();
  if (e.getInt("block_size", 0) != 0)
    return e.error() << "blocked quantization is not supported yet", failure();
  int64_t axis = e.getInt("axis", 1);
  if (st.getNumElements() > 1 && failed(checkAxis(e, axis, xt.getRank())))
    return failure();
  int64_t floatType = onnxFloatType(st.getElementType());
  std::string xf = e.add("Cast", {x}, {intAttr("to", floatType)});
  if (!zp.empty())
    xf = e.add("Sub", {xf, e.add("Cast", {alongAxis(e, zp, axis, xt.getRank())},
                                 {intAttr("to", floatType)})});
  std::string y = e.add("Mul", {xf, alongAxis(e, scale, axis, xt.getRank())});
  int64_t outType = e.getInt("output_dtype", 0);
  if (outType && outType != floatType)
    y = e.add("Cast", {y}, {intAttr("to", outType)});
  e.add("Identity", {y}, {}, e.output(0));
  return success();
}

/// saturate(round_half_even(v) + zero_point) as `target` (v already divided
/// by the scale, a float tensor).
std::string quantizeValue(Expansion &e, std::string v, const std::string &zpFloat,
                          Type floatElem, Type target) {
  std::string q = e.add("Round", {v});
  if (!zpFloat.empty())
    q = e.add("Add", {q, zpFloat});
  auto [lo, hi] = quantRange(target);
  q = e.add("Clip", {q, e.scalar(floatElem, lo), e.scalar(floatElem, hi)});
  return e.add("Cast", {q}, {intAttr("to", onnxQuantType(target))});
}

LogicalResult expandQuantizeLinear(Expansion &e) {
  std::string x = e.input(0), scale = e.input(1), zp = e.input(2);
  RankedTensorType xt = e.type(x), st = e.type(scale);
  if (!xt || !st || !onnxFloatType(xt.getElementType()))
    return e.error() << "needs a float input", failure();
  if (e.getInt("block_size", 0) != 0)
    return e.error() << "blocked quantization is not supported yet", failure();
  if (e.getInt("precision", 0) != 0)
    return e.error() << "the precision attribute is not supported yet", failure();
  Type target;
  if (!zp.empty()) {
    RankedTensorType zt = e.type(zp);
    target = zt ? zt.getElementType() : Type();
  } else {
    int64_t dtype = e.getInt("output_dtype", onnx::TensorProto::UINT8);
    MLIRContext *ctx = e.ctx.getContext();
    switch (dtype) {
    case onnx::TensorProto::UINT8:
      target = IntegerType::get(ctx, 8, IntegerType::Unsigned);
      break;
    case onnx::TensorProto::INT8:
      target = IntegerType::get(ctx, 8);
      break;
    case onnx::TensorProto::UINT16:
      target = IntegerType::get(ctx, 16, IntegerType::Unsigned);
      break;
    case onnx::TensorProto::INT16:
      target = IntegerType::get(ctx, 16);
      break;
    default:
      break;
    }
  }
  if (!target || !onnxQuantType(target))
    return e.error() << "only 8- and 16-bit integer quantization is supported",
           failure();
  int64_t axis = e.getInt("axis", 1);
  if (st.getNumElements() > 1 && failed(checkAxis(e, axis, xt.getRank())))
    return failure();
  Type fe = xt.getElementType();
  int64_t floatType = onnxFloatType(fe);
  std::string scaled =
      e.add("Div", {x, e.add("Cast", {alongAxis(e, scale, axis, xt.getRank())},
                             {intAttr("to", floatType)})});
  std::string zpFloat =
      zp.empty() ? ""
                 : e.add("Cast", {alongAxis(e, zp, axis, xt.getRank())},
                         {intAttr("to", floatType)});
  e.add("Identity", {quantizeValue(e, scaled, zpFloat, fe, target)}, {}, e.output(0));
  return success();
}

// The integer products are accumulated in float32, which is exact while every
// partial sum stays below 2^24: checked from the types and the reduction size.
LogicalResult checkExactAccumulation(Expansion &e, Type a, Type b, int64_t terms) {
  auto bound = [](Type t) {
    auto [lo, hi] = quantRange(t);
    return hi - lo; // |x - zero_point| is at most the type's span
  };
  if (!onnxQuantType(a) || !onnxQuantType(b))
    return e.error() << "needs 8- or 16-bit integer inputs", failure();
  if (bound(a) * bound(b) * double(terms) >= double(1 << 24))
    return e.error() << "the integer accumulation over " << terms
                     << " products could exceed float32's exact range (2^24); "
                        "not supported yet",
           failure();
  return success();
}

std::string centered(Expansion &e, const std::string &x, const std::string &zp,
                     int64_t axis, int64_t rank) {
  std::string xf = e.add("Cast", {x}, {intAttr("to", onnx::TensorProto::FLOAT)});
  if (zp.empty())
    return xf;
  // Reshape the (known-typed) zero point first: the Cast's type is not known yet.
  std::string shaped = axis < 0 ? zp : alongAxis(e, zp, axis, rank);
  std::string zf = e.add("Cast", {shaped}, {intAttr("to", onnx::TensorProto::FLOAT)});
  return e.add("Sub", {xf, zf});
}

LogicalResult expandMatMulInteger(Expansion &e) {
  RankedTensorType at = e.type(e.input(0)), bt = e.type(e.input(1));
  if (!at || !bt || at.getRank() == 0 || bt.getRank() == 0)
    return e.error() << "needs ranked inputs", failure();
  int64_t k = at.getShape().back();
  if (failed(checkExactAccumulation(e, at.getElementType(), bt.getElementType(), k)))
    return failure();
  // a_zero_point is per row of A (axis rank-2), b_zero_point per column of B.
  std::string a = centered(e, e.input(0), e.input(2), std::max<int64_t>(at.getRank() - 2, 0),
                           at.getRank());
  std::string b = centered(e, e.input(1), e.input(3), bt.getRank() - 1, bt.getRank());
  e.add("Cast", {e.add("MatMul", {a, b})}, {intAttr("to", onnx::TensorProto::INT32)},
        e.output(0));
  return success();
}

LogicalResult expandQLinearMatMul(Expansion &e) {
  RankedTensorType at = e.type(e.input(0)), bt = e.type(e.input(3));
  RankedTensorType yzt = e.type(e.input(7)), st = e.type(e.input(1));
  if (!at || !bt || !st || at.getRank() == 0)
    return e.error() << "needs ranked inputs", failure();
  if (failed(checkExactAccumulation(e, at.getElementType(), bt.getElementType(),
                                    at.getShape().back())))
    return failure();
  std::string a = centered(e, e.input(0), e.input(2), -1, at.getRank());
  std::string b = centered(e, e.input(3), e.input(5), -1, bt.getRank());
  std::string acc = e.add("MatMul", {a, b});
  // a_scale * b_scale / y_scale in the scales' type, applied in float32.
  std::string factor = e.add("Div", {e.add("Mul", {e.input(1), e.input(4)}), e.input(6)});
  factor = e.add("Cast", {factor}, {intAttr("to", onnx::TensorProto::FLOAT)});
  Type f32 = Float32Type::get(e.ctx.getContext());
  std::string zpFloat =
      e.input(7).empty() ? ""
                         : e.add("Cast", {e.input(7)}, {intAttr("to", onnx::TensorProto::FLOAT)});
  Type target = yzt ? yzt.getElementType() : at.getElementType();
  if (!onnxQuantType(target))
    return e.error() << "needs an 8- or 16-bit integer output", failure();
  e.add("Identity", {quantizeValue(e, e.add("Mul", {acc, factor}), zpFloat, f32, target)},
        {}, e.output(0));
  return success();
}

/// Conv over zero-point-centered float copies of integer inputs.
std::string integerConv(Expansion &e, const std::string &x, const std::string &xzp,
                        const std::string &w, const std::string &wzp, int64_t rank) {
  std::string xf = centered(e, x, xzp, -1, rank);
  std::string wf = centered(e, w, wzp, 0, rank); // w_zero_point per output channel
  SmallVector<onnx::AttributeProto> attrs(e.node.attribute().begin(),
                                          e.node.attribute().end());
  return e.add("Conv", {xf, wf}, attrs);
}

LogicalResult expandConvInteger(Expansion &e) {
  RankedTensorType xt = e.type(e.input(0)), wt = e.type(e.input(1));
  if (!xt || !wt || !wt.hasStaticShape() || wt.getRank() < 3)
    return e.error() << "needs static inputs", failure();
  int64_t terms = wt.getNumElements() / wt.getDimSize(0);
  if (failed(checkExactAccumulation(e, xt.getElementType(), wt.getElementType(), terms)))
    return failure();
  std::string y = integerConv(e, e.input(0), e.input(2), e.input(1), e.input(3), xt.getRank());
  e.add("Cast", {y}, {intAttr("to", onnx::TensorProto::INT32)}, e.output(0));
  return success();
}

LogicalResult expandQLinearConv(Expansion &e) {
  // x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B (int32)
  RankedTensorType xt = e.type(e.input(0)), wt = e.type(e.input(3));
  RankedTensorType yzt = e.type(e.input(7));
  if (!xt || !wt || !wt.hasStaticShape() || wt.getRank() < 3)
    return e.error() << "needs static inputs", failure();
  int64_t terms = wt.getNumElements() / wt.getDimSize(0);
  if (failed(checkExactAccumulation(e, xt.getElementType(), wt.getElementType(), terms)))
    return failure();
  std::string acc = integerConv(e, e.input(0), e.input(2), e.input(3), e.input(5), xt.getRank());
  if (!e.input(8).empty()) {
    std::string bias = e.add("Cast", {alongAxis(e, e.input(8), 1, xt.getRank())},
                             {intAttr("to", onnx::TensorProto::FLOAT)});
    acc = e.add("Add", {acc, bias});
  }
  std::string scale = e.add("Div", {e.add("Mul", {e.input(1), alongAxis(e, e.input(4), 1, xt.getRank())}),
                                    e.input(6)});
  scale = e.add("Cast", {scale}, {intAttr("to", onnx::TensorProto::FLOAT)});
  Type f32 = Float32Type::get(e.ctx.getContext());
  std::string zpFloat =
      e.input(7).empty() ? ""
                         : e.add("Cast", {e.input(7)}, {intAttr("to", onnx::TensorProto::FLOAT)});
  Type target = yzt ? yzt.getElementType() : xt.getElementType();
  if (!onnxQuantType(target))
    return e.error() << "needs an 8- or 16-bit integer output", failure();
  e.add("Identity", {quantizeValue(e, e.add("Mul", {acc, scale}), zpFloat, f32, target)},
        {}, e.output(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Swish, EyeLike, window functions, GroupNormalization
//===----------------------------------------------------------------------===//

// Y = X * Sigmoid(alpha * X).
LogicalResult expandSwish(Expansion &e) {
  std::string x = e.input(0);
  RankedTensorType t = e.type(x);
  if (!t || !onnxFloatType(t.getElementType()))
    return e.error() << "needs a float input", failure();
  std::string scaled = e.add("Mul", {x, e.scalar(t.getElementType(), e.getFloat("alpha", 1.0f))});
  e.add("Mul", {x, e.add("Sigmoid", {scaled})}, {}, e.output(0));
  return success();
}

/// A constant of `shape` x `elem` from doubles (floats or integers).
std::string constantOf(Expansion &e, ArrayRef<int64_t> shape, Type elem,
                       ArrayRef<double> values) {
  SmallVector<Attribute> attrs;
  for (double v : values)
    attrs.push_back(isa<FloatType>(elem)
                        ? Attribute(FloatAttr::get(elem, v))
                        : Attribute(IntegerAttr::get(elem, static_cast<int64_t>(v))));
  return e.ctx.addConstant(
      DenseElementsAttr::get(RankedTensorType::get(shape, elem), attrs), "values");
}

/// The element type of an ONNX data type code kiln computes with; null if not.
Type typeOfCode(MLIRContext *ctx, int64_t code) {
  switch (code) {
  case onnx::TensorProto::FLOAT: return Float32Type::get(ctx);
  case onnx::TensorProto::DOUBLE: return Float64Type::get(ctx);
  case onnx::TensorProto::FLOAT16: return Float16Type::get(ctx);
  case onnx::TensorProto::BFLOAT16: return BFloat16Type::get(ctx);
  case onnx::TensorProto::INT32: return IntegerType::get(ctx, 32);
  case onnx::TensorProto::INT64: return IntegerType::get(ctx, 64);
  case onnx::TensorProto::INT8: return IntegerType::get(ctx, 8);
  case onnx::TensorProto::UINT8: return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case onnx::TensorProto::INT16: return IntegerType::get(ctx, 16);
  case onnx::TensorProto::UINT16: return IntegerType::get(ctx, 16, IntegerType::Unsigned);
  case onnx::TensorProto::UINT32: return IntegerType::get(ctx, 32, IntegerType::Unsigned);
  case onnx::TensorProto::UINT64: return IntegerType::get(ctx, 64, IntegerType::Unsigned);
  default: return {};
  }
}

// Ones on the k-th diagonal of a 2-D tensor shaped like the input: a constant.
LogicalResult expandEyeLike(Expansion &e) {
  RankedTensorType t = e.type(e.input(0));
  if (!t || !t.hasStaticShape() || t.getRank() != 2)
    return e.error() << "needs a static 2-D input", failure();
  Type elem = e.hasAttr("dtype") ? typeOfCode(e.ctx.getContext(), e.getInt("dtype", 1))
                                 : t.getElementType();
  if (!elem || elem.isInteger(1))
    return e.error() << "dtype " << e.getInt("dtype", 0) << " is not supported", failure();
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1), k = e.getInt("k", 0);
  SmallVector<double> values(rows * cols, 0.0);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols)
      values[i * cols + i + k] = 1.0;
  e.add("Identity", {constantOf(e, {rows, cols}, elem, values)}, {}, e.output(0));
  return success();
}

// Hann, Hamming and Blackman windows of a constant size: constants.
LogicalResult expandWindow(Expansion &e) {
  std::optional<SmallVector<int64_t>> size = e.constantInts(e.input(0));
  if (!size)
    return e.error() << "needs a compile-time constant for the non-constant "
                        "input 'size'",
           failure();
  if (size->size() != 1 || (*size)[0] < 0)
    return e.error() << "size must be one non-negative value", failure();
  Type elem = typeOfCode(e.ctx.getContext(), e.getInt("output_datatype", 1));
  if (!elem)
    return e.error() << "output_datatype " << e.getInt("output_datatype", 1)
                     << " is not supported",
           failure();
  int64_t n = (*size)[0];
  double denom = e.getInt("periodic", 1) ? double(n) : double(n - 1);
  StringRef op = e.node.op_type();
  SmallVector<double> values;
  for (int64_t i = 0; i < n; ++i) {
    double x = denom == 0 ? 0.0 : 2.0 * M_PI * double(i) / denom;
    if (op == "HannWindow")
      values.push_back(0.5 - 0.5 * std::cos(x));
    else if (op == "HammingWindow")
      values.push_back(25.0 / 46.0 - 21.0 / 46.0 * std::cos(x));
    else
      values.push_back(0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2.0 * x));
  }
  e.add("Identity", {constantOf(e, {n}, elem, values)}, {}, e.output(0));
  return success();
}

// Normalize each group of C / num_groups channels (with all spatial
// positions) to mean 0 and variance 1, then scale and shift per channel.
LogicalResult expandGroupNormalization(Expansion &e) {
  std::string x = e.input(0), scale = e.input(1), bias = e.input(2);
  RankedTensorType t = e.type(x);
  if (!t || !t.hasStaticShape() || t.getRank() < 2 || !t.getElementType().isF32())
    return e.error() << "needs a static float32 input of rank >= 2", failure();
  int64_t groups = e.getInt("num_groups", 0), channels = t.getDimSize(1);
  if (groups < 1 || channels % groups)
    return e.error() << "num_groups must divide the " << channels << " channels",
           failure();
  Type elem = t.getElementType();
  std::string grouped = e.add("Reshape", {x, e.i64s({t.getDimSize(0), groups, -1})});
  std::string mean = e.reduce("ReduceMean", grouped, {2}, true);
  std::string centeredX = e.add("Sub", {grouped, mean});
  std::string var = e.reduce("ReduceMean", e.add("Mul", {centeredX, centeredX}), {2}, true);
  std::string normalized = e.add(
      "Div", {centeredX, e.add("Sqrt", {e.add("Add", {var, e.scalar(elem, e.getFloat("epsilon", 1e-5f))})})});
  std::string back = e.add("Reshape", {normalized, e.i64s(t.getShape())});
  SmallVector<int64_t> perChannel(t.getRank(), 1);
  perChannel[1] = channels;
  std::string y = e.add("Mul", {back, e.add("Reshape", {scale, e.i64s(perChannel)})});
  e.add("Add", {y, e.add("Reshape", {bias, e.i64s(perChannel)})}, {}, e.output(0));
  return success();
}

} // namespace

FailureOr<bool> expandNode(const onnx::NodeProto &node, int64_t opset,
                           AdapterContext &ctx,
                           SmallVectorImpl<onnx::NodeProto> &out) {
  using ExpandFn = LogicalResult (*)(Expansion &);
  ExpandFn fn = llvm::StringSwitch<ExpandFn>(node.op_type())
                    .Case("NegativeLogLikelihoodLoss",
                          expandNegativeLogLikelihoodLoss)
                    .Case("SoftmaxCrossEntropyLoss",
                          expandSoftmaxCrossEntropyLoss)
                    .Case("RMSNormalization", expandRMSNormalization)
                    .Case("Attention", expandAttention)
                    .Case("RNN", expandRNN)
                    .Case("ConvTranspose", expandConvTranspose)
                    .Case("Hardmax", expandHardmax)
                    .Case("OneHot", expandOneHot)
                    .Case("LpNormalization", expandLpNormalization)
                    .Case("LpPool", expandLpPool)
                    .Case("CenterCropPad", expandCenterCropPad)
                    .Case("DequantizeLinear", expandDequantizeLinear)
                    .Case("QuantizeLinear", expandQuantizeLinear)
                    .Case("MatMulInteger", expandMatMulInteger)
                    .Case("QLinearMatMul", expandQLinearMatMul)
                    .Case("ConvInteger", expandConvInteger)
                    .Case("QLinearConv", expandQLinearConv)
                    .Case("Swish", expandSwish)
                    .Case("EyeLike", expandEyeLike)
                    .Cases({"HannWindow", "HammingWindow", "BlackmanWindow"}, expandWindow)
                    .Case("GroupNormalization", expandGroupNormalization)
                    .Case("GRU", expandGRU)
                    .Case("LSTM", expandLSTM)
                    .Default(nullptr);
  if (!fn)
    return false;
  if (llvm::all_of(node.output(), [](const std::string &o) { return o.empty(); }))
    return ctx.emitNodeError() << "has no output", failure();
  Expansion e(node, opset, ctx, out);
  if (failed(fn(e)))
    return failure();
  return true;
}

} // namespace kiln::import
