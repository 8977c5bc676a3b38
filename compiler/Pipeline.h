//===- Pipeline.h - the stages of `kiln compile`, wired together -*- C++ -*-===//
//
// compiler/ only wires stages: import (compiler/import), graph passes
// (passes/Transforms), lowering (passes/Conversion), code generation
// (codegen/) and packaging. Diagnostics go through the MLIRContext's handler.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_PIPELINE_H
#define KILN_COMPILER_PIPELINE_H

#include "compiler/Options.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"

namespace kiln {

class TargetBackend;

/// Registers every dialect and external interface model kiln's stages use.
void registerCompilerDialects(mlir::DialectRegistry &registry);

/// Runs `kiln compile` as described by `options`. Errors are reported as
/// diagnostics on `context` (naming the ONNX node where one is at fault).
mlir::LogicalResult compileModel(mlir::MLIRContext &context,
                                 const CompileOptions &options);

/// The passes from the imported `onnx` module to linalg-on-tensors that
/// `target` accepts: the start of `kiln compile` and all of `kiln check`. An
/// op nothing lowers, or one the target rejects, is an error naming the node.
void buildLoweringToTargetPipeline(mlir::OpPassManager &pm,
                                   const TargetBackend &target);

/// The two halves of buildLoweringToTargetPipeline, which `kiln compile` runs
/// as separate pass managers so that --time-report shows each: the graph
/// passes on the onnx dialect, then ONNX -> linalg and the support check.
/// `runDims`: sizes decided by the run's values (docs/dynamic-shapes.md, "Run
/// dims") are compiled (the cpu device); false: refused naming the node and
/// the input, which --specialize fixes (other devices).
void buildGraphPasses(mlir::OpPassManager &pm, bool runDims = true,
                      bool batchLoop = false);
void buildLoweringPasses(mlir::OpPassManager &pm, const TargetBackend &target);

} // namespace kiln

#endif // KILN_COMPILER_PIPELINE_H
