//===- Commands.h - the verbs of the kiln command line ----------*- C++ -*-===//
//
// kiln.cpp dispatches on the verb; each verb beyond `compile` lives in its own
// file (Check.cpp, Verify.cpp). Helpers they share are declared here.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_COMMANDS_H
#define KILN_TOOLS_KILN_COMMANDS_H

#include "compiler/Options.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln::tool {

/// Parses `--shape NAME=D0,D1,...` into `options.inputShapes`.
bool parseShape(llvm::StringRef spec, CompileOptions &options,
                std::string &error);

/// Checks the repeated `--device` flags (`options.devices`): no device kind
/// twice. Sets `options.device` to the first; clears `devices` when it names
/// one device only (an ordinary single-device compile).
bool checkDevices(CompileOptions &options, std::string &error);

/// Prints `kiln: error: <message>` (and attached notes) to stderr.
void printDiagnostic(mlir::Diagnostic &diag);

/// `kiln check MODEL.onnx [--device D] [--shape ...]`: what kiln can compile,
/// node by node, without compiling. Exit code 0 when everything is supported.
int runCheck(llvm::ArrayRef<llvm::StringRef> args);

/// `kiln verify MODEL.onnx [...]`: compiles, runs kiln and onnxruntime on the
/// same inputs and bisects a mismatch (python/kiln/verify.py does the work).
int runVerify(const char *argv0, llvm::ArrayRef<llvm::StringRef> args);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_COMMANDS_H
