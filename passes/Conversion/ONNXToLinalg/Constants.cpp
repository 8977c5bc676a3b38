//===- Constants.cpp - Constant, Identity, Dropout, Shape, Size, Cast -----===//
//
// onnx.NoValue has no lowering target: the pass keeps it legal, consumers
// ignore `none` operands, and the pass erases the unused NoValue ops after
// conversion (see ONNXToLinalg.cpp).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/Float8.h"
#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/SubByte.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/Kiln/ABIAttributes.h"
#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/DataTypes.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
namespace onnx = kiln::onnx;

namespace kiln::onnx_to_linalg {
namespace {

/// A replacement for a result of `none` type (an absent optional output).
Value createNoneValue(ConversionPatternRewriter &rewriter, Location loc) {
  return onnx::NoValueOp::create(rewriter, loc);
}

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

struct ConstantLowering : OpConversionPattern<onnx::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    if (!resultType)
      return onnx::emitNodeError(op)
             << "result must be a static ranked tensor";
    ElementsAttr attr;
    if (auto value = op.getValueAttr()) {
      attr = convertElementsAttrToSignless(value);
      if (!attr)
        return onnx::emitNodeError(op)
               << "cannot retype the value to signless integers";
    } else if (auto f = op.getValueFloatAttr()) {
      attr = DenseElementsAttr::get(resultType,
                                    getScalarAttr(resultType.getElementType(),
                                                  f.getValueAsDouble()));
    } else if (auto i = op.getValueIntAttr()) {
      attr = DenseElementsAttr::get(
          resultType,
          IntegerAttr::get(resultType.getElementType(), i.getInt()));
    } else if (auto fs = op.getValueFloatsAttr()) {
      SmallVector<Attribute> elems;
      for (Attribute a : fs)
        elems.push_back(FloatAttr::get(resultType.getElementType(),
                                       cast<FloatAttr>(a).getValueAsDouble()));
      if ((int64_t)elems.size() != resultType.getNumElements())
        return onnx::emitNodeError(op)
               << "value_floats size does not match the result type";
      attr = DenseElementsAttr::get(resultType, elems);
    } else if (auto is = op.getValueIntsAttr()) {
      SmallVector<Attribute> elems;
      for (Attribute a : is)
        elems.push_back(IntegerAttr::get(resultType.getElementType(),
                                         cast<IntegerAttr>(a).getInt()));
      if ((int64_t)elems.size() != resultType.getNumElements())
        return onnx::emitNodeError(op)
               << "value_ints size does not match the result type";
      attr = DenseElementsAttr::get(resultType, elems);
    } else {
      return onnx::emitNodeError(op)
             << "only 'value', 'value_float(s)' and 'value_int(s)' "
                "are supported (sparse and string constants are not)";
    }
    if (attr.getType() != resultType)
      return onnx::emitNodeError(op)
             << "value type " << attr.getType()
             << " does not match the result type " << resultType;
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, resultType,
                                                   cast<TypedAttr>(attr));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Identity
//===----------------------------------------------------------------------===//

struct IdentityLowering : OpConversionPattern<onnx::IdentityOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::IdentityOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type resultType = getTypeConverter()->convertType(op.getType());
    if (!isa<TensorType>(adaptor.getInput().getType()) ||
        adaptor.getInput().getType() != resultType)
      return onnx::emitNodeError(op)
             << "only tensors of the same type are supported";
    rewriter.replaceOp(op, adaptor.getInput());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Dropout (inference only)
//===----------------------------------------------------------------------===//

struct DropoutLowering : OpConversionPattern<onnx::DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::DropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value training = op.getTrainingMode();
    if (!onnx::isNoneValue(training)) {
      std::optional<double> mode = readConstantScalar(training);
      if (!mode)
        return onnx::emitNodeError(op)
               << "needs a compile-time constant for the non-constant input "
                  "'training_mode'";
      if (*mode != 0.0) {
        // Training with ratio 0 drops nothing: the same as inference. Any
        // other ratio drops at random, which kiln does not compile.
        Value ratioValue = op.getRatio();
        std::optional<double> ratio =
            onnx::isNoneValue(ratioValue) ? std::optional<double>(0.5)
                                          : readConstantScalar(ratioValue);
        if (!ratio)
          return onnx::emitNodeError(op)
                 << "needs a compile-time constant for the non-constant "
                    "input 'ratio' (training_mode = true)";
        if (*ratio != 0.0)
          return onnx::emitNodeError(op)
                 << "training_mode = true is not supported with ratio "
                 << *ratio << " (random dropout; kiln compiles inference)";
      }
    }
    Value output = adaptor.getData();
    if (output.getType() !=
        getTypeConverter()->convertType(op.getOutput().getType()))
      return onnx::emitNodeError(op)
             << "output type differs from the input type";
    Value mask;
    Type maskType = op.getMask().getType();
    if (isa<NoneType>(maskType)) {
      mask = createNoneValue(rewriter, op.getLoc());
    } else {
      auto maskTensor = dyn_cast_or_null<RankedTensorType>(
          getTypeConverter()->convertType(maskType));
      if (!maskTensor || !maskTensor.hasStaticShape())
        return onnx::emitNodeError(op)
               << "mask must be a static ranked tensor";
      mask = arith::ConstantOp::create(
          rewriter, op.getLoc(),
          DenseElementsAttr::get(maskTensor,
                                 getScalarAttr(maskTensor.getElementType(), 1)));
    }
    rewriter.replaceOp(op, {output, mask});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Shape, Size
//===----------------------------------------------------------------------===//

struct ShapeLowering : OpConversionPattern<onnx::ShapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ShapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inputType = dyn_cast<RankedTensorType>(op.getData().getType());
    if (!inputType)
      return onnx::emitNodeError(op) << "the input must be ranked";
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    if (!resultType || resultType.getRank() != 1)
      return onnx::emitNodeError(op)
             << "result must be a static 1-D tensor";
    int64_t rank = inputType.getRank();
    int64_t start = op.getStart();
    int64_t end = op.getEnd() ? static_cast<int64_t>(*op.getEnd()) : rank;
    if (start < 0)
      start += rank;
    if (end < 0)
      end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    SmallVector<int64_t> dims;
    for (int64_t i = start; i < end; ++i)
      dims.push_back(inputType.getDimSize(i));
    if ((int64_t)dims.size() != resultType.getDimSize(0) ||
        !resultType.getElementType().isInteger(64))
      return onnx::emitNodeError(op)
             << "result type " << resultType
             << " does not match the computed shape";
    if (!inputType.hasStaticShape()) {
      // Symbolic dims: read at run time.
      SmallVector<Value> elements;
      Location loc = op.getLoc();
      for (int64_t i = start; i < end; ++i)
        elements.push_back(inputType.isDynamicDim(i)
                               ? arith::IndexCastOp::create(
                                     rewriter, loc, rewriter.getI64Type(),
                                     tensor::DimOp::create(
                                         rewriter, loc, adaptor.getData(), i))
                                     .getResult()
                               : arith::ConstantIntOp::create(
                                     rewriter, loc, inputType.getDimSize(i), 64)
                                     .getResult());
      rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, resultType,
                                                          elements);
      return success();
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, resultType,
        DenseElementsAttr::get(resultType, llvm::ArrayRef<int64_t>(dims)));
    return success();
  }
};

struct SizeLowering : OpConversionPattern<onnx::SizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::SizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inputType = dyn_cast<RankedTensorType>(op.getData().getType());
    if (!inputType || !inputType.hasStaticShape())
      return onnx::emitNodeError(op)
             << "the input must have a static shape";
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    if (!resultType || resultType.getNumElements() != 1 ||
        !resultType.getElementType().isInteger(64))
      return onnx::emitNodeError(op)
             << "result must be a static one-element i64 tensor";
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, resultType,
        DenseElementsAttr::get(
            resultType, IntegerAttr::get(resultType.getElementType(),
                                         inputType.getNumElements())));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Cast, CastLike
//===----------------------------------------------------------------------===//

bool isCastableElementType(Type type) {
  if (onnx::isFloat8Type(type))
    return true;
  if (auto f = dyn_cast<FloatType>(type))
    return f.isF16() || f.isBF16() || f.isF32() || f.isF64();
  if (auto i = dyn_cast<IntegerType>(type))
    return llvm::is_contained({1u, 8u, 16u, 32u, 64u}, i.getWidth());
  return false;
}

/// Lowers `input` (original onnx type `origInputType`) to a tensor of
/// `origResultType` (its signless conversion is `resultType`). `saturate` and
/// `roundMode` are the attributes': how values beyond an 8-bit float's range
/// are cast, and how to float8e8m0.
LogicalResult lowerCast(Operation *op, Value input, Type origInputType,
                        Type origResultType, RankedTensorType resultType,
                        bool saturate, StringRef roundMode,
                        ConversionPatternRewriter &rewriter) {
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  // Symbolic dims are allowed (the generic sizes them from the input).
  if (!inputType || !resultType)
    return onnx::emitNodeError(op) << "input and result must be ranked";
  Type srcElem = inputType.getElementType();
  Type dstElem = resultType.getElementType();
  // int4, float4e2m1, ... are held as i8 (SubByte.h): their original types
  // say how to read and write them.
  Type srcOrig = getElementTypeOrSelf(origInputType);
  Type dstOrig = getElementTypeOrSelf(origResultType);
  bool srcStorage = onnx::isStorageOnlyType(srcOrig);
  bool dstStorage = onnx::isStorageOnlyType(dstOrig);
  if ((!srcStorage && !isCastableElementType(srcElem)) ||
      (!dstStorage && !isCastableElementType(dstElem)))
    return onnx::emitNodeError(op)
           << "cast from " << srcOrig << " to " << dstOrig
           << " is not supported (numeric types, bool, the float8 formats "
              "E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E8M0, float4e2m1, int4, "
              "uint4, int2 and uint2; no float6 or string)";
  if (dstStorage && roundMode != "up" && roundMode != "down" &&
      roundMode != "nearest")
    return onnx::emitNodeError(op)
           << "round_mode '" << roundMode
           << "' is not one of 'up', 'down', 'nearest'";
  // The same bits: the same type, or an int4/int2 held as the i8 of the
  // int8/uint8 of its signedness.
  bool sameBits = srcElem == dstElem &&
                  isUnsignedInt(origInputType) == isUnsignedInt(origResultType) &&
                  (srcOrig == dstOrig ||
                   (!dstStorage && isa<IntegerType>(srcOrig) &&
                    isa<IntegerType>(dstOrig)));
  if (sameBits) {
    rewriter.replaceOp(op, input);
    return success();
  }
  bool srcUnsigned = isUnsignedInt(origInputType);
  bool dstUnsigned = isUnsignedInt(origResultType);
  Value result = createElementwiseGeneric(
      rewriter, op->getLoc(), resultType, ValueRange{input},
      [&](OpBuilder &b, Location loc, ValueRange args) {
        // An 8-bit float goes through f32 (exact both ways for decoding; one
        // rounding to the 8-bit type, except from f64: rounded twice).
        Value v = args[0];
        if (srcStorage)
          v = decodeStorageOnly(b, loc, v, srcOrig);
        else if (onnx::isFloat8Type(srcElem))
          v = decodeFloat8(b, loc, v);
        if (dstStorage)
          return encodeStorageOnly(b, loc, v, srcUnsigned, dstOrig, saturate,
                                   roundMode);
        if (!onnx::isFloat8Type(dstElem))
          return convertScalar(b, loc, v, dstElem, srcUnsigned, dstUnsigned);
        v = convertScalar(b, loc, v, b.getF32Type(), srcUnsigned, false);
        return encodeFloat8(b, loc, v, cast<FloatType>(dstElem), saturate);
      });
  if (!result)
    return onnx::emitNodeError(op)
           << "input shape does not match the result shape";
  if (srcStorage || dstStorage)
    markStorageOnlyConversion(result.getDefiningOp());
  rewriter.replaceOp(op, result);
  return success();
}

struct CastLowering : OpConversionPattern<onnx::CastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return lowerCast(op, adaptor.getInput(), op.getInput().getType(),
                     op.getOutput().getType(),
                     getConvertedRankedResultType(getTypeConverter(), op),
                     op.getSaturate() != 0, op.getRoundMode(), rewriter);
  }
};

struct CastLikeLowering : OpConversionPattern<onnx::CastLikeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::CastLikeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return lowerCast(op, adaptor.getInput(), op.getInput().getType(),
                     op.getOutput().getType(),
                     getConvertedRankedResultType(getTypeConverter(), op),
                     op.getSaturate() != 0, op.getRoundMode(), rewriter);
  }
};

} // namespace

void populateConstantPatterns(TypeConverter &converter,
                              RewritePatternSet &patterns) {
  patterns.add<ConstantLowering, IdentityLowering, DropoutLowering,
               ShapeLowering, SizeLowering, CastLowering, CastLikeLowering>(
      converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
