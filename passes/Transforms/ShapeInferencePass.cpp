//===- ShapeInferencePass.cpp - kiln-shape-inference ----------------------===//
//
// Calls ShapeInferenceOpInterface::inferShapes() on every op of a function, in
// order, then updates the function's result types. A control-flow op (If,
// Loop, Scan) infers the ops of its regions itself, after typing its block
// arguments, so the walk does not enter them.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Passes.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/IR/BuiltinTypes.h"

namespace kiln {

#define GEN_PASS_DEF_KILNSHAPEINFERENCEPASS
#include "passes/Transforms/Passes.h.inc"

namespace {

struct KilnShapeInferencePass
    : public impl::KilnShapeInferencePassBase<KilnShapeInferencePass> {
  void runOnOperation() override {
    mlir::func::FuncOp func = getOperation();
    mlir::WalkResult result = func.walk<mlir::WalkOrder::PreOrder>(
        [](mlir::Operation *op) -> mlir::WalkResult {
          if (auto shaped =
                  llvm::dyn_cast<onnx::ShapeInferenceOpInterface>(op)) {
            if (mlir::failed(shaped.inferShapes()))
              return mlir::WalkResult::interrupt();
            return op->getNumRegions() ? mlir::WalkResult::skip()
                                       : mlir::WalkResult::advance();
          }
          if (llvm::isa<onnx::ONNXDialect>(op->getDialect()) &&
              !op->hasTrait<mlir::OpTrait::IsTerminator>()) {
            onnx::emitNodeError(op) << "has no shape inference yet";
            return mlir::WalkResult::interrupt();
          }
          return mlir::WalkResult::advance();
        });
    if (result.wasInterrupted())
      return signalPassFailure();

    // The function's results take the types of the returned values.
    if (func.isExternal())
      return;
    mlir::Operation *terminator = func.getBody().back().getTerminator();
    if (!terminator)
      return;
    mlir::FunctionType type = func.getFunctionType();
    func.setFunctionType(mlir::FunctionType::get(
        func.getContext(), type.getInputs(), terminator->getOperandTypes()));
  }
};

} // namespace
} // namespace kiln
