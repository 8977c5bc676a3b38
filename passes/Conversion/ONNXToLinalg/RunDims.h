//===- RunDims.h - helpers for sizes decided by the run's values -*- C++ -*-===//
//
// Ops whose output shape depends on the values of a non-constant input (a
// Reshape whose shape is a graph input, a Slice with run-time ends, ...):
// kiln-symbolic-shapes gave their `?` result dims run symbols; the lowering
// computes each size with arith from `tensor.extract`s of the deciding values
// and builds its results with those sizes (docs/dynamic-shapes.md, "Run
// dims"). A value the spec forbids is a run-time check (kiln.check) naming
// the node; the sizes are made 0 when it fails, so nothing after it reads or
// writes out of bounds before the entry returns the check's number.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_CONVERSION_ONNXTOLINALG_RUNDIMS_H
#define KILN_PASSES_CONVERSION_ONNXTOLINALG_RUNDIMS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <string>

namespace kiln::onnx_to_linalg {

/// Element `i` of the 1-D (or 0-D, i = 0) integer tensor `values` as an
/// `index` (sign-extended; an unsigned source is zero-extended when
/// `isUnsigned`).
mlir::Value readIndexAt(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value values, int64_t i, bool isUnsigned = false);

/// Dim `axis` of the ranked tensor `value` as an `index` value (a constant
/// when static).
mlir::Value dimValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                     int64_t axis);

/// An `index` constant.
mlir::Value indexValue(mlir::OpBuilder &b, mlir::Location loc, int64_t v);

/// Emits kiln.check that the i1 `ok` holds, with the message
/// "node 'N' (Op, opset K): <what>".
void emitRunCheck(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                  mlir::Value ok, const std::string &what);

/// `size` where `ok` holds, else 0 (sizes after a failed check).
mlir::Value sizeIfOk(mlir::OpBuilder &b, mlir::Location loc, mlir::Value ok,
                     mlir::Value size);

/// `value` (any ranked tensor, identity layout) reshaped to `type` whose
/// `?` dims are `sizes[i]` (the element counts must agree: the caller
/// checked them at run time, sizes 0 after a failed check give an empty
/// view of a buffer it does not read). A collapse to 1-D and an expansion.
mlir::Value reshapeToSizes(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value value, mlir::RankedTensorType type,
                           llvm::ArrayRef<mlir::Value> sizes);

} // namespace kiln::onnx_to_linalg

#endif
