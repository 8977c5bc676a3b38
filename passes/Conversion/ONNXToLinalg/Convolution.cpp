//===- Convolution.cpp - Conv to channels-last linalg convolutions --------===//
//
// Conv (1-D and 2-D; a 1-D conv runs as 2-D with a unit height):
//   - group 1:             X NCHW -> NHWC (linalg.transpose), tensor.pad,
//                          W OIHW -> HWIO, linalg.conv_2d_nhwc_hwcf;
//   - depthwise (group = C_in, C_out = C_in * m):
//                          W -> HWC, linalg.depthwise_conv_2d_nhwc_hwc (m = 1)
//                          or HWCM, linalg.depthwise_conv_2d_nhwc_hwcm (m > 1);
//   - other groups:        X NHWC viewed as NHWGC, W -> GFHWC,
//                          linalg.conv_2d_nhwgc_gfhwc (result NHWGF viewed
//                          as NHWC).
// Constant weights are re-laid out at compile time (new resource constants);
// others through linalg.transpose. Accumulators are linalg.fill'ed with 0; the
// bias is added by a following elementwise linalg.generic; the NHWC result is
// transposed back to NCHW with linalg.transpose. Float element types, and
// int32 (the integer products of the quantized ops).
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

using namespace mlir;

namespace kiln::onnx_to_linalg {
namespace {

using kiln::onnx::emitNodeError;

/// The I64 array attribute `attr` as a vector, or `defaultValue` repeated
/// `size` times when absent.
SmallVector<int64_t> getI64Array(std::optional<ArrayAttr> attr, size_t size,
                                 int64_t defaultValue) {
  if (!attr)
    return SmallVector<int64_t>(size, defaultValue);
  return llvm::map_to_vector(*attr, [](Attribute a) {
    return cast<IntegerAttr>(a).getInt();
  });
}

/// The weights `value` (onnx operand `original`), viewed with the row-major
/// shape `viewShape`, then permuted by `perm`: at compile time for a constant
/// (new resource constant), else tensor reshape + linalg.transpose.
Value relayoutWeights(OpBuilder &b, Location loc, Value value, Value original,
                      ArrayRef<int64_t> viewShape, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(value.getType());
  if (ElementsAttr attr = kiln::onnx::getConstantAttr(original))
    if (ElementsAttr signless = convertElementsAttrToSignless(attr))
      if (ElementsAttr moved = transposeElementsAttr(signless, perm, viewShape))
        return arith::ConstantOp::create(b, loc, cast<TypedAttr>(moved));
  Value view = createReshape(
      b, loc, value, RankedTensorType::get(viewShape, type.getElementType()));
  return createTranspose(b, loc, view, perm);
}

struct ConvLowering : OpConversionPattern<onnx::ConvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    RankedTensorType xType = getStaticTensorType(adaptor.getX());
    RankedTensorType wType = getStaticTensorType(adaptor.getW());
    if (!resultType || !xType || !wType)
      return emitNodeError(op) << "Conv needs static shapes", failure();
    Type elemType = resultType.getElementType();
    // int32: the zero-point-centered products of ConvInteger/QLinearConv
    // (kiln-decompose).
    if (!(isa<FloatType>(elemType) || elemType.isSignlessInteger(32)) ||
        xType.getElementType() != elemType ||
        wType.getElementType() != elemType)
      return emitNodeError(op) << "only float and int32 Conv are supported (got "
                               << xType << " and " << wType << ")",
             failure();
    int64_t rank = xType.getRank();
    if (rank != 3 && rank != 4)
      return emitNodeError(op) << "only 1-D and 2-D Conv are supported (input "
                               << xType << ")",
             failure();
    if (wType.getRank() != rank || resultType.getRank() != rank)
      return emitNodeError(op) << "Conv weights " << wType
                               << " do not match the input rank",
             failure();
    size_t spatial = rank - 2;

    // Attributes per spatial dim.
    ArrayRef<int64_t> wShape = wType.getShape();
    SmallVector<int64_t> kernel(wShape.drop_front(2));
    if (auto ks = op.getKernelShape()) {
      SmallVector<int64_t> attrKernel = getI64Array(ks, spatial, 1);
      if (ArrayRef<int64_t>(attrKernel) != ArrayRef<int64_t>(kernel))
        return emitNodeError(op) << "kernel_shape does not match the weights",
               failure();
    }
    SmallVector<int64_t> strides = getI64Array(op.getStrides(), spatial, 1);
    SmallVector<int64_t> dilations =
        getI64Array(op.getDilations(), spatial, 1);
    SmallVector<int64_t> pads = getI64Array(op.getPads(), 2 * spatial, 0);
    if (strides.size() != spatial || dilations.size() != spatial ||
        pads.size() != 2 * spatial)
      return emitNodeError(op)
                 << "strides/dilations/pads have the wrong number of values",
             failure();
    StringRef autoPad = op.getAutoPad();
    SmallVector<int64_t> padBegin, padEnd;
    for (size_t i = 0; i < spatial; ++i) {
      auto p = computeWindowPads(autoPad, xType.getDimSize(2 + i), kernel[i],
                                 strides[i], dilations[i], pads[i],
                                 pads[spatial + i]);
      if (!p)
        return emitNodeError(op) << "unsupported auto_pad '" << autoPad << "'",
               failure();
      if (p->first < 0 || p->second < 0 || strides[i] < 1 || dilations[i] < 1)
        return emitNodeError(op)
                   << "negative pads or non-positive strides/dilations",
               failure();
      padBegin.push_back(p->first);
      padEnd.push_back(p->second);
    }

    // A 1-D conv is a 2-D one of height 1.
    Value x = adaptor.getX(), w = adaptor.getW();
    SmallVector<int64_t> xShape(xType.getShape()), wShape4(wShape);
    if (spatial == 1) {
      xShape.insert(xShape.begin() + 2, 1);
      wShape4.insert(wShape4.begin() + 2, 1);
      kernel.insert(kernel.begin(), 1);
      strides.insert(strides.begin(), 1);
      dilations.insert(dilations.begin(), 1);
      padBegin.insert(padBegin.begin(), 0);
      padEnd.insert(padEnd.begin(), 0);
    }
    int64_t n = xShape[0], c = xShape[1], m = wShape4[0], cg = wShape4[1];
    int64_t group = op.getGroup();
    if (group < 1 || c % group != 0 || m % group != 0 || c / group != cg)
      return emitNodeError(op) << "group " << group << " does not match input "
                               << xType << " and weights " << wType,
             failure();
    SmallVector<int64_t> outSpatial;
    for (size_t i = 0; i < 2; ++i) {
      int64_t in = xShape[2 + i] + padBegin[i] + padEnd[i];
      int64_t window = (kernel[i] - 1) * dilations[i] + 1;
      if (in < window)
        return emitNodeError(op) << "Conv window is larger than the input",
               failure();
      outSpatial.push_back((in - window) / strides[i] + 1);
    }
    SmallVector<int64_t> nchwOut = {n, m, outSpatial[0], outSpatial[1]};
    SmallVector<int64_t> expected(nchwOut);
    if (spatial == 1)
      expected.erase(expected.begin() + 2);
    if (resultType.getShape() != ArrayRef<int64_t>(expected))
      return emitNodeError(op) << "Conv result type " << resultType
                               << " does not match the computed shape",
             failure();

    Value bias = kiln::onnx::isNoneValue(op.getB()) ? Value() : adaptor.getB();
    if (bias) {
      auto biasType = getStaticTensorType(bias);
      if (!biasType || biasType.getRank() != 1 || biasType.getDimSize(0) != m)
        return emitNodeError(op) << "Conv bias must have shape [" << m << "]",
               failure();
    }

    // Checks done: build.
    x = createReshape(rewriter, loc, x, RankedTensorType::get(xShape, elemType));
    auto stridesAttr = rewriter.getI64TensorAttr(strides);
    auto dilationsAttr = rewriter.getI64TensorAttr(dilations);
    bool needsPad = llvm::any_of(padBegin, [](int64_t p) { return p != 0; }) ||
                    llvm::any_of(padEnd, [](int64_t p) { return p != 0; });
    Value zero = createScalarConstant(rewriter, loc, elemType, 0.0);
    // f16 / bf16 sums accumulate in f32 (rounded to elemType once, after).
    Type accElem = getAccumulatorType(elemType);
    Value accZero = accElem == elemType
                        ? zero
                        : createScalarConstant(rewriter, loc, accElem, 0.0);
    auto pad = [&](Value v, ArrayRef<int64_t> low,
                   ArrayRef<int64_t> high) -> Value {
      if (!needsPad)
        return v;
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape(type.getShape());
      for (size_t i = 0; i < shape.size(); ++i)
        shape[i] += low[i] + high[i];
      return tensor::PadOp::create(
                 rewriter, loc, RankedTensorType::get(shape, elemType), v,
                 getAsIndexOpFoldResult(rewriter.getContext(), low),
                 getAsIndexOpFoldResult(rewriter.getContext(), high), zero)
          .getResult();
    };

    bool depthwise = group == c && cg == 1 && group > 1;

    // Channels-last.
    Value xNhwc = createTranspose(rewriter, loc, x, {0, 2, 3, 1});
    xNhwc = pad(xNhwc, {0, padBegin[0], padBegin[1], 0},
                {0, padEnd[0], padEnd[1], 0});
    int64_t kh = kernel[0], kw = kernel[1];
    SmallVector<int64_t> nhwcOut = {n, outSpatial[0], outSpatial[1], m};
    Value conv;
    if (group == 1) {
      Value filter = relayoutWeights(rewriter, loc, w, op.getW(), wShape4,
                                     {2, 3, 1, 0});
      Value acc = createFilledTensor(
          rewriter, loc, RankedTensorType::get(nhwcOut, accElem), accZero);
      conv = narrowProduct(
          rewriter, loc,
          linalg::Conv2DNhwcHwcfOp::create(
              rewriter, loc, TypeRange{acc.getType()},
              ValueRange{xNhwc, filter}, ValueRange{acc}, stridesAttr,
              dilationsAttr)
              .getResult(0),
          elemType);
    } else if (depthwise && m == c) {
      Value filter = relayoutWeights(rewriter, loc, w, op.getW(), {c, kh, kw},
                                     {1, 2, 0});
      Value acc = createFilledTensor(
          rewriter, loc, RankedTensorType::get(nhwcOut, elemType), zero);
      conv = linalg::DepthwiseConv2DNhwcHwcOp::create(
                 rewriter, loc, TypeRange{acc.getType()},
                 ValueRange{xNhwc, filter}, ValueRange{acc}, stridesAttr,
                 dilationsAttr)
                 .getResult(0);
    } else if (depthwise) {
      int64_t mult = m / c;
      Value filter = relayoutWeights(rewriter, loc, w, op.getW(),
                                     {c, mult, kh, kw}, {2, 3, 0, 1});
      auto accType = RankedTensorType::get(
          {n, outSpatial[0], outSpatial[1], c, mult}, elemType);
      Value acc = createFilledTensor(rewriter, loc, accType, zero);
      conv = linalg::DepthwiseConv2DNhwcHwcmOp::create(
                 rewriter, loc, TypeRange{accType}, ValueRange{xNhwc, filter},
                 ValueRange{acc}, stridesAttr, dilationsAttr)
                 .getResult(0);
      conv = createReshape(rewriter, loc, conv,
                           RankedTensorType::get(nhwcOut, elemType));
    } else {
      // Grouped: NHWC viewed as NHWGC, W [G * F][Cg][KH][KW] -> GFHWC, the
      // result NHWGF viewed as NHWM (kiln-emit-microkernels packs each
      // column panel's filters block-diagonally).
      int64_t f = m / group;
      auto paddedType = cast<RankedTensorType>(xNhwc.getType());
      Value xGroups = createReshape(
          rewriter, loc, xNhwc,
          RankedTensorType::get({n, paddedType.getDimSize(1),
                                 paddedType.getDimSize(2), group, cg},
                                elemType));
      Value filter = relayoutWeights(rewriter, loc, w, op.getW(),
                                     {group, f, cg, kh, kw}, {0, 1, 3, 4, 2});
      auto accType = RankedTensorType::get(
          {n, outSpatial[0], outSpatial[1], group, f}, accElem);
      Value acc = createFilledTensor(rewriter, loc, accType, accZero);
      conv = narrowProduct(
          rewriter, loc,
          linalg::Conv2DNhwgcGfhwcOp::create(
              rewriter, loc, TypeRange{accType}, ValueRange{xGroups, filter},
              ValueRange{acc}, stridesAttr, dilationsAttr)
              .getResult(0),
          elemType);
      conv = createReshape(rewriter, loc, conv,
                           RankedTensorType::get(nhwcOut, elemType));
    }
    if (bias)
      conv = createElementwiseGeneric(
          rewriter, loc, RankedTensorType::get(nhwcOut, elemType),
          ValueRange{conv, bias},
          [](OpBuilder &b, Location l, ValueRange args) -> Value {
            return isa<FloatType>(args[0].getType())
                       ? arith::AddFOp::create(b, l, args[0], args[1])
                             .getResult()
                       : arith::AddIOp::create(b, l, args[0], args[1])
                             .getResult();
          });
    Value nchwResult = createTranspose(rewriter, loc, conv, {0, 3, 1, 2});
    rewriter.replaceOp(op,
                       createReshape(rewriter, loc, nchwResult, resultType));
    return success();
  }
};

} // namespace

void populateConvolutionPatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns) {
  patterns.add<ConvLowering>(converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
