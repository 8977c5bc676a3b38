//===- Kernels.h - shared pieces of the CPU micro-kernels -------*- C++ -*-===//
//
// Internal to kiln-emit-microkernels (codegen/CPU/EmitMicrokernels.cpp and
// codegen/CPU/Kernels/*.cpp): the register-block emitter every kernel family
// uses (KernelBuilder, BlockSpec, emitBlock), the thread partitioning
// helpers (emitParallel, RowGroups, emitColumnShapes), epilogue fusion
// (Epilogue.cpp), fill folding (FillFolding.cpp), compile-time weight
// packing (WeightPacking.cpp) and the kernel families' entry points. The
// kernels make no blocking choice: they read the op's
// #kiln.kernel_strategy (kiln-select-kernel-strategy) and leave an op
// without one to the generic lowering.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CPU_KERNELS_KERNELS_H
#define KILN_CODEGEN_CPU_KERNELS_KERNELS_H

#include "dialects/Kiln/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringMap.h"

#include <functional>
#include <optional>

namespace kiln::kernels {

class WeightPacker;

using namespace mlir;

/// Element types the kernels implement: f32, and i32 (the integer products of
/// quantized models: multiply-add instead of FMA); ops on others keep the
/// generic lowering (f16 and bf16 only as the A and B operands of a product
/// into f32: innerUnitStride's allowHalf, NarrowFloat.cpp).
inline bool isSupportedElementType(Type type) {
  return type.isF32() || type.isSignlessInteger(32);
}

struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  /// Lanes of one vector (the strategy's vector_width).
  int64_t vw;
  /// vector<vw x element type>: the element type is the kernel's, passed
  /// down from its operands.
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
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(type, bits));
  }

  /// vw lanes of `memref`'s element type (the kernel's, or another one an
  /// epilogue reads: a requantized residual's bytes) at `indices`, the lanes
  /// outside mask `m` (if any) zero.
  Value load(Value memref, ValueRange indices, Value m) {
    auto type = VectorType::get(
        {vw}, cast<MemRefType>(memref.getType()).getElementType());
    if (!m)
      return vector::LoadOp::create(b, loc, type, memref, indices);
    Value zero = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
    return vector::MaskedLoadOp::create(b, loc, type, memref, indices, m, zero);
  }

  void store(Value value, Value memref, ValueRange indices, Value m) {
    if (!m)
      vector::StoreOp::create(b, loc, value, memref, indices);
    else
      vector::MaskedStoreOp::create(b, loc, memref, indices, m, value);
  }

  /// vw lanes of `scalar` (of any element type).
  Value splat(Value scalar) {
    return vector::BroadcastOp::create(
        b, loc, VectorType::get({vw}, scalar.getType()), scalar);
  }

  /// acc + a * b: an FMA on floats, a multiply and an add on integers
  /// (exact; wraps like the int32 accumulation ONNX allows).
  Value multiplyAdd(Value a, Value bv, Value acc) {
    if (isa<FloatType>(vt.getElementType()))
      return vector::FMAOp::create(b, loc, a, bv, acc);
    return arith::AddIOp::create(b, loc, acc,
                                 arith::MulIOp::create(b, loc, a, bv));
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
  /// 8-bit kernels: acc + the products of the (splat) A and B vectors, e.g.
  /// a 4-way dot product (vpdpbusd); default KernelBuilder::multiplyAdd.
  std::function<Value(KernelBuilder &, Value, Value, Value)> multiplyAdd;
};

//===----------------------------------------------------------------------===//
// 8-bit kernels (Int8.cpp)
//===----------------------------------------------------------------------===//

/// The product form of an i8 x i8 -> i32 matmul / conv (set by
/// kiln-select-kernel-strategy from the target): "vpdpbusd" (x86 VNNI),
/// "pmaddwd" (x86 without VNNI), "sdot" (AArch64 dotprod); absent: one byte
/// per step (Int8.cpp explains each). Pmaddubsw is not named by the
/// attribute: the kernels take it for "pmaddwd" at 8 or 16 lanes when the
/// constant weights allow it exactly (refineInt8Dot).
constexpr llvm::StringLiteral kInt8DotAttrName = "kiln.int8_dot";

enum class Int8Dot { Bytes, Vpdpbusd, Pmaddwd, Pmaddubsw, Sdot };

/// On an 8-bit matmul / conv: its operand 0 holds the signed activations
/// with each sign bit flipped (u8 x + 128; kiln-flip-int8-activations).
constexpr llvm::StringLiteral kInt8FlippedLhsAttrName = "kiln.int8_flipped_lhs";

/// Whether `op`'s operand 0 is sign-flipped (kInt8FlippedLhsAttrName).
bool hasFlippedLhs(Operation *op);
/// Whether the kernel of `form` adds -128 * sum_k w per column (the packed
/// column term): it multiplies unsigned activations a + 128 (vpdpbusd and
/// vpmaddubsw always, the others when `flipped`).
bool int8UsesColumnTerm(Int8Dot form, bool flipped);

/// The form `op`'s kiln.int8_dot names (Bytes without one).
Int8Dot int8DotOf(Operation *op);
/// `form`, or Pmaddubsw where `form` is Pmaddwd at `vw` 8 (AVX2) or 16
/// (AVX-512BW), the contiguous reduction dim `inner` divides by 4 and every
/// pair of the constant `weights` vpmaddubsw sums is exact in 16 bits for
/// any u8 activations (WeightPacker::bytePairsFitInt16).
Int8Dot refineInt8Dot(Int8Dot form, int64_t vw, int64_t inner, Value weights,
                      WeightPacker &packer);
/// The most rows of a Pmaddubsw register block of the strategy's vectors:
/// besides rows x vectors accumulators and the B vectors, the broadcast, the
/// ones of vpmaddwd and the s16 pair sums take a register each (AVX2's 16
/// registers hold 5 x 2, not the f32 kernel's 6 x 2, without spills).
int64_t pmaddubswRows(KernelStrategyAttr strategy);
/// Reduction steps per i32 lane of one product instruction (4 vpdpbusd /
/// sdot, 2 pmaddwd, 1 bytes): B is packed with that many steps of a column
/// side by side, and the contiguous reduction dim must divide by it.
int64_t int8Group(Int8Dot form);

/// The A operand of an 8-bit kernel at `indices` (the last one a multiple of
/// the group): the group's bytes as one i32 (vpdpbusd: each byte's sign bit
/// flipped, u8; pmaddwd: two bytes sign-extended to i16), or for Bytes the
/// byte sign-extended to i32. `flipped` (the bytes are sign-flipped already):
/// the unsigned bytes as they are for vpdpbusd / vpmaddubsw, zero-extended
/// for pmaddwd and Bytes (int8UsesColumnTerm), flipped back for sdot.
Value loadInt8A(KernelBuilder &kb, Value memref, ValueRange indices,
                Int8Dot form, bool flipped = false);
/// Vector v of packed 8-bit B at `indices` (the last one: the panel column
/// offset) as vw i32 lanes: of `group` bytes (pmaddwd: of two i16), or
/// bytes sign-extended.
Value loadInt8B(KernelBuilder &kb, Value packed, ValueRange indices,
                Int8Dot form);
/// Declares the product intrinsic of `form` at `vw` i32 lanes in `kernel`'s
/// module; returns the name int8DotAccumulate calls ("" for Bytes).
std::string declareInt8Dot(Operation *kernel, int64_t vw, Int8Dot form);
/// acc + the dot products of the lanes of `a` (splat) and `b` in `form`.
Value int8DotAccumulate(KernelBuilder &kb, Int8Dot form, StringRef name,
                        Value a, Value b, Value acc);

/// 8-bit depthwise (lane-wise products, ChannelWindow.cpp): the filter
/// vector `bytes` (vw x i8) as vw i32 lanes for int8LaneProduct: for
/// Vpdpbusd / Pmaddwd each value sign-extended to i16 in the low half of its
/// lane with a high half of 0, otherwise sign-extended to i32.
Value int8LaneOperand(KernelBuilder &kb, Value bytes, Int8Dot form);
/// Declares the lane product of `form` at `vw` i32 lanes (vpdpwssd for
/// Vpdpbusd, pmaddwd for Pmaddwd) in `kernel`'s module; "" for the others.
std::string declareInt8LaneProduct(Operation *kernel, int64_t vw, Int8Dot form);
/// acc + a * b per i32 lane, `a` sign-extended bytes, `b` from
/// int8LaneOperand (exact: |a * b| <= 2^14).
Value int8LaneProduct(KernelBuilder &kb, Int8Dot form, StringRef name, Value a,
                      Value b, Value acc);

//===----------------------------------------------------------------------===//
// f16 / bf16 operands (NarrowFloat.cpp)
//===----------------------------------------------------------------------===//

/// The bf16 pair product of a bf16 x bf16 -> f32 matmul with a constant B
/// (set by kiln-select-kernel-strategy from the target): "vdpbf16ps" (x86
/// AVX512-BF16: 2 bf16 products per f32 lane, summed into it); absent: each
/// operand widened to f32 and an f32 FMA.
constexpr llvm::StringLiteral kBF16DotAttrName = "kiln.bf16_dot";

/// Whether `op` carries kiln.bf16_dot = "vdpbf16ps".
bool hasBF16Dot(Operation *op);

/// `value` (a scalar or vector of f16 / bf16) widened to f32; another type
/// (f32, i32) as it is.
Value widenToF32(KernelBuilder &kb, Value value);

/// The A operand of a vdpbf16ps kernel: the bf16 pair at `indices` (the last
/// one even) as one i32, for a broadcast.
Value loadBF16PairA(KernelBuilder &kb, Value memref, ValueRange indices);

/// Declares vdpbf16ps at `vw` f32 lanes in `kernel`'s module; returns its
/// name.
std::string declareBF16Dot(Operation *kernel, int64_t vw);

/// acc + the pair products of `a` (vw i32 lanes: broadcast bf16 pairs) and
/// `b` (2 * vw bf16).
Value bf16DotAccumulate(KernelBuilder &kb, StringRef name, Value a, Value b,
                        Value acc);

/// Reduction steps of packed B prefetched ahead (with 16 columns, one 64-byte
/// line each).
constexpr int64_t kPrefetchSteps = 8;
/// Packed B panels up to this size stay in L1 across a task's blocks; larger
/// ones are read from L2 by every block, and prefetched.
constexpr int64_t kL1PanelBytes = 24 * 1024;

/// Columns of one packed panel of 32-bit B (f32, i32) when the kernel's
/// column panel is `nr` columns: kSharedPanelWidth where `nr` is a multiple
/// of it, else `nr`. x86-64-v3 (6 x 2 ymm: 16 columns) and x86-64-v4 (6 x 4
/// zmm: 64 columns; 16 to 48 for narrow layers) then pack B alike, and a
/// portable artifact holds those weights once (codegen/WeightPool.h): a
/// v4 kernel reads its 64 columns as 4 streams of 16 (one 64-byte line per
/// reduction step each), as MLAS's kernels read their 16-column panels.
/// A matrix-vector product (at most 2 rows: chooseBlocking's regime of as
/// many vectors as the registers hold, 12 at 16 lanes) whose B fits in L2
/// (`bBytes` at most kGemvPanelBytes) packs the kernel's own panel instead:
/// in 16-column panels each reduction step read 12 lines a multiple of 4 KB
/// apart (one L1 set), and a GRU step's [1, 256] x [256, 768] product, its
/// weights in L2, took 40% longer than from one stream. A B streamed from
/// memory keeps the 16 streams (MobileNetV2's 1280 x 1000 head: one stream
/// was 30% slower). Such weights are packed per variant in a portable
/// artifact (v3 and v4 panels differ).
constexpr int64_t kSharedPanelWidth = 16;
constexpr int64_t kGemvPanelBytes = 1 << 20;
inline int64_t packedPanelWidth(int64_t nr, int64_t rows = INT64_MAX,
                                int64_t bBytes = INT64_MAX) {
  if (rows <= 2 && bBytes <= kGemvPanelBytes)
    return nr;
  return nr % kSharedPanelWidth == 0 ? kSharedPanelWidth : nr;
}

/// The packed panel and the lane within it of vector `v` of column panel `p`
/// of a kernel with `nr` columns per panel, B packed in panels of `panel`
/// columns (packedPanelWidth(nr, rows)).
std::pair<Value, Value> packedColumn(KernelBuilder &kb, Value p, int64_t nr,
                                     int64_t panel, int64_t v);

/// Prefetches `memref[indices]` into L1 for reading.
void prefetch(KernelBuilder &kb, Value memref, ValueRange indices);

/// Emits one register block (see BlockSpec).
void emitBlock(KernelBuilder &kb, const BlockSpec &spec);

/// Emits `scf.parallel` over [0, n) marked for the thread pool; `body` gets
/// the index.
void emitParallel(OpBuilder &b, Location loc, int64_t n,
                  function_ref<void(OpBuilder &, Value)> body);

/// Emits `scf.if (cond) then {thenFn} else {elseFn}` without results.
void emitIf(OpBuilder &b, Location loc, Value cond,
            function_ref<void(OpBuilder &)> thenFn,
            function_ref<void(OpBuilder &)> elseFn);

/// A statically shaped memref of a supported element type (or i8, the
/// operands of an 8-bit kernel, with `allowBytes`; f16 / bf16, the operands
/// of a narrow-float product, with `allowHalf`) whose innermost dim is
/// contiguous.
bool innerUnitStride(Value memref, bool allowBytes = false,
                     bool allowHalf = false);

/// Emits `body(vecs, lastLanes)` for panel `p` of `panels` column panels
/// of `fullVecs` vectors: full panels, and the last one when `tailCols`
/// columns are left (fewer vectors, masked last vector).
void emitColumnShapes(
    KernelBuilder &kb, Value p, int64_t fullPanels, int64_t tailCols,
    int64_t fullVecs,
    function_ref<void(KernelBuilder &, int64_t, int64_t)> body);

/// Rows per parallel chunk of a matmul or conv (in register blocks).
constexpr int64_t kRowBlocksPerChunk = 16;

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
    // ceil(fullRowBlocks / maxBlocksPerGroup) without the a + b - 1 that
    // overflows for maxBlocksPerGroup = INT64_MAX (found by UBSan).
    groups = std::max<int64_t>(
        1, fullRowBlocks == 0 ? 0 : 1 + (fullRowBlocks - 1) / maxBlocksPerGroup);
    blocksPerGroup = (fullRowBlocks + groups - 1) / groups;
  }

  /// Emits the blocks of group `g`; `block(row0, rows)` emits one.
  void emit(KernelBuilder &kb, Value g,
            function_ref<void(KernelBuilder &, Value, int64_t)> block) const;
};

//===----------------------------------------------------------------------===//
// Epilogue fusion (Epilogue.cpp)
//===----------------------------------------------------------------------===//

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
             Value mask) const;

  /// Applies the body to `acc` at the generic's loop indices `loops`.
  Value apply(KernelBuilder &kb, Value acc, ArrayRef<Value> loops,
              Value mask) const;
};

/// Finds the epilogue of a kernel writing `out` (see Epilogue); `initCopy`
/// is the copy of a filled buffer into `out` that the kernel folds, if any.
/// With `mergedLastDims` the kernel stores `out` viewed with its last two
/// dims merged (a grouped conv's G and F as NHWC's channels): the generic
/// must read that collapse_shape of `out`, and the indices the kernel hands
/// Epilogue::store are the collapsed view's.
std::optional<Epilogue> findEpilogue(Operation *kernel, Value out,
                                     Operation *initCopy,
                                     bool mergedLastDims = false);

/// The output side of a conv / depthwise block: accumulator (i, v) starts
/// from the fill value (or what `out` holds) and is stored at `outIndex(i,
/// v)` into `out`, or through the epilogue if there is one.
void setConvOutput(
    BlockSpec &spec, Value fillValue, Value out,
    const std::optional<Epilogue> &epilogue,
    std::function<SmallVector<Value>(KernelBuilder &, int64_t, int64_t)>
        outIndex);

//===----------------------------------------------------------------------===//
// Fill folding (FillFolding.cpp)
//===----------------------------------------------------------------------===//

/// The constant `out` holds when `op` starts, when it comes from a fill of
/// `out`, or from a copy right before `op` of a buffer filled earlier
/// (bufferization copies a fill shared by several ops into all but the
/// last, which writes the filled buffer itself, wherever the fill is).
struct InitFill {
  Value value;
  Operation *fill = nullptr; // fill of `out` (erased unless copies
                             // between it and `kernel` still read it)
  Operation *kernel = nullptr;
  Operation *copy = nullptr; // copy into `out` (erased, and its source's
                             // fill when nothing else reads it)
  /// Erases what the kernel folded (after it was emitted).
  void erase();
};

/// The fill folded into the accumulators of `op` writing `out`, or none.
InitFill fusableFill(Operation *op, Value out);

/// Erases what a kernel replaced once its loops are emitted: the epilogue
/// generic it applied, the fill it folded and the linalg op itself.
void eraseLoweredOps(Operation *kernel, InitFill &fill,
                     const std::optional<Epilogue> &epilogue);

//===----------------------------------------------------------------------===//
// Weight packing (WeightPacking.cpp)
//===----------------------------------------------------------------------===//

/// Packs constant B operands at compile time, once per (global, panel width,
/// reduction rank, batch).
class WeightPacker {
public:
  explicit WeightPacker(ModuleOp module) : module(module), symbols(module) {}

  /// Packs the constant behind `weights` (viewed as [batch][R][N]) into
  /// panels [batch][NP][redShape...][NR] (no batch dim when `batch` is 0;
  /// NR is `nr`: the kernel's packedPanelWidth);
  /// returns the packed buffer or null (not a constant global, or an
  /// element type the packer does not read).
  Value pack(OpBuilder &b, Location loc, Value weights,
             ArrayRef<int64_t> redShape, int64_t n, int64_t nr,
             int64_t batch = 0);

  /// 8-bit weights (i8, viewed as [R][N], R the product of `redShape`) packed
  /// into panels [N / NR][redShape..., last / group][NR * group]: `group`
  /// consecutive reduction steps of a column side by side (4 for a 4-way dot
  /// product, 1 otherwise; the last reduction dim must divide by it). With
  /// `columnTerm`, also -128 * sum_k w[k][n] per column ([NP * NR] i32: what
  /// an unsigned-by-signed dot product of sign-flipped activations adds).
  /// Null when `weights` is not such a constant.
  Value packBytes(OpBuilder &b, Location loc, Value weights,
                  ArrayRef<int64_t> redShape, int64_t n, int64_t nr,
                  int64_t group, Value *columnTerm = nullptr);

  /// Whether the constant 8-bit `weights` ([R][N], R even) have
  /// only pairs of consecutive reduction steps (w[2i][n], w[2i+1][n]) whose
  /// products with any u8 pair sum within s16: the positive weights of a
  /// pair add up to at most 128 and the negative ones to at least -128
  /// (255 * 128 = 32640), so vpmaddubsw's saturating pair sums are exact.
  /// True for 7-bit weights (onnxruntime's reduce_range: [-64, 64]).
  bool bytePairsFitInt16(Value weights, int64_t r, int64_t n);

  /// f16 / bf16 weights (viewed as [batch][R][N]) packed into panels
  /// [batch][N / NR][R / group][NR * group] of 16-bit values: `group`
  /// consecutive reduction steps of a column side by side (2 for
  /// vdpbf16ps, 1 otherwise; R must divide by it). No batch dim when
  /// `batch` is 0. Null when `weights` is not such a constant.
  Value packHalf(OpBuilder &b, Location loc, Value weights,
                 ArrayRef<int64_t> redShape, int64_t n, int64_t nr,
                 int64_t group, int64_t batch = 0);

  /// Grouped conv filters `weights` ([G][F][KH][KW][Cg], f32 or i32)
  /// packed per column panel of `nr` output channels (G * F columns) into
  /// [NP][KH][KW][span][nr]: panel p reduces over input channels
  /// [start, start + span) (groupedPanelStart), a column's weights at its
  /// own group's channels and zeros at the others'. With `ownChannels`
  /// (span = Cg) each column's Cg weights instead, [NP][KH][KW][Cg][nr]
  /// (the shuffle form: GroupedConv.cpp). Null when `weights` is not such
  /// a constant.
  Value packGrouped(OpBuilder &b, Location loc, Value weights, int64_t nr,
                    int64_t span, bool ownChannels = false);

private:
  /// The constant global (with its data) `weights` reads, or null.
  memref::GlobalOp constantSource(Value weights);
  /// A new private constant global `<source>_<suffix>` of `type` holding
  /// `init`, recorded under `key`.
  memref::GlobalOp addPacked(Location loc, memref::GlobalOp source,
                             StringRef suffix, MemRefType type, Attribute init,
                             const std::string &key);

  ModuleOp module;
  SymbolTable symbols;
  llvm::StringMap<memref::GlobalOp> packedGlobals;
};

//===----------------------------------------------------------------------===//
// Kernel families (Matmul.cpp, Conv.cpp, ChannelWindow.cpp)
//===----------------------------------------------------------------------===//

/// Input channels one column panel of `nr` output channels of a grouped
/// conv (`groups` groups of `f` output and `cg` input channels each)
/// reduces over: the most groups any panel's columns touch, times `cg`
/// (every panel reads that many channels, from a start that keeps them in
/// the input; its filters are packed block-diagonally with zeros).
inline int64_t groupedPanelChannels(int64_t groups, int64_t f, int64_t cg,
                                    int64_t nr) {
  int64_t m = groups * f, most = 1;
  for (int64_t c0 = 0; c0 < m; c0 += nr) {
    int64_t g0 = c0 / f, g1 = (std::min(m, c0 + nr) - 1) / f;
    most = std::max(most, g1 - g0 + 1);
  }
  return most * cg;
}

/// Whether a grouped conv of `f` output and `cg` input channels per group
/// runs in the shuffle form at `vw` lanes (GroupedConv.cpp): as many of
/// each, at least 4 groups to a vector. With 2 (RegNet-Y's 8 per group at
/// 16 lanes) the block-diagonal form's 2x products ran as fast (RegNet-Y
/// 1 thread, AVX-512: kiln / onnxruntime 0.74 vs 0.71, within the noise)
/// from a smaller loop body (the shuffle form unrolls rows x Cg shuffles
/// and FMAs per tap).
inline bool groupedShuffleForm(int64_t f, int64_t cg, int64_t vw) {
  return f == cg && vw % cg == 0 && vw / cg >= 4;
}

/// The first input channel column panel `p` of a grouped conv reads (see
/// groupedPanelChannels: `span` channels).
inline int64_t groupedPanelStart(int64_t p, int64_t nr, int64_t groups,
                                 int64_t f, int64_t cg, int64_t span) {
  return std::min(p * nr / f * cg, groups * cg - span);
}

/// Each replaces `op` (on buffers) by its kernel blocked as `strategy` says,
/// or fails and leaves `op` unchanged (unsupported layout or element type).
LogicalResult emitMatmul(linalg::LinalgOp op, bool batched,
                         KernelStrategyAttr strategy, WeightPacker &packer);
LogicalResult emitConv(linalg::Conv2DNhwcHwcfOp op, KernelStrategyAttr strategy,
                       WeightPacker &packer);
LogicalResult emitGroupedConv(linalg::Conv2DNhwgcGfhwcOp op,
                              KernelStrategyAttr strategy,
                              WeightPacker &packer);
LogicalResult emitDepthwise(linalg::DepthwiseConv2DNhwcHwcOp op,
                            KernelStrategyAttr strategy);
LogicalResult emitPooling(linalg::LinalgOp op, KernelStrategyAttr strategy);

} // namespace kiln::kernels

#endif // KILN_CODEGEN_CPU_KERNELS_KERNELS_H
