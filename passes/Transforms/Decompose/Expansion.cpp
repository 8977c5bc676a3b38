//===- Expansion.cpp - Building the ops that replace one onnx op ----------===//

#include "passes/Transforms/Decompose/Expansion.h"

#include "dialects/ONNX/DataTypes.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/Limits.h"
#include "dialects/ONNX/OpBuilding.h"
#include "dialects/ONNX/OpSchemas.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;

namespace kiln::decompose {

//===----------------------------------------------------------------------===//
// Attr
//===----------------------------------------------------------------------===//

Attr Attr::ofInt(StringRef name, int64_t v) {
  Attr a;
  a.kind = Kind::Int;
  a.attrName = name.str();
  a.intValue = v;
  return a;
}

Attr Attr::ofInts(StringRef name, ArrayRef<int64_t> v) {
  Attr a;
  a.kind = Kind::Ints;
  a.attrName = name.str();
  a.intsValue.assign(v.begin(), v.end());
  return a;
}

Attr Attr::ofFloat(StringRef name, float v) {
  Attr a;
  a.kind = Kind::Float;
  a.attrName = name.str();
  a.floatValue = v;
  return a;
}

Attr Attr::ofString(StringRef name, StringRef v) {
  Attr a;
  a.kind = Kind::String;
  a.attrName = name.str();
  a.stringValue = v.str();
  return a;
}

Attr Attr::of(NamedAttribute attr) {
  Attr a;
  a.kind = Kind::Stored;
  a.attrName = attr.getName().str();
  a.stored = attr.getValue();
  // Decoded once, so the accessors can hand out references.
  if (auto v = dyn_cast<IntegerAttr>(a.stored)) {
    a.intValue = v.getValue().getSExtValue();
  } else if (auto v = dyn_cast<FloatAttr>(a.stored)) {
    a.floatValue = static_cast<float>(v.getValueAsDouble());
  } else if (auto v = dyn_cast<StringAttr>(a.stored)) {
    a.stringValue = v.str();
  } else if (auto array = dyn_cast<ArrayAttr>(a.stored)) {
    for (Attribute element : array) {
      if (auto i = dyn_cast<IntegerAttr>(element))
        a.intsValue.push_back(i.getValue().getSExtValue());
      else if (auto f = dyn_cast<FloatAttr>(element))
        a.floatsValue.push_back(static_cast<float>(f.getValueAsDouble()));
      else if (auto str = dyn_cast<StringAttr>(element))
        a.stringsValue.push_back(str.str());
    }
  }
  return a;
}

// The same attribute types the importer gives ONNX attributes.
NamedAttribute Attr::get(MLIRContext *ctx) const {
  Builder b(ctx);
  StringAttr name = b.getStringAttr(attrName);
  switch (kind) {
  case Kind::Int:
    return NamedAttribute(name, b.getI64IntegerAttr(intValue));
  case Kind::Ints:
    return NamedAttribute(name, b.getI64ArrayAttr(intsValue));
  case Kind::Float:
    return NamedAttribute(name, b.getF32FloatAttr(floatValue));
  case Kind::String:
    return NamedAttribute(name, b.getStringAttr(stringValue));
  case Kind::Stored:
    break;
  }
  return NamedAttribute(name, stored);
}

//===----------------------------------------------------------------------===//
// Node
//===----------------------------------------------------------------------===//

Node::Node(Operation *op) : opType(op->getName().stripDialect()) {
  for (NamedAttribute attr : op->getAttrDictionary())
    attrs.push_back(Attr::of(attr));
}

const Attr *findAttr(const Node &node, StringRef name) {
  for (const Attr &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Expansion
//===----------------------------------------------------------------------===//

Expansion::Expansion(Operation *op, OpBuilder &builder, Value noValue)
    : node(op), opset(kiln::onnx::getModelOpset(op).value_or(
                    kiln::onnx::getNewestKnownOpset())),
      ctx(*this), op(op), builder(builder), noValue(noValue),
      outputValues(op->getNumResults(), Value()) {}

V Expansion::input(int i) const {
  if (i >= static_cast<int>(op->getNumOperands()))
    return V();
  Value v = op->getOperand(i);
  return isa<NoneType>(v.getType()) ? V() : V(v);
}

Output Expansion::output(int i) const {
  Output out;
  out.index = i;
  out.present = i < static_cast<int>(op->getNumResults()) &&
                !isa<NoneType>(op->getResult(i).getType());
  return out;
}

int64_t Expansion::getInt(StringRef name, int64_t dflt) const {
  const Attr *a = findAttr(node, name);
  return a ? a->i() : dflt;
}

float Expansion::getFloat(StringRef name, float dflt) const {
  const Attr *a = findAttr(node, name);
  return a ? a->f() : dflt;
}

std::string Expansion::getString(StringRef name, StringRef dflt) const {
  const Attr *a = findAttr(node, name);
  return a ? a->s() : dflt.str();
}

std::optional<SmallVector<int64_t>> Expansion::constantInts(V value) const {
  if (value.empty())
    return std::nullopt;
  return kiln::onnx::getConstantIntegralValues(value);
}

InFlightDiagnostic Expansion::error() {
  hasFailed = true;
  return kiln::onnx::emitNodeError(op);
}

LogicalResult Expansion::checkTable(int64_t elements, StringRef what) {
  int64_t max = kiln::getCompileLimits().maxTableElements;
  if (elements <= max)
    return success();
  error() << what << " would be a table of " << elements
          << " elements, over kiln's limit of " << max
          << " elements per generated table (--max-table-elements)";
  return failure();
}

V Expansion::add(StringRef opType, ArrayRef<V> inputs, ArrayRef<Attr> attrs,
                 Output result) {
  if (hasFailed)
    return V();
  MLIRContext *context = op->getContext();
  const kiln::onnx::OpSchemaInfo *schema = kiln::onnx::lookupOpSchema(opType);
  if (!schema) {
    error() << "internal error: the expansion uses the unknown op '" << opType << "'";
    return V();
  }
  // Absent inputs, and the trailing optional ones, are the function's onnx.NoValue.
  SmallVector<Value> operands;
  for (const V &in : inputs)
    operands.push_back(in.empty() ? noValue : in.get());
  if (!schema->variadicInputs)
    while (static_cast<int64_t>(operands.size()) < schema->maxInputs)
      operands.push_back(noValue);
  int64_t numResults = schema->variadicOutputs ? std::max<int64_t>(1, schema->minOutputs)
                                               : schema->maxOutputs;
  OperationState state(op->getLoc(), "onnx." + opType.str());
  state.addOperands(operands);
  state.addTypes(SmallVector<Type>(numResults, NoneType::get(context)));
  for (const Attr &a : attrs)
    state.attributes.push_back(a.get(context));
  FailureOr<SmallVector<Value>> results = kiln::onnx::buildONNXOp(
      builder, state, [](Operation *created) { return kiln::onnx::emitNodeError(created); },
      [](unsigned i) { return i == 0; });
  if (::mlir::failed(results)) {
    hasFailed = true;
    return V();
  }
  Value value = (*results)[0];
  if (result.present)
    outputValues[result.index] = value;
  return value;
}

V Expansion::i64s(ArrayRef<int64_t> values) {
  auto t = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                 IntegerType::get(ctx.getContext(), 64));
  return ctx.addConstant(DenseElementsAttr::get(t, values), "ints");
}

V Expansion::scalar(Type elemType, double value) {
  auto t = RankedTensorType::get({}, elemType);
  Attribute v;
  if (auto f = dyn_cast<FloatType>(elemType))
    v = FloatAttr::get(f, value);
  else
    v = IntegerAttr::get(elemType, static_cast<int64_t>(value));
  return ctx.addConstant(DenseElementsAttr::get(t, ArrayRef<Attribute>{v}), "scalar");
}

V Expansion::reduce(StringRef opType, V x, ArrayRef<int64_t> axes, bool keepdims,
                    Output result) {
  SmallVector<Attr> attrs = {intAttr("keepdims", keepdims)};
  if (axes.empty())
    return add(opType, {x}, attrs, result);
  return add(opType, {x, i64s(axes)}, attrs, result);
}

bool Expansion::complete() const {
  for (int i = 0, n = op->getNumResults(); i < n; ++i)
    if (output(i).present && !outputValues[i])
      return false;
  return true;
}

V Expansion::Context::addConstant(DenseElementsAttr value, StringRef) {
  OperationState state(e.op->getLoc(), "onnx.Constant");
  state.addAttribute("value", value);
  state.addTypes(value.getType());
  return e.builder.create(state)->getResult(0);
}

MLIRContext *Expansion::Context::getContext() const { return e.op->getContext(); }

//===----------------------------------------------------------------------===//
// Shared helpers and the table
//===----------------------------------------------------------------------===//

int64_t onnxFloatType(Type t) {
  return isa<FloatType>(t) ? kiln::onnx::getOnnxDataType(t) : 0;
}

V iota(Expansion &e, int64_t n, int64_t axis, int64_t rank) {
  if (failed(e.checkTable(n, "an index table")))
    return V();
  SmallVector<int64_t> values, shape(rank, 1);
  for (int64_t i = 0; i < n; ++i)
    values.push_back(i);
  shape[axis] = n;
  auto t = RankedTensorType::get(shape, IntegerType::get(e.ctx.getContext(), 64));
  return e.ctx.addConstant(DenseElementsAttr::get(t, ArrayRef<int64_t>(values)), "iota");
}

ExpandFn lookupExpansion(StringRef opType) {
  return llvm::StringSwitch<ExpandFn>(opType)
      .Case("NegativeLogLikelihoodLoss", expandNegativeLogLikelihoodLoss)
      .Case("SoftmaxCrossEntropyLoss", expandSoftmaxCrossEntropyLoss)
      .Case("RMSNormalization", expandRMSNormalization)
      .Case("Attention", expandAttention)
      .Case("RNN", expandRNN)
      .Case("ConvTranspose", expandConvTranspose)
      .Case("Hardmax", expandHardmax)
      .Case("OneHot", expandOneHot)
      .Case("LpNormalization", expandLpNormalization)
      .Case("LpPool", expandLpPool)
      .Case("CenterCropPad", expandCenterCropPad)
      .Case("DequantizeLinear", expandDequantizeLinear)
      .Case("QuantizeLinear", expandQuantizeLinear)
      .Case("MatMulInteger", expandMatMulInteger)
      .Case("QLinearMatMul", expandQLinearMatMul)
      .Case("ConvInteger", expandConvInteger)
      .Case("QLinearConv", expandQLinearConv)
      .Case("DynamicQuantizeLinear", expandDynamicQuantizeLinear)
      .Case("Swish", expandSwish)
      .Case("EyeLike", expandEyeLike)
      .Cases({"HannWindow", "HammingWindow", "BlackmanWindow"}, expandWindow)
      .Case("GroupNormalization", expandGroupNormalization)
      .Case("GRU", expandGRU)
      .Case("LSTM", expandLSTM)
      .Case("Einsum", expandEinsum)
      .Case("Shrink", expandShrink)
      .Case("MeanVarianceNormalization", expandMeanVarianceNormalization)
      .Case("LRN", expandLRN)
      .Case("DFT", expandDFT)
      .Case("STFT", expandSTFT)
      .Case("AffineGrid", expandAffineGrid)
      .Case("ReverseSequence", expandReverseSequence)
      .Case("Col2Im", expandCol2Im)
      .Case("BatchNormalization", expandBatchNormalizationTraining)
      .Case("MaxUnpool", expandMaxUnpool)
      .Default(nullptr);
}

} // namespace kiln::decompose
