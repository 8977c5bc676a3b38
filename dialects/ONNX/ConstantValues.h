//===- ConstantValues.h - Reading constant operands -------------*- C++ -*-===//
//
// Helpers for shape inference, folders and lowering to read small constant
// operands, whether stored inline (DenseElementsAttr) or as resource blobs
// (DenseResourceElementsAttr).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_CONSTANTVALUES_H
#define KILN_DIALECTS_ONNX_CONSTANTVALUES_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace kiln::onnx {

/// The constant behind `value`: the `value` of an onnx.Constant, or the
/// attribute of any other ConstantLike op whose folded value is an
/// ElementsAttr. Null when not a constant.
mlir::ElementsAttr getConstantAttr(mlir::Value value);

/// The elements of an integer-typed ElementsAttr (any width; signless read as
/// signed, uiN and i1 as unsigned), flattened in row-major order. std::nullopt
/// for non-integer types, unreadable blobs, or unsigned values above INT64_MAX.
std::optional<llvm::SmallVector<int64_t>> getIntValues(mlir::ElementsAttr attr);

/// The elements of a float-typed ElementsAttr (f16, bf16, f32, f64, ...) as
/// doubles.
std::optional<llvm::SmallVector<double>>
getFloatValues(mlir::ElementsAttr attr);

/// getIntValues / getFloatValues of the constant behind `value`.
std::optional<llvm::SmallVector<int64_t>>
getConstantIntValues(mlir::Value value);
std::optional<llvm::SmallVector<double>>
getConstantFloatValues(mlir::Value value);

/// The constant behind `value` as integers: an integer constant's values, or
/// a float constant's values truncated toward zero (ONNX lets shape-like
/// inputs of some ops be floats); nullopt when not constant or a float is not
/// finite or beyond +-9e18.
std::optional<llvm::SmallVector<int64_t>>
getConstantIntegralValues(mlir::Value value);

/// `attr` as an inline DenseElementsAttr (a DenseResourceElementsAttr is
/// decoded; an inline one returned as is). Null for non-int/float element
/// types, dynamic shapes, unreadable blobs, or more than `maxElements`
/// elements.
mlir::DenseElementsAttr toDenseElements(mlir::ElementsAttr attr,
                                        int64_t maxElements);

/// True for a `none`-typed value: an absent optional input (made by
/// onnx.NoValue).
bool isNoneValue(mlir::Value value);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_CONSTANTVALUES_H
