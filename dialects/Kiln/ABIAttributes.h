//===- ABIAttributes.h - the kiln dialect's ABI attributes ------*- C++ -*-===//
//
// The discardable attributes through which kiln's passes, the compiler driver
// and the C ABI agree (declared in KilnDialect.td, verified by the dialect).
// Passes read and write them only through these helpers, never by spelling
// the names.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECTS_KILN_ABIATTRIBUTES_H
#define KILN_DIALECTS_KILN_ABIATTRIBUTES_H

#include "dialects/Kiln/KilnDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <optional>
#include <string>

namespace kiln {

//===----------------------------------------------------------------------===//
// kiln.parallel: an scf.parallel over [0, n), step 1, run over the thread pool
//===----------------------------------------------------------------------===//

/// Whether `op` is marked to run over the runtime's thread pool.
bool isParallelLoop(mlir::Operation *op);
/// Marks `loop` (a one-dimensional scf.parallel over [0, n) with step 1 and
/// no reductions, as the verifier demands) for the thread pool.
void setParallelLoop(mlir::Operation *loop);
/// Drops the mark (the loop then runs sequentially); no-op when absent.
void clearParallelLoop(mlir::Operation *loop);

//===----------------------------------------------------------------------===//
// kiln.storage_only: code converting int4/uint4/int2/uint2/float4e2m1/
// float8e8m0 (held as i8 by convert-onnx-to-linalg; GPU targets refuse it)
//===----------------------------------------------------------------------===//

void markStorageOnlyConversion(mlir::Operation *op);
bool isStorageOnlyConversion(mlir::Operation *op);

//===----------------------------------------------------------------------===//
// kiln.scratch: the function argument holding the scratch arena
//===----------------------------------------------------------------------===//

/// The argument attribute dictionary of a scratch arena argument.
mlir::DictionaryAttr getScratchArgumentAttrs(mlir::MLIRContext *context);
/// Whether argument `index` of `func` is the scratch arena.
bool isScratchArgument(mlir::FunctionOpInterface func, unsigned index);
/// Drops the mark from argument `index`; no-op when absent.
void clearScratchArgument(mlir::FunctionOpInterface func, unsigned index);

//===----------------------------------------------------------------------===//
// kiln.scratch_size / kiln.check_messages: what the descriptor records
//===----------------------------------------------------------------------===//

/// The scratch arena's size in bytes, when kiln-plan-memory planned one.
std::optional<int64_t> getScratchSize(mlir::ModuleOp module);
void setScratchSize(mlir::ModuleOp module, int64_t bytes);

/// The run-time checks' messages: check N's at position N - 1.
llvm::SmallVector<std::string> getCheckMessages(mlir::ModuleOp module);
void setCheckMessages(mlir::ModuleOp module,
                      llvm::ArrayRef<mlir::StringAttr> messages);

//===----------------------------------------------------------------------===//
// kiln.kernels: the outlined parallel loops, for profiles
//===----------------------------------------------------------------------===//

/// One outlined parallel loop: its body function and the ONNX nodes it runs.
struct KernelName {
  std::string symbol;
  std::string nodes;
};
llvm::SmallVector<KernelName> getKernelNames(mlir::ModuleOp module);
void addKernelName(mlir::ModuleOp module, llvm::StringRef symbol,
                   llvm::StringRef nodes);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_ABIATTRIBUTES_H
