//===- Convolution.cpp - kiln-decompose: ConvTranspose, LpPool, Col2Im ----===//
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
// ConvTranspose
//===----------------------------------------------------------------------===//

// ConvTranspose as the Conv it is the gradient of: the input with s - 1 zeros
// inserted between elements (stride s), padded by d * (k - 1) minus the
// transposed pads (plus output_padding at the end), convolved at stride 1 and
// dilation d with the kernel flipped spatially and its in/out channels swapped
// per group. Pads follow onnx's reference (auto_pad, output_shape).
LogicalResult expandConvTranspose(Expansion &e) {
  V x = e.input(0), w = e.input(1), bias = e.input(2);
  RankedTensorType xType = e.type(x), wType = e.type(w);
  if (!xType || !wType || !xType.hasStaticShape() || !wType.hasStaticShape() ||
      xType.getRank() < 3 || wType.getRank() != xType.getRank())
    return e.error() << "needs static X and W of equal rank >= 3", failure();
  int64_t rank = xType.getRank(), spatial = rank - 2;
  int64_t group = e.getInt("group", 1);
  int64_t cin = wType.getDimSize(0), coutPerGroup = wType.getDimSize(1);
  if (group < 1 || cin % group || xType.getDimSize(1) != cin)
    return e.error() << "W's first dimension must be X's channels, divisible "
                        "by group",
           failure();
  auto ints = [&](StringRef name, int64_t dflt) {
    SmallVector<int64_t> v;
    if (const Attr *a = findAttr(e.node, name))
      v.assign(a->ints().begin(), a->ints().end());
    if (v.empty())
      v.assign(name == "pads" ? 2 * spatial : spatial, dflt);
    return v;
  };
  SmallVector<int64_t> strides = ints("strides", 1), dil = ints("dilations", 1);
  SmallVector<int64_t> outPad = ints("output_padding", 0);
  SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
  if (static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(dil.size()) != spatial ||
      static_cast<int64_t>(outPad.size()) != spatial)
    return e.error() << "strides, dilations and output_padding need one value "
                        "per spatial dimension",
           failure();
  std::string autoPad = e.getString("auto_pad", "NOTSET");
  SmallVector<int64_t> outShape;
  if (const Attr *a = findAttr(e.node, "output_shape"))
    outShape.assign(a->ints().end() - std::min<int>(a->ints_size(), spatial),
                    a->ints().end());
  SmallVector<int64_t> pb(spatial), pe(spatial);
  auto natural = [&](int64_t i) {
    return strides[i] * (xType.getDimSize(2 + i) - 1) + outPad[i] +
           (kernel[i] - 1) * dil[i] + 1;
  };
  if (!e.hasAttr("pads") && (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")) {
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t out = outShape.empty() ? xType.getDimSize(2 + i) * strides[i]
                                     : outShape[i];
      int64_t total = natural(i) - out;
      pb[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe[i] = total - pb[i];
    }
  } else {
    if (autoPad != "NOTSET" && autoPad != "VALID")
      return e.error() << "unknown auto_pad '" << autoPad << "'", failure();
    SmallVector<int64_t> pads = ints("pads", 0);
    if (static_cast<int64_t>(pads.size()) != 2 * spatial)
      return e.error() << "pads needs two values per spatial dimension",
             failure();
    for (int64_t i = 0; i < spatial; ++i) {
      pb[i] = pads[i];
      pe[i] = pads[spatial + i];
      if (!outShape.empty()) {
        if (static_cast<int64_t>(outShape.size()) != spatial)
          return e.error() << "output_shape needs one value per spatial "
                              "dimension",
                 failure();
        pe[i] += natural(i) - pb[i] - pe[i] - outShape[i];
      }
    }
  }

  // Zeros between the input elements: [N, C, D] -> [N, C, D, 1] -> pad to
  // [N, C, D, s] -> [N, C, D * s] -> keep (D - 1) * s + 1.
  V up = x;
  SmallVector<int64_t> upShape(xType.getShape());
  bool strided = llvm::any_of(strides, [](int64_t v) { return v > 1; });
  if (strided) {
    SmallVector<int64_t> split = {upShape[0], upShape[1]};
    for (int64_t i = 0; i < spatial; ++i)
      split.append({upShape[2 + i], 1});
    up = e.add("Reshape", {x, e.i64s(split)});
    SmallVector<int64_t> pads(2 * split.size(), 0);
    for (int64_t i = 0; i < spatial; ++i)
      pads[split.size() + 2 + 2 * i + 1] = strides[i] - 1;
    up = e.add("Pad", {up, e.i64s(pads)});
    SmallVector<int64_t> merged = {upShape[0], upShape[1]};
    SmallVector<int64_t> starts, ends, axes;
    for (int64_t i = 0; i < spatial; ++i) {
      merged.push_back(upShape[2 + i] * strides[i]);
      starts.push_back(0);
      ends.push_back((upShape[2 + i] - 1) * strides[i] + 1);
      axes.push_back(2 + i);
    }
    up = e.add("Reshape", {up, e.i64s(merged)});
    up = e.add("Slice", {up, e.i64s(starts), e.i64s(ends), e.i64s(axes)});
  }
  // Pads of the equivalent convolution; negative ones crop first.
  SmallVector<int64_t> convPads(2 * spatial), cropStart, cropEnd, cropAxes;
  bool crop = false;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t len = (xType.getDimSize(2 + i) - 1) * strides[i] + 1;
    int64_t begin = dil[i] * (kernel[i] - 1) - pb[i];
    int64_t end = dil[i] * (kernel[i] - 1) - pe[i] + outPad[i];
    convPads[i] = std::max<int64_t>(begin, 0);
    convPads[spatial + i] = std::max<int64_t>(end, 0);
    cropStart.push_back(std::max<int64_t>(-begin, 0));
    cropEnd.push_back(len - std::max<int64_t>(-end, 0));
    cropAxes.push_back(2 + i);
    crop |= begin < 0 || end < 0;
  }
  if (crop)
    up = e.add("Slice", {up, e.i64s(cropStart), e.i64s(cropEnd), e.i64s(cropAxes)});

  // Kernel: [Cin, Cout/g, k...] -> [g, Cin/g, Cout/g, k...] -> swap the
  // channel dims -> [Cout, Cin/g, k...], flipped along every spatial dim.
  SmallVector<int64_t> grouped = {group, cin / group, coutPerGroup};
  grouped.append(kernel.begin(), kernel.end());
  SmallVector<int64_t> perm = {0, 2, 1};
  for (int64_t i = 0; i < spatial; ++i)
    perm.push_back(3 + i);
  V wg = e.add("Transpose", {e.add("Reshape", {w, e.i64s(grouped)})},
                         {intsAttr("perm", perm)});
  SmallVector<int64_t> convW = {group * coutPerGroup, cin / group};
  convW.append(kernel.begin(), kernel.end());
  V wc = e.add("Reshape", {wg, e.i64s(convW)});
  SmallVector<int64_t> flipStart, flipEnd, flipAxes, flipSteps;
  for (int64_t i = 0; i < spatial; ++i) {
    flipStart.push_back(-1);
    flipEnd.push_back(std::numeric_limits<int64_t>::min());
    flipAxes.push_back(2 + i);
    flipSteps.push_back(-1);
  }
  wc = e.add("Slice", {wc, e.i64s(flipStart), e.i64s(flipEnd), e.i64s(flipAxes),
                       e.i64s(flipSteps)});

  SmallVector<V> inputs = {up, wc};
  if (!bias.empty())
    inputs.push_back(bias);
  e.add("Conv", inputs,
        {intsAttr("dilations", dil), intAttr("group", group),
         intsAttr("kernel_shape", kernel), intsAttr("pads", convPads),
         intsAttr("strides", SmallVector<int64_t>(spatial, 1))},
        e.output(0));
  return success();
}

// (sum over the window of |x|^p)^(1/p): AveragePool counting the padding,
// times the window size.
LogicalResult expandLpPool(Expansion &e) {
  V x = e.input(0);
  RankedTensorType t = e.type(x);
  const Attr *kernel = findAttr(e.node, "kernel_shape");
  if (!t || !kernel || !onnxFloatType(t.getElementType()))
    return e.error() << "needs a float input and kernel_shape", failure();
  Type elem = t.getElementType();
  double p = e.hasAttr("p") ? static_cast<double>(e.getInt("p", 2)) : 2.0;
  int64_t window = 1;
  for (int64_t k : kernel->ints())
    window *= k;
  V powed = p == 2.0 ? e.add("Mul", {x, x})
                               : e.add("Pow", {e.add("Abs", {x}), e.scalar(elem, p)});
  SmallVector<Attr> attrs;
  for (const Attr &a : e.node.attribute())
    if (a.name() != "p")
      attrs.push_back(a);
  attrs.push_back(intAttr("count_include_pad", 1));
  V avg = e.add("AveragePool", {powed}, attrs);
  V sum = e.add("Mul", {avg, e.scalar(elem, double(window))});
  if (p == 2.0)
    e.add("Sqrt", {sum}, {}, e.output(0));
  else
    e.add("Pow", {sum, e.scalar(elem, 1.0 / p)}, {}, e.output(0));
  return success();
}

// Col2Im: the ConvTranspose that scatters each block back, summing overlaps:
// the input as [N, C * K, L1..Lk] (K = prod(block)), group C, a constant
// one-hot kernel [C * K, 1, block...] (row c * K + j has its 1 at block
// position j), the op's strides, dilations and pads, and the output_padding
// that brings the result to image_shape.
LogicalResult expandCol2Im(Expansion &e) {
  V x = e.input(0);
  RankedTensorType t = e.type(x);
  std::optional<SmallVector<int64_t>> image = e.constantInts(e.input(1));
  std::optional<SmallVector<int64_t>> block = e.constantInts(e.input(2));
  if (!t || !t.hasStaticShape() || !image || !block ||
      !onnxFloatType(t.getElementType()))
    return e.error() << "needs a static float input and constant image_shape "
                        "and block_shape",
           failure();
  int64_t k = static_cast<int64_t>(image->size()), blockSize = 1;
  if (k > 2)
    return e.error() << "Col2Im over " << k
                     << " image dims is not supported (it runs as a "
                        "ConvTranspose; kiln's Conv is 1-D and 2-D)",
           failure();
  for (int64_t b : *block)
    blockSize *= b;
  auto ints = [&](StringRef name, int64_t n, int64_t dflt) {
    SmallVector<int64_t> v(n, dflt);
    if (const Attr *a = findAttr(e.node, name))
      v.assign(a->ints().begin(), a->ints().end());
    return v;
  };
  SmallVector<int64_t> strides = ints("strides", k, 1), dil = ints("dilations", k, 1),
                       pads = ints("pads", 2 * k, 0);
  int64_t channels = t.getDimSize(1) / blockSize;
  SmallVector<int64_t> grid = {t.getDimSize(0), t.getDimSize(1)}, outPad;
  for (int64_t i = 0; i < k; ++i) {
    int64_t span = dil[i] * ((*block)[i] - 1) + 1;
    int64_t count = ((*image)[i] + pads[i] + pads[k + i] - span) / strides[i] + 1;
    grid.push_back(count);
    outPad.push_back((*image)[i] + pads[i] + pads[k + i] -
                     (strides[i] * (count - 1) + span));
  }
  if (failed(e.checkTable(channels * blockSize * blockSize, "the Col2Im kernel")))
    return failure();
  SmallVector<int64_t> kernelShape = {channels * blockSize, 1};
  kernelShape.append(block->begin(), block->end());
  auto elemType = cast<FloatType>(t.getElementType());
  APFloat zero = APFloat::getZero(elemType.getFloatSemantics());
  APFloat one = APFloat::getOne(elemType.getFloatSemantics());
  SmallVector<APFloat> kernel(channels * blockSize * blockSize, zero);
  for (int64_t row = 0; row < channels * blockSize; ++row)
    kernel[row * blockSize + row % blockSize] = one;
  V w = e.ctx.addConstant(
      DenseElementsAttr::get(RankedTensorType::get(kernelShape, elemType), kernel),
      "col2im_kernel");
  V blocks = e.add("Reshape", {x, e.i64s(grid)});
  e.add("ConvTranspose", {blocks, w},
        {intAttr("group", channels), intsAttr("strides", strides),
         intsAttr("dilations", dil), intsAttr("pads", pads),
         intsAttr("output_padding", outPad), intsAttr("kernel_shape", *block)},
        e.output(0));
  return success();
}

// MaxUnpool: X scattered (ScatterElements over the flattened result, whose
// bounds check names the node) into zeros at the flat indices I (as MaxPool's
// Indices give them) of the shape MaxPool's input had, [N, C, (D - 1) *
// stride + kernel - pads]; with output_shape, that result is padded with
// zeros at the end of each spatial dim (ONNX's reference).
LogicalResult expandMaxUnpool(Expansion &e) {
  V x = e.input(0), indices = e.input(1);
  RankedTensorType t = e.type(x);
  RankedTensorType yType = e.outputType(0);
  const Attr *kernel = findAttr(e.node, "kernel_shape");
  if (!t || !t.hasStaticShape() || !yType || !yType.hasStaticShape() || !kernel)
    return e.error() << "needs static shapes and kernel_shape", failure();
  int64_t k = t.getRank() - 2;
  SmallVector<int64_t> strides(k, 1), pads(2 * k, 0);
  if (const Attr *a = findAttr(e.node, "strides"))
    strides.assign(a->ints().begin(), a->ints().end());
  if (const Attr *a = findAttr(e.node, "pads"))
    pads.assign(a->ints().begin(), a->ints().end());
  SmallVector<int64_t> unpooled(t.getShape().take_front(2)), grow(2 * t.getRank(), 0);
  int64_t total = t.getDimSize(0) * t.getDimSize(1);
  for (int64_t i = 0; i < k; ++i) {
    int64_t d = (t.getDimSize(2 + i) - 1) * strides[i] + kernel->ints()[i] -
                pads[i] - pads[k + i];
    unpooled.push_back(d);
    total *= d;
    grow[t.getRank() + 2 + i] = yType.getDimSize(2 + i) - d;
    if (grow[t.getRank() + 2 + i] < 0)
      return e.error() << "output_shape " << yType
                       << " is smaller than the unpooled size along spatial dim "
                       << i << " (" << d << ")",
             failure();
  }
  int64_t count = t.getNumElements();
  V zeros = e.add("Expand", {e.scalar(t.getElementType(), 0.0), e.i64s({total})});
  V flat = e.add("ScatterElements",
                 {zeros, e.add("Reshape", {indices, e.i64s({count})}),
                  e.add("Reshape", {x, e.i64s({count})})},
                 {intAttr("axis", 0)});
  if (ArrayRef<int64_t>(unpooled) == yType.getShape()) {
    e.add("Reshape", {flat, e.i64s(unpooled)}, {}, e.output(0));
    return success();
  }
  e.add("Pad", {e.add("Reshape", {flat, e.i64s(unpooled)}), e.i64s(grow)}, {},
        e.output(0));
  return success();
}

} // namespace kiln::decompose
