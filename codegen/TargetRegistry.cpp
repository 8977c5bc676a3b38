//===- TargetRegistry.cpp - targets by device name ------------------------===//
//
// The one place that knows every target. A new target adds its factory to
// kTargets (and its library to codegen/CMakeLists.txt's KilnCodegen).
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/CPUTargetBackend.h"
#include "codegen/GPU/NVVM/NVVMTargetBackend.h"
#include "codegen/GPU/ROCDL/ROCDLTargetBackend.h"
#include "codegen/GPU/SPIRV/SPIRVTargetBackend.h"
#include "codegen/Passes.h"
#include "codegen/Target.h"

#include "llvm/ADT/STLExtras.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCHECKTARGETSUPPORTPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {

namespace {

struct TargetEntry {
  llvm::StringLiteral device;
  /// Null while the target is not built; `folder` is where it will live.
  std::unique_ptr<TargetBackend> (*create)(const TargetOptions &,
                                           std::string &);
  llvm::StringLiteral folder;
};

const TargetEntry kTargets[] = {
    {"cpu", createCPUTargetBackend, "codegen/CPU"},
    {"vulkan", createSPIRVTargetBackend, "codegen/GPU/SPIRV"},
    {"cuda", createNVVMTargetBackend, "codegen/GPU/NVVM"},
    {"hip", createROCDLTargetBackend, "codegen/GPU/ROCDL"},
};

} // namespace

SmallVector<StringRef> getTargetDeviceNames() {
  SmallVector<StringRef> names;
  for (const TargetEntry &entry : kTargets)
    if (entry.create)
      names.push_back(entry.device);
  return names;
}

std::unique_ptr<TargetBackend> createTargetBackend(StringRef deviceSpec,
                                                   const TargetOptions &options,
                                                   std::string &error) {
  // "cuda:sm_90": the device and its architecture.
  StringRef device = deviceSpec.split(':').first;
  StringRef arch = deviceSpec.split(':').second;
  TargetOptions targetOptions = options;
  if (deviceSpec.contains(':')) {
    if (arch.empty()) {
      error = "--device '" + deviceSpec.str() +
              "' names no architecture "
              "after ':'";
      return nullptr;
    }
    if (device == "cpu" || device == "vulkan") {
      error = "device '" + device.str() + "' takes no architecture (got '" +
              deviceSpec.str() + "'; use --cpu for the cpu)";
      return nullptr;
    }
    targetOptions.arch = arch.str();
  }
  const TargetEntry *entry = llvm::find_if(
      kTargets, [&](const TargetEntry &e) { return e.device == device; });
  if (entry == std::end(kTargets)) {
    error = "unknown device '" + device.str() + "' (kiln compiles for: " +
            llvm::join(getTargetDeviceNames(), ", ") + ")";
    return nullptr;
  }
  // The GPU targets narrow to fp16 (docs/precision.md); bf16 reaches their
  // pipeline, which refuses it naming the first node it would narrow; tf32 is
  // the cuda target's tensor-core products (its own check).
  if (device != "cpu" && targetOptions.precision != "fp32" &&
      targetOptions.precision != "fp16" && targetOptions.precision != "bf16" &&
      !(targetOptions.precision == "tf32" && device == "cuda")) {
    error = "unknown precision '" + targetOptions.precision + "' (the " +
            device.str() + " target computes fp32 or fp16" +
            (device == "cuda" ? ", or tf32)" : ")");
    return nullptr;
  }
  if (!entry->create) {
    error = "the " + device.str() + " target is not implemented yet (its " +
            "place: " + entry->folder.str() + ")";
    return nullptr;
  }
  return entry->create(targetOptions, error);
}

namespace {

struct CheckTargetSupportPass
    : impl::KilnCheckTargetSupportPassBase<CheckTargetSupportPass> {
  using Base::Base;
  explicit CheckTargetSupportPass(const TargetBackend &target)
      : target(&target) {
    device = target.getDeviceName().str();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::unique_ptr<TargetBackend> owned;
    const TargetBackend *backend = target;
    if (!backend) {
      // Registered form (kiln-opt): the device's target for the host.
      std::string error;
      owned = createTargetBackend(device, TargetOptions(), error);
      if (!owned) {
        module.emitError(error);
        return signalPassFailure();
      }
      backend = owned.get();
    }
    if (failed(backend->checkSupported(module)))
      signalPassFailure();
    markAllAnalysesPreserved();
  }

  const TargetBackend *target = nullptr;
};

} // namespace

std::unique_ptr<Pass>
createKilnCheckTargetSupportPass(const TargetBackend &target) {
  return std::make_unique<CheckTargetSupportPass>(target);
}

} // namespace kiln
