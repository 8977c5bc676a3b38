//===- Scatter.cpp - ScatterElements and ScatterND to loops ---------------===//
//
// Both write `updates` into a copy of `data` at positions read from
// `indices`, in order (so later updates win, as in ONNX's reference), combined
// with the old value by `reduction` (none, add, mul, max, min). The lowering
// is a loop nest over the updates carrying the output tensor (tensor.extract /
// tensor.insert per element). Negative indices count from the end; an index
// still out of range is clamped, so nothing is written out of bounds, and
// reported at run time through kiln.check.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/Kiln/KilnDialect.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln::onnx_to_linalg {
namespace {

using kiln::onnx::emitNodeError;

/// old (op) update for `reduction` (one of isKnownReduction's).
Value combine(OpBuilder &b, Location loc, StringRef reduction, Value old,
              Value update, bool isUnsigned) {
  bool f = isa<FloatType>(old.getType());
  if (reduction == "add")
    return f ? arith::AddFOp::create(b, loc, old, update).getResult()
             : arith::AddIOp::create(b, loc, old, update).getResult();
  if (reduction == "mul")
    return f ? arith::MulFOp::create(b, loc, old, update).getResult()
             : arith::MulIOp::create(b, loc, old, update).getResult();
  if (reduction == "max")
    return f ? arith::MaximumFOp::create(b, loc, old, update).getResult()
           : isUnsigned ? arith::MaxUIOp::create(b, loc, old, update).getResult()
                        : arith::MaxSIOp::create(b, loc, old, update).getResult();
  if (reduction == "min")
    return f ? arith::MinimumFOp::create(b, loc, old, update).getResult()
           : isUnsigned ? arith::MinUIOp::create(b, loc, old, update).getResult()
                        : arith::MinSIOp::create(b, loc, old, update).getResult();
  return update; // "none"
}

/// `raw` (an integer index read from `indices`) made an in-range `index` for a
/// dimension of size `dim`: negatives wrap once, the rest is clamped. `ok`
/// is and-ed with whether it was in range.
Value normalizeIndex(OpBuilder &b, Location loc, Value raw, int64_t dim,
                     Value &ok) {
  Type t = raw.getType();
  Value zero = createIntConstant(b, loc, t, 0);
  Value size = createIntConstant(b, loc, t, dim);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, raw, zero);
  Value wrapped = arith::SelectOp::create(
      b, loc, negative, arith::AddIOp::create(b, loc, raw, size), raw);
  Value geZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, wrapped, zero);
  Value ltSize =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, wrapped, size);
  ok = arith::AndIOp::create(b, loc, ok,
                             arith::AndIOp::create(b, loc, geZero, ltSize));
  Value clamped = arith::MaxSIOp::create(
      b, loc,
      arith::MinSIOp::create(b, loc, wrapped, createIntConstant(b, loc, t, dim - 1)),
      zero);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), clamped);
}

/// Runs `body` over every index of `shape` (row-major), carrying `out` and an
/// in-range flag; returns the final pair.
std::pair<Value, Value> loopOver(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Value out, Value ok,
    function_ref<std::pair<Value, Value>(OpBuilder &, Location, ValueRange,
                                         Value, Value)>
        body) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t d : shape) {
    lbs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    ubs.push_back(arith::ConstantIndexOp::create(b, loc, d));
    steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{out, ok},
      [&](OpBuilder &nb, Location l, ValueRange ivs, ValueRange carried) {
        auto [newOut, newOk] = body(nb, l, ivs, carried[0], carried[1]);
        return scf::ValueVector{newOut, newOk};
      });
  // Without loops (a 0-d shape) the body ran once in place and `results`
  // holds its values.
  return {nest.results[0], nest.results[1]};
}

/// `update` combined with the element of `cur` at `coords`, written back.
Value writeElement(OpBuilder &b, Location loc, StringRef reduction,
                   bool isUnsigned, Value cur, ValueRange coords, Value update) {
  Value old = tensor::ExtractOp::create(b, loc, cur, coords);
  Value v = combine(b, loc, reduction, old, update, isUnsigned);
  return tensor::InsertOp::create(b, loc, v, cur, coords);
}

/// The in-range flag becomes a kiln.check; the loop's tensor the result.
LogicalResult finish(ConversionPatternRewriter &rewriter, Location loc,
                     Operation *op, Value out, Value ok) {
  Value okTensor = tensor::FromElementsOp::create(
      rewriter, loc, RankedTensorType::get({}, rewriter.getI1Type()),
      ValueRange{ok});
  kiln::CheckOp::create(rewriter, loc, okTensor,
                        getNodeMessagePrefix(op) + "index out of range");
  rewriter.replaceOp(op, out);
  return success();
}

bool isKnownReduction(StringRef r) {
  return r == "none" || r == "add" || r == "mul" || r == "max" || r == "min";
}

struct ScatterElementsLowering
    : OpConversionPattern<onnx::ScatterElementsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::ScatterElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType dataType = getStaticTensorType(adaptor.getData());
    RankedTensorType indexType = getStaticTensorType(adaptor.getIndices());
    RankedTensorType updateType = getStaticTensorType(adaptor.getUpdates());
    if (!dataType || !indexType || !updateType ||
        indexType.getShape() != updateType.getShape() ||
        indexType.getRank() != dataType.getRank())
      return emitNodeError(op) << "needs static shapes, indices and updates of "
                                  "one shape and data's rank",
             failure();
    std::optional<int64_t> axis =
        normalizeAxis(op.getAxis(), dataType.getRank());
    if (!axis)
      return emitNodeError(op) << "axis out of range", failure();
    StringRef reduction = op.getReduction();
    if (!isKnownReduction(reduction))
      return emitNodeError(op) << "unknown reduction '" << reduction << "'",
             failure();
    bool isUnsigned = isUnsignedInt(op.getData().getType());
    Value ok = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    auto [out, allOk] = loopOver(
        rewriter, loc, indexType.getShape(), adaptor.getData(), ok,
        [&](OpBuilder &b, Location l, ValueRange ivs, Value cur, Value curOk) {
          Value raw = tensor::ExtractOp::create(b, l, adaptor.getIndices(), ivs);
          SmallVector<Value> coords(ivs);
          coords[*axis] = normalizeIndex(b, l, raw, dataType.getDimSize(*axis),
                                         curOk);
          Value update = tensor::ExtractOp::create(b, l, adaptor.getUpdates(), ivs);
          return std::make_pair(
              writeElement(b, l, reduction, isUnsigned, cur, coords, update),
              curOk);
        });
    return finish(rewriter, loc, op, out, allOk);
  }
};

struct ScatterNDLowering : OpConversionPattern<onnx::ScatterNDOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::ScatterNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType dataType = getStaticTensorType(adaptor.getData());
    RankedTensorType indexType = getStaticTensorType(adaptor.getIndices());
    RankedTensorType updateType = getStaticTensorType(adaptor.getUpdates());
    if (!dataType || !indexType || !updateType || indexType.getRank() < 1)
      return emitNodeError(op) << "needs static shapes", failure();
    int64_t k = indexType.getShape().back();
    ArrayRef<int64_t> batch = indexType.getShape().drop_back();
    ArrayRef<int64_t> sliceShape = dataType.getShape().drop_front(
        std::min<int64_t>(k, dataType.getRank()));
    SmallVector<int64_t> expected(batch);
    expected.append(sliceShape.begin(), sliceShape.end());
    if (k < 1 || k > dataType.getRank() ||
        updateType.getShape() != ArrayRef<int64_t>(expected))
      return emitNodeError(op) << "updates must have shape indices.shape[:-1] "
                                  "+ data.shape[k:]",
             failure();
    StringRef reduction = op.getReduction();
    if (!isKnownReduction(reduction))
      return emitNodeError(op) << "unknown reduction '" << reduction << "'",
             failure();
    bool isUnsigned = isUnsignedInt(op.getData().getType());
    Value ok = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    auto [out, allOk] = loopOver(
        rewriter, loc, updateType.getShape(), adaptor.getData(), ok,
        [&](OpBuilder &b, Location l, ValueRange ivs, Value cur, Value curOk) {
          // ivs = [batch..., slice...]; the first k data coordinates come
          // from indices[batch..., j].
          ValueRange batchIvs = ivs.take_front(batch.size());
          SmallVector<Value> coords;
          for (int64_t j = 0; j < k; ++j) {
            SmallVector<Value> at(batchIvs);
            at.push_back(arith::ConstantIndexOp::create(b, l, j));
            Value raw = tensor::ExtractOp::create(b, l, adaptor.getIndices(), at);
            coords.push_back(
                normalizeIndex(b, l, raw, dataType.getDimSize(j), curOk));
          }
          for (Value iv : ivs.drop_front(batch.size()))
            coords.push_back(iv);
          Value update = tensor::ExtractOp::create(b, l, adaptor.getUpdates(), ivs);
          return std::make_pair(
              writeElement(b, l, reduction, isUnsigned, cur, coords, update),
              curOk);
        });
    return finish(rewriter, loc, op, out, allOk);
  }
};

} // namespace

void populateScatterPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns) {
  patterns.add<ScatterElementsLowering, ScatterNDLowering>(
      converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
