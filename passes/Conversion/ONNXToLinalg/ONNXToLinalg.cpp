//===- ONNXToLinalg.cpp - the convert-onnx-to-linalg pass -----------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/SubByte.h"
#include "passes/Conversion/Passes.h"

#include "dialects/ONNX/DataTypes.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXDialect.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTONNXTOLINALGPASS
#include "passes/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Tensors of unsigned integers become signless: arith and linalg only
/// accept signless integers. int4, uint4, int2, uint2, float4e2m1 and
/// float8e8m0 are held one per i8 (SubByte.h). Everything else is kept.
void addTypeConversions(TypeConverter &converter) {
  converter.addConversion([](Type type) -> Type {
    if (kiln::onnx::isStorageOnlyType(type))
      return IntegerType::get(type.getContext(), 8);
    return type;
  });
  converter.addConversion([](IntegerType type) -> Type {
    if (kiln::onnx::isStorageOnlyType(type))
      return IntegerType::get(type.getContext(), 8);
    if (type.isSignless())
      return type;
    return IntegerType::get(type.getContext(), type.getWidth());
  });
  converter.addConversion([&converter](RankedTensorType type) -> Type {
    return type.clone(converter.convertType(type.getElementType()));
  });
}

/// The ops that may see int4, uint4, int2, uint2, float4e2m1 or float8e8m0
/// values: conversions, and moving the elements about (held one per i8, any
/// op that only moves bytes is right). Anything computing with them is an
/// error naming the node.
LogicalResult checkStorageOnlyUses(ModuleOp module) {
  static const llvm::StringLiteral kAllowed[] = {
      "Constant", "Identity", "Cast",  "CastLike", "Reshape",
      "Flatten",  "Squeeze",  "Unsqueeze", "Transpose", "Concat",
      "Slice",    "Gather",   "Expand", "Shape",    "Size"};
  auto isStorageOnly = [](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return shaped && kiln::onnx::isStorageOnlyType(shaped.getElementType());
  };
  bool failed = false;
  module.walk([&](Operation *op) {
    if (!isa<kiln::onnx::ONNXDialect>(op->getDialect()) ||
        llvm::is_contained(kAllowed, op->getName().stripDialect()))
      return;
    Type bad;
    for (Type t : op->getOperandTypes())
      if (!bad && isStorageOnly(t))
        bad = t;
    for (Type t : op->getResultTypes())
      if (!bad && isStorageOnly(t))
        bad = t;
    if (!bad)
      return;
    kiln::onnx::emitNodeError(op)
        << "operator '" << op->getName().stripDialect() << "' on "
        << cast<ShapedType>(bad).getElementType()
        << " (int4, uint4, int2, uint2, float4e2m1 or float8e8m0) is not "
           "supported: kiln only casts and moves these types (Cast them to a "
           "wider type first)";
    failed = true;
  });
  return failure(failed);
}

struct ConvertONNXToLinalgPass
    : kiln::impl::ConvertONNXToLinalgPassBase<ConvertONNXToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();

    TypeConverter converter;
    addTypeConversions(converter);
    RewritePatternSet patterns(context);
    using namespace kiln::onnx_to_linalg;
    populateConstantPatterns(converter, patterns);
    populateElementwisePatterns(converter, patterns);
    populateLinearPatterns(converter, patterns);
    populateSymbolicBatchPatterns(converter, patterns);
    populateConvolutionPatterns(converter, patterns);
    populateQuantizationPatterns(converter, patterns);
    populatePoolingPatterns(converter, patterns);
    populateNormalizationPatterns(converter, patterns);
    populateReductionPatterns(converter, patterns);
    populateDataMovementPatterns(converter, patterns);
    populateRunDimsPatterns(converter, patterns);
    populateScanPatterns(converter, patterns);
    populateControlFlowPatterns(converter, patterns);
    populateResizePatterns(converter, patterns);
    populateScatterPatterns(converter, patterns);
    populateGridSamplePatterns(converter, patterns);
    populateTopKPatterns(converter, patterns);
    populateNonMaxSuppressionPatterns(converter, patterns);
    populateCompressPatterns(converter, patterns);
    populateNonZeroPatterns(converter, patterns);
    populateUniquePatterns(converter, patterns);
    populateRunTimeSizesPatterns(converter, patterns);
    populateEinsumPatterns(converter, patterns);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateReturnOpTypeConversionPattern(patterns, converter);

    // An op nobody lowers is reported by name before conversion starts, so
    // the message names the ONNX node rather than a conversion failure.
    llvm::DenseSet<OperationName> lowered;
    for (const std::unique_ptr<RewritePattern> &pattern :
         patterns.getNativePatterns())
      if (std::optional<OperationName> root = pattern->getRootKind())
        lowered.insert(*root);
    bool unsupported = false;
    module.walk([&](Operation *op) {
      // onnx.NoValue stays legal: consumers ignore `none` operands and the
      // unused NoValue ops are erased after conversion. onnx.Yield is
      // replaced by the pattern of the If / Loop / Scan it ends.
      if (!isa<kiln::onnx::ONNXDialect>(op->getDialect()) ||
          lowered.contains(op->getName()) ||
          isa<kiln::onnx::NoValueOp, kiln::onnx::YieldOp>(op))
        return;
      kiln::onnx::emitNodeError(op)
          << "operator '" << op->getName().stripDialect()
          << "' is not supported by kiln yet (no lowering)";
      unsupported = true;
    });
    if (unsupported)
      return signalPassFailure();
    if (failed(checkStorageOnlyUses(module)))
      return signalPassFailure();
    kiln::onnx_to_linalg::PackedBoundary boundary =
        kiln::onnx_to_linalg::findPackedBoundary(module);

    ConversionTarget target(*context);
    target.addIllegalDialect<kiln::onnx::ONNXDialect>();
    target.addLegalOp<kiln::onnx::NoValueOp>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect,
                           scf::SCFDialect, bufferization::BufferizationDialect,
                           vector::VectorDialect, kiln::KilnDialect>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp func) {
      return converter.isSignatureLegal(func.getFunctionType());
    });
    target.addDynamicallyLegalOp<func::ReturnOp>(
        [&](func::ReturnOp op) { return converter.isLegal(op); });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    // Packed graph inputs and outputs cross the ABI packed.
    if (failed(kiln::onnx_to_linalg::packEntryBoundary(module, boundary)))
      return signalPassFailure();

    // Constants with no elements hold no data: empty tensors. Done after the
    // patterns, which may read them (a Reduce's empty `axes`); an empty dense
    // constant would become an empty LLVM global, and MLIR's translation
    // divides by its element count.
    module.walk([&](arith::ConstantOp op) {
      auto type = dyn_cast<RankedTensorType>(op.getType());
      if (!type || !type.hasStaticShape() || type.getNumElements() != 0)
        return;
      OpBuilder b(op);
      op.replaceAllUsesWith(
          tensor::EmptyOp::create(b, op.getLoc(), type.getShape(),
                                  type.getElementType())
              .getResult());
      op.erase();
    });

    // Absent optional inputs/outputs: no lowered op reads a `none` value.
    bool noneUsed = false;
    module.walk([&](kiln::onnx::NoValueOp op) {
      if (op->use_empty()) {
        op->erase();
        return;
      }
      kiln::onnx::emitNodeError(*op->getUsers().begin())
          << "an absent optional value ('none') is still used after lowering";
      noneUsed = true;
    });
    if (noneUsed)
      return signalPassFailure();
  }
};

} // namespace
