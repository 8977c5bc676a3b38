//===- OpSchemas.h - Version history and arity of onnx ops ------*- C++ -*-===//
//
// The importer's view of dialects/ONNX/ONNXOpSchemas.inc: for each op of the dialect the
// opset versions at which it changed and the input/output counts of its newest version.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_OPSCHEMAS_H
#define KILN_DIALECTS_ONNX_OPSCHEMAS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::onnx {

struct OpSchemaInfo {
  std::string name;
  /// Every opset version at which the op changed, ascending.
  llvm::SmallVector<int64_t, 8> versions;
  int64_t minInputs = 0, maxInputs = 0; ///< maxInputs is -1 when unbounded.
  bool variadicInputs = false;
  int64_t minOutputs = 0, maxOutputs = 0; ///< maxOutputs is -1 when unbounded.
  bool variadicOutputs = false;
  /// Attributes every node of the op must carry (the schema's required ones;
  /// static strings).
  llvm::SmallVector<llvm::StringRef, 2> requiredAttributes;

  int64_t newestVersion() const { return versions.back(); }
  /// The schema version in effect at model opset `opset` (the greatest version <= opset),
  /// or std::nullopt when the op did not exist yet.
  std::optional<int64_t> versionAt(int64_t opset) const;
  /// The version following `version` in the history, or std::nullopt for the newest.
  std::optional<int64_t> nextVersion(int64_t version) const;
};

/// The schema of the dialect op `onnx.<opType>`, or null when the dialect has none.
const OpSchemaInfo *lookupOpSchema(llvm::StringRef opType);

/// The newest opset version any op of the dialect changed at.
int64_t getNewestKnownOpset();

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_OPSCHEMAS_H
