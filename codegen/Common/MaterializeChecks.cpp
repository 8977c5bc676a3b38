//===- MaterializeChecks.cpp - kiln.check ops -> entry status result ------===//
//
// Generated code cannot throw: a failed run-time check must come back to the
// runtime as a number it can turn into a message. Every public function gets
// one extra `tensor<i32>` result (which becomes the status slot of the entry
// ABI after bufferization): 0, or N when check N was the first to fail.
// A check inside a loop or branch (a Loop / If body) holds when it held every
// time it ran: its flag is and-ed into an extra i1 carried by each enclosing
// scf.for / scf.while (initially true) or returned by each enclosing scf.if
// (true from the other branch), up to the function.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "dialects/Kiln/ABIAttributes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {
#define GEN_PASS_DEF_KILNMATERIALIZECHECKSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// `ok` (an i1 in a block of `op`'s regions, at the block's top level) over every
/// time that region runs: a new i1 result of `op` (which is replaced). Null for ops
/// other than scf.for, scf.while and scf.if.
Value liftFlag(RewriterBase &rewriter, Operation *op, Value ok) {
  Location loc = op->getLoc();
  Region *region = ok.getParentRegion();
  auto trueValue = [&](OpBuilder &b) {
    return arith::ConstantIntOp::create(b, loc, 1, 1).getResult();
  };
  if (auto forOp = dyn_cast<scf::ForOp>(op)) {
    rewriter.setInsertionPoint(forOp);
    Value init = trueValue(rewriter);
    FailureOr<LoopLikeOpInterface> lifted = forOp.replaceWithAdditionalYields(
        rewriter, init, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &b, Location l, ArrayRef<BlockArgument> args) {
          return SmallVector<Value>{arith::AndIOp::create(b, l, args[0], ok)};
        });
    if (failed(lifted))
      return {};
    return (*lifted)->getResults().back();
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    rewriter.setInsertionPoint(ifOp);
    SmallVector<Type> types(ifOp.getResultTypes());
    types.push_back(rewriter.getI1Type());
    auto newIf = scf::IfOp::create(rewriter, loc, types, ifOp.getCondition(),
                                   /*addThenBlock=*/false, /*addElseBlock=*/false);
    bool inThen = region == &ifOp.getThenRegion();
    newIf.getThenRegion().takeBody(ifOp.getThenRegion());
    newIf.getElseRegion().takeBody(ifOp.getElseRegion());
    if (newIf.getElseRegion().empty()) {
      Block *block = rewriter.createBlock(&newIf.getElseRegion());
      rewriter.setInsertionPointToEnd(block);
      scf::YieldOp::create(rewriter, loc);
    }
    for (Region *r : {&newIf.getThenRegion(), &newIf.getElseRegion()}) {
      auto yield = cast<scf::YieldOp>(r->front().getTerminator());
      rewriter.setInsertionPoint(yield);
      bool taken = (r == &newIf.getThenRegion()) == inThen;
      yield.getResultsMutable().append(taken ? ok : trueValue(rewriter));
    }
    rewriter.replaceOp(ifOp, newIf.getResults().drop_back());
    return newIf.getResults().back();
  }
  if (auto whileOp = dyn_cast<scf::WhileOp>(op)) {
    rewriter.setInsertionPoint(whileOp);
    SmallVector<Value> inits(whileOp.getInits());
    inits.push_back(trueValue(rewriter));
    SmallVector<Type> types(whileOp.getResultTypes());
    types.push_back(rewriter.getI1Type());
    auto newWhile = scf::WhileOp::create(rewriter, loc, types, inits);
    bool inBefore = region == &whileOp.getBefore();
    newWhile.getBefore().takeBody(whileOp.getBefore());
    newWhile.getAfter().takeBody(whileOp.getAfter());
    Value before = newWhile.getBefore().front().addArgument(rewriter.getI1Type(), loc);
    Value after = newWhile.getAfter().front().addArgument(rewriter.getI1Type(), loc);
    scf::ConditionOp condition = newWhile.getConditionOp();
    rewriter.setInsertionPoint(condition);
    condition.getArgsMutable().append(
        inBefore ? arith::AndIOp::create(rewriter, loc, before, ok).getResult() : before);
    scf::YieldOp yield = newWhile.getYieldOp();
    rewriter.setInsertionPoint(yield);
    yield.getResultsMutable().append(
        inBefore ? after : arith::AndIOp::create(rewriter, loc, after, ok).getResult());
    rewriter.replaceOp(whileOp, newWhile.getResults().drop_back());
    return newWhile.getResults().back();
  }
  return {};
}

struct MaterializeChecksPass
    : kiln::impl::KilnMaterializeChecksPassBase<MaterializeChecksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<StringAttr> messages;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      SmallVector<kiln::CheckOp> checks;
      func.walk([&](kiln::CheckOp check) { checks.push_back(check); });
      // Each check's flag as an i1 at the function's top level.
      SmallVector<Value> flags;
      IRRewriter rewriter(func.getContext());
      for (kiln::CheckOp check : checks) {
        rewriter.setInsertionPoint(check);
        Value ok = tensor::ExtractOp::create(rewriter, check.getLoc(), check.getOk(),
                                             ValueRange{});
        while (ok.getParentRegion()->getParentOp() != func) {
          Operation *parent = ok.getParentRegion()->getParentOp();
          ok = liftFlag(rewriter, parent, ok);
          if (!ok) {
            check.emitError("kiln.check inside '")
                << parent->getName() << "' is not supported (only scf.for, "
                << "scf.while and scf.if)";
            return signalPassFailure();
          }
        }
        flags.push_back(ok);
      }
      if (!func.getBody().hasOneBlock()) {
        func.emitError("expected a single-block function body");
        return signalPassFailure();
      }
      auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
      OpBuilder b(ret);
      Location loc = ret.getLoc();
      Type i32 = b.getI32Type();
      // Fold from the last check to the first so the first failing one wins.
      Value status = arith::ConstantIntOp::create(b, loc, i32, 0);
      int64_t first = messages.size() + 1;
      for (auto [index, ok] : llvm::enumerate(llvm::reverse(flags))) {
        int64_t number = first + checks.size() - 1 - index;
        Value failed = arith::ConstantIntOp::create(b, loc, i32, number);
        status = arith::SelectOp::create(b, loc, ok, status, failed);
      }
      for (kiln::CheckOp check : checks) {
        messages.push_back(check.getMessageAttr());
        check.erase();
      }
      Value statusTensor = tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({}, i32), ValueRange{status});
      SmallVector<Value> results(ret.getOperands());
      results.push_back(statusTensor);
      func::ReturnOp::create(b, loc, results);
      ret.erase();
      SmallVector<Type> resultTypes(func.getResultTypes());
      resultTypes.push_back(statusTensor.getType());
      func.setFunctionType(
          b.getFunctionType(func.getArgumentTypes(), resultTypes));
      // Keep per-result attributes aligned with the new result list.
      if (ArrayAttr resAttrs = func.getAllResultAttrs()) {
        SmallVector<Attribute> attrs(resAttrs.begin(), resAttrs.end());
        attrs.push_back(b.getDictionaryAttr({}));
        func.setAllResultAttrs(attrs);
      }
    }
    kiln::setCheckMessages(module, messages);
  }
};
} // namespace
