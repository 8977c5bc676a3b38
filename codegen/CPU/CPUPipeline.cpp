//===- CPUPipeline.cpp - linalg-on-tensors to the LLVM dialect ------------===//

#include "codegen/CPU/CPUPipeline.h"
#include "codegen/Common/TensorPipeline.h"
#include "codegen/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/AArch64TargetParser.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;

namespace kiln {

namespace {
/// x86 features the runtime verifies before running the code: x86-64-v2's
/// (SSE4.2, POPCNT, ...; a v2 variant must not run on a baseline CPU), then
/// AVX2/AVX-512's.
constexpr const char *kCheckedX86Features[] = {
    "sse3",     "ssse3",    "sse4.1",     "sse4.2",     "popcnt",
    "cx16",     "sahf",
    "avx",      "avx2",     "fma",        "f16c",       "avx512f",
    "avx512bw", "avx512dq", "avx512vl",   "avx512vnni", "avx512bf16",
    "avxvnni"};

/// AArch64 features beyond the baseline (fp-armv8, neon) that generated code
/// may use and the runtime can check (AT_HWCAP/AT_HWCAP2, runtime/src/cpu.c).
constexpr const char *kCheckedAArch64Features[] = {
    "crc",      "lse",     "rdm",  "fullfp16", "dotprod", "rcpc",
    "jsconv",   "complxnum", "fp16fml", "flagm", "fptoint", "sb",
    "i8mm",     "bf16",    "sve",  "sve2",     "aes",     "sha2",
    "sha3",     "sm4"};

/// An AArch64 architecture with extensions, as clang's -march spells it
/// ("armv8.2-a+dotprod+fp16"): the generic CPU with the architecture's and
/// the extensions' LLVM features. False when `spec` is no such name.
bool parseAArch64ArchSpec(StringRef spec, std::string &features,
                          std::string &error) {
  SmallVector<StringRef> parts;
  spec.split(parts, '+');
  const llvm::AArch64::ArchInfo *arch = llvm::AArch64::parseArch(parts[0]);
  if (!arch)
    return false;
  features = arch->ArchFeature.str();
  for (StringRef extension : ArrayRef(parts).drop_front()) {
    std::optional<llvm::AArch64::ExtensionInfo> info =
        llvm::AArch64::parseArchExtension(extension);
    if (!info || info->PosTargetFeature.empty()) {
      error = "unknown AArch64 extension '" + extension.str() + "' in --cpu " +
              spec.str();
      return false;
    }
    features += "," + info->PosTargetFeature.str();
  }
  return true;
}
} // namespace

FailureOr<CPUTarget> resolveCPUTarget(StringRef tripleName, StringRef cpu,
                                      std::string &error) {
  llvm::InitializeAllTargets();
  llvm::InitializeAllTargetMCs();
  llvm::InitializeAllAsmPrinters();
  llvm::InitializeAllAsmParsers();

  CPUTarget target;
  bool host = tripleName.empty();
  llvm::Triple triple(host ? llvm::sys::getDefaultTargetTriple()
                           : llvm::Triple::normalize(tripleName));
  target.triple = triple.str();
  if (cpu.empty())
    cpu = host ? "native" : "generic";
  if (cpu == "native") {
    if (!host) {
      error = "--cpu native needs the host target; name a CPU for " +
              target.triple;
      return failure();
    }
    target.cpu = llvm::sys::getHostCPUName().str();
    std::string features;
    for (auto &feature : llvm::sys::getHostCPUFeatures())
      features += (feature.second ? "+" : "-") + feature.first().str() + ",";
    if (!features.empty())
      features.pop_back();
    target.features = features;
  } else if (triple.isAArch64() && cpu.starts_with("armv")) {
    target.cpu = "generic";
    if (!parseAArch64ArchSpec(cpu, target.features, error)) {
      if (error.empty())
        error = "unknown AArch64 architecture '" + cpu.str() +
                "' (e.g. armv8-a, armv8.2-a+dotprod+fp16, armv8.6-a+i8mm)";
      return failure();
    }
  } else {
    target.cpu = cpu.str();
  }

  std::string lookupError;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!llvmTarget) {
    error = "unsupported target '" + target.triple + "': " + lookupError;
    return failure();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      llvmTarget->createMCSubtargetInfo(triple, target.cpu, target.features));
  if (!subtarget || !subtarget->isCPUStringValid(target.cpu)) {
    error = "unknown CPU '" + target.cpu + "' for target " + target.triple;
    return failure();
  }

  if (triple.isX86()) {
    std::string checked;
    for (const char *feature : kCheckedX86Features)
      if (subtarget->checkFeatures(std::string("+") + feature))
        checked += std::string(checked.empty() ? "" : ",") + feature;
    target.runtimeFeatures = checked;
    bool avx512 = subtarget->checkFeatures("+avx512f");
    bool avx = subtarget->checkFeatures("+avx");
    target.vectorWidth = avx512 ? 16 : avx ? 8 : 4;
    target.vectorRegisters = avx512 ? 32 : 16;
    bool vnni = avx512 ? subtarget->checkFeatures("+avx512vnni")
                       : avx && subtarget->checkFeatures("+avxvnni");
    // pmaddwd on the vector width's registers: AVX-512BW for zmm, AVX2 for
    // ymm (AVX alone has no 256-bit integer ops), SSE2 for xmm.
    bool pmaddwd = avx512 ? subtarget->checkFeatures("+avx512bw")
                   : avx  ? subtarget->checkFeatures("+avx2")
                          : subtarget->checkFeatures("+sse2");
    target.int8Dot = vnni ? "vpdpbusd" : pmaddwd ? "pmaddwd" : "";
    // vdpbf16ps on zmm (AVX512-BF16) or ymm (with AVX512-VL); "avx512bf16"
    // is among the features recorded and checked at open.
    if (avx512 && subtarget->checkFeatures("+avx512bf16"))
      target.bf16Dot = "vdpbf16ps";
  } else {
    if (triple.isAArch64()) {
      std::string checked;
      for (const char *feature : kCheckedAArch64Features)
        if (subtarget->checkFeatures(std::string("+") + feature))
          checked += std::string(checked.empty() ? "" : ",") + feature;
      target.runtimeFeatures = checked;
    }
    target.vectorWidth = 4; // NEON and other 128-bit SIMD
    // NEON has 32 q registers; another target is not assumed to.
    target.vectorRegisters = triple.isAArch64() ? 32 : 16;
    // armv8.2-a dotprod: sdot (4 s8 x s8 products per i32 lane); without
    // it, plain NEON (bytes sign-extended, multiply-add). "dotprod" is
    // among the features recorded and checked at open (AT_HWCAP).
    if (triple.isAArch64() && subtarget->checkFeatures("+dotprod"))
      target.int8Dot = "sdot";
  }
  return target;
}

void buildCPUCodegenPipeline(OpPassManager &pm, const CPUTarget &target) {
  // Tensor level: the passes every target shares (codegen/Common).
  KilnSelectKernelStrategyPassOptions strategyOptions;
  strategyOptions.vectorWidth = target.vectorWidth;
  strategyOptions.vectorRegisters = target.vectorRegisters;
  strategyOptions.int8Dot = target.int8Dot;
  strategyOptions.bf16Dot = target.bf16Dot;
  std::string precision = target.precision;
  TensorPipelineHooks hooks;
  hooks.afterLayoutPropagation = [strategyOptions,
                                  precision](OpPassManager &pm) {
    // --precision bf16 / fp16: the f32 products with constant weights read
    // narrow operands (weights converted at compile time); before the kernel
    // strategy, which then sees their element types (and no Winograd).
    if (precision != "fp32") {
      KilnNarrowPrecisionPassOptions narrowOptions;
      narrowOptions.precision = precision;
      pm.addPass(createKilnNarrowPrecisionPass(narrowOptions));
    }
    // 3x3 convs as Winograd transforms + matrix products where the kernel
    // strategy says so; before fusion, so the output transform fuses with the
    // bias / activation after it.
    pm.addPass(createKilnSelectKernelStrategyPass(strategyOptions));
    pm.addNestedPass<func::FuncOp>(createKilnWinogradConvsPass());
    // x86's 8-bit products read u8 activations as they come (before fusion,
    // which would fold the sign flip into the producers).
    if (strategyOptions.int8Dot == "vpdpbusd" ||
        strategyOptions.int8Dot == "pmaddwd")
      pm.addPass(createKilnFlipInt8ActivationsPass());
  };
  buildTensorPipeline(pm, hooks);
  // kiln-fold-qdq's QLinearAdd (exact f64 multiply-adds) as f32 fma while it
  // is still a linalg body: the conv's epilogue it fuses into computes on
  // lanes of at most 32 bits (and on FMA targets only: without FMA the f64
  // form stays, as kiln-approximate-math leaves it below).
  bool hasFma =
      !llvm::Triple(target.triple).isX86() ||
      llvm::is_contained(llvm::split(target.runtimeFeatures, ','), "fma");
  if (hasFma) {
    KilnApproximateMathPassOptions fmaOptions;
    fmaOptions.exactFmaOnly = true;
    pm.addPass(createKilnApproximateMathPass(fmaOptions));
  }

  // Buffers: results become caller-provided out-params (the entry ABI).
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferizeOptions;
  bufferizeOptions.bufferizeFunctionBoundaries = true;
  bufferizeOptions.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferizeOptions));
  bufferization::BufferResultsToOutParamsPassOptions outParamOptions;
  outParamOptions.modifyPublicFunctions = true;
  outParamOptions.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParamOptions));
  // Symbolic dims: the entry takes the symbols' values and bare pointers,
  // reinterpreted with their run-time sizes (a static model is unchanged).
  pm.addPass(createKilnBindSymbolicDimsPass());
  // CSE merges the twin subviews an in-place insert_slice bufferizes to, so
  // the canonicalizer drops its self-copy (padded interiors, border strips).
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // Matmul / conv / depthwise on buffers become register-blocked kernels
  // (weights packed at compile time, accumulators carried in registers).
  // The register block of each is chosen for the target first and recorded
  // on the op (#kiln.kernel_strategy), which the emitter reads. Chosen again
  // here (the same choice: it depends on the target and shape only), for the
  // Winograd products and any op a rewrite since rebuilt without its
  // attributes (one-shot bufferization keeps them).
  pm.addPass(createKilnSelectKernelStrategyPass(strategyOptions));
  pm.addPass(createKilnEmitMicrokernelsPass());
  // Without region simplification: on large loop nests it dominated compile
  // time (38 s of 44 s on MobileNetV2).
  GreedyRewriteConfig cheapCanonicalize;
  cheapCanonicalize.setRegionSimplificationLevel(
      GreedySimplifyRegionLevel::Disabled);
  pm.addPass(createCanonicalizerPass(cheapCanonicalize));
  pm.addPass(createCSEPass());
  // What is left of linalg (elementwise, reductions, pooling, copies) runs
  // over the thread pool too, innermost loop contiguous for the vectorizer;
  // ops working on the same rows share one loop. Before memory planning,
  // which then sees the buffers of one fused loop live together.
  pm.addPass(createKilnParallelizeLoopsPass());
  // Intermediates in one compile-time-planned scratch arena (no allocation
  // inside a run); what is left (dynamic shapes, escaping buffers) is freed
  // by the deallocation pipeline.
  pm.addPass(createKilnPlanMemoryPass());
  bufferization::BufferDeallocationPipelineOptions deallocOptions;
  bufferization::buildBufferDeallocationPipeline(pm, deallocOptions);
  // Run outputs (sizes the run's values decide): the buffer the entry hands
  // the runtime, allocated after deallocation so that nothing frees it.
  pm.addPass(createKilnAllocateRunOutputsPass());
  // Its helper functions (memref<?xindex> arguments) cannot take the bare
  // pointer calling convention: their bodies go in place of the calls.
  pm.addPass(createKilnInlineDeallocHelpersPass());

  // Padded buffers sharing arena bytes got their borders refilled.
  pm.addNestedPass<func::FuncOp>(createKilnDropRedundantFillsPass());
  // kiln.parallel loops become calls through the runtime's thread pool (the
  // entry's `_ctx` form takes a trailing `kiln_exec_context *`). After
  // deallocation: the closure's stores would hide later uses of buffers.
  pm.addPass(createKilnOutlineParallelLoopsPass());
  // Kernels that differ only in their weights share one body (a model's
  // repeated layers): LLVM compiles it once.
  pm.addPass(createKilnMergeKernelsPass());
  // Entry arguments with zero elements: bare pointers cannot describe them.
  pm.addPass(createKilnReplaceEmptyEntryBuffersPass());

  // Down to the LLVM dialect.
  pm.addNestedPass<func::FuncOp>(createKilnLowerStridedCopiesPass());
  pm.addNestedPass<func::FuncOp>(createKilnLowerReductionsPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // exp / erf / tanh / log as polynomials LLVM vectorizes, not libm calls.
  KilnApproximateMathPassOptions mathOptions;
  mathOptions.expandFma =
      llvm::Triple(target.triple).isX86() &&
      !llvm::is_contained(llvm::split(target.runtimeFeatures, ','), "fma");
  pm.addPass(createKilnApproximateMathPass(mathOptions));
  // Fully unrolled: the default keeps temporary buffers, allocas inside
  // loops that grow the stack on every iteration.
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  // Bounded function size: the loops left in the entry (too small for the
  // thread pool) move to noinline functions of about 4000 ops each, or
  // SCFToControlFlow and LLVM are quadratic in a graph of small kernels.
  // Each loop left in the entry its own function first, so that the equal
  // ones (DenseNet's dense layers: copies, pad borders, Winograd transforms
  // into concatenations of growing width) become one (kiln-merge-serial-loops
  // below, on the LLVM dialect, where their shapes are constants).
  KilnOutlineSerialCodePassOptions serialOptions;
  serialOptions.loops = true;
  pm.addPass(createKilnOutlineSerialCodePass(serialOptions));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // bf16 arithmetic is done in f32 and bf16 conversions become integer ops,
  // before any *-to-llvm pass (those convert arith too): otherwise LLVM calls
  // __truncsfbf2, which a model .so does not link.
  arith::ArithEmulateUnsupportedFloatsOptions emulateOptions;
  emulateOptions.sourceTypeStrs = {"bf16"};
  emulateOptions.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulateOptions));
  arith::ArithExpandOpsPassOptions expandOptions;
  expandOptions.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expandOptions));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  ConvertVectorToLLVMPassOptions vectorOptions;
  vectorOptions.vectorContractLowering =
      vector::VectorContractLowering::OuterProduct;
  pm.addPass(createConvertVectorToLLVMPass(vectorOptions));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // The serial loops, and the kernels, that differ only in their shapes'
  // constants: one body each (DenseNet's layers over concatenations of
  // growing width).
  KilnMergeSerialLoopsPassOptions mergeSerialOptions;
  mergeSerialOptions.mergeKernels = true;
  pm.addPass(createKilnMergeSerialLoopsPass(mergeSerialOptions));
  // No canonicalization of the LLVM dialect: LLVM's O3 pipeline does the
  // same cleanup on the translated module.
}

} // namespace kiln
