//===- OutlineSerialCode.cpp - bound the size of every function ------------===//
//
// Loop nests too small for the thread pool stay in the function that runs
// them: in a model of many small kernels the entry grows with the graph,
// and LLVM's passes over one function (ScalarEvolution's loop guards,
// dominator tree updates, instruction selection) and SCFToControlFlow's
// block splitting are quadratic in its loops. A function with more than
// `max-ops` ops has its top-level ops cut, in order, into runs of about
// `max-ops` ops; each run that holds a loop moves into a private noinline
// function `void f_serial_N(closure)` called where it was, with the values
// it uses from above in a stack closure (Closure.h).
//
// A full run ends before the next op with regions (a loop: between kernels,
// so what flows from one run to the next is buffers, not a kernel's vector
// registers). An op whose results are used after its run stays in the
// function (the run is cut there; a pure op of values from before the run,
// with results a closure can pass, stays in place without cutting it, as
// the run's call comes after it); constants and globals are cloned.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Closure.h"
#include "codegen/Passes.h"

#include "mlir/Conversion/LLVMCommon/LoweringOptions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_KILNOUTLINESERIALCODEPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

int64_t countOps(Operation *op) {
  int64_t n = 0;
  op->walk([&](Operation *) { ++n; });
  return n;
}

struct OutlineSerialCodePass
    : kiln::impl::KilnOutlineSerialCodePassBase<OutlineSerialCodePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    LowerToLLVMOptions options(ctx, DataLayout(module));
    LLVMTypeConverter converter(ctx, options);
    SymbolTable symbols(module);
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      unsigned counter = 0;
      // Each top-level loop of an entry its own function, for
      // kiln-merge-serial-loops to share between equal ones.
      if (loops && func.isPublic() &&
          failed(outlineLoops(func, converter, symbols, counter)))
        return signalPassFailure();
      if (countOps(func) <= maxOps)
        continue;
      if (failed(cutFunction(func, converter, symbols, counter)))
        return signalPassFailure();
    }
  }

  /// Outlines every top-level `scf.for` of `func` without results into a
  /// function of its own, marked `kiln.serial_loop`.
  LogicalResult outlineLoops(func::FuncOp func, LLVMTypeConverter &converter,
                             SymbolTable &symbols, unsigned &counter) {
    SmallVector<scf::ForOp> forOps(func.getBody().front().getOps<scf::ForOp>());
    for (scf::ForOp loop : forOps) {
      if (loop->getNumResults())
        continue;
      Operation *op = loop;
      if (failed(outlinePart(func, ArrayRef<Operation *>(op), converter,
                             symbols, counter, /*mark=*/true)))
        return failure();
    }
    return success();
  }

  /// Cuts `func`'s block into runs of about maxOps ops and outlines them.
  LogicalResult cutFunction(func::FuncOp func, LLVMTypeConverter &converter,
                            SymbolTable &symbols, unsigned &counter) {
    Block &block = func.getBody().front();
    SmallVector<Operation *> run;
    llvm::SmallPtrSet<Operation *, 32> inRun;
    int64_t size = 0;
    auto flush = [&]() -> LogicalResult {
      LogicalResult result = outlineRun(func, run, inRun, converter, symbols,
                                        counter);
      run.clear();
      inRun.clear();
      size = 0;
      return result;
    };
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (op.hasTrait<OpTrait::IsTerminator>())
        break;
      // Pure ops of values from before the run stay where they are: the
      // run's call comes after them.
      bool fromBefore = llvm::none_of(op.getOperands(), [&](Value v) {
        return inRun.contains(v.getDefiningOp());
      });
      // (Only values a closure can pass: a vector stays with its users.)
      bool passable = llvm::all_of(op.getResultTypes(), [](Type t) {
        return isa<MemRefType, IndexType, IntegerType, FloatType,
                   LLVM::LLVMPointerType>(t);
      });
      if (op.getNumRegions() == 0 && isMemoryEffectFree(&op) && fromBefore &&
          passable)
        continue;
      // A full run ends before a loop: between kernels, where what flows
      // from one run to the next is buffers, not a kernel's registers.
      if (size >= maxOps && op.getNumRegions() && failed(flush()))
        return failure();
      run.push_back(&op);
      inRun.insert(&op);
      size += countOps(&op);
    }
    return flush();
  }

  /// Outlines `run` (ops of one block, in order) as runs of consecutive ops
  /// whose results are not used outside them.
  LogicalResult outlineRun(func::FuncOp func, ArrayRef<Operation *> run,
                           const llvm::SmallPtrSetImpl<Operation *> &inRun,
                           LLVMTypeConverter &converter, SymbolTable &symbols,
                           unsigned &counter) {
    // An op stays when a result is used after the run, by an op that stays
    // or by an op of another part (parts are split at the ops that stay):
    // until nothing changes.
    llvm::SmallPtrSet<Operation *, 16> stays;
    llvm::DenseMap<Operation *, unsigned> partOf;
    for (bool changed = true; changed;) {
      changed = false;
      unsigned index = 0;
      for (Operation *op : run) {
        if (stays.contains(op))
          ++index;
        partOf[op] = index;
      }
      for (Operation *op : llvm::reverse(run)) {
        if (stays.contains(op))
          continue;
        if (llvm::any_of(op->getUsers(), [&](Operation *user) {
              Operation *top = op->getBlock()->findAncestorOpInBlock(*user);
              return !top || !inRun.contains(top) || stays.contains(top) ||
                     partOf[top] != partOf[op];
            })) {
          stays.insert(op);
          changed = true;
        }
      }
    }
    SmallVector<Operation *> part;
    for (Operation *op : run) {
      if (stays.contains(op)) {
        if (failed(outlinePart(func, part, converter, symbols, counter)))
          return failure();
        part.clear();
        continue;
      }
      part.push_back(op);
    }
    return outlinePart(func, part, converter, symbols, counter);
  }

  LogicalResult outlinePart(func::FuncOp func, ArrayRef<Operation *> part,
                            LLVMTypeConverter &converter, SymbolTable &symbols,
                            unsigned &counter, bool mark = false) {
    // Only code with loops is worth a call.
    if (llvm::none_of(part, [](Operation *op) { return op->getNumRegions(); }))
      return success();
    llvm::SmallPtrSet<Operation *, 32> inPart(part.begin(), part.end());
    Region *top = &func.getBody();
    llvm::SetVector<Value> captured;
    llvm::SetVector<Operation *> cloned;
    for (Operation *op : part)
      op->walk([&](Operation *nested) {
        for (Value v : nested->getOperands()) {
          if (v.getParentRegion() != top)
            continue; // defined inside the part
          Operation *def = v.getDefiningOp();
          if (def && inPart.contains(def))
            continue;
          if (kiln::isRematerializable(def))
            cloned.insert(def);
          else
            captured.insert(v);
        }
      });
    std::optional<kiln::Closure> closure =
        kiln::Closure::get(captured.getArrayRef(), converter);
    if (!closure)
      return success(); // a value no closure holds: left in place

    MLIRContext *ctx = &getContext();
    Location loc = part.front()->getLoc();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    OpBuilder mb(func);
    auto callee = func::FuncOp::create(
        mb, func.getLoc(),
        (func.getSymName() + "_serial_" + Twine(counter++)).str(),
        FunctionType::get(ctx, {ptrType}, {}));
    callee.setPrivate();
    // Called once: LLVM would inline it back.
    callee->setAttr("passthrough",
                    ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
    if (mark)
      callee->setAttr("kiln.serial_loop", UnitAttr::get(ctx));
    symbols.insert(callee);
    Block *entry = callee.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    IRMapping mapping;
    for (Operation *op : cloned)
      b.clone(*op, mapping);
    closure->unpack(b, loc, entry->getArgument(0), mapping);
    auto ret = func::ReturnOp::create(b, loc);

    // The call, where the part's last op was.
    OpBuilder cb(part.back()->getBlock(), ++Block::iterator(part.back()));
    Value slot = closure->pack(cb, loc);
    func::CallOp::create(cb, loc, callee, ValueRange{slot});
    for (Operation *op : part)
      op->moveBefore(ret);
    for (auto [from, to] : mapping.getValueMap())
      from.replaceUsesWithIf(to, [&](OpOperand &use) {
        return callee->isProperAncestor(use.getOwner());
      });
    return success();
  }
};

} // namespace
