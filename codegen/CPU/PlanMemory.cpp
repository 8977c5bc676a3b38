//===- PlanMemory.cpp - intermediate buffers in one scratch arena ---------===//
//
// Every statically shaped `memref.alloc` at the top level of the entry
// function becomes a `memref.view` into one scratch buffer, a new last
// argument of the entry (`memref<Sxi8>`, attribute `kiln.scratch`). Offsets are
// planned at compile time: a buffer lives from the first to the last top-level
// op using it (or a view of it); buffers whose lives do not overlap share
// bytes (greedy first fit, largest first, 64-byte aligned). The arena's size
// becomes the module attribute `kiln.scratch_size`; the runtime allocates it
// once when a model is opened, so a run allocates nothing.
// A buffer that may escape (returned, yielded from a region, passed to a call)
// keeps its allocation.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "dialects/Kiln/ABIAttributes.h"

#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {
#define GEN_PASS_DEF_KILNPLANMEMORYPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr int64_t kAlignment = 64;

struct Buffer {
  memref::AllocOp alloc;
  int64_t size;
  int64_t first, last; // top-level op indices
  int64_t offset = -1;
};

/// The live range of `alloc` in top-level op indices, or nullopt if it may
/// escape.
std::optional<std::pair<int64_t, int64_t>>
liveRange(memref::AllocOp alloc, Block &body,
          const DenseMap<Operation *, int64_t> &index) {
  int64_t first = INT64_MAX, last = -1;
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *owner = use.getOwner();
      if (isa<func::ReturnOp, func::CallOp, scf::YieldOp>(owner) ||
          isa<RegionBranchTerminatorOpInterface>(owner))
        return std::nullopt;
      if (auto view = dyn_cast<ViewLikeOpInterface>(owner)) {
        if (view.getViewSource() == value)
          for (Value result : owner->getResults())
            worklist.push_back(result);
      } else if (llvm::any_of(owner->getResultTypes(), [](Type type) {
                   return isa<BaseMemRefType>(type);
                 })) {
        return std::nullopt; // may alias a result we do not follow
      }
      Operation *top = body.findAncestorOpInBlock(*owner);
      if (!top)
        return std::nullopt;
      int64_t at = index.lookup(top);
      first = std::min(first, at);
      last = std::max(last, at);
    }
  }
  if (last < 0)
    first = last = index.lookup(alloc);
  return std::make_pair(first, last);
}

struct PlanMemoryPass : kiln::impl::KilnPlanMemoryPassBase<PlanMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal() || !func.isPublic())
        continue;
      Block &body = func.getBody().front();
      DenseMap<Operation *, int64_t> index;
      int64_t position = 0;
      for (Operation &op : body)
        index[&op] = position++;

      SmallVector<Buffer> buffers;
      for (auto alloc : body.getOps<memref::AllocOp>()) {
        MemRefType type = alloc.getType();
        if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
            !type.getElementType().isIntOrIndexOrFloat() ||
            type.getElementType().isIndex() || type.getMemorySpace())
          continue;
        std::optional<std::pair<int64_t, int64_t>> range =
            liveRange(alloc, body, index);
        if (!range)
          continue;
        // Each element takes whole bytes in memory (an i1 is stored as one
        // byte by the LLVM lowering, not packed).
        int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
        int64_t size = type.getNumElements() * bytes;
        size = std::max<int64_t>(kAlignment,
                                 (size + kAlignment - 1) / kAlignment * kAlignment);
        buffers.push_back({alloc, size, range->first, range->second});
      }

      // Greedy first fit, largest first.
      SmallVector<Buffer *> order;
      for (Buffer &buffer : buffers)
        order.push_back(&buffer);
      llvm::stable_sort(order, [](Buffer *a, Buffer *b) { return a->size > b->size; });
      SmallVector<Buffer *> placed;
      int64_t total = 0;
      for (Buffer *buffer : order) {
        SmallVector<std::pair<int64_t, int64_t>> taken;
        for (Buffer *other : placed)
          if (other->first <= buffer->last && buffer->first <= other->last)
            taken.push_back({other->offset, other->offset + other->size});
        llvm::sort(taken);
        int64_t offset = 0;
        for (auto [lo, hi] : taken) {
          if (offset + buffer->size <= lo)
            break;
          offset = std::max(offset, hi);
        }
        buffer->offset = offset;
        total = std::max(total, offset + buffer->size);
        placed.push_back(buffer);
      }

      auto scratchType = MemRefType::get({total}, IntegerType::get(ctx, 8));
      unsigned argIndex = func.getNumArguments();
      if (failed(func.insertArgument(argIndex, scratchType,
                                     kiln::getScratchArgumentAttrs(ctx),
                                     func.getLoc())))
        return signalPassFailure();
      Value scratch = func.getArgument(argIndex);
      for (Buffer &buffer : buffers) {
        OpBuilder b(buffer.alloc);
        Value offset =
            arith::ConstantIndexOp::create(b, buffer.alloc.getLoc(), buffer.offset);
        Value view = memref::ViewOp::create(b, buffer.alloc.getLoc(),
                                            buffer.alloc.getType(), scratch,
                                            offset, ValueRange{});
        buffer.alloc.replaceAllUsesWith(view);
        buffer.alloc.erase();
      }
      // One entry per module in practice; the largest arena serves any.
      if (std::optional<int64_t> previous = kiln::getScratchSize(module))
        total = std::max<int64_t>(total, *previous);
      kiln::setScratchSize(module, total);
    }
  }
};

} // namespace
