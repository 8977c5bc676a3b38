//===- Diagnostics.cpp - Errors that name the ONNX node -------------------===//

#include "dialects/ONNX/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

using namespace mlir;

namespace kiln::onnx {

// Depth-first search for the most deeply nested NameLoc; `depth` breaks ties
// toward the innermost one (the importer wraps node names around file
// locations, passes may wrap again in FusedLoc / CallSiteLoc).
static void findInnermostName(Location loc, unsigned depth, unsigned &bestDepth,
                              std::optional<std::string> &best) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    if (!best || depth > bestDepth) {
      best = name.getName().str();
      bestDepth = depth;
    }
    findInnermostName(name.getChildLoc(), depth + 1, bestDepth, best);
  } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      findInnermostName(inner, depth + 1, bestDepth, best);
  } else if (auto callSite = dyn_cast<CallSiteLoc>(loc)) {
    findInnermostName(callSite.getCallee(), depth + 1, bestDepth, best);
    findInnermostName(callSite.getCaller(), depth + 1, bestDepth, best);
  } else if (auto opaque = dyn_cast<OpaqueLoc>(loc)) {
    findInnermostName(opaque.getFallbackLocation(), depth + 1, bestDepth, best);
  }
}

std::optional<std::string> getNodeName(Location loc) {
  std::optional<std::string> best;
  unsigned bestDepth = 0;
  findInnermostName(loc, 0, bestDepth, best);
  return best;
}

std::optional<std::string> getNodeName(Operation *op) {
  return getNodeName(op->getLoc());
}

std::optional<int64_t> getModelOpset(Operation *op) {
  for (Operation *p = op; p; p = p->getParentOp())
    if (auto opset = p->getAttrOfType<IntegerAttr>("onnx.opset"))
      return opset.getInt();
  return std::nullopt;
}

InFlightDiagnostic emitNodeError(Operation *op) {
  InFlightDiagnostic diag = op->emitError();
  diag << "node ";
  if (std::optional<std::string> name = getNodeName(op))
    diag << "'" << *name << "' ";
  diag << "(" << op->getName().stripDialect();
  if (std::optional<int64_t> opset = getModelOpset(op))
    diag << ", opset " << *opset;
  diag << "): ";
  return diag;
}

} // namespace kiln::onnx
