//===- DataTypes.cpp - ONNX element types <-> MLIR element types ----------===//

#include "dialects/ONNX/DataTypes.h"

#include "runtime/include/kiln/model_abi.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

using namespace mlir;

namespace kiln::onnx {

namespace {

/// The MLIR type of an 8-bit float format (KILN_DTYPE_CLASS_FLOAT8), by its
/// ONNX TensorProto.DataType.
Type makeFloat8(MLIRContext *context, int32_t onnxId) {
  switch (onnxId) {
  case KILN_DTYPE_FLOAT8E4M3FN:
    return Float8E4M3FNType::get(context);
  case KILN_DTYPE_FLOAT8E4M3FNUZ:
    return Float8E4M3FNUZType::get(context);
  case KILN_DTYPE_FLOAT8E5M2:
    return Float8E5M2Type::get(context);
  case KILN_DTYPE_FLOAT8E5M2FNUZ:
    return Float8E5M2FNUZType::get(context);
  }
  return Type();
}

/// Bits per element of a packed dtype (KILN_DTYPE_PACKED_TABLE), else 0.
unsigned packedBits(int32_t onnxId) {
  switch (onnxId) {
#define KILN_X(NAME, BITS)                                                     \
  case KILN_DTYPE_##NAME:                                                      \
    return BITS;
    KILN_DTYPE_PACKED_TABLE(KILN_X)
#undef KILN_X
  }
  return 0;
}

/// Whether `type` is the element type of table entry `onnxId`, of class `cls`
/// with `bytes` bytes per element.
bool matchesDtype(Type type, int32_t onnxId, int cls, unsigned bytes) {
  switch (cls) {
  case KILN_DTYPE_CLASS_FLOAT8:
    return type == makeFloat8(type.getContext(), onnxId);
  case KILN_DTYPE_CLASS_PACKED_SIGNED:
    return type.isInteger(packedBits(onnxId)) && !type.isUnsignedInteger();
  case KILN_DTYPE_CLASS_PACKED_UNSIGNED:
    return type.isUnsignedInteger(packedBits(onnxId));
  case KILN_DTYPE_CLASS_FLOAT4:
    return isa<Float4E2M1FNType>(type);
  case KILN_DTYPE_CLASS_FLOAT8E8M0:
    return isa<Float8E8M0FNUType>(type);
  case KILN_DTYPE_CLASS_FLOAT:
    return isa<Float16Type, Float32Type, Float64Type>(type) &&
           type.getIntOrFloatBitWidth() == 8 * bytes;
  case KILN_DTYPE_CLASS_BFLOAT:
    return type.isBF16();
  case KILN_DTYPE_CLASS_BOOL:
    return type.isInteger(1);
  case KILN_DTYPE_CLASS_SIGNED:
    return type.isInteger(8 * bytes) && !type.isUnsignedInteger();
  case KILN_DTYPE_CLASS_UNSIGNED:
    return type.isUnsignedInteger(8 * bytes);
  }
  return false;
}

Type makeDtype(MLIRContext *context, int32_t onnxId, int cls, unsigned bytes) {
  switch (cls) {
  case KILN_DTYPE_CLASS_FLOAT8:
    return makeFloat8(context, onnxId);
  case KILN_DTYPE_CLASS_PACKED_SIGNED:
    return IntegerType::get(context, packedBits(onnxId));
  case KILN_DTYPE_CLASS_PACKED_UNSIGNED:
    return IntegerType::get(context, packedBits(onnxId), IntegerType::Unsigned);
  case KILN_DTYPE_CLASS_FLOAT4:
    return Float4E2M1FNType::get(context);
  case KILN_DTYPE_CLASS_FLOAT8E8M0:
    return Float8E8M0FNUType::get(context);
  case KILN_DTYPE_CLASS_FLOAT:
    return bytes == 2   ? Type(Float16Type::get(context))
           : bytes == 4 ? Type(Float32Type::get(context))
                        : Type(Float64Type::get(context));
  case KILN_DTYPE_CLASS_BFLOAT:
    return BFloat16Type::get(context);
  case KILN_DTYPE_CLASS_BOOL:
    return IntegerType::get(context, 1);
  case KILN_DTYPE_CLASS_SIGNED:
    return IntegerType::get(context, 8 * bytes);
  case KILN_DTYPE_CLASS_UNSIGNED:
    return IntegerType::get(context, 8 * bytes, IntegerType::Unsigned);
  }
  return Type();
}

} // namespace

int32_t getOnnxDataType(Type elementType) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  if (matchesDtype(elementType, ID, CLASS, BYTES))                             \
    return ID;
  KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  return 0;
}

bool isFloat8Type(Type elementType) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  if (CLASS == KILN_DTYPE_CLASS_FLOAT8 &&                                      \
      matchesDtype(elementType, ID, CLASS, BYTES))                             \
    return true;
  KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  return false;
}

bool isStorageOnlyType(Type elementType) {
  switch (getOnnxDataType(elementType)) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  case ID:                                                                     \
    return CLASS == KILN_DTYPE_CLASS_PACKED_SIGNED ||                          \
           CLASS == KILN_DTYPE_CLASS_PACKED_UNSIGNED ||                        \
           CLASS == KILN_DTYPE_CLASS_FLOAT4 ||                                 \
           CLASS == KILN_DTYPE_CLASS_FLOAT8E8M0;
    KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  }
  return false;
}

unsigned getPackedBits(Type elementType) {
  return packedBits(getOnnxDataType(elementType));
}

Type getElementTypeOfOnnxDataType(MLIRContext *context, int32_t dataType) {
  switch (dataType) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  case ID:                                                                     \
    return makeDtype(context, ID, CLASS, BYTES);
    KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  }
  return Type();
}

} // namespace kiln::onnx
