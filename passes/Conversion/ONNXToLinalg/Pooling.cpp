//===- Pooling.cpp - MaxPool, AveragePool, global pools to linalg ---------===//
//
// MaxPool / AveragePool stay NCHW: tensor.pad (-inf for max, 0 for average;
// the right/bottom pad grows by what ceil_mode's last window needs), then
// 1-D and 2-D (1-D runs as 2-D with a unit height): linalg.pooling_nchw_max /
// linalg.pooling_nchw_sum with a tensor.empty window, the accumulator
// linalg.fill'ed; 3-D and more, an unsigned MaxPool, or a MaxPool whose
// Indices output is used: one linalg.generic over (N, C, out..., window...)
// reading the padded input at out * stride + window * dilation (MaxPool's
// Indices: the flat index, row-major or with storage_order 1 column-major
// over the spatial dims, of the first maximum in the window, kept beside the
// maximum). AveragePool divides in a following elementwise generic by a
// per-window count computed at compile time (count_include_pad 0: real
// elements; 1: real + explicit pad elements, never ceil_mode's extra ones).
// GlobalAveragePool / GlobalMaxPool: linalg.reduce over the spatial dims.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;

namespace kiln::onnx_to_linalg {
namespace {

using kiln::onnx::emitNodeError;

SmallVector<int64_t> getI64Array(std::optional<ArrayAttr> attr, size_t size,
                                 int64_t defaultValue) {
  if (!attr)
    return SmallVector<int64_t>(size, defaultValue);
  return llvm::map_to_vector(*attr, [](Attribute a) {
    return cast<IntegerAttr>(a).getInt();
  });
}

/// The window geometry of a pool over any number of spatial dims
/// (expandTo2D gives a 1-D one a unit first dim).
struct PoolGeometry {
  SmallVector<int64_t> kernel, strides, dilations;
  SmallVector<int64_t> padBegin, padEnd; // explicit pads (no ceil extra)
  SmallVector<int64_t> extraEnd;         // what ceil_mode adds at the end
  SmallVector<int64_t> inSpatial, outSpatial;
  SmallVector<int64_t> xShape, yShape; // (N, C, spatial...)
  size_t rank() const { return kernel.size(); }
};

/// `g` (1-D or 2-D) as a 2-D pool: a 1-D one gets a unit first spatial dim.
PoolGeometry expandTo2D(PoolGeometry g) {
  if (g.rank() == 1) {
    for (auto *v : {&g.kernel, &g.strides, &g.dilations, &g.inSpatial,
                    &g.outSpatial})
      v->insert(v->begin(), 1);
    for (auto *v : {&g.padBegin, &g.padEnd, &g.extraEnd})
      v->insert(v->begin(), 0);
    g.xShape.insert(g.xShape.begin() + 2, 1);
    g.yShape.insert(g.yShape.begin() + 2, 1);
  }
  return g;
}

/// Reads and checks the pool attributes of `op` against input `xType` and
/// result `yType`. Emits the error and returns std::nullopt when unsupported.
template <typename PoolOp>
std::optional<PoolGeometry> getPoolGeometry(PoolOp op, RankedTensorType xType,
                                            RankedTensorType yType) {
  int64_t rank = xType.getRank();
  if (rank < 3) {
    emitNodeError(op) << "pooling needs an input of rank >= 3 (input "
                      << xType << ")";
    return std::nullopt;
  }
  if (yType.getRank() != rank) {
    emitNodeError(op) << "result rank does not match the input";
    return std::nullopt;
  }
  size_t spatial = rank - 2;
  PoolGeometry g;
  g.kernel = getI64Array(op.getKernelShape(), spatial, 1);
  g.strides = getI64Array(op.getStrides(), spatial, 1);
  g.dilations = getI64Array(op.getDilations(), spatial, 1);
  SmallVector<int64_t> pads = getI64Array(op.getPads(), 2 * spatial, 0);
  if (g.kernel.size() != spatial || g.strides.size() != spatial ||
      g.dilations.size() != spatial || pads.size() != 2 * spatial) {
    emitNodeError(op)
        << "kernel_shape/strides/dilations/pads have the wrong number of "
           "values";
    return std::nullopt;
  }
  bool ceilMode = op.getCeilMode() != 0;
  StringRef autoPad = op.getAutoPad();
  for (size_t i = 0; i < spatial; ++i) {
    int64_t in = xType.getDimSize(2 + i), out = yType.getDimSize(2 + i);
    int64_t k = g.kernel[i], s = g.strides[i], d = g.dilations[i];
    if (k < 1 || s < 1 || d < 1) {
      emitNodeError(op) << "non-positive kernel_shape/strides/dilations";
      return std::nullopt;
    }
    auto p = computeWindowPads(autoPad, in, k, s, d, pads[i],
                               pads[spatial + i]);
    if (!p) {
      emitNodeError(op) << "unsupported auto_pad '" << autoPad << "'";
      return std::nullopt;
    }
    if (p->first < 0 || p->second < 0) {
      emitNodeError(op) << "negative pads are not supported";
      return std::nullopt;
    }
    int64_t padded = in + p->first + p->second;
    int64_t window = (k - 1) * d + 1;
    if (padded < window) {
      emitNodeError(op) << "pooling window is larger than the padded input";
      return std::nullopt;
    }
    int64_t floorOut = (padded - window) / s + 1;
    int64_t ceilOut = (padded - window + s - 1) / s + 1;
    // ONNX / onnxruntime: the last window must start inside the input or the
    // left padding.
    if (ceilOut > floorOut && (ceilOut - 1) * s >= in + p->first)
      ceilOut = floorOut;
    int64_t expected = ceilMode ? ceilOut : floorOut;
    if (out != expected) {
      emitNodeError(op) << "result type " << yType
                        << " does not match the pooled size " << expected
                        << " of spatial dim " << i;
      return std::nullopt;
    }
    int64_t needed = (out - 1) * s + window;
    g.padBegin.push_back(p->first);
    g.padEnd.push_back(p->second);
    g.extraEnd.push_back(std::max<int64_t>(0, needed - padded));
    g.inSpatial.push_back(in);
    g.outSpatial.push_back(out);
  }
  g.xShape = llvm::to_vector(xType.getShape());
  g.yShape = llvm::to_vector(yType.getShape());
  return g;
}

/// `x` (N, C, spatial...) padded per `g` with `padValue`.
Value padInput(OpBuilder &b, Location loc, Value x, const PoolGeometry &g,
               Value padValue) {
  SmallVector<int64_t> low = {0, 0}, high = {0, 0};
  for (size_t i = 0; i < g.rank(); ++i) {
    low.push_back(g.padBegin[i]);
    high.push_back(g.padEnd[i] + g.extraEnd[i]);
  }
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; }))
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getShape());
  for (size_t i = 0; i < shape.size(); ++i)
    shape[i] += low[i] + high[i];
  return tensor::PadOp::create(
             b, loc, RankedTensorType::get(shape, type.getElementType()), x,
             getAsIndexOpFoldResult(b.getContext(), low),
             getAsIndexOpFoldResult(b.getContext(), high), padValue)
      .getResult();
}

/// The lowest value of `elemType` (-inf for floats; 0 for unsigned).
TypedAttr getLowestAttr(Type elemType, bool isUnsigned = false) {
  if (auto floatType = dyn_cast<FloatType>(elemType))
    return FloatAttr::get(
        floatType, APFloat::getInf(floatType.getFloatSemantics(), true));
  auto intType = cast<IntegerType>(elemType);
  return IntegerAttr::get(intType,
                          isUnsigned
                              ? APInt::getZero(intType.getWidth())
                              : APInt::getSignedMinValue(intType.getWidth()));
}

/// One linalg.generic over (N, C, out..., window...) reading `padded` at
/// out * stride + window * dilation (and an empty window tensor, which gives
/// the window loops their sizes) into `inits` (N, C, out...). `body` gets
/// the input element and the accumulators and returns the new ones.
SmallVector<Value> createPoolGeneric(
    OpBuilder &b, Location loc, Value padded, const PoolGeometry &g,
    ValueRange inits,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)>
        body) {
  MLIRContext *ctx = b.getContext();
  int64_t k = static_cast<int64_t>(g.rank()), numLoops = 2 + 2 * k;
  SmallVector<AffineExpr> inExprs = {getAffineDimExpr(0, ctx),
                                     getAffineDimExpr(1, ctx)};
  SmallVector<AffineExpr> winExprs, outExprs = inExprs;
  for (int64_t i = 0; i < k; ++i) {
    AffineExpr o = getAffineDimExpr(2 + i, ctx),
               w = getAffineDimExpr(2 + k + i, ctx);
    inExprs.push_back(o * g.strides[i] + w * g.dilations[i]);
    winExprs.push_back(w);
    outExprs.push_back(o);
  }
  AffineMap outMap = AffineMap::get(numLoops, 0, outExprs, ctx);
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, inExprs, ctx),
                                 AffineMap::get(numLoops, 0, winExprs, ctx)};
  maps.append(inits.size(), outMap);
  SmallVector<utils::IteratorType> iterators(2 + k,
                                             utils::IteratorType::parallel);
  iterators.append(k, utils::IteratorType::reduction);
  Type elemType = cast<RankedTensorType>(padded.getType()).getElementType();
  Value window = createEmptyTensor(b, loc, g.kernel, elemType);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange(inits), ValueRange{padded, window}, inits, maps,
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l,
                                body(nb, l, args[0], args.drop_front(2)));
      });
  return SmallVector<Value>(op.getResults());
}

//===----------------------------------------------------------------------===//
// MaxPool
//===----------------------------------------------------------------------===//

struct MaxPoolLowering : OpConversionPattern<onnx::MaxPoolOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType yType = getConvertedResultType(getTypeConverter(), op);
    RankedTensorType xType = getStaticTensorType(adaptor.getX());
    if (!yType || !xType)
      return emitNodeError(op) << "MaxPool needs static shapes", failure();
    Type elemType = yType.getElementType();
    bool isUnsigned = isUnsignedInt(op.getX().getType());
    if (!isa<FloatType>(elemType) && !isIntNotBool(elemType))
      return emitNodeError(op) << "MaxPool on " << op.getX().getType()
                               << " is not supported",
             failure();
    std::optional<PoolGeometry> g = getPoolGeometry(op, xType, yType);
    if (!g)
      return failure();
    bool withIndices = !isa<NoneType>(op.getIndices().getType()) &&
                       !op.getIndices().use_empty();
    Value lowest = arith::ConstantOp::create(
        rewriter, loc, getLowestAttr(elemType, isUnsigned));

    if (g->rank() <= 2 && !isUnsigned && !withIndices) {
      PoolGeometry g2 = expandTo2D(*g);
      Value x = createReshape(rewriter, loc, adaptor.getX(),
                              RankedTensorType::get(g2.xShape, elemType));
      Value padded = padInput(rewriter, loc, x, g2, lowest);
      auto accType = RankedTensorType::get(g2.yShape, elemType);
      Value acc = createFilledTensor(rewriter, loc, accType, lowest);
      Value window = createEmptyTensor(rewriter, loc, g2.kernel, elemType);
      Value pooled = linalg::PoolingNchwMaxOp::create(
                         rewriter, loc, TypeRange{accType},
                         ValueRange{padded, window}, ValueRange{acc},
                         rewriter.getI64TensorAttr(g2.strides),
                         rewriter.getI64TensorAttr(g2.dilations))
                         .getResult(0);
      // The Indices result, when present, is unused: it is dropped.
      SmallVector<Value> results = {
          createReshape(rewriter, loc, pooled, yType)};
      results.resize(op->getNumResults(), Value());
      rewriter.replaceOp(op, results);
      return success();
    }

    Value padded = padInput(rewriter, loc, adaptor.getX(), *g, lowest);
    SmallVector<Value> inits = {createFilledTensor(rewriter, loc, yType, lowest)};
    Type i64 = rewriter.getI64Type();
    if (withIndices)
      inits.push_back(createFilledTensor(
          rewriter, loc, RankedTensorType::get(yType.getShape(), i64),
          createIntConstant(rewriter, loc, i64, 0)));
    bool columnMajor = op.getStorageOrder() != 0;
    int64_t k = static_cast<int64_t>(g->rank());
    SmallVector<Value> pooled = createPoolGeneric(
        rewriter, loc, padded, *g, inits,
        [&](OpBuilder &b, Location l, Value in,
            ValueRange accs) -> SmallVector<Value> {
          Value acc = accs[0];
          if (!withIndices) {
            if (isa<FloatType>(elemType))
              return {arith::MaximumFOp::create(b, l, acc, in)};
            if (isUnsigned)
              return {arith::MaxUIOp::create(b, l, acc, in)};
            return {arith::MaxSIOp::create(b, l, acc, in)};
          }
          // The first maximum wins (strictly greater replaces), as in
          // onnxruntime; a pad element (lowest) never does.
          Value better =
              isa<FloatType>(elemType)
                  ? arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, in,
                                          acc)
                        .getResult()
                  : arith::CmpIOp::create(b, l,
                                          isUnsigned ? arith::CmpIPredicate::ugt
                                                     : arith::CmpIPredicate::sgt,
                                          in, acc)
                        .getResult();
          auto cst = [&](int64_t v) {
            return arith::ConstantIndexOp::create(b, l, v).getResult();
          };
          auto idx = [&](int64_t d) {
            return linalg::IndexOp::create(b, l, d).getResult();
          };
          auto mul = [&](Value a, int64_t c) {
            return arith::MulIOp::create(b, l, a, cst(c)).getResult();
          };
          auto add = [&](Value a, Value c) {
            return arith::AddIOp::create(b, l, a, c).getResult();
          };
          // Position in the unpadded input along each spatial dim.
          SmallVector<Value> pos;
          for (int64_t i = 0; i < k; ++i)
            pos.push_back(arith::SubIOp::create(
                b, l,
                add(mul(idx(2 + i), g->strides[i]),
                    mul(idx(2 + k + i), g->dilations[i])),
                cst(g->padBegin[i])));
          // (n * C + c) * prod(spatial) + the spatial offset: row-major, or
          // column-major with storage_order 1.
          int64_t plane = 1;
          for (int64_t d : g->inSpatial)
            plane *= d;
          Value flat = add(mul(idx(0), g->xShape[1]), idx(1));
          flat = mul(flat, plane);
          Value spatial;
          if (!columnMajor) {
            spatial = pos[0];
            for (int64_t i = 1; i < k; ++i)
              spatial = add(mul(spatial, g->inSpatial[i]), pos[i]);
          } else {
            spatial = pos[k - 1];
            for (int64_t i = k - 2; i >= 0; --i)
              spatial = add(mul(spatial, g->inSpatial[i]), pos[i]);
          }
          flat = arith::IndexCastOp::create(b, l, i64, add(flat, spatial));
          return {arith::SelectOp::create(b, l, better, in, acc),
                  arith::SelectOp::create(b, l, better, flat, accs[1])};
        });
    SmallVector<Value> results = {pooled[0]};
    if (withIndices)
      results.push_back(pooled[1]);
    results.resize(op->getNumResults(), Value());
    rewriter.replaceOp(op, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// AveragePool
//===----------------------------------------------------------------------===//

/// Per output position along one dim: how many window taps count.
SmallVector<int64_t> windowCounts(const PoolGeometry &g, size_t dim,
                                  bool includePad) {
  SmallVector<int64_t> counts;
  int64_t lo = includePad ? -g.padBegin[dim] : 0;
  int64_t hi = includePad ? g.inSpatial[dim] + g.padEnd[dim]
                          : g.inSpatial[dim];
  for (int64_t o = 0; o < g.outSpatial[dim]; ++o) {
    int64_t count = 0;
    for (int64_t t = 0; t < g.kernel[dim]; ++t) {
      int64_t pos = o * g.strides[dim] + t * g.dilations[dim] - g.padBegin[dim];
      if (pos >= lo && pos < hi)
        ++count;
    }
    counts.push_back(count);
  }
  return counts;
}

struct AveragePoolLowering : OpConversionPattern<onnx::AveragePoolOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::AveragePoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType yType = getConvertedResultType(getTypeConverter(), op);
    RankedTensorType xType = getStaticTensorType(adaptor.getX());
    if (!yType || !xType)
      return emitNodeError(op) << "AveragePool needs static shapes", failure();
    Type elemType = yType.getElementType();
    if (!isa<FloatType>(elemType))
      return emitNodeError(op) << "AveragePool on " << op.getX().getType()
                               << " is not supported",
             failure();
    std::optional<PoolGeometry> g3 = getPoolGeometry(op, xType, yType);
    if (!g3)
      return failure();
    // 1-D and 2-D: the named NCHW sum pooling; more: a generic.
    bool named = g3->rank() <= 2;
    PoolGeometry g = named ? expandTo2D(*g3) : *g3;

    Value x = createReshape(rewriter, loc, adaptor.getX(),
                            RankedTensorType::get(g.xShape, elemType));
    Value zero = createScalarConstant(rewriter, loc, elemType, 0.0);
    Value padded = padInput(rewriter, loc, x, g, zero);
    auto accType = RankedTensorType::get(g.yShape, elemType);
    Value acc = createFilledTensor(rewriter, loc, accType, zero);
    Value sum;
    if (named) {
      Value window = createEmptyTensor(rewriter, loc, g.kernel, elemType);
      sum = linalg::PoolingNchwSumOp::create(
                rewriter, loc, TypeRange{accType}, ValueRange{padded, window},
                ValueRange{acc}, rewriter.getI64TensorAttr(g.strides),
                rewriter.getI64TensorAttr(g.dilations))
                .getResult(0);
    } else {
      sum = createPoolGeneric(
          rewriter, loc, padded, g, acc,
          [&](OpBuilder &b, Location l, Value in,
              ValueRange accs) -> SmallVector<Value> {
            return {arith::AddFOp::create(b, l, accs[0], in)};
          })[0];
    }

    // The divisor: per spatial dim, a count per output position (a constant
    // of shape [out_i, 1, ..., 1] broadcasting against the result), or one
    // scalar factor when every position of the dim counts the same.
    bool includePad = op.getCountIncludePad() != 0;
    auto uniform = [](ArrayRef<int64_t> v) {
      return llvm::all_of(v, [&](int64_t x) { return x == v[0]; });
    };
    SmallVector<Value> inputs = {sum};
    double scalarCount = 1.0;
    for (size_t dim = 0; dim < g.rank(); ++dim) {
      SmallVector<int64_t> counts = windowCounts(g, dim, includePad);
      if (uniform(counts)) {
        scalarCount *= counts[0];
        continue;
      }
      SmallVector<int64_t> shape = {g.outSpatial[dim]};
      shape.append(g.rank() - 1 - dim, 1);
      SmallVector<Attribute> values;
      for (int64_t v : counts)
        values.push_back(getScalarAttr(elemType, static_cast<double>(v)));
      auto attr =
          DenseElementsAttr::get(RankedTensorType::get(shape, elemType), values);
      inputs.push_back(arith::ConstantOp::create(rewriter, loc, attr));
    }
    Value result = createElementwiseGeneric(
        rewriter, loc, accType, inputs,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value divisor;
          if (scalarCount != 1.0 || args.size() == 1)
            divisor = createScalarConstant(b, l, elemType, scalarCount);
          for (Value count : args.drop_front())
            divisor = divisor ? arith::MulFOp::create(b, l, divisor, count)
                                    .getResult()
                              : count;
          return arith::DivFOp::create(b, l, args[0], divisor);
        });
    rewriter.replaceOp(op, createReshape(rewriter, loc, result, yType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// GlobalAveragePool, GlobalMaxPool
//===----------------------------------------------------------------------===//

template <typename OpTy, bool isMax>
struct GlobalPoolLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType yType =
        getConvertedResultType(this->getTypeConverter(), op);
    RankedTensorType xType = getStaticTensorType(adaptor.getX());
    if (!yType || !xType || xType.getRank() < 3)
      return emitNodeError(op) << "needs a static input of rank >= 3",
             failure();
    Type elemType = yType.getElementType();
    if (!isa<FloatType>(elemType))
      return emitNodeError(op) << "only float inputs are supported (got "
                               << xType << ")",
             failure();
    int64_t n = xType.getDimSize(0), c = xType.getDimSize(1);
    SmallVector<int64_t> dims;
    int64_t count = 1;
    for (int64_t i = 2; i < xType.getRank(); ++i) {
      dims.push_back(i);
      count *= xType.getDimSize(i);
    }
    auto accType = RankedTensorType::get({n, c}, elemType);
    Value init =
        isMax ? arith::ConstantOp::create(rewriter, loc,
                                          getLowestAttr(elemType))
                    .getResult()
              : createScalarConstant(rewriter, loc, elemType, 0.0);
    Value acc = createFilledTensor(rewriter, loc, accType, init);
    Value reduced =
        linalg::ReduceOp::create(
            rewriter, loc, ValueRange{adaptor.getX()}, ValueRange{acc}, dims,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value r =
                  isMax ? arith::MaximumFOp::create(b, l, args[0], args[1])
                              .getResult()
                        : arith::AddFOp::create(b, l, args[0], args[1])
                              .getResult();
              linalg::YieldOp::create(b, l, r);
            })
            .getResult(0);
    if (!isMax)
      reduced = createElementwiseGeneric(
          rewriter, loc, accType, reduced,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            return arith::DivFOp::create(
                b, l, args[0],
                createScalarConstant(b, l, elemType,
                                     static_cast<double>(count)));
          });
    rewriter.replaceOp(op, createReshape(rewriter, loc, reduced, yType));
    return success();
  }
};

} // namespace

void populatePoolingPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns) {
  patterns.add<MaxPoolLowering, AveragePoolLowering,
               GlobalPoolLowering<onnx::GlobalAveragePoolOp, false>,
               GlobalPoolLowering<onnx::GlobalMaxPoolOp, true>>(
      converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
