//===- ABIAttributes.cpp - the kiln dialect's ABI attributes --------------===//
//
// Helpers and verifiers of the discardable attributes declared on the kiln
// dialect. Each check guards an assumption a later pass or the runtime makes
// without checking again (kiln-outline-parallel-loops runs a marked loop from
// 0 with step 1; the descriptor stores the scratch size and the messages).
//
//===----------------------------------------------------------------------===//

#include "dialects/Kiln/ABIAttributes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace kiln {

using ParallelAttr = KilnDialect::ParallelAttrHelper;
using StorageOnlyAttr = KilnDialect::StorageOnlyAttrHelper;
using ScratchAttr = KilnDialect::ScratchAttrHelper;
using ScratchSizeAttr = KilnDialect::ScratchSizeAttrHelper;
using CheckMessagesAttr = KilnDialect::CheckMessagesAttrHelper;
using KernelsAttr = KilnDialect::KernelsAttrHelper;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

bool isParallelLoop(Operation *op) {
  return ParallelAttr(op->getContext()).isAttrPresent(op);
}

void setParallelLoop(Operation *loop) {
  ParallelAttr(loop->getContext())
      .setAttr(loop, UnitAttr::get(loop->getContext()));
}

void clearParallelLoop(Operation *loop) {
  loop->removeAttr(ParallelAttr::getNameStr());
}

void markStorageOnlyConversion(Operation *op) {
  StorageOnlyAttr(op->getContext()).setAttr(op, UnitAttr::get(op->getContext()));
}

bool isStorageOnlyConversion(Operation *op) {
  return StorageOnlyAttr(op->getContext()).isAttrPresent(op);
}

DictionaryAttr getScratchArgumentAttrs(MLIRContext *context) {
  return DictionaryAttr::get(
      context,
      {NamedAttribute(ScratchAttr(context).getName(), UnitAttr::get(context))});
}

bool isScratchArgument(FunctionOpInterface func, unsigned index) {
  return static_cast<bool>(
      func.getArgAttrOfType<UnitAttr>(index, ScratchAttr::getNameStr()));
}

void clearScratchArgument(FunctionOpInterface func, unsigned index) {
  func.removeArgAttr(index, ScratchAttr(func->getContext()).getName());
}

std::optional<int64_t> getScratchSize(ModuleOp module) {
  if (IntegerAttr size = ScratchSizeAttr(module.getContext()).getAttr(module))
    return size.getInt();
  return std::nullopt;
}

void setScratchSize(ModuleOp module, int64_t bytes) {
  MLIRContext *context = module.getContext();
  ScratchSizeAttr(context).setAttr(
      module, IntegerAttr::get(IntegerType::get(context, 64), bytes));
}

SmallVector<std::string> getCheckMessages(ModuleOp module) {
  SmallVector<std::string> messages;
  if (ArrayAttr array = CheckMessagesAttr(module.getContext()).getAttr(module))
    for (Attribute message : array)
      messages.push_back(cast<StringAttr>(message).str());
  return messages;
}

void setCheckMessages(ModuleOp module, ArrayRef<StringAttr> messages) {
  MLIRContext *context = module.getContext();
  SmallVector<Attribute> array(messages.begin(), messages.end());
  CheckMessagesAttr(context).setAttr(module, ArrayAttr::get(context, array));
}

SmallVector<KernelName> getKernelNames(ModuleOp module) {
  SmallVector<KernelName> kernels;
  if (ArrayAttr array = KernelsAttr(module.getContext()).getAttr(module))
    for (Attribute entry : array) {
      auto pair = cast<ArrayAttr>(entry);
      kernels.push_back({cast<StringAttr>(pair[0]).str(),
                         cast<StringAttr>(pair[1]).str()});
    }
  return kernels;
}

void addKernelName(ModuleOp module, StringRef symbol, StringRef nodes) {
  MLIRContext *context = module.getContext();
  SmallVector<Attribute> array;
  if (ArrayAttr old = KernelsAttr(context).getAttr(module))
    array.assign(old.begin(), old.end());
  array.push_back(ArrayAttr::get(context, {StringAttr::get(context, symbol),
                                           StringAttr::get(context, nodes)}));
  KernelsAttr(context).setAttr(module, ArrayAttr::get(context, array));
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

namespace {

bool isKnownAttr(StringRef name) {
  return name == ParallelAttr::getNameStr() ||
         name == ScratchAttr::getNameStr() ||
         name == ScratchSizeAttr::getNameStr() ||
         name == CheckMessagesAttr::getNameStr() ||
         name == KernelsAttr::getNameStr();
}

LogicalResult verifyParallel(Operation *op, Attribute value) {
  if (!isa<UnitAttr>(value))
    return op->emitOpError("'kiln.parallel' must be a unit attribute");
  auto loop = dyn_cast<scf::ParallelOp>(op);
  if (!loop)
    return op->emitOpError("'kiln.parallel' is only valid on scf.parallel");
  if (loop.getNumLoops() != 1 || loop.getNumResults() != 0)
    return op->emitOpError("'kiln.parallel' needs a one-dimensional "
                           "scf.parallel without reductions");
  // The thread pool hands out [begin, end) chunks of [0, n).
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()[0]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[0]);
  if (lower != 0 || step != 1)
    return op->emitOpError("'kiln.parallel' needs a loop from 0 with step 1");
  return success();
}

LogicalResult verifyModuleAttr(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (!isa<ModuleOp>(op))
    return op->emitOpError("'") << name << "' is only valid on builtin.module";
  if (name == ScratchSizeAttr::getNameStr()) {
    auto size = dyn_cast<IntegerAttr>(attr.getValue());
    if (!size || !size.getType().isSignlessInteger(64))
      return op->emitOpError("'kiln.scratch_size' must be an i64 attribute");
    if (size.getInt() < 0)
      return op->emitOpError("'kiln.scratch_size' must not be negative, got ")
             << size.getInt();
    return success();
  }
  if (name == KernelsAttr::getNameStr()) {
    auto kernels = dyn_cast<ArrayAttr>(attr.getValue());
    auto isPair = [](Attribute entry) {
      auto pair = dyn_cast<ArrayAttr>(entry);
      return pair && pair.size() == 2 &&
             llvm::all_of(pair, llvm::IsaPred<StringAttr>);
    };
    if (!kernels || !llvm::all_of(kernels, isPair))
      return op->emitOpError("'kiln.kernels' must be an array of [symbol, "
                             "nodes] string pairs");
    return success();
  }
  auto messages = dyn_cast<ArrayAttr>(attr.getValue());
  if (!messages || !llvm::all_of(messages, llvm::IsaPred<StringAttr>))
    return op->emitOpError("'kiln.check_messages' must be an array of strings");
  return success();
}

} // namespace

LogicalResult KilnDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == ParallelAttr::getNameStr())
    return verifyParallel(op, attr.getValue());
  if (name == ScratchSizeAttr::getNameStr() ||
      name == CheckMessagesAttr::getNameStr() ||
      name == KernelsAttr::getNameStr())
    return verifyModuleAttr(op, attr);
  if (name == ScratchAttr::getNameStr())
    return op->emitOpError(
        "'kiln.scratch' is only valid on a function argument");
  // Other kiln.* names belong to attributes with verifiers of their own.
  return success();
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (!isKnownAttr(name))
    return success();
  if (name != ScratchAttr::getNameStr())
    return op->emitOpError("'") << name << "' is not an argument attribute";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitOpError("'kiln.scratch' must be a unit attribute");
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitOpError(
        "'kiln.scratch' is only valid on a function argument");
  // The runtime passes the arena as one pointer to bytes.
  Type type = func.getArgumentTypes()[argIndex];
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || memref.getRank() != 1 || !memref.hasStaticShape() ||
      !memref.getElementType().isSignlessInteger(8) ||
      !memref.getLayout().isIdentity() || memref.getMemorySpace())
    return op->emitOpError("'kiln.scratch' needs a memref<Nxi8> argument, got ")
           << type;
  return success();
}

LogicalResult KilnDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (isKnownAttr(name))
    return op->emitOpError("'") << name << "' is not a result attribute";
  return success();
}

} // namespace kiln
