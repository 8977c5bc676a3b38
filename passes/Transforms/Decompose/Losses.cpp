//===- Losses.cpp - kiln-decompose: losses --------------------------------===//
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
// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
//===----------------------------------------------------------------------===//

// loss[n, d...] = -input[n, target[n, d...], d...] * weight[target[n, d...]],
// 0 where target == ignore_index; reduced by `reduction` (mean divides by the
// sum of the weights that applied).
LogicalResult expandNegativeLogLikelihoodLoss(Expansion &e) {
  V input = e.input(0), target = e.input(1), weight = e.input(2);
  RankedTensorType inType = e.type(input), tType = e.type(target);
  if (!inType || !tType || inType.getRank() < 2)
    return e.error() << "needs ranked 'input' of rank >= 2 and 'target'",
           failure();
  std::string reduction = e.getString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return e.error() << "unknown reduction '" << reduction << "'", failure();
  Type elem = inType.getElementType(), tElem = tType.getElementType();

  V safeTarget = target, valid;
  bool ignore = e.hasAttr("ignore_index");
  if (ignore) {
    V ignored =
        e.add("Equal", {target, e.scalar(tElem, e.getInt("ignore_index", 0))});
    valid = e.add("Not", {ignored});
    safeTarget = e.add("Where", {valid, target, e.scalar(tElem, 0)});
  }
  V picked = e.add("GatherElements",
                             {input, e.unsqueeze(safeTarget, {1})},
                             {intAttr("axis", 1)});
  V loss = e.add("Neg", {e.squeeze(picked, {1})});
  V w; // per-element weight; "" means 1
  if (!weight.empty())
    w = e.add("Gather", {weight, safeTarget}, {intAttr("axis", 0)});
  if (ignore)
    w = e.add("Where", {valid, w.empty() ? e.scalar(elem, 1) : w,
                        e.scalar(elem, 0)});
  Expansion::Output out = e.output(0);
  if (reduction == "none") {
    e.add(w.empty() ? "Identity" : "Mul",
          w.empty() ? SmallVector<V>{loss}
                    : SmallVector<V>{loss, w},
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
  V logProb =
      e.add("LogSoftmax", {e.input(0)}, {intAttr("axis", 1)}, e.output(1));
  SmallVector<Attr> attrs;
  for (const Attr &a : e.node.attribute())
    if (a.name() == "reduction" || a.name() == "ignore_index")
      attrs.push_back(a);
  SmallVector<V> inputs = {logProb, e.input(1)};
  if (!e.input(2).empty())
    inputs.push_back(e.input(2));
  e.add("NegativeLogLikelihoodLoss", inputs, attrs, e.output(0));
  return success();
}

} // namespace kiln::decompose
