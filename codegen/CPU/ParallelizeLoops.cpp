//===- ParallelizeLoops.cpp - linalg "glue" ops over the thread pool ------===//
//
// What kiln-emit-microkernels leaves (elementwise generics, reductions such as
// softmax / layernorm rows and ReduceMean, pooling, copies, fills) is lowered
// by convert-linalg-to-loops to sequential loop nests. Here each such op on
// buffers with enough work is tiled over its outer parallel loops: an
// `scf.parallel` over [0, N) marked `kiln.parallel` (the
// kiln-emit-microkernels convention, outlined by kiln-outline-parallel-loops)
// whose body runs the op on subviews. The loops inside stay loops that LLVM's
// vectorizer handles: the innermost one walks the output's contiguous
// dimension (or, for a row reduction, the input's).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {
#define GEN_PASS_DEF_KILNPARALLELIZELOOPSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr StringLiteral kParallelAttr = "kiln.parallel";

/// Ops with fewer loop iterations (element operations) stay sequential. A
/// parallel_for costs about 1-2 us when the workers are spinning (the pool
/// spins between back-to-back loops) and more when they sleep; 32K simple
/// vectorized element operations are ~10 us on one core, so below that the
/// hand-off eats the gain.
constexpr int64_t kMinParallelWork = 32 * 1024;

/// Parallel iterations to aim for: the pool splits them into a few chunks per
/// thread, so this leaves room for load balance on up to ~16 threads without
/// making an iteration (a subview plus its inner loops) tiny.
constexpr int64_t kTargetIterations = 64;

/// A reduction loop this long over the input's contiguous dimension stays
/// innermost (a vectorizable row reduction) instead of the output's last
/// dimension.
constexpr int64_t kMinInnerReduction = 8;

bool isPureDimResult(AffineMap map, unsigned dim) {
  return llvm::any_of(map.getResults(), [&](AffineExpr e) {
    auto d = dyn_cast<AffineDimExpr>(e);
    return d && d.getPosition() == dim;
  });
}

std::optional<unsigned> lastResultDim(AffineMap map) {
  if (map.getNumResults() == 0)
    return std::nullopt;
  if (auto d = dyn_cast<AffineDimExpr>(map.getResults().back()))
    return d.getPosition();
  return std::nullopt;
}

/// Whether stepping loop `dim` moves every operand by 0 or 1 element: `dim`
/// only in the last result, with coefficient 1 (`ow + kw` is fine, `2 * ow +
/// kw` of a strided pooling is not: LLVM does not vectorize that loop, and
/// with it innermost the output is loaded and stored once per window tap).
bool isUnitStrideLoop(linalg::LinalgOp op, unsigned dim) {
  for (AffineMap map : op.getIndexingMapsArray()) {
    unsigned numResults = map.getNumResults();
    for (unsigned r = 0; r < numResults; ++r) {
      AffineExpr e = map.getResult(r);
      if (!e.isFunctionOfDim(dim))
        continue;
      if (r + 1 != numResults || !e.isPureAffine())
        return false;
      // The coefficient: e(dim = 1, others 0) - e(all 0).
      MLIRContext *ctx = e.getContext();
      SmallVector<AffineExpr> zeros(map.getNumDims(),
                                    getAffineConstantExpr(0, ctx));
      SmallVector<AffineExpr> unit = zeros;
      unit[dim] = getAffineConstantExpr(1, ctx);
      auto at = [&](ArrayRef<AffineExpr> dims) {
        return dyn_cast<AffineConstantExpr>(simplifyAffineExpr(
            e.replaceDimsAndSymbols(dims, {}), 0, map.getNumSymbols()));
      };
      AffineConstantExpr one = at(unit), zero = at(zeros);
      if (!one || !zero || one.getValue() - zero.getValue() != 1)
        return false;
    }
  }
  return true;
}

/// The loop order that makes the innermost loop walk contiguous memory: the
/// output's last dimension when it is a parallel loop every operand walks
/// with unit stride, unless the innermost loop already is a long reduction
/// along an input's last dimension (softmax max/sum, layernorm mean). Empty
/// when the order stays.
SmallVector<unsigned> chooseInterchange(linalg::LinalgOp op,
                                        ArrayRef<int64_t> ranges) {
  unsigned n = op.getNumLoops();
  if (n < 2 || op.getNumDpsInits() != 1)
    return {};
  auto iterators = op.getIteratorTypesArray();
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  std::optional<unsigned> outLast = lastResultDim(outMap);
  unsigned last = n - 1;
  if (!outLast || *outLast == last ||
      iterators[*outLast] != utils::IteratorType::parallel ||
      !isUnitStrideLoop(op, *outLast))
    return {};
  if (iterators[last] == utils::IteratorType::reduction &&
      ranges[last] >= kMinInnerReduction)
    for (OpOperand *input : op.getDpsInputOperands())
      if (lastResultDim(op.getMatchingIndexingMap(input)) == last)
        return {};
  SmallVector<unsigned> perm;
  for (unsigned i = 0; i < n; ++i)
    if (i != *outLast)
      perm.push_back(i);
  perm.push_back(*outLast);
  return perm;
}

/// Lets LLVM vectorize a reduction along the innermost loop (softmax row sum,
/// layernorm mean, ReduceSum): the floating-point op combining the value with
/// the accumulator gets `reassoc` (partial sums per lane, like onnxruntime's
/// vectorized reductions); without it the loop stays scalar.
void allowReassociation(linalg::LinalgOp op) {
  auto iterators = op.getIteratorTypesArray();
  if (iterators.empty() || iterators.back() != utils::IteratorType::reduction)
    return;
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  for (OpOperand &init : op.getDpsInitsMutable()) {
    Value acc = op.getMatchingBlockArgument(&init);
    Operation *combiner =
        yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs())
            .getDefiningOp();
    auto fastMath =
        dyn_cast_or_null<arith::ArithFastMathInterface>(combiner);
    if (!fastMath || !llvm::is_contained(combiner->getOperands(), acc))
      continue;
    combiner->setAttr(fastMath.getFastMathAttrName(),
                      arith::FastMathFlagsAttr::get(
                          op->getContext(), fastMath.getFastMathFlagsAttr()
                                                    .getValue() |
                                                arith::FastMathFlags::reassoc));
  }
}

struct ParallelizeLoopsPass
    : kiln::impl::KilnParallelizeLoopsPassBase<ParallelizeLoopsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Not inside a parallel loop (a micro-kernel's or one made here):
      // nested kiln.parallel loops are not outlined.
      if (op.hasPureBufferSemantics() && !op->getParentOfType<scf::ParallelOp>())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops)
      parallelize(rewriter, op);
  }

  void parallelize(IRRewriter &rewriter, linalg::LinalgOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic))
      return; // dynamic shapes stay sequential

    // Loop order first (also for small ops: it is what lets LLVM vectorize).
    SmallVector<unsigned> perm = chooseInterchange(op, ranges);
    if (!perm.empty()) {
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (succeeded(generalized))
          generic = *generalized;
      }
      if (generic) {
        FailureOr<linalg::GenericOp> interchanged =
            linalg::interchangeGenericOp(rewriter, generic, perm);
        if (succeeded(interchanged)) {
          op = *interchanged;
          ranges = op.getStaticLoopRanges();
        }
      }
    }

    allowReassociation(op);

    int64_t work = 1;
    for (int64_t r : ranges)
      work *= r;
    if (work < kMinParallelWork)
      return;

    // Distributable loops: the leading parallel ones that index every output
    // directly (distinct iterations then write distinct elements).
    unsigned n = ranges.size();
    auto iterators = op.getIteratorTypesArray();
    SmallVector<AffineMap> initMaps;
    for (OpOperand &init : op.getDpsInitsMutable())
      initMaps.push_back(op.getMatchingIndexingMap(&init));
    unsigned run = 0;
    while (run < n && iterators[run] == utils::IteratorType::parallel &&
           llvm::all_of(initMaps, [&](AffineMap m) {
             return isPureDimResult(m, run);
           }))
      ++run;

    // Whole outer loops (tile 1) until there are enough iterations; the
    // innermost loop stays whole (it is the vectorized one) unless nothing
    // else can be split (a 1-D op, or [1, N]): then it is cut into blocks.
    SmallVector<int64_t> tiles(n, 0), counts(n, 1);
    int64_t iterations = 1;
    unsigned next = 0;
    for (; next < run && next + 1 < n && iterations < kTargetIterations;
         ++next) {
      tiles[next] = 1;
      counts[next] = ranges[next];
      iterations *= ranges[next];
    }
    if (iterations < kTargetIterations && next < run) {
      int64_t want = llvm::divideCeil(kTargetIterations, iterations);
      // Blocks of whole vectors (16 f32 fill a zmm), at least 1024 elements.
      int64_t tile = std::max<int64_t>(
          llvm::alignTo(llvm::divideCeil(ranges[next], want), 16), 1024);
      if (tile < ranges[next]) {
        tiles[next] = tile;
        counts[next] = llvm::divideCeil(ranges[next], tile);
        iterations *= counts[next];
      }
    }
    if (iterations < 2)
      return;

    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    bool divisible = true;
    for (unsigned i = 0; i < n; ++i)
      divisible &= tiles[i] == 0 || ranges[i] % tiles[i] == 0;
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value ub = arith::ConstantIndexOp::create(rewriter, loc, iterations);
    auto par = scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero}, ValueRange{ub}, ValueRange{one},
        [&](OpBuilder &b, Location l, ValueRange ivs) {
          // Delinearize the flat index, innermost tiled loop fastest.
          SmallVector<OpFoldResult> offsets(n, b.getIndexAttr(0)), lbs;
          SmallVector<OpFoldResult> tileSizes, bounds;
          Value rest = ivs[0];
          int outermost = 0;
          while (counts[outermost] == 1)
            ++outermost;
          for (int i = n - 1; i >= 0; --i) {
            if (!tiles[i] || counts[i] == 1)
              continue; // not split, or one tile: offset 0
            Value idx = rest;
            if (i != outermost) { // the outermost takes what is left
              Value count = arith::ConstantIndexOp::create(b, l, counts[i]);
              idx = arith::RemUIOp::create(b, l, rest, count);
              rest = arith::DivUIOp::create(b, l, rest, count);
            }
            if (tiles[i] != 1)
              idx = arith::MulIOp::create(
                  b, l, idx, arith::ConstantIndexOp::create(b, l, tiles[i]));
            offsets[i] = idx;
          }
          for (unsigned i = 0; i < n; ++i) {
            if (tiles[i])
              lbs.push_back(offsets[i]);
            tileSizes.push_back(b.getIndexAttr(tiles[i]));
            bounds.push_back(b.getIndexAttr(ranges[i]));
          }
          SmallVector<Value> operands = linalg::makeTiledShapes(
              b, l, op, op->getOperands(), lbs, tileSizes, bounds, divisible);
          Operation *tiled = mlir::clone(b, op, TypeRange{}, operands);
          linalg::offsetIndices(b, cast<linalg::LinalgOp>(tiled), offsets);
        });
    par->setAttr(kParallelAttr, rewriter.getUnitAttr());
    rewriter.eraseOp(op);
  }
};

} // namespace
