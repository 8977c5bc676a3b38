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
// Scales, sizes or roi read at run time (graph inputs): the same arithmetic
// at run time (f64), a table generic per axis over (output position, tap)
// computing what the compile-time tables hold; the resized dims are run dims
// (docs/dynamic-shapes.md). With antialias the tap count follows the
// scale: the table's tap dim is a run-time size too.
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
    // `?` result dims: the run-time form's run dims.
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
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
    if (coordMode != "tf_crop_and_resize")
      roiIn = SmallVector<double>(); // roi only matters to tf_crop_and_resize
    if (!scalesIn || !sizesIn || !roiIn)
      return lowerRunTime(op, adaptor, rewriter, inType, resultType, axes);
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

  //===--------------------------------------------------------------------===//
  // Scales, sizes or roi read at run time
  //===--------------------------------------------------------------------===//

  /// The same interpolation with every number computed at run time (f64, as
  /// the compile-time tables are): each resized axis's output size (floor(d
  /// * scale), or `sizes` with keep_aspect_ratio_policy), then per axis a
  /// linalg.generic over (output position, tap) computing the taps' clamped
  /// indices, weights and the tf_crop_and_resize outside flag, and the axis's
  /// weighted gather reading that table. The resized dims are run dims. A
  /// scale that is not positive or a negative size fails a kiln.check naming
  /// the node (the sizes are 0 then). With antialias the tap count follows
  /// the scale: a run-time table width, the weights normalized over it.
  LogicalResult lowerRunTime(onnx::ResizeOp op, OpAdaptor adaptor,
                             ConversionPatternRewriter &rewriter,
                             RankedTensorType inType,
                             RankedTensorType resultType,
                             ArrayRef<int64_t> axes) const {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    int64_t rank = inType.getRank();
    int64_t naxes = static_cast<int64_t>(axes.size());
    Type elemType = inType.getElementType();
    Type f64 = b.getF64Type();
    StringRef mode = op.getMode();
    StringRef coordMode = op.getCoordinateTransformationMode();
    auto fconst = [&](OpBuilder &bb, Location l, double v) -> Value {
      return arith::ConstantOp::create(bb, l, f64, bb.getF64FloatAttr(v));
    };
    auto iconst = [&](OpBuilder &bb, Location l, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(bb, l, v);
    };
    auto toF64 = [&](OpBuilder &bb, Location l, Value v) -> Value {
      Type t = v.getType();
      if (t == f64)
        return v;
      if (isa<FloatType>(t))
        return arith::ExtFOp::create(bb, l, f64, v);
      if (t.isIndex())
        v = arith::IndexCastOp::create(bb, l, bb.getI64Type(), v);
      return arith::SIToFPOp::create(bb, l, f64, v);
    };
    // Element i of a 1-D tensor as it is (a constant when the tensor is).
    auto element = [&](Value tensor, int64_t i) -> Value {
      return tensor::ExtractOp::create(b, loc, tensor,
                                       ValueRange{iconst(b, loc, i)});
    };
    auto lengthOf = [&](Value v) -> int64_t {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      return t && t.hasStaticShape() && t.getRank() == 1 ? t.getDimSize(0)
                                                         : -1;
    };

    // Scale and output size of every resized axis.
    SmallVector<Value> scale(rank), outSize(rank);
    Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
    Value sizes = adaptor.getSizes();
    bool hasSizes = !isNoneValue(op.getSizes()) && lengthOf(sizes) != 0;
    std::string what;
    if (hasSizes) {
      if (lengthOf(sizes) != naxes)
        return emitNodeError(op) << "'sizes' needs one value per axis",
               failure();
      what = "sizes must not be negative";
      for (auto [i, d] : llvm::enumerate(axes)) {
        Value s = element(sizes, i);
        s = arith::IndexCastOp::create(b, loc, b.getIndexType(), s);
        ok = arith::AndIOp::create(
            b, loc, ok,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, s,
                                  iconst(b, loc, 0)));
        outSize[d] = s;
        scale[d] = arith::DivFOp::create(b, loc, toF64(b, loc, s),
                                         fconst(b, loc, inType.getDimSize(d)));
      }
      StringRef policy = op.getKeepAspectRatioPolicy();
      if (policy != "stretch" && policy != "not_larger" &&
          policy != "not_smaller")
        return emitNodeError(op) << "unknown keep_aspect_ratio_policy '"
                                 << policy << "'",
               failure();
      if (policy != "stretch") {
        Value sc = scale[axes[0]];
        for (int64_t d : axes)
          sc = policy == "not_larger"
                   ? Value(arith::MinimumFOp::create(b, loc, sc, scale[d]))
                   : Value(arith::MaximumFOp::create(b, loc, sc, scale[d]));
        for (int64_t d : axes) {
          scale[d] = sc;
          Value v = arith::AddFOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, sc,
                                    fconst(b, loc, inType.getDimSize(d))),
              fconst(b, loc, 0.5));
          v = arith::FPToSIOp::create(b, loc, b.getI64Type(), v);
          outSize[d] = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
        }
      }
    } else {
      Value scales = adaptor.getScales();
      if (isNoneValue(op.getScales()) || lengthOf(scales) != naxes)
        return emitNodeError(op) << "'scales' needs one value per axis",
               failure();
      what = "scales must be positive (and the sizes they give below 2^40)";
      for (auto [i, d] : llvm::enumerate(axes)) {
        Value sc = toF64(b, loc, element(scales, i));
        Value size = arith::MulFOp::create(
            b, loc, sc, fconst(b, loc, inType.getDimSize(d)));
        // Positive (NaN fails), and a size that fits.
        Value good = arith::AndIOp::create(
            b, loc,
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, sc,
                                  fconst(b, loc, 0.0)),
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, size,
                                  fconst(b, loc, 0x1p40)));
        ok = arith::AndIOp::create(b, loc, ok, good);
        size = arith::SelectOp::create(b, loc, good, size, fconst(b, loc, 0));
        Value v = arith::FPToSIOp::create(b, loc, b.getI64Type(), size);
        outSize[d] = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
        scale[d] = sc;
      }
    }
    Value okTensor = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, b.getI1Type()), ValueRange{ok});
    kiln::CheckOp::create(b, loc, okTensor, getNodeMessagePrefix(op) + what);
    for (int64_t d : axes)
      outSize[d] = arith::SelectOp::create(b, loc, ok, outSize[d],
                                           iconst(b, loc, 0));

    // The region of interest (tf_crop_and_resize only).
    SmallVector<Value> roiStart(rank), roiEnd(rank);
    bool crop = coordMode == "tf_crop_and_resize";
    Value roi = adaptor.getRoi();
    bool hasRoi = crop && !isNoneValue(op.getRoi()) && lengthOf(roi) != 0;
    if (hasRoi && lengthOf(roi) != 2 * naxes)
      return emitNodeError(op) << "'roi' needs two values per axis", failure();
    for (auto [i, d] : llvm::enumerate(axes)) {
      roiStart[d] = hasRoi ? toF64(b, loc, element(roi, i))
                           : fconst(b, loc, 0.0);
      roiEnd[d] = hasRoi ? toF64(b, loc, element(roi, naxes + i))
                         : fconst(b, loc, 1.0);
    }

    bool nearest = mode == "nearest", linear = mode == "linear";
    bool antialias = op.getAntialias() != 0;
    int64_t n = nearest || linear ? 2 : 4; // the interpolation's taps
    // The table's taps; with antialias, a run-time count (below).
    int64_t taps = nearest ? 1 : antialias ? ShapedType::kDynamic : n;
    bool excludeOutside = op.getExcludeOutside() != 0;
    double a = op.getCubicCoeffA().convertToDouble();
    StringRef nearestMode = op.getNearestMode();
    double extrapolation = op.getExtrapolationValue().convertToDouble();

    Value current = adaptor.getX();
    SmallVector<int64_t> shape(inType.getShape());
    SmallVector<Value> dynSizes(rank); // the run sizes of `?` dims
    MLIRContext *ctx = b.getContext();
    Type i64 = b.getI64Type();
    for (int64_t axis : axes) {
      int64_t inW = inType.getDimSize(axis);
      Value outW = outSize[axis];
      Value sc = scale[axis], rs = roiStart[axis], re = roiEnd[axis];

      // Antialias (linear, cubic): the kernel stretched by 1 / scale when
      // downsampling, footprint 2 - 2 * start taps with start =
      // floor(-support / scale) + 1 (support 1 linear, 2 cubic), as
      // linearCoeffs / cubicCoeffs.
      Value aaScale, aaStart, aaTaps, aaTapsF;
      if (antialias) {
        aaScale = arith::MinimumFOp::create(b, loc, sc, fconst(b, loc, 1.0));
        Value support = fconst(b, loc, linear ? -1.0 : -2.0);
        aaStart = arith::AddFOp::create(
            b, loc,
            math::FloorOp::create(
                b, loc, arith::DivFOp::create(b, loc, support, aaScale)),
            fconst(b, loc, 1.0));
        aaTapsF = arith::SubFOp::create(
            b, loc, fconst(b, loc, 2.0),
            arith::MulFOp::create(b, loc, fconst(b, loc, 2.0), aaStart));
        aaTaps = arith::IndexCastOp::create(
            b, loc, b.getIndexType(),
            arith::FPToSIOp::create(b, loc, b.getI64Type(), aaTapsF));
      }
      SmallVector<Value> tableSizes = {outW};
      if (antialias)
        tableSizes.push_back(aaTaps);

      // The table over (output position, tap).
      auto idxType = RankedTensorType::get({ShapedType::kDynamic, taps}, i64);
      auto wType =
          RankedTensorType::get({ShapedType::kDynamic, taps}, elemType);
      auto maskType =
          RankedTensorType::get({ShapedType::kDynamic, taps}, b.getI1Type());
      SmallVector<Value> outs = {tensor::EmptyOp::create(
          b, loc, idxType.getShape(), i64, tableSizes)};
      SmallVector<Type> outTypes = {idxType};
      if (!nearest) {
        outs.push_back(tensor::EmptyOp::create(b, loc, wType.getShape(),
                                               elemType, tableSizes));
        outTypes.push_back(wType);
      }
      if (crop) {
        outs.push_back(tensor::EmptyOp::create(
            b, loc, maskType.getShape(), b.getI1Type(), tableSizes));
        outTypes.push_back(maskType);
      }
      SmallVector<AffineMap> tableMaps(outs.size(),
                                       AffineMap::getMultiDimIdentityMap(2, ctx));
      auto table = linalg::GenericOp::create(
          b, loc, outTypes, ValueRange{}, outs, tableMaps,
          getParallelIterators(2),
          [&](OpBuilder &bb, Location l, ValueRange) {
            auto F = [&](double v) { return fconst(bb, l, v); };
            auto add = [&](Value x, Value y) -> Value {
              return arith::AddFOp::create(bb, l, x, y);
            };
            auto sub = [&](Value x, Value y) -> Value {
              return arith::SubFOp::create(bb, l, x, y);
            };
            auto mul = [&](Value x, Value y) -> Value {
              return arith::MulFOp::create(bb, l, x, y);
            };
            auto div = [&](Value x, Value y) -> Value {
              return arith::DivFOp::create(bb, l, x, y);
            };
            auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) -> Value {
              return arith::CmpFOp::create(bb, l, p, x, y);
            };
            auto sel = [&](Value c, Value x, Value y) -> Value {
              return arith::SelectOp::create(bb, l, c, x, y);
            };
            auto boolF = [&](Value c) { return sel(c, F(1), F(0)); };
            Value i = linalg::IndexOp::create(bb, l, 0);
            Value k = linalg::IndexOp::create(bb, l, 1);
            Value y = toF64(bb, l, i);
            Value inWf = F(inW), outWf = toF64(bb, l, outW);
            Value outputWidth = mul(sc, inWf);
            Value isOne = cmp(arith::CmpFPredicate::OEQ, outputWidth, F(1));
            Value halfPixel = sub(div(add(y, F(0.5)), sc), F(0.5));
            Value x;
            if (coordMode == "align_corners") {
              x = sel(isOne, F(0),
                      div(mul(y, F(inW - 1)), sub(outputWidth, F(1))));
            } else if (coordMode == "asymmetric") {
              x = div(y, sc);
            } else if (coordMode == "tf_crop_and_resize") {
              Value span = mul(sub(re, rs), F(inW - 1));
              x = sel(isOne, div(span, F(2)),
                      div(mul(y, span), sub(outputWidth, F(1))));
              x = add(x, mul(rs, F(inW - 1)));
            } else if (coordMode == "pytorch_half_pixel") {
              x = sel(isOne, F(-0.5), halfPixel);
            } else if (coordMode == "half_pixel") {
              x = halfPixel;
            } else { // half_pixel_symmetric
              Value adjustment = div(outWf, outputWidth);
              Value offset = mul(F(inW / 2.0), sub(F(1), adjustment));
              x = add(offset, halfPixel);
            }
            Value fl = math::FloorOp::create(bb, l, x);
            Value ratio =
                sel(cmp(arith::CmpFPredicate::OEQ, x, fl), F(1), sub(x, fl));
            Value tap, weight, start;
            if (antialias) {
              // Tap j reads position start + j with the kernel's value at
              // (aaStart + j - ratio) * scale; the weights are normalized
              // (over the taps inside the input with exclude_outside).
              Value n = aaTapsF;
              Value half = div(n, F(2));
              Value xPadded = add(x, half);
              Value p = math::FloorOp::create(bb, l, xPadded);
              Value frac = sub(xPadded, p);
              Value offset = sel(cmp(arith::CmpFPredicate::OEQ, frac, F(0)),
                                 sub(F(0), half), sub(F(1), half));
              start = sub(add(p, offset), half);
              auto kernel = [&](OpBuilder &cb, Location cl, Value j) -> Value {
                auto cF = [&](double v) { return fconst(cb, cl, v); };
                Value t = arith::MulFOp::create(
                    cb, cl,
                    arith::SubFOp::create(
                        cb, cl, arith::AddFOp::create(cb, cl, aaStart, j),
                        ratio),
                    aaScale);
                Value ax = math::AbsFOp::create(cb, cl, t);
                Value v;
                if (linear) {
                  v = arith::SubFOp::create(cb, cl, cF(1), ax);
                  v = arith::MaximumFOp::create(cb, cl, v, cF(0));
                  v = arith::MinimumFOp::create(cb, cl, v, cF(1));
                } else {
                  Value x2 = arith::MulFOp::create(cb, cl, ax, ax);
                  Value x3 = arith::MulFOp::create(cb, cl, x2, ax);
                  // (a + 2) x^3 - (a + 3) x^2 + 1 within 1;
                  // a x^3 - 5a x^2 + 8a x - 4a within 2; else 0.
                  Value nearV = arith::AddFOp::create(
                      cb, cl,
                      arith::SubFOp::create(
                          cb, cl, arith::MulFOp::create(cb, cl, cF(a + 2), x3),
                          arith::MulFOp::create(cb, cl, cF(a + 3), x2)),
                      cF(1));
                  Value farV = arith::SubFOp::create(
                      cb, cl,
                      arith::AddFOp::create(
                          cb, cl,
                          arith::SubFOp::create(
                              cb, cl, arith::MulFOp::create(cb, cl, cF(a), x3),
                              arith::MulFOp::create(cb, cl, cF(5 * a), x2)),
                          arith::MulFOp::create(cb, cl, cF(8 * a), ax)),
                      cF(4 * a));
                  v = arith::SelectOp::create(
                      cb, cl,
                      arith::CmpFOp::create(cb, cl, arith::CmpFPredicate::OLE,
                                            ax, cF(1)),
                      nearV,
                      arith::SelectOp::create(
                          cb, cl,
                          arith::CmpFOp::create(cb, cl,
                                                arith::CmpFPredicate::OLT, ax,
                                                cF(2)),
                          farV, cF(0)));
                }
                if (excludeOutside) {
                  Value pos = arith::AddFOp::create(cb, cl, start, j);
                  Value in = arith::AndIOp::create(
                      cb, cl,
                      arith::CmpFOp::create(cb, cl, arith::CmpFPredicate::OGE,
                                            pos, cF(0)),
                      arith::CmpFOp::create(cb, cl, arith::CmpFPredicate::OLT,
                                            pos, cF(inW)));
                  v = arith::SelectOp::create(cb, cl, in, v, cF(0));
                }
                return v;
              };
              auto loop = scf::ForOp::create(
                  bb, l, iconst(bb, l, 0), aaTaps, iconst(bb, l, 1),
                  ValueRange{F(0)},
                  [&](OpBuilder &lb, Location ll, Value j, ValueRange acc) {
                    Value v = kernel(lb, ll, toF64(lb, ll, j));
                    scf::YieldOp::create(
                        lb, ll,
                        ValueRange{arith::AddFOp::create(lb, ll, acc[0], v)});
                  });
              Value sum = loop.getResult(0);
              sum = sel(cmp(arith::CmpFPredicate::OEQ, sum, F(0)), F(1), sum);
              tap = toF64(bb, l, k);
              weight = div(kernel(bb, l, tap), sum);
            } else {
            // The interpolation's coefficients.
            SmallVector<Value> c;
            if (nearest) {
              Value lt = cmp(arith::CmpFPredicate::OLT, ratio, F(0.5));
              Value le = cmp(arith::CmpFPredicate::OLE, ratio, F(0.5));
              if (nearestMode == "round_prefer_ceil")
                c = {boolF(lt), sel(lt, F(0), F(1))};
              else if (nearestMode == "floor")
                c = {F(1), F(0)};
              else if (nearestMode == "ceil")
                c = {F(0), F(1)};
              else // round_prefer_floor
                c = {boolF(le), sel(le, F(0), F(1))};
              // An integral ratio (1) takes the second tap.
              Value whole = cmp(arith::CmpFPredicate::OEQ, ratio, F(1));
              c = {sel(whole, F(0), c[0]), sel(whole, F(1), c[1])};
            } else if (linear) {
              c = {sub(F(1), ratio), ratio};
            } else {
              Value A = F(a);
              Value r1 = add(ratio, F(1)), r2 = sub(F(1), ratio),
                    r3 = sub(F(2), ratio);
              auto outer = [&](Value r) { // ((a r - 5a) r + 8a) r - 4a
                return sub(
                    mul(add(mul(sub(mul(A, r), F(5 * a)), r), F(8 * a)), r),
                    F(4 * a));
              };
              auto inner = [&](Value r) { // ((a + 2) r - (a + 3)) r r + 1
                return add(mul(mul(sub(mul(F(a + 2), r), F(a + 3)), r), r),
                           F(1));
              };
              c = {outer(r1), inner(ratio), inner(r2), outer(r3)};
            }
            // The n source positions closest to x (ties to the smaller),
            // in the edge-padded coordinates of the reference.
            int64_t pad = (n + 1) / 2;
            Value xPadded = add(x, F(pad));
            Value p = math::FloorOp::create(bb, l, xPadded);
            Value frac = sub(xPadded, p);
            Value offset = sel(cmp(arith::CmpFPredicate::OEQ, frac, F(0)),
                               F(-(n / 2)), F(-(n / 2) + 1));
            start = sub(add(p, offset), F(pad));
            if (excludeOutside) {
              Value sum = F(0);
              for (int64_t j = 0; j < n; ++j) {
                Value pos = add(start, F(j));
                Value in = arith::AndIOp::create(
                    bb, l, cmp(arith::CmpFPredicate::OGE, pos, F(0)),
                    cmp(arith::CmpFPredicate::OLT, pos, F(inW)));
                c[j] = sel(in, c[j], F(0));
                sum = add(sum, c[j]);
              }
              sum = sel(cmp(arith::CmpFPredicate::OEQ, sum, F(0)), F(1), sum);
              for (Value &v : c)
                v = div(v, sum);
            }
            // This tap's position and weight.
            weight = c[0];
            if (nearest) {
              // The last tap with a weight.
              tap = sel(cmp(arith::CmpFPredicate::UNE, c[1], F(0)), F(1), F(0));
            } else {
              tap = toF64(bb, l, k);
              for (int64_t j = 1; j < n; ++j) {
                Value isJ = arith::CmpIOp::create(
                    bb, l, arith::CmpIPredicate::eq, k, iconst(bb, l, j));
                weight = sel(isJ, c[j], weight);
              }
            }
            }
            Value pos = add(start, tap);
            pos = arith::MinimumFOp::create(
                bb, l, arith::MaximumFOp::create(bb, l, pos, F(0)), F(inW - 1));
            SmallVector<Value> results = {
                arith::FPToSIOp::create(bb, l, i64, pos)};
            if (!nearest)
              results.push_back(
                  elemType == f64
                      ? weight
                      : Value(arith::TruncFOp::create(bb, l, elemType, weight)));
            if (crop)
              results.push_back(arith::OrIOp::create(
                  bb, l, cmp(arith::CmpFPredicate::OLT, x, F(0)),
                  cmp(arith::CmpFPredicate::OGT, x, F(inW - 1))));
            linalg::YieldOp::create(bb, l, results);
          });

      // The axis: a gather (nearest) or a weighted sum of taps, the
      // extrapolation value where tf_crop_and_resize falls outside.
      shape[axis] = ShapedType::kDynamic;
      dynSizes[axis] = outW;
      SmallVector<Value> dyn;
      for (int64_t d = 0; d < rank; ++d)
        if (ShapedType::isDynamic(shape[d]))
          dyn.push_back(dynSizes[d]);
      auto type = RankedTensorType::get(shape, elemType);
      Value init = tensor::EmptyOp::create(b, loc, shape, elemType, dyn);
      if (!nearest)
        init = linalg::FillOp::create(
                   b, loc,
                   ValueRange{createScalarConstant(b, loc, elemType, 0.0)},
                   ValueRange{init})
                   .getResult(0);
      int64_t loops = rank + 1;
      AffineMap tableMap =
          AffineMap::get(loops, 0,
                         {getAffineDimExpr(axis, ctx), getAffineDimExpr(rank, ctx)},
                         ctx);
      AffineMap outMap = AffineMap::get(
          loops, 0, AffineMap::getMultiDimIdentityMap(rank, ctx).getResults(),
          ctx);
      SmallVector<utils::IteratorType> iterators(rank,
                                                 utils::IteratorType::parallel);
      iterators.push_back(utils::IteratorType::reduction);
      SmallVector<AffineMap> maps(table.getNumResults(), tableMap);
      maps.push_back(outMap);
      Value source = current;
      current =
          linalg::GenericOp::create(
              b, loc, TypeRange{type}, table.getResults(), ValueRange{init},
              maps, iterators,
              [&](OpBuilder &bb, Location l, ValueRange args) {
                SmallVector<Value> coords;
                for (int64_t d = 0; d < rank; ++d)
                  coords.push_back(
                      d == axis ? arith::IndexCastOp::create(
                                      bb, l, bb.getIndexType(), args[0])
                                      .getResult()
                                : linalg::IndexOp::create(bb, l, d).getResult());
                Value v = tensor::ExtractOp::create(bb, l, source, coords);
                if (!nearest)
                  v = arith::AddFOp::create(
                      bb, l, args.back(),
                      arith::MulFOp::create(bb, l, v, args[1]));
                if (crop)
                  v = arith::SelectOp::create(
                      bb, l, args[nearest ? 1 : 2],
                      createScalarConstant(bb, l, elemType, extrapolation), v);
                linalg::YieldOp::create(bb, l, v);
              })
              .getResult(0);
    }
    if (current.getType() != resultType) {
      if (!tensor::CastOp::areCastCompatible(current.getType(), resultType))
        return emitNodeError(op) << "the resized shape "
                                 << current.getType()
                                 << " does not fit the inferred " << resultType,
               failure();
      current = tensor::CastOp::create(b, loc, resultType, current);
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
