//===- LowerConfiguredOps.cpp - workgroup kernels from kiln.gpu_lowering --===//
//
// The emitters of the fast paths: each reads the configuration
// kiln-gpu-select-lowering-config wrote and builds a gpu.launch with
// workgroup memory attributions and gpu.barrier ops, nothing
// target-specific, so the SPIR-V and NVVM targets lower the same IR. Ops
// configured `generic` are left to the generic mapping.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/Common/LoweringConfig.h"
#include "codegen/GPU/Passes.h"
#include "dialects/ONNX/Diagnostics.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/MathExtras.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPULOWERCONFIGUREDOPSPASS
#include "codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

/// The static sizes of `dims` (a contraction's m, n, k or batch loops) and
/// their product, for the tiled kernels' index arithmetic.
static SmallVector<int64_t> loopSizes(ArrayRef<int64_t> ranges,
                                      ArrayRef<unsigned> dims,
                                      int64_t &product) {
  SmallVector<int64_t> sizes;
  product = 1;
  for (unsigned dim : dims) {
    sizes.push_back(ranges[dim]);
    product *= ranges[dim];
  }
  return sizes;
}

namespace {

constexpr int64_t kMaxWorkgroups = 65535;

/// Index arithmetic inside a kernel body.
struct IndexBuilder {
  OpBuilder &b;
  Location loc;

  Value cst(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, cst(y)) : x; }
  Value mul(Value x, int64_t y) {
    return y == 1 ? x : arith::MulIOp::create(b, loc, x, cst(y)).getResult();
  }
  Value min(Value x, int64_t y) {
    return arith::MinUIOp::create(b, loc, x, cst(y));
  }
  Value ult(Value x, int64_t y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, cst(y));
  }
  Value divCst(Value x, int64_t y) {
    return y == 1 ? x : arith::DivUIOp::create(b, loc, x, cst(y)).getResult();
  }
  Value remCst(Value x, int64_t y) {
    return y == 1 ? cst(0)
                  : arith::RemUIOp::create(b, loc, x, cst(y)).getResult();
  }
  /// Row-major indices of `linear` over `sizes` (the last fastest).
  SmallVector<Value> delinearize(Value linear, ArrayRef<int64_t> sizes) {
    SmallVector<Value> indices(sizes.size());
    for (int64_t i = sizes.size() - 1; i >= 0; --i) {
      indices[i] = i ? remCst(linear, sizes[i]) : linear;
      if (i)
        linear = divCst(linear, sizes[i]);
    }
    return indices;
  }
};

/// The indices into `operand` of `op` at the loop indices `ivs` (a dim
/// directly, any other affine expression through affine.apply, which
/// lower-affine expands later).
SmallVector<Value> operandIndices(OpBuilder &b, Location loc,
                                  linalg::GenericOp op, OpOperand &operand,
                                  ArrayRef<Value> ivs) {
  SmallVector<Value> indices;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      indices.push_back(ivs[dim.getPosition()]);
      continue;
    }
    SmallVector<Value> operands;
    for (unsigned d = 0; d < map.getNumDims(); ++d)
      operands.push_back(ivs[d]);
    indices.push_back(affine::AffineApplyOp::create(
        b, loc, map.getSubMap({static_cast<unsigned>(i)}), operands));
  }
  return indices;
}

/// The value of `operand` (a scalar or an element of a memref) at `ivs`.
Value loadOperand(OpBuilder &b, Location loc, linalg::GenericOp op,
                  OpOperand &operand, ArrayRef<Value> ivs) {
  if (!isa<MemRefType>(operand.get().getType()))
    return operand.get();
  return memref::LoadOp::create(b, loc, operand.get(),
                                operandIndices(b, loc, op, operand, ivs));
}

/// Evaluates the body of `op` on `args` (one per block argument): its yield.
Value cloneBody(OpBuilder &b, linalg::GenericOp op, ValueRange args) {
  Block &body = op.getRegion().front();
  IRMapping map;
  map.map(body.getArguments(), args);
  for (Operation &inner : body.without_terminator())
    b.clone(inner, map);
  return map.lookupOrDefault(body.getTerminator()->getOperand(0));
}

/// A launch of `grid` workgroups of `block` threads with the workgroup
/// buffers `shared`, its body ready for insertion before its terminator.
gpu::LaunchOp createLaunch(OpBuilder &b, Location loc,
                           ArrayRef<int64_t> grid, ArrayRef<int64_t> block,
                           TypeRange shared) {
  IndexBuilder ib{b, loc};
  auto launch = gpu::LaunchOp::create(
      b, loc, ib.cst(grid[0]), ib.cst(grid[1]), ib.cst(grid[2]),
      ib.cst(block[0]), ib.cst(block[1]), ib.cst(block[2]),
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/ValueRange{}, shared);
  Block &body = launch.getBody().front();
  b.setInsertionPointToEnd(&body);
  if (body.empty() || !body.back().hasTrait<OpTrait::IsTerminator>())
    gpu::TerminatorOp::create(b, loc);
  b.setInsertionPoint(body.getTerminator());
  return launch;
}

MemRefType workgroupBuffer(ArrayRef<int64_t> shape, Type element) {
  auto space = gpu::AddressSpaceAttr::get(element.getContext(),
                                          gpu::AddressSpace::Workgroup);
  return MemRefType::get(shape, element, MemRefLayoutAttrInterface(), space);
}

/// The buffer `value` is a view of (through any views), or itself.
Value getRootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

bool isInertOp(Operation *op) {
  return op->hasTrait<OpTrait::ConstantLike>() ||
         isa<ViewLikeOpInterface, memref::GetGlobalOp>(op);
}

/// `op` as a linalg.generic, or the generic alone in a one-thread loop.
linalg::GenericOp asGeneric(Operation *op) {
  if (!op)
    return nullptr;
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return generic;
  return getSingleThreadGeneric(*op);
}

/// Erases `op` and the one-thread loop around it, if any.
void eraseWithLoop(linalg::GenericOp op) {
  Operation *parent = op->getParentOp();
  if (isa<scf::ParallelOp>(parent) && getSingleThreadGeneric(*parent) == op)
    parent->erase();
  else
    op->erase();
}

/// The op (or one-thread loop) `op` is the body of at the top level.
Operation *getTopOp(linalg::GenericOp op) {
  Operation *parent = op->getParentOp();
  if (isa<scf::ParallelOp>(parent) && getSingleThreadGeneric(*parent) == op)
    return parent;
  return op;
}

/// The value a fill of `out` right before `anchor` (only constants and views
/// between) writes, with the fill; the kernel starts its accumulators from it
/// instead of reading `out` (fill folding, as the CPU kernels do).
std::pair<Value, linalg::GenericOp> findInitFill(Operation *anchor,
                                                 Value out) {
  Operation *prev = anchor->getPrevNode();
  while (prev && isInertOp(prev))
    prev = prev->getPrevNode();
  linalg::GenericOp fill = asGeneric(prev);
  if (!fill || fill.getNumDpsInits() != 1 || fill.getDpsInits()[0] != out ||
      fill.getNumReductionLoops() ||
      !fill.getMatchingIndexingMap(fill.getDpsInitOperand(0)).isIdentity())
    return {};
  Block &body = fill.getRegion().front();
  Value yielded = body.getTerminator()->getOperand(0);
  Value value;
  if (auto arg = dyn_cast<BlockArgument>(yielded)) {
    if (arg.getOwner() != &body || arg.getArgNumber() >= fill.getNumDpsInputs())
      return {};
    value = fill.getDpsInputOperand(arg.getArgNumber())->get();
  } else if (!fill.getRegion().isAncestor(yielded.getParentRegion())) {
    value = yielded;
  }
  if (!value || value.getType() != getElementTypeOrSelf(out.getType()))
    return {};
  return {value, fill};
}

/// An elementwise linalg.generic right after `anchor` (only constants and
/// views between) that reads `out` at its own index (identity map) and
/// writes a buffer of the same shape that the kernel does not read
/// (`reads`): the kernel applies its body before storing (epilogue fusion:
/// the bias and activation after a matmul).
linalg::GenericOp findEpilogue(Operation *anchor, Value out,
                               ArrayRef<Value> reads) {
  Operation *next = anchor->getNextNode();
  while (next && isInertOp(next))
    next = next->getNextNode();
  linalg::GenericOp epilogue = asGeneric(next);
  auto outType = dyn_cast<MemRefType>(out.getType());
  if (!epilogue || !outType || epilogue.getNumDpsInits() != 1 ||
      epilogue.getNumReductionLoops() ||
      epilogue.getNumLoops() != outType.getRank() ||
      !llvm::all_of(epilogue.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }) ||
      epilogue.getRegion()
          .walk([](linalg::IndexOp) { return WalkResult::interrupt(); })
          .wasInterrupted())
    return nullptr;
  OpOperand *init = epilogue.getDpsInitOperand(0);
  auto initType = dyn_cast<MemRefType>(init->get().getType());
  if (!initType || initType.getShape() != outType.getShape() ||
      !epilogue.getMatchingIndexingMap(init).isIdentity())
    return nullptr;
  int readsOfOut = 0;
  Value written = getRootBuffer(init->get());
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    if (input->get() == out) {
      if (!epilogue.getMatchingIndexingMap(input).isIdentity())
        return nullptr;
      ++readsOfOut;
      continue;
    }
    // Another input overlapping the output would be read by one thread
    // while another writes it.
    if (isa<ShapedType>(input->get().getType()) &&
        getRootBuffer(input->get()) == written)
      return nullptr;
  }
  if (readsOfOut != 1)
    return nullptr;
  // Workgroups write the epilogue's output while others still read the
  // kernel's inputs: they must not overlap.
  for (Value read : reads)
    if (getRootBuffer(read) == written)
      return nullptr;
  return epilogue;
}

/// Whether anything but `except` (and views) uses `out`'s buffer: else the
/// kernel need not store it (its epilogue's result is all that is read).
bool isReadElsewhere(Value out, ArrayRef<Operation *> except) {
  Value root = getRootBuffer(out);
  if (!root.getDefiningOp<memref::AllocOp>())
    return true; // a graph input or output
  SmallVector<Value> worklist{root};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (llvm::is_contained(except, user))
        continue;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() == value)
          for (Value result : user->getResults())
            worklist.push_back(result);
        continue;
      }
      return true;
    }
  }
  return false;
}

struct LowerConfiguredOpsPass
    : kiln::impl::KilnGPULowerConfiguredOpsPassBase<LowerConfiguredOpsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, GPULoweringConfig>> work;
    bool failed = false;
    getOperation().walk([&](linalg::GenericOp op) {
      if (!op->hasAttr(kGPULoweringAttrName))
        return;
      std::optional<GPULoweringConfig> config = getGPULoweringConfig(op);
      if (!config) {
        onnx::emitNodeError(op) << "malformed '" << kGPULoweringAttrName
                                << "' attribute";
        failed = true;
        return;
      }
      op->removeAttr(kGPULoweringAttrName);
      if (config->kind != GPUKernelKind::Generic)
        work.push_back({op, *config});
    });
    if (failed)
      return signalPassFailure();
    for (auto &[op, config] : work) {
      // The op itself, or the one-thread loop kiln-gpu-prepare-loops put
      // it in (no parallel loops): the kernel replaces either.
      Operation *anchor = op;
      if (op->getParentOp() != getOperation()) {
        Operation *parent = op->getParentOp();
        if (parent->getParentOp() != getOperation() ||
            getSingleThreadGeneric(*parent) != op) {
          onnx::emitNodeError(op) << "a '" << stringifyGPUKernelKind(config.kind)
                                  << "' kernel must be at the top level";
          return signalPassFailure();
        }
        anchor = parent;
      }
      LogicalResult result =
          config.kind == GPUKernelKind::MatmulTiled
              ? lowerMatmul(op, anchor, config)
          : config.kind == GPUKernelKind::MatmulMma
              ? lowerMatmulMma(op, anchor, config)
              : lowerRowReduction(op, anchor, config);
      if (mlir::failed(result))
        return signalPassFailure();
      anchor->erase();
    }
  }

  //===--------------------------------------------------------------------===//
  // matmul_tiled
  //===--------------------------------------------------------------------===//

  LogicalResult lowerMatmul(linalg::GenericOp op, Operation *anchor,
                            const GPULoweringConfig &config) {
    std::optional<TiledContraction> match = matchTiledContraction(op);
    if (!match)
      return onnx::emitNodeError(op)
             << "'matmul_tiled' asked for an op that is not a tiled "
                "contraction";
    int64_t tm = config.tileSizes[0], tn = config.tileSizes[1],
            tk = config.tileSizes[2];
    int64_t wx = config.workgroupSize[0], wy = config.workgroupSize[1];
    int64_t threads = wx * wy;
    if (wx != 16 || config.workgroupSize[2] != 1 || tm % wy || tn % wx ||
        (tm * tk) % threads || (tk * tn) % threads)
      return onnx::emitNodeError(op)
             << "'matmul_tiled' needs workgroup_size [16, TY, 1] dividing "
                "its tiles";
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    auto sizesOf = [&](ArrayRef<unsigned> dims, int64_t &product) {
      return loopSizes(ranges, dims, product);
    };
    int64_t m, n, k, batch;
    SmallVector<int64_t> mSizes = sizesOf(match->m, m);
    SmallVector<int64_t> nSizes = sizesOf(match->n, n);
    SmallVector<int64_t> kSizes = sizesOf(match->k, k);
    SmallVector<int64_t> batchSizes = sizesOf(match->batch, batch);
    int64_t gridX = llvm::divideCeil(n, tn), gridY = llvm::divideCeil(m, tm);
    if (gridX > kMaxWorkgroups || gridY > kMaxWorkgroups ||
        batch > kMaxWorkgroups)
      return onnx::emitNodeError(op)
             << "'matmul_tiled' needs more than 65535 workgroups";
    if (m == 0 || n == 0 || batch == 0)
      return success(); // nothing to compute
    int64_t rm = tm / wy, rn = tn / wx;

    Location loc = op.getLoc();
    OpOperand &aOperand = *op.getDpsInputOperand(0);
    OpOperand &bOperand = *op.getDpsInputOperand(1);
    // The tiles hold the operands' own types (f16 or f32); the cloned body
    // does any widening.
    Type aType = getElementTypeOrSelf(aOperand.get().getType());
    Type bType = getElementTypeOrSelf(bOperand.get().getType());
    OpOperand &cOperand = *op.getDpsInitOperand(0);
    auto [fillValue, fill] = findInitFill(anchor, cOperand.get());
    linalg::GenericOp epilogue = findEpilogue(
        anchor, cOperand.get(), {aOperand.get(), bOperand.get()});
    bool storeOutput =
        !epilogue || isReadElsewhere(cOperand.get(), {fill, op, epilogue});
    // At the epilogue when there is one (its buffers may be views made
    // after the op; only constants and views lie between).
    OpBuilder b(epilogue ? getTopOp(epilogue) : anchor);
    IndexBuilder ib{b, loc};
    gpu::LaunchOp launch = createLaunch(
        b, loc, {gridX, gridY, batch}, {wx, wy, 1},
        {workgroupBuffer({tm, tk}, aType), workgroupBuffer({tk, tn}, bType)});
    Value aTile = launch.getWorkgroupAttributions()[0];
    Value bTile = launch.getWorkgroupAttributions()[1];
    Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
    Value linearThread = ib.add(ib.mul(ty, wx), tx);
    Value m0 = ib.mul(launch.getBlockIds().y, tm);
    Value n0 = ib.mul(launch.getBlockIds().x, tn);
    SmallVector<Value> ivs(op.getNumLoops(), ib.cst(0));
    // Sets the loop indices of `dims` from their row-major linear index.
    auto setIndices = [&](ArrayRef<unsigned> dims, ArrayRef<int64_t> sizes,
                          Value linear) {
      for (auto [dim, index] : llvm::zip(dims, ib.delinearize(linear, sizes)))
        ivs[dim] = index;
    };
    for (auto [dim, index] : llvm::zip(
             match->batch, ib.delinearize(launch.getBlockIds().z, batchSizes)))
      ivs[dim] = index;

    // This thread's rows and columns of the output tile (strided, so that
    // neighbouring threads store neighbouring elements).
    SmallVector<Value> rows, cols;
    for (int64_t i = 0; i < rm; ++i)
      rows.push_back(ib.add(m0, ib.add(ty, i * wy)));
    for (int64_t j = 0; j < rn; ++j)
      cols.push_back(ib.add(n0, ib.add(tx, j * wx)));
    SmallVector<Value> init;
    for (int64_t i = 0; i < rm; ++i)
      for (int64_t j = 0; j < rn; ++j) {
        if (fill) {
          init.push_back(fillValue);
          continue;
        }
        setIndices(match->m, mSizes, ib.min(rows[i], m - 1));
        setIndices(match->n, nSizes, ib.min(cols[j], n - 1));
        init.push_back(loadOperand(b, loc, op, cOperand, ivs));
      }

    auto kLoop = scf::ForOp::create(b, loc, ib.cst(0),
                                    ib.cst(llvm::divideCeil(k, tk)),
                                    ib.cst(1), init);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k0 = ib.mul(kLoop.getInductionVar(), tk);
    // Stage the tiles: element e of the linearized tile goes to thread
    // e % threads (consecutive threads, consecutive elements). Indices are
    // clamped into range; the values read so only feed outputs that are
    // not stored, or columns past the K loop's end.
    for (int64_t e = 0; e < tm * tk; e += threads) {
      Value element = ib.add(linearThread, e);
      Value r = ib.divCst(element, tk), c = ib.remCst(element, tk);
      setIndices(match->m, mSizes, ib.min(ib.add(m0, r), m - 1));
      setIndices(match->k, kSizes, ib.min(ib.add(k0, c), k - 1));
      Value value = loadOperand(b, loc, op, aOperand, ivs);
      memref::StoreOp::create(b, loc, value, aTile, ValueRange{r, c});
    }
    for (int64_t e = 0; e < tk * tn; e += threads) {
      Value element = ib.add(linearThread, e);
      Value r = ib.divCst(element, tn), c = ib.remCst(element, tn);
      setIndices(match->k, kSizes, ib.min(ib.add(k0, r), k - 1));
      setIndices(match->n, nSizes, ib.min(ib.add(n0, c), n - 1));
      Value value = loadOperand(b, loc, op, bOperand, ivs);
      memref::StoreOp::create(b, loc, value, bTile, ValueRange{r, c});
    }
    gpu::BarrierOp::create(b, loc);
    Value kEnd = arith::MinSIOp::create(
        b, loc, ib.cst(tk),
        arith::SubIOp::create(b, loc, ib.cst(k), k0).getResult());
    auto kkLoop = scf::ForOp::create(b, loc, ib.cst(0), kEnd, ib.cst(1),
                                     kLoop.getRegionIterArgs());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kkLoop.getBody());
      Value kk = kkLoop.getInductionVar();
      SmallVector<Value> as, bs;
      for (int64_t i = 0; i < rm; ++i)
        as.push_back(memref::LoadOp::create(
            b, loc, aTile, ValueRange{ib.add(ty, i * wy), kk}));
      for (int64_t j = 0; j < rn; ++j)
        bs.push_back(memref::LoadOp::create(
            b, loc, bTile, ValueRange{kk, ib.add(tx, j * wx)}));
      SmallVector<Value> next;
      for (int64_t i = 0; i < rm; ++i)
        for (int64_t j = 0; j < rn; ++j)
          next.push_back(cloneBody(
              b, op, {as[i], bs[j], kkLoop.getRegionIterArgs()[i * rn + j]}));
      scf::YieldOp::create(b, loc, next);
    }
    // The tiles are overwritten by the next step only when every thread is
    // done reading them.
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, kkLoop.getResults());

    b.setInsertionPointAfter(kLoop);
    for (int64_t i = 0; i < rm; ++i)
      for (int64_t j = 0; j < rn; ++j) {
        Value inRange = arith::AndIOp::create(b, loc, ib.ult(rows[i], m),
                                              ib.ult(cols[j], n));
        auto ifOp = scf::IfOp::create(b, loc, inRange, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
        setIndices(match->m, mSizes, rows[i]);
        setIndices(match->n, nSizes, cols[j]);
        Value acc = kLoop.getResult(i * rn + j);
        storeResult(b, loc, acc, cOperand.get(),
                    operandIndices(b, loc, op, cOperand, ivs), storeOutput,
                    epilogue);
      }
    eraseAbsorbed(fill, epilogue);
    return success();
  }

  //===--------------------------------------------------------------------===//
  // matmul_mma: NVIDIA tensor cores (cuda target, sm_80+)
  //===--------------------------------------------------------------------===//
  //
  // The fragments of mma.sync (PTX ISA, "Matrix Fragments for mma.m16n8k16
  // with floating point type" and "for mma.m16n8k8" .tf32), per lane of the
  // warp, with g = lane / 4 (groupID) and t = lane % 4 (threadID_in_group):
  //
  //   m16n8k16 .f16: A 16 x 16 (row) in 4 registers of f16x2, B 16 x 8 (col)
  //   in 2 registers of f16x2; element 0 of a pair is the low half.
  //     A a0..a7: (g, 2t + i%2) for a0 a1; (g+8, 2t + i%2) for a2 a3;
  //               (g, 2t+8 + i%2) for a4 a5; (g+8, 2t+8 + i%2) for a6 a7
  //     B b0..b3: (k = 2t + i%2, n = g) for b0 b1; (2t+8 + i%2, g) for b2 b3
  //   m16n8k8 .tf32: A 16 x 8 in 4 b32 registers, B 8 x 8 in 2:
  //     A a0: (g, t), a1: (g+8, t), a2: (g, t+4), a3: (g+8, t+4)
  //     B b0: (k = t, n = g), b1: (t+4, g)
  //   C/D 16 x 8 f32, both: c0 c1: (g, 2t + i%2); c2 c3: (g+8, 2t + i%2).
  //
  // With E elements per register (2 for f16, 1 for tf32) and H = 4E, both:
  //   A register r, element e: row g + 8 (r % 2), column E t + H (r / 2) + e
  //   B register r, element e: row (k) E t + H r + e, column (n) g
  //   C element i: row g + 8 (i / 2), column 2t + i % 2
  // and every index below comes from these three lines.
  //
  // The workgroup stages A as [TM][TK + pad] and B transposed as
  // [TN][TK + pad] (a register's pair is then contiguous in both; pad = 16
  // bytes, so the 8 rows g one load touches fall in distinct banks); K past
  // the end is staged as zeros (the instruction sums every K of its step),
  // rows and columns past M and N are clamped loads that only feed
  // accumulators not stored. tf32 operands are rounded (cvt.rna.tf32.f32)
  // when staged.
  LogicalResult lowerMatmulMma(linalg::GenericOp op, Operation *anchor,
                               const GPULoweringConfig &config) {
    auto match = matchMmaContraction(op, /*allowTF32=*/true);
    if (!match)
      return onnx::emitNodeError(op)
             << "'matmul_mma' asked for an op that is not a contraction "
                "out + a * b of f16 or f32 operands with an f32 result";
    const TiledContraction &loops = match->first;
    bool isF16 = match->second == MmaOperands::F16;
    int64_t tm = config.tileSizes[0], tn = config.tileSizes[1],
            tk = config.tileSizes[2];
    int64_t threads = config.workgroupSize[0];
    int64_t wm = config.warpTile[0], wn = config.warpTile[1];
    int64_t mk = isF16 ? 16 : 8;
    int64_t perRegister = isF16 ? 2 : 1, half = 4 * perRegister;
    if (config.workgroupSize[1] != 1 || config.workgroupSize[2] != 1 ||
        threads % 32 || tm % wm || tn % wn || wm % 16 || wn % 8 ||
        (tm / wm) * (tn / wn) != threads / 32 || tk % mk ||
        ArrayRef<int64_t>(config.mmaShape) != ArrayRef<int64_t>{16, 8, mk} ||
        (tm * tk) % threads || (tk * tn) % threads)
      return onnx::emitNodeError(op)
             << "'matmul_mma' needs workgroup_size [32 * warps, 1, 1] with "
                "one warp per warp_tile of the tile, warp tiles of whole "
                "16 x 8 instructions, and mma_shape [16, 8, "
             << mk << "] dividing tile_sizes";
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    auto sizesOf = [&](ArrayRef<unsigned> dims, int64_t &product) {
      return loopSizes(ranges, dims, product);
    };
    int64_t m, n, k, batch;
    SmallVector<int64_t> mSizes = sizesOf(loops.m, m);
    SmallVector<int64_t> nSizes = sizesOf(loops.n, n);
    SmallVector<int64_t> kSizes = sizesOf(loops.k, k);
    SmallVector<int64_t> batchSizes = sizesOf(loops.batch, batch);
    int64_t gridX = llvm::divideCeil(n, tn), gridY = llvm::divideCeil(m, tm);
    if (gridX > kMaxWorkgroups || gridY > kMaxWorkgroups ||
        batch > kMaxWorkgroups)
      return onnx::emitNodeError(op)
             << "'matmul_mma' needs more than 65535 workgroups";
    if (m == 0 || n == 0 || batch == 0)
      return success(); // nothing to compute

    Location loc = op.getLoc();
    MLIRContext *ctx = &getContext();
    Type f32 = Float32Type::get(ctx), i32 = IntegerType::get(ctx, 32);
    Type operandType = isF16 ? Type(Float16Type::get(ctx)) : f32;
    // What the tiles hold: f16, or tf32 bit patterns.
    Type staged = isF16 ? operandType : i32;
    int64_t pad = 16 / (isF16 ? 2 : 4);
    OpOperand &aOperand = *op.getDpsInputOperand(0);
    OpOperand &bOperand = *op.getDpsInputOperand(1);
    OpOperand &cOperand = *op.getDpsInitOperand(0);
    auto [fillValue, fill] = findInitFill(anchor, cOperand.get());
    linalg::GenericOp epilogue = findEpilogue(
        anchor, cOperand.get(), {aOperand.get(), bOperand.get()});
    bool storeOutput =
        !epilogue || isReadElsewhere(cOperand.get(), {fill, op, epilogue});
    OpBuilder b(epilogue ? getTopOp(epilogue) : anchor);
    IndexBuilder ib{b, loc};
    gpu::LaunchOp launch = createLaunch(
        b, loc, {gridX, gridY, batch}, {threads, 1, 1},
        {workgroupBuffer({tm, tk + pad}, staged),
         workgroupBuffer({tn, tk + pad}, staged)});
    Value aTile = launch.getWorkgroupAttributions()[0];
    Value bTile = launch.getWorkgroupAttributions()[1];
    Value linearThread = launch.getThreadIds().x;
    Value m0 = ib.mul(launch.getBlockIds().y, tm);
    Value n0 = ib.mul(launch.getBlockIds().x, tn);
    SmallVector<Value> ivs(op.getNumLoops(), ib.cst(0));
    auto setIndices = [&](ArrayRef<unsigned> dims, ArrayRef<int64_t> sizes,
                          Value linear) {
      for (auto [dim, index] : llvm::zip(dims, ib.delinearize(linear, sizes)))
        ivs[dim] = index;
    };
    for (auto [dim, index] : llvm::zip(
             loops.batch, ib.delinearize(launch.getBlockIds().z, batchSizes)))
      ivs[dim] = index;

    // This lane's place: warp w computes rows wRow0 .. wRow0 + WM and
    // columns wCol0 .. wCol0 + WN of the tile (warps row-major).
    Value lane = ib.remCst(linearThread, 32);
    Value warp = ib.divCst(linearThread, 32);
    Value g = ib.divCst(lane, 4), t = ib.remCst(lane, 4);
    int64_t warpsN = tn / wn;
    Value wRow0 = ib.mul(ib.divCst(warp, warpsN), wm);
    Value wCol0 = ib.mul(ib.remCst(warp, warpsN), wn);
    int64_t mTiles = wm / 16, nTiles = wn / 8;
    // Tile rows of C element i's row g + 8 (i / 2) in m16 tile `mi`, and
    // tile columns of its column 2t + i % 2 in n8 tile `nj` (also the tile
    // row of A register r's row g + 8 (r % 2), and of B's column g: nj's
    // column g is cCol with 2t + i % 2 replaced by g).
    auto tileRow = [&](int64_t mi, int64_t plus8) {
      return ib.add(ib.add(wRow0, g), mi * 16 + 8 * plus8);
    };
    Value twoT = ib.mul(t, 2);
    auto tileCol = [&](int64_t nj, int64_t odd) {
      return ib.add(ib.add(wCol0, twoT), nj * 8 + odd);
    };
    auto accIndex = [&](int64_t mi, int64_t nj, int64_t i) {
      return (mi * nTiles + nj) * 4 + i;
    };
    SmallVector<Value> init(mTiles * nTiles * 4);
    for (int64_t mi = 0; mi < mTiles; ++mi)
      for (int64_t nj = 0; nj < nTiles; ++nj)
        for (int64_t i = 0; i < 4; ++i) {
          Value &value = init[accIndex(mi, nj, i)];
          if (fill) {
            value = fillValue;
            continue;
          }
          setIndices(loops.m, mSizes,
                     ib.min(ib.add(m0, tileRow(mi, i / 2)), m - 1));
          setIndices(loops.n, nSizes,
                     ib.min(ib.add(n0, tileCol(nj, i % 2)), n - 1));
          value = loadOperand(b, loc, op, cOperand, ivs);
        }
    // The fragments' places in the staged tiles (the same every K step):
    // A register r of m16 tile mi, step s: row aRow[mi][r % 2], column
    // s * MK + E t + H (r / 2) + e; B register r of n8 tile nj: row
    // bRow[nj] (its n), column s * MK + E t + H r + e.
    SmallVector<std::array<Value, 2>> aRow(mTiles);
    for (int64_t mi = 0; mi < mTiles; ++mi)
      for (int64_t h = 0; h < 2; ++h)
        aRow[mi][h] = tileRow(mi, h);
    SmallVector<Value> bRow(nTiles);
    for (int64_t nj = 0; nj < nTiles; ++nj)
      bRow[nj] = ib.add(ib.add(wCol0, g), nj * 8);
    Value kLane = ib.mul(t, perRegister);
    // Column of K offset `offset` + e within the step's first column.
    auto kCol = [&](int64_t offset) { return ib.add(kLane, offset); };

    auto kLoop = scf::ForOp::create(b, loc, ib.cst(0),
                                    ib.cst(llvm::divideCeil(k, tk)),
                                    ib.cst(1), init);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k0 = ib.mul(kLoop.getInductionVar(), tk);
    Value zero = arith::ConstantOp::create(
        b, loc, operandType, b.getFloatAttr(operandType, 0.0));
    // The value staged for `value` of K index `kIndex`: zero past K, tf32
    // rounded to nearest (ties away from zero) for f32 operands.
    auto stage = [&](Value value, Value kIndex) -> Value {
      value = arith::SelectOp::create(b, loc, ib.ult(kIndex, k), value, zero);
      if (isF16)
        return value;
      return NVVM::ConvertFloatToTF32Op::create(
          b, loc, i32, value, NVVM::FPRoundingMode::RNA,
          NVVM::SaturationMode::NONE, /*relu=*/false);
    };
    // Element e of the linearized tile goes to thread e % threads
    // (consecutive threads, consecutive elements of the operand's rows).
    for (int64_t e = 0; e < tm * tk; e += threads) {
      Value element = ib.add(linearThread, e);
      Value r = ib.divCst(element, tk), c = ib.remCst(element, tk);
      Value kIndex = ib.add(k0, c);
      setIndices(loops.m, mSizes, ib.min(ib.add(m0, r), m - 1));
      setIndices(loops.k, kSizes, ib.min(kIndex, k - 1));
      Value value = stage(loadOperand(b, loc, op, aOperand, ivs), kIndex);
      memref::StoreOp::create(b, loc, value, aTile, ValueRange{r, c});
    }
    for (int64_t e = 0; e < tk * tn; e += threads) {
      Value element = ib.add(linearThread, e);
      Value r = ib.divCst(element, tn), c = ib.remCst(element, tn);
      Value kIndex = ib.add(k0, r);
      setIndices(loops.k, kSizes, ib.min(kIndex, k - 1));
      setIndices(loops.n, nSizes, ib.min(ib.add(n0, c), n - 1));
      Value value = stage(loadOperand(b, loc, op, bOperand, ivs), kIndex);
      memref::StoreOp::create(b, loc, value, bTile, ValueRange{c, r});
    }
    gpu::BarrierOp::create(b, loc);

    // A register: its E elements from `tile` at `row`, columns `col` + e.
    Type pairType = VectorType::get({2}, operandType);
    auto loadRegister = [&](Value tile, Value row, Value col) -> Value {
      if (!isF16)
        return memref::LoadOp::create(b, loc, tile, ValueRange{row, col});
      Value reg = LLVM::PoisonOp::create(b, loc, pairType);
      for (int64_t e = 0; e < 2; ++e) {
        Value element = memref::LoadOp::create(
            b, loc, tile, ValueRange{row, ib.add(col, e)});
        Value position = LLVM::ConstantOp::create(
            b, loc, i32, b.getI32IntegerAttr(e));
        reg = LLVM::InsertElementOp::create(b, loc, pairType, reg, element,
                                            position);
      }
      return reg;
    };
    Type resultType = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    NVVM::MMATypes ptxType =
        isF16 ? NVVM::MMATypes::f16 : NVVM::MMATypes::tf32;
    SmallVector<Value> acc(kLoop.getRegionIterArgs());
    for (int64_t step = 0; step < tk / mk; ++step) {
      SmallVector<SmallVector<Value, 4>> aRegs(mTiles);
      for (int64_t mi = 0; mi < mTiles; ++mi)
        for (int64_t r = 0; r < 4; ++r)
          aRegs[mi].push_back(loadRegister(
              aTile, aRow[mi][r % 2], kCol(step * mk + half * (r / 2))));
      SmallVector<SmallVector<Value, 2>> bRegs(nTiles);
      for (int64_t nj = 0; nj < nTiles; ++nj)
        for (int64_t r = 0; r < 2; ++r)
          bRegs[nj].push_back(
              loadRegister(bTile, bRow[nj], kCol(step * mk + half * r)));
      for (int64_t mi = 0; mi < mTiles; ++mi)
        for (int64_t nj = 0; nj < nTiles; ++nj) {
          SmallVector<Value, 4> c;
          for (int64_t i = 0; i < 4; ++i)
            c.push_back(acc[accIndex(mi, nj, i)]);
          Value d = NVVM::MmaOp::create(
              b, loc, resultType, aRegs[mi], bRegs[nj], c,
              ArrayRef<int64_t>{16, 8, mk}, std::nullopt, std::nullopt,
              std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
              std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                             NVVM::MMALayout::col});
          for (int64_t i = 0; i < 4; ++i)
            acc[accIndex(mi, nj, i)] =
                LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{i});
        }
    }
    // The tiles are overwritten by the next step only when every warp is
    // done reading them.
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);

    b.setInsertionPointAfter(kLoop);
    for (int64_t mi = 0; mi < mTiles; ++mi)
      for (int64_t nj = 0; nj < nTiles; ++nj)
        for (int64_t i = 0; i < 4; ++i) {
          Value row = ib.add(m0, tileRow(mi, i / 2));
          Value col = ib.add(n0, tileCol(nj, i % 2));
          Value inRange = arith::AndIOp::create(b, loc, ib.ult(row, m),
                                                ib.ult(col, n));
          auto ifOp = scf::IfOp::create(b, loc, inRange, false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
          setIndices(loops.m, mSizes, row);
          setIndices(loops.n, nSizes, col);
          Value value = kLoop.getResult(accIndex(mi, nj, i));
          storeResult(b, loc, value, cOperand.get(),
                      operandIndices(b, loc, op, cOperand, ivs), storeOutput,
                      epilogue);
        }
    eraseAbsorbed(fill, epilogue);
    return success();
  }

  /// The end of every kernel's per-element store: `value` into `out` at
  /// `indices` when something else reads `out` (`storeOutput`), and through
  /// the fused epilogue, if any, into the epilogue's output.
  static void storeResult(OpBuilder &b, Location loc, Value value, Value out,
                          ArrayRef<Value> indices, bool storeOutput,
                          linalg::GenericOp epilogue) {
    if (storeOutput)
      memref::StoreOp::create(b, loc, value, out, indices);
    if (epilogue)
      applyEpilogue(b, loc, epilogue, out, value, indices);
  }

  /// Erases the fill and the epilogue a kernel absorbed (either may be null).
  static void eraseAbsorbed(linalg::GenericOp fill,
                            linalg::GenericOp epilogue) {
    if (fill)
      eraseWithLoop(fill);
    if (epilogue)
      eraseWithLoop(epilogue);
  }

  /// Stores `epilogue`'s body applied to `acc`, the element of `out` at
  /// `indices` (the epilogue's loop indices: its map of `out` is the
  /// identity), into the epilogue's output.
  static void applyEpilogue(OpBuilder &b, Location loc,
                            linalg::GenericOp epilogue, Value out, Value acc,
                            ArrayRef<Value> indices) {
    Block &body = epilogue.getRegion().front();
    SmallVector<Value> args;
    for (OpOperand *input : epilogue.getDpsInputOperands())
      args.push_back(input->get() == out
                         ? acc
                         : loadOperand(b, loc, epilogue, *input, indices));
    OpOperand *init = epilogue.getDpsInitOperand(0);
    BlockArgument initArg = body.getArgument(epilogue.getNumDpsInputs());
    args.push_back(initArg.use_empty() && initArg.getType() == acc.getType()
                       ? acc
                       : loadOperand(b, loc, epilogue, *init, indices));
    memref::StoreOp::create(b, loc, cloneBody(b, epilogue, args), init->get(),
                            indices);
  }

  //===--------------------------------------------------------------------===//
  // row_reduction
  //===--------------------------------------------------------------------===//

  LogicalResult lowerRowReduction(linalg::GenericOp op, Operation *anchor,
                                  const GPULoweringConfig &config) {
    Operation *comb = matchRowReduction(op);
    if (!comb)
      return onnx::emitNodeError(op)
             << "'row_reduction' asked for an op that is not a reduction "
                "with a known combiner";
    int64_t threads = config.workgroupSize[0];
    if (!llvm::isPowerOf2_64(threads) || config.workgroupSize[1] != 1 ||
        config.workgroupSize[2] != 1)
      return onnx::emitNodeError(op)
             << "'row_reduction' needs workgroup_size [W, 1, 1], W a power "
                "of two";
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<unsigned> parallelDims, reductionDims;
    SmallVector<int64_t> parallelSizes, reductionSizes;
    int64_t rows = 1, reduced = 1;
    for (auto [dim, type] : llvm::enumerate(op.getIteratorTypesArray())) {
      if (type == utils::IteratorType::parallel) {
        parallelDims.push_back(dim);
        parallelSizes.push_back(ranges[dim]);
        rows *= ranges[dim];
      } else {
        reductionDims.push_back(dim);
        reductionSizes.push_back(ranges[dim]);
        reduced *= ranges[dim];
      }
    }
    if (rows == 0)
      return success();
    int64_t groups = std::min(rows, kMaxWorkgroups);
    Block &body = op.getRegion().front();
    BlockArgument out = body.getArgument(op.getNumDpsInputs());
    unsigned outPosition = comb->getOperand(0) == out ? 0 : 1;
    Type type = out.getType();

    Location loc = op.getLoc();
    OpOperand &init = *op.getDpsInitOperand(0);
    auto [fillValue, fill] = findInitFill(anchor, init.get());
    SmallVector<Value> reads;
    for (OpOperand *input : op.getDpsInputOperands())
      if (isa<ShapedType>(input->get().getType()))
        reads.push_back(input->get());
    linalg::GenericOp epilogue = findEpilogue(anchor, init.get(), reads);
    bool storeOutput =
        !epilogue || isReadElsewhere(init.get(), {fill, op, epilogue});
    OpBuilder b(epilogue ? getTopOp(epilogue) : anchor);
    IndexBuilder ib{b, loc};
    gpu::LaunchOp launch = createLaunch(b, loc, {groups, 1, 1},
                                        {threads, 1, 1},
                                        {workgroupBuffer({threads}, type)});
    Value partials = launch.getWorkgroupAttributions()[0];
    Value tid = launch.getThreadIds().x;
    // maxnumf / minnumf ignore NaN, so their neutral element is NaN; the
    // infinities serve as well without asking the target for IEEE NaN
    // handling in the threads that have no element.
    TypedAttr neutralAttr = *arith::getNeutralElement(comb);
    if (isa<arith::MaxNumFOp, arith::MinNumFOp>(comb))
      neutralAttr = b.getFloatAttr(
          type, APFloat::getInf(cast<FloatType>(type).getFloatSemantics(),
                                /*Negative=*/isa<arith::MaxNumFOp>(comb)));
    Value neutral = arith::ConstantOp::create(b, loc, neutralAttr);
    auto combine = [&](Value value, Value acc) -> Value {
      Operation *clone = b.clone(*comb);
      clone->setOperand(outPosition, acc);
      clone->setOperand(1 - outPosition, value);
      return clone->getResult(0);
    };

    // Rows are spread over the workgroups (uniform per workgroup, so
    // every thread meets the barriers).
    auto rowLoop = scf::ForOp::create(b, loc, launch.getBlockIds().x,
                                      ib.cst(rows), ib.cst(groups));
    b.setInsertionPointToStart(rowLoop.getBody());
    SmallVector<Value> ivs(op.getNumLoops());
    for (auto [dim, index] : llvm::zip(
             parallelDims,
             ib.delinearize(rowLoop.getInductionVar(), parallelSizes)))
      ivs[dim] = index;
    auto foldLoop = scf::ForOp::create(b, loc, tid, ib.cst(reduced),
                                       ib.cst(threads), ValueRange{neutral});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(foldLoop.getBody());
      for (auto [dim, index] :
           llvm::zip(reductionDims,
                     ib.delinearize(foldLoop.getInductionVar(), reductionSizes)))
        ivs[dim] = index;
      SmallVector<Value> args;
      for (OpOperand *input : op.getDpsInputOperands())
        args.push_back(loadOperand(b, loc, op, *input, ivs));
      args.push_back(foldLoop.getRegionIterArgs()[0]);
      scf::YieldOp::create(b, loc, cloneBody(b, op, args));
    }
    memref::StoreOp::create(b, loc, foldLoop.getResult(0), partials,
                            ValueRange{tid});
    gpu::BarrierOp::create(b, loc);
    for (int64_t stride = threads / 2; stride >= 1; stride /= 2) {
      auto ifOp = scf::IfOp::create(b, loc, ib.ult(tid, stride), false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
        Value mine = memref::LoadOp::create(b, loc, partials, ValueRange{tid});
        Value other = memref::LoadOp::create(
            b, loc, partials, ValueRange{ib.add(tid, stride)});
        memref::StoreOp::create(b, loc, combine(other, mine), partials,
                                ValueRange{tid});
      }
      gpu::BarrierOp::create(b, loc);
    }
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        tid, ib.cst(0));
    auto ifOp = scf::IfOp::create(b, loc, first, false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      Value total =
          memref::LoadOp::create(b, loc, partials, ValueRange{ib.cst(0)});
      SmallVector<Value> indices = operandIndices(b, loc, op, init, ivs);
      Value initial =
          fill ? fillValue
               : memref::LoadOp::create(b, loc, init.get(), indices)
                     .getResult();
      Value result = combine(total, initial);
      storeResult(b, loc, result, init.get(), indices, storeOutput, epilogue);
    }
    // The next row reuses the partials.
    gpu::BarrierOp::create(b, loc);
    eraseAbsorbed(fill, epilogue);
    return success();
  }
};

} // namespace
