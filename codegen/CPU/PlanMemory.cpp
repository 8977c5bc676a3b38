//===- PlanMemory.cpp - intermediate buffers in one scratch arena ---------===//
//
// Every statically shaped `memref.alloc` at the top level of the entry
// function becomes a `memref.view` into one scratch buffer, a new last
// argument of the entry (`memref<Sxi8>`, attribute `kiln.scratch`). Offsets are
// planned at compile time: a buffer lives from the first to the last top-level
// op using it (or a view of it); buffers whose lives do not overlap share
// bytes (greedy first fit, largest first, 64-byte aligned: the
// `alignment` option). The arena's size
// becomes the module attribute `kiln.scratch_size`; the runtime allocates it
// once when a model is opened, so a run allocates nothing.
// A buffer that may escape (returned, yielded from a region, passed to a call)
// keeps its allocation.
// A buffer allocated inside a Loop / Scan body or an If branch (scf.for,
// scf.while, scf.if, nested in any way) is planned too: it lives for the whole
// top-level op around it, so no buffer live across iterations shares its bytes,
// and each iteration reuses the same bytes (it never outlives its iteration: a
// yielded buffer escapes). Not inside an scf.parallel, whose iterations run at
// once on several threads.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "dialects/Kiln/ABIAttributes.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/Limits.h"

#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {
#define GEN_PASS_DEF_KILNPLANMEMORYPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

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
    first = last = index.lookup(body.findAncestorOpInBlock(*alloc));
  return std::make_pair(first, last);
}

/// Emits an error on `op` naming the ONNX node it comes from (when its location
/// has one): `node 'NAME': <message>`.
InFlightDiagnostic emitBufferError(Operation *op) {
  InFlightDiagnostic diag = op->emitError();
  if (std::optional<std::string> name = kiln::onnx::getNodeName(op))
    diag << "node '" << *name << "': ";
  return diag;
}

/// The bytes of a buffer of `type` rounded up to `alignment`, or an error when
/// they are over the bytes-per-buffer limit (computed without wrapping: shapes
/// can come from a hostile model).
FailureOr<int64_t> getBufferBytes(Operation *op, MemRefType type,
                                  int64_t alignment) {
  int64_t maxBytes = kiln::getCompileLimits().maxTensorBytes;
  std::optional<int64_t> extent = kiln::getCheckedExtent(type.getShape());
  std::optional<int64_t> bytes;
  if (extent)
    bytes = kiln::getCheckedBytes(llvm::is_contained(type.getShape(), 0) ? 0 : *extent,
                                  type.getElementTypeBitWidth());
  if (!bytes || *bytes > maxBytes - alignment) {
    emitBufferError(op) << "a buffer of type " << type
                        << " is over kiln's limit of " << maxBytes
                        << " bytes per buffer (--max-tensor-bytes)";
    return failure();
  }
  return std::max<int64_t>(alignment,
                           (*bytes + alignment - 1) / alignment * alignment);
}

struct PlanMemoryPass : kiln::impl::KilnPlanMemoryPassBase<PlanMemoryPass> {
  using Base::Base;

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
      bool tooLarge = false;
      // Top-level allocations, and those nested only in sequential control flow.
      SmallVector<memref::AllocOp> allocs;
      func.walk([&](memref::AllocOp alloc) {
        for (Operation *parent = alloc->getParentOp(); parent != func;
             parent = parent->getParentOp())
          if (!isa<scf::ForOp, scf::WhileOp, scf::IfOp>(parent))
            return;
        allocs.push_back(alloc);
      });
      for (memref::AllocOp alloc : allocs) {
        MemRefType type = alloc.getType();
        if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
            !type.getElementType().isIntOrIndexOrFloat() ||
            type.getElementType().isIndex() || type.getMemorySpace())
          continue;
        FailureOr<int64_t> size = getBufferBytes(alloc, type, alignment);
        if (failed(size)) {
          tooLarge = true;
          continue;
        }
        std::optional<std::pair<int64_t, int64_t>> range =
            liveRange(alloc, body, index);
        if (!range)
          continue;
        // Each element takes whole bytes in memory (an i1 is stored as one
        // byte by the LLVM lowering, not packed): getBufferBytes.
        buffers.push_back({alloc, *size, range->first, range->second});
      }
      if (tooLarge)
        return signalPassFailure();

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
        // Offsets and sizes are below the limit each; their sum is checked.
        std::optional<int64_t> end = kiln::checkedAdd(offset, buffer->size);
        if (!end || *end > kiln::getCompileLimits().maxTensorBytes) {
          emitBufferError(buffer->alloc)
              << "the scratch arena would be over kiln's limit of "
              << kiln::getCompileLimits().maxTensorBytes
              << " bytes per buffer (--max-tensor-bytes)";
          return signalPassFailure();
        }
        total = std::max(total, *end);
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
