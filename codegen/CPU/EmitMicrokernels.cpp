//===- EmitMicrokernels.cpp - register-blocked kernels on buffers ---------===//
//
// Replaces `linalg.matmul`, `linalg.batch_matmul`, `linalg.conv_2d_nhwc_hwcf`,
// `linalg.depthwise_conv_2d_nhwc_hwc` and NHWC max / sum pooling on buffers by
// explicit loop nests around a register-blocked micro-kernel:
//  - matmul / conv: `rows` output rows x `vecs` vectors of output columns are
//    accumulated in vector registers carried through the reduction loops
//    (`scf.for` iter_args); each reduction step loads `vecs` vectors of B and
//    broadcasts one A element per row into an FMA. Rows x vecs is sized to the
//    register file (6 x 2 ymm on AVX2, 12 x 2 zmm on AVX-512).
//  - depthwise: `rows` output columns x `vecs` vectors of channels, one input
//    vector load per FMA; pooling is the same kernel with max / add instead.
// A constant B (matmul weights, HWCF conv filters, a batch matmul's per-batch
// matrices) is packed at compile time into panels [N / NR][reduction...][NR]
// (zero padded), so a kernel reads one contiguous stream of B. Edges: a block with fewer rows, and masked
// loads/stores for the last vector of columns.
// The outermost loop (row groups x column panels or chunks of them, or output
// rows x panels) is an `scf.parallel` marked `kiln.parallel`, for the thread
// pool.
// A `linalg.fill` of the output right before the op (or one shared with
// earlier ops, which bufferization copies) is folded into the accumulators'
// initial value.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/CPU/ConstantData.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace kiln {
#define GEN_PASS_DEF_KILNEMITMICROKERNELSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr StringLiteral kParallelAttr = "kiln.parallel";

/// Rows x vectors of one broadcast-FMA register block.
struct Blocking {
  int64_t rows;
  int64_t vecs;
};

/// Register file size for a vector width (x86: 16 ymm without AVX-512, 32
/// zmm with it; NEON has 32 q registers).
int64_t numRegisters(int64_t vectorWidth) { return vectorWidth == 8 ? 16 : 32; }

/// Chooses the register block for `cols` output columns of `rows` output rows:
/// the fewest padded columns, then the most vectors per row. rows*vecs
/// accumulators + vecs B vectors + 1 broadcast fit the register file.
Blocking chooseBlocking(int64_t cols, int64_t vectorWidth, int64_t rows) {
  int64_t regs = numRegisters(vectorWidth);
  int64_t colVecs = (cols + vectorWidth - 1) / vectorWidth;
  Blocking best{0, 0};
  int64_t bestWaste = INT64_MAX;
  if (rows <= 2) {
    // A matrix-vector product (a classifier's last layer, batch 1 or 2): with
    // so few rows the block's vectors are its independent FMA chains, so take
    // as many as the registers hold (rows x vecs accumulators + vecs B + the
    // broadcast), fewest padded columns first. MobileNetV2's 1280x1000 layer
    // ran one latency-bound chain per panel (2.5x slower).
    for (int64_t vecs = std::min((regs - 1) / (rows + 1), colVecs); vecs >= 1;
         --vecs) {
      int64_t waste = (colVecs + vecs - 1) / vecs * vecs - colVecs;
      if (waste < bestWaste) {
        bestWaste = waste;
        best = {rows, vecs};
      }
    }
    return best;
  }
  int64_t maxVecs = regs == 16 ? 3 : 4;
  for (int64_t vecs = std::min(maxVecs, colVecs); vecs >= 1; --vecs) {
    int64_t waste = (colVecs + vecs - 1) / vecs * vecs - colVecs;
    // 16 registers: 6x2 over 4x3 (more rows, same accumulators).
    if (regs == 16 && vecs == 3 && colVecs % 2 == 0)
      continue;
    if (waste < bestWaste) {
      bestWaste = waste;
      int64_t rows = (regs - 1 - vecs) / vecs;
      // Enough independent accumulators and not more than ~2 per register.
      rows = std::min<int64_t>(rows, regs == 16 ? 6 * 2 / vecs + (vecs == 3)
                                                : 24 / vecs);
      best = {rows, vecs};
    }
  }
  return best;
}

struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  int64_t vw;
  VectorType vt;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y == 0 ? x : add(x, idx(y)); }
  Value mul(Value x, int64_t y) {
    return y == 1 ? x : arith::MulIOp::create(b, loc, x, idx(y)).getResult();
  }

  /// Mask of the first `lanes` lanes, or null for a full vector.
  Value mask(int64_t lanes) {
    if (lanes >= vw)
      return {};
    SmallVector<bool> bits(vw, false);
    for (int64_t i = 0; i < lanes; ++i)
      bits[i] = true;
    auto type = VectorType::get({vw}, b.getI1Type());
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, bits));
  }

  Value load(Value memref, ValueRange indices, Value m) {
    if (!m)
      return vector::LoadOp::create(b, loc, vt, memref, indices);
    Value zero = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vt, b.getF32FloatAttr(0.0f)));
    return vector::MaskedLoadOp::create(b, loc, vt, memref, indices, m, zero);
  }

  void store(Value value, Value memref, ValueRange indices, Value m) {
    if (!m)
      vector::StoreOp::create(b, loc, value, memref, indices);
    else
      vector::MaskedStoreOp::create(b, loc, memref, indices, m, value);
  }

  Value splat(Value scalar) {
    return vector::BroadcastOp::create(b, loc, vt, scalar);
  }
};

/// One register block: `rows` x `vecs` accumulators carried through nested
/// reduction loops [0, redSizes[i]).
struct BlockSpec {
  int64_t rows;
  int64_t vecs;
  /// Valid lanes of the last vector (vw when full).
  int64_t lastLanes;
  /// Reduction loops: lower and upper bounds.
  SmallVector<std::pair<Value, Value>> reduction;
  /// Initial accumulator (i, v).
  std::function<Value(KernelBuilder &, int64_t, int64_t, Value)> init;
  /// Stores accumulator (i, v).
  std::function<void(KernelBuilder &, int64_t, int64_t, Value, Value)> store;
  /// Broadcast-FMA kernels: the A scalar of row i; depthwise: the input vector
  /// of (i, v).
  std::function<Value(KernelBuilder &, ValueRange, int64_t, int64_t, Value)>
      loadA;
  /// Vector v of B at the reduction point.
  std::function<Value(KernelBuilder &, ValueRange, int64_t, Value)> loadB;
  /// True: A is a scalar broadcast per row (matmul, conv); false: A is a
  /// vector per (row, vec) (depthwise).
  bool broadcastA = true;
  /// Optional: prefetches B some reduction steps ahead.
  std::function<void(KernelBuilder &, ValueRange)> prefetchB;
  /// Pooling: combines the A vector into the accumulator (max, add) instead
  /// of an FMA with B (no loadB).
  std::function<Value(KernelBuilder &, Value, Value)> combine;
};

/// Reduction steps of packed B prefetched ahead (with 16 columns, one 64-byte
/// line each).
constexpr int64_t kPrefetchSteps = 8;
/// Packed B panels up to this size stay in L1 across a task's blocks; larger
/// ones are read from L2 by every block, and prefetched.
constexpr int64_t kL1PanelBytes = 24 * 1024;

/// Prefetches `memref[indices]` into L1 for reading.
void prefetch(KernelBuilder &kb, Value memref, ValueRange indices) {
  memref::PrefetchOp::create(kb.b, kb.loc, memref, indices, /*isWrite=*/false,
                             /*localityHint=*/3, /*isDataCache=*/true);
}

void emitBlock(KernelBuilder &kb, const BlockSpec &spec) {
  Value lastMask = kb.mask(spec.lastLanes);
  auto maskOf = [&](int64_t v) {
    return v == spec.vecs - 1 ? lastMask : Value();
  };
  SmallVector<Value> acc;
  for (int64_t i = 0; i < spec.rows; ++i)
    for (int64_t v = 0; v < spec.vecs; ++v)
      acc.push_back(spec.init(kb, i, v, maskOf(v)));

  SmallVector<Value> ivs;
  std::function<SmallVector<Value>(unsigned, ValueRange)> nest =
      [&](unsigned depth, ValueRange carried) -> SmallVector<Value> {
    if (depth == spec.reduction.size()) {
      SmallVector<Value> bv;
      for (int64_t v = 0; v < spec.vecs && spec.loadB; ++v)
        bv.push_back(spec.loadB(kb, ivs, v, maskOf(v)));
      if (spec.prefetchB)
        spec.prefetchB(kb, ivs);
      SmallVector<Value> next(carried.begin(), carried.end());
      for (int64_t i = 0; i < spec.rows; ++i) {
        Value a;
        if (spec.broadcastA)
          a = kb.splat(spec.loadA(kb, ivs, i, 0, Value()));
        for (int64_t v = 0; v < spec.vecs; ++v) {
          Value av = spec.broadcastA ? a : spec.loadA(kb, ivs, i, v, maskOf(v));
          Value &slot = next[i * spec.vecs + v];
          slot = spec.combine
                     ? spec.combine(kb, av, slot)
                     : vector::FMAOp::create(kb.b, kb.loc, av, bv[v], slot);
        }
      }
      return next;
    }
    auto [lb, ub] = spec.reduction[depth];
    auto loop = scf::ForOp::create(kb.b, kb.loc, lb, ub, kb.idx(1), carried);
    OpBuilder::InsertionGuard guard(kb.b);
    kb.b.setInsertionPointToStart(loop.getBody());
    ivs.push_back(loop.getInductionVar());
    SmallVector<Value> inner = nest(depth + 1, loop.getRegionIterArgs());
    ivs.pop_back();
    scf::YieldOp::create(kb.b, kb.loc, inner);
    return SmallVector<Value>(loop.getResults());
  };
  SmallVector<Value> result = nest(0, acc);
  for (int64_t i = 0; i < spec.rows; ++i)
    for (int64_t v = 0; v < spec.vecs; ++v)
      spec.store(kb, i, v, result[i * spec.vecs + v], maskOf(v));
}

/// Emits `scf.parallel` over [0, n) marked for the thread pool; `body` gets
/// the index.
void emitParallel(OpBuilder &b, Location loc, int64_t n,
                  function_ref<void(OpBuilder &, Value)> body) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value ub = arith::ConstantIndexOp::create(b, loc, n);
  auto par = scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{ub}, ValueRange{one},
      [&](OpBuilder &nb, Location, ValueRange ivs) { body(nb, ivs[0]); });
  par->setAttr(kParallelAttr, b.getUnitAttr());
}

/// Emits `scf.if (cond) then {thenFn} else {elseFn}` without results.
void emitIf(OpBuilder &b, Location loc, Value cond,
            function_ref<void(OpBuilder &)> thenFn,
            function_ref<void(OpBuilder &)> elseFn) {
  scf::IfOp::create(
      b, loc, cond,
      [&](OpBuilder &nb, Location l) {
        thenFn(nb);
        scf::YieldOp::create(nb, l);
      },
      [&](OpBuilder &nb, Location l) {
        elseFn(nb);
        scf::YieldOp::create(nb, l);
      });
}

bool innerUnitStride(Value memref) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
    return false;
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return strides.empty() || strides.back() == 1;
}

/// An elementwise `linalg.generic` right after the kernel that reads its
/// output (identity map), directly or through a reshape that only adds or
/// removes unit dims, and writes another buffer of the same shape: it is
/// applied to the accumulators before they are stored, and the kernel stores
/// into the generic's output instead (one pass over the result, not three).
struct Epilogue {
  linalg::GenericOp generic;
  Value out;
  unsigned accInput; // operand index of the kernel's output among the inputs
  /// Per loop of the generic, the kernel's output dim it walks; -1 for a unit
  /// dim the kernel's output lacks (index 0). The last loop walks the last
  /// dim.
  SmallVector<int64_t> kernelDims;

  /// The generic's loop indices at the kernel's output element `indices`.
  SmallVector<Value> loopIndices(KernelBuilder &kb,
                                 ArrayRef<Value> indices) const {
    SmallVector<Value> loops;
    for (int64_t d : kernelDims)
      loops.push_back(d < 0 ? kb.idx(0) : indices[d]);
    return loops;
  }

  /// Applies the body to `acc` at element `indices` (of the kernel's
  /// output), whose last index is the first of a vector of lanes, and stores
  /// the result into `out`.
  void store(KernelBuilder &kb, Value acc, ArrayRef<Value> indices,
             Value mask) const {
    SmallVector<Value> loops = loopIndices(kb, indices);
    kb.store(apply(kb, acc, loops, mask), out, loops, mask);
  }

  /// Applies the body to `acc` at the generic's loop indices `loops`.
  Value apply(KernelBuilder &kb, Value acc, ArrayRef<Value> loops,
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
        map.map(arg, kb.splat(memref::LoadOp::create(kb.b, kb.loc,
                                                     input->get(), idx)));
    }
    for (Operation &op : body.without_terminator()) {
      if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
        map.map(op.getResult(0),
                kb.splat(arith::ConstantOp::create(kb.b, kb.loc, cst.getValue())));
        continue;
      }
      OperationState state(kb.loc, op.getName());
      for (Value operand : op.getOperands()) {
        // A scalar from above the body (findEpilogue checked: f32) is splat.
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
};

/// The output side of a conv / depthwise block: accumulator (i, v) starts
/// from the fill value (or what `out` holds) and is stored at `outIndex(i,
/// v)` into `out`, or through the epilogue if there is one.
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
std::optional<SmallVector<int64_t>> unitReshapeDims(Operation *reshape) {
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

/// Finds the epilogue of a kernel writing `out` (see Epilogue).
std::optional<Epilogue> findEpilogue(Operation *kernel, Value out,
                                     Operation *initCopy) {
  if (!out.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  Operation *next = kernel->getNextNode();
  while (next && (isa<arith::ConstantOp, memref::AllocOp, memref::GetGlobalOp>(
                      next) ||
                  isa<ViewLikeOpInterface>(next)))
    next = next->getNextNode();
  auto generic = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      !generic.hasPureBufferSemantics())
    return std::nullopt;
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
  if (reshape) {
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
          llvm::none_of(user->getResultTypes(),
                        llvm::IsaPred<BaseMemRefType>))
        continue;
      if (!inPlace || !top || !generic->isBeforeInBlock(top))
        return std::nullopt;
    }
  // The generic may write a strided view of the same shape (the interior of
  // a padded buffer, kiln-decompose-pads).
  auto initType = dyn_cast<MemRefType>(init->get().getType());
  if (!initType || initType.getShape() != accType.getShape() ||
      initType.getElementType() != accType.getElementType() ||
      !generic.getMatchingIndexingMap(init).isIdentity() ||
      !innerUnitStride(init->get()))
    return std::nullopt;
  if (generic.getRegion().front().getArgument(init->getOperandNumber()).use_empty() ==
      false)
    return std::nullopt;
  std::optional<unsigned> accInput;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap m = generic.getMatchingIndexingMap(input);
    if (input->get() == acc) {
      if (accInput || !m.isIdentity())
        return std::nullopt;
      accInput = input->getOperandNumber();
      continue;
    }
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || !m.isProjectedPermutation(/*allowZeroInResults=*/true) ||
        !innerUnitStride(input->get()))
      return std::nullopt;
    // The innermost loop, if read, must be the input's innermost dim.
    unsigned last = accType.getRank() - 1;
    for (auto [i, e] : llvm::enumerate(m.getResults()))
      if (e.isFunctionOfDim(last) && i + 1 != m.getNumResults())
        return std::nullopt;
  }
  if (!accInput)
    return std::nullopt;
  // The kernel must not read the buffer the epilogue writes (a recurrence
  // h = f(h * R) updating h in place).
  auto root = [](Value v) {
    while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
      v = view.getViewSource();
    return v;
  };
  Value written = root(init->get());
  for (Value operand : kernel->getOperands())
    if (operand != out && root(operand) == written)
      return std::nullopt;
  Region &region = generic.getRegion();
  for (Operation &op : region.front().without_terminator()) {
    for (Value operand : op.getOperands())
      if (operand.getParentRegion() != &region && !operand.getType().isF32())
        return std::nullopt;
    if (isa<arith::ConstantOp>(op)) {
      if (!isa<FloatType>(op.getResult(0).getType()))
        return std::nullopt;
      continue;
    }
    if (op.getNumRegions() || !op.hasTrait<OpTrait::Elementwise>() ||
        !op.hasTrait<OpTrait::Vectorizable>() ||
        !isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) ||
        !llvm::all_of(op.getResultTypes(),
                      [](Type t) { return t.isF32() || t.isInteger(1); }))
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
  return Epilogue{generic, init->get(), *accInput, kernelDims};
}

/// Emits `body(vecs, lastLanes)` for panel `p` of `panels` column panels
/// of `fullVecs` vectors: full panels, and the last one when `tailCols`
/// columns are left (fewer vectors, masked last vector).
void emitColumnShapes(
    KernelBuilder &kb, Value p, int64_t fullPanels, int64_t tailCols,
    int64_t fullVecs,
    function_ref<void(KernelBuilder &, int64_t, int64_t)> body) {
  int64_t vw = kb.vw;
  int64_t tailVecs = (tailCols + vw - 1) / vw;
  int64_t tailLanes = tailCols - (tailVecs - 1) * vw;
  if (!tailCols)
    return body(kb, fullVecs, vw);
  if (!fullPanels)
    return body(kb, tailVecs, tailLanes);
  Value isTail = arith::CmpIOp::create(kb.b, kb.loc, arith::CmpIPredicate::eq,
                                       p, kb.idx(fullPanels));
  emitIf(
      kb.b, kb.loc, isTail,
      [&](OpBuilder &nb) {
        KernelBuilder x{nb, kb.loc, vw, kb.vt};
        body(x, tailVecs, tailLanes);
      },
      [&](OpBuilder &nb) {
        KernelBuilder x{nb, kb.loc, vw, kb.vt};
        body(x, fullVecs, vw);
      });
}

/// Rows split into register blocks of `mr` rows and the blocks into `groups`
/// parallel chunks of `blocksPerGroup` full blocks; the last group also takes
/// the rows left over. A group's blocks reuse one column panel of B from
/// cache.
///
/// A short block is latency-bound: its few accumulator chains cannot keep
/// both FMA units busy (1 row x 2 vectors: 2 chains where ~8 are needed), so
/// it costs about as much as a 4-row block. The last full block and a short
/// tail are therefore run as two blocks of balanced height (7 = 4 + 3
/// instead of 6 + 1: ResNet-50's 7x7 maps have 49 pixels, BERT's 128
/// tokens end with 2 rows).
struct RowGroups {
  int64_t mr, fullRowBlocks, tailRows, groups, blocksPerGroup;

  RowGroups(int64_t rows, int64_t mr, int64_t maxBlocksPerGroup)
      : mr(mr), fullRowBlocks(rows / mr), tailRows(rows % mr) {
    groups = std::max<int64_t>(
        1, (fullRowBlocks + maxBlocksPerGroup - 1) / maxBlocksPerGroup);
    blocksPerGroup = (fullRowBlocks + groups - 1) / groups;
  }

  /// Emits the blocks of group `g`; `block(row0, rows)` emits one.
  void emit(KernelBuilder &kb, Value g,
            function_ref<void(KernelBuilder &, Value, int64_t)> block) const {
    Location loc = kb.loc;
    // Full blocks run in the loop; the rows after them in up to two blocks.
    bool balance = tailRows && fullRowBlocks > 0 && tailRows * 2 <= mr;
    int64_t loopBlocks = balance ? fullRowBlocks - 1 : fullRowBlocks;
    if (loopBlocks) {
      Value lo = kb.mul(g, blocksPerGroup);
      Value hi = arith::MinUIOp::create(kb.b, loc, kb.add(lo, blocksPerGroup),
                                        kb.idx(loopBlocks));
      auto loop = scf::ForOp::create(kb.b, loc, lo, hi, kb.idx(1));
      OpBuilder::InsertionGuard guard(kb.b);
      kb.b.setInsertionPointToStart(loop.getBody());
      block(kb, kb.mul(loop.getInductionVar(), mr), mr);
    }
    if (!tailRows)
      return;
    auto tail = [&](OpBuilder &rb) {
      KernelBuilder z{rb, loc, kb.vw, kb.vt};
      int64_t row0 = loopBlocks * mr;
      if (!balance)
        return block(z, z.idx(row0), tailRows);
      int64_t left = mr + tailRows, first = (left + 1) / 2;
      block(z, z.idx(row0), first);
      block(z, z.idx(row0 + first), left - first);
    };
    if (groups == 1)
      return tail(kb.b);
    Value isLast = arith::CmpIOp::create(kb.b, loc, arith::CmpIPredicate::eq,
                                         g, kb.idx(groups - 1));
    emitIf(kb.b, loc, isLast, tail, [](OpBuilder &) {});
  }
};

class Emitter {
public:
  Emitter(ModuleOp module, int64_t vw) : module(module), symbols(module), vw(vw) {}

  /// Packs the constant behind `weights` (viewed as [batch][R][N]) into
  /// panels [batch][NP][redShape...][NR] (no batch dim when `batch` is 0);
  /// returns the packed buffer or null.
  Value packWeights(OpBuilder &b, Location loc, Value weights,
                    ArrayRef<int64_t> redShape, int64_t n, int64_t nr,
                    int64_t batch = 0) {
    auto getGlobal = weights.getDefiningOp<memref::GetGlobalOp>();
    if (!getGlobal)
      return {};
    auto global = symbols.lookup<memref::GlobalOp>(getGlobal.getName());
    if (!global || !global.getConstant() || !global.getInitialValue())
      return {};
    std::string key = (getGlobal.getName() + "/" + Twine(nr) + "/" +
                       Twine(redShape.size()) + "/" + Twine(batch))
                          .str();
    memref::GlobalOp packed = packedGlobals.lookup(key);
    int64_t r = 1;
    for (int64_t d : redShape)
      r *= d;
    int64_t np = (n + nr - 1) / nr;
    int64_t batches = std::max<int64_t>(batch, 1);
    SmallVector<int64_t> shape;
    if (batch)
      shape.push_back(batch);
    shape.push_back(np);
    shape.append(redShape.begin(), redShape.end());
    shape.push_back(nr);
    auto type = MemRefType::get(shape, b.getF32Type());
    if (!packed) {
      std::optional<SmallVector<float>> data =
          kiln::f32ConstantData(*global.getInitialValue());
      if (!data || (int64_t)data->size() != batches * r * n)
        return {};
      SmallVector<float> out(batches * np * r * nr, 0.0f);
      for (int64_t bt = 0; bt < batches; ++bt) {
        const float *in = data->data() + bt * r * n;
        float *to = out.data() + bt * np * r * nr;
        for (int64_t p = 0; p < np; ++p)
          for (int64_t k = 0; k < r; ++k)
            for (int64_t j = 0; j < nr && p * nr + j < n; ++j)
              to[(p * r + k) * nr + j] = in[k * n + p * nr + j];
      }
      Attribute init = kiln::f32ConstantAttr(
          RankedTensorType::get(shape, b.getF32Type()), out, "kiln_packed");
      OpBuilder mb(module.getBodyRegion());
      mb.setInsertionPoint(global);
      packed = memref::GlobalOp::create(
          mb, loc, mb.getStringAttr(global.getSymName() + "_packed"),
          mb.getStringAttr("private"), TypeAttr::get(type), init,
          mb.getUnitAttr(), mb.getI64IntegerAttr(64));
      symbols.insert(packed); // renames on collision
      packedGlobals[key] = packed;
    }
    return memref::GetGlobalOp::create(b, loc, type, packed.getSymName());
  }

  /// The constant `out` holds when `op` starts, when it comes from a fill of
  /// `out`, or from a copy right before `op` of a buffer filled earlier
  /// (bufferization copies a fill shared by several ops into all but the
  /// last, which writes the filled buffer itself, wherever the fill is).
  struct InitFill {
    Value value;
    Operation *fill = nullptr;   // fill of `out` (erased unless copies
                                 // between it and `kernel` still read it)
    Operation *kernel = nullptr;
    Operation *copy = nullptr; // copy into `out` (erased, and its source's
                               // fill when nothing else reads it)
    void erase() {
      auto readsFill = [&](Operation *user) {
        Operation *top = fill->getBlock()->findAncestorOpInBlock(*user);
        return isa<memref::CopyOp>(user) &&
               (!top || (fill->isBeforeInBlock(top) &&
                         top->isBeforeInBlock(kernel)));
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
  };

  /// The f32 fill whose value the allocation `buffer` holds right before
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
    if (!fill || fill.getOutputs()[0] != buffer ||
        !fill.value().getType().isF32())
      return {};
    return fill;
  }

  static InitFill fusableFill(Operation *op, Value out) {
    Operation *prev = op->getPrevNode();
    while (prev && isa<arith::ConstantOp, memref::GetGlobalOp>(prev))
      prev = prev->getPrevNode();
    if (auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
        fill && fill.getOutputs()[0] == out) {
      if (!fill.value().getType().isF32())
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

  LogicalResult matmul(linalg::LinalgOp op, bool batched);
  LogicalResult conv(linalg::Conv2DNhwcHwcfOp op);
  LogicalResult depthwise(linalg::DepthwiseConv2DNhwcHwcOp op);
  LogicalResult pooling(linalg::LinalgOp op);

  /// A depthwise conv or NHWC pooling: each output channel reads only its
  /// own input channel over the (kh, kw) window.
  struct ChannelWindow {
    Operation *op;
    Value in, w, out; // w: the depthwise filter, null for pooling
    int64_t kh, kw;
    SmallVector<int64_t> strides, dilations;
    /// Pooling's combiner (BlockSpec::combine); null: FMA with w.
    std::function<Value(KernelBuilder &, Value, Value)> combine;
  };
  LogicalResult channelWindow(const ChannelWindow &cw);

private:
  ModuleOp module;
  SymbolTable symbols;
  int64_t vw;
  llvm::StringMap<memref::GlobalOp> packedGlobals;
};

//===----------------------------------------------------------------------===//
// Matmul: C[b][m][n] += A[b][m][k] * B[b][k][n]
//===----------------------------------------------------------------------===//

/// Rows per parallel chunk of a matmul (in register blocks).
constexpr int64_t kRowBlocksPerChunk = 16;
/// Up to this many rows a matmul is one row group.
constexpr int64_t kSingleGroupRows = 256;
/// Packed B per parallel task of a conv: the column panels that each
/// register block's rows run over (from L2).
constexpr int64_t kPanelChunkBytes = 192 * 1024;
/// Fewest parallel tasks of a conv, where its panels allow.
constexpr int64_t kMinConvTasks = 8;
/// Reduction block (K over twice this is blocked): long enough that C's
/// partial sums are rarely reloaded, short enough that the rows' A block and
/// the B panel stay in L2. BERT-base at 1 thread ran 2% faster than with 256,
/// on Zen 4 (AVX-512, B panel 512 x 64 floats) and on Zen 1 (AVX2; its K = 768
/// matmuls now unblocked).
constexpr int64_t kReductionBlock = 512;

LogicalResult Emitter::matmul(linalg::LinalgOp op, bool batched) {
  Value a = op.getDpsInputs()[0], bMat = op.getDpsInputs()[1],
        c = op.getDpsInits()[0];
  if (!innerUnitStride(a) || !innerUnitStride(bMat) || !innerUnitStride(c))
    return failure();
  // Plain (non-broadcasting, non-transposed) forms only.
  if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation());
      mm && mm.hasUserDefinedMaps())
    return failure();
  if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation());
      bmm && bmm.hasUserDefinedMaps())
    return failure();
  ArrayRef<int64_t> cShape = cast<MemRefType>(c.getType()).getShape();
  int64_t batch = batched ? cShape[0] : 1;
  int64_t m = cShape[batched], n = cShape[batched + 1];
  int64_t k = cast<MemRefType>(a.getType()).getShape().back();

  OpBuilder b(op);
  Location loc = op->getLoc();
  KernelBuilder kb{b, loc, vw, VectorType::get({vw}, b.getF32Type())};
  Blocking blk = chooseBlocking(n, vw, m);
  int64_t nr = blk.vecs * vw;
  int64_t mr = std::min(blk.rows, m);

  InitFill fill = fusableFill(op, c);
  Value fillValue = fill.value;
  std::optional<Epilogue> epilogue = findEpilogue(op, c, fill.copy);

  // A constant B is packed per batch (the Winograd products' 16 filters).
  Value packed = packWeights(b, loc, bMat, {k}, n, nr, batched ? batch : 0);

  // Few rows (a transformer's 128 tokens): one group, so each B panel is
  // streamed from memory once, not once per group.
  RowGroups rowGroups(m, mr,
                      m <= kSingleGroupRows ? INT64_MAX : kRowBlocksPerChunk);
  int64_t fullPanels = n / nr, tailCols = n % nr;
  int64_t panels = fullPanels + (tailCols ? 1 : 0);
  int64_t kc = k > 2 * kReductionBlock ? kReductionBlock : k;
  int64_t tasksPerBatch = rowGroups.groups * panels;

  emitParallel(b, loc, batch * tasksPerBatch, [&](OpBuilder &pb, Value flat) {
    KernelBuilder k2{pb, loc, vw, kb.vt};
    Value bi = arith::DivUIOp::create(pb, loc, flat, k2.idx(tasksPerBatch));
    Value rest = arith::RemUIOp::create(pb, loc, flat, k2.idx(tasksPerBatch));
    Value g = arith::DivUIOp::create(pb, loc, rest, k2.idx(panels));
    Value p = arith::RemUIOp::create(pb, loc, rest, k2.idx(panels));
    Value col0 = k2.mul(p, nr);

    // One block at (row0, col0) over reduction [k0, k1); `first` (i1) says
    // whether the accumulator starts from the fill, `last` whether this is
    // the final reduction block (the epilogue is applied and stored there;
    // partial sums go to C).
    auto block = [&](KernelBuilder &kk, Value row0, int64_t rows, int64_t vecs,
                     int64_t lastLanes, Value k0, Value k1, Value first,
                     bool last) {
      auto cIdx = [&](KernelBuilder &x, int64_t i, int64_t v) {
        SmallVector<Value> ix;
        if (batched)
          ix.push_back(bi);
        ix.push_back(x.add(row0, i));
        ix.push_back(x.add(col0, v * vw));
        return ix;
      };
      BlockSpec spec;
      spec.rows = rows;
      spec.vecs = vecs;
      spec.lastLanes = lastLanes;
      spec.reduction.push_back({k0, k1});
      spec.init = [&](KernelBuilder &x, int64_t i, int64_t v, Value msk) {
        if (!fillValue)
          return x.load(c, cIdx(x, i, v), msk);
        Value splat = x.splat(fillValue);
        if (!first)
          return splat;
        auto ifOp = scf::IfOp::create(
            x.b, x.loc, first,
            [&](OpBuilder &nb, Location l) {
              scf::YieldOp::create(nb, l, splat);
            },
            [&](OpBuilder &nb, Location l) {
              KernelBuilder y{nb, l, vw, x.vt};
              scf::YieldOp::create(nb, l, y.load(c, cIdx(y, i, v), msk));
            });
        return ifOp.getResult(0);
      };
      spec.store = [&](KernelBuilder &x, int64_t i, int64_t v, Value val,
                       Value msk) {
        SmallVector<Value> ix = cIdx(x, i, v);
        if (!epilogue || !last)
          return x.store(val, c, ix, msk);
        epilogue->store(x, val, ix, msk);
      };
      spec.loadA = [&](KernelBuilder &x, ValueRange ivs, int64_t i, int64_t,
                       Value) -> Value {
        SmallVector<Value> ix;
        if (batched)
          ix.push_back(bi);
        ix.push_back(x.add(row0, i));
        ix.push_back(ivs[0]);
        return memref::LoadOp::create(x.b, x.loc, a, ix);
      };
      spec.loadB = [&](KernelBuilder &x, ValueRange ivs, int64_t v,
                       Value msk) -> Value {
        if (packed && batched)
          return x.load(packed, {bi, p, ivs[0], x.idx(v * vw)}, Value());
        if (packed)
          return x.load(packed, {p, ivs[0], x.idx(v * vw)}, Value());
        SmallVector<Value> ix;
        if (batched)
          ix.push_back(bi);
        ix.push_back(ivs[0]);
        ix.push_back(x.add(col0, v * vw));
        return x.load(bMat, ix, msk);
      };
      emitBlock(kk, spec);
    };

    // Row blocks of group g (or the tail rows) for one column shape.
    auto columns = [&](KernelBuilder &x, int64_t vecs, int64_t lastLanes) {
      auto rowsOf = [&](KernelBuilder &y, Value k0, Value k1, Value first,
                        bool last) {
        rowGroups.emit(y, g, [&](KernelBuilder &z, Value row0, int64_t rows) {
          block(z, row0, rows, vecs, lastLanes, k0, k1, first, last);
        });
      };
      if (kc == k) {
        rowsOf(x, x.idx(0), x.idx(k), Value(), /*last=*/true);
        return;
      }
      // All reduction blocks but the last, then the last one (peeled: it
      // applies the epilogue).
      int64_t lastStart = (k - 1) / kc * kc;
      {
        auto kLoop =
            scf::ForOp::create(x.b, loc, x.idx(0), x.idx(lastStart), x.idx(kc));
        OpBuilder::InsertionGuard guard(x.b);
        x.b.setInsertionPointToStart(kLoop.getBody());
        Value k0 = kLoop.getInductionVar();
        Value first = arith::CmpIOp::create(x.b, loc, arith::CmpIPredicate::eq,
                                            k0, x.idx(0));
        rowsOf(x, k0, x.add(k0, kc), first, /*last=*/false);
      }
      Value notFirst = arith::ConstantIntOp::create(x.b, loc, 0, 1);
      rowsOf(x, x.idx(lastStart), x.idx(k), notFirst, /*last=*/true);
    };

    emitColumnShapes(k2, p, fullPanels, tailCols, blk.vecs, columns);
  });
  if (epilogue)
    epilogue->generic->erase();
  fill.erase();
  op->erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Conv: O[n][oh][ow][f] += I[n][oh*s+kh*d][ow*s+kw*d][c] * W[kh][kw][c][f]
//===----------------------------------------------------------------------===//

LogicalResult Emitter::conv(linalg::Conv2DNhwcHwcfOp op) {
  Value in = op.getInputs()[0], w = op.getInputs()[1], out = op.getOutputs()[0];
  if (!innerUnitStride(in) || !innerUnitStride(w) || !innerUnitStride(out))
    return failure();
  ArrayRef<int64_t> oShape = cast<MemRefType>(out.getType()).getShape();
  ArrayRef<int64_t> wShape = cast<MemRefType>(w.getType()).getShape();
  int64_t nb = oShape[0], oh = oShape[1], ow = oShape[2], f = oShape[3];
  int64_t kh = wShape[0], kw = wShape[1], ch = wShape[2];
  auto strides = llvm::to_vector(op.getStrides().getValues<int64_t>());
  auto dilations = llvm::to_vector(op.getDilations().getValues<int64_t>());

  OpBuilder b(op);
  Location loc = op->getLoc();
  KernelBuilder kb{b, loc, vw, VectorType::get({vw}, b.getF32Type())};
  int64_t pixels = nb * oh * ow;
  Blocking blk = chooseBlocking(f, vw, pixels);
  int64_t nr = blk.vecs * vw;
  int64_t mr = std::min(blk.rows, pixels);
  InitFill fill = fusableFill(op, out);
  Value fillValue = fill.value;
  std::optional<Epilogue> epilogue = findEpilogue(op, out, fill.copy);
  // Without dilation along W, one filter row's taps (kw, c) are contiguous
  // in the input: one reduction loop of kw * ch instead of two (the stem's
  // 7 x 3 taps were loops of 3). The input is viewed as [n][h][w * c].
  SmallVector<ReassociationIndices> mergeWC = {{0}, {1}, {2, 3}};
  bool mergeTaps =
      dilations[1] == 1 && kw > 1 &&
      memref::CollapseShapeOp::isGuaranteedCollapsible(
          cast<MemRefType>(in.getType()), mergeWC);
  Value packed = mergeTaps ? packWeights(b, loc, w, {kh, kw * ch}, f, nr)
                           : packWeights(b, loc, w, {kh, kw, ch}, f, nr);
  mergeTaps = mergeTaps && packed;
  Value inRows =
      mergeTaps ? memref::CollapseShapeOp::create(b, loc, in, mergeWC).getResult()
                : Value();

  int64_t fullPanels = f / nr, tailCols = f % nr;
  int64_t panels = fullPanels + (tailCols ? 1 : 0);
  // Output pixels (n, y, x) flattened into one row dimension, like a matmul's
  // M: a register block may span output rows, so narrow images (7x7, 14x14)
  // do not end every row with a short, latency-bound block.
  RowGroups rowGroups(pixels, mr, kRowBlocksPerChunk);

  // A task is a row group x a chunk of column panels, and each register
  // block's rows run over the chunk's panels: the rows' A stays in L1 and
  // their pixel indices are computed once, while the chunk's packed B (at
  // most kPanelChunkBytes) is read from L2 (1 thread: MobileNetV2 -7%,
  // ResNet-50 -4%, SqueezeNet -3%).
  int64_t panelBytes = kh * kw * ch * nr * 4;
  int64_t maxChunkPanels =
      std::clamp<int64_t>(kPanelChunkBytes / panelBytes, 1, panels);
  int64_t chunks = (panels + maxChunkPanels - 1) / maxChunkPanels;
  // Small images (SqueezeNet's 13x13: 2 row groups) still get a few tasks per
  // thread.
  chunks = std::max(chunks, std::min(panels, (kMinConvTasks + rowGroups.groups -
                                              1) / rowGroups.groups));
  // An even number of tasks, so two threads take equal shares: MobileNetV2's
  // 7x7 and 14x14 convs ran 5, 7 or 9 tasks (one thread did 5 of 9).
  if (rowGroups.groups * chunks % 2 && chunks < panels)
    ++chunks;

  emitParallel(b, loc, rowGroups.groups * chunks, [&](OpBuilder &pb,
                                                      Value flat) {
    KernelBuilder k2{pb, loc, vw, kb.vt};
    Value g = arith::DivUIOp::create(pb, loc, flat, k2.idx(chunks));
    Value chunk = arith::RemUIOp::create(pb, loc, flat, k2.idx(chunks));
    // Chunk c holds panels [c * panels / chunks, (c + 1) * panels / chunks):
    // sizes differ by at most one.
    auto chunkStart = [&](Value c) {
      return arith::DivUIOp::create(pb, loc, k2.mul(c, panels),
                                    k2.idx(chunks))
          .getResult();
    };
    Value p0 = chunkStart(chunk);
    Value p1 = chunkStart(k2.add(chunk, 1));
    Value p, col0; // the panel and its first column, set per block below

    auto block = [&](KernelBuilder &x, Value m0, int64_t rows) {
      // Each row's pixel and the input position of its window, once per
      // block (outside the reduction loops).
      SmallVector<Value> bIdx, yIdx, xIdx, iyIdx, ixIdx;
      for (int64_t i = 0; i < rows; ++i) {
        Value m = x.add(m0, i);
        Value r = arith::RemUIOp::create(x.b, loc, m, x.idx(oh * ow));
        bIdx.push_back(arith::DivUIOp::create(x.b, loc, m, x.idx(oh * ow)));
        yIdx.push_back(arith::DivUIOp::create(x.b, loc, r, x.idx(ow)));
        xIdx.push_back(arith::RemUIOp::create(x.b, loc, r, x.idx(ow)));
        iyIdx.push_back(x.mul(yIdx.back(), strides[0]));
        ixIdx.push_back(x.mul(xIdx.back(), strides[1]));
      }
      auto oIdx = [&](KernelBuilder &z, int64_t i, int64_t v) {
        return SmallVector<Value>{bIdx[i], yIdx[i], xIdx[i],
                                  z.add(col0, v * vw)};
      };
      auto kernel = [&](KernelBuilder &y, int64_t vecs, int64_t lastLanes) {
        BlockSpec spec;
        spec.rows = rows;
        spec.vecs = vecs;
        spec.lastLanes = lastLanes;
        spec.reduction = {{y.idx(0), y.idx(kh)},
                          {y.idx(0), y.idx(kw)},
                          {y.idx(0), y.idx(ch)}};
        if (mergeTaps)
          spec.reduction = {{y.idx(0), y.idx(kh)}, {y.idx(0), y.idx(kw * ch)}};
        setConvOutput(spec, fillValue, out, epilogue, oIdx);
        spec.loadA = [&](KernelBuilder &z, ValueRange ivs, int64_t i,
                         int64_t, Value) -> Value {
          if (mergeTaps) {
            Value iy = z.add(iyIdx[i], z.mul(ivs[0], dilations[0]));
            Value tap = z.add(z.mul(ixIdx[i], ch), ivs[1]);
            return memref::LoadOp::create(z.b, z.loc, inRows,
                                          ValueRange{bIdx[i], iy, tap});
          }
          Value iy = z.add(iyIdx[i], z.mul(ivs[0], dilations[0]));
          Value ix = z.add(ixIdx[i], z.mul(ivs[1], dilations[1]));
          return memref::LoadOp::create(
              z.b, z.loc, in, ValueRange{bIdx[i], iy, ix, ivs[2]});
        };
        // Past the end of a filter row this prefetches the next one (packed
        // B is contiguous).
        bool prefetchB = packed && panelBytes > kL1PanelBytes;
        if (prefetchB && mergeTaps)
          spec.prefetchB = [&](KernelBuilder &z, ValueRange ivs) {
            prefetch(z, packed,
                     {p, ivs[0], z.add(ivs[1], kPrefetchSteps), z.idx(0)});
          };
        else if (prefetchB)
          spec.prefetchB = [&](KernelBuilder &z, ValueRange ivs) {
            prefetch(z, packed,
                     {p, ivs[0], ivs[1], z.add(ivs[2], kPrefetchSteps),
                      z.idx(0)});
          };
        spec.loadB = [&](KernelBuilder &z, ValueRange ivs, int64_t v,
                         Value msk) -> Value {
          if (mergeTaps)
            return z.load(packed, {p, ivs[0], ivs[1], z.idx(v * vw)},
                          Value());
          if (packed)
            return z.load(packed,
                          {p, ivs[0], ivs[1], ivs[2], z.idx(v * vw)},
                          Value());
          return z.load(w, {ivs[0], ivs[1], ivs[2], z.add(col0, v * vw)},
                        msk);
        };
        emitBlock(y, spec);
      };
      auto loop = scf::ForOp::create(x.b, loc, p0, p1, x.idx(1));
      OpBuilder::InsertionGuard guard(x.b);
      x.b.setInsertionPointToStart(loop.getBody());
      p = loop.getInductionVar();
      col0 = x.mul(p, nr);
      emitColumnShapes(x, p, fullPanels, tailCols, blk.vecs, kernel);
    };

    rowGroups.emit(k2, g, block);
  });
  if (epilogue)
    epilogue->generic->erase();
  fill.erase();
  op->erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Depthwise: O[n][oh][ow][c] += I[n][oh*s+kh*d][ow*s+kw*d][c] * W[kh][kw][c]
// Pooling:   O[n][oh][ow][c] = max / sum of I[n][oh*s+kh*d][ow*s+kw*d][c]
//===----------------------------------------------------------------------===//

LogicalResult Emitter::depthwise(linalg::DepthwiseConv2DNhwcHwcOp op) {
  Value w = op.getInputs()[1];
  if (!innerUnitStride(w))
    return failure();
  ArrayRef<int64_t> wShape = cast<MemRefType>(w.getType()).getShape();
  return channelWindow({op, op.getInputs()[0], w, op.getOutputs()[0],
                        wShape[0], wShape[1],
                        llvm::to_vector(op.getStrides().getValues<int64_t>()),
                        llvm::to_vector(op.getDilations().getValues<int64_t>()),
                        nullptr});
}

/// NHWC max / sum pooling (MaxPool, and AveragePool's sum before its
/// division, which then fuses as the epilogue): the depthwise kernel with the
/// window's taps combined by max / add. Generically lowered, the output was
/// loaded and stored once per tap (LLVM turned the NaN-propagating max into
/// masked stores): 10% of SqueezeNet's run.
LogicalResult Emitter::pooling(linalg::LinalgOp op) {
  bool isMax = isa<linalg::PoolingNhwcMaxOp>(op.getOperation());
  auto strides = op->getAttrOfType<DenseIntElementsAttr>("strides");
  auto dilations = op->getAttrOfType<DenseIntElementsAttr>("dilations");
  ArrayRef<int64_t> window =
      cast<MemRefType>(op.getDpsInputs()[1].getType()).getShape();
  if (!strides || !dilations)
    return failure();
  auto combine = [isMax](KernelBuilder &z, Value a, Value acc) -> Value {
    if (isMax)
      return arith::MaximumFOp::create(z.b, z.loc, acc, a);
    return arith::AddFOp::create(z.b, z.loc, acc, a);
  };
  return channelWindow({op, op.getDpsInputs()[0], Value(), op.getDpsInits()[0],
                        window[0], window[1],
                        llvm::to_vector(strides.getValues<int64_t>()),
                        llvm::to_vector(dilations.getValues<int64_t>()),
                        combine});
}

LogicalResult Emitter::channelWindow(const ChannelWindow &cw) {
  Operation *op = cw.op;
  Value in = cw.in, w = cw.w, out = cw.out;
  if (!innerUnitStride(in) || !innerUnitStride(out))
    return failure();
  ArrayRef<int64_t> oShape = cast<MemRefType>(out.getType()).getShape();
  int64_t nb = oShape[0], oh = oShape[1], ow = oShape[2], ch = oShape[3];
  int64_t kh = cw.kh, kw = cw.kw;
  ArrayRef<int64_t> strides = cw.strides, dilations = cw.dilations;

  OpBuilder b(op);
  Location loc = op->getLoc();
  KernelBuilder kb{b, loc, vw, VectorType::get({vw}, b.getF32Type())};
  // rows (output columns) x vecs (channel vectors): rows*vecs accumulators,
  // vecs filter vectors (depthwise), one input vector.
  int64_t chVecs = (ch + vw - 1) / vw;
  int64_t vecs = std::min<int64_t>(chVecs, 2);
  int64_t rows = std::min<int64_t>(ow, numRegisters(vw) == 16 ? 4 : 8);
  int64_t cb = vecs * vw;
  InitFill fill = fusableFill(op, out);
  Value fillValue = fill.value;
  std::optional<Epilogue> epilogue = findEpilogue(op, out, fill.copy);

  int64_t fullPanels = ch / cb, tailCols = ch % cb;
  int64_t panels = fullPanels + (tailCols ? 1 : 0);
  int64_t fullRowBlocks = ow / rows, tailRows = ow % rows;

  emitParallel(b, loc, nb * oh * panels, [&](OpBuilder &pb, Value flat) {
    KernelBuilder k2{pb, loc, vw, kb.vt};
    Value row = arith::DivUIOp::create(pb, loc, flat, k2.idx(panels));
    Value p = arith::RemUIOp::create(pb, loc, flat, k2.idx(panels));
    Value bi = arith::DivUIOp::create(pb, loc, row, k2.idx(oh));
    Value y = arith::RemUIOp::create(pb, loc, row, k2.idx(oh));
    Value col0 = k2.mul(p, cb);
    Value iy0 = k2.mul(y, strides[0]);

    auto block = [&](KernelBuilder &x, Value ow0, int64_t nrows, int64_t nvecs,
                     int64_t lastLanes) {
      auto oIdx = [&](KernelBuilder &z, int64_t i, int64_t v) {
        return SmallVector<Value>{bi, y, z.add(ow0, i), z.add(col0, v * vw)};
      };
      BlockSpec spec;
      spec.rows = nrows;
      spec.vecs = nvecs;
      spec.lastLanes = lastLanes;
      spec.broadcastA = false;
      spec.reduction = {{x.idx(0), x.idx(kh)}, {x.idx(0), x.idx(kw)}};
      setConvOutput(spec, fillValue, out, epilogue, oIdx);
      spec.loadA = [&](KernelBuilder &z, ValueRange ivs, int64_t i, int64_t v,
                       Value msk) -> Value {
        Value iy = z.add(iy0, z.mul(ivs[0], dilations[0]));
        Value ix = z.add(z.mul(z.add(ow0, i), strides[1]),
                         z.mul(ivs[1], dilations[1]));
        return z.load(in, {bi, iy, ix, z.add(col0, v * vw)}, msk);
      };
      if (w)
        spec.loadB = [&](KernelBuilder &z, ValueRange ivs, int64_t v,
                         Value msk) -> Value {
          return z.load(w, {ivs[0], ivs[1], z.add(col0, v * vw)}, msk);
        };
      spec.combine = cw.combine;
      emitBlock(x, spec);
    };

    auto columns = [&](KernelBuilder &x, int64_t nvecs, int64_t lastLanes) {
      if (fullRowBlocks) {
        auto loop = scf::ForOp::create(x.b, loc, x.idx(0),
                                       x.idx(fullRowBlocks * rows), x.idx(rows));
        OpBuilder::InsertionGuard guard(x.b);
        x.b.setInsertionPointToStart(loop.getBody());
        block(x, loop.getInductionVar(), rows, nvecs, lastLanes);
      }
      if (tailRows)
        block(x, x.idx(fullRowBlocks * rows), tailRows, nvecs, lastLanes);
    };

    emitColumnShapes(k2, p, fullPanels, tailCols, vecs, columns);
  });
  if (epilogue)
    epilogue->generic->erase();
  fill.erase();
  op->erase();
  return success();
}

struct EmitMicrokernelsPass
    : kiln::impl::KilnEmitMicrokernelsPassBase<EmitMicrokernelsPass> {
  using KilnEmitMicrokernelsPassBase::KilnEmitMicrokernelsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> work;
    module.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() &&
          isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNhwcHwcfOp,
              linalg::DepthwiseConv2DNhwcHwcOp, linalg::PoolingNhwcMaxOp,
              linalg::PoolingNhwcSumOp>(op.getOperation()))
        work.push_back(op);
    });
    Emitter emitter(module, vectorWidth);
    for (Operation *op : work) {
      if (auto mm = dyn_cast<linalg::MatmulOp>(op))
        (void)emitter.matmul(mm, /*batched=*/false);
      else if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op))
        (void)emitter.matmul(bmm, /*batched=*/true);
      else if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op))
        (void)emitter.conv(conv);
      else if (auto dw = dyn_cast<linalg::DepthwiseConv2DNhwcHwcOp>(op))
        (void)emitter.depthwise(dw);
      else
        (void)emitter.pooling(cast<linalg::LinalgOp>(op));
    }
  }
};

} // namespace
