//===- Normalization.cpp - Softmax, LayerNorm, BatchNorm, InstanceNorm ----===//
//
// Statistics are computed by reductions into the reduced shape (dims
// dropped), reshaped to the keepdims shape (tensor.expand_shape, no copy) and
// read by the final elementwise generic through broadcasting maps.
// f16/bf16 inputs compute their statistics in f32.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
namespace onnx = kiln::onnx;

namespace kiln::onnx_to_linalg {
namespace {

/// f32 for f16/bf16 (and other narrow floats), the type itself otherwise.
Type getComputeType(Type elem) {
  auto f = cast<FloatType>(elem);
  if (f.getWidth() < 32)
    return Float32Type::get(elem.getContext());
  return elem;
}

Value toType(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return convertScalar(b, loc, v, type);
}

/// `reduced` (dims dropped) reshaped to the keepdims shape of `inputShape`.
Value keepDims(OpBuilder &b, Location loc, Value reducedValue,
               ArrayRef<int64_t> inputShape, ArrayRef<bool> reduced) {
  auto type = cast<RankedTensorType>(reducedValue.getType());
  auto keepType = RankedTensorType::get(
      getReducedShape(inputShape, reduced, /*keepdims=*/true),
      type.getElementType());
  return createReshape(b, loc, reducedValue, keepType);
}

/// Max over the reduced dims (dims dropped), in `computeType`.
Value reduceMax(OpBuilder &b, Location loc, Value x, ArrayRef<bool> reduced,
                Type computeType) {
  Value init = createMinMaxInit(b, loc, computeType, /*isMax=*/true, false);
  return createReductionGeneric(
      b, loc, x, reduced, computeType, init, {},
      [&](OpBuilder &nb, Location l, Value v, ValueRange, Value acc) -> Value {
        return arith::MaximumFOp::create(nb, l, toType(nb, l, v, computeType),
                                         acc);
      });
}

/// sum(exp(x - m)) over the reduced dims, `m` of the reduced shape.
Value reduceSumExp(OpBuilder &b, Location loc, Value x, Value m,
                   ArrayRef<bool> reduced, Type computeType) {
  Value zero = createScalarConstant(b, loc, computeType, 0.0);
  return createReductionGeneric(
      b, loc, x, reduced, computeType, zero, ValueRange{m},
      [&](OpBuilder &nb, Location l, Value v, ValueRange extras,
          Value acc) -> Value {
        Value d = arith::SubFOp::create(nb, l, toType(nb, l, v, computeType),
                                        extras[0]);
        Value e = math::ExpOp::create(nb, l, d);
        return arith::AddFOp::create(nb, l, e, acc);
      });
}

/// Mean and 1 / sqrt(var + eps) over the reduced dims (two passes), both of
/// the reduced shape (dims dropped) in `computeType`.
std::pair<Value, Value> computeMeanInvStd(OpBuilder &b, Location loc, Value x,
                                          ArrayRef<bool> reduced,
                                          double epsilon, Type computeType) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t count = 1;
  for (auto [dim, red] : llvm::zip(xType.getShape(), reduced))
    if (red)
      count *= dim;
  Value zero = createScalarConstant(b, loc, computeType, 0.0);
  Value sum = createReductionGeneric(
      b, loc, x, reduced, computeType, zero, {},
      [&](OpBuilder &nb, Location l, Value v, ValueRange, Value acc) -> Value {
        return arith::AddFOp::create(nb, l, toType(nb, l, v, computeType), acc);
      });
  auto redType = cast<RankedTensorType>(sum.getType());
  Value mean = createElementwiseGeneric(
      b, loc, redType, ValueRange{sum},
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        return arith::DivFOp::create(
            nb, l, args[0],
            createScalarConstant(nb, l, computeType,
                                 static_cast<double>(count)));
      });
  Value sq = createReductionGeneric(
      b, loc, x, reduced, computeType, zero, ValueRange{mean},
      [&](OpBuilder &nb, Location l, Value v, ValueRange extras,
          Value acc) -> Value {
        Value d = arith::SubFOp::create(nb, l, toType(nb, l, v, computeType),
                                        extras[0]);
        Value d2 = arith::MulFOp::create(nb, l, d, d);
        return arith::AddFOp::create(nb, l, d2, acc);
      });
  Value invStd = createElementwiseGeneric(
      b, loc, redType, ValueRange{sq},
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value var = arith::DivFOp::create(
            nb, l, args[0],
            createScalarConstant(nb, l, computeType,
                                 static_cast<double>(count)));
        Value ve = arith::AddFOp::create(
            nb, l, var, createScalarConstant(nb, l, computeType, epsilon));
        Value sd = math::SqrtOp::create(nb, l, ve);
        return arith::DivFOp::create(
            nb, l, createScalarConstant(nb, l, computeType, 1.0), sd);
      });
  return {mean, invStd};
}

//===----------------------------------------------------------------------===//
// Softmax, LogSoftmax
//===----------------------------------------------------------------------===//

template <typename OpTy, bool IsLog>
struct SoftmaxLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    // Symbolic dims are allowed, the axis too (attention's scores over the
    // sequence).
    RankedTensorType resultType =
        getConvertedRankedResultType(this->getTypeConverter(), op);
    if (!xType || xType != resultType)
      return onnx::emitNodeError(op)
             << "input and result must be the same type";
    if (!isa<FloatType>(xType.getElementType()))
      return onnx::emitNodeError(op)
             << "supports float inputs only";
    int64_t rank = xType.getRank();
    if (rank == 0)
      return onnx::emitNodeError(op) << "rank-0 input";
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), rank);
    if (!axis)
      return onnx::emitNodeError(op)
             << "axis " << static_cast<int64_t>(op.getAxis())
             << " is out of range";
    Type elem = xType.getElementType();
    Type ct = getComputeType(elem);
    SmallVector<bool> reduced(rank, false);
    reduced[*axis] = true;

    Value m = reduceMax(rewriter, loc, x, reduced, ct);
    // An all -inf row: use 0 so exp(x - m) is 0, never NaN.
    auto redType = cast<RankedTensorType>(m.getType());
    m = createElementwiseGeneric(
        rewriter, loc, redType, ValueRange{m},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value negInf = createScalarConstant(b, l, ct, -INFINITY);
          Value isNegInf = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OEQ, args[0], negInf);
          return arith::SelectOp::create(
              b, l, isNegInf, createScalarConstant(b, l, ct, 0.0), args[0]);
        });
    if (!IsLog) {
      // Softmax: e = exp(x - m) once, s = sum(e), y = e * (1 / s). A row of e
      // is written and read back from cache (kiln-parallelize-loops runs the
      // row ops in one loop); computing exp in both the sum and the scaling
      // pass cost more (exp is most of a softmax).
      Value mKeep = keepDims(rewriter, loc, m, xType.getShape(), reduced);
      auto eType = RankedTensorType::get(xType.getShape(), ct);
      Value e = createElementwiseGeneric(
          rewriter, loc, eType, ValueRange{x, mKeep},
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value d =
                arith::SubFOp::create(b, l, toType(b, l, args[0], ct), args[1]);
            return math::ExpOp::create(b, l, d);
          });
      Value zero = createScalarConstant(rewriter, loc, ct, 0.0);
      Value s = createReductionGeneric(
          rewriter, loc, e, reduced, ct, zero, {},
          [&](OpBuilder &nb, Location l, Value v, ValueRange,
              Value acc) -> Value {
            return arith::AddFOp::create(nb, l, v, acc);
          });
      Value r = createElementwiseGeneric(
          rewriter, loc, redType, ValueRange{s},
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            return arith::DivFOp::create(
                b, l, createScalarConstant(b, l, ct, 1.0), args[0]);
          });
      Value y = createElementwiseGeneric(
          rewriter, loc, resultType,
          ValueRange{e, keepDims(rewriter, loc, r, xType.getShape(), reduced)},
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            return toType(b, l, arith::MulFOp::create(b, l, args[0], args[1]),
                          elem);
          });
      rewriter.replaceOp(op, y);
      return success();
    }
    // LogSoftmax: c = m + log(s), y = x - c.
    Value s = reduceSumExp(rewriter, loc, x, m, reduced, ct);
    // Softmax:    r = 1 / s,      y = exp(x - m) * r.
    Value c = createElementwiseGeneric(
        rewriter, loc, redType, ValueRange{s, m},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          if (IsLog) {
            Value lg = math::LogOp::create(b, l, args[0]);
            return arith::AddFOp::create(b, l, args[1], lg);
          }
          return arith::DivFOp::create(b, l, createScalarConstant(b, l, ct, 1.0),
                                       args[0]);
        });
    Value cKeep = keepDims(rewriter, loc, c, xType.getShape(), reduced);
    SmallVector<Value> inputs{x, cKeep};
    if (!IsLog)
      inputs.push_back(keepDims(rewriter, loc, m, xType.getShape(), reduced));
    Value y = createElementwiseGeneric(
        rewriter, loc, resultType, inputs,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value v = toType(b, l, args[0], ct);
          Value r;
          if (IsLog) {
            r = arith::SubFOp::create(b, l, v, args[1]);
          } else {
            Value d = arith::SubFOp::create(b, l, v, args[2]);
            Value e = math::ExpOp::create(b, l, d);
            r = arith::MulFOp::create(b, l, e, args[1]);
          }
          return toType(b, l, r, elem);
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// LayerNormalization
//===----------------------------------------------------------------------===//

struct LayerNormLowering : OpConversionPattern<onnx::LayerNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::LayerNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    RankedTensorType yType =
        getConvertedRankedResultType(getTypeConverter(), op, 0);
    if (!xType || xType != yType)
      return onnx::emitNodeError(op) << "X and Y must be the same type";
    Type elem = xType.getElementType();
    if (!isa<FloatType>(elem))
      return onnx::emitNodeError(op)
             << "supports float inputs only";
    int64_t rank = xType.getRank();
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), rank);
    if (!axis)
      return onnx::emitNodeError(op)
             << "axis " << static_cast<int64_t>(op.getAxis())
             << " is out of range";
    if (op.getStashType() != 1)
      return onnx::emitNodeError(op)
             << "stash_type " << static_cast<int64_t>(op.getStashType())
             << " is not supported (only 1 = float32)";
    for (int64_t i = *axis; i < rank; ++i)
      if (xType.isDynamicDim(i))
        return onnx::emitNodeError(op) << "normalizing over a symbolic "
                                          "dimension is not supported yet";
    Type ct = getComputeType(elem);
    SmallVector<bool> reduced(rank, false);
    for (int64_t i = *axis; i < rank; ++i)
      reduced[i] = true;

    SmallVector<Value> inputs{x};
    auto addParam = [&](Value orig, Value converted) -> FailureOr<int> {
      if (onnx::isNoneValue(orig))
        return -1;
      auto type = dyn_cast<RankedTensorType>(converted.getType());
      if (!type || !type.hasStaticShape() ||
          type.getElementType() != elem ||
          !isBroadcastableTo(type.getShape(),
                             xType.getShape().drop_front(*axis)))
        return failure();
      inputs.push_back(converted);
      return static_cast<int>(inputs.size() - 1);
    };
    FailureOr<int> scaleIdx = addParam(op.getScale(), adaptor.getScale());
    FailureOr<int> biasIdx = addParam(op.getB(), adaptor.getB());
    if (failed(scaleIdx) || failed(biasIdx))
      return onnx::emitNodeError(op)
             << "Scale and B must be static tensors of "
                "X's element type broadcastable to X.shape[axis:]";

    auto [mean, invStd] = computeMeanInvStd(
        rewriter, loc, x, reduced, op.getEpsilon().convertToDouble(), ct);
    Value meanKeep = keepDims(rewriter, loc, mean, xType.getShape(), reduced);
    Value invKeep = keepDims(rewriter, loc, invStd, xType.getShape(), reduced);
    int meanIdx = inputs.size();
    inputs.push_back(meanKeep);
    inputs.push_back(invKeep);
    int sIdx = *scaleIdx, bIdx = *biasIdx;
    Value y = createElementwiseGeneric(
        rewriter, loc, yType, inputs,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value v = toType(b, l, args[0], ct);
          Value d = arith::SubFOp::create(b, l, v, args[meanIdx]);
          Value n = arith::MulFOp::create(b, l, d, args[meanIdx + 1]);
          if (sIdx >= 0)
            n = arith::MulFOp::create(b, l, n, toType(b, l, args[sIdx], ct));
          if (bIdx >= 0)
            n = arith::AddFOp::create(b, l, n, toType(b, l, args[bIdx], ct));
          return toType(b, l, n, elem);
        });
    if (!y)
      return onnx::emitNodeError(op)
             << "cannot build the loop";

    // Optional Mean / InvStdDev outputs (keepdims shape, stash type).
    SmallVector<Value> results{y};
    SmallVector<Value> stats{meanKeep, invKeep};
    for (auto [i, stat] : llvm::enumerate(stats)) {
      Value res = op->getResult(i + 1);
      if (isa<NoneType>(res.getType())) {
        results.push_back(onnx::NoValueOp::create(rewriter, loc));
        continue;
      }
      RankedTensorType type =
          getConvertedRankedResultType(getTypeConverter(), op, i + 1);
      auto statType = cast<RankedTensorType>(stat.getType());
      if (!type || type.getShape() != statType.getShape() ||
          !isa<FloatType>(type.getElementType()))
        return onnx::emitNodeError(op)
               << "unexpected type for output " << i + 1;
      Value out = stat;
      if (type.getElementType() != ct)
        out = createElementwiseGeneric(
            rewriter, loc, type, ValueRange{stat},
            [&](OpBuilder &b, Location l, ValueRange args) -> Value {
              return toType(b, l, args[0], type.getElementType());
            });
      results.push_back(out);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// BatchNormalization (inference)
//===----------------------------------------------------------------------===//

struct BatchNormLowering : OpConversionPattern<onnx::BatchNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::BatchNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (op.getTrainingMode() != 0)
      return onnx::emitNodeError(op)
             << "training_mode = 1 is not supported "
                "(inference only)";
    for (Value extra : {op.getRunningMean(), op.getRunningVar()})
      if (!isa<NoneType>(extra.getType()) && !extra.use_empty())
        return onnx::emitNodeError(op)
               << "running_mean / running_var outputs "
                  "are training-only";
    Value x = adaptor.getX();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    // A symbolic batch (dim 0) is allowed: one elementwise op over the batch.
    auto yType = dyn_cast_or_null<RankedTensorType>(
        getTypeConverter()->convertType(op->getResult(0).getType()));
    if (!xType || xType != yType || xType.getRank() < 2 ||
        llvm::any_of(xType.getShape().drop_front(), ShapedType::isDynamic))
      return onnx::emitNodeError(op)
             << "X (rank >= 2) and Y must be the same "
                "static type (but a symbolic batch)";
    Type elem = xType.getElementType();
    if (!isa<FloatType>(elem))
      return onnx::emitNodeError(op)
             << "supports float inputs only";
    int64_t rank = xType.getRank();
    int64_t channels = xType.getDimSize(1);
    // Parameters of shape [C] are read as [C, 1, ..., 1] so that numpy
    // broadcasting puts them on axis 1.
    SmallVector<int64_t> paramShape(rank - 1, 1);
    paramShape[0] = channels;
    double eps = op.getEpsilon().convertToDouble();

    SmallVector<Value> origParams{op.getScale(), op.getB(), op.getInputMean(),
                                  op.getInputVar()};
    SmallVector<Value> params{adaptor.getScale(), adaptor.getB(),
                              adaptor.getInputMean(), adaptor.getInputVar()};
    for (Value p : params) {
      auto type = dyn_cast<RankedTensorType>(p.getType());
      if (!type || type.getShape() != ArrayRef<int64_t>{channels} ||
          !isa<FloatType>(type.getElementType()))
        return onnx::emitNodeError(op)
               << "scale, B, mean and var must be float "
                  "tensors of shape [C]";
    }
    Type ct = getComputeType(elem);
    auto paramType = RankedTensorType::get(paramShape, elem);

    // All four constant: y = x * a + b with a, b folded per channel.
    SmallVector<SmallVector<double>> values;
    for (Value p : origParams)
      if (auto v = readConstantFloats(p); v && (int64_t)v->size() == channels)
        values.push_back(*v);
    if (values.size() == 4) {
      SmallVector<Attribute> aAttrs, bAttrs;
      for (int64_t c = 0; c < channels; ++c) {
        double a = values[0][c] / std::sqrt(values[3][c] + eps);
        double b = values[1][c] - values[2][c] * a;
        aAttrs.push_back(FloatAttr::get(elem, a));
        bAttrs.push_back(FloatAttr::get(elem, b));
      }
      Value aT = arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(paramType, aAttrs));
      Value bT = arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(paramType, bAttrs));
      Value y = createElementwiseGeneric(
          rewriter, loc, yType, ValueRange{x, aT, bT},
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value m = arith::MulFOp::create(b, l, args[0], args[1]);
            return arith::AddFOp::create(b, l, m, args[2]);
          });
      rewriter.replaceOp(op, {y, onnx::NoValueOp::create(rewriter, loc),
                              onnx::NoValueOp::create(rewriter, loc)});
      return success();
    }

    SmallVector<Value> inputs{x};
    for (Value p : params) {
      auto type = cast<RankedTensorType>(p.getType());
      inputs.push_back(createReshape(
          rewriter, loc, p,
          RankedTensorType::get(paramShape, type.getElementType())));
    }
    Value y = createElementwiseGeneric(
        rewriter, loc, yType, inputs,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value v = toType(b, l, args[0], ct);
          Value scale = toType(b, l, args[1], ct);
          Value bias = toType(b, l, args[2], ct);
          Value mean = toType(b, l, args[3], ct);
          Value var = toType(b, l, args[4], ct);
          Value ve = arith::AddFOp::create(
              b, l, var, createScalarConstant(b, l, ct, eps));
          Value sd = math::SqrtOp::create(b, l, ve);
          Value inv = arith::DivFOp::create(
              b, l, createScalarConstant(b, l, ct, 1.0), sd);
          Value d = arith::SubFOp::create(b, l, v, mean);
          Value n = arith::MulFOp::create(b, l, d, inv);
          n = arith::MulFOp::create(b, l, n, scale);
          n = arith::AddFOp::create(b, l, n, bias);
          return toType(b, l, n, elem);
        });
    rewriter.replaceOp(op, {y, onnx::NoValueOp::create(rewriter, loc),
                            onnx::NoValueOp::create(rewriter, loc)});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// InstanceNormalization
//===----------------------------------------------------------------------===//

struct InstanceNormLowering
    : OpConversionPattern<onnx::InstanceNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::InstanceNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    RankedTensorType yType = getConvertedResultType(getTypeConverter(), op);
    if (!xType || !xType.hasStaticShape() || xType != yType ||
        xType.getRank() < 3)
      return onnx::emitNodeError(op)
             << "input (rank >= 3) and output must be "
                "the same static type";
    Type elem = xType.getElementType();
    if (!isa<FloatType>(elem))
      return onnx::emitNodeError(op)
             << "supports float inputs only";
    int64_t rank = xType.getRank();
    int64_t channels = xType.getDimSize(1);
    SmallVector<int64_t> paramShape(rank - 1, 1);
    paramShape[0] = channels;
    SmallVector<Value> inputs{x};
    for (Value p : {adaptor.getScale(), adaptor.getB()}) {
      auto type = dyn_cast<RankedTensorType>(p.getType());
      if (!type || type.getShape() != ArrayRef<int64_t>{channels} ||
          type.getElementType() != elem)
        return onnx::emitNodeError(op)
               << "scale and B must be tensors of "
                  "shape [C]";
      inputs.push_back(createReshape(rewriter, loc, p,
                                     RankedTensorType::get(paramShape, elem)));
    }
    Type ct = getComputeType(elem);
    SmallVector<bool> reduced(rank, true);
    reduced[0] = reduced[1] = false;
    auto [mean, invStd] = computeMeanInvStd(
        rewriter, loc, x, reduced, op.getEpsilon().convertToDouble(), ct);
    inputs.push_back(keepDims(rewriter, loc, mean, xType.getShape(), reduced));
    inputs.push_back(
        keepDims(rewriter, loc, invStd, xType.getShape(), reduced));
    Value y = createElementwiseGeneric(
        rewriter, loc, yType, inputs,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value v = toType(b, l, args[0], ct);
          Value d = arith::SubFOp::create(b, l, v, args[3]);
          Value n = arith::MulFOp::create(b, l, d, args[4]);
          n = arith::MulFOp::create(b, l, n, toType(b, l, args[1], ct));
          n = arith::AddFOp::create(b, l, n, toType(b, l, args[2], ct));
          return toType(b, l, n, elem);
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

void populateNormalizationPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns) {
  patterns.add<SoftmaxLowering<onnx::SoftmaxOp, false>,
               SoftmaxLowering<onnx::LogSoftmaxOp, true>, LayerNormLowering,
               BatchNormLowering, InstanceNormLowering>(converter,
                                                        patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
