//===- Variants.h - several CPU variants of a model in one artifact -*- C++ -*-===//
//
// `kiln compile --cpu x86-64-v2,x86-64-v3,x86-64-v4` (or `--cpu portable`)
// compiles the graph once per CPU into objects with their own symbol prefix
// (`<prefix>_<cpu>_main`, `<prefix>_<cpu>_descriptor`), adds the variant
// table the runtime picks from at open (kiln_artifact_desc, model_abi.h) and
// links them into one .so / .o / .a with one header. `--device cpu --device
// vulkan` does the same with one variant per device (`<prefix>_vulkan_...`),
// the device picked at open.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_VARIANTS_H
#define KILN_COMPILER_VARIANTS_H

#include "compiler/Packaging.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln {

/// One compiled variant: its device ("cpu", "vulkan", "cuda"), its name (a
/// CPU variant's `--cpu` name; another device's `--device` text,
/// "cuda:sm_80"), its descriptor's model info (its own symbol prefix) and
/// its object file.
struct CompiledVariant {
  std::string device = "cpu";
  std::string name;
  ModelInfo info;
  std::string object;
};

/// The CPUs `--cpu` names: one CPU, a comma-separated list, or `portable`
/// (x86-64: x86-64-v2,x86-64-v3,x86-64-v4; AArch64: armv8-a,
/// armv8.2-a+dotprod+fp16, armv8.6-a+i8mm) for the architecture of `triple`
/// (empty: the host). False with `error` for an empty or repeated name or a
/// `portable` of an architecture that has no such set.
bool expandCpuVariants(llvm::StringRef triple, llvm::StringRef cpu,
                       llvm::SmallVectorImpl<std::string> &cpus,
                       std::string &error);

/// The symbol prefix of variant `cpu` of the model `prefix`
/// (`cls` + `x86-64-v3` -> `cls_x86_64_v3`).
std::string variantSymbolPrefix(llvm::StringRef prefix, llvm::StringRef cpu);

/// Links the variants (each compiled as PackageKind::Object, so none defines
/// the .so's fixed names) and their table into `outputPath`: a .so exporting
/// kiln_artifact_descriptor, or one relocatable object / an archive of it
/// with one header. `model` holds what the variants share (prefix, triple,
/// tensors). `weightsAssembly` (may be empty) defines the weights the
/// variants share (WeightPool::definitions): assembled and linked in, its
/// symbols made local. Orders the table: other devices first (in the order
/// given), then the CPU variants most capable first, so that the last entry
/// (what a runtime without the table opens) is the most portable CPU one.
bool packageVariants(const ModelInfo &model,
                     llvm::MutableArrayRef<CompiledVariant> variants,
                     llvm::StringRef weightsAssembly, PackageKind kind, llvm::StringRef workDir,
                     llvm::StringRef outputPath, std::string &error);

} // namespace kiln

#endif // KILN_COMPILER_VARIANTS_H
