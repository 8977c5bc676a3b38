//===- ReplaceEmptyEntryBuffers.cpp - zero-element entry arguments --------===//
//
// MLIR's bare-pointer calling convention cannot convert a function whose
// arguments include a memref with a zero-sized dimension (its canonical
// strides are undefined), so a model with an empty input or output
// (tensor<3x0x5xf32>) failed in convert-func-to-llvm. Such a buffer holds no
// element and is never accessed: each one becomes a memref<1xT> argument (still
// one pointer in the ABI) and the body uses a local zero-sized buffer instead.
// Calls between the entry forms pass a dummy buffer for it.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln {
#define GEN_PASS_DEF_KILNREPLACEEMPTYENTRYBUFFERSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

bool isEmptyBuffer(Type type) {
  auto memref = dyn_cast_or_null<MemRefType>(type);
  return memref && memref.hasStaticShape() && memref.getNumElements() == 0 &&
         memref.getRank() > 0;
}

struct ReplaceEmptyEntryBuffersPass
    : kiln::impl::KilnReplaceEmptyEntryBuffersPassBase<
          ReplaceEmptyEntryBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseSet<StringAttr> rewritten;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &entry = func.getBody().front();
      OpBuilder b(&entry, entry.begin());
      SmallVector<Type> inputs(func.getArgumentTypes());
      bool changed = false;
      for (BlockArgument arg : entry.getArguments()) {
        if (!isEmptyBuffer(arg.getType()))
          continue;
        auto type = cast<MemRefType>(arg.getType());
        Value local = memref::AllocaOp::create(b, func.getLoc(), type);
        arg.replaceAllUsesWith(local);
        auto placeholder = MemRefType::get({1}, type.getElementType());
        arg.setType(placeholder);
        inputs[arg.getArgNumber()] = placeholder;
        changed = true;
      }
      if (!changed)
        continue;
      func.setFunctionType(
          FunctionType::get(&getContext(), inputs, func.getResultTypes()));
      rewritten.insert(func.getSymNameAttr());
    }
    // Callers of a rewritten function pass a placeholder for each empty buffer.
    module.walk([&](func::CallOp call) {
      if (!rewritten.contains(call.getCalleeAttr().getAttr()))
        return;
      OpBuilder b(call);
      for (OpOperand &operand : call->getOpOperands()) {
        if (!isEmptyBuffer(operand.get().getType()))
          continue;
        auto type = cast<MemRefType>(operand.get().getType());
        operand.set(memref::AllocaOp::create(
            b, call.getLoc(), MemRefType::get({1}, type.getElementType())));
      }
    });
  }
};

} // namespace
