//===- DataTypesTest.cpp - the ONNX dtype <-> element type mapping --------===//
//
// dialects/ONNX/DataTypes.cpp is generated from model_abi.h's dtype table;
// these tests pin the mapping the importer, the descriptor and the runtime
// agree on.
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/DataTypes.h"

#include "runtime/include/kiln/model_abi.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using kiln::onnx::getElementTypeOfOnnxDataType;
using kiln::onnx::getOnnxDataType;
using kiln::onnx::getPackedBits;
using kiln::onnx::isStorageOnlyType;

TEST(DataTypes, EveryTableEntryRoundTrips) {
  MLIRContext context;
  int entries = 0;
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  {                                                                            \
    Type type = getElementTypeOfOnnxDataType(&context, ID);                    \
    ASSERT_TRUE(type) << STR;                                                  \
    EXPECT_EQ(getOnnxDataType(type), ID) << STR;                               \
    unsigned bits = type.isInteger(1) ? 8 : type.getIntOrFloatBitWidth();      \
    unsigned packed = getPackedBits(type);                                     \
    EXPECT_EQ(bits, packed ? packed : 8u * BYTES) << STR;                      \
    ++entries;                                                                 \
  }
  KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  EXPECT_EQ(entries, 23);
}

TEST(DataTypes, ImportedElementTypes) {
  MLIRContext context;
  auto ctx = &context;
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 1), Float32Type::get(ctx));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 7), IntegerType::get(ctx, 64));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 2),
            IntegerType::get(ctx, 8, IntegerType::Unsigned));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 9), IntegerType::get(ctx, 1));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 16), BFloat16Type::get(ctx));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 17), Float8E4M3FNType::get(ctx));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 18), Float8E4M3FNUZType::get(ctx));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 19), Float8E5M2Type::get(ctx));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 20), Float8E5M2FNUZType::get(ctx));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 21),
            IntegerType::get(ctx, 4, IntegerType::Unsigned));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 22), IntegerType::get(ctx, 4));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 23), Float4E2M1FNType::get(ctx));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 24), Float8E8M0FNUType::get(ctx));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 25),
            IntegerType::get(ctx, 2, IntegerType::Unsigned));
  EXPECT_EQ(getElementTypeOfOnnxDataType(ctx, 26), IntegerType::get(ctx, 2));
  // Stored and converted only; packed at the ABI (all but float8e8m0).
  for (int32_t id : {21, 22, 23, 24, 25, 26})
    EXPECT_TRUE(isStorageOnlyType(getElementTypeOfOnnxDataType(ctx, id))) << id;
  EXPECT_EQ(getPackedBits(getElementTypeOfOnnxDataType(ctx, 22)), 4u);
  EXPECT_EQ(getPackedBits(getElementTypeOfOnnxDataType(ctx, 25)), 2u);
  EXPECT_EQ(getPackedBits(getElementTypeOfOnnxDataType(ctx, 24)), 0u);
  EXPECT_FALSE(isStorageOnlyType(IntegerType::get(ctx, 8)));
  EXPECT_FALSE(isStorageOnlyType(IntegerType::get(ctx, 1)));
  EXPECT_FALSE(isStorageOnlyType(Float8E4M3FNType::get(ctx)));
  // string, complex64, float6: no kiln dtype.
  for (int32_t id : {0, 8, 14, 27, 28, 1000, -1})
    EXPECT_FALSE(getElementTypeOfOnnxDataType(ctx, id)) << id;
}

TEST(DataTypes, SignednessAndUnsupportedTypes) {
  MLIRContext context;
  auto ctx = &context;
  // Signless and signed integers are ONNX's signed types.
  EXPECT_EQ(getOnnxDataType(IntegerType::get(ctx, 32)), 6);
  EXPECT_EQ(getOnnxDataType(IntegerType::get(ctx, 32, IntegerType::Signed)), 6);
  EXPECT_EQ(getOnnxDataType(IntegerType::get(ctx, 16, IntegerType::Unsigned)), 4);
  EXPECT_EQ(getOnnxDataType(Float16Type::get(ctx)), 10);
  EXPECT_EQ(getOnnxDataType(Float64Type::get(ctx)), 11);
  EXPECT_EQ(getOnnxDataType(Float8E4M3FNType::get(ctx)), 17);
  EXPECT_EQ(getOnnxDataType(Float8E5M2FNUZType::get(ctx)), 20);
  EXPECT_EQ(getOnnxDataType(Float8E8M0FNUType::get(ctx)), 24);
  EXPECT_FALSE(kiln::onnx::isFloat8Type(Float8E8M0FNUType::get(ctx)));
  EXPECT_EQ(getOnnxDataType(Float8E4M3Type::get(ctx)), 0);
  EXPECT_TRUE(kiln::onnx::isFloat8Type(Float8E5M2Type::get(ctx)));
  EXPECT_FALSE(kiln::onnx::isFloat8Type(Float8E4M3Type::get(ctx)));
  EXPECT_FALSE(kiln::onnx::isFloat8Type(IntegerType::get(ctx, 8)));
  EXPECT_EQ(getOnnxDataType(IntegerType::get(ctx, 4)), 22);
  EXPECT_EQ(getOnnxDataType(IntegerType::get(ctx, 2, IntegerType::Unsigned)), 25);
  EXPECT_EQ(getOnnxDataType(IntegerType::get(ctx, 3)), 0);
  EXPECT_EQ(getOnnxDataType(IndexType::get(ctx)), 0);
}
