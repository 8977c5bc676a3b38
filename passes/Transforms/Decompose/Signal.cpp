//===- Signal.cpp - kiln-decompose: DFT, STFT -----------------------------===//
//
// DFT as one MatMul with a constant matrix (the naive O(N * L) transform,
// computed in double at compile time): the signal axis moved next to the
// component dim and the two flattened ([..., N * C]), times W [N * C,
// K * Cout], reshaped to [..., K, Cout] and moved back. W holds the forward
// transform (e^-i2pi kn/L), the inverse (e^+i2pi kn/L / L) or, one-sided
// inverse, numpy's irfft (bins 0 and L/2 once, the others twice: the
// Hermitian half left out, their imaginary parts ignored). Rows past the
// signal length L are zero (truncation); bins past the input read nothing
// (zero padding). STFT: the frames gathered ([batch, frames, frame_length,
// C], constant indices), times the window, then the same matrix.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Decompose/Expansion.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;

namespace kiln::decompose {

namespace {

/// The constant W [n * c, k * cOut] (cOut 1 for irfft, else 2) that maps a
/// signal of n samples of c components, flattened, to k bins of a transform
/// of length l. Empty after an error (a matrix over kiln's table limit).
V dftMatrix(Expansion &e, int64_t n, int64_t c, int64_t l, int64_t k,
            bool inverse, bool irfft, FloatType elemType) {
  int64_t cOut = irfft ? 1 : 2;
  int64_t rows = n * c, cols = k * cOut;
  if (failed(e.checkTable(rows * cols, "the DFT matrix")))
    return V();
  // W[n * C + c][k * Cout + co].
  SmallVector<double> w(rows * cols, 0.0);
  const double twoPi = 2.0 * llvm::numbers::pi;
  if (!irfft) {
    double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / l : 1.0;
    for (int64_t i = 0; i < std::min(n, l); ++i)
      for (int64_t j = 0; j < k; ++j) {
        double theta = twoPi * static_cast<double>((i * j) % l) / l;
        double cs = std::cos(theta) * scale, sn = sign * std::sin(theta) * scale;
        // (xr + i xi)(cos + i sn)
        w[(i * c) * cols + j * 2] = cs;
        w[(i * c) * cols + j * 2 + 1] = sn;
        if (c == 2) {
          w[(i * c + 1) * cols + j * 2] = -sn;
          w[(i * c + 1) * cols + j * 2 + 1] = cs;
        }
      }
  } else {
    int64_t bins = std::min(n, l / 2 + 1);
    for (int64_t i = 0; i < bins; ++i) {
      bool edge = i == 0 || (l % 2 == 0 && i == l / 2);
      double weight = (edge ? 1.0 : 2.0) / l;
      for (int64_t j = 0; j < k; ++j) {
        double theta = twoPi * static_cast<double>((i * j) % l) / l;
        w[(i * c) * cols + j] = weight * std::cos(theta);
        if (c == 2 && !edge)
          w[(i * c + 1) * cols + j] = -weight * std::sin(theta);
      }
    }
  }
  SmallVector<APFloat> values;
  values.reserve(w.size());
  for (double v : w) {
    APFloat f(v);
    bool losesInfo = false;
    f.convert(elemType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
              &losesInfo);
    values.push_back(f);
  }
  return e.ctx.addConstant(
      DenseElementsAttr::get(RankedTensorType::get({rows, cols}, elemType),
                             values),
      "dft_matrix");
}

} // namespace

LogicalResult expandDFT(Expansion &e) {
  V x = e.input(0);
  RankedTensorType t = e.type(x);
  if (!t || !t.hasStaticShape() || t.getRank() < 2 ||
      !onnxFloatType(t.getElementType()))
    return e.error() << "needs a static float input of rank >= 2", failure();
  int64_t rank = t.getRank(), c = t.getShape().back();
  int64_t axis = -2;
  if (!e.input(2).empty()) {
    std::optional<SmallVector<int64_t>> v = e.constantInts(e.input(2));
    if (!v || v->size() != 1)
      return e.error() << "axis must be a constant scalar", failure();
    axis = (*v)[0];
  }
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank - 1 || (c != 1 && c != 2))
    return e.error() << "axis or the component dim is out of range", failure();
  bool inverse = e.getInt("inverse", 0) != 0,
       onesided = e.getInt("onesided", 0) != 0;
  bool irfft = inverse && onesided;
  int64_t n = t.getDimSize(axis);
  int64_t l = irfft ? 2 * (n - 1) : n;
  if (!e.input(1).empty()) {
    std::optional<SmallVector<int64_t>> v = e.constantInts(e.input(1));
    if (!v || v->size() != 1)
      return e.error() << "dft_length must be a constant scalar", failure();
    l = (*v)[0];
  }
  if (l < 1)
    return e.error() << "the signal length must be positive", failure();
  int64_t k = irfft ? l : (onesided ? l / 2 + 1 : l);
  int64_t cOut = irfft ? 1 : 2;
  int64_t rows = n * c;

  V matrix = dftMatrix(e, n, c, l, k, inverse, irfft,
                       cast<FloatType>(t.getElementType()));
  if (matrix.empty())
    return failure();

  // The signal axis next to the components: perm = the other dims, axis, C.
  SmallVector<int64_t> perm, outer;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis) {
      perm.push_back(d);
      outer.push_back(t.getDimSize(d));
    }
  perm.append({axis, rank - 1});
  bool moved = axis != rank - 2;
  V xt = moved ? e.add("Transpose", {x}, {intsAttr("perm", perm)}) : x;
  SmallVector<int64_t> flat(outer);
  flat.push_back(rows);
  V product = e.add("MatMul", {e.add("Reshape", {xt, e.i64s(flat)}), matrix});
  SmallVector<int64_t> unflat(outer);
  unflat.append({k, cOut});
  if (!moved) {
    e.add("Reshape", {product, e.i64s(unflat)}, {}, e.output(0));
    return success();
  }
  V y = e.add("Reshape", {product, e.i64s(unflat)});
  SmallVector<int64_t> back(rank);
  for (int64_t i = 0; i < rank; ++i)
    back[perm[i]] = i;
  e.add("Transpose", {y}, {intsAttr("perm", back)}, e.output(0));
  return success();
}

// STFT: output[b, f, k] = sum_n signal[b, f * step + n] * window[n] *
// e^-i2pi kn/L over the frame (L = frame_length).
LogicalResult expandSTFT(Expansion &e) {
  V signal = e.input(0), window = e.input(2);
  RankedTensorType t = e.type(signal);
  if (!t || !t.hasStaticShape() || t.getRank() != 3 ||
      !onnxFloatType(t.getElementType()))
    return e.error() << "needs a static float signal [batch, length, 1 or 2]",
           failure();
  int64_t batch = t.getDimSize(0), length = t.getDimSize(1),
          c = t.getDimSize(2);
  std::optional<SmallVector<int64_t>> step = e.constantInts(e.input(1));
  if (!step || step->size() != 1 || (*step)[0] < 1)
    return e.error() << "frame_step must be a positive constant", failure();
  int64_t l = 0;
  if (!e.input(3).empty()) {
    std::optional<SmallVector<int64_t>> v = e.constantInts(e.input(3));
    if (!v || v->size() != 1)
      return e.error() << "frame_length must be a constant scalar", failure();
    l = (*v)[0];
  } else if (RankedTensorType wt = e.type(window); wt && wt.getRank() == 1) {
    l = wt.getDimSize(0);
  }
  if (l < 1 || l > length || (c != 1 && c != 2))
    return e.error() << "frame_length must be in [1, signal length]", failure();
  bool onesided = e.getInt("onesided", 1) != 0;
  int64_t frames = (length - l) / (*step)[0] + 1;
  int64_t k = onesided ? l / 2 + 1 : l;
  if (failed(e.checkTable(frames * l, "the STFT frame indices")))
    return failure();
  SmallVector<int64_t> indices;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t n = 0; n < l; ++n)
      indices.push_back(f * (*step)[0] + n);
  auto indexType =
      RankedTensorType::get({frames, l}, IntegerType::get(e.ctx.getContext(), 64));
  V framed = e.add("Gather", {signal, e.ctx.addConstant(DenseElementsAttr::get(
                                          indexType, ArrayRef<int64_t>(indices)),
                                      "frame_indices")},
                   {intAttr("axis", 1)});
  if (!window.empty())
    framed = e.add("Mul", {framed, e.add("Reshape", {window, e.i64s({1, 1, l, 1})})});
  V matrix = dftMatrix(e, l, c, l, k, /*inverse=*/false, /*irfft=*/false,
                       cast<FloatType>(t.getElementType()));
  if (matrix.empty())
    return failure();
  V product = e.add("MatMul",
                    {e.add("Reshape", {framed, e.i64s({batch, frames, l * c})}), matrix});
  e.add("Reshape", {product, e.i64s({batch, frames, k, 2})}, {}, e.output(0));
  return success();
}

} // namespace kiln::decompose
