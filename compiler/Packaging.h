//===- Packaging.h - object code -> .so / .o / .a + header ------*- C++ -*-===//
//
// The generated code for a model is one object file with the entry function
// `<prefix>_main`. Packaging adds the descriptor the runtime reads (a small C
// file compiled for the same target) and links or archives the result.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_PACKAGING_H
#define KILN_COMPILER_PACKAGING_H

#include "codegen/DeviceProgram.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln {

class WeightPool;

/// One graph input or output as the descriptor records it.
struct TensorInfo {
  std::string name;
  int32_t dtype = 0; ///< ONNX TensorProto.DataType numbering
  /// Dims as model_abi.h encodes them: a size, or KILN_DIM_SYMBOL(id).
  llvm::SmallVector<int64_t> shape;
};

/// A symbolic dim of the model (model_abi.h's kiln_dim_symbol).
struct SymbolInfo {
  std::string name;
  int64_t min = 1;
  int64_t max = -1; ///< KILN_DIM_UNBOUNDED (-1): no maximum
  /// A run symbol (KILN_SYMBOL_RUN): decided by the run's values, written by
  /// the entry (docs/dynamic-shapes.md, "Run dims").
  bool run = false;
};

/// Everything the descriptor says about a compiled model.
struct ModelInfo {
  std::string prefix; ///< symbol prefix: `<prefix>_main`, `<prefix>_descriptor`
  /// The descriptor's `name`, when not the prefix (a CPU variant's prefix
  /// carries its CPU; its name is the model's).
  std::string name;
  std::string producer;
  std::string triple;
  std::string cpu;
  std::string runtimeFeatures;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  /// Symbolic dims (docs/dynamic-shapes.md); empty for a static model.
  std::vector<SymbolInfo> symbols;
  std::vector<std::string> checkMessages;
  /// The ONNX nodes of each kernel in `<prefix>_main_kernels` (profiles).
  std::vector<std::string> kernelNames;
  /// Bytes of the scratch arena the entry needs (kiln-plan-memory).
  uint64_t scratchSize = 0;
  /// Bytes the arena needs past scratchSize at a run of a model with
  /// symbolic dims: a C expression over `symbols[i]` (ExecutableInfo).
  std::string dynamicScratchSize;
  /// Alignment the entry assumes of the arena's base (a power of two).
  uint64_t scratchAlignment = 64;
  /// C text the header adds after the tensor macros (a multi-variant
  /// artifact's table, compiler/Variants.cpp).
  std::string extraHeaderDeclarations;
  /// Symbols a .so exports beside the descriptor functions (a multi-variant
  /// artifact's table functions).
  std::vector<std::string> extraExports;
  /// A GPU target's modules and host plan; null for host code.
  std::shared_ptr<const DeviceProgram> device;
  /// The graph was compiled for one image of the batch, symbols[0]
  /// (kiln-symbolic-shapes' kiln.batch_loop): its entry is
  /// `<prefix>_image_main` (static sizes, no symbols), which the descriptor's
  /// entry and `<prefix>_main` run once per image, each tensor whose dim 0 is
  /// that symbol offset by one image's bytes (docs/dynamic-shapes.md).
  bool batchLoop = false;
};

/// The compiled graph's entry symbol: `<prefix>_main`, or
/// `<prefix>_image_main` for a model run once per image (ModelInfo::batchLoop).
std::string entrySymbolName(const ModelInfo &model);

/// Turns `name` into a valid C identifier (used for symbol prefixes).
/// A C identifier from `name`; `kiln` and `kiln_*` (kiln's own names, in
/// any case) and names starting with a digit get an `m_` in front.
std::string sanitizeSymbolPrefix(llvm::StringRef name);

/// False, with `error` set, when a tensor name cannot be bound by the runtime
/// (it contains a NUL byte).
bool checkModelNames(const ModelInfo &model, std::string &error);

/// Appends the checksum trailer kiln_model_open verifies before dlopen
/// (runtime/src/artifact.h) to the linked library at `path`.
bool appendArtifactChecksum(llvm::StringRef path, std::string &error);

/// The C source of the descriptor and the `run` adapter. `forSharedLibrary`
/// also defines the fixed-name `kiln_model_descriptor` (what the runtime's
/// loader looks up in a .so); objects and archives define only prefixed
/// symbols, so any number of models link into one program.
std::string generateDescriptorSource(const ModelInfo &model,
                                     bool forSharedLibrary);

/// The C source of the descriptor of a model compiled for a device
/// (model.device): its modules and weights are written into `workDir` and
/// embedded from there (compiler/DevicePackaging.cpp).
/// With `sharedWeights`, the weights go to that pool (stored once with the
/// other variants' equal bytes) instead of a file of their own.
bool generateDeviceDescriptorSource(const ModelInfo &model,
                                    bool forSharedLibrary,
                                    llvm::StringRef workDir,
                                    std::string &source, std::string &error,
                                    WeightPool *sharedWeights = nullptr);

/// A C string literal for `text`.
std::string cString(llvm::StringRef text);

/// A C comment's text: no `*/` inside.
std::string commentText(llvm::StringRef text);

/// The descriptor's table `table` of `tensors` (kiln_tensor_desc) and the
/// shape arrays it points to.
void writeTensorTable(llvm::raw_ostream &os, llvm::StringRef table,
                      llvm::ArrayRef<TensorInfo> tensors);

/// Writes the descriptor's tables every kind of model has: `kiln_inputs`,
/// `kiln_outputs` and `kiln_checks` (the run-time check messages).
void writeTensorAndCheckTables(llvm::raw_ostream &os, const ModelInfo &model);

/// The C header a program embedding the model includes.
std::string generateModelHeader(const ModelInfo &model);

enum class PackageKind { SharedLibrary, Object, StaticLibrary };

/// Writes the descriptor source into `workDir` and compiles it with clang for
/// the model's triple into LLVM bitcode (`bitcodePath`), to be linked into the
/// model's own LLVM module: one object file results on every object format.
/// A device model's weights go to `sharedWeights` when it is set (the
/// variants of a multi-device artifact).
bool compileDescriptor(const ModelInfo &model, PackageKind kind,
                       llvm::StringRef workDir, std::string &bitcodePath,
                       std::string &error,
                       WeightPool *sharedWeights = nullptr);

/// Turns `modelObject` (the model with its descriptor linked in) into
/// `outputPath`: a shared library, the object itself or a static archive; the
/// latter two get the header beside them (`outputPath` with extension `.h`).
/// `workDir` holds intermediate files.
bool packageModel(const ModelInfo &model, PackageKind kind,
                  llvm::StringRef modelObject, llvm::StringRef workDir,
                  llvm::StringRef outputPath, std::string &error);

/// The header path written for `outputPath` (its extension replaced by .h).
std::string headerPathFor(llvm::StringRef outputPath);

// Shared with the packaging of multi-variant artifacts (Variants.cpp).

/// A C string literal for `text`.
std::string cString(llvm::StringRef text);
/// The parameter list of `<prefix>_main` (named: input0, ..., status).
std::string entryParameters(const ModelInfo &model, bool named);
/// The tool `name` of kiln's LLVM installation, or the one `envOverride`
/// names.
std::string findTool(llvm::StringRef name, const char *envOverride);
/// Runs `args` (output to a log in `workDir`); false with the command and its
/// output in `error` when it fails.
bool runTool(llvm::ArrayRef<std::string> args, llvm::StringRef workDir,
             std::string &error);
bool writeFile(llvm::StringRef path, llvm::StringRef contents,
               std::string &error);
/// The folder holding `kiln/model_abi.h` for the descriptor's compile.
std::string runtimeIncludeDir();

} // namespace kiln

#endif // KILN_COMPILER_PACKAGING_H
