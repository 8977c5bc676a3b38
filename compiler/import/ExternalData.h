//===- ExternalData.h - Safe reading of external tensor data ----*- C++ -*-===//
//
// Tensors stored outside the model (`data_location = EXTERNAL`) name a file relative to the
// model's folder. The path is checked before anything is read: no absolute path, no `..`
// component; the file is then opened component by component from the model's folder
// (openat with O_NOFOLLOW, so no symlink is followed and nothing can swap one in between
// a check and the open), must be a regular file (fstat of the opened file), and the byte
// range must lie within it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_EXTERNALDATA_H
#define KILN_COMPILER_IMPORT_EXTERNALDATA_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace kiln::import {

/// Reads the `dest.size()` bytes of `tensor`'s external data into `dest`.
/// `modelDir` is the model file's canonical folder. `emitError` starts an error about the
/// tensor (the message then names the tensor and the path).
mlir::LogicalResult
readExternalData(const onnx::TensorProto &tensor, llvm::StringRef modelDir,
                 llvm::MutableArrayRef<char> dest,
                 llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

} // namespace kiln::import

#endif // KILN_COMPILER_IMPORT_EXTERNALDATA_H
