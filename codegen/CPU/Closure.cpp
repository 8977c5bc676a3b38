//===- Closure.cpp - values handed to an outlined function on the stack ---===//

#include "codegen/CPU/Closure.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace kiln {

bool isRematerializable(Operation *op) {
  return op && op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         (op->hasTrait<OpTrait::ConstantLike>() ||
          isa<memref::GetGlobalOp>(op));
}

std::optional<Closure> Closure::get(ArrayRef<Value> values,
                                    const LLVMTypeConverter &converter) {
  Closure closure;
  for (Value value : values) {
    Type type = value.getType();
    if (!isa<MemRefType, IndexType, IntegerType, FloatType,
             LLVM::LLVMPointerType>(type))
      return std::nullopt;
    Type field = converter.convertType(type);
    if (!field)
      return std::nullopt;
    closure.values.push_back(value);
    closure.fieldTypes.push_back(field);
  }
  MLIRContext *ctx = &converter.getContext();
  // An empty struct is given one i64 field: an alloca of a sized type.
  closure.type = LLVM::LLVMStructType::getLiteral(
      ctx, closure.fieldTypes.empty()
               ? SmallVector<Type>{IntegerType::get(ctx, 64)}
               : closure.fieldTypes);
  return closure;
}

Value Closure::pack(OpBuilder &b, Location loc) const {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  Value one = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                       b.getI64IntegerAttr(1));
  Value slot0 = LLVM::AllocaOp::create(b, loc, ptrType, type, one);
  for (auto [i, value] : llvm::enumerate(values)) {
    Value field = value;
    if (isa<MemRefType>(value.getType()))
      field = UnrealizedConversionCastOp::create(b, loc, fieldTypes[i], value)
                  .getResult(0);
    else if (isa<IndexType>(value.getType()))
      field = arith::IndexCastOp::create(b, loc, fieldTypes[i], value);
    Value slot = LLVM::GEPOp::create(
        b, loc, ptrType, type, slot0,
        ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    LLVM::StoreOp::create(b, loc, field, slot);
  }
  return slot0;
}

void Closure::unpack(OpBuilder &b, Location loc, Value closure,
                     IRMapping &mapping) const {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  for (auto [i, value] : llvm::enumerate(values)) {
    Value slot = LLVM::GEPOp::create(
        b, loc, ptrType, type, closure,
        ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    Value field = LLVM::LoadOp::create(b, loc, fieldTypes[i], slot);
    Value rebuilt;
    if (isa<MemRefType>(value.getType()))
      rebuilt =
          UnrealizedConversionCastOp::create(b, loc, value.getType(), field)
              .getResult(0);
    else if (isa<IndexType>(value.getType()))
      rebuilt = arith::IndexCastOp::create(b, loc, value.getType(), field);
    else
      rebuilt = field;
    mapping.map(value, rebuilt);
  }
}

} // namespace kiln
