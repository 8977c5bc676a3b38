//===- FoldQDQ.cpp - kiln-fold-qdq: QDQ patterns to integer products ------===//
//
// Models made by onnxruntime.quantization in QDQ format compute every Conv,
// MatMul and Gemm on DequantizeLinear'd inputs and quantize the result again.
// Computed as written, kiln would run them in float. This pass rewrites
//   QuantizeLinear(Relu|Clip?(Conv|MatMul|Gemm(DequantizeLinear(x),
//   DequantizeLinear(w),
//                                        DequantizeLinear(int32 bias)?)))
// into the integer product (kiln-decompose's integerConv / integerMatMul: int32
// accumulation of zero-point-centered 8-bit values), plus the int32 bias,
// requantized as onnxruntime's QLinearConv / QLinearMatMul / QGemm do
// (multiplier x_scale * w_scale / y_scale in float32, round half to even, zero
// point, saturation; a Relu raises the lower saturation bound to the zero
// point, exactly; a Clip with constant bounds (ReLU6) clamps to the bounds'
// quantized values, exactly too: quantization is monotonic). Without a QuantizeLinear after it, the product is
// dequantized: float(acc) * x_scale * w_scale (onnxruntime's
// MatMulIntegerToFloat).
//
// Only what is exact is folded: per-tensor activations, weights per tensor or
// per output channel, a bias whose scale is x_scale * w_scale with zero point 0
// (as quantize_static writes it). Anything else stays as it is (computed in
// float).
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Passes.h"

#include "passes/Transforms/Decompose/Expansion.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>

using namespace mlir;

namespace kiln {

#define GEN_PASS_DEF_KILNFOLDQDQPASS
#include "passes/Transforms/Passes.h.inc"

namespace {

using decompose::Attr;
using decompose::Expansion;
using decompose::V;

/// A DequantizeLinear's operands.
struct Dequantized {
  Value q, scale, zp; // zp null when absent
  int64_t axis = 1;
  int64_t scaleElements = 1;
};

bool is8BitInt(Type t) {
  auto i = dyn_cast<IntegerType>(t);
  return i && i.getWidth() == 8;
}

std::optional<Dequantized> matchDequantize(Value v) {
  auto dq = v.getDefiningOp<onnx::DequantizeLinearOp>();
  if (!dq || dq.getBlockSize() != 0)
    return std::nullopt;
  auto qt = dyn_cast<RankedTensorType>(dq.getX().getType());
  auto st = dyn_cast<RankedTensorType>(dq.getXScale().getType());
  if (!qt || !st || !st.hasStaticShape() || !st.getElementType().isF32() ||
      st.getRank() > 1)
    return std::nullopt;
  Dequantized d;
  d.q = dq.getX();
  d.scale = dq.getXScale();
  d.zp = onnx::isNoneValue(dq.getXZeroPoint()) ? Value() : dq.getXZeroPoint();
  d.axis = dq.getAxis();
  if (d.axis < 0)
    d.axis += qt.getRank();
  d.scaleElements = st.getNumElements();
  return d;
}

/// An 8-bit activation quantized per tensor.
bool isPerTensor8Bit(const Dequantized &d) {
  return is8BitInt(cast<RankedTensorType>(d.q.getType()).getElementType()) &&
         d.scaleElements == 1;
}

/// 8-bit weights quantized per tensor, or per channel along `channelAxis`.
bool isWeight8Bit(const Dequantized &d, int64_t channelAxis) {
  auto t = cast<RankedTensorType>(d.q.getType());
  if (!is8BitInt(t.getElementType()) || !t.hasStaticShape())
    return false;
  return d.scaleElements == 1 || (d.axis == channelAxis &&
                                  t.getDimSize(channelAxis) == d.scaleElements);
}

/// The int32 bias of DequantizeLinear(bias, x_scale * w_scale, 0), or null.
Value matchBias(Value v, const Dequantized &x, const Dequantized &w) {
  if (!v || onnx::isNoneValue(v))
    return Value();
  std::optional<Dequantized> b = matchDequantize(v);
  if (!b || !cast<RankedTensorType>(b->q.getType())
                 .getElementType()
                 .isSignlessInteger(32))
    return Value();
  if (b->zp) {
    auto zps = onnx::getConstantIntValues(b->zp);
    if (!zps || llvm::any_of(*zps, [](int64_t z) { return z != 0; }))
      return Value();
  }
  auto bs = onnx::getConstantFloatValues(b->scale);
  auto xs = onnx::getConstantFloatValues(x.scale);
  auto ws = onnx::getConstantFloatValues(w.scale);
  if (!bs || !xs || !ws || xs->size() != 1)
    return Value();
  for (size_t i = 0; i < bs->size(); ++i) {
    float expected = float((*xs)[0]) * float((*ws)[ws->size() == 1 ? 0 : i]);
    if (ws->size() != 1 && ws->size() != bs->size())
      return Value();
    if (std::fabs(float((*bs)[i]) - expected) > 1e-6f * std::fabs(expected))
      return Value();
  }
  return b->q;
}

/// The matched integer product: the op and its quantized operands.
struct Product {
  Operation *op = nullptr;
  Dequantized x, w;
  Value bias;              // int32, 1-D, or null
  bool transposeW = false; // Gemm transB
  bool conv = false;
};

std::optional<Product> matchProduct(Operation *op) {
  Product p;
  p.op = op;
  Value xv, wv, bv;
  if (auto conv = dyn_cast<onnx::ConvOp>(op)) {
    xv = conv.getX(), wv = conv.getW(), bv = conv.getB();
    p.conv = true;
  } else if (auto mm = dyn_cast<onnx::MatMulOp>(op)) {
    xv = mm.getA(), wv = mm.getB();
  } else if (auto gemm = dyn_cast<onnx::GemmOp>(op)) {
    if (gemm.getTransA() != 0 || gemm.getAlpha().convertToDouble() != 1.0 ||
        (!onnx::isNoneValue(gemm.getC()) &&
         gemm.getBeta().convertToDouble() != 1.0))
      return std::nullopt;
    xv = gemm.getA(), wv = gemm.getB(), bv = gemm.getC();
    p.transposeW = gemm.getTransB() != 0;
  } else {
    return std::nullopt;
  }
  std::optional<Dequantized> x = matchDequantize(xv), w = matchDequantize(wv);
  if (!x || !w || !isPerTensor8Bit(*x))
    return std::nullopt;
  auto wt = cast<RankedTensorType>(w->q.getType());
  // The output channel: Conv's filters (axis 0), B's columns, a transB Gemm's
  // rows.
  int64_t channelAxis = p.conv ? 0 : p.transposeW ? 0 : wt.getRank() - 1;
  if (!isWeight8Bit(*w, channelAxis) ||
      (w->scaleElements > 1 && !p.conv && wt.getRank() != 2))
    return std::nullopt;
  p.x = *x;
  p.w = *w;
  if (bv && !onnx::isNoneValue(bv)) {
    p.bias = matchBias(bv, *x, *w);
    if (!p.bias || cast<RankedTensorType>(p.bias.getType()).getRank() != 1)
      return std::nullopt;
  }
  return p;
}

/// `value` (1-D or one element) reshaped to broadcast along `axis` of a
/// rank-`rank` result.
V alongAxis(Expansion &e, const V &value, int64_t axis, int64_t rank) {
  RankedTensorType t = e.type(value);
  if (t.getNumElements() == 1 || axis == rank - 1)
    return value;
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = t.getNumElements();
  return e.add("Reshape", {value, e.i64s(shape)});
}

/// The 2-D 8-bit constant `w` transposed, as a new onnx.Constant (the onnx
/// folders leave constants over 4096 elements alone: a Transpose op would
/// run, and keep the weights from the 8-bit kernels, on every inference).
/// Empty when `w` is not such a constant.
V transposedConstant(Expansion &e, Value w) {
  auto t = dyn_cast<RankedTensorType>(w.getType());
  std::optional<SmallVector<int64_t>> values = onnx::getConstantIntValues(w);
  if (!t || t.getRank() != 2 || !is8BitInt(t.getElementType()) || !values)
    return V();
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  SmallVector<int8_t> out(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out[j * rows + i] = int8_t((*values)[i * cols + j]);
  auto type = RankedTensorType::get({cols, rows}, t.getElementType());
  OperationState state(w.getLoc(), "onnx.Constant");
  // Large constants are resource blobs, never large inline attributes.
  Attribute value =
      out.size() <= 4096
          ? Attribute(DenseElementsAttr::getFromRawBuffer(
                type, ArrayRef<char>(reinterpret_cast<const char *>(out.data()),
                                     out.size())))
          : Attribute(DenseResourceElementsAttr::get(
                type, "kiln_transposed",
                HeapAsmResourceBlob::allocateAndCopyInferAlign<int8_t>(out)));
  state.addAttribute("value", value);
  state.addTypes(type);
  OpBuilder b(e.ctx.getContext());
  b.setInsertionPoint(w.getParentBlock(), w.getParentBlock()->begin());
  if (Operation *def = w.getDefiningOp())
    b.setInsertionPointAfter(def);
  return V(b.create(state)->getResult(0));
}

/// The int32 accumulator of `p` (bias added).
V buildAccumulator(Expansion &e, const Product &p) {
  V acc;
  int64_t rank = cast<RankedTensorType>(p.op->getResult(0).getType()).getRank();
  if (p.conv) {
    decompose::Node node(p.op);
    acc = decompose::integerConv(e, p.x.q, p.x.zp, p.w.q, p.w.zp,
                                 SmallVector<Attr>(node.attribute()));
  } else {
    V w = p.w.q;
    if (p.transposeW) {
      V t = transposedConstant(e, w);
      w = t.empty()
              ? e.add("Transpose", {w}, {decompose::intsAttr("perm", {1, 0})})
              : t;
    }
    acc = decompose::integerMatMul(e, p.x.q, p.x.zp, w, p.w.zp);
  }
  if (!acc.empty() && p.bias)
    acc =
        e.add("Add", {acc, alongAxis(e, p.bias, p.conv ? 1 : rank - 1, rank)});
  return acc;
}

/// x_scale * w_scale along the output channel.
V productScale(Expansion &e, const Product &p, int64_t rank) {
  return e.add("Mul", {V(p.x.scale),
                       alongAxis(e, p.w.scale, p.conv ? 1 : rank - 1, rank)});
}

/// The DequantizeLinear ops feeding `op`.
SmallVector<Operation *> dequantizesOf(Operation *op) {
  SmallVector<Operation *> result;
  for (Value v : op->getOperands())
    if (auto dq = v.getDefiningOp<onnx::DequantizeLinearOp>())
      if (!llvm::is_contained(result, dq.getOperation()))
        result.push_back(dq);
  return result;
}

/// Erases those of `ops` that became unused.
void eraseUnused(ArrayRef<Operation *> ops) {
  for (Operation *op : ops)
    if (op->use_empty())
      op->erase();
}

/// The function's onnx.NoValue (created at its start when it has none).
Value getNoValue(func::FuncOp func) {
  for (Operation &op : func.getBody().front())
    if (isa<onnx::NoValueOp>(op))
      return op.getResult(0);
  OpBuilder builder(func.getContext());
  builder.setInsertionPointToStart(&func.getBody().front());
  OperationState state(func.getLoc(), "onnx.NoValue");
  state.addTypes(builder.getNoneType());
  return builder.create(state)->getResult(0);
}

/// Replaces `op`'s only result by what `build` computes; false (nothing changed
/// but dead ops) when it fails.
bool replaceWith(Operation *op, Value noValue,
                 llvm::function_ref<V(Expansion &)> build) {
  OpBuilder builder(op);
  Expansion e(op, builder, noValue);
  V result = build(e);
  if (e.failed() || result.empty() ||
      result.get().getType() != op->getResult(0).getType())
    return false;
  op->getResult(0).replaceAllUsesWith(result.get());
  op->erase();
  return true;
}

//===----------------------------------------------------------------------===//
// QuantizeLinear(Add(DequantizeLinear(a), DequantizeLinear(b))): onnxruntime's
// QLinearAdd
//===----------------------------------------------------------------------===//

/// The one value of a constant scalar (or one-element) f32 tensor.
std::optional<float> constantScalarF32(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.getElementType().isF32())
    return std::nullopt;
  auto values = onnx::getConstantFloatValues(v);
  if (!values || values->size() != 1)
    return std::nullopt;
  return float((*values)[0]);
}

/// The one value of a constant scalar zero point; 0 when absent.
std::optional<int64_t> constantZeroPoint(Value zp) {
  if (!zp)
    return 0;
  auto values = onnx::getConstantIntValues(zp);
  if (!values || values->size() != 1)
    return std::nullopt;
  return (*values)[0];
}

/// The lowest bit a nonzero f32 `x` (or an integer multiple of it) can have.
int lowestBit(float x) { return std::ilogb(x) - 23; }

/// Whether onnxruntime's QLinearAdd reads operand `t` of an Add producing `y`
/// in spans of more than one element, the kernel's general path: `t` is `y`'s
/// shape, or its trailing dims (broadcast over the leading ones only, as a
/// bias over rows) holding more than one element. A broadcast along inner dims
/// (a per-channel [C, 1, 1] operand) makes one-element spans, whose scalar path
/// folds b * rB into F (another rounding); those stay as written.
bool isFullSpan(RankedTensorType t, RankedTensorType y) {
  if (!t.hasStaticShape() || t.getRank() > y.getRank())
    return false;
  if (t.getShape() == y.getShape())
    return true;
  ArrayRef<int64_t> dims = t.getShape();
  while (!dims.empty() && dims.front() == 1)
    dims = dims.drop_front();
  return t.getNumElements() > 1 && dims == y.getShape().take_back(dims.size());
}

/// onnxruntime's graph optimizations (level 2, on by default) fuse
/// DequantizeLinear(a), DequantizeLinear(b) -> Add -> QuantizeLinear into its
/// QLinearAdd, which does not compute the spec's float sum: with the ratios
/// rA = a_scale / y_scale and rB = b_scale / y_scale (f32) and the constant
///   F = y_zp - fma(rA, a_zp, rB * b_zp)
/// it computes, on the raw 8-bit values a and b as floats (MLAS's AVX2 kernel,
/// what it runs on x86-64 CPUs with AVX2 and FMA),
///   y = saturate(round_half_even(fma(a, rA, fma(b, rB, F)))).
/// Both differ from the spec's round(((a - a_zp) a_scale + (b - b_zp)
/// b_scale) / y_scale) + y_zp by one step on a few values near ties (230 of
/// the 802816 of ResNet-50's first residual Add), and a deep network carries
/// such a step on: onnxruntime's own unfused and fused runs of an int8
/// ResNet-50 end 18 steps apart. kiln reproduces the fused form, bit for bit,
/// as it reproduces QLinearConv's requantization.
///
/// Each fma is computed in f64 and rounded to f32 once: an 8-bit integer times
/// an f32 is exact in f64, and so is its sum with F (or with the first fma's
/// f32 result, a multiple of the same power of two) when the terms' bits span
/// at most 53 - which is checked here from the constants; where it is not
/// (scales 2^20 apart), the pattern is left as written. Operands and result of
/// one 8-bit type, per-tensor constant scales and zero points, operands of the
/// result's shape or broadcast over its leading dims (`isFullSpan`): anything
/// else stays as written. A Relu between the Add and the QuantizeLinear is kept
/// out of the fusion by onnxruntime unless the zero point is the type's
/// minimum, where it is a no-op (onnxruntime removes it; so does kiln).
bool foldQuantizedAdd(onnx::QuantizeLinearOp q, Value noValue) {
  auto yt = dyn_cast<RankedTensorType>(q.getY().getType());
  if (!yt || !yt.hasStaticShape() || !is8BitInt(yt.getElementType()) ||
      q.getBlockSize() != 0 || q.getPrecision() != 0)
    return false;
  std::optional<float> sC = constantScalarF32(q.getYScale());
  Value yzp = onnx::isNoneValue(q.getYZeroPoint()) ? Value() : q.getYZeroPoint();
  std::optional<int64_t> zC = constantZeroPoint(yzp);
  if (!sC || !zC || !(*sC > 0) || !std::isfinite(*sC))
    return false;
  bool isUnsigned = yt.getElementType().isUnsignedInteger();
  double lo = isUnsigned ? 0 : -128, hi = isUnsigned ? 255 : 127;
  Operation *relu = nullptr;
  Value sum = q.getX();
  if (auto r = sum.getDefiningOp<onnx::ReluOp>()) {
    if (double(*zC) != lo || !sum.hasOneUse())
      return false;
    relu = r;
    sum = r.getX();
  }
  auto add = sum.getDefiningOp<onnx::AddOp>();
  if (!add || !sum.hasOneUse() ||
      cast<RankedTensorType>(sum.getType()).getShape() != yt.getShape())
    return false;
  struct Operand {
    Value q;
    float scale;
    int64_t zp;
  };
  SmallVector<Operand, 2> in;
  for (Value v : {add.getA(), add.getB()}) {
    std::optional<Dequantized> d = matchDequantize(v);
    if (!d)
      return false;
    auto t = dyn_cast<RankedTensorType>(d->q.getType());
    std::optional<float> s = constantScalarF32(d->scale);
    std::optional<int64_t> z = constantZeroPoint(d->zp);
    if (!t || t.getElementType() != yt.getElementType() ||
        !isFullSpan(t, yt) || !s || !z || !(*s > 0) ||
        !std::isfinite(*s))
      return false;
    in.push_back({d->q, *s, *z});
  }
  // onnxruntime's constants, in float32 as it computes them.
  float rA = in[0].scale / *sC, rB = in[1].scale / *sC;
  float F = float(*zC) - std::fma(rA, float(in[0].zp), rB * float(in[1].zp));
  // Exactness of the f64 evaluation (see above): every term is a multiple of
  // 2^low; |fma(b, rB, F)| <= bound1 and |the result| <= bound2.
  double maxIn = isUnsigned ? 255 : 128;
  for (float v : {rA, rB})
    if (!std::isnormal(v))
      return false;
  if (F != 0 && !std::isnormal(F))
    return false;
  int low = std::min(lowestBit(rA), lowestBit(rB));
  if (F != 0)
    low = std::min(low, lowestBit(F));
  double bound1 = maxIn * double(rB) + std::fabs(double(F));
  double bound2 = maxIn * double(rA) + bound1 * (1 + 0x1p-22);
  if (bound2 >= 0x1p30 || std::ilogb(bound2) + 1 - low > 53)
    return false;
  OpBuilder builder(q);
  Expansion e(q, builder, noValue);
  MLIRContext *ctx = q.getContext();
  Type f64 = Float64Type::get(ctx), f32 = Float32Type::get(ctx);
  auto toF64 = [&](V v) {
    return e.add("Cast", {v}, {decompose::intAttr("to", KILN_DTYPE_FLOAT64)});
  };
  auto toF32 = [&](V v) {
    return e.add("Cast", {v}, {decompose::intAttr("to", KILN_DTYPE_FLOAT32)});
  };
  // t1 = fma(b, rB, F); t2 = fma(a, rA, t1), each rounded to f32 once.
  V t1 = toF32(e.add("Add", {e.add("Mul", {toF64(V(in[1].q)), e.scalar(f64, rB)}),
                             e.scalar(f64, F)}));
  V t2 = toF32(e.add("Add", {e.add("Mul", {toF64(V(in[0].q)), e.scalar(f64, rA)}),
                             toF64(t1)}));
  V y = e.add("Clip", {e.add("Round", {t2}), e.scalar(f32, lo), e.scalar(f32, hi)});
  y = e.add("Cast", {y},
            {decompose::intAttr("to", isUnsigned ? KILN_DTYPE_UINT8 : KILN_DTYPE_INT8)});
  if (e.failed() || y.empty() || y.get().getType() != q.getY().getType())
    return false;
  SmallVector<Operation *> dequantizes = dequantizesOf(add);
  q.getY().replaceAllUsesWith(y.get());
  q->erase();
  if (relu)
    relu->erase();
  add->erase();
  eraseUnused(dequantizes);
  return true;
}

struct KilnFoldQDQPass : public impl::KilnFoldQDQPassBase<KilnFoldQDQPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<Operation *> products;
    func.walk([&](Operation *op) {
      if (isa<onnx::ConvOp, onnx::MatMulOp, onnx::GemmOp>(op))
        products.push_back(op);
    });
    Value noValue;
    for (Operation *op : products) {
      std::optional<Product> p = matchProduct(op);
      if (!p)
        continue;
      if (!noValue)
        noValue = getNoValue(func);
      SmallVector<Operation *> dequantizes = dequantizesOf(op);
      Value out = op->getResult(0);
      auto outType = dyn_cast<RankedTensorType>(out.getType());
      if (!outType || !outType.hasStaticShape() ||
          !outType.getElementType().isF32())
        continue;
      int64_t rank = outType.getRank();
      // Relu|Clip? -> QuantizeLinear (per tensor, 8-bit): requantize.
      Operation *user = out.hasOneUse() ? *out.getUsers().begin() : nullptr;
      bool relu = false, clip = false;
      std::optional<float> clipMin, clipMax; // a Clip's constant bounds
      if (user && isa<onnx::ReluOp>(user) && user->getResult(0).hasOneUse()) {
        relu = true;
        user = *user->getResult(0).getUsers().begin();
      } else if (auto c = dyn_cast_or_null<onnx::ClipOp>(user);
                 c && c->getResult(0).hasOneUse()) {
        // Clip(min, max) with constant scalar bounds (ReLU6): quantization is
        // monotonic, so Q(clip(v, lo, hi)) = clamp(Q(v), Q(lo), Q(hi)) and
        // the bounds fold into the saturation.
        bool constant = true;
        auto bound = [&](Value v, std::optional<float> &out) {
          if (onnx::isNoneValue(v))
            return;
          auto values = onnx::getConstantFloatValues(v);
          if (!values || values->size() != 1)
            constant = false;
          else
            out = float((*values)[0]);
        };
        bound(c.getMin(), clipMin);
        bound(c.getMax(), clipMax);
        if (constant) {
          clip = true;
          user = *c->getResult(0).getUsers().begin();
        }
      }
      auto q = dyn_cast_or_null<onnx::QuantizeLinearOp>(user);
      if (q) {
        auto ys = dyn_cast<RankedTensorType>(q.getYScale().getType());
        auto yt = dyn_cast<RankedTensorType>(q.getY().getType());
        Value yzp =
            onnx::isNoneValue(q.getYZeroPoint()) ? Value() : q.getYZeroPoint();
        std::optional<double> floor, ceiling;
        std::optional<SmallVector<int64_t>> z =
            yzp ? onnx::getConstantIntValues(yzp) : SmallVector<int64_t>{0};
        if (relu && z && z->size() == 1)
          floor = double((*z)[0]);
        bool clipBounds = !clip;
        if (clip && z && z->size() == 1) {
          // The bounds quantized as QuantizeLinear does (float32, round half
          // to even, the zero point added; saturation by requantize).
          auto scale = onnx::getConstantFloatValues(q.getYScale());
          if (scale && scale->size() == 1 && float((*scale)[0]) > 0) {
            float s = float((*scale)[0]);
            auto quantized = [&](float v) {
              return double(std::nearbyint(v / s)) + double((*z)[0]);
            };
            if (clipMin)
              floor = quantized(*clipMin);
            if (clipMax)
              ceiling = quantized(*clipMax);
            clipBounds = !clipMin || !clipMax || *clipMin <= *clipMax;
          }
        }
        if (ys && ys.hasStaticShape() && ys.getNumElements() == 1 &&
            ys.getElementType().isF32() && yt &&
            is8BitInt(yt.getElementType()) && q.getBlockSize() == 0 &&
            (!relu || floor) && clipBounds) {
          Operation *reluOp =
              relu || clip ? *out.getUsers().begin() : nullptr;
          if (replaceWith(q, noValue, [&](Expansion &e) -> V {
                V acc = buildAccumulator(e, *p);
                if (acc.empty())
                  return V();
                V multiplier =
                    e.add("Div", {productScale(e, *p, rank), V(q.getYScale())});
                return decompose::requantize(e, acc, multiplier,
                                             yzp ? V(yzp) : V(),
                                             yt.getElementType(), floor,
                                             ceiling);
              })) {
            if (reluOp && reluOp->use_empty())
              reluOp->erase();
            eraseUnused(op);
            eraseUnused(dequantizes);
          }
          continue;
        }
      }
      // Otherwise the dequantized product: float(acc) * x_scale * w_scale.
      if (replaceWith(op, noValue, [&](Expansion &e) -> V {
            V acc = buildAccumulator(e, *p);
            if (acc.empty())
              return V();
            V f = e.add("Cast", {acc},
                        {decompose::intAttr("to", KILN_DTYPE_FLOAT32)});
            return e.add("Mul", {f, productScale(e, *p, rank)});
          }))
        eraseUnused(dequantizes);
    }
    // DequantizeLinear -> Add -> QuantizeLinear: onnxruntime's QLinearAdd.
    SmallVector<onnx::QuantizeLinearOp> quantizes;
    func.walk([&](onnx::QuantizeLinearOp q) { quantizes.push_back(q); });
    for (onnx::QuantizeLinearOp q : quantizes) {
      if (!noValue)
        noValue = getNoValue(func);
      foldQuantizedAdd(q, noValue);
    }
    if (noValue && noValue.use_empty())
      noValue.getDefiningOp()->erase();
  }
};

} // namespace

} // namespace kiln
