//===- MaterializeChecks.cpp - kiln.check ops -> entry status result ------===//
//
// Generated code cannot throw: a failed run-time check must come back to the
// runtime as a number it can turn into a message. Every public function gets
// one extra `tensor<i32>` result (which becomes the status slot of the entry
// ABI after bufferization): 0, or N when check N was the first to fail.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "dialects/Kiln/ABIAttributes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln {
#define GEN_PASS_DEF_KILNMATERIALIZECHECKSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {
struct MaterializeChecksPass
    : kiln::impl::KilnMaterializeChecksPassBase<MaterializeChecksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<StringAttr> messages;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      SmallVector<kiln::CheckOp> checks;
      bool nested = false;
      func.walk([&](kiln::CheckOp check) {
        nested |= check->getParentOp() != func;
        checks.push_back(check);
      });
      if (nested) {
        func.emitError("kiln.check inside a nested region is not supported");
        return signalPassFailure();
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
      for (auto [index, check] : llvm::enumerate(llvm::reverse(checks))) {
        int64_t number = first + checks.size() - 1 - index;
        Value ok = tensor::ExtractOp::create(b, check.getLoc(), check.getOk(),
                                             ValueRange{});
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
