//===- ConstantValues.cpp - Reading constant operands ---------------------===//

#include "dialects/ONNX/ConstantValues.h"

#include "dialects/ONNX/ONNXOps.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;

namespace kiln::onnx {

ElementsAttr getConstantAttr(Value value) {
  if (!value)
    return {};
  if (auto constant = value.getDefiningOp<ConstantOp>())
    return constant.getValueAttr();
  Attribute attr;
  if (matchPattern(value, m_Constant(&attr)))
    return dyn_cast<ElementsAttr>(attr);
  return {};
}

// Raw bytes of a resource blob holding exactly `numElements` elements of
// `bytes` each.
static std::optional<ArrayRef<char>> getBlobData(DenseResourceElementsAttr attr,
                                                 int64_t bytesPerElement) {
  AsmResourceBlob *blob = attr.getRawHandle().getBlob();
  if (!blob)
    return std::nullopt;
  ArrayRef<char> data = blob->getData();
  int64_t n = attr.getType().getNumElements();
  if (static_cast<int64_t>(data.size()) != n * bytesPerElement)
    return std::nullopt;
  return data;
}

// Bytes per element of a resource blob; bool is stored one byte per element.
static int64_t storageBytes(Type elementType) {
  return std::max<int64_t>(1, (elementType.getIntOrFloatBitWidth() + 7) / 8);
}

static std::optional<int64_t> toInt64(const APInt &v, bool isUnsigned) {
  if (isUnsigned) {
    if (v.getActiveBits() > 63)
      return std::nullopt;
    return static_cast<int64_t>(v.getZExtValue());
  }
  return v.getSExtValue();
}

std::optional<SmallVector<int64_t>> getIntValues(ElementsAttr attr) {
  if (!attr)
    return std::nullopt;
  auto type = dyn_cast<ShapedType>(attr.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  auto intType = dyn_cast<IntegerType>(type.getElementType());
  if (!intType)
    return std::nullopt;
  // ONNX signed ints are signless here; bool (i1) and uiN read as unsigned.
  bool isUnsigned = intType.isUnsigned() || intType.getWidth() == 1;
  unsigned width = intType.getWidth();
  SmallVector<int64_t> result;
  result.reserve(type.getNumElements());

  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr)) {
    for (const APInt &v : dense.getValues<APInt>()) {
      std::optional<int64_t> x = toInt64(v, isUnsigned);
      if (!x)
        return std::nullopt;
      result.push_back(*x);
    }
    return result;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    if (width > 64)
      return std::nullopt;
    int64_t bytes = storageBytes(intType);
    std::optional<ArrayRef<char>> data = getBlobData(resource, bytes);
    if (!data)
      return std::nullopt;
    for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
      uint64_t raw = 0;
      std::memcpy(&raw, data->data() + i * bytes, bytes); // little-endian host
      APInt v(bytes * 8, raw);
      if (width == 1)
        v = APInt(1, raw != 0);
      else
        v = v.trunc(width);
      std::optional<int64_t> x = toInt64(v, isUnsigned);
      if (!x)
        return std::nullopt;
      result.push_back(*x);
    }
    return result;
  }
  return std::nullopt;
}

static double toDouble(APFloat v) {
  bool losesInfo = false;
  v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return v.convertToDouble();
}

std::optional<SmallVector<double>> getFloatValues(ElementsAttr attr) {
  if (!attr)
    return std::nullopt;
  auto type = dyn_cast<ShapedType>(attr.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  auto floatType = dyn_cast<FloatType>(type.getElementType());
  if (!floatType)
    return std::nullopt;
  SmallVector<double> result;
  result.reserve(type.getNumElements());

  if (auto dense = dyn_cast<DenseFPElementsAttr>(attr)) {
    for (const APFloat &v : dense.getValues<APFloat>())
      result.push_back(toDouble(v));
    return result;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    unsigned width = floatType.getWidth();
    if (width % 8 != 0 || width > 64)
      return std::nullopt;
    int64_t bytes = width / 8;
    std::optional<ArrayRef<char>> data = getBlobData(resource, bytes);
    if (!data)
      return std::nullopt;
    for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
      uint64_t raw = 0;
      std::memcpy(&raw, data->data() + i * bytes, bytes);
      result.push_back(
          toDouble(APFloat(floatType.getFloatSemantics(), APInt(width, raw))));
    }
    return result;
  }
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> getConstantIntValues(Value value) {
  return getIntValues(getConstantAttr(value));
}

std::optional<SmallVector<double>> getConstantFloatValues(Value value) {
  return getFloatValues(getConstantAttr(value));
}

std::optional<SmallVector<int64_t>> getConstantIntegralValues(Value value) {
  if (auto ints = getConstantIntValues(value))
    return ints;
  auto floats = getConstantFloatValues(value);
  if (!floats)
    return std::nullopt;
  SmallVector<int64_t> truncated;
  for (double f : *floats) {
    if (!std::isfinite(f) || std::fabs(f) > 9.0e18)
      return std::nullopt;
    truncated.push_back(static_cast<int64_t>(f));
  }
  return truncated;
}

DenseElementsAttr toDenseElements(ElementsAttr attr, int64_t maxElements) {
  if (!attr)
    return {};
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() > maxElements)
    return {};
  Type elementType = type.getElementType();
  if (!elementType.isIntOrFloat())
    return {};
  if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    return dense;
  if (!isa<DenseResourceElementsAttr>(attr))
    return {};
  if (auto intType = dyn_cast<IntegerType>(elementType)) {
    std::optional<SmallVector<int64_t>> values = getIntValues(attr);
    if (!values)
      return {};
    SmallVector<APInt> apValues;
    for (int64_t v : *values)
      apValues.push_back(
          APInt(intType.getWidth(), static_cast<uint64_t>(v),
                /*isSigned=*/!intType.isUnsigned() && intType.getWidth() != 1,
                /*implicitTrunc=*/true));
    return DenseElementsAttr::get(type, apValues);
  }
  auto floatType = cast<FloatType>(elementType);
  std::optional<SmallVector<double>> values = getFloatValues(attr);
  if (!values)
    return {};
  SmallVector<APFloat> apValues;
  for (double v : *values) {
    // Exact: every value came from this type.
    APFloat x(v);
    bool losesInfo = false;
    x.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
              &losesInfo);
    apValues.push_back(x);
  }
  return DenseElementsAttr::get(type, apValues);
}

bool isNoneValue(Value value) {
  return value && isa<NoneType>(value.getType());
}

} // namespace kiln::onnx
