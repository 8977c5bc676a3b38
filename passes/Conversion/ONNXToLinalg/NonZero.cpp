//===- NonZero.cpp - NonZero -> count, then write the indices -------------===//
//
// NonZero(X): the indices of X's non-zero elements, [rank, count] int64, in
// row-major order (numpy.nonzero, the reference and onnxruntime). The count
// is a run dim (docs/dynamic-shapes.md, "Run dims"): a first loop counts the
// non-zero elements, a second writes each one's coordinates (its flat index
// split by the static strides) into the next column. NaN is non-zero. A
// scalar X is refused by shape inference (spec and onnxruntime differ).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
namespace onnx = kiln::onnx;

namespace kiln::onnx_to_linalg {
namespace {

struct NonZeroLowering : OpConversionPattern<onnx::NonZeroOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::NonZeroOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!xType || !xType.hasStaticShape() || !resultType ||
        resultType.getRank() != 2)
      return onnx::emitNodeError(op) << "needs an input of static shape";
    Type elem = xType.getElementType();
    if (!elem.isInteger() && !elem.isF16() && !elem.isBF16() &&
        !elem.isF32() && !elem.isF64())
      return onnx::emitNodeError(op)
             << "does not take elements of type " << elem << " yet";
    int64_t rank = xType.getRank(), n = xType.getNumElements();
    if (rank >= 2) {
      SmallVector<ReassociationIndices> all(1);
      for (int64_t d = 0; d < rank; ++d)
        all[0].push_back(d);
      x = tensor::CollapseShapeOp::create(rewriter, loc, x, all);
    }
    auto index = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto isSet = [&](OpBuilder &b, Value i) -> Value {
      SmallVector<Value> at;
      if (rank > 0)
        at.push_back(i);
      Value v = tensor::ExtractOp::create(b, loc, x, at);
      if (v.getType().isInteger(1))
        return v;
      Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elem));
      if (isa<FloatType>(elem)) // NaN != 0 holds (unordered)
        return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                     zero);
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero);
    };

    auto counting = scf::ForOp::create(
        rewriter, loc, index(rewriter, 0), index(rewriter, n),
        index(rewriter, 1), ValueRange{index(rewriter, 0)},
        [&](OpBuilder &b, Location, Value i, ValueRange acc) {
          Value next = arith::AddIOp::create(b, loc, acc[0], index(b, 1));
          scf::YieldOp::create(
              b, loc,
              ValueRange{arith::SelectOp::create(b, loc, isSet(b, i), next,
                                                 acc[0])});
        });
    Value count = counting.getResult(0);
    auto outType = RankedTensorType::get({rank, ShapedType::kDynamic},
                                         rewriter.getI64Type());
    Value out =
        tensor::EmptyOp::create(rewriter, loc, outType, ValueRange{count});
    // Row-major strides of X.
    SmallVector<int64_t> strides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * xType.getDimSize(d + 1);

    auto writing = scf::ForOp::create(
        rewriter, loc, index(rewriter, 0), index(rewriter, n),
        index(rewriter, 1), ValueRange{out, index(rewriter, 0)},
        [&](OpBuilder &b, Location, Value i, ValueRange acc) {
          auto write = scf::IfOp::create(
              b, loc, isSet(b, i),
              [&](OpBuilder &b, Location) {
                Value placed = acc[0];
                for (int64_t d = 0; d < rank; ++d) {
                  Value c = arith::DivUIOp::create(b, loc, i,
                                                   index(b, strides[d]));
                  if (d > 0)
                    c = arith::RemUIOp::create(
                        b, loc, c, index(b, xType.getDimSize(d)));
                  Value v = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                                       c);
                  placed = tensor::InsertOp::create(
                      b, loc, v, placed, ValueRange{index(b, d), acc[1]});
                }
                Value next = arith::AddIOp::create(b, loc, acc[1], index(b, 1));
                scf::YieldOp::create(b, loc, ValueRange{placed, next});
              },
              [&](OpBuilder &b, Location) {
                scf::YieldOp::create(b, loc, acc);
              });
          scf::YieldOp::create(b, loc, write.getResults());
        });
    Value result = writing.getResult(0);
    if (result.getType() != resultType)
      result = tensor::CastOp::create(rewriter, loc, resultType, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateNonZeroPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns) {
  patterns.add<NonZeroLowering>(converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
