//===- OutlineParallelLoops.cpp - parallel loops through the thread pool --===//
//
// The entry `@f` becomes `@f_ctx` with one more argument, the runtime's
// `kiln_exec_context *` (runtime/include/kiln/parallel.h), and `@f` stays as a
// wrapper passing a null context. Every `scf.parallel`
// marked `kiln.parallel` in it becomes a private function
// `void body(void *closure, int64_t begin, int64_t end)` running the loop over
// [begin, end), and a call through the `parallel_for` pointer of the
// context's header (its LLVM type: ExecContextABI.h) with a closure on the
// stack holding the values the loop uses (memref descriptors, integers,
// floats). A null context runs the body once over the whole range on the
// calling thread. Each body's symbol and the ONNX nodes it computes are
// recorded in the module's `kiln.kernels` (the descriptor names the kernels
// for profiles: runtime/src/profile.c).
// Runs on buffers after deallocation is placed (the deallocations then
// already follow the loop; the closure's stores would hide later uses).
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Closure.h"
#include "codegen/CPU/ExecContextABI.h"
#include "codegen/Passes.h"
#include "dialects/Kiln/ABIAttributes.h"

#include "mlir/Conversion/LLVMCommon/LoweringOptions.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace kiln {
#define GEN_PASS_DEF_KILNOUTLINEPARALLELLOOPSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

using kiln::isRematerializable;

/// The ONNX nodes a loop computes, for profiles: every node name (NameLoc)
/// in its own location and its ops', in order of appearance, at most 8.
/// Constants and globals are left out: they are shared between loops (a
/// Constant node's value used everywhere is not what a loop computes).
std::string describeNodes(scf::ParallelOp loop) {
  llvm::SetVector<StringRef> names;
  auto collect = [&](Location loc) {
    loc->walk([&](Location inner) {
      if (auto name = dyn_cast<NameLoc>(inner))
        names.insert(name.getName().getValue());
      return WalkResult::advance();
    });
  };
  collect(loop.getLoc());
  loop.walk([&](Operation *op) {
    if (!isRematerializable(op))
      collect(op->getLoc());
  });
  constexpr size_t kMaxNames = 8;
  std::string text;
  for (auto [i, name] : llvm::enumerate(names)) {
    if (i == kMaxNames) {
      text += " +" + std::to_string(names.size() - kMaxNames) + " more";
      break;
    }
    if (i)
      text += ", ";
    text += name.str();
  }
  return text.empty() ? "(unnamed)" : text;
}

struct OutlineParallelLoopsPass
    : kiln::impl::KilnOutlineParallelLoopsPassBase<OutlineParallelLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    LowerToLLVMOptions options(ctx, DataLayout(module));
    LLVMTypeConverter converter(ctx, options);
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    Type i64 = IntegerType::get(ctx, 64);
    SymbolTable symbols(module);

    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      SmallVector<scf::ParallelOp> loops;
      func.walk([&](scf::ParallelOp loop) {
        if (kiln::isParallelLoop(loop))
          loops.push_back(loop);
      });
      // Only the entry receives a context; loops elsewhere stay sequential.
      if (!func.isPublic()) {
        for (scf::ParallelOp loop : loops)
          kiln::clearParallelLoop(loop);
        continue;
      }
      // `@f(args)` becomes `@f_ctx(args, context)` plus a wrapper `@f(args)`
      // passing a null context (the entry's plain, single-threaded form).
      // The wrapper allocates the scratch arena (kiln-plan-memory) itself.
      SmallVector<Type> plainInputs;
      SmallVector<unsigned> plainArgs;
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (!kiln::isScratchArgument(func, i)) {
          plainInputs.push_back(func.getArgument(i).getType());
          plainArgs.push_back(i);
        }
      auto plainType =
          FunctionType::get(ctx, plainInputs, func.getResultTypes());
      std::string name = func.getSymName().str();
      func.setSymName(name + "_ctx");
      if (failed(func.insertArgument(func.getNumArguments(), ptrType, {},
                                     func.getLoc())))
        return signalPassFailure();
      {
        Location loc = func.getLoc();
        OpBuilder b(module.getBodyRegion());
        b.setInsertionPointAfter(func);
        auto wrapper = func::FuncOp::create(b, loc, name, plainType);
        for (auto [i, arg] : llvm::enumerate(plainArgs))
          wrapper.setArgAttrs(i, func.getArgAttrDict(arg));
        Block *entry = wrapper.addEntryBlock();
        b.setInsertionPointToStart(entry);
        SmallVector<Value> args, scratch;
        for (unsigned i = 0, next = 0; i + 1 < func.getNumArguments(); ++i) {
          if (next < plainArgs.size() && plainArgs[next] == i) {
            args.push_back(entry->getArgument(next++));
            continue;
          }
          auto type = cast<MemRefType>(func.getArgument(i).getType());
          scratch.push_back(memref::AllocOp::create(b, loc, type,
                                                    b.getI64IntegerAttr(64)));
          args.push_back(scratch.back());
        }
        args.push_back(LLVM::ZeroOp::create(b, loc, ptrType));
        auto call = func::CallOp::create(b, loc, func, args);
        for (Value buffer : scratch)
          memref::DeallocOp::create(b, loc, buffer);
        func::ReturnOp::create(b, loc, call.getResults());
        for (unsigned i = 0; i < func.getNumArguments(); ++i)
          kiln::clearScratchArgument(func, i);
      }
      Value context = func.getArgument(func.getNumArguments() - 1);
      unsigned counter = 0;
      for (scf::ParallelOp loop : loops) {
        kiln::clearParallelLoop(loop);
        if (loop.getNumLoops() != 1 || loop.getNumResults() != 0)
          continue;
        if (failed(outline(loop, func, context, converter, symbols, ptrType,
                           i64, counter)))
          return signalPassFailure();
      }
    }
  }

  LogicalResult outline(scf::ParallelOp loop, func::FuncOp func, Value context,
                        LLVMTypeConverter &converter, SymbolTable &symbols,
                        Type ptrType, Type i64, unsigned &counter) {
    MLIRContext *ctx = &getContext();
    Location loc = loop.getLoc();
    // Values from above: constants are cloned, the rest go into the closure.
    SetVector<Value> above;
    getUsedValuesDefinedAbove(loop.getRegion(), above);
    SmallVector<Value> captured;
    SmallVector<Operation *> cloned;
    for (Value value : above) {
      if (isRematerializable(value.getDefiningOp()))
        cloned.push_back(value.getDefiningOp());
      else
        captured.push_back(value);
    }
    std::optional<kiln::Closure> closureValues =
        kiln::Closure::get(captured, converter);
    if (!closureValues)
      return success(); // not outlined: runs sequentially

    // The body function.
    OpBuilder mb(func);
    FunctionType bodyType = kiln::getParallelBodyType(ctx);
    auto body = func::FuncOp::create(
        mb, loc, (func.getSymName() + "_parallel_" + Twine(counter++)).str(),
        bodyType);
    body.setPrivate();
    symbols.insert(body);
    kiln::addKernelName(func->getParentOfType<ModuleOp>(), body.getSymName(),
                        describeNodes(loop));
    {
      Block *entry = body.addEntryBlock();
      OpBuilder b = OpBuilder::atBlockBegin(entry);
      IRMapping mapping;
      for (Operation *op : cloned)
        b.clone(*op, mapping);
      closureValues->unpack(b, loc, entry->getArgument(0), mapping);
      Value begin = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                               entry->getArgument(1));
      Value end = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                             entry->getArgument(2));
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto forOp = scf::ForOp::create(b, loc, begin, end, one);
      mapping.map(loop.getInductionVars()[0], forOp.getInductionVar());
      b.setInsertionPointToStart(forOp.getBody());
      for (Operation &op : loop.getBody()->without_terminator())
        b.clone(op, mapping);
      b.setInsertionPointAfter(forOp);
      func::ReturnOp::create(b, loc);
    }

    // The call site: closure, then parallel_for (or a direct call).
    OpBuilder b(loop);
    Value closure = closureValues->pack(b, loc);
    Value lb = loop.getLowerBound()[0], ub = loop.getUpperBound()[0];
    // Normalized to [0, n) with step 1 by construction (kiln-emit-microkernels).
    (void)lb;
    Value n = arith::IndexCastOp::create(b, loc, i64, ub);
    Value zero64 = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0));
    Value null = LLVM::ZeroOp::create(b, loc, ptrType);
    Value isNull = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                                        context, null);
    auto ifOp = scf::IfOp::create(b, loc, isNull, /*withElseRegion=*/true);
    {
      OpBuilder tb = ifOp.getThenBodyBuilder();
      func::CallOp::create(tb, loc, body, ValueRange{closure, zero64, n});
    }
    {
      OpBuilder eb = ifOp.getElseBodyBuilder();
      auto field =
          static_cast<int32_t>(kiln::ExecContextHeaderField::ParallelFor);
      Value slot = LLVM::GEPOp::create(
          eb, loc, ptrType, kiln::getExecContextHeaderType(ctx), context,
          ArrayRef<LLVM::GEPArg>{0, field});
      Value parallelFor = LLVM::LoadOp::create(eb, loc, ptrType, slot);
      Value fn = func::ConstantOp::create(eb, loc, bodyType, body.getSymName());
      Value fnPtr =
          UnrealizedConversionCastOp::create(eb, loc, ptrType, fn).getResult(0);
      LLVM::CallOp::create(eb, loc, kiln::getParallelForType(ctx),
                           ValueRange{parallelFor, context, n, fnPtr, closure});
    }
    loop.erase();
    return success();
  }
};

} // namespace
