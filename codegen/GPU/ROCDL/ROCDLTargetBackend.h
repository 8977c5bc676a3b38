//===- ROCDLTargetBackend.h - AMD GPUs (HSA code objects) ---*- C++ -*-===//
#ifndef KILN_CODEGEN_GPU_ROCDL_ROCDLTARGETBACKEND_H
#define KILN_CODEGEN_GPU_ROCDL_ROCDLTARGETBACKEND_H

#include "codegen/Target.h"

namespace kiln {

/// The "hip" target: the shared GPU pipeline (GPU/Common), each kernel
/// module lowered to ROCDL and compiled by LLVM's AMDGPU back end for
/// `options.arch` (a gfx name, default gfx90a) into an HSA code object
/// (hsaco: the ELF shared object HIP's hipModuleLoadData takes), linked by
/// ld.lld. Math functions come from the ROCm device libraries' bitcode
/// (ocml, ockl: `amdgcn/bitcode/` under `options.toolkitPath`, $ROCM_PATH,
/// /opt/rocm or Debian's rocm-device-libs). A host object (for
/// `options.triple`) holds only the descriptor. Null with `error` set for an
/// unknown arch or host triple.
std::unique_ptr<TargetBackend>
createROCDLTargetBackend(const TargetOptions &options, std::string &error);

/// Whether kiln compiles for the AMD GPU `chip` ("gfx90a"), and whether its
/// wavefronts are 64 lanes (GFX9 and older) rather than 32 (GFX10 and newer).
bool isKnownAMDGPUChip(llvm::StringRef chip, bool &wave64);

/// Appends what the hip target runs after the shared GPU pipeline: every
/// gpu.module gets the ROCDL target for `chip` (code object version 5) and
/// is lowered to the LLVM/ROCDL dialects with the bare-pointer calling
/// convention (kernel parameter b: a pointer to the first byte of binding b).
void buildROCDLKernelPipeline(mlir::OpPassManager &pm, llvm::StringRef chip);

/// Adds to `registry` what the hip target's passes and serializer need of a
/// context (kiln-opt registers all of them anyway).
void registerROCDLTargetDialects(mlir::DialectRegistry &registry);

/// Registers `kiln-rocdl-lower-kernels{chip=gfx90a}` (buildROCDLKernelPipeline)
/// for kiln-opt.
void registerROCDLPipelines();

} // namespace kiln

#endif // KILN_CODEGEN_GPU_ROCDL_ROCDLTARGETBACKEND_H
