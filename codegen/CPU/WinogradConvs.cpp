//===- WinogradConvs.cpp - 3x3 convolutions as Winograd F(2x2, 3x3) -------===//
//
// A 3x3 stride-1 convolution computes each 2x2 block of outputs from a 4x4
// block of inputs with 16 multiplies per (c, f) instead of 36 (Lavin & Gray,
// "Fast Algorithms for Convolutional Neural Networks"):
//   Y = A^T [ (G g G^T) . (B^T d B) ] A      (. elementwise, 4x4)
// With constant weights U = G g G^T is computed at compile time, and the
// elementwise product summed over c is 16 matrix products, one per position
// a of the 4x4 tile:  M_a[tile][f] = sum_c V_a[tile][c] * U_a[c][f].
//
// On tensors, before elementwise fusion, the convolution becomes
//  - the input transform: one linalg.generic with one result V, stored
//    position-major [i][j][n][ty][tx][c] (loops (n, ty, tx, i, j, c): a
//    tile's 16 values are computed together), each value the sum of 4 taps
//    of the padded input with signs +-1;
//  - one linalg.batch_matmul of V viewed as [16][tiles][C] by the constant
//    U [16][C][F], which kiln-emit-microkernels runs on its register-blocked
//    kernel with U packed at compile time (one parallel loop for the 16
//    products, where 16 matmuls were 16 thread-pool dispatches: SqueezeNet
//    1.3% faster at 2 threads);
//  - the output transform: one linalg.generic over the conv's output
//    (n, y, x, f), identity output map, reading M at
//    (a, n, y floordiv 2, x floordiv 2, f) and selecting the row/column of A^T
//    by y mod 2, x mod 2. kiln-fuse-elementwise fuses it into the bias /
//    activation / residual add that follows, so the result is written once;
//    kiln-parallelize-loops splits it by whole rows and pixels (tile 1, so
//    the floordiv maps stay exact) and keeps f innermost (vectorized).
// An odd output size leaves the last tile half outside: it reads one row or
// column past the input (the pad grows by one on its high side) and the
// outputs it computes there are never read.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/CPU/ConstantData.h"
#include "dialects/Kiln/KilnDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

namespace kiln {
#define GEN_PASS_DEF_KILNWINOGRADCONVSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

// Transform matrices of F(2x2, 3x3) (Lavin & Gray).
constexpr int kTile = 4; // input tile; output tile is 2
constexpr int kPositions = kTile * kTile;
constexpr double kG[4][3] = {
    {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
// B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]: row i
// is tap P[i] plus or minus tap Q[i] (plus only in row kPlusRow).
constexpr int kTapP[4] = {0, 1, 2, 1};
constexpr int kTapQ[4] = {2, 2, 1, 3};
constexpr int kPlusRow = 1;
constexpr int kAT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

/// sum_k coeffs[k] * values[k] for coefficients in {-1, 0, 1}, as adds and
/// subtracts starting from a +1 term (every row of A^T has one).
Value combine(OpBuilder &b, Location loc, ArrayRef<int> coeffs,
              ArrayRef<Value> values) {
  int first = llvm::find(coeffs, 1) - coeffs.begin();
  Value sum = values[first];
  for (auto [k, c] : llvm::enumerate(coeffs)) {
    if ((int)k == first || c == 0)
      continue;
    sum = c > 0 ? arith::AddFOp::create(b, loc, sum, values[k]).getResult()
                : arith::SubFOp::create(b, loc, sum, values[k]).getResult();
  }
  return sum;
}

/// U_a = (G g G^T)_a for every (c, f) of the HWCF filter `g`: [16][C][F].
SmallVector<float> transformFilter(ArrayRef<float> g, int64_t ch, int64_t f) {
  SmallVector<float> u(kPositions * ch * f, 0.0f);
  auto at = [&](int kh, int kw, int64_t cf) {
    return (double)g[(kh * 3 + kw) * ch * f + cf];
  };
  for (int64_t cf = 0; cf < ch * f; ++cf) {
    double gG[3][4]; // g G^T
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < kTile; ++j)
        gG[k][j] = kG[j][0] * at(k, 0, cf) + kG[j][1] * at(k, 1, cf) +
                   kG[j][2] * at(k, 2, cf);
    for (int i = 0; i < kTile; ++i)
      for (int j = 0; j < kTile; ++j)
        u[(i * kTile + j) * ch * f + cf] = static_cast<float>(
            kG[i][0] * gG[0][j] + kG[i][1] * gG[1][j] + kG[i][2] * gG[2][j]);
  }
  return u;
}

/// `input` with at least `rows` x `cols` in dims 1, 2 (zeros added on the
/// high side). A constant pad (the conv's zero padding) grows instead of
/// padding twice; what the extra row / column holds only reaches outputs
/// past the edge, which are never read.
Value padTo(OpBuilder &b, Location loc, Value input, int64_t rows,
            int64_t cols) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t extraH = std::max<int64_t>(0, rows - type.getDimSize(1));
  int64_t extraW = std::max<int64_t>(0, cols - type.getDimSize(2));
  if (!extraH && !extraW)
    return input;
  SmallVector<int64_t> shape(type.getShape());
  shape[1] += extraH;
  shape[2] += extraW;
  auto paddedType = RankedTensorType::get(shape, type.getElementType());
  Value source = input;
  Attribute value = b.getF32FloatAttr(0.0f);
  SmallVector<int64_t> low(4, 0), high(4, 0);
  auto pad = input.getDefiningOp<tensor::PadOp>();
  Attribute padValue;
  if (pad && !pad.getNofold() &&
      !ShapedType::isDynamicShape(pad.getStaticLow()) &&
      !ShapedType::isDynamicShape(pad.getStaticHigh()) &&
      pad.getConstantPaddingValue() &&
      matchPattern(pad.getConstantPaddingValue(), m_Constant(&padValue))) {
    source = pad.getSource();
    value = padValue;
    low = llvm::to_vector(pad.getStaticLow());
    high = llvm::to_vector(pad.getStaticHigh());
  }
  high[1] += extraH;
  high[2] += extraW;
  Value constant =
      arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
  return tensor::PadOp::create(b, loc, paddedType, source,
                               getAsIndexOpFoldResult(b.getContext(), low),
                               getAsIndexOpFoldResult(b.getContext(), high),
                               constant);
}

/// Rewrites `conv` when its strategy (kiln-select-kernel-strategy, which
/// weighs whether the transforms pay) says Winograd and it is eligible.
LogicalResult rewrite(IRRewriter &b, linalg::Conv2DNhwcHwcfOp conv) {
  auto strategy = conv->getAttrOfType<kiln::KernelStrategyAttr>(
      kiln::KernelStrategyAttr::kAttrName);
  if (!strategy || !strategy.getWinograd())
    return failure();
  if (!conv.hasPureTensorSemantics() ||
      !llvm::all_of(conv.getStrides().getValues<int64_t>(),
                    [](int64_t s) { return s == 1; }) ||
      !llvm::all_of(conv.getDilations().getValues<int64_t>(),
                    [](int64_t d) { return d == 1; }))
    return failure();
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  auto inType = cast<RankedTensorType>(input.getType());
  auto fType = cast<RankedTensorType>(filter.getType());
  auto outType = cast<RankedTensorType>(init.getType());
  if (!inType.hasStaticShape() || !fType.hasStaticShape() ||
      !outType.hasStaticShape() || !outType.getElementType().isF32() ||
      !inType.getElementType().isF32() || fType.getDimSize(0) != 3 ||
      fType.getDimSize(1) != 3)
    return failure();
  int64_t n = outType.getDimSize(0), oh = outType.getDimSize(1),
          ow = outType.getDimSize(2), f = outType.getDimSize(3);
  int64_t ch = fType.getDimSize(2);
  int64_t th = (oh + 1) / 2, tw = (ow + 1) / 2, tiles = n * th * tw;
  Attribute filterAttr;
  if (!matchPattern(filter, m_Constant(&filterAttr)))
    return failure();
  std::optional<SmallVector<float>> weights = kiln::f32ConstantData(filterAttr);
  if (!weights)
    return failure();

  Location loc = conv.getLoc();
  MLIRContext *ctx = b.getContext();
  b.setInsertionPoint(conv);
  Type f32 = b.getF32Type();

  // Input transform: V[i][j][n][ty][tx][c] = (B^T d B)[i][j] of the 4x4
  // tile d at (2ty, 2tx). The four taps are read with tensor.extract at
  // indices computed from (i, j), invariant in the contiguous c loop. (16
  // results, one buffer per position, kept LLVM from vectorizing the loop:
  // too many pointers to check for overlap; it ran 8x slower.)
  Value padded = padTo(b, loc, input, 2 * th + 2, 2 * tw + 2);
  auto vType = RankedTensorType::get({kTile, kTile, n, th, tw, ch}, f32);
  Value vInit = tensor::EmptyOp::create(b, loc, vType.getShape(), f32);
  // Loops (n, ty, tx, i, j, c): a tile's 16 values are computed together
  // (its input taps stay in cache) and stored position-major.
  AffineMap vMap = AffineMap::getPermutationMap(
      ArrayRef<unsigned>{3, 4, 0, 1, 2, 5}, ctx);
  Value v =
      linalg::GenericOp::create(
          b, loc, TypeRange{vType}, ValueRange{}, ValueRange{vInit},
          {vMap},
          SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange) {
            auto index = [&](int64_t value) {
              return arith::ConstantIndexOp::create(nb, l, value).getResult();
            };
            auto table = [&](Value k, ArrayRef<int> values) {
              Value result = index(values[0]);
              for (int m = 1; m < kTile; ++m) {
                Value isM = arith::CmpIOp::create(
                    nb, l, arith::CmpIPredicate::eq, k, index(m));
                result = arith::SelectOp::create(nb, l, isM, index(values[m]),
                                                 result);
              }
              return result;
            };
            auto sign = [&](Value k) {
              Value isPlus = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::eq, k, index(kPlusRow));
              return arith::SelectOp::create(
                  nb, l, isPlus,
                  arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(1.0f)),
                  arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(-1.0f)))
                  .getResult();
            };
            Value batch = linalg::IndexOp::create(nb, l, 0);
            Value ty = linalg::IndexOp::create(nb, l, 1);
            Value tx = linalg::IndexOp::create(nb, l, 2);
            Value i = linalg::IndexOp::create(nb, l, 3);
            Value j = linalg::IndexOp::create(nb, l, 4);
            Value c = linalg::IndexOp::create(nb, l, 5);
            auto origin = [&](Value t) {
              return arith::MulIOp::create(nb, l, t, index(2)).getResult();
            };
            Value y0 = origin(ty), x0 = origin(tx);
            Value rows[2] = {arith::AddIOp::create(nb, l, y0, table(i, kTapP)),
                             arith::AddIOp::create(nb, l, y0, table(i, kTapQ))};
            Value cols[2] = {arith::AddIOp::create(nb, l, x0, table(j, kTapP)),
                             arith::AddIOp::create(nb, l, x0, table(j, kTapQ))};
            auto tap = [&](int r, int col) {
              return tensor::ExtractOp::create(
                         nb, l, padded,
                         ValueRange{batch, rows[r], cols[col], c})
                  .getResult();
            };
            // (d[P][P'] + sj d[P][Q']) + si (d[Q][P'] + sj d[Q][Q']); an FMA
            // by +-1 is exact, like the add or subtract it stands for.
            Value si = sign(i), sj = sign(j);
            Value rowP = math::FmaOp::create(nb, l, sj, tap(0, 1), tap(0, 0));
            Value rowQ = math::FmaOp::create(nb, l, sj, tap(1, 1), tap(1, 0));
            linalg::YieldOp::create(
                nb, l, ValueRange{math::FmaOp::create(nb, l, si, rowQ, rowP)});
          })
          .getResult(0);

  // The 16 products M_a = V_a U_a, [tiles, F] each, as one batch matmul
  // (one parallel loop, not 16) over V viewed as [16][tiles][C].
  SmallVector<float> u = transformFilter(*weights, ch, f);
  auto uType = RankedTensorType::get({kPositions, ch, f}, f32);
  Value uConst = arith::ConstantOp::create(
      b, loc, uType, kiln::f32ConstantAttr(uType, u, "kiln_winograd"));
  Value vFlat = tensor::CollapseShapeOp::create(
      b, loc, v, SmallVector<ReassociationIndices>{{0, 1}, {2, 3, 4}, {5}});
  auto mType = RankedTensorType::get({kPositions, tiles, f}, f32);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value mInit = linalg::FillOp::create(
                    b, loc, zero,
                    tensor::EmptyOp::create(b, loc, mType.getShape(), f32)
                        .getResult())
                    .getResult(0);
  Value m = linalg::BatchMatmulOp::create(b, loc, TypeRange{mType},
                                          ValueRange{vFlat, uConst},
                                          ValueRange{mInit})
                .getResult(0);
  Value products = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({kPositions, n, th, tw, f}, f32), m,
      SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4}});

  // Output transform: out[n][y][x][f] = init + (A^T M A)[y mod 2][x mod 2]
  // of tile (y / 2, x / 2). The conv's init is a fill's scalar (added unless
  // zero) or a tensor read in place.
  Value initScalar, initTensor;
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    if (!matchPattern(fill.value(), m_AnyZeroFloat()))
      initScalar = fill.value();
  } else {
    initTensor = init;
  }
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(4, ctx);
  SmallVector<Value> outInputs(kPositions, products);
  SmallVector<AffineMap> outMaps;
  for (int a = 0; a < kPositions; ++a)
    outMaps.push_back(AffineMap::get(
        4, 0,
        {getAffineConstantExpr(a, ctx), d0, d1.floorDiv(2), d2.floorDiv(2),
         d3},
        ctx));
  if (initTensor) {
    outInputs.push_back(initTensor);
    outMaps.push_back(identity);
  }
  outMaps.push_back(identity);
  Value outEmpty = tensor::EmptyOp::create(b, loc, outType.getShape(), f32);
  auto outputTransform = linalg::GenericOp::create(
      b, loc, TypeRange{outType}, outInputs, ValueRange{outEmpty}, outMaps,
      SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        auto isEven = [&](int dim) {
          Value idx = linalg::IndexOp::create(nb, l, dim);
          Value two = arith::ConstantIndexOp::create(nb, l, 2);
          Value rem = arith::RemUIOp::create(nb, l, idx, two);
          Value zeroIdx = arith::ConstantIndexOp::create(nb, l, 0);
          return arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, rem,
                                       zeroIdx)
              .getResult();
        };
        Value evenY = isEven(1), evenX = isEven(2);
        // Row y mod 2 of A^T M (one value per tile column), then column
        // x mod 2 of that times A.
        SmallVector<Value> row;
        for (int col = 0; col < kTile; ++col) {
          SmallVector<Value> column;
          for (int k = 0; k < kTile; ++k)
            column.push_back(args[k * kTile + col]);
          row.push_back(arith::SelectOp::create(
              nb, l, evenY, combine(nb, l, kAT[0], column),
              combine(nb, l, kAT[1], column)));
        }
        Value result =
            arith::SelectOp::create(nb, l, evenX, combine(nb, l, kAT[0], row),
                                    combine(nb, l, kAT[1], row));
        if (initScalar)
          result = arith::AddFOp::create(nb, l, result, initScalar);
        if (initTensor)
          result = arith::AddFOp::create(nb, l, result, args[kPositions]);
        linalg::YieldOp::create(nb, l, result);
      });
  b.replaceOp(conv, outputTransform.getResult(0));
  return success();
}

struct WinogradConvsPass
    : kiln::impl::KilnWinogradConvsPassBase<WinogradConvsPass> {
  void runOnOperation() override {
    SmallVector<linalg::Conv2DNhwcHwcfOp> convs;
    getOperation().walk(
        [&](linalg::Conv2DNhwcHwcfOp conv) { convs.push_back(conv); });
    IRRewriter rewriter(&getContext());
    for (linalg::Conv2DNhwcHwcfOp conv : convs)
      (void)rewrite(rewriter, conv);
  }
};

} // namespace
