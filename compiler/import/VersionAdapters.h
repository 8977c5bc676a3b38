//===- VersionAdapters.h - Old ONNX op versions -> newest form --*- C++ -*-===//
//
// The onnx dialect holds one form per op: its newest version. A node whose op is in effect
// at an older schema version (the model's opset is older) is rewritten to the newest form
// before it is built, like ONNX's version converter does: attributes that became inputs turn
// into constants, removed attributes that did not change the meaning are dropped, and steps
// that only widened type constraints need nothing. Anything else is a clear error.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_VERSIONADAPTERS_H
#define KILN_COMPILER_IMPORT_VERSIONADAPTERS_H

#include "dialects/ONNX/OpSchemas.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace onnx {
class NodeProto;
} // namespace onnx

namespace kiln::import {

using ::kiln::onnx::OpSchemaInfo;

/// What an adapter may ask of the importer while it rewrites one node.
class AdapterContext {
public:
  virtual ~AdapterContext();
  /// The type of the already-built value named `name` (null if there is none).
  virtual mlir::Type getValueType(llvm::StringRef name) = 0;
  /// Builds an onnx.Constant holding `value` and returns the fresh value name under which
  /// the node can use it as an input.
  virtual std::string addConstant(mlir::DenseElementsAttr value, llvm::StringRef hint) = 0;
  /// A value name starting with `hint` that no value of the model has or will have, for
  /// the outputs of the nodes an adapter adds.
  virtual std::string freshName(llvm::StringRef hint) = 0;
  /// Starts an error about the node: `node 'NAME' (OpType, opset N): `.
  virtual mlir::InFlightDiagnostic emitNodeError() = 0;
  virtual mlir::MLIRContext *getContext() = 0;
  /// The integer values of the already-built value `name` when it is a constant
  /// (a float constant's values truncated toward zero, as ONNX reads e.g. OneHot's depth).
  virtual std::optional<llvm::SmallVector<int64_t>> getConstantInts(llvm::StringRef name) = 0;
};

/// An INT attribute a node made by an adapter carries when it is already in the newest
/// form of its op although the model's opset is older (a node inside a subgraph the adapter
/// built); the importer removes it and imports the node as it is.
inline constexpr const char *kNewestFormMarker = "kiln.newest_form";

/// Rewrites `node`, whose op is in effect at schema `version` of `schema`, into the form of
/// the op's newest version. Emits an error naming the node, op and version and fails when no
/// adapter chain exists.
mlir::LogicalResult adaptToNewestVersion(::onnx::NodeProto &node, const OpSchemaInfo &schema,
                                         int64_t version, AdapterContext &ctx);

/// Ops that the dialect does not have because ONNX deprecated them, but that an adapter can
/// replace with the newest form of another op (Upsample -> Resize, Scatter ->
/// ScatterElements). When `node` is one,
/// rewrites it in place (op_type changes) and sets `handled`; the node is then already in
/// its new op's newest form.
mlir::LogicalResult adaptRemovedOp(::onnx::NodeProto &node, int64_t opset,
                                   AdapterContext &ctx, bool &handled);

/// Old forms that take more than one op of the newest form: Scan-8 (batched; a Scan over
/// the batch around a Scan of the newest form over the sequence), and Hardmax before opset 13 works
/// on its input flattened to 2-D at `axis`; where opset 13's `axis` means something else
/// (a later dimension is not 1) it becomes Flatten -> Hardmax(axis = 1) -> Reshape. When
/// `node` is one, appends the replacement nodes (in the newest form of their ops, writing
/// the node's outputs) to `out` and sets `handled`.
mlir::LogicalResult adaptToNewestNodes(const ::onnx::NodeProto &node, int64_t opset,
                                       AdapterContext &ctx, bool &handled,
                                       llvm::SmallVectorImpl<::onnx::NodeProto> &out);

} // namespace kiln::import

#endif // KILN_COMPILER_IMPORT_VERSIONADAPTERS_H
