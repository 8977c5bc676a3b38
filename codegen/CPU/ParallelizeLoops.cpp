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
// Consecutive ops that work row by row over the same rows (softmax's max,
// exp-sum and normalize; layernorm's mean, variance and scale; the fills and
// small per-row ops between them) share one parallel loop: iteration r runs
// each of them on row r, so a row is read from cache, not memory, by the
// later ops, and the pool is called once instead of once per op. This runs
// before kiln-plan-memory, which then sees the buffers used inside the loop
// as live together.
//
// An op with run-time loop ranges (symbolic dims) gets a parallel loop over
// its leading parallel loops, behind a run-time check that the run's work
// is worth the hand-off (parallelizeDynamic); no row fusion and no loop
// interchange for those yet.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "dialects/Kiln/ABIAttributes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {
#define GEN_PASS_DEF_KILNPARALLELIZELOOPSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

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

/// How an operand of a row-fused op is touched by the row loops.
enum class RowAccess { Indexed, Invariant, Other };

/// Whether `map` indexes its first `rows` results by loops d0..d(rows-1) in
/// order (and uses them nowhere else): iteration r touches row r only. Or
/// whether it does not use those loops at all (a bias or scale broadcast over
/// the rows).
RowAccess rowAccess(AffineMap map, unsigned rows) {
  bool usesRows = false;
  for (AffineExpr e : map.getResults())
    for (unsigned d = 0; d < rows; ++d)
      usesRows |= e.isFunctionOfDim(d);
  if (!usesRows)
    return RowAccess::Invariant;
  if (map.getNumResults() < rows)
    return RowAccess::Other;
  for (unsigned i = 0; i < map.getNumResults(); ++i)
    for (unsigned d = 0; d < rows; ++d) {
      bool expected = i == d;
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(i));
      if (expected ? !(dim && dim.getPosition() == d)
                   : map.getResult(i).isFunctionOfDim(d))
        return RowAccess::Other;
    }
  return RowAccess::Indexed;
}

/// The leading loops of `op` that work row by row: parallel, every output
/// indexed by them (rowAccess Indexed), every input indexed or invariant.
unsigned numRowLoops(linalg::LinalgOp op) {
  auto iterators = op.getIteratorTypesArray();
  unsigned rows = 0;
  auto fits = [&](unsigned r) {
    if (iterators[r - 1] != utils::IteratorType::parallel)
      return false;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<ShapedType>(operand.get().getType()))
        continue; // a fill's scalar
      RowAccess access = rowAccess(op.getMatchingIndexingMap(&operand), r);
      if (access == RowAccess::Other ||
          (access == RowAccess::Invariant && op.isDpsInit(&operand)))
        return false;
    }
    return true;
  };
  while (rows < iterators.size() && fits(rows + 1))
    ++rows;
  return rows;
}

/// The buffer a view chain starts from, and whether every view on the way
/// keeps the first `rows` dims as they are (an expand_shape or collapse_shape
/// that leaves them alone, or only adds / removes unit dims after the last of
/// them: softmax's [1, 12, 128] sums read as [1, 12, 128, 1]), so that row r
/// of the view is row r of the buffer.
std::pair<Value, bool> rowRoot(Value value, unsigned rows) {
  bool rowPreserving = true;
  while (Operation *def = value.getDefiningOp()) {
    SmallVector<ReassociationIndices> groups;
    ArrayRef<int64_t> expanded;
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(def)) {
      groups = expand.getReassociationIndices();
      expanded = expand.getResultType().getShape();
      value = expand.getSrc();
    } else if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def)) {
      groups = collapse.getReassociationIndices();
      expanded = collapse.getSrcType().getShape();
      value = collapse.getSrc();
    } else if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      rowPreserving = false; // a subview or reinterpretation: not followed
      value = view.getViewSource();
      continue;
    } else {
      break;
    }
    for (unsigned i = 0; i < rows && rowPreserving; ++i) {
      rowPreserving = i < groups.size() && !groups[i].empty() &&
                      groups[i][0] == static_cast<int64_t>(i);
      for (size_t k = 1; k < groups[i].size() && rowPreserving; ++k)
        rowPreserving = i + 1 == rows && expanded[groups[i][k]] == 1;
    }
  }
  return {value, rowPreserving};
}

/// Delinearizes `flat` over `counts` (innermost fastest) into offsets of the
/// dims with tiles[i] != 0 (times the tile size); others stay 0.
SmallVector<OpFoldResult> tileOffsets(OpBuilder &b, Location l, Value flat,
                                      ArrayRef<int64_t> tiles,
                                      ArrayRef<int64_t> counts) {
  unsigned n = tiles.size();
  SmallVector<OpFoldResult> offsets(n, b.getIndexAttr(0));
  int outermost = -1;
  for (unsigned i = 0; i < n; ++i)
    if (tiles[i] && counts[i] != 1) {
      outermost = i;
      break;
    }
  Value rest = flat;
  for (int i = n - 1; i >= outermost && outermost >= 0; --i) {
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
  return offsets;
}

/// Clones `op` at `b` on the tile at `offsets` (tiles[i] elements of dim i,
/// 0 = the whole dim).
void cloneTile(OpBuilder &b, Location l, linalg::LinalgOp op,
               ArrayRef<OpFoldResult> offsets, ArrayRef<int64_t> tiles,
               ArrayRef<int64_t> ranges) {
  unsigned n = tiles.size();
  bool divisible = true;
  for (unsigned i = 0; i < n; ++i)
    divisible &= tiles[i] == 0 || ranges[i] % tiles[i] == 0;
  SmallVector<OpFoldResult> lbs, tileSizes, bounds;
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
}

int64_t numIterations(linalg::LinalgOp op) {
  int64_t work = 1;
  for (int64_t r : op.getStaticLoopRanges())
    work *= r;
  return work;
}

/// Ops between row-fused ops that may move in front of the fused loop: they
/// touch no memory (views, constants, index arithmetic) or only allocate.
bool movableAcrossRows(Operation *op) {
  return isa<memref::AllocOp>(op) ||
         (isMemoryEffectFree(op) && op->getNumRegions() == 0);
}

/// A run of consecutive ops fused over their common rows.
struct RowGroup {
  SmallVector<linalg::LinalgOp> ops;
  SmallVector<int64_t> rowSizes; // the shared leading loop ranges
  int64_t rows() const {
    int64_t r = 1;
    for (int64_t s : rowSizes)
      r *= s;
    return r;
  }
};

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
    SmallVector<linalg::LinalgOp> prepared, dynamic;
    for (linalg::LinalgOp op : ops) {
      if (std::optional<linalg::LinalgOp> p = prepare(rewriter, op))
        prepared.push_back(*p);
      else if (!op.getStaticLoopRanges().empty())
        dynamic.push_back(op);
    }
    for (linalg::LinalgOp op : dynamic)
      parallelizeDynamic(rewriter, op);

    // Row groups of consecutive ops, then one loop per group or per op.
    SmallVector<RowGroup> groups;
    for (linalg::LinalgOp op : prepared) {
      if (groups.empty() || !join(groups.back(), op)) {
        RowGroup fresh;
        fresh.ops.push_back(op);
        SmallVector<int64_t> ranges = op.getStaticLoopRanges();
        fresh.rowSizes.assign(ranges.begin(),
                              ranges.begin() + numRowLoops(op));
        groups.push_back(std::move(fresh));
      }
    }
    for (RowGroup &group : groups) {
      int64_t work = 0;
      for (linalg::LinalgOp op : group.ops)
        work += numIterations(op);
      if (group.ops.size() > 1 && work >= kMinParallelWork)
        fuseRows(rewriter, group);
      else
        for (linalg::LinalgOp op : group.ops)
          parallelize(rewriter, op);
    }
  }

  /// Loop order and reassociation (also for small ops: it is what lets LLVM
  /// vectorize); nullopt for ops left as they are (dynamic shapes).
  std::optional<linalg::LinalgOp> prepare(IRRewriter &rewriter,
                                          linalg::LinalgOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic)) {
      // Dynamic shapes stay sequential, in their order; a row reduction may
      // still be vectorized.
      allowReassociation(op);
      return std::nullopt;
    }

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
        if (succeeded(interchanged))
          op = *interchanged;
      }
    }
    allowReassociation(op);
    return op;
  }

  /// Adds `op` to `group` when it follows the group's last op with only
  /// movable ops between, shares at least kTargetIterations rows with it, and
  /// every buffer the group writes is touched row by row (through views that
  /// keep the rows) by every op: iteration r then depends on row r only.
  bool join(RowGroup &group, linalg::LinalgOp op) {
    Operation *last = group.ops.back();
    if (last->getBlock() != op->getBlock())
      return false;
    for (Operation *between = last->getNextNode(); between != op;
         between = between->getNextNode())
      if (!movableAcrossRows(between))
        return false;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    unsigned rows = std::min<unsigned>(numRowLoops(op), group.rowSizes.size());
    unsigned common = 0;
    while (common < rows && ranges[common] == group.rowSizes[common])
      ++common;
    RowGroup candidate = group;
    candidate.ops.push_back(op);
    candidate.rowSizes.resize(common);
    if (common == 0 || candidate.rows() < kTargetIterations ||
        !rowLocal(candidate))
      return false;
    group = std::move(candidate);
    return true;
  }

  /// Whether every access of the group's ops to a buffer some op of the group
  /// writes is a row of it (see join).
  static bool rowLocal(const RowGroup &group) {
    unsigned rows = group.rowSizes.size();
    DenseSet<Value> written;
    for (linalg::LinalgOp op : group.ops)
      for (OpOperand &init : op.getDpsInitsMutable())
        written.insert(rowRoot(init.get(), rows).first);
    for (linalg::LinalgOp op : group.ops)
      for (OpOperand &operand : op->getOpOperands()) {
        if (!isa<ShapedType>(operand.get().getType()))
          continue;
        auto [root, preserving] = rowRoot(operand.get(), rows);
        if (!written.contains(root))
          continue; // only read in the group: any access is fine
        if (!preserving || rowAccess(op.getMatchingIndexingMap(&operand),
                                     rows) != RowAccess::Indexed)
          return false;
      }
    return true;
  }

  /// One parallel loop over the group's rows running every op on its row.
  void fuseRows(IRRewriter &rewriter, RowGroup &group) {
    Operation *first = group.ops.front();
    // What the later ops use (views, constants, allocations) moves in front.
    for (size_t i = 1; i < group.ops.size(); ++i)
      for (Operation *between = group.ops[i - 1]->getNextNode();
           between != group.ops[i].getOperation();) {
        Operation *next = between->getNextNode();
        between->moveBefore(first);
        between = next;
      }
    unsigned rows = group.rowSizes.size();
    SmallVector<int64_t> rowTiles(rows, 1);
    Location loc = first->getLoc();
    rewriter.setInsertionPoint(first);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value ub = arith::ConstantIndexOp::create(rewriter, loc, group.rows());
    auto par = scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero}, ValueRange{ub}, ValueRange{one},
        [&](OpBuilder &b, Location l, ValueRange ivs) {
          SmallVector<OpFoldResult> rowOffsets =
              tileOffsets(b, l, ivs[0], rowTiles, group.rowSizes);
          for (linalg::LinalgOp op : group.ops) {
            SmallVector<int64_t> ranges = op.getStaticLoopRanges();
            SmallVector<int64_t> tiles(ranges.size(), 0);
            SmallVector<OpFoldResult> offsets(ranges.size(),
                                              b.getIndexAttr(0));
            for (unsigned i = 0; i < rows; ++i) {
              tiles[i] = 1;
              offsets[i] = rowOffsets[i];
            }
            cloneTile(b, l, op, offsets, tiles, ranges);
          }
        });
    kiln::setParallelLoop(par);
    for (linalg::LinalgOp op : group.ops)
      rewriter.eraseOp(op);
  }

  /// An op with run-time loop ranges (symbolic dims): when the run's work
  /// (the product of its ranges) reaches kMinParallelWork, a parallel loop
  /// over its leading distributable loops but the innermost (one iteration
  /// per index of them, the pool chunks them); below that, the op as it is.
  void parallelizeDynamic(IRRewriter &rewriter, linalg::LinalgOp op) {
    unsigned n = op.getNumLoops();
    auto iterators = op.getIteratorTypesArray();
    SmallVector<AffineMap> initMaps;
    for (OpOperand &init : op.getDpsInitsMutable())
      initMaps.push_back(op.getMatchingIndexingMap(&init));
    unsigned run = 0;
    while (run + 1 < n && iterators[run] == utils::IteratorType::parallel &&
           llvm::all_of(initMaps, [&](AffineMap m) {
             return isPureDimResult(m, run);
           }))
      ++run;
    if (run == 0)
      return;
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<OpFoldResult> bounds;
    SmallVector<Value> sizes;
    for (Range range : op.createLoopRanges(rewriter, loc)) {
      bounds.push_back(range.size);
      sizes.push_back(
          getValueOrCreateConstantIndexOp(rewriter, loc, range.size));
    }
    Value work = sizes[0], iterations = sizes[0];
    for (unsigned i = 1; i < n; ++i) {
      work = arith::MulIOp::create(rewriter, loc, work, sizes[i]);
      if (i < run)
        iterations = arith::MulIOp::create(rewriter, loc, iterations, sizes[i]);
    }
    Value enough = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::uge, work,
        arith::ConstantIndexOp::create(rewriter, loc, kMinParallelWork));
    auto ifOp = scf::IfOp::create(rewriter, loc, enough, /*withElse=*/true);
    {
      OpBuilder b = ifOp.getThenBodyBuilder();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto par = scf::ParallelOp::create(
          b, loc, ValueRange{zero}, ValueRange{iterations}, ValueRange{one},
          [&](OpBuilder &pb, Location l, ValueRange ivs) {
            // Delinearized over the leading `run` loops, innermost fastest.
            SmallVector<OpFoldResult> offsets(n, pb.getIndexAttr(0));
            SmallVector<OpFoldResult> lbs, tiles(n, pb.getIndexAttr(0));
            Value rest = ivs[0];
            for (int i = run - 1; i >= 0; --i) {
              Value idx = rest;
              if (i > 0) {
                idx = arith::RemUIOp::create(pb, l, rest, sizes[i]);
                rest = arith::DivUIOp::create(pb, l, rest, sizes[i]);
              }
              offsets[i] = idx;
              tiles[i] = pb.getIndexAttr(1);
            }
            for (unsigned i = 0; i < run; ++i)
              lbs.push_back(offsets[i]);
            SmallVector<Value> operands = linalg::makeTiledShapes(
                pb, l, op, op->getOperands(), lbs, tiles, bounds,
                /*omitPartialTileCheck=*/true);
            Operation *tiled = mlir::clone(pb, op, TypeRange{}, operands);
            linalg::offsetIndices(pb, cast<linalg::LinalgOp>(tiled), offsets);
          });
      kiln::setParallelLoop(par);
    }
    {
      OpBuilder b = ifOp.getElseBodyBuilder();
      b.clone(*op);
    }
    rewriter.eraseOp(op);
  }

  void parallelize(IRRewriter &rewriter, linalg::LinalgOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t work = numIterations(op);
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
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value ub = arith::ConstantIndexOp::create(rewriter, loc, iterations);
    auto par = scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero}, ValueRange{ub}, ValueRange{one},
        [&](OpBuilder &b, Location l, ValueRange ivs) {
          SmallVector<OpFoldResult> offsets =
              tileOffsets(b, l, ivs[0], tiles, counts);
          cloneTile(b, l, op, offsets, tiles, ranges);
        });
    kiln::setParallelLoop(par);
    rewriter.eraseOp(op);
  }
};

} // namespace
