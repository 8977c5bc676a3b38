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

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace kiln {

class WeightPool;

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
  /// The 8-bit product instruction of the quantized kernels at the vector
  /// width: "vpdpbusd" (x86 AVX512-VNNI for 512-bit vectors, AVX-VNNI for
  /// 256-bit), "pmaddwd" (other x86: SSE2, AVX2, AVX512-BW), "sdot" (AArch64
  /// dotprod), or empty (one byte per step: plain NEON, others).
  std::string int8Dot;
  /// The bf16 pair product at the vector width: "vdpbf16ps" (x86
  /// AVX512-BF16, 256- and 512-bit) or empty (bf16 widened to f32, f32 FMA).
  std::string bf16Dot;
  /// `--precision` (TargetOptions::precision): "fp32", "bf16" or "fp16".
  std::string precision = "fp32";
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
/// Turns the comma-separated names of a constant's readers ("w1, mm1") into
/// the text of its `.kiln.weights` line ("w1, mm1 (MatMul)"); may be empty.
using WeightReadersFn = llvm::function_ref<std::string(llvm::StringRef)>;

/// Large constants never pass through LLVM IR (externalizeLargeConstants).
/// `onPhase`, when set, is called as each phase ends (translation, weights,
/// LLVM optimization, code generation) for `kiln compile --time-report`.
/// `describeReaders` annotates the `.kiln.weights` table.
llvm::LogicalResult
emitObjectFile(mlir::ModuleOp module, const CPUTarget &target,
               llvm::StringRef entrySymbol, llvm::StringRef path,
               std::string &error,
               llvm::ArrayRef<std::string> linkBitcode = {},
               llvm::function_ref<void(llvm::StringRef)> onPhase = {},
               bool releaseConstants = false,
               WeightPool *sharedWeights = nullptr,
               WeightReadersFn describeReaders = {});

/// Turns each large constant global of the LLVM-dialect `module` (>= 4 KB,
/// internal, dense data) into a dso_local declaration of the object-local
/// symbol `<symbolPrefix>_kw<N>`, writes the bytes to `dataPath` and adds module
/// assembly that defines the symbols from that file with `.incbin`
/// (64-byte aligned, in .rodata). `dataPath` must exist until the object is
/// emitted. With `releaseConstants` (no other module shares the resource
/// blobs), the blobs no constant left in `module` uses are freed. Constants
/// of the same bytes get one symbol (WeightPool). With `sharedPool`, the
/// bytes go to that pool instead (`symbolPrefix` and `dataPath` unused):
/// the symbols are the pool's, declared hidden, and no assembly is added;
/// the caller links in an object built from sharedPool->definitions(true).
/// Returns the bytes moved, repeats counted (0 for targets other than
/// little-endian ELF, whose constants stay in the IR).
///
/// On ELF it also writes the `.kiln.weights` section (not loaded at run
/// time): a line "<symbol>\t<readers>\n" per constant global that is used
/// (external or left in the IR), <readers> being the names in the
/// locations of the ops the constant's address flows into (the ONNX nodes
/// that read it), as `describeReaders` words them; `kiln inspect --sizes`
/// sums the constants' bytes per op family from it.
mlir::FailureOr<size_t> externalizeLargeConstants(mlir::ModuleOp module,
                                                  const CPUTarget &target,
                                                  llvm::StringRef symbolPrefix,
                                                  llvm::StringRef dataPath,
                                                  bool releaseConstants,
                                                  std::string &error,
                                                  WeightPool *sharedPool = nullptr,
                                                  WeightReadersFn describeReaders = {});

/// LLVM's `name` tool (ld.lld, llvm-objcopy) beside the LLVM kiln was built
/// against, else the one on PATH; "" when neither exists.
std::string findLLVMTool(llvm::StringRef name);

/// The threads LLVM code generation uses: KILN_CODEGEN_THREADS (a number, or
/// "auto": the cores this process may run on, at most 8), else 1.
unsigned getCodegenThreads();

/// Writes the optimized `module` as the object `path`, code generated on
/// `threads` threads (ParallelCodegen.cpp). Returns false, with nothing
/// done, where that cannot be done (one thread, a non-ELF target, no
/// ld.lld / llvm-objcopy): the caller then emits the object itself.
mlir::FailureOr<bool> emitObjectInParallel(llvm::Module &module,
                                           const CPUTarget &target,
                                           unsigned threads,
                                           llvm::StringRef path,
                                           std::string &error);

/// Collects the LLVM errors reported in `context` into `errors` (instead of
/// LLVM's default of exiting); warnings go to stderr.
void captureLLVMErrors(llvm::LLVMContext &context, std::string &errors);

/// The TargetMachine kiln generates code with for `target` (O3, PIC).
std::unique_ptr<llvm::TargetMachine>
createCPUTargetMachine(const CPUTarget &target, std::string &error);

/// Translates to LLVM IR and writes it as text (for --emit llvm).
llvm::LogicalResult emitLLVMIR(mlir::ModuleOp module, const CPUTarget &target,
                         llvm::StringRef entrySymbol, llvm::raw_ostream &os,
                         std::string &error);

} // namespace kiln

#endif // KILN_CODEGEN_CPU_CPUPIPELINE_H
