//===- SharedModelsTest.cpp - Import the reference models -----------------===//
//
// Imports the exporter-produced models of ../shared/models (when present; they are not part
// of the repository) with the real shape inference of dialects/ONNX/ShapeInference, and
// checks that every value has a static type and that the Shape/Gather chains folded away.
// Set KILN_SHARED_MODELS to another folder to use one.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/ModelImporter.h"
#include "dialects/ONNX/ONNXOps.h"
#include "dialects/ONNX/ShapeInference/ShapeInference.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/DebugStringHelper.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace mlir;

namespace {

std::string modelsDir() {
  if (const char *env = std::getenv("KILN_SHARED_MODELS"))
    return env;
  return KILN_SHARED_MODELS_DEFAULT;
}

class SharedModelsTest : public ::testing::TestWithParam<const char *> {};

TEST_P(SharedModelsTest, Imports) {
  llvm::SmallString<256> path(modelsDir());
  llvm::sys::path::append(path, GetParam());
  if (!llvm::sys::fs::exists(path))
    GTEST_SKIP() << path.str().str() << " is not present";

  DialectRegistry registry;
  kiln::onnx::registerShapeInferenceModels(registry);
  MLIRContext context(registry);
  std::string errors;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      errors += diag.str() + "\n";
    return success();
  });
  FailureOr<OwningOpRef<ModuleOp>> module =
      kiln::importOnnxModel(context, path, kiln::ImportOptions());
  ASSERT_TRUE(succeeded(module)) << errors;

  int shapeOps = 0, ops = 0;
  (*module)->walk([&](Operation *op) {
    if (op->getName().getStringRef() == "onnx.Shape")
      ++shapeOps;
    if (op->getDialect() && op->getDialect()->getNamespace() == "onnx")
      ++ops;
    for (Type t : op->getResultTypes()) {
      if (isa<NoneType>(t))
        continue;
      auto ranked = dyn_cast<RankedTensorType>(t);
      EXPECT_TRUE(ranked && ranked.hasStaticShape())
          << "non-static type " << debugString(t) << " on " << debugString(op->getLoc());
    }
  });
  EXPECT_GT(ops, 0);
  if (std::getenv("KILN_PRINT_IR"))
    (*module)->print(llvm::outs());
  EXPECT_EQ(shapeOps, 0) << "Shape ops were not folded";
}

INSTANTIATE_TEST_SUITE_P(Models, SharedModelsTest,
                         ::testing::Values("mobilenet_v2.onnx", "squeezenet1_1.onnx",
                                           "bert_mini.onnx"));

} // namespace
