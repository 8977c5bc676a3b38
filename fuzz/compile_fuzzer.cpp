//===- compile_fuzzer.cpp - libFuzzer target: ONNX bytes -> LLVM dialect --===//
//
// Imports the fuzz bytes as a model (as import_fuzzer.cpp does) and runs the
// passes of `kiln compile` on it in-process: the graph passes, ONNX -> linalg
// with the target support check (buildLoweringToTargetPipeline) and the CPU
// target's pipeline down to the LLVM dialect, then reads what the descriptor
// needs (getExecutableInfo). No LLVM IR, object or library is written: that
// part is slow and takes no input the passes have not checked. Small compile
// limits (Limits.h) keep one input fast. Every input must compile or fail
// with a diagnostic: a crash, an abort, a sanitizer report or a timeout is a
// bug.
//
//===----------------------------------------------------------------------===//

#include "codegen/Target.h"
#include "compiler/Pipeline.h"
#include "compiler/import/ModelImporter.h"
#include "dialects/ONNX/DataTypes.h"
#include "dialects/ONNX/Limits.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <unistd.h>

namespace {

struct Env {
  std::string dir, model;
  mlir::DialectRegistry registry;
  std::unique_ptr<kiln::TargetBackend> target;
  Env() {
    char tmpl[] = "/tmp/kiln_fuzz_compile-XXXXXX";
    if (!mkdtemp(tmpl))
      abort();
    dir = tmpl;
    model = dir + "/model.onnx";
    // 4 KiB of weights that external-data tensors may name.
    FILE *f = fopen((dir + "/weights.bin").c_str(), "wb");
    if (!f)
      abort();
    for (int i = 0; i < 4096; ++i)
      fputc(i * 7, f);
    fclose(f);
    kiln::registerCompilerDialects(registry);
    // Small limits: a tensor of 2^20 elements compiles in well under a second,
    // and what is over a limit must be rejected by a diagnostic anyway.
    kiln::CompileLimits limits;
    limits.maxTensorElements = int64_t(1) << 20;
    limits.maxTensorBytes = int64_t(1) << 23;
    limits.maxUnrolledSteps = 64;
    limits.maxTableElements = int64_t(1) << 16;
    limits.maxConstantBytes = int64_t(1) << 23;
    limits.maxSubgraphDepth = 8;
    kiln::setCompileLimits(limits);
    // A fixed target (not the host's CPU): an input behaves alike on every
    // machine, so a saved reproducer stays one.
    std::string error;
    target = kiln::createTargetBackend(
        "cpu", kiln::TargetOptions{"x86_64-unknown-linux-gnu", "x86-64-v3"},
        error);
    if (!target) {
      fprintf(stderr, "kiln_fuzz_compile: %s\n", error.c_str());
      abort();
    }
  }
};

/// What compiler/Pipeline.cpp's prepareEntry does before the passes: the
/// graph's values need static shapes and element types the descriptor can
/// name (otherwise `kiln compile` stops there with a diagnostic), and the
/// inputs are read-only.
bool prepareEntry(mlir::ModuleOp module) {
  auto entry = module.lookupSymbol<mlir::func::FuncOp>("main_graph");
  if (!entry)
    return false;
  auto describable = [](mlir::Type type) {
    auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
    return tensor && tensor.hasStaticShape() &&
           kiln::onnx::getOnnxDataType(tensor.getElementType()) != 0;
  };
  for (mlir::Type type : entry.getArgumentTypes())
    if (!describable(type))
      return false;
  for (mlir::Type type : entry.getResultTypes())
    if (!describable(type))
      return false;
  mlir::MLIRContext *context = module.getContext();
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    entry.removeArgAttr(i, "onnx.name");
    entry.setArgAttr(i, "bufferization.writable",
                     mlir::BoolAttr::get(context, false));
  }
  for (unsigned i = 0; i < entry.getNumResults(); ++i)
    entry.removeResultAttr(i, mlir::StringAttr::get(context, "onnx.name"));
  entry.setSymName("model_main");
  return true;
}

/// KILN_FUZZ_VERBOSE=1: print the diagnostics and how far each input got
/// (to check that the seeds reach the LLVM dialect, and to read a reproducer).
bool verbose() {
  static bool on = std::getenv("KILN_FUZZ_VERBOSE") != nullptr;
  return on;
}

int stop(const char *stage) {
  if (verbose())
    fprintf(stderr, "kiln_fuzz_compile: %s\n", stage);
  return 0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Env env;
  FILE *f = fopen(env.model.c_str(), "wb");
  if (!f)
    abort();
  fwrite(data, 1, size, f);
  fclose(f);
  mlir::MLIRContext context(env.registry,
                            mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &diag) {
    if (verbose())
      llvm::errs() << diag.getLocation() << ": " << diag << "\n";
    return mlir::success();
  });
  kiln::ImportOptions options;
  auto module = kiln::importOnnxModel(context, env.model, options);
  if (mlir::failed(module))
    return stop("import failed");
  if (!prepareEntry(module->get()))
    return stop("no static graph signature");
  // The pass managers of `kiln compile`, verified once at the end as there.
  mlir::PassManager front(&context), back(&context);
  front.enableVerifier(false);
  back.enableVerifier(false);
  kiln::buildLoweringToTargetPipeline(front, *env.target);
  env.target->buildPipeline(back);
  if (mlir::failed(front.run(module->get())))
    return stop("lowering to linalg failed");
  if (mlir::failed(back.run(module->get())))
    return stop("target passes failed");
  if (mlir::failed(mlir::verify(module->get())))
    return stop("the result does not verify");
  kiln::ExecutableInfo info = env.target->getExecutableInfo(module->get());
  (void)info;
  return stop("compiled to the LLVM dialect");
}
