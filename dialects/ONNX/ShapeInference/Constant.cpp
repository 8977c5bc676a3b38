//===- Constant.cpp - Shape inference of constants and generators ---------===//
//
// Constant, ConstantOfShape, Range, NoValue, RandomNormal, RandomUniform.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx {
namespace {

// Constant: the type of `value` (or `sparse_value`); value_float(s) are f32,
// value_int(s) i64, scalars for the singular forms and 1-D for the plural ones.
LogicalResult inferConstant(Operation *op) {
  MLIRContext *ctx = op->getContext();
  Builder b(ctx);
  for (StringRef name : {"value", "sparse_value"}) {
    if (auto elements = op->getAttrOfType<ElementsAttr>(name)) {
      auto type = dyn_cast<RankedTensorType>(elements.getType());
      if (!type || !type.hasStaticShape()) {
        emitNodeError(op) << name << " has type " << elements.getType()
                          << ", expected a statically shaped tensor";
        return failure();
      }
      return setResultType(op, 0, type.getShape(), type.getElementType());
    }
  }
  if (op->hasAttr("value_float"))
    return setResultType(op, 0, {}, b.getF32Type());
  if (op->hasAttr("value_int"))
    return setResultType(op, 0, {}, b.getI64Type());
  if (auto floats = op->getAttrOfType<ArrayAttr>("value_floats"))
    return setResultType(op, 0, {static_cast<int64_t>(floats.size())},
                         b.getF32Type());
  if (auto ints = op->getAttrOfType<ArrayAttr>("value_ints"))
    return setResultType(op, 0, {static_cast<int64_t>(ints.size())},
                         b.getI64Type());
  if (op->hasAttr("value_string") || op->hasAttr("value_strings")) {
    emitNodeError(op) << "string constants are not supported";
    return failure();
  }
  emitNodeError(op) << "has no value attribute";
  return failure();
}

// ConstantOfShape(input): the shape is the constant input; the element type is
// that of `value` (f32 when absent).
LogicalResult inferConstantOfShape(Operation *op) {
  FailureOr<RankedTensorType> input = getInputType(op, 0, "input");
  if (failed(input))
    return failure();
  if (input->getRank() != 1) {
    emitNodeError(op) << "input must be 1-D, got " << *input;
    return failure();
  }
  Type elementType = Float32Type::get(op->getContext());
  if (auto value = op->getAttrOfType<ElementsAttr>("value")) {
    if (value.getNumElements() != 1) {
      emitNodeError(op) << "value must hold one element, got "
                        << value.getType();
      return failure();
    }
    elementType = value.getElementType();
  }
  // A shape read at run time: as many run dims as it has values.
  if (isRunTimeOperand(op, 0) && !getShapeValues(op->getOperand(0))) {
    FailureOr<int64_t> length = getRunTimeValuesLength(op, 0, "input");
    if (failed(length))
      return failure();
    return setResultType(op, 0,
                         SmallVector<int64_t>(*length, ShapedType::kDynamic),
                         elementType);
  }
  FailureOr<SmallVector<int64_t>> shape = getConstantInts(op, 0, "input");
  if (failed(shape))
    return failure();
  return setResultType(op, 0, *shape, elementType);
}

// Range(start, limit, delta): constant scalars; max(ceil((limit - start) /
// delta), 0) elements of start's type.
LogicalResult inferRange(Operation *op) {
  FailureOr<RankedTensorType> start = getInputType(op, 0, "start");
  if (failed(start))
    return failure();
  const char *names[] = {"start", "limit", "delta"};
  // A limit computed from a symbolic dim (Range(0, Gather(Shape(x), 1), 1)):
  // a symbolic length, given its expression by kiln-symbolic-shapes.
  if (!getConstantAttr(op->getOperand(1)))
    if (std::optional<SmallVector<int64_t>> limit =
            getShapeValues(op->getOperand(1));
        limit && limit->size() == 1 && ShapedType::isDynamic((*limit)[0]))
      return setResultType(op, 0, {ShapedType::kDynamic},
                           start->getElementType());
  // Values read at run time: a run dim (its count computed by the lowering).
  if (isRunTimeOperand(op, 0) || isRunTimeOperand(op, 1) ||
      isRunTimeOperand(op, 2)) {
    for (unsigned i = 0; i < 3; ++i) {
      FailureOr<RankedTensorType> t = getInputType(op, i, names[i]);
      if (failed(t))
        return failure();
      if (t->getNumElements() != 1) {
        emitNodeError(op) << "input '" << names[i] << "' must be a scalar";
        return failure();
      }
    }
    return setResultType(op, 0, {ShapedType::kDynamic},
                         start->getElementType());
  }
  double v[3];
  for (unsigned i = 0; i < 3; ++i) {
    FailureOr<SmallVector<double>> x = getConstantNumbers(op, i, names[i]);
    if (failed(x))
      return failure();
    if (x->size() != 1) {
      emitNodeError(op) << "input '" << names[i] << "' must be a scalar";
      return failure();
    }
    v[i] = (*x)[0];
  }
  if (v[2] == 0) {
    emitNodeError(op) << "delta must not be 0";
    return failure();
  }
  // The count is checked as a double before it becomes an integer: an infinite
  // or huge limit would convert to anything.
  double count = std::ceil((v[1] - v[0]) / v[2]);
  int64_t max = getCompileLimits().maxTensorElements;
  if (!std::isfinite(count) || count > static_cast<double>(max)) {
    emitNodeError(op) << "start " << v[0] << ", limit " << v[1] << " and delta "
                      << v[2] << " make " << count << " elements, over kiln's "
                      << "limit of " << max
                      << " elements per tensor (--max-tensor-elements)";
    return failure();
  }
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
  return setResultType(op, 0, {n}, start->getElementType());
}

// NoValue: `none`.
LogicalResult inferNoValue(Operation *op) {
  op->getResult(0).setType(NoneType::get(op->getContext()));
  return success();
}

// RandomNormal, RandomUniform: `shape` and `dtype` attributes.
LogicalResult inferRandom(Operation *op) {
  std::optional<SmallVector<int64_t>> shape = getI64ArrayAttr(op, "shape");
  if (!shape) {
    emitNodeError(op) << "shape is required";
    return failure();
  }
  FailureOr<Type> elementType =
      getElementTypeFromAttr(op, getIntAttr(op, "dtype", 1), "dtype");
  if (failed(elementType))
    return failure();
  return setResultType(op, 0, *shape, *elementType);
}

// HannWindow, HammingWindow, BlackmanWindow(size): [size] of output_datatype
// (float when absent); size is a constant scalar.
LogicalResult inferWindow(Operation *op) {
  FailureOr<SmallVector<int64_t>> size = getConstantInts(op, 0, "size");
  if (failed(size))
    return failure();
  if (size->size() != 1 || (*size)[0] < 0) {
    emitNodeError(op) << "size must be one non-negative value";
    return failure();
  }
  FailureOr<Type> elementType = getElementTypeFromAttr(
      op, getIntAttr(op, "output_datatype", 1), "output_datatype");
  if (failed(elementType))
    return failure();
  return setResultType(op, 0, {(*size)[0]}, *elementType);
}

} // namespace

void registerConstantShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferConstant, ConstantOp>(ctx);
    attachInferShapes<inferConstantOfShape, ConstantOfShapeOp>(ctx);
    attachInferShapes<inferRange, RangeOp>(ctx);
    attachInferShapes<inferNoValue, NoValueOp>(ctx);
    attachInferShapes<inferRandom, RandomNormalOp, RandomUniformOp>(ctx);
    attachInferShapes<inferWindow, HannWindowOp, HammingWindowOp, BlackmanWindowOp>(ctx);
  });
}

} // namespace kiln::onnx
