//===- SubByte.h - int4, uint4, int2, uint2, float4e2m1, float8e8m0 -*- C++ -*-===//
//
// ONNX's packed types (INT4, UINT4, INT2, UINT2, FLOAT4E2M1) and the MX scale
// type FLOAT8E8M0 are storage formats: kiln moves and converts them (Cast,
// CastLike, and QuantizeLinear / DequantizeLinear through them), never computes
// with them. convert-onnx-to-linalg stores each element in one i8:
//   int4, int2     the value, sign-extended;
//   uint4, uint2   the value, zero-extended;
//   float4e2m1     the 4-bit code (sign in bit 3);
//   float8e8m0     the byte.
// Graph inputs and outputs of a packed type cross the ABI packed
// (model_abi.h: ceil(n * bits / 8) bytes, low bits first); packEntryBoundary
// unpacks the inputs and packs the outputs of the entry function.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_CONVERSION_ONNXTOLINALG_SUBBYTE_H
#define KILN_PASSES_CONVERSION_ONNXTOLINALG_SUBBYTE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringRef.h"

namespace kiln::onnx_to_linalg {

/// `value` (the i8 storage of an element of storage-only type `type`) as a
/// value to convert from: int4/int2/uint4/uint2 stay i8 (their signedness is
/// `type`'s), float4e2m1 and float8e8m0 become the f32 they stand for (exact).
mlir::Value decodeStorageOnly(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value value, mlir::Type type);

/// `value` (an integer, unsigned when `isUnsigned`, or a float of any width)
/// converted to the i8 storage of storage-only type `type`, as ONNX's
/// reference (ml_dtypes) casts:
///   to int4/int2/uint4/uint2: floats truncate toward zero (NaN, infinities
///     and |x| >= 2^63 give 0), then, like integers, wrap modulo 2^bits;
///   to float4e2m1: rounded to nearest even, saturated to +-6 (infinities
///     too), NaN to a zero;
///   to float8e8m0: the exponent of |x|, rounded per `roundMode` ("up",
///     "down", "nearest"); with `saturate` an exponent past 254 stays 254
///     (infinities too), without it is 255 (NaN). NaN is 255.
mlir::Value encodeStorageOnly(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value value, bool isUnsigned,
                              mlir::Type type, bool saturate,
                              llvm::StringRef roundMode);

/// The graph functions' arguments and results of a packed type, recorded
/// before conversion (their types are i8 tensors after it).
struct PackedBoundary {
  struct Function {
    std::string name;
    llvm::SmallVector<unsigned> argBits, resultBits; ///< 0: not packed
    llvm::SmallVector<bool> argSigned; ///< int4 / int2 (sign-extended)
  };
  llvm::SmallVector<Function> functions;
};
PackedBoundary findPackedBoundary(mlir::ModuleOp module);

/// After conversion: each recorded function takes and returns the packed
/// bytes (tensor<ceil(n * bits / 8) x i8>) instead of one i8 per element,
/// unpacking and packing at its boundary. Fails (naming the graph value) for
/// a packed value with symbolic dims.
mlir::LogicalResult packEntryBoundary(mlir::ModuleOp module,
                                      const PackedBoundary &boundary);

} // namespace kiln::onnx_to_linalg

#endif // KILN_PASSES_CONVERSION_ONNXTOLINALG_SUBBYTE_H
