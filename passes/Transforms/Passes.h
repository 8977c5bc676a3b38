//===- Passes.h - kiln graph passes over the onnx dialect -------*- C++ -*-===//
#ifndef KILN_PASSES_TRANSFORMS_PASSES_H
#define KILN_PASSES_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "passes/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Transforms/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_TRANSFORMS_PASSES_H
