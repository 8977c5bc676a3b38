//===- GridSample.cpp - GridSample to a gathering linalg.generic ----------===//
//
// One linalg.generic over the output [N, C, out...]: each element reads its
// normalized coordinates from `grid`, maps them to input coordinates
// (align_corners), applies the padding mode to coordinates outside the input
// (border: clamp, reflection: mirror), and sums its taps — 1 (nearest), 2 per
// dimension (linear) or 4 per dimension (cubic, A = -0.75) — each read with
// tensor.extract at a clamped index, weighted, and zeroed when it falls
// outside the input in `zeros` mode. Follows onnx's reference
// (onnx/reference/ops/op_grid_sample.py) step by step.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln::onnx_to_linalg {
namespace {

using kiln::onnx::emitNodeError;

/// Scalar float helpers on one builder.
struct F {
  OpBuilder &b;
  Location loc;
  Type t;
  Value c(double v) { return createScalarConstant(b, loc, t, v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value floor(Value x) { return math::FloorOp::create(b, loc, x); }
  Value lt(Value x, Value y) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, y);
  }
  Value gt(Value x, Value y) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
  }
  Value sel(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value clamp(Value x, double lo, double hi) {
    return arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, x, c(lo)), c(hi));
  }
  /// Mirrors x into [lo, hi] by the nearer border, repeatedly (the reference's
  /// _gs_reflect, without its loop).
  Value reflect(Value x, double lo, double hi) {
    Value range = c(hi - lo);
    auto fold = [&](Value dx, Value fromNear, Value fromFar, bool below) {
      Value n = floor(div(dx, range));
      Value r = sub(dx, mul(n, range));
      Value half = mul(n, c(0.5));
      Value even = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                         floor(half), half);
      Value nearSide = below ? add(fromNear, r) : sub(fromNear, r);
      Value farSide = below ? sub(fromFar, r) : add(fromFar, r);
      return sel(even, nearSide, farSide);
    };
    Value low = fold(sub(c(lo), x), c(lo), c(hi), /*below=*/true);
    Value high = fold(sub(x, c(hi)), c(hi), c(lo), /*below=*/false);
    return sel(lt(x, c(lo)), low, sel(gt(x, c(hi)), high, x));
  }
  /// Round half to even (numpy's rint).
  Value rint(Value x) { return math::RoundEvenOp::create(b, loc, x); }
};

struct GridSampleLowering : OpConversionPattern<onnx::GridSampleOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::GridSampleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType xType = getStaticTensorType(adaptor.getX());
    RankedTensorType gridType = getStaticTensorType(adaptor.getGrid());
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    if (!xType || !gridType || !resultType || xType.getRank() < 3 ||
        !isFloat(xType.getElementType()) ||
        gridType.getElementType() != xType.getElementType())
      return emitNodeError(op) << "needs static float X and grid of one type",
             failure();
    int64_t k = xType.getRank() - 2;
    if (gridType.getRank() != k + 2 || gridType.getShape().back() != k)
      return emitNodeError(op) << "grid must have shape [N, out..., " << k << "]",
             failure();
    StringRef mode = op.getMode(), padding = op.getPaddingMode();
    if (mode == "bilinear")
      mode = "linear";
    if (mode == "bicubic")
      mode = "cubic";
    if (mode != "nearest" && mode != "linear" && mode != "cubic")
      return emitNodeError(op) << "unknown mode '" << op.getMode() << "'",
             failure();
    if (padding != "zeros" && padding != "border" && padding != "reflection")
      return emitNodeError(op) << "unknown padding_mode '" << padding << "'",
             failure();
    bool align = op.getAlignCorners() != 0;
    int64_t taps = mode == "nearest" ? 1 : mode == "linear" ? 2 : 4;
    int64_t combos = 1;
    for (int64_t i = 0; i < k; ++i)
      combos *= taps;
    Type elem = xType.getElementType();
    int64_t rank = resultType.getRank();
    MLIRContext *ctx = rewriter.getContext();
    Value x = adaptor.getX(), grid = adaptor.getGrid();

    Value empty = createEmptyTensor(rewriter, loc, resultType);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{resultType}, ValueRange{},
            ValueRange{empty},
            SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx)},
            getParallelIterators(rank),
            [&](OpBuilder &b, Location l, ValueRange) {
              F f{b, l, elem};
              SmallVector<Value> iv;
              for (int64_t d = 0; d < rank; ++d)
                iv.push_back(linalg::IndexOp::create(b, l, d));
              // Input coordinate per spatial dim i (grid's last dim is in
              // reverse order: x first).
              SmallVector<Value> coord(k);
              for (int64_t i = 0; i < k; ++i) {
                SmallVector<Value> at = {iv[0]};
                at.append(iv.begin() + 2, iv.end());
                at.push_back(arith::ConstantIndexOp::create(b, l, k - 1 - i));
                Value n = tensor::ExtractOp::create(b, l, grid, at);
                double d = xType.getDimSize(2 + i);
                Value v = align ? f.mul(f.add(n, f.c(1)), f.c((d - 1) / 2))
                                : f.div(f.sub(f.mul(f.add(n, f.c(1)), f.c(d)), f.c(1)),
                                        f.c(2));
                if (mode == "nearest")
                  v = f.rint(v);
                double lo = align ? 0.0 : -0.5, hi = align ? d - 1 : d - 0.5;
                if (padding == "border")
                  v = f.sel(f.lt(v, f.c(lo)), f.clamp(v, 0, d - 1),
                            f.sel(f.gt(v, f.c(hi)), f.clamp(v, 0, d - 1), v));
                else if (padding == "reflection")
                  v = f.reflect(v, lo, hi);
                coord[i] = v;
              }
              // Per dim: the first tap's index (float) and each tap's weight.
              SmallVector<Value> base(k);
              SmallVector<SmallVector<Value>> weights(k);
              for (int64_t i = 0; i < k; ++i) {
                if (mode == "nearest") {
                  base[i] = coord[i];
                  weights[i] = {f.c(1)};
                  continue;
                }
                Value x0 = f.floor(coord[i]);
                Value t = f.sub(coord[i], x0);
                if (mode == "linear") {
                  base[i] = x0;
                  weights[i] = {f.sub(f.c(1), t), t};
                  continue;
                }
                base[i] = f.sub(x0, f.c(1));
                const double a = -0.75;
                Value t1 = f.add(t, f.c(1)), u = f.sub(f.c(1), t),
                      u1 = f.sub(f.c(2), t);
                auto outer = [&](Value s) { // A s^3 - 5A s^2 + 8A s - 4A
                  return f.sub(f.mul(f.add(f.mul(f.sub(f.mul(f.c(a), s), f.c(5 * a)), s),
                                           f.c(8 * a)),
                                     s),
                               f.c(4 * a));
                };
                auto inner = [&](Value s) { // (A+2) s^3 - (A+3) s^2 + 1
                  return f.add(f.mul(f.mul(f.sub(f.mul(f.c(a + 2), s), f.c(a + 3)), s), s),
                               f.c(1));
                };
                weights[i] = {outer(t1), inner(t), inner(u), outer(u1)};
              }
              // Sum over every combination of taps.
              Value acc = f.c(0);
              for (int64_t combo = 0; combo < combos; ++combo) {
                int64_t rest = combo;
                Value w = f.c(1);
                Value inside = arith::ConstantIntOp::create(b, l, 1, 1);
                SmallVector<Value> at = {iv[0], iv[1]};
                SmallVector<int64_t> tapOf(k);
                for (int64_t i = k - 1; i >= 0; --i) {
                  tapOf[i] = rest % taps;
                  rest /= taps;
                }
                for (int64_t i = 0; i < k; ++i) {
                  double d = xType.getDimSize(2 + i);
                  Value idx = f.add(base[i], f.c(double(tapOf[i])));
                  w = f.mul(w, weights[i][tapOf[i]]);
                  if (padding == "zeros") {
                    Value in = arith::AndIOp::create(
                        b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, idx, f.c(0)),
                        arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, idx,
                                              f.c(d - 1)));
                    inside = arith::AndIOp::create(b, l, inside, in);
                  } else if (padding == "reflection" && mode != "nearest") {
                    idx = f.reflect(idx, align ? 0.0 : -0.5, align ? d - 1 : d - 0.5);
                  }
                  // Truncation toward zero then clamping keeps every read
                  // inside the input (taps outside are weighted 0 in
                  // `zeros` mode; `border` clamps by definition).
                  Value clamped = f.clamp(idx, 0, d - 1);
                  Value asInt = arith::FPToSIOp::create(b, l, b.getI64Type(), clamped);
                  at.push_back(arith::IndexCastOp::create(b, l, b.getIndexType(), asInt));
                }
                Value v = tensor::ExtractOp::create(b, l, x, at);
                Value term = f.mul(w, v);
                if (padding == "zeros")
                  term = f.sel(inside, term, f.c(0));
                acc = f.add(acc, term);
              }
              linalg::YieldOp::create(b, l, acc);
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateGridSamplePatterns(TypeConverter &converter,
                                RewritePatternSet &patterns) {
  patterns.add<GridSampleLowering>(converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
