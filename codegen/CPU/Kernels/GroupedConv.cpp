//===- GroupedConv.cpp - register-blocked grouped NHWC convolution --------===//
//
// O[n][oh][ow][g][f] += I[n][oh*s+kh*d][ow*s+kw*d][g][c] * W[g][f][kh][kw][c]
// on buffers (`linalg.conv_2d_nhwgc_gfhwc`, ONNX Conv with 1 < group <
// channels): the conv kernel's blocking (Conv.cpp) with the G * F output
// channels as columns. A column panel of nr output channels covers one or
// more groups (or part of one); it reduces over the `span` input channels of
// the groups it touches (groupedPanelChannels), and its filters are packed
// at compile time block-diagonally (each column's weights at its own group's
// channels, zeros at the others'). With F = Cg = 4 and 16 lanes a panel
// does 4x the multiply-adds a group needs, but as full broadcast-FMA
// vectors where the generic loops ran scalar (ResNeXt-50, RegNet-Y).
// Groups of as many inputs as outputs, several to a vector (Cg = F = 4 or
// 8 at 16 lanes) run the shuffle form instead: each row's input vector is
// loaded once per tap and each of its Cg channels spread over its group's
// lanes by a static shuffle, Cg multiply-adds per vector (no zeros).
// Constant f32 / i32 filters only; others keep the generic lowering.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Kernels/Kernels.h"

namespace kiln::kernels {

/// Packed B per parallel task (as Conv.cpp's kPanelChunkBytes).
constexpr int64_t kGroupedChunkBytes = 192 * 1024;
/// Fewest parallel tasks, where the panels allow.
constexpr int64_t kMinGroupedTasks = 8;

LogicalResult emitGroupedConv(linalg::Conv2DNhwgcGfhwcOp op,
                              KernelStrategyAttr strategy,
                              WeightPacker &packer) {
  Value in = op.getInputs()[0], w = op.getInputs()[1], out = op.getOutputs()[0];
  if (!innerUnitStride(in) || !innerUnitStride(w) || !innerUnitStride(out))
    return failure();
  Type elementType = getElementTypeOrSelf(out.getType());
  if (getElementTypeOrSelf(in.getType()) != elementType ||
      getElementTypeOrSelf(w.getType()) != elementType)
    return failure();
  auto inType = cast<MemRefType>(in.getType());
  auto outType = cast<MemRefType>(out.getType());
  ArrayRef<int64_t> oShape = outType.getShape();
  ArrayRef<int64_t> wShape = cast<MemRefType>(w.getType()).getShape();
  int64_t nb = oShape[0], oh = oShape[1], ow = oShape[2];
  int64_t groups = wShape[0], f = wShape[1], kh = wShape[2], kw = wShape[3],
          cg = wShape[4];
  int64_t m = groups * f;
  SmallVector<ReassociationIndices> mergeGroups = {{0}, {1}, {2}, {3, 4}};
  if (!memref::CollapseShapeOp::isGuaranteedCollapsible(inType, mergeGroups) ||
      !memref::CollapseShapeOp::isGuaranteedCollapsible(outType, mergeGroups))
    return failure();
  auto strides = llvm::to_vector(op.getStrides().getValues<int64_t>());
  auto dilations = llvm::to_vector(op.getDilations().getValues<int64_t>());

  int64_t vw = strategy.getVectorWidth();
  int64_t nr = strategy.getVectors() * vw;
  bool shuffle = groupedShuffleForm(f, cg, vw) && strategy.getVectors() == 1;
  int64_t span = shuffle ? cg : groupedPanelChannels(groups, f, cg, nr);
  // The kernel runs the whole reduction per block (no K blocking).
  if (strategy.getReductionBlock() < kh * kw * span)
    return failure();

  OpBuilder b(op);
  Location loc = op->getLoc();
  Value packed = packer.packGrouped(b, loc, w, nr, span, shuffle);
  if (!packed)
    return failure();
  KernelBuilder kb{b, loc, vw, VectorType::get({vw}, elementType)};
  int64_t pixels = nb * oh * ow;
  int64_t mr = std::min(strategy.getRows(), pixels);
  InitFill fill = fusableFill(op, out);
  Value fillValue = fill.value;
  // The epilogue reads the result as NHWC (G and F merged), as the kernel
  // stores it.
  std::optional<Epilogue> epilogue =
      findEpilogue(op, out, fill.copy, /*mergedLastDims=*/true);
  Value in4 =
      memref::CollapseShapeOp::create(b, loc, in, mergeGroups).getResult();
  Value out4 =
      memref::CollapseShapeOp::create(b, loc, out, mergeGroups).getResult();

  int64_t fullPanels = m / nr, tailCols = m % nr;
  int64_t panels = fullPanels + (tailCols ? 1 : 0);
  RowGroups rowGroups(pixels, mr, kRowBlocksPerChunk);
  // Tasks: row groups x chunks of column panels, as Conv.cpp.
  int64_t panelBytes = kh * kw * span * nr * 4;
  int64_t maxChunkPanels =
      std::clamp<int64_t>(kGroupedChunkBytes / panelBytes, 1, panels);
  int64_t chunks = (panels + maxChunkPanels - 1) / maxChunkPanels;
  chunks = std::max(
      chunks, std::min(panels, (kMinGroupedTasks + rowGroups.groups - 1) /
                                   rowGroups.groups));
  if (rowGroups.groups * chunks % 2 && chunks < panels)
    ++chunks;

  emitParallel(
      b, loc, rowGroups.groups * chunks, [&](OpBuilder &pb, Value flat) {
        KernelBuilder k2{pb, loc, vw, kb.vt};
        Value g = arith::DivUIOp::create(pb, loc, flat, k2.idx(chunks));
        Value chunk = arith::RemUIOp::create(pb, loc, flat, k2.idx(chunks));
        auto chunkStart = [&](Value c) {
          return arith::DivUIOp::create(pb, loc, k2.mul(c, panels),
                                        k2.idx(chunks))
              .getResult();
        };
        Value p0 = chunkStart(chunk);
        Value p1 = chunkStart(k2.add(chunk, 1));
        Value p, col0, start; // per panel, set below

        auto block = [&](KernelBuilder &x, Value m0, int64_t rows) {
          SmallVector<Value> bIdx, yIdx, xIdx, iyIdx, ixIdx;
          for (int64_t i = 0; i < rows; ++i) {
            Value mi = x.add(m0, i);
            Value r = arith::RemUIOp::create(x.b, loc, mi, x.idx(oh * ow));
            bIdx.push_back(
                arith::DivUIOp::create(x.b, loc, mi, x.idx(oh * ow)));
            yIdx.push_back(arith::DivUIOp::create(x.b, loc, r, x.idx(ow)));
            xIdx.push_back(arith::RemUIOp::create(x.b, loc, r, x.idx(ow)));
            iyIdx.push_back(x.mul(yIdx.back(), strides[0]));
            ixIdx.push_back(x.mul(xIdx.back(), strides[1]));
          }
          auto oIdx = [&](KernelBuilder &z, int64_t i, int64_t v) {
            return SmallVector<Value>{bIdx[i], yIdx[i], xIdx[i],
                                      z.add(col0, v * vw)};
          };
          // The shuffle form: a row's input vector at the panel's channels
          // (its groups' inputs), then per input channel c of a group, c
          // spread over the group's lanes (a static shuffle) times the
          // lanes' weights at c: Cg multiply-adds per vector of Cg-wide
          // groups where the block-diagonal panel does vw.
          auto shuffleKernel = [&](KernelBuilder &y, int64_t, int64_t lastLanes) {
            BlockSpec spec;
            spec.rows = rows;
            spec.vecs = 1;
            spec.lastLanes = lastLanes;
            setConvOutput(spec, fillValue, out4, epilogue, oIdx);
            Value msk = y.mask(lastLanes);
            SmallVector<Value> acc;
            for (int64_t i = 0; i < rows; ++i)
              acc.push_back(spec.init(y, i, 0, msk));
            SmallVector<SmallVector<int64_t>> masks(cg);
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t j = 0; j < vw; ++j)
                masks[c].push_back(j / cg * cg + c);
            auto outer = scf::ForOp::create(y.b, loc, y.idx(0), y.idx(kh),
                                            y.idx(1), acc);
            {
              OpBuilder::InsertionGuard g1(y.b);
              y.b.setInsertionPointToStart(outer.getBody());
              Value ky = outer.getInductionVar();
              auto inner =
                  scf::ForOp::create(y.b, loc, y.idx(0), y.idx(kw), y.idx(1),
                                     outer.getRegionIterArgs());
              {
                OpBuilder::InsertionGuard g2(y.b);
                y.b.setInsertionPointToStart(inner.getBody());
                Value kx = inner.getInductionVar();
                SmallVector<Value> next(inner.getRegionIterArgs());
                SmallVector<Value> xs;
                for (int64_t i = 0; i < rows; ++i) {
                  Value iy = y.add(iyIdx[i], y.mul(ky, dilations[0]));
                  Value ix = y.add(ixIdx[i], y.mul(kx, dilations[1]));
                  xs.push_back(y.load(in4, {bIdx[i], iy, ix, col0}, msk));
                }
                for (int64_t c = 0; c < cg; ++c) {
                  Value bv =
                      y.load(packed, {p, ky, kx, y.idx(c), y.idx(0)}, Value());
                  for (int64_t i = 0; i < rows; ++i) {
                    Value av = vector::ShuffleOp::create(y.b, loc, xs[i],
                                                         xs[i], masks[c]);
                    next[i] = y.multiplyAdd(av, bv, next[i]);
                  }
                }
                scf::YieldOp::create(y.b, loc, next);
              }
              scf::YieldOp::create(y.b, loc, inner.getResults());
            }
            for (int64_t i = 0; i < rows; ++i)
              spec.store(y, i, 0, outer.getResult(i), msk);
          };
          auto kernel = [&](KernelBuilder &y, int64_t vecs, int64_t lastLanes) {
            if (shuffle)
              return shuffleKernel(y, vecs, lastLanes);
            BlockSpec spec;
            spec.rows = rows;
            spec.vecs = vecs;
            spec.lastLanes = lastLanes;
            spec.reduction = {{y.idx(0), y.idx(kh)},
                              {y.idx(0), y.idx(kw)},
                              {y.idx(0), y.idx(span)}};
            setConvOutput(spec, fillValue, out4, epilogue, oIdx);
            spec.loadA = [&](KernelBuilder &z, ValueRange ivs, int64_t i,
                             int64_t, Value) -> Value {
              Value iy = z.add(iyIdx[i], z.mul(ivs[0], dilations[0]));
              Value ix = z.add(ixIdx[i], z.mul(ivs[1], dilations[1]));
              return memref::LoadOp::create(
                  z.b, z.loc, in4,
                  ValueRange{bIdx[i], iy, ix, z.add(start, ivs[2])});
            };
            spec.loadB = [&](KernelBuilder &z, ValueRange ivs, int64_t v,
                             Value) -> Value {
              return z.load(packed, {p, ivs[0], ivs[1], ivs[2], z.idx(v * vw)},
                            Value());
            };
            if (panelBytes > kL1PanelBytes)
              spec.prefetchB = [&](KernelBuilder &z, ValueRange ivs) {
                prefetch(z, packed,
                         {p, ivs[0], ivs[1], z.add(ivs[2], kPrefetchSteps),
                          z.idx(0)});
              };
            emitBlock(y, spec);
          };
          auto loop = scf::ForOp::create(x.b, loc, p0, p1, x.idx(1));
          OpBuilder::InsertionGuard guard(x.b);
          x.b.setInsertionPointToStart(loop.getBody());
          p = loop.getInductionVar();
          col0 = x.mul(p, nr);
          // groupedPanelStart: min(col0 / f * cg, groups * cg - span)
          // (the shuffle form reads the panel's own channels: f == cg).
          start = shuffle
                      ? col0
                      : arith::MinUIOp::create(
                            x.b, loc,
                            x.mul(arith::DivUIOp::create(x.b, loc, col0,
                                                         x.idx(f)),
                                  cg),
                            x.idx(groups * cg - span))
                            .getResult();
          emitColumnShapes(x, p, fullPanels, tailCols, strategy.getVectors(),
                           kernel);
        };

        rowGroups.emit(k2, g, block);
      });
  eraseLoweredOps(op, fill, epilogue);
  return success();
}

} // namespace kiln::kernels
