//===- NonMaxSuppression.cpp - NonMaxSuppression -> greedy scf loops ------===//
//
// For each (batch, class): the boxes whose score passes score_threshold are
// candidates; repeatedly the best remaining candidate (highest score, the
// lowest box index among equal scores, as ONNX's reference and onnxruntime
// order them) is selected and every remaining candidate whose IoU with it is
// above iou_threshold drops out, until max_output_boxes_per_class are
// selected or none remain. Rows (batch, class, box) go into a buffer sized
// for every box of every class; the result is its first `count` rows, a size
// the run decides (a run dim, docs/dynamic-shapes.md). O(selected * boxes)
// scalar work per class: detection post-processing sizes, not a sort.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
namespace onnx = kiln::onnx;

namespace kiln::onnx_to_linalg {
namespace {

struct NonMaxSuppressionLowering
    : OpConversionPattern<onnx::NonMaxSuppressionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::NonMaxSuppressionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto boxesType = dyn_cast<RankedTensorType>(adaptor.getBoxes().getType());
    auto scoresType = dyn_cast<RankedTensorType>(adaptor.getScores().getType());
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!boxesType || !scoresType || !boxesType.hasStaticShape() ||
        !scoresType.hasStaticShape() || boxesType.getRank() != 3 ||
        scoresType.getRank() != 3 || !resultType ||
        !resultType.getElementType().isInteger(64))
      return onnx::emitNodeError(op)
             << "needs static boxes [batch, boxes, 4] and scores [batch, "
                "classes, boxes]";
    auto f32 = rewriter.getF32Type();
    if (boxesType.getElementType() != f32 || scoresType.getElementType() != f32)
      return onnx::emitNodeError(op) << "boxes and scores must be float32";
    int64_t numBatches = boxesType.getDimSize(0);
    int64_t numBoxes = boxesType.getDimSize(1);
    int64_t numClasses = scoresType.getDimSize(1);
    bool centerPoint = op.getCenterPointBox() != 0;
    Value boxes = adaptor.getBoxes(), scores = adaptor.getScores();

    auto index = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    // A scalar input (0-d or one element), or null when absent.
    auto readScalar = [&](Value orig, Value converted) -> Value {
      if (onnx::isNoneValue(orig))
        return Value();
      auto type = cast<RankedTensorType>(converted.getType());
      SmallVector<Value> zeros(type.getRank(), index(rewriter, 0));
      return tensor::ExtractOp::create(rewriter, loc, converted, zeros);
    };
    Value maxOut = readScalar(op.getMaxOutputBoxesPerClass(),
                              adaptor.getMaxOutputBoxesPerClass());
    Value iouThreshold =
        readScalar(op.getIouThreshold(), adaptor.getIouThreshold());
    Value scoreThreshold =
        readScalar(op.getScoreThreshold(), adaptor.getScoreThreshold());
    if ((maxOut && !maxOut.getType().isInteger(64)) ||
        (iouThreshold && iouThreshold.getType() != f32) ||
        (scoreThreshold && scoreThreshold.getType() != f32))
      return onnx::emitNodeError(op)
             << "max_output_boxes_per_class must be int64, the thresholds "
                "float32";
    if (!iouThreshold)
      iouThreshold = arith::ConstantOp::create(rewriter, loc,
                                               rewriter.getF32FloatAttr(0));

    // Selections per class: max_output_boxes_per_class clamped to
    // [0, boxes] (absent: 0, nothing selected).
    Value perClass = index(rewriter, 0);
    if (maxOut) {
      Value limit = arith::MaxSIOp::create(
          rewriter, loc, maxOut,
          arith::ConstantOp::create(rewriter, loc,
                                    rewriter.getI64IntegerAttr(0)));
      limit = arith::MinSIOp::create(
          rewriter, loc, limit,
          arith::ConstantOp::create(rewriter, loc,
                                    rewriter.getI64IntegerAttr(numBoxes)));
      perClass = arith::IndexCastOp::create(rewriter, loc,
                                            rewriter.getIndexType(), limit);
    }

    int64_t capacity = numBatches * numClasses * numBoxes;
    Type i64 = rewriter.getI64Type(), i1 = rewriter.getI1Type();
    Value rows = tensor::EmptyOp::create(rewriter, loc,
                                         ArrayRef<int64_t>{capacity, 3}, i64);
    Value alive0 =
        tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{numBoxes}, i1);

    // Box `i` of batch `b` as (xmin, xmax, ymin, ymax), corners ordered.
    auto corners = [&](OpBuilder &b, Value batch,
                       Value i) -> std::array<Value, 4> {
      Value c[4];
      for (int64_t k = 0; k < 4; ++k)
        c[k] = tensor::ExtractOp::create(b, loc, boxes,
                                         ValueRange{batch, i, index(b, k)});
      if (centerPoint) {
        // [x_center, y_center, width, height]
        Value half = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(2));
        Value hw = arith::DivFOp::create(b, loc, c[2], half);
        Value hh = arith::DivFOp::create(b, loc, c[3], half);
        return {arith::SubFOp::create(b, loc, c[0], hw),
                arith::AddFOp::create(b, loc, c[0], hw),
                arith::SubFOp::create(b, loc, c[1], hh),
                arith::AddFOp::create(b, loc, c[1], hh)};
      }
      // [y1, x1, y2, x2], either corner first.
      return {arith::MinimumFOp::create(b, loc, c[1], c[3]),
              arith::MaximumFOp::create(b, loc, c[1], c[3]),
              arith::MinimumFOp::create(b, loc, c[0], c[2]),
              arith::MaximumFOp::create(b, loc, c[0], c[2])};
    };
    // IoU(a, c) > threshold, with the reference's guards: no overlap or an
    // empty box never suppresses.
    auto suppresses = [&](OpBuilder &b, const std::array<Value, 4> &p,
                          const std::array<Value, 4> &q) -> Value {
      Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
      Value ix0 = arith::MaximumFOp::create(b, loc, p[0], q[0]);
      Value ix1 = arith::MinimumFOp::create(b, loc, p[1], q[1]);
      Value iy0 = arith::MaximumFOp::create(b, loc, p[2], q[2]);
      Value iy1 = arith::MinimumFOp::create(b, loc, p[3], q[3]);
      auto gt = [&](Value x, Value y) {
        return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
      };
      Value inter = arith::MulFOp::create(
          b, loc, arith::SubFOp::create(b, loc, ix1, ix0),
          arith::SubFOp::create(b, loc, iy1, iy0));
      Value area1 = arith::MulFOp::create(
          b, loc, arith::SubFOp::create(b, loc, p[1], p[0]),
          arith::SubFOp::create(b, loc, p[3], p[2]));
      Value area2 = arith::MulFOp::create(
          b, loc, arith::SubFOp::create(b, loc, q[1], q[0]),
          arith::SubFOp::create(b, loc, q[3], q[2]));
      Value uni = arith::SubFOp::create(
          b, loc, arith::AddFOp::create(b, loc, area1, area2), inter);
      Value iou = arith::DivFOp::create(b, loc, inter, uni);
      Value ok = arith::AndIOp::create(b, loc, gt(ix1, ix0), gt(iy1, iy0));
      ok = arith::AndIOp::create(b, loc, ok, gt(inter, zero));
      ok = arith::AndIOp::create(b, loc, ok, gt(area1, zero));
      ok = arith::AndIOp::create(b, loc, ok, gt(area2, zero));
      ok = arith::AndIOp::create(b, loc, ok, gt(uni, zero));
      return arith::AndIOp::create(b, loc, ok, gt(iou, iouThreshold));
    };

    Value zero = index(rewriter, 0), one = index(rewriter, 1);
    Value boxCount = index(rewriter, numBoxes);
    auto batchLoop = scf::ForOp::create(
        rewriter, loc, zero, index(rewriter, numBatches), one,
        ValueRange{rows, zero},
        [&](OpBuilder &b, Location, Value batch, ValueRange batchArgs) {
          auto classLoop = scf::ForOp::create(
              b, loc, index(b, 0), index(b, numClasses), index(b, 1),
              batchArgs,
              [&](OpBuilder &b, Location, Value cls, ValueRange clsArgs) {
                // The candidates: scores above score_threshold (all without).
                auto init = scf::ForOp::create(
                    b, loc, index(b, 0), boxCount, index(b, 1),
                    ValueRange{alive0},
                    [&](OpBuilder &b, Location, Value i, ValueRange a) {
                      Value candidate =
                          arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
                      if (scoreThreshold) {
                        Value s = tensor::ExtractOp::create(
                            b, loc, scores, ValueRange{batch, cls, i});
                        candidate = arith::CmpFOp::create(
                            b, loc, arith::CmpFPredicate::OGT, s,
                            scoreThreshold);
                      }
                      scf::YieldOp::create(
                          b, loc,
                          ValueRange{tensor::InsertOp::create(b, loc, candidate,
                                                              a[0], i)});
                    });
                // One selection per step; a step finding no candidate
                // leaves everything as it is.
                auto steps = scf::ForOp::create(
                    b, loc, index(b, 0), perClass, index(b, 1),
                    ValueRange{init.getResult(0), clsArgs[0], clsArgs[1]},
                    [&](OpBuilder &b, Location, Value, ValueRange st) {
                      Value alive = st[0];
                      Value negInf = arith::ConstantOp::create(
                          b, loc,
                          b.getF32FloatAttr(
                              -std::numeric_limits<float>::infinity()));
                      Value none = index(b, -1);
                      auto best = scf::ForOp::create(
                          b, loc, index(b, 0), boxCount, index(b, 1),
                          ValueRange{none, negInf},
                          [&](OpBuilder &b, Location, Value i, ValueRange bs) {
                            Value live =
                                tensor::ExtractOp::create(b, loc, alive, i);
                            Value s = tensor::ExtractOp::create(
                                b, loc, scores, ValueRange{batch, cls, i});
                            Value first = arith::CmpIOp::create(
                                b, loc, arith::CmpIPredicate::eq, bs[0], none);
                            Value better = arith::CmpFOp::create(
                                b, loc, arith::CmpFPredicate::OGT, s, bs[1]);
                            Value take = arith::AndIOp::create(
                                b, loc, live,
                                arith::OrIOp::create(b, loc, first, better));
                            scf::YieldOp::create(
                                b, loc,
                                ValueRange{
                                    arith::SelectOp::create(b, loc, take, i,
                                                            bs[0]),
                                    arith::SelectOp::create(b, loc, take, s,
                                                            bs[1])});
                          });
                      Value chosen = best.getResult(0);
                      Value found = arith::CmpIOp::create(
                          b, loc, arith::CmpIPredicate::ne, chosen, none);
                      auto select = scf::IfOp::create(
                          b, loc, found,
                          [&](OpBuilder &b, Location) {
                            Value out = st[1], count = st[2];
                            Value fields[3] = {batch, cls, chosen};
                            for (int64_t k = 0; k < 3; ++k)
                              out = tensor::InsertOp::create(
                                  b, loc,
                                  arith::IndexCastOp::create(b, loc, i64,
                                                             fields[k]),
                                  out, ValueRange{count, index(b, k)});
                            Value next =
                                arith::AddIOp::create(b, loc, count, index(b, 1));
                            Value falseV = arith::ConstantOp::create(
                                b, loc, b.getBoolAttr(false));
                            Value left = tensor::InsertOp::create(
                                b, loc, falseV, alive, chosen);
                            std::array<Value, 4> p = corners(b, batch, chosen);
                            auto sweep = scf::ForOp::create(
                                b, loc, index(b, 0), boxCount, index(b, 1),
                                ValueRange{left},
                                [&](OpBuilder &b, Location, Value j,
                                    ValueRange a) {
                                  Value live =
                                      tensor::ExtractOp::create(b, loc, a[0], j);
                                  auto drop = scf::IfOp::create(
                                      b, loc, live,
                                      [&](OpBuilder &b, Location) {
                                        Value gone = suppresses(
                                            b, corners(b, batch, j), p);
                                        Value keep = arith::XOrIOp::create(
                                            b, loc, gone,
                                            arith::ConstantOp::create(
                                                b, loc, b.getBoolAttr(true)));
                                        scf::YieldOp::create(
                                            b, loc,
                                            ValueRange{tensor::InsertOp::create(
                                                b, loc, keep, a[0], j)});
                                      },
                                      [&](OpBuilder &b, Location) {
                                        scf::YieldOp::create(b, loc, a[0]);
                                      });
                                  scf::YieldOp::create(b, loc, drop.getResults());
                                });
                            scf::YieldOp::create(
                                b, loc,
                                ValueRange{sweep.getResult(0), out, next});
                          },
                          [&](OpBuilder &b, Location) {
                            scf::YieldOp::create(b, loc, st);
                          });
                      scf::YieldOp::create(b, loc, select.getResults());
                    });
                scf::YieldOp::create(
                    b, loc,
                    ValueRange{steps.getResult(1), steps.getResult(2)});
              });
          scf::YieldOp::create(b, loc, classLoop.getResults());
        });
    Value count = batchLoop.getResult(1);
    SmallVector<OpFoldResult> offsets = {rewriter.getIndexAttr(0),
                                         rewriter.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {count, rewriter.getIndexAttr(3)};
    SmallVector<OpFoldResult> strides = {rewriter.getIndexAttr(1),
                                         rewriter.getIndexAttr(1)};
    Value result = tensor::ExtractSliceOp::create(
        rewriter, loc, RankedTensorType::get({ShapedType::kDynamic, 3}, i64),
        batchLoop.getResult(0), offsets, sizes, strides);
    if (result.getType() != resultType)
      result = tensor::CastOp::create(rewriter, loc, resultType, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateNonMaxSuppressionPatterns(TypeConverter &converter,
                                       RewritePatternSet &patterns) {
  patterns.add<NonMaxSuppressionLowering>(converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
