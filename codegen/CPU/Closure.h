//===- Closure.h - values handed to an outlined function on the stack -*- C++ -*-===//
//
// kiln-outline-parallel-loops and kiln-outline-serial-code move code out of
// a function into a new one that receives the values it uses from above as
// one `!llvm.ptr` to a stack struct: memref descriptors (in their LLVM
// form), integers (index as i64), floats and pointers. `pack` builds the
// struct at the call site, `unpack` rebuilds the values in the callee.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CPU_CLOSURE_H
#define KILN_CODEGEN_CPU_CLOSURE_H

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace kiln {

class Closure {
public:
  /// The closure of `values`; null (and nothing else to call) when one has a
  /// type a closure cannot hold: a memref `converter` cannot convert, or a
  /// type other than memref, index, integer, float or `!llvm.ptr`.
  static std::optional<Closure> get(llvm::ArrayRef<mlir::Value> values,
                                    const mlir::LLVMTypeConverter &converter);

  /// At `b`'s insertion point: a stack slot of the struct, each value stored
  /// in its field. Returns the slot's pointer.
  mlir::Value pack(mlir::OpBuilder &b, mlir::Location loc) const;

  /// At `b`'s insertion point: each value loaded from `closure` (a pointer
  /// to the struct) and rebuilt in its type, recorded in `mapping`.
  void unpack(mlir::OpBuilder &b, mlir::Location loc, mlir::Value closure,
              mlir::IRMapping &mapping) const;

  llvm::ArrayRef<mlir::Value> getValues() const { return values; }

private:
  llvm::SmallVector<mlir::Value> values;
  llvm::SmallVector<mlir::Type> fieldTypes;
  mlir::LLVM::LLVMStructType type;
};

/// Op without operands or regions that is cheaper to clone into an outlined
/// function than to pass: constants and `memref.get_global`.
bool isRematerializable(mlir::Operation *op);

} // namespace kiln

#endif // KILN_CODEGEN_CPU_CLOSURE_H
