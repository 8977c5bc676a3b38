//===- ExternalData.h - Safe reading of external tensor data ----*- C++ -*-===//
//
// Tensors stored outside the model (`data_location = EXTERNAL`) name a file relative to the
// model's folder. The path is checked before anything is read: no absolute path, no `..`
// component, and its canonical path (symlinks followed) must stay inside the model's
// canonical folder; the byte range must lie within the file.
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
