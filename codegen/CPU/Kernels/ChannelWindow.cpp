//===- ChannelWindow.cpp - depthwise convolution and NHWC pooling ---------===//
//
// Depthwise: O[n][oh][ow][c] += I[n][oh*s+kh*d][ow*s+kw*d][c] * W[kh][kw][c]
// Pooling:   O[n][oh][ow][c] = max / sum of I[n][oh*s+kh*d][ow*s+kw*d][c]
// Each output channel reads only its own input channel over the window: a
// register block is `rows` output columns x `vectors` channel vectors, one
// input vector load per FMA (depthwise) or per max / add (pooling). A task
// is one output row x one channel panel.
//
// 8-bit depthwise (ConvInteger of quantized models: i8 input and filter, i32
// accumulator): the channels stay the lanes; each input vector is vw bytes
// sign-extended to i32 as it is loaded (vpmovsxbd), each filter vector vw
// bytes widened to i16 in the low half of each i32 lane (high half 0), and
// one multiply-add per tap (kiln.int8_dot, Int8.cpp int8LaneProduct):
// vpdpwssd on x86 VNNI (s16 pairs summed into the i32 lane: the input's
// high half times the filter's 0 adds nothing), vpmaddwd and an add on x86
// without VNNI, a multiply and an add elsewhere. The input reads 1/4 of the
// bytes of the int32 form it replaces.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Kernels/Kernels.h"

namespace kiln::kernels {

namespace {

/// A depthwise conv or NHWC pooling: each output channel reads only its
/// own input channel over the (kh, kw) window.
struct ChannelWindow {
  Operation *op;
  Value in, w, out; // w: the depthwise filter, null for pooling
  int64_t kh, kw;
  SmallVector<int64_t> strides, dilations;
  /// Pooling's combiner (BlockSpec::combine); null: FMA with w.
  std::function<Value(KernelBuilder &, Value, Value)> combine;
  /// i8 input and filter into an i32 accumulator (8-bit depthwise).
  bool int8 = false;
};
} // namespace

static LogicalResult channelWindow(const ChannelWindow &cw,
                                   KernelStrategyAttr strategy);

LogicalResult emitDepthwise(linalg::DepthwiseConv2DNhwcHwcOp op,
                            KernelStrategyAttr strategy) {
  Value w = op.getInputs()[1];
  bool int8 = getElementTypeOrSelf(op.getInputs()[0].getType())
                  .isSignlessInteger(8);
  if (!innerUnitStride(w, /*allowBytes=*/int8))
    return failure();
  ArrayRef<int64_t> wShape = cast<MemRefType>(w.getType()).getShape();
  return channelWindow(
      {op, op.getInputs()[0], w, op.getOutputs()[0], wShape[0], wShape[1],
       llvm::to_vector(op.getStrides().getValues<int64_t>()),
       llvm::to_vector(op.getDilations().getValues<int64_t>()), nullptr,
       int8},
      strategy);
}

/// NHWC max / sum pooling (MaxPool, and AveragePool's sum before its
/// division, which then fuses as the epilogue): the depthwise kernel with the
/// window's taps combined by max / add. Generically lowered, the output was
/// loaded and stored once per tap (LLVM turned the NaN-propagating max into
/// masked stores): 10% of SqueezeNet's run.
LogicalResult emitPooling(linalg::LinalgOp op, KernelStrategyAttr strategy) {
  bool isMax = isa<linalg::PoolingNhwcMaxOp>(op.getOperation());
  auto strides = op->getAttrOfType<DenseIntElementsAttr>("strides");
  auto dilations = op->getAttrOfType<DenseIntElementsAttr>("dilations");
  ArrayRef<int64_t> window =
      cast<MemRefType>(op.getDpsInputs()[1].getType()).getShape();
  if (!strides || !dilations)
    return failure();
  auto combine = [isMax](KernelBuilder &z, Value a, Value acc) -> Value {
    if (isMax)
      return arith::MaximumFOp::create(z.b, z.loc, acc, a);
    return arith::AddFOp::create(z.b, z.loc, acc, a);
  };
  return channelWindow(
      {op, op.getDpsInputs()[0], Value(), op.getDpsInits()[0], window[0],
       window[1], llvm::to_vector(strides.getValues<int64_t>()),
       llvm::to_vector(dilations.getValues<int64_t>()), combine},
      strategy);
}

static LogicalResult channelWindow(const ChannelWindow &cw,
                                   KernelStrategyAttr strategy) {
  Operation *op = cw.op;
  Value in = cw.in, w = cw.w, out = cw.out;
  if (!innerUnitStride(in, /*allowBytes=*/cw.int8) || !innerUnitStride(out))
    return failure();
  ArrayRef<int64_t> oShape = cast<MemRefType>(out.getType()).getShape();
  int64_t nb = oShape[0], oh = oShape[1], ow = oShape[2], ch = oShape[3];
  int64_t kh = cw.kh, kw = cw.kw;
  ArrayRef<int64_t> strides = cw.strides, dilations = cw.dilations;
  // The kernel runs the whole window per block (no reduction blocking).
  if (strategy.getReductionBlock() < kh * kw)
    return failure();

  OpBuilder b(op);
  Location loc = op->getLoc();
  int64_t vw = strategy.getVectorWidth();
  Type elementType = cast<MemRefType>(out.getType()).getElementType();
  KernelBuilder kb{b, loc, vw, VectorType::get({vw}, elementType)};
  // rows (output columns) x vecs (channel vectors): rows*vecs accumulators,
  // vecs filter vectors (depthwise), one input vector.
  int64_t vecs = strategy.getVectors();
  int64_t rows = std::min<int64_t>(ow, strategy.getRows());
  int64_t cb = vecs * vw;
  InitFill fill = fusableFill(op, out);
  Value fillValue = fill.value;
  std::optional<Epilogue> epilogue = findEpilogue(op, out, fill.copy);
  Int8Dot form = cw.int8 ? int8DotOf(op) : Int8Dot::Bytes;
  std::string laneProduct = cw.int8 ? declareInt8LaneProduct(op, vw, form) : "";

  int64_t fullPanels = ch / cb, tailCols = ch % cb;
  int64_t panels = fullPanels + (tailCols ? 1 : 0);
  int64_t fullRowBlocks = ow / rows, tailRows = ow % rows;

  emitParallel(b, loc, nb * oh * panels, [&](OpBuilder &pb, Value flat) {
    KernelBuilder k2{pb, loc, vw, kb.vt};
    Value row = arith::DivUIOp::create(pb, loc, flat, k2.idx(panels));
    Value p = arith::RemUIOp::create(pb, loc, flat, k2.idx(panels));
    Value bi = arith::DivUIOp::create(pb, loc, row, k2.idx(oh));
    Value y = arith::RemUIOp::create(pb, loc, row, k2.idx(oh));
    Value col0 = k2.mul(p, cb);
    Value iy0 = k2.mul(y, strides[0]);

    auto block = [&](KernelBuilder &x, Value ow0, int64_t nrows, int64_t nvecs,
                     int64_t lastLanes) {
      auto oIdx = [&](KernelBuilder &z, int64_t i, int64_t v) {
        return SmallVector<Value>{bi, y, z.add(ow0, i), z.add(col0, v * vw)};
      };
      BlockSpec spec;
      spec.rows = nrows;
      spec.vecs = nvecs;
      spec.lastLanes = lastLanes;
      spec.broadcastA = false;
      spec.reduction = {{x.idx(0), x.idx(kh)}, {x.idx(0), x.idx(kw)}};
      setConvOutput(spec, fillValue, out, epilogue, oIdx);
      spec.loadA = [&](KernelBuilder &z, ValueRange ivs, int64_t i, int64_t v,
                       Value msk) -> Value {
        Value iy = z.add(iy0, z.mul(ivs[0], dilations[0]));
        Value ix = z.add(z.mul(z.add(ow0, i), strides[1]),
                         z.mul(ivs[1], dilations[1]));
        Value a = z.load(in, {bi, iy, ix, z.add(col0, v * vw)}, msk);
        return cw.int8 ? arith::ExtSIOp::create(z.b, z.loc, z.vt, a)
                             .getResult()
                       : a;
      };
      if (w)
        spec.loadB = [&](KernelBuilder &z, ValueRange ivs, int64_t v,
                         Value msk) -> Value {
          Value f = z.load(w, {ivs[0], ivs[1], z.add(col0, v * vw)}, msk);
          return cw.int8 ? int8LaneOperand(z, f, form) : f;
        };
      if (cw.int8)
        spec.multiplyAdd = [&](KernelBuilder &z, Value a, Value bv,
                               Value acc) -> Value {
          return int8LaneProduct(z, form, laneProduct, a, bv, acc);
        };
      spec.combine = cw.combine;
      emitBlock(x, spec);
    };

    auto columns = [&](KernelBuilder &x, int64_t nvecs, int64_t lastLanes) {
      if (fullRowBlocks) {
        auto loop = scf::ForOp::create(
            x.b, loc, x.idx(0), x.idx(fullRowBlocks * rows), x.idx(rows));
        OpBuilder::InsertionGuard guard(x.b);
        x.b.setInsertionPointToStart(loop.getBody());
        block(x, loop.getInductionVar(), rows, nvecs, lastLanes);
      }
      if (tailRows)
        block(x, x.idx(fullRowBlocks * rows), tailRows, nvecs, lastLanes);
    };

    emitColumnShapes(k2, p, fullPanels, tailCols, vecs, columns);
  });
  eraseLoweredOps(op, fill, epilogue);
  return success();
}

} // namespace kiln::kernels
