//===- TestHooks.h - deliberate miscompiles for tests ----------*- C++ -*-===//
//
// `kiln verify` must find the node whose result is wrong; its test needs a
// kiln that computes one node wrong on purpose. KILN_TEST_MISCOMPILE_NODE=NAME
// (an environment variable, read only by `kiln compile`) makes the compiled
// model add 1 to the first floating-point result of ONNX node NAME. Never set
// it outside tests.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_TESTHOOKS_H
#define KILN_COMPILER_TESTHOOKS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace kiln {

/// Applies KILN_TEST_MISCOMPILE_NODE to the imported module (nothing when it
/// is unset). Fails, with an error, when no node of that name has a float
/// tensor result.
mlir::LogicalResult applyTestMiscompile(mlir::ModuleOp module);

} // namespace kiln

#endif // KILN_COMPILER_TESTHOOKS_H
