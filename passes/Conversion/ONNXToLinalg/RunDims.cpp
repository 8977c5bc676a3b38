//===- RunDims.cpp - ops whose output sizes the run's values decide -------===//
//
// Reshape whose `shape` is not a compile-time value (a graph input, a value
// computed from data): its dims are read with tensor.extract at run time,
// 0 copies the input's dim (allowzero = 0; allowzero = 1: a 0-sized dim) and
// one -1 takes the elements left. An entry below -1, two -1s, a 0 copying a
// dim the input does not have, or a shape whose elements differ from the
// input's is a run-time check naming the node. The result: the input
// collapsed to 1-D and expanded to the computed sizes (a view: no copy).
// docs/dynamic-shapes.md, "Run dims".
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/RunDims.h"
#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/Kiln/KilnDialect.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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

/// Reshape with a shape read at run time (see the file comment).
struct RunTimeReshapeLowering : OpConversionPattern<onnx::ReshapeOp> {
  RunTimeReshapeLowering(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(onnx::ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value shape = op->getOperand(1);
    if (readConstantInts(shape))
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

} // namespace

void populateRunDimsPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns) {
  patterns.add<RunTimeReshapeLowering>(converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
