//===- InlineDeallocHelpers.cpp - Inline bufferization's dealloc helper ---===//
//
// bufferization-lower-deallocations lowers a `bufferization.dealloc` of
// several buffers (ownership decided at run time, e.g. a buffer yielded by one
// branch of an scf.if inside a loop) to a call of a private helper function
// over `memref<?xindex>` arguments; the CPU target's bare-pointer calling
// convention cannot lower that signature (the call would be left pointing at
// nothing). The helper's body is copied in place of each call instead.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace kiln {
#define GEN_PASS_DEF_KILNINLINEDEALLOCHELPERSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct InlineDeallocHelpersPass
    : kiln::impl::KilnInlineDeallocHelpersPassBase<InlineDeallocHelpersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> helpers;
    for (auto f : module.getOps<func::FuncOp>())
      if (f.isPrivate() && f.getName().starts_with("dealloc_helper") && !f.isExternal())
        helpers.push_back(f);
    for (func::FuncOp helper : helpers) {
      if (!helper.getBody().hasOneBlock()) {
        helper.emitError("deallocation helper with several blocks: cannot inline it");
        return signalPassFailure();
      }
      Block &body = helper.getBody().front();
      SmallVector<func::CallOp> calls;
      module.walk([&](func::CallOp call) {
        if (call.getCallee() == helper.getName())
          calls.push_back(call);
      });
      for (func::CallOp call : calls) {
        OpBuilder b(call);
        IRMapping map;
        map.map(body.getArguments(), call.getOperands());
        for (Operation &op : body.without_terminator())
          b.clone(op, map);
        auto ret = cast<func::ReturnOp>(body.getTerminator());
        for (auto [result, value] : llvm::zip(call.getResults(), ret.getOperands()))
          result.replaceAllUsesWith(map.lookupOrDefault(value));
        call.erase();
      }
      helper.erase();
    }
  }
};

} // namespace
