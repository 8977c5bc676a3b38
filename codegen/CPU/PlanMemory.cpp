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

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
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

/// A buffer with `?` sizes: `unit` bytes (64-byte aligned) per unit of
/// `expr`, the product of its `?` sizes over the symbols; `offset` in units.
struct SymbolicBuffer {
  memref::AllocOp alloc;
  int64_t unit;
  AffineExpr expr;
  int64_t first, last;
  int64_t offset = -1;
};

/// Sizes as expressions over the entry's symbols (`symbols`: the
/// `memref<Nxi64>` argument kiln-bind-symbolic-dims added). Memoized: a
/// buffer's size is a `memref.dim` of the buffer before it (through views),
/// whose size is one of the buffer before that, and so on back to the
/// inputs, so without the memo each query walks every layer before it (and
/// a depth limit stopped the walk a few layers in: the buffers of a 12-layer
/// encoder's later layers kept their allocations, malloc'd and page-faulted
/// per run). Queried in program order, each walk stops at the sizes of the
/// buffers before it.
class SymbolExprs {
public:
  SymbolExprs(Value symbols, unsigned numSymbols)
      : symbols(symbols), numSymbols(numSymbols) {}

  /// `value` (an index) as an expression over the symbols, or nullopt when it
  /// is computed from anything else.
  std::optional<AffineExpr> get(Value value, unsigned depth = 0) {
    if (auto it = values.find(value); it != values.end())
      return it->second;
    if (depth > kMaxDepth)
      return std::nullopt; // not cached: a query from nearer may succeed
    std::optional<AffineExpr> e = compute(value, depth);
    if (e)
      e = simplifyAffineExpr(*e, 0, numSymbols);
    values[value] = e;
    return e;
  }

  /// Dim `index` of the buffer `memref` as an expression over the symbols:
  /// through the views that say their sizes (reinterpret_cast, expand_shape,
  /// collapse_shape, view, alloc).
  std::optional<AffineExpr> getDim(Value memref, int64_t index,
                                   unsigned depth) {
    auto key = std::make_pair(memref, index);
    if (auto it = dims.find(key); it != dims.end())
      return it->second;
    if (depth > kMaxDepth)
      return std::nullopt;
    std::optional<AffineExpr> e = computeDim(memref, index, depth);
    if (e)
      e = simplifyAffineExpr(*e, 0, numSymbols);
    dims[key] = e;
    return e;
  }

private:
  // Bounds the recursion (the C++ stack), not the walk: with the memo a
  // query in program order goes back one buffer's views and arithmetic.
  static constexpr unsigned kMaxDepth = 512;

  std::optional<AffineExpr> computeDim(Value memref, int64_t index,
                                       unsigned depth) {
    MLIRContext *ctx = memref.getContext();
    auto type = dyn_cast<MemRefType>(memref.getType());
    if (!type || index < 0 || index >= type.getRank())
      return std::nullopt;
    if (!type.isDynamicDim(index))
      return getAffineConstantExpr(type.getDimSize(index), ctx);
    auto fromFold = [&](OpFoldResult size) -> std::optional<AffineExpr> {
      if (std::optional<int64_t> c = getConstantIntValue(size))
        return getAffineConstantExpr(*c, ctx);
      return get(cast<Value>(size), depth + 1);
    };
    Operation *def = memref.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (auto cast = dyn_cast<memref::ReinterpretCastOp>(def))
      return fromFold(cast.getMixedSizes()[index]);
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(def))
      return fromFold(expand.getMixedOutputShape()[index]);
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def)) {
      AffineExpr product = getAffineConstantExpr(1, ctx);
      for (int64_t d : collapse.getReassociationIndices()[index]) {
        std::optional<AffineExpr> e = getDim(collapse.getSrc(), d, depth + 1);
        if (!e)
          return std::nullopt;
        product = product * *e;
      }
      return product;
    }
    if (isa<memref::AllocOp, memref::ViewOp>(def)) {
      unsigned dynamicIndex = type.getDynamicDimIndex(index);
      ValueRange sizes = isa<memref::AllocOp>(def)
                             ? cast<memref::AllocOp>(def).getDynamicSizes()
                             : cast<memref::ViewOp>(def).getSizes();
      return get(sizes[dynamicIndex], depth + 1);
    }
    return std::nullopt;
  }

  std::optional<AffineExpr> compute(Value value, unsigned depth) {
    MLIRContext *ctx = value.getContext();
    if (std::optional<int64_t> c = getConstantIntValue(value))
      return getAffineConstantExpr(*c, ctx);
    Operation *def = value.getDefiningOp();
    if (!def)
      return std::nullopt;
    auto operand = [&](unsigned i) { return get(def->getOperand(i), depth + 1); };
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def)) {
      auto load = def->getOperand(0).getDefiningOp<memref::LoadOp>();
      if (!load || load.getMemRef() != symbols ||
          load.getIndices().size() != 1)
        return std::nullopt;
      std::optional<int64_t> id = getConstantIntValue(load.getIndices()[0]);
      if (!id)
        return std::nullopt;
      return getAffineSymbolExpr(*id, ctx);
    }
    if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivUIOp,
            arith::DivSIOp, arith::CeilDivUIOp, arith::CeilDivSIOp>(def)) {
      std::optional<AffineExpr> lhs = operand(0), rhs = operand(1);
      if (!lhs || !rhs)
        return std::nullopt;
      if (isa<arith::AddIOp>(def))
        return *lhs + *rhs;
      if (isa<arith::SubIOp>(def))
        return *lhs - *rhs;
      if (isa<arith::MulIOp>(def))
        return *lhs * *rhs;
      auto divisor = dyn_cast<AffineConstantExpr>(*rhs);
      if (!divisor || divisor.getValue() <= 0)
        return std::nullopt;
      if (isa<arith::DivUIOp, arith::DivSIOp>(def))
        return lhs->floorDiv(divisor.getValue());
      return lhs->ceilDiv(divisor.getValue());
    }
    if (auto dim = dyn_cast<memref::DimOp>(def)) {
      std::optional<int64_t> index = getConstantIntValue(dim.getIndex());
      if (!index)
        return std::nullopt;
      return getDim(dim.getSource(), *index, depth + 1);
    }
    if (auto apply = dyn_cast<affine::AffineApplyOp>(def)) {
      AffineMap map = apply.getAffineMap();
      SmallVector<AffineExpr> dimExprs, symExprs;
      for (auto [i, v] : llvm::enumerate(apply.getMapOperands())) {
        std::optional<AffineExpr> e = operand(i);
        if (!e)
          return std::nullopt;
        (i < map.getNumDims() ? dimExprs : symExprs).push_back(*e);
      }
      return map.getResult(0).replaceDimsAndSymbols(dimExprs, symExprs);
    }
    return std::nullopt;
  }

  Value symbols;
  unsigned numSymbols;
  DenseMap<Value, std::optional<AffineExpr>> values;
  DenseMap<std::pair<Value, int64_t>, std::optional<AffineExpr>> dims;
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

  /// The buffers with `?` sizes after the `staticBytes` of the arena: one
  /// region per expression, planned first fit in its units (see the file
  /// comment); sets `kiln.dynamic_scratch_size`.
  void planSymbolic(ModuleOp module, func::FuncOp func, Value symbols,
                    unsigned numSymbols, MutableArrayRef<SymbolicBuffer> buffers,
                    Value scratch, int64_t staticBytes) {
    MLIRContext *ctx = module.getContext();
    // Regions in order of first appearance (deterministic output).
    SmallVector<AffineExpr> exprs;
    for (SymbolicBuffer &buffer : buffers)
      if (!llvm::is_contained(exprs, buffer.expr))
        exprs.push_back(buffer.expr);
    AffineExpr regionStart = getAffineConstantExpr(staticBytes, ctx);
    SmallVector<AffineExpr> starts;
    for (AffineExpr expr : exprs) {
      SmallVector<SymbolicBuffer *> order;
      for (SymbolicBuffer &buffer : buffers)
        if (buffer.expr == expr)
          order.push_back(&buffer);
      llvm::stable_sort(order, [](SymbolicBuffer *a, SymbolicBuffer *b) {
        return a->unit > b->unit;
      });
      SmallVector<SymbolicBuffer *> placed;
      int64_t units = 0;
      for (SymbolicBuffer *buffer : order) {
        SmallVector<std::pair<int64_t, int64_t>> taken;
        for (SymbolicBuffer *other : placed)
          if (other->first <= buffer->last && buffer->first <= other->last)
            taken.push_back({other->offset, other->offset + other->unit});
        llvm::sort(taken);
        int64_t offset = 0;
        for (auto [lo, hi] : taken) {
          if (offset + buffer->unit <= lo)
            break;
          offset = std::max(offset, hi);
        }
        buffer->offset = offset;
        units = std::max(units, offset + buffer->unit);
        placed.push_back(buffer);
      }
      starts.push_back(regionStart);
      regionStart = regionStart + expr * units;
    }
    AffineExpr dynamicBytes = simplifyAffineExpr(
        regionStart - staticBytes, 0, numSymbols);
    module->setAttr("kiln.dynamic_scratch_size",
                    AffineMapAttr::get(AffineMap::get(0, numSymbols,
                                                      dynamicBytes)));

    // The symbols' values, read once at the entry's start.
    OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
    Location loc = func.getLoc();
    SmallVector<Value> symbolValues;
    for (unsigned i = 0; i < numSymbols; ++i) {
      Value id = arith::ConstantIndexOp::create(b, loc, i);
      Value v = memref::LoadOp::create(b, loc, symbols, ValueRange{id});
      symbolValues.push_back(
          arith::IndexCastOp::create(b, loc, b.getIndexType(), v));
    }
    for (SymbolicBuffer &buffer : buffers) {
      unsigned region = llvm::find(exprs, buffer.expr) - exprs.begin();
      AffineExpr offset = simplifyAffineExpr(
          starts[region] + buffer.expr * buffer.offset, 0, numSymbols);
      b.setInsertionPoint(buffer.alloc);
      Location l = buffer.alloc.getLoc();
      Value at = affine::expandAffineExpr(b, l, offset, ValueRange{},
                                          symbolValues);
      Value view = memref::ViewOp::create(b, l, buffer.alloc.getType(),
                                          scratch, at,
                                          buffer.alloc.getDynamicSizes());
      buffer.alloc.replaceAllUsesWith(view);
      buffer.alloc.erase();
    }
  }

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
      // The symbols' argument (kiln-bind-symbolic-dims) of an entry with
      // symbolic dims.
      Value symbols;
      auto symbolNames = func->getAttrOfType<ArrayAttr>("kiln.symbols");
      if (symbolNames && func.getNumArguments() > 0 &&
          func.getArgument(0).getType() ==
              MemRefType::get({static_cast<int64_t>(symbolNames.size())},
                              IntegerType::get(ctx, 64)))
        symbols = func.getArgument(0);
      SmallVector<SymbolicBuffer> symbolic;
      SymbolExprs symbolExprs(symbols,
                              symbolNames ? symbolNames.size() : 0);
      for (memref::AllocOp alloc : allocs) {
        MemRefType type = alloc.getType();
        if (symbols && !type.hasStaticShape() &&
            type.getLayout().isIdentity() &&
            type.getElementType().isIntOrFloat() && !type.getMemorySpace()) {
          std::optional<AffineExpr> expr =
              getAffineConstantExpr(1, ctx);
          for (Value size : alloc.getDynamicSizes()) {
            std::optional<AffineExpr> e = symbolExprs.get(size);
            expr = e ? std::optional<AffineExpr>(*expr * *e) : std::nullopt;
            if (!expr)
              break;
          }
          SmallVector<int64_t> staticDims;
          for (int64_t d : type.getShape())
            if (!ShapedType::isDynamic(d))
              staticDims.push_back(d);
          auto unitType = MemRefType::get(staticDims, type.getElementType());
          FailureOr<int64_t> unit =
              expr ? getBufferBytes(alloc, unitType, alignment)
                   : FailureOr<int64_t>(failure());
          std::optional<std::pair<int64_t, int64_t>> range =
              expr && succeeded(unit) ? liveRange(alloc, body, index)
                                      : std::nullopt;
          if (range)
            symbolic.push_back({alloc, *unit,
                                simplifyAffineExpr(*expr, 0,
                                                   symbolNames.size()),
                                range->first, range->second});
          continue;
        }
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
      if (!symbolic.empty())
        planSymbolic(module, func, symbols, symbolNames.size(), symbolic,
                     scratch, total);
      // One entry per module in practice; the largest arena serves any.
      if (std::optional<int64_t> previous = kiln::getScratchSize(module))
        total = std::max<int64_t>(total, *previous);
      kiln::setScratchSize(module, total);
    }
  }
};

} // namespace
