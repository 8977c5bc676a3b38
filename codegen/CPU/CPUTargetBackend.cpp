//===- CPUTargetBackend.cpp - x86-64 and AArch64 behind the seam ----------===//

#include "codegen/CPU/CPUTargetBackend.h"

#include "codegen/CPU/CPUPipeline.h"
#include "dialects/Kiln/ABIAttributes.h"
#include "dialects/ONNX/DataTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {

namespace {

/// Dialects whose ops buildCPUCodegenPipeline lowers to the LLVM dialect.
constexpr llvm::StringLiteral kLoweredDialects[] = {
    "builtin",       "func",   "arith",  "math",   "linalg", "tensor", "scf",
    "bufferization", "affine", "memref", "vector", "cf",     "ub",     "kiln"};

/// Element types the kernels and the LLVM lowering compute with (bf16 and
/// f16 arithmetic runs in f32), or at least store (the 8-bit floats).
bool isSupportedElementType(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth() <= 64;
  return type.isIndex() || type.isF16() || type.isBF16() || type.isF32() ||
         type.isF64() || onnx::isFloat8Type(type);
}

/// `expr` (over symbols only) as a C expression of `int64_t symbols[]`
/// (the shape function's argument; docs/dynamic-shapes.md).
std::string getSymbolExprC(AffineExpr expr) {
  if (auto c = dyn_cast<AffineConstantExpr>(expr))
    return std::to_string(c.getValue()) + "ll";
  if (auto s = dyn_cast<AffineSymbolExpr>(expr))
    return "symbols[" + std::to_string(s.getPosition()) + "]";
  auto binary = cast<AffineBinaryOpExpr>(expr);
  std::string lhs = getSymbolExprC(binary.getLHS());
  std::string rhs = getSymbolExprC(binary.getRHS());
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return "(" + lhs + " + " + rhs + ")";
  case AffineExprKind::Mul:
    return "(" + lhs + " * " + rhs + ")";
  case AffineExprKind::FloorDiv: // sizes: non-negative operands
    return "(" + lhs + " / " + rhs + ")";
  case AffineExprKind::CeilDiv:
    return "((" + lhs + " + " + rhs + " - 1) / " + rhs + ")";
  case AffineExprKind::Mod:
    return "(" + lhs + " % " + rhs + ")";
  default:
    return "0ll";
  }
}

} // namespace

bool computesOnFloat8(Operation *op) {
  if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
      isa<arith::ConstantOp, arith::SelectOp, arith::BitcastOp>(op))
    return false;
  auto isF8 = [](Type t) {
    return onnx::isFloat8Type(getElementTypeOrSelf(t));
  };
  return llvm::any_of(op->getOperandTypes(), isF8) ||
         llvm::any_of(op->getResultTypes(), isF8);
}

namespace {

class CPUTargetBackend final : public TargetBackend {
public:
  explicit CPUTargetBackend(CPUTarget target) : target(std::move(target)) {}

  StringRef getDeviceName() const override { return "cpu"; }

  ExecutableFormat getExecutableFormat() const override {
    return ExecutableFormat::HostObject;
  }

  bool isSupported(Operation *op, std::string &reason) const override {
    std::string name = op->getName().getStringRef().str();
    if (!llvm::is_contained(kLoweredDialects,
                            op->getName().getDialectNamespace())) {
      reason = "operation '" + name + "'";
      return false;
    }
    if (computesOnFloat8(op)) {
      reason = "arithmetic on 8-bit floats ('" + name + "'): cast them to " +
               "float first";
      return false;
    }
    return hasSupportedElementTypes(op, isSupportedElementType,
                                    /*checkOperands=*/false, reason);
  }

  void buildPipeline(OpPassManager &pm) const override {
    buildCPUCodegenPipeline(pm, target);
  }

  ExecutableInfo getExecutableInfo(ModuleOp module) const override {
    ExecutableInfo info;
    info.format = ExecutableFormat::HostObject;
    info.triple = target.triple;
    info.cpu = target.cpu;
    info.runtimeFeatures = target.runtimeFeatures;
    info.scratchSize = getScratchSize(module).value_or(0);
    if (auto bytes = module->getAttrOfType<AffineMapAttr>(
            "kiln.dynamic_scratch_size"))
      info.dynamicScratchSize = getSymbolExprC(bytes.getValue().getResult(0));
    for (std::string &message : getCheckMessages(module))
      info.checkMessages.push_back(std::move(message));
    for (KernelName &kernel : getKernelNames(module))
      info.kernelNames.push_back(std::move(kernel.nodes));
    return info;
  }

  LogicalResult serializeExecutable(ModuleOp module,
                                    const SerializeOptions &options,
                                    StringRef path,
                                    std::string &error) const override {
    llvm::function_ref<void(StringRef)> onPhase;
    if (options.onPhase) // a function_ref of an empty std::function is not null
      onPhase = options.onPhase;
    WeightReadersFn describeReaders;
    if (options.describeReaders)
      describeReaders = options.describeReaders;
    return emitObjectFile(module, target, options.entrySymbol, path, error,
                          options.linkBitcode, onPhase,
                          options.releaseConstants, options.sharedWeights,
                          describeReaders);
  }

  LogicalResult printExecutable(ModuleOp module,
                                const SerializeOptions &options,
                                raw_ostream &os,
                                std::string &error) const override {
    return emitLLVMIR(module, target, options.entrySymbol, os, error);
  }

private:
  CPUTarget target;
};

} // namespace

std::unique_ptr<TargetBackend>
createCPUTargetBackend(const TargetOptions &options, std::string &error) {
  FailureOr<CPUTarget> target =
      resolveCPUTarget(options.triple, options.cpu, error);
  if (failed(target))
    return nullptr;
  if (options.precision != "fp32" && options.precision != "bf16" &&
      options.precision != "fp16") {
    error = "unknown precision '" + options.precision +
            "' (the cpu target computes fp32, bf16 or fp16)";
    return nullptr;
  }
  target->precision = options.precision;
  return std::make_unique<CPUTargetBackend>(std::move(*target));
}

} // namespace kiln
