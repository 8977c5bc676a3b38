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
// kiln-merge-serial-loops (below) does the same at the end of the pipeline,
// on the LLVM dialect, for the serial loops kiln-outline-serial-code gave a
// function each (`kiln.serial_loop`) and, with `kernels`, the kernel bodies:
// there a memref's shape, strides and offset are integer constants, which
// may differ (DenseNet's layers write concatenations of growing width). A
// GEP's constant element offset becomes a constant operand first (LLVM folds
// it back). The differing constants (at most 16) become trailing arguments
// of one `<first>_shared` copy; directly called functions go (their calls
// pass their constants), kernels stay as thunks.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/ExecContextABI.h"
#include "codegen/Passes.h"
#include "dialects/Kiln/ABIAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

namespace kiln {
#define GEN_PASS_DEF_KILNMERGEKERNELSPASS
#define GEN_PASS_DEF_KILNMERGESERIALLOOPSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A hash of a function's body that ignores locations, the values'
/// identities and the attribute `param` picks (a global's name, a constant's
/// value): the bodies BodyComparer may find equal hash alike.
template <typename FuncT>
llvm::hash_code hashBody(FuncT func, Attribute (*param)(Operation *)) {
  llvm::hash_code hash = llvm::hash_value(func.getFunctionType().getAsOpaquePointer());
  func.getBody().walk([&](Operation *op) {
    if (param(op)) {
      hash = llvm::hash_combine(hash, op->getName().getAsOpaquePointer(),
                                op->getResult(0).getType().getAsOpaquePointer());
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

/// Compares two bodies op for op, mapping values and blocks. An op that
/// `param` gives an attribute for (a global's name, a constant's value) may
/// differ in that attribute, nothing else; `params` gets the second body's
/// attributes of those ops in walk order (pre-order, as walk() visits a
/// function's ops: an op before the ops of its regions).
class BodyComparer {
public:
  using ParamFn = llvm::function_ref<Attribute(Operation *)>;
  explicit BodyComparer(ParamFn param) : param_(param) {}

  bool equal(FunctionOpInterface a, FunctionOpInterface b,
             SmallVector<Attribute> &params) {
    params_ = &params;
    return a.getFunctionType() == b.getFunctionType() &&
           regions(a.getFunctionBody(), b.getFunctionBody());
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
    if (Attribute pa = param_(a)) {
      // The parameter may differ (an argument of the merged body); anything
      // else on the op may not.
      Attribute pb = param_(b);
      if (!pb ||
          a->getDiscardableAttrDictionary() != b->getDiscardableAttrDictionary())
        return false;
      params_->push_back(pb);
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

  ParamFn param_;
  DenseMap<Value, Value> values_;
  DenseMap<Block *, Block *> blocks_;
  SmallVector<Attribute> *params_ = nullptr;
};

/// A global read's name: what may differ between merged kernels.
Attribute globalParam(Operation *op) {
  if (auto global = dyn_cast<memref::GetGlobalOp>(op))
    return global.getNameAttr().getAttr();
  return {};
}

/// Functions whose bodies are equal but for the attributes `ParamFn` picks
/// (the merged body takes them as arguments): the first one met and the
/// others, each with its own values of those attributes in walk order.
template <typename FuncT> struct EqualBodies {
  FuncT representative;
  SmallVector<Attribute> representativeParams;
  SmallVector<std::pair<FuncT, SmallVector<Attribute>>> members;
};

/// Puts `func` into the first class of `classes` (one hash bucket) whose
/// representative it equals, comparing with `param`, or opens a new class.
template <typename FuncT>
void addToClasses(SmallVector<EqualBodies<FuncT>, 1> &classes, FuncT func,
                  Attribute (*param)(Operation *)) {
  for (EqualBodies<FuncT> &candidate : classes) {
    SmallVector<Attribute> params;
    if (BodyComparer(param).equal(candidate.representative, func, params)) {
      candidate.members.push_back({func, std::move(params)});
      return;
    }
  }
  EqualBodies<FuncT> &fresh = classes.emplace_back();
  fresh.representative = func;
  func.walk([&](Operation *op) {
    if (Attribute value = param(op))
      fresh.representativeParams.push_back(value);
  });
}

using MergeClass = EqualBodies<func::FuncOp>;

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
      addToClasses(buckets[hashBody(func, globalParam)], func, globalParam);
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
    for (unsigned i = 0; i < mergeClass.representativeParams.size(); ++i)
      if (llvm::any_of(mergeClass.members, [&](const auto &member) {
            return member.second[i] != mergeClass.representativeParams[i];
          }))
        varying.push_back(i);

    // The merged body: the representative's, the varying globals as
    // trailing arguments.
    auto merged = cast<func::FuncOp>(rep->clone());
    merged.setSymName((rep.getSymName() + "_merged").str());
    merged.setPrivate();
    merged->setAttr("passthrough",
                    ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
    // kiln-merge-serial-loops may merge it further (its shapes as
    // arguments).
    merged->setAttr("kiln.serial_loop", UnitAttr::get(ctx));
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
    auto makeThunk = [&](func::FuncOp kernel, ArrayRef<Attribute> globals) {
      Location loc = kernel.getLoc();
      kernel.getBody().dropAllReferences();
      kernel.getBody().getBlocks().clear();
      Block *entry = kernel.addEntryBlock();
      OpBuilder b = OpBuilder::atBlockBegin(entry);
      SmallVector<Value> args(entry->getArguments());
      for (auto [i, position] : llvm::enumerate(varying))
        args.push_back(memref::GetGlobalOp::create(
            b, loc, cast<MemRefType>(globalTypes[i]),
            cast<StringAttr>(globals[position])));
      func::CallOp::create(b, loc, merged, args);
      func::ReturnOp::create(b, loc);
    };
    makeThunk(rep, mergeClass.representativeParams);
    for (auto &[member, globals] : mergeClass.members)
      makeThunk(member, globals);
  }
};


/// An integer constant that may become an argument of a merged serial loop:
/// every user takes a run-time value there as well (not an alloca's size,
/// a vector element's index, or an intrinsic's operand other than a memory
/// copy's or fill's length and value).
Attribute constantParam(Operation *op) {
  auto constant = dyn_cast<LLVM::ConstantOp>(op);
  if (!constant || !isa<IntegerType>(constant.getType()))
    return {};
  auto value = dyn_cast<IntegerAttr>(constant.getValue());
  if (!value)
    return {};
  for (Operation *user : op->getUsers()) {
    if (isa<LLVM::AllocaOp, LLVM::ExtractElementOp, LLVM::InsertElementOp>(
            user))
      return {};
    if (user->getName().getStringRef().starts_with("llvm.intr.") &&
        !isa<LLVM::MemcpyOp, LLVM::MemmoveOp, LLVM::MemsetOp>(user))
      return {};
  }
  return value;
}

/// Most arguments a merged serial loop takes for the constants that differ
/// between its members; a class needing more is left alone.
constexpr unsigned kMaxSerialParams = 16;

using SerialClass = EqualBodies<LLVM::LLVMFuncOp>;

struct MergeSerialLoopsPass
    : kiln::impl::KilnMergeSerialLoopsPassBase<MergeSerialLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The calls of every function, and the functions whose address is taken
    // (left alone: only direct calls are rewritten).
    module.walk([&](Operation *op) {
      if (auto call = dyn_cast<LLVM::CallOp>(op)) {
        if (auto callee = call.getCalleeAttr())
          calls[callee.getAttr()].push_back(call);
      } else if (auto address = dyn_cast<LLVM::AddressOfOp>(op)) {
        addressTaken.insert(address.getGlobalNameAttr().getAttr());
      }
    });

    // The kernels' bodies (called through the thread pool, so they stay,
    // as thunks) and the functions marked kiln.serial_loop.
    if (mergeKernels)
      for (const kiln::KernelName &kernel : kiln::getKernelNames(module))
        kernels.insert(StringAttr::get(&getContext(), kernel.symbol));
    llvm::MapVector<llvm::hash_code, SmallVector<SerialClass, 1>> buckets;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      if (func.isExternal() || func.isVarArg() ||
          !(func->hasAttr("kiln.serial_loop") ||
            kernels.contains(func.getSymNameAttr())))
        continue;
      dynamicGEPOffsets(func);
      addToClasses(buckets[hashBody(func, constantParam)], func, constantParam);
    }

    for (auto &bucket : buckets)
      for (SerialClass &serialClass : bucket.second)
        if (!serialClass.members.empty() &&
            failed(merge(serialClass)))
          return signalPassFailure();
  }

  llvm::DenseMap<StringAttr, SmallVector<LLVM::CallOp, 1>> calls;
  llvm::DenseSet<StringAttr> addressTaken;
  llvm::DenseSet<StringAttr> kernels;

  /// A pointer plus a constant element offset (`getelementptr %p[256]`, a
  /// static memref offset) with the offset as a constant operand, which may
  /// then differ between merged functions. LLVM folds it back.
  static void dynamicGEPOffsets(LLVM::LLVMFuncOp func) {
    SmallVector<LLVM::GEPOp> geps;
    func.walk([&](LLVM::GEPOp gep) {
      if (gep.getRawConstantIndices().size() == 1 &&
          gep.getRawConstantIndices()[0] != LLVM::GEPOp::kDynamicIndex &&
          !isa<LLVM::LLVMStructType>(gep.getElemType()))
        geps.push_back(gep);
    });
    for (LLVM::GEPOp gep : geps) {
      OpBuilder b(gep);
      Value offset = LLVM::ConstantOp::create(
          b, gep.getLoc(), b.getI64Type(),
          b.getI64IntegerAttr(gep.getRawConstantIndices()[0]));
      auto dynamic = LLVM::GEPOp::create(
          b, gep.getLoc(), gep.getType(), gep.getElemType(), gep.getBase(),
          ValueRange{offset}, gep.getNoWrapFlags());
      gep.replaceAllUsesWith(dynamic.getResult());
      gep.erase();
    }
  }

  LogicalResult merge(SerialClass &serialClass) {
    LLVM::LLVMFuncOp rep = serialClass.representative;
    ArrayRef<Attribute> repParams = serialClass.representativeParams;
    // The positions (in walk order) whose constant differs between members.
    SmallVector<unsigned> varying;
    for (unsigned i = 0; i < repParams.size(); ++i)
      if (llvm::any_of(serialClass.members, [&](const auto &member) {
            return member.second[i] != repParams[i];
          }))
        varying.push_back(i);
    if (varying.size() > kMaxSerialParams)
      return success();

    // The shared body: a copy of the representative taking the varying
    // constants as trailing arguments.
    OpBuilder mb(rep);
    auto shared = cast<LLVM::LLVMFuncOp>(mb.clone(*rep.getOperation()));
    shared.setSymName((rep.getSymName() + "_shared").str());
    shared.setLinkage(LLVM::Linkage::Private);
    MLIRContext *ctx = &getContext();
    shared->setAttr("passthrough",
                    ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
    shared->removeAttr("kiln.serial_loop");
    SmallVector<Operation *> paramOps;
    shared.walk([&](Operation *op) {
      if (constantParam(op))
        paramOps.push_back(op);
    });
    SmallVector<Type> paramTypes;
    for (unsigned position : varying) {
      Operation *op = paramOps[position];
      paramTypes.push_back(op->getResult(0).getType());
      BlockArgument arg =
          shared.getBody().front().addArgument(paramTypes.back(), op->getLoc());
      op->getResult(0).replaceAllUsesWith(arg);
      op->erase();
    }
    LLVM::LLVMFunctionType type = shared.getFunctionType();
    SmallVector<Type> inputs(type.getParams());
    inputs.append(paramTypes);
    shared.setFunctionType(LLVM::LLVMFunctionType::get(
        type.getReturnType(), inputs, type.isVarArg()));
    if (ArrayAttr argAttrs = shared.getArgAttrsAttr()) {
      SmallVector<Attribute> attrs(argAttrs.getValue());
      attrs.append(paramTypes.size(), DictionaryAttr::get(ctx));
      shared.setArgAttrsAttr(ArrayAttr::get(ctx, attrs));
    }

    auto constants = [&](OpBuilder &b, Location loc,
                         ArrayRef<Attribute> params, SmallVector<Value> &args) {
      for (auto [i, position] : llvm::enumerate(varying))
        args.push_back(LLVM::ConstantOp::create(
            b, loc, paramTypes[i], cast<TypedAttr>(params[position])));
    };
    // A function called only directly: its calls pass its constants to the
    // shared body, and it goes. Otherwise (a kernel, called through the
    // thread pool) it stays, as a thunk.
    auto replace = [&](LLVM::LLVMFuncOp member, ArrayRef<Attribute> params) {
      StringAttr name = member.getSymNameAttr();
      for (LLVM::CallOp call : calls[name]) {
        OpBuilder b(call);
        SmallVector<Value> args(call.getArgOperands());
        constants(b, call.getLoc(), params, args);
        auto redirected = LLVM::CallOp::create(b, call.getLoc(), shared, args);
        call.replaceAllUsesWith(redirected);
        call.erase();
      }
      calls.erase(name);
      if (!addressTaken.contains(name) && !kernels.contains(name)) {
        member.erase();
        return;
      }
      Location loc = member.getLoc();
      member.getBody().dropAllReferences();
      member.getBody().getBlocks().clear();
      Block *entry = member.addEntryBlock(mb);
      OpBuilder b = OpBuilder::atBlockBegin(entry);
      SmallVector<Value> args(entry->getArguments());
      constants(b, loc, params, args);
      auto call = LLVM::CallOp::create(b, loc, shared, args);
      LLVM::ReturnOp::create(b, loc, call.getResults());
    };
    replace(rep, repParams);
    for (auto &[member, params] : serialClass.members)
      replace(member, params);
    return success();
  }
};

} // namespace
