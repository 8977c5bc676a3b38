//===- NVVMTargetBackend.cpp - NVIDIA GPUs (PTX, cubin) behind the seam ---===//
//
// The shared GPU pipeline (codegen/GPU/Common), then per kernel module:
// nvvm-attach-target, convert-scf-to-cf, convert-gpu-to-nvvm with the
// bare-pointer calling convention (a kernel parameter is the pointer to its
// binding's first byte: model_abi.h's bindings map 1:1 to kernel
// parameters), and LLVM's NVPTX back end through the NVVM target attribute's
// serializer, linking libdevice for math functions. ptxas, when the toolkit
// has it, assembles each module into a cubin, packaged as an alternative of
// its PTX (docs/gpu.md).
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/NVVM/NVVMTargetBackend.h"

#include "codegen/CPU/CPUPipeline.h"
#include "codegen/GPU/Common/DeviceTargetBackend.h"
#include "codegen/GPU/Common/GPUPipeline.h"
#include "codegen/GPU/Common/HostPlan.h"
#include "codegen/GPU/Passes.h"
#include "dialects/Kiln/ABIAttributes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNNVVMALIGNWORKGROUPMEMORYPASS
#include "codegen/GPU/Passes.h.inc"

unsigned getPTXVersionForChip(StringRef chip) {
  return llvm::StringSwitch<unsigned>(chip)
      .Case("sm_75", 63)
      .Case("sm_80", 70)
      .Case("sm_86", 71)
      .Case("sm_87", 74)
      .Case("sm_89", 78)
      .Case("sm_90", 78)
      .Case("sm_90a", 80)
      .Case("sm_100", 86)
      .Case("sm_120", 87)
      .Default(0);
}

namespace {

struct AlignWorkgroupMemoryPass
    : impl::KilnNVVMAlignWorkgroupMemoryPassBase<AlignWorkgroupMemoryPass> {
  void runOnOperation() override {
    constexpr int64_t kAlignment = 16;
    StringRef name = LLVM::LLVMDialect::getAlignAttrName();
    Builder b(&getContext());
    for (auto func : getOperation().getOps<gpu::GPUFuncOp>())
      for (unsigned i = 0, e = func.getNumWorkgroupAttributions(); i < e; ++i) {
        auto align = dyn_cast_or_null<IntegerAttr>(
            func.getWorkgroupAttributionAttr(i, name));
        if (!align || align.getInt() < kAlignment)
          func.setWorkgroupAttributionAttr(i, name,
                                           b.getI64IntegerAttr(kAlignment));
      }
  }
};

} // namespace

/// matmul_mma has been assembled by ptxas but has not yet run on a GPU, so it
/// is used only when asked for: KILN_CUDA_TENSOR_CORES=1, or --precision tf32
/// (docs/gpu.md). The next session with a GPU checks it and drops this gate.
static bool tensorCoresRequested() {
  const char *value = std::getenv("KILN_CUDA_TENSOR_CORES");
  return value && StringRef(value) == "1";
}

bool hasMmaSync(StringRef chip) {
  unsigned version = 0;
  StringRef digits = chip.drop_front(3).take_while(llvm::isDigit);
  return chip.starts_with("sm_") && !digits.getAsInteger(10, version) &&
         version >= 80;
}

void buildNVVMKernelPipeline(OpPassManager &pm, StringRef chip) {
  // ceildivsi, floordivsi, ... have no LLVM lowering of their own.
  pm.addPass(arith::createArithExpandOpsPass());
  GpuNVVMAttachTargetOptions attach;
  attach.chip = chip.str();
  attach.features = "+ptx" + std::to_string(getPTXVersionForChip(chip));
  attach.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(attach));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createKilnNVVMAlignWorkgroupMemoryPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createReconcileUnrealizedCastsPass());
}

void registerNVVMTargetDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect, LLVM::LLVMDialect>();
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
}

namespace {
struct NVVMPipelineOptions : public PassPipelineOptions<NVVMPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("the CUDA architecture (sm_XX)"),
                           llvm::cl::init("sm_80")};
};
} // namespace

void registerNVVMPipelines() {
  PassPipelineRegistration<NVVMPipelineOptions>(
      "kiln-nvvm-lower-kernels",
      "The cuda target's lowering of outlined kernels to NVVM (after the "
      "shared GPU pipeline)",
      [](OpPassManager &pm, const NVVMPipelineOptions &options) {
        buildNVVMKernelPipeline(pm, options.chip);
      });
}

namespace {

constexpr llvm::StringLiteral kDefaultChip = "sm_80";
constexpr llvm::StringLiteral kDefaultToolkit = "/usr/local/cuda";

/// The first libdevice function (`__nv_*`) a kernel module calls, or "".
StringRef findLibdeviceCall(gpu::GPUModuleOp gpuModule) {
  for (auto func : gpuModule.getOps<LLVM::LLVMFuncOp>())
    if (func.isExternal() && func.getName().starts_with("__nv_"))
      return func.getName();
  return "";
}

class NVVMTargetBackend final : public DeviceTargetBackend {
public:
  NVVMTargetBackend(CPUTarget host, std::string precision, std::string chip,
                    std::string toolkit, bool tf32)
      : DeviceTargetBackend(std::move(host), std::move(precision)),
        chip(std::move(chip)), toolkit(std::move(toolkit)), tf32(tf32) {
    SmallString<256> path(this->toolkit);
    llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
    libdevice = std::string(path);
    hasLibdevice = llvm::sys::fs::is_regular_file(libdevice);
    SmallString<256> bin(this->toolkit);
    llvm::sys::path::append(bin, "bin");
    if (llvm::ErrorOr<std::string> found =
            llvm::sys::findProgramByName("ptxas", {bin}))
      ptxas = *found;
  }

  StringRef getDeviceName() const override { return "cuda"; }

  void buildPipeline(OpPassManager &pm) const override {
    // Every NVIDIA GPU since Fermi allows 1024 threads and 48 KiB of static
    // shared memory per block; matmul_tiled uses up to 256 threads and 32
    // KiB, matmul_mma's 128x128 tiles more than Vulkan's 16 KiB. 264 workgroups: two per multiprocessor of an H100/H200 (132), so
    // a batch-1 model's small products still spread over the whole GPU.
    GPUPipelineOptions options = getPipelineOptions();
    options.maxWorkgroupInvocations = 256;
    options.maxWorkgroupMemory = 49152;
    options.minWorkgroups = 264;
    options.maxTileK = 64;
    // Tensor cores through mma.sync from sm_80, when asked for (above).
    options.mmaSync = hasMmaSync(chip) && (tf32 || tensorCoresRequested());
    options.tf32 = tf32;
    buildGPUCommonPipeline(pm, options);
    buildNVVMKernelPipeline(pm, chip);
  }

  ExecutableInfo getExecutableInfo(ModuleOp module) const override {
    ExecutableInfo info;
    std::shared_ptr<DeviceProgram> program =
        beginExecutableInfo(module, "cuda", ".ptx", info);
    if (!program)
      return info;

    // The nodes each kernel module computes, for messages.
    std::vector<std::string> nodes(program->executables.size());
    for (const DeviceDispatch &dispatch : program->dispatches)
      if (nodes[dispatch.executable].empty())
        nodes[dispatch.executable] = dispatch.node;

    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    size_t count = program->executables.size();
    auto fail = [&](size_t index, const Twine &message) {
      InFlightDiagnostic diag = gpuModules[index].emitError();
      if (!nodes[index].empty())
        diag << "node '" << nodes[index] << "': ";
      diag << message;
      return info;
    };
    std::vector<std::string> ptx(count);
    for (size_t index = 0; index < count; ++index) {
      std::string error;
      if (failed(
              serializePTX(gpuModules[index], nodes[index], ptx[index], error)))
        return fail(index, error);
    }
    std::vector<std::vector<char>> cubins(count);
    if (!ptxas.empty()) {
      std::string error;
      size_t failedIndex = 0;
      if (failed(assembleAll(ptx, cubins, failedIndex, error)))
        return fail(failedIndex, "ptxas rejected the PTX of kernel module '" +
                                     program->executables[failedIndex].name +
                                     "' (a kiln bug): " + error);
    }
    std::vector<DeviceExecutable> executables;
    std::vector<uint32_t> newIndex(count);
    for (size_t index = 0; index < count; ++index) {
      DeviceExecutable &executable = program->executables[index];
      newIndex[index] = executables.size();
      executable.target = chip;
      executable.format = KILN_EXECUTABLE_PTX;
      executable.bytes.assign(ptx[index].begin(), ptx[index].end());
      executables.push_back(executable);
      if (ptxas.empty())
        continue;
      DeviceExecutable cubin = executable;
      cubin.format = KILN_EXECUTABLE_CUBIN;
      cubin.flags = KILN_EXECUTABLE_ALTERNATIVE;
      cubin.bytes = std::move(cubins[index]);
      executables.push_back(std::move(cubin));
    }
    program->executables = std::move(executables);
    for (DeviceDispatch &dispatch : program->dispatches)
      dispatch.executable = newIndex[dispatch.executable];
    info.device = std::move(program);
    return info;
  }

  LogicalResult printExecutable(ModuleOp module,
                                const SerializeOptions &options,
                                raw_ostream &os,
                                std::string &error) const override {
    // Every kernel module's PTX.
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      std::string ptx;
      if (failed(serializePTX(gpuModule, "", ptx, error)))
        return failure();
      os << "// kernel module " << gpuModule.getName() << "\n" << ptx << "\n";
    }
    return success();
  }

private:
  /// The PTX of `gpuModule` (converted to NVVM), without a trailing NUL.
  LogicalResult serializePTX(gpu::GPUModuleOp gpuModule, StringRef node,
                             std::string &ptx, std::string &error) const {
    StringRef needs = findLibdeviceCall(gpuModule);
    if (!needs.empty() && !hasLibdevice) {
      error = "kernel module '" + gpuModule.getName().str() +
              "' calls the math function '" + needs.str() +
              "' of CUDA's libdevice, but there is no '" + libdevice +
              "': install the CUDA toolkit or name its folder with "
              "--cuda-path";
      return failure();
    }
    MLIRContext *context = gpuModule.getContext();
    DialectRegistry registry;
    registerNVVMTargetDialects(registry);
    context->appendDialectRegistry(registry);
    ArrayAttr targets = gpuModule.getTargetsAttr();
    auto target = targets && targets.size() == 1
                      ? dyn_cast<gpu::TargetAttrInterface>(targets[0])
                      : gpu::TargetAttrInterface();
    if (!target) {
      error = "kernel module '" + gpuModule.getName().str() +
              "' has no NVVM target";
      return failure();
    }
    // The serializer reports a toolkit without libdevice even when no
    // kernel needs it (checked above): only other messages count.
    std::string messages;
    std::optional<SmallVector<char, 0>> object;
    {
      ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
        std::string text = diag.str();
        if (diag.getSeverity() == DiagnosticSeverity::Error &&
            !StringRef(text).contains("LibDevice path") &&
            !StringRef(text).contains("CUDA path"))
          messages += (messages.empty() ? "" : "; ") + text;
        return success();
      });
      gpu::TargetOptions options(toolkit, {}, "", "",
                                 gpu::CompilationTarget::Assembly);
      object = target.serializeToObject(gpuModule, options);
    }
    if (!object || !messages.empty()) {
      error = "cannot compile kernel module '" + gpuModule.getName().str() +
              "' to PTX" + (messages.empty() ? "" : ": " + messages);
      return failure();
    }
    ptx.assign(object->begin(), object->end());
    while (!ptx.empty() && ptx.back() == '\0')
      ptx.pop_back();
    return success();
  }

  /// Runs ptxas on every module's PTX for the chip, up to one process per
  /// core at a time (ptxas takes one module per process); on failure
  /// `failedIndex` names the module.
  LogicalResult assembleAll(const std::vector<std::string> &ptx,
                            std::vector<std::vector<char>> &cubins,
                            size_t &failedIndex, std::string &error) const {
    struct Job {
      SmallString<128> input, output, log;
      llvm::sys::ProcessInfo process;
    };
    size_t count = ptx.size();
    std::vector<Job> jobs(count);
    auto cleanup = [&] {
      for (Job &job : jobs)
        for (StringRef path :
             {StringRef(job.input), StringRef(job.output), StringRef(job.log)})
          if (!path.empty())
            llvm::sys::fs::remove(path);
    };
    for (size_t i = 0; i < count; ++i) {
      Job &job = jobs[i];
      int fd;
      if (llvm::sys::fs::createTemporaryFile("kiln-cuda", "ptx", fd,
                                             job.input) ||
          llvm::sys::fs::createTemporaryFile("kiln-cuda", "cubin",
                                             job.output) ||
          llvm::sys::fs::createTemporaryFile("kiln-cuda", "log", job.log)) {
        cleanup();
        failedIndex = i;
        error = "cannot create temporary files for ptxas";
        return failure();
      }
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << ptx[i];
    }
    std::string arch = "-arch=" + chip;
    unsigned parallel =
        std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
    size_t next = 0, done = 0;
    std::vector<size_t> running;
    LogicalResult result = success();
    auto finish = [&](size_t i, int rc, const std::string &execError) {
      Job &job = jobs[i];
      if (failed(result))
        return;
      if (rc != 0) {
        auto text = llvm::MemoryBuffer::getFile(job.log);
        error = rc < 0 ? "cannot run '" + ptxas + "': " + execError
                       : (text ? (*text)->getBuffer().trim().str()
                               : "ptxas exited with " + std::to_string(rc));
        failedIndex = i;
        result = failure();
        return;
      }
      auto binary = llvm::MemoryBuffer::getFile(job.output, /*IsText=*/false);
      if (!binary || (*binary)->getBufferSize() == 0) {
        error = "ptxas wrote no cubin";
        failedIndex = i;
        result = failure();
        return;
      }
      cubins[i].assign((*binary)->getBufferStart(), (*binary)->getBufferEnd());
    };
    while (done < count) {
      while (next < count && running.size() < parallel && succeeded(result)) {
        Job &job = jobs[next];
        SmallVector<StringRef> args = {ptxas,     arch, "-O3",
                                       job.input, "-o", job.output};
        std::optional<StringRef> redirects[] = {
            std::nullopt, StringRef(job.log), StringRef(job.log)};
        std::string execError;
        bool execFailed = false;
        job.process = llvm::sys::ExecuteNoWait(
            ptxas, args, std::nullopt, redirects, 0, &execError, &execFailed);
        if (execFailed ||
            job.process.Pid == llvm::sys::ProcessInfo::InvalidPid) {
          finish(next, -1, execError);
          ++done;
        } else {
          running.push_back(next);
        }
        ++next;
      }
      if (running.empty()) {
        done = count; // a failure stopped new jobs and nothing runs
        break;
      }
      // Wait for the oldest job (they take about as long as each other).
      size_t i = running.front();
      running.erase(running.begin());
      std::string waitError;
      llvm::sys::ProcessInfo exited =
          llvm::sys::Wait(jobs[i].process, std::nullopt, &waitError);
      finish(i, exited.ReturnCode, waitError);
      ++done;
    }
    cleanup();
    return result;
  }

  std::string chip;
  std::string toolkit;
  /// --precision tf32: f32 contractions on tensor cores.
  bool tf32 = false;
  std::string libdevice;
  bool hasLibdevice = false;
  std::string ptxas;
};

} // namespace

std::unique_ptr<TargetBackend>
createNVVMTargetBackend(const TargetOptions &options, std::string &error) {
  std::string chip = options.arch.empty() ? kDefaultChip.str() : options.arch;
  if (!getPTXVersionForChip(chip)) {
    error = "unknown CUDA architecture '" + chip +
            "' (kiln compiles for sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, "
            "sm_90a, sm_100, sm_120)";
    return nullptr;
  }
  std::string toolkit =
      options.toolkitPath.empty() ? kDefaultToolkit.str() : options.toolkitPath;
  if (!options.toolkitPath.empty() &&
      !llvm::sys::fs::is_directory(options.toolkitPath)) {
    error = "--cuda-path '" + options.toolkitPath + "' is not a folder";
    return nullptr;
  }
  // The host side is the descriptor only: a baseline CPU.
  FailureOr<CPUTarget> host = resolveCPUTarget(
      options.triple, options.cpu.empty() ? "generic" : options.cpu, error);
  if (failed(host))
    return nullptr;
  // Other precisions are createTargetBackend's to accept or refuse.
  if (options.precision == "tf32" && !hasMmaSync(chip)) {
    error = "--precision tf32 needs tensor cores with tf32 (sm_80 or newer), "
            "not " + chip;
    return nullptr;
  }
  return std::make_unique<NVVMTargetBackend>(
      std::move(*host), options.precision, std::move(chip), std::move(toolkit),
      options.precision == "tf32");
}

} // namespace kiln
