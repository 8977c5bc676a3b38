//===- DecomposePass.cpp - kiln-decompose ---------------------------------===//
//
// Replaces every op that has an expansion (Expansion.h), unless it is kept, by the ops
// its expansion builds. Ops an expansion creates may themselves have one
// (SoftmaxCrossEntropyLoss -> NegativeLogLikelihoodLoss): the walk repeats until no
// expandable op is left.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Passes.h"

#include "passes/Transforms/Decompose/Expansion.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace kiln {

#define GEN_PASS_DEF_KILNDECOMPOSEPASS
#include "passes/Transforms/Passes.h.inc"

namespace {

/// The function's onnx.NoValue (created at its start when it has none; `created` says so).
Value getNoValue(func::FuncOp func, bool &created) {
  created = false;
  for (Operation &op : func.getBody().front())
    if (isa<onnx::NoValueOp>(op))
      return op.getResult(0);
  created = true;
  OpBuilder builder(func.getContext());
  builder.setInsertionPointToStart(&func.getBody().front());
  OperationState state(func.getLoc(), "onnx.NoValue");
  state.addTypes(builder.getNoneType());
  return builder.create(state)->getResult(0);
}

/// Replaces `op` by its expansion; fails after an error naming its node.
LogicalResult decomposeOp(Operation *op, decompose::ExpandFn fn, Value noValue) {
  OpBuilder builder(op);
  decompose::Expansion e(op, builder, noValue);
  if (llvm::all_of(op->getResultTypes(), [](Type t) { return isa<NoneType>(t); }))
    return onnx::emitNodeError(op) << "has no output", failure();
  if (failed(fn(e)) || e.failed())
    return failure();
  if (!e.complete())
    return onnx::emitNodeError(op)
           << "internal error: the decomposition left an output without a value";
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    Value replacement = e.outputs()[i];
    if (!replacement)
      continue;
    if (replacement.getType() != result.getType())
      return onnx::emitNodeError(op)
             << "internal error: the decomposition computes output " << i << " as "
             << replacement.getType() << ", but the op's type is " << result.getType();
  }
  for (auto [i, result] : llvm::enumerate(op->getResults()))
    if (Value replacement = e.outputs()[i])
      result.replaceAllUsesWith(replacement);
  if (!op->use_empty())
    return onnx::emitNodeError(op)
           << "internal error: an absent output of the op is used";
  op->erase();
  return success();
}

struct KilnDecomposePass : public impl::KilnDecomposePassBase<KilnDecomposePass> {
  using KilnDecomposePassBase::KilnDecomposePassBase;
  explicit KilnDecomposePass(std::function<bool(Operation *)> keep)
      : keepFn(std::move(keep)) {}

  bool kept(Operation *op) const {
    if ((keepFn && keepFn(op)) || decompose::keptForIntegerKernel(op) ||
        decompose::keptForLowering(op))
      return true;
    return llvm::is_contained(keepOps, op->getName().stripDialect());
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Value noValue;
    bool createdNoValue = false;
    // The expansions of the ops an expansion created are done in the next round.
    while (true) {
      SmallVector<std::pair<Operation *, decompose::ExpandFn>> work;
      func.walk([&](Operation *op) {
        if (!isa<onnx::ONNXDialect>(op->getDialect()) || kept(op))
          return;
        if (decompose::ExpandFn fn = decompose::lookupExpansion(op->getName().stripDialect()))
          work.emplace_back(op, fn);
      });
      if (work.empty())
        break;
      if (!noValue)
        noValue = getNoValue(func, createdNoValue);
      for (auto [op, fn] : work)
        if (failed(decomposeOp(op, fn, noValue)))
          return signalPassFailure();
    }
    if (createdNoValue && noValue.use_empty())
      noValue.getDefiningOp()->erase();
  }

  std::function<bool(Operation *)> keepFn;
};

} // namespace

std::unique_ptr<Pass> createKilnDecomposePass(std::function<bool(Operation *)> keep) {
  return std::make_unique<KilnDecomposePass>(std::move(keep));
}

} // namespace kiln
