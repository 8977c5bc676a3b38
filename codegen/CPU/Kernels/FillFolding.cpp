//===- FillFolding.cpp - a kernel's output fill as its initial value ------===//
//
// A `linalg.fill` of a kernel's output right before it (or a fill shared
// with earlier ops, which bufferization copies into all but the last) is
// not run: the kernel starts its accumulators from the fill's value and the
// fill (and copy) are erased once the kernel is emitted.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Kernels/Kernels.h"

namespace kiln::kernels {

void InitFill::erase() {
  auto readsFill = [&](Operation *user) {
    Operation *top = fill->getBlock()->findAncestorOpInBlock(*user);
    return isa<memref::CopyOp>(user) &&
           (!top ||
            (fill->isBeforeInBlock(top) && top->isBeforeInBlock(kernel)));
  };
  if (fill && llvm::none_of(fill->getOperand(1).getUsers(), readsFill))
    fill->erase();
  if (copy) {
    Value source = cast<memref::CopyOp>(copy).getSource();
    copy->erase();
    SmallVector<Operation *> users(source.getUsers());
    if (users.size() == 1 && isa<linalg::FillOp>(users[0]))
      users[0]->erase();
  }
}

/// The fill whose value the allocation `buffer` holds right before
/// `at`: among the ops before `at` (in its block) that use `buffer`, the
/// last one that is not a copy reading it. Null when unknown (a view of
/// the buffer could write it from anywhere).
static linalg::FillOp lastFill(Value buffer, Operation *at) {
  if (!buffer.getDefiningOp<memref::AllocOp>())
    return {};
  Operation *last = nullptr;
  for (Operation *user : buffer.getUsers()) {
    Operation *top = at->getBlock()->findAncestorOpInBlock(*user);
    if (!top)
      return {};
    if (top == at || at->isBeforeInBlock(top))
      continue;
    if (llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>))
      return {};
    auto read = dyn_cast<memref::CopyOp>(user);
    if (read && read.getSource() == buffer)
      continue;
    if (!last || last->isBeforeInBlock(top))
      last = top;
  }
  auto fill = dyn_cast_or_null<linalg::FillOp>(last);
  // (Of the buffer's own element type: the accumulators' initial value.)
  if (!fill || fill.getOutputs()[0] != buffer ||
      fill.value().getType() !=
          cast<MemRefType>(buffer.getType()).getElementType())
    return {};
  return fill;
}

InitFill fusableFill(Operation *op, Value out) {
  Operation *prev = op->getPrevNode();
  while (prev && isa<arith::ConstantOp, memref::GetGlobalOp>(prev))
    prev = prev->getPrevNode();
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
      fill && fill.getOutputs()[0] == out) {
    if (fill.value().getType() !=
        cast<MemRefType>(out.getType()).getElementType())
      return {};
    return {fill.value(), fill, op, nullptr};
  }
  if (auto copy = dyn_cast_or_null<memref::CopyOp>(prev);
      copy && copy.getTarget() == out) {
    linalg::FillOp fill = lastFill(copy.getSource(), copy);
    if (!fill)
      return {};
    return {fill.value(), nullptr, nullptr, copy};
  }
  linalg::FillOp fill = lastFill(out, op);
  if (!fill)
    return {};
  return {fill.value(), fill, op, nullptr};
}

void eraseLoweredOps(Operation *kernel, InitFill &fill,
                     const std::optional<Epilogue> &epilogue) {
  if (epilogue)
    epilogue->generic->erase();
  fill.erase();
  kernel->erase();
}

} // namespace kiln::kernels
