//===- RunTimeSizes.cpp - ops whose sizes are values read at run time -----===//
//
// Range with start / limit / delta, ConstantOfShape with its shape, Expand
// with its shape, Tile with its repeats, OneHot with its depth and
// CenterCropPad with its shape not known when compiling (graph inputs or
// values computed in the graph): the result's `?` dims are run dims
// (docs/dynamic-shapes.md, "Run dims"). Each size is computed with arith from
// tensor.extracts of those values; what the spec forbids (a delta of 0,
// negative sizes, a shape that does not broadcast, a depth below 1, more
// than 2^40 elements) fails a run-time check naming the node and the sizes
// become 0. The result is a linalg.generic over it reading the input with
// tensor.extract at indices computed from the output's (a fill for
// ConstantOfShape).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/RunDims.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
namespace onnx = kiln::onnx;

namespace kiln::onnx_to_linalg {
namespace {

/// The most elements a run-time size may give a tensor (as the compile-time
/// limits: sizes past it are a failed check, never a wrapped product).
constexpr int64_t kMaxRunElements = int64_t(1) << 40;

/// The first element of `values` (a scalar or a one-element tensor).
Value readScalar(OpBuilder &b, Location loc, Value values) {
  auto type = cast<RankedTensorType>(values.getType());
  SmallVector<Value> at(type.getRank(), indexValue(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, values, at);
}

/// Accumulates the checks of a lowering and the product of its sizes.
struct SizeChecks {
  OpBuilder &b;
  Location loc;
  Value ok, count;
  SizeChecks(OpBuilder &b, Location loc)
      : b(b), loc(loc), ok(arith::ConstantIntOp::create(b, loc, 1, 1)),
        count(indexValue(b, loc, 1)) {}
  void require(Value c) { ok = arith::AndIOp::create(b, loc, ok, c); }
  /// 0 <= s <= kMaxRunElements.
  void bounded(Value s) {
    require(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, s,
                                  indexValue(b, loc, 0)));
    require(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, s,
                                  indexValue(b, loc, kMaxRunElements)));
  }
  /// A size (index): at least 0, and the product of the sizes so far at
  /// most kMaxRunElements (checked before multiplying: nothing wraps).
  void size(Value s) {
    bounded(s);
    Value one = indexValue(b, loc, 1);
    Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s,
                                         indexValue(b, loc, 0));
    Value safe = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, s, one), s,
        one);
    Value room = arith::DivSIOp::create(
        b, loc, indexValue(b, loc, kMaxRunElements), safe);
    require(arith::OrIOp::create(
        b, loc, isZero,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, count,
                              room)));
    count = arith::SelectOp::create(
        b, loc, ok, arith::MulIOp::create(b, loc, count, safe), one);
  }
};

/// A tensor of `type` whose `?` dims are `sizes[i]`, each element
/// `body(indices)`: a linalg.generic over the result.
Value generateByIndex(
    OpBuilder &b, Location loc, RankedTensorType type, ArrayRef<Value> sizes,
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> body) {
  SmallVector<Value> dynSizes;
  for (int64_t a = 0; a < type.getRank(); ++a)
    if (type.isDynamicDim(a))
      dynSizes.push_back(sizes[a]);
  Value empty = tensor::EmptyOp::create(b, loc, type, dynSizes);
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps = {
      AffineMap::getMultiDimIdentityMap(rank, b.getContext())};
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{}, ValueRange{empty}, maps,
             getParallelIterators(rank),
             [&](OpBuilder &nb, Location l, ValueRange) {
               SmallVector<Value> at;
               for (int64_t a = 0; a < rank; ++a)
                 at.push_back(linalg::IndexOp::create(nb, l, a));
               linalg::YieldOp::create(nb, l, body(nb, l, at));
             })
      .getResult(0);
}

/// Whether operand `i` of `op` has no compile-time value.
bool notConstant(Operation *op, unsigned i) {
  return i < op->getNumOperands() && !onnx::isNoneValue(op->getOperand(i)) &&
         !readConstantInts(op->getOperand(i)) &&
         !onnx::getConstantAttr(op->getOperand(i));
}

//===----------------------------------------------------------------------===//
// Range
//===----------------------------------------------------------------------===//

/// Range whose start, limit or delta are read at run time: max(ceil((limit
/// - start) / delta), 0) elements (f64 for floats, i64 for integers).
struct RunTimeRangeLowering : OpConversionPattern<onnx::RangeOp> {
  RunTimeRangeLowering(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(onnx::RangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type =
        getConvertedRankedResultType(getTypeConverter(), op);
    // A static size, or a symbolic one given by kiln-symbolic-shapes:
    // RangeLowering.
    if (!type || type.hasStaticShape() || op->hasAttr("kiln.result_dims"))
      return failure();
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Type elem = type.getElementType();
    Value start = readScalar(b, loc, adaptor.getStart());
    Value limit = readScalar(b, loc, adaptor.getLimit());
    Value delta = readScalar(b, loc, adaptor.getDelta());
    Value n, ok;
    if (isa<FloatType>(elem)) {
      Type f64 = b.getF64Type();
      auto wide = [&](Value v) -> Value {
        return v.getType() == f64 ? v : arith::ExtFOp::create(b, loc, f64, v);
      };
      Value q = arith::DivFOp::create(
          b, loc, arith::SubFOp::create(b, loc, wide(limit), wide(start)),
          wide(delta));
      Value c = math::CeilOp::create(b, loc, q);
      Value zero = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0));
      Value max = arith::ConstantOp::create(
          b, loc, b.getF64FloatAttr(static_cast<double>(kMaxRunElements)));
      // A NaN count (inf - inf, a zero delta) fails the ordered compare.
      ok = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, c, max);
      ok = arith::AndIOp::create(
          b, loc, ok,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                wide(delta), zero));
      Value clamped = arith::SelectOp::create(
          b, loc,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, c, zero),
          c, zero);
      clamped = arith::SelectOp::create(b, loc, ok, clamped, zero);
      n = arith::IndexCastOp::create(
          b, loc, b.getIndexType(),
          arith::FPToSIOp::create(b, loc, b.getI64Type(), clamped));
    } else if (auto it = dyn_cast<IntegerType>(elem)) {
      Type i64 = b.getI64Type();
      auto wide = [&](Value v) -> Value {
        if (v.getType() == i64)
          return v;
        return it.isUnsigned() ? arith::ExtUIOp::create(b, loc, i64, v)
                               : arith::ExtSIOp::create(b, loc, i64, v)
                                     .getResult();
      };
      Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
      Value one = arith::ConstantIntOp::create(b, loc, i64, 1);
      Value d = wide(delta), from = wide(start), to = wide(limit);
      Value deltaOk =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, d, zero);
      // The distance and the step as unsigned 64-bit numbers (exact even
      // where limit - start wraps as a signed one), in the step's direction.
      Value up = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, d,
                                       zero);
      Value ahead = arith::SelectOp::create(
          b, loc, up,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, to, from),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, to, from));
      Value distance = arith::SelectOp::create(
          b, loc, up, arith::SubIOp::create(b, loc, to, from),
          arith::SubIOp::create(b, loc, from, to));
      Value step = arith::SelectOp::create(
          b, loc, up, d, arith::SubIOp::create(b, loc, zero, d));
      step = arith::SelectOp::create(b, loc, deltaOk, step, one);
      Value c = arith::CeilDivUIOp::create(b, loc, distance, step);
      c = arith::SelectOp::create(b, loc, ahead, c, zero);
      ok = arith::AndIOp::create(
          b, loc, deltaOk,
          arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ule, c,
              arith::ConstantIntOp::create(b, loc, i64, kMaxRunElements)));
      c = arith::SelectOp::create(b, loc, ok, c, zero);
      n = arith::IndexCastOp::create(b, loc, b.getIndexType(), c);
    } else {
      return onnx::emitNodeError(op) << "does not take " << elem << " values";
    }
    emitRunCheck(b, loc, op, ok,
                 "delta is 0, or the range has more than 2^40 elements");
    Value result = generateByIndex(
        b, loc, type, {n}, [&](OpBuilder &nb, Location l, ArrayRef<Value> at) {
          if (isa<FloatType>(elem)) {
            Value fi = arith::UIToFPOp::create(
                nb, l, elem,
                arith::IndexCastOp::create(nb, l, nb.getI64Type(), at[0]));
            return arith::AddFOp::create(
                       nb, l, start, arith::MulFOp::create(nb, l, fi, delta))
                .getResult();
          }
          Value ii = arith::IndexCastOp::create(nb, l, elem, at[0]);
          return arith::AddIOp::create(nb, l, start,
                                       arith::MulIOp::create(nb, l, ii, delta))
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// ConstantOfShape
//===----------------------------------------------------------------------===//

struct RunTimeConstantOfShapeLowering
    : OpConversionPattern<onnx::ConstantOfShapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::ConstantOfShapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type =
        getConvertedRankedResultType(getTypeConverter(), op);
    Value shape = adaptor.getInput();
    auto shapeType = dyn_cast<RankedTensorType>(shape.getType());
    if (!type || !shapeType || shapeType.getRank() != 1 ||
        shapeType.getDimSize(0) != type.getRank())
      return onnx::emitNodeError(op)
             << "needs a 1-D shape of static length equal to the result's "
                "rank";
    Type elem = type.getElementType();
    TypedAttr value;
    if (ElementsAttr attr = op.getValueAttr()) {
      DenseElementsAttr dense = onnx::toDenseElements(attr, 1);
      if (dense && dense.getType().getNumElements() == 1)
        value = dyn_cast<TypedAttr>(*dense.getValues<Attribute>().begin());
    } else if (elem.isF32()) {
      value = rewriter.getF32FloatAttr(0);
    }
    if (!value || value.getType() != elem)
      return onnx::emitNodeError(op)
             << "needs a one-element value of the result's type " << elem;
    OpBuilder &b = rewriter;
    SizeChecks checks(b, loc);
    SmallVector<Value> sizes;
    for (int64_t i = 0; i < type.getRank(); ++i) {
      sizes.push_back(readIndexAt(b, loc, shape, i));
      checks.size(sizes.back());
    }
    emitRunCheck(b, loc, op, checks.ok,
                 "the shape has a negative size or more than 2^40 elements");
    SmallVector<Value> dynSizes;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.isDynamicDim(i))
        dynSizes.push_back(sizeIfOk(b, loc, checks.ok, sizes[i]));
    Value empty = tensor::EmptyOp::create(b, loc, type, dynSizes);
    Value fill = arith::ConstantOp::create(b, loc, value);
    rewriter.replaceOp(
        op, linalg::FillOp::create(b, loc, fill, empty).getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Expand, Tile
//===----------------------------------------------------------------------===//

/// Expand with a shape read at run time: numpy broadcasting of the input's
/// static shape with the values.
struct RunTimeExpandLowering : OpConversionPattern<onnx::ExpandOp> {
  RunTimeExpandLowering(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(onnx::ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!notConstant(op, 1))
      return failure(); // ExpandLowering
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), shape = adaptor.getShape();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    auto shapeType = dyn_cast<RankedTensorType>(shape.getType());
    RankedTensorType type =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!xType || !xType.hasStaticShape() || !shapeType ||
        shapeType.getRank() != 1 || shapeType.isDynamicDim(0) || !type)
      return onnx::emitNodeError(op)
             << "needs a static input and a 1-D shape of static length";
    int64_t rank = type.getRank(), xRank = xType.getRank(),
            length = shapeType.getDimSize(0);
    if (rank != std::max(xRank, length))
      return onnx::emitNodeError(op) << "internal error: result rank " << rank;
    OpBuilder &b = rewriter;
    SizeChecks checks(b, loc);
    SmallVector<Value> sizes;
    for (int64_t a = 0; a < rank; ++a) {
      int64_t xa = a - (rank - xRank), sa = a - (rank - length);
      int64_t xd = xa >= 0 ? xType.getDimSize(xa) : 1;
      Value s = sa >= 0 ? readIndexAt(b, loc, shape, sa) : indexValue(b, loc, 1);
      if (xd == 1) {
        sizes.push_back(s);
      } else {
        // The value must be 1 or the input's dim.
        checks.require(arith::OrIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s,
                                  indexValue(b, loc, 1)),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s,
                                  indexValue(b, loc, xd))));
        sizes.push_back(indexValue(b, loc, xd));
      }
      checks.size(sizes.back());
    }
    std::string xShape;
    llvm::raw_string_ostream os(xShape);
    llvm::interleave(xType.getShape(), os, ",");
    emitRunCheck(b, loc, op, checks.ok,
                 "shape does not broadcast with the input's [" + xShape +
                     "] (each value 1 or the input's dim where that is not "
                     "1, sizes at least 0 and at most 2^40 elements)");
    for (Value &s : sizes)
      s = sizeIfOk(b, loc, checks.ok, s);
    Value result = generateByIndex(
        b, loc, type, sizes,
        [&](OpBuilder &nb, Location l, ArrayRef<Value> at) {
          SmallVector<Value> from;
          for (int64_t i = 0; i < xRank; ++i)
            from.push_back(xType.getDimSize(i) == 1
                               ? indexValue(nb, l, 0)
                               : at[i + rank - xRank]);
          return tensor::ExtractOp::create(nb, l, x, from).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Tile with repeats read at run time: each dim the input's times its repeat
/// (at least 0), read at the index modulo the input's dim.
struct RunTimeTileLowering : OpConversionPattern<onnx::TileOp> {
  RunTimeTileLowering(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(onnx::TileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!notConstant(op, 1))
      return failure(); // TileLowering
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), repeats = adaptor.getRepeats();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    RankedTensorType type =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!xType || !xType.hasStaticShape() || !type ||
        type.getRank() != xType.getRank())
      return onnx::emitNodeError(op) << "needs a static input";
    int64_t rank = type.getRank();
    OpBuilder &b = rewriter;
    SizeChecks checks(b, loc);
    SmallVector<Value> sizes;
    for (int64_t a = 0; a < rank; ++a) {
      Value r = readIndexAt(b, loc, repeats, a);
      // The repeat first (at least 0, bounded), then the product.
      checks.bounded(r);
      Value s = arith::MulIOp::create(b, loc, sizeIfOk(b, loc, checks.ok, r),
                                      indexValue(b, loc, xType.getDimSize(a)));
      checks.size(s);
      sizes.push_back(s);
    }
    emitRunCheck(b, loc, op, checks.ok,
                 "repeats has a negative value, or the result has more than "
                 "2^40 elements");
    for (Value &s : sizes)
      s = sizeIfOk(b, loc, checks.ok, s);
    Value result = generateByIndex(
        b, loc, type, sizes,
        [&](OpBuilder &nb, Location l, ArrayRef<Value> at) {
          SmallVector<Value> from;
          for (int64_t i = 0; i < rank; ++i) {
            int64_t d = xType.getDimSize(i);
            from.push_back(d <= 1 ? indexValue(nb, l, 0)
                                  : arith::RemUIOp::create(
                                        nb, l, at[i], indexValue(nb, l, d))
                                        .getResult());
          }
          return tensor::ExtractOp::create(nb, l, x, from).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// OneHot
//===----------------------------------------------------------------------===//

/// OneHot with a depth read at run time (kiln-decompose expands the constant
/// one): values[1] where the index (negative ones counted from the end)
/// equals the position along the axis, values[0] elsewhere.
struct RunTimeOneHotLowering : OpConversionPattern<onnx::OneHotOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::OneHotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value indices = adaptor.getIndices(), values = adaptor.getValues();
    auto iType = dyn_cast<RankedTensorType>(indices.getType());
    auto vType = dyn_cast<RankedTensorType>(values.getType());
    RankedTensorType type =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!iType || !iType.hasStaticShape() || !vType ||
        vType.getNumElements() != 2 || !type ||
        type.getRank() != iType.getRank() + 1)
      return onnx::emitNodeError(op)
             << "needs static indices and two values";
    int64_t rank = type.getRank();
    int64_t axis = -1;
    if (auto attr = op->getAttrOfType<IntegerAttr>("axis"))
      axis = attr.getInt();
    axis = axis < 0 ? axis + rank : axis;
    if (axis < 0 || axis >= rank)
      return onnx::emitNodeError(op) << "axis out of range";
    OpBuilder &b = rewriter;
    Type i64 = b.getI64Type();
    auto toI64 = [&](OpBuilder &nb, Location l, Value v) -> Value {
      Type t = v.getType();
      if (isa<FloatType>(t))
        return arith::FPToSIOp::create(nb, l, i64, v);
      if (t == i64)
        return v;
      if (cast<IntegerType>(t).isUnsigned() || t.isInteger(1))
        return arith::ExtUIOp::create(nb, l, i64, v);
      return arith::ExtSIOp::create(nb, l, i64, v);
    };
    auto depthType = cast<RankedTensorType>(adaptor.getDepth().getType());
    Value depthValue = readScalar(b, loc, adaptor.getDepth());
    Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
    if (isa<FloatType>(depthType.getElementType())) {
      // Finite and in i64's range before the conversion.
      Type f64 = b.getF64Type();
      Value d = depthValue.getType() == f64
                    ? depthValue
                    : arith::ExtFOp::create(b, loc, f64, depthValue);
      ok = arith::AndIOp::create(
          b, loc,
          arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OGE, d,
              arith::ConstantOp::create(b, loc, b.getF64FloatAttr(1))),
          arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OLE, d,
              arith::ConstantOp::create(
                  b, loc,
                  b.getF64FloatAttr(static_cast<double>(kMaxRunElements)))));
      depthValue = arith::SelectOp::create(
          b, loc, ok, d,
          arith::ConstantOp::create(b, loc, b.getF64FloatAttr(1)));
    } else if (!isa<IntegerType>(depthType.getElementType())) {
      return onnx::emitNodeError(op) << "does not take a depth of type "
                                     << depthType.getElementType();
    }
    Value depth = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                             toI64(b, loc, depthValue));
    SizeChecks checks(b, loc);
    checks.require(ok);
    checks.require(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                         depth, indexValue(b, loc, 1)));
    for (int64_t a = 0; a < rank; ++a)
      checks.size(a == axis ? depth
                            : indexValue(b, loc, type.getDimSize(a)));
    emitRunCheck(b, loc, op, checks.ok,
                 "depth is below 1, or the result has more than 2^40 elements");
    depth = sizeIfOk(b, loc, checks.ok, depth);
    SmallVector<Value> sizes;
    for (int64_t a = 0; a < rank; ++a)
      sizes.push_back(a == axis ? depth
                                : indexValue(b, loc, type.getDimSize(a)));
    auto valueAt = [&](int64_t i) {
      SmallVector<Value> at(vType.getRank(), indexValue(b, loc, 0));
      if (vType.getRank() == 1)
        at[0] = indexValue(b, loc, i);
      return tensor::ExtractOp::create(b, loc, values, at).getResult();
    };
    Value off = valueAt(0), on = valueAt(1);
    Value depth64 = arith::IndexCastOp::create(b, loc, i64, depth);
    Value result = generateByIndex(
        b, loc, type, sizes,
        [&](OpBuilder &nb, Location l, ArrayRef<Value> at) {
          SmallVector<Value> from;
          for (int64_t a = 0; a < rank; ++a)
            if (a != axis)
              from.push_back(at[a]);
          Value idx =
              toI64(nb, l, tensor::ExtractOp::create(nb, l, indices, from));
          Value zero = arith::ConstantIntOp::create(nb, l, i64, 0);
          Value wrapped = arith::SelectOp::create(
              nb, l,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, idx,
                                    zero),
              arith::AddIOp::create(nb, l, idx, depth64), idx);
          Value hit = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::eq, wrapped,
              arith::IndexCastOp::create(nb, l, i64, at[axis]));
          return arith::SelectOp::create(nb, l, hit, on, off).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// CenterCropPad
//===----------------------------------------------------------------------===//

/// CenterCropPad with a shape read at run time (kiln-decompose expands the
/// constant one into Slice and Pad): per listed axis, a target below the dim
/// crops from (dim - target) / 2, one above pads (target - dim) / 2 zeros
/// before (the extra one after).
struct RunTimeCenterCropPadLowering
    : OpConversionPattern<onnx::CenterCropPadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::CenterCropPadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInputData(), shape = adaptor.getShape();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    auto shapeType = dyn_cast<RankedTensorType>(shape.getType());
    RankedTensorType type =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!xType || !xType.hasStaticShape() || !shapeType ||
        shapeType.getRank() != 1 || !type ||
        type.getRank() != xType.getRank())
      return onnx::emitNodeError(op) << "needs a static input and a 1-D shape";
    int64_t rank = xType.getRank();
    SmallVector<int64_t> axes;
    if (auto given = op->getAttrOfType<ArrayAttr>("axes")) {
      for (Attribute a : given) {
        int64_t v = cast<IntegerAttr>(a).getInt();
        axes.push_back(v < 0 ? v + rank : v);
      }
    } else {
      for (int64_t a = 0; a < rank; ++a)
        axes.push_back(a);
    }
    if (static_cast<int64_t>(axes.size()) != shapeType.getDimSize(0))
      return onnx::emitNodeError(op) << "needs one shape value per axis";
    OpBuilder &b = rewriter;
    SmallVector<Value> sizes, offsets;
    for (int64_t a = 0; a < rank; ++a) {
      sizes.push_back(indexValue(b, loc, xType.getDimSize(a)));
      offsets.push_back(indexValue(b, loc, 0));
    }
    SizeChecks checks(b, loc);
    for (auto [i, a] : llvm::enumerate(axes)) {
      if (a < 0 || a >= rank)
        return onnx::emitNodeError(op) << "axis out of range";
      Value want = readIndexAt(b, loc, shape, i);
      Value dim = indexValue(b, loc, xType.getDimSize(a));
      Value two = indexValue(b, loc, 2);
      Value crop = arith::DivSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, dim, want), two);
      Value pad = arith::DivSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, want, dim), two);
      Value crops =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, want, dim);
      // Source index = output index + offset (negative when padding).
      offsets[a] = arith::SelectOp::create(
          b, loc, crops, crop,
          arith::SubIOp::create(b, loc, indexValue(b, loc, 0), pad));
      sizes[a] = want;
    }
    for (Value s : sizes)
      checks.size(s);
    emitRunCheck(b, loc, op, checks.ok,
                 "the shape has a negative size or more than 2^40 elements");
    for (Value &s : sizes)
      s = sizeIfOk(b, loc, checks.ok, s);
    Type elem = type.getElementType();
    bool empty = xType.getNumElements() == 0;
    Value result = generateByIndex(
        b, loc, type, sizes,
        [&](OpBuilder &nb, Location l, ArrayRef<Value> at) {
          Value zero =
              arith::ConstantOp::create(nb, l, nb.getZeroAttr(elem));
          if (empty)
            return zero;
          Value inside = arith::ConstantIntOp::create(nb, l, 1, 1);
          SmallVector<Value> from;
          for (int64_t a = 0; a < rank; ++a) {
            Value src = arith::AddIOp::create(nb, l, at[a], offsets[a]);
            Value last = indexValue(nb, l, xType.getDimSize(a) - 1);
            Value lo = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge,
                                             src, indexValue(nb, l, 0));
            Value hi = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle,
                                             src, last);
            inside = arith::AndIOp::create(
                nb, l, inside, arith::AndIOp::create(nb, l, lo, hi));
            // Clamped: the read stays in bounds, the select drops it.
            Value c = arith::MaxSIOp::create(nb, l, src, indexValue(nb, l, 0));
            from.push_back(arith::MinSIOp::create(nb, l, c, last));
          }
          Value v = tensor::ExtractOp::create(nb, l, x, from);
          return arith::SelectOp::create(nb, l, inside, v, zero).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateRunTimeSizesPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns) {
  patterns.add<RunTimeRangeLowering, RunTimeConstantOfShapeLowering,
               RunTimeExpandLowering, RunTimeTileLowering,
               RunTimeOneHotLowering, RunTimeCenterCropPadLowering>(
      converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
