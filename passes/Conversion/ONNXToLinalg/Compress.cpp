//===- Compress.cpp - Compress -> count, then copy the selected slices ----===//
//
// Compress(input, condition, axis): the slices of `input` along `axis` (of
// the flattened input without one) whose condition is true, in order. The
// number of them is a run dim (docs/dynamic-shapes.md): a first loop counts
// the true conditions, a second copies each selected slice to the next
// place. A condition shorter than the axis selects nothing past its end.
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

struct CompressLowering : OpConversionPattern<onnx::CompressOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::CompressOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), cond = adaptor.getCondition();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    auto condType = dyn_cast<RankedTensorType>(cond.getType());
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!xType || !xType.hasStaticShape() || !condType ||
        !condType.hasStaticShape() || condType.getRank() != 1 || !resultType)
      return onnx::emitNodeError(op)
             << "needs a static input and a 1-D condition";
    int64_t axis = 0;
    if (std::optional<int64_t> a = op.getAxis()) {
      std::optional<int64_t> normalized = normalizeAxis(*a, xType.getRank());
      if (!normalized)
        return onnx::emitNodeError(op) << "axis " << *a << " out of range";
      axis = *normalized;
    } else if (xType.getRank() != 1) {
      // Without an axis: over the flattened input.
      SmallVector<ReassociationIndices> all(1);
      for (int64_t d = 0; d < xType.getRank(); ++d)
        all[0].push_back(d);
      x = tensor::CollapseShapeOp::create(rewriter, loc, x, all);
      xType = cast<RankedTensorType>(x.getType());
    }
    int64_t rank = xType.getRank();
    int64_t n = std::min(condType.getDimSize(0), xType.getDimSize(axis));
    auto index = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    // The condition as i1 whatever its element type (bool is i1 or i8).
    auto isSet = [&](OpBuilder &b, Value i) -> Value {
      Value c = tensor::ExtractOp::create(b, loc, cond, i);
      if (c.getType().isInteger(1))
        return c;
      return arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne, c,
          arith::ConstantOp::create(b, loc, b.getIntegerAttr(c.getType(), 0)));
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

    SmallVector<int64_t> outShape(xType.getShape());
    outShape[axis] = ShapedType::kDynamic;
    Value out = tensor::EmptyOp::create(
        rewriter, loc, RankedTensorType::get(outShape, xType.getElementType()),
        ValueRange{count});
    // One slice of `x` at `at` along the axis, as a static slice type.
    SmallVector<int64_t> sliceShape(xType.getShape());
    sliceShape[axis] = 1;
    auto sliceType = RankedTensorType::get(sliceShape, xType.getElementType());
    auto place = [&](OpBuilder &b, Value at) {
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
      offsets[axis] = at;
      return offsets;
    };
    SmallVector<OpFoldResult> sizes, strides(rank, rewriter.getIndexAttr(1));
    for (int64_t s : sliceShape)
      sizes.push_back(rewriter.getIndexAttr(s));

    auto copying = scf::ForOp::create(
        rewriter, loc, index(rewriter, 0), index(rewriter, n),
        index(rewriter, 1), ValueRange{out, index(rewriter, 0)},
        [&](OpBuilder &b, Location, Value i, ValueRange acc) {
          auto copy = scf::IfOp::create(
              b, loc, isSet(b, i),
              [&](OpBuilder &b, Location) {
                Value slice = tensor::ExtractSliceOp::create(
                    b, loc, sliceType, x, place(b, i), sizes, strides);
                Value placed = tensor::InsertSliceOp::create(
                    b, loc, slice, acc[0], place(b, acc[1]), sizes, strides);
                Value next = arith::AddIOp::create(b, loc, acc[1], index(b, 1));
                scf::YieldOp::create(b, loc, ValueRange{placed, next});
              },
              [&](OpBuilder &b, Location) {
                scf::YieldOp::create(b, loc, acc);
              });
          scf::YieldOp::create(b, loc, copy.getResults());
        });
    Value result = copying.getResult(0);
    if (result.getType() != resultType)
      result = tensor::CastOp::create(rewriter, loc, resultType, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateCompressPatterns(TypeConverter &converter,
                              RewritePatternSet &patterns) {
  patterns.add<CompressLowering>(converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
