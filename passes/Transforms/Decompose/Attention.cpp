//===- Attention.cpp - kiln-decompose: Attention --------------------------===//
//
// Follows the function body the ONNX spec gives for each op (onnx/defs/*/defs.cc of
// onnx 1.23), as the importer expanded it before kiln-decompose existed.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Decompose/Expansion.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;

namespace kiln::decompose {

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
  V q = e.input(0), k = e.input(1), v = e.input(2);
  V mask = e.input(3), pastKey = e.input(4), pastValue = e.input(5);
  V nonpad = e.input(6);
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
  auto toHeads = [&](const V &x, RankedTensorType t, int64_t heads) {
    V split = e.add(
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
  V bias;
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
    V diffConst = e.ctx.addConstant(
        DenseElementsAttr::get(diffType, ArrayRef<int64_t>(diff)), "diff");
    V keysConst = e.ctx.addConstant(
        DenseElementsAttr::get(keysType, ArrayRef<int64_t>(keys)), "keys");
    V lens = e.add("Reshape", {nonpad, e.i64s({batch, 1, 1})});
    V allowed = e.add("Less", {keysConst, lens}); // padding
    V d = e.add("Add", {diffConst, e.add("Sub", {lens, e.scalar(i64, qLen)})});
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
    V m = mask;
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
    if (kvHeads <= 0 || qHeads % kvHeads)
      return e.error() << "q heads (" << qHeads << ") must be a multiple of "
                       << "kv heads (" << kvHeads << ")",
             failure();
    int64_t reps = qHeads / kvHeads;
    auto repeat = [&](const V &x, int64_t d) {
      V u = e.unsqueeze(x, {2});
      V ex =
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
  V sqrtScale = e.scalar(elem, std::sqrt(scale));
  V qs = e.add("Mul", {q, sqrtScale});
  V kt = e.add("Transpose", {e.add("Mul", {k, sqrtScale})},
                         {intsAttr("perm", {0, 1, 3, 2})});
  V scores = e.add("MatMul", {qs, kt});
  float softcap = e.getFloat("softcap", 0.0f);
  if (softcap > 0) {
    V c = e.scalar(elem, softcap);
    scores = e.add("Mul", {e.add("Tanh", {e.add("Div", {scores, c})}), c});
  }
  V biased = bias.empty() ? scores : e.add("Add", {scores, bias});
  int64_t mode = e.getInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return e.error() << "qk_matmul_output_mode " << mode << " is not 0-3",
           failure();

  // Softmax, in softmax_precision when given.
  V logits = biased;
  bool recast = false;
  if (e.hasAttr("softmax_precision")) {
    int64_t precision = e.getInt("softmax_precision", 1);
    logits = e.add("Cast", {biased}, {intAttr("to", precision)});
    recast = true;
  }
  V probs = e.add("Softmax", {logits}, {intAttr("axis", -1)});
  if (!mask.empty() || anyRowFullyMasked) {
    // Rows with no attendable key: 0 instead of NaN.
    V rowMax = e.reduce("ReduceMax", bias, {-1}, true);
    V noKey = e.add("IsInf", {rowMax}, {intAttr("detect_positive", 0)});
    V zero = recast ? e.add("CastLike", {e.scalar(elem, 0.0), logits})
                              : e.scalar(elem, 0.0);
    probs = e.add("Where", {noKey, zero, probs});
  }
  if (recast)
    probs = e.add("CastLike", {probs, e.input(0)});
  if (!e.output(3).empty()) {
    V exposed = mode == 3 ? probs : mode == 2 ? biased : scores;
    e.add("Identity", {exposed}, {}, e.output(3));
  }

  if (rank == 4) {
    e.add("MatMul", {probs, v}, {}, e.output(0));
  } else {
    V y = e.add("MatMul", {probs, v});
    V merged =
        e.add("Transpose", {y}, {intsAttr("perm", {0, 2, 1, 3})});
    e.add("Reshape", {merged, e.i64s({batch, qLen, -1})}, {}, e.output(0));
  }
  return success();
}

} // namespace kiln::decompose
