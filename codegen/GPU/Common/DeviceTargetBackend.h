//===- DeviceTargetBackend.h - what every GPU target shares -----*- C++ -*-===//
#ifndef KILN_CODEGEN_GPU_COMMON_DEVICETARGETBACKEND_H
#define KILN_CODEGEN_GPU_COMMON_DEVICETARGETBACKEND_H

#include "codegen/CPU/CPUPipeline.h"
#include "codegen/GPU/Common/GPUPipeline.h"
#include "codegen/Target.h"

#include <memory>

namespace kiln {

/// The part of a GPU target (vulkan, cuda, hip) that does not depend on its
/// device code: what the shared GPU pipeline (buildGPUCommonPipeline) can
/// lower, the host side (only the descriptor: the device modules and weights
/// are data in it, for `host`), and the start of the executable info (the host
/// plan of buildDeviceProgram). A target adds its pipeline tail and writes
/// each executable's code.
class DeviceTargetBackend : public TargetBackend {
public:
  /// `precision`: TargetOptions::precision ("fp32", "fp16"; "bf16" is
  /// refused by the pipeline naming the node).
  explicit DeviceTargetBackend(CPUTarget host, std::string precision = "fp32")
      : host(std::move(host)), precision(std::move(precision)) {}

  ExecutableFormat getExecutableFormat() const final {
    return ExecutableFormat::DeviceProgram;
  }

  /// Ops of the dialects the shared pipeline lowers, with element types its
  /// kernels compute with (integers up to 64 bits, index, f16, f32, f64;
  /// bf16 and the float8 types as integers, bf16 arithmetic in f32, float8
  /// arithmetic refused), operands included: a kernel reads graph inputs of
  /// any type. A target with more limits checks them after this.
  bool isSupported(mlir::Operation *op, std::string &reason) const override;

  mlir::LogicalResult serializeExecutable(mlir::ModuleOp module,
                                          const SerializeOptions &options,
                                          llvm::StringRef path,
                                          std::string &error) const final;

protected:
  /// The shared pipeline's options for this target: its precision, and
  /// this target's support check after narrowing. A target sets its limits
  /// on top.
  GPUPipelineOptions getPipelineOptions() const;

  /// Fills `info` for the host (triple, CPU, the module's check messages) and
  /// returns a program for `device` (its modules' file `extension`) with the
  /// dispatches, weights and arena of the module's host plan, its executables
  /// named and their code left to the target; null when the plan cannot be
  /// read (the error is emitted on the module).
  std::shared_ptr<DeviceProgram>
  beginExecutableInfo(mlir::ModuleOp module, llvm::StringRef device,
                      llvm::StringRef extension, ExecutableInfo &info) const;

  CPUTarget host;
  std::string precision;
};

} // namespace kiln

#endif // KILN_CODEGEN_GPU_COMMON_DEVICETARGETBACKEND_H
