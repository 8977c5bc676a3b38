//===- import_fuzzer.cpp - libFuzzer target: ONNX bytes -> onnx dialect ---===//
//
// Writes the fuzz bytes as a model file in a private folder (beside a small
// external-data file, so tensors that name it are read) and imports it with
// importOnnxModel, shape inference included, as `kiln compile` does. Every
// input must import or fail with a diagnostic: a crash, an abort, a
// sanitizer report or a timeout is a bug.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipeline.h"
#include "compiler/import/ModelImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <unistd.h>

namespace {

struct Env {
  std::string dir, model;
  mlir::DialectRegistry registry;
  Env() {
    char tmpl[] = "/tmp/kiln_fuzz_import-XXXXXX";
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
  }
};

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
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  kiln::ImportOptions options;
  auto module = kiln::importOnnxModel(context, env.model, options);
  (void)module;
  return 0;
}
