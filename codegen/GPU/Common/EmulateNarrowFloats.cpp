//===- EmulateNarrowFloats.cpp - bf16 and float8 as integers on GPUs ------===//
//
// SPIR-V for Vulkan 1.1 has no bf16 and no 8-bit float types, and the NVVM
// and ROCDL lowerings have neither bf16 math nor any float8 conversion. So,
// on linalg-on-tensors before the GPU pipeline, every bf16 tensor and scalar
// becomes an i16 one and every float8 (f8E4M3FN, f8E4M3FNUZ, f8E5M2,
// f8E5M2FNUZ) an i8 one: the same bits, so graph inputs, outputs and weights
// keep their bytes and the artifact's ABI is unchanged. bf16 arithmetic is
// done in f32 (what the CPU does): math ops are extended
// (math-extend-to-supported-types), arith ops emulated
// (arith-emulate-unsupported-floats), and the bf16 <-> f32 conversions left
// are expanded into integer ops (arith-expand's bf16 patterns: exact
// widening, round to nearest even); bf16 <-> f64 goes through f32, the
// narrowing rounded to odd first so that it rounds once. The float8 formats
// are only stored and moved: the CPU's Cast / Q / DQ code already works on
// their bits through `arith.bitcast` (passes/Conversion/ONNXToLinalg/Float8.cpp),
// and arithmetic on them is refused by the targets' support check.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/Passes.h"
#include "dialects/ONNX/DataTypes.h"
#include "dialects/ONNX/Diagnostics.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUEMULATENARROWFLOATSPASS
#include "codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

bool isNarrowFloat(Type type) {
  return type.isBF16() || kiln::onnx::isFloat8Type(type);
}

/// The integer type holding a narrow float's bits (null for other types).
IntegerType storageTypeOf(Type type) {
  if (!isNarrowFloat(type))
    return nullptr;
  return IntegerType::get(type.getContext(), type.getIntOrFloatBitWidth());
}

/// Whether `type` is a narrow float or holds one (tensor, memref, vector,
/// function).
bool holdsNarrowFloat(Type type) {
  bool found = false;
  type.walk([&](Type inner) {
    if (isNarrowFloat(inner))
      found = true;
  });
  return found;
}

bool touchesNarrowFloat(Operation *op) {
  if (llvm::any_of(op->getOperandTypes(), holdsNarrowFloat) ||
      llvm::any_of(op->getResultTypes(), holdsNarrowFloat))
    return true;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (llvm::any_of(block.getArgumentTypes(), holdsNarrowFloat))
        return true;
  return false;
}

/// `arith.extf` bf16 -> f64: through f32 (both steps exact).
struct ExtendBF16ToF64 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getIn().getType().isBF16() || !op.getType().isF64())
      return failure();
    Value f32 = arith::ExtFOp::create(rewriter, op.getLoc(),
                                      rewriter.getF32Type(), op.getIn());
    rewriter.replaceOpWithNewOp<arith::ExtFOp>(op, op.getType(), f32);
    return success();
  }
};

/// `arith.truncf` f64 -> bf16: f64 -> f32 rounded to odd (truncated toward
/// zero, the last bit set when inexact), then f32 -> bf16 to nearest even:
/// one rounding, as a direct f64 -> bf16 conversion (f32 keeps more than
/// bf16's 8 bits + 2). NaN stays NaN; beyond f32's range the odd result is
/// f32's largest finite value, which rounds to infinity in bf16, as it
/// should.
struct TruncateF64ToBF16 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getIn().getType().isF64() || !op.getType().isBF16() ||
        op.getRoundingmodeAttr())
      return failure();
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type(), i32 = rewriter.getI32Type();
    Value x = op.getIn();
    Value nearest = arith::TruncFOp::create(rewriter, loc, f32, x);
    Value back = arith::ExtFOp::create(rewriter, loc, rewriter.getF64Type(),
                                       nearest);
    Value bits = arith::BitcastOp::create(rewriter, loc, i32, nearest);
    auto i32Const = [&](int64_t v) {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getI32IntegerAttr(v));
    };
    // Rounded away from zero: one step back (|x| > 0 then, so the magnitude
    // bits are > 0).
    Value absBack = math::AbsFOp::create(rewriter, loc, back);
    Value absX = math::AbsFOp::create(rewriter, loc, x);
    Value awayFromZero = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OGT, absBack, absX);
    Value truncated = arith::SelectOp::create(
        rewriter, loc, awayFromZero,
        arith::SubIOp::create(rewriter, loc, bits, i32Const(1)), bits);
    // Inexact (never for NaN: the comparison is ordered): the last bit set.
    Value inexact = arith::CmpFOp::create(rewriter, loc,
                                          arith::CmpFPredicate::ONE, back, x);
    Value odd = arith::SelectOp::create(
        rewriter, loc, inexact,
        arith::OrIOp::create(rewriter, loc, truncated, i32Const(1)), truncated);
    Value toOdd = arith::BitcastOp::create(rewriter, loc, f32, odd);
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), toOdd);
    return success();
  }
};

/// The op's node for a diagnostic.
InFlightDiagnostic emitNodeError(Operation *op) {
  InFlightDiagnostic diag = op->emitError();
  if (std::optional<std::string> node = kiln::onnx::getNodeName(op))
    diag << "node '" << *node << "': ";
  return diag;
}

struct EmulateNarrowFloatsPass
    : kiln::impl::KilnGPUEmulateNarrowFloatsPassBase<EmulateNarrowFloatsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    bool any = false;
    module.walk([&](Operation *op) {
      if (touchesNarrowFloat(op) ||
          (isa<FunctionOpInterface>(op) &&
           holdsNarrowFloat(cast<FunctionOpInterface>(op).getFunctionType()))) {
        any = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (!any) {
      markAllAnalysesPreserved();
      return;
    }

    // 1. Named linalg ops computing on narrow floats become generics: their
    // bodies are then ordinary arith ops, emulated below, and no pattern
    // rebuilds a named op's body from integer operands later (a matmul of
    // i16 would convert them as integers). Ops that only move elements stay
    // named.
    SmallVector<linalg::LinalgOp> named;
    module.walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::GenericOp, linalg::CopyOp, linalg::FillOp,
               linalg::TransposeOp, linalg::BroadcastOp>(op.getOperation()) &&
          touchesNarrowFloat(op))
        named.push_back(op);
    });
    IRRewriter rewriter(ctx);
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op))) {
        emitNodeError(op) << "'" << op->getName()
                          << "' on bf16 or float8 elements cannot be "
                             "generalized for a GPU target";
        return signalPassFailure();
      }
    }

    // 2. bf16 arithmetic in f32: math ops extended, arith ops emulated (f16
    // is computed as it is).
    OpPassManager scalar(ModuleOp::getOperationName());
    math::MathExtendToSupportedTypesOptions mathOptions;
    mathOptions.extraTypeStrs = {"f16"};
    mathOptions.targetTypeStr = "f32";
    scalar.addPass(math::createMathExtendToSupportedTypes(mathOptions));
    arith::ArithEmulateUnsupportedFloatsOptions emulateOptions;
    emulateOptions.sourceTypeStrs = {"bf16"};
    emulateOptions.targetTypeStr = "f32";
    scalar.addPass(arith::createArithEmulateUnsupportedFloats(emulateOptions));
    if (failed(runPipeline(scalar, module)))
      return signalPassFailure();
    // The bf16 <-> f32 / f64 conversions as integer ops.
    RewritePatternSet patterns(ctx);
    patterns.add<ExtendBF16ToF64, TruncateF64ToBF16>(ctx);
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();

    // 3. What is left on a narrow float scalar must only store or move its
    // bits: a constant, a select, a bitcast, or an op of no arithmetic
    // dialect (tensor.extract, linalg.yield, ...).
    bool refused = false;
    module.walk([&](Operation *op) {
      if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
          isa<arith::ConstantOp, arith::SelectOp, arith::BitcastOp>(op) ||
          !touchesNarrowFloat(op))
        return;
      Type type;
      for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                       op->getResultTypes()))
        if (!type && holdsNarrowFloat(t))
          type = getElementTypeOrSelf(t);
      emitNodeError(op) << "'" << op->getName() << "' on " << type
                        << " has no GPU lowering (GPU targets store bf16 and "
                           "float8 as integers: bf16 is computed in f32, "
                           "float8 only cast)";
      refused = true;
    });
    if (refused)
      return signalPassFailure();

    // 4. Every type and attribute: bf16 -> i16, float8 -> i8, constants
    // keeping their bits.
    AttrTypeReplacer replacer;
    replacer.addReplacement([](Type type) -> std::optional<Type> {
      if (IntegerType storage = storageTypeOf(type))
        return Type(storage);
      return std::nullopt;
    });
    replacer.addReplacement(
        [](FloatAttr attr)
            -> std::optional<std::pair<Attribute, WalkResult>> {
          IntegerType storage = storageTypeOf(attr.getType());
          if (!storage)
            return std::nullopt;
          return std::make_pair(
              Attribute(IntegerAttr::get(storage,
                                         attr.getValue().bitcastToAPInt())),
              WalkResult::skip());
        });
    replacer.addReplacement(
        [&](DenseElementsAttr attr)
            -> std::optional<std::pair<Attribute, WalkResult>> {
          IntegerType storage = storageTypeOf(attr.getElementType());
          if (!storage)
            return std::nullopt;
          return std::make_pair(Attribute(attr.bitcast(storage)),
                                WalkResult::skip());
        });
    replacer.addReplacement(
        [&](DenseResourceElementsAttr attr)
            -> std::optional<std::pair<Attribute, WalkResult>> {
          IntegerType storage = storageTypeOf(attr.getElementType());
          if (!storage)
            return std::nullopt;
          return std::make_pair(
              Attribute(DenseResourceElementsAttr::get(
                  attr.getType().clone(storage), attr.getRawHandle())),
              WalkResult::skip());
        });
    replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);

    // Bitcasts between a narrow float and its integer are now no-ops.
    SmallVector<arith::BitcastOp> noops;
    module.walk([&](arith::BitcastOp op) {
      if (op.getIn().getType() == op.getType())
        noops.push_back(op);
    });
    for (arith::BitcastOp op : noops) {
      op.replaceAllUsesWith(op.getIn());
      op.erase();
    }

    // Nothing of them may be left (an attribute kind the replacement does
    // not know, say).
    module.walk([&](Operation *op) {
      if (!touchesNarrowFloat(op))
        return WalkResult::advance();
      emitNodeError(op) << "'" << op->getName()
                        << "' still holds bf16 or float8 values after their "
                           "conversion to integers for a GPU target";
      refused = true;
      return WalkResult::interrupt();
    });
    if (refused)
      signalPassFailure();
  }
};

} // namespace
