//===- Target.h - the seam between the driver and codegen -------*- C++ -*-===//
//
// A target is one plugin behind this interface (IREE's target backends): it
// declares what it accepts, builds its pipeline from linalg-on-tensors and
// serializes its executable. compiler/Pipeline.cpp picks one by device name
// and knows nothing of any target's passes. The CPU (x86-64, AArch64:
// codegen/CPU/CPUTargetBackend.h) is the first; a GPU target goes in
// codegen/GPU/{NVVM,ROCDL,SPIRV} with what they share in codegen/GPU/Common,
// reusing the tensor pipeline of codegen/Common (docs/architecture.md).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_TARGET_H
#define KILN_CODEGEN_TARGET_H

#include "codegen/DeviceProgram.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln {

class WeightPool;

/// What `kiln compile` asks of a target (`--target`, `--cpu`).
struct TargetOptions {
  /// Target triple; empty means the host.
  std::string triple;
  /// The processor: an LLVM CPU name or "native" for a CPU target; empty
  /// means the target's default.
  std::string cpu;
  /// The device architecture, from `--device NAME:ARCH` ("sm_90" for cuda);
  /// empty means the target's default. Targets without architectures refuse
  /// one.
  std::string arch;
  /// The device toolkit's folder (`--cuda-path`, `--rocm-path`); empty means
  /// the target's default (/usr/local/cuda; ROCm's is searched).
  std::string toolkitPath;
  /// `--precision`: "fp32" (default), or "bf16" / "fp16" for the f32 products
  /// computed on narrow operands (docs/precision.md); a target that cannot
  /// refuses it.
  std::string precision = "fp32";
};

/// The kinds of executable a target produces.
enum class ExecutableFormat {
  /// A relocatable object file for the host's loader (CPU targets).
  HostObject,
  /// Device modules and a host plan (codegen/DeviceProgram.h), packaged as
  /// a descriptor with dispatches (GPU targets).
  DeviceProgram,
};

/// What the model's descriptor needs to know about a compiled executable.
struct ExecutableInfo {
  ExecutableFormat format = ExecutableFormat::HostObject;
  std::string triple;
  /// The processor the code was compiled for.
  std::string cpu;
  /// Features the runtime checks before running the code, comma-separated.
  std::string runtimeFeatures;
  /// Bytes of the scratch arena the entry takes (0: none).
  int64_t scratchSize = 0;
  /// A model with symbolic dims: the bytes the arena needs past
  /// `scratchSize`, a C expression over `symbols[i]` (kiln-plan-memory's
  /// `kiln.dynamic_scratch_size`); empty when none.
  std::string dynamicScratchSize;
  /// Message of run-time check N at position N - 1.
  std::vector<std::string> checkMessages;
  /// The ONNX nodes each kernel of the host code computes (an outlined
  /// parallel loop), in the order of the executable's `<entry>_kernels`
  /// table of body pointers: what profiles name (model_abi.h).
  std::vector<std::string> kernelNames;
  /// ExecutableFormat::DeviceProgram: the modules and the host plan.
  std::shared_ptr<const DeviceProgram> device;
};

/// How to serialize an executable.
struct SerializeOptions {
  /// The entry function's symbol: the one symbol left visible (with its
  /// `_ctx` form).
  std::string entrySymbol;
  /// LLVM bitcode linked into a host executable (the model's descriptor).
  std::vector<std::string> linkBitcode;
  /// Called as each phase of serialization ends, with its name
  /// (`kiln compile --time-report`); may be empty.
  std::function<void(llvm::StringRef)> onPhase;
  /// No other module shares this module's constant data (resource blobs):
  /// the CPU target then frees the blobs once the weights are written out.
  /// Leave false when several modules cloned from one import are serialized
  /// (per-variant compiles), or a later one would find the data gone.
  bool releaseConstants = false;
  /// Where a CPU target puts the module's large constants when several
  /// modules (the CPU variants of one artifact) share them: the pool the
  /// caller turns into one object for the artifact (codegen/WeightPool.h).
  /// Null: the object holds its own. Not owned.
  WeightPool *sharedWeights = nullptr;
  /// Words the readers of a constant ("w1, mm1" -> "w1, mm1 (MatMul)") for
  /// the CPU target's `.kiln.weights` table; may be empty.
  std::function<std::string(llvm::StringRef)> describeReaders;
};

class TargetBackend {
public:
  virtual ~TargetBackend();

  /// The device name the target is looked up by ("cpu").
  virtual llvm::StringRef getDeviceName() const = 0;

  /// The executable format `serializeExecutable` writes.
  virtual ExecutableFormat getExecutableFormat() const = 0;

  /// Whether the target compiles `op` of a linalg-on-tensors module (the
  /// output of convert-onnx-to-linalg); if not, `reason` says why.
  virtual bool isSupported(mlir::Operation *op, std::string &reason) const = 0;

  /// Checks every op of `module` with isSupported; each op it rejects is an
  /// error naming the ONNX node it came from. Never a silent fallback.
  mlir::LogicalResult checkSupported(mlir::ModuleOp module) const;

  /// For isSupported: whether every value `op` makes (results, and the
  /// arguments of its regions' blocks; its operands too when
  /// `checkOperands`) has an element type `isSupportedElement` accepts.
  /// Types that hold no numbers (none, functions, ...) pass. If not,
  /// `reason` names the type and the op.
  static bool hasSupportedElementTypes(
      mlir::Operation *op, llvm::function_ref<bool(mlir::Type)> isSupportedElement,
      bool checkOperands, std::string &reason);

  /// Appends the passes from linalg-on-tensors to what
  /// serializeExecutable takes (for the CPU: the LLVM dialect).
  virtual void buildPipeline(mlir::OpPassManager &pm) const = 0;

  /// What the descriptor needs, read from `module` after the pipeline ran.
  virtual ExecutableInfo getExecutableInfo(mlir::ModuleOp module) const = 0;

  /// Writes the executable to `path`.
  virtual mlir::LogicalResult
  serializeExecutable(mlir::ModuleOp module, const SerializeOptions &options,
                      llvm::StringRef path, std::string &error) const = 0;

  /// Writes the executable in a readable form (`--emit llvm` for the CPU:
  /// the optimized LLVM IR).
  virtual mlir::LogicalResult printExecutable(mlir::ModuleOp module,
                                              const SerializeOptions &options,
                                              llvm::raw_ostream &os,
                                              std::string &error) const = 0;
};

/// The target for `device` ("cpu", or "cuda:sm_90": a device name and the
/// architecture, which then goes to `options.arch`), or null with `error`
/// set: an unknown device, one whose target is not built yet, or options it
/// rejects.
std::unique_ptr<TargetBackend> createTargetBackend(llvm::StringRef device,
                                                   const TargetOptions &options,
                                                   std::string &error);

/// The device names createTargetBackend knows, implemented or not.
llvm::SmallVector<llvm::StringRef> getTargetDeviceNames();

/// `kiln-check-target-support` for an existing target (the driver's form;
/// the registered pass looks its target up by the `device` option).
std::unique_ptr<mlir::Pass>
createKilnCheckTargetSupportPass(const TargetBackend &target);

} // namespace kiln

#endif // KILN_CODEGEN_TARGET_H
