//===- LowerReductions.cpp - row reductions with register accumulators ----===//
//
// convert-linalg-to-loops lowers a reduction on buffers to loops that load
// and store the output element on every step (`out[r] = max(in[r, k],
// out[r])`). LLVM cannot keep it in a register when it cannot prove `in` and
// `out` apart (two views of the scratch arena), and a store in the loop stops
// the vectorizer: softmax's row max stayed a scalar loop with a branch per
// element (40% of a softmax, which ran 2.6x onnxruntime's time).
//
// Here a linalg.generic whose reduction loops are all innermost becomes loops
// whose accumulators are `scf.for` iter_args: each output element is loaded
// once before its reduction and stored once after it. The combiner's
// `reassoc` (kiln-parallelize-loops) then lets LLVM vectorize the reduction;
// a max / min combiner is emitted as LLVM's intrinsic for that (see
// maxCombiner).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {
#define GEN_PASS_DEF_KILNLOWERREDUCTIONSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Whether `op` is a reduction this pass lowers: at least one reduction
/// loop, all of them after every parallel loop, and outputs indexed by
/// parallel loops only (one element per parallel iteration). Loop ranges
/// known at run time only (symbolic dims) are read from the operands.
bool isInnermostReduction(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() == 0)
    return false;
  auto iterators = op.getIteratorTypesArray();
  unsigned numParallel = op.getNumParallelLoops();
  for (unsigned i = 0; i < iterators.size(); ++i)
    if ((i < numParallel) != (iterators[i] == utils::IteratorType::parallel))
      return false;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (unsigned d = numParallel; d < iterators.size(); ++d)
      if (map.isFunctionOfDim(d))
        return false;
  }
  return true;
}

/// A reassociable `arith.maximumf` / `minimumf` combiner becomes LLVM's
/// maximum / minimum intrinsic right away: arith-expand would turn it into
/// compares and selects without fast-math flags, which LLVM does not
/// recognize as a reduction (NaN still propagates: these are the
/// NaN-propagating intrinsics). Null for any other op.
Operation *maxCombiner(OpBuilder &b, Operation &op, IRMapping &mapping) {
  auto fastMath = dyn_cast<arith::ArithFastMathInterface>(op);
  if (!isa<arith::MaximumFOp, arith::MinimumFOp>(op) || !fastMath ||
      !bitEnumContainsAll(fastMath.getFastMathFlagsAttr().getValue(),
                          arith::FastMathFlags::reassoc) ||
      !(op.getResult(0).getType().isF32() || op.getResult(0).getType().isF64()))
    return nullptr;
  Value lhs = mapping.lookupOrDefault(op.getOperand(0));
  Value rhs = mapping.lookupOrDefault(op.getOperand(1));
  auto flags = LLVM::FastmathFlagsAttr::get(b.getContext(),
                                            LLVM::FastmathFlags::reassoc);
  if (isa<arith::MaximumFOp>(op))
    return LLVM::MaximumOp::create(b, op.getLoc(), lhs, rhs, flags);
  return LLVM::MinimumOp::create(b, op.getLoc(), lhs, rhs, flags);
}

/// Whether `op` has a loop range known at run time only (symbolic dims).
bool hasDynamicLoops(linalg::GenericOp op) {
  return llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic);
}

/// An elementwise generic over run-time ranges (symbolic dims), lowered here
/// too so that what its innermost loop reads at one place (softmax's row max
/// and sum, layernorm's mean, a bias) is loaded once before that loop: the
/// views of the arena it reads and writes have offsets computed at run time,
/// so LLVM cannot hoist that load past the loop's stores itself, and the
/// load in the loop stops the vectorizer.
bool isDynamicElementwise(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() != 0 ||
      op.getNumLoops() == 0 || !hasDynamicLoops(op))
    return false;
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingIndexingMap(&init).isProjectedPermutation())
      return false;
  return true;
}

/// Emits `op`'s loop nest at `b`: scf.for over the parallel loops, then the
/// reduction loops carrying one accumulator per output. With run-time loop
/// ranges, the inputs the innermost loop reads at one place are loaded
/// before it (isDynamicElementwise).
void lowerReduction(OpBuilder &b, linalg::GenericOp op) {
  Location loc = op.getLoc();
  SmallVector<Value> ranges;
  for (Range range : cast<linalg::LinalgOp>(op.getOperation())
                          .createLoopRanges(b, loc))
    ranges.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
  unsigned numLoops = ranges.size();
  unsigned numParallel = op.getNumParallelLoops();
  SmallVector<Value> ivs(numLoops);
  bool hoist = hasDynamicLoops(op);
  DenseMap<OpOperand *, Value> hoisted;
  auto index = [&](OpBuilder &ib, AffineMap map) {
    SmallVector<Value> indices;
    for (AffineExpr e : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(e)) { // the common case
        indices.push_back(ivs[dim.getPosition()]);
        continue;
      }
      indices.push_back(affine::makeComposedAffineApply(
                            ib, loc, AffineMap::get(numLoops, 0, e),
                            getAsOpFoldResult(ivs))
                            .getResult());
    }
    return indices;
  };

  // Before the innermost loop: loads of the inputs it reads at one place
  // (not written by the op: a buffer both read and written stays in the
  // loop).
  auto hoistInvariants = [&](OpBuilder &hb, unsigned level) {
    if (!hoist || level + 1 != numLoops)
      return;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      if (!isa<MemRefType>(input->get().getType()) ||
          map.isFunctionOfDim(level) ||
          llvm::any_of(op.getDpsInits(),
                       [&](Value init) { return init == input->get(); }))
        continue;
      hoisted[input] = memref::LoadOp::create(hb, loc, input->get(),
                                              index(hb, map));
    }
  };

  // Builds loops [level, numParallel) of the parallel nest, then the
  // reduction at the innermost.
  std::function<void(OpBuilder &, unsigned)> parallel;
  std::function<SmallVector<Value>(OpBuilder &, unsigned, ValueRange)>
      reduction;
  reduction = [&](OpBuilder &rb, unsigned level,
                  ValueRange accs) -> SmallVector<Value> {
    if (level == numLoops) {
      // The body: inputs loaded at this point, accumulators as the outputs.
      IRMapping mapping;
      Block *body = op.getBlock();
      for (OpOperand *input : op.getDpsInputOperands()) {
        Value arg = op.getMatchingBlockArgument(input);
        Value v = input->get();
        if (Value loaded = hoisted.lookup(input))
          v = loaded;
        else if (isa<MemRefType>(v.getType()))
          v = memref::LoadOp::create(
              rb, loc, v, index(rb, op.getMatchingIndexingMap(input)));
        mapping.map(arg, v);
      }
      for (auto [init, acc] : llvm::zip(op.getDpsInitsMutable(), accs))
        mapping.map(op.getMatchingBlockArgument(&init), acc);
      SmallVector<Value> results;
      for (Operation &inner : body->without_terminator()) {
        if (auto idx = dyn_cast<linalg::IndexOp>(inner)) {
          mapping.map(idx.getResult(), ivs[idx.getDim()]);
          continue;
        }
        if (Operation *max = maxCombiner(rb, inner, mapping)) {
          mapping.map(inner.getResult(0), max->getResult(0));
          continue;
        }
        rb.clone(inner, mapping);
      }
      for (Value v : body->getTerminator()->getOperands())
        results.push_back(mapping.lookupOrDefault(v));
      return results;
    }
    hoistInvariants(rb, level);
    auto loop = scf::ForOp::create(
        rb, loc, arith::ConstantIndexOp::create(rb, loc, 0), ranges[level],
        arith::ConstantIndexOp::create(rb, loc, 1), accs,
        [&](OpBuilder &lb, Location, Value iv, ValueRange iterArgs) {
          ivs[level] = iv;
          scf::YieldOp::create(lb, loc, reduction(lb, level + 1, iterArgs));
        });
    return SmallVector<Value>(loop.getResults());
  };
  parallel = [&](OpBuilder &pb, unsigned level) {
    if (level == numParallel) {
      SmallVector<Value> accs;
      for (OpOperand &init : op.getDpsInitsMutable())
        accs.push_back(memref::LoadOp::create(
            pb, loc, init.get(), index(pb, op.getMatchingIndexingMap(&init))));
      SmallVector<Value> results = reduction(pb, numParallel, accs);
      for (auto [init, result] : llvm::zip(op.getDpsInitsMutable(), results))
        memref::StoreOp::create(pb, loc, result, init.get(),
                                index(pb, op.getMatchingIndexingMap(&init)));
      return;
    }
    hoistInvariants(pb, level);
    scf::ForOp::create(pb, loc, arith::ConstantIndexOp::create(pb, loc, 0),
                       ranges[level],
                       arith::ConstantIndexOp::create(pb, loc, 1), ValueRange{},
                       [&](OpBuilder &lb, Location, Value iv, ValueRange) {
                         ivs[level] = iv;
                         parallel(lb, level + 1);
                         scf::YieldOp::create(lb, loc);
                       });
  };
  parallel(b, 0);
}

struct LowerReductionsPass
    : kiln::impl::KilnLowerReductionsPassBase<LowerReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isInnermostReduction(op) || isDynamicElementwise(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      rewriter.setInsertionPoint(op);
      lowerReduction(rewriter, op);
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
