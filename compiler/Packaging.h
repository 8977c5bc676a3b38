//===- Packaging.h - object code -> .so / .o / .a + header ------*- C++ -*-===//
//
// The generated code for a model is one object file with the entry function
// `<prefix>_main`. Packaging adds the descriptor the runtime reads (a small C
// file compiled for the same target) and links or archives the result.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_PACKAGING_H
#define KILN_COMPILER_PACKAGING_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace kiln {

/// One graph input or output as the descriptor records it.
struct TensorInfo {
  std::string name;
  int32_t dtype = 0; ///< ONNX TensorProto.DataType numbering
  llvm::SmallVector<int64_t> shape;
};

/// Everything the descriptor says about a compiled model.
struct ModelInfo {
  std::string prefix; ///< symbol prefix: `<prefix>_main`, `<prefix>_descriptor`
  std::string producer;
  std::string triple;
  std::string cpu;
  std::string runtimeFeatures;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  std::vector<std::string> checkMessages;
};

/// Turns `name` into a valid C identifier (used for symbol prefixes).
std::string sanitizeSymbolPrefix(llvm::StringRef name);

/// The C source of the descriptor and the `run` adapter. `forSharedLibrary`
/// also defines the fixed-name `kiln_model_descriptor`.
std::string generateDescriptorSource(const ModelInfo &model,
                                     bool forSharedLibrary);

/// The C header a program embedding the model includes.
std::string generateModelHeader(const ModelInfo &model);

/// Compiles the descriptor next to `modelObject` and writes `outputPath` as
/// a shared library, a relocatable object or a static archive (and the
/// header, for the latter two). `workDir` holds intermediate files.
enum class PackageKind { SharedLibrary, Object, StaticLibrary };
bool packageModel(const ModelInfo &model, PackageKind kind,
                  llvm::StringRef modelObject, llvm::StringRef workDir,
                  llvm::StringRef outputPath, std::string &error);

} // namespace kiln

#endif // KILN_COMPILER_PACKAGING_H
