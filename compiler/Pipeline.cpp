//===- Pipeline.cpp - the stages of `kiln compile`, wired together --------===//

#include "compiler/Pipeline.h"

#include "codegen/Passes.h"
#include "codegen/Target.h"
#include "compiler/Packaging.h"
#include "compiler/import/ModelImporter.h"
#include "dialects/Kiln/KilnDialect.h"
#include "dialects/ONNX/DataTypes.h"
#include "dialects/ONNX/Limits.h"
#include "dialects/ONNX/ONNXDialect.h"
#include "dialects/ONNX/ShapeInference/ShapeInference.h"
#include "passes/Conversion/Passes.h"
#include "passes/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/IR/TensorTilingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdlib>

using namespace mlir;

namespace kiln {

void registerCompilerDialects(DialectRegistry &registry) {
  registry.insert<onnx::ONNXDialect, KilnDialect, affine::AffineDialect,
                  arith::ArithDialect, bufferization::BufferizationDialect,
                  cf::ControlFlowDialect, func::FuncDialect,
                  linalg::LinalgDialect, LLVM::LLVMDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect, vector::VectorDialect>();
  onnx::registerShapeInferenceModels(registry);
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerTilingInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerTilingInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);
  func::registerInlinerExtension(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

namespace {

LogicalResult describeTensor(Location loc, Type type, StringAttr name,
                             TensorInfo &info) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  info.name = name ? name.str() : std::string();
  if (!tensor || !tensor.hasStaticShape())
    return emitError(loc) << "graph value '" << info.name
                          << "' does not have a static shape";
  info.dtype = onnx::getOnnxDataType(tensor.getElementType());
  if (!info.dtype)
    return emitError(loc) << "graph value '" << info.name
                          << "' has unsupported element type "
                          << tensor.getElementType();
  info.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  return success();
}

/// Finds the imported graph function, renames it to `<prefix>_main`, marks
/// its inputs read-only (they are caller-owned) and records its signature.
FailureOr<func::FuncOp> prepareEntry(ModuleOp module, ModelInfo &info) {
  auto entry = module.lookupSymbol<func::FuncOp>("main_graph");
  if (!entry)
    return module.emitError("the imported module has no @main_graph");
  if (auto producer = module->getAttrOfType<StringAttr>("onnx.producer"))
    info.producer = producer.str();
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    TensorInfo tensor;
    if (failed(describeTensor(entry.getLoc(), entry.getArgumentTypes()[i],
                              entry.getArgAttrOfType<StringAttr>(i, "onnx.name"),
                              tensor)))
      return failure();
    info.inputs.push_back(std::move(tensor));
    // Names live in the descriptor; LLVM has no use for them.
    entry.removeArgAttr(i, "onnx.name");
    entry.setArgAttr(i, "bufferization.writable",
                     BoolAttr::get(module.getContext(), false));
  }
  for (unsigned i = 0; i < entry.getNumResults(); ++i) {
    TensorInfo tensor;
    if (failed(describeTensor(
            entry.getLoc(), entry.getResultTypes()[i],
            entry.getResultAttrOfType<StringAttr>(i, "onnx.name"), tensor)))
      return failure();
    info.outputs.push_back(std::move(tensor));
    entry.removeResultAttr(i, StringAttr::get(module.getContext(), "onnx.name"));
  }
  entry.setSymName(info.prefix + "_main");
  return entry;
}

} // namespace

LogicalResult compileModel(MLIRContext &context,
                           const CompileOptions &options) {
  Location fileLoc = FileLineColLoc::get(&context, options.modelPath, 0, 0);
  auto fail = [&](const Twine &message) {
    emitError(fileLoc) << message;
    return failure();
  };

  setCompileLimits(options.limits);
  ImportOptions importOptions;
  for (const auto &entry : options.inputShapes)
    importOptions.inputShapes[entry.getKey()] = entry.getValue();
  for (const auto &entry : options.specializedInputs)
    importOptions.specializedInputs[entry.getKey()] = entry.getValue();
  FailureOr<OwningOpRef<ModuleOp>> imported =
      importOnnxModel(context, options.modelPath, importOptions);
  if (failed(imported))
    return failure();
  ModuleOp module = imported->get();

  auto writeOutput = [&](llvm::function_ref<void(raw_ostream &)> write) {
    std::error_code ec;
    llvm::ToolOutputFile out(options.outputPath, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return fail("cannot write '" + options.outputPath + "': " + ec.message());
    write(out.os());
    out.keep();
    return success();
  };
  if (options.emit == EmitKind::MLIR)
    return writeOutput([&](raw_ostream &os) { module.print(os); });

  std::string error;
  std::unique_ptr<TargetBackend> target = createTargetBackend(
      options.device, TargetOptions{options.triple, options.cpu}, error);
  if (!target)
    return fail(error);

  ModelInfo info;
  info.prefix = sanitizeSymbolPrefix(
      options.name.empty() ? llvm::sys::path::stem(options.outputPath).str()
                           : options.name);
  if (failed(prepareEntry(module, info)))
    return failure();

  PassManager pm(&context);
  // Composite ops (Attention, LSTM, QLinearConv, ...) become the ops kiln lowers.
  pm.addNestedPass<func::FuncOp>(createKilnDecomposePass());
  pm.addNestedPass<func::FuncOp>(createKilnShapeInferencePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertONNXToLinalgPass());
  // The target sees linalg-on-tensors: what it cannot compile is an error
  // naming the node before any of its passes runs.
  pm.addPass(createKilnCheckTargetSupportPass(*target));
  target->buildPipeline(pm);
  // Verifying the whole module after every pass is costly on large models
  // (it showed up in MobileNetV2 profiles); the result is verified once.
  pm.enableVerifier(std::getenv("KILN_VERIFY_EACH_PASS") != nullptr);
  // Debugging aids for compiler engineers (documented in docs/pipeline.md).
  if (std::getenv("KILN_PASS_TIMING"))
    pm.enableTiming();
  if (std::getenv("KILN_PRINT_IR_AFTER_ALL")) {
    context.disableMultithreading();
    pm.enableIRPrinting();
  }
  if (failed(pm.run(module)) || failed(mlir::verify(module)))
    return failure();
  ExecutableInfo executable = target->getExecutableInfo(module);
  info.triple = executable.triple;
  info.cpu = executable.cpu;
  info.runtimeFeatures = executable.runtimeFeatures;
  info.scratchSize = executable.scratchSize;
  info.checkMessages = std::move(executable.checkMessages);
  info.device = std::move(executable.device);
  // A GPU target that could not read its plan or modules said why.
  if (executable.format == ExecutableFormat::DeviceProgram && !info.device)
    return failure();

  SerializeOptions serializeOptions;
  serializeOptions.entrySymbol = info.prefix + "_main";
  if (options.emit == EmitKind::LLVMIR) {
    LogicalResult result = success();
    if (failed(writeOutput([&](raw_ostream &os) {
          result = target->printExecutable(module, serializeOptions, os, error);
        })) ||
        failed(result))
      return fail(error);
    return success();
  }

  // Intermediate files live in a private directory, removed at the end.
  SmallString<256> workDir;
  if (options.keepIntermediates) {
    workDir = options.outputPath + ".kiln";
    llvm::sys::fs::create_directories(workDir);
  } else if (std::error_code ec =
                 llvm::sys::fs::createUniqueDirectory("kiln", workDir)) {
    return fail("cannot create a temporary directory: " + ec.message());
  }
  auto cleanup = llvm::make_scope_exit([&] {
    if (!options.keepIntermediates)
      llvm::sys::fs::remove_directories(workDir);
  });

  PackageKind kind = options.emit == EmitKind::Object ? PackageKind::Object
                     : options.emit == EmitKind::StaticLibrary
                         ? PackageKind::StaticLibrary
                         : PackageKind::SharedLibrary;
  // The descriptor (C, compiled to bitcode) is linked into the model's LLVM
  // module: one object, whatever the object format.
  std::string descriptorBitcode;
  if (!compileDescriptor(info, kind, workDir, descriptorBitcode, error))
    return fail(error);
  SmallString<256> objectPath(workDir);
  llvm::sys::path::append(objectPath, info.prefix + ".o");
  serializeOptions.linkBitcode = {descriptorBitcode};
  if (failed(target->serializeExecutable(module, serializeOptions, objectPath,
                                         error)))
    return fail(error);
  if (!packageModel(info, kind, objectPath, workDir, options.outputPath,
                    error))
    return fail(error);
  return success();
}

} // namespace kiln
