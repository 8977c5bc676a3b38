//===- Matmul.cpp - register-blocked matmul and batch matmul --------------===//
//
// C[b][m][n] += A[b][m][k] * B[b][k][n] on buffers (`linalg.matmul`,
// `linalg.batch_matmul`, plain maps only): each task is a batch x a group of
// row blocks x a column panel of B (packed when constant); every register
// block of `rows` x `vectors` accumulators runs over K, or over blocks of
// the strategy's reduction_block steps (partial sums kept in C, the
// epilogue applied after the last one).
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Kernels/Kernels.h"

namespace kiln::kernels {

/// Up to this many rows a matmul is one row group.
constexpr int64_t kSingleGroupRows = 256;

LogicalResult emitMatmul(linalg::LinalgOp op, bool batched,
                         KernelStrategyAttr strategy, WeightPacker &packer) {
  Value a = op.getDpsInputs()[0], bMat = op.getDpsInputs()[1],
        c = op.getDpsInits()[0];
  // 8-bit operands into i32 (Int8.cpp): a constant B, one reduction block.
  bool bytes = getElementTypeOrSelf(a.getType()).isSignlessInteger(8);
  if (!innerUnitStride(a, bytes, /*allowHalf=*/true) ||
      !innerUnitStride(bMat, bytes, /*allowHalf=*/true) ||
      !innerUnitStride(c))
    return failure();
  if (bytes &&
      (batched || !getElementTypeOrSelf(c.getType()).isSignlessInteger(32)))
    return failure();
  // f16 / bf16 operands into f32 (NarrowFloat.cpp).
  Type aElem = getElementTypeOrSelf(a.getType());
  bool narrow = aElem.isF16() || aElem.isBF16();
  if (narrow && (getElementTypeOrSelf(bMat.getType()) != aElem ||
                 !getElementTypeOrSelf(c.getType()).isF32()))
    return failure();
  if (!narrow && !bytes &&
      (getElementTypeOrSelf(bMat.getType()) != aElem ||
       getElementTypeOrSelf(c.getType()) != aElem))
    return failure();
  // Plain (non-broadcasting, non-transposed) forms only.
  if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation());
      mm && mm.hasUserDefinedMaps())
    return failure();
  if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation());
      bmm && bmm.hasUserDefinedMaps())
    return failure();
  ArrayRef<int64_t> cShape = cast<MemRefType>(c.getType()).getShape();
  int64_t batch = batched ? cShape[0] : 1;
  int64_t m = cShape[batched], n = cShape[batched + 1];
  int64_t k = cast<MemRefType>(a.getType()).getShape().back();

  OpBuilder b(op);
  Location loc = op->getLoc();
  int64_t vw = strategy.getVectorWidth();
  Type elementType = cast<MemRefType>(c.getType()).getElementType();
  KernelBuilder kb{b, loc, vw, VectorType::get({vw}, elementType)};
  int64_t nr = strategy.getVectors() * vw;
  int64_t mr = std::min(strategy.getRows(), m);

  InitFill fill = fusableFill(op, c);
  Value fillValue = fill.value;
  std::optional<Epilogue> epilogue = findEpilogue(op, c, fill.copy);

  int64_t kc = std::min(strategy.getReductionBlock(), k);
  Int8Dot form = bytes ? int8DotOf(op) : Int8Dot::Bytes;
  if (k % int8Group(form))
    form = Int8Dot::Bytes;
  if (bytes)
    form = refineInt8Dot(form, vw, k, bMat, packer);
  int64_t group = int8Group(form);
  bool flipped = bytes && hasFlippedLhs(op);
  // bf16 pairs (vdpbf16ps): B packed with pairs of reduction steps.
  bool pairDot = narrow && aElem.isBF16() && hasBF16Dot(op) && !batched &&
                 k % 2 == 0 && kc % 2 == 0;
  if (pairDot)
    group = 2;
  std::string dotName = declareInt8Dot(op, vw, form);
  Value columnTerm;
  // A constant B is packed per batch (the Winograd products' 16 filters), in
  // panels of `panel` columns (8-bit and 16-bit B: the kernel's own).
  int64_t panel = bytes || narrow ? nr : packedPanelWidth(nr, m, k * n * 4);
  Value packed;
  if (bytes)
    packed = packer.packBytes(b, loc, bMat, {k}, n, nr, group,
                              int8UsesColumnTerm(form, flipped) ? &columnTerm
                                                                : nullptr);
  else if (narrow)
    packed = packer.packHalf(b, loc, bMat, {k}, n, nr, group,
                             batched ? batch : 0);
  else
    packed = packer.pack(b, loc, bMat, {k}, n, panel, batched ? batch : 0);
  if (bytes && (!packed || kc != k))
    return failure();
  if (pairDot && !packed) { // B not a constant: widen and FMA
    pairDot = false;
    group = 1;
  }
  if (pairDot)
    dotName = declareBF16Dot(op, vw);

  // Few rows (a transformer's 128 tokens): one group, so each B panel is
  // streamed from memory once, not once per group.
  if (form == Int8Dot::Pmaddubsw)
    mr = std::min(mr, pmaddubswRows(strategy));
  RowGroups rowGroups(m, mr,
                      m <= kSingleGroupRows ? INT64_MAX : kRowBlocksPerChunk);
  int64_t fullPanels = n / nr, tailCols = n % nr;
  int64_t panels = fullPanels + (tailCols ? 1 : 0);
  int64_t tasksPerBatch = rowGroups.groups * panels;

  emitParallel(b, loc, batch * tasksPerBatch, [&](OpBuilder &pb, Value flat) {
    KernelBuilder k2{pb, loc, vw, kb.vt};
    Value bi = arith::DivUIOp::create(pb, loc, flat, k2.idx(tasksPerBatch));
    Value rest = arith::RemUIOp::create(pb, loc, flat, k2.idx(tasksPerBatch));
    Value g = arith::DivUIOp::create(pb, loc, rest, k2.idx(panels));
    Value p = arith::RemUIOp::create(pb, loc, rest, k2.idx(panels));
    Value col0 = k2.mul(p, nr);

    // One block at (row0, col0) over reduction [k0, k1); `first` (i1) says
    // whether the accumulator starts from the fill, `last` whether this is
    // the final reduction block (the epilogue is applied and stored there;
    // partial sums go to C).
    auto block = [&](KernelBuilder &kk, Value row0, int64_t rows, int64_t vecs,
                     int64_t lastLanes, Value k0, Value k1, Value first,
                     bool last) {
      auto cIdx = [&](KernelBuilder &x, int64_t i, int64_t v) {
        SmallVector<Value> ix;
        if (batched)
          ix.push_back(bi);
        ix.push_back(x.add(row0, i));
        ix.push_back(x.add(col0, v * vw));
        return ix;
      };
      BlockSpec spec;
      spec.rows = rows;
      spec.vecs = vecs;
      spec.lastLanes = lastLanes;
      spec.reduction.push_back({k0, k1});
      spec.init = [&](KernelBuilder &x, int64_t i, int64_t v, Value msk) {
        if (columnTerm) {
          Value start =
              fillValue ? x.splat(fillValue) : x.load(c, cIdx(x, i, v), msk);
          Value term = x.load(columnTerm, {x.add(col0, v * vw)}, Value());
          return arith::AddIOp::create(x.b, x.loc, start, term).getResult();
        }
        if (!fillValue)
          return x.load(c, cIdx(x, i, v), msk);
        Value splat = x.splat(fillValue);
        if (!first)
          return splat;
        auto ifOp = scf::IfOp::create(
            x.b, x.loc, first,
            [&](OpBuilder &nb, Location l) {
              scf::YieldOp::create(nb, l, splat);
            },
            [&](OpBuilder &nb, Location l) {
              KernelBuilder y{nb, l, vw, x.vt};
              scf::YieldOp::create(nb, l, y.load(c, cIdx(y, i, v), msk));
            });
        return ifOp.getResult(0);
      };
      spec.store = [&](KernelBuilder &x, int64_t i, int64_t v, Value val,
                       Value msk) {
        SmallVector<Value> ix = cIdx(x, i, v);
        if (!epilogue || !last)
          return x.store(val, c, ix, msk);
        epilogue->store(x, val, ix, msk);
      };
      spec.loadA = [&](KernelBuilder &x, ValueRange ivs, int64_t i, int64_t,
                       Value) -> Value {
        if (bytes)
          return loadInt8A(x, a, {x.add(row0, i), x.mul(ivs[0], group)}, form,
                           flipped);
        if (pairDot)
          return loadBF16PairA(x, a, {x.add(row0, i), x.mul(ivs[0], 2)});
        SmallVector<Value> ix;
        if (batched)
          ix.push_back(bi);
        ix.push_back(x.add(row0, i));
        ix.push_back(ivs[0]);
        return widenToF32(x, memref::LoadOp::create(x.b, x.loc, a, ix));
      };
      spec.loadB = [&](KernelBuilder &x, ValueRange ivs, int64_t v,
                       Value msk) -> Value {
        if (bytes)
          return loadInt8B(x, packed, {p, ivs[0], x.idx(v * vw * group)}, form);
        if (pairDot)
          return vector::LoadOp::create(
              x.b, x.loc, VectorType::get({vw * 2}, aElem), packed,
              ValueRange{p, ivs[0], x.idx(v * vw * 2)});
        if (packed) {
          auto [pp, lane] = packedColumn(x, p, nr, panel, v);
          if (batched)
            return widenToF32(x, x.load(packed, {bi, pp, ivs[0], lane}, Value()));
          return widenToF32(x, x.load(packed, {pp, ivs[0], lane}, Value()));
        }
        SmallVector<Value> ix;
        if (batched)
          ix.push_back(bi);
        ix.push_back(ivs[0]);
        ix.push_back(x.add(col0, v * vw));
        return widenToF32(x, x.load(bMat, ix, msk));
      };
      if (form != Int8Dot::Bytes)
        spec.multiplyAdd = [&](KernelBuilder &x, Value av, Value bv,
                               Value acc) {
          return int8DotAccumulate(x, form, dotName, av, bv, acc);
        };
      if (pairDot)
        spec.multiplyAdd = [&](KernelBuilder &x, Value av, Value bv,
                               Value acc) {
          return bf16DotAccumulate(x, dotName, av, bv, acc);
        };
      emitBlock(kk, spec);
    };

    // Row blocks of group g (or the tail rows) for one column shape.
    auto columns = [&](KernelBuilder &x, int64_t vecs, int64_t lastLanes) {
      auto rowsOf = [&](KernelBuilder &y, Value k0, Value k1, Value first,
                        bool last) {
        rowGroups.emit(y, g, [&](KernelBuilder &z, Value row0, int64_t rows) {
          block(z, row0, rows, vecs, lastLanes, k0, k1, first, last);
        });
      };
      if (kc == k) {
        rowsOf(x, x.idx(0), x.idx(k / group), Value(), /*last=*/true);
        return;
      }
      // All reduction blocks but the last, then the last one (peeled: it
      // applies the epilogue). In steps of `group` reduction steps (kc and
      // lastStart divide by it).
      int64_t lastStart = (k - 1) / kc * kc;
      {
        auto kLoop = scf::ForOp::create(x.b, loc, x.idx(0),
                                        x.idx(lastStart / group),
                                        x.idx(kc / group));
        OpBuilder::InsertionGuard guard(x.b);
        x.b.setInsertionPointToStart(kLoop.getBody());
        Value k0 = kLoop.getInductionVar();
        Value first = arith::CmpIOp::create(x.b, loc, arith::CmpIPredicate::eq,
                                            k0, x.idx(0));
        rowsOf(x, k0, x.add(k0, kc / group), first, /*last=*/false);
      }
      Value notFirst = arith::ConstantIntOp::create(x.b, loc, 0, 1);
      rowsOf(x, x.idx(lastStart / group), x.idx(k / group), notFirst,
             /*last=*/true);
    };

    emitColumnShapes(k2, p, fullPanels, tailCols, strategy.getVectors(),
                     columns);
  });
  eraseLoweredOps(op, fill, epilogue);
  return success();
}

} // namespace kiln::kernels
