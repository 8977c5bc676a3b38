//===- Conv.cpp - register-blocked NHWC convolution -----------------------===//
//
// O[n][oh][ow][f] += I[n][oh*s+kh*d][ow*s+kw*d][c] * W[kh][kw][c][f] on
// buffers (`linalg.conv_2d_nhwc_hwcf`): output pixels flattened into rows
// like a matmul's M, filters as columns (W packed when constant), the
// reduction loops kh, kw, c (kw and c merged without dilation along W)
// carrying `rows` x `vectors` accumulators. A task is a row group x a chunk
// of column panels.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Kernels/Kernels.h"

namespace kiln::kernels {

/// Packed B per parallel task of a conv: the column panels that each
/// register block's rows run over (from L2).
constexpr int64_t kPanelChunkBytes = 192 * 1024;
/// Fewest parallel tasks of a conv, where its panels allow.
constexpr int64_t kMinConvTasks = 8;

LogicalResult emitConv(linalg::Conv2DNhwcHwcfOp op, KernelStrategyAttr strategy,
                       WeightPacker &packer) {
  Value in = op.getInputs()[0], w = op.getInputs()[1], out = op.getOutputs()[0];
  // 8-bit input and filter into i32 (Int8.cpp): constant filters only.
  bool bytes = getElementTypeOrSelf(in.getType()).isSignlessInteger(8);
  if (!innerUnitStride(in, bytes, /*allowHalf=*/true) ||
      !innerUnitStride(w, bytes, /*allowHalf=*/true) || !innerUnitStride(out))
    return failure();
  // f16 / bf16 input and filter into f32 (NarrowFloat.cpp).
  Type inElem = getElementTypeOrSelf(in.getType());
  bool narrow = inElem.isF16() || inElem.isBF16();
  if (narrow && (getElementTypeOrSelf(w.getType()) != inElem ||
                 !getElementTypeOrSelf(out.getType()).isF32()))
    return failure();
  if (!narrow && !bytes &&
      (getElementTypeOrSelf(w.getType()) != inElem ||
       getElementTypeOrSelf(out.getType()) != inElem))
    return failure();
  ArrayRef<int64_t> oShape = cast<MemRefType>(out.getType()).getShape();
  ArrayRef<int64_t> wShape = cast<MemRefType>(w.getType()).getShape();
  int64_t nb = oShape[0], oh = oShape[1], ow = oShape[2], f = oShape[3];
  int64_t kh = wShape[0], kw = wShape[1], ch = wShape[2];
  auto strides = llvm::to_vector(op.getStrides().getValues<int64_t>());
  auto dilations = llvm::to_vector(op.getDilations().getValues<int64_t>());
  // The conv kernel runs the whole reduction per block (no K blocking).
  if (strategy.getReductionBlock() < kh * kw * ch)
    return failure();

  OpBuilder b(op);
  Location loc = op->getLoc();
  int64_t vw = strategy.getVectorWidth();
  Type elementType = cast<MemRefType>(out.getType()).getElementType();
  KernelBuilder kb{b, loc, vw, VectorType::get({vw}, elementType)};
  int64_t pixels = nb * oh * ow;
  int64_t nr = strategy.getVectors() * vw;
  int64_t mr = std::min(strategy.getRows(), pixels);
  InitFill fill = fusableFill(op, out);
  Value fillValue = fill.value;
  std::optional<Epilogue> epilogue = findEpilogue(op, out, fill.copy);
  // Without dilation along W, one filter row's taps (kw, c) are contiguous
  // in the input: one reduction loop of kw * ch instead of two (the stem's
  // 7 x 3 taps were loops of 3). The input is viewed as [n][h][w * c].
  SmallVector<ReassociationIndices> mergeWC = {{0}, {1}, {2, 3}};
  bool mergeTaps = dilations[1] == 1 && kw > 1 &&
                   memref::CollapseShapeOp::isGuaranteedCollapsible(
                       cast<MemRefType>(in.getType()), mergeWC);
  Int8Dot form = bytes ? int8DotOf(op) : Int8Dot::Bytes;
  if (ch % int8Group(form))
    form = Int8Dot::Bytes;
  if (bytes)
    form = refineInt8Dot(form, vw, ch, w, packer);
  int64_t group = int8Group(form);
  // bf16 pairs of channels (vdpbf16ps): the filter packed with pairs of
  // channels side by side.
  bool pairDot = narrow && inElem.isBF16() && hasBF16Dot(op) && ch % 2 == 0;
  if (pairDot)
    group = 2;
  std::string dotName = pairDot ? declareBF16Dot(op, vw)
                                : declareInt8Dot(op, vw, form);
  Value columnTerm;
  bool flipped = bytes && hasFlippedLhs(op);
  Value *term = int8UsesColumnTerm(form, flipped) ? &columnTerm : nullptr;
  // 32-bit filters are packed in panels of `panel` columns, 8-bit and
  // 16-bit ones in the kernel's own.
  int64_t panel = bytes || narrow ? nr
                                  : packedPanelWidth(nr, pixels,
                                                     kh * kw * ch * f * 4);
  Value packed =
      bytes ? (mergeTaps ? packer.packBytes(b, loc, w, {kh, kw * ch}, f, nr,
                                            group, term)
                         : packer.packBytes(b, loc, w, {kh, kw, ch}, f, nr,
                                            group, term))
      : narrow
          ? (mergeTaps
                 ? packer.packHalf(b, loc, w, {kh, kw * ch}, f, nr, group)
                 : packer.packHalf(b, loc, w, {kh, kw, ch}, f, nr, group))
      : mergeTaps ? packer.pack(b, loc, w, {kh, kw * ch}, f, panel)
                  : packer.pack(b, loc, w, {kh, kw, ch}, f, panel);
  if (bytes && !packed)
    return failure();
  if (pairDot && !packed) { // a filter that is no constant: widen and FMA
    pairDot = false;
    group = 1;
    dotName = "";
  }
  mergeTaps = mergeTaps && packed;
  Value inRows =
      mergeTaps
          ? memref::CollapseShapeOp::create(b, loc, in, mergeWC).getResult()
          : Value();

  int64_t fullPanels = f / nr, tailCols = f % nr;
  int64_t panels = fullPanels + (tailCols ? 1 : 0);
  // Output pixels (n, y, x) flattened into one row dimension, like a matmul's
  // M: a register block may span output rows, so narrow images (7x7, 14x14)
  // do not end every row with a short, latency-bound block.
  if (form == Int8Dot::Pmaddubsw)
    mr = std::min(mr, pmaddubswRows(strategy));
  RowGroups rowGroups(pixels, mr, kRowBlocksPerChunk);

  // A task is a row group x a chunk of column panels, and each register
  // block's rows run over the chunk's panels: the rows' A stays in L1 and
  // their pixel indices are computed once, while the chunk's packed B (at
  // most kPanelChunkBytes) is read from L2 (1 thread: MobileNetV2 -7%,
  // ResNet-50 -4%, SqueezeNet -3%).
  int64_t panelBytes = kh * kw * ch * nr * (bytes ? 1 : narrow ? 2 : 4);
  int64_t maxChunkPanels =
      std::clamp<int64_t>(kPanelChunkBytes / panelBytes, 1, panels);
  int64_t chunks = (panels + maxChunkPanels - 1) / maxChunkPanels;
  // Small images (SqueezeNet's 13x13: 2 row groups) still get a few tasks per
  // thread.
  chunks =
      std::max(chunks, std::min(panels, (kMinConvTasks + rowGroups.groups - 1) /
                                            rowGroups.groups));
  // An even number of tasks, so two threads take equal shares: MobileNetV2's
  // 7x7 and 14x14 convs ran 5, 7 or 9 tasks (one thread did 5 of 9).
  if (rowGroups.groups * chunks % 2 && chunks < panels)
    ++chunks;

  emitParallel(
      b, loc, rowGroups.groups * chunks, [&](OpBuilder &pb, Value flat) {
        KernelBuilder k2{pb, loc, vw, kb.vt};
        Value g = arith::DivUIOp::create(pb, loc, flat, k2.idx(chunks));
        Value chunk = arith::RemUIOp::create(pb, loc, flat, k2.idx(chunks));
        // Chunk c holds panels [c * panels / chunks, (c + 1) * panels /
        // chunks): sizes differ by at most one.
        auto chunkStart = [&](Value c) {
          return arith::DivUIOp::create(pb, loc, k2.mul(c, panels),
                                        k2.idx(chunks))
              .getResult();
        };
        Value p0 = chunkStart(chunk);
        Value p1 = chunkStart(k2.add(chunk, 1));
        Value p, col0; // the panel and its first column, set per block below

        auto block = [&](KernelBuilder &x, Value m0, int64_t rows) {
          // Each row's pixel and the input position of its window, once per
          // block (outside the reduction loops).
          SmallVector<Value> bIdx, yIdx, xIdx, iyIdx, ixIdx;
          for (int64_t i = 0; i < rows; ++i) {
            Value m = x.add(m0, i);
            Value r = arith::RemUIOp::create(x.b, loc, m, x.idx(oh * ow));
            bIdx.push_back(arith::DivUIOp::create(x.b, loc, m, x.idx(oh * ow)));
            yIdx.push_back(arith::DivUIOp::create(x.b, loc, r, x.idx(ow)));
            xIdx.push_back(arith::RemUIOp::create(x.b, loc, r, x.idx(ow)));
            iyIdx.push_back(x.mul(yIdx.back(), strides[0]));
            ixIdx.push_back(x.mul(xIdx.back(), strides[1]));
          }
          auto oIdx = [&](KernelBuilder &z, int64_t i, int64_t v) {
            return SmallVector<Value>{bIdx[i], yIdx[i], xIdx[i],
                                      z.add(col0, v * vw)};
          };
          auto kernel = [&](KernelBuilder &y, int64_t vecs, int64_t lastLanes) {
            BlockSpec spec;
            spec.rows = rows;
            spec.vecs = vecs;
            spec.lastLanes = lastLanes;
            spec.reduction = {{y.idx(0), y.idx(kh)},
                              {y.idx(0), y.idx(kw)},
                              {y.idx(0), y.idx(ch / group)}};
            if (mergeTaps)
              spec.reduction = {{y.idx(0), y.idx(kh)},
                                {y.idx(0), y.idx(kw * ch / group)}};
            setConvOutput(spec, fillValue, out, epilogue, oIdx);
            if (columnTerm) {
              auto start = spec.init;
              spec.init = [&, start](KernelBuilder &z, int64_t i, int64_t v,
                                     Value msk) -> Value {
                Value term = z.load(columnTerm, {z.add(col0, v * vw)}, Value());
                return arith::AddIOp::create(z.b, z.loc, start(z, i, v, msk),
                                             term);
              };
            }
            if (form != Int8Dot::Bytes)
              spec.multiplyAdd = [&](KernelBuilder &z, Value av, Value bv,
                                     Value acc) {
                return int8DotAccumulate(z, form, dotName, av, bv, acc);
              };
            if (pairDot) {
              spec.multiplyAdd = [&](KernelBuilder &z, Value av, Value bv,
                                     Value acc) {
                return bf16DotAccumulate(z, dotName, av, bv, acc);
              };
              spec.loadA = [&](KernelBuilder &z, ValueRange ivs, int64_t i,
                               int64_t, Value) -> Value {
                Value iy = z.add(iyIdx[i], z.mul(ivs[0], dilations[0]));
                if (mergeTaps) {
                  Value tap = z.add(z.mul(ixIdx[i], ch), z.mul(ivs[1], 2));
                  return loadBF16PairA(z, inRows, {bIdx[i], iy, tap});
                }
                Value ix = z.add(ixIdx[i], z.mul(ivs[1], dilations[1]));
                return loadBF16PairA(z, in,
                                     {bIdx[i], iy, ix, z.mul(ivs[2], 2)});
              };
              spec.loadB = [&](KernelBuilder &z, ValueRange ivs, int64_t v,
                               Value) -> Value {
                SmallVector<Value> ix = {p};
                ix.append(ivs.begin(), ivs.end());
                ix.push_back(z.idx(v * vw * 2));
                return vector::LoadOp::create(
                    z.b, z.loc, VectorType::get({vw * 2}, inElem), packed, ix);
              };
            }
            if (bytes)
              spec.loadA = [&](KernelBuilder &z, ValueRange ivs, int64_t i,
                               int64_t, Value) -> Value {
                Value iy = z.add(iyIdx[i], z.mul(ivs[0], dilations[0]));
                if (mergeTaps) {
                  Value tap = z.add(z.mul(ixIdx[i], ch), z.mul(ivs[1], group));
                  return loadInt8A(z, inRows, {bIdx[i], iy, tap}, form,
                                   flipped);
                }
                Value ix = z.add(ixIdx[i], z.mul(ivs[1], dilations[1]));
                return loadInt8A(z, in, {bIdx[i], iy, ix, z.mul(ivs[2], group)},
                                 form, flipped);
              };
            if (bytes)
              spec.loadB = [&](KernelBuilder &z, ValueRange ivs, int64_t v,
                               Value) -> Value {
                SmallVector<Value> ix = {p};
                ix.append(ivs.begin(), ivs.end());
                ix.push_back(z.idx(v * vw * group));
                return loadInt8B(z, packed, ix, form);
              };
            if (!bytes && !pairDot)
              spec.loadA = [&](KernelBuilder &z, ValueRange ivs, int64_t i,
                               int64_t, Value) -> Value {
                if (mergeTaps) {
                  Value iy = z.add(iyIdx[i], z.mul(ivs[0], dilations[0]));
                  Value tap = z.add(z.mul(ixIdx[i], ch), ivs[1]);
                  return widenToF32(
                      z, memref::LoadOp::create(z.b, z.loc, inRows,
                                                ValueRange{bIdx[i], iy, tap}));
                }
                Value iy = z.add(iyIdx[i], z.mul(ivs[0], dilations[0]));
                Value ix = z.add(ixIdx[i], z.mul(ivs[1], dilations[1]));
                return widenToF32(
                    z, memref::LoadOp::create(
                           z.b, z.loc, in, ValueRange{bIdx[i], iy, ix, ivs[2]}));
              };
            // Past the end of a filter row this prefetches the next one (packed
            // B is contiguous); a panel of nr columns packed as nr / panel
            // panels is as many streams, each prefetched.
            bool prefetchB =
                !bytes && !pairDot && packed && panelBytes > kL1PanelBytes;
            if (prefetchB)
              spec.prefetchB = [&](KernelBuilder &z, ValueRange ivs) {
                for (int64_t s = 0; s < nr / panel; ++s) {
                  SmallVector<Value> ix = {z.add(z.mul(p, nr / panel), s)};
                  ix.append(ivs.begin(), ivs.end());
                  ix.back() = z.add(ix.back(), kPrefetchSteps);
                  ix.push_back(z.idx(0));
                  prefetch(z, packed, ix);
                }
              };
            if (!bytes && !pairDot)
              spec.loadB = [&](KernelBuilder &z, ValueRange ivs, int64_t v,
                               Value msk) -> Value {
                if (packed) {
                  auto [pp, lane] = packedColumn(z, p, nr, panel, v);
                  SmallVector<Value> ix = {pp};
                  ix.append(ivs.begin(), ivs.end());
                  ix.push_back(lane);
                  return widenToF32(z, z.load(packed, ix, Value()));
                }
                return widenToF32(
                    z, z.load(w, {ivs[0], ivs[1], ivs[2], z.add(col0, v * vw)},
                              msk));
              };
            emitBlock(y, spec);
          };
          auto loop = scf::ForOp::create(x.b, loc, p0, p1, x.idx(1));
          OpBuilder::InsertionGuard guard(x.b);
          x.b.setInsertionPointToStart(loop.getBody());
          p = loop.getInductionVar();
          col0 = x.mul(p, nr);
          emitColumnShapes(x, p, fullPanels, tailCols, strategy.getVectors(),
                           kernel);
        };

        rowGroups.emit(k2, g, block);
      });
  eraseLoweredOps(op, fill, epilogue);
  return success();
}

} // namespace kiln::kernels
