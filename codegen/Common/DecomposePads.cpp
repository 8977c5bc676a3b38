//===- DecomposePads.cpp - padded tensors without a full fill + copy ------===//
//
// A `tensor.pad` of a constant bufferizes to a new buffer, a fill of all of
// it (a memset for zero padding) and a copy of the source into its interior:
// on MobileNetV2 that was 8% of a run, for a one-pixel border. Like upstream's
// `DecomposePadOpPattern` (empty + fill + insert_slice), but
//  - only the border strips are filled: for each padded dim d, the slabs
//    below and above the source along d, spanning the interior in dims < d
//    and everything in dims > d (each border element once);
//  - the source's producer, a linalg op whose init is a `tensor.empty` its
//    payload does not read (bias + ReLU6 after a conv, the input's NCHW->NHWC
//    transpose), writes straight into `extract_slice %padded[interior]`; the
//    `insert_slice` of its result back into the padded tensor then
//    bufferizes to nothing. Other sources are copied into the interior.
// The border is filled on every run, not once: kiln-plan-memory shares the
// scratch arena's bytes between buffers whose lives do not overlap, so no
// border keeps its value between runs (and the strips are a thin shell: for
// a 3x3 conv's pad of 1 on 112x112, 2 rows + 2 columns of 114).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"

namespace kiln {
#define GEN_PASS_DEF_KILNDECOMPOSEPADSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The producer of `source` that can write into the padded tensor's
/// interior: a linalg op on tensors in `block` whose init for `source` is a
/// `tensor.empty` (so nothing else was redirected there) that it never reads.
OpOperand *redirectableInit(Value source, Block *block) {
  auto result = dyn_cast<OpResult>(source);
  auto producer = source.getDefiningOp<linalg::LinalgOp>();
  if (!result || !producer || producer->getBlock() != block ||
      !producer.hasPureTensorSemantics())
    return nullptr;
  OpOperand *init = producer.getDpsInitOperand(result.getResultNumber());
  if (!init->get().getDefiningOp<tensor::EmptyOp>() ||
      producer.payloadUsesValueFromOperand(init))
    return nullptr;
  return init;
}

/// Where the padded tensor is created when `producer` writes into it: before
/// the kernel whose result `producer` reads right after it (and the kernel's
/// init fill), so that after bufferization the kernel is still directly
/// followed by its elementwise epilogue and the view it stores to exists
/// before it (what kiln-emit-microkernels needs to fuse the two).
Operation *insertionPointFor(Operation *producer) {
  auto skip = [](Operation *op) {
    while (op && isa<arith::ConstantOp, tensor::EmptyOp>(op))
      op = op->getPrevNode();
    return op;
  };
  Operation *kernel = skip(producer->getPrevNode());
  if (!kernel || !isa<linalg::LinalgOp>(kernel) ||
      llvm::none_of(kernel->getUsers(),
                    [&](Operation *user) { return user == producer; }))
    return producer;
  Operation *fill = skip(kernel->getPrevNode());
  auto kernelOp = cast<linalg::LinalgOp>(kernel);
  if (auto f = dyn_cast_or_null<linalg::FillOp>(fill))
    if (llvm::is_contained(kernelOp.getDpsInits(), f.getResult(0)))
      return fill;
  return kernel;
}

/// Fills the border of `dest` (shape `padded`; the interior starts at `low`
/// with shape `inner`) with `value`, one strip per padded side.
Value fillBorder(OpBuilder &b, Location loc, Value dest, Value value,
                 ArrayRef<int64_t> low, ArrayRef<int64_t> inner,
                 ArrayRef<int64_t> padded) {
  int64_t rank = padded.size();
  SmallVector<int64_t> ones(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t high = padded[d] - low[d] - inner[d];
    for (auto [begin, size] :
         {std::pair{int64_t(0), low[d]}, std::pair{low[d] + inner[d], high}}) {
      if (size == 0)
        continue;
      SmallVector<int64_t> offsets, sizes;
      for (int64_t j = 0; j < rank; ++j) {
        offsets.push_back(j < d ? low[j] : j == d ? begin : 0);
        sizes.push_back(j < d ? inner[j] : j == d ? size : padded[j]);
      }
      MLIRContext *ctx = b.getContext();
      auto strip = tensor::ExtractSliceOp::create(
          b, loc, dest, getAsIndexOpFoldResult(ctx, offsets),
          getAsIndexOpFoldResult(ctx, sizes),
          getAsIndexOpFoldResult(ctx, ones));
      Value filled =
          linalg::FillOp::create(b, loc, value, strip.getResult()).getResult(0);
      dest = tensor::InsertSliceOp::create(
          b, loc, filled, dest, strip.getMixedOffsets(), strip.getMixedSizes(),
          strip.getMixedStrides());
    }
  }
  return dest;
}

struct DecomposePadsPass
    : kiln::impl::KilnDecomposePadsPassBase<DecomposePadsPass> {
  void runOnOperation() override {
    SmallVector<tensor::PadOp> pads;
    getOperation().walk([&](tensor::PadOp pad) { pads.push_back(pad); });
    DominanceInfo dominance(getOperation());
    for (tensor::PadOp pad : pads) {
      Value value = pad.getConstantPaddingValue();
      RankedTensorType type = pad.getResultType();
      RankedTensorType sourceType = pad.getSourceType();
      if (!value || !type.hasStaticShape() || !sourceType.hasStaticShape() ||
          ShapedType::isDynamicShape(pad.getStaticLow()) || pad.getNofold())
        continue;
      Location loc = pad.getLoc();
      Value source = pad.getSource();
      OpOperand *init = redirectableInit(source, pad->getBlock());
      Operation *at = init ? insertionPointFor(init->getOwner()) : pad;
      // The padding value must be available there (a constant in the pad's
      // region is cloned).
      Attribute constant;
      bool available = dominance.properlyDominates(value, at);
      if (!available && !matchPattern(value, m_Constant(&constant))) {
        init = nullptr;
        at = pad;
        available = dominance.properlyDominates(value, at);
        if (!available)
          continue;
      }
      OpBuilder b(at);
      if (!available)
        value = arith::ConstantOp::create(b, loc, cast<TypedAttr>(constant));
      Value dest = tensor::EmptyOp::create(b, loc, type.getShape(),
                                           type.getElementType());
      dest = fillBorder(b, loc, dest, value, pad.getStaticLow(),
                        sourceType.getShape(), type.getShape());
      SmallVector<OpFoldResult> offsets =
          getAsIndexOpFoldResult(b.getContext(), pad.getStaticLow());
      SmallVector<OpFoldResult> sizes =
          getAsIndexOpFoldResult(b.getContext(), sourceType.getShape());
      SmallVector<OpFoldResult> strides(sourceType.getRank(),
                                        b.getIndexAttr(1));
      if (init) {
        Value interior = tensor::ExtractSliceOp::create(
            b, loc, sourceType, dest, offsets, sizes, strides);
        init->set(interior);
      }
      b.setInsertionPoint(pad);
      Value result = tensor::InsertSliceOp::create(b, loc, source, dest,
                                                   offsets, sizes, strides);
      pad.replaceAllUsesWith(result);
      pad.erase();
    }
  }
};

} // namespace
