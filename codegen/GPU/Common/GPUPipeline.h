//===- GPUPipeline.h - linalg-on-tensors to outlined GPU kernels -*- C++ -*-===//
//
// What every GPU target shares (SPIR-V today; NVVM and ROCDL next): the
// tensor pipeline of codegen/Common, bufferization with results as
// out-parameters, the transient arena planned at compile time (256-byte
// aligned), a kernel chosen per op (kiln-gpu-select-lowering-config: tiled
// matmul, row reduction, or one parallel loop nest mapped to workgroups x
// threads),
// kernel outlining, and the host plan checked (kiln-gpu-plan-dispatches). A
// target then converts the gpu.module ops to its code and reads the plan with
// buildDeviceProgram (HostPlan.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_GPU_COMMON_GPUPIPELINE_H
#define KILN_CODEGEN_GPU_COMMON_GPUPIPELINE_H

#include "mlir/Pass/PassManager.h"

#include <string>

namespace kiln {

class TargetBackend;

struct GPUPipelineOptions {
  /// Threads per workgroup of the generic mapping.
  int64_t workgroupSize = 64;
  /// `--precision`: "fp32", or "fp16" for an f32 model's products on f16
  /// operands (kiln-narrow-precision with its GPU scope: docs/precision.md);
  /// "bf16" is refused naming the first node it would narrow.
  std::string precision = "fp32";
  /// The target whose support check runs again after narrowing (none: no
  /// check).
  const TargetBackend *target = nullptr;
  /// The target's limits, for the kernels kiln-gpu-select-lowering-config
  /// chooses (defaults: the minimums Vulkan guarantees).
  int64_t maxWorkgroupInvocations = 128;
  int64_t maxWorkgroupMemory = 16384;
  /// matmul_tiled's tile choice (kiln-gpu-select-lowering-config's options
  /// of the same names): 0 and 16 keep the 32/64 x 64 x 16 tiles.
  int64_t minWorkgroups = 0;
  int64_t maxTileK = 16;
  /// NVIDIA's mma.sync (cuda, sm_80+): f16 contractions on tensor cores
  /// (kiln-gpu-select-lowering-config's matmul_mma); with `tf32`, f32 ones
  /// too (--precision tf32).
  bool mmaSync = false;
  bool tf32 = false;
};

/// Appends the passes from linalg-on-tensors to outlined gpu.module kernels
/// and a host entry of gpu.launch_func ops with planned bindings.
void buildGPUCommonPipeline(mlir::OpPassManager &pm,
                            const GPUPipelineOptions &options = {});

} // namespace kiln

#endif // KILN_CODEGEN_GPU_COMMON_GPUPIPELINE_H
