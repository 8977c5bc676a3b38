//===- Reduction.cpp - Reduce* and ArgMax/ArgMin -> linalg.generic --------===//
//
// A reduction is one linalg.generic (reduction iterators over the reduced
// dims) into the reduced shape with the dims dropped, an elementwise finish
// where needed (mean, sqrt, log), and a tensor.expand_shape for keepdims.
// f16/bf16 sums accumulate in f32.
//
// Axes read at run time (a graph input; the number of axes is the input's
// static length, so the result's rank is static and its dims are run dims:
// docs/dynamic-shapes.md): the reduced axes become a bit mask at run time,
// and an scf.index_switch over every set of that many axes runs the
// constant-axes reduction of that set (C(rank, n) cases), its static result
// cast to the result type.
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
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
namespace onnx = kiln::onnx;

namespace kiln::onnx_to_linalg {
namespace {

enum class ReduceKind {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  LogSum,
  LogSumExp,
  SumSquare
};

/// The reduced dims of `op` (data, axes, keepdims, noop_with_empty_axes), or
/// std::nullopt for a no-op reduction (empty axes with noop_with_empty_axes).
/// Fails with an error naming the node.
FailureOr<std::optional<SmallVector<bool>>>
getReducedDims(Operation *op, Value axes, int64_t rank, bool noopWithEmpty) {
  SmallVector<int64_t> axisValues;
  auto axesType = dyn_cast<RankedTensorType>(axes.getType());
  bool noElements = axesType && axesType.hasStaticShape() &&
                    axesType.getNumElements() == 0;
  if (!onnx::isNoneValue(axes) && !noElements) {
    auto values = readConstantInts(axes);
    if (!values)
      return onnx::emitNodeError(op)
             << "axes must be a constant (dynamic axes are not supported)";
    axisValues = *values;
  }
  if (axisValues.empty()) {
    if (noopWithEmpty)
      return std::optional<SmallVector<bool>>();
    return std::optional<SmallVector<bool>>(SmallVector<bool>(rank, true));
  }
  SmallVector<bool> reduced(rank, false);
  for (int64_t axis : axisValues) {
    std::optional<int64_t> norm = normalizeAxis(axis, rank);
    if (!norm)
      return onnx::emitNodeError(op)
             << "axis " << axis << " is out of range for rank " << rank;
    reduced[*norm] = true;
  }
  return std::optional<SmallVector<bool>>(std::move(reduced));
}

/// Whether `axes` is read at run time: present, not a constant, with a
/// static number of elements above 0 (an empty one is the empty list).
bool isRunTimeAxes(Value axes) {
  if (onnx::isNoneValue(axes) || readConstantInts(axes))
    return false;
  auto type = dyn_cast<RankedTensorType>(axes.getType());
  return type && type.hasStaticShape() && type.getNumElements() > 0;
}

/// The most cases (sets of reduced axes) one run-time-axes reduction
/// compiles: C(rank, number of axes).
constexpr size_t kMaxRunTimeAxesCases = 70;

/// `reduced` (static, dims dropped) expanded with unit dims to `resultType`
/// when keepdims asks for it (same element count).
Value reshapeToResult(OpBuilder &b, Location loc, Value reduced,
                      RankedTensorType resultType) {
  auto type = cast<RankedTensorType>(reduced.getType());
  if (type.getShape() == resultType.getShape())
    return reduced;
  return createReshape(b, loc, reduced, resultType);
}

template <typename OpTy>
struct ReduceLowering : OpConversionPattern<OpTy> {
  ReduceLowering(const TypeConverter &converter, MLIRContext *ctx,
                 ReduceKind kind)
      : OpConversionPattern<OpTy>(converter, ctx), kind(kind) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getData();
    auto inputType = dyn_cast<RankedTensorType>(input.getType());
    // Symbolic dims are allowed where they are kept (checked below).
    RankedTensorType resultType =
        getConvertedRankedResultType(this->getTypeConverter(), op);
    if (!inputType || !resultType ||
        (!inputType.hasStaticShape() && kind != ReduceKind::Sum &&
         kind != ReduceKind::Mean && kind != ReduceKind::Max))
      return onnx::emitNodeError(op)
             << "input and result must have static shapes";
    Type elem = inputType.getElementType();
    bool isU = isUnsignedInt(op.getData().getType());
    bool floatOnly = kind == ReduceKind::Mean || kind == ReduceKind::L2 ||
                     kind == ReduceKind::LogSum ||
                     kind == ReduceKind::LogSumExp;
    // Max / Min of bools are any / all: unsigned max / min of i1.
    bool boolMinMax =
        isBool(elem) && (kind == ReduceKind::Max || kind == ReduceKind::Min);
    isU |= boolMinMax;
    if (!(isa<FloatType>(elem) || (isIntNotBool(elem) && !floatOnly) ||
          boolMinMax))
      return onnx::emitNodeError(op)
             << "unsupported element type "
             << getElementTypeOrSelf(op.getData().getType());
    if (resultType.getElementType() != elem)
      return onnx::emitNodeError(op)
             << "result element type differs from the input's";

    if (isRunTimeAxes(adaptor.getAxes()))
      return lowerRunTimeAxes(op, adaptor, rewriter, input, inputType,
                              resultType, isU);
    auto dims = getReducedDims(op, adaptor.getAxes(), inputType.getRank(),
                               op.getNoopWithEmptyAxes() != 0);
    if (failed(dims))
      return failure();
    if (!dims->has_value()) {
      // No-op: the input unchanged. For L1, L2, SumSquare, LogSum and
      // LogSumExp the reference applies the elementwise part (abs, square,
      // ...) to the unreduced input: not handled, reported.
      if (kind != ReduceKind::Sum && kind != ReduceKind::Mean &&
          kind != ReduceKind::Max && kind != ReduceKind::Min &&
          kind != ReduceKind::Prod)
        return onnx::emitNodeError(op)
               << "noop_with_empty_axes with empty axes is not "
                          "supported for this reduction";
      if (inputType != resultType)
        return onnx::emitNodeError(op)
               << "no-op reduction changes the type";
      rewriter.replaceOp(op, input);
      return success();
    }
    SmallVector<bool> reduced = **dims;
    bool keepdims = op.getKeepdims() != 0;
    SmallVector<int64_t> expected =
        getReducedShape(inputType.getShape(), reduced, keepdims);
    if (ArrayRef<int64_t>(expected) != resultType.getShape())
      return onnx::emitNodeError(op)
             << "result type " << resultType
             << " does not match the reduction of " << inputType;
    int64_t count = 1;
    for (auto [dim, red] : llvm::zip(inputType.getShape(), reduced)) {
      if (red && ShapedType::isDynamic(dim))
        return onnx::emitNodeError(op) << "a reduction over a symbolic "
                                          "dimension is not supported yet";
      if (red)
        count *= dim;
    }

    Value result = emitReduction(rewriter, loc, input, reduced, count, isU);
    rewriter.replaceOp(op, reshapeToResult(rewriter, loc, result, resultType));
    return success();
  }

  /// The reduction of `input` over the `reduced` dims (static; `count`
  /// elements each), dims dropped: one linalg.generic and an elementwise
  /// finish where needed (mean, sqrt, log).
  Value emitReduction(OpBuilder &rewriter, Location loc, Value input,
                      ArrayRef<bool> reduced, int64_t count, bool isU) const {
    Type elem = cast<RankedTensorType>(input.getType()).getElementType();
    auto floatType = dyn_cast<FloatType>(elem);
    bool widen = floatType && floatType.getWidth() < 32 &&
                 kind != ReduceKind::Max && kind != ReduceKind::Min;
    Type acc = widen ? Type(rewriter.getF32Type()) : elem;
    auto toAcc = [&](OpBuilder &b, Location l, Value x) {
      return widen ? Value(arith::ExtFOp::create(b, l, acc, x)) : x;
    };
    auto add = [&](OpBuilder &b, Location l, Value x, Value y) -> Value {
      if (isa<FloatType>(acc))
        return arith::AddFOp::create(b, l, x, y);
      return arith::AddIOp::create(b, l, x, y);
    };
    auto mul = [&](OpBuilder &b, Location l, Value x, Value y) -> Value {
      if (isa<FloatType>(acc))
        return arith::MulFOp::create(b, l, x, y);
      return arith::MulIOp::create(b, l, x, y);
    };

    Value result;
    switch (kind) {
    case ReduceKind::Max:
    case ReduceKind::Min: {
      bool isMax = kind == ReduceKind::Max;
      Value init = createMinMaxInit(rewriter, loc, elem, isMax, isU);
      result = createReductionGeneric(
          rewriter, loc, input, reduced, elem, init, {},
          [&](OpBuilder &b, Location l, Value x, ValueRange, Value a) -> Value {
            if (isa<FloatType>(elem))
              return isMax ? Value(arith::MaximumFOp::create(b, l, x, a))
                           : Value(arith::MinimumFOp::create(b, l, x, a));
            if (isU)
              return isMax ? Value(arith::MaxUIOp::create(b, l, x, a))
                           : Value(arith::MinUIOp::create(b, l, x, a));
            return isMax ? Value(arith::MaxSIOp::create(b, l, x, a))
                         : Value(arith::MinSIOp::create(b, l, x, a));
          });
      break;
    }
    case ReduceKind::Prod: {
      Value init = createScalarConstant(rewriter, loc, acc, 1.0);
      result = createReductionGeneric(
          rewriter, loc, input, reduced, acc, init, {},
          [&](OpBuilder &b, Location l, Value x, ValueRange, Value a) {
            return mul(b, l, toAcc(b, l, x), a);
          });
      break;
    }
    case ReduceKind::LogSumExp: {
      // m = max(x); log(sum(exp(x - m))) + m, with m = 0 where m is -inf
      // or +inf so that all -inf rows give -inf and no NaN appears.
      Value init = createMinMaxInit(rewriter, loc, acc, /*isMax=*/true, false);
      Value maxT = createReductionGeneric(
          rewriter, loc, input, reduced, acc, init, {},
          [&](OpBuilder &b, Location l, Value x, ValueRange, Value a) -> Value {
            return arith::MaximumFOp::create(b, l, toAcc(b, l, x), a);
          });
      RankedTensorType redType = cast<RankedTensorType>(maxT.getType());
      maxT = createElementwiseGeneric(
          rewriter, loc, redType, ValueRange{maxT},
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value m = args[0];
            Value absM = math::AbsFOp::create(b, l, m);
            Value inf = createScalarConstant(b, l, acc, INFINITY);
            Value isInf =
                arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, absM,
                                      inf);
            return arith::SelectOp::create(
                b, l, isInf, createScalarConstant(b, l, acc, 0.0), m);
          });
      Value zero = createScalarConstant(rewriter, loc, acc, 0.0);
      Value sum = createReductionGeneric(
          rewriter, loc, input, reduced, acc, zero, ValueRange{maxT},
          [&](OpBuilder &b, Location l, Value x, ValueRange extras,
              Value a) -> Value {
            Value d = arith::SubFOp::create(b, l, toAcc(b, l, x), extras[0]);
            Value e = math::ExpOp::create(b, l, d);
            return arith::AddFOp::create(b, l, e, a);
          });
      result = createElementwiseGeneric(
          rewriter, loc, redType.clone(elem), ValueRange{sum, maxT},
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value lg = math::LogOp::create(b, l, args[0]);
            Value r = arith::AddFOp::create(b, l, lg, args[1]);
            return widen ? Value(arith::TruncFOp::create(b, l, elem, r)) : r;
          });
      break;
    }
    default: {
      Value init = createScalarConstant(rewriter, loc, acc, 0.0);
      ReduceKind k = kind;
      result = createReductionGeneric(
          rewriter, loc, input, reduced, acc, init, {},
          [&](OpBuilder &b, Location l, Value x, ValueRange, Value a) -> Value {
            Value v = toAcc(b, l, x);
            if (k == ReduceKind::L1) {
              if (isa<FloatType>(acc))
                v = math::AbsFOp::create(b, l, v);
              else if (!isU)
                v = math::AbsIOp::create(b, l, v);
            } else if (k == ReduceKind::L2 || k == ReduceKind::SumSquare) {
              v = mul(b, l, v, v);
            }
            return add(b, l, v, a);
          });
      bool finish = widen || k == ReduceKind::Mean || k == ReduceKind::L2 ||
                    k == ReduceKind::LogSum;
      if (finish) {
        auto redType = cast<RankedTensorType>(result.getType());
        result = createElementwiseGeneric(
            rewriter, loc, redType.clone(elem), ValueRange{result},
            [&](OpBuilder &b, Location l, ValueRange args) -> Value {
              Value v = args[0];
              if (k == ReduceKind::Mean)
                v = arith::DivFOp::create(
                    b, l, v,
                    createScalarConstant(b, l, acc, static_cast<double>(count)));
              else if (k == ReduceKind::L2)
                v = math::SqrtOp::create(b, l, v);
              else if (k == ReduceKind::LogSum)
                v = math::LogOp::create(b, l, v);
              return widen ? Value(arith::TruncFOp::create(b, l, elem, v)) : v;
            });
      }
      break;
    }
    }
    return result;
  }

  /// Run-time axes (see the file comment): the set of reduced axes as a bit
  /// mask computed from the values (normalized, checked in range and
  /// distinct by a kiln.check naming the node), an scf.index_switch over
  /// every set of that many axes whose case is the constant-axes reduction,
  /// cast to the result type whose reduced-or-kept dims are run dims.
  LogicalResult lowerRunTimeAxes(OpTy op, typename OpTy::Adaptor adaptor,
                                 ConversionPatternRewriter &rewriter,
                                 Value input, RankedTensorType inputType,
                                 RankedTensorType resultType, bool isU) const {
    Location loc = op.getLoc();
    Value axes = adaptor.getAxes();
    auto axesType = cast<RankedTensorType>(axes.getType());
    if (axesType.getRank() != 1 || !isa<IntegerType>(axesType.getElementType()))
      return onnx::emitNodeError(op)
             << "input 'axes' must be a 1-D integer tensor, got " << axesType;
    if (!inputType.hasStaticShape())
      return onnx::emitNodeError(op)
             << "axes read at run time need a static shape of 'data', got "
             << inputType;
    int64_t rank = inputType.getRank();
    int64_t n = axesType.getDimSize(0);
    if (n > rank)
      return onnx::emitNodeError(op)
             << "input 'axes' holds " << n << " values, more than the rank "
             << rank << " of 'data' (the axes must be distinct)";
    bool keepdims = op.getKeepdims() != 0;
    if (resultType.getRank() != (keepdims ? rank : rank - n))
      return onnx::emitNodeError(op)
             << "result type " << resultType << " does not match a reduction of "
             << inputType << " over " << n << " axes";
    SmallVector<uint64_t> masks;
    for (uint64_t m = 0; rank < 16 && m < (uint64_t{1} << rank); ++m)
      if (llvm::popcount(m) == n)
        masks.push_back(m);
    if (rank >= 16 || masks.size() > kMaxRunTimeAxesCases)
      return onnx::emitNodeError(op)
             << "axes read at run time: " << n << " of " << rank
             << " axes is too many sets of axes to compile (at most "
             << kMaxRunTimeAxesCases << "); make 'axes' a constant";
    // Each case's static result must fit the result type.
    SmallVector<SmallVector<bool>> sets;
    for (uint64_t m : masks) {
      SmallVector<bool> reduced;
      for (int64_t a = 0; a < rank; ++a)
        reduced.push_back((m >> a) & 1);
      SmallVector<int64_t> shape =
          getReducedShape(inputType.getShape(), reduced, keepdims);
      for (auto [got, want] : llvm::zip(shape, resultType.getShape()))
        if (!ShapedType::isDynamic(want) && got != want)
          return onnx::emitNodeError(op)
                 << "result type " << resultType
                 << " does not match the reduction of " << inputType;
      sets.push_back(std::move(reduced));
    }

    // The mask of the reduced axes, with the range and distinctness check.
    auto idx = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
    };
    Value zero = idx(0), rankV = idx(rank), one = idx(1);
    Value mask = zero;
    Value ok = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    for (int64_t i = 0; i < n; ++i) {
      Value a = tensor::ExtractOp::create(rewriter, loc, axes, ValueRange{idx(i)});
      a = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), a);
      Value neg = arith::CmpIOp::create(rewriter, loc,
                                        arith::CmpIPredicate::slt, a, zero);
      a = arith::SelectOp::create(
          rewriter, loc, neg, arith::AddIOp::create(rewriter, loc, a, rankV), a);
      Value inRange = arith::AndIOp::create(
          rewriter, loc,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge, a,
                                zero),
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, a,
                                rankV));
      a = arith::MinSIOp::create(rewriter, loc,
                                 arith::MaxSIOp::create(rewriter, loc, a, zero),
                                 idx(rank - 1));
      Value bit = arith::ShLIOp::create(rewriter, loc, one, a);
      Value seen = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(rewriter, loc, mask, bit), zero);
      Value fresh = arith::XOrIOp::create(
          rewriter, loc, seen, arith::ConstantIntOp::create(rewriter, loc, 1, 1));
      ok = arith::AndIOp::create(rewriter, loc, ok,
                                 arith::AndIOp::create(rewriter, loc, inRange,
                                                       fresh));
      mask = arith::OrIOp::create(rewriter, loc, mask, bit);
    }
    Value okTensor = tensor::FromElementsOp::create(
        rewriter, loc, RankedTensorType::get({}, rewriter.getI1Type()),
        ValueRange{ok});
    kiln::CheckOp::create(rewriter, loc, okTensor,
                          getNodeMessagePrefix(op) +
                              "axes out of range or repeated");

    // One case per set of axes; the last set is the default (reached only
    // with it, or after the check failed).
    SmallVector<int64_t> cases;
    for (uint64_t m : ArrayRef(masks).drop_back())
      cases.push_back(static_cast<int64_t>(m));
    auto sw = scf::IndexSwitchOp::create(rewriter, loc, TypeRange{resultType},
                                         mask, cases, cases.size());
    auto fill = [&](Region &region, ArrayRef<bool> reduced) {
      OpBuilder::InsertionGuard guard(rewriter);
      Block *block = rewriter.createBlock(&region);
      rewriter.setInsertionPointToStart(block);
      int64_t count = 1;
      for (auto [dim, red] : llvm::zip(inputType.getShape(), reduced))
        if (red)
          count *= dim;
      Value r = emitReduction(rewriter, loc, input, reduced, count, isU);
      auto caseType = RankedTensorType::get(
          getReducedShape(inputType.getShape(), reduced, keepdims),
          resultType.getElementType());
      r = reshapeToResult(rewriter, loc, r, caseType);
      if (caseType != resultType)
        r = tensor::CastOp::create(rewriter, loc, resultType, r);
      scf::YieldOp::create(rewriter, loc, r);
    };
    for (size_t i = 0; i + 1 < sets.size(); ++i)
      fill(sw.getCaseRegions()[i], sets[i]);
    fill(sw.getDefaultRegion(), sets.back());
    rewriter.replaceOp(op, sw.getResult(0));
    return success();
  }

  ReduceKind kind;
};

//===----------------------------------------------------------------------===//
// ArgMax, ArgMin
//===----------------------------------------------------------------------===//

template <typename OpTy, bool IsMax>
struct ArgLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getData();
    auto inputType = dyn_cast<RankedTensorType>(input.getType());
    RankedTensorType resultType =
        getConvertedResultType(this->getTypeConverter(), op);
    if (!inputType || !inputType.hasStaticShape() || !resultType ||
        !resultType.getElementType().isInteger(64))
      return onnx::emitNodeError(op)
             << "static shapes and an int64 result are required";
    Type elem = inputType.getElementType();
    bool isU = isUnsignedInt(op.getData().getType());
    if (!isa<FloatType>(elem) && !isIntNotBool(elem))
      return onnx::emitNodeError(op)
             << "unsupported element type " << elem;
    int64_t rank = inputType.getRank();
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), rank);
    if (!axis)
      return onnx::emitNodeError(op)
             << "axis " << static_cast<int64_t>(op.getAxis()) << " is out of range";
    bool last = op.getSelectLastIndex() != 0;
    SmallVector<bool> reduced(rank, false);
    reduced[*axis] = true;
    SmallVector<int64_t> expected = getReducedShape(
        inputType.getShape(), reduced, op.getKeepdims() != 0);
    if (ArrayRef<int64_t>(expected) != resultType.getShape())
      return onnx::emitNodeError(op)
             << "result type " << resultType
             << " does not match the input " << inputType;

    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t i = 0; i < rank; ++i) {
      if (reduced[i]) {
        iterators.push_back(utils::IteratorType::reduction);
      } else {
        iterators.push_back(utils::IteratorType::parallel);
        outExprs.push_back(getAffineDimExpr(i, ctx));
      }
    }
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
    SmallVector<int64_t> redShape =
        getReducedShape(inputType.getShape(), reduced, false);
    auto valType = RankedTensorType::get(redShape, elem);
    auto idxType = RankedTensorType::get(redShape, rewriter.getI64Type());
    Value valInit = createFilledTensor(
        rewriter, loc, valType,
        createMinMaxInit(rewriter, loc, elem, IsMax, isU));
    Value idxInit = createFilledTensor(
        rewriter, loc, idxType,
        createIntConstant(rewriter, loc, rewriter.getI64Type(), 0));
    SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(rank, ctx),
                                outMap, outMap};
    int64_t axisDim = *axis;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{valType, idxType}, ValueRange{input},
        ValueRange{valInit, idxInit}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], best = args[1], bestIdx = args[2];
          Value idx = linalg::IndexOp::create(b, l, axisDim);
          idx = arith::IndexCastOp::create(b, l, b.getI64Type(), idx);
          Value better;
          if (isa<FloatType>(elem)) {
            arith::CmpFPredicate pred =
                IsMax ? (last ? arith::CmpFPredicate::OGE
                              : arith::CmpFPredicate::OGT)
                      : (last ? arith::CmpFPredicate::OLE
                              : arith::CmpFPredicate::OLT);
            better = arith::CmpFOp::create(b, l, pred, x, best);
          } else {
            arith::CmpIPredicate pred;
            if (IsMax)
              pred = last ? (isU ? arith::CmpIPredicate::uge
                                 : arith::CmpIPredicate::sge)
                          : (isU ? arith::CmpIPredicate::ugt
                                 : arith::CmpIPredicate::sgt);
            else
              pred = last ? (isU ? arith::CmpIPredicate::ule
                                 : arith::CmpIPredicate::sle)
                          : (isU ? arith::CmpIPredicate::ult
                                 : arith::CmpIPredicate::slt);
            better = arith::CmpIOp::create(b, l, pred, x, best);
          }
          // A row of all -inf (or the integer minimum) keeps index 0, the
          // initial index.
          Value newBest = arith::SelectOp::create(b, l, better, x, best);
          Value newIdx = arith::SelectOp::create(b, l, better, idx, bestIdx);
          linalg::YieldOp::create(b, l, ValueRange{newBest, newIdx});
        });
    rewriter.replaceOp(
        op, reshapeToResult(rewriter, loc, generic.getResult(1), resultType));
    return success();
  }
};

} // namespace

void populateReductionPatterns(TypeConverter &converter,
                               RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ReduceLowering<onnx::ReduceSumOp>>(converter, ctx,
                                                  ReduceKind::Sum);
  patterns.add<ReduceLowering<onnx::ReduceMeanOp>>(converter, ctx,
                                                   ReduceKind::Mean);
  patterns.add<ReduceLowering<onnx::ReduceMaxOp>>(converter, ctx,
                                                  ReduceKind::Max);
  patterns.add<ReduceLowering<onnx::ReduceMinOp>>(converter, ctx,
                                                  ReduceKind::Min);
  patterns.add<ReduceLowering<onnx::ReduceProdOp>>(converter, ctx,
                                                   ReduceKind::Prod);
  patterns.add<ReduceLowering<onnx::ReduceL1Op>>(converter, ctx,
                                                 ReduceKind::L1);
  patterns.add<ReduceLowering<onnx::ReduceL2Op>>(converter, ctx,
                                                 ReduceKind::L2);
  patterns.add<ReduceLowering<onnx::ReduceLogSumOp>>(converter, ctx,
                                                     ReduceKind::LogSum);
  patterns.add<ReduceLowering<onnx::ReduceLogSumExpOp>>(converter, ctx,
                                                        ReduceKind::LogSumExp);
  patterns.add<ReduceLowering<onnx::ReduceSumSquareOp>>(converter, ctx,
                                                        ReduceKind::SumSquare);
  patterns.add<ArgLowering<onnx::ArgMaxOp, true>,
               ArgLowering<onnx::ArgMinOp, false>>(converter, ctx);
}

} // namespace kiln::onnx_to_linalg
