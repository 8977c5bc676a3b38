//===- ControlFlow.cpp - If, Loop, Scan to scf ----------------------------===//
//
//   If     scf.if on the condition's element; the branches' regions are moved
//          into it (their ops are converted in place afterwards), each output
//          copied into a tensor made before the If
//   Loop   scf.for from 0 to M when the number of iterations is known at
//          compile time (getStaticTripCount: constant M, condition constant
//          true); the scan outputs are written per iteration into tensors of
//          M slices carried by the loop; when M (or the initial condition) is a
//          run-time value but the body yields its own condition or true, the
//          same loop to `cond ? max(M, 0) : 0` computed before it, the scan
//          outputs that long (a run dim). Otherwise scf.while carrying the
//          iteration number (set to M when the condition turns false),
//          compared with M before each iteration (no scan outputs then:
//          shape inference rejects them)
//   Scan   scf.for over the scanned axis: each iteration extracts one slice of
//          every scan input and inserts one slice of every scan output, in
//          the directions the attributes give
//
// The body block is merged into the new loop with the values it takes
// (iteration number and condition as 0-d tensors), and its onnx.Yield is
// replaced here by scf.yield: onnx.Yield has no pattern of its own. Each new
// loop-carried value is copied into the buffer it replaces (copyIntoIterArgs),
// so the loop bufferizes in place.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/RunDims.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/ControlFlow.h"
#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln::onnx_to_linalg {
namespace {

using kiln::onnx::emitNodeError;
using kiln::onnx::isNoneValue;
using kiln::onnx::YieldOp;

/// The single element of a one-element tensor (rank 0 or [1]).
Value extractScalar(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return tensor::ExtractOp::create(b, loc, tensor,
                                   SmallVector<Value>(type.getRank(), zero));
}

/// A 0-d tensor holding `scalar`.
Value makeScalarTensor(OpBuilder &b, Location loc, Value scalar) {
  return tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, scalar.getType()), ValueRange{scalar});
}

/// The offsets, sizes and strides of slice `position` along `axis` of `full`
/// (size 1 there, the full extent elsewhere).
void getSliceAt(OpBuilder &b, RankedTensorType full, int64_t axis, Value position,
                SmallVector<OpFoldResult> &offsets, SmallVector<OpFoldResult> &sizes,
                SmallVector<OpFoldResult> &strides) {
  offsets.assign(full.getRank(), b.getIndexAttr(0));
  offsets[axis] = position;
  sizes.clear();
  for (auto [i, d] : llvm::enumerate(full.getShape()))
    sizes.push_back(b.getIndexAttr(static_cast<int64_t>(i) == axis ? 1 : d));
  strides.assign(full.getRank(), b.getIndexAttr(1));
}

/// `slice` inserted as position `position` along `axis` of `dest` (slice has
/// dest's rank without that axis).
Value insertSliceAt(OpBuilder &b, Location loc, Value slice, Value dest, int64_t axis,
                    Value position) {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  getSliceAt(b, cast<RankedTensorType>(dest.getType()), axis, position, offsets, sizes,
             strides);
  return tensor::InsertSliceOp::create(b, loc, slice, dest, offsets, sizes, strides);
}

/// The values a loop body yields for its loop-carried `iterArgs`, each written
/// into the buffer of its iter_arg (linalg.copy): one-shot bufferization needs
/// a loop's yielded buffers to be those it carries, and the body's result is
/// a new tensor. An iter_arg yielded unchanged is yielded as is.
/// Whether `value` is one of `args` or a view of one (the body's onnx ops are
/// not converted yet: those that lower to views).
bool viewsArg(Value value, ArrayRef<Value> args) {
  while (!llvm::is_contained(args, value)) {
    Operation *def = value.getDefiningOp();
    if (!def || !isa<onnx::IdentityOp, onnx::ReshapeOp, onnx::FlattenOp, onnx::SqueezeOp,
                     onnx::UnsqueezeOp, onnx::SliceOp>(def))
      return false;
    value = def->getOperand(0);
  }
  return true;
}

/// `bodyArgs` are the body block's arguments the iter_args replace: the
/// conversion maps their uses only when it finishes, so the yielded values still
/// name them.
SmallVector<Value> copyIntoIterArgs(OpBuilder &b, Location loc, ValueRange yielded,
                                    ValueRange iterArgs, ValueRange bodyArgs) {
  SmallVector<Value> args(iterArgs);
  llvm::append_range(args, bodyArgs);
  // A value that is (a view of) another iter_arg is copied aside first: writing
  // the iter_args in turn would overwrite it before it is read (a swap). A
  // bufferization.alloc_tensor copy, which elementwise fusion does not fold into
  // the copy after it.
  SmallVector<Value> sources;
  for (auto [value, iterArg, bodyArg] : llvm::zip(yielded, iterArgs, bodyArgs)) {
    Value source = value;
    if (value != iterArg && value != bodyArg && viewsArg(value, args))
      source = bufferization::AllocTensorOp::create(
          b, loc, cast<RankedTensorType>(value.getType()), ValueRange{}, value);
    sources.push_back(source);
  }
  SmallVector<Value> out;
  for (auto [value, iterArg, bodyArg] : llvm::zip(sources, iterArgs, bodyArgs))
    out.push_back(value == iterArg || value == bodyArg
                      ? iterArg
                      : linalg::CopyOp::create(b, loc, value, iterArg).getResult(0));
  return out;
}

/// `length - 1 - iv` when `reverse`, else `iv`.
Value getPosition(OpBuilder &b, Location loc, Value iv, int64_t length, bool reverse) {
  if (!reverse)
    return iv;
  return arith::SubIOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, length - 1),
                               iv);
}

/// An scf.for from 0 to `trips` (an index) carrying `carried`, then a fresh tensor
/// of each of `filled` (the outputs the body fills slice by slice; a `?` axis 0 is
/// `trips` long); its body is empty (no terminator: the caller merges the ONNX body
/// in) and the insertion point is at its start.
scf::ForOp createCountedLoop(ConversionPatternRewriter &rewriter, Location loc,
                             ValueRange carried, ArrayRef<Type> filled, Value ub) {
  SmallVector<Value> init(carried);
  for (Type type : filled) {
    auto tensor = cast<RankedTensorType>(type);
    if (tensor.hasStaticShape()) {
      init.push_back(createEmptyTensor(rewriter, loc, tensor));
      continue;
    }
    init.push_back(tensor::EmptyOp::create(rewriter, loc, tensor, ValueRange{ub}));
  }
  Value lb = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value step = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto forOp = scf::ForOp::create(rewriter, loc, lb, ub, step, init);
  Block *body = forOp.getBody();
  // scf.for's builder ends the body with an empty yield when it carries nothing.
  if (!body->empty())
    rewriter.eraseOp(body->getTerminator());
  rewriter.setInsertionPointToStart(body);
  return forOp;
}

/// The converted result types, each of static shape; from result `runLengthFrom` on
/// axis 0 may be `?` (a Loop's scan outputs over a run-time number of iterations).
FailureOr<SmallVector<Type>> convertResultTypes(Operation *op,
                                                const TypeConverter &converter,
                                                unsigned runLengthFrom = ~0u) {
  SmallVector<Type> types;
  for (auto [i, type] : llvm::enumerate(op->getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(converter.convertType(type));
    bool ok = tensor && (tensor.hasStaticShape() ||
                         (i >= runLengthFrom && tensor.getRank() > 0 &&
                          llvm::count_if(tensor.getShape(), ShapedType::isDynamic) == 1 &&
                          tensor.isDynamicDim(0)));
    if (!ok) {
      emitNodeError(op) << "output of type " << type
                        << " is not a tensor of static shape";
      return failure();
    }
    types.push_back(tensor);
  }
  return types;
}

//===----------------------------------------------------------------------===//
// If
//===----------------------------------------------------------------------===//

struct IfLowering : OpConversionPattern<onnx::IfOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::IfOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<SmallVector<Type>> types = convertResultTypes(op, *getTypeConverter());
    if (failed(types))
      return failure();
    Value cond = extractScalar(rewriter, loc, adaptor.getCond());
    // Both branches write each output into one tensor made before the If, so the
    // result is that buffer whichever branch ran (a buffer allocated in a branch
    // would escape it, and freeing it after the If depends on the branch taken).
    SmallVector<Value> dests;
    for (Type type : *types)
      dests.push_back(createEmptyTensor(rewriter, loc, cast<RankedTensorType>(type)));
    auto ifOp = scf::IfOp::create(rewriter, loc, *types, cond, /*addThenBlock=*/false,
                                  /*addElseBlock=*/false);
    for (auto [from, to] : {std::make_pair(&op.getThenBranch(), &ifOp.getThenRegion()),
                            std::make_pair(&op.getElseBranch(), &ifOp.getElseRegion())}) {
      rewriter.inlineRegionBefore(*from, *to, to->end());
      auto yield = cast<YieldOp>(to->front().getTerminator());
      rewriter.setInsertionPoint(yield);
      SmallVector<Value> outputs;
      for (auto [value, dest] : llvm::zip(yield.getOutputs(), dests))
        outputs.push_back(linalg::CopyOp::create(rewriter, loc, value, dest).getResult(0));
      rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, outputs);
    }
    rewriter.replaceOp(op, ifOp.getResults());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

struct LoopLowering : OpConversionPattern<onnx::LoopOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::LoopOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    unsigned carried = onnx::getNumCarried(op);
    bool scanOutputs = op.getNumResults() != carried;
    std::optional<int64_t> trips = onnx::getStaticTripCount(op);
    // Scan outputs over a number of iterations known when the loop starts: their
    // axis 0 is that number (a run dim, computed before the loop).
    bool runTrips = !trips && scanOutputs && onnx::hasTripCountBeforeLoop(op);
    FailureOr<SmallVector<Type>> types =
        convertResultTypes(op, *getTypeConverter(), runTrips ? carried : ~0u);
    if (failed(types))
      return failure();
    if (trips)
      return lowerToFor(op, adaptor, *types,
                        arith::ConstantIndexOp::create(rewriter, op.getLoc(), *trips),
                        rewriter);
    if (runTrips)
      return lowerToFor(op, adaptor, *types, runTimeTrips(op, adaptor, *types, rewriter),
                        rewriter);
    if (scanOutputs)
      return emitNodeError(op) << "scan outputs need a number of iterations known at "
                                  "compile time",
             failure();
    return lowerToWhile(op, adaptor, *types, rewriter);
  }

  /// `cond ? max(M, 0) : 0` as an index, checked to keep each scan output below 2^40
  /// elements (0 after a failed check: the entry then returns the check's number).
  Value runTimeTrips(onnx::LoopOp op, OpAdaptor adaptor, ArrayRef<Type> types,
                     ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    Type i64 = rewriter.getI64Type();
    Value zero = arith::ConstantIntOp::create(rewriter, loc, i64, 0);
    Value count = arith::MaxSIOp::create(rewriter, loc,
                                         extractScalar(rewriter, loc, adaptor.getM()), zero);
    if (!isNoneValue(op.getCond()))
      count = arith::SelectOp::create(rewriter, loc,
                                      extractScalar(rewriter, loc, adaptor.getCond()),
                                      count, zero);
    int64_t slice = 1;
    for (Type t : types.drop_front(onnx::getNumCarried(op))) {
      auto tensor = cast<RankedTensorType>(t);
      int64_t n = 1;
      for (int64_t d : tensor.getShape().drop_front())
        n *= std::max<int64_t>(d, 1);
      slice = std::max(slice, n);
    }
    Value limit = arith::ConstantIntOp::create(rewriter, loc, i64, (int64_t(1) << 40) / slice);
    Value ok = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle, count, limit);
    emitRunCheck(rewriter, loc, op, ok,
                 "the number of iterations (the scan outputs' length) is above 2^40 "
                 "elements");
    Value index = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), count);
    return sizeIfOk(rewriter, loc, ok, index);
  }

  LogicalResult lowerToFor(onnx::LoopOp op, OpAdaptor adaptor, ArrayRef<Type> types,
                           Value trips, ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    unsigned carried = onnx::getNumCarried(op);
    scf::ForOp forOp = createCountedLoop(rewriter, loc, adaptor.getVInitial(),
                                         types.drop_front(carried), trips);
    Block *loopBody = forOp.getBody();
    Value iv = forOp.getInductionVar();
    Value iteration = makeScalarTensor(
        rewriter, loc, arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(), iv));
    Value cond = makeScalarTensor(rewriter, loc,
                                  arith::ConstantIntOp::create(rewriter, loc, 1, 1));
    SmallVector<Value> args = {iteration, cond};
    llvm::append_range(args, forOp.getRegionIterArgs().take_front(carried));
    SmallVector<Value> bodyArgs(op.getBody().getArguments().drop_front(2));
    rewriter.mergeBlocks(&op.getBody().front(), loopBody, args);

    auto yield = cast<YieldOp>(loopBody->getTerminator());
    rewriter.setInsertionPoint(yield);
    // The scan slices first: one may be a carried value (Range's `_expanded` Loop
    // yields its carried value as the scan output), read before the copy below
    // overwrites that value's buffer (one-shot bufferization keeps it in place).
    SmallVector<Value> slices;
    for (auto [k, value] : llvm::enumerate(yield.getOutputs().drop_front(1 + carried)))
      slices.push_back(insertSliceAt(rewriter, loc, value,
                                     forOp.getRegionIterArgs()[carried + k], 0, iv));
    SmallVector<Value> next =
        copyIntoIterArgs(rewriter, loc, yield.getOutputs().slice(1, carried),
                         forOp.getRegionIterArgs().take_front(carried), bodyArgs);
    next.append(slices.begin(), slices.end());
    rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, next);
    rewriter.replaceOp(op, forOp.getResults());
    return success();
  }

  // The condition is folded into the iteration number, so the loop carries no
  // i1 that canonicalization could drop from one side of scf.condition (one-shot
  // bufferization needs its forwarded values to line up with the block
  // arguments): a false condition sets the number to M, which ends the loop.
  LogicalResult lowerToWhile(onnx::LoopOp op, OpAdaptor adaptor, ArrayRef<Type> types,
                             ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    Type i64 = rewriter.getI64Type();
    Value tripCount =
        isNoneValue(op.getM())
            ? arith::ConstantIntOp::create(rewriter, loc, i64,
                                           std::numeric_limits<int64_t>::max())
                  .getResult()
            : extractScalar(rewriter, loc, adaptor.getM());
    Value zero = arith::ConstantIntOp::create(rewriter, loc, i64, 0);
    Value first = zero;
    if (!isNoneValue(op.getCond()))
      first = arith::SelectOp::create(rewriter, loc,
                                      extractScalar(rewriter, loc, adaptor.getCond()),
                                      zero, tripCount);
    SmallVector<Value> init = {first};
    llvm::append_range(init, adaptor.getVInitial());
    SmallVector<Type> carriedTypes = {i64};
    llvm::append_range(carriedTypes, types);
    SmallVector<Location> locs(carriedTypes.size(), loc);

    auto whileOp = scf::WhileOp::create(rewriter, loc, carriedTypes, init);
    // Before: go on while the number is below M.
    Block *before = rewriter.createBlock(&whileOp.getBefore(), {}, carriedTypes, locs);
    Value go = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                                     before->getArgument(0), tripCount);
    scf::ConditionOp::create(rewriter, loc, go, before->getArguments());

    // After: one iteration of the body (entered only while the condition holds).
    Block *after = rewriter.createBlock(&whileOp.getAfter(), {}, carriedTypes, locs);
    Value iteration = after->getArgument(0);
    SmallVector<Value> args = {
        makeScalarTensor(rewriter, loc, iteration),
        makeScalarTensor(rewriter, loc, arith::ConstantIntOp::create(rewriter, loc, 1, 1))};
    llvm::append_range(args, after->getArguments().drop_front(1));
    SmallVector<Value> bodyArgs(op.getBody().getArguments().drop_front(2));
    rewriter.mergeBlocks(&op.getBody().front(), after, args);
    auto yield = cast<YieldOp>(after->getTerminator());
    rewriter.setInsertionPoint(yield);
    Value one = arith::ConstantIntOp::create(rewriter, loc, i64, 1);
    Value nextIteration = arith::SelectOp::create(
        rewriter, loc, extractScalar(rewriter, loc, yield.getOutputs()[0]),
        arith::AddIOp::create(rewriter, loc, iteration, one), tripCount);
    SmallVector<Value> next = {nextIteration};
    llvm::append_range(next, copyIntoIterArgs(rewriter, loc, yield.getOutputs().drop_front(1),
                                              after->getArguments().drop_front(1),
                                              bodyArgs));
    rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, next);
    rewriter.replaceOp(op, whileOp.getResults().drop_front(1));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Scan
//===----------------------------------------------------------------------===//

struct ScanLowering : OpConversionPattern<onnx::ScanOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<SmallVector<Type>> types = convertResultTypes(op, *getTypeConverter());
    if (failed(types))
      return failure();
    ValueRange operands = adaptor.getInitialStateAndScanInputs();
    unsigned states = onnx::getNumStates(op);
    unsigned scanInputs = operands.size() - states;
    unsigned scanOutputs = op.getNumResults() - states;
    SmallVector<int64_t> inAxes = onnx::getIntsOrZeros(op.getScanInputAxes(), scanInputs);
    SmallVector<int64_t> inDirs =
        onnx::getIntsOrZeros(op.getScanInputDirections(), scanInputs);
    SmallVector<int64_t> outAxes = onnx::getIntsOrZeros(op.getScanOutputAxes(), scanOutputs);
    SmallVector<int64_t> outDirs =
        onnx::getIntsOrZeros(op.getScanOutputDirections(), scanOutputs);
    Block &body = op.getBody().front();

    // Axes normalized; the length is the scanned extent (checked equal by shape
    // inference).
    int64_t length = 0;
    for (unsigned k = 0; k < scanInputs; ++k) {
      auto type = cast<RankedTensorType>(operands[states + k].getType());
      if (inAxes[k] < 0)
        inAxes[k] += type.getRank();
      length = type.getDimSize(inAxes[k]);
    }
    for (unsigned k = 0; k < scanOutputs; ++k)
      if (outAxes[k] < 0)
        outAxes[k] += cast<RankedTensorType>((*types)[states + k]).getRank();

    scf::ForOp forOp =
        createCountedLoop(rewriter, loc, operands.take_front(states),
                          ArrayRef<Type>(*types).drop_front(states),
                          arith::ConstantIndexOp::create(rewriter, loc, length));
    Block *loopBody = forOp.getBody();
    Value iv = forOp.getInductionVar();
    SmallVector<Value> args(forOp.getRegionIterArgs().take_front(states));
    for (unsigned k = 0; k < scanInputs; ++k) {
      Value input = operands[states + k];
      auto inputType = cast<RankedTensorType>(input.getType());
      auto sliceType = cast<RankedTensorType>(
          getTypeConverter()->convertType(body.getArgument(states + k).getType()));
      SmallVector<OpFoldResult> offsets, sizes, strides;
      getSliceAt(rewriter, inputType, inAxes[k],
                 getPosition(rewriter, loc, iv, length, inDirs[k] != 0), offsets, sizes,
                 strides);
      args.push_back(tensor::ExtractSliceOp::create(rewriter, loc, sliceType, input,
                                                    offsets, sizes, strides));
    }
    SmallVector<Value> bodyArgs(body.getArguments().take_front(states));
    rewriter.mergeBlocks(&body, loopBody, args);

    auto yield = cast<YieldOp>(loopBody->getTerminator());
    rewriter.setInsertionPoint(yield);
    SmallVector<Value> next =
        copyIntoIterArgs(rewriter, loc, yield.getOutputs().take_front(states),
                         forOp.getRegionIterArgs().take_front(states), bodyArgs);
    for (unsigned k = 0; k < scanOutputs; ++k)
      next.push_back(insertSliceAt(rewriter, loc, yield.getOutputs()[states + k],
                                   forOp.getRegionIterArgs()[states + k], outAxes[k],
                                   getPosition(rewriter, loc, iv, length, outDirs[k] != 0)));
    rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, next);
    rewriter.replaceOp(op, forOp.getResults());
    return success();
  }
};

} // namespace

void populateControlFlowPatterns(TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<IfLowering, LoopLowering, ScanLowering>(converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
