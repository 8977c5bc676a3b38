//===- Resize.cpp - Resize to per-axis gathers with compile-time tables ---===//
//
// Resize is separable: kiln resizes one axis at a time, like ONNX's reference
// (onnx/reference/ops/op_resize.py, `_interpolate_1d_along_axis`). With static
// shapes and constant scales/sizes/roi, every output position's source taps
// (clamped indices) and weights along an axis are known at compile time, so
// each axis becomes one linalg.generic reading two constant tables:
//
//   out[.., i, ..] = sum_t weight[i, t] * in[.., index[i, t], ..]
//
// (nearest: one tap, a plain gather, exact for any element type), followed by
// a select of `extrapolation_value` where tf_crop_and_resize falls outside.
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

#include <cmath>
#include <functional>

using namespace mlir;

namespace kiln::onnx_to_linalg {
namespace {

using kiln::onnx::emitNodeError;
using kiln::onnx::isNoneValue;

//===----------------------------------------------------------------------===//
// Interpolation coefficients (the reference's get_coeffs functions)
//===----------------------------------------------------------------------===//

using CoeffFn = std::function<SmallVector<double>(double ratio, double scale)>;

SmallVector<double> nearestCoeffs(double ratio, StringRef mode) {
  if (ratio == std::floor(ratio))
    return {0, 1};
  if (mode == "round_prefer_ceil")
    return {double(ratio < 0.5), double(ratio >= 0.5)};
  if (mode == "floor")
    return {1, 0};
  if (mode == "ceil")
    return {0, 1};
  return {double(ratio <= 0.5), double(ratio > 0.5)}; // round_prefer_floor
}

SmallVector<double> linearCoeffs(double ratio, double scale, bool antialias) {
  if (!antialias)
    return {1 - ratio, ratio};
  scale = std::min(scale, 1.0);
  int64_t start = static_cast<int64_t>(std::floor(-1 / scale) + 1);
  int64_t footprint = 2 - 2 * start;
  SmallVector<double> c;
  double sum = 0;
  for (int64_t i = start; i < start + footprint; ++i) {
    double v = std::clamp(1 - std::fabs((i - ratio) * scale), 0.0, 1.0);
    c.push_back(v);
    sum += v;
  }
  for (double &v : c)
    v /= sum;
  return c;
}

SmallVector<double> cubicCoeffs(double ratio, double scale, double a,
                                bool antialias) {
  if (!antialias) {
    double r1 = ratio + 1, r2 = 1 - ratio, r3 = 2 - ratio;
    return {((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a,
            ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
            ((a + 2) * r2 - (a + 3)) * r2 * r2 + 1,
            ((a * r3 - 5 * a) * r3 + 8 * a) * r3 - 4 * a};
  }
  scale = std::min(scale, 1.0);
  auto coeff = [&](double x) {
    x = std::fabs(x);
    double x2 = x * x, x3 = x * x2;
    if (x <= 1)
      return (a + 2) * x3 - (a + 3) * x2 + 1;
    if (x < 2)
      return a * x3 - 5 * a * x2 + 8 * a * x - 4 * a;
    return 0.0;
  };
  int64_t start = static_cast<int64_t>(std::floor(-2 / scale) + 1);
  int64_t end = 2 - start;
  SmallVector<double> c;
  double sum = 0;
  for (int64_t i = start; i < end; ++i) {
    c.push_back(coeff(scale * (i - ratio)));
    sum += c.back();
  }
  for (double &v : c)
    v /= sum;
  return c;
}

/// The taps of one axis: for output position i, `taps` indices (clamped into
/// the input) and weights, and whether i is extrapolated.
struct AxisTable {
  int64_t taps = 0;
  SmallVector<int64_t> index;  // [out * taps]
  SmallVector<double> weight;  // [out * taps]
  SmallVector<bool> outside;   // [out]
  bool anyOutside = false;
};

FailureOr<AxisTable> buildAxisTable(Operation *op, StringRef coordMode,
                                    int64_t inWidth, int64_t outWidth,
                                    double scale, double roiStart,
                                    double roiEnd, bool excludeOutside,
                                    const CoeffFn &coeffs) {
  AxisTable t;
  double outputWidth = scale * inWidth;
  SmallVector<double> xs;
  for (int64_t i = 0; i < outWidth; ++i) {
    double y = i, x;
    if (coordMode == "align_corners") {
      x = outputWidth == 1 ? 0.0 : y * (inWidth - 1) / (outputWidth - 1);
    } else if (coordMode == "asymmetric") {
      x = y / scale;
    } else if (coordMode == "tf_crop_and_resize") {
      x = outputWidth == 1
              ? (roiEnd - roiStart) * (inWidth - 1) / 2
              : y * (roiEnd - roiStart) * (inWidth - 1) / (outputWidth - 1);
      x += roiStart * (inWidth - 1);
    } else if (coordMode == "pytorch_half_pixel") {
      x = outputWidth == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
    } else if (coordMode == "half_pixel") {
      x = (y + 0.5) / scale - 0.5;
    } else if (coordMode == "half_pixel_symmetric") {
      double adjustment = outWidth / outputWidth;
      double offset = inWidth / 2.0 * (1 - adjustment);
      x = offset + (y + 0.5) / scale - 0.5;
    } else {
      return emitNodeError(op) << "unknown coordinate_transformation_mode '"
                               << coordMode << "'",
             failure();
    }
    xs.push_back(x);
    bool outside =
        coordMode == "tf_crop_and_resize" && (x < 0 || x > inWidth - 1);
    t.outside.push_back(outside);
    t.anyOutside |= outside;
  }
  for (int64_t i = 0; i < outWidth; ++i) {
    double x = xs[i];
    double ratio = x == std::floor(x) ? 1.0 : x - std::floor(x);
    SmallVector<double> c = coeffs(ratio, scale);
    int64_t n = static_cast<int64_t>(c.size());
    if (i == 0)
      t.taps = n;
    else if (n != t.taps)
      return emitNodeError(op) << "internal: tap count changed along an axis",
             failure();
    // The n source positions closest to x (ties to the smaller), in the
    // edge-padded coordinates of the reference.
    int64_t pad = (n + 1) / 2;
    double xPadded = x + pad;
    int64_t p = static_cast<int64_t>(std::floor(xPadded));
    double frac = xPadded - p;
    int64_t offset;
    if (n % 2 == 0)
      offset = frac == 0 ? -(n / 2) : -(n / 2) + 1;
    else
      offset = frac <= 0.5 ? -((n - 1) / 2) : -((n - 1) / 2) + 1;
    int64_t start = p + offset - pad;
    if (excludeOutside) {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        if (start + k < 0 || start + k >= inWidth)
          c[k] = 0;
        sum += c[k];
      }
      if (sum == 0)
        sum = 1;
      for (double &v : c)
        v /= sum;
    }
    for (int64_t k = 0; k < n; ++k) {
      t.index.push_back(std::clamp<int64_t>(start + k, 0, inWidth - 1));
      t.weight.push_back(c[k]);
    }
  }
  return t;
}

//===----------------------------------------------------------------------===//
// The lowering
//===----------------------------------------------------------------------===//

struct ResizeLowering : OpConversionPattern<onnx::ResizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::ResizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inType = getStaticTensorType(adaptor.getX());
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    if (!inType || !resultType)
      return emitNodeError(op) << "needs static shapes", failure();
    int64_t rank = inType.getRank();
    Type elemType = inType.getElementType();
    StringRef mode = op.getMode();
    StringRef coordMode = op.getCoordinateTransformationMode();
    bool antialias = op.getAntialias() != 0;
    if (mode != "nearest" && mode != "linear" && mode != "cubic")
      return emitNodeError(op) << "unknown mode '" << mode << "'", failure();
    if (mode == "nearest" && antialias)
      return emitNodeError(op) << "antialias is not defined for nearest",
             failure();
    if (mode != "nearest" && !isFloat(elemType))
      return emitNodeError(op) << mode << " interpolation of " << elemType
                               << " is not supported (floats only)",
             failure();

    // Resized axes.
    SmallVector<int64_t> axes;
    if (std::optional<ArrayAttr> attr = op.getAxes()) {
      for (Attribute a : *attr) {
        std::optional<int64_t> axis =
            normalizeAxis(cast<IntegerAttr>(a).getInt(), rank);
        if (!axis)
          return emitNodeError(op) << "axis out of range", failure();
        axes.push_back(*axis);
      }
    } else {
      for (int64_t d = 0; d < rank; ++d)
        axes.push_back(d);
    }
    int64_t naxes = static_cast<int64_t>(axes.size());

    // Scales and output sizes of every axis, as the reference derives them.
    auto readFloats = [&](Value v) -> std::optional<SmallVector<double>> {
      if (isNoneValue(v))
        return SmallVector<double>();
      return readConstantFloats(v);
    };
    std::optional<SmallVector<double>> scalesIn = readFloats(op.getScales());
    std::optional<SmallVector<int64_t>> sizesIn =
        isNoneValue(op.getSizes()) ? std::optional(SmallVector<int64_t>())
                                   : readConstantInts(op.getSizes());
    std::optional<SmallVector<double>> roiIn = readFloats(op.getRoi());
    if (!scalesIn || !sizesIn || !roiIn)
      return emitNodeError(op)
                 << "needs a compile-time constant for the non-constant input '"
                 << (!roiIn ? "roi" : !scalesIn ? "scales" : "sizes") << "'",
             failure();
    SmallVector<double> scale(rank, 1.0);
    SmallVector<int64_t> outSize(inType.getShape());
    if (!sizesIn->empty()) {
      if (static_cast<int64_t>(sizesIn->size()) != naxes)
        return emitNodeError(op) << "'sizes' needs one value per axis",
               failure();
      for (auto [i, d] : llvm::enumerate(axes)) {
        outSize[d] = (*sizesIn)[i];
        scale[d] = double(outSize[d]) / inType.getDimSize(d);
      }
      StringRef policy = op.getKeepAspectRatioPolicy();
      if (policy != "stretch") {
        double s = scale[axes[0]];
        for (int64_t d : axes)
          s = policy == "not_larger" ? std::min(s, scale[d])
                                     : std::max(s, scale[d]);
        for (int64_t d : axes) {
          scale[d] = s;
          outSize[d] = static_cast<int64_t>(s * inType.getDimSize(d) + 0.5);
        }
      }
    } else {
      if (static_cast<int64_t>(scalesIn->size()) != naxes)
        return emitNodeError(op) << "'scales' needs one value per axis",
               failure();
      for (auto [i, d] : llvm::enumerate(axes)) {
        scale[d] = (*scalesIn)[i];
        outSize[d] = static_cast<int64_t>(scale[d] * inType.getDimSize(d));
      }
    }
    if (ArrayRef<int64_t>(outSize) != resultType.getShape())
      return emitNodeError(op) << "computed output shape differs from the "
                                  "inferred "
                               << resultType,
             failure();
    SmallVector<double> roiStart(rank, 0.0), roiEnd(rank, 1.0);
    if (!roiIn->empty() && coordMode == "tf_crop_and_resize") {
      if (static_cast<int64_t>(roiIn->size()) != 2 * naxes)
        return emitNodeError(op) << "'roi' needs two values per axis",
               failure();
      for (auto [i, d] : llvm::enumerate(axes)) {
        roiStart[d] = (*roiIn)[i];
        roiEnd[d] = (*roiIn)[naxes + i];
      }
    }

    double a = op.getCubicCoeffA().convertToDouble();
    std::string nearestMode = op.getNearestMode().str();
    CoeffFn coeffs;
    if (mode == "nearest")
      coeffs = [nearestMode](double r, double) {
        return nearestCoeffs(r, nearestMode);
      };
    else if (mode == "linear")
      coeffs = [antialias](double r, double s) {
        return linearCoeffs(r, s, antialias);
      };
    else
      coeffs = [antialias, a](double r, double s) {
        return cubicCoeffs(r, s, a, antialias);
      };
    double extrapolation = op.getExtrapolationValue().convertToDouble();

    Value current = adaptor.getX();
    SmallVector<int64_t> shape(inType.getShape());
    for (int64_t axis : axes) {
      bool identity = std::fabs(scale[axis] - 1.0) < 1e-9 &&
                      outSize[axis] == shape[axis] && roiStart[axis] == 0.0 &&
                      roiEnd[axis] == 1.0;
      if (identity)
        continue;
      FailureOr<AxisTable> table = buildAxisTable(
          op, coordMode, shape[axis], outSize[axis], scale[axis],
          roiStart[axis], roiEnd[axis], op.getExcludeOutside() != 0, coeffs);
      if (failed(table))
        return failure();
      shape[axis] = outSize[axis];
      current = resizeAxis(rewriter, loc, current, axis, *table,
                           RankedTensorType::get(shape, elemType),
                           mode == "nearest", extrapolation);
    }
    rewriter.replaceOp(op, current);
    return success();
  }

  /// One axis: a gather (nearest) or a weighted sum of taps, then the
  /// extrapolated positions set to `extrapolation`.
  static Value resizeAxis(OpBuilder &b, Location loc, Value input,
                          int64_t axis, const AxisTable &table,
                          RankedTensorType type, bool nearest,
                          double extrapolation) {
    MLIRContext *ctx = b.getContext();
    int64_t rank = type.getRank(), out = type.getDimSize(axis);
    Type elemType = type.getElementType();
    Type i64 = b.getI64Type();
    int64_t taps = table.taps;
    SmallVector<int64_t> index;
    SmallVector<double> weight;
    if (nearest) {
      // The one tap with weight 1.
      for (int64_t i = 0; i < out; ++i) {
        int64_t pick = 0;
        for (int64_t k = 0; k < taps; ++k)
          if (table.weight[i * taps + k] != 0)
            pick = k;
        index.push_back(table.index[i * taps + pick]);
      }
      taps = 1;
    } else {
      index = table.index;
      weight = table.weight;
    }
    auto indexType = RankedTensorType::get({out, taps}, i64);
    Value indexTable = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(indexType, ArrayRef<int64_t>(index)));

    // Iteration space: the output dims, then the tap dim (a reduction).
    int64_t loops = rank + 1;
    AffineExpr axisDim = getAffineDimExpr(axis, ctx);
    AffineExpr tapDim = getAffineDimExpr(rank, ctx);
    AffineMap tableMap = AffineMap::get(loops, 0, {axisDim, tapDim}, ctx);
    AffineMap outMap = AffineMap::getMultiDimIdentityMap(rank, ctx);
    outMap = AffineMap::get(loops, 0, outMap.getResults(), ctx);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);

    auto gather = [&](OpBuilder &bb, Location l, Value idx) {
      SmallVector<Value> coords;
      for (int64_t d = 0; d < rank; ++d)
        coords.push_back(d == axis ? arith::IndexCastOp::create(
                                         bb, l, bb.getIndexType(), idx)
                                         .getResult()
                                   : linalg::IndexOp::create(bb, l, d)
                                         .getResult());
      return tensor::ExtractOp::create(bb, l, input, coords).getResult();
    };

    Value result;
    if (nearest) {
      Value init = createEmptyTensor(b, loc, type);
      result = linalg::GenericOp::create(
                   b, loc, TypeRange{type}, ValueRange{indexTable},
                   ValueRange{init}, SmallVector<AffineMap>{tableMap, outMap},
                   iterators,
                   [&](OpBuilder &bb, Location l, ValueRange args) {
                     linalg::YieldOp::create(bb, l, gather(bb, l, args[0]));
                   })
                   .getResult(0);
    } else {
      auto weightType = RankedTensorType::get({out, taps}, elemType);
      SmallVector<Attribute> weights;
      for (double w : weight)
        weights.push_back(FloatAttr::get(elemType, w));
      Value weightTable = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(weightType, weights));
      Value init = createFilledTensor(b, loc, type, 0.0);
      result = linalg::GenericOp::create(
                   b, loc, TypeRange{type}, ValueRange{indexTable, weightTable},
                   ValueRange{init},
                   SmallVector<AffineMap>{tableMap, tableMap, outMap},
                   iterators,
                   [&](OpBuilder &bb, Location l, ValueRange args) {
                     Value v = gather(bb, l, args[0]);
                     Value prod = arith::MulFOp::create(bb, l, v, args[1]);
                     linalg::YieldOp::create(
                         bb, l,
                         arith::AddFOp::create(bb, l, args[2], prod)
                             .getResult());
                   })
                   .getResult(0);
    }
    if (!table.anyOutside)
      return result;
    auto maskType = RankedTensorType::get({out}, b.getI1Type());
    SmallVector<bool> outside(table.outside.begin(), table.outside.end());
    Value mask = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(maskType, ArrayRef<bool>(outside)));
    Value fill = createScalarConstant(b, loc, elemType, extrapolation);
    AffineMap maskMap = AffineMap::get(rank, 0, {getAffineDimExpr(axis, ctx)},
                                       ctx);
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    Value init = createEmptyTensor(b, loc, type);
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, ValueRange{mask, result},
               ValueRange{init},
               SmallVector<AffineMap>{maskMap, identity, identity},
               getParallelIterators(rank),
               [&](OpBuilder &bb, Location l, ValueRange args) {
                 linalg::YieldOp::create(
                     bb, l,
                     arith::SelectOp::create(bb, l, args[0], fill, args[1])
                         .getResult());
               })
        .getResult(0);
  }
};

} // namespace

void populateResizePatterns(TypeConverter &converter,
                            RewritePatternSet &patterns) {
  patterns.add<ResizeLowering>(converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
