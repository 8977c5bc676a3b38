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

// The first dimension of the innermost block contiguous in both layouts
// (dimensions of size 1 never break a block), or the rank when the innermost
// dimension is not contiguous.
int64_t contiguousBlockStart(ArrayRef<int64_t> shape,
                             ArrayRef<int64_t> stridesA,
                             ArrayRef<int64_t> stridesB) {
  int64_t start = shape.size();
  int64_t expected = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    if (shape[d] != 1 && (stridesA[d] != expected || stridesB[d] != expected))
      break;
    expected *= shape[d];
    start = d;
  }
  return start;
}

// A view of `source` at `offsets` of the sizes of dimensions [start, rank),
// the outer dimensions dropped: contiguous, so its copy is a memcpy.
Value blockView(OpBuilder &builder, Location loc, Value source,
                const StaticLayout &layout, ArrayRef<OpFoldResult> offsets,
                int64_t start) {
  ArrayRef<int64_t> shape = layout.type.getShape();
  MLIRContext *context = builder.getContext();
  SmallVector<OpFoldResult> sizes, unitStrides(shape.size(),
                                               builder.getIndexAttr(1));
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    sizes.push_back(builder.getIndexAttr(d < start ? 1 : shape[d]));
  auto resultType = MemRefType::get(
      shape.drop_front(start), layout.type.getElementType(),
      StridedLayoutAttr::get(context, ShapedType::kDynamic,
                             ArrayRef<int64_t>(layout.strides).drop_front(start)),
      layout.type.getMemorySpace());
  return memref::SubViewOp::create(builder, loc, resultType, source, offsets,
                                   sizes, unitStrides);
}

// Rewrites `copy` as loops of block memcpys; false when its layouts do not
// allow it (dynamic shapes or strides, no contiguous block of
// kMinBlockBytes).
bool lowerToBlockCopies(IRRewriter &rewriter, memref::CopyOp copy) {
  std::optional<StaticLayout> source = staticLayout(copy.getSource());
  std::optional<StaticLayout> target = staticLayout(copy.getTarget());
  if (!source || !target)
    return false;
  Type element = source->type.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return false;
  ArrayRef<int64_t> shape = source->type.getShape();
  int64_t rank = shape.size();
  int64_t start = contiguousBlockStart(shape, source->strides, target->strides);
  int64_t blockBytes = element.getIntOrFloatBitWidth() / 8;
  for (int64_t d = start; d < rank; ++d)
    blockBytes *= shape[d];
  if (start == rank || blockBytes < kMinBlockBytes)
    return false;

  Location loc = copy.getLoc();
  rewriter.setInsertionPoint(copy);
  SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  llvm::SmallDenseMap<int64_t, Value> uppers;
  for (int64_t d = 0; d < start; ++d)
    if (shape[d] != 1 && !uppers.count(shape[d]))
      uppers[shape[d]] = arith::ConstantIndexOp::create(rewriter, loc, shape[d]);
  for (int64_t d = 0; d < start; ++d) {
    if (shape[d] == 1)
      continue;
    Value upper = uppers[shape[d]];
    auto loop = scf::ForOp::create(rewriter, loc, zero, upper, one);
    offsets[d] = loop.getInductionVar();
    rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  }
  Value from =
      blockView(rewriter, loc, copy.getSource(), *source, offsets, start);
  Value to = blockView(rewriter, loc, copy.getTarget(), *target, offsets, start);
  memref::CopyOp::create(rewriter, loc, from, to);
  rewriter.eraseOp(copy);
  return true;
}

struct LowerStridedCopiesPass
    : kiln::impl::KilnLowerStridedCopiesPassBase<LowerStridedCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (!hasIdentityLayout(copy.getSource()) ||
          !hasIdentityLayout(copy.getTarget()))
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
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
