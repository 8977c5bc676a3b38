//===- Float8.h - scalar conversions between f32 and the 8-bit floats -*- C++ -*-===//
//
// ONNX's FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2 and FLOAT8E5M2FNUZ have no
// LLVM type (MLIR's LLVM lowering stores them as i8) and no arith.extf/truncf
// lowering, so Cast builds the conversions from integer arithmetic on their
// bits: exact decoding, and encoding that rounds to nearest even with ONNX's
// `saturate` semantics (onnx.numpy_helper.saturate_cast / ml_dtypes' astype).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_CONVERSION_ONNXTOLINALG_FLOAT8_H
#define KILN_PASSES_CONVERSION_ONNXTOLINALG_FLOAT8_H

#include "mlir/IR/Builders.h"

namespace kiln::onnx_to_linalg {

/// `value` (a scalar of 8-bit float type) as the f32 it stands for.
mlir::Value decodeFloat8(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value value);

/// The f32 `value` rounded to the 8-bit float type `type`. With `saturate`,
/// values beyond the type's largest finite value (infinities too) become that
/// value; without, they become infinity (E5M2) or NaN (the others). NaN stays
/// NaN.
mlir::Value encodeFloat8(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value value, mlir::FloatType type, bool saturate);

} // namespace kiln::onnx_to_linalg

#endif // KILN_PASSES_CONVERSION_ONNXTOLINALG_FLOAT8_H
