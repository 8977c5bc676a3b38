//===- ExecContextABI.h - the exec context header in LLVM types -*- C++ -*-===//
//
// Generated code reaches the runtime's thread pool through the header every
// `kiln_exec_context` starts with (`kiln_exec_context_header` in
// runtime/include/kiln/parallel.h). Its LLVM type is built here and only here;
// test/unit/codegen checks its layout against the C struct.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CPU_EXECCONTEXTABI_H
#define KILN_CODEGEN_CPU_EXECCONTEXTABI_H

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace kiln {

/// Field indices of `kiln_exec_context_header`, in declaration order.
enum class ExecContextHeaderField : int32_t {
  Version = 0,     ///< uint32_t version
  NumThreads = 1,  ///< int32_t num_threads
  ParallelFor = 2, ///< void (*parallel_for)(context, n, body, closure)
};

/// `!llvm.struct<(i32, i32, ptr)>`: the header's LLVM type.
mlir::LLVM::LLVMStructType getExecContextHeaderType(mlir::MLIRContext *context);

/// The type of the header's `parallel_for`:
/// `void (kiln_exec_context *, int64_t n, kiln_parallel_body_fn, void *)`.
mlir::LLVM::LLVMFunctionType getParallelForType(mlir::MLIRContext *context);

/// `kiln_parallel_body_fn`, `void (void *closure, int64_t begin, int64_t
/// end)`, as the type of the func.func that implements a loop body.
mlir::FunctionType getParallelBodyType(mlir::MLIRContext *context);

} // namespace kiln

#endif // KILN_CODEGEN_CPU_EXECCONTEXTABI_H
