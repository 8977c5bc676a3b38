//===- LowerStridedCopies.cpp - memref.copy without the runner library ----===//
//
// memref.copy between buffers that are not contiguous would lower to a call
// into MLIR's C runner library. A copy whose innermost dimensions are
// contiguous in both buffers (a Concat writing an input into its channel
// slice, a Pad writing the interior) becomes loops over the outer dimensions
// around a memref.copy of one contiguous block each (a memcpy of constant
// size, which LLVM expands inline when small); any other becomes linalg.copy,
// lowered to loops like the rest of linalg.
//
// Row memcpys instead of element loops: DenseNet-121's 537 Concat copies
// lowered to loop nests were most of its serial code (LLVM vectorized each
// with run-time alias checks and a scalar remainder, and unrolled the outer
// loops), so most of its LLVM optimization and instruction selection time.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {
#define GEN_PASS_DEF_KILNLOWERSTRIDEDCOPIESPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {
// Contiguous blocks smaller than this stay element loops (a memcpy of a few
// bytes per iteration is no cheaper than the loop LLVM vectorizes).
constexpr int64_t kMinBlockBytes = 32;

bool hasIdentityLayout(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getLayout().isIdentity();
}

struct StaticLayout {
  MemRefType type;
  SmallVector<int64_t> strides;
};

// The strides of a memref of static shape and static strides (the offset may
// be dynamic).
std::optional<StaticLayout> staticLayout(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  return StaticLayout{type, strides};
}

// The first dimension of the innermost block contiguous in both layouts (a
// unit dimension inside it must have the contiguous stride too: MemRefToLLVM
// makes a memcpy only of a row-major contiguous type), or the rank when the
// innermost dimension is not contiguous.
int64_t contiguousBlockStart(ArrayRef<int64_t> shape,
                             ArrayRef<int64_t> stridesA,
                             ArrayRef<int64_t> stridesB) {
  int64_t start = shape.size();
  int64_t expected = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    if (stridesA[d] != expected || stridesB[d] != expected)
      break;
    expected *= shape[d];
    start = d;
  }
  // Unit dimensions at the block's front go to the loops (no loop for them).
  while (start + 1 < static_cast<int64_t>(shape.size()) && shape[start] == 1)
    ++start;
  return start;
}

// A view of `source` at `offsets` of the sizes of dimensions [start, rank),
// the outer dimensions dropped: contiguous, so its copy is a memcpy.
Value blockView(OpBuilder &builder, Location loc, Value source,
                const StaticLayout &layout, ArrayRef<OpFoldResult> offsets,
                int64_t start) {
  ArrayRef<int64_t> shape = layout.type.getShape();
  SmallVector<OpFoldResult> sizes, unitStrides(shape.size(),
                                               builder.getIndexAttr(1));
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    sizes.push_back(builder.getIndexAttr(d < start ? 1 : shape[d]));
  MemRefType resultType = memref::SubViewOp::inferRankReducedResultType(
      shape.drop_front(start), layout.type, offsets, sizes, unitStrides);
  return memref::SubViewOp::create(builder, loc, resultType, source, offsets,
                                   sizes, unitStrides);
}

// Loops over the dimensions [0, start) of `shape` but those of size 1, the
// rewriter's insertion point left in the innermost body; the offsets of one
// block (the induction variables, 0 for the others). LLVM is told not to
// unroll them: a loop around a memcpy or memset is a few instructions, and
// unrolled it was most of DenseNet-121's serial code (every Concat slice and
// Pad border one straight-line run of vector stores).
SmallVector<OpFoldResult> buildBlockLoops(IRRewriter &rewriter, Location loc,
                                          ArrayRef<int64_t> shape,
                                          int64_t start) {
  SmallVector<OpFoldResult> offsets(shape.size(), rewriter.getIndexAttr(0));
  if (llvm::all_of(shape.take_front(start),
                   [](int64_t size) { return size == 1; }))
    return offsets;
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  llvm::SmallDenseMap<int64_t, Value> uppers;
  for (int64_t d = 0; d < start; ++d)
    if (shape[d] != 1 && !uppers.count(shape[d]))
      uppers[shape[d]] = arith::ConstantIndexOp::create(rewriter, loc, shape[d]);
  MLIRContext *context = rewriter.getContext();
  auto noUnroll = LLVM::LoopAnnotationAttr::get(
      context, {}, {}, {},
      LLVM::LoopUnrollAttr::get(context, rewriter.getBoolAttr(true), {}, {},
                                {}, {}, {}, {}),
      {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});
  for (int64_t d = 0; d < start; ++d) {
    if (shape[d] == 1)
      continue;
    auto loop = scf::ForOp::create(rewriter, loc, zero, uppers[shape[d]], one);
    // SCFToControlFlow moves it to the loop's back edge; emitObjectFile makes
    // it the branch's loop_annotation.
    loop->setDiscardableAttr("llvm.loop_annotation", noUnroll);
    offsets[d] = loop.getInductionVar();
    rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  }
  return offsets;
}

// The first dimension of the contiguous block of a copy or fill of at least
// kMinBlockBytes, or nullopt.
std::optional<int64_t> blockStart(Type element, ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> stridesA,
                                  ArrayRef<int64_t> stridesB) {
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  int64_t rank = shape.size();
  int64_t start = contiguousBlockStart(shape, stridesA, stridesB);
  int64_t blockBytes = element.getIntOrFloatBitWidth() / 8;
  for (int64_t d = start; d < rank; ++d)
    blockBytes *= shape[d];
  if (start == rank || blockBytes < kMinBlockBytes)
    return std::nullopt;
  return start;
}

// Rewrites `copy` as loops of block memcpys; false when its layouts do not
// allow it (dynamic shapes or strides, no contiguous block of
// kMinBlockBytes).
bool lowerToBlockCopies(IRRewriter &rewriter, memref::CopyOp copy) {
  std::optional<StaticLayout> source = staticLayout(copy.getSource());
  std::optional<StaticLayout> target = staticLayout(copy.getTarget());
  if (!source || !target)
    return false;
  ArrayRef<int64_t> shape = source->type.getShape();
  std::optional<int64_t> start =
      blockStart(source->type.getElementType(), shape, source->strides,
                 target->strides);
  if (!start)
    return false;
  Location loc = copy.getLoc();
  rewriter.setInsertionPoint(copy);
  SmallVector<OpFoldResult> offsets =
      buildBlockLoops(rewriter, loc, shape, *start);
  Value from =
      blockView(rewriter, loc, copy.getSource(), *source, offsets, *start);
  Value to =
      blockView(rewriter, loc, copy.getTarget(), *target, offsets, *start);
  memref::CopyOp::create(rewriter, loc, from, to);
  rewriter.eraseOp(copy);
  return true;
}

// Rewrites a linalg.fill of a strided buffer (a Pad's border) as loops of
// block fills (each a memset or one short vector loop); false when its layout
// does not allow it or the buffer is contiguous already.
bool lowerToBlockFills(IRRewriter &rewriter, linalg::FillOp fill) {
  if (!fill.hasPureBufferSemantics() || fill.getDpsInits().size() != 1)
    return false;
  Value output = fill.getDpsInits()[0];
  if (hasIdentityLayout(output))
    return false;
  std::optional<StaticLayout> layout = staticLayout(output);
  if (!layout)
    return false;
  ArrayRef<int64_t> shape = layout->type.getShape();
  std::optional<int64_t> start = blockStart(
      layout->type.getElementType(), shape, layout->strides, layout->strides);
  if (!start || *start == 0 ||
      llvm::all_of(shape.take_front(*start),
                   [](int64_t size) { return size == 1; }))
    return false;
  Location loc = fill.getLoc();
  rewriter.setInsertionPoint(fill);
  SmallVector<OpFoldResult> offsets =
      buildBlockLoops(rewriter, loc, shape, *start);
  Value block = blockView(rewriter, loc, output, *layout, offsets, *start);
  linalg::FillOp::create(rewriter, loc, fill.getDpsInputs()[0], block);
  rewriter.eraseOp(fill);
  return true;
}

struct LowerStridedCopiesPass
    : kiln::impl::KilnLowerStridedCopiesPassBase<LowerStridedCopiesPass> {
  // The block loops carry an LLVM loop annotation.
  void getDependentDialects(DialectRegistry &registry) const override {
    KilnLowerStridedCopiesPassBase::getDependentDialects(registry);
    registry.insert<LLVM::LLVMDialect>();
  }

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (!hasIdentityLayout(copy.getSource()) ||
          !hasIdentityLayout(copy.getTarget()))
        copies.push_back(copy);
    });
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) { fills.push_back(fill); });
    IRRewriter rewriter(&getContext());
    for (linalg::FillOp fill : fills)
      lowerToBlockFills(rewriter, fill);
    for (memref::CopyOp copy : copies) {
      if (lowerToBlockCopies(rewriter, copy))
        continue;
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      rewriter.eraseOp(copy);
    }
  }
};
} // namespace
