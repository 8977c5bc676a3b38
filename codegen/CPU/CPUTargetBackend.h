//===- CPUTargetBackend.h - x86-64 and AArch64 behind the seam --*- C++ -*-===//
#ifndef KILN_CODEGEN_CPU_CPUTARGETBACKEND_H
#define KILN_CODEGEN_CPU_CPUTARGETBACKEND_H

#include "codegen/Target.h"

namespace kiln {

/// The "cpu" target: resolveCPUTarget for `options`, buildCPUCodegenPipeline
/// and an object file through llvm::TargetMachine (CPUPipeline.h). Null with
/// `error` set when the triple or the CPU is unknown.
std::unique_ptr<TargetBackend>
createCPUTargetBackend(const TargetOptions &options, std::string &error);

/// Arithmetic on an 8-bit float (an arith or math op on one other than a
/// constant, a select or a bitcast): no target computes with them, they
/// are only cast (through their bits) and moved. Shared by every target's
/// isSupported.
bool computesOnFloat8(mlir::Operation *op);

} // namespace kiln

#endif // KILN_CODEGEN_CPU_CPUTARGETBACKEND_H
