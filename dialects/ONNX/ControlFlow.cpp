//===- ControlFlow.cpp - Verifiers and folding of If, Loop, Scan ----------===//
//
// The region verifiers check how a subgraph's block arguments and yielded
// values line up with the op's operands and results (types only once they are
// known: results and the values yielded stay `none` until shape inference has
// run). An If whose
// condition is a constant becomes the branch it takes.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ControlFlow.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace kiln::onnx {

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

bool isConstantTrue(Value value) {
  std::optional<SmallVector<int64_t>> v = getConstantIntValues(value);
  return v && v->size() == 1 && (*v)[0] != 0;
}

unsigned getNumCarried(LoopOp loop) { return loop.getVInitial().size(); }

unsigned getNumStates(ScanOp scan) {
  int64_t operands = scan.getInitialStateAndScanInputs().size();
  int64_t scanInputs = scan.getNumScanInputs();
  return scanInputs < 0 || scanInputs > operands ? 0 : operands - scanInputs;
}

/// `value` with one-element reshapes stripped.
static Value stripReshapes(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<UnsqueezeOp, SqueezeOp, ReshapeOp, IdentityOp>(def))
      break;
    auto type = dyn_cast<RankedTensorType>(def->getOperand(0).getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() != 1)
      break;
    value = def->getOperand(0);
  }
  return value;
}

LoopOp getLoopOfIterationNumber(Value value) {
  auto arg = dyn_cast<BlockArgument>(stripReshapes(value));
  if (!arg || arg.getArgNumber() != 0)
    return nullptr;
  return dyn_cast_or_null<LoopOp>(arg.getOwner()->getParentOp());
}

std::optional<std::pair<int64_t, int64_t>> getIterationNumberRange(Value value) {
  LoopOp loop = getLoopOfIterationNumber(value);
  if (!loop || isNoneValue(loop.getM()))
    return std::nullopt;
  std::optional<SmallVector<int64_t>> m = getConstantIntValues(loop.getM());
  if (!m || m->size() != 1 || (*m)[0] < 1)
    return std::nullopt;
  return std::make_pair(int64_t(0), (*m)[0] - 1);
}

std::optional<int64_t> getConstantOffset(Value value, Value base) {
  base = stripReshapes(base);
  auto add = stripReshapes(value).getDefiningOp<AddOp>();
  if (!add)
    return std::nullopt;
  for (auto [x, c] : {std::make_pair(add.getA(), add.getB()),
                      std::make_pair(add.getB(), add.getA())}) {
    if (stripReshapes(x) != base)
      continue;
    std::optional<SmallVector<int64_t>> v = getConstantIntValues(c);
    if (v && v->size() == 1)
      return (*v)[0];
  }
  return std::nullopt;
}

std::optional<IterationSlice> getIterationSlice(SliceOp slice) {
  auto data = dyn_cast<RankedTensorType>(slice.getData().getType());
  auto starts = dyn_cast<RankedTensorType>(slice.getStarts().getType());
  if (!data || !starts || starts.getRank() != 1 || starts.getDimSize(0) != 1)
    return std::nullopt;
  if (!isNoneValue(slice.getSteps())) {
    std::optional<SmallVector<int64_t>> steps = getConstantIntValues(slice.getSteps());
    if (!steps || steps->size() != 1 || (*steps)[0] != 1)
      return std::nullopt;
  }
  int64_t axis = 0, rank = data.getRank();
  if (!isNoneValue(slice.getAxes())) {
    std::optional<SmallVector<int64_t>> axes = getConstantIntValues(slice.getAxes());
    if (!axes || axes->size() != 1 || (*axes)[0] < -rank || (*axes)[0] >= rank)
      return std::nullopt;
    axis = (*axes)[0] < 0 ? (*axes)[0] + rank : (*axes)[0];
  }
  int64_t dim = data.getDimSize(axis);
  std::optional<std::pair<int64_t, int64_t>> range =
      getIterationNumberRange(slice.getStarts());
  std::optional<int64_t> c = getConstantOffset(slice.getEnds(), slice.getStarts());
  if (ShapedType::isDynamic(dim) || !range || !c || *c < 0 || range->first < 0 ||
      range->second + *c > dim)
    return std::nullopt;
  return IterationSlice{axis, *c};
}

SmallVector<int64_t> getIntsOrZeros(std::optional<ArrayAttr> attr, unsigned count) {
  if (!attr || !*attr)
    return SmallVector<int64_t>(count, 0);
  SmallVector<int64_t> out;
  for (Attribute a : *attr)
    out.push_back(cast<IntegerAttr>(a).getInt());
  return out;
}

std::optional<int64_t> getStaticTripCount(LoopOp loop) {
  if (isNoneValue(loop.getM()))
    return std::nullopt;
  std::optional<SmallVector<int64_t>> m = getConstantIntValues(loop.getM());
  if (!m || m->size() != 1)
    return std::nullopt;
  if (!isNoneValue(loop.getCond()) && !isConstantTrue(loop.getCond()))
    return std::nullopt;
  Block &body = loop.getBody().front();
  if (body.getNumArguments() < 2 || body.empty())
    return std::nullopt;
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getOutputs().empty())
    return std::nullopt;
  Value next = yield.getOutputs().front();
  if (next != body.getArgument(1) && !isConstantTrue(next))
    return std::nullopt;
  return std::max<int64_t>((*m)[0], 0);
}

bool hasTripCountBeforeLoop(LoopOp loop) {
  if (isNoneValue(loop.getM()))
    return false;
  Block &body = loop.getBody().front();
  if (body.getNumArguments() < 2 || body.empty())
    return false;
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getOutputs().empty())
    return false;
  Value next = yield.getOutputs().front();
  return next == body.getArgument(1) || isConstantTrue(next);
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

namespace {

bool isNone(Type type) { return isa<NoneType>(type); }

/// A tensor of one element of `elementType` (ONNX allows [] or [1]).
bool isScalarOf(Type type, function_ref<bool(Type)> elementOk) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && ranked.hasStaticShape() && ranked.getNumElements() == 1 &&
         elementOk(ranked.getElementType());
}

bool isBool(Type t) { return t.isInteger(1); }
bool isI64(Type t) { return t.isInteger(64); }

YieldOp getYield(Region &region) { return dyn_cast<YieldOp>(region.front().back()); }

} // namespace

LogicalResult IfOp::verifyRegions() {
  if (!isNone(getCond().getType()) && !isScalarOf(getCond().getType(), isBool))
    return emitNodeError(*this) << "cond must be a bool tensor of one element, got "
                                << getCond().getType();
  for (auto [name, region] : {std::make_pair("then_branch", &getThenBranch()),
                              std::make_pair("else_branch", &getElseBranch())}) {
    YieldOp yield = getYield(*region);
    if (!yield)
      return emitNodeError(*this) << name << " must end in onnx.Yield";
    if (yield.getOutputs().size() != getNumResults())
      return emitNodeError(*this) << name << " yields " << yield.getOutputs().size()
                                  << " values but the If has " << getNumResults()
                                  << " outputs";
    for (auto [i, pair] : llvm::enumerate(llvm::zip(yield.getOutputs(), getResults()))) {
      Type yielded = std::get<0>(pair).getType(), result = std::get<1>(pair).getType();
      if (!isNone(result) && !isNone(yielded) && yielded != result)
        return emitNodeError(*this) << name << " yields " << yielded << " as output " << i
                                    << " but the If's output is " << result;
    }
  }
  return success();
}

LogicalResult LoopOp::verifyRegions() {
  if (!isNone(getM().getType()) && !isScalarOf(getM().getType(), isI64))
    return emitNodeError(*this) << "M must be an int64 tensor of one element, got "
                                << getM().getType();
  if (!isNone(getCond().getType()) && !isScalarOf(getCond().getType(), isBool))
    return emitNodeError(*this) << "cond must be a bool tensor of one element, got "
                                << getCond().getType();
  unsigned carried = getNumCarried(*this);
  Block &body = getBody().front();
  if (body.getNumArguments() != carried + 2)
    return emitNodeError(*this) << "body takes " << body.getNumArguments()
                                << " arguments but the Loop passes " << carried + 2
                                << " (iteration number, condition, " << carried
                                << " loop-carried values)";
  if (!isScalarOf(body.getArgument(0).getType(), isI64) ||
      !isScalarOf(body.getArgument(1).getType(), isBool))
    return emitNodeError(*this)
           << "body's first two arguments must be the iteration number (int64) and the "
              "condition (bool), got "
           << body.getArgument(0).getType() << " and " << body.getArgument(1).getType();
  for (unsigned i = 0; i < carried; ++i)
    if (body.getArgument(i + 2).getType() != getVInitial()[i].getType())
      return emitNodeError(*this) << "body argument " << i + 2 << " is "
                                  << body.getArgument(i + 2).getType()
                                  << " but the loop-carried value passed is "
                                  << getVInitial()[i].getType();
  if (getNumResults() < carried)
    return emitNodeError(*this) << "has " << getNumResults() << " outputs but "
                                << carried << " loop-carried values";
  YieldOp yield = getYield(getBody());
  if (!yield)
    return emitNodeError(*this) << "body must end in onnx.Yield";
  unsigned scanOutputs = getNumResults() - carried;
  if (yield.getOutputs().size() != 1 + carried + scanOutputs)
    return emitNodeError(*this) << "body yields " << yield.getOutputs().size()
                                << " values but the Loop needs " << 1 + carried + scanOutputs
                                << " (condition, " << carried << " loop-carried values, "
                                << scanOutputs << " scan outputs)";
  Type yieldedCond = yield.getOutputs()[0].getType();
  if (!isNone(yieldedCond) && !isScalarOf(yieldedCond, isBool))
    return emitNodeError(*this) << "body's first output (the condition) must be a bool "
                                   "tensor of one element, got "
                                << yield.getOutputs()[0].getType();
  for (unsigned i = 0; i < carried; ++i) {
    Type in = body.getArgument(i + 2).getType();
    Type out = yield.getOutputs()[i + 1].getType();
    if (!isNone(out) && out != in)
      return emitNodeError(*this) << "loop-carried value " << i << " enters the body as "
                                  << in << " but the body yields " << out;
    Type result = getResult(i).getType();
    if (!isNone(result) && result != in)
      return emitNodeError(*this) << "output " << i << " is " << result
                                  << " but its loop-carried value is " << in;
  }
  return success();
}

LogicalResult ScanOp::verifyRegions() {
  int64_t operands = getInitialStateAndScanInputs().size();
  if (getNumScanInputs() < 1 || getNumScanInputs() > operands)
    return emitNodeError(*this) << "num_scan_inputs is " << getNumScanInputs()
                                << " but must be in [1, " << operands << "]";
  unsigned states = getNumStates(*this);
  if (getNumResults() < states)
    return emitNodeError(*this) << "has " << getNumResults() << " outputs but " << states
                                << " states";
  unsigned scanOutputs = getNumResults() - states;
  auto checkCount = [&](std::optional<ArrayAttr> attr, StringRef name,
                        int64_t count) -> LogicalResult {
    if (attr && *attr && static_cast<int64_t>((*attr).size()) != count)
      return emitNodeError(*this) << name << " has " << (*attr).size()
                                  << " entries but there are " << count;
    return success();
  };
  if (failed(checkCount(getScanInputAxes(), "scan_input_axes", getNumScanInputs())) ||
      failed(checkCount(getScanInputDirections(), "scan_input_directions",
                        getNumScanInputs())) ||
      failed(checkCount(getScanOutputAxes(), "scan_output_axes", scanOutputs)) ||
      failed(checkCount(getScanOutputDirections(), "scan_output_directions", scanOutputs)))
    return failure();
  for (auto [name, attr] :
       {std::make_pair("scan_input_directions", getScanInputDirections()),
        std::make_pair("scan_output_directions", getScanOutputDirections())})
    for (int64_t d : getIntsOrZeros(attr, 0))
      if (d != 0 && d != 1)
        return emitNodeError(*this) << name << " entries must be 0 or 1, got " << d;
  Block &body = getBody().front();
  if (static_cast<int64_t>(body.getNumArguments()) != operands)
    return emitNodeError(*this) << "body takes " << body.getNumArguments()
                                << " arguments but the Scan passes " << operands
                                << " (states and scan input slices)";
  for (unsigned i = 0; i < states; ++i)
    if (body.getArgument(i).getType() != getInitialStateAndScanInputs()[i].getType())
      return emitNodeError(*this) << "body argument " << i << " is "
                                  << body.getArgument(i).getType()
                                  << " but the state passed is "
                                  << getInitialStateAndScanInputs()[i].getType();
  YieldOp yield = getYield(getBody());
  if (!yield)
    return emitNodeError(*this) << "body must end in onnx.Yield";
  if (yield.getOutputs().size() != getNumResults())
    return emitNodeError(*this) << "body yields " << yield.getOutputs().size()
                                << " values but the Scan has " << getNumResults()
                                << " outputs";
  for (unsigned i = 0; i < states; ++i) {
    Type in = body.getArgument(i).getType(), out = yield.getOutputs()[i].getType();
    if (!isNone(out) && out != in)
      return emitNodeError(*this) << "state " << i << " enters the body as " << in
                                  << " but the body yields " << out;
    Type result = getResult(i).getType();
    if (!isNone(result) && result != in)
      return emitNodeError(*this) << "output " << i << " is " << result
                                  << " but its state is " << in;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// If with a constant condition
//===----------------------------------------------------------------------===//

namespace {

/// If(constant) -> the ops of the branch it takes, in place of the If.
struct FoldConstantIf : OpRewritePattern<IfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IfOp op, PatternRewriter &rewriter) const override {
    std::optional<SmallVector<int64_t>> cond = getConstantIntValues(op.getCond());
    if (!cond || cond->size() != 1)
      return failure();
    Region &taken = (*cond)[0] ? op.getThenBranch() : op.getElseBranch();
    Block &block = taken.front();
    auto yield = cast<YieldOp>(block.getTerminator());
    SmallVector<Value> results(yield.getOutputs());
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(&block, op);
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void IfOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<FoldConstantIf>(context);
}

} // namespace kiln::onnx
