//===- BlockEmitter.cpp - register blocks and their parallel loops --------===//
//
// The code every kernel family shares: one register block (accumulators
// carried as scf.for iter_args through the reduction loops, B vector loads,
// A broadcasts or vector loads, FMA or a pooling combiner), the edge shapes
// of the last column panel, the row groups of a parallel task and the
// `kiln.parallel` loop the thread pool runs.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Kernels/Kernels.h"

#include "dialects/Kiln/ABIAttributes.h"

namespace kiln::kernels {

std::pair<Value, Value> packedColumn(KernelBuilder &kb, Value p, int64_t nr,
                                     int64_t panel, int64_t v) {
  int64_t column = v * kb.vw;
  if (panel == nr)
    return {p, kb.idx(column)};
  // nr is a multiple of panel: the vector lies in one packed panel.
  return {kb.add(kb.mul(p, nr / panel), column / panel),
          kb.idx(column % panel)};
}

void prefetch(KernelBuilder &kb, Value memref, ValueRange indices) {
  memref::PrefetchOp::create(kb.b, kb.loc, memref, indices, /*isWrite=*/false,
                             /*localityHint=*/3, /*isDataCache=*/true);
}

void emitBlock(KernelBuilder &kb, const BlockSpec &spec) {
  Value lastMask = kb.mask(spec.lastLanes);
  auto maskOf = [&](int64_t v) {
    return v == spec.vecs - 1 ? lastMask : Value();
  };
  SmallVector<Value> acc;
  for (int64_t i = 0; i < spec.rows; ++i)
    for (int64_t v = 0; v < spec.vecs; ++v)
      acc.push_back(spec.init(kb, i, v, maskOf(v)));

  SmallVector<Value> ivs;
  std::function<SmallVector<Value>(unsigned, ValueRange)> nest =
      [&](unsigned depth, ValueRange carried) -> SmallVector<Value> {
    if (depth == spec.reduction.size()) {
      SmallVector<Value> bv;
      for (int64_t v = 0; v < spec.vecs && spec.loadB; ++v)
        bv.push_back(spec.loadB(kb, ivs, v, maskOf(v)));
      if (spec.prefetchB)
        spec.prefetchB(kb, ivs);
      SmallVector<Value> next(carried.begin(), carried.end());
      for (int64_t i = 0; i < spec.rows; ++i) {
        Value a;
        if (spec.broadcastA)
          a = kb.splat(spec.loadA(kb, ivs, i, 0, Value()));
        for (int64_t v = 0; v < spec.vecs; ++v) {
          Value av = spec.broadcastA ? a : spec.loadA(kb, ivs, i, v, maskOf(v));
          Value &slot = next[i * spec.vecs + v];
          slot = spec.combine       ? spec.combine(kb, av, slot)
                 : spec.multiplyAdd ? spec.multiplyAdd(kb, av, bv[v], slot)
                                    : kb.multiplyAdd(av, bv[v], slot);
        }
      }
      return next;
    }
    auto [lb, ub] = spec.reduction[depth];
    auto loop = scf::ForOp::create(kb.b, kb.loc, lb, ub, kb.idx(1), carried);
    OpBuilder::InsertionGuard guard(kb.b);
    kb.b.setInsertionPointToStart(loop.getBody());
    ivs.push_back(loop.getInductionVar());
    SmallVector<Value> inner = nest(depth + 1, loop.getRegionIterArgs());
    ivs.pop_back();
    scf::YieldOp::create(kb.b, kb.loc, inner);
    return SmallVector<Value>(loop.getResults());
  };
  SmallVector<Value> result = nest(0, acc);
  for (int64_t i = 0; i < spec.rows; ++i)
    for (int64_t v = 0; v < spec.vecs; ++v)
      spec.store(kb, i, v, result[i * spec.vecs + v], maskOf(v));
}

/// the index.
void emitParallel(OpBuilder &b, Location loc, int64_t n,
                  function_ref<void(OpBuilder &, Value)> body) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value ub = arith::ConstantIndexOp::create(b, loc, n);
  auto par = scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{ub}, ValueRange{one},
      [&](OpBuilder &nb, Location, ValueRange ivs) { body(nb, ivs[0]); });
  setParallelLoop(par);
}

void emitIf(OpBuilder &b, Location loc, Value cond,
            function_ref<void(OpBuilder &)> thenFn,
            function_ref<void(OpBuilder &)> elseFn) {
  scf::IfOp::create(
      b, loc, cond,
      [&](OpBuilder &nb, Location l) {
        thenFn(nb);
        scf::YieldOp::create(nb, l);
      },
      [&](OpBuilder &nb, Location l) {
        elseFn(nb);
        scf::YieldOp::create(nb, l);
      });
}

bool innerUnitStride(Value memref, bool allowBytes, bool allowHalf) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || !type.hasStaticShape() ||
      !(isSupportedElementType(type.getElementType()) ||
        (allowBytes && type.getElementType().isSignlessInteger(8)) ||
        (allowHalf && (type.getElementType().isF16() ||
                       type.getElementType().isBF16()))))
    return false;
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return strides.empty() || strides.back() == 1;
}

/// columns are left (fewer vectors, masked last vector).
void emitColumnShapes(
    KernelBuilder &kb, Value p, int64_t fullPanels, int64_t tailCols,
    int64_t fullVecs,
    function_ref<void(KernelBuilder &, int64_t, int64_t)> body) {
  int64_t vw = kb.vw;
  int64_t tailVecs = (tailCols + vw - 1) / vw;
  int64_t tailLanes = tailCols - (tailVecs - 1) * vw;
  if (!tailCols)
    return body(kb, fullVecs, vw);
  if (!fullPanels)
    return body(kb, tailVecs, tailLanes);
  Value isTail = arith::CmpIOp::create(kb.b, kb.loc, arith::CmpIPredicate::eq,
                                       p, kb.idx(fullPanels));
  emitIf(
      kb.b, kb.loc, isTail,
      [&](OpBuilder &nb) {
        KernelBuilder x{nb, kb.loc, vw, kb.vt};
        body(x, tailVecs, tailLanes);
      },
      [&](OpBuilder &nb) {
        KernelBuilder x{nb, kb.loc, vw, kb.vt};
        body(x, fullVecs, vw);
      });
}

void RowGroups::emit(
    KernelBuilder &kb, Value g,
    function_ref<void(KernelBuilder &, Value, int64_t)> block) const {
  Location loc = kb.loc;
  // Full blocks run in the loop; the rows after them in up to two blocks.
  bool balance = tailRows && fullRowBlocks > 0 && tailRows * 2 <= mr;
  int64_t loopBlocks = balance ? fullRowBlocks - 1 : fullRowBlocks;
  if (loopBlocks) {
    Value lo = kb.mul(g, blocksPerGroup);
    Value hi = arith::MinUIOp::create(kb.b, loc, kb.add(lo, blocksPerGroup),
                                      kb.idx(loopBlocks));
    auto loop = scf::ForOp::create(kb.b, loc, lo, hi, kb.idx(1));
    OpBuilder::InsertionGuard guard(kb.b);
    kb.b.setInsertionPointToStart(loop.getBody());
    block(kb, kb.mul(loop.getInductionVar(), mr), mr);
  }
  if (!tailRows)
    return;
  auto tail = [&](OpBuilder &rb) {
    KernelBuilder z{rb, loc, kb.vw, kb.vt};
    int64_t row0 = loopBlocks * mr;
    if (!balance)
      return block(z, z.idx(row0), tailRows);
    int64_t left = mr + tailRows, first = (left + 1) / 2;
    block(z, z.idx(row0), first);
    block(z, z.idx(row0 + first), left - first);
  };
  if (groups == 1)
    return tail(kb.b);
  Value isLast = arith::CmpIOp::create(kb.b, loc, arith::CmpIPredicate::eq, g,
                                       kb.idx(groups - 1));
  emitIf(kb.b, loc, isLast, tail, [](OpBuilder &) {});
}

} // namespace kiln::kernels
