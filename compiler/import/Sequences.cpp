//===- Sequences.cpp - Sequence and Optional values at import -------------===//
//
// See Sequences.h. Every tensor op made here is an ONNX node of the newest form imported
// through the importer (importNewestNode), so it is typed, checked and folded like the
// model's own nodes, and its errors name the sequence node it came from.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/Sequences.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"

#include <onnx/onnx_pb.h>

#include <numeric>

using namespace mlir;
using namespace kiln::import;

namespace {

/// Builds the newest-form nodes one sequence node becomes.
class SequenceBuilder {
public:
  SequenceBuilder(const ::onnx::NodeProto &node, SequenceContext &ctx)
      : node(node), ctx(ctx) {}

  /// The name under which `v` can be a node input.
  std::string nameOf(Value v) {
    std::string name = ctx.freshName("seq");
    ctx.bindValue(name, v);
    return name;
  }

  /// Imports `opType` over `inputs` ("" for an absent input) with `numOutputs` outputs;
  /// `attrs` sets its attributes. Returns the outputs.
  FailureOr<SmallVector<Value>>
  build(StringRef opType, ArrayRef<std::string> inputs, int numOutputs,
        llvm::function_ref<void(::onnx::NodeProto &)> attrs = nullptr) {
    ::onnx::NodeProto n;
    n.set_op_type(opType.str());
    n.set_name(node.name());
    for (const std::string &in : inputs)
      n.add_input(in);
    for (int i = 0; i < numOutputs; ++i)
      n.add_output(ctx.freshName("seq." + opType.str()));
    if (attrs)
      attrs(n);
    if (failed(ctx.importNewestNode(n)))
      return failure();
    SmallVector<Value> outs;
    for (const std::string &out : n.output())
      outs.push_back(ctx.lookupValue(out));
    return outs;
  }
  FailureOr<Value> build1(StringRef opType, ArrayRef<std::string> inputs,
                          llvm::function_ref<void(::onnx::NodeProto &)> attrs = nullptr) {
    FailureOr<SmallVector<Value>> outs = build(opType, inputs, 1, attrs);
    if (failed(outs))
      return failure();
    return (*outs)[0];
  }

  std::string i64Constant(ArrayRef<int64_t> values, bool scalar = false) {
    auto type = RankedTensorType::get(
        scalar ? ArrayRef<int64_t>{} : ArrayRef<int64_t>{static_cast<int64_t>(values.size())},
        IntegerType::get(ctx.getContext(), 64));
    return ctx.addConstant(DenseElementsAttr::get(type, values), "seq");
  }

  static void setInt(::onnx::NodeProto &n, StringRef name, int64_t value) {
    ::onnx::AttributeProto *a = n.add_attribute();
    a->set_name(name.str());
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(value);
  }
  static void setInts(::onnx::NodeProto &n, StringRef name, ArrayRef<int64_t> values) {
    ::onnx::AttributeProto *a = n.add_attribute();
    a->set_name(name.str());
    a->set_type(::onnx::AttributeProto::INTS);
    for (int64_t v : values)
      a->add_ints(v);
  }

  FailureOr<Value> unsqueeze(Value v, int64_t axis) {
    return build1("Unsqueeze", {nameOf(v), i64Constant({axis})});
  }
  /// `t` with its axis 0 moved to position `to`.
  FailureOr<Value> moveAxis0(Value t, int64_t to) {
    if (to == 0)
      return t;
    int64_t rank = cast<RankedTensorType>(t.getType()).getRank();
    SmallVector<int64_t> perm;
    for (int64_t i = 1; i <= to; ++i)
      perm.push_back(i);
    perm.push_back(0);
    for (int64_t i = to + 1; i < rank; ++i)
      perm.push_back(i);
    return build1("Transpose", {nameOf(t)},
                  [&](::onnx::NodeProto &n) { setInts(n, "perm", perm); });
  }

  const ::onnx::NodeProto &node;
  SequenceContext &ctx;
};

int64_t segmentLength(const SequenceSegment &s) {
  return s.stacked ? cast<RankedTensorType>(s.value.getType()).getDimSize(0) : 1;
}

int64_t sequenceLength(const SequenceValue &seq) {
  int64_t n = 0;
  for (const SequenceSegment &s : seq)
    n += segmentLength(s);
  return n;
}

/// The type of one item of `s`.
RankedTensorType itemType(const SequenceSegment &s) {
  auto type = cast<RankedTensorType>(s.value.getType());
  return s.stacked ? type.clone(type.getShape().drop_front()) : type;
}

class SequenceImport {
public:
  SequenceImport(const ::onnx::NodeProto &node, SequenceScope &scope, SequenceContext &ctx)
      : node(node), scope(scope), ctx(ctx), b(node, ctx) {}

  LogicalResult run();

private:
  InFlightDiagnostic error() { return ctx.emitNodeError(); }

  std::string input(int i) const {
    return i < node.input_size() ? node.input(i) : std::string();
  }

  FailureOr<SequenceValue> sequenceInput(int i) {
    std::string name = input(i);
    auto it = scope.sequences.find(name);
    if (name.empty() || it == scope.sequences.end()) {
      InFlightDiagnostic diag = error();
      if (name.empty())
        return diag << "input " << i << " is absent but must be a sequence";
      if (scope.absentOptionals.contains(name))
        return diag << "input '" << name << "' is an empty optional, not a sequence";
      return diag << "input '" << name << "' is not a sequence";
    }
    return it->second;
  }

  FailureOr<Value> tensorInput(int i) {
    std::string name = input(i);
    Value v = name.empty() ? Value() : ctx.lookupValue(name);
    if (!v || !isa<RankedTensorType>(v.getType()))
      return error() << "input '" << name << "' is not a tensor";
    return v;
  }

  /// The constant position of input `i` normalized into [0, length + extra), or failure.
  FailureOr<int64_t> constantPosition(int i, int64_t length, int64_t extra) {
    std::optional<SmallVector<int64_t>> pos = ctx.getConstantInts(input(i));
    if (!pos || pos->size() != 1)
      return error() << "the position depends on a non-constant input 'position' ('"
                     << input(i)
                     << "'; kiln follows sequences at compile time, SequenceAt alone takes "
                        "a run-time position: --specialize fixes it)";
    int64_t p = (*pos)[0];
    if (p < -length || p >= length + extra)
      return error() << "position " << p << " is out of range for a sequence of " << length
                     << " items";
    return p < 0 ? p + length : p;
  }

  /// Splits the segments of `seq` so that one starts at item `pos` (0 <= pos <= length);
  /// returns its index.
  FailureOr<size_t> boundaryAt(SequenceValue &seq, int64_t pos) {
    int64_t start = 0;
    for (size_t i = 0; i < seq.size(); ++i) {
      if (start == pos)
        return i;
      int64_t len = segmentLength(seq[i]);
      if (pos < start + len) {
        // A stacked segment split in two with Slice on axis 0.
        int64_t k = pos - start;
        Value t = seq[i].value;
        FailureOr<Value> head = b.build1(
            "Slice", {b.nameOf(t), b.i64Constant({0}), b.i64Constant({k}), b.i64Constant({0})});
        FailureOr<Value> tail = b.build1("Slice", {b.nameOf(t), b.i64Constant({k}),
                                                    b.i64Constant({len}), b.i64Constant({0})});
        if (failed(head) || failed(tail))
          return failure();
        seq[i] = {*head, true};
        seq.insert(seq.begin() + i + 1, SequenceSegment{*tail, true});
        return i + 1;
      }
      start += len;
    }
    return seq.size();
  }

  /// Item `pos` (in range) of `seq`.
  FailureOr<Value> itemAt(const SequenceValue &seq, int64_t pos) {
    int64_t start = 0;
    for (const SequenceSegment &s : seq) {
      int64_t len = segmentLength(s);
      if (pos < start + len) {
        if (!s.stacked)
          return s.value;
        return b.build1("Gather", {b.nameOf(s.value), b.i64Constant({pos - start}, true)});
      }
      start += len;
    }
    return error() << "position " << pos << " is out of range";
  }

  /// All items of `seq` (one shape) stacked on a new axis 0.
  FailureOr<Value> stackAll(const SequenceValue &seq) {
    std::optional<RankedTensorType> item;
    SmallVector<std::string> pieces;
    for (const SequenceSegment &s : seq) {
      if (segmentLength(s) == 0)
        continue;
      RankedTensorType t = itemType(s);
      if (item && t != *item)
        return error() << "the sequence's items differ in type (" << *item << ", " << t
                       << "): they cannot be indexed at run time";
      item = t;
      if (s.stacked) {
        pieces.push_back(b.nameOf(s.value));
        continue;
      }
      FailureOr<Value> u = b.unsqueeze(s.value, 0);
      if (failed(u))
        return failure();
      pieces.push_back(b.nameOf(*u));
    }
    if (pieces.empty())
      return error() << "the sequence is empty";
    // Items of one type with dims decided at run time (`?`: a sequence input's items,
    // each with its own symbols) may still differ in size: stacking them would read
    // past the smaller ones.
    if (pieces.size() > 1 && !item->hasStaticShape())
      return error() << "the sequence's items are " << *item
                     << ", whose sizes are decided at run time and may differ: they "
                        "cannot be indexed at run time (--shape fixes a sequence "
                        "input's items)";
    if (pieces.size() == 1)
      return ctx.lookupValue(pieces[0]);
    return b.build1("Concat", pieces,
                    [](::onnx::NodeProto &n) { SequenceBuilder::setInt(n, "axis", 0); });
  }

  LogicalResult bindSequence(SequenceValue seq) {
    if (!node.output(0).empty())
      scope.sequences[node.output(0)] = std::move(seq);
    return success();
  }
  LogicalResult bindTensor(Value v) {
    if (!node.output(0).empty())
      ctx.bindValue(node.output(0), v);
    return success();
  }
  LogicalResult bindBool(bool value) {
    auto type = RankedTensorType::get({}, IntegerType::get(ctx.getContext(), 1));
    std::string name = ctx.addConstant(DenseElementsAttr::get(type, value), "has_element");
    return bindTensor(ctx.lookupValue(name));
  }

  LogicalResult concatFromSequence();
  LogicalResult splitToSequence();
  LogicalResult optionalOp(StringRef opType);

  const ::onnx::NodeProto &node;
  SequenceScope &scope;
  SequenceContext &ctx;
  SequenceBuilder b;
};

LogicalResult SequenceImport::run() {
  StringRef opType = node.op_type();
  if (node.output_size() != 1)
    return error() << "has " << node.output_size() << " outputs but " << opType
                   << " has one";
  if (opType == "Optional" || opType == "OptionalHasElement" ||
      opType == "OptionalGetElement")
    return optionalOp(opType);

  if (opType == "Identity") {
    if (scope.absentOptionals.contains(input(0))) {
      scope.absentOptionals.insert(node.output(0));
      return success();
    }
    FailureOr<SequenceValue> seq = sequenceInput(0);
    return failed(seq) ? failure() : bindSequence(*seq);
  }
  if (opType == "SequenceEmpty")
    return bindSequence({});
  if (opType == "SequenceConstruct") {
    SequenceValue seq;
    for (int i = 0; i < node.input_size(); ++i) {
      FailureOr<Value> v = tensorInput(i);
      if (failed(v))
        return failure();
      if (i && getElementTypeOrSelf(v->getType()) !=
                   getElementTypeOrSelf(seq.front().value.getType()))
        return error() << "its inputs differ in element type";
      seq.push_back({*v, false});
    }
    return bindSequence(std::move(seq));
  }
  if (opType == "SequenceLength") {
    FailureOr<SequenceValue> seq = sequenceInput(0);
    if (failed(seq))
      return failure();
    return bindTensor(ctx.lookupValue(b.i64Constant({sequenceLength(*seq)}, true)));
  }
  if (opType == "SequenceInsert") {
    FailureOr<SequenceValue> seq = sequenceInput(0);
    FailureOr<Value> item = failed(seq) ? FailureOr<Value>(failure()) : tensorInput(1);
    if (failed(item))
      return failure();
    if (!seq->empty() && getElementTypeOrSelf(item->getType()) !=
                             getElementTypeOrSelf(seq->front().value.getType()))
      return error() << "the tensor's element type differs from the sequence's";
    int64_t length = sequenceLength(*seq), pos = length;
    if (!input(2).empty()) {
      FailureOr<int64_t> p = constantPosition(2, length, 1);
      if (failed(p))
        return failure();
      pos = *p;
    }
    FailureOr<size_t> at = boundaryAt(*seq, pos);
    if (failed(at))
      return failure();
    seq->insert(seq->begin() + *at, SequenceSegment{*item, false});
    return bindSequence(std::move(*seq));
  }
  if (opType == "SequenceErase") {
    FailureOr<SequenceValue> seq = sequenceInput(0);
    if (failed(seq))
      return failure();
    int64_t length = sequenceLength(*seq), pos = length - 1;
    if (length == 0)
      return error() << "erases from an empty sequence";
    if (!input(1).empty()) {
      FailureOr<int64_t> p = constantPosition(1, length, 0);
      if (failed(p))
        return failure();
      pos = *p;
    }
    FailureOr<size_t> first = boundaryAt(*seq, pos);
    FailureOr<size_t> last = failed(first) ? FailureOr<size_t>(failure()) : boundaryAt(*seq, pos + 1);
    if (failed(last))
      return failure();
    // The item is the segment(s) of length 0 or 1 between the two boundaries.
    seq->erase(seq->begin() + *first, seq->begin() + *last);
    return bindSequence(std::move(*seq));
  }
  if (opType == "SequenceAt") {
    FailureOr<SequenceValue> seq = sequenceInput(0);
    if (failed(seq))
      return failure();
    int64_t length = sequenceLength(*seq);
    if (ctx.getConstantInts(input(1))) {
      FailureOr<int64_t> p = constantPosition(1, length, 0);
      FailureOr<Value> item = failed(p) ? FailureOr<Value>(failure()) : itemAt(*seq, *p);
      return failed(item) ? failure() : bindTensor(*item);
    }
    // A run-time position: the items stacked and gathered (Gather takes negative
    // positions as SequenceAt does).
    FailureOr<Value> pos = tensorInput(1);
    FailureOr<Value> stacked = failed(pos) ? FailureOr<Value>(failure()) : stackAll(*seq);
    if (failed(stacked))
      return failure();
    if (cast<RankedTensorType>(pos->getType()).getRank() != 0)
      return error() << "position '" << input(1) << "' is not a scalar";
    FailureOr<Value> item = b.build1("Gather", {b.nameOf(*stacked), input(1)});
    return failed(item) ? failure() : bindTensor(*item);
  }
  if (opType == "ConcatFromSequence")
    return concatFromSequence();
  if (opType == "SplitToSequence")
    return splitToSequence();
  return error() << "is not a sequence op kiln follows";
}

LogicalResult SequenceImport::concatFromSequence() {
  FailureOr<SequenceValue> seq = sequenceInput(0);
  if (failed(seq))
    return failure();
  std::optional<int64_t> axisAttr;
  int64_t newAxis = 0;
  for (const ::onnx::AttributeProto &a : node.attribute()) {
    if (a.name() == "axis")
      axisAttr = a.i();
    else if (a.name() == "new_axis")
      newAxis = a.i();
  }
  if (!axisAttr)
    return error() << "required attribute 'axis' is missing";
  if (newAxis != 0 && newAxis != 1)
    return error() << "new_axis is " << newAxis << " but must be 0 or 1";
  if (sequenceLength(*seq) == 0)
    return error() << "concatenates an empty sequence";
  int64_t rank = -1;
  for (const SequenceSegment &s : *seq) {
    int64_t r = itemType(s).getRank();
    if (rank >= 0 && r != rank)
      return error() << "the sequence's items differ in rank";
    rank = r;
  }
  int64_t outRank = rank + newAxis, axis = *axisAttr;
  if (axis < -outRank || axis >= outRank)
    return error() << "axis " << axis << " is out of range for items of rank " << rank
                   << (newAxis ? " and a new axis" : "");
  if (axis < 0)
    axis += outRank;
  SmallVector<std::string> pieces;
  for (const SequenceSegment &s : *seq) {
    if (segmentLength(s) == 0)
      continue;
    FailureOr<Value> piece;
    if (!s.stacked) {
      piece = newAxis ? b.unsqueeze(s.value, axis) : FailureOr<Value>(s.value);
    } else {
      // Stacked items [N, d...]: axis 0 moved to `axis`, merged with the next dim when
      // no axis is added.
      piece = b.moveAxis0(s.value, axis);
      if (succeeded(piece) && !newAxis) {
        auto type = cast<RankedTensorType>((*piece).getType());
        if (!type.hasStaticShape())
          return error() << "concatenates stacked items of dynamic shape " << type;
        SmallVector<int64_t> shape(type.getShape());
        shape[axis] *= shape[axis + 1];
        shape.erase(shape.begin() + axis + 1);
        piece = b.build1("Reshape", {b.nameOf(*piece), b.i64Constant(shape)});
      }
    }
    if (failed(piece))
      return failure();
    pieces.push_back(b.nameOf(*piece));
  }
  if (pieces.size() == 1)
    return bindTensor(ctx.lookupValue(pieces[0]));
  FailureOr<Value> out = b.build1("Concat", pieces, [&](::onnx::NodeProto &n) {
    SequenceBuilder::setInt(n, "axis", axis);
  });
  return failed(out) ? failure() : bindTensor(*out);
}

LogicalResult SequenceImport::splitToSequence() {
  FailureOr<Value> x = tensorInput(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t axis = 0, keepdims = 1, rank = type.getRank();
  for (const ::onnx::AttributeProto &a : node.attribute()) {
    if (a.name() == "axis")
      axis = a.i();
    else if (a.name() == "keepdims")
      keepdims = a.i();
  }
  if (axis < -rank || axis >= rank)
    return error() << "axis " << axis << " is out of range for rank " << rank;
  if (axis < 0)
    axis += rank;
  int64_t dim = type.getDimSize(axis);
  if (ShapedType::isDynamic(dim))
    return error() << "splits a dim of run-time size (axis " << axis << ")";

  if (input(1).empty()) {
    // Items of one element along `axis`: one stacked segment, `axis` moved to the front.
    SmallVector<int64_t> perm = {axis};
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis)
        perm.push_back(i);
    FailureOr<Value> t = b.build1("Transpose", {b.nameOf(*x)}, [&](::onnx::NodeProto &n) {
      SequenceBuilder::setInts(n, "perm", perm);
    });
    if (succeeded(t) && keepdims)
      t = b.unsqueeze(*t, axis + 1);
    if (failed(t))
      return failure();
    return bindSequence({SequenceSegment{*t, true}});
  }
  std::optional<SmallVector<int64_t>> split = ctx.getConstantInts(input(1));
  if (!split)
    return error() << "the number of items depends on a non-constant input 'split' ('"
                   << input(1)
                   << "'; the number of items would be decided at run time: --specialize "
                      "fixes it)";
  Value splitValue = ctx.lookupValue(input(1));
  SmallVector<int64_t> sizes;
  if (cast<RankedTensorType>(splitValue.getType()).getRank() == 0) {
    int64_t s = (*split)[0];
    if (s <= 0)
      return error() << "split " << s << " is not positive";
    for (int64_t left = dim; left > 0; left -= s)
      sizes.push_back(std::min(s, left));
  } else {
    sizes.assign(split->begin(), split->end());
    if (llvm::any_of(sizes, [](int64_t s) { return s < 0; }) ||
        std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != dim)
      return error() << "split sizes do not add up to the dim " << dim << " of axis "
                     << axis;
  }
  if (sizes.empty())
    return bindSequence({});
  FailureOr<SmallVector<Value>> parts =
      b.build("Split", {b.nameOf(*x), b.i64Constant(sizes)}, sizes.size(),
              [&](::onnx::NodeProto &n) { SequenceBuilder::setInt(n, "axis", axis); });
  if (failed(parts))
    return failure();
  SequenceValue seq;
  for (Value v : *parts)
    seq.push_back({v, false});
  return bindSequence(std::move(seq));
}

LogicalResult SequenceImport::optionalOp(StringRef opType) {
  std::string in = input(0);
  bool absent = in.empty() || scope.absentOptionals.contains(in);
  auto seqIt = scope.sequences.find(in);
  bool isSequence = !absent && seqIt != scope.sequences.end();
  if (!absent && !isSequence && !ctx.lookupValue(in))
    return error() << "input '" << in << "' is not defined";
  if (opType == "OptionalHasElement")
    return bindBool(!absent);
  if (opType == "Optional") {
    if (absent) {
      if (!node.output(0).empty())
        scope.absentOptionals.insert(node.output(0));
      return success();
    }
  } else if (absent) { // OptionalGetElement
    return error() << "input '" << in << "' is an empty optional";
  }
  if (isSequence) {
    SequenceValue seq = seqIt->second;
    return bindSequence(std::move(seq));
  }
  return bindTensor(ctx.lookupValue(in));
}

/// The nodes of `graph` (and of their subgraphs, as enclosing values) that read `name`.
int countUses(const ::onnx::GraphProto &graph, StringRef name);

int countUsesInNode(const ::onnx::NodeProto &n, StringRef name) {
  int uses = 0;
  for (const std::string &in : n.input())
    uses += in == name;
  for (const ::onnx::AttributeProto &a : n.attribute()) {
    if (a.has_g())
      uses += countUses(a.g(), name);
    for (const ::onnx::GraphProto &g : a.graphs())
      uses += countUses(g, name);
  }
  return uses;
}

int countUses(const ::onnx::GraphProto &graph, StringRef name) {
  int uses = 0;
  for (const ::onnx::NodeProto &n : graph.node())
    uses += countUsesInNode(n, name);
  for (const ::onnx::ValueInfoProto &out : graph.output())
    uses += out.name() == name;
  return uses;
}

} // namespace

bool kiln::import::isSequenceOrOptionalOp(StringRef opType) {
  return llvm::is_contained({"SequenceEmpty", "SequenceConstruct", "SequenceInsert",
                             "SequenceAt", "SequenceErase", "SequenceLength",
                             "ConcatFromSequence", "SplitToSequence", "Optional",
                             "OptionalHasElement", "OptionalGetElement"},
                            opType);
}

LogicalResult kiln::import::importSequenceNode(const ::onnx::NodeProto &node,
                                               SequenceScope &scope, SequenceContext &ctx) {
  return SequenceImport(node, scope, ctx).run();
}

LogicalResult kiln::import::rewriteSequenceLoop(const ::onnx::NodeProto &node,
                                                SequenceScope &scope, SequenceContext &ctx,
                                                bool &handled, ::onnx::NodeProto &rewritten,
                                                SmallVectorImpl<LoopSequenceResult> &finals) {
  handled = false;
  SmallVector<int> carried; // indices among the loop-carried values
  for (int i = 2; i < node.input_size(); ++i)
    if (scope.sequences.count(node.input(i)))
      carried.push_back(i - 2);
  if (carried.empty())
    return success();
  handled = true;
  rewritten = node;
  ::onnx::GraphProto *body = nullptr;
  for (::onnx::AttributeProto &a : *rewritten.mutable_attribute())
    if (a.name() == "body" && a.has_g())
      body = a.mutable_g();
  if (!body)
    return ctx.emitNodeError() << "required subgraph attribute 'body' is missing";
  int numCarried = node.input_size() - 2;
  if (body->input_size() != numCarried + 2 || body->output_size() < numCarried + 1)
    return ctx.emitNodeError() << "body has " << body->input_size() << " inputs and "
                               << body->output_size() << " outputs for " << numCarried
                               << " loop-carried values";
  int numScans = body->output_size() - 1 - numCarried;

  // Per carried sequence, from the last: drop it, its append becomes a scan output.
  SmallVector<std::pair<int, std::string>> appended; // carried index, item name
  for (int j : llvm::reverse(carried)) {
    std::string in = body->input(2 + j).name(), out = body->output(1 + j).name();
    int insert = -1;
    for (int k = 0; k < body->node_size(); ++k)
      for (const std::string &o : body->node(k).output())
        if (o == out)
          insert = k;
    const ::onnx::NodeProto *append = insert >= 0 ? &body->node(insert) : nullptr;
    bool isAppend = append && append->op_type() == "SequenceInsert" &&
                    (append->domain().empty() || append->domain() == "ai.onnx") &&
                    append->input_size() >= 2 && append->input(0) == in &&
                    (append->input_size() == 2 || append->input(2).empty());
    if (!isAppend || countUses(*body, in) != 1 || countUses(*body, out) != 1)
      return ctx.emitNodeError()
             << "loop-carried sequence '" << node.input(2 + j)
             << "': kiln compiles a sequence a Loop carries only when the body appends "
                "one item to it per iteration (SequenceInsert without a position) and "
                "reads it nowhere else";
    appended.push_back({j, append->input(1)});
    body->mutable_node()->DeleteSubrange(insert, 1);
    body->mutable_input()->DeleteSubrange(2 + j, 1);
    body->mutable_output()->DeleteSubrange(1 + j, 1);
    rewritten.mutable_input()->DeleteSubrange(2 + j, 1);
    rewritten.mutable_output()->DeleteSubrange(j, 1);
  }
  // Node outputs: the carried values, then the scan outputs; the new ones at the end.
  while (rewritten.output_size() < numCarried - static_cast<int>(carried.size()) + numScans)
    rewritten.add_output("");
  for (auto &[j, item] : llvm::reverse(appended)) {
    body->add_output()->set_name(item);
    std::string scan = ctx.freshName("seq.appended");
    rewritten.add_output(scan);
    std::string finalName = j < node.output_size() ? node.output(j) : std::string();
    finals.push_back({finalName, scope.sequences.lookup(node.input(2 + j)), scan});
  }
  return success();
}
