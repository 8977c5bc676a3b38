//===- SelectKernelStrategy.cpp - register blocking chosen per target -----===//
//
// Records on each matmul, batch matmul, NHWC convolution, grouped NHWC
// convolution, depthwise convolution and NHWC pooling with static shapes and f32 operands how its
// micro-kernel is blocked for the target (#kiln.kernel_strategy, read by
// kiln-emit-microkernels): the vector width and register count (pass
// options, from the resolved CPU target), the register block (rows x
// vectors) and the reduction block; on tensors also whether a convolution
// is computed as Winograd F(2x2, 3x3) (kiln-winograd-convs). The pipeline
// runs it twice: on tensors before kiln-winograd-convs, and on buffers right
// before kiln-emit-microkernels (which then sees the Winograd products'
// batch matmuls too). The register blocking depends only on the target and
// the op's shape, so both runs give an op the same one.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Kernels/Kernels.h"
#include "codegen/Passes.h"
#include "dialects/Kiln/KilnDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSELECTKERNELSTRATEGYPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Rows x vectors of one broadcast-FMA register block.
struct Blocking {
  int64_t rows;
  int64_t vecs;
};

/// Chooses the register block for `cols` output columns of `rows` output
/// rows with `regs` vector registers of `vectorWidth` lanes: the fewest
/// padded columns, then the most vectors per row. rows*vecs accumulators +
/// vecs B vectors + 1 broadcast fit the register file.
Blocking chooseBlocking(int64_t cols, int64_t vectorWidth, int64_t regs,
                        int64_t rows) {
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
  // 16 registers: 6x2 (AVX2 ymm, SSE xmm); 32: 6x4 (AVX-512 zmm, NEON q).
  int64_t maxVecs = regs == 16 ? 3 : 4;
  for (int64_t vecs = std::min(maxVecs, colVecs); vecs >= 1; --vecs) {
    int64_t waste = (colVecs + vecs - 1) / vecs * vecs - colVecs;
    // 16 registers: 6x2 over 4x3 (more rows, same accumulators).
    if (regs == 16 && vecs == 3 && colVecs % 2 == 0)
      continue;
    // (A small register file: not even one row of this width.)
    if ((regs - 1 - vecs) / vecs < 1)
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

/// Reduction block (K over twice this is blocked): long enough that C's
/// partial sums are rarely reloaded, short enough that the rows' A block and
/// the B panel stay in L2. BERT-base at 1 thread ran 2% faster than with 256,
/// on Zen 4 (AVX-512, B panel 512 x 64 floats) and on Zen 1 (AVX2; its K = 768
/// matmuls now unblocked).
constexpr int64_t kReductionBlock = 512;

// When Winograd F(2x2, 3x3) pays (4 chained convs each, 1 thread, Zen 1
// AVX2): the products do 2.25x fewer multiplies than the direct conv, but
// the transforms write and read V and M (16 values per tile and channel, 4x
// the input and output), and the weights grow by 16/9.
/// Fewest 2x2 output tiles (the products' rows): 7x7 (16 tiles) with 128 to
/// 512 channels ran 22-26% faster, 4x4 (4 tiles) broke even, 3x3 with 512
/// channels lost 5% (the larger weights are read for few rows).
constexpr int64_t kMinTiles = 16;
/// Fewest C * F / (C + F): the multiplies saved per tile grow with C * F,
/// the transforms' work with C + F. C = F = 32 (16) ran 30% faster, C = 16
/// with F = 64 (12.8) broke even, C = F = 16 (8) lost 20%.
constexpr int64_t kMinChannelRatio = 14;

/// Whether `conv` (on tensors) is computed as Winograd F(2x2, 3x3): a
/// constant 3x3 filter, stride and dilation 1, and enough tiles and
/// channels for the transforms to pay.
bool chooseWinograd(linalg::Conv2DNhwcHwcfOp conv) {
  auto ones = [](DenseIntElementsAttr attr) {
    return llvm::all_of(attr.getValues<int64_t>(),
                        [](int64_t v) { return v == 1; });
  };
  // Winograd's transforms are fractions: f32 only (never the exact int32
  // products).
  if (!conv.hasPureTensorSemantics() || !ones(conv.getStrides()) ||
      !ones(conv.getDilations()) ||
      !llvm::all_of(conv->getOperandTypes(), [](Type t) {
        return getElementTypeOrSelf(t).isF32();
      }))
    return false;
  auto fType = cast<ShapedType>(conv.getInputs()[1].getType());
  auto outType = cast<ShapedType>(conv.getOutputs()[0].getType());
  if (fType.getDimSize(0) != 3 || fType.getDimSize(1) != 3 ||
      !matchPattern(conv.getInputs()[1], m_Constant()))
    return false;
  int64_t n = outType.getDimSize(0), oh = outType.getDimSize(1),
          ow = outType.getDimSize(2), f = outType.getDimSize(3);
  int64_t ch = fType.getDimSize(2);
  int64_t tiles = n * ((oh + 1) / 2) * ((ow + 1) / 2);
  return tiles >= kMinTiles && ch * f >= kMinChannelRatio * (ch + f);
}

/// Static shapes, no empty dimension, two inputs.
bool hasStaticBinaryOperands(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2)
    return false;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<ShapedType>(operand.getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() == 0)
      return false;
  }
  return true;
}

/// Whether `op` reads two i8 operands into i32, static shapes, nothing empty.
bool hasInt8Operands(linalg::LinalgOp op) {
  if (!hasStaticBinaryOperands(op))
    return false;
  auto elem = [](Value v) { return getElementTypeOrSelf(v.getType()); };
  return elem(op.getDpsInputs()[0]).isSignlessInteger(8) &&
         elem(op.getDpsInputs()[1]).isSignlessInteger(8) &&
         elem(op.getDpsInits()[0]).isSignlessInteger(32);
}

/// A matmul or NHWC conv of i8 operands into i32 (MatMulInteger /
/// ConvInteger of quantized models).
bool isInt8Kernel(linalg::LinalgOp op) {
  return isa<linalg::MatmulOp, linalg::Conv2DNhwcHwcfOp>(op.getOperation()) &&
         hasInt8Operands(op);
}

/// A depthwise NHWC conv of i8 input and filter into i32 (a depthwise
/// ConvInteger of a quantized model).
bool isInt8Depthwise(linalg::LinalgOp op) {
  return isa<linalg::DepthwiseConv2DNhwcHwcOp>(op.getOperation()) &&
         hasInt8Operands(op);
}

/// A matmul, batch matmul or NHWC conv of f16 or bf16 operands (one type)
/// into f32 (f16 / bf16 models, --precision), static shapes, nothing empty.
bool isNarrowFloatKernel(linalg::LinalgOp op) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNhwcHwcfOp>(
          op.getOperation()) ||
      !hasStaticBinaryOperands(op))
    return false;
  auto elem = [](Value v) { return getElementTypeOrSelf(v.getType()); };
  Type a = elem(op.getDpsInputs()[0]);
  return (a.isF16() || a.isBF16()) && elem(op.getDpsInputs()[1]) == a &&
         elem(op.getDpsInits()[0]).isF32();
}

/// Static shapes, no empty dimension, and operands of one element type the
/// kernels implement: f32, or i32 for matmuls and convolutions (the int32
/// products of quantized models; pooling stays f32); or the 8-bit
/// (depthwise included) and narrow-float products above. Other types keep the generic lowering.
bool kernelOperands(linalg::LinalgOp op) {
  if (isInt8Kernel(op) || isInt8Depthwise(op) || isNarrowFloatKernel(op))
    return true;
  Type elementType;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<ShapedType>(operand.getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() == 0)
      return false;
    if (elementType && type.getElementType() != elementType)
      return false;
    elementType = type.getElementType();
  }
  if (elementType && elementType.isSignlessInteger(32))
    return isa<linalg::MatmulOp, linalg::BatchMatmulOp,
               linalg::Conv2DNhwcHwcfOp, linalg::DepthwiseConv2DNhwcHwcOp>(
        op.getOperation());
  return elementType && elementType.isF32();
}

struct SelectKernelStrategyPass
    : kiln::impl::KilnSelectKernelStrategyPassBase<SelectKernelStrategyPass> {
  using KilnSelectKernelStrategyPassBase::KilnSelectKernelStrategyPassBase;

  void runOnOperation() override {
    if (vectorWidth < 1 || !llvm::isPowerOf2_64(vectorWidth) ||
        vectorRegisters < 8) {
      getOperation()->emitError()
          << "kiln-select-kernel-strategy: vector-width must be a power of "
             "two and vector-registers at least 8, got "
          << int64_t(vectorWidth) << " and " << int64_t(vectorRegisters);
      return signalPassFailure();
    }
    // The 8-bit product instruction, at the vector widths it exists in.
    bool validDot =
        int8Dot.empty() ||
        (int8Dot == "vpdpbusd" && (vectorWidth == 8 || vectorWidth == 16)) ||
        (int8Dot == "pmaddwd" &&
         (vectorWidth == 4 || vectorWidth == 8 || vectorWidth == 16)) ||
        (int8Dot == "sdot" && vectorWidth == 4);
    if (!bf16Dot.empty() &&
        !(bf16Dot == "vdpbf16ps" && (vectorWidth == 8 || vectorWidth == 16))) {
      getOperation()->emitError()
          << "kiln-select-kernel-strategy: bf16-dot must be vdpbf16ps (vector "
             "width 8 or 16) or empty, got '"
          << bf16Dot << "' at vector width " << int64_t(vectorWidth);
      return signalPassFailure();
    }
    if (!validDot) {
      getOperation()->emitError()
          << "kiln-select-kernel-strategy: int8-dot must be vpdpbusd (vector "
             "width 8 or 16), pmaddwd (4, 8 or 16), sdot (4) or empty, got '"
          << int8Dot << "' at vector width " << int64_t(vectorWidth);
      return signalPassFailure();
    }

    WalkResult result = getOperation()->walk([&](linalg::LinalgOp op) {
      if (!kernelOperands(op))
        return WalkResult::advance();
      std::optional<kiln::KernelStrategyAttr> strategy = select(op);
      if (!strategy)
        return WalkResult::advance();
      if (!*strategy) // not valid (diagnosed)
        return WalkResult::interrupt();
      op->setAttr(kiln::KernelStrategyAttr::kAttrName, *strategy);
      // 8-bit products: the target's product instruction where the
      // contiguous reduction dim (K, a conv's channels) comes in its groups
      // (4 steps per lane for vpdpbusd / sdot, 2 for pmaddwd).
      if (!int8Dot.empty() && isInt8Kernel(op)) {
        auto shape = [](Value v) {
          return cast<ShapedType>(v.getType()).getShape();
        };
        int64_t inner = shape(op.getDpsInputs()[0]).back();
        int64_t group = int8Dot == "pmaddwd" ? 2 : 4;
        if (inner % group == 0)
          op->setAttr(kiln::kernels::kInt8DotAttrName,
                      StringAttr::get(op->getContext(), int8Dot));
      }
      // 8-bit depthwise: the lane product of the same instruction set
      // (vpdpwssd with VNNI, pmaddwd without; ChannelWindow.cpp).
      if ((int8Dot == "vpdpbusd" || int8Dot == "pmaddwd") &&
          isInt8Depthwise(op))
        op->setAttr(kiln::kernels::kInt8DotAttrName,
                    StringAttr::get(op->getContext(), int8Dot));
      // bf16 x bf16 -> f32 matmuls and convs: the pair product where the
      // contiguous reduction dim (K, the channels) comes in pairs and B is a
      // constant (packed with each pair side by side).
      if (!bf16Dot.empty() && isNarrowFloatKernel(op) &&
          !isa<linalg::BatchMatmulOp>(op.getOperation()) &&
          getElementTypeOrSelf(op.getDpsInputs()[0].getType()).isBF16() &&
          cast<ShapedType>(op.getDpsInputs()[0].getType()).getShape().back() %
                  2 ==
              0 &&
          (matchPattern(op.getDpsInputs()[1], m_Constant()) ||
           op.getDpsInputs()[1].getDefiningOp<memref::GetGlobalOp>()))
        op->setAttr(kiln::kernels::kBF16DotAttrName,
                    StringAttr::get(op->getContext(), bf16Dot));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// The strategy, verified (null after a diagnostic at `op`).
  kiln::KernelStrategyAttr get(Operation *op, int64_t rows, int64_t vecs,
                               int64_t reductionBlock, bool winograd = false) {
    return kiln::KernelStrategyAttr::getChecked(
        [op] { return op->emitOpError(); }, &getContext(), int64_t(vectorWidth),
        int64_t(vectorRegisters), rows, vecs, reductionBlock, winograd);
  }

  /// The strategy of `op`, or nullopt for an op without a micro-kernel.
  std::optional<kiln::KernelStrategyAttr> select(linalg::LinalgOp op) {
    auto shape = [](Value v) {
      return cast<ShapedType>(v.getType()).getShape();
    };
    Operation *o = op.getOperation();
    bool batched = isa<linalg::BatchMatmulOp>(o);
    if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(o)) {
      // Plain (non-broadcasting, non-transposed) forms only.
      if (auto mm = dyn_cast<linalg::MatmulOp>(o);
          mm && mm.hasUserDefinedMaps())
        return std::nullopt;
      if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(o);
          bmm && bmm.hasUserDefinedMaps())
        return std::nullopt;
      ArrayRef<int64_t> c = shape(op.getDpsInits()[0]);
      int64_t m = c[batched], n = c[batched + 1];
      int64_t k = shape(op.getDpsInputs()[0]).back();
      Blocking blk = chooseBlocking(n, vectorWidth, vectorRegisters, m);
      // 8-bit kernels run the whole reduction (the accumulators are exact).
      return get(o, std::min(blk.rows, m), blk.vecs,
                 k > 2 * kReductionBlock && !isInt8Kernel(op) ? kReductionBlock
                                                              : k);
    }
    if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(o)) {
      // Output pixels are the rows, filters the columns.
      ArrayRef<int64_t> out = shape(conv.getOutputs()[0]);
      ArrayRef<int64_t> w = shape(conv.getInputs()[1]);
      int64_t pixels = out[0] * out[1] * out[2];
      Blocking blk =
          chooseBlocking(out[3], vectorWidth, vectorRegisters, pixels);
      return get(o, std::min(blk.rows, pixels), blk.vecs, w[0] * w[1] * w[2],
                 chooseWinograd(conv));
    }
    if (auto conv = dyn_cast<linalg::Conv2DNhwgcGfhwcOp>(o)) {
      // Output pixels are the rows, the G * F output channels the columns;
      // a column panel reduces over the input channels of the groups it
      // covers (its filters packed block-diagonally, zeros elsewhere), so
      // the panel width is chosen for the fewest multiply-adds (panels x
      // panel width x the panel's input channels), then the widest.
      ArrayRef<int64_t> out = shape(conv.getOutputs()[0]);
      ArrayRef<int64_t> w = shape(conv.getInputs()[1]);
      int64_t pixels = out[0] * out[1] * out[2];
      int64_t groups = out[3], f = out[4], cg = w[4];
      // Groups of as many inputs as outputs, several to a vector
      // (ResNeXt's 4 and 8, RegNet-Y's 8 at 16 lanes): the shuffle form,
      // one vector of rows x 1; each row holds its input vector and its
      // accumulator (2 x rows + B + the shuffled A registers).
      if (kiln::kernels::groupedShuffleForm(f, cg, vectorWidth)) {
        int64_t rows = std::min<int64_t>(vectorRegisters == 16 ? 6 : 12,
                                         (vectorRegisters - 2) / 2);
        return get(o, std::min(rows, pixels), 1, w[2] * w[3] * cg);
      }
      int64_t maxVecs = vectorRegisters == 16 ? 2 : 4;
      int64_t bestVecs = 1, bestCost = INT64_MAX;
      for (int64_t vecs = 1; vecs <= maxVecs; ++vecs) {
        int64_t nr = vecs * vectorWidth;
        int64_t span = kiln::kernels::groupedPanelChannels(groups, f, cg, nr);
        int64_t cost = (groups * f + nr - 1) / nr * nr * span;
        if (cost <= bestCost) {
          bestCost = cost;
          bestVecs = vecs;
        }
        if (nr >= groups * f)
          break;
      }
      int64_t rows = (vectorRegisters - 1 - bestVecs) / bestVecs;
      rows = std::min<int64_t>(rows, vectorRegisters == 16
                                         ? 12 / bestVecs
                                         : 24 / bestVecs);
      int64_t span = kiln::kernels::groupedPanelChannels(
          groups, f, cg, bestVecs * vectorWidth);
      return get(o, std::min(rows, pixels), bestVecs, w[2] * w[3] * span);
    }
    if (isa<linalg::DepthwiseConv2DNhwcHwcOp, linalg::PoolingNhwcMaxOp,
            linalg::PoolingNhwcSumOp>(o)) {
      // Output columns x channel vectors: 4 x 2 with 16 registers (11 in
      // use), 8 x 2 with 32.
      ArrayRef<int64_t> out = shape(op.getDpsInits()[0]);
      ArrayRef<int64_t> window = shape(op.getDpsInputs()[1]);
      int64_t chVecs = (out[3] + vectorWidth - 1) / vectorWidth;
      int64_t vecs = std::min<int64_t>(chVecs, 2);
      int64_t rows = std::min<int64_t>(out[2], vectorRegisters == 16 ? 4 : 8);
      // (Other register files: as many rows as fit.)
      rows = std::min(rows, (vectorRegisters - 1 - vecs) / vecs);
      return get(o, rows, vecs, window[0] * window[1]);
    }
    return std::nullopt;
  }
};

} // namespace
