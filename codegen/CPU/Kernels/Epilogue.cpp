//===- Epilogue.cpp - elementwise ops fused into a kernel's stores --------===//
//
// An elementwise `linalg.generic` right after a kernel that reads the
// kernel's output (bias, activation, residual add, BatchNorm's scale) is
// applied to the accumulators before they are stored, and the kernel stores
// into the generic's output: one pass over the result instead of three.
// findEpilogue decides whether the generic qualifies (and moves what it
// needs before the kernel); Epilogue::apply clones its body on vectors.
// The generic may change the element type: a quantized model's i32
// products are requantized to 8 bits (sitofp, mulf by the multiplier,
// roundeven, + zero point, clamp, fptosi: kiln-fold-qdq's form) or
// dequantized to f32 in the kernel's stores, so the i32 result never
// reaches memory; its inputs (a per-channel multiplier, a residual's bytes)
// are read at the vector's lanes in their own element type.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Kernels/Kernels.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/SetVector.h"

namespace kiln::kernels {

/// Applies the body to `acc` at element `indices` (of the kernel's
/// output), whose last index is the first of a vector of lanes, and stores
/// the result into `out`.
void Epilogue::store(KernelBuilder &kb, Value acc, ArrayRef<Value> indices,
                     Value mask) const {
  SmallVector<Value> loops = loopIndices(kb, indices);
  kb.store(apply(kb, acc, loops, mask), out, loops, mask);
}

/// Applies the body to `acc` at the generic's loop indices `loops`.
Value Epilogue::apply(KernelBuilder &kb, Value acc, ArrayRef<Value> loops,
                      Value mask) const {
  linalg::GenericOp generic = this->generic;
  Block &body = generic.getRegion().front();
  IRMapping map;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    BlockArgument arg = body.getArgument(input->getOperandNumber());
    if (input->getOperandNumber() == accInput) {
      map.map(arg, acc);
      continue;
    }
    // Dims or zeros (a broadcast unit dim: BERT's mask [1, 1, 1, 128]).
    AffineMap m = generic.getMatchingIndexingMap(input);
    SmallVector<Value> idx;
    for (AffineExpr e : m.getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      idx.push_back(dim ? loops[dim.getPosition()] : kb.idx(0));
    }
    unsigned last = loops.size() - 1;
    auto lastDim = m.getNumResults() > 0
                       ? dyn_cast<AffineDimExpr>(m.getResults().back())
                       : nullptr;
    if (lastDim && lastDim.getPosition() == last)
      map.map(arg, kb.load(input->get(), idx, mask));
    else
      map.map(arg, kb.splat(memref::LoadOp::create(kb.b, kb.loc, input->get(),
                                                   idx)));
  }
  for (Operation &op : body.without_terminator()) {
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      map.map(op.getResult(0), kb.splat(arith::ConstantOp::create(
                                   kb.b, kb.loc, cst.getValue())));
      continue;
    }
    OperationState state(kb.loc, op.getName());
    for (Value operand : op.getOperands()) {
      // A scalar from above the body (findEpilogue checked: an integer or
      // float) is splat.
      if (!map.contains(operand))
        map.map(operand, kb.splat(operand));
      state.addOperands(map.lookup(operand));
    }
    for (Type type : op.getResultTypes())
      state.addTypes(VectorType::get({kb.vw}, type));
    state.addAttributes(op.getAttrs());
    Operation *vectorOp = kb.b.create(state);
    for (auto [from, to] : llvm::zip(op.getResults(), vectorOp->getResults()))
      map.map(from, to);
  }
  return map.lookup(body.getTerminator()->getOperand(0));
}

void setConvOutput(
    BlockSpec &spec, Value fillValue, Value out,
    const std::optional<Epilogue> &epilogue,
    std::function<SmallVector<Value>(KernelBuilder &, int64_t, int64_t)>
        outIndex) {
  spec.init = [=](KernelBuilder &z, int64_t i, int64_t v, Value msk) {
    return fillValue ? z.splat(fillValue) : z.load(out, outIndex(z, i, v), msk);
  };
  const Epilogue *ep = epilogue ? &*epilogue : nullptr;
  spec.store = [=](KernelBuilder &z, int64_t i, int64_t v, Value val,
                   Value msk) {
    SmallVector<Value> ix = outIndex(z, i, v);
    if (ep)
      return ep->store(z, val, ix, msk);
    z.store(val, out, ix, msk);
  };
}

/// For a reshape of a kernel's output that only adds or removes unit dims,
/// the kernel dim behind each of its dims (-1: an added unit dim; see
/// Epilogue::kernelDims), or nullopt. Both last dims must be the same (the
/// vector lanes walk them).
static std::optional<SmallVector<int64_t>> unitReshapeDims(Operation *reshape) {
  auto expand = dyn_cast<memref::ExpandShapeOp>(reshape);
  auto collapse = dyn_cast<memref::CollapseShapeOp>(reshape);
  if (!expand && !collapse)
    return std::nullopt;
  // Each reassociation group of the larger shape holds at most one dim that
  // is not 1: the one that stands for the smaller shape's dim (or the
  // group's last one when all are 1).
  ArrayRef<int64_t> large = expand ? expand.getResultType().getShape()
                                   : collapse.getSrcType().getShape();
  SmallVector<ReassociationIndices> groups =
      expand ? expand.getReassociationIndices()
             : collapse.getReassociationIndices();
  SmallVector<int64_t> standsFor; // per group, a dim of the larger shape
  for (const ReassociationIndices &group : groups) {
    int64_t nonUnit = -1;
    for (int64_t d : group) {
      if (large[d] == 1)
        continue;
      if (nonUnit >= 0 || ShapedType::isDynamic(large[d]))
        return std::nullopt;
      nonUnit = d;
    }
    standsFor.push_back(nonUnit >= 0 ? nonUnit : group.back());
  }
  SmallVector<int64_t> dims;
  if (expand) {
    dims.assign(large.size(), -1);
    for (auto [kernelDim, d] : llvm::enumerate(standsFor))
      dims[d] = kernelDim;
  } else {
    dims = standsFor;
  }
  int64_t kernelRank = expand ? groups.size() : large.size();
  if (dims.empty() || dims.back() != kernelRank - 1)
    return std::nullopt;
  return dims;
}

/// An element type an epilogue computes on: integers (i1 for comparisons)
/// and floats of up to 32 bits, vw of them one or two vector registers.
static bool isLaneType(Type type) {
  return type.isIntOrFloat() && type.getIntOrFloatBitWidth() <= 32;
}

std::optional<Epilogue> findEpilogue(Operation *kernel, Value out,
                                     Operation *initCopy,
                                     bool mergedLastDims) {
  if (!out.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  auto root = [](Value v) {
    while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
      v = view.getViewSource();
    return v;
  };
  // Between the kernel and the generic: constants, allocations, views, and
  // fills of other buffers (the border of the next conv's padded input,
  // kiln-decompose-pads), which the epilogue, computed where the kernel
  // stands, may come before when the generic touches none of their buffers.
  SmallVector<linalg::FillOp> fills;
  Operation *next = kernel->getNextNode();
  while (next &&
         (isa<arith::ConstantOp, memref::AllocOp, memref::GetGlobalOp,
              linalg::FillOp>(next) ||
          isa<ViewLikeOpInterface>(next))) {
    if (auto fill = dyn_cast<linalg::FillOp>(next))
      fills.push_back(fill);
    next = next->getNextNode();
  }
  auto generic = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      !generic.hasPureBufferSemantics())
    return std::nullopt;
  for (linalg::FillOp fill : fills) {
    if (!fill.hasPureBufferSemantics())
      return std::nullopt;
    Value filled = root(fill.getOutputs()[0]);
    if (filled == root(out) ||
        llvm::any_of(generic->getOperands(),
                     [&](Value v) { return root(v) == filled; }))
      return std::nullopt;
  }
  // What the generic reads of the output: `out` itself, or a reshape of it
  // that only adds or removes unit dims (a matmul's [128, 768] read as
  // BERT's [1, 128, 768]).
  Value acc = out;
  Operation *reshape = nullptr;
  for (Operation *user : out.getUsers())
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(user) &&
        llvm::is_contained(generic->getOperands(), user->getResult(0))) {
      if (reshape)
        return std::nullopt;
      reshape = user;
      acc = user->getResult(0);
    }
  // (Not also directly: the kernel stores into the generic's output.)
  if (reshape && llvm::is_contained(generic->getOperands(), out))
    return std::nullopt;
  auto accType = cast<MemRefType>(acc.getType());
  SmallVector<int64_t> kernelDims =
      llvm::to_vector(llvm::seq<int64_t>(0, accType.getRank()));
  if (mergedLastDims) {
    // Only the collapse [0], ..., [r - 2, r - 1] (identity on its dims).
    auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(reshape);
    if (!collapse)
      return std::nullopt;
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    int64_t rank = collapse.getSrcType().getRank();
    for (auto [i, group] : llvm::enumerate(groups)) {
      ReassociationIndices expected = {int64_t(i)};
      if (int64_t(i) == rank - 2)
        expected.push_back(rank - 1);
      if (group != expected || int64_t(groups.size()) != rank - 1)
        return std::nullopt;
    }
  } else if (reshape) {
    std::optional<SmallVector<int64_t>> dims = unitReshapeDims(reshape);
    if (!dims)
      return std::nullopt;
    kernelDims = *dims;
  }
  // The output (and its reshape) is used only by its fill, the kernel and
  // the generic, or, when the generic updates it in place, also after the
  // generic. Uses before the kernel (not views, which may be read later)
  // are done with it (bufferization may reuse a buffer whose value is dead:
  // SqueezeNet's conv after a pool).
  OpOperand *init = generic.getDpsInitOperand(0);
  bool inPlace = init->get() == acc;
  for (Value buffer : {out, acc})
    for (Operation *user : buffer.getUsers()) {
      if (user == kernel || user == generic.getOperation() ||
          user == initCopy || user == reshape || isa<linalg::FillOp>(user))
        continue;
      Operation *top = kernel->getBlock()->findAncestorOpInBlock(*user);
      if (top && top->isBeforeInBlock(kernel) &&
          llvm::none_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>))
        continue;
      if (!inPlace || !top || !generic->isBeforeInBlock(top))
        return std::nullopt;
    }
  // The generic may write a strided view of the same shape (the interior of
  // a padded buffer, kiln-decompose-pads), of another element type (a
  // requantization's bytes, a dequantization's floats).
  auto initType = dyn_cast<MemRefType>(init->get().getType());
  if (!initType || initType.getShape() != accType.getShape() ||
      !isLaneType(initType.getElementType()) ||
      !generic.getMatchingIndexingMap(init).isIdentity() ||
      !innerUnitStride(init->get(), /*allowBytes=*/true))
    return std::nullopt;
  if (generic.getRegion()
          .front()
          .getArgument(init->getOperandNumber())
          .use_empty() == false)
    return std::nullopt;
  std::optional<unsigned> accInput;
  // Inputs read along the innermost loop at a dim followed by unit dims only
  // (a per-channel bias or multiplier [1, C, 1, 1] read as (n, c, 0, 0) in
  // NHWC loops): viewed without those unit dims once the epilogue is taken.
  SmallVector<std::pair<OpOperand *, int64_t>> trailingUnits;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap m = generic.getMatchingIndexingMap(input);
    if (input->get() == acc) {
      if (accInput || !m.isIdentity())
        return std::nullopt;
      accInput = input->getOperandNumber();
      continue;
    }
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || !isLaneType(type.getElementType()) ||
        !m.isProjectedPermutation(/*allowZeroInResults=*/true) ||
        !innerUnitStride(input->get(), /*allowBytes=*/true))
      return std::nullopt;
    // The innermost loop, if read, must be the input's innermost dim, or be
    // followed by unit dims read at 0 only.
    unsigned last = accType.getRank() - 1;
    for (auto [i, e] : llvm::enumerate(m.getResults())) {
      if (!e.isFunctionOfDim(last) || i + 1 == m.getNumResults())
        continue;
      for (unsigned j = i + 1; j < m.getNumResults(); ++j) {
        auto zero = dyn_cast<AffineConstantExpr>(m.getResult(j));
        if (!zero || zero.getValue() != 0 || type.getDimSize(j) != 1)
          return std::nullopt;
      }
      SmallVector<ReassociationIndices> groups;
      for (int64_t d = 0; d < int64_t(i); ++d)
        groups.push_back({d});
      groups.push_back(llvm::to_vector(llvm::seq<int64_t>(i, type.getRank())));
      if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, groups))
        return std::nullopt;
      trailingUnits.push_back({input, int64_t(i)});
    }
  }
  if (!accInput)
    return std::nullopt;
  // The kernel must not read the buffer the epilogue writes (a recurrence
  // h = f(h * R) updating h in place).
  Value written = root(init->get());
  for (Value operand : kernel->getOperands())
    if (operand != out && root(operand) == written)
      return std::nullopt;
  // The body computes on vectors of vw lanes of integers and floats of up to
  // 32 bits (a scalar from above is splat).
  Region &region = generic.getRegion();
  for (Operation &op : region.front().without_terminator()) {
    for (Value operand : op.getOperands())
      if (operand.getParentRegion() != &region &&
          !isLaneType(operand.getType()))
        return std::nullopt;
    if (isa<arith::ConstantOp>(op)) {
      if (!isLaneType(op.getResult(0).getType()))
        return std::nullopt;
      continue;
    }
    if (op.getNumRegions() || !op.hasTrait<OpTrait::Elementwise>() ||
        !op.hasTrait<OpTrait::Vectorizable>() ||
        !isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) ||
        !llvm::all_of(op.getResultTypes(), isLaneType))
      return std::nullopt;
  }
  if (generic.getRegion().front().getTerminator()->getNumOperands() != 1)
    return std::nullopt;

  // The kernel computes the epilogue where it stands, so what the generic
  // uses must exist there: the allocations, views and constants created
  // between the two (only such ops are there) move before the kernel (a
  // Concat's slice of a buffer allocated after the kernel, BERT's reshape).
  SetVector<Operation *> defs;
  SmallVector<Value> worklist(generic->getOperands());
  generic.getRegion().walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (!region.isAncestor(operand.getParentRegion()))
        worklist.push_back(operand);
  });
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != kernel->getBlock() ||
        def->isBeforeInBlock(kernel) || !defs.insert(def))
      continue;
    worklist.append(def->operand_begin(), def->operand_end());
  }
  SmallVector<Operation *> hoisted = defs.takeVector();
  llvm::sort(hoisted,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *def : hoisted)
    def->moveBefore(kernel);
  // The inputs with trailing unit dims, collapsed (before the kernel) and
  // read without them.
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  for (auto [input, dim] : trailingUnits) {
    OpBuilder b(kernel);
    Value v = input->get();
    int64_t rank = cast<MemRefType>(v.getType()).getRank();
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < dim; ++d)
      groups.push_back({d});
    groups.push_back(llvm::to_vector(llvm::seq<int64_t>(dim, rank)));
    input->set(
        memref::CollapseShapeOp::create(b, v.getLoc(), v, groups).getResult());
    AffineMap &m = maps[input->getOperandNumber()];
    m = AffineMap::get(m.getNumDims(), m.getNumSymbols(),
                       m.getResults().take_front(dim + 1), m.getContext());
  }
  if (!trailingUnits.empty())
    generic.setIndexingMapsAttr(
        OpBuilder(generic).getAffineMapArrayAttr(maps));
  return Epilogue{generic, init->get(), *accInput, kernelDims};
}

} // namespace kiln::kernels
