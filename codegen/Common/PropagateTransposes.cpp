//===- PropagateTransposes.cpp - keep activations channels-last -----------===//
//
// Convolutions compute in NHWC, ONNX models speak NCHW: the lowering wraps
// every conv in NCHW->NHWC / NHWC->NCHW transposes. Between two convolutions
// the pair fuses away in kiln-fuse-elementwise, but not where an activation
// has several users (a residual add's output feeds the next block and the
// next residual add) or passes through pooling: there the NCHW copy was
// materialized and read back through strided, scalar loops (15% of
// ResNet-50's run).
//
// This pass moves transposes later (towards the graph outputs), so that ops
// run in the layout their transposed operands already have, and cancels
// transpose pairs:
//  - elementwise generic whose full-size operands are all transposes by the
//    same permutation: computed on the sources, one transpose after it;
//  - transpose of a transpose: one transpose, or none;
//  - tensor.pad of a transpose, for pooling: pad the source (pads permuted);
//  - NCHW max/sum pooling of an NHWC->NCHW transpose: NHWC pooling;
//  - linalg.reduce of a transpose whose kept dims stay in order: reduce the
//    source (GlobalAveragePool);
//  - Concat (a chain of tensor.insert_slice into a tensor.empty) of
//    transposes by one permutation: concatenate the sources (SqueezeNet's
//    fire modules).
// What is left is a transpose at the model's inputs and outputs.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_KILNPROPAGATETRANSPOSESPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// `linalg.transpose` of `input` by `perm` (result dim i = input dim perm[i]).
Value createTranspose(PatternRewriter &rewriter, Location loc, Value input,
                      ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  SmallVector<Value> sizes; // symbolic dims (docs/dynamic-shapes.md)
  for (int64_t p : perm) {
    shape.push_back(type.getDimSize(p));
    if (type.isDynamicDim(p))
      sizes.push_back(tensor::DimOp::create(rewriter, loc, input, p));
  }
  Value init = tensor::EmptyOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()), sizes);
  return linalg::TransposeOp::create(rewriter, loc, input, init, perm)
      .getResult()[0];
}

bool isIdentityPermutation(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (p != static_cast<int64_t>(i))
      return false;
  return true;
}

/// transpose(transpose(x, p1), p2) -> transpose(x, p1[p2[i]]), or x.
struct FoldTransposeChain : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<linalg::TransposeOp>();
    if (!inner || !op.hasPureTensorSemantics())
      return failure();
    SmallVector<int64_t> perm;
    for (int64_t p : op.getPermutation())
      perm.push_back(inner.getPermutation()[p]);
    if (isIdentityPermutation(perm)) {
      rewriter.replaceOp(op, inner.getInput());
      return success();
    }
    rewriter.replaceOp(op, createTranspose(rewriter, op.getLoc(),
                                           inner.getInput(), perm));
    return success();
  }
};

/// An all-parallel generic whose full-size operands (identity maps) are all
/// transposes by one permutation runs in the sources' layout instead; its
/// result is transposed once afterwards (where the next transpose back, if
/// any, cancels it).
struct SinkTransposeThroughElementwise : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
        op.getNumLoops() != op.getNumParallelLoops() || op.hasIndexSemantics())
      return failure();
    OpOperand *init = op.getDpsInitOperand(0);
    if (!op.getMatchingIndexingMap(init).isIdentity() ||
        !op.getMatchingBlockArgument(init).use_empty())
      return failure();
    auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
    if (!resultType.hasStaticShape()) // symbolic dims: left as they are
      return failure();
    unsigned rank = resultType.getRank();
    std::optional<SmallVector<int64_t>> perm;
    for (OpOperand *input : op.getDpsInputOperands()) {
      if (!op.getMatchingIndexingMap(input).isIdentity())
        continue;
      auto transpose = input->get().getDefiningOp<linalg::TransposeOp>();
      if (!transpose)
        return failure(); // a full-size operand in this layout: leave it
      ArrayRef<int64_t> p = transpose.getPermutation();
      if (perm && ArrayRef<int64_t>(*perm) != p)
        return failure();
      perm = llvm::to_vector(p);
    }
    if (!perm)
      return failure();

    // Old loop i walks result dim i = source dim perm[i]: in the source
    // layout it is loop perm[i].
    MLIRContext *ctx = op.getContext();
    SmallVector<AffineExpr> renamed;
    for (unsigned i = 0; i < rank; ++i)
      renamed.push_back(getAffineDimExpr((*perm)[i], ctx));
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      if (map.isIdentity()) {
        inputs.push_back(
            input->get().getDefiningOp<linalg::TransposeOp>().getInput());
        maps.push_back(map);
        continue;
      }
      inputs.push_back(input->get());
      maps.push_back(map.replaceDimsAndSymbols(renamed, {}, rank, 0));
    }
    maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
    SmallVector<int64_t> shape(rank);
    for (unsigned i = 0; i < rank; ++i)
      shape[(*perm)[i]] = resultType.getDimSize(i);
    Location loc = op.getLoc();
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape,
                                          resultType.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{empty.getType()}, inputs, ValueRange{empty},
        maps, op.getIteratorTypesArray());
    rewriter.inlineRegionBefore(op.getRegion(), generic.getRegion(),
                                generic.getRegion().begin());
    // Old result dim i = new result dim perm[i]: the same transpose.
    rewriter.replaceOp(op, createTranspose(rewriter, loc, generic.getResult(0),
                                           *perm));
    return success();
  }
};

/// pad(transpose(x, p)) -> transpose(pad(x, pads permuted), p) for a pad
/// read only by NCHW poolings (which then pool NHWC), when the transpose has
/// no other user. Other pads stay after their transpose: a conv's input
/// transpose then writes the padded interior directly.
struct SinkTransposeThroughPad : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::PadOp op,
                                PatternRewriter &rewriter) const override {
    auto transpose = op.getSource().getDefiningOp<linalg::TransposeOp>();
    Value padValue = op.getConstantPaddingValue();
    if (!transpose || !transpose->hasOneUse() || !padValue ||
        !op.getResultType().hasStaticShape() || op->use_empty() ||
        !llvm::all_of(op->getUsers(),
                      llvm::IsaPred<linalg::PoolingNchwMaxOp,
                                    linalg::PoolingNchwSumOp>))
      return failure();
    ArrayRef<int64_t> perm = transpose.getPermutation();
    ArrayRef<int64_t> low = op.getStaticLow(), high = op.getStaticHigh();
    if (llvm::is_contained(low, ShapedType::kDynamic) ||
        llvm::is_contained(high, ShapedType::kDynamic))
      return failure();
    unsigned rank = perm.size();
    SmallVector<int64_t> newLow(rank), newHigh(rank);
    for (unsigned i = 0; i < rank; ++i) {
      newLow[perm[i]] = low[i];
      newHigh[perm[i]] = high[i];
    }
    Location loc = op.getLoc();
    auto sourceType = cast<RankedTensorType>(transpose.getInput().getType());
    SmallVector<int64_t> shape;
    for (unsigned d = 0; d < rank; ++d)
      shape.push_back(sourceType.getDimSize(d) + newLow[d] + newHigh[d]);
    auto padded = tensor::PadOp::create(
        rewriter, loc, RankedTensorType::get(shape, sourceType.getElementType()),
        transpose.getInput(), getAsIndexOpFoldResult(rewriter.getContext(), newLow),
        getAsIndexOpFoldResult(rewriter.getContext(), newHigh), padValue,
        op.getNofold());
    rewriter.replaceOp(op, createTranspose(rewriter, loc, padded, perm));
    return success();
  }
};

constexpr int64_t kToNCHW[] = {0, 3, 1, 2};

/// The value a `linalg.fill` of a `tensor.empty` fills with, or null.
Value filledValue(Value tensor) {
  auto fill = tensor.getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
    return {};
  return fill.value();
}

/// NCHW max / sum pooling of an NHWC->NCHW transpose pools the NHWC source.
template <typename NchwOp, typename NhwcOp>
struct SinkTransposeThroughPooling : OpRewritePattern<NchwOp> {
  using OpRewritePattern<NchwOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(NchwOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    auto transpose = op.getInputs()[0].template getDefiningOp<linalg::TransposeOp>();
    Value fillValue = filledValue(op.getOutputs()[0]);
    if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>(kToNCHW) ||
        !fillValue)
      return failure();
    auto nchwType = cast<RankedTensorType>(op->getResult(0).getType());
    ArrayRef<int64_t> s = nchwType.getShape();
    Location loc = op.getLoc();
    Value empty = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<int64_t>{s[0], s[2], s[3], s[1]},
        nchwType.getElementType());
    Value acc = linalg::FillOp::create(rewriter, loc, fillValue, empty)
                    .getResult(0);
    Value pooled =
        NhwcOp::create(rewriter, loc, TypeRange{acc.getType()},
                       ValueRange{transpose.getInput(), op.getInputs()[1]},
                       ValueRange{acc}, op.getStrides(), op.getDilations())
            ->getResult(0);
    rewriter.replaceOp(op, createTranspose(rewriter, loc, pooled, kToNCHW));
    return success();
  }
};

/// reduce(transpose(x, p), dims) == reduce(x, p[dims]) when the kept dims
/// appear in x in the same order (e.g. GlobalAveragePool's N, C).
struct SinkTransposeIntoReduce : OpRewritePattern<linalg::ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::ReduceOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getInputs().size() != 1 ||
        !cast<ShapedType>(op.getInputs()[0].getType()).hasStaticShape())
      return failure();
    auto transpose = op.getInputs()[0].getDefiningOp<linalg::TransposeOp>();
    if (!transpose)
      return failure();
    ArrayRef<int64_t> perm = transpose.getPermutation();
    ArrayRef<int64_t> dims = op.getDimensions();
    SmallVector<int64_t> newDims;
    int64_t lastKept = -1;
    for (unsigned i = 0; i < perm.size(); ++i) {
      if (llvm::is_contained(dims, static_cast<int64_t>(i))) {
        newDims.push_back(perm[i]);
        continue;
      }
      if (perm[i] < lastKept)
        return failure();
      lastKept = perm[i];
    }
    llvm::sort(newDims);
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputsMutable()[0].set(transpose.getInput());
      op.setDimensions(newDims);
    });
    return success();
  }
};

/// The last insert_slice of a Concat (a chain of static, unit-stride
/// insert_slices into a tensor.empty, each used only by the next) whose
/// pieces are all transposes by one permutation: the chain is rebuilt on the
/// sources (offsets and sizes permuted), one transpose after it.
struct SinkTransposeThroughConcat : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::InsertSliceOp op,
                                PatternRewriter &rewriter) const override {
    // Only from the end of the chain.
    for (Operation *user : op->getUsers())
      if (auto next = dyn_cast<tensor::InsertSliceOp>(user);
          next && next.getDest() == op.getResult())
        return failure();
    SmallVector<tensor::InsertSliceOp> chain;
    Value dest = op.getResult();
    while (auto insert = dest.getDefiningOp<tensor::InsertSliceOp>()) {
      if (insert != op && !insert->hasOneUse())
        return failure();
      chain.push_back(insert);
      dest = insert.getDest();
    }
    if (!dest.getDefiningOp<tensor::EmptyOp>() || !dest.hasOneUse())
      return failure();
    std::optional<SmallVector<int64_t>> perm;
    for (tensor::InsertSliceOp insert : chain) {
      auto transpose = insert.getSource().getDefiningOp<linalg::TransposeOp>();
      if (!transpose || insert.getSourceType().getRank() !=
                            insert.getResultType().getRank() ||
          !insert.hasUnitStride() ||
          llvm::is_contained(insert.getStaticOffsets(), ShapedType::kDynamic) ||
          llvm::is_contained(insert.getStaticSizes(), ShapedType::kDynamic))
        return failure();
      ArrayRef<int64_t> p = transpose.getPermutation();
      if (perm && ArrayRef<int64_t>(*perm) != p)
        return failure();
      perm = llvm::to_vector(p);
    }
    auto resultType = op.getResultType();
    unsigned rank = resultType.getRank();
    auto permute = [&](ArrayRef<int64_t> values) {
      SmallVector<int64_t> out(rank);
      for (unsigned i = 0; i < rank; ++i)
        out[(*perm)[i]] = values[i];
      return out;
    };
    Location loc = op.getLoc();
    Value result = tensor::EmptyOp::create(
        rewriter, loc, permute(resultType.getShape()),
        resultType.getElementType());
    SmallVector<int64_t> ones(rank, 1);
    for (tensor::InsertSliceOp insert : llvm::reverse(chain)) {
      Value source =
          insert.getSource().getDefiningOp<linalg::TransposeOp>().getInput();
      result = tensor::InsertSliceOp::create(
          rewriter, loc, source, result, ValueRange{}, ValueRange{},
          ValueRange{}, rewriter.getDenseI64ArrayAttr(
                            permute(insert.getStaticOffsets())),
          rewriter.getDenseI64ArrayAttr(permute(insert.getStaticSizes())),
          rewriter.getDenseI64ArrayAttr(ones));
    }
    rewriter.replaceOp(op, createTranspose(rewriter, loc, result, *perm));
    return success();
  }
};

struct PropagateTransposesPass
    : kiln::impl::KilnPropagateTransposesPassBase<PropagateTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTransposeChain, SinkTransposeThroughElementwise,
                 SinkTransposeThroughPad, SinkTransposeIntoReduce,
                 SinkTransposeThroughConcat,
                 SinkTransposeThroughPooling<linalg::PoolingNchwMaxOp,
                                             linalg::PoolingNhwcMaxOp>,
                 SinkTransposeThroughPooling<linalg::PoolingNchwSumOp,
                                             linalg::PoolingNhwcSumOp>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
