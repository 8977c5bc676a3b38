//===- ControlFlow.cpp - Shape inference of If, Loop, Scan ----------------===//
//
// A control-flow op infers its regions first (block arguments from its
// operands, then every op of the body in order), then its results from what
// the regions yield. kiln computes static shapes only: If branches that yield
// different types, a loop-carried value or Scan state whose type changes
// between iterations, and Loop scan outputs whose length is known only at run
// time are errors naming the node.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/ControlFlow.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;

namespace kiln::onnx {
namespace {

/// Infers every op of `block` in order (nested control flow infers its own
/// regions).
LogicalResult inferBlock(Block &block) {
  for (Operation &op : block.without_terminator())
    if (auto shaped = dyn_cast<ShapeInferenceOpInterface>(&op))
      if (failed(shaped.inferShapes()))
        return failure();
  return success();
}

/// The yielded values of a region's single block.
OperandRange getYielded(Region &region) {
  return cast<YieldOp>(region.front().getTerminator()).getOutputs();
}

/// `value`'s type as a static ranked tensor, else an error about `what`.
FailureOr<RankedTensorType> getStaticType(Operation *op, Value value, const Twine &what) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape()) {
    emitNodeError(op) << what << " is " << value.getType()
                      << "; only tensors of static shape are supported";
    return failure();
  }
  return type;
}

LogicalResult inferIf(Operation *operation) {
  auto op = cast<IfOp>(operation);
  if (failed(inferBlock(op.getThenBranch().front())) ||
      failed(inferBlock(op.getElseBranch().front())))
    return failure();
  OperandRange thenOut = getYielded(op.getThenBranch());
  OperandRange elseOut = getYielded(op.getElseBranch());
  if (thenOut.size() != op.getNumResults() || elseOut.size() != op.getNumResults()) {
    emitNodeError(op) << "then_branch yields " << thenOut.size() << " values, else_branch "
                      << elseOut.size() << ", but the If has " << op.getNumResults()
                      << " outputs";
    return failure();
  }
  for (unsigned i = 0; i < op.getNumResults(); ++i) {
    FailureOr<RankedTensorType> t =
        getStaticType(op, thenOut[i], "then_branch's output " + Twine(i));
    if (failed(t))
      return failure();
    if (elseOut[i].getType() != *t) {
      emitNodeError(op) << "output " << i << " is " << *t << " in then_branch but "
                        << elseOut[i].getType()
                        << " in else_branch; branches whose outputs differ in shape or "
                           "type need dynamic shapes, which kiln does not support yet";
      return failure();
    }
    op.getResult(i).setType(*t);
  }
  return success();
}

/// Error unless each yielded loop-carried value / state keeps its type.
LogicalResult checkCarried(Operation *op, ValueRange in, ValueRange out, StringRef what) {
  for (auto [i, pair] : llvm::enumerate(llvm::zip(in, out))) {
    Type before = std::get<0>(pair).getType(), after = std::get<1>(pair).getType();
    if (before != after) {
      emitNodeError(op) << what << " " << i << " enters the body as " << before
                        << " but the body yields " << after
                        << "; a value whose shape changes between iterations needs "
                           "dynamic shapes, which kiln does not support yet";
      return failure();
    }
  }
  return success();
}

LogicalResult inferLoop(Operation *operation) {
  auto op = cast<LoopOp>(operation);
  MLIRContext *ctx = op.getContext();
  Block &body = op.getBody().front();
  unsigned carried = getNumCarried(op);
  if (body.getNumArguments() != carried + 2) {
    emitNodeError(op) << "body takes " << body.getNumArguments() << " arguments but the Loop "
                      << "passes " << carried + 2;
    return failure();
  }
  body.getArgument(0).setType(RankedTensorType::get({}, IntegerType::get(ctx, 64)));
  body.getArgument(1).setType(RankedTensorType::get({}, IntegerType::get(ctx, 1)));
  for (unsigned i = 0; i < carried; ++i) {
    FailureOr<RankedTensorType> t =
        getStaticType(op, op.getVInitial()[i], "loop-carried value " + Twine(i));
    if (failed(t))
      return failure();
    body.getArgument(i + 2).setType(*t);
  }
  if (failed(inferBlock(body)))
    return failure();
  OperandRange out = getYielded(op.getBody());
  if (out.size() < 1 + carried || op.getNumResults() != out.size() - 1) {
    emitNodeError(op) << "body yields " << out.size() << " values but the Loop has "
                      << op.getNumResults() << " outputs and " << carried
                      << " loop-carried values";
    return failure();
  }
  if (failed(checkCarried(op, body.getArguments().drop_front(2),
                          out.drop_front(1).take_front(carried), "loop-carried value")))
    return failure();
  for (unsigned i = 0; i < carried; ++i)
    op.getResult(i).setType(body.getArgument(i + 2).getType());

  unsigned scanOutputs = op.getNumResults() - carried;
  if (scanOutputs == 0)
    return success();
  std::optional<int64_t> trips = getStaticTripCount(op);
  // A run-time number of iterations known when the loop starts (a computed M, the
  // Range `_expanded` tests): the scan outputs' length is a run dim (`?`, a run symbol
  // of kiln-symbolic-shapes), at a function's top level only (isRunTimeOperand).
  bool runTimeTrips = !trips && hasTripCountBeforeLoop(op) &&
                      (isRunTimeOperand(op, 0) || isRunTimeOperand(op, 1));
  if (!trips && !runTimeTrips) {
    // The scan outputs' length is the number of iterations. An input that decides it is
    // named as other shape-deciding inputs are (--specialize can fix it).
    for (auto [name, value] : {std::make_pair("M", op.getM()),
                               std::make_pair("cond", op.getCond())})
      if (!isNoneValue(value) && !getConstantAttr(value)) {
        emitNodeError(op) << "the length of the scan outputs, the number of iterations, "
                             "depends on a non-constant input '"
                          << name << "' (dynamic shapes are not supported yet)";
        return failure();
      }
    emitNodeError(op) << "has scan outputs, but how many iterations it runs is known only "
                         "at run time (no trip count M, or a condition computed by the "
                         "body), so their length is dynamic, which kiln does not support "
                         "yet";
    return failure();
  }
  for (unsigned k = 0; k < scanOutputs; ++k) {
    FailureOr<RankedTensorType> t =
        getStaticType(op, out[1 + carried + k], "scan output " + Twine(k));
    if (failed(t))
      return failure();
    SmallVector<int64_t> shape = {trips ? *trips : ShapedType::kDynamic};
    llvm::append_range(shape, t->getShape());
    if (failed(setResultType(op, carried + k, shape, t->getElementType())))
      return failure();
  }
  return success();
}

LogicalResult inferScan(Operation *operation) {
  auto op = cast<ScanOp>(operation);
  Block &body = op.getBody().front();
  ValueRange operands = op.getInitialStateAndScanInputs();
  unsigned states = getNumStates(op);
  unsigned scanInputs = operands.size() - states;
  if (body.getNumArguments() != operands.size() || op.getNumResults() < states) {
    emitNodeError(op) << "body takes " << body.getNumArguments() << " arguments and the "
                      << "Scan has " << op.getNumResults() << " outputs for "
                      << operands.size() << " inputs (" << states << " states)";
    return failure();
  }
  SmallVector<int64_t> inAxes = getIntsOrZeros(op.getScanInputAxes(), scanInputs);
  if (inAxes.size() != scanInputs) {
    emitNodeError(op) << "scan_input_axes has " << inAxes.size() << " entries but there are "
                      << scanInputs << " scan inputs";
    return failure();
  }
  for (unsigned i = 0; i < states; ++i) {
    FailureOr<RankedTensorType> t = getStaticType(op, operands[i], "state " + Twine(i));
    if (failed(t))
      return failure();
    body.getArgument(i).setType(*t);
  }
  std::optional<int64_t> length;
  for (unsigned k = 0; k < scanInputs; ++k) {
    FailureOr<RankedTensorType> t =
        getStaticType(op, operands[states + k], "scan input " + Twine(k));
    if (failed(t))
      return failure();
    FailureOr<int64_t> axis = normalizeAxis(op, inAxes[k], t->getRank(), "scan_input_axes");
    if (failed(axis))
      return failure();
    int64_t n = t->getDimSize(*axis);
    if (length && *length != n) {
      emitNodeError(op) << "scan input " << k << " has " << n << " slices along its axis "
                        << *axis << " but the first scan input has " << *length;
      return failure();
    }
    length = n;
    SmallVector<int64_t> slice(t->getShape());
    slice.erase(slice.begin() + *axis);
    body.getArgument(states + k).setType(t->clone(slice));
  }
  if (failed(inferBlock(body)))
    return failure();
  OperandRange out = getYielded(op.getBody());
  if (out.size() != op.getNumResults()) {
    emitNodeError(op) << "body yields " << out.size() << " values but the Scan has "
                      << op.getNumResults() << " outputs";
    return failure();
  }
  if (failed(checkCarried(op, body.getArguments().take_front(states),
                          out.take_front(states), "state")))
    return failure();
  for (unsigned i = 0; i < states; ++i)
    op.getResult(i).setType(body.getArgument(i).getType());
  unsigned scanOutputs = op.getNumResults() - states;
  SmallVector<int64_t> outAxes = getIntsOrZeros(op.getScanOutputAxes(), scanOutputs);
  if (outAxes.size() != scanOutputs) {
    emitNodeError(op) << "scan_output_axes has " << outAxes.size()
                      << " entries but there are " << scanOutputs << " scan outputs";
    return failure();
  }
  for (unsigned k = 0; k < scanOutputs; ++k) {
    FailureOr<RankedTensorType> t =
        getStaticType(op, out[states + k], "scan output " + Twine(k));
    if (failed(t))
      return failure();
    FailureOr<int64_t> axis =
        normalizeAxis(op, outAxes[k], t->getRank() + 1, "scan_output_axes");
    if (failed(axis))
      return failure();
    SmallVector<int64_t> shape(t->getShape());
    shape.insert(shape.begin() + *axis, *length);
    if (failed(setResultType(op, states + k, shape, t->getElementType())))
      return failure();
  }
  return success();
}

} // namespace

void registerControlFlowShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferIf, IfOp>(ctx);
    attachInferShapes<inferLoop, LoopOp>(ctx);
    attachInferShapes<inferScan, ScanOp>(ctx);
  });
}

} // namespace kiln::onnx
