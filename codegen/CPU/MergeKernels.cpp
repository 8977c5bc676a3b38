//===- MergeKernels.cpp - one body for kernels that differ only in weights ===//
//
// A transformer's layers, a ResNet stage's blocks: the same loop over
// buffers of the same shapes, once per layer, differing only in the weights
// (`memref.get_global` of another constant). kiln-outline-parallel-loops
// made each its own body function, so LLVM optimized and selected
// instructions for BERT-base's 96 MatMul kernels where 8 differ.
//
// Kernel bodies (the module's `kiln.kernels`) that are the same op for op
// (types, attributes, operands, regions; locations aside) except for the
// globals they read are merged: one private noinline function
// `<first>_merged(closure, begin, end, globals...)` takes the globals that
// differ between them as memref arguments, and each kernel body becomes a
// thunk calling it with its own globals. The kernels keep their symbols
// (the descriptor's kernel table, profiles by kernel), call sites and
// closures. Runs right after kiln-outline-parallel-loops, so every later
// pass and LLVM handle each merged body once.
//
// Cost: O(ops) hashing, then a comparison with the representative of each
// class of equal hash (in practice one).
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/ExecContextABI.h"
#include "codegen/Passes.h"
#include "dialects/Kiln/ABIAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

namespace kiln {
#define GEN_PASS_DEF_KILNMERGEKERNELSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A hash of a body that ignores locations, the values' identities and the
/// names of the globals read.
llvm::hash_code hashBody(func::FuncOp func) {
  llvm::hash_code hash = llvm::hash_value(func.getFunctionType().getAsOpaquePointer());
  func.getBody().walk([&](Operation *op) {
    if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
      hash = llvm::hash_combine(hash, op->getName().getAsOpaquePointer(),
                                global.getType().getAsOpaquePointer());
      return;
    }
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(
                  op, OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

/// Compares two bodies op for op, mapping values and blocks; `globals` gets
/// the symbols the second reads, in walk order (pre-order, as walk() visits
/// a function's ops: an op before the ops of its regions).
class BodyComparer {
public:
  bool equal(func::FuncOp a, func::FuncOp b, SmallVector<StringAttr> &globals) {
    globals_ = &globals;
    return a.getFunctionType() == b.getFunctionType() &&
           regions(a.getBody(), b.getBody());
  }

private:
  bool regions(Region &a, Region &b) {
    if (a.getBlocks().size() != b.getBlocks().size())
      return false;
    for (auto [x, y] : llvm::zip(a, b)) {
      if (x.getNumArguments() != y.getNumArguments())
        return false;
      blocks_[&x] = &y;
      for (auto [u, v] : llvm::zip(x.getArguments(), y.getArguments())) {
        if (u.getType() != v.getType())
          return false;
        values_[u] = v;
      }
    }
    for (auto [x, y] : llvm::zip(a, b)) {
      if (x.getOperations().size() != y.getOperations().size())
        return false;
      for (auto [p, q] : llvm::zip(x, y))
        if (!ops(&p, &q))
          return false;
    }
    return true;
  }

  bool ops(Operation *a, Operation *b) {
    if (a->getName() != b->getName() ||
        a->getNumOperands() != b->getNumOperands() ||
        a->getNumResults() != b->getNumResults() ||
        a->getNumRegions() != b->getNumRegions() ||
        a->getNumSuccessors() != b->getNumSuccessors())
      return false;
    for (auto [x, y] : llvm::zip(a->getResultTypes(), b->getResultTypes()))
      if (x != y)
        return false;
    if (isa<memref::GetGlobalOp>(a)) {
      // The global's name may differ (a parameter of the merged body);
      // anything else on it may not.
      if (a->getDiscardableAttrDictionary() != b->getDiscardableAttrDictionary())
        return false;
      globals_->push_back(cast<memref::GetGlobalOp>(b).getNameAttr().getAttr());
    } else if (a->getRawDictionaryAttrs() != b->getRawDictionaryAttrs() ||
               !a->getName().compareOpProperties(a->getPropertiesStorage(),
                                                 b->getPropertiesStorage())) {
      return false;
    }
    for (auto [x, y] : llvm::zip(a->getOperands(), b->getOperands())) {
      auto it = values_.find(x);
      if (it == values_.end() || it->second != y)
        return false;
    }
    for (auto [x, y] : llvm::zip(a->getSuccessors(), b->getSuccessors())) {
      auto it = blocks_.find(x);
      if (it == blocks_.end() || it->second != y)
        return false;
    }
    for (auto [x, y] : llvm::zip(a->getResults(), b->getResults()))
      values_[x] = y;
    for (auto [x, y] : llvm::zip(a->getRegions(), b->getRegions()))
      if (!regions(x, y))
        return false;
    return true;
  }

  DenseMap<Value, Value> values_;
  DenseMap<Block *, Block *> blocks_;
  SmallVector<StringAttr> *globals_ = nullptr;
};

struct MergeClass {
  func::FuncOp representative;
  SmallVector<StringAttr> representativeGlobals;
  SmallVector<std::pair<func::FuncOp, SmallVector<StringAttr>>> members;
};

struct MergeKernelsPass
    : kiln::impl::KilnMergeKernelsPassBase<MergeKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SymbolTable symbols(module);
    FunctionType bodyType = kiln::getParallelBodyType(ctx);

    // Classes of equal bodies, in the kernels' order.
    llvm::MapVector<llvm::hash_code, SmallVector<MergeClass, 1>> buckets;
    for (const kiln::KernelName &kernel : kiln::getKernelNames(module)) {
      auto func = symbols.lookup<func::FuncOp>(kernel.symbol);
      if (!func || func.isExternal() || func.isPublic() ||
          func.getFunctionType() != bodyType)
        continue;
      SmallVector<MergeClass, 1> &classes = buckets[hashBody(func)];
      bool placed = false;
      for (MergeClass &candidate : classes) {
        SmallVector<StringAttr> globals;
        if (BodyComparer().equal(candidate.representative, func, globals)) {
          candidate.members.push_back({func, std::move(globals)});
          placed = true;
          break;
        }
      }
      if (placed)
        continue;
      MergeClass &fresh = classes.emplace_back();
      fresh.representative = func;
      func.walk([&](memref::GetGlobalOp global) {
        fresh.representativeGlobals.push_back(global.getNameAttr().getAttr());
      });
    }

    for (auto &bucket : buckets)
      for (MergeClass &mergeClass : bucket.second)
        if (!mergeClass.members.empty())
          merge(mergeClass, symbols);
  }

  void merge(MergeClass &mergeClass, SymbolTable &symbols) {
    MLIRContext *ctx = &getContext();
    func::FuncOp rep = mergeClass.representative;
    // The positions (in walk order) whose global differs between members.
    SmallVector<unsigned> varying;
    for (unsigned i = 0; i < mergeClass.representativeGlobals.size(); ++i)
      if (llvm::any_of(mergeClass.members, [&](const auto &member) {
            return member.second[i] != mergeClass.representativeGlobals[i];
          }))
        varying.push_back(i);

    // The merged body: the representative's, the varying globals as
    // trailing arguments.
    auto merged = cast<func::FuncOp>(rep->clone());
    merged.setSymName((rep.getSymName() + "_merged").str());
    merged.setPrivate();
    merged->setAttr("passthrough",
                    ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
    OpBuilder mb(rep);
    mb.insert(merged);
    symbols.insert(merged);
    SmallVector<memref::GetGlobalOp> clonedGlobals;
    merged.walk([&](memref::GetGlobalOp op) { clonedGlobals.push_back(op); });
    SmallVector<Type> globalTypes;
    for (unsigned position : varying) {
      memref::GetGlobalOp op = clonedGlobals[position];
      globalTypes.push_back(op.getType());
      if (failed(merged.insertArgument(merged.getNumArguments(), op.getType(),
                                       {}, op.getLoc())))
        return signalPassFailure();
      op.getResult().replaceAllUsesWith(merged.getArguments().back());
      op.erase();
    }

    // Every member (the representative too) calls it with its globals.
    auto makeThunk = [&](func::FuncOp kernel, ArrayRef<StringAttr> globals) {
      Location loc = kernel.getLoc();
      kernel.getBody().dropAllReferences();
      kernel.getBody().getBlocks().clear();
      Block *entry = kernel.addEntryBlock();
      OpBuilder b = OpBuilder::atBlockBegin(entry);
      SmallVector<Value> args(entry->getArguments());
      for (auto [i, position] : llvm::enumerate(varying))
        args.push_back(memref::GetGlobalOp::create(
            b, loc, cast<MemRefType>(globalTypes[i]), globals[position]));
      func::CallOp::create(b, loc, merged, args);
      func::ReturnOp::create(b, loc);
    };
    makeThunk(rep, mergeClass.representativeGlobals);
    for (auto &[member, globals] : mergeClass.members)
      makeThunk(member, globals);
  }
};

} // namespace
