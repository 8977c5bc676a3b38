//===- TestHooks.cpp - deliberate miscompiles for testing the tools -------===//

#include "compiler/TestHooks.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/OpBuilding.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cstdlib>

using namespace mlir;

namespace kiln {

LogicalResult applyTestMiscompile(ModuleOp module) {
  const char *name = std::getenv("KILN_TEST_MISCOMPILE_NODE");
  if (!name || !*name)
    return success();
  Operation *target = nullptr;
  module.walk([&](Operation *op) {
    if (target || op->getNumResults() == 0 || onnx::getNodeName(op) != name)
      return;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (type && isa<FloatType>(type.getElementType()))
      target = op;
  });
  if (!target)
    return module.emitError() << "KILN_TEST_MISCOMPILE_NODE: no node '" << name
                              << "' with a floating-point tensor result";
  Value result = target->getResult(0);
  auto type = cast<RankedTensorType>(result.getType());
  OpBuilder builder(target->getContext());
  builder.setInsertionPointAfter(target);
  OperationState constant(target->getLoc(), "onnx.Constant");
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  constant.addAttribute(
      "value", DenseElementsAttr::get(
                   scalarType, FloatAttr::get(type.getElementType(), 1.0)));
  constant.addTypes(scalarType);
  Value one = builder.create(constant)->getResult(0);
  OperationState add(target->getLoc(), "onnx.Add");
  add.addOperands({result, one});
  add.addTypes(NoneType::get(target->getContext()));
  FailureOr<SmallVector<Value>> sum = onnx::buildONNXOp(
      builder, add, [](Operation *op) { return onnx::emitNodeError(op); },
      [](unsigned) { return true; });
  if (failed(sum))
    return failure();
  result.replaceAllUsesExcept((*sum)[0], (*sum)[0].getDefiningOp());
  return success();
}

} // namespace kiln
