//===- DropRedundantFills.cpp - a fill of what still holds the value ------===//
//
// Bufferization reuses one buffer for same-shaped padded tensors, and
// kiln-decompose-pads fills each one's border strips: MobileNetV2's blocks of
// one resolution refill the same strips of the same buffer before every
// depthwise convolution (73 fills, 30 of them repeats), each a sequential
// memset the other threads wait for. A `linalg.fill` on buffers is dropped
// when an earlier fill in the same block wrote the same value to the same view
// and nothing since may have written memory of that view.
//
// It runs after memory planning: before it, the blocks' padded tensors are
// different allocations; after it, views of the arena at the same offset
// (which CSE merges into one value).
//
// Writes are judged by their memory effects (nested ones included). A write
// to other memory (another argument, a global) or to another buffer of the
// arena whose bytes do not overlap cannot touch the filled view. A write to
// the same buffer is harmless when it goes through a static subview of the
// buffer (or a view of one, which stays inside it) whose box is disjoint from
// the filled one: the expand conv's epilogue writing the interior of the
// padded buffer. Anything else (an unknown effect, a write through the whole
// buffer) forgets what was filled.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {
#define GEN_PASS_DEF_KILNDROPREDUNDANTFILLSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Where a view lies: the memory it views (`root`); the buffer it was cut
/// from (`base`: the root, or a `memref.view` of the scratch arena at a
/// constant byte offset); and per dim of the base the first and last index
/// the view may touch (empty when unknown: anywhere in the base). A null root
/// is memory of unknown origin (a memref yielded by a region, say).
struct Place {
  Value root, base;
  int64_t baseOffset = 0, baseBytes = -1; // bytes of the root; -1 unknown
  SmallVector<std::pair<int64_t, int64_t>> box;
};

/// Whether `value` is memory nothing else in the function aliases unless
/// viewed from it: an allocation, a global, or an argument of the function
/// (a caller's buffer, or the scratch arena).
bool isDistinctRoot(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp>(
      value.getDefiningOp());
}

int64_t staticBytes(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() || !memref.getLayout().isIdentity() ||
      !memref.getElementType().isIntOrFloat())
    return -1;
  return memref.getNumElements() *
         llvm::divideCeil(memref.getElementTypeBitWidth(), 8);
}

/// The place of `value`: the chain of views up to a distinct root. The box
/// comes from a static subview taken directly of the base (a view of a view
/// stays inside it).
Place placeOf(Value value) {
  Place place;
  SmallVector<Operation *> chain; // views, innermost first
  while (!isDistinctRoot(value)) {
    auto view = dyn_cast_or_null<ViewLikeOpInterface>(value.getDefiningOp());
    if (!view)
      return place; // unknown origin
    chain.push_back(view);
    value = view.getViewSource();
  }
  place.root = value;
  place.base = value;
  size_t next = chain.size(); // the view applied to the base, from the end
  if (auto view = dyn_cast_or_null<memref::ViewOp>(
          chain.empty() ? nullptr : chain.back())) {
    std::optional<int64_t> offset = getConstantIntValue(view.getByteShift());
    place.base = view.getResult();
    place.baseOffset = offset.value_or(0);
    place.baseBytes = offset ? staticBytes(view.getType()) : -1;
    --next;
  } else {
    place.baseBytes = staticBytes(value.getType());
  }
  auto subview = dyn_cast_or_null<memref::SubViewOp>(
      next == 0 ? nullptr : chain[next - 1]);
  if (!subview || subview.getSourceType().getRank() !=
                      static_cast<int64_t>(subview.getStaticSizes().size()))
    return place; // the whole base
  ArrayRef<int64_t> offsets = subview.getStaticOffsets();
  ArrayRef<int64_t> sizes = subview.getStaticSizes();
  ArrayRef<int64_t> strides = subview.getStaticStrides();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (ShapedType::isDynamic(offsets[i]) || ShapedType::isDynamic(sizes[i]) ||
        ShapedType::isDynamic(strides[i]) || sizes[i] == 0) {
      place.box.clear();
      return place;
    }
    place.box.push_back(
        {offsets[i], offsets[i] + (sizes[i] - 1) * strides[i]});
  }
  return place;
}

bool mayOverlap(const Place &a, const Place &b) {
  if (!a.root || !b.root)
    return true;
  if (a.root != b.root)
    return false;
  bool sameBase = a.base == b.base ||
                  (a.base.getType() == b.base.getType() &&
                   a.baseOffset == b.baseOffset && a.baseBytes >= 0 &&
                   b.baseBytes >= 0);
  if (!sameBase) // different buffers of one arena: their byte ranges
    return a.baseBytes < 0 || b.baseBytes < 0 ||
           (a.baseOffset < b.baseOffset + b.baseBytes &&
            b.baseOffset < a.baseOffset + a.baseBytes);
  if (a.box.empty() || b.box.empty())
    return true;
  for (auto [x, y] : llvm::zip(a.box, b.box))
    if (x.second < y.first || y.second < x.first)
      return false;
  return true;
}

/// The places `op` (with what it nests) may write; nullopt when unknown.
std::optional<SmallVector<Place>> writtenPlaces(Operation *op) {
  SmallVector<Place> places;
  bool known = true;
  op->walk([&](Operation *inner) {
    // An op's own effects (a linalg op's writes to its outputs) when it
    // declares them; otherwise an op whose effects are its nested ops' (scf
    // loops) adds nothing itself.
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!effects && inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    if (!effects) {
      known = false;
      return WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &effect : list) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect()))
        continue;
      Value value = effect.getValue();
      if (!value) {
        known = false;
        return WalkResult::interrupt();
      }
      if (isa<BaseMemRefType>(value.getType()))
        places.push_back(placeOf(value));
    }
    return WalkResult::advance();
  });
  if (!known)
    return std::nullopt;
  return places;
}

bool sameValue(Value a, Value b) {
  if (a == b)
    return true;
  Attribute x, y;
  return matchPattern(a, m_Constant(&x)) && matchPattern(b, m_Constant(&y)) &&
         x == y;
}

struct DropRedundantFillsPass
    : kiln::impl::KilnDropRedundantFillsPassBase<DropRedundantFillsPass> {
  void runOnOperation() override {
    for (Block &block : getOperation().getBody()) {
      // Views whose contents are known: the fill that wrote them.
      SmallVector<std::pair<linalg::FillOp, Place>> filled;
      SmallVector<Operation *> redundant;
      for (Operation &op : block) {
        auto fill = dyn_cast<linalg::FillOp>(op);
        if (fill && fill.hasPureBufferSemantics()) {
          Value out = fill.getOutputs()[0];
          auto same = llvm::find_if(filled, [&](auto &entry) {
            return entry.first.getOutputs()[0] == out &&
                   sameValue(entry.first.getInputs()[0], fill.getInputs()[0]);
          });
          if (same != filled.end()) {
            redundant.push_back(fill);
            continue;
          }
        }
        std::optional<SmallVector<Place>> written = writtenPlaces(&op);
        if (!written) {
          filled.clear();
        } else {
          llvm::erase_if(filled, [&](auto &entry) {
            return llvm::any_of(*written, [&](const Place &place) {
              return mayOverlap(place, entry.second);
            });
          });
        }
        if (fill && fill.hasPureBufferSemantics()) {
          Place place = placeOf(fill.getOutputs()[0]);
          if (place.root)
            filled.push_back({fill, place});
        }
      }
      for (Operation *op : redundant)
        op->erase();
    }
  }
};

} // namespace
