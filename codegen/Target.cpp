//===- Target.cpp - the seam between the driver and a code generator ------===//

#include "codegen/Target.h"

#include "dialects/ONNX/Diagnostics.h"

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

} // namespace kiln
