//===- DataTypes.h - ONNX element types <-> MLIR element types --*- C++ -*-===//
//
// The one mapping between ONNX's TensorProto.DataType numbers and the MLIR
// element types of the onnx dialect (docs/architecture.md), generated from the
// dtype table of runtime/include/kiln/model_abi.h, which the runtime, the
// descriptor and kiln-run expand too: a dtype added there is known everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECTS_ONNX_DATATYPES_H
#define KILN_DIALECTS_ONNX_DATATYPES_H

#include "mlir/IR/Types.h"

#include <cstdint>

namespace kiln::onnx {

/// The ONNX TensorProto.DataType of an element type, or 0 when kiln has no
/// dtype for it (signless integers count as signed, i1 as bool).
int32_t getOnnxDataType(mlir::Type elementType);

/// Whether `elementType` is one of the 8-bit float formats of the dtype table
/// (KILN_DTYPE_CLASS_FLOAT8): stored and converted, never computed with.
bool isFloat8Type(mlir::Type elementType);

/// Whether `elementType` is int4, uint4, int2, uint2 (the onnx dialect's
/// i4/ui4/i2/ui2), float4e2m1 (f4E2M1FN) or float8e8m0 (f8E8M0FNU): kiln
/// stores them one per byte (convert-onnx-to-linalg: i8), moves and converts
/// them, never computes with them.
bool isStorageOnlyType(mlir::Type elementType);

/// Bits per element of a packed dtype (KILN_DTYPE_PACKED_TABLE: 4 or 2) as the
/// ABI and ONNX's raw_data hold it; 0 for every other type.
unsigned getPackedBits(mlir::Type elementType);

/// The element type of an ONNX TensorProto.DataType, or null when kiln has no
/// dtype for it (string, complex, float6, ...).
mlir::Type getElementTypeOfOnnxDataType(mlir::MLIRContext *context,
                                        int32_t dataType);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_DATATYPES_H
