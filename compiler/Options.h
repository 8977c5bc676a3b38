//===- Options.h - what `kiln compile` was asked to do -----------*- C++ -*-===//
#ifndef KILN_COMPILER_OPTIONS_H
#define KILN_COMPILER_OPTIONS_H

#include "compiler/import/DimSpec.h"
#include "dialects/ONNX/Limits.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln {

enum class EmitKind {
  SharedLibrary, ///< .so with the descriptor exported as kiln_model_descriptor
  Object,        ///< one relocatable .o (model + descriptor) plus a C header
  StaticLibrary, ///< .a holding that object plus a C header
  MLIR,          ///< the imported `onnx` dialect module, as text
  LLVMIR,        ///< optimized LLVM IR, as text
};

struct CompileOptions {
  std::string modelPath;
  std::string outputPath;
  /// The device compiled for, a target's name in codegen/Target.h ("cpu"),
  /// with its architecture after ':' ("cuda:sm_90").
  std::string device = "cpu";
  /// Every `--device` given, in order (`--device cpu --device vulkan`). With
  /// more than one, compileModel builds one artifact holding each device's
  /// code (a variant per device, docs/gpu.md "Several devices in one
  /// artifact"), compiling each as `device`; empty or one: `device` only.
  std::vector<std::string> devices;
  /// The CUDA toolkit (`--cuda-path`: libdevice, ptxas); empty means
  /// /usr/local/cuda.
  std::string cudaPath;
  /// The ROCm device libraries' folder (`--rocm-path`: holds
  /// amdgcn/bitcode); empty means $ROCM_PATH, /opt/rocm or Debian's.
  std::string rocmPath;
  /// Target triple; empty means the host.
  std::string triple;
  /// LLVM CPU name, or "native" (the host CPU with all its features); empty
  /// means "native" for the host and "generic" for any other --target.
  std::string cpu;
  EmitKind emit = EmitKind::SharedLibrary;
  /// `--precision`: fp32, or bf16 / fp16 (f32 products on narrow weights and
  /// activations; docs/precision.md).
  std::string precision = "fp32";
  /// Symbol prefix of the compiled model; empty means the output's stem.
  std::string name;
  /// Fixes or bounds input dimensions (`--shape`): input name -> one spec per
  /// dim (a size, or the bounds of a symbolic dim).
  llvm::StringMap<llvm::SmallVector<DimSpec>> inputShapes;
  /// Inputs compiled for one value: input name -> serialized onnx.TensorProto file.
  llvm::StringMap<std::string> specializedInputs;
  /// `--sequence NAME=N`: a sequence input's number of items (ImportOptions).
  llvm::StringMap<int64_t> sequenceLengths;
  /// `--absent NAME`: optional inputs compiled absent (ImportOptions).
  llvm::SmallVector<std::string> absentInputs;
  /// Keep intermediate files (object, descriptor source) next to the output.
  bool keepIntermediates = false;
  /// Print each phase's time and peak memory to stderr (--time-report).
  bool timeReport = false;
  /// What the model may make kiln build (the --max-* flags; docs/reliability.md).
  CompileLimits limits;
  /// Called as each stage of the compile ends, with its name and what it
  /// produced ("415 ops"); null: not called (`kiln compile`'s progress lines).
  std::function<void(llvm::StringRef stage, llvm::StringRef detail)> progress;
};

} // namespace kiln

#endif // KILN_COMPILER_OPTIONS_H
