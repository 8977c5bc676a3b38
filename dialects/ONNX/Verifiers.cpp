//===- Verifiers.cpp - Verifiers of onnx ops ------------------------------===//
//
// Checks the ODS cannot express (every operand is AnyType): ranks and attribute
// consistency, only where the types involved are ranked. Errors name the node.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace kiln::onnx;

static RankedTensorType getRanked(Value value) {
  return dyn_cast<RankedTensorType>(value.getType());
}

static SmallVector<int64_t> getInts(ArrayAttr attr) {
  SmallVector<int64_t> values;
  for (Attribute a : attr)
    values.push_back(cast<IntegerAttr>(a).getInt());
  return values;
}

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::verify() {
  RankedTensorType x = getRanked(getX()), w = getRanked(getW());
  if (x && x.getRank() < 3)
    return emitNodeError(*this)
           << "input X must have rank >= 3, got " << x.getRank();
  if (w && w.getRank() < 3)
    return emitNodeError(*this)
           << "weight W must have rank >= 3, got " << w.getRank();
  if (x && w && x.getRank() != w.getRank())
    return emitNodeError(*this)
           << "input X (rank " << x.getRank() << ") and weight W (rank "
           << w.getRank() << ") must have the same rank";
  if (getGroup() < 1)
    return emitNodeError(*this)
           << "group must be >= 1, got " << static_cast<int64_t>(getGroup());
  if (RankedTensorType b =
          isNoneValue(getB()) ? RankedTensorType() : getRanked(getB()))
    if (b.getRank() != 1)
      return emitNodeError(*this)
             << "bias B must have rank 1, got " << b.getRank();

  // Spatial rank from the operands, else from kernel_shape.
  std::optional<int64_t> spatial;
  if (x)
    spatial = x.getRank() - 2;
  else if (w)
    spatial = w.getRank() - 2;
  else if (std::optional<ArrayAttr> k = getKernelShape())
    spatial = static_cast<int64_t>(k->size());
  if (!spatial)
    return success();
  auto checkLength = [&](std::optional<ArrayAttr> attr, StringRef name,
                         int64_t expected) -> LogicalResult {
    if (attr && static_cast<int64_t>(attr->size()) != expected)
      return emitNodeError(*this) << name << " has " << attr->size()
                                  << " values, expected " << expected;
    return success();
  };
  if (failed(checkLength(getKernelShape(), "kernel_shape", *spatial)) ||
      failed(checkLength(getStrides(), "strides", *spatial)) ||
      failed(checkLength(getDilations(), "dilations", *spatial)) ||
      failed(checkLength(getPads(), "pads", 2 * *spatial)))
    return failure();
  auto checkPositive = [&](std::optional<ArrayAttr> attr,
                           StringRef name) -> LogicalResult {
    if (attr)
      for (int64_t v : getInts(*attr))
        if (v < 1)
          return emitNodeError(*this)
                 << name << " values must be >= 1, got " << v;
    return success();
  };
  if (failed(checkPositive(getKernelShape(), "kernel_shape")) ||
      failed(checkPositive(getStrides(), "strides")) ||
      failed(checkPositive(getDilations(), "dilations")))
    return failure();
  if (std::optional<ArrayAttr> pads = getPads())
    for (int64_t v : getInts(*pads))
      if (v < 0)
        return emitNodeError(*this) << "pads values must be >= 0, got " << v;
  if (w)
    if (std::optional<ArrayAttr> k = getKernelShape()) {
      SmallVector<int64_t> kernel = getInts(*k);
      for (int64_t i = 0; i < *spatial; ++i)
        if (!w.isDynamicDim(i + 2) && w.getDimSize(i + 2) != kernel[i])
          return emitNodeError(*this)
                 << "kernel_shape[" << i << "] = " << kernel[i]
                 << " does not match weight dimension " << w.getDimSize(i + 2);
    }
  if (x && w && !x.isDynamicDim(1) && !w.isDynamicDim(1) &&
      x.getDimSize(1) != w.getDimSize(1) * static_cast<int64_t>(getGroup()))
    return emitNodeError(*this)
           << "input channels (" << x.getDimSize(1)
           << ") must equal weight channels (" << w.getDimSize(1)
           << ") times group (" << static_cast<int64_t>(getGroup()) << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Gemm, MatMul
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::verify() {
  RankedTensorType a = getRanked(getA()), b = getRanked(getB());
  if (a && a.getRank() != 2)
    return emitNodeError(*this)
           << "operand A must have rank 2, got " << a.getRank();
  if (b && b.getRank() != 2)
    return emitNodeError(*this)
           << "operand B must have rank 2, got " << b.getRank();
  if (!isNoneValue(getC()))
    if (RankedTensorType c = getRanked(getC()); c && c.getRank() > 2)
      return emitNodeError(*this)
             << "operand C must have rank <= 2, got " << c.getRank();
  if (a && b) {
    int64_t ka = a.getDimSize(getTransA() ? 0 : 1);
    int64_t kb = b.getDimSize(getTransB() ? 1 : 0);
    if (!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb) && ka != kb)
      return emitNodeError(*this)
             << "inner dimensions differ: " << ka << " vs " << kb;
  }
  return success();
}

LogicalResult MatMulOp::verify() {
  RankedTensorType a = getRanked(getA()), b = getRanked(getB());
  if (a && a.getRank() < 1)
    return emitNodeError(*this) << "operand A must have rank >= 1";
  if (b && b.getRank() < 1)
    return emitNodeError(*this) << "operand B must have rank >= 1";
  if (a && b) {
    int64_t ka = a.getDimSize(a.getRank() - 1);
    int64_t kb = b.getDimSize(b.getRank() == 1 ? 0 : b.getRank() - 2);
    if (!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb) && ka != kb)
      return emitNodeError(*this)
             << "inner dimensions differ: " << ka << " vs " << kb;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Reshape, Transpose, Concat
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  if (RankedTensorType shape = getRanked(getShape());
      shape && shape.getRank() != 1)
    return emitNodeError(*this)
           << "shape must have rank 1, got " << shape.getRank();
  std::optional<SmallVector<int64_t>> shape = getConstantIntValues(getShape());
  if (!shape)
    return success();
  int64_t minusOnes = 0;
  bool hasZero = false;
  for (int64_t d : *shape) {
    if (d < -1)
      return emitNodeError(*this) << "shape values must be >= -1, got " << d;
    minusOnes += d == -1;
    hasZero |= d == 0;
  }
  if (minusOnes > 1)
    return emitNodeError(*this) << "shape has " << minusOnes
                                << " dimensions of -1, at most one is allowed";
  if (minusOnes && hasZero && getAllowzero() != 0)
    return emitNodeError(*this)
           << "shape cannot contain both 0 and -1 when allowzero = 1";
  return success();
}

LogicalResult TransposeOp::verify() {
  std::optional<ArrayAttr> permAttr = getPerm();
  if (!permAttr)
    return success();
  SmallVector<int64_t> perm = getInts(*permAttr);
  RankedTensorType data = getRanked(getData());
  if (data && static_cast<int64_t>(perm.size()) != data.getRank())
    return emitNodeError(*this)
           << "perm has " << perm.size() << " values, expected the input rank "
           << data.getRank();
  llvm::SmallBitVector seen(perm.size());
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen.test(p))
      return emitNodeError(*this)
             << "perm is not a permutation of [0, " << perm.size() << ")";
    seen.set(p);
  }
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitNodeError(*this) << "needs at least one input";
  std::optional<int64_t> rank;
  for (Value input : getInputs()) {
    RankedTensorType type = getRanked(input);
    if (!type)
      continue;
    if (rank && *rank != type.getRank())
      return emitNodeError(*this) << "inputs have different ranks (" << *rank
                                  << " and " << type.getRank() << ")";
    rank = type.getRank();
  }
  int64_t axis = static_cast<int64_t>(getAxis());
  if (rank && (axis < -*rank || axis >= *rank))
    return emitNodeError(*this)
           << "axis " << axis << " is out of range for rank " << *rank;
  return success();
}
