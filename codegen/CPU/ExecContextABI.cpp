//===- ExecContextABI.cpp - the exec context's header, in LLVM types ------===//

#include "codegen/CPU/ExecContextABI.h"

using namespace mlir;

namespace kiln {

LLVM::LLVMStructType getExecContextHeaderType(MLIRContext *context) {
  Type i32 = IntegerType::get(context, 32);
  Type ptr = LLVM::LLVMPointerType::get(context);
  // In the order of ExecContextHeaderField.
  return LLVM::LLVMStructType::getLiteral(context, {i32, i32, ptr});
}

LLVM::LLVMFunctionType getParallelForType(MLIRContext *context) {
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = IntegerType::get(context, 64);
  return LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                     {ptr, i64, ptr, ptr});
}

FunctionType getParallelBodyType(MLIRContext *context) {
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = IntegerType::get(context, 64);
  return FunctionType::get(context, {ptr, i64, i64}, {});
}

} // namespace kiln
