//===- Normalization.cpp - kiln-decompose: normalizations -----------------===//
//
// Follows the function body the ONNX spec gives for each op (onnx/defs/*/defs.cc of
// onnx 1.23), as the importer expanded it before kiln-decompose existed.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Decompose/Expansion.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;

namespace kiln::decompose {

//===----------------------------------------------------------------------===//
// RMSNormalization
//===----------------------------------------------------------------------===//

// Y = Cast(XU / Sqrt(ReduceMean(XU * XU, axes >= axis) + epsilon)) * scale,
// XU = X cast to the stash type (float by default).
LogicalResult expandRMSNormalization(Expansion &e) {
  V x = e.input(0), scale = e.input(1);
  RankedTensorType xType = e.type(x);
  if (!xType || xType.getRank() == 0)
    return e.error() << "needs a ranked 'X' of rank >= 1", failure();
  int64_t rank = xType.getRank();
  int64_t axis = e.getInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return e.error() << "axis " << axis << " is out of range for rank " << rank,
           failure();
  if (axis < 0)
    axis += rank;
  int64_t stash = e.getInt("stash_type", 1);
  if (stash != KILN_DTYPE_FLOAT32)
    return e.error() << "stash_type " << stash << " is not supported (only 1, "
                     << "float)",
           failure();
  Type f32 = Float32Type::get(e.ctx.getContext());
  bool cast = !xType.getElementType().isF32();
  V xu =
      cast ? e.add("Cast", {x}, {intAttr("to", KILN_DTYPE_FLOAT32)}) : x;
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d)
    axes.push_back(d);
  V meanSquare =
      e.reduce("ReduceMean", e.add("Mul", {xu, xu}), axes, true);
  V rms = e.add(
      "Sqrt",
      {e.add("Add", {meanSquare, e.scalar(f32, e.getFloat("epsilon", 1e-5f))})});
  V normalized = e.add("Div", {xu, rms});
  if (cast) {
    V back = e.add("CastLike", {normalized, x});
    normalized = back;
  }
  e.add("Mul", {normalized, scale}, {}, e.output(0));
  return success();
}

//===----------------------------------------------------------------------===//
// GroupNormalization, LpNormalization
//===----------------------------------------------------------------------===//

// Normalize each group of C / num_groups channels (with all spatial
// positions) to mean 0 and variance 1, then scale and shift per channel.
LogicalResult expandGroupNormalization(Expansion &e) {
  V x = e.input(0), scale = e.input(1), bias = e.input(2);
  RankedTensorType t = e.type(x);
  if (!t || !t.hasStaticShape() || t.getRank() < 2 || !t.getElementType().isF32())
    return e.error() << "needs a static float32 input of rank >= 2", failure();
  int64_t groups = e.getInt("num_groups", 0), channels = t.getDimSize(1);
  if (groups < 1 || channels % groups)
    return e.error() << "num_groups must divide the " << channels << " channels",
           failure();
  Type elem = t.getElementType();
  V grouped = e.add("Reshape", {x, e.i64s({t.getDimSize(0), groups, -1})});
  V mean = e.reduce("ReduceMean", grouped, {2}, true);
  V centeredX = e.add("Sub", {grouped, mean});
  V var = e.reduce("ReduceMean", e.add("Mul", {centeredX, centeredX}), {2}, true);
  V normalized = e.add(
      "Div", {centeredX, e.add("Sqrt", {e.add("Add", {var, e.scalar(elem, e.getFloat("epsilon", 1e-5f))})})});
  V back = e.add("Reshape", {normalized, e.i64s(t.getShape())});
  SmallVector<int64_t> perChannel(t.getRank(), 1);
  perChannel[1] = channels;
  V y = e.add("Mul", {back, e.add("Reshape", {scale, e.i64s(perChannel)})});
  e.add("Add", {y, e.add("Reshape", {bias, e.i64s(perChannel)})}, {}, e.output(0));
  return success();
}

// x / (sum |x|^p along axis)^(1/p), p = 1 or 2; 0 where the norm is 0.
LogicalResult expandLpNormalization(Expansion &e) {
  V x = e.input(0);
  RankedTensorType t = e.type(x);
  if (!t || t.getRank() == 0)
    return e.error() << "needs a ranked input", failure();
  int64_t p = e.getInt("p", 2), axis = e.getInt("axis", -1), rank = t.getRank();
  if (p != 1 && p != 2)
    return e.error() << "p must be 1 or 2 (got " << p << ")", failure();
  if (axis < -rank || axis >= rank)
    return e.error() << "axis " << axis << " is out of range", failure();
  if (axis < 0)
    axis += rank;
  V norm =
      p == 1 ? e.reduce("ReduceSum", e.add("Abs", {x}), {axis}, true)
             : e.add("Sqrt", {e.reduce("ReduceSum", e.add("Mul", {x, x}), {axis}, true)});
  // A zero norm gives 0, not 0/0 = NaN (as onnx's reference does).
  Type elem = t.getElementType();
  V isZero = e.add("Equal", {norm, e.scalar(elem, 0.0)});
  e.add("Where", {isZero, e.scalar(elem, 0.0), e.add("Div", {x, norm})}, {},
        e.output(0));
  return success();
}

//===----------------------------------------------------------------------===//
// MeanVarianceNormalization, LRN
//===----------------------------------------------------------------------===//

// The spec's body: (X - E[X]) / (Sqrt(E[X^2] - E[X]^2) + 1e-9), means over
// `axes` (default [0, 2, 3]) kept as dims.
LogicalResult expandMeanVarianceNormalization(Expansion &e) {
  V x = e.input(0);
  RankedTensorType t = e.type(x);
  if (!t || !onnxFloatType(t.getElementType()))
    return e.error() << "needs a float input", failure();
  SmallVector<int64_t> axes = {0, 2, 3};
  if (const Attr *a = findAttr(e.node, "axes"))
    axes.assign(a->ints().begin(), a->ints().end());
  Type elem = t.getElementType();
  V mean = e.reduce("ReduceMean", x, axes, true);
  V meanOfSquares = e.reduce("ReduceMean", e.add("Mul", {x, x}), axes, true);
  V variance = e.add("Sub", {meanOfSquares, e.add("Mul", {mean, mean})});
  V std = e.add("Add", {e.add("Sqrt", {variance}), e.scalar(elem, 1e-9)});
  e.add("Div", {e.add("Sub", {x, mean}), std}, {}, e.output(0));
  return success();
}

// X / (bias + alpha / size * square_sum)^beta, square_sum over the channels
// c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2): X^2 seen as
// [N, 1, C, rest] through an AveragePool of kernel [size, 1] that counts the
// pads (its mean is square_sum / size).
LogicalResult expandLRN(Expansion &e) {
  V x = e.input(0);
  RankedTensorType t = e.type(x);
  if (!t || !t.hasStaticShape() || t.getRank() < 2 ||
      !onnxFloatType(t.getElementType()))
    return e.error() << "needs a static float input of rank >= 2", failure();
  int64_t size = e.getInt("size", 0);
  if (size < 1)
    return e.error() << "size must be positive, got " << size, failure();
  Type elem = t.getElementType();
  int64_t rest = 1;
  for (int64_t d : t.getShape().drop_front(2))
    rest *= d;
  V squares = e.add("Reshape", {e.add("Mul", {x, x}),
                                e.i64s({t.getDimSize(0), 1, t.getDimSize(1), rest})});
  V mean = e.add("AveragePool", {squares},
                 {intsAttr("kernel_shape", {size, 1}),
                  intsAttr("pads", {(size - 1) / 2, 0, size / 2, 0}),
                  intAttr("count_include_pad", 1)});
  mean = e.add("Reshape", {mean, e.i64s(t.getShape())});
  V base = e.add("Add", {e.scalar(elem, e.getFloat("bias", 1.0f)),
                         e.add("Mul", {mean, e.scalar(elem, e.getFloat("alpha", 1e-4f))})});
  V denominator = e.add("Pow", {base, e.scalar(elem, e.getFloat("beta", 0.75f))});
  e.add("Div", {x, denominator}, {}, e.output(0));
  return success();
}

// BatchNormalization with training_mode 1 (the inference form stays for
// convert-onnx-to-linalg, keptForLowering): normalized with the batch's own
// mean and (population) variance over every dim but the channels;
// running_mean / running_var = input * momentum + batch * (1 - momentum).
LogicalResult expandBatchNormalizationTraining(Expansion &e) {
  V x = e.input(0), scale = e.input(1), bias = e.input(2), inMean = e.input(3),
    inVar = e.input(4);
  RankedTensorType t = e.type(x);
  if (!t || !t.hasStaticShape() || t.getRank() < 2 ||
      !onnxFloatType(t.getElementType()))
    return e.error() << "needs a static float input of rank >= 2", failure();
  Type elem = t.getElementType();
  int64_t rank = t.getRank(), c = t.getDimSize(1);
  SmallVector<int64_t> axes = {0}, channelShape = {c};
  for (int64_t d = 2; d < rank; ++d) {
    axes.push_back(d);
    channelShape.push_back(1);
  }
  V mean = e.reduce("ReduceMean", x, axes, true);
  V centered = e.add("Sub", {x, mean});
  V var = e.reduce("ReduceMean", e.add("Mul", {centered, centered}), axes, true);
  V std = e.add("Sqrt", {e.add("Add", {var, e.scalar(elem, e.getFloat("epsilon", 1e-5f))})});
  V perChannel = e.add("Mul", {e.add("Div", {centered, std}),
                               e.add("Reshape", {scale, e.i64s(channelShape)})});
  e.add("Add", {perChannel, e.add("Reshape", {bias, e.i64s(channelShape)})}, {},
        e.output(0));
  double momentum = e.getFloat("momentum", 0.9f);
  auto running = [&](V input, V batch, Output out) {
    if (out.empty())
      return;
    V kept = e.add("Mul", {input, e.scalar(elem, momentum)});
    V added = e.add("Mul", {e.add("Reshape", {batch, e.i64s({c})}),
                            e.scalar(elem, 1.0 - momentum)});
    e.add("Add", {kept, added}, {}, out);
  };
  running(inMean, mean, e.output(1));
  running(inVar, var, e.output(2));
  return success();
}

} // namespace kiln::decompose
