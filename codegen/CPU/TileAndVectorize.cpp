//===- TileAndVectorize.cpp - register-blocked matmul and conv ------------===//
//
// Tiles the compute-heavy linalg ops twice (cache block, then register block)
// and vectorizes the register blocks. What is known to reach near-peak on this
// kind of CPU (see TOOLCHAIN.md): matmul blocks of 8 rows x 2 vectors with a
// unit reduction step, lowered as outer products; NHWC convolutions tiled to
// ow x f blocks with unit kh/kw/c steps and decomposed to 1-D.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace kiln {
#define GEN_PASS_DEF_KILNTILEANDVECTORIZEPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The largest candidate that divides `size`, or 0 if none does.
int64_t pickDivisor(int64_t size, ArrayRef<int64_t> candidates) {
  for (int64_t candidate : candidates)
    if (candidate > 0 && candidate <= size && size % candidate == 0)
      return candidate;
  return 0;
}

/// The largest multiple of `step` that divides `size` and is <= `limit`.
int64_t pickCacheTile(int64_t size, int64_t step, int64_t limit) {
  for (int64_t tile = std::min(size, limit); tile >= step; --tile)
    if (size % tile == 0 && tile % step == 0)
      return tile;
  return step;
}

/// Tile sizes for one op, per loop of its iteration space (0 = not tiled).
struct BlockingPlan {
  /// Cache-level tile over parallel loops; the accumulator's fill is fused.
  SmallVector<int64_t> parallelTile;
  /// Cache-level tile over reduction loops (optional, no fusion).
  SmallVector<int64_t> reductionTile;
  /// Register block; the tiled op is what gets vectorized.
  SmallVector<int64_t> registerTile;
};

/// Plans matmul-like ops whose loops are (batch..., m, n, k).
std::optional<BlockingPlan> planContraction(ArrayRef<int64_t> loopSizes,
                                            int64_t batchLoops,
                                            int64_t vectorWidth) {
  int64_t m = loopSizes[batchLoops], n = loopSizes[batchLoops + 1],
          k = loopSizes[batchLoops + 2];
  int64_t mReg = pickDivisor(m, {8, 6, 4, 3, 2, 1});
  int64_t nReg = pickDivisor(n, {2 * vectorWidth, vectorWidth,
                                 vectorWidth / 2, vectorWidth / 4, 2, 1});
  if (!mReg || !nReg)
    return std::nullopt;
  BlockingPlan plan;
  plan.parallelTile.assign(batchLoops, 1);
  plan.parallelTile.append({pickCacheTile(m, mReg, 64),
                            pickCacheTile(n, nReg, 256), 0});
  plan.reductionTile.assign(batchLoops + 2, 0);
  plan.reductionTile.push_back(k > 512 ? pickCacheTile(k, 1, 512) : 0);
  plan.registerTile.assign(batchLoops, 1);
  plan.registerTile.append({mReg, nReg, 1});
  return plan;
}

/// Plans `linalg.conv_2d_nhwc_hwcf`: loops (n, oh, ow, f, kh, kw, c).
std::optional<BlockingPlan> planConv(ArrayRef<int64_t> loopSizes,
                                     int64_t vectorWidth) {
  int64_t ow = loopSizes[2], f = loopSizes[3];
  int64_t owReg = pickDivisor(ow, {8, 7, 6, 5, 4, 3, 2, 1});
  int64_t fReg = pickDivisor(f, {2 * vectorWidth, vectorWidth,
                                 vectorWidth / 2, vectorWidth / 4, 2, 1});
  if (!owReg || !fReg)
    return std::nullopt;
  BlockingPlan plan;
  plan.parallelTile = {1, 1, 0, pickCacheTile(f, fReg, 256), 0, 0, 0};
  plan.registerTile = {1, 1, owReg, fReg, 1, 1, 1};
  return plan;
}

/// Plans `linalg.depthwise_conv_2d_nhwc_hwc`: loops (n, oh, ow, c, kh, kw).
std::optional<BlockingPlan> planDepthwiseConv(ArrayRef<int64_t> loopSizes,
                                              int64_t vectorWidth) {
  // A few vectors of channels per block: whole channel rows (up to 960 in
  // MobileNetV2) unroll into huge straight-line code.
  int64_t c = loopSizes[3];
  int64_t cReg = pickDivisor(c, {4 * vectorWidth, 2 * vectorWidth, vectorWidth,
                                 vectorWidth / 2, vectorWidth / 4, 2, 1});
  BlockingPlan plan;
  plan.parallelTile = {1, 1, 0, 0, 0, 0};
  plan.registerTile = {1, 1, 1, cReg, 1, 0};
  return plan;
}

std::optional<BlockingPlan> planFor(linalg::LinalgOp op, int64_t vectorWidth) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape())
    return std::nullopt;
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  if (isa<linalg::MatmulOp>(op))
    return planContraction(loops, 0, vectorWidth);
  if (isa<linalg::BatchMatmulOp>(op))
    return planContraction(loops, 1, vectorWidth);
  if (isa<linalg::Conv2DNhwcHwcfOp>(op))
    return planConv(loops, vectorWidth);
  if (isa<linalg::DepthwiseConv2DNhwcHwcOp>(op))
    return planDepthwiseConv(loops, vectorWidth);
  return std::nullopt;
}

SmallVector<OpFoldResult> asIndexAttrs(MLIRContext *ctx,
                                       ArrayRef<int64_t> sizes) {
  return llvm::map_to_vector(sizes, [&](int64_t size) -> OpFoldResult {
    return IntegerAttr::get(IndexType::get(ctx), size);
  });
}

bool tilesSomething(ArrayRef<int64_t> sizes) {
  return llvm::any_of(sizes, [](int64_t size) { return size != 0; });
}

/// Tiles `op` by `sizes` with scf.for loops; returns the tiled op.
FailureOr<Operation *> tileOnce(RewriterBase &rewriter, Operation *op,
                                ArrayRef<int64_t> sizes) {
  if (!tilesSomething(sizes))
    return op;
  scf::SCFTilingOptions options;
  options.setTileSizes(asIndexAttrs(op->getContext(), sizes));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op), options);
  if (failed(tiled))
    return failure();
  rewriter.replaceOp(op, tiled->replacements);
  return tiled->tiledOps.back();
}

/// Decomposes a register-block convolution (unit kh) into its 1-D form.
FailureOr<Operation *> decomposeConv(RewriterBase &rewriter, Operation *op) {
  PatternRewriter &patternRewriter = static_cast<PatternRewriter &>(rewriter);
  // Patterns expect the driver to have put the insertion point at the op.
  rewriter.setInsertionPoint(op);
  if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op)) {
    linalg::DownscaleSizeOneWindowed2DConvolution<linalg::Conv2DNhwcHwcfOp,
                                                  linalg::Conv1DNwcWcfOp>
        pattern(op->getContext());
    FailureOr<linalg::Conv1DNwcWcfOp> conv1d =
        pattern.returningMatchAndRewrite(conv, patternRewriter);
    if (failed(conv1d))
      return failure();
    return conv1d->getOperation();
  }
  if (auto conv = dyn_cast<linalg::DepthwiseConv2DNhwcHwcOp>(op)) {
    linalg::DownscaleDepthwiseConv2DNhwcHwcOp pattern(op->getContext());
    FailureOr<linalg::DepthwiseConv1DNwcWcOp> conv1d =
        pattern.returningMatchAndRewrite(conv, patternRewriter);
    if (failed(conv1d))
      return failure();
    return conv1d->getOperation();
  }
  return op;
}

/// A rewriter usable both as RewriterBase and PatternRewriter.
class BlockRewriter : public PatternRewriter {
public:
  explicit BlockRewriter(MLIRContext *ctx) : PatternRewriter(ctx) {}
};

/// Applies `plan` to `op`. On any failure the IR stays valid (each step
/// replaces the op it transforms), and what is left is lowered to loops.
void blockAndVectorize(BlockRewriter &rewriter, linalg::LinalgOp op,
                       const BlockingPlan &plan) {
  // Cache level, fusing the fill that initializes the accumulator so the
  // register block starts from registers rather than a second memory pass.
  Operation *current = op;
  if (tilesSomething(plan.parallelTile)) {
    scf::SCFTileAndFuseOptions options;
    options.tilingOptions.setTileSizes(
        asIndexAttrs(op->getContext(), plan.parallelTile));
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTileAndFuseResult> fused =
        scf::tileConsumerAndFuseProducersUsingSCF(
            rewriter, cast<TilingInterface>(current), options);
    if (failed(fused))
      return;
    for (OpResult result : current->getResults())
      rewriter.replaceAllUsesWith(result, fused->replacements.lookup(result));
    rewriter.eraseOp(current);
    current = fused->tiledAndFusedOps.front();
  }
  FailureOr<Operation *> tiled =
      tileOnce(rewriter, current, plan.reductionTile);
  if (failed(tiled))
    return;
  tiled = tileOnce(rewriter, *tiled, plan.registerTile);
  if (failed(tiled))
    return;
  FailureOr<Operation *> block = decomposeConv(rewriter, *tiled);
  if (failed(block))
    return;
  rewriter.setInsertionPoint(*block);
  FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
      rewriter, *block, /*inputVectorSizes=*/{}, /*inputScalableVecDims=*/{},
      /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/true);
  if (failed(vectorized))
    return;
  rewriter.replaceOp(*block, vectorized->replacements);
}

struct TileAndVectorizePass
    : kiln::impl::KilnTileAndVectorizePassBase<TileAndVectorizePass> {
  using KilnTileAndVectorizePassBase::KilnTileAndVectorizePassBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, BlockingPlan>> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<BlockingPlan> plan = planFor(op, vectorWidth))
        work.emplace_back(op, std::move(*plan));
    });
    BlockRewriter rewriter(&getContext());
    for (auto &[op, plan] : work)
      blockAndVectorize(rewriter, op, plan);
  }
};

} // namespace
