//===- ObjectEmitter.cpp - LLVM dialect -> optimized object file ----------===//
//
// Translation goes straight from the in-memory module to an object file:
// never through textual IR, which is hopeless for models with large weights.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/CPUPipeline.h"
#include "dialects/Kiln/ABIAttributes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>

using namespace mlir;

namespace kiln {

std::unique_ptr<llvm::TargetMachine>
createCPUTargetMachine(const CPUTarget &target, std::string &error) {
  llvm::Triple triple(target.triple);
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return nullptr;
  llvm::TargetOptions options;
  // ONNX float semantics: no fast-math beyond contraction into FMA, which
  // stays within the tolerances the tests use.
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, target.cpu, target.features, options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    error = "cannot create a target machine for " + target.triple;
  return machine;
}

void captureLLVMErrors(llvm::LLVMContext &context, std::string &errors) {
  // LLVM's default handler exits the process on an error (say, module
  // assembly it cannot read): kiln reports it as a compile error instead.
  context.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo *info, void *userData) {
        if (info->getSeverity() != llvm::DS_Error &&
            info->getSeverity() != llvm::DS_Warning)
          return;
        std::string text;
        llvm::raw_string_ostream os(text);
        llvm::DiagnosticPrinterRawOStream printer(os);
        info->print(printer);
        if (info->getSeverity() == llvm::DS_Warning) {
          llvm::errs() << "warning: " << text << "\n";
          return;
        }
        std::string &errors = *static_cast<std::string *>(userData);
        errors += (errors.empty() ? "" : "\n") + text;
      },
      &errors);
}

namespace {

/// `<entry>_kernels`: the body functions of the module's kiln.kernels, in
/// order (null for one that no longer exists), which the descriptor points
/// at so that profiles can name the loops the runtime runs (model_abi.h).
/// Hidden: only the model's own descriptor refers to it.
void addKernelTable(ModuleOp module, llvm::Module &llvmModule,
                    StringRef entrySymbol) {
  SmallVector<KernelName> kernels = getKernelNames(module);
  if (kernels.empty())
    return;
  auto *ptrType = llvm::PointerType::get(llvmModule.getContext(), 0);
  auto *arrayType = llvm::ArrayType::get(ptrType, kernels.size());
  std::vector<llvm::Constant *> entries;
  for (const KernelName &kernel : kernels) {
    llvm::Function *body = llvmModule.getFunction(kernel.symbol);
    entries.push_back(body ? static_cast<llvm::Constant *>(body)
                           : llvm::ConstantPointerNull::get(ptrType));
  }
  auto *table = new llvm::GlobalVariable(
      llvmModule, arrayType, /*isConstant=*/true,
      llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantArray::get(arrayType, entries), entrySymbol + "_kernels");
  table->setVisibility(llvm::GlobalValue::HiddenVisibility);
}

/// An scf.for carrying `llvm.loop_annotation` (kiln-lower-strided-copies'
/// block loops: no unrolling) reaches the LLVM dialect with the annotation as
/// a discardable attribute of its back edge (SCFToControlFlow copies it to
/// the branch); translation reads only the branch's own `loop_annotation`.
void applyLoopAnnotations(ModuleOp module) {
  module.walk([](LLVM::BrOp branch) {
    Attribute attr = branch->getDiscardableAttr("llvm.loop_annotation");
    if (!attr)
      return;
    if (auto annotation = dyn_cast<LLVM::LoopAnnotationAttr>(attr))
      branch.setLoopAnnotationAttr(annotation);
    branch->removeDiscardableAttr("llvm.loop_annotation");
  });
}

/// Translates to LLVM IR with the target's triple and data layout and runs
/// the O3 pipeline over it.
std::unique_ptr<llvm::Module>
translateAndOptimize(ModuleOp module, StringRef entrySymbol,
                     llvm::LLVMContext &context, llvm::TargetMachine &machine,
                     std::string &error, ArrayRef<std::string> linkBitcode = {},
                     llvm::function_ref<void(StringRef)> onPhase = {}) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);
  applyLoopAnnotations(module);

  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule) {
    error = "translation to LLVM IR failed";
    return nullptr;
  }
  llvmModule->setTargetTriple(machine.getTargetTriple());
  llvmModule->setDataLayout(machine.createDataLayout());
  // The entry's context-taking form (kiln-outline-parallel-loops) is what the
  // descriptor calls; never inlined into the plain entry (the graph's code
  // would exist twice).
  std::string contextEntry = (entrySymbol + "_ctx").str();
  for (llvm::GlobalValue &global : llvmModule->global_values())
    if (!global.isDeclaration() && global.getName() != entrySymbol &&
        global.getName() != contextEntry)
      global.setLinkage(llvm::GlobalValue::InternalLinkage);
  if (llvm::Function *function = llvmModule->getFunction(contextEntry))
    function->addFnAttr(llvm::Attribute::NoInline);
  addKernelTable(module, *llvmModule, entrySymbol);
  for (const std::string &path : linkBitcode) {
    llvm::SMDiagnostic diag;
    std::unique_ptr<llvm::Module> extra = llvm::parseIRFile(path, diag, context);
    if (!extra) {
      error = "cannot read '" + path + "': " + diag.getMessage().str();
      return nullptr;
    }
    extra->setTargetTriple(machine.getTargetTriple());
    extra->setDataLayout(machine.createDataLayout());
    if (llvm::Linker::linkModules(*llvmModule, std::move(extra))) {
      error = "cannot link '" + path + "' into the model";
      return nullptr;
    }
  }
  if (onPhase)
    onPhase("LLVM IR translation");
  for (llvm::Function &function : *llvmModule) {
    if (function.isDeclaration())
      continue;
    function.addFnAttr("target-cpu", machine.getTargetCPU());
    if (!machine.getTargetFeatureString().empty())
      function.addFnAttr("target-features", machine.getTargetFeatureString());
  }

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  // KILN_LLVM_OPT=1|2 trades code quality for compile time (debugging aid).
  llvm::OptimizationLevel level = llvm::OptimizationLevel::O3;
  if (const char *env = std::getenv("KILN_LLVM_OPT")) {
    std::string name(env);
    level = name == "1"   ? llvm::OptimizationLevel::O1
            : name == "2" ? llvm::OptimizationLevel::O2
                          : llvm::OptimizationLevel::O3;
  }
  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(level);
  passes.run(*llvmModule, mam);
  if (onPhase)
    onPhase("LLVM optimization (O3)");
  return llvmModule;
}

} // namespace

LogicalResult emitObjectFile(ModuleOp module, const CPUTarget &target,
                             StringRef entrySymbol, StringRef path,
                             std::string &error,
                             ArrayRef<std::string> linkBitcode,
                             llvm::function_ref<void(StringRef)> onPhase,
                             bool releaseConstants,
                             WeightPool *sharedWeights,
                             WeightReadersFn describeReaders) {
  // LLVM options, set once per process: the post-RA list scheduler off
  // (on znver4 it took 9 of DenseNet-121's 29 s of code generation, being
  // quadratic in a block's instructions, for no measured run-time gain on
  // an out-of-order core: docs/benchmarks.md), and KILN_LLVM_ARGS, LLVM's
  // own options (-time-passes, -post-RA-scheduler=true), a debugging aid.
  static bool parsedLLVMArgs = [] {
    const char *env = std::getenv("KILN_LLVM_ARGS");
    SmallVector<const char *> argv = {"kiln"};
    if (!env || !StringRef(env).contains("post-RA-scheduler"))
      argv.push_back("-post-RA-scheduler=false");
    llvm::cl::ParseCommandLineOptions(argv.size(), argv.data(), "", nullptr,
                                      nullptr, "KILN_LLVM_ARGS");
    return true;
  }();
  (void)parsedLLVMArgs;
  std::unique_ptr<llvm::TargetMachine> machine =
      createCPUTargetMachine(target, error);
  if (!machine)
    return failure();
  // The weights' bytes, read back by the assembler (.incbin) while the object
  // is written, then removed.
  std::string weightsPath = (path + ".weights").str();
  llvm::scope_exit removeWeights([&] { llvm::sys::fs::remove(weightsPath); });
  if (failed(externalizeLargeConstants(module, target, entrySymbol,
                                       weightsPath, releaseConstants, error,
                                       sharedWeights, describeReaders)))
    return failure();
  if (onPhase)
    onPhase("weights (to .incbin)");
  llvm::LLVMContext context;
  std::string llvmErrors;
  captureLLVMErrors(context, llvmErrors);
  std::unique_ptr<llvm::Module> llvmModule =
      translateAndOptimize(module, entrySymbol, context, *machine, error,
                           linkBitcode, onPhase);
  if (!llvmModule)
    return failure();

  unsigned threads = getCodegenThreads();
  FailureOr<bool> parallel =
      emitObjectInParallel(*llvmModule, target, threads, path, error);
  if (failed(parallel) || !llvmErrors.empty()) {
    if (!llvmErrors.empty())
      error = "LLVM code generation failed: " + llvmErrors;
    return failure();
  }
  if (*parallel) {
    if (onPhase)
      onPhase(("instruction selection + object emission (" + Twine(threads) +
               " threads, ld.lld -r)")
                  .str());
    return success();
  }
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return failure();
  }
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, out.os(), nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return failure();
  }
  codegen.run(*llvmModule);
  if (!llvmErrors.empty()) {
    error = "LLVM code generation failed: " + llvmErrors;
    return failure();
  }
  out.keep();
  if (onPhase)
    onPhase("instruction selection + object emission");
  return success();
}

LogicalResult emitLLVMIR(ModuleOp module, const CPUTarget &target,
                         StringRef entrySymbol, llvm::raw_ostream &os,
                         std::string &error) {
  std::unique_ptr<llvm::TargetMachine> machine =
      createCPUTargetMachine(target, error);
  if (!machine)
    return failure();
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateAndOptimize(module, entrySymbol, context, *machine, error);
  if (!llvmModule)
    return failure();
  llvmModule->print(os, nullptr);
  return success();
}

} // namespace kiln
