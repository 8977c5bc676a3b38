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

/// Whether `type` is the element type of table entry `onnxId`, of class `cls`
/// with `bytes` bytes per element.
bool matchesDtype(Type type, int32_t onnxId, int cls, unsigned bytes) {
  switch (cls) {
  case KILN_DTYPE_CLASS_FLOAT8:
    return type == makeFloat8(type.getContext(), onnxId);
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
