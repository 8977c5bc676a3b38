//===- NarrowPrecision.cpp - f32 products computed on bf16 / f16 ---------===//
//
// `kiln compile --precision bf16|fp16` on an f32 model: every f32
// `linalg.matmul`, `linalg.batch_matmul` (plain maps) and
// `linalg.conv_2d_nhwc_hwcf` whose B (weights, filter) is a constant gets
// that constant stored in the narrow type (converted at compile time,
// rounding to nearest even: half the weight bytes) and its A (activations)
// converted by an elementwise generic right before it (which fusion may
// merge into A's producer). The product keeps its f32 accumulator and f32
// result, so everything else (softmax, LayerNorm, reductions, elementwise
// ops, the model's inputs and outputs) stays f32. The micro-kernels
// (kiln-emit-microkernels) then read the narrow operands: vdpbf16ps on
// AVX512-BF16, conversion + f32 FMA elsewhere.
//
// One implementation for every target: it works on tensors only. The GPU
// targets run it from their shared pipeline with `activations` (products
// whose B is computed and depthwise convs too: every product an f16 x f16
// contraction with an f32 accumulator) and refuse bf16 through `refuse-on`.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/ConstantData.h"
#include "codegen/Passes.h"
#include "dialects/ONNX/Diagnostics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/DenseMap.h"

#include <cstring>
#include <functional>

namespace kiln {
#define GEN_PASS_DEF_KILNNARROWPRECISIONPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {

uint16_t floatToBF16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep it a (quiet) NaN
    return uint16_t((bits >> 16) | 0x40);
  // Round to nearest, ties to even (an overflow becomes infinity).
  return uint16_t((bits + 0x7fffu + ((bits >> 16) & 1)) >> 16);
}

uint16_t floatToHalfBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) // NaN
    return uint16_t(sign | 0x7e00u);
  if (abs >= 0x477ff000u) // rounds to 65536 or more (or infinity)
    return uint16_t(sign | 0x7c00u);
  if (abs < 0x38800000u) { // below 2^-14: subnormal half (or zero)
    if (abs < 0x33000000u) // below half of the smallest subnormal, 2^-25
      return uint16_t(sign);
    uint32_t exp = abs >> 23;
    uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    // value = mant * 2^(exp - 150); in units of 2^-24 (the subnormal
    // step): mant >> (126 - exp), 14 to 24 bits.
    uint32_t shift = 126 - exp;
    uint32_t result = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (result & 1)))
      ++result;
    return uint16_t(sign | result);
  }
  // Normal: rebias the exponent (127 -> 15), round the mantissa to 10 bits.
  uint32_t rebased = abs - (112u << 23);
  uint32_t result = rebased >> 13;
  uint32_t rest = rebased & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (result & 1)))
    ++result;
  return uint16_t(sign | result);
}

} // namespace kiln

namespace {

/// The smallest f32 table (elements) the GPU scope stores narrow when only
/// element reads use it (Gather's embeddings; small lookup tables stay).
constexpr int64_t kMinNarrowTable = 1024;

/// The f32 values of the constant defining `v`, or nullopt.
std::optional<SmallVector<float>> constantFloats(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return std::nullopt;
  return kiln::f32ConstantData(cst.getValue());
}

struct NarrowPrecisionPass
    : kiln::impl::KilnNarrowPrecisionPassBase<NarrowPrecisionPass> {
  using KilnNarrowPrecisionPassBase::KilnNarrowPrecisionPassBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    Type narrow;
    if (precision == "bf16")
      narrow = BFloat16Type::get(ctx);
    else if (precision == "fp16" || precision == "f16")
      narrow = Float16Type::get(ctx);
    else {
      getOperation()->emitError()
          << "kiln-narrow-precision: precision must be bf16 or fp16, got '"
          << precision << "'";
      return signalPassFailure();
    }
    bool bf16 = narrow.isBF16();

    // One narrow constant per f32 constant (weights shared by several ops
    // are converted once).
    llvm::DenseMap<Value, Value> narrowedWeights;
    auto narrowWeights = [&](OpBuilder &b, Value w) -> Value {
      if (Value done = narrowedWeights.lookup(w))
        return done;
      std::optional<SmallVector<float>> data = constantFloats(w);
      if (!data)
        return {};
      auto type = cast<RankedTensorType>(w.getType()).clone(narrow);
      SmallVector<uint16_t> bits(data->size());
      for (size_t i = 0; i < data->size(); ++i)
        bits[i] = bf16 ? kiln::floatToBF16Bits((*data)[i])
                       : kiln::floatToHalfBits((*data)[i]);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfterValue(w);
      Value result = arith::ConstantOp::create(
          b, w.getLoc(),
          cast<TypedAttr>(kiln::word16ConstantAttr(type, bits, "kiln_narrow")));
      narrowedWeights[w] = result;
      return result;
    };

    SmallVector<linalg::LinalgOp> work;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
          op.getNumDpsInits() != 1)
        return;
      if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation());
          !(mm && !mm.hasUserDefinedMaps()) &&
          !isa<linalg::BatchMatmulOp, linalg::Conv2DNhwcHwcfOp>(
              op.getOperation()) &&
          !(activations &&
            isa<linalg::DepthwiseConv2DNhwcHwcOp>(op.getOperation())))
        return;
      if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation());
          bmm && bmm.hasUserDefinedMaps())
        return;
      if (!llvm::all_of(op->getOperandTypes(), [](Type t) {
            return getElementTypeOrSelf(t).isF32();
          }))
        return;
      if (!activations && !matchPattern(op.getDpsInputs()[1], m_Constant()))
        return;
      work.push_back(op);
    });

    // A device without `narrow` arithmetic: the first product it would
    // narrow names the node (nothing is narrowed).
    if (!refuseOn.empty() && !work.empty()) {
      InFlightDiagnostic diag = work.front()->emitError();
      if (std::optional<std::string> node =
              kiln::onnx::getNodeName(work.front()))
        diag << "node '" << *node << "': ";
      diag << "--precision " << precision << " is not supported on the "
           << refuseOn << " device (its products compute on fp32 or fp16 "
           << "operands only: use --precision fp16)";
      if (work.size() > 1)
        diag << "; " << work.size() - 1 << " more product"
             << (work.size() > 2 ? "s" : "") << " would be narrowed";
      return signalPassFailure();
    }
    if (!refuseOn.empty())
      return; // nothing to narrow: the model compiles as it is

    // `v` converted to `narrow` by an elementwise truncf generic before `op`.
    SmallVector<tensor::PadOp> pads;
    std::function<Value(OpBuilder &, Location, Value)> truncate;
    truncate = [&](OpBuilder &b, Location loc, Value v) -> Value {
      // GPU scope: a constant pad read only by this product is moved after
      // the conversion (pad(truncf(x)) instead of truncf(pad(x))), so the
      // conversion fuses into x's producer, which then writes f16 into the
      // padded buffer (kiln-decompose-pads), and no kernel converts the
      // padded copy.
      if (auto pad = v.getDefiningOp<tensor::PadOp>();
          activations && pad && pad->hasOneUse()) {
        if (Value padValue = pad.getConstantPaddingValue()) {
          pads.push_back(pad);
          Value source = truncate(b, loc, pad.getSource());
          Value narrowValue = arith::TruncFOp::create(b, loc, narrow, padValue);
          return tensor::PadOp::create(
              b, pad.getLoc(), pad.getResultType().clone(narrow), source,
              pad.getMixedLowPad(), pad.getMixedHighPad(), narrowValue,
              pad.getNofold());
        }
      }
      auto type = cast<RankedTensorType>(v.getType());
      // Dynamic dims (symbolic rows) take their sizes from `v`.
      SmallVector<Value> dynamicSizes;
      for (int64_t i = 0; i < type.getRank(); ++i)
        if (type.isDynamicDim(i))
          dynamicSizes.push_back(tensor::DimOp::create(b, loc, v, i));
      Value empty =
          tensor::EmptyOp::create(b, loc, type.clone(narrow), dynamicSizes);
      SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(type.getRank()));
      SmallVector<utils::IteratorType> iterators(type.getRank(),
                                                 utils::IteratorType::parallel);
      return linalg::GenericOp::create(
                 b, loc, TypeRange{type.clone(narrow)}, ValueRange{v},
                 ValueRange{empty}, maps, iterators,
                 [&](OpBuilder &nb, Location l, ValueRange args) {
                   Value t = arith::TruncFOp::create(nb, l, narrow, args[0]);
                   linalg::YieldOp::create(nb, l, t);
                 })
          .getResult(0);
    };

    for (linalg::LinalgOp op : work) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value w = narrowWeights(b, op.getDpsInputs()[1]);
      if (!w && !activations)
        continue;
      Value narrowed = truncate(b, loc, op.getDpsInputs()[0]);
      if (!w)
        w = truncate(b, loc, op.getDpsInputs()[1]);
      Value init = op.getDpsInits()[0];
      Operation *replacement;
      if (isa<linalg::MatmulOp>(op.getOperation()))
        replacement = linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                               ValueRange{narrowed, w},
                                               ValueRange{init});
      else if (isa<linalg::BatchMatmulOp>(op.getOperation()))
        replacement = linalg::BatchMatmulOp::create(
            b, loc, TypeRange{init.getType()}, ValueRange{narrowed, w},
            ValueRange{init});
      else if (auto dw =
                   dyn_cast<linalg::DepthwiseConv2DNhwcHwcOp>(op.getOperation()))
        replacement = linalg::DepthwiseConv2DNhwcHwcOp::create(
            b, loc, TypeRange{init.getType()}, ValueRange{narrowed, w},
            ValueRange{init}, dw.getStrides(), dw.getDilations());
      else {
        auto conv = cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation());
        replacement = linalg::Conv2DNhwcHwcfOp::create(
            b, loc, TypeRange{init.getType()}, ValueRange{narrowed, w},
            ValueRange{init}, conv.getStrides(), conv.getDilations());
      }
      // Keep the discardable attributes (the ONNX node's name for
      // diagnostics and the kernel table).
      for (NamedAttribute attr : op->getDiscardableAttrs())
        replacement->setAttr(attr.getName(), attr.getValue());
      op->replaceAllUsesWith(replacement);
      op->erase();
    }
    // The f32 pads the conversions moved past (now unread).
    for (tensor::PadOp pad : pads)
      if (pad->use_empty())
        pad->erase();
    // GPU scope: large f32 constants read element by element only (Gather's
    // embedding tables: `tensor.extract` in its generic) are stored narrow
    // too, each read widened back to f32 (extf: exact), so the table takes
    // half the device memory and bytes read; what is computed from the
    // values stays f32.
    if (activations) {
      SmallVector<arith::ConstantOp> tables;
      getOperation()->walk([&](arith::ConstantOp cst) {
        auto type = dyn_cast<RankedTensorType>(cst.getType());
        if (type && type.getElementType().isF32() &&
            type.getNumElements() >= kMinNarrowTable && !cst->use_empty() &&
            llvm::all_of(cst->getUsers(),
                         [](Operation *user) {
                           return isa<tensor::ExtractOp>(user);
                         }))
          tables.push_back(cst);
      });
      for (arith::ConstantOp cst : tables) {
        OpBuilder b(cst);
        Value table = narrowWeights(b, cst.getResult());
        if (!table)
          continue;
        for (Operation *user : llvm::make_early_inc_range(cst->getUsers())) {
          auto extract = cast<tensor::ExtractOp>(user);
          b.setInsertionPoint(extract);
          Value narrowValue = tensor::ExtractOp::create(
              b, extract.getLoc(), table, extract.getIndices());
          Value wide = arith::ExtFOp::create(b, extract.getLoc(),
                                             b.getF32Type(), narrowValue);
          extract.replaceAllUsesWith(wide);
          extract.erase();
        }
      }
    }
    // The f32 weights no product reads any more.
    for (auto &[f32Weights, narrowWeights] : narrowedWeights)
      if (f32Weights.use_empty())
        f32Weights.getDefiningOp()->erase();
  }
};

} // namespace
