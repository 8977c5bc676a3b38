//===- kiln-opt.cpp - MLIR optimizer driver for kiln ----------------------===//
//
// mlir-opt with kiln's dialects and passes, used by the lit tests.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/NVVM/NVVMTargetBackend.h"
#include "codegen/GPU/ROCDL/ROCDLTargetBackend.h"
#include "codegen/GPU/Passes.h"
#include "codegen/Passes.h"
#include "dialects/Kiln/KilnDialect.h"
#include "dialects/ONNX/ONNXOps.h"
#include "dialects/ONNX/ShapeInference/ShapeInference.h"
#include "passes/Conversion/Passes.h"
#include "passes/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace {

//===----------------------------------------------------------------------===//
// kiln registration: add kiln's dialects, interface models and passes here.
//===----------------------------------------------------------------------===//
void registerKiln(mlir::DialectRegistry &registry) {
  registry.insert<kiln::onnx::ONNXDialect, kiln::KilnDialect>();
  kiln::registerKilnCodegenPasses();
  kiln::registerKilnGPUPasses();
  kiln::registerNVVMPipelines();
  kiln::registerROCDLPipelines();
  kiln::registerKilnConversionPasses();
  kiln::onnx::registerShapeInferenceModels(registry);
  kiln::registerKilnTransformsPasses();
}

} // namespace

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllPasses();
  registerKiln(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kiln optimizer driver\n", registry));
}
