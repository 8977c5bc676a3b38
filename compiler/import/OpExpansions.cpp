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
    if (result.empty())
      result = base + "/kiln." + std::to_string(counter++) + "." + node.output(0);
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

  // Ops whose axes moved from an attribute to an input, in the model's form.
  std::string unsqueeze(const std::string &x, ArrayRef<int64_t> axes) {
    if (opset >= 13)
      return add("Unsqueeze", {x, i64s(axes)});
    return add("Unsqueeze", {x}, {intsAttr("axes", axes)});
  }
  std::string squeeze(const std::string &x, ArrayRef<int64_t> axes) {
    if (opset >= 13)
      return add("Squeeze", {x, i64s(axes)});
    return add("Squeeze", {x}, {intsAttr("axes", axes)});
  }
  /// Reduce* over `axes` (empty: all axes).
  std::string reduce(StringRef opType, const std::string &x,
                     ArrayRef<int64_t> axes, bool keepdims,
                     std::string result = "") {
    SmallVector<onnx::AttributeProto> attrs = {intAttr("keepdims", keepdims)};
    if (axes.empty())
      return add(opType, {x}, attrs, result);
    int64_t axesInputSince = opType == "ReduceSum" ? 13 : 18;
    if (opset >= axesInputSince)
      return add(opType, {x, i64s(axes)}, attrs, result);
    attrs.push_back(intsAttr("axes", axes));
    return add(opType, {x}, attrs, result);
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
  // Before opset 13 LogSoftmax flattened the trailing dims instead of
  // normalizing one axis.
  if (e.opset < 13 && scoresType.getRank() > 2)
    return e.error() << "scores of rank > 2 need opset >= 13", failure();
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
  if (!e.input(6).empty())
    return e.error() << "input 'nonpad_kv_seqlen' is not supported yet",
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
  if (shapeMask) {
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
      if (e.opset >= 11)
        m = e.add("Pad", {m, e.i64s(pads), e.scalar(elem, -inf)});
      else
        return e.error() << "a short attn_mask needs opset >= 11", failure();
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
                    .Default(nullptr);
  if (!fn)
    return false;
  if (node.output_size() == 0 || node.output(0).empty())
    return ctx.emitNodeError() << "has no output", failure();
  Expansion e(node, opset, ctx, out);
  if (failed(fn(e)))
    return failure();
  return true;
}

} // namespace kiln::import
