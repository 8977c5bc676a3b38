//===- Utils.cpp - Shared helpers for onnx -> linalg lowering -------------===//

#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/DataTypes.h"

#include "dialects/ONNX/ConstantValues.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "dialects/ONNX/Diagnostics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AsmState.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace kiln::onnx_to_linalg {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

Type toSignless(Type type) {
  // int4, float4e2m1, ...: held one per i8 (SubByte.h).
  if (kiln::onnx::isStorageOnlyType(type))
    return IntegerType::get(type.getContext(), 8);
  if (auto intType = dyn_cast<IntegerType>(type)) {
    if (intType.isSignless())
      return intType;
    return IntegerType::get(type.getContext(), intType.getWidth());
  }
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.clone(toSignless(tensor.getElementType()));
  if (auto tensor = dyn_cast<UnrankedTensorType>(type))
    return UnrankedTensorType::get(toSignless(tensor.getElementType()));
  return type;
}

bool isUnsignedInt(Type type) {
  auto intType = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
  return intType && intType.isUnsigned();
}

bool isIntNotBool(Type type) {
  auto intType = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
  return intType && intType.getWidth() != 1;
}

bool isBool(Type type) {
  auto intType = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
  return intType && intType.getWidth() == 1;
}

bool isFloat(Type type) { return isa<FloatType>(getElementTypeOrSelf(type)); }

TypedAttr getScalarAttr(Type elemType, double value) {
  if (auto floatType = dyn_cast<FloatType>(elemType))
    return FloatAttr::get(floatType, value);
  auto intType = cast<IntegerType>(elemType);
  if (intType.getWidth() == 1)
    return IntegerAttr::get(intType, value != 0.0 ? 1 : 0);
  return IntegerAttr::get(intType, static_cast<int64_t>(value));
}

Value createScalarConstant(OpBuilder &b, Location loc, Type elemType,
                           double value) {
  return arith::ConstantOp::create(b, loc, getScalarAttr(elemType, value));
}

Value createIntConstant(OpBuilder &b, Location loc, Type elemType,
                        int64_t value) {
  return arith::ConstantOp::create(b, loc, IntegerAttr::get(elemType, value));
}

Value convertScalar(OpBuilder &b, Location loc, Value value, Type toType,
                    bool srcUnsigned, bool dstUnsigned) {
  Type fromType = value.getType();
  if (fromType == toType)
    return value;
  auto fromInt = dyn_cast<IntegerType>(fromType);
  auto toInt = dyn_cast<IntegerType>(toType);
  auto fromFloat = dyn_cast<FloatType>(fromType);
  auto toFloat = dyn_cast<FloatType>(toType);

  // Anything -> bool: value != 0.
  if (toInt && toInt.getWidth() == 1) {
    if (fromFloat) {
      Value zero = arith::ConstantOp::create(b, loc, FloatAttr::get(fromFloat, 0.0));
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   zero);
    }
    Value zero = arith::ConstantOp::create(b, loc, IntegerAttr::get(fromInt, 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value, zero);
  }
  // Bool -> anything: 0 / 1 (zero-extended).
  if (fromInt && fromInt.getWidth() == 1)
    srcUnsigned = true;

  if (fromInt && toInt) {
    if (fromInt.getWidth() < toInt.getWidth())
      return srcUnsigned ? Value(arith::ExtUIOp::create(b, loc, toType, value))
                         : Value(arith::ExtSIOp::create(b, loc, toType, value));
    return arith::TruncIOp::create(b, loc, toType, value);
  }
  if (fromInt && toFloat)
    return srcUnsigned ? Value(arith::UIToFPOp::create(b, loc, toType, value))
                       : Value(arith::SIToFPOp::create(b, loc, toType, value));
  if (fromFloat && toInt)
    return dstUnsigned ? Value(arith::FPToUIOp::create(b, loc, toType, value))
                       : Value(arith::FPToSIOp::create(b, loc, toType, value));
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, toType, value);
    if (fromFloat.getWidth() > toFloat.getWidth())
      return arith::TruncFOp::create(b, loc, toType, value);
    // Same width, different formats (f16 <-> bf16): go through f32.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    return arith::TruncFOp::create(b, loc, toType, wide);
  }
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

Value createEmptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value createEmptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                        Type elemType) {
  return tensor::EmptyOp::create(b, loc, shape, elemType);
}

Value createFilledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                         Value value) {
  Value empty = createEmptyTensor(b, loc, type);
  return linalg::FillOp::create(b, loc, ValueRange{value}, ValueRange{empty})
      .getResult(0);
}

Value createFilledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                         double value) {
  Value scalar = createScalarConstant(b, loc, type.getElementType(), value);
  return createFilledTensor(b, loc, type, scalar);
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

bool isBroadcastableTo(ArrayRef<int64_t> operandShape,
                       ArrayRef<int64_t> resultShape) {
  if (operandShape.size() > resultShape.size())
    return false;
  size_t offset = resultShape.size() - operandShape.size();
  for (size_t i = 0; i < operandShape.size(); ++i) {
    int64_t dim = operandShape[i];
    int64_t res = resultShape[offset + i];
    // Symbolic dims: kiln-symbolic-shapes proved a `?` operand dim equal to
    // the result's `?` (a `?` broadcasts only against 1 or itself).
    if (ShapedType::isDynamic(dim))
      if (ShapedType::isDynamic(res))
        continue;
    if (ShapedType::isDynamic(dim) || (ShapedType::isDynamic(res) && dim != 1))
      return false;
    if (dim != res && dim != 1)
      return false;
  }
  return true;
}

AffineMap getBroadcastIndexingMap(MLIRContext *ctx,
                                  ArrayRef<int64_t> operandShape,
                                  ArrayRef<int64_t> resultShape) {
  unsigned rank = resultShape.size();
  unsigned offset = rank - operandShape.size();
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i < operandShape.size(); ++i) {
    if (operandShape[i] == 1 && resultShape[offset + i] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(offset + i, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

SmallVector<utils::IteratorType> getParallelIterators(int64_t rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

Value createEmptyTensorLike(OpBuilder &b, Location loc,
                            RankedTensorType resultType, ValueRange sources) {
  if (resultType.hasStaticShape())
    return createEmptyTensor(b, loc, resultType);
  int64_t rank = resultType.getRank();
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < rank; ++i) {
    if (!resultType.isDynamicDim(i))
      continue;
    Value size;
    for (Value source : sources) {
      auto type = dyn_cast<RankedTensorType>(source.getType());
      int64_t j = type ? i - (rank - type.getRank()) : -1;
      if (type && j >= 0 && type.isDynamicDim(j)) {
        size = tensor::DimOp::create(b, loc, source, j);
        break;
      }
    }
    if (!size)
      return nullptr;
    sizes.push_back(size);
  }
  return tensor::EmptyOp::create(b, loc, resultType, sizes);
}

/// `e` (constants and symbols, +, *, floordiv, ceildiv, mod) with arith ops;
/// `symbol(i)` gives symbol i's value. Null for a form it cannot build.
static Value buildSymbolExpr(OpBuilder &b, Location loc, AffineExpr e,
                             function_ref<Value(unsigned)> symbol) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return arith::ConstantIndexOp::create(b, loc, c.getValue());
  if (auto s = dyn_cast<AffineSymbolExpr>(e))
    return symbol(s.getPosition());
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return nullptr;
  Value l = buildSymbolExpr(b, loc, bin.getLHS(), symbol);
  Value r = buildSymbolExpr(b, loc, bin.getRHS(), symbol);
  if (!l || !r)
    return nullptr;
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return arith::AddIOp::create(b, loc, l, r);
  case AffineExprKind::Mul:
    return arith::MulIOp::create(b, loc, l, r);
  case AffineExprKind::FloorDiv:
    return arith::FloorDivSIOp::create(b, loc, l, r);
  case AffineExprKind::CeilDiv:
    return arith::CeilDivSIOp::create(b, loc, l, r);
  case AffineExprKind::Mod:
    return arith::RemSIOp::create(b, loc, l, r);
  default:
    return nullptr;
  }
}

Value createEmptyTensorFromSymbols(OpBuilder &b, Location loc, Operation *op,
                                   RankedTensorType resultType) {
  auto attr = op->getAttrOfType<AffineMapAttr>("kiln.result_dims");
  auto func = op->getParentOfType<FunctionOpInterface>();
  if (!attr || !func ||
      attr.getValue().getNumResults() !=
          static_cast<unsigned>(resultType.getRank()))
    return nullptr;
  Block &entry = func.getFunctionBody().front();
  DenseMap<unsigned, Value> cache;
  bool missing = false;
  auto symbol = [&](unsigned id) -> Value {
    if (Value v = cache.lookup(id))
      return v;
    // The driver moves the arguments' `kiln.dims` to the function's
    // `kiln.input_dims` (one array per input) after the graph passes.
    auto inputDims = func->getAttrOfType<ArrayAttr>("kiln.input_dims");
    for (BlockArgument arg : entry.getArguments()) {
      unsigned i = arg.getArgNumber();
      auto dims =
          inputDims && i < inputDims.size()
              ? dyn_cast<DenseI64ArrayAttr>(inputDims[i])
              : func.getArgAttrOfType<DenseI64ArrayAttr>(i, "kiln.dims");
      if (!dims)
        continue;
      for (auto [axis, d] : llvm::enumerate(dims.asArrayRef()))
        if (d == -static_cast<int64_t>(id) - 1) {
          Value v = tensor::DimOp::create(b, loc, arg, axis);
          cache[id] = v;
          return v;
        }
    }
    missing = true;
    return arith::ConstantIndexOp::create(b, loc, 0);
  };
  SmallVector<Value> sizes;
  for (auto [i, e] : llvm::enumerate(attr.getValue().getResults())) {
    if (!resultType.isDynamicDim(i))
      continue;
    Value size = buildSymbolExpr(b, loc, e, symbol);
    if (!size || missing)
      return nullptr;
    sizes.push_back(size);
  }
  return tensor::EmptyOp::create(b, loc, resultType, sizes);
}

Value createElementwiseGeneric(
    OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> bodyBuilder) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> resultShape = resultType.getShape();
  SmallVector<AffineMap> maps;
  for (Value input : inputs) {
    auto inputType = dyn_cast<RankedTensorType>(input.getType());
    if (!inputType || !isBroadcastableTo(inputType.getShape(), resultShape))
      return nullptr;
    maps.push_back(getBroadcastIndexingMap(ctx, inputType.getShape(),
                                           resultShape));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(resultShape.size(), ctx));
  Value empty = createEmptyTensorLike(b, loc, resultType, inputs);
  if (!empty)
    return nullptr;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs, ValueRange{empty}, maps,
      getParallelIterators(resultShape.size()),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result = bodyBuilder(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, result);
      });
  return generic.getResult(0);
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

ElementsAttr convertElementsAttrToSignless(ElementsAttr attr) {
  if (!attr)
    return nullptr;
  auto shaped = cast<ShapedType>(attr.getType());
  Type signlessElem = toSignless(shaped.getElementType());
  if (signlessElem == shaped.getElementType())
    return attr;
  ShapedType newType = shaped.clone(signlessElem);
  Type elem = shaped.getElementType();
  if (kiln::onnx::isStorageOnlyType(elem)) {
    // One i8 each: signed integers sign-extended, unsigned ones zero-extended,
    // floats their code (what the importer writes into resources too).
    if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
      SmallVector<APInt> values;
      if (isa<IntegerType>(elem)) {
        bool isSigned = !elem.isUnsignedInteger();
        for (APInt v : dense.getValues<APInt>())
          values.push_back(isSigned ? v.sext(8) : v.zext(8));
      } else {
        for (APFloat v : dense.getValues<APFloat>())
          values.push_back(v.bitcastToAPInt().zextOrTrunc(8));
      }
      return DenseElementsAttr::get(newType, values);
    }
  }
  if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    return dense.bitcast(signlessElem);
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr))
    return DenseResourceElementsAttr::get(newType, resource.getRawHandle());
  return nullptr;
}

std::optional<SmallVector<int64_t>> readConstantInts(Value value) {
  return kiln::onnx::getConstantIntValues(value);
}

std::optional<SmallVector<double>> readConstantFloats(Value value) {
  return kiln::onnx::getConstantFloatValues(value);
}

std::optional<double> readConstantScalar(Value value) {
  ElementsAttr attr = kiln::onnx::getConstantAttr(value);
  if (!attr)
    return std::nullopt;
  Type elemType = cast<ShapedType>(attr.getType()).getElementType();
  if (isa<FloatType>(elemType)) {
    auto values = kiln::onnx::getFloatValues(attr);
    if (!values || values->empty())
      return std::nullopt;
    for (double v : *values)
      if (v != (*values)[0] && !(std::isnan(v) && std::isnan((*values)[0])))
        return std::nullopt;
    return (*values)[0];
  }
  if (isa<IntegerType>(elemType)) {
    auto values = kiln::onnx::getIntValues(attr);
    if (!values || values->empty())
      return std::nullopt;
    for (int64_t v : *values)
      if (v != (*values)[0])
        return std::nullopt;
    return static_cast<double>((*values)[0]);
  }
  return std::nullopt;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

RankedTensorType getStaticTensorType(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return nullptr;
  return type;
}

RankedTensorType getConvertedRankedResultType(const TypeConverter *converter,
                                              Operation *op, unsigned i) {
  if (i >= op->getNumResults())
    return nullptr;
  Type converted = converter
                       ? converter->convertType(op->getResult(i).getType())
                       : toSignless(op->getResult(i).getType());
  return dyn_cast_or_null<RankedTensorType>(converted);
}

RankedTensorType getConvertedResultType(const TypeConverter *converter,
                                        Operation *op, unsigned i) {
  if (i >= op->getNumResults())
    return nullptr;
  Type converted = converter
                       ? converter->convertType(op->getResult(i).getType())
                       : toSignless(op->getResult(i).getType());
  auto type = dyn_cast_or_null<RankedTensorType>(converted);
  if (!type || !type.hasStaticShape())
    return nullptr;
  return type;
}


//===----------------------------------------------------------------------===//
// Layout helpers (Linear, Convolution, Pooling, DataMovement)
//===----------------------------------------------------------------------===//

ElementsAttr transposeElementsAttr(ElementsAttr attr, ArrayRef<int64_t> perm,
                                   ArrayRef<int64_t> shape) {
  if (!attr)
    return nullptr;
  auto attrType = dyn_cast<RankedTensorType>(attr.getType());
  if (!attrType || !attrType.hasStaticShape())
    return nullptr;
  SmallVector<int64_t> srcShape(shape.empty() ? attrType.getShape() : shape);
  // No elements: nothing to move at compile time (and an empty constant would
  // become an empty global, which the LLVM translation divides by).
  if (srcShape.size() != perm.size() || attrType.getNumElements() == 0 ||
      ShapedType::getNumElements(srcShape) != attrType.getNumElements())
    return nullptr;
  SmallVector<int64_t> dstShape = applyPermutation(srcShape, perm);
  Type elemType = attrType.getElementType();
  auto dstType = RankedTensorType::get(dstShape, elemType);
  int64_t rank = srcShape.size();
  int64_t numElements = attrType.getNumElements();

  // Strides of the source, visited in destination order.
  SmallVector<int64_t> srcStrides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i)
    srcStrides[i] = srcStrides[i + 1] * srcShape[i + 1];
  SmallVector<int64_t> permStrides = applyPermutation(srcStrides, perm);
  // Calls `visit(dstIndex, srcIndex)` for every element in destination order.
  auto forEach = [&](auto visit) {
    SmallVector<int64_t> counter(rank, 0);
    int64_t src = 0;
    for (int64_t dst = 0; dst < numElements; ++dst) {
      visit(dst, src);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++counter[d] < dstShape[d]) {
          src += permStrides[d];
          break;
        }
        src -= permStrides[d] * (dstShape[d] - 1);
        counter[d] = 0;
      }
    }
  };

  if (!elemType.isIntOrFloat())
    return nullptr;
  unsigned bits = elemType.getIntOrFloatBitWidth();
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (dense.isSplat())
      return DenseElementsAttr::get(dstType, dense.getSplatValue<Attribute>());
    if (bits == 1 || bits % 8 != 0) {
      SmallVector<Attribute> values(dense.getValues<Attribute>());
      SmallVector<Attribute> permuted(numElements);
      forEach([&](int64_t dst, int64_t src) { permuted[dst] = values[src]; });
      return DenseElementsAttr::get(dstType, permuted);
    }
  }
  ArrayRef<char> data;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    data = dense.getRawData();
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return nullptr;
    data = blob->getData();
  } else {
    return nullptr;
  }
  // Resource blobs store bool as one byte per element.
  int64_t bytes = std::max<int64_t>(1, (bits + 7) / 8);
  if (static_cast<int64_t>(data.size()) != numElements * bytes)
    return nullptr;
  AsmResourceBlob out =
      HeapAsmResourceBlob::allocate(numElements * bytes, /*align=*/64);
  MutableArrayRef<char> outData = out.getMutableData();
  forEach([&](int64_t dst, int64_t src) {
    std::memcpy(outData.data() + dst * bytes, data.data() + src * bytes,
                bytes);
  });
  return DenseResourceElementsAttr::get(dstType, "kiln_transposed",
                                        std::move(out));
}

ElementsAttr reshapeElementsAttr(ElementsAttr attr, ArrayRef<int64_t> shape) {
  if (!attr)
    return nullptr;
  auto attrType = dyn_cast<RankedTensorType>(attr.getType());
  if (!attrType || !attrType.hasStaticShape() ||
      ShapedType::getNumElements(shape) != attrType.getNumElements())
    return nullptr;
  auto newType = RankedTensorType::get(shape, attrType.getElementType());
  if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    return dense.reshape(newType);
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr))
    return DenseResourceElementsAttr::get(newType, resource.getRawHandle());
  return nullptr;
}

Value createTranspose(OpBuilder &b, Location loc, Value value,
                      ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape = applyPermutation(type.getShape(), perm);
  SmallVector<Value> sizes; // symbolic dims: from the permuted input dims
  for (int64_t p : perm)
    if (type.isDynamicDim(p))
      sizes.push_back(tensor::DimOp::create(b, loc, value, p));
  Value init = tensor::EmptyOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), sizes);
  return linalg::TransposeOp::create(b, loc, value, init, perm).getResult()[0];
}

Value createReshape(OpBuilder &b, Location loc, Value value,
                    RankedTensorType type) {
  auto srcType = cast<RankedTensorType>(value.getType());
  if (srcType.getShape() == type.getShape())
    return value;
  ArrayRef<int64_t> src = srcType.getShape(), dst = type.getShape();
  if (src.size() > dst.size())
    if (auto assoc = getReassociationIndicesForCollapse(src, dst))
      return tensor::CollapseShapeOp::create(b, loc, type, value, *assoc);
  if (dst.size() > src.size())
    if (auto assoc = getReassociationIndicesForCollapse(dst, src))
      return tensor::ExpandShapeOp::create(b, loc, type, value, *assoc);
  // General case: through a 1-D tensor (a 0-d one for a single element).
  int64_t n = srcType.getNumElements();
  auto flatType = RankedTensorType::get({n}, srcType.getElementType());
  Value flat = value;
  if (src.size() != 1) {
    SmallVector<ReassociationIndices> all;
    if (!src.empty()) {
      all.emplace_back();
      for (int64_t i = 0, e = src.size(); i < e; ++i)
        all.back().push_back(i);
    }
    flat = tensor::CollapseShapeOp::create(b, loc, flatType, value, all);
  }
  if (dst.size() == 1)
    return flat;
  SmallVector<ReassociationIndices> all;
  if (!dst.empty()) {
    all.emplace_back();
    for (int64_t i = 0, e = dst.size(); i < e; ++i)
      all.back().push_back(i);
  }
  if (dst.empty()) {
    // 0-d from 1-element: collapse the 1-D tensor to 0-d.
    return tensor::CollapseShapeOp::create(b, loc, type, flat, all);
  }
  return tensor::ExpandShapeOp::create(b, loc, type, flat, all);
}

std::string getNodeMessagePrefix(Operation *op) {
  std::string text = "node ";
  if (std::optional<std::string> name = kiln::onnx::getNodeName(op))
    text += "'" + *name + "' ";
  text += "(" + op->getName().stripDialect().str();
  if (std::optional<int64_t> opset = kiln::onnx::getModelOpset(op))
    text += ", opset " + std::to_string(*opset);
  text += "): ";
  return text;
}

std::optional<std::pair<int64_t, int64_t>>
computeWindowPads(StringRef autoPad, int64_t inSize, int64_t kernel,
                  int64_t stride, int64_t dilation, int64_t explicitBegin,
                  int64_t explicitEnd) {
  if (autoPad == "NOTSET")
    return std::make_pair(explicitBegin, explicitEnd);
  if (autoPad == "VALID")
    return std::make_pair<int64_t, int64_t>(0, 0);
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return std::nullopt;
  int64_t outSize = (inSize + stride - 1) / stride;
  int64_t total = std::max<int64_t>(
      0, (outSize - 1) * stride + (kernel - 1) * dilation + 1 - inSize);
  int64_t small = total / 2, large = total - total / 2;
  if (autoPad == "SAME_UPPER")
    return std::make_pair(small, large);
  return std::make_pair(large, small);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

SmallVector<int64_t> getReducedShape(ArrayRef<int64_t> shape,
                                     ArrayRef<bool> reduced, bool keepdims) {
  SmallVector<int64_t> result;
  for (auto [dim, red] : llvm::zip(shape, reduced)) {
    if (!red)
      result.push_back(dim);
    else if (keepdims)
      result.push_back(1);
  }
  return result;
}

Value createReductionGeneric(
    OpBuilder &b, Location loc, Value input, ArrayRef<bool> reduced,
    Type accType, Value init, ValueRange extras,
    function_ref<Value(OpBuilder &, Location, Value, ValueRange, Value)>
        combine) {
  auto inputType = cast<RankedTensorType>(input.getType());
  MLIRContext *ctx = b.getContext();
  unsigned rank = inputType.getRank();
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (unsigned i = 0; i < rank; ++i) {
    if (reduced[i]) {
      iterators.push_back(utils::IteratorType::reduction);
    } else {
      iterators.push_back(utils::IteratorType::parallel);
      outExprs.push_back(getAffineDimExpr(i, ctx));
    }
  }
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
  SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(rank, ctx)};
  for (size_t i = 0; i < extras.size(); ++i)
    maps.push_back(outMap);
  maps.push_back(outMap);
  auto outType = RankedTensorType::get(
      getReducedShape(inputType.getShape(), reduced, /*keepdims=*/false),
      accType);
  Value filled;
  if (outType.hasStaticShape()) {
    filled = createFilledTensor(b, loc, outType, init);
  } else {
    // Symbolic kept dims take their sizes from the input.
    SmallVector<Value> sizes;
    for (unsigned i = 0; i < rank; ++i)
      if (!reduced[i] && inputType.isDynamicDim(i))
        sizes.push_back(tensor::DimOp::create(b, loc, input, i));
    Value empty = tensor::EmptyOp::create(b, loc, outType, sizes);
    filled = linalg::FillOp::create(b, loc, ValueRange{init}, ValueRange{empty})
                 .getResult(0);
  }
  SmallVector<Value> ins{input};
  ins.append(extras.begin(), extras.end());
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{outType}, ins, ValueRange{filled}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value acc = combine(nb, nloc, args.front(),
                            args.drop_front().drop_back(), args.back());
        linalg::YieldOp::create(nb, nloc, acc);
      });
  return generic.getResult(0);
}

Value createMinMaxInit(OpBuilder &b, Location loc, Type elemType, bool isMax,
                       bool isUnsigned) {
  if (auto floatType = dyn_cast<FloatType>(elemType))
    return arith::ConstantOp::create(
        b, loc,
        FloatAttr::get(floatType, APFloat::getInf(floatType.getFloatSemantics(),
                                                  /*Negative=*/isMax)));
  unsigned width = elemType.getIntOrFloatBitWidth();
  APInt value = isUnsigned ? (isMax ? APInt::getMinValue(width)
                                    : APInt::getMaxValue(width))
                           : (isMax ? APInt::getSignedMinValue(width)
                                    : APInt::getSignedMaxValue(width));
  return arith::ConstantOp::create(b, loc, IntegerAttr::get(elemType, value));
}

} // namespace kiln::onnx_to_linalg

namespace kiln::onnx_to_linalg {

Type getAccumulatorType(Type elemType) {
  if (auto f = dyn_cast<FloatType>(elemType); f && f.getWidth() < 32)
    return Float32Type::get(elemType.getContext());
  return elemType;
}

Value narrowProduct(OpBuilder &b, Location loc, Value product,
                    Type elemType) {
  auto type = cast<RankedTensorType>(product.getType());
  if (type.getElementType() == elemType)
    return product;
  return createElementwiseGeneric(
      b, loc, type.clone(elemType), product,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return convertScalar(nb, l, args[0], elemType);
      });
}

} // namespace kiln::onnx_to_linalg
