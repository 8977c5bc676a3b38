//===- ROCDLTargetBackend.cpp - AMD GPUs (hsaco) behind the seam ----------===//
//
// The shared GPU pipeline (codegen/GPU/Common), then per kernel module:
// rocdl-attach-target, convert-scf-to-cf, convert-gpu-to-rocdl with the
// bare-pointer calling convention (a kernel parameter is the pointer to its
// binding's first byte: model_abi.h's bindings map 1:1 to kernel
// parameters), LLVM's AMDGPU back end through the ROCDL target attribute's
// serializer (to ISA text, linking the ROCm device libraries for math
// functions), MC to assemble it and ld.lld to link the HSA code object that
// HIP loads (docs/gpu.md).
//
// MLIR's own binary step runs `<toolkit>/llvm/bin/ld.lld`, a ROCm layout
// Debian does not have (its bitcode is in /usr/lib/<multiarch>/amdgcn, its
// ld.lld in LLVM's folder): kiln asks for the ISA and links it itself with
// the ld.lld beside the LLVM it was built against.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/ROCDL/ROCDLTargetBackend.h"

#include "codegen/CPU/CPUPipeline.h"
#include "codegen/GPU/Common/DeviceTargetBackend.h"
#include "codegen/GPU/Common/GPUPipeline.h"
#include "codegen/GPU/Common/HostPlan.h"
#include "dialects/Kiln/ABIAttributes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/TargetParser/TargetParser.h"

#include <cstdlib>

using namespace mlir;

namespace kiln {

bool isKnownAMDGPUChip(StringRef chip, bool &wave64) {
  llvm::AMDGPU::GPUKind kind = llvm::AMDGPU::parseArchAMDGCN(chip);
  if (kind == llvm::AMDGPU::GK_NONE || !chip.starts_with("gfx"))
    return false;
  // GFX10 and newer run 32-lane wavefronts natively; GFX9 (CDNA) only 64.
  wave64 = llvm::AMDGPU::getIsaVersion(chip).Major < 10;
  return true;
}

void buildROCDLKernelPipeline(OpPassManager &pm, StringRef chip) {
  bool wave64 = true;
  (void)isKnownAMDGPUChip(chip, wave64);
  // ceildivsi, floordivsi, ... have no LLVM lowering of their own.
  pm.addPass(arith::createArithExpandOpsPass());
  GpuROCDLAttachTargetOptions attach;
  attach.chip = chip.str();
  // Code object version 5: what ROCm 5.2 and every newer HIP load.
  attach.abiVersion = "500";
  attach.wave64Flag = wave64;
  attach.optLevel = 3;
  pm.addPass(createGpuROCDLAttachTarget(attach));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToROCDLOpsOptions rocdl;
  rocdl.chipset = chip.str();
  rocdl.useBarePtrCallConv = true;
  rocdl.runtime = gpu::amd::Runtime::HIP;
  // The dialects whose generic LLVM lowering the kernels may use: those
  // registerROCDLTargetDialects registers. Without the list the pass takes
  // every loaded dialect's, and once the NVVM dialect is loaded (the shared
  // kiln-gpu-lower-configured-ops depends on it for the cuda target's
  // tensor cores) math.tanh became llvm.intr.tanh, which the AMDGPU back end
  // cannot lower, instead of ocml's __ocml_tanh_f32.
  rocdl.allowedDialects = {"arith", "cf",     "func", "index",
                           "math",  "memref", "ub"};
  kernels.addPass(createConvertGpuOpsToROCDLOps(rocdl));
  kernels.addPass(createReconcileUnrealizedCastsPass());
}

void registerROCDLTargetDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, ROCDL::ROCDLDialect, LLVM::LLVMDialect>();
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  ROCDL::registerROCDLTargetInterfaceExternalModels(registry);
  registerLLVMDialectTranslation(registry);
  registerROCDLDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
}

namespace {
struct ROCDLPipelineOptions
    : public PassPipelineOptions<ROCDLPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("the AMD GPU (gfxNNN)"),
                           llvm::cl::init("gfx90a")};
};
} // namespace

void registerROCDLPipelines() {
  PassPipelineRegistration<ROCDLPipelineOptions>(
      "kiln-rocdl-lower-kernels",
      "The hip target's lowering of outlined kernels to ROCDL (after the "
      "shared GPU pipeline)",
      [](OpPassManager &pm, const ROCDLPipelineOptions &options) {
        buildROCDLKernelPipeline(pm, options.chip);
      });
}

namespace {

constexpr llvm::StringLiteral kDefaultChip = "gfx90a";

/// The first device-library function (`__ocml_*`, `__ockl_*`) a kernel
/// module calls, or "".
StringRef findDeviceLibraryCall(gpu::GPUModuleOp gpuModule) {
  for (auto func : gpuModule.getOps<LLVM::LLVMFuncOp>())
    if (func.isExternal() && (func.getName().starts_with("__ocml_") ||
                              func.getName().starts_with("__ockl_")))
      return func.getName();
  return "";
}

bool hasDeviceLibraries(StringRef folder) {
  SmallString<256> path(folder);
  llvm::sys::path::append(path, "amdgcn", "bitcode", "ocml.bc");
  return llvm::sys::fs::is_regular_file(path);
}

/// The folder holding `amdgcn/bitcode/ocml.bc`: `given` (--rocm-path) when
/// not empty, else the first of $ROCM_PATH, /opt/rocm and the folders
/// Debian's rocm-device-libs installs to; "" when none has it.
std::string findDeviceLibraries(StringRef given) {
  if (!given.empty())
    return given.str();
  SmallVector<std::string> candidates;
  if (const char *env = std::getenv("ROCM_PATH"))
    candidates.push_back(env);
  candidates.push_back("/opt/rocm");
  candidates.push_back("/usr/lib/x86_64-linux-gnu");
  candidates.push_back("/usr/lib/aarch64-linux-gnu");
  candidates.push_back("/usr/lib");
  for (const std::string &folder : candidates)
    if (hasDeviceLibraries(folder))
      return folder;
  return "";
}

class ROCDLTargetBackend final : public DeviceTargetBackend {
public:
  ROCDLTargetBackend(CPUTarget host, std::string precision, std::string chip,
                     std::string libraries, std::string lld)
      : DeviceTargetBackend(std::move(host), std::move(precision)), chip(std::move(chip)),
        libraries(std::move(libraries)), lld(std::move(lld)) {}

  StringRef getDeviceName() const override { return "hip"; }

  void buildPipeline(OpPassManager &pm) const override {
    buildGPUCommonPipeline(pm, getPipelineOptions());
    buildROCDLKernelPipeline(pm, chip);
  }

  ExecutableInfo getExecutableInfo(ModuleOp module) const override {
    ExecutableInfo info;
    std::shared_ptr<DeviceProgram> program =
        beginExecutableInfo(module, "hip", ".hsaco", info);
    if (!program)
      return info;

    // The nodes each kernel module computes, for messages.
    std::vector<std::string> nodes(program->executables.size());
    for (const DeviceDispatch &dispatch : program->dispatches)
      if (nodes[dispatch.executable].empty())
        nodes[dispatch.executable] = dispatch.node;

    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    for (size_t index = 0; index < program->executables.size(); ++index) {
      DeviceExecutable &executable = program->executables[index];
      std::string isa, error;
      std::vector<char> hsaco;
      if (failed(serializeISA(gpuModules[index], isa, error)) ||
          failed(linkCodeObject(gpuModules[index], isa, hsaco, error))) {
        InFlightDiagnostic diag = gpuModules[index].emitError();
        if (!nodes[index].empty())
          diag << "node '" << nodes[index] << "': ";
        diag << error;
        return info;
      }
      executable.target = chip;
      executable.format = KILN_EXECUTABLE_HSACO;
      executable.bytes = std::move(hsaco);
    }
    info.device = std::move(program);
    return info;
  }

  LogicalResult printExecutable(ModuleOp module,
                                const SerializeOptions &options,
                                raw_ostream &os,
                                std::string &error) const override {
    // Every kernel module's AMDGPU assembly.
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      std::string isa;
      if (failed(serializeISA(gpuModule, isa, error)))
        return failure();
      os << "; kernel module " << gpuModule.getName() << "\n" << isa << "\n";
    }
    return success();
  }

private:
  /// The AMDGPU assembly of `gpuModule` (converted to ROCDL).
  LogicalResult serializeISA(gpu::GPUModuleOp gpuModule, std::string &isa,
                             std::string &error) const {
    StringRef needs = findDeviceLibraryCall(gpuModule);
    if (!needs.empty() && libraries.empty()) {
      error = "kernel module '" + gpuModule.getName().str() +
              "' calls the math function '" + needs.str() +
              "' of the ROCm device libraries, but no folder holding "
              "amdgcn/bitcode/ocml.bc was found: install Debian's "
              "rocm-device-libs or name the folder with --rocm-path";
      return failure();
    }
    if (!needs.empty() && !hasDeviceLibraries(libraries)) {
      error = "--rocm-path '" + libraries +
              "' has no amdgcn/bitcode/ocml.bc (kernel module '" +
              gpuModule.getName().str() + "' calls '" + needs.str() + "')";
      return failure();
    }
    MLIRContext *context = gpuModule.getContext();
    DialectRegistry registry;
    registerROCDLTargetDialects(registry);
    context->appendDialectRegistry(registry);
    ArrayAttr targets = gpuModule.getTargetsAttr();
    auto target = targets && targets.size() == 1
                      ? dyn_cast<gpu::TargetAttrInterface>(targets[0])
                      : gpu::TargetAttrInterface();
    if (!target) {
      error = "kernel module '" + gpuModule.getName().str() +
              "' has no ROCDL target";
      return failure();
    }
    std::string messages;
    std::optional<SmallVector<char, 0>> object;
    {
      ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Error)
          messages += (messages.empty() ? "" : "; ") + diag.str();
        return success();
      });
      // Without a device-library call the serializer needs no toolkit.
      gpu::TargetOptions options(needs.empty() ? "" : libraries, {}, "", "",
                                 gpu::CompilationTarget::Assembly);
      object = target.serializeToObject(gpuModule, options);
    }
    if (!object || !messages.empty()) {
      error = "cannot compile kernel module '" + gpuModule.getName().str() +
              "' for " + chip + (messages.empty() ? "" : ": " + messages);
      return failure();
    }
    isa.assign(object->begin(), object->end());
    while (!isa.empty() && isa.back() == '\0')
      isa.pop_back();
    return success();
  }

  /// Assembles `isa` and links it (ld.lld -shared) into an HSA code object.
  LogicalResult linkCodeObject(gpu::GPUModuleOp gpuModule, StringRef isa,
                               std::vector<char> &hsaco,
                               std::string &error) const {
    std::string messages;
    FailureOr<SmallVector<char, 0>> object;
    {
      ScopedDiagnosticHandler handler(
          gpuModule.getContext(), [&](Diagnostic &diag) {
            if (diag.getSeverity() == DiagnosticSeverity::Error)
              messages += (messages.empty() ? "" : "; ") + diag.str();
            return success();
          });
      object = ROCDL::assembleIsa(isa, "amdgcn-amd-amdhsa", chip, "",
                                  [&] { return gpuModule.emitError(); });
    }
    if (failed(object) || !messages.empty()) {
      error = "cannot assemble the " + chip + " code of kernel module '" +
              gpuModule.getName().str() + "' (a kiln bug)" +
              (messages.empty() ? "" : ": " + messages);
      return failure();
    }
    if (lld.empty()) {
      error = "ld.lld was not found (it links AMD GPU code objects): install "
              "lld-22";
      return failure();
    }
    SmallString<128> input, output, log;
    int fd;
    if (llvm::sys::fs::createTemporaryFile("kiln-hip", "o", fd, input) ||
        llvm::sys::fs::createTemporaryFile("kiln-hip", "hsaco", output) ||
        llvm::sys::fs::createTemporaryFile("kiln-hip", "log", log)) {
      error = "cannot create temporary files for ld.lld";
      return failure();
    }
    llvm::FileRemover removeInput(input), removeOutput(output), removeLog(log);
    {
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os.write(object->data(), object->size());
    }
    SmallVector<StringRef> args = {lld, "-shared", input, "-o", output};
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                            StringRef(log)};
    std::string execError;
    int rc = llvm::sys::ExecuteAndWait(lld, args, std::nullopt, redirects, 0,
                                       0, &execError);
    if (rc != 0) {
      auto text = llvm::MemoryBuffer::getFile(log);
      error = "ld.lld could not link the code object of kernel module '" +
              gpuModule.getName().str() + "': " +
              (rc < 0 ? execError
                      : text ? (*text)->getBuffer().trim().str()
                             : "exit status " + std::to_string(rc));
      return failure();
    }
    auto binary = llvm::MemoryBuffer::getFile(output, /*IsText=*/false);
    if (!binary || (*binary)->getBufferSize() == 0) {
      error = "ld.lld wrote no code object for kernel module '" +
              gpuModule.getName().str() + "'";
      return failure();
    }
    hsaco.assign((*binary)->getBufferStart(), (*binary)->getBufferEnd());
    return success();
  }

  std::string chip;
  std::string libraries;
  std::string lld;
};

} // namespace

std::unique_ptr<TargetBackend>
createROCDLTargetBackend(const TargetOptions &options, std::string &error) {
  std::string chip = options.arch.empty() ? kDefaultChip.str() : options.arch;
  bool wave64 = true;
  if (!isKnownAMDGPUChip(chip, wave64)) {
    error = "unknown AMD GPU '" + chip +
            "' (a gfx name LLVM knows, such as gfx90a, gfx942 or gfx1100)";
    return nullptr;
  }
  if (!options.toolkitPath.empty() &&
      !llvm::sys::fs::is_directory(options.toolkitPath)) {
    error = "--rocm-path '" + options.toolkitPath + "' is not a folder";
    return nullptr;
  }
  // The host side is the descriptor only: a baseline CPU.
  FailureOr<CPUTarget> host = resolveCPUTarget(
      options.triple, options.cpu.empty() ? "generic" : options.cpu, error);
  if (failed(host))
    return nullptr;
  return std::make_unique<ROCDLTargetBackend>(
      std::move(*host), options.precision, std::move(chip),
      findDeviceLibraries(options.toolkitPath), findLLVMTool("ld.lld"));
}

} // namespace kiln
