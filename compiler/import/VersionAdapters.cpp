//===- VersionAdapters.cpp - Old ONNX op versions -> newest form ----------===//
//
// Two tables drive the rewriting of a node to its op's newest version:
//   - kAdapters: (op, versions [from, to)) -> a function that rewrites the node into the form
//     of version `to`;
//   - kTypeOnlySteps: (op, version) pairs whose form equals the next version's (the step
//     only widened type constraints, made an input optional, or added an attribute whose
//     default keeps the old meaning).
// adaptToNewestVersion walks the op's version history from the version in effect to the
// newest, taking an adapter where one applies and a type-only step otherwise.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/VersionAdapters.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APSInt.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace kiln::import;

AdapterContext::~AdapterContext() = default;

//===----------------------------------------------------------------------===//
// NodeProto helpers
//===----------------------------------------------------------------------===//

static const onnx::AttributeProto *findAttr(const onnx::NodeProto &node,
                                            llvm::StringRef name) {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

static void removeAttr(onnx::NodeProto &node, llvm::StringRef name) {
  auto *attrs = node.mutable_attribute();
  for (int i = attrs->size() - 1; i >= 0; --i)
    if (attrs->Get(i).name() == name)
      attrs->DeleteSubrange(i, 1);
}

static void setStringAttr(onnx::NodeProto &node, llvm::StringRef name,
                          llvm::StringRef value) {
  removeAttr(node, name);
  onnx::AttributeProto *attr = node.add_attribute();
  attr->set_name(name.str());
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s(value.str());
}

static void setIntAttr(onnx::NodeProto &node, llvm::StringRef name, int64_t value) {
  removeAttr(node, name);
  onnx::AttributeProto *attr = node.add_attribute();
  attr->set_name(name.str());
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

/// Sets input `index`, padding skipped optional inputs with "".
static void setInput(onnx::NodeProto &node, int index, llvm::StringRef name) {
  while (node.input_size() <= index)
    node.add_input("");
  node.set_input(index, name.str());
}

static llvm::StringRef inputName(const onnx::NodeProto &node, int index) {
  return index < node.input_size() ? llvm::StringRef(node.input(index)) : "";
}

static bool hasOutput(const onnx::NodeProto &node, int index) {
  return index < node.output_size() && !node.output(index).empty();
}

/// A 1-D i64 constant input, e.g. axes or pads that used to be attributes.
static std::string addI64Constant(AdapterContext &ctx, llvm::ArrayRef<int64_t> values,
                                  llvm::StringRef hint) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    IntegerType::get(ctx.getContext(), 64));
  return ctx.addConstant(DenseElementsAttr::get(type, values), hint);
}

/// A scalar constant of element type `elementType` holding `value` (truncated toward zero for
/// an integer type); null attr when the type cannot hold a number or an integer type cannot
/// hold this one (NaN, infinite, out of range: a C++ cast of those is undefined).
static DenseElementsAttr scalarOf(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    bool losesInfo = false;
    llvm::APFloat f(value);
    f.convert(floatType.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
              &losesInfo);
    return DenseElementsAttr::get(type, f);
  }
  if (auto intType = dyn_cast<IntegerType>(elementType)) {
    // i1 (bool) holds 0 and 1; signless integers are ONNX's signed ones.
    llvm::APSInt i(intType.getWidth(),
                   /*isUnsigned=*/intType.isUnsigned() || intType.getWidth() == 1);
    bool exact = false;
    if (llvm::APFloat(value).convertToInteger(i, llvm::APFloat::rmTowardZero, &exact) ==
        llvm::APFloat::opInvalidOp)
      return {};
    return DenseElementsAttr::get(type, llvm::APInt(i));
  }
  return {};
}

/// The element type of the node's input `index` (null if unknown or not a tensor).
static Type inputElementType(const onnx::NodeProto &node, int index, AdapterContext &ctx) {
  if (auto shaped = dyn_cast_or_null<ShapedType>(ctx.getValueType(inputName(node, index))))
    return shaped.getElementType();
  return {};
}

/// Moves INTS attribute `attrName` into i64 input `index` (when present).
static void intsAttrToInput(onnx::NodeProto &node, llvm::StringRef attrName, int index,
                            AdapterContext &ctx) {
  const onnx::AttributeProto *attr = findAttr(node, attrName);
  if (!attr)
    return;
  llvm::SmallVector<int64_t> values(attr->ints().begin(), attr->ints().end());
  std::string name = addI64Constant(ctx, values, attrName);
  removeAttr(node, attrName);
  setInput(node, index, name);
}

//===----------------------------------------------------------------------===//
// Adapters
//===----------------------------------------------------------------------===//

namespace {
using AdapterFn = LogicalResult (*)(onnx::NodeProto &node, int64_t version,
                                    AdapterContext &ctx);

struct VersionAdapter {
  const char *opType;
  int64_t from; ///< first schema version handled
  int64_t to;   ///< the version whose form the node has afterwards; handles [from, to)
  AdapterFn fn;
  const char *what;
};
} // namespace

/// Opset < 6: `consumed_inputs` (a legacy in-place hint) was removed without other change.
static LogicalResult dropConsumedInputs(onnx::NodeProto &node, int64_t, AdapterContext &) {
  removeAttr(node, "consumed_inputs");
  return success();
}

/// RNN / GRU / LSTM before 7: `output_sequence` (whether Y is produced; the node's outputs
/// say so too) was removed; GRU-3 added `linear_before_reset` with the old behavior as its
/// default.
static LogicalResult dropOutputSequence(onnx::NodeProto &node, int64_t, AdapterContext &) {
  removeAttr(node, "output_sequence");
  return success();
}

/// Opset < 7 binary ops: `broadcast`/`axis` (limited broadcasting, B aligned at `axis`)
/// became numpy broadcasting. Same meaning when B aligns with A's trailing dims.
static LogicalResult legacyBroadcast(onnx::NodeProto &node, int64_t, AdapterContext &ctx) {
  removeAttr(node, "consumed_inputs");
  const onnx::AttributeProto *broadcast = findAttr(node, "broadcast");
  const onnx::AttributeProto *axis = findAttr(node, "axis");
  if (broadcast && broadcast->i() != 0 && axis) {
    auto a = dyn_cast_or_null<ShapedType>(ctx.getValueType(inputName(node, 0)));
    auto b = dyn_cast_or_null<ShapedType>(ctx.getValueType(inputName(node, 1)));
    if (!a || !b || !a.hasRank() || !b.hasRank())
      return ctx.emitNodeError() << "legacy broadcast with 'axis' needs ranked inputs";
    int64_t ax = axis->i() < 0 ? axis->i() + a.getRank() : axis->i();
    if (ax + b.getRank() != a.getRank())
      return ctx.emitNodeError()
             << "legacy broadcast with axis=" << axis->i() << " of a rank-" << b.getRank()
             << " B onto a rank-" << a.getRank()
             << " A is not numpy broadcasting; re-export at opset >= 7";
  }
  removeAttr(node, "broadcast");
  removeAttr(node, "axis");
  return success();
}

/// Gemm < 7: `broadcast` removed (C is always unidirectionally broadcast now, a superset).
static LogicalResult gemmLegacy(onnx::NodeProto &node, int64_t, AdapterContext &) {
  removeAttr(node, "broadcast");
  return success();
}

/// BatchNormalization < 14: `consumed_inputs` (< 6), `is_test` (< 7), `spatial` (< 9;
/// only spatial=1 keeps the meaning) removed; the training-mode outputs changed (< 14).
static LogicalResult batchNormLegacy(onnx::NodeProto &node, int64_t version,
                                     AdapterContext &ctx) {
  removeAttr(node, "consumed_inputs");
  removeAttr(node, "is_test");
  if (const onnx::AttributeProto *spatial = findAttr(node, "spatial")) {
    if (spatial->i() != 1)
      return ctx.emitNodeError()
             << "opset-" << version
             << " BatchNormalization with spatial=0 is not supported; re-export at "
                "opset >= 9";
    removeAttr(node, "spatial");
  }
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      return ctx.emitNodeError()
             << "opset-" << version
             << " BatchNormalization training outputs (mean, var, saved_mean, saved_var) "
                "are not supported";
  while (node.output_size() > 1)
    node.mutable_output()->RemoveLast();
  return success();
}

/// Dropout < 12: `consumed_inputs`/`is_test` removed, the mask output's type changed to
/// bool (10), `ratio` became an input (12).
static LogicalResult dropoutLegacy(onnx::NodeProto &node, int64_t version,
                                   AdapterContext &ctx) {
  removeAttr(node, "consumed_inputs");
  removeAttr(node, "is_test");
  if (version < 10 && hasOutput(node, 1))
    return ctx.emitNodeError() << "the mask output of opset-" << version
                               << " Dropout (not bool) is not supported; re-export at "
                                  "opset >= 10";
  if (const onnx::AttributeProto *ratio = findAttr(node, "ratio")) {
    auto type = RankedTensorType::get({}, Float32Type::get(ctx.getContext()));
    std::string name =
        ctx.addConstant(DenseElementsAttr::get(type, ratio->f()), "ratio");
    removeAttr(node, "ratio");
    setInput(node, 1, name);
  }
  return success();
}

/// Clip < 11: `min`/`max` attributes became optional inputs of the input's type.
static LogicalResult clipLegacy(onnx::NodeProto &node, int64_t, AdapterContext &ctx) {
  removeAttr(node, "consumed_inputs");
  Type elementType = inputElementType(node, 0, ctx);
  for (auto [attrName, index] : {std::pair<const char *, int>{"min", 1}, {"max", 2}}) {
    const onnx::AttributeProto *attr = findAttr(node, attrName);
    if (!attr)
      continue;
    DenseElementsAttr value = elementType ? scalarOf(elementType, attr->f()) : nullptr;
    if (!value && elementType)
      return ctx.emitNodeError() << "Clip's '" << attrName << "' attribute (" << attr->f()
                                 << ") does not fit the input's type " << elementType;
    if (!value)
      return ctx.emitNodeError() << "cannot turn Clip's '" << attrName
                                 << "' attribute into an input: unknown input type";
    std::string name = ctx.addConstant(value, attrName);
    removeAttr(node, attrName);
    setInput(node, index, name);
  }
  return success();
}

/// Reshape < 5: the `shape` attribute became an input.
static LogicalResult reshapeLegacy(onnx::NodeProto &node, int64_t, AdapterContext &ctx) {
  removeAttr(node, "consumed_inputs");
  if (!findAttr(node, "shape"))
    return ctx.emitNodeError() << "opset-1 Reshape has no 'shape' attribute";
  intsAttrToInput(node, "shape", 1, ctx);
  return success();
}

/// Squeeze/Unsqueeze < 13, ReduceSum < 13, other Reduce* < 18: the `axes` attribute became
/// an optional input (absent axes keep their meaning: reduce all / squeeze all 1-dims).
static LogicalResult axesToInput(onnx::NodeProto &node, int64_t, AdapterContext &ctx) {
  if (node.op_type() == "Unsqueeze" && !findAttr(node, "axes"))
    return ctx.emitNodeError() << "Unsqueeze has no 'axes' attribute";
  intsAttrToInput(node, "axes", 1, ctx);
  return success();
}

/// Split < 13: the `split` attribute became an input.
static LogicalResult splitLegacy(onnx::NodeProto &node, int64_t, AdapterContext &ctx) {
  intsAttrToInput(node, "split", 1, ctx);
  return success();
}

/// Split 13 -> 18: without a `split` input, the newest form needs `num_outputs`.
static LogicalResult split13(onnx::NodeProto &node, int64_t, AdapterContext &) {
  if (inputName(node, 1).empty() && !findAttr(node, "num_outputs"))
    setIntAttr(node, "num_outputs", node.output_size());
  return success();
}

/// Pad 2..10: `pads` and `value` attributes became inputs (`value` of the data's type).
static LogicalResult padLegacy(onnx::NodeProto &node, int64_t, AdapterContext &ctx) {
  if (!findAttr(node, "pads"))
    return ctx.emitNodeError() << "Pad has no 'pads' attribute";
  intsAttrToInput(node, "pads", 1, ctx);
  if (const onnx::AttributeProto *value = findAttr(node, "value")) {
    Type elementType = inputElementType(node, 0, ctx);
    DenseElementsAttr scalar = elementType ? scalarOf(elementType, value->f()) : nullptr;
    if (!scalar && elementType)
      return ctx.emitNodeError() << "Pad's 'value' attribute (" << value->f()
                                 << ") does not fit the input's type " << elementType;
    if (!scalar)
      return ctx.emitNodeError()
             << "cannot turn Pad's 'value' attribute into an input: unknown input type";
    std::string name = ctx.addConstant(scalar, "constant_value");
    removeAttr(node, "value");
    setInput(node, 2, name);
  }
  return success();
}

/// Slice < 10: `starts`/`ends`/`axes` attributes became inputs.
static LogicalResult sliceLegacy(onnx::NodeProto &node, int64_t, AdapterContext &ctx) {
  if (!findAttr(node, "starts") || !findAttr(node, "ends"))
    return ctx.emitNodeError() << "Slice needs 'starts' and 'ends' attributes";
  intsAttrToInput(node, "starts", 1, ctx);
  intsAttrToInput(node, "ends", 2, ctx);
  intsAttrToInput(node, "axes", 3, ctx);
  return success();
}

/// TopK < 10: the `k` attribute became the input K (1-D, one element).
static LogicalResult topkLegacy(onnx::NodeProto &node, int64_t, AdapterContext &ctx) {
  const onnx::AttributeProto *k = findAttr(node, "k");
  if (!k)
    return ctx.emitNodeError() << "TopK has no 'k' attribute";
  std::string name = addI64Constant(ctx, {k->i()}, "K");
  removeAttr(node, "k");
  setInput(node, 1, name);
  return success();
}

/// Concat < 4: `axis` was optional with default 1; it is required now.
static LogicalResult concatLegacy(onnx::NodeProto &node, int64_t, AdapterContext &) {
  if (!findAttr(node, "axis"))
    setIntAttr(node, "axis", 1);
  return success();
}

/// Softmax/LogSoftmax/Hardmax < 13: the input was coerced to 2-D at `axis` (default 1) and
/// normalized over the flattened trailing dims; now over `axis` (default -1) alone. Both
/// agree when every dim after `axis` is 1 (in particular when axis is the last dim).
static LogicalResult softmaxLegacy(onnx::NodeProto &node, int64_t version,
                                   AdapterContext &ctx) {
  auto input = dyn_cast_or_null<RankedTensorType>(ctx.getValueType(inputName(node, 0)));
  if (!input)
    return ctx.emitNodeError() << "opset-" << version << " " << node.op_type()
                               << " needs a ranked input";
  int64_t rank = input.getRank();
  const onnx::AttributeProto *axisAttr = findAttr(node, "axis");
  int64_t axis = axisAttr ? axisAttr->i() : 1;
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (rank == 0)
    normalized = 0;
  else if (normalized < 0 || normalized >= rank)
    return ctx.emitNodeError() << "axis " << axis << " is out of range for rank " << rank;
  bool same = true;
  for (int64_t d = normalized + 1; d < rank; ++d)
    same &= input.getDimSize(d) == 1;
  if (!same)
    return ctx.emitNodeError()
           << "opset-" << version << " " << node.op_type() << " semantics on rank>2 with "
           << "axis != -1 not supported yet (axis " << axis << ", input rank " << rank
           << "); re-export at opset >= 13";
  setIntAttr(node, "axis", rank == 0 ? -1 : normalized);
  return success();
}

/// GridSample < 20: modes renamed (bilinear -> linear, bicubic -> cubic).
static LogicalResult gridSampleLegacy(onnx::NodeProto &node, int64_t, AdapterContext &) {
  if (const onnx::AttributeProto *mode = findAttr(node, "mode")) {
    if (mode->s() == "bilinear")
      setStringAttr(node, "mode", "linear");
    else if (mode->s() == "bicubic")
      setStringAttr(node, "mode", "cubic");
  }
  return success();
}

/// RoiAlign < 16: the coordinate mode was implicitly "output_half_pixel"; the new default is
/// "half_pixel".
static LogicalResult roiAlignLegacy(onnx::NodeProto &node, int64_t, AdapterContext &) {
  if (!findAttr(node, "coordinate_transformation_mode"))
    setStringAttr(node, "coordinate_transformation_mode", "output_half_pixel");
  return success();
}

/// Resize 10 -> 11: inputs (X, scales) became (X, roi, scales, sizes); version 10 computed
/// coordinates as "asymmetric" and picked the nearest pixel by flooring (as Upsample).
static LogicalResult resize10(onnx::NodeProto &node, int64_t, AdapterContext &) {
  std::string scales = inputName(node, 1).str();
  setInput(node, 1, "");
  setInput(node, 2, scales);
  setStringAttr(node, "coordinate_transformation_mode", "asymmetric");
  const onnx::AttributeProto *mode = findAttr(node, "mode");
  if (!mode || mode->s() == "nearest")
    setStringAttr(node, "nearest_mode", "floor");
  return success();
}

/// GroupNormalization 18 -> 21: scale and bias went from one value per group to one per
/// channel; the same when there are as many groups as channels (kiln's expansion read them
/// per channel before the importer became 1:1).
static LogicalResult groupNormLegacy(onnx::NodeProto &node, int64_t version,
                                     AdapterContext &ctx) {
  auto x = dyn_cast_or_null<RankedTensorType>(ctx.getValueType(inputName(node, 0)));
  auto scale = dyn_cast_or_null<RankedTensorType>(ctx.getValueType(inputName(node, 1)));
  auto bias = dyn_cast_or_null<RankedTensorType>(ctx.getValueType(inputName(node, 2)));
  const onnx::AttributeProto *groups = findAttr(node, "num_groups");
  if (!x || x.getRank() < 2 || !scale || !bias || !groups || !scale.hasStaticShape() ||
      !bias.hasStaticShape() || groups->i() != x.getDimSize(1) ||
      scale.getNumElements() != groups->i() || bias.getNumElements() != groups->i())
    return ctx.emitNodeError() << "opset-" << version << " GroupNormalization (scale and "
                               << "bias per group) is supported only with one group per "
                               << "channel; re-export at opset >= 21";
  return success();
}

/// DFT 17 -> 20: the `axis` attribute (default 1) became a scalar input.
static LogicalResult dftLegacy(onnx::NodeProto &node, int64_t, AdapterContext &ctx) {
  int64_t axis = 1;
  if (const onnx::AttributeProto *attr = findAttr(node, "axis"))
    axis = attr->i();
  removeAttr(node, "axis");
  auto type = RankedTensorType::get({}, IntegerType::get(ctx.getContext(), 64));
  setInput(node, 2, ctx.addConstant(DenseElementsAttr::get(type, llvm::ArrayRef<int64_t>(axis)), "axis"));
  return success();
}

static const VersionAdapter kAdapters[] = {
    // Attributes that became inputs.
    {"Clip", 1, 11, clipLegacy, "min/max attributes -> inputs"},
    {"Reshape", 1, 5, reshapeLegacy, "shape attribute -> input"},
    {"Squeeze", 1, 13, axesToInput, "axes attribute -> input"},
    {"Unsqueeze", 1, 13, axesToInput, "axes attribute -> input"},
    {"ReduceSum", 1, 13, axesToInput, "axes attribute -> input"},
    {"ReduceL1", 1, 18, axesToInput, "axes attribute -> input"},
    {"ReduceL2", 1, 18, axesToInput, "axes attribute -> input"},
    {"ReduceLogSum", 1, 18, axesToInput, "axes attribute -> input"},
    {"ReduceLogSumExp", 1, 18, axesToInput, "axes attribute -> input"},
    {"ReduceMax", 1, 18, axesToInput, "axes attribute -> input"},
    {"ReduceMean", 1, 18, axesToInput, "axes attribute -> input"},
    {"ReduceMin", 1, 18, axesToInput, "axes attribute -> input"},
    {"ReduceProd", 1, 18, axesToInput, "axes attribute -> input"},
    {"ReduceSumSquare", 1, 18, axesToInput, "axes attribute -> input"},
    {"Split", 2, 13, splitLegacy, "split attribute -> input"},
    {"Split", 13, 18, split13, "num_outputs when split is absent"},
    {"Pad", 2, 11, padLegacy, "pads/value attributes -> inputs"},
    {"Slice", 1, 10, sliceLegacy, "starts/ends/axes attributes -> inputs"},
    {"TopK", 1, 10, topkLegacy, "k attribute -> input"},
    {"Dropout", 1, 12, dropoutLegacy, "ratio attribute -> input"},
    {"Resize", 10, 11, resize10, "roi input, asymmetric/floor coordinates"},
    {"DFT", 17, 20, dftLegacy, "axis attribute -> input"},
    // Changed meaning that is kept explicit.
    {"Softmax", 1, 13, softmaxLegacy, "2-D coercion only when equivalent"},
    {"LogSoftmax", 1, 13, softmaxLegacy, "2-D coercion only when equivalent"},
    {"Hardmax", 1, 13, softmaxLegacy, "2-D coercion only when equivalent"},
    {"Concat", 1, 4, concatLegacy, "default axis 1"},
    {"GridSample", 16, 20, gridSampleLegacy, "mode names"},
    {"RoiAlign", 10, 16, roiAlignLegacy, "output_half_pixel coordinates"},
    {"GroupNormalization", 18, 21, groupNormLegacy, "per-group scale and bias"},
    {"RNN", 1, 7, dropOutputSequence, "output_sequence removed"},
    {"GRU", 1, 7, dropOutputSequence, "output_sequence removed"},
    {"LSTM", 1, 7, dropOutputSequence, "output_sequence removed"},
    {"BatchNormalization", 1, 14, batchNormLegacy, "legacy attributes and outputs"},
    // Removed attributes without change in meaning.
    {"Gemm", 1, 7, gemmLegacy, "broadcast attribute removed"},
    {"Add", 1, 7, legacyBroadcast, "limited broadcast"},
    {"Sub", 1, 7, legacyBroadcast, "limited broadcast"},
    {"Mul", 1, 7, legacyBroadcast, "limited broadcast"},
    {"Div", 1, 7, legacyBroadcast, "limited broadcast"},
    {"Pow", 1, 7, legacyBroadcast, "limited broadcast"},
    {"And", 1, 7, legacyBroadcast, "limited broadcast"},
    {"Or", 1, 7, legacyBroadcast, "limited broadcast"},
    {"Xor", 1, 7, legacyBroadcast, "limited broadcast"},
    {"Equal", 1, 7, legacyBroadcast, "limited broadcast"},
    {"Greater", 1, 7, legacyBroadcast, "limited broadcast"},
    {"Less", 1, 7, legacyBroadcast, "limited broadcast"},
    {"Abs", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Ceil", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Elu", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Exp", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Floor", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"HardSigmoid", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"InstanceNormalization", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"LeakyRelu", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Log", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Max", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Mean", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Min", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Neg", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"PRelu", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Reciprocal", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Relu", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Selu", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Sigmoid", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Sqrt", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Sum", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
    {"Tanh", 1, 6, dropConsumedInputs, "consumed_inputs removed"},
};

//===----------------------------------------------------------------------===//
// Type-only steps
//===----------------------------------------------------------------------===//

namespace {
struct TypeOnlySteps {
  const char *opType;
  /// Versions whose form equals the next version's form.
  std::initializer_list<int64_t> versions;
};
} // namespace

// Reviewed against the schema history of onnx 1.23 (inputs, outputs and attributes compared
// between consecutive versions, then the changelog for same-signature semantic changes).
// Left out on purpose: Softmax/LogSoftmax/Hardmax 1 and 11 (semantics changed at 13),
// Dropout 7 (mask type), GroupNormalization 18 (scale/bias per group), Cast 1 (`to` was
// a string), LpPool 1 / GlobalLpPool 1 (`p` was a float),
// Pad 1, Split 1, Tile 1, GRU 1/3, LSTM 1, RNN 1 (pre-opset-7 recurrent forms).
static const TypeOnlySteps kTypeOnlySteps[] = {
    {"Abs", {6}},
    {"Acos", {7}},
    {"Acosh", {9}},
    {"Add", {7, 13}},
    {"ArgMax", {1, 11, 12}},
    {"ArgMin", {1, 11, 12}},
    {"Asin", {7}},
    {"Asinh", {9}},
    {"Atan", {7}},
    {"Atanh", {9}},
    {"Attention", {23, 24}},
    {"AveragePool", {1, 7, 10, 11, 19}},
    {"BatchNormalization", {14}},
    {"Bernoulli", {15}},
    {"BitShift", {11}},
    {"Cast", {6, 9, 13, 19, 21, 23, 24, 25}},
    {"CastLike", {15, 19, 21, 23, 24}},
    {"Ceil", {6}},
    {"Celu", {12}},
    {"Clip", {11, 12}},
    {"Compress", {9, 11}},
    {"Concat", {4, 11}},
    {"ConstantOfShape", {9, 20, 21, 23, 24}},
    {"Conv", {1, 11}},
    {"ConvTranspose", {1, 11}},
    {"Cos", {7}},
    {"Cosh", {9}},
    {"CumSum", {11}},
    {"DeformConv", {19}},
    {"DepthToSpace", {1, 11, 13}},
    {"DequantizeLinear", {10, 13, 19, 21, 23, 24, 25}},
    {"Det", {11}},
    {"Div", {7, 13}},
    {"Dropout", {12, 13}},
    {"Einsum", {12}},
    {"Elu", {6}},
    {"Equal", {7, 11, 13}},
    {"Erf", {9}},
    {"Exp", {6}},
    {"Expand", {8}},
    {"EyeLike", {9}},
    {"Flatten", {1, 9, 11, 13, 21, 23, 24}},
    {"Floor", {6}},
    {"GRU", {7, 14}},
    {"Gather", {1, 11}},
    {"GatherElements", {11}},
    {"GatherND", {11, 12}},
    {"Gemm", {7, 9, 11}},
    {"GlobalAveragePool", {1}},
    {"GlobalLpPool", {2}},
    {"GlobalMaxPool", {1}},
    {"Greater", {7, 9}},
    {"GreaterOrEqual", {12}},
    {"GridSample", {20}},
    {"HardSigmoid", {6}},
    {"HardSwish", {14}},
    {"Identity", {1, 13, 14, 16, 19, 21, 23, 24}},
    // If-11 lets the branches' output shapes differ (kiln requires equal ones anyway).
    {"If", {1, 11, 13, 16, 19, 21, 23, 24}},
    {"InstanceNormalization", {6}},
    {"IsInf", {10}},
    {"IsNaN", {9, 13}},
    {"LRN", {1}},
    {"LSTM", {7, 14}},
    {"LeakyRelu", {6}},
    {"Less", {7, 9}},
    {"LessOrEqual", {12}},
    {"Log", {6}},
    {"Loop", {1, 11, 13, 16, 19, 21, 23, 24}},
    {"LpNormalization", {1}},
    {"LpPool", {2, 11, 18}},
    {"MatMul", {1, 9}},
    {"Max", {6, 8, 12}},
    {"MaxPool", {1, 8, 10, 11, 12}},
    {"MaxRoiPool", {1}},
    {"MaxUnpool", {9, 11}},
    {"Mean", {6, 8}},
    {"MeanVarianceNormalization", {9}},
    {"Min", {6, 8, 12}},
    {"Mish", {18}},
    {"Mod", {10, 13}},
    {"Mul", {7, 13}},
    {"Multinomial", {7}},
    {"Neg", {6}},
    {"NegativeLogLikelihoodLoss", {12, 13}},
    {"NonMaxSuppression", {10}},
    {"NonZero", {9}},
    {"OneHot", {9, 11}},
    {"PRelu", {6, 7, 9}},
    {"Pad", {11, 13, 18, 19, 21, 23, 24}},
    {"Pow", {7, 12, 13}},
    {"QLinearMatMul", {10}},
    {"QuantizeLinear", {10, 13, 19, 21, 23, 24, 25}},
    {"RNN", {7, 14}},
    {"RandomNormal", {1}},
    {"RandomNormalLike", {1}},
    {"RandomUniform", {1}},
    {"RandomUniformLike", {1}},
    {"Range", {11}},
    {"Reciprocal", {6}},
    {"ReduceLogSum", {18}},
    {"ReduceLogSumExp", {18}},
    {"ReduceMax", {18}},
    {"ReduceMin", {18}},
    {"Relu", {6, 13}},
    {"Reshape", {5, 13, 14, 19, 21, 23, 24}},
    {"Resize", {11, 13, 18}},
    {"ReverseSequence", {10}},
    {"RoiAlign", {16}},
    {"Round", {11}},
    {"ScatterElements", {11, 13, 16}},
    {"ScatterND", {11, 13, 16}},
    // Scan-8 (a batch axis and sequence_lens) becomes two Scans (scan8ToNewest).
    {"Scan", {9, 11, 16, 19, 21, 23, 24}},
    {"Selu", {6}},
    {"Shape", {1, 13, 15, 19, 21, 23, 24}},
    {"Sigmoid", {6}},
    {"Sign", {9}},
    {"Sin", {7}},
    {"Sinh", {9}},
    {"Size", {1, 13, 19, 21, 23, 24}},
    {"Slice", {10, 11}},
    {"SoftmaxCrossEntropyLoss", {12}},
    {"Softplus", {1}},
    {"Softsign", {1}},
    {"SpaceToDepth", {1, 13}},
    {"Sqrt", {6}},
    {"Squeeze", {13, 21, 23, 24}},
    {"Sub", {7, 13}},
    {"Sum", {6, 8}},
    {"Tan", {7}},
    {"Tanh", {6}},
    {"ThresholdedRelu", {10}},
    {"Tile", {6}},
    {"TopK", {10, 11}},
    {"Transpose", {1, 13, 21, 23, 24}},
    {"Unique", {11}},
    {"Unsqueeze", {13, 21, 23, 24}},
    {"Where", {9}},
};

static bool isTypeOnlyStep(llvm::StringRef opType, int64_t version) {
  static const llvm::StringMap<llvm::SmallVector<int64_t>> table = [] {
    llvm::StringMap<llvm::SmallVector<int64_t>> t;
    for (const TypeOnlySteps &steps : kTypeOnlySteps)
      t[steps.opType].append(steps.versions.begin(), steps.versions.end());
    return t;
  }();
  auto it = table.find(opType);
  return it != table.end() && llvm::is_contained(it->second, version);
}

static const VersionAdapter *findAdapter(llvm::StringRef opType, int64_t version) {
  for (const VersionAdapter &adapter : kAdapters)
    if (opType == adapter.opType && adapter.from <= version && version < adapter.to)
      return &adapter;
  return nullptr;
}

/// Whether a chain of adapters and type-only steps leads from `version` to the newest.
static bool hasChain(const OpSchemaInfo &schema, int64_t version) {
  while (version != schema.newestVersion()) {
    if (const VersionAdapter *adapter = findAdapter(schema.name, version)) {
      version = adapter->to;
      continue;
    }
    std::optional<int64_t> next = schema.nextVersion(version);
    if (!next || !isTypeOnlyStep(schema.name, version))
      return false;
    version = *next;
  }
  return true;
}

LogicalResult kiln::import::adaptToNewestVersion(::onnx::NodeProto &node,
                                                 const OpSchemaInfo &schema,
                                                 int64_t version, AdapterContext &ctx) {
  int64_t form = version;
  while (form != schema.newestVersion()) {
    if (const VersionAdapter *adapter = findAdapter(schema.name, form)) {
      if (failed(adapter->fn(node, form, ctx)))
        return failure();
      form = adapter->to;
      continue;
    }
    std::optional<int64_t> next = schema.nextVersion(form);
    if (next && isTypeOnlyStep(schema.name, form)) {
      form = *next;
      continue;
    }
    // The smallest later version from which a chain exists: the opset to re-export at.
    int64_t reexport = schema.newestVersion();
    for (int64_t v : schema.versions)
      if (v > form && hasChain(schema, v)) {
        reexport = v;
        break;
      }
    InFlightDiagnostic diag = ctx.emitNodeError();
    diag << "opset-" << version << " form of " << schema.name << " is not supported";
    if (form != version)
      diag << " (no adapter from its opset-" << form << " form)";
    diag << "; re-export at opset >= " << reexport;
    return diag;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Ops removed from ONNX
//===----------------------------------------------------------------------===//

/// Upsample (7..9, deprecated at 10) -> the newest Resize: inputs (X, roi, scales), mode
/// nearest or linear, asymmetric coordinates, nearest pixel by flooring.
static LogicalResult upsampleToResize(onnx::NodeProto &node, int64_t opset,
                                      AdapterContext &ctx) {
  if (opset < 7 || opset >= 10)
    return ctx.emitNodeError() << "Upsample is only supported at opsets 7 to 9 (it was "
                                  "replaced by Resize at opset 10)";
  std::string x = inputName(node, 0).str();
  std::string scales;
  if (opset < 9) {
    const onnx::AttributeProto *attr = findAttr(node, "scales");
    if (!attr)
      return ctx.emitNodeError() << "Upsample has no 'scales' attribute";
    llvm::SmallVector<float> values(attr->floats().begin(), attr->floats().end());
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                      Float32Type::get(ctx.getContext()));
    scales = ctx.addConstant(DenseElementsAttr::get(type, llvm::ArrayRef<float>(values)),
                             "scales");
    removeAttr(node, "scales");
  } else {
    scales = inputName(node, 1).str();
    if (scales.empty())
      return ctx.emitNodeError() << "Upsample has no 'scales' input";
  }
  std::string mode = "nearest";
  if (const onnx::AttributeProto *attr = findAttr(node, "mode"))
    mode = attr->s();
  if (mode == "bilinear")
    mode = "linear";
  if (mode != "nearest" && mode != "linear")
    return ctx.emitNodeError() << "Upsample mode '" << mode << "' is not supported";
  node.set_op_type("Resize");
  node.clear_input();
  setInput(node, 0, x);
  setInput(node, 2, scales);
  setStringAttr(node, "mode", mode);
  setStringAttr(node, "coordinate_transformation_mode", "asymmetric");
  if (mode == "nearest")
    setStringAttr(node, "nearest_mode", "floor");
  return success();
}

LogicalResult kiln::import::adaptRemovedOp(::onnx::NodeProto &node, int64_t opset,
                                           AdapterContext &ctx, bool &handled) {
  handled = false;
  if (node.op_type() == "Scatter") {
    // Scatter (opset 9-10) is ScatterElements-11 under its old name: same
    // inputs and `axis`, no reduction.
    node.set_op_type("ScatterElements");
    handled = true;
    return success();
  }
  if (node.op_type() != "Upsample")
    return success();
  handled = true;
  return upsampleToResize(node, opset, ctx);
}

/// Scan-8 scans axis 1 of batched states and inputs ([batch, ...], [batch, sequence,
/// ...]). It becomes a Scan over the batch (axis 0 of every state and input, no states of
/// its own) whose body is one Scan of the newest form over the sequence, with the original
/// body: final states and scan outputs come out stacked on a leading batch axis, as Scan-8
/// gives them. A `sequence_lens` shorter than the sequence is rejected.
static LogicalResult scan8ToNewest(const ::onnx::NodeProto &node, AdapterContext &ctx,
                                   bool &handled,
                                   llvm::SmallVectorImpl<::onnx::NodeProto> &out) {
  const ::onnx::AttributeProto *body = findAttr(node, "body");
  const ::onnx::AttributeProto *numScan = findAttr(node, "num_scan_inputs");
  if (!body || !body->has_g() || !numScan)
    return ctx.emitNodeError() << "the opset-8 Scan needs its 'body' and 'num_scan_inputs'";
  int numInputs = node.input_size() - 1; // states and scan inputs, after sequence_lens
  if (numInputs < 1 || numScan->i() < 1 || numScan->i() > numInputs)
    return ctx.emitNodeError() << "num_scan_inputs is " << numScan->i() << " but there are "
                               << std::max(numInputs, 0) << " states and scan inputs";
  if (!inputName(node, 0).empty()) {
    // Only lengths known to be the whole sequence are followed.
    auto lengths = ctx.getConstantInts(inputName(node, 0));
    auto first = dyn_cast_or_null<RankedTensorType>(
        ctx.getValueType(inputName(node, 1 + numInputs - numScan->i())));
    bool whole = lengths && first && first.getRank() >= 2 && !first.isDynamicDim(1) &&
                 llvm::all_of(*lengths, [&](int64_t l) { return l == first.getDimSize(1); });
    if (!whole)
      return ctx.emitNodeError() << "sequence_lens '" << inputName(node, 0)
                                 << "' is not a constant equal to the sequence length "
                                    "(shorter sequences are not supported for Scan-8)";
  }
  handled = true;
  std::string base = node.name().empty() ? "Scan" : node.name();
  ::onnx::NodeProto outer;
  outer.set_op_type("Scan");
  outer.set_name(base);
  ::onnx::NodeProto inner;
  inner.set_op_type("Scan");
  inner.set_name(base + "/sequence");
  // Imported as it is: it is already the newest form, not another Scan-8.
  setIntAttr(inner, kNewestFormMarker, 1);
  setIntAttr(inner, "num_scan_inputs", numScan->i());
  if (const ::onnx::AttributeProto *dirs = findAttr(node, "directions")) {
    ::onnx::AttributeProto *a = inner.add_attribute();
    *a = *dirs;
    a->set_name("scan_input_directions");
  }
  *inner.add_attribute() = *body;
  ::onnx::GraphProto batchBody;
  batchBody.set_name(base + "_batch");
  for (int i = 0; i < numInputs; ++i) {
    outer.add_input(inputName(node, 1 + i).str());
    std::string name = ctx.freshName(base + "/item");
    batchBody.add_input()->set_name(name);
    inner.add_input(name);
  }
  for (int i = 0; i < body->g().output_size(); ++i) {
    std::string name = ctx.freshName(base + "/result");
    inner.add_output(name);
    batchBody.add_output()->set_name(name);
    outer.add_output(i < node.output_size() ? node.output(i) : std::string());
  }
  *batchBody.add_node() = std::move(inner);
  setIntAttr(outer, "num_scan_inputs", numInputs);
  ::onnx::AttributeProto *g = outer.add_attribute();
  g->set_name("body");
  g->set_type(::onnx::AttributeProto::GRAPH);
  *g->mutable_g() = std::move(batchBody);
  out.push_back(std::move(outer));
  return success();
}

LogicalResult kiln::import::adaptToNewestNodes(const ::onnx::NodeProto &node, int64_t opset,
                                               AdapterContext &ctx, bool &handled,
                                               llvm::SmallVectorImpl<::onnx::NodeProto> &out) {
  handled = false;
  if (node.op_type() == "Scan" && opset < 9)
    return scan8ToNewest(node, ctx, handled, out);
  if (node.op_type() != "Hardmax" || opset >= 13 || node.output_size() != 1)
    return success();
  auto input = dyn_cast_or_null<RankedTensorType>(ctx.getValueType(inputName(node, 0)));
  if (!input || !input.hasStaticShape() || input.getRank() == 0)
    return success(); // the one-node adapter reports it
  int64_t rank = input.getRank();
  const ::onnx::AttributeProto *axisAttr = findAttr(node, "axis");
  int64_t axis = axisAttr ? axisAttr->i() : 1;
  if (axis < -rank || axis > rank)
    return ctx.emitNodeError() << "axis " << axis << " is out of range for rank " << rank;
  if (axis < 0)
    axis += rank;
  bool sameAsNewest = axis < rank;
  for (int64_t d = axis + 1; d < rank; ++d)
    sameAsNewest &= input.getDimSize(d) == 1;
  if (sameAsNewest)
    return success(); // softmaxLegacy rewrites the axis
  handled = true;
  std::string base = node.name().empty() ? node.op_type() : node.name();
  auto add = [&](llvm::StringRef opType, std::vector<std::string> inputs,
                 std::string output) {
    ::onnx::NodeProto n;
    n.set_op_type(opType.str());
    n.set_name(base + "/" + opType.str());
    for (const std::string &in : inputs)
      n.add_input(in);
    n.add_output(output);
    out.push_back(std::move(n));
    return &out.back();
  };
  std::string flat = ctx.freshName(node.output(0) + "/kiln.flatten");
  std::string hardmax = ctx.freshName(node.output(0) + "/kiln.hardmax");
  setIntAttr(*add("Flatten", {inputName(node, 0).str()}, flat), "axis", axis);
  setIntAttr(*add("Hardmax", {flat}, hardmax), "axis", 1);
  add("Reshape", {hardmax, addI64Constant(ctx, input.getShape(), "shape")}, node.output(0));
  return success();
}
