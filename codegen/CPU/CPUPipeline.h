//===- CPUPipeline.h - linalg-on-tensors to native object code --*- C++ -*-===//
//
// The CPU target's parts. The driver reaches them only through the target
// seam (codegen/Target.h; CPUTargetBackend.h puts these behind it).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CPU_CPUPIPELINE_H
#define KILN_CODEGEN_CPU_CPUPIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace kiln {

/// A resolved CPU target: what LLVM is told and what the runtime must check.
struct CPUTarget {
  std::string triple;   ///< e.g. "x86_64-unknown-linux-gnu"
  std::string cpu;      ///< an LLVM CPU name, e.g. "znver5" or "x86-64-v3"
  std::string features; ///< LLVM feature string, e.g. "+avx2,+fma,..."
  /// f32 lanes per vector register (16 with AVX-512, 8 with AVX2, 4 NEON).
  int64_t vectorWidth = 8;
  /// Vector registers (32 with AVX-512 and on AArch64, 16 for SSE / AVX2):
  /// the micro-kernels' register blocks fit in them.
  int64_t vectorRegisters = 16;
  /// A 4-way 8-bit dot product at the vector width (x86: AVX512-VNNI for
  /// 512-bit vectors, AVX-VNNI for 256-bit: vpdpbusd).
  bool int8Dot = false;
  /// Features the runtime checks before running the code, comma-separated
  /// (avx2, fma, avx512f, ...); empty for a baseline build.
  std::string runtimeFeatures;
};

/// Resolves `--target`/`--cpu`: an empty triple means the host; cpu "native"
/// means the host CPU and its features.
llvm::FailureOr<CPUTarget> resolveCPUTarget(llvm::StringRef triple,
                                            llvm::StringRef cpu,
                                      std::string &error);

/// Appends the passes from linalg/tensor/arith/math (the output of
/// convert-onnx-to-linalg) down to the LLVM dialect.
void buildCPUCodegenPipeline(mlir::OpPassManager &pm, const CPUTarget &target);

/// Translates an LLVM-dialect module to LLVM IR, optimizes it at O3 and writes
/// a position-independent object file. Every symbol but `entrySymbol` gets
/// internal linkage, so several models link into one program. The LLVM
/// bitcode files in `linkBitcode` (the model's descriptor, compiled from C for
/// the same target) are linked into the module after that and keep their own
/// linkage, so the result is one object for every object format (Mach-O has
/// no relocatable link in lld).
llvm::LogicalResult emitObjectFile(mlir::ModuleOp module, const CPUTarget &target,
                             llvm::StringRef entrySymbol, llvm::StringRef path,
                             std::string &error,
                             llvm::ArrayRef<std::string> linkBitcode = {});

/// Translates to LLVM IR and writes it as text (for --emit llvm).
llvm::LogicalResult emitLLVMIR(mlir::ModuleOp module, const CPUTarget &target,
                         llvm::StringRef entrySymbol, llvm::raw_ostream &os,
                         std::string &error);

} // namespace kiln

#endif // KILN_CODEGEN_CPU_CPUPIPELINE_H
