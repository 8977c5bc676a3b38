//===- RunDims.cpp - ops whose output sizes the run's values decide -------===//
//
// Reshape whose `shape` is not a compile-time value (a graph input, a value
// computed from data): its dims are read with tensor.extract at run time,
// 0 copies the input's dim (allowzero = 0; allowzero = 1: a 0-sized dim) and
// one -1 takes the elements left. An entry below -1, two -1s, a 0 copying a
// dim the input does not have, or a shape whose elements differ from the
// input's is a run-time check naming the node. The result: the input
// collapsed to 1-D and expanded to the computed sizes (a view: no copy).
//
// Unsqueeze / Squeeze with axes read at run time: each output dim chosen
// with selects (1 where an axis is inserted; the input's dims not squeezed),
// checked (axes in range and distinct, a squeezed dim 1); a view.
// Split with a `split` read at run time: extract_slices at the running sums,
// checked (sizes >= 0 summing to the axis). Slice with starts / ends / axes /
// steps read at run time: per dim its start, step and size (ONNX's
// clamping), checked (steps not 0, axes in range and distinct); a gather by
// a linalg.generic over the result.
// docs/dynamic-shapes.md, "Run dims".
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/RunDims.h"
#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/Kiln/KilnDialect.h"
#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>
#include <type_traits>

using namespace mlir;
namespace onnx = kiln::onnx;

namespace kiln::onnx_to_linalg {

Value indexValue(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value readIndexAt(OpBuilder &b, Location loc, Value values, int64_t i,
                  bool isUnsigned) {
  auto type = cast<RankedTensorType>(values.getType());
  SmallVector<Value> at;
  if (type.getRank() == 1)
    at.push_back(indexValue(b, loc, i));
  Value v = tensor::ExtractOp::create(b, loc, values, at);
  if (isUnsigned)
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

Value dimValue(OpBuilder &b, Location loc, Value value, int64_t axis) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.isDynamicDim(axis))
    return indexValue(b, loc, type.getDimSize(axis));
  return tensor::DimOp::create(b, loc, value, axis);
}

void emitRunCheck(OpBuilder &b, Location loc, Operation *op, Value ok,
                  const std::string &what) {
  Value flag = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, b.getI1Type()), ValueRange{ok});
  kiln::CheckOp::create(b, loc, flag, getNodeMessagePrefix(op) + what);
}

Value sizeIfOk(OpBuilder &b, Location loc, Value ok, Value size) {
  return arith::SelectOp::create(b, loc, ok, size, indexValue(b, loc, 0));
}

Value reshapeToSizes(OpBuilder &b, Location loc, Value value,
                     RankedTensorType type, ArrayRef<Value> sizes) {
  auto source = cast<RankedTensorType>(value.getType());
  Type elem = source.getElementType();
  auto flatType = RankedTensorType::get({ShapedType::kDynamic}, elem);
  Value flat;
  if (source.getRank() == 0) {
    flat = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1}, elem), value,
        ArrayRef<ReassociationIndices>{}, ArrayRef<OpFoldResult>{
                                              b.getIndexAttr(1)});
  } else if (source.getRank() == 1) {
    flat = value;
  } else {
    ReassociationIndices all;
    for (int64_t i = 0; i < source.getRank(); ++i)
      all.push_back(i);
    flat = tensor::CollapseShapeOp::create(b, loc, value,
                                           ArrayRef<ReassociationIndices>{all});
  }
  if (flat.getType() != flatType)
    flat = tensor::CastOp::create(b, loc, flatType, flat);
  if (type.getRank() == 1)
    return tensor::CastOp::create(b, loc, type, flat);
  ReassociationIndices all;
  SmallVector<OpFoldResult> shape;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    all.push_back(i);
    shape.push_back(type.isDynamicDim(i) ? OpFoldResult(sizes[i])
                                         : b.getIndexAttr(type.getDimSize(i)));
  }
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       ArrayRef<ReassociationIndices>{all},
                                       shape);
}

namespace {

/// True when a result of `op` has a `?` dim (shape inference opted it in to
/// run dims); else the op's static lowering applies.
bool hasRunDims(Operation *op) {
  return llvm::any_of(op->getResultTypes(), [](Type t) {
    auto r = dyn_cast<RankedTensorType>(t);
    return r && !r.hasStaticShape();
  });
}

/// Reshape with a shape read at run time (see the file comment).
struct RunTimeReshapeLowering : OpConversionPattern<onnx::ReshapeOp> {
  RunTimeReshapeLowering(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(onnx::ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value shape = op->getOperand(1);
    if (readConstantInts(shape) || !hasRunDims(op))
      return failure(); // a compile-time shape: ReshapeLikeLowering
    Location loc = op.getLoc();
    Value data = adaptor.getOperands()[0];
    Value shapeValues = adaptor.getOperands()[1];
    auto dataType = dyn_cast<RankedTensorType>(data.getType());
    auto shapeType = dyn_cast<RankedTensorType>(shapeValues.getType());
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!dataType || !shapeType || !resultType || shapeType.getRank() != 1 ||
        shapeType.isDynamicDim(0) ||
        shapeType.getDimSize(0) != resultType.getRank())
      return onnx::emitNodeError(op)
             << "a shape read at run time needs a 1-D shape of static length "
                "equal to the result's rank";
    auto allowZeroAttr = op->getAttrOfType<IntegerAttr>("allowzero");
    bool allowZero = allowZeroAttr && allowZeroAttr.getInt() != 0;
    int64_t n = resultType.getRank(), inRank = dataType.getRank();
    OpBuilder &b = rewriter;
    Value zero = indexValue(b, loc, 0), one = indexValue(b, loc, 1),
          minusOne = indexValue(b, loc, -1);
    Value total = one;
    for (int64_t i = 0; i < inRank; ++i)
      total = arith::MulIOp::create(b, loc, total, dimValue(b, loc, data, i));
    Value trueV = arith::ConstantIntOp::create(b, loc, 1, 1);
    Value ok = trueV;
    auto andOk = [&](Value c) { ok = arith::AndIOp::create(b, loc, ok, c); };
    SmallVector<Value> dims, isInferred;
    Value known = one, numInferred = zero;
    for (int64_t i = 0; i < n; ++i) {
      Value v = readIndexAt(b, loc, shapeValues, i);
      Value isMinusOne =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v, minusOne);
      andOk(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v,
                                  minusOne));
      Value d = v;
      if (!allowZero) {
        Value isZero =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v, zero);
        if (i < inRank)
          d = arith::SelectOp::create(b, loc, isZero,
                                      dimValue(b, loc, data, i), v);
        else // a 0 copying a dim data does not have
          andOk(arith::XOrIOp::create(b, loc, isZero, trueV));
      }
      numInferred = arith::AddIOp::create(
          b, loc, numInferred,
          arith::SelectOp::create(b, loc, isMinusOne, one, zero));
      known = arith::MulIOp::create(
          b, loc, known, arith::SelectOp::create(b, loc, isMinusOne, one, d));
      dims.push_back(d);
      isInferred.push_back(isMinusOne);
    }
    andOk(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                numInferred, one));
    // The -1: the elements left (0 when the others hold none).
    Value knownIsZero =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, known, zero);
    Value safeKnown = arith::SelectOp::create(b, loc, knownIsZero, one, known);
    Value rest = arith::SelectOp::create(
        b, loc, knownIsZero, zero,
        arith::DivSIOp::create(b, loc, total, safeKnown));
    // The product of the sizes must be the input's elements, computed
    // without wrapping: with elements, each partial product stays at most
    // `total` (count <= total / d before multiplying); without, some size
    // is 0 (a wrapped product of huge sizes is not).
    Value count = one, hasZero = arith::ConstantIntOp::create(b, loc, 0, 1);
    Value totalIsZero =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, total, zero);
    for (int64_t i = 0; i < n; ++i) {
      Value d =
          arith::SelectOp::create(b, loc, isInferred[i], rest, dims[i]);
      dims[i] = d;
      Value dIsZero =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d, zero);
      hasZero = arith::OrIOp::create(b, loc, hasZero, dIsZero);
      Value divisor = arith::MaxSIOp::create(b, loc, d, one);
      Value fits = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::sle, count,
          arith::DivSIOp::create(b, loc, total, divisor));
      andOk(arith::OrIOp::create(b, loc, totalIsZero, fits));
      count = arith::MulIOp::create(b, loc, count, d);
    }
    andOk(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, count,
                                total));
    andOk(arith::OrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, totalIsZero, trueV), hasZero));
    // A static dim of the result type (shape inference knew it): the same.
    for (int64_t i = 0; i < n; ++i)
      if (!resultType.isDynamicDim(i))
        andOk(arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq, dims[i],
            indexValue(b, loc, resultType.getDimSize(i))));
    emitRunCheck(b, loc, op, ok,
                 "shape does not fit the input's elements (an entry below "
                 "-1, more than one -1, a 0 past the input's rank, or a "
                 "different element count)");
    for (Value &d : dims)
      d = sizeIfOk(b, loc, ok, d);
    // After a failed check the sizes are 0: a view holding nothing (a
    // reinterpretation, never checked against the data's elements).
    rewriter.replaceOp(op, reshapeToSizes(b, loc, data, resultType, dims));
    return success();
  }
};

/// Reads the `n` axes of the run-time tensor `axes` normalized against
/// `rank` (+ rank when negative); `ok` and-ed with: each in [-rank, rank)
/// and all distinct.
SmallVector<Value> readAxes(OpBuilder &b, Location loc, Value axes, int64_t n,
                            int64_t rank, Value &ok) {
  Value zero = indexValue(b, loc, 0), r = indexValue(b, loc, rank);
  SmallVector<Value> out;
  for (int64_t i = 0; i < n; ++i) {
    Value a = readIndexAt(b, loc, axes, i);
    Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, a, zero);
    a = arith::SelectOp::create(b, loc, neg, arith::AddIOp::create(b, loc, a, r),
                                a);
    Value inRange = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, a, zero),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, a, r));
    ok = arith::AndIOp::create(b, loc, ok, inRange);
    for (Value prev : out)
      ok = arith::AndIOp::create(
          b, loc, ok,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, prev, a));
    out.push_back(a);
  }
  return out;
}

Value isAnyOf(OpBuilder &b, Location loc, ArrayRef<Value> values, int64_t j) {
  Value c = indexValue(b, loc, j);
  Value any = arith::ConstantIntOp::create(b, loc, 0, 1);
  for (Value v : values)
    any = arith::OrIOp::create(
        b, loc, any,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v, c));
  return any;
}

/// Unsqueeze / Squeeze whose axes are read at run time.
template <typename OpTy>
struct RunTimeAxesReshapeLowering : OpConversionPattern<OpTy> {
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  RunTimeAxesReshapeLowering(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern<OpTy>(converter, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op->getNumOperands() < 2 || onnx::isNoneValue(op->getOperand(1)) ||
        readConstantInts(op->getOperand(1)) || !hasRunDims(op))
      return failure();
    constexpr bool unsqueeze = std::is_same_v<OpTy, onnx::UnsqueezeOp>;
    Location loc = op.getLoc();
    Value data = adaptor.getOperands()[0];
    Value axesValues = adaptor.getOperands()[1];
    auto dataType = dyn_cast<RankedTensorType>(data.getType());
    auto axesType = dyn_cast<RankedTensorType>(axesValues.getType());
    RankedTensorType resultType =
        getConvertedRankedResultType(this->getTypeConverter(), op);
    if (!dataType || !axesType || !resultType || axesType.getRank() != 1 ||
        axesType.isDynamicDim(0))
      return onnx::emitNodeError(op)
             << "axes read at run time need a 1-D axes of static length";
    OpBuilder &b = rewriter;
    int64_t n = axesType.getDimSize(0), inRank = dataType.getRank(),
            outRank = resultType.getRank();
    Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
    SmallVector<Value> axes =
        readAxes(b, loc, axesValues, n, unsqueeze ? outRank : inRank, ok);
    Value zero = indexValue(b, loc, 0), one = indexValue(b, loc, 1);
    SmallVector<Value> sizes;
    if (unsqueeze) {
      // Output j: 1 where inserted, else the next input dim (k = j minus the
      // axes inserted up to j).
      Value inserted = zero;
      for (int64_t j = 0; j < outRank; ++j) {
        Value here = isAnyOf(b, loc, axes, j);
        inserted = arith::AddIOp::create(
            b, loc, inserted, arith::SelectOp::create(b, loc, here, one, zero));
        Value k = arith::SubIOp::create(b, loc, indexValue(b, loc, j), inserted);
        Value dim = one;
        for (int64_t i = 0; i < inRank; ++i)
          dim = arith::SelectOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, k,
                                    indexValue(b, loc, i)),
              dimValue(b, loc, data, i), dim);
        sizes.push_back(arith::SelectOp::create(b, loc, here, one, dim));
      }
    } else {
      // Output j: the input dim of the j-th axis not squeezed; a squeezed
      // dim must be 1.
      SmallVector<Value> squeezed;
      for (int64_t i = 0; i < inRank; ++i) {
        squeezed.push_back(isAnyOf(b, loc, axes, i));
        Value isOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            dimValue(b, loc, data, i), one);
        ok = arith::AndIOp::create(
            b, loc, ok,
            arith::OrIOp::create(
                b, loc,
                arith::XOrIOp::create(
                    b, loc, squeezed[i],
                    arith::ConstantIntOp::create(b, loc, 1, 1)),
                isOne));
      }
      sizes.assign(outRank, one);
      Value kept = zero;
      for (int64_t i = 0; i < inRank; ++i) {
        // Input dim i goes to output position `kept` when not squeezed.
        for (int64_t j = 0; j < outRank; ++j) {
          Value at = arith::AndIOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, kept,
                                    indexValue(b, loc, j)),
              arith::XOrIOp::create(b, loc, squeezed[i],
                                    arith::ConstantIntOp::create(b, loc, 1, 1)));
          sizes[j] = arith::SelectOp::create(b, loc, at,
                                             dimValue(b, loc, data, i), sizes[j]);
        }
        kept = arith::AddIOp::create(
            b, loc, kept,
            arith::SelectOp::create(b, loc, squeezed[i], zero, one));
      }
    }
    emitRunCheck(b, loc, op, ok,
                 unsqueeze ? "axes out of range or repeated"
                           : "axes out of range or repeated, or a squeezed "
                             "dim is not 1");
    // The element counts agree when the check holds; after a failed one the
    // view holds nothing.
    for (Value &d : sizes)
      d = sizeIfOk(b, loc, ok, d);
    rewriter.replaceOp(op, reshapeToSizes(b, loc, data, resultType, sizes));
    return success();
  }
};

/// Split whose `split` is read at run time.
struct RunTimeSplitLowering : OpConversionPattern<onnx::SplitOp> {
  RunTimeSplitLowering(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(onnx::SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op->getNumOperands() < 2 || onnx::isNoneValue(op->getOperand(1)) ||
        readConstantInts(op->getOperand(1)) || !hasRunDims(op))
      return failure();
    Location loc = op.getLoc();
    Value data = adaptor.getOperands()[0];
    Value split = adaptor.getOperands()[1];
    auto dataType = dyn_cast<RankedTensorType>(data.getType());
    auto splitType = dyn_cast<RankedTensorType>(split.getType());
    int64_t numResults = op->getNumResults();
    if (!dataType || !splitType || splitType.getRank() != 1 ||
        splitType.getDimSize(0) != numResults)
      return onnx::emitNodeError(op)
             << "a split read at run time needs one size per output";
    int64_t rank = dataType.getRank();
    int64_t axis = op.getAxis();
    axis = axis < 0 ? axis + rank : axis;
    OpBuilder &b = rewriter;
    Value zero = indexValue(b, loc, 0);
    Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
    Value dim = dimValue(b, loc, data, axis);
    SmallVector<Value> sizes;
    Value sum = zero;
    for (int64_t i = 0; i < numResults; ++i) {
      Value s = readIndexAt(b, loc, split, i);
      Value nonNeg =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, s, zero);
      // No wrap: every partial sum stays at most the axis.
      Value fits = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::sle, s,
          arith::SubIOp::create(b, loc, dim, sum));
      ok = arith::AndIOp::create(b, loc, ok,
                                 arith::AndIOp::create(b, loc, nonNeg, fits));
      s = arith::SelectOp::create(b, loc, arith::AndIOp::create(b, loc, nonNeg, fits), s, zero);
      sizes.push_back(s);
      sum = arith::AddIOp::create(b, loc, sum, s);
    }
    ok = arith::AndIOp::create(
        b, loc, ok,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, sum, dim));
    emitRunCheck(b, loc, op, ok,
                 "split sizes are negative or do not sum to the axis");
    SmallVector<Value> results;
    Value offset = zero;
    for (int64_t i = 0; i < numResults; ++i) {
      auto resultType = cast<RankedTensorType>(
          getTypeConverter()->convertType(op->getResult(i).getType()));
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
          sliceSizes, strides(rank, b.getIndexAttr(1));
      for (int64_t d = 0; d < rank; ++d)
        sliceSizes.push_back(d == axis ? OpFoldResult(sizes[i])
                                       : tensor::getMixedSize(b, loc, data, d));
      offsets[axis] = offset;
      Value slice = tensor::ExtractSliceOp::create(b, loc, data, offsets,
                                                   sliceSizes, strides);
      if (slice.getType() != resultType)
        slice = tensor::CastOp::create(b, loc, resultType, slice);
      results.push_back(slice);
      offset = arith::AddIOp::create(b, loc, offset, sizes[i]);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Slice whose starts, ends, axes or steps are read at run time.
struct RunTimeSliceLowering : OpConversionPattern<onnx::SliceOp> {
  RunTimeSliceLowering(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}

  static bool runTime(Operation *op, unsigned i) {
    return i < op->getNumOperands() && !onnx::isNoneValue(op->getOperand(i)) &&
           !readConstantInts(op->getOperand(i));
  }

  LogicalResult
  matchAndRewrite(onnx::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!runTime(op, 1) && !runTime(op, 2) && !runTime(op, 3) &&
        !runTime(op, 4))
      return failure();
    if (!hasRunDims(op))
      return failure(); // static sizes (x[i : i + c] in a Loop body)
    Location loc = op.getLoc();
    ValueRange operands = adaptor.getOperands();
    Value data = operands[0];
    auto dataType = dyn_cast<RankedTensorType>(data.getType());
    auto startsType = dyn_cast<RankedTensorType>(operands[1].getType());
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!dataType || !startsType || !resultType || startsType.getRank() != 1 ||
        startsType.isDynamicDim(0))
      return onnx::emitNodeError(op)
             << "starts read at run time need a static length";
    OpBuilder &b = rewriter;
    int64_t n = startsType.getDimSize(0), rank = dataType.getRank();
    auto present = [&](unsigned i) {
      return i < op->getNumOperands() && !onnx::isNoneValue(op->getOperand(i));
    };
    Value zero = indexValue(b, loc, 0), one = indexValue(b, loc, 1);
    Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
    SmallVector<Value> axes;
    if (present(3))
      axes = readAxes(b, loc, operands[3], n, rank, ok);
    else
      for (int64_t i = 0; i < n; ++i)
        axes.push_back(indexValue(b, loc, i));
    // Per dim: start, step, size (the whole dim unless an entry names it).
    SmallVector<Value> starts, steps, sizes;
    for (int64_t a = 0; a < rank; ++a) {
      starts.push_back(zero);
      steps.push_back(one);
      sizes.push_back(dimValue(b, loc, data, a));
    }
    Value minI64 =
        indexValue(b, loc, std::numeric_limits<int64_t>::min());
    Value maxI64 =
        indexValue(b, loc, std::numeric_limits<int64_t>::max());
    for (int64_t i = 0; i < n; ++i) {
      Value st = readIndexAt(b, loc, operands[1], i);
      Value en = readIndexAt(b, loc, operands[2], i);
      Value sp = present(4) ? readIndexAt(b, loc, operands[4], i) : one;
      ok = arith::AndIOp::create(
          b, loc, ok,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, sp, zero));
      Value positive =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, sp, zero);
      for (int64_t a = 0; a < rank; ++a) {
        Value named = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            axes[i], indexValue(b, loc, a));
        Value dim = dimValue(b, loc, data, a);
        auto plusDimIfNeg = [&](Value v) {
          Value neg =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, zero);
          return arith::SelectOp::create(b, loc, neg,
                                         arith::AddIOp::create(b, loc, v, dim),
                                         v)
              .getResult();
        };
        auto clamp = [&](Value v, Value lo, Value hi) {
          return arith::MinSIOp::create(b, loc,
                                        arith::MaxSIOp::create(b, loc, v, lo),
                                        hi)
              .getResult();
        };
        Value s = plusDimIfNeg(st), e = plusDimIfNeg(en);
        Value dimMinus1 = arith::SubIOp::create(b, loc, dim, one);
        // step > 0: [0, dim]; step < 0: start [0, dim - 1], end [-1, dim - 1].
        Value sPos = clamp(s, zero, dim), ePos = clamp(e, zero, dim);
        Value sNeg = arith::MaxSIOp::create(
            b, loc, arith::MinSIOp::create(b, loc, s, dimMinus1), zero);
        Value eNeg = clamp(e, indexValue(b, loc, -1), dimMinus1);
        Value sizePos = arith::SelectOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, ePos,
                                  sPos),
            arith::AddIOp::create(
                b, loc,
                arith::DivSIOp::create(
                    b, loc,
                    arith::SubIOp::create(
                        b, loc, arith::SubIOp::create(b, loc, ePos, sPos), one),
                    arith::MaxSIOp::create(b, loc, sp, one)),
                one),
            zero);
        // -step, INT64_MIN taken as INT64_MAX (the span is below 2^63).
        Value negStep = arith::SelectOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, sp, minI64),
            maxI64, arith::SubIOp::create(b, loc, zero, sp));
        negStep = arith::MaxSIOp::create(b, loc, negStep, one);
        Value sizeNeg = arith::SelectOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, sNeg,
                                  eNeg),
            arith::AddIOp::create(
                b, loc,
                arith::DivSIOp::create(
                    b, loc,
                    arith::SubIOp::create(
                        b, loc, arith::SubIOp::create(b, loc, sNeg, eNeg), one),
                    negStep),
                one),
            zero);
        Value start = arith::SelectOp::create(b, loc, positive, sPos, sNeg);
        Value size = arith::SelectOp::create(b, loc, positive, sizePos, sizeNeg);
        starts[a] = arith::SelectOp::create(b, loc, named, start, starts[a]);
        steps[a] = arith::SelectOp::create(b, loc, named, sp, steps[a]);
        sizes[a] = arith::SelectOp::create(b, loc, named, size, sizes[a]);
      }
    }
    emitRunCheck(b, loc, op, ok, "axes out of range or repeated, or a step is 0");
    SmallVector<Value> dynSizes;
    for (int64_t a = 0; a < rank; ++a) {
      sizes[a] = sizeIfOk(b, loc, ok, sizes[a]);
      if (resultType.isDynamicDim(a))
        dynSizes.push_back(sizes[a]);
    }
    Value empty = tensor::EmptyOp::create(b, loc, resultType, dynSizes);
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Value result =
        linalg::GenericOp::create(
            b, loc, TypeRange{resultType}, ValueRange{}, ValueRange{empty}, maps,
            iterators,
            [&](OpBuilder &nb, Location l, ValueRange) {
              SmallVector<Value> at;
              for (int64_t a = 0; a < rank; ++a) {
                Value i = linalg::IndexOp::create(nb, l, a);
                at.push_back(arith::AddIOp::create(
                    nb, l, starts[a],
                    arith::MulIOp::create(nb, l, i, steps[a])));
              }
              linalg::YieldOp::create(
                  nb, l, tensor::ExtractOp::create(nb, l, data, at).getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Pad whose pads (or axes) are read at run time; static data.
struct RunTimePadLowering : OpConversionPattern<onnx::PadOp> {
  RunTimePadLowering(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(onnx::PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto runTime = [&](unsigned i) {
      return i < op->getNumOperands() &&
             !onnx::isNoneValue(op->getOperand(i)) &&
             !readConstantInts(op->getOperand(i));
    };
    if ((!runTime(1) && !runTime(3)) || !hasRunDims(op))
      return failure();
    Location loc = op.getLoc();
    ValueRange operands = adaptor.getOperands();
    Value data = operands[0];
    auto dataType = dyn_cast<RankedTensorType>(data.getType());
    auto padsType = dyn_cast<RankedTensorType>(operands[1].getType());
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!dataType || !dataType.hasStaticShape() || !padsType ||
        padsType.getRank() != 1 || padsType.isDynamicDim(0) || !resultType)
      return onnx::emitNodeError(op)
             << "pads read at run time need static data and pads of a "
                "static length";
    StringRef mode = op.getMode();
    if (mode != "constant" && mode != "edge" && mode != "reflect" &&
        mode != "wrap")
      return onnx::emitNodeError(op) << "unsupported Pad mode '" << mode << "'";
    OpBuilder &b = rewriter;
    int64_t rank = dataType.getRank();
    Value zero = indexValue(b, loc, 0);
    Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
    SmallVector<Value> axes;
    bool hasAxes = op->getNumOperands() > 3 && !onnx::isNoneValue(op->getOperand(3));
    int64_t n = rank;
    if (hasAxes) {
      auto axesType = cast<RankedTensorType>(operands[3].getType());
      n = axesType.getDimSize(0);
      axes = readAxes(b, loc, operands[3], n, rank, ok);
    } else {
      for (int64_t i = 0; i < rank; ++i)
        axes.push_back(indexValue(b, loc, i));
    }
    if (padsType.getDimSize(0) != 2 * n)
      return onnx::emitNodeError(op) << "pads must have 2 values per axis";
    SmallVector<Value> low(rank, zero), high(rank, zero), sizes;
    for (int64_t i = 0; i < n; ++i) {
      Value lo = readIndexAt(b, loc, operands[1], i);
      Value hi = readIndexAt(b, loc, operands[1], n + i);
      for (int64_t a = 0; a < rank; ++a) {
        Value named = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            axes[i], indexValue(b, loc, a));
        low[a] = arith::SelectOp::create(b, loc, named, lo, low[a]);
        high[a] = arith::SelectOp::create(b, loc, named, hi, high[a]);
      }
    }
    // Each pad crops at most the dim and adds at most 2^40 (no wrap); a
    // mode other than constant cannot pad an empty dim.
    Value limit = indexValue(b, loc, int64_t(1) << 40);
    for (int64_t a = 0; a < rank; ++a) {
      int64_t dim = dataType.getDimSize(a);
      Value d = indexValue(b, loc, dim), negD = indexValue(b, loc, -dim);
      for (Value p : {low[a], high[a]})
        ok = arith::AndIOp::create(
            b, loc, ok,
            arith::AndIOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, p, negD),
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, p,
                                      limit)));
      Value size = arith::AddIOp::create(
          b, loc, d, arith::AddIOp::create(b, loc, low[a], high[a]));
      ok = arith::AndIOp::create(
          b, loc, ok,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, size, zero));
      if (mode != "constant") {
        // The data left after cropping must not be empty when padded.
        Value keptHere = arith::AddIOp::create(
            b, loc, d,
            arith::AddIOp::create(
                b, loc, arith::MinSIOp::create(b, loc, low[a], zero),
                arith::MinSIOp::create(b, loc, high[a], zero)));
        Value padded = arith::OrIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, low[a], zero),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, high[a], zero));
        ok = arith::AndIOp::create(
            b, loc, ok,
            arith::OrIOp::create(
                b, loc,
                arith::XOrIOp::create(b, loc, padded,
                                      arith::ConstantIntOp::create(b, loc, 1, 1)),
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, keptHere,
                                      zero)));
      }
      sizes.push_back(size);
    }
    emitRunCheck(b, loc, op, ok,
                 "pads crop more than the dim, or pad an empty dim in a mode "
                 "other than constant, or axes out of range or repeated");
    SmallVector<Value> dynSizes;
    for (int64_t a = 0; a < rank; ++a) {
      sizes[a] = sizeIfOk(b, loc, ok, sizes[a]);
      if (resultType.isDynamicDim(a))
        dynSizes.push_back(sizes[a]);
    }
    Type elemType = resultType.getElementType();
    Value padValue;
    Value cv = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
    auto cvType = cv && !onnx::isNoneValue(cv)
                      ? dyn_cast<RankedTensorType>(operands[2].getType())
                      : RankedTensorType();
    if (!cvType || cvType.getNumElements() == 0) {
      padValue = createScalarConstant(b, loc, elemType, 0.0);
    } else {
      if (!cvType.hasStaticShape() || cvType.getNumElements() != 1)
        return onnx::emitNodeError(op) << "constant_value must be one element";
      SmallVector<Value> zeros(cvType.getRank(), zero);
      padValue = tensor::ExtractOp::create(b, loc, operands[2], zeros);
    }
    // Per dim: the bytes cropped at the start, the data kept, the padding
    // before it.
    SmallVector<Value> cropLow, kept, padLow;
    for (int64_t a = 0; a < rank; ++a) {
      Value d = indexValue(b, loc, dataType.getDimSize(a));
      Value cl = arith::MaxSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, zero, low[a]), zero);
      Value ch = arith::MaxSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, zero, high[a]), zero);
      cropLow.push_back(cl);
      kept.push_back(arith::SubIOp::create(
          b, loc, d, arith::AddIOp::create(b, loc, cl, ch)));
      padLow.push_back(arith::MaxSIOp::create(b, loc, low[a], zero));
    }
    Value empty = tensor::EmptyOp::create(b, loc, resultType, dynSizes);
    if (dataType.getNumElements() == 0) {
      rewriter.replaceOp(op, linalg::FillOp::create(b, loc, padValue, empty)
                                 .getResult(0));
      return success();
    }
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Value result =
        linalg::GenericOp::create(
            b, loc, TypeRange{resultType}, ValueRange{}, ValueRange{empty}, maps,
            iterators,
            [&](OpBuilder &nb, Location l, ValueRange) {
              SmallVector<Value> coords;
              Value inside = arith::ConstantIntOp::create(nb, l, 1, 1);
              Value z = indexValue(nb, l, 0);
              for (int64_t a = 0; a < rank; ++a) {
                // Negative pads crop first: the data is [cropLow, dim -
                // cropHigh) of the axis, n of it; the mode's index maps
                // into that range.
                Value i = linalg::IndexOp::create(nb, l, a);
                Value j = arith::SubIOp::create(nb, l, i, padLow[a]);
                Value n = kept[a];
                Value one = indexValue(nb, l, 1);
                Value last = arith::SubIOp::create(nb, l, n, one);
                Value safeN = arith::MaxSIOp::create(nb, l, n, one);
                Value src;
                if (mode == "constant" || mode == "edge") {
                  if (mode == "constant")
                    inside = arith::AndIOp::create(
                        nb, l, inside,
                        arith::AndIOp::create(
                            nb, l,
                            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge,
                                                  j, z),
                            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                                  j, n)));
                  src = arith::MaxSIOp::create(
                      nb, l, arith::MinSIOp::create(nb, l, j, last), z);
                } else if (mode == "wrap") {
                  src = arith::RemSIOp::create(nb, l, j, safeN);
                  src = arith::AddIOp::create(nb, l, src, safeN);
                  src = arith::RemSIOp::create(nb, l, src, safeN);
                } else {
                  // Reflect with period p = 2(n - 1) (n = 1: index 0).
                  Value p = arith::MaxSIOp::create(
                      nb, l, arith::AddIOp::create(nb, l, last, last), one);
                  Value m = arith::RemSIOp::create(nb, l, j, p);
                  m = arith::AddIOp::create(nb, l, m, p);
                  m = arith::RemSIOp::create(nb, l, m, p);
                  Value in = arith::CmpIOp::create(
                      nb, l, arith::CmpIPredicate::slt, m, n);
                  src = arith::SelectOp::create(
                      nb, l, in, m, arith::SubIOp::create(nb, l, p, m));
                  src = arith::SelectOp::create(
                      nb, l,
                      arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle, n,
                                            one),
                      z, src);
                }
                // In bounds whatever the values (a failed check leaves no
                // element to compute, but stay safe).
                src = arith::AddIOp::create(nb, l, src, cropLow[a]);
                src = arith::MaxSIOp::create(
                    nb, l,
                    arith::MinSIOp::create(
                        nb, l, src,
                        indexValue(nb, l, dataType.getDimSize(a) - 1)),
                    z);
                coords.push_back(src);
              }
              Value v = tensor::ExtractOp::create(nb, l, data, coords);
              if (mode == "constant")
                v = arith::SelectOp::create(nb, l, inside, v, padValue);
              linalg::YieldOp::create(nb, l, v);
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateRunDimsPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns) {
  patterns.add<RunTimeReshapeLowering,
               RunTimeAxesReshapeLowering<onnx::UnsqueezeOp>,
               RunTimeAxesReshapeLowering<onnx::SqueezeOp>,
               RunTimeSplitLowering, RunTimeSliceLowering, RunTimePadLowering>(
      converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
