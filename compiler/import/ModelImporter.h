//===- ModelImporter.h - ONNX ModelProto -> onnx dialect --------*- C++ -*-===//
//
// Imports an ONNX model file into a module holding one `func.func @main_graph` of `onnx`
// dialect ops (see docs/architecture.md, "The imported module").
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_MODELIMPORTER_H
#define KILN_COMPILER_IMPORT_MODELIMPORTER_H

#include "compiler/import/DimSpec.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace kiln {

struct ImportOptions {
  /// Fixes or bounds input dimensions: input name -> one spec per dim. A dim
  /// not fixed (by the model or here) stays a symbol (docs/dynamic-shapes.md).
  llvm::StringMap<llvm::SmallVector<DimSpec>> inputShapes;
  /// Constants with more elements than this become resource blobs.
  int64_t inlineConstantLimit = 1024;
  /// Inputs compiled for one value (`--specialize NAME=FILE`): input name -> a file
  /// holding one serialized onnx.TensorProto. The input stays an argument of the
  /// compiled model; a run given another value fails with a status naming the input.
  llvm::StringMap<std::string> specializedInputs;
  /// Sequence inputs (`--sequence NAME=N`): input name -> its number of items. The
  /// items are the compiled model's inputs `NAME[0]` .. `NAME[N-1]` (docs/runtime-api.md:
  /// "Sequences and optionals at the boundary").
  llvm::StringMap<int64_t> sequenceLengths;
  /// Optional inputs compiled absent (`--absent NAME`): no argument; an optional
  /// input not named here is compiled present (its tensor or sequence).
  llvm::SmallVector<std::string> absentInputs;
};

/// Reads the ONNX model at `modelPath` and builds its `onnx` dialect module: every node
/// normalized to the newest version of its op, its result types inferred and constant
/// subgraphs folded as they are built. Errors are emitted as MLIR diagnostics (install a
/// handler on `context` to see them) and name the node, tensor, input or file at fault.
///
/// Loads the onnx and func dialects into `context`. Shape inference comes from the
/// ShapeInferenceOpInterface external models the caller has registered (e.g. through
/// kiln::onnx::registerShapeInferenceModels on the context's registry): a node whose op has
/// none is reported as not supported yet.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxModel(mlir::MLIRContext &context, llvm::StringRef modelPath,
                const ImportOptions &options);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_MODELIMPORTER_H
