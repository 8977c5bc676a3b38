//===- SPIRVTargetBackend.h - Vulkan compute behind the seam ----*- C++ -*-===//
#ifndef KILN_CODEGEN_GPU_SPIRV_SPIRVTARGETBACKEND_H
#define KILN_CODEGEN_GPU_SPIRV_SPIRVTARGETBACKEND_H

#include "codegen/Target.h"

namespace kiln {

/// The "vulkan" target: the shared GPU pipeline (GPU/Common), each kernel
/// module converted to SPIR-V for Vulkan 1.1 and serialized, and a host
/// object (for `options.triple`) holding only the descriptor: the modules,
/// the dispatch table and the memory needs (codegen/DeviceProgram.h). Null
/// with `error` set when the host triple is unknown.
std::unique_ptr<TargetBackend>
createSPIRVTargetBackend(const TargetOptions &options, std::string &error);

} // namespace kiln

#endif // KILN_CODEGEN_GPU_SPIRV_SPIRVTARGETBACKEND_H
