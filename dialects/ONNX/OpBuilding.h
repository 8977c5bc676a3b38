//===- OpBuilding.h - Create an onnx op, infer its types, fold --*- C++ -*-===//
//
// The one way kiln creates onnx ops from an op type, operands and attributes: the
// importer builds every node with it and kiln-decompose every op of an expansion, so
// both check attributes, infer result types and fold constants alike.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_OPBUILDING_H
#define KILN_DIALECTS_ONNX_OPBUILDING_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace kiln::onnx {

/// Creates the op of `state` (an `onnx.*` op whose result slots are all `none`) at the
/// builder's insertion point, then: checks that every attribute of `state` landed as one
/// of the op's inherent attributes with the given value; infers the result types through
/// ShapeInferenceOpInterface; calls `checkInferred` (when given) so the caller can reject
/// a result it needs that got no type; gives the results for which `isUsed` is false the
/// `none` type (an absent optional output); verifies the op; and folds it when folding
/// keeps the result types. Returns the results (the folded values when it folded).
/// Errors start with `emitError(op)` (the caller's "node 'NAME' (Op, opset N): "); on
/// failure the op is erased.
mlir::FailureOr<llvm::SmallVector<mlir::Value>> buildONNXOp(
    mlir::OpBuilder &builder, mlir::OperationState &state,
    llvm::function_ref<mlir::InFlightDiagnostic(mlir::Operation *)> emitError,
    llvm::function_ref<bool(unsigned)> isUsed,
    llvm::function_ref<mlir::LogicalResult(mlir::Operation *)> checkInferred = nullptr);

/// buildONNXOp's steps after creating the op, for an op the caller created itself (an
/// If, Loop or Scan whose regions it filled in place, inside the function, so that
/// verifying the ops of its regions sees their enclosing values); `attrs` are the
/// attributes the op was created with. On failure the op is erased.
mlir::FailureOr<llvm::SmallVector<mlir::Value>> completeONNXOp(
    mlir::OpBuilder &builder, mlir::Operation *op,
    llvm::ArrayRef<mlir::NamedAttribute> attrs,
    llvm::function_ref<mlir::InFlightDiagnostic(mlir::Operation *)> emitError,
    llvm::function_ref<bool(unsigned)> isUsed,
    llvm::function_ref<mlir::LogicalResult(mlir::Operation *)> checkInferred = nullptr);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_OPBUILDING_H
