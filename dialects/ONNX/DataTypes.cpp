//===- DataTypes.cpp - ONNX element types <-> MLIR element types ----------===//

#include "dialects/ONNX/DataTypes.h"

#include "runtime/include/kiln/model_abi.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

using namespace mlir;

namespace kiln::onnx {

namespace {

/// Whether `type` is the element type of a table entry of class `cls` with
/// `bytes` bytes per element.
bool matchesDtype(Type type, int cls, unsigned bytes) {
  switch (cls) {
  case KILN_DTYPE_CLASS_FLOAT:
    return isa<FloatType>(type) && !type.isBF16() &&
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

Type makeDtype(MLIRContext *context, int cls, unsigned bytes) {
  switch (cls) {
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
  // Float8 types are FloatTypes of 8 bits: no table entry has CLASS_FLOAT
  // with 1 byte, so they fall through to 0.
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  if (matchesDtype(elementType, CLASS, BYTES))                                 \
    return ID;
  KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  return 0;
}

Type getElementTypeOfOnnxDataType(MLIRContext *context, int32_t dataType) {
  switch (dataType) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  case ID:                                                                     \
    return makeDtype(context, CLASS, BYTES);
    KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  }
  return Type();
}

} // namespace kiln::onnx
