//===- Scan.cpp - running sums/products and triangular masks to linalg ----===//
//
//   CumSum, CumProd   scf.for over the scanned axis carrying the running
//                     value (one slice per step, combined by a linalg.generic);
//                     a run-time axis selects the scan by scf.index_switch
//   Trilu             linalg.generic keeping x[..., i, j] where j - i >= k
//                     (upper) or j - i <= k (lower), 0 elsewhere; k may be a
//                     run-time scalar
//   Range             linalg.generic computing start + i * delta
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/Kiln/KilnDialect.h"
#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln::onnx_to_linalg {
namespace {

using kiln::onnx::emitNodeError;
using kiln::onnx::isNoneValue;

//===----------------------------------------------------------------------===//
// CumSum, CumProd
//===----------------------------------------------------------------------===//

/// The running sum (product) of `x` (static shape, no zero-size dim) along
/// the static `axis`: an scf.for over the axis carrying the running slice.
Value buildCumulative(OpBuilder &rewriter, Location loc, Value x, int64_t axis,
                      bool isProduct, bool exclusive, bool reverse) {
  auto type = cast<RankedTensorType>(x.getType());
  Type elemType = type.getElementType();
  int64_t rank = type.getRank();
  int64_t length = type.getDimSize(axis);

  // One slice along the axis, kept at full rank (size 1 on the axis).
  SmallVector<int64_t> sliceShape(type.getShape());
  sliceShape[axis] = 1;
  auto sliceType = RankedTensorType::get(sliceShape, elemType);
  Value identity =
      createFilledTensor(rewriter, loc, sliceType, isProduct ? 1.0 : 0.0);
  Value result = createEmptyTensor(rewriter, loc, type);

  auto indexConst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  auto sliceAt = [&](OpBuilder &b, Value position) {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    offsets[axis] = position;
    SmallVector<OpFoldResult> sizes;
    for (int64_t d : sliceShape)
      sizes.push_back(b.getIndexAttr(d));
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    return std::make_tuple(offsets, sizes, strides);
  };
  auto loop = scf::ForOp::create(
      rewriter, loc, indexConst(0), indexConst(length), indexConst(1),
      ValueRange{identity, result},
      [&](OpBuilder &b, Location l, Value step, ValueRange carried) {
        Value position = step;
        if (reverse)
          position = arith::SubIOp::create(
              b, l, arith::ConstantIndexOp::create(b, l, length - 1), step);
        auto [offsets, sizes, strides] = sliceAt(b, position);
        Value slice = tensor::ExtractSliceOp::create(b, l, sliceType, x,
                                                     offsets, sizes, strides);
        // The running value is updated in place (its generic writes into
        // the carried tensor), which bufferization needs for loop results.
        Value out = carried[1];
        if (exclusive)
          out = tensor::InsertSliceOp::create(b, l, carried[0], out, offsets,
                                              sizes, strides);
        MLIRContext *ctx = b.getContext();
        SmallVector<AffineMap> maps(2,
                                    AffineMap::getMultiDimIdentityMap(rank, ctx));
        Value running =
            linalg::GenericOp::create(
                b, l, TypeRange{sliceType}, ValueRange{slice},
                ValueRange{carried[0]}, maps, getParallelIterators(rank),
                [&](OpBuilder &bb, Location ll, ValueRange args) {
                  Value v;
                  if (isFloat(elemType))
                    v = isProduct
                            ? arith::MulFOp::create(bb, ll, args[1], args[0])
                                  .getResult()
                            : arith::AddFOp::create(bb, ll, args[1], args[0])
                                  .getResult();
                  else
                    v = isProduct
                            ? arith::MulIOp::create(bb, ll, args[1], args[0])
                                  .getResult()
                            : arith::AddIOp::create(bb, ll, args[1], args[0])
                                  .getResult();
                  linalg::YieldOp::create(bb, ll, v);
                })
                .getResult(0);
        if (!exclusive)
          out = tensor::InsertSliceOp::create(b, l, running, out, offsets,
                                              sizes, strides);
        scf::YieldOp::create(b, l, ValueRange{running, out});
      });
  return loop.getResult(1);
}

/// A constant `axis` selects the scanned dim at compile time. A run-time
/// `axis` (a one-element integer tensor) is normalized (+ rank when
/// negative), checked to lie in [0, rank) with a kiln.check naming the node,
/// clamped, and dispatched by an scf.index_switch whose case d is the
/// static-axis scan along d.
template <typename OpTy, bool IsProduct>
struct CumulativeLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = getStaticTensorType(adaptor.getX());
    if (!type || type.getRank() == 0)
      return emitNodeError(op) << "needs a static shape of rank >= 1",
             failure();
    Type elemType = type.getElementType();
    if (!elemType.isIntOrFloat() || isBool(elemType))
      return emitNodeError(op) << "element type " << elemType
                               << " is not supported",
             failure();
    int64_t rank = type.getRank();
    bool exclusive = op.getExclusive() != 0, reverse = op.getReverse() != 0;

    std::optional<SmallVector<int64_t>> axisValues =
        readConstantInts(op.getAxis());
    if (axisValues) {
      if (axisValues->size() != 1)
        return emitNodeError(op) << "input 'axis' must hold one value",
               failure();
      std::optional<int64_t> axis =
          normalizeAxis((*axisValues)[0], type.getRank());
      if (!axis)
        return emitNodeError(op) << "axis " << (*axisValues)[0]
                                 << " is out of range for rank "
                                 << type.getRank(),
               failure();
      if (type.getNumElements() == 0) {
        rewriter.replaceOp(op, createEmptyTensor(rewriter, loc, type));
        return success();
      }
      rewriter.replaceOp(op, buildCumulative(rewriter, loc, adaptor.getX(),
                                             *axis, IsProduct, exclusive,
                                             reverse));
      return success();
    }

    // Run-time axis.
    auto axisType = dyn_cast<RankedTensorType>(adaptor.getAxis().getType());
    if (!axisType || !axisType.hasStaticShape() ||
        axisType.getNumElements() != 1 ||
        !isa<IntegerType>(axisType.getElementType()))
      return emitNodeError(op) << "input 'axis' must be one integer",
             failure();
    Value zeroIdx = arith::ConstantIndexOp::create(rewriter, loc, 0);
    SmallVector<Value> at(axisType.getRank(), zeroIdx);
    Value axis = tensor::ExtractOp::create(rewriter, loc, adaptor.getAxis(), at);
    axis = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                      axis);
    Value rankIdx = arith::ConstantIndexOp::create(rewriter, loc, rank);
    Value isNeg = arith::CmpIOp::create(rewriter, loc,
                                        arith::CmpIPredicate::slt, axis,
                                        zeroIdx);
    axis = arith::SelectOp::create(
        rewriter, loc, isNeg,
        arith::AddIOp::create(rewriter, loc, axis, rankIdx), axis);
    Value geZero = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::sge, axis, zeroIdx);
    Value ltRank = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::slt, axis, rankIdx);
    Value ok = arith::AndIOp::create(rewriter, loc, geZero, ltRank);
    Value okTensor = tensor::FromElementsOp::create(
        rewriter, loc, RankedTensorType::get({}, rewriter.getI1Type()),
        ValueRange{ok});
    kiln::CheckOp::create(rewriter, loc, okTensor,
                          getNodeMessagePrefix(op) + "axis out of range");
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, createEmptyTensor(rewriter, loc, type));
      return success();
    }
    // Cases 0 .. rank-2; the default (rank-1, or an axis the check rejected)
    // scans the last dim.
    SmallVector<int64_t> cases;
    for (int64_t d = 0; d + 1 < rank; ++d)
      cases.push_back(d);
    auto sw = scf::IndexSwitchOp::create(rewriter, loc, TypeRange{type}, axis,
                                         cases, cases.size());
    auto fill = [&](Region &region, int64_t d) {
      Block *block = rewriter.createBlock(&region);
      rewriter.setInsertionPointToStart(block);
      Value r = buildCumulative(rewriter, loc, adaptor.getX(), d, IsProduct,
                                exclusive, reverse);
      scf::YieldOp::create(rewriter, loc, r);
    };
    {
      OpBuilder::InsertionGuard guard(rewriter);
      for (auto [i, d] : llvm::enumerate(cases))
        fill(sw.getCaseRegions()[i], d);
      fill(sw.getDefaultRegion(), rank - 1);
    }
    rewriter.replaceOp(op, sw.getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Trilu
//===----------------------------------------------------------------------===//

struct TriluLowering : OpConversionPattern<onnx::TriluOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::TriluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = getStaticTensorType(adaptor.getInput());
    if (!type || type.getRank() < 2)
      return emitNodeError(op) << "needs a static shape of rank >= 2",
             failure();
    int64_t rank = type.getRank();
    Type elemType = type.getElementType();
    // k: absent (0), constant, or read at run time from a 0-d/1-element i64.
    Value k;
    if (isNoneValue(op.getK())) {
      k = arith::ConstantIntOp::create(rewriter, loc, 0, 64);
    } else if (std::optional<SmallVector<int64_t>> ks =
                   readConstantInts(op.getK())) {
      if (ks->size() != 1)
        return emitNodeError(op) << "'k' must hold one value", failure();
      k = arith::ConstantIntOp::create(rewriter, loc, (*ks)[0], 64);
    } else {
      RankedTensorType kType = getStaticTensorType(adaptor.getK());
      if (!kType || kType.getNumElements() != 1)
        return emitNodeError(op) << "'k' must hold one value", failure();
      SmallVector<Value> zeros(kType.getRank(),
                               arith::ConstantIndexOp::create(rewriter, loc, 0));
      k = tensor::ExtractOp::create(rewriter, loc, adaptor.getK(), zeros);
    }
    bool upper = op.getUpper() != 0;
    Value zero = createScalarConstant(rewriter, loc, elemType, 0.0);
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps(2, AffineMap::getMultiDimIdentityMap(rank, ctx));
    Value empty = createEmptyTensor(rewriter, loc, type);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ValueRange{adaptor.getInput()},
            ValueRange{empty}, maps, getParallelIterators(rank),
            [&](OpBuilder &b, Location l, ValueRange args) {
              auto index = [&](int64_t d) {
                Value i = linalg::IndexOp::create(b, l, d);
                return arith::IndexCastOp::create(b, l, b.getI64Type(), i)
                    .getResult();
              };
              // diagonal offset j - i compared with k
              Value diff =
                  arith::SubIOp::create(b, l, index(rank - 1), index(rank - 2));
              Value keep = arith::CmpIOp::create(
                  b, l,
                  upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
                  diff, k);
              linalg::YieldOp::create(
                  b, l, arith::SelectOp::create(b, l, keep, args[0], zero)
                            .getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Range
//===----------------------------------------------------------------------===//

// start + i * delta for i in [0, n) (n is in the inferred type). Integer
// ranges with constant inputs fold while importing; this covers float ones
// and run-time start/delta.
struct RangeLowering : OpConversionPattern<onnx::RangeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::RangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!type || type.getRank() != 1)
      return emitNodeError(op) << "needs a 1-D result", failure();
    // A symbolic length: its size from the symbols (kiln-symbolic-shapes).
    Value empty = type.hasStaticShape()
                      ? createEmptyTensor(rewriter, loc, type)
                      : createEmptyTensorFromSymbols(rewriter, loc, op, type);
    if (!empty)
      return emitNodeError(op) << "has a symbolic length with no expression",
             failure();
    Type elemType = type.getElementType();
    auto scalar = [&](Value v) {
      auto t = cast<RankedTensorType>(v.getType());
      SmallVector<Value> zeros(t.getRank(),
                               arith::ConstantIndexOp::create(rewriter, loc, 0));
      return tensor::ExtractOp::create(rewriter, loc, v, zeros).getResult();
    };
    Value start = scalar(adaptor.getStart()), delta = scalar(adaptor.getDelta());
    MLIRContext *ctx = rewriter.getContext();
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{empty},
            SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(1, ctx)},
            getParallelIterators(1),
            [&](OpBuilder &b, Location l, ValueRange) {
              Value i = linalg::IndexOp::create(b, l, 0);
              Value v;
              if (isFloat(elemType)) {
                Value fi = arith::UIToFPOp::create(
                    b, l, elemType,
                    arith::IndexCastOp::create(b, l, b.getI64Type(), i));
                v = arith::AddFOp::create(
                    b, l, start, arith::MulFOp::create(b, l, fi, delta));
              } else {
                Value ii = arith::IndexCastOp::create(b, l, elemType, i);
                v = arith::AddIOp::create(
                    b, l, start, arith::MulIOp::create(b, l, ii, delta));
              }
              linalg::YieldOp::create(b, l, v);
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateScanPatterns(TypeConverter &converter,
                          RewritePatternSet &patterns) {
  patterns.add<CumulativeLowering<onnx::CumSumOp, false>,
               CumulativeLowering<onnx::CumProdOp, true>, TriluLowering,
               RangeLowering>(
      converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
