//===- SelectLoweringConfig.cpp - pick each op's GPU kernel ---------------===//
//
// Strategy as data: every linalg.generic the entry runs as a kernel gets a
// `kiln.gpu_lowering` attribute (LoweringConfig.h) saying which kernel
// computes it and with what tiles and workgroup size, within the target's
// limits (threads per workgroup, bytes of workgroup memory: the pass
// options, which a target fills from its environment). The lowering passes
// only read the attribute.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/Common/LoweringConfig.h"
#include "codegen/GPU/Passes.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/MathExtras.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUSELECTLOWERINGCONFIGPASS
#include "codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {

static bool hasSimpleLoops(linalg::GenericOp op) {
  if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
        return map.isProjectedPermutation();
      }))
    return false;
  if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return false;
  return !op.getRegion()
              .walk([](linalg::IndexOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
}

/// The loops of a contraction (TiledContraction) on memrefs of any types.
static std::optional<TiledContraction>
matchContractionLoops(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic) ||
      op.getRegion()
          .walk([](linalg::IndexOp) { return WalkResult::interrupt(); })
          .wasInterrupted())
    return std::nullopt;
  for (Value operand : op->getOperands())
    if (!isa<MemRefType>(operand.getType()))
      return std::nullopt;
  AffineMap a = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap b = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  AffineMap c = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!c.isProjectedPermutation() ||
      !llvm::all_of(llvm::concat<const AffineExpr>(a.getResults(),
                                                   b.getResults()),
                    [](AffineExpr expr) { return expr.isPureAffine(); }))
    return std::nullopt;
  TiledContraction match;
  for (auto [dim, type] : llvm::enumerate(op.getIteratorTypesArray())) {
    bool inA = a.isFunctionOfDim(dim), inB = b.isFunctionOfDim(dim);
    if (type == utils::IteratorType::reduction)
      match.k.push_back(dim);
    else if (!c.isFunctionOfDim(dim))
      return std::nullopt;
    else if (inA && inB)
      match.batch.push_back(dim);
    else if (inB)
      match.n.push_back(dim);
    else
      match.m.push_back(dim);
  }
  if (match.m.empty() || match.n.empty() || match.k.empty())
    return std::nullopt;
  return match;
}

std::optional<TiledContraction> matchTiledContraction(linalg::GenericOp op) {
  // f32 or f16 operands (the staged tiles hold their type; the cloned body
  // widens them, as `out + extf(a) * extf(b)` of --precision fp16 does)
  // and an f32 result (the accumulators).
  std::optional<TiledContraction> loops = matchContractionLoops(op);
  if (!loops)
    return std::nullopt;
  for (Value operand : op.getDpsInputs()) {
    Type type = getElementTypeOrSelf(operand.getType());
    if (!type.isF32() && !type.isF16())
      return std::nullopt;
  }
  if (!getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
    return std::nullopt;
  return loops;
}

std::optional<std::pair<TiledContraction, MmaOperands>>
matchMmaContraction(linalg::GenericOp op, bool allowTF32) {
  std::optional<TiledContraction> loops = matchContractionLoops(op);
  if (!loops)
    return std::nullopt;
  Type a = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type b = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
  Type c = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  if (!c.isF32() || a != b || !(a.isF16() || (allowTF32 && a.isF32())))
    return std::nullopt;
  MmaOperands operands = a.isF16() ? MmaOperands::F16 : MmaOperands::TF32;
  // yield out + ext(a) * ext(b), nothing else in the body.
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != (a.isF16() ? 5u : 3u))
    return std::nullopt;
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  BlockArgument out = body.getArgument(2);
  Value product = add.getLhs() == out   ? add.getRhs()
                  : add.getRhs() == out ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return std::nullopt;
  auto operandOf = [&](Value value) -> Value {
    if (a.isF32())
      return value;
    auto ext = value.getDefiningOp<arith::ExtFOp>();
    return ext && ext.getType().isF32() ? ext.getIn() : Value();
  };
  Value x = operandOf(mul.getLhs()), y = operandOf(mul.getRhs());
  bool inOrder = x == body.getArgument(0) && y == body.getArgument(1);
  bool swapped = x == body.getArgument(1) && y == body.getArgument(0);
  if (!inOrder && !swapped)
    return std::nullopt;
  return std::make_pair(*loops, operands);
}

Operation *matchRowReduction(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() < 1 ||
      !hasSimpleLoops(op))
    return nullptr;
  Type type = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  if (!type.isF32() && !type.isInteger(32))
    return nullptr;
  Block &body = op.getRegion().front();
  BlockArgument out = body.getArgument(op.getNumDpsInputs());
  Operation *comb = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!comb || comb->getBlock() != &body || comb->getNumOperands() != 2 ||
      comb->getNumResults() != 1 || comb->getNumRegions() ||
      comb->getResult(0).getType() != type || !out.hasOneUse() ||
      out.getUses().begin()->getOwner() != comb ||
      !arith::getNeutralElement(comb))
    return nullptr;
  return comb;
}

linalg::GenericOp getSingleThreadGeneric(Operation &op) {
  auto loop = dyn_cast<scf::ParallelOp>(op);
  if (!loop || loop.getNumLoops() != 1 || loop.getNumReductions() ||
      getConstantIntValue(loop.getLowerBound()[0]) != 0 ||
      getConstantIntValue(loop.getUpperBound()[0]) != 1 ||
      !llvm::hasSingleElement(loop.getBody()->without_terminator()))
    return nullptr;
  return dyn_cast<linalg::GenericOp>(loop.getBody()->front());
}

} // namespace kiln

namespace {

using namespace kiln;

/// Vulkan guarantees 65535 workgroups per dimension.
constexpr int64_t kMaxWorkgroups = 65535;

struct SelectLoweringConfigPass
    : kiln::impl::KilnGPUSelectLoweringConfigPassBase<
          SelectLoweringConfigPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &body = func.getBody().front();
      for (Operation &op : body) {
        if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
          setGPULoweringConfig(generic, select(generic));
          continue;
        }
        // A reduction without parallel loops, wrapped by
        // kiln-gpu-prepare-loops in a one-iteration scf.parallel.
        if (auto generic = getSingleThreadGeneric(op))
          setGPULoweringConfig(generic, select(generic));
      }
    }
  }

  /// Whether every input the reduction reads along its reduced dims has
  /// them innermost (neighbouring threads then read neighbouring elements):
  /// softmax, layernorm, a reduction over the last axes, global pooling of
  /// NCHW. A matrix-vector product reads its matrix across rows: generic.
  static bool reducesInnermost(linalg::GenericOp op) {
    SmallVector<unsigned> reduced;
    op.getReductionDims(reduced);
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      if (llvm::none_of(reduced, [&](unsigned dim) {
            return map.isFunctionOfDim(dim);
          }))
        continue;
      if (map.getNumResults() < reduced.size())
        return false;
      for (auto [i, dim] : llvm::enumerate(reduced))
        if (map.getDimPosition(map.getNumResults() - reduced.size() + i) != dim)
          return false;
    }
    return true;
  }

  GPULoweringConfig select(linalg::GenericOp op) {
    GPULoweringConfig config;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (mmaSync) {
      if (auto mma = matchMmaContraction(op, tf32)) {
        auto product = [&](ArrayRef<unsigned> dims) {
          int64_t size = 1;
          for (unsigned dim : dims)
            size *= ranges[dim];
          return size;
        };
        const TiledContraction &loops = mma->first;
        int64_t m = product(loops.m), n = product(loops.n);
        int64_t batch = product(loops.batch);
        // 4 warps; a 64x64 tile as 2x2 warps of 32x32 (2 x 4 mma tiles
        // each), or 32x64 as 1x4 warps of 32x16 when M is small. K steps of
        // 32 f16 (two m16n8k16) or 16 f32 (two m16n8k8): the staged rows
        // are padded by 16 bytes against bank conflicts.
        bool isF16 = mma->second == MmaOperands::F16;
        int64_t tm = m <= 32 ? 32 : 64, tn = 64, tk = isF16 ? 32 : 16;
        int64_t bytes = isF16 ? 2 : 4;
        int64_t wn = tm == 32 ? 16 : 32;
        // Large products: 128x128 tiles as 2x2 warps of 64x64 (4 x 8 mma
        // tiles each: twice the reuse of every staged element), where the
        // target's workgroup memory allows them.
        if (m >= 128 && n >= 128 &&
            (128 + 128) * (tk * bytes + 16) <= maxWorkgroupMemory) {
          tm = tn = 128;
          wn = 64;
        }
        int64_t sharedBytes = (tm + tn) * (tk * bytes + 16);
        if (maxWorkgroupInvocations >= 128 &&
            sharedBytes <= maxWorkgroupMemory &&
            llvm::divideCeil(n, tn) <= kMaxWorkgroups &&
            llvm::divideCeil(m, tm) <= kMaxWorkgroups &&
            batch <= kMaxWorkgroups) {
          config.kind = GPUKernelKind::MatmulMma;
          config.tileSizes = {tm, tn, tk};
          config.workgroupSize = {128, 1, 1};
          config.warpTile = {tm == 128 ? 64 : 32, wn};
          config.mmaShape = {16, 8, isF16 ? 16 : 8};
          return config;
        }
      }
    }
    if (auto contraction = matchTiledContraction(op)) {
      auto product = [&](ArrayRef<unsigned> dims) {
        int64_t size = 1;
        for (unsigned dim : dims)
          size *= ranges[dim];
        return size;
      };
      int64_t m = product(contraction->m), n = product(contraction->n);
      int64_t k = product(contraction->k);
      int64_t batch = product(contraction->batch);
      // 16 threads on x (the N dim, coalesced), as many rows on y as the
      // target allows up to 256 threads; a thread computes a
      // (TM / TY) x (TN / 16) micro-tile.
      int64_t threads = maxWorkgroupInvocations >= 256   ? 256
                        : maxWorkgroupInvocations >= 128 ? 128
                                                         : 0;
      int64_t tm = m <= 32 ? 32 : 64, tn = 64, tk = 16;
      // Enough workgroups to keep every multiprocessor busy (a batch-1
      // ResNet's late convolutions have M = 49): smaller tiles, rows first,
      // down to 16 x 32, while the grid has fewer than minWorkgroups.
      auto workgroups = [&] {
        return llvm::divideCeil(m, tm) * llvm::divideCeil(n, tn) * batch;
      };
      while (workgroups() < minWorkgroups && (tm > 16 || tn > 32)) {
        if (tm > 16 && (tm >= tn || tn <= 32))
          tm /= 2;
        else
          tn /= 2;
      }
      if (tm * tn <= 1024)
        threads = std::min<int64_t>(threads, 128);
      // A longer K step where the target allows it: each step is a round
      // trip to global memory and two barriers, which a long K (ResNet's
      // 3x3x512) pays thousands of times.
      // Bytes per staged element: the operands' own (f16 tiles are half
      // the size of f32 ones).
      int64_t aBytes = getElementTypeOrSelf(op.getDpsInputs()[0].getType())
                           .getIntOrFloatBitWidth() / 8;
      int64_t bBytes = getElementTypeOrSelf(op.getDpsInputs()[1].getType())
                           .getIntOrFloatBitWidth() / 8;
      auto tileBytes = [&](int64_t stepK) {
        return tm * stepK * aBytes + stepK * tn * bBytes;
      };
      while (tk * 2 <= maxTileK && tk * 2 <= k &&
             tileBytes(tk * 2) <= maxWorkgroupMemory)
        tk *= 2;
      int64_t sharedBytes = tileBytes(tk);
      if (threads && m >= 4 && n >= 16 && k >= 4 &&
          sharedBytes <= maxWorkgroupMemory &&
          llvm::divideCeil(n, tn) <= kMaxWorkgroups &&
          llvm::divideCeil(m, tm) <= kMaxWorkgroups && batch <= kMaxWorkgroups) {
        config.kind = GPUKernelKind::MatmulTiled;
        config.tileSizes = {tm, tn, tk};
        config.workgroupSize = {16, threads / 16, 1};
        return config;
      }
    }
    if (matchRowReduction(op) && reducesInnermost(op)) {
      int64_t reduced = 1;
      for (auto [range, type] :
           llvm::zip(ranges, op.getIteratorTypesArray()))
        if (type == utils::IteratorType::reduction)
          reduced *= range;
      int64_t threads = std::min<int64_t>(
          llvm::PowerOf2Ceil(reduced),
          llvm::bit_floor(static_cast<uint64_t>(
              std::clamp<int64_t>(maxWorkgroupInvocations, 1, 256))));
      // Short rows stay serial in one thread each: a workgroup per row
      // would leave most of its threads idle.
      if (reduced >= 32 && threads >= 32 &&
          threads * 4 <= maxWorkgroupMemory) {
        config.kind = GPUKernelKind::RowReduction;
        config.workgroupSize = {threads, 1, 1};
        return config;
      }
    }
    return config;
  }
};

} // namespace
