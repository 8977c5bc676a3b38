//===- Einsum.cpp - Einsum to one linalg.generic --------------------------===//
//
// kiln-decompose turns the MatMul-shaped Einsums into MatMul; the others
// (one operand: transposes, sums, diagonals; three or more operands; outer
// products; broadcast dims) become one linalg.generic iterating over every
// label: the output labels (parallel) then the summed ones (reduction). An
// operand's dim reads its label's loop index (a repeated label: the same
// index twice, a diagonal), or index 0 where a size-1 dim broadcasts. The
// body multiplies the operands and adds to the accumulator, which is f32 for
// f16/bf16 (rounded once at the end, as numpy's reference does).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/Einsum.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

namespace kiln::onnx_to_linalg {
namespace {

using kiln::onnx::emitNodeError;

struct EinsumLowering : OpConversionPattern<onnx::EinsumOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::EinsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType yType = getConvertedResultType(getTypeConverter(), op);
    if (!yType)
      return emitNodeError(op) << "Einsum needs static shapes", failure();
    Type elemType = yType.getElementType();
    if (!isFloat(elemType) && !isIntNotBool(elemType))
      return emitNodeError(op) << "Einsum on " << yType << " is not supported",
             failure();
    SmallVector<ArrayRef<int64_t>> shapes;
    for (Value v : adaptor.getInputs()) {
      RankedTensorType t = getStaticTensorType(v);
      if (!t)
        return emitNodeError(op) << "Einsum needs static shapes", failure();
      shapes.push_back(t.getShape());
    }
    std::string error;
    FailureOr<onnx::EinsumEquation> eq =
        onnx::parseEinsumEquation(op.getEquation(), shapes, error);
    if (failed(eq))
      return emitNodeError(op) << error, failure();

    // Loop dims: the output labels in output order, then the summed labels.
    int64_t numLabels = eq->numLabels();
    SmallVector<int64_t> loopOf(numLabels, -1);
    int64_t numLoops = 0;
    for (int64_t l : eq->output)
      loopOf[l] = numLoops++;
    int64_t numParallel = numLoops;
    for (int64_t l = 0; l < numLabels; ++l)
      if (loopOf[l] < 0)
        loopOf[l] = numLoops++;

    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps;
    for (auto [labels, shape] : llvm::zip_equal(eq->inputs, shapes)) {
      SmallVector<AffineExpr> exprs;
      for (auto [l, size] : llvm::zip_equal(labels, shape))
        exprs.push_back(size == eq->sizes[l]
                            ? getAffineDimExpr(loopOf[l], ctx)
                            : getAffineConstantExpr(0, ctx));
      maps.push_back(AffineMap::get(numLoops, 0, exprs, ctx));
    }
    SmallVector<AffineExpr> outExprs;
    for (int64_t i = 0; i < numParallel; ++i)
      outExprs.push_back(getAffineDimExpr(i, ctx));
    maps.push_back(AffineMap::get(numLoops, 0, outExprs, ctx));
    SmallVector<utils::IteratorType> iterators(numParallel,
                                               utils::IteratorType::parallel);
    iterators.append(numLoops - numParallel, utils::IteratorType::reduction);

    Type accType = getAccumulatorType(elemType);
    auto accTensorType = RankedTensorType::get(yType.getShape(), accType);
    Value init = createFilledTensor(
        rewriter, loc, accTensorType,
        createScalarConstant(rewriter, loc, accType, 0.0));
    bool isFloatType = isa<FloatType>(accType);
    Value acc =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{accTensorType}, adaptor.getInputs(),
            ValueRange{init}, maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value product;
              for (Value arg : args.drop_back()) {
                Value x = arg.getType() == accType
                              ? arg
                              : convertScalar(b, l, arg, accType);
                if (!product)
                  product = x;
                else if (isFloatType)
                  product = arith::MulFOp::create(b, l, product, x);
                else
                  product = arith::MulIOp::create(b, l, product, x);
              }
              Value sum =
                  isFloatType
                      ? arith::AddFOp::create(b, l, args.back(), product)
                            .getResult()
                      : arith::AddIOp::create(b, l, args.back(), product)
                            .getResult();
              linalg::YieldOp::create(b, l, sum);
            })
            .getResult(0);
    rewriter.replaceOp(op, narrowProduct(rewriter, loc, acc, elemType));
    return success();
  }
};

} // namespace

void populateEinsumPatterns(TypeConverter &converter,
                            RewritePatternSet &patterns) {
  patterns.add<EinsumLowering>(converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
