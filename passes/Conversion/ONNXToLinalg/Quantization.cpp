//===- Quantization.cpp - MatMulInteger / ConvInteger on 8-bit products ---===//
//
// The MatMulInteger / ConvInteger ops kiln-decompose keeps
// (keptForIntegerKernel: per-tensor 8-bit activations, constant 8-bit weights
// whose centered values w - w_zp fit in s8, centered here at compile time)
// become linalg.matmul / linalg.conv_2d_nhwc_hwcf on i8 operands
// with an i32 accumulator (signed products, exact), so the CPU kernels read
// bytes:
//   - u8 activations are moved to the signed range (x - 128: the sign bit
//     flipped) and their zero point with them, so one form covers u8 and s8;
//   - sum_k (x - zp) * w = sum_k x * w - zp * sum_k w: the second term is a
//     constant per output column (filter), added after the product (a runtime
//     zero point, quantize_dynamic's, scales the constant column sums);
//   - a conv's padding is the zero point itself, so padded taps add nothing
//     after the correction, as the spec's (x - zp) padded with 0.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

namespace kiln::onnx_to_linalg {
namespace {

using kiln::onnx::emitNodeError;

/// The activations (original onnx operand `original`, converted `x`) as signed
/// i8: u8 values minus 128 (the sign bit flipped).
Value toSignedBytes(OpBuilder &b, Location loc, Value x, Value original) {
  auto type = cast<RankedTensorType>(x.getType());
  if (!isUnsignedInt(getElementTypeOrSelf(original.getType())))
    return x;
  return createElementwiseGeneric(
      b, loc, type, x, [](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value bit = arith::ConstantIntOp::create(nb, l, nb.getI8Type(), -128);
        return arith::XOrIOp::create(nb, l, args[0], bit);
      });
}

/// The activations' zero point in the signed range, as an i32 scalar (a
/// constant when it is one); 0 when absent.
Value signedZeroPoint(OpBuilder &b, Location loc, Value zp, Value original,
                      Value xOriginal, std::optional<int64_t> &constant) {
  int64_t shift =
      isUnsignedInt(getElementTypeOrSelf(xOriginal.getType())) ? 128 : 0;
  Type i32 = b.getI32Type();
  if (kiln::onnx::isNoneValue(original)) {
    constant = -shift;
    return createIntConstant(b, loc, i32, -shift);
  }
  if (auto values = kiln::onnx::getConstantIntValues(original);
      values && values->size() == 1) {
    constant = (*values)[0] - shift;
    return createIntConstant(b, loc, i32, *constant);
  }
  constant.reset();
  auto type = cast<RankedTensorType>(zp.getType());
  SmallVector<Value> zeros(type.getRank(),
                           arith::ConstantIndexOp::create(b, loc, 0));
  Value scalar = tensor::ExtractOp::create(b, loc, zp, zeros);
  scalar = isUnsignedInt(getElementTypeOrSelf(original.getType()))
               ? arith::ExtUIOp::create(b, loc, i32, scalar).getResult()
               : arith::ExtSIOp::create(b, loc, i32, scalar).getResult();
  return arith::SubIOp::create(b, loc, scalar,
                               createIntConstant(b, loc, i32, shift));
}

/// The constant 8-bit weights `w` (onnx operand) minus their zero point `zp`
/// (absent, one value, or one per channel along `channelAxis`), as s8
/// (kiln-decompose checked that they fit); nullopt when not constant.
std::optional<SmallVector<int8_t>> centeredWeights(Value w, Value zp,
                                                   int64_t channelAxis) {
  auto type = cast<RankedTensorType>(w.getType());
  std::optional<SmallVector<int64_t>> values =
      kiln::onnx::getConstantIntValues(w);
  if (!values)
    return std::nullopt;
  SmallVector<int64_t> zps = {0};
  if (!kiln::onnx::isNoneValue(zp)) {
    std::optional<SmallVector<int64_t>> z =
        kiln::onnx::getConstantIntValues(zp);
    if (!z || z->empty())
      return std::nullopt;
    zps = *z;
  }
  int64_t inner = 1;
  for (int64_t d = channelAxis + 1; d < type.getRank(); ++d)
    inner *= type.getDimSize(d);
  int64_t channels = type.getDimSize(channelAxis);
  SmallVector<int8_t> out(values->size());
  for (size_t i = 0; i < values->size(); ++i) {
    int64_t z = zps.size() == 1 ? zps[0] : zps[(int64_t(i) / inner) % channels];
    int64_t v = (*values)[i] - z;
    if (v < -128 || v > 127)
      return std::nullopt;
    out[i] = int8_t(v);
  }
  return out;
}

/// `bytes` as an i8 constant attribute of `shape` (a resource blob when large:
/// never large inline attributes).
ElementsAttr bytesAttr(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       ArrayRef<int8_t> bytes, StringRef blobName) {
  auto type = RankedTensorType::get(shape, IntegerType::get(ctx, 8));
  if (bytes.size() <= 4096)
    return DenseElementsAttr::get(type, bytes);
  return DenseResourceElementsAttr::get(
      type, blobName,
      HeapAsmResourceBlob::allocateAndCopyInferAlign<int8_t>(bytes));
}

/// Per output column n of the [K, N] weights (row-major `values`), sum_k w.
SmallVector<int32_t> columnSums(ArrayRef<int8_t> values, int64_t k, int64_t n) {
  SmallVector<int32_t> sums(n, 0);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j)
      sums[j] += int32_t(values[i * n + j]);
  return sums;
}

/// `product` (last dim: the columns) minus zp * sums[column], in i32.
Value subtractZeroPointTerm(OpBuilder &b, Location loc, Value product, Value zp,
                            std::optional<int64_t> zpConstant,
                            ArrayRef<int32_t> sums) {
  auto type = cast<RankedTensorType>(product.getType());
  int64_t n = sums.size();
  auto vecType = RankedTensorType::get({n}, b.getI32Type());
  SmallVector<int32_t> scaled(sums);
  if (zpConstant) {
    if (*zpConstant == 0)
      return product;
    for (int32_t &s : scaled)
      s = int32_t(uint32_t(s) * uint32_t(-*zpConstant)); // wraps like int32
  }
  Value column = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vecType, ArrayRef<int32_t>(scaled)));
  return createElementwiseGeneric(
      b, loc, type, ValueRange{product, column},
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        if (zpConstant)
          return arith::AddIOp::create(nb, l, args[0], args[1]);
        Value term = arith::MulIOp::create(nb, l, args[1], zp);
        return arith::SubIOp::create(nb, l, args[0], term);
      });
}

//===----------------------------------------------------------------------===//
// MatMulInteger
//===----------------------------------------------------------------------===//

struct MatMulIntegerLowering : OpConversionPattern<onnx::MatMulIntegerOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::MatMulIntegerOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    RankedTensorType aType = getStaticTensorType(adaptor.getA());
    RankedTensorType bType = getStaticTensorType(adaptor.getB());
    auto bValues = centeredWeights(op.getB(), op.getBZeroPoint(), 1);
    if (!resultType || !aType || !bType || aType.getRank() < 2 ||
        bType.getRank() != 2 || !bValues)
      return emitNodeError(op)
                 << "MatMulInteger reached the lowering in a form it does not "
                    "compute (internal error: kiln-decompose expands it)",
             failure();
    int64_t k = bType.getDimSize(0), n = bType.getDimSize(1);
    int64_t m = aType.getNumElements() / k;
    Type i8 = rewriter.getI8Type(), i32 = rewriter.getI32Type();
    Value a = toSignedBytes(rewriter, loc, adaptor.getA(), op.getA());
    a = createReshape(rewriter, loc, a, RankedTensorType::get({m, k}, i8));
    std::optional<int64_t> zpConstant;
    Value zp = signedZeroPoint(rewriter, loc, adaptor.getAZeroPoint(),
                               op.getAZeroPoint(), op.getA(), zpConstant);
    Value acc = createFilledTensor(rewriter, loc,
                                   RankedTensorType::get({m, n}, i32), 0.0);
    Value bBytes = arith::ConstantOp::create(
        rewriter, loc,
        cast<TypedAttr>(bytesAttr(rewriter.getContext(), {k, n}, *bValues,
                                  "kiln_centered")));
    Value product =
        linalg::MatmulOp::create(rewriter, loc, TypeRange{acc.getType()},
                                 ValueRange{a, bBytes}, ValueRange{acc})
            .getResult(0);
    product = subtractZeroPointTerm(rewriter, loc, product, zp, zpConstant,
                                    columnSums(*bValues, k, n));
    rewriter.replaceOp(op, createReshape(rewriter, loc, product, resultType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// ConvInteger (2-D, group 1 or depthwise)
//===----------------------------------------------------------------------===//

SmallVector<int64_t> getI64s(std::optional<ArrayAttr> attr, size_t size,
                             int64_t dflt) {
  if (!attr)
    return SmallVector<int64_t>(size, dflt);
  return llvm::map_to_vector(
      *attr, [](Attribute a) { return cast<IntegerAttr>(a).getInt(); });
}

struct ConvIntegerLowering : OpConversionPattern<onnx::ConvIntegerOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::ConvIntegerOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    RankedTensorType xType = getStaticTensorType(adaptor.getX());
    RankedTensorType wType = getStaticTensorType(adaptor.getW());
    auto wValues = centeredWeights(op.getW(), op.getWZeroPoint(), 0);
    int64_t group = op.getGroup();
    // Depthwise (one filter per channel, [C, 1, KH, KW]):
    // linalg.depthwise_conv_2d_nhwc_hwc on bytes (ChannelWindow.cpp).
    bool depthwise = group > 1 && wType && xType && wType.getRank() == 4 &&
                     xType.getRank() == 4 && wType.getDimSize(0) == group &&
                     wType.getDimSize(1) == 1 &&
                     xType.getDimSize(1) == group;
    if (!resultType || !xType || !wType || xType.getRank() != 4 ||
        wType.getRank() != 4 || !wValues || (group != 1 && !depthwise))
      return emitNodeError(op)
                 << "ConvInteger reached the lowering in a form it does not "
                    "compute (internal error: kiln-decompose expands it)",
             failure();
    ArrayRef<int64_t> ws = wType.getShape();
    int64_t f = ws[0], c = ws[1], kh = ws[2], kw = ws[3];
    SmallVector<int64_t> strides = getI64s(op.getStrides(), 2, 1);
    SmallVector<int64_t> dilations = getI64s(op.getDilations(), 2, 1);
    SmallVector<int64_t> pads = getI64s(op.getPads(), 4, 0);
    if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 ||
        xType.getDimSize(1) != (depthwise ? f : c))
      return emitNodeError(op) << "ConvInteger attributes do not match its "
                                  "2-D operands",
             failure();
    SmallVector<int64_t> lo, hi;
    for (int i = 0; i < 2; ++i) {
      auto p =
          computeWindowPads(op.getAutoPad(), xType.getDimSize(2 + i), ws[2 + i],
                            strides[i], dilations[i], pads[i], pads[2 + i]);
      if (!p || p->first < 0 || p->second < 0)
        return emitNodeError(op) << "unsupported ConvInteger padding",
               failure();
      lo.push_back(p->first);
      hi.push_back(p->second);
    }
    ArrayRef<int64_t> rs = resultType.getShape();
    int64_t n = rs[0], oh = rs[2], ow = rs[3];
    Type i8 = rewriter.getI8Type(), i32 = rewriter.getI32Type();

    std::optional<int64_t> zpConstant;
    Value zp = signedZeroPoint(rewriter, loc, adaptor.getXZeroPoint(),
                               op.getXZeroPoint(), op.getX(), zpConstant);
    if (!zpConstant)
      return emitNodeError(op) << "ConvInteger needs a constant x_zero_point",
             failure();
    Value x = toSignedBytes(rewriter, loc, adaptor.getX(), op.getX());
    Value nhwc = createTranspose(rewriter, loc, x, {0, 2, 3, 1});
    // Channels padded to a multiple of 4 (the input with the zero point, the
    // filters with 0: nothing added), so a 4-way dot product covers them (a
    // network's first conv has 3). A depthwise conv's channels are its
    // vector lanes: not padded.
    int64_t xc = depthwise ? f : c; // the input's channels
    int64_t c4 = depthwise ? f : (c + 3) / 4 * 4;
    if (llvm::any_of(lo, [](int64_t p) { return p; }) ||
        llvm::any_of(hi, [](int64_t p) { return p; }) || c4 != xc) {
      auto t = cast<RankedTensorType>(nhwc.getType());
      SmallVector<int64_t> shape(t.getShape());
      shape[1] += lo[0] + hi[0];
      shape[2] += lo[1] + hi[1];
      shape[3] = c4;
      // Padded with the zero point: those taps add nothing after the
      // correction.
      Value padValue = createIntConstant(rewriter, loc, i8, *zpConstant);
      nhwc = tensor::PadOp::create(
                 rewriter, loc, RankedTensorType::get(shape, i8), nhwc,
                 getAsIndexOpFoldResult(rewriter.getContext(),
                                        {0, lo[0], lo[1], 0}),
                 getAsIndexOpFoldResult(rewriter.getContext(),
                                        {0, hi[0], hi[1], c4 - xc}),
                 padValue)
                 .getResult();
    }
    if (depthwise) {
      // [C, 1, KH, KW] -> HWC at compile time; per channel, the sum of its
      // taps for the zero point's term.
      int64_t taps = kh * kw;
      SmallVector<int8_t> hwc(f * taps);
      SmallVector<int32_t> sums(f, 0);
      for (int64_t j = 0; j < f; ++j)
        for (int64_t t = 0; t < taps; ++t) {
          hwc[t * f + j] = (*wValues)[j * taps + t];
          sums[j] += int32_t((*wValues)[j * taps + t]);
        }
      Value filter = arith::ConstantOp::create(
          rewriter, loc,
          cast<TypedAttr>(bytesAttr(rewriter.getContext(), {kh, kw, f}, hwc,
                                    "kiln_depthwise")));
      Value acc = createFilledTensor(
          rewriter, loc, RankedTensorType::get({n, oh, ow, f}, i32), 0.0);
      Value conv = linalg::DepthwiseConv2DNhwcHwcOp::create(
                       rewriter, loc, TypeRange{acc.getType()},
                       ValueRange{nhwc, filter}, ValueRange{acc},
                       rewriter.getI64TensorAttr(strides),
                       rewriter.getI64TensorAttr(dilations))
                       .getResult(0);
      conv = subtractZeroPointTerm(rewriter, loc, conv, zp, zpConstant, sums);
      rewriter.replaceOp(op,
                         createTranspose(rewriter, loc, conv, {0, 3, 1, 2}));
      return success();
    }
    // OIHW (channels padded with zeros) -> HWIO at compile time.
    SmallVector<int8_t> padded(f * c4 * kh * kw, 0);
    for (int64_t j = 0; j < f; ++j)
      for (int64_t t = 0; t < c * kh * kw; ++t)
        padded[j * c4 * kh * kw + t] = (*wValues)[j * c * kh * kw + t];
    ElementsAttr oihw = bytesAttr(rewriter.getContext(), {f, c4, kh, kw},
                                  padded, "kiln_padded");
    ElementsAttr hwcf = transposeElementsAttr(oihw, {2, 3, 1, 0});
    if (!hwcf)
      return emitNodeError(op) << "cannot re-lay out the ConvInteger weights",
             failure();
    Value filter =
        arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(hwcf));
    Value acc = createFilledTensor(
        rewriter, loc, RankedTensorType::get({n, oh, ow, f}, i32), 0.0);
    Value conv =
        linalg::Conv2DNhwcHwcfOp::create(
            rewriter, loc, TypeRange{acc.getType()}, ValueRange{nhwc, filter},
            ValueRange{acc}, rewriter.getI64TensorAttr(strides),
            rewriter.getI64TensorAttr(dilations))
            .getResult(0);
    // Sums per filter: the weights viewed as [F][C*KH*KW], transposed.
    SmallVector<int32_t> sums(f, 0);
    int64_t taps = c * kh * kw;
    for (int64_t j = 0; j < f; ++j)
      for (int64_t t = 0; t < taps; ++t)
        sums[j] += int32_t((*wValues)[j * taps + t]);
    conv = subtractZeroPointTerm(rewriter, loc, conv, zp, zpConstant, sums);
    rewriter.replaceOp(op, createTranspose(rewriter, loc, conv, {0, 3, 1, 2}));
    return success();
  }
};

} // namespace

void populateQuantizationPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns) {
  patterns.add<MatMulIntegerLowering, ConvIntegerLowering>(
      converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
