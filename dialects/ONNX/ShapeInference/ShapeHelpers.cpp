//===- ShapeHelpers.cpp - Helpers shared by the shape inference models ----===//

#include "dialects/ONNX/DataTypes.h"
#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/Limits.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>

using namespace mlir;

namespace kiln::onnx {

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

static void printShape(InFlightDiagnostic &diag, ArrayRef<int64_t> shape) {
  diag << "[";
  llvm::interleave(
      shape,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          diag << "?";
        else
          diag << d;
      },
      [&] { diag << ", "; });
  diag << "]";
}

FailureOr<RankedTensorType> getOptionalInputType(Operation *op, unsigned index,
                                                 StringRef name) {
  if (index >= op->getNumOperands())
    return RankedTensorType();
  Type type = op->getOperand(index).getType();
  if (isa<NoneType>(type))
    return RankedTensorType();
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked) {
    emitNodeError(op) << "input '" << name << "' has type " << type
                      << ", expected a ranked tensor";
    return failure();
  }
  // Image ops take a symbolic batch (axis 0 of X) only: their window
  // arithmetic needs static channels and spatial dims.
  static const llvm::StringSet<> batchOnly = {
      "onnx.Conv",        "onnx.BatchNormalization", "onnx.MaxPool",
      "onnx.AveragePool", "onnx.GlobalAveragePool",  "onnx.GlobalMaxPool"};
  if (!ranked.hasStaticShape() &&
      batchOnly.contains(op->getName().getStringRef()))
    for (int64_t axis = 0; axis < ranked.getRank(); ++axis)
      if (ranked.isDynamicDim(axis) && (index != 0 || axis != 0)) {
        InFlightDiagnostic diag = emitNodeError(op);
        diag << "input '" << name << "' has a symbolic dimension at axis "
             << axis;
        if (std::string symbol =
                describeSymbolicDim(op->getOperand(index), axis);
            !symbol.empty())
          diag << " ('" << symbol << "')";
        diag << " (shape ";
        printShape(diag, ranked.getShape());
        diag << "); " << op->getName().stripDialect()
             << " takes a symbolic batch (axis 0 of X) only: fix the dim "
                "with --shape (docs/dynamic-shapes.md)";
        return failure();
      }
  if (!ranked.hasStaticShape() && !acceptsSymbolicDims(op)) {
    int64_t axis = 0;
    while (!ranked.isDynamicDim(axis))
      ++axis;
    InFlightDiagnostic diag = emitNodeError(op);
    diag << "input '" << name << "' has a symbolic dimension at axis " << axis;
    if (std::string symbol = describeSymbolicDim(op->getOperand(index), axis);
        !symbol.empty())
      diag << " ('" << symbol << "')";
    diag << " (shape ";
    printShape(diag, ranked.getShape());
    diag << "); " << op->getName().stripDialect()
         << " does not take symbolic dimensions yet: fix the model input's dim "
            "with --shape (docs/dynamic-shapes.md)";
    // Without input symbols the dim is a run dim: a size an op upstream
    // reads from a non-constant input's values.
    auto func = op->getParentOfType<FunctionOpInterface>();
    if (func && !func->hasAttr("kiln.symbols"))
      diag << "; here the dim is decided at run time by the values of a "
              "non-constant input upstream: fix that input with --specialize "
              "NAME=FILE";
    return failure();
  }
  return ranked;
}

bool acceptsSymbolicDims(Operation *op) {
  // The ops whose shape inference (here) and lowering (convert-onnx-to-linalg)
  // handle `?` dims, and whose symbolic dims kiln-symbolic-shapes follows.
  static const llvm::StringSet<> ops = {
      // Elementwise, unary and activations.
      "onnx.Abs", "onnx.Ceil", "onnx.Cos", "onnx.Erf", "onnx.Exp", "onnx.Floor",
      "onnx.Log", "onnx.Neg", "onnx.Reciprocal", "onnx.Sin", "onnx.Sqrt",
      "onnx.Tanh", "onnx.Identity", "onnx.Relu", "onnx.Sigmoid", "onnx.Clip",
      "onnx.Softplus", "onnx.Elu", "onnx.Gelu", "onnx.HardSigmoid",
      "onnx.HardSwish", "onnx.LeakyRelu", "onnx.Selu", "onnx.Cast",
      "onnx.CastLike",
      // Broadcasting binary / variadic ops.
      "onnx.Add", "onnx.Sub", "onnx.Mul", "onnx.Div", "onnx.Max", "onnx.Min",
      "onnx.Pow", "onnx.Sum",
      // Along an axis.
      "onnx.Softmax", "onnx.LogSoftmax", "onnx.LayerNormalization",
      "onnx.ReduceMean", "onnx.ReduceSum", "onnx.ReduceMax",
      // Products.
      "onnx.MatMul", "onnx.Gemm",
      // Data movement.
      "onnx.Transpose", "onnx.Reshape", "onnx.Flatten", "onnx.Unsqueeze",
      "onnx.Squeeze", "onnx.Gather", "onnx.GatherND", "onnx.Concat", "onnx.Split", "onnx.Pad",
      // Shapes of symbolic tensors (Shape -> Gather -> Concat -> Reshape).
      "onnx.Shape", "onnx.Range",
      // A symbolic batch (dim 0) of images.
      "onnx.Conv", "onnx.BatchNormalization", "onnx.MaxPool",
      "onnx.AveragePool", "onnx.GlobalAveragePool", "onnx.GlobalMaxPool"};
  return ops.contains(op->getName().getStringRef());
}

std::string describeSymbolicDim(Value value, int64_t axis) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg)
    return "";
  auto func = dyn_cast_or_null<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getFunctionBody().front())
    return "";
  auto dims = func.getArgAttrOfType<DenseI64ArrayAttr>(arg.getArgNumber(),
                                                      "kiln.dims");
  auto symbols = func->getAttrOfType<ArrayAttr>("kiln.symbols");
  if (!dims || !symbols || axis >= static_cast<int64_t>(dims.size()) ||
      dims[axis] >= 0)
    return "";
  int64_t id = -dims[axis] - 1;
  if (id >= static_cast<int64_t>(symbols.size()))
    return "";
  auto entry = dyn_cast<ArrayAttr>(symbols[id]);
  auto symName = entry && !entry.empty() ? dyn_cast<StringAttr>(entry[0])
                                         : StringAttr();
  return symName ? symName.str() : "";
}

FailureOr<RankedTensorType> getInputType(Operation *op, unsigned index,
                                         StringRef name) {
  FailureOr<RankedTensorType> type = getOptionalInputType(op, index, name);
  if (failed(type))
    return failure();
  if (!*type) {
    emitNodeError(op) << "required input '" << name << "' is missing";
    return failure();
  }
  return type;
}

LogicalResult emitNonConstantInput(Operation *op, StringRef name) {
  emitNodeError(op) << "output shape depends on a non-constant input '" << name
                    << "' (dynamic shapes are not supported yet)";
  return failure();
}

bool isRunTimeOperand(Operation *op, unsigned index) {
  return index < op->getNumOperands() && !isNoneValue(op->getOperand(index)) &&
         !getConstantAttr(op->getOperand(index)) &&
         isa_and_nonnull<FunctionOpInterface>(op->getParentOp());
}

FailureOr<int64_t> getRunTimeValuesLength(Operation *op, unsigned index,
                                          StringRef name) {
  auto type = index < op->getNumOperands()
                  ? dyn_cast<RankedTensorType>(op->getOperand(index).getType())
                  : RankedTensorType();
  if (!type || type.getRank() != 1 || type.isDynamicDim(0) ||
      !isa<IntegerType>(type.getElementType())) {
    emitNodeError(op) << "input '" << name
                      << "' must be a 1-D integer tensor of a static length "
                         "to be read at run time, got "
                      << op->getOperand(index).getType();
    return failure();
  }
  return type.getDimSize(0);
}

FailureOr<std::optional<SmallVector<int64_t>>>
getOptionalConstantInts(Operation *op, unsigned index, StringRef name) {
  if (index >= op->getNumOperands() || isNoneValue(op->getOperand(index)))
    return std::optional<SmallVector<int64_t>>();
  Value value = op->getOperand(index);
  ElementsAttr attr = getConstantAttr(value);
  if (!attr) {
    (void)emitNonConstantInput(op, name);
    return failure();
  }
  std::optional<SmallVector<int64_t>> values = getIntValues(attr);
  if (!values) {
    emitNodeError(op) << "input '" << name
                      << "' must be a constant integer tensor, got "
                      << attr.getType();
    return failure();
  }
  return values;
}

FailureOr<SmallVector<int64_t>> getConstantInts(Operation *op, unsigned index,
                                                StringRef name) {
  FailureOr<std::optional<SmallVector<int64_t>>> values =
      getOptionalConstantInts(op, index, name);
  if (failed(values))
    return failure();
  if (!*values) {
    emitNodeError(op) << "required input '" << name << "' is missing";
    return failure();
  }
  return **values;
}

static std::optional<SmallVector<ShapeValue>> shapeValues(Value value,
                                                          int depth) {
  if (std::optional<SmallVector<int64_t>> c = getConstantIntValues(value)) {
    SmallVector<ShapeValue> out;
    for (int64_t v : *c)
      out.push_back({v, Value(), 0});
    return out;
  }
  auto type = dyn_cast<RankedTensorType>(value.getType());
  Operation *op = value.getDefiningOp();
  if (!op || depth > 32 || !type || type.getRank() > 1 ||
      !type.hasStaticShape() || type.getNumElements() > 64 ||
      !isa<IntegerType>(type.getElementType()))
    return std::nullopt;
  StringRef name = op->getName().getStringRef();
  auto operand = [&](unsigned i) -> std::optional<SmallVector<ShapeValue>> {
    if (i >= op->getNumOperands() || isNoneValue(op->getOperand(i)))
      return std::nullopt;
    return shapeValues(op->getOperand(i), depth + 1);
  };
  std::optional<SmallVector<ShapeValue>> out;
  if (name == "onnx.Shape") {
    auto data = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    if (!data)
      return std::nullopt;
    int64_t rank = data.getRank();
    auto clamp = [&](int64_t a) {
      return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank);
    };
    int64_t start = clamp(getIntAttr(op, "start", 0));
    int64_t end = clamp(getIntAttr(op, "end", rank));
    out.emplace();
    for (int64_t i = start; i < end; ++i)
      out->push_back({data.getDimSize(i), op->getOperand(0), i});
  } else if (name == "onnx.Identity" || name == "onnx.Cast" ||
             name == "onnx.Unsqueeze" || name == "onnx.Squeeze") {
    out = operand(0);
  } else if (name == "onnx.Gather") {
    std::optional<SmallVector<ShapeValue>> data = operand(0);
    std::optional<SmallVector<int64_t>> indices =
        getConstantIntValues(op->getOperand(1));
    if (!data || !indices)
      return std::nullopt;
    out.emplace();
    int64_t n = data->size();
    for (int64_t i : *indices) {
      i = i < 0 ? i + n : i;
      if (i < 0 || i >= n)
        return std::nullopt;
      out->push_back((*data)[i]);
    }
  } else if (name == "onnx.Concat") {
    out.emplace();
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      std::optional<SmallVector<ShapeValue>> part = operand(i);
      if (!part)
        return std::nullopt;
      out->append(part->begin(), part->end());
    }
  } else if (name == "onnx.Slice") {
    std::optional<SmallVector<ShapeValue>> data = operand(0);
    std::optional<SmallVector<int64_t>> starts =
        getConstantIntValues(op->getOperand(1));
    std::optional<SmallVector<int64_t>> ends =
        getConstantIntValues(op->getOperand(2));
    if (!data || !starts || !ends || starts->size() != 1 || ends->size() != 1)
      return std::nullopt;
    int64_t step = 1;
    if (op->getNumOperands() > 4 && !isNoneValue(op->getOperand(4))) {
      std::optional<SmallVector<int64_t>> s =
          getConstantIntValues(op->getOperand(4));
      if (!s || s->size() != 1)
        return std::nullopt;
      step = (*s)[0];
    }
    int64_t n = data->size();
    int64_t b = (*starts)[0], e = (*ends)[0];
    if (step != 1)
      return std::nullopt;
    b = std::clamp<int64_t>(b < 0 ? b + n : b, 0, n);
    e = std::clamp<int64_t>(e < 0 ? e + n : e, 0, n);
    out.emplace();
    for (int64_t i = b; i < e; ++i)
      out->push_back((*data)[i]);
  } else if (name == "onnx.Add" || name == "onnx.Sub" || name == "onnx.Mul" ||
             name == "onnx.Div") {
    std::optional<SmallVector<ShapeValue>> a = operand(0), b = operand(1);
    if (!a || !b)
      return std::nullopt;
    size_t n = std::max(a->size(), b->size());
    if ((a->size() != n && a->size() != 1) ||
        (b->size() != n && b->size() != 1))
      return std::nullopt;
    out.emplace();
    for (size_t i = 0; i < n; ++i) {
      int64_t x = (*a)[a->size() == 1 ? 0 : i].value;
      int64_t y = (*b)[b->size() == 1 ? 0 : i].value;
      if (ShapedType::isDynamic(x) || ShapedType::isDynamic(y)) {
        out->push_back({ShapedType::kDynamic, Value(), 0});
        continue;
      }
      if (name == "onnx.Div" && y == 0)
        return std::nullopt;
      out->push_back({name == "onnx.Add"   ? x + y
                      : name == "onnx.Sub" ? x - y
                      : name == "onnx.Mul" ? x * y
                                           : x / y,
                      Value(), 0});
    }
  } else {
    return std::nullopt;
  }
  if (!out || static_cast<int64_t>(out->size()) != type.getNumElements())
    return std::nullopt;
  return out;
}

std::optional<SmallVector<int64_t>> getShapeValues(Value value) {
  std::optional<SmallVector<ShapeValue>> values = shapeValues(value, 0);
  if (!values)
    return std::nullopt;
  SmallVector<int64_t> out;
  for (const ShapeValue &v : *values)
    out.push_back(v.value);
  return out;
}

std::optional<SmallVector<ShapeValue>> getShapeValueSources(Value value) {
  return shapeValues(value, 0);
}

FailureOr<SmallVector<double>> getConstantNumbers(Operation *op, unsigned index,
                                                  StringRef name) {
  if (index >= op->getNumOperands() || isNoneValue(op->getOperand(index))) {
    emitNodeError(op) << "required input '" << name << "' is missing";
    return failure();
  }
  ElementsAttr attr = getConstantAttr(op->getOperand(index));
  if (!attr) {
    (void)emitNonConstantInput(op, name);
    return failure();
  }
  if (std::optional<SmallVector<double>> values = getFloatValues(attr))
    return *values;
  if (std::optional<SmallVector<int64_t>> values = getIntValues(attr))
    return SmallVector<double>(values->begin(), values->end());
  emitNodeError(op) << "input '" << name
                    << "' must be a constant numeric tensor, got "
                    << attr.getType();
  return failure();
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

LogicalResult setResultType(Operation *op, unsigned index,
                            ArrayRef<int64_t> shape, Type elementType) {
  for (int64_t d : shape) {
    if (d < 0 && !ShapedType::isDynamic(d)) {
      InFlightDiagnostic diag = emitNodeError(op);
      diag << "output " << index << " would have negative dimensions ";
      printShape(diag, shape);
      return failure();
    }
  }
  if (failed(checkTensorSize(op, shape, elementType,
                             "output " + std::to_string(index))))
    return failure();
  op->getResult(index).setType(RankedTensorType::get(shape, elementType));
  return success();
}

LogicalResult checkTensorSize(Operation *op, ArrayRef<int64_t> shape,
                              Type elementType, StringRef what) {
  const CompileLimits &limits = getCompileLimits();
  // A symbolic dim counts as 1 here: its bound is checked at run time.
  SmallVector<int64_t> staticShape(shape);
  for (int64_t &d : staticShape)
    if (ShapedType::isDynamic(d))
      d = 1;
  shape = staticShape;
  std::optional<int64_t> extent = getCheckedExtent(shape);
  if (!extent || *extent > limits.maxTensorElements) {
    InFlightDiagnostic diag = emitNodeError(op);
    diag << what << " would have shape ";
    printShape(diag, shape);
    diag << ", over kiln's limit of " << limits.maxTensorElements
         << " elements per tensor (--max-tensor-elements)";
    return failure();
  }
  if (!elementType.isIntOrFloat())
    return success();
  int64_t elements = llvm::is_contained(shape, 0) ? 0 : *extent;
  std::optional<int64_t> bytes =
      getCheckedBytes(elements, elementType.getIntOrFloatBitWidth());
  if (!bytes || *bytes > limits.maxTensorBytes) {
    InFlightDiagnostic diag = emitNodeError(op);
    diag << what << " would have shape ";
    printShape(diag, shape);
    diag << " of " << elementType << ", over kiln's limit of "
         << limits.maxTensorBytes << " bytes per tensor (--max-tensor-bytes)";
    return failure();
  }
  return success();
}

LogicalResult CheckedDims::check(Operation *op, StringRef what) const {
  if (!overflowed)
    return success();
  emitNodeError(op) << what << " overflows 64-bit integers";
  return failure();
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>>
broadcastShapes(Operation *op, ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> result(rank, 1);
  for (ArrayRef<int64_t> s : shapes) {
    size_t offset = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &r = result[offset + i];
      int64_t d = s[i];
      if (d == r || d == 1)
        continue;
      if (r == 1) {
        r = d;
        continue;
      }
      InFlightDiagnostic diag = emitNodeError(op);
      diag << "cannot broadcast shapes";
      for (ArrayRef<int64_t> t : shapes) {
        diag << " ";
        printShape(diag, t);
      }
      auto dimText = [](int64_t v) {
        return ShapedType::isDynamic(v) ? std::string("?") : std::to_string(v);
      };
      diag << " (dimension " << dimText(d) << " vs " << dimText(r) << ")";
      if (ShapedType::isDynamic(d) || ShapedType::isDynamic(r))
        diag << "; a symbolic dimension broadcasts only against 1 or the "
                "same symbol";
      return failure();
    }
  }
  return result;
}

bool isUnidirectionalBroadcastable(ArrayRef<int64_t> from,
                                   ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[offset + i])
      return false;
  return true;
}

FailureOr<int64_t> normalizeAxis(Operation *op, int64_t axis, int64_t rank,
                                 StringRef attrName) {
  if (axis < -rank || axis >= rank) {
    emitNodeError(op) << attrName << " " << axis << " is out of range for rank "
                      << rank << " (expected [" << -rank << ", " << rank - 1
                      << "])";
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>> normalizeAxes(Operation *op,
                                              ArrayRef<int64_t> axes,
                                              int64_t rank,
                                              StringRef attrName) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    FailureOr<int64_t> a = normalizeAxis(op, axis, rank, attrName);
    if (failed(a))
      return failure();
    if (llvm::is_contained(result, *a)) {
      emitNodeError(op) << attrName << " has axis " << axis
                        << " more than once";
      return failure();
    }
    result.push_back(*a);
  }
  return result;
}

int64_t getNumElements(ArrayRef<int64_t> shape) {
  // Every shape here passed checkTensorSize: its product fits.
  // A symbolic dim makes the product symbolic.
  int64_t n = 1;
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d))
      return ShapedType::kDynamic;
    n *= d;
  }
  return n;
}

int64_t getIntAttr(Operation *op, StringRef name, int64_t dflt) {
  if (auto attr = op->getAttrOfType<IntegerAttr>(name))
    return attr.getInt();
  return dflt;
}

std::optional<SmallVector<int64_t>> getI64ArrayAttr(Operation *op,
                                                    StringRef name) {
  auto array = op->getAttrOfType<ArrayAttr>(name);
  if (!array)
    return std::nullopt;
  SmallVector<int64_t> result;
  for (Attribute a : array)
    if (auto i = dyn_cast<IntegerAttr>(a))
      result.push_back(i.getInt());
  return result;
}

//===----------------------------------------------------------------------===//
// Convolution / pooling windows
//===----------------------------------------------------------------------===//

FailureOr<WindowParams> getWindowParams(Operation *op, int64_t spatialRank,
                                        ArrayRef<int64_t> kernel) {
  WindowParams params;
  if (auto autoPad = op->getAttrOfType<StringAttr>("auto_pad"))
    params.autoPad = autoPad.getValue();
  if (params.autoPad != "NOTSET" && params.autoPad != "VALID" &&
      params.autoPad != "SAME_UPPER" && params.autoPad != "SAME_LOWER") {
    emitNodeError(op) << "unknown auto_pad '" << params.autoPad << "'";
    return failure();
  }
  if (auto ceil = op->getAttrOfType<IntegerAttr>("ceil_mode"))
    params.ceilMode = ceil.getInt() != 0;

  auto read = [&](StringRef name, int64_t size, int64_t dflt,
                  SmallVectorImpl<int64_t> &out) -> LogicalResult {
    std::optional<SmallVector<int64_t>> v = getI64ArrayAttr(op, name);
    if (!v) {
      out.assign(size, dflt);
      return success();
    }
    if (static_cast<int64_t>(v->size()) != size) {
      emitNodeError(op) << name << " has " << v->size() << " values, expected "
                        << size << " for " << spatialRank
                        << " spatial dimensions";
      return failure();
    }
    out.assign(v->begin(), v->end());
    return success();
  };

  if (kernel.empty()) {
    std::optional<SmallVector<int64_t>> k = getI64ArrayAttr(op, "kernel_shape");
    if (!k) {
      emitNodeError(op) << "kernel_shape is required";
      return failure();
    }
    kernel = *k;
    params.kernel = *k;
  } else {
    params.kernel.assign(kernel.begin(), kernel.end());
  }
  if (static_cast<int64_t>(params.kernel.size()) != spatialRank) {
    emitNodeError(op) << "kernel_shape has " << params.kernel.size()
                      << " values, expected " << spatialRank << " for "
                      << spatialRank << " spatial dimensions";
    return failure();
  }
  if (failed(read("strides", spatialRank, 1, params.strides)) ||
      failed(read("dilations", spatialRank, 1, params.dilations)) ||
      failed(read("pads", 2 * spatialRank, 0, params.pads)))
    return failure();
  for (int64_t i = 0; i < spatialRank; ++i) {
    if (params.kernel[i] <= 0 || params.strides[i] <= 0 ||
        params.dilations[i] <= 0) {
      emitNodeError(op)
          << "kernel_shape, strides and dilations must be positive";
      return failure();
    }
  }
  for (int64_t p : params.pads) {
    if (p < 0) {
      emitNodeError(op) << "pads must not be negative";
      return failure();
    }
  }
  return params;
}

FailureOr<SmallVector<int64_t>>
computeWindowOutputShape(Operation *op, ArrayRef<int64_t> input,
                         WindowParams &params) {
  int64_t n = input.size();
  SmallVector<int64_t> out;
  // Attributes may hold any int64: every sum and product is checked.
  CheckedDims dims;
  for (int64_t i = 0; i < n; ++i) {
    int64_t in = input[i], stride = params.strides[i];
    int64_t effKernel =
        dims.add(dims.mul(params.kernel[i] - 1, params.dilations[i]), 1);
    if (params.autoPad == "SAME_UPPER" || params.autoPad == "SAME_LOWER") {
      int64_t o = in == 0 ? 0 : (in - 1) / stride + 1;
      int64_t total = std::max<int64_t>(
          0, dims.sub(dims.add(dims.mul(o - 1, stride), effKernel), in));
      int64_t small = total / 2, large = total - small;
      bool upper = params.autoPad == "SAME_UPPER";
      params.pads[i] = upper ? small : large;
      params.pads[i + n] = upper ? large : small;
      out.push_back(o);
      continue;
    }
    if (params.autoPad == "VALID") {
      params.pads[i] = 0;
      params.pads[i + n] = 0;
    }
    int64_t padded = dims.add(in, dims.add(params.pads[i], params.pads[i + n]));
    if (failed(dims.check(op, "the window's size or padding")))
      return failure();
    if (padded < effKernel) {
      emitNodeError(op)
          << "kernel of size " << effKernel
          << " (with dilation) is larger than the padded input size " << padded
          << " in spatial dimension " << i;
      return failure();
    }
    int64_t o;
    if (params.ceilMode) {
      o = padded - effKernel == 0 ? 1 : (padded - effKernel - 1) / stride + 2;
      // The last window must start inside the input or the begin padding.
      if ((o - 1) * stride >= in + params.pads[i])
        --o;
    } else {
      o = (padded - effKernel) / stride + 1;
    }
    out.push_back(o);
  }
  if (failed(dims.check(op, "the window's size or padding")))
    return failure();
  return out;
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

Type getTypeFromONNXDataType(MLIRContext *ctx, int64_t dataType) {
  Builder b(ctx);
  auto uint = [&](unsigned w) {
    return IntegerType::get(ctx, w, IntegerType::Unsigned);
  };
  switch (dataType) {
  case 1: // FLOAT
    return b.getF32Type();
  case 2: // UINT8
    return uint(8);
  case 3: // INT8
    return b.getIntegerType(8);
  case 4: // UINT16
    return uint(16);
  case 5: // INT16
    return b.getIntegerType(16);
  case 6: // INT32
    return b.getIntegerType(32);
  case 7: // INT64
    return b.getIntegerType(64);
  case 9: // BOOL
    return b.getI1Type();
  case 10: // FLOAT16
    return b.getF16Type();
  case 11: // DOUBLE
    return b.getF64Type();
  case 12: // UINT32
    return uint(32);
  case 13: // UINT64
    return uint(64);
  case 16: // BFLOAT16
    return b.getBF16Type();
  case 17: // FLOAT8E4M3FN
    return Float8E4M3FNType::get(ctx);
  case 18: // FLOAT8E4M3FNUZ
    return Float8E4M3FNUZType::get(ctx);
  case 19: // FLOAT8E5M2
    return Float8E5M2Type::get(ctx);
  case 20: // FLOAT8E5M2FNUZ
    return Float8E5M2FNUZType::get(ctx);
  case 21: // UINT4
    return uint(4);
  case 22: // INT4
    return b.getIntegerType(4);
  default: // FLOAT4E2M1, FLOAT8E8M0, UINT2, INT2: the dtype table's; STRING,
           // COMPLEX64/128, FLOAT6*: none
    return getElementTypeOfOnnxDataType(ctx, static_cast<int32_t>(dataType));
  }
}

FailureOr<Type> getElementTypeFromAttr(Operation *op, int64_t dataType,
                                       StringRef attrName) {
  Type type = getTypeFromONNXDataType(op->getContext(), dataType);
  if (!type) {
    emitNodeError(op) << attrName << " = " << dataType
                      << " is not a supported ONNX data type";
    return failure();
  }
  return type;
}

LogicalResult checkSameElementType(Operation *op,
                                   ArrayRef<RankedTensorType> types) {
  Type first;
  for (RankedTensorType t : types) {
    if (!t)
      continue;
    if (!first) {
      first = t.getElementType();
      continue;
    }
    if (t.getElementType() != first) {
      emitNodeError(op) << "inputs have different element types " << first
                        << " and " << t.getElementType();
      return failure();
    }
  }
  return success();
}

} // namespace kiln::onnx
