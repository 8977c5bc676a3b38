//===- SymbolicBatch.cpp - image ops over a symbolic batch ----------------===//
//
// Conv and the pooling ops with a symbolic batch (dim 0
// of X `?`, every other dim static; kiln-symbolic-shapes checked it) run one
// image at a time: an scf.for over the batch whose body is the same op on a
// static [1, C, H, W] slice, lowered by that op's usual (static) pattern, so
// it keeps the static path's kernels; each image's result is inserted into
// the batch's result.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln::onnx_to_linalg {
namespace {

template <typename OpTy>
struct SymbolicBatchLowering : OpConversionPattern<OpTy> {
  SymbolicBatchLowering(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern<OpTy>(converter, ctx, /*benefit=*/10) {}
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value x = adaptor.getOperands()[0];
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    if (!xType || xType.getRank() < 1 || !xType.isDynamicDim(0))
      return failure();
    for (int64_t i = 1; i < xType.getRank(); ++i)
      if (xType.isDynamicDim(i))
        return failure();
    SmallVector<RankedTensorType> resultTypes;
    SmallVector<unsigned> tensorResults; // the others are absent (`none`)
    for (auto [k, r] : llvm::enumerate(op->getResults())) {
      if (r.use_empty())
        continue; // absent (`none`) or unused (BatchNormalization's stats)
      tensorResults.push_back(k);
      auto t = dyn_cast<RankedTensorType>(r.getType());
      if (!t || t.getRank() < 1 || !t.isDynamicDim(0))
        return failure();
      for (int64_t i = 1; i < t.getRank(); ++i)
        if (t.isDynamicDim(i))
          return failure();
      resultTypes.push_back(t);
    }
    Location loc = op.getLoc();
    Value n = tensor::DimOp::create(rewriter, loc, x, 0);
    SmallVector<Value> inits;
    for (RankedTensorType t : resultTypes)
      inits.push_back(tensor::EmptyOp::create(rewriter, loc, t, ValueRange{n}));
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(rewriter, loc, c0, n, c1, inits);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    auto image = [&](ArrayRef<int64_t> shape) {
      SmallVector<int64_t> one(shape);
      one[0] = 1;
      return one;
    };
    auto sliceParams = [&](int64_t rank, ArrayRef<int64_t> shape,
                           SmallVector<OpFoldResult> &offsets,
                           SmallVector<OpFoldResult> &sizes,
                           SmallVector<OpFoldResult> &strides) {
      offsets.assign(rank, rewriter.getIndexAttr(0));
      offsets[0] = i;
      sizes.clear();
      for (int64_t d : image(shape))
        sizes.push_back(rewriter.getIndexAttr(d));
      strides.assign(rank, rewriter.getIndexAttr(1));
    };
    SmallVector<OpFoldResult> offsets, sizes, strides;
    sliceParams(xType.getRank(), xType.getShape(), offsets, sizes, strides);
    auto sliceType =
        RankedTensorType::get(image(xType.getShape()), xType.getElementType());
    Value slice = tensor::ExtractSliceOp::create(rewriter, loc, sliceType, x,
                                                 offsets, sizes, strides);
    // The same op on one image: static, lowered by its usual pattern.
    Operation *single = rewriter.clone(*op.getOperation());
    single->setOperand(0, slice);
    for (auto [k, t] : llvm::zip(tensorResults, resultTypes))
      single->getResult(k).setType(
          RankedTensorType::get(image(t.getShape()), t.getElementType()));
    SmallVector<Value> updated;
    for (auto [j, t] : llvm::enumerate(resultTypes)) {
      sliceParams(t.getRank(), t.getShape(), offsets, sizes, strides);
      Value result = single->getResult(tensorResults[j]);
      // MaxPool's Indices are flat over the whole batch: the image's index
      // plus i * C * H * W.
      if (isa<onnx::MaxPoolOp>(op.getOperation()) && tensorResults[j] == 1) {
        int64_t imageSize = 1;
        for (int64_t d : xType.getShape().drop_front())
          imageSize *= d;
        Type i64 = rewriter.getI64Type();
        Value offset = arith::IndexCastOp::create(
            rewriter, loc, i64,
            arith::MulIOp::create(
                rewriter, loc, i,
                arith::ConstantIndexOp::create(rewriter, loc, imageSize)));
        result = createElementwiseGeneric(
            rewriter, loc, cast<RankedTensorType>(result.getType()), result,
            [&](OpBuilder &b, Location l, ValueRange args) -> Value {
              return arith::AddIOp::create(b, l, args[0], offset);
            });
      }
      updated.push_back(tensor::InsertSliceOp::create(
          rewriter, loc, result,
          loop.getRegionIterArgs()[j], offsets, sizes, strides));
    }
    scf::YieldOp::create(rewriter, loc, updated);
    rewriter.setInsertionPointAfter(loop);
    SmallVector<Value> replacements;
    for (unsigned k = 0, j = 0; k < op->getNumResults(); ++k) {
      Type type = op->getResult(k).getType();
      auto unused = dyn_cast<RankedTensorType>(type);
      if (j < tensorResults.size() && tensorResults[j] == k)
        replacements.push_back(loop.getResult(j++));
      else if (unused && unused.hasStaticShape())
        replacements.push_back(createEmptyTensor(rewriter, loc, unused));
      else
        replacements.push_back(
            onnx::NoValueOp::create(rewriter, loc).getResult());
    }
    rewriter.replaceOp(op, replacements);
    return success();
  }
};

} // namespace

void populateSymbolicBatchPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns) {
  patterns.add<SymbolicBatchLowering<onnx::ConvOp>,
               SymbolicBatchLowering<onnx::MaxPoolOp>,
               SymbolicBatchLowering<onnx::AveragePoolOp>,
               SymbolicBatchLowering<onnx::GlobalAveragePoolOp>,
               SymbolicBatchLowering<onnx::GlobalMaxPoolOp>>(
      converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
