//===- Pipeline.cpp - the stages of `kiln compile`, wired together --------===//

#include "compiler/Pipeline.h"
#include "kiln/model_abi.h"
#include "codegen/GPU/NVVM/NVVMTargetBackend.h"

#include "codegen/Passes.h"
#include "codegen/Target.h"
#include "codegen/WeightPool.h"
#include "compiler/Packaging.h"
#include "compiler/TestHooks.h"
#include "compiler/TimeReport.h"
#include "compiler/Variants.h"
#include "compiler/import/ModelImporter.h"
#include "dialects/Kiln/KilnDialect.h"
#include "dialects/ONNX/DataTypes.h"
#include "dialects/ONNX/Diagnostics.h"
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
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/ADT/StringExtras.h"

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
  registerNVVMTargetDialects(registry);
}

namespace {

/// Reports the end of the front end (the model on linalg, checked against
/// the target) to `kiln compile`'s progress lines.
struct ProgressInstrumentation : public PassInstrumentation {
  explicit ProgressInstrumentation(std::function<void(StringRef)> report)
      : report(std::move(report)) {}
  void runAfterPass(Pass *pass, Operation *) override {
    if (pass->getArgument() == "kiln-check-target-support")
      report("lower to linalg");
  }
  std::function<void(StringRef)> report;
};

/// "mm1, bias1 +2 more" -> "mm1 (MatMul), bias1 (Add) +2 more". Constant
/// nodes are left out: their values are shared, not what a kernel computes.
std::string annotateOpTypes(StringRef kernel,
                            const llvm::StringMap<std::string> &opTypes) {
  auto [names, more] = kernel.split(" +");
  SmallVector<StringRef> parts;
  names.split(parts, ", ");
  std::string text;
  for (StringRef part : parts) {
    auto it = opTypes.find(part);
    if (it != opTypes.end() && it->second == "Constant" && parts.size() > 1)
      continue;
    if (!text.empty())
      text += ", ";
    text += part.str();
    if (it != opTypes.end())
      text += " (" + it->second + ")";
  }
  if (!more.empty())
    text += " +" + more.str();
  return text;
}

LogicalResult describeTensor(Location loc, Type type, StringAttr name,
                             DenseI64ArrayAttr symbolicDims, TensorInfo &info) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  info.name = name ? name.str() : std::string();
  if (!tensor || (!tensor.hasStaticShape() &&
                  (!symbolicDims || static_cast<int64_t>(symbolicDims.size()) !=
                                        tensor.getRank())))
    return emitError(loc) << "graph value '" << info.name
                          << "' does not have a static shape";
  info.dtype = onnx::getOnnxDataType(tensor.getElementType());
  if (!info.dtype)
    return emitError(loc) << "graph value '" << info.name
                          << "' has unsupported element type "
                          << tensor.getElementType();
  if (symbolicDims && !tensor.hasStaticShape())
    info.shape.assign(symbolicDims.asArrayRef().begin(),
                      symbolicDims.asArrayRef().end());
  else
    info.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  return success();
}

/// `kiln.symbols` ([name, min, max] and, for a run symbol, a fourth entry 1)
/// into `info.symbols`.
void readSymbols(ArrayAttr symbols, ModelInfo &info) {
  info.symbols.clear();
  if (!symbols)
    return;
  for (Attribute e : symbols) {
    auto entryAttr = cast<ArrayAttr>(e);
    SymbolInfo sym{cast<StringAttr>(entryAttr[0]).str(),
                   cast<IntegerAttr>(entryAttr[1]).getInt(),
                   cast<IntegerAttr>(entryAttr[2]).getInt()};
    sym.run = entryAttr.size() > 3 &&
              cast<IntegerAttr>(entryAttr[3]).getInt() == 1;
    info.symbols.push_back(std::move(sym));
  }
}

/// Finds the imported graph function, renames it to `<prefix>_main`, marks
/// its inputs read-only (they are caller-owned) and records its signature.
FailureOr<func::FuncOp> prepareEntry(ModuleOp module, ModelInfo &info) {
  auto entry = module.lookupSymbol<func::FuncOp>("main_graph");
  if (!entry)
    return module.emitError("the imported module has no @main_graph");
  if (auto producer = module->getAttrOfType<StringAttr>("onnx.producer"))
    info.producer = producer.str();
  MLIRContext *ctx = module.getContext();
  // Symbolic dims (kiln.symbols from the importer, kiln.dims from it and
  // kiln-symbolic-shapes): recorded for the descriptor, and handed to
  // kiln-bind-symbolic-dims as kiln.input_dims / kiln.output_dims (one
  // array per tensor, empty when static).
  auto symbols = entry->getAttrOfType<ArrayAttr>("kiln.symbols");
  readSymbols(symbols, info);
  SmallVector<Attribute> inputDims;
  auto empty = DenseI64ArrayAttr::get(ctx, {});
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    TensorInfo tensor;
    auto dims = entry.getArgAttrOfType<DenseI64ArrayAttr>(i, "kiln.dims");
    if (failed(describeTensor(entry.getLoc(), entry.getArgumentTypes()[i],
                              entry.getArgAttrOfType<StringAttr>(i, "onnx.name"),
                              dims, tensor)))
      return failure();
    inputDims.push_back(dims ? dims : empty);
    info.inputs.push_back(std::move(tensor));
    // Names live in the descriptor; LLVM has no use for them.
    entry.removeArgAttr(i, "onnx.name");
    entry.setArgAttr(i, "bufferization.writable",
                     BoolAttr::get(module.getContext(), false));
  }
  for (unsigned i = 0; i < entry.getNumResults(); ++i) {
    TensorInfo tensor;
    // With symbols, an output's dims are known after kiln-symbolic-shapes
    // (recordSymbolicOutputs); its name and type are recorded now.
    // A dim the run decides (a run symbol, made by kiln-symbolic-shapes) is
    // `?` too.
    Type type = entry.getResultTypes()[i];
    if (auto ranked = dyn_cast<RankedTensorType>(type);
        ranked && (symbols || !ranked.hasStaticShape()))
      type = RankedTensorType::get(SmallVector<int64_t>(ranked.getRank(), 0),
                                   ranked.getElementType());
    if (failed(describeTensor(
            entry.getLoc(), type,
            entry.getResultAttrOfType<StringAttr>(i, "onnx.name"), nullptr,
            tensor)))
      return failure();
    info.outputs.push_back(std::move(tensor));
    entry.removeResultAttr(i, StringAttr::get(module.getContext(), "onnx.name"));
  }
  if (symbols)
    entry->setAttr("kiln.input_dims", ArrayAttr::get(ctx, inputDims));
  entry.setSymName(entrySymbolName(info));
  return entry;
}

/// After the graph passes, for a model with symbols: each output's dims
/// (sizes and symbols, kiln-symbolic-shapes' `kiln.dims`) into `info` and,
/// as `kiln.output_dims`, onto the entry for kiln-bind-symbolic-dims.
LogicalResult recordSymbolicOutputs(ModuleOp module, ModelInfo &info) {
  auto entry = module.lookupSymbol<func::FuncOp>(entrySymbolName(info));
  if (!entry)
    return success();
  // kiln-symbolic-shapes added the run symbols (and the table, for a model
  // without input symbols).
  auto symbols = entry->getAttrOfType<ArrayAttr>("kiln.symbols");
  readSymbols(symbols, info);
  if (info.symbols.empty())
    return success();
  MLIRContext *ctx = module.getContext();
  if (!entry->hasAttr("kiln.input_dims"))
    entry->setAttr("kiln.input_dims",
                   ArrayAttr::get(ctx, SmallVector<Attribute>(
                                           entry.getNumArguments(),
                                           DenseI64ArrayAttr::get(ctx, {}))));
  // kiln-symbolic-shapes has read the arguments' dims.
  for (unsigned i = 0; i < entry.getNumArguments(); ++i)
    entry.removeArgAttr(i, StringAttr::get(ctx, "kiln.dims"));
  SmallVector<Attribute> outputDims;
  for (unsigned i = 0; i < entry.getNumResults(); ++i) {
    auto type = dyn_cast<RankedTensorType>(entry.getResultTypes()[i]);
    auto dims = entry.getResultAttrOfType<DenseI64ArrayAttr>(i, "kiln.dims");
    if (!type || i >= info.outputs.size())
      return entry.emitError("graph output ") << i << " is not a ranked tensor";
    if (dims) {
      info.outputs[i].shape.assign(dims.asArrayRef().begin(),
                                   dims.asArrayRef().end());
      entry.removeResultAttr(i, StringAttr::get(ctx, "kiln.dims"));
    } else if (type.hasStaticShape()) {
      info.outputs[i].shape.assign(type.getShape().begin(),
                                   type.getShape().end());
    } else {
      return entry.emitError("graph output '")
             << info.outputs[i].name << "' has symbolic dims no symbol gives";
    }
    outputDims.push_back(dims ? dims : DenseI64ArrayAttr::get(ctx, {}));
  }
  // A run symbol an output's dim names is named after it ("y.dim1", for
  // messages; kiln-symbolic-shapes named it after its node).
  SmallVector<bool> renamed(info.symbols.size(), false);
  for (const TensorInfo &t : info.outputs)
    for (auto [k, d] : llvm::enumerate(t.shape))
      if (KILN_DIM_IS_SYMBOL(d) && KILN_DIM_SYMBOL_ID(d) < info.symbols.size() &&
          info.symbols[KILN_DIM_SYMBOL_ID(d)].run &&
          !renamed[KILN_DIM_SYMBOL_ID(d)]) {
        renamed[KILN_DIM_SYMBOL_ID(d)] = true;
        info.symbols[KILN_DIM_SYMBOL_ID(d)].name =
            t.name + ".dim" + std::to_string(k);
      }
  entry->setAttr("kiln.output_dims", ArrayAttr::get(ctx, outputDims));
  return success();
}

using WriteOutputFn =
    llvm::function_ref<LogicalResult(llvm::function_ref<void(raw_ostream &)>)>;
using ProgressFn = llvm::function_ref<void(StringRef, const Twine &)>;

/// A model whose one symbol is a batch of images computed apart: what the
/// symbolic graph says of its symbols and tensors, for the descriptor of the
/// graph compiled for one image (ModelInfo::batchLoop).
struct BatchLoop {
  std::vector<SymbolInfo> symbols;
  std::vector<std::vector<int64_t>> inputDims, outputDims; ///< ABI encoding
};

/// When the imported `module` has one symbol that kiln-symbolic-shapes finds
/// to be a batch of images computed apart (kiln.batch_loop, run on a copy;
/// its diagnostics are dropped: the model then compiles over the batch and
/// reports them there), imports the model again with that batch fixed to 1
/// into `perImage` and fills `loop`. Otherwise leaves both empty.
/// KILN_NO_BATCH_LOOP=1 turns it off (the graph compiled over the batch).
void planBatchLoop(ModuleOp module, const CompileOptions &options,
                   const ImportOptions &importOptions,
                   std::optional<BatchLoop> &loop,
                   OwningOpRef<ModuleOp> &perImage) {
  if (const char *off = std::getenv("KILN_NO_BATCH_LOOP");
      off && *off && *off != '0')
    return;
  auto entry = module.lookupSymbol<func::FuncOp>("main_graph");
  if (!entry)
    return;
  auto table = entry->getAttrOfType<ArrayAttr>("kiln.symbols");
  if (!table || table.size() != 1)
    return;
  MLIRContext &context = *module.getContext();
  OwningOpRef<ModuleOp> probe = module.clone();
  {
    ScopedDiagnosticHandler quiet(&context,
                                  [](Diagnostic &) { return success(); });
    PassManager pm(&context);
    pm.enableVerifier(false);
    buildGraphPasses(pm, /*runDims=*/true, /*batchLoop=*/true);
    if (failed(pm.run(*probe)))
      return;
  }
  auto graph = probe->lookupSymbol<func::FuncOp>("main_graph");
  if (!graph || !graph->hasAttr("kiln.batch_loop"))
    return;
  BatchLoop plan;
  ModelInfo symbols;
  readSymbols(graph->getAttrOfType<ArrayAttr>("kiln.symbols"), symbols);
  plan.symbols = std::move(symbols.symbols);
  auto dimsOf = [](Type type, DenseI64ArrayAttr dims) {
    if (dims && !dims.empty())
      return std::vector<int64_t>(dims.asArrayRef().begin(),
                                  dims.asArrayRef().end());
    auto ranked = cast<RankedTensorType>(type);
    return std::vector<int64_t>(ranked.getShape().begin(),
                                ranked.getShape().end());
  };
  ImportOptions oneImage = importOptions;
  for (unsigned i = 0; i < graph.getNumArguments(); ++i) {
    auto ranked = dyn_cast<RankedTensorType>(graph.getArgumentTypes()[i]);
    auto name = graph.getArgAttrOfType<StringAttr>(i, "onnx.name");
    if (!ranked || !name)
      return;
    std::vector<int64_t> dims = dimsOf(
        ranked, graph.getArgAttrOfType<DenseI64ArrayAttr>(i, "kiln.dims"));
    if (!ranked.hasStaticShape()) {
      SmallVector<DimSpec> fixed;
      for (int64_t d : dims)
        fixed.push_back(DimSpec(d < 0 ? 1 : d));
      oneImage.inputShapes[name.getValue()] = fixed;
    }
    plan.inputDims.push_back(std::move(dims));
  }
  for (unsigned i = 0; i < graph.getNumResults(); ++i) {
    auto ranked = dyn_cast<RankedTensorType>(graph.getResultTypes()[i]);
    if (!ranked)
      return;
    plan.outputDims.push_back(dimsOf(
        ranked, graph.getResultAttrOfType<DenseI64ArrayAttr>(i, "kiln.dims")));
  }
  probe = nullptr;
  FailureOr<OwningOpRef<ModuleOp>> imported = [&] {
    ScopedDiagnosticHandler quiet(&context,
                                  [](Diagnostic &) { return success(); });
    return importOnnxModel(context, options.modelPath, oneImage);
  }();
  if (failed(imported) || failed(applyTestMiscompile(imported->get())))
    return;
  perImage = std::move(*imported);
  loop = std::move(plan);
}

/// Compiles the imported `module` (consumed: lowered in place) for one CPU
/// under the symbol prefix `prefix`: runs the passes, records the
/// descriptor's `info` and writes the object with the descriptor linked in
/// to `objectPath` in `workDir` (--emit llvm: the LLVM IR, via writeOutput).
LogicalResult compileVariant(ModuleOp module, const CompileOptions &options,
                             StringRef cpu, StringRef prefix, PackageKind kind,
                             StringRef workDir, WriteOutputFn writeOutput,
                             ProgressFn progress,
                             const llvm::StringMap<std::string> &opTypes,
                             TimeReport &report, bool releaseConstants,
                             WeightPool *sharedWeights, ModelInfo &info,
                             std::string &objectPath,
                             const BatchLoop *batchLoop = nullptr) {
  MLIRContext &context = *module.getContext();
  Location fileLoc = FileLineColLoc::get(&context, options.modelPath, 0, 0);
  auto fail = [&](const Twine &message) {
    emitError(fileLoc) << message;
    return failure();
  };
  std::string error;
  std::unique_ptr<TargetBackend> target = createTargetBackend(
      options.device,
      TargetOptions{options.triple, cpu.str(), "",
                    StringRef(options.device).starts_with("hip")
                        ? options.rocmPath
                        : options.cudaPath,
                    options.precision},
      error);
  if (!target)
    return fail(error);

  info.prefix = prefix.str();
  info.batchLoop = batchLoop != nullptr;
  if (failed(prepareEntry(module, info)))
    return failure();
  if (!info.symbols.empty() && options.device != "cpu") {
    // Named by the first input with a symbolic dim (a located error), else
    // by the model (a symbol only the run decides).
    std::string where = "model";
    for (const TensorInfo &input : info.inputs)
      if (llvm::any_of(input.shape, [](int64_t d) { return d < 0; })) {
        where = "input '" + input.name + "'";
        break;
      }
    return fail(where + " has symbolic dims (first: '" +
                info.symbols.front().name +
                "'): they are supported on the cpu device only so far; fix "
                "them with --shape NAME=D0,D1,... for --device " +
                options.device);
  }

  // Three pass managers run one after the other (the same passes as one):
  // --time-report shows each group's time and memory.
  PassManager graphPasses(&context), lowering(&context), targetPasses(&context);
  buildGraphPasses(graphPasses, options.device == "cpu");
  buildLoweringPasses(lowering, *target);
  target->buildPipeline(targetPasses);
  // Debugging aids for compiler engineers (documented in docs/pipeline.md).
  std::optional<DefaultTimingManager> passTiming;
  std::optional<TimingScope> passTimingRoot;
  if (std::getenv("KILN_PASS_TIMING") && !options.timeReport) {
    passTiming.emplace();
    passTiming->setEnabled(true);
    passTimingRoot.emplace(passTiming->getRootScope());
  }
  bool printIR = std::getenv("KILN_PRINT_IR_AFTER_ALL") != nullptr;
  // KILN_PRINT_IR_AFTER=<pass argument>: the module after that pass only,
  // weights elided (a model's IR printed after every pass is gigabytes).
  const char *printAfter = std::getenv("KILN_PRINT_IR_AFTER");
  if (printIR || printAfter)
    context.disableMultithreading();
  if (options.progress)
    lowering.addInstrumentation(std::make_unique<ProgressInstrumentation>(
        [&](StringRef stage) { progress(stage, ""); }));
  struct Group {
    PassManager *pm;
    const char *name;
  } groups[] = {
      {&graphPasses, "graph passes (decompose, shape inference, canonicalize)"},
      {&lowering, "ONNX -> linalg (and target support check)"},
      {&targetPasses, "target passes (linalg -> LLVM dialect)"}};
  for (const Group &group : groups) {
    PassManager &pm = *group.pm;
    // Verifying the whole module after every pass is costly on large models
    // (it showed up in MobileNetV2 profiles); the result is verified once.
    pm.enableVerifier(std::getenv("KILN_VERIFY_EACH_PASS") != nullptr);
    if (passTimingRoot)
      pm.enableTiming(*passTimingRoot);
    report.instrument(pm);
    if (printIR)
      pm.enableIRPrinting();
    else if (printAfter)
      pm.enableIRPrinting(
          [](Pass *, Operation *) { return false; },
          [printAfter](Pass *pass, Operation *) {
            return pass->getArgument() == printAfter;
          },
          /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
          /*printAfterOnlyOnFailure=*/false, llvm::errs(),
          OpPrintingFlags().elideLargeElementsAttrs(16).elideLargeResourceString(
              64));
    if (failed(pm.run(module)))
      return failure();
    if (group.pm == &graphPasses) {
      if (failed(recordSymbolicOutputs(module, info)))
        return failure();
      if (!info.symbols.empty() && options.device != "cpu")
        return fail("symbolic dims (first: '" + info.symbols.front().name +
                    "') are supported on the cpu device only so far; " +
                    (info.symbols.front().run
                         ? std::string("a size decided by the run's values "
                                       "needs --specialize for --device ")
                         : std::string("fix them with --shape "
                                       "NAME=D0,D1,... for --device ")) +
                    options.device);
    }
    report.mark(group.name);
  }
  if (failed(mlir::verify(module)))
    return failure();
  passTimingRoot.reset();
  passTiming.reset(); // prints KILN_PASS_TIMING's report
  progress("codegen", "");
  ExecutableInfo executable = target->getExecutableInfo(module);
  info.triple = executable.triple;
  // An AArch64 architecture (armv8.2-a+dotprod) is the generic CPU to LLVM;
  // the descriptor keeps the name the variant was asked by.
  info.cpu = cpu.starts_with("armv") ? cpu.str() : executable.cpu;
  info.runtimeFeatures = executable.runtimeFeatures;
  info.scratchSize = executable.scratchSize;
  info.dynamicScratchSize = executable.dynamicScratchSize;
  info.checkMessages = std::move(executable.checkMessages);
  // Compiled for one image: the descriptor gives the batch's symbols and
  // dims, and runs the image entry once per image.
  if (batchLoop) {
    if (info.inputs.size() != batchLoop->inputDims.size() ||
        info.outputs.size() != batchLoop->outputDims.size())
      return fail("the graph compiled for one image has other inputs or "
                  "outputs than the model");
    info.symbols = batchLoop->symbols;
    for (auto [tensor, dims] : llvm::zip(info.inputs, batchLoop->inputDims))
      tensor.shape.assign(dims.begin(), dims.end());
    for (auto [tensor, dims] : llvm::zip(info.outputs, batchLoop->outputDims))
      tensor.shape.assign(dims.begin(), dims.end());
  }
  for (const std::string &kernel : executable.kernelNames)
    info.kernelNames.push_back(annotateOpTypes(kernel, opTypes));
  info.device = std::move(executable.device);
  // A GPU target that could not read its plan or modules said why.
  if (executable.format == ExecutableFormat::DeviceProgram && !info.device)
    return failure();

  SerializeOptions serializeOptions;
  serializeOptions.entrySymbol = entrySymbolName(info);
  if (options.emit == EmitKind::LLVMIR) {
    LogicalResult result = success();
    if (failed(writeOutput([&](raw_ostream &os) {
          result = target->printExecutable(module, serializeOptions, os, error);
        })) ||
        failed(result))
      return fail(error);
    return success();
  }

  // The descriptor (C, compiled to bitcode) is linked into the model's LLVM
  // module: one object, whatever the object format.
  std::string descriptorBitcode;
  if (!compileDescriptor(info, kind, workDir, descriptorBitcode, error,
                         sharedWeights))
    return fail(error);
  report.mark("descriptor (clang, C -> bitcode)");
  SmallString<256> object(workDir);
  llvm::sys::path::append(object, info.prefix + ".o");
  serializeOptions.linkBitcode = {descriptorBitcode};
  // The imported weights' blobs may be freed once written, unless another
  // variant cloned from the same import still needs them.
  serializeOptions.releaseConstants = releaseConstants;
  serializeOptions.sharedWeights = sharedWeights;
  serializeOptions.describeReaders = [&](StringRef readers) {
    return annotateOpTypes(readers, opTypes);
  };
  if (report.isEnabled())
    serializeOptions.onPhase = [&](StringRef phase) { report.mark(phase); };
  if (failed(target->serializeExecutable(module, serializeOptions, object,
                                         error)))
    return fail(error);
  progress("llvm", "optimized, object written");
  objectPath = std::string(object);
  return success();
}

} // namespace

void buildGraphPasses(OpPassManager &pm, bool runDims, bool batchLoop) {
  // QDQ models: Conv/MatMul/Gemm between DequantizeLinear and QuantizeLinear run
  // on integers.
  pm.addNestedPass<func::FuncOp>(createKilnFoldQDQPass());
  // Composite ops (Attention, LSTM, QLinearConv, ...) become the ops kiln lowers.
  pm.addNestedPass<func::FuncOp>(createKilnDecomposePass());
  pm.addNestedPass<func::FuncOp>(createKilnShapeInferencePass());
  pm.addPass(createCanonicalizerPass());
  // Symbolic input dims: their expressions through the graph and the
  // outputs' dims (a static model is left as it is).
  KilnSymbolicShapesPassOptions symbolicOptions;
  symbolicOptions.runDims = runDims;
  symbolicOptions.batchLoop = batchLoop;
  pm.addNestedPass<func::FuncOp>(createKilnSymbolicShapesPass(symbolicOptions));
}

void buildLoweringPasses(OpPassManager &pm, const TargetBackend &target) {
  pm.addPass(createConvertONNXToLinalgPass());
  // The target sees linalg-on-tensors: what it cannot compile is an error
  // naming the node before any of its passes runs.
  pm.addPass(createKilnCheckTargetSupportPass(target));
}

void buildLoweringToTargetPipeline(OpPassManager &pm,
                                   const TargetBackend &target) {
  buildGraphPasses(pm, target.getDeviceName() == "cpu");
  buildLoweringPasses(pm, target);
}

LogicalResult compileModel(MLIRContext &context,
                           const CompileOptions &options) {
  Location fileLoc = FileLineColLoc::get(&context, options.modelPath, 0, 0);
  auto fail = [&](const Twine &message) {
    emitError(fileLoc) << message;
    return failure();
  };

  TimeReport report(options.timeReport);
  llvm::scope_exit printReport([&] { report.print(llvm::errs()); });
  setCompileLimits(options.limits);
  ImportOptions importOptions;
  for (const auto &entry : options.inputShapes)
    importOptions.inputShapes[entry.getKey()] = entry.getValue();
  for (const auto &entry : options.specializedInputs)
    importOptions.specializedInputs[entry.getKey()] = entry.getValue();
  for (const auto &entry : options.sequenceLengths)
    importOptions.sequenceLengths[entry.getKey()] = entry.getValue();
  importOptions.absentInputs = options.absentInputs;
  FailureOr<OwningOpRef<ModuleOp>> imported =
      importOnnxModel(context, options.modelPath, importOptions);
  if (failed(imported))
    return failure();
  ModuleOp module = imported->get();
  report.mark("import (ONNX file -> onnx dialect)");
  if (failed(applyTestMiscompile(module)))
    return failure();
  auto progress = [&](StringRef stage, const Twine &detail) {
    if (options.progress)
      options.progress(stage, detail.str());
  };
  // Node name -> op type: kernels are named "mm1 (MatMul), bias1 (Add)" in
  // profiles and `kiln inspect --sizes` (the ops are gone by then).
  llvm::StringMap<std::string> opTypes;
  module.walk([&](Operation *op) {
    if (isa<onnx::ONNXDialect>(op->getDialect()))
      if (std::optional<std::string> node = onnx::getNodeName(op))
        opTypes.try_emplace(*node, op->getName().stripDialect().str());
  });
  if (options.progress) {
    int64_t ops = 0;
    module.walk([&](Operation *op) { ops += op->getDialect() &&
                                            op->getDialect()->getNamespace() == "onnx"; });
    progress("import", Twine(ops) + " onnx ops");
  }

  auto writeOutput = [&](llvm::function_ref<void(raw_ostream &)> write) {
    std::error_code ec;
    llvm::ToolOutputFile out(options.outputPath, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return fail("cannot write '" + options.outputPath + "': " + ec.message());
    write(out.os());
    out.keep();
    return success();
  };
  // `-o out/m.so` with `out/` missing: the folder is made, as a build
  // system's output folder would be, not left to the linker to fail on.
  StringRef outputDir = llvm::sys::path::parent_path(options.outputPath);
  if (!outputDir.empty() && !llvm::sys::fs::is_directory(outputDir)) {
    // create_directories() takes an existing file for an existing folder.
    std::error_code ec =
        llvm::sys::fs::exists(outputDir)
            ? std::make_error_code(std::errc::not_a_directory)
            : llvm::sys::fs::create_directories(outputDir);
    if (ec)
      return fail("cannot create the output folder '" + outputDir +
                  "': " + ec.message());
  }
  if (llvm::sys::fs::is_directory(options.outputPath))
    return fail("cannot write '" + options.outputPath +
                "': it is a folder (-o names the file to write)");
  if (options.emit == EmitKind::MLIR)
    return writeOutput([&](raw_ostream &os) { module.print(os); });

  std::string error;
  SmallVector<std::string> cpus;
  if (!expandCpuVariants(options.triple, options.cpu, cpus, error))
    return fail(error);
  std::string prefix = sanitizeSymbolPrefix(
      options.name.empty() ? llvm::sys::path::stem(options.outputPath).str()
                           : options.name);
  // The devices of the artifact: `--device` given once (or not at all) is
  // one; repeated, a variant per device in one artifact.
  SmallVector<std::string> devices(options.devices.begin(),
                                   options.devices.end());
  if (devices.empty())
    devices.push_back(options.device);
  std::string deviceList = llvm::join(devices, ", ");
  if (cpus.size() > 1 && !llvm::is_contained(devices, "cpu"))
    return fail("several CPUs (--cpu " + options.cpu +
                ") are variants of the cpu device, not of --device " +
                deviceList);
  if (cpus.size() > 1 && options.emit == EmitKind::LLVMIR)
    return fail("--emit llvm takes one --cpu (got " + options.cpu + ")");
  if (devices.size() > 1 && options.emit == EmitKind::LLVMIR)
    return fail("--emit llvm takes one --device (got " + deviceList + ")");
  if (devices.size() > 1 &&
      llvm::Triple(options.triple.empty()
                       ? llvm::sys::getDefaultTargetTriple()
                       : llvm::Triple::normalize(options.triple))
          .isOSBinFormatMachO())
    return fail("several devices in one artifact are not supported for " +
                options.triple +
                " yet (Mach-O): compile one --device per artifact");

  // A batch of images computed apart (a CNN with a symbolic batch): the
  // graph compiled for one image, run once per image (planBatchLoop).
  std::optional<BatchLoop> batchLoop;
  OwningOpRef<ModuleOp> perImage;
  if (llvm::all_of(devices, [](const std::string &d) { return d == "cpu"; })) {
    planBatchLoop(module, options, importOptions, batchLoop, perImage);
    if (perImage) {
      module = perImage.get();
      *imported = nullptr; // the model over the batch is not compiled
      progress("import", "a batch of images computed apart: compiled for one "
                         "image, run once per image");
    }
  }

  // Intermediate files live in a private directory, removed at the end.
  SmallString<256> workDir;
  if (options.emit != EmitKind::LLVMIR) {
    if (options.keepIntermediates) {
      workDir = options.outputPath + ".kiln";
      llvm::sys::fs::create_directories(workDir);
    } else if (std::error_code ec =
                   llvm::sys::fs::createUniqueDirectory("kiln", workDir)) {
      return fail("cannot create a temporary directory: " + ec.message());
    }
  }
  auto cleanup = llvm::make_scope_exit([&] {
    if (!options.keepIntermediates && !workDir.empty())
      llvm::sys::fs::remove_directories(workDir);
  });
  PackageKind kind = options.emit == EmitKind::Object ? PackageKind::Object
                     : options.emit == EmitKind::StaticLibrary
                         ? PackageKind::StaticLibrary
                         : PackageKind::SharedLibrary;
  if (cpus.size() == 1 && devices.size() == 1) {
    ModelInfo info;
    std::string objectPath;
    CompileOptions single = options;
    single.device = devices.front();
    if (failed(compileVariant(module, single, cpus[0], prefix, kind, workDir,
                              writeOutput, progress, opTypes, report,
                              /*releaseConstants=*/true,
                              /*sharedWeights=*/nullptr, info, objectPath,
                              batchLoop ? &*batchLoop : nullptr)))
      return failure();
    if (options.emit == EmitKind::LLVMIR)
      return success();
    if (!packageModel(info, kind, objectPath, workDir, options.outputPath,
                      error))
      return fail(error);
    report.mark("link / package (lld, llvm-ar)");
    progress("package", options.outputPath);
    return success();
  }

  // Several CPUs or devices: the graph compiled once per CPU of the cpu
  // device and once per other device, each under its own symbol prefix, from
  // a copy of the imported module (compiler/Variants.h). Their weights go to
  // one pool keyed by content: bytes two variants lay out alike (CPUs that
  // pack a weight alike or leave it as the model has it; GPU devices whose
  // weight blobs are the same) are in the artifact once.
  SmallString<256> weightsPath(workDir);
  llvm::sys::path::append(weightsPath, prefix + "_weights.bin");
  WeightPool weights(prefix, std::string(weightsPath));
  std::vector<CompiledVariant> variants;
  for (const std::string &device : devices) {
    CompileOptions deviceOptions = options;
    deviceOptions.device = device;
    bool cpuDevice = device == "cpu";
    // A GPU device's host side is the descriptor only: the target's CPU.
    SmallVector<std::string> variantCpus =
        cpuDevice ? cpus
                  : SmallVector<std::string>{cpus.size() == 1 ? cpus[0] : ""};
    for (const std::string &cpu : variantCpus) {
      OwningOpRef<ModuleOp> copy = module.clone();
      CompiledVariant variant;
      variant.device = StringRef(device).split(':').first.str();
      variant.name = cpuDevice ? cpu : device;
      variant.info.name = prefix;
      if (failed(compileVariant(
              *copy, deviceOptions, cpu,
              variantSymbolPrefix(prefix,
                                  variant.name.empty() ? device : variant.name),
              PackageKind::Object, workDir, writeOutput, progress, opTypes,
              report, /*releaseConstants=*/false, &weights, variant.info,
              variant.object, batchLoop ? &*batchLoop : nullptr)))
        return failure();
      // One CPU of the target's default: named as the descriptor names it.
      if (variant.name.empty())
        variant.name = variant.info.cpu;
      variants.push_back(std::move(variant));
    }
  }
  if (!weights.finish(error))
    return fail(error);
  ModelInfo shared = variants.front().info;
  shared.prefix = prefix;
  // The shape function serves every variant: the largest dynamic arena.
  for (const auto &variant : variants)
    if (variant.info.dynamicScratchSize != shared.dynamicScratchSize) {
      const std::string &a = shared.dynamicScratchSize.empty()
                                 ? std::string("0ll")
                                 : shared.dynamicScratchSize;
      const std::string &b = variant.info.dynamicScratchSize.empty()
                                 ? std::string("0ll")
                                 : variant.info.dynamicScratchSize;
      shared.dynamicScratchSize =
          "(" + a + " > " + b + " ? " + a + " : " + b + ")";
    }
  if (!packageVariants(shared, variants,
                       weights.definitions(/*hiddenGlobal=*/true), kind,
                       workDir, options.outputPath, error))
    return fail(error);
  report.mark("link / package (lld, llvm-ar)");
  progress("package", options.outputPath);
  return success();
}

} // namespace kiln
