//===- NVVMTargetBackend.h - NVIDIA GPUs (PTX, cubin) -------*- C++ -*-===//
#ifndef KILN_CODEGEN_GPU_NVVM_NVVMTARGETBACKEND_H
#define KILN_CODEGEN_GPU_NVVM_NVVMTARGETBACKEND_H

#include "codegen/Target.h"

namespace kiln {

/// The "cuda" target: the shared GPU pipeline (GPU/Common), each kernel
/// module lowered to NVVM and serialized by LLVM's NVPTX back end to PTX
/// for `options.arch` (sm_XX, default sm_80) with libdevice from the CUDA
/// toolkit (`options.toolkitPath`, default /usr/local/cuda) for math
/// functions; when the toolkit's `ptxas` is found, also a cubin of each
/// module for that arch (an alternative of its PTX, model_abi.h). A host
/// object (for `options.triple`) holds only the descriptor. Null with
/// `error` set for an unknown arch or host triple.
std::unique_ptr<TargetBackend>
createNVVMTargetBackend(const TargetOptions &options, std::string &error);

/// The PTX ISA version kiln asks LLVM for on `chip` ("sm_90" -> 78): the
/// oldest that has the chip, so the oldest drivers run it; 0 for a chip kiln
/// does not compile for.
unsigned getPTXVersionForChip(llvm::StringRef chip);

/// Whether `chip` (sm_XX) has the mma.sync shapes kiln's tensor-core
/// kernel uses (m16n8k16 f16, m16n8k8 tf32): sm_80 and newer.
bool hasMmaSync(llvm::StringRef chip);

/// Appends what the cuda target runs after the shared GPU pipeline: every
/// gpu.module gets the NVVM target for `chip` (its PTX version from
/// getPTXVersionForChip) and is lowered to the LLVM/NVVM dialects with the
/// bare-pointer calling convention (kernel parameter b: a pointer to the
/// first byte of binding b).
void buildNVVMKernelPipeline(mlir::OpPassManager &pm, llvm::StringRef chip);

/// Adds to `registry` what the cuda target's passes and serializer need of
/// a context: the GPU and NVVM dialects, the ConvertToLLVM interfaces that
/// convert-gpu-to-nvvm uses for the ops inside kernels (arith, cf, func,
/// index, math, memref, ub), the NVVM target attribute's serializer and the
/// LLVM IR translations (kiln-opt registers all of them anyway).
void registerNVVMTargetDialects(mlir::DialectRegistry &registry);

/// Registers `kiln-nvvm-lower-kernels{chip=sm_80}` (buildNVVMKernelPipeline)
/// for kiln-opt.
void registerNVVMPipelines();

} // namespace kiln

#endif // KILN_CODEGEN_GPU_NVVM_NVVMTARGETBACKEND_H
