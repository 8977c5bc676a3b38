//===- Unique.cpp - Unique -> first occurrences, ranks, then the outputs --===//
//
// Unique(X, axis, sorted): the unique slices of X along `axis` (its
// elements when there is none), their first occurrences, each slice's place
// among them and their counts (numpy.unique, the reference and
// onnxruntime). The number of unique slices is a run dim
// (docs/dynamic-shapes.md, "Run dims"). X is seen as [outer, n, inner] (n
// slices of outer x inner elements, compared in that row-major order):
//   1. first[k]: the first slice equal to slice k (k itself when new), and
//      the count of new slices;
//   2. place[k] of each new slice: sorted, the number of new slices
//      lexicographically below it; unsorted, the new slices before it;
//   3. one pass writing Y's slice, indices, inverse_indices and counts.
// Comparisons are quadratic in the slices (loops over tensors): fine for the
// sizes Unique sees in models (labels, token ids), not for millions. A float
// X holding NaN fails a run-time check (numpy and onnxruntime differ).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/RunDims.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
namespace onnx = kiln::onnx;

namespace kiln::onnx_to_linalg {
namespace {

struct UniqueLowering : OpConversionPattern<onnx::UniqueOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::UniqueOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    if (!xType || !xType.hasStaticShape())
      return onnx::emitNodeError(op) << "needs an input of static shape";
    SmallVector<RankedTensorType> types;
    for (Value r : op->getResults()) {
      auto t = dyn_cast_or_null<RankedTensorType>(
          getTypeConverter()->convertType(r.getType()));
      if (!t)
        return onnx::emitNodeError(op) << "needs ranked results";
      types.push_back(t);
    }
    Type elem = xType.getElementType();
    if (!elem.isInteger() && !isa<FloatType>(elem))
      return onnx::emitNodeError(op)
             << "does not take elements of type " << elem << " yet";
    bool isFloatElem = isa<FloatType>(elem);
    bool isUnsignedElem = elem.isUnsignedInteger() || elem.isInteger(1);
    if (isFloatElem && !elem.isF16() && !elem.isBF16() && !elem.isF32() &&
        !elem.isF64())
      return onnx::emitNodeError(op)
             << "does not take elements of type " << elem << " yet";
    int64_t rank = xType.getRank();
    int64_t outer = 1, n = xType.getNumElements(), inner = 1, axis = -1;
    if (auto axisAttr = op->getAttrOfType<IntegerAttr>("axis")) {
      axis = axisAttr.getInt() < 0 ? axisAttr.getInt() + rank
                                   : axisAttr.getInt();
      if (axis < 0 || axis >= rank)
        return onnx::emitNodeError(op) << "axis out of range";
      n = xType.getDimSize(axis);
      for (int64_t d = 0; d < axis; ++d)
        outer *= xType.getDimSize(d);
      for (int64_t d = axis + 1; d < rank; ++d)
        inner *= xType.getDimSize(d);
    }
    bool sorted = true;
    if (auto s = op->getAttrOfType<IntegerAttr>("sorted"))
      sorted = s.getInt() != 0;
    // X as [outer, n, inner].
    if (rank != 1) {
      SmallVector<ReassociationIndices> all(1);
      for (int64_t d = 0; d < rank; ++d)
        all[0].push_back(d);
      if (rank == 0)
        x = tensor::ExpandShapeOp::create(
            rewriter, loc, RankedTensorType::get({1}, elem), x,
            ArrayRef<ReassociationIndices>{}, ArrayRef<OpFoldResult>{
                                                  rewriter.getIndexAttr(1)});
      else
        x = tensor::CollapseShapeOp::create(rewriter, loc, x, all);
    }
    auto x3Type = RankedTensorType::get({outer, n, inner}, elem);
    x = tensor::ExpandShapeOp::create(
        rewriter, loc, x3Type, x,
        ArrayRef<ReassociationIndices>{ReassociationIndices{0, 1, 2}},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(outer),
                               rewriter.getIndexAttr(n),
                               rewriter.getIndexAttr(inner)});
    OpBuilder &b = rewriter;
    auto index = [&](OpBuilder &nb, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(nb, loc, v);
    };
    Type i64 = b.getI64Type();
    auto toI64 = [&](OpBuilder &nb, Value v) -> Value {
      return arith::IndexCastOp::create(nb, loc, i64, v);
    };
    auto toIndex = [&](OpBuilder &nb, Value v) -> Value {
      return arith::IndexCastOp::create(nb, loc, nb.getIndexType(), v);
    };
    // Element s (of outer x inner) of slice k.
    auto at = [&](OpBuilder &nb, Value k, Value s) -> Value {
      Value o = arith::DivUIOp::create(nb, loc, s, index(nb, inner));
      Value i = arith::RemUIOp::create(nb, loc, s, index(nb, inner));
      return tensor::ExtractOp::create(nb, loc, x, ValueRange{o, k, i});
    };
    auto cmp = [&](OpBuilder &nb, Value a, Value c, bool less) -> Value {
      if (isFloatElem)
        return arith::CmpFOp::create(
            nb, loc, less ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::UNE,
            a, c);
      return arith::CmpIOp::create(
          nb, loc,
          less ? (isUnsignedElem ? arith::CmpIPredicate::ult
                                 : arith::CmpIPredicate::slt)
               : arith::CmpIPredicate::ne,
          a, c);
    };
    Value f = arith::ConstantIntOp::create(b, loc, 0, 1);
    Value t = arith::ConstantIntOp::create(b, loc, 1, 1);
    int64_t sliceSize = outer * inner;
    // Whether slices j and k differ.
    auto differ = [&](OpBuilder &nb, Value j, Value k) -> Value {
      return scf::ForOp::create(
                 nb, loc, index(nb, 0), index(nb, sliceSize), index(nb, 1),
                 ValueRange{f},
                 [&](OpBuilder &lb, Location, Value s, ValueRange acc) {
                   Value ne = cmp(lb, at(lb, j, s), at(lb, k, s), false);
                   scf::YieldOp::create(
                       lb, loc,
                       ValueRange{arith::OrIOp::create(lb, loc, acc[0], ne)});
                 })
          .getResult(0);
    };
    // Whether slice j is lexicographically below slice k.
    auto below = [&](OpBuilder &nb, Value j, Value k) -> Value {
      return scf::ForOp::create(
                 nb, loc, index(nb, 0), index(nb, sliceSize), index(nb, 1),
                 ValueRange{f, f},
                 [&](OpBuilder &lb, Location, Value s, ValueRange acc) {
                   Value a = at(lb, j, s), c = at(lb, k, s);
                   Value ne = cmp(lb, a, c, false), lt = cmp(lb, a, c, true);
                   Value less = arith::SelectOp::create(
                       lb, loc, acc[0], acc[1],
                       arith::AndIOp::create(lb, loc, ne, lt));
                   Value decided = arith::OrIOp::create(lb, loc, acc[0], ne);
                   scf::YieldOp::create(lb, loc, ValueRange{decided, less});
                 })
          .getResult(1);
    };
    auto vecType = RankedTensorType::get({n}, i64);
    auto zeros = [&](OpBuilder &nb, RankedTensorType type, ValueRange dyn) {
      Value empty = tensor::EmptyOp::create(nb, loc, type, dyn);
      Value zero = arith::ConstantIntOp::create(nb, loc, i64, 0);
      return linalg::FillOp::create(nb, loc, zero, empty).getResult(0);
    };

    // NaN has no place among the unique values (numpy keeps one NaN,
    // onnxruntime counts every element equal to a NaN): a run-time check.
    if (isFloatElem) {
      Value hasNaN =
          scf::ForOp::create(
              b, loc, index(b, 0), index(b, n), index(b, 1), ValueRange{f},
              [&](OpBuilder &lb, Location, Value k, ValueRange acc) {
                Value any = scf::ForOp::create(
                                lb, loc, index(lb, 0), index(lb, sliceSize),
                                index(lb, 1), acc,
                                [&](OpBuilder &ib, Location, Value s,
                                    ValueRange inner) {
                                  Value v = at(ib, k, s);
                                  Value nan = arith::CmpFOp::create(
                                      ib, loc, arith::CmpFPredicate::UNO, v, v);
                                  scf::YieldOp::create(
                                      ib, loc,
                                      ValueRange{arith::OrIOp::create(
                                          ib, loc, inner[0], nan)});
                                })
                                .getResult(0);
                scf::YieldOp::create(lb, loc, ValueRange{any});
              })
              .getResult(0);
      emitRunCheck(b, loc, op, arith::XOrIOp::create(b, loc, hasNaN, t),
                   "X holds NaN, whose place among the unique values is not "
                   "defined (numpy and onnxruntime differ)");
    }

    // 1. first[k] and the number of unique slices.
    auto firsts = scf::ForOp::create(
        b, loc, index(b, 0), index(b, n), index(b, 1),
        ValueRange{zeros(b, vecType, {}), index(b, 0)},
        [&](OpBuilder &lb, Location, Value k, ValueRange acc) {
          // The first j < k among the new slices equal to k (k when none).
          auto search = scf::ForOp::create(
              lb, loc, index(lb, 0), k, index(lb, 1), ValueRange{k},
              [&](OpBuilder &ib, Location, Value j, ValueRange found) {
                Value notFound =
                    arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq,
                                          found[0], k);
                Value jFirst = arith::CmpIOp::create(
                    ib, loc, arith::CmpIPredicate::eq,
                    toIndex(ib, tensor::ExtractOp::create(ib, loc, acc[0],
                                                          ValueRange{j})),
                    j);
                auto check = scf::IfOp::create(
                    ib, loc, arith::AndIOp::create(ib, loc, notFound, jFirst),
                    [&](OpBuilder &tb, Location) {
                      Value same = arith::XOrIOp::create(
                          tb, loc, differ(tb, j, k), t);
                      scf::YieldOp::create(
                          tb, loc,
                          ValueRange{arith::SelectOp::create(tb, loc, same, j,
                                                             found[0])});
                    },
                    [&](OpBuilder &eb, Location) {
                      scf::YieldOp::create(eb, loc, found);
                    });
                scf::YieldOp::create(ib, loc, check.getResults());
              });
          Value first = search.getResult(0);
          Value placed = tensor::InsertOp::create(lb, loc, toI64(lb, first),
                                                  acc[0], ValueRange{k});
          Value isNew = arith::CmpIOp::create(
              lb, loc, arith::CmpIPredicate::eq, first, k);
          Value count = arith::SelectOp::create(
              lb, loc, isNew,
              arith::AddIOp::create(lb, loc, acc[1], index(lb, 1)), acc[1]);
          scf::YieldOp::create(lb, loc, ValueRange{placed, count});
        });
    Value first = firsts.getResult(0), unique = firsts.getResult(1);
    auto isNewAt = [&](OpBuilder &nb, Value k) -> Value {
      return arith::CmpIOp::create(
          nb, loc, arith::CmpIPredicate::eq,
          toIndex(nb, tensor::ExtractOp::create(nb, loc, first, ValueRange{k})),
          k);
    };

    // 2. place[k] of each new slice.
    auto places = scf::ForOp::create(
        b, loc, index(b, 0), index(b, n), index(b, 1),
        ValueRange{zeros(b, vecType, {}), index(b, 0)},
        [&](OpBuilder &lb, Location, Value k, ValueRange acc) {
          Value isNew = isNewAt(lb, k);
          auto place = scf::IfOp::create(
              lb, loc, isNew,
              [&](OpBuilder &tb, Location) {
                Value p = acc[1];
                if (sorted)
                  p = scf::ForOp::create(
                          tb, loc, index(tb, 0), index(tb, n), index(tb, 1),
                          ValueRange{index(tb, 0)},
                          [&](OpBuilder &ib, Location, Value j,
                              ValueRange count) {
                            auto c = scf::IfOp::create(
                                ib, loc, isNewAt(ib, j),
                                [&](OpBuilder &cb, Location) {
                                  Value one = arith::SelectOp::create(
                                      cb, loc, below(cb, j, k), index(cb, 1),
                                      index(cb, 0));
                                  scf::YieldOp::create(
                                      cb, loc,
                                      ValueRange{arith::AddIOp::create(
                                          cb, loc, count[0], one)});
                                },
                                [&](OpBuilder &eb, Location) {
                                  scf::YieldOp::create(eb, loc, count);
                                });
                            scf::YieldOp::create(ib, loc, c.getResults());
                          })
                          .getResult(0);
                Value placed = tensor::InsertOp::create(
                    tb, loc, toI64(tb, p), acc[0], ValueRange{k});
                scf::YieldOp::create(
                    tb, loc,
                    ValueRange{placed, arith::AddIOp::create(tb, loc, acc[1],
                                                             index(tb, 1))});
              },
              [&](OpBuilder &eb, Location) {
                scf::YieldOp::create(eb, loc, acc);
              });
          scf::YieldOp::create(lb, loc, place.getResults());
        });
    Value place = places.getResult(0);

    // 3. The outputs.
    auto yType = RankedTensorType::get({outer, ShapedType::kDynamic, inner},
                                       elem);
    Value y = tensor::EmptyOp::create(b, loc, yType, ValueRange{unique});
    auto countType = RankedTensorType::get({ShapedType::kDynamic}, i64);
    Value indices = tensor::EmptyOp::create(b, loc, countType, ValueRange{unique});
    Value counts = zeros(b, countType, ValueRange{unique});
    Value inverse = tensor::EmptyOp::create(b, loc, vecType, ValueRange{});
    auto sliceType = RankedTensorType::get({outer, 1, inner}, elem);
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(outer), b.getIndexAttr(1),
                                       b.getIndexAttr(inner)};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    auto offsets = [&](OpBuilder &nb, Value k) {
      return SmallVector<OpFoldResult>{nb.getIndexAttr(0), k,
                                       nb.getIndexAttr(0)};
    };
    auto writing = scf::ForOp::create(
        b, loc, index(b, 0), index(b, n), index(b, 1),
        ValueRange{y, indices, inverse, counts},
        [&](OpBuilder &lb, Location, Value k, ValueRange acc) {
          Value fk = toIndex(
              lb, tensor::ExtractOp::create(lb, loc, first, ValueRange{k}));
          Value p = toIndex(
              lb, tensor::ExtractOp::create(lb, loc, place, ValueRange{fk}));
          Value inv = tensor::InsertOp::create(lb, loc, toI64(lb, p), acc[2],
                                               ValueRange{k});
          Value c = tensor::ExtractOp::create(lb, loc, acc[3], ValueRange{p});
          Value cnt = tensor::InsertOp::create(
              lb, loc,
              arith::AddIOp::create(lb, loc, c,
                                    arith::ConstantIntOp::create(lb, loc, i64, 1)),
              acc[3], ValueRange{p});
          Value isNew =
              arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::eq, fk, k);
          auto write = scf::IfOp::create(
              lb, loc, isNew,
              [&](OpBuilder &tb, Location) {
                Value slice = tensor::ExtractSliceOp::create(
                    tb, loc, sliceType, x, offsets(tb, k), sizes, strides);
                Value yk = tensor::InsertSliceOp::create(
                    tb, loc, slice, acc[0], offsets(tb, p), sizes, strides);
                Value ik = tensor::InsertOp::create(tb, loc, toI64(tb, k),
                                                    acc[1], ValueRange{p});
                scf::YieldOp::create(tb, loc, ValueRange{yk, ik});
              },
              [&](OpBuilder &eb, Location) {
                scf::YieldOp::create(eb, loc, ValueRange{acc[0], acc[1]});
              });
          scf::YieldOp::create(lb, loc,
                               ValueRange{write.getResult(0),
                                          write.getResult(1), inv, cnt});
        });

    // Y in the result's shape: [outer, u, inner] expanded back to X's dims
    // with the axis u (or [u] without an axis).
    Value yOut = writing.getResult(0);
    RankedTensorType yResult = types[0];
    if (axis < 0) {
      yOut = tensor::CollapseShapeOp::create(
          b, loc, yOut,
          ArrayRef<ReassociationIndices>{ReassociationIndices{0, 1, 2}});
    } else {
      // Through a 1-D view: collapse, then expand with the result's sizes.
      Value flat = tensor::CollapseShapeOp::create(
          b, loc, yOut,
          ArrayRef<ReassociationIndices>{ReassociationIndices{0, 1, 2}});
      ReassociationIndices all;
      SmallVector<OpFoldResult> outSizes;
      for (int64_t d = 0; d < rank; ++d) {
        all.push_back(d);
        outSizes.push_back(d == axis ? OpFoldResult(unique)
                                     : b.getIndexAttr(xType.getDimSize(d)));
      }
      yOut = tensor::ExpandShapeOp::create(
          b, loc, yResult, flat, ArrayRef<ReassociationIndices>{all},
          outSizes);
    }
    if (yOut.getType() != yResult)
      yOut = tensor::CastOp::create(b, loc, yResult, yOut);
    SmallVector<Value> results = {yOut, writing.getResult(1),
                                  writing.getResult(2), writing.getResult(3)};
    for (size_t i = 0; i < results.size(); ++i)
      if (results[i].getType() != types[i])
        results[i] = tensor::CastOp::create(b, loc, types[i], results[i]);
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void populateUniquePatterns(TypeConverter &converter,
                            RewritePatternSet &patterns) {
  patterns.add<UniqueLowering>(converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
