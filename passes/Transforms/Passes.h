//===- Passes.h - kiln graph passes over the onnx dialect -------*- C++ -*-===//
#ifndef KILN_PASSES_TRANSFORMS_PASSES_H
#define KILN_PASSES_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <functional>

namespace kiln {

#define GEN_PASS_DECL
#include "passes/Transforms/Passes.h.inc"

/// kiln-decompose leaving every op for which `keep` is true as it is (e.g. ops a
/// later pass has a kernel for).
std::unique_ptr<mlir::Pass>
createKilnDecomposePass(std::function<bool(mlir::Operation *)> keep);

#define GEN_PASS_REGISTRATION
#include "passes/Transforms/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_TRANSFORMS_PASSES_H
