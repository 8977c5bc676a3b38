//===- Einsum.cpp - kiln-decompose: MatMul-shaped Einsum ------------------===//
//
// An Einsum of two operands that contracts at least one label, with no
// diagonal (a label repeated in one term) and no broadcast dim other than a
// batch one (MatMul broadcasts those), becomes the
// MatMul it is, so the MatMul lowering and its kernels apply:
//   ReduceSum over each operand's labels that appear nowhere else,
//   Transpose A to [batch..., m..., k...] and B to [batch..., k..., n...],
//   Reshape to [batch..., M, K] and [batch..., K, N], MatMul,
//   Reshape to [batch..., m..., n...], Transpose to the output order.
// Steps that would do nothing are left out. Every other equation stays an
// Einsum for convert-onnx-to-linalg's linalg.generic (keptForLowering).
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Decompose/Expansion.h"

#include "dialects/ONNX/Einsum.h"
#include "dialects/ONNX/ONNXOps.h"
#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVectorExtras.h"

using namespace mlir;

namespace kiln::decompose {
namespace {

/// The parsed equation of an Einsum op with static ranked inputs, or failure.
FailureOr<onnx::EinsumEquation> parse(Operation *op) {
  auto einsum = dyn_cast<onnx::EinsumOp>(op);
  if (!einsum)
    return failure();
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape())
      return failure();
    shapes.push_back(t.getShape());
  }
  std::string error;
  return onnx::parseEinsumEquation(einsum.getEquation(), shapes, error);
}

bool isBatchLabel(const onnx::EinsumEquation &eq, int64_t l) {
  return llvm::is_contained(eq.inputs[0], l) &&
         llvm::is_contained(eq.inputs[1], l) && eq.inOutput(l);
}

/// Whether the equation is a MatMul: two operands, a contracted label, no
/// diagonal, a size-1 dim broadcasting only in a batch label (MatMul
/// broadcasts its batch dims).
bool isMatMulShaped(const onnx::EinsumEquation &eq) {
  if (eq.inputs.size() != 2)
    return false;
  for (unsigned i = 0; i < 2; ++i) {
    if (eq.hasRepeatedLabel(i))
      return false;
    for (auto [l, size] : llvm::zip_equal(eq.inputs[i], eq.inputShapes[i]))
      if (size != eq.sizes[l] && !isBatchLabel(eq, l))
        return false;
  }
  return llvm::any_of(eq.inputs[0], [&](int64_t l) {
    return llvm::is_contained(eq.inputs[1], l) && !eq.inOutput(l);
  });
}

int64_t product(const onnx::EinsumEquation &eq, ArrayRef<int64_t> labels) {
  int64_t p = 1;
  for (int64_t l : labels)
    p *= eq.sizes[l];
  return p;
}

/// The positions of `want` in `have` (a permutation when they hold the same
/// labels).
SmallVector<int64_t> positions(ArrayRef<int64_t> have, ArrayRef<int64_t> want) {
  return llvm::map_to_vector(want, [&](int64_t l) {
    return static_cast<int64_t>(llvm::find(have, l) - have.begin());
  });
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (static_cast<int64_t>(i) != p)
      return false;
  return true;
}

} // namespace

bool keptForLowering(Operation *op) {
  // OneHot's depth and CenterCropPad's shape read at run time: the sizes
  // are run dims, lowered by RunTimeSizes.cpp (the expansions need them
  // constant).
  if (isa<onnx::OneHotOp, onnx::CenterCropPadOp>(op))
    return onnx::isRunTimeOperand(op, 1);
  if (auto bn = dyn_cast<onnx::BatchNormalizationOp>(op))
    return bn.getTrainingMode() == 0;
  if (!isa<onnx::EinsumOp>(op))
    return false;
  FailureOr<onnx::EinsumEquation> eq = parse(op);
  return failed(eq) || !isMatMulShaped(*eq);
}

LogicalResult expandEinsum(Expansion &e) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (int i = 0; i < 2; ++i) {
    RankedTensorType t = e.type(e.input(i));
    if (!t || !t.hasStaticShape())
      return e.error() << "needs static shapes", failure();
    shapes.push_back(t.getShape());
  }
  std::string error;
  const Attr *equation = findAttr(e.node, "equation");
  if (!equation)
    return e.error() << "has no equation", failure();
  FailureOr<onnx::EinsumEquation> parsed =
      onnx::parseEinsumEquation(equation->s(), shapes, error);
  if (failed(parsed))
    return e.error() << error, failure();
  const onnx::EinsumEquation &eq = *parsed;
  if (!isMatMulShaped(eq))
    return e.error() << "internal error: Einsum '" << equation->s()
                     << "' is not MatMul-shaped",
           failure();

  ArrayRef<int64_t> aLabels = eq.inputs[0], bLabels = eq.inputs[1];
  SmallVector<int64_t> batch, m, k, n;
  for (int64_t l : aLabels) {
    bool inB = llvm::is_contained(bLabels, l), out = eq.inOutput(l);
    if (inB && out)
      batch.push_back(l);
    else if (inB)
      k.push_back(l);
    else if (out)
      m.push_back(l);
  }
  for (int64_t l : bLabels)
    if (!llvm::is_contained(aLabels, l) && eq.inOutput(l))
      n.push_back(l);

  // One operand brought to `order` (its labels that appear nowhere else
  // summed first), then reshaped to its batch dims (its own sizes: a size-1
  // one broadcasts in the MatMul) followed by `matrix`.
  auto prepare = [&](int i, ArrayRef<int64_t> order,
                     ArrayRef<int64_t> matrix) -> V {
    V x = e.input(i);
    ArrayRef<int64_t> labels = eq.inputs[i];
    SmallVector<int64_t> shape;
    for (int64_t l : batch)
      shape.push_back(eq.inputShapes[i][llvm::find(labels, l) - labels.begin()]);
    shape.append(matrix.begin(), matrix.end());
    SmallVector<int64_t> sumAxes, kept;
    for (auto [i, l] : llvm::enumerate(labels)) {
      if (llvm::is_contained(order, l))
        kept.push_back(l);
      else
        sumAxes.push_back(static_cast<int64_t>(i));
    }
    if (!sumAxes.empty())
      x = e.reduce("ReduceSum", x, sumAxes, /*keepdims=*/false);
    SmallVector<int64_t> perm = positions(kept, order);
    if (!isIdentity(perm))
      x = e.add("Transpose", {x}, {intsAttr("perm", perm)});
    if (e.type(x) && e.type(x).getShape() != ArrayRef<int64_t>(shape))
      x = e.add("Reshape", {x, e.i64s(shape)});
    return x;
  };
  SmallVector<int64_t> batchShape =
      llvm::map_to_vector(batch, [&](int64_t l) { return eq.sizes[l]; });
  int64_t mSize = product(eq, m), kSize = product(eq, k),
          nSize = product(eq, n);
  SmallVector<int64_t> aOrder(batch), bOrder(batch);
  aOrder.append(m.begin(), m.end());
  aOrder.append(k.begin(), k.end());
  bOrder.append(k.begin(), k.end());
  bOrder.append(n.begin(), n.end());
  V a = prepare(0, aOrder, {mSize, kSize});
  V b = prepare(1, bOrder, {kSize, nSize});

  // [batch..., M, N] -> [batch..., m..., n...] -> the output order.
  SmallVector<int64_t> productLabels(batch);
  productLabels.append(m.begin(), m.end());
  productLabels.append(n.begin(), n.end());
  SmallVector<int64_t> productShape =
      llvm::map_to_vector(productLabels, [&](int64_t l) { return eq.sizes[l]; });
  SmallVector<int64_t> perm = positions(productLabels, eq.output);
  SmallVector<int64_t> matmulShape(batchShape);
  matmulShape.append({mSize, nSize});
  bool reshape = matmulShape != productShape;
  bool transpose = !isIdentity(perm);
  V c = e.add("MatMul", {a, b}, {},
              reshape || transpose ? Output() : e.output(0));
  if (reshape)
    c = e.add("Reshape", {c, e.i64s(productShape)}, {},
              transpose ? Output() : e.output(0));
  if (transpose)
    e.add("Transpose", {c}, {intsAttr("perm", perm)}, e.output(0));
  return success();
}

} // namespace kiln::decompose
