//===- TopK.cpp - TopK -> scf loops of insertions into sorted outputs -----===//
//
// For each row along `axis`, the elements are inserted one by one into the
// Values/Indices rows kept sorted (best first): an element goes after every
// kept one that is at least as good (so equal values keep their index order,
// as ONNX asks), the ones after it move down and the last falls off once K are
// kept. O(rows * n * K) scalar work: meant for the small K of detection
// post-processing and sampling, not for sorting long rows.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/RunDims.h"
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

struct TopKLowering : OpConversionPattern<onnx::TopKOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::TopKOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    // K read at run time (run dims, docs/dynamic-shapes.md): the results'
    // axis is `?`, the rest static.
    RankedTensorType valuesType =
        getConvertedRankedResultType(getTypeConverter(), op);
    auto indicesType = dyn_cast_or_null<RankedTensorType>(
        getTypeConverter()->convertType(op.getIndices().getType()));
    if (!xType || !xType.hasStaticShape() || !valuesType || !indicesType ||
        !indicesType.getElementType().isInteger(64))
      return onnx::emitNodeError(op)
             << "static shapes and int64 indices are required";
    bool runTimeK = !valuesType.hasStaticShape();
    Type elem = xType.getElementType();
    bool isUnsigned = isUnsignedInt(op.getX().getType());
    if (!isa<FloatType>(elem) && !isIntNotBool(elem))
      return onnx::emitNodeError(op) << "unsupported element type " << elem;
    int64_t rank = xType.getRank();
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), rank);
    if (!axis)
      return onnx::emitNodeError(op)
             << "axis " << static_cast<int64_t>(op.getAxis())
             << " is out of range";
    int64_t n = xType.getDimSize(*axis);
    int64_t k = valuesType.getDimSize(*axis);
    bool largest = op.getLargest() != 0;
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && (valuesType.isDynamicDim(d) ||
                         valuesType.getDimSize(d) != xType.getDimSize(d)))
        return onnx::emitNodeError(op) << "results of an unexpected shape "
                                       << valuesType;

    // K: the constant, or read at run time and checked to lie in [0, n]
    // (0 after a failed check: empty results).
    Value kValue;
    SmallVector<Value> dynSizes;
    if (runTimeK) {
      Value kRead = readIndexAt(rewriter, loc, adaptor.getK(), 0);
      Value ok = arith::AndIOp::create(
          rewriter, loc,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                                kRead, indexValue(rewriter, loc, 0)),
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle,
                                kRead, indexValue(rewriter, loc, n)));
      emitRunCheck(rewriter, loc, op, ok,
                   "K is negative or above the axis' size");
      kValue = sizeIfOk(rewriter, loc, ok, kRead);
      dynSizes.push_back(kValue);
    } else {
      kValue = arith::ConstantIndexOp::create(rewriter, loc, k);
    }
    Value values = tensor::EmptyOp::create(rewriter, loc, valuesType, dynSizes);
    RankedTensorType indicesOut =
        RankedTensorType::get(valuesType.getShape(), indicesType.getElementType());
    Value indices = tensor::EmptyOp::create(rewriter, loc, indicesOut, dynSizes);
    if ((!runTimeK && k == 0) || xType.getNumElements() == 0) {
      rewriter.replaceOp(op, {values, indices});
      return success();
    }

    // The rows: every position of the dims other than `axis`.
    SmallVector<int64_t> outerSizes;
    int64_t rows = 1;
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis) {
        outerSizes.push_back(xType.getDimSize(d));
        rows *= xType.getDimSize(d);
      }
    auto index = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    // "kept is at least as good as v": it stays ahead of v.
    auto atLeastAsGood = [&](OpBuilder &b, Value kept, Value v) -> Value {
      if (isa<FloatType>(elem))
        return arith::CmpFOp::create(b, loc,
                                     largest ? arith::CmpFPredicate::OGE
                                             : arith::CmpFPredicate::OLE,
                                     kept, v);
      arith::CmpIPredicate p =
          largest ? (isUnsigned ? arith::CmpIPredicate::uge
                                : arith::CmpIPredicate::sge)
                  : (isUnsigned ? arith::CmpIPredicate::ule
                                : arith::CmpIPredicate::sle);
      return arith::CmpIOp::create(b, loc, p, kept, v);
    };

    Value zero = index(rewriter, 0), one = index(rewriter, 1);
    auto rowLoop = scf::ForOp::create(
        rewriter, loc, zero, index(rewriter, rows), one,
        ValueRange{values, indices},
        [&](OpBuilder &b, Location, Value row, ValueRange rowArgs) {
          // The row's coordinates in the other dims (row-major).
          SmallVector<Value> outer(outerSizes.size());
          Value rest = row;
          for (int64_t d = static_cast<int64_t>(outerSizes.size()) - 1; d >= 0;
               --d) {
            Value size = index(b, outerSizes[d]);
            outer[d] = arith::RemUIOp::create(b, loc, rest, size);
            rest = arith::DivUIOp::create(b, loc, rest, size);
          }
          auto at = [&](Value position) {
            SmallVector<Value> coords(outer);
            coords.insert(coords.begin() + *axis, position);
            return coords;
          };
          auto elementLoop = scf::ForOp::create(
              b, loc, index(b, 0), index(b, n), index(b, 1), rowArgs,
              [&](OpBuilder &b, Location, Value j, ValueRange args) {
                Value vals = args[0], idxs = args[1];
                Value v = tensor::ExtractOp::create(b, loc, x, at(j));
                Value kept = arith::MinUIOp::create(b, loc, j, kValue);
                // Where v goes: after every kept entry at least as good.
                auto count = scf::ForOp::create(
                    b, loc, index(b, 0), kept, index(b, 1),
                    ValueRange{index(b, 0)},
                    [&](OpBuilder &b, Location, Value q, ValueRange p) {
                      Value entry = tensor::ExtractOp::create(b, loc, vals, at(q));
                      Value ahead = atLeastAsGood(b, entry, v);
                      Value next = arith::AddIOp::create(b, loc, p[0], index(b, 1));
                      scf::YieldOp::create(
                          b, loc, ValueRange{arith::SelectOp::create(b, loc, ahead, next, p[0])});
                    });
                Value position = count.getResult(0);
                Value inTop = arith::CmpIOp::create(
                    b, loc, arith::CmpIPredicate::ult, position, kValue);
                auto insert = scf::IfOp::create(
                    b, loc, inTop,
                    [&](OpBuilder &b, Location) {
                      // Entries [position, last) move down one; the one at
                      // K - 1 falls off when K are kept.
                      Value last = arith::MinUIOp::create(
                          b, loc, kept,
                          arith::SubIOp::create(b, loc, kValue, index(b, 1)));
                      Value moves = arith::SubIOp::create(b, loc, last, position);
                      auto shift = scf::ForOp::create(
                          b, loc, index(b, 0), moves, index(b, 1),
                          ValueRange{vals, idxs},
                          [&](OpBuilder &b, Location, Value t, ValueRange s) {
                            Value from = arith::SubIOp::create(
                                b, loc, arith::SubIOp::create(b, loc, last, t),
                                index(b, 1));
                            Value to = arith::AddIOp::create(b, loc, from, index(b, 1));
                            Value fv = tensor::ExtractOp::create(b, loc, s[0], at(from));
                            Value fi = tensor::ExtractOp::create(b, loc, s[1], at(from));
                            Value nv = tensor::InsertOp::create(b, loc, fv, s[0], at(to));
                            Value ni = tensor::InsertOp::create(b, loc, fi, s[1], at(to));
                            scf::YieldOp::create(b, loc, ValueRange{nv, ni});
                          });
                      Value j64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), j);
                      Value nv = tensor::InsertOp::create(b, loc, v, shift.getResult(0),
                                                          at(position));
                      Value ni = tensor::InsertOp::create(b, loc, j64, shift.getResult(1),
                                                          at(position));
                      scf::YieldOp::create(b, loc, ValueRange{nv, ni});
                    },
                    [&](OpBuilder &b, Location) {
                      scf::YieldOp::create(b, loc, ValueRange{vals, idxs});
                    });
                scf::YieldOp::create(b, loc, insert.getResults());
              });
          scf::YieldOp::create(b, loc, elementLoop.getResults());
        });
    rewriter.replaceOp(op, rowLoop.getResults());
    return success();
  }
};

} // namespace

void populateTopKPatterns(TypeConverter &converter,
                          RewritePatternSet &patterns) {
  patterns.add<TopKLowering>(converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
