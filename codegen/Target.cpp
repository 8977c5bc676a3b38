//===- Target.cpp - the seam between the driver and a code generator ------===//

#include "codegen/Target.h"

#include "dialects/ONNX/Diagnostics.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace kiln {

TargetBackend::~TargetBackend() = default;

LogicalResult TargetBackend::checkSupported(ModuleOp module) const {
  // One error per node: the first op of it that is rejected (the ops nested
  // in a rejected op are not looked at).
  bool rejected = false;
  llvm::StringSet<> reportedNodes;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    std::string reason;
    if (isSupported(op, reason))
      return WalkResult::advance();
    rejected = true;
    std::optional<std::string> node = onnx::getNodeName(op);
    if (node && !reportedNodes.insert(*node).second)
      return WalkResult::skip();
    InFlightDiagnostic diag = op->emitError();
    if (node)
      diag << "node '" << *node << "': ";
    diag << "the " << getDeviceName() << " target does not support " << reason;
    return WalkResult::skip();
  });
  return failure(rejected);
}

bool TargetBackend::hasSupportedElementTypes(
    Operation *op, llvm::function_ref<bool(Type)> isSupportedElement,
    bool checkOperands, std::string &reason) {
  auto supported = [&](Type type) {
    Type element = getElementTypeOrSelf(type);
    // Other types (none, functions, ...) hold no elements to compute.
    if (!isa<IntegerType, IndexType, FloatType, ComplexType>(element) ||
        isSupportedElement(element))
      return true;
    llvm::raw_string_ostream os(reason);
    os << "element type " << element << " (in '" << op->getName() << "')";
    return false;
  };
  if (!llvm::all_of(op->getResultTypes(), supported))
    return false;
  if (checkOperands && !llvm::all_of(op->getOperandTypes(), supported))
    return false;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (!llvm::all_of(block.getArgumentTypes(), supported))
        return false;
  return true;
}

} // namespace kiln
