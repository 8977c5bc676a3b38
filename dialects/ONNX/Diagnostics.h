//===- Diagnostics.h - Errors that name the ONNX node -----------*- C++ -*-===//

#ifndef KILN_DIALECTS_ONNX_DIAGNOSTICS_H
#define KILN_DIALECTS_ONNX_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace kiln::onnx {

/// The ONNX node name of `op`: the innermost NameLoc in its location (looking
/// through FusedLoc and CallSiteLoc), or std::nullopt when there is none.
std::optional<std::string> getNodeName(mlir::Operation *op);

/// The same for a location (a diagnostic's, in a handler).
std::optional<std::string> getNodeName(mlir::Location loc);

/// The model's default-domain opset: the `onnx.opset` attribute of the closest
/// ancestor holding one (the module), or std::nullopt.
std::optional<int64_t> getModelOpset(mlir::Operation *op);

/// Emits an error on `op` prefixed with `node 'NAME' (OpType, opset N): `. The
/// name part is left out when the op has no NameLoc, the opset part when no
/// `onnx.opset` is set.
mlir::InFlightDiagnostic emitNodeError(mlir::Operation *op);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_DIAGNOSTICS_H
