//===- PrepareLoops.cpp - every buffer op of the entry as a parallel op ---===//
//
// A GPU target runs every op that computes as a kernel: nothing may stay on
// the host, or it would silently run there (or not at all). After
// bufferization the entry holds linalg ops, memref.copy ops and the writes of
// the status out-parameter. This pass leaves only linalg.generic ops whose
// parallel loops are outermost (one scf.parallel each after
// convert-linalg-to-parallel-loops) and one-iteration scf.parallel loops
// around what has no parallel loop.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/Common/HostPlan.h"
#include "codegen/GPU/Passes.h"
#include "dialects/Kiln/ABIAttributes.h"
#include "dialects/ONNX/Diagnostics.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUPREPARELOOPSPASS
#include "codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Every op using `value` or a view of it.
void collectUsers(Value value, SetVector<Operation *> &users) {
  for (Operation *user : value.getUsers()) {
    if (!users.insert(user))
      continue;
    if (isa<ViewLikeOpInterface>(user))
      for (Value result : user->getResults())
        collectUsers(result, users);
  }
}

/// The one-thread kernel computing the status (see prepareStatus).
LogicalResult computeStatusOnDevice(func::FuncOp func, BlockArgument status,
                                    const SetVector<Operation *> &users) {
  Block &body = func.getBody().front();
  // The value stored: directly, or into a buffer then copied.
  Value stored;
  Operation *at = nullptr;
  SmallVector<Operation *> dead;
  for (Operation *user : users) {
    if (auto store = dyn_cast<memref::StoreOp>(user)) {
      stored = store.getValue();
      at = store;
      dead.push_back(store);
    } else if (auto copy = dyn_cast<memref::CopyOp>(user)) {
      auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
      if (!alloc)
        break;
      for (Operation *other : alloc->getUsers())
        if (auto store = dyn_cast<memref::StoreOp>(other);
            store && store.getMemRef() == alloc.getResult() && !stored)
          stored = store.getValue(), dead.push_back(store);
      dead.push_back(copy);
      dead.push_back(alloc);
      at = copy;
    }
  }
  if (!stored || !at || at->getBlock() != &body ||
      dead.size() != (isa<memref::CopyOp>(at) ? 3 : 1) || users.size() != 1)
    return func.emitError("unexpected computation of the run-time check "
                          "status");
  // What computes the status on the host (loads of the checks' results,
  // selects) moves into the kernel; memory and constants stay outside.
  SetVector<Operation *> slice;
  SmallVector<Value> worklist{stored};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != &body ||
        def->hasTrait<OpTrait::ConstantLike>() ||
        isa<ViewLikeOpInterface, memref::AllocOp, memref::GetGlobalOp>(def) ||
        !slice.insert(def))
      continue;
    llvm::append_range(worklist, def->getOperands());
  }
  for (Operation *op : slice)
    for (Operation *user : op->getUsers())
      if (!slice.contains(user) && !llvm::is_contained(dead, user))
        return user->emitError("the run-time check status is used elsewhere");
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  IRRewriter rewriter(func.getContext());
  rewriter.setInsertionPoint(at);
  Location loc = at->getLoc();
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value ok = arith::ConstantIntOp::create(rewriter, loc, stored.getType(), 0);
  auto loop = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                      ValueRange{one}, ValueRange{one});
  for (Operation *op : ordered)
    op->moveBefore(loop.getBody()->getTerminator());
  rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  Value failed = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                                       stored, ok);
  auto ifOp = scf::IfOp::create(rewriter, loc, failed, false);
  rewriter.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  memref::StoreOp::create(rewriter, loc, stored, status, ValueRange{});
  for (Operation *op : dead)
    op->erase();
  func.setArgAttr(status.getArgNumber(), kiln::getRunStatusAttrName(),
                  UnitAttr::get(func.getContext()));
  return success();
}

/// The status out-parameter (the last argument). Without run-time checks it
/// only ever gets 0: it and what writes it go. With checks, its value is
/// computed by a one-thread kernel, placed where it was stored, that stores
/// it only when a check failed (the runtime zeroes the run status before the
/// dispatches and reads it after them); the argument is marked
/// `kiln.run_status` for kiln-gpu-plan-dispatches.
LogicalResult prepareStatus(func::FuncOp func, bool hasChecks) {
  if (func.getNumArguments() == 0)
    return success();
  BlockArgument status = func.getArgument(func.getNumArguments() - 1);
  auto type = dyn_cast<MemRefType>(status.getType());
  if (!type || type.getRank() != 0 || !type.getElementType().isInteger(32))
    return func.emitError("expected the status out-parameter (memref<i32>) "
                          "as the entry's last argument");
  SetVector<Operation *> users;
  collectUsers(status, users);
  for (Operation *user : users) {
    // Only writes of the status and views of it may use it.
    if (isa<ViewLikeOpInterface>(user))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(user);
    bool reads = !effects;
    if (effects)
      for (OpOperand &operand : user->getOpOperands())
        if (users.contains(operand.get().getDefiningOp()) ||
            operand.get() == status)
          reads |= effects.getEffectOnValue<MemoryEffects::Read>(operand.get())
                       .has_value();
    if (reads)
      return user->emitError("the status out-parameter is read");
  }
  SmallVector<Value> sources;
  for (Operation *user : users)
    if (auto copy = dyn_cast<memref::CopyOp>(user))
      sources.push_back(copy.getSource());
  if (hasChecks)
    return computeStatusOnDevice(func, status, users);
  for (Operation *user : llvm::reverse(users))
    user->erase();
  if (failed(func.eraseArgument(status.getArgNumber())))
    return failure();
  // The buffer the status was copied from is now only written: drop it too
  // (else its write would become a kernel of its own).
  for (Value source : sources) {
    auto alloc = source.getDefiningOp<memref::AllocOp>();
    if (!alloc || !llvm::all_of(alloc->getUsers(), [&](Operation *user) {
          auto store = dyn_cast<memref::StoreOp>(user);
          return (store && store.getMemRef() == alloc.getResult()) ||
                 isa<memref::DeallocOp>(user);
        }))
      continue;
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      user->erase();
    alloc.erase();
  }
  return success();
}

/// An output computed into its own buffer and then copied into the output
/// argument is computed in the argument directly: one kernel and one
/// transient buffer less. Only when the copy is the buffer's last use and
/// the argument has no other use.
void computeOutputsInPlace(func::FuncOp func) {
  Block &body = func.getBody().front();
  for (auto copy : llvm::make_early_inc_range(body.getOps<memref::CopyOp>())) {
    auto target = dyn_cast<BlockArgument>(copy.getTarget());
    auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
    if (!target || target.getOwner() != &body || !alloc ||
        alloc->getBlock() != &body || alloc.getType() != target.getType() ||
        !target.hasOneUse())
      continue;
    SetVector<Operation *> users;
    collectUsers(alloc.getResult(), users);
    bool lastUse = llvm::all_of(users, [&](Operation *user) {
      Operation *top = body.findAncestorOpInBlock(*user);
      return top && (top == copy || top->isBeforeInBlock(copy));
    });
    if (!lastUse)
      continue;
    copy.erase();
    alloc.replaceAllUsesWith(Value(target));
    alloc.erase();
  }
}

/// Whether `value` is memory no op of `func` writes: a constant global, or an
/// argument only read (a graph input).
bool isReadOnlyMemory(Value value) {
  if (value.getDefiningOp<memref::GetGlobalOp>())
    return true; // kiln's globals are constants (the plan checks it)
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg)
    return false;
  SetVector<Operation *> users;
  collectUsers(arg, users);
  auto aliases = [&](Value v) {
    return v == arg || users.contains(v.getDefiningOp());
  };
  return llvm::all_of(users, [&](Operation *user) {
    if (isa<ViewLikeOpInterface, memref::LoadOp>(user))
      return true;
    if (auto copy = dyn_cast<memref::CopyOp>(user))
      return !aliases(copy.getTarget());
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user))
      return llvm::none_of(linalgOp.getDpsInits(), aliases);
    return false;
  });
}

/// Scalars computed on the host from read-only memory (a tensor.extract of a
/// graph input feeding a linalg body: Trilu's k) move into the regions that
/// use them, where the kernel computes them: only kernels run.
void sinkHostScalars(func::FuncOp func) {
  Block &body = func.getBody().front();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body))) {
    if (op.getNumResults() == 0 || op.getNumRegions() ||
        op.hasTrait<OpTrait::ConstantLike>() ||
        llvm::any_of(op.getResultTypes(),
                     [](Type type) { return isa<BaseMemRefType>(type); }))
      continue;
    auto load = dyn_cast<memref::LoadOp>(op);
    if (!(load && isReadOnlyMemory(load.getMemRef())) &&
        !isMemoryEffectFree(&op))
      continue;
    // Every use must be inside a region (none at the top level).
    bool nested = llvm::all_of(op.getUsers(), [&](Operation *user) {
      return user->getBlock() != &body;
    });
    if (!nested || op.use_empty())
      continue;
    for (OpOperand &use : llvm::make_early_inc_range(op.getUses())) {
      OpBuilder b(use.getOwner());
      Operation *clone = b.clone(op);
      use.set(clone->getResult(cast<OpResult>(use.get()).getResultNumber()));
    }
    op.erase();
  }
}

/// A 1-d identity view of the 0-d memref `value` whose layout has a non-zero
/// offset (an element of a bigger buffer: OneHot's on-value), and that
/// offset; else null. SPIR-V's lowering drops the offset of a 0-d memref, so
/// kernels address such an element through this view at that index.
std::pair<Value, int64_t> viewZeroDimElement(OpBuilder &b, Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  int64_t offset;
  SmallVector<int64_t> strides;
  if (!type || type.getRank() != 0 ||
      failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || offset == 0)
    return {Value(), 0};
  auto flat = MemRefType::get({offset + 1}, type.getElementType());
  Value view = memref::ReinterpretCastOp::create(
      b, value.getLoc(), flat, value, /*offset=*/0,
      /*sizes=*/ArrayRef<int64_t>{offset + 1},
      /*strides=*/ArrayRef<int64_t>{1});
  return {view, offset};
}

/// Rewrites every linalg operand and load of a 0-d memref with an offset to
/// use viewZeroDimElement's view.
void addressZeroDimElements(func::FuncOp func) {
  OpBuilder b(func.getContext());
  func.walk([&](linalg::GenericOp generic) {
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    bool changed = false;
    for (OpOperand &operand : generic->getOpOperands()) {
      b.setInsertionPoint(generic);
      auto [view, offset] = viewZeroDimElement(b, operand.get());
      if (!view)
        continue;
      operand.set(view);
      maps[operand.getOperandNumber()] = AffineMap::get(
          generic.getNumLoops(), 0, b.getAffineConstantExpr(offset));
      changed = true;
    }
    if (changed)
      generic.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
  });
  func.walk([&](memref::LoadOp load) {
    b.setInsertionPoint(load);
    auto [view, offset] = viewZeroDimElement(b, load.getMemRef());
    if (!view)
      return;
    Value index = arith::ConstantIndexOp::create(b, load.getLoc(), offset);
    load->setOperands(ValueRange{view, index});
  });
}

/// Whether `op` is a view, constant or other op that only names memory.
bool isHostOnly(Operation &op) {
  return isa<ViewLikeOpInterface, memref::AllocOp, memref::DeallocOp,
             memref::GetGlobalOp, func::ReturnOp>(op) ||
         op.hasTrait<OpTrait::ConstantLike>() || isMemoryEffectFree(&op);
}

/// An op computing scalars on the host whose results are only stored (a
/// scatter's loop returning its in-range flag) runs with those stores in one
/// single-thread kernel, placed at the last store: only ops that touch no
/// memory lie between.
void wrapStoredScalarProducers(func::FuncOp func) {
  Block &body = func.getBody().front();
  SmallVector<std::pair<Operation *, SmallVector<Operation *>>> groups;
  for (Operation &op : body) {
    if (!op.getNumResults() || isHostOnly(op) || isa<scf::ParallelOp>(op))
      continue;
    SmallVector<Operation *> stores;
    bool ok = !op.use_empty();
    for (Operation *user : op.getUsers()) {
      auto store = dyn_cast<memref::StoreOp>(user);
      ok &= store && store->getBlock() == &body && op.isBeforeInBlock(store) &&
            llvm::is_contained(op.getResults(), store.getValueToStore()) &&
            !llvm::is_contained(op.getResults(), store.getMemRef());
      if (ok && !llvm::is_contained(stores, user))
        stores.push_back(user);
    }
    if (!ok)
      continue;
    llvm::sort(stores, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    for (Operation *it = op.getNextNode(); ok && it != stores.back();
         it = it->getNextNode())
      ok = llvm::is_contained(stores, it) ||
           (isHostOnly(*it) && !isa<func::ReturnOp>(it));
    if (ok)
      groups.push_back({&op, stores});
  }
  for (auto &[op, stores] : groups) {
    OpBuilder b(stores.back());
    Location loc = op->getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                        ValueRange{one}, ValueRange{one});
    op->moveBefore(loop.getBody()->getTerminator());
    for (Operation *store : stores)
      store->moveBefore(loop.getBody()->getTerminator());
  }
}

/// Wraps `op` in a one-iteration scf.parallel (one thread runs it).
void wrapInSingleThread(RewriterBase &rewriter, Operation *op) {
  rewriter.setInsertionPoint(op);
  Location loc = op->getLoc();
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto loop = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                      ValueRange{one}, ValueRange{one});
  op->moveBefore(loop.getBody()->getTerminator());
}

struct PrepareLoopsPass
    : kiln::impl::KilnGPUPrepareLoopsPassBase<PrepareLoopsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      if (failed(prepareStatus(
              func, !kiln::getCheckMessages(getOperation()).empty())))
        return signalPassFailure();
      computeOutputsInPlace(func);
      sinkHostScalars(func);
      if (failed(prepare(func)))
        return signalPassFailure();
      addressZeroDimElements(func);
    }
  }

  LogicalResult prepare(func::FuncOp func) {
    IRRewriter rewriter(&getContext());
    Block &body = func.getBody().front();
    wrapStoredScalarProducers(func);
    // Copies nested in host loops (a scan's insert_slice) run in their
    // kernel as loops too.
    SmallVector<memref::CopyOp> nested;
    func.walk([&](memref::CopyOp copy) {
      if (copy->getBlock() != &body)
        nested.push_back(copy);
    });
    for (memref::CopyOp copy : nested) {
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      rewriter.eraseOp(copy);
    }
    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        rewriter.setInsertionPoint(copy);
        auto linalgCopy = linalg::CopyOp::create(
            rewriter, copy.getLoc(), copy.getSource(), copy.getTarget());
        rewriter.eraseOp(copy);
        if (failed(prepareLinalg(rewriter, linalgCopy)))
          return failure();
        continue;
      }
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        if (failed(prepareLinalg(rewriter, linalgOp)))
          return failure();
        continue;
      }
      // An op with results stays: its users would not see them from inside
      // a kernel (kiln-gpu-plan-dispatches rejects it if it is left).
      if (isa<scf::ParallelOp>(op) || isHostOnly(op) || op.getNumResults())
        continue;
      wrapInSingleThread(rewriter, &op);
    }
    return success();
  }

  LogicalResult prepareLinalg(IRRewriter &rewriter, linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics())
      return kiln::onnx::emitNodeError(op)
             << "'" << op->getName() << "' is not on buffers after "
             << "bufferization";
    rewriter.setInsertionPoint(op);
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return kiln::onnx::emitNodeError(op)
               << "'" << op->getName() << "' cannot be generalized";
      generic = *generalized;
    }
    SmallVector<unsigned> order;
    for (auto [index, type] : llvm::enumerate(generic.getIteratorTypesArray()))
      if (type == utils::IteratorType::parallel)
        order.push_back(index);
    bool hasParallel = !order.empty();
    for (auto [index, type] : llvm::enumerate(generic.getIteratorTypesArray()))
      if (type != utils::IteratorType::parallel)
        order.push_back(index);
    if (!llvm::equal(order, llvm::seq<unsigned>(0, order.size()))) {
      FailureOr<linalg::GenericOp> interchanged =
          linalg::interchangeGenericOp(rewriter, generic, order);
      if (failed(interchanged))
        return kiln::onnx::emitNodeError(generic)
               << "cannot move the parallel loops outermost";
      generic = *interchanged;
    }
    if (!hasParallel)
      wrapInSingleThread(rewriter, generic);
    return success();
  }
};

} // namespace
