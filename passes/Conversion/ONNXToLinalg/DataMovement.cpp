//===- DataMovement.cpp - shape and data movement ops to linalg/tensor ----===//
//
//   Reshape, Flatten, Squeeze, Unsqueeze  tensor.collapse_shape/expand_shape
//                                         (to the inferred result type)
//   Transpose                             linalg.transpose
//   Concat                                tensor.insert_slice chain
//   Split                                 tensor.extract_slice per output
//   Slice                                 tensor.extract_slice (steps > 0) or
//                                         a linalg.generic + tensor.extract
//   Gather, GatherElements, GatherND      linalg.generic + tensor.extract with
//                                         clamped indices and a kiln.check
//                                         (constant indices: checked now)
//   Expand                                broadcasting linalg.generic
//   Tile                                  broadcasting generic + collapse
//   Pad                                   tensor.pad (constant) or a generic
//                                         (edge, reflect, wrap)
//   DepthToSpace, SpaceToDepth            expand + linalg.transpose + collapse
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/Kiln/KilnDialect.h"
#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;

namespace kiln::onnx_to_linalg {
namespace {

using kiln::onnx::emitNodeError;
using kiln::onnx::isNoneValue;

Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  return getAsIndexOpFoldResult(b.getContext(), values);
}

/// A linalg.generic over `resultType` with no inputs whose body gets the loop
/// indices and returns the element; `?` result dims take their sizes from
/// `sources` (createEmptyTensorLike).
Value createIndexedGeneric(
    OpBuilder &b, Location loc, RankedTensorType resultType,
    ValueRange sources,
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> body) {
  int64_t rank = resultType.getRank();
  Value empty = resultType.hasStaticShape()
                    ? createEmptyTensor(b, loc, resultType)
                    : createEmptyTensorLike(b, loc, resultType, sources);
  SmallVector<AffineMap> maps = {
      AffineMap::getMultiDimIdentityMap(rank, b.getContext())};
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{}, ValueRange{empty},
             maps, getParallelIterators(rank),
             [&](OpBuilder &nb, Location nloc, ValueRange) {
               SmallVector<Value> ivs;
               for (int64_t i = 0; i < rank; ++i)
                 ivs.push_back(linalg::IndexOp::create(nb, nloc, i));
               linalg::YieldOp::create(nb, nloc, body(nb, nloc, ivs));
             })
      .getResult(0);
}

/// As above over a static `resultType`.
Value createIndexedGeneric(
    OpBuilder &b, Location loc, RankedTensorType resultType,
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> body) {
  return createIndexedGeneric(b, loc, resultType, ValueRange{}, body);
}

//===----------------------------------------------------------------------===//
// Reshape, Flatten, Squeeze, Unsqueeze
//===----------------------------------------------------------------------===//

/// A reshape with symbolic dims: a collapse or an expansion whose groups hold
/// at most one symbolic dim each (e.g. [?, 4, 8] <-> [?, 32]), which is what
/// kiln-symbolic-shapes lets through for a dynamic batch; anything else is an
/// error naming the node.
/// The groups of `big` around each dim of `small` when `big` is `small`
/// with static 1s inserted (Unsqueeze [?, ?] -> [?, 1, 1, ?]); std::nullopt
/// otherwise.
inline std::optional<SmallVector<ReassociationIndices>>
unitDimGroups(ArrayRef<int64_t> big, ArrayRef<int64_t> small) {
  if (small.empty())
    return std::nullopt;
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  size_t j = 0;
  for (size_t i = 0; i < big.size(); ++i) {
    bool mustMatch = big.size() - i == small.size() - j;
    if (j < small.size() && big[i] == small[j] &&
        (mustMatch || big[i] != 1 || ShapedType::isDynamic(big[i]))) {
      pending.push_back(i);
      groups.push_back(pending);
      pending.clear();
      ++j;
    } else if (big[i] == 1 && !mustMatch) {
      if (groups.empty())
        pending.push_back(i);
      else
        groups.back().push_back(i);
    } else {
      return std::nullopt;
    }
  }
  if (j != small.size() || !pending.empty())
    return std::nullopt;
  return groups;
}

inline LogicalResult lowerSymbolicReshape(Operation *op, Value input,
                                          RankedTensorType resultType,
                                          ConversionPatternRewriter &rewriter) {
  auto inputType = cast<RankedTensorType>(input.getType());
  ArrayRef<int64_t> src = inputType.getShape(), dst = resultType.getShape();
  Location loc = op->getLoc();
  if (src == dst) {
    rewriter.replaceOp(op, input);
    return success();
  }
  // Only unit dims inserted or removed (Unsqueeze, Squeeze).
  if (src.size() > dst.size())
    if (auto groups = unitDimGroups(src, dst)) {
      rewriter.replaceOp(op, tensor::CollapseShapeOp::create(
                                 rewriter, loc, resultType, input, *groups));
      return success();
    }
  if (dst.size() > src.size())
    if (auto groups = unitDimGroups(dst, src)) {
      SmallVector<OpFoldResult> sizes;
      for (auto [j, group] : llvm::enumerate(*groups))
        for (int64_t i : group)
          sizes.push_back(ShapedType::isDynamic(dst[i])
                              ? tensor::getMixedSize(rewriter, loc, input, j)
                              : rewriter.getIndexAttr(dst[i]));
      rewriter.replaceOp(op, tensor::ExpandShapeOp::create(rewriter, loc,
                                                           resultType, input,
                                                           *groups, sizes));
      return success();
    }
  if (src.size() > dst.size())
    if (auto assoc = getReassociationIndicesForCollapse(src, dst)) {
      rewriter.replaceOp(op, tensor::CollapseShapeOp::create(
                                 rewriter, loc, resultType, input, *assoc));
      return success();
    }
  if (dst.size() > src.size())
    if (auto assoc = getReassociationIndicesForCollapse(dst, src)) {
      // Each group's symbolic dim is the source dim (the others are static).
      SmallVector<OpFoldResult> sizes;
      bool ok = true;
      for (auto [j, group] : llvm::enumerate(*assoc)) {
        int dynamic = 0;
        for (int64_t i : group) {
          if (ShapedType::isDynamic(dst[i])) {
            ++dynamic;
            sizes.push_back(tensor::getMixedSize(rewriter, loc, input, j));
          } else {
            sizes.push_back(rewriter.getIndexAttr(dst[i]));
          }
        }
        ok &= dynamic == 0 || (dynamic == 1 && group.size() == 1);
      }
      if (ok) {
        rewriter.replaceOp(op, tensor::ExpandShapeOp::create(
                                   rewriter, loc, resultType, input, *assoc,
                                   sizes));
        return success();
      }
    }
  return emitNodeError(op) << "reshaping " << inputType << " to " << resultType
                           << " with symbolic dims is not supported yet (only "
                              "collapsing or expanding static dims around "
                              "them)",
         failure();
}

template <typename OpTy>
struct ReshapeLikeLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getOperands()[0];
    RankedTensorType resultType =
        getConvertedResultType(this->getTypeConverter(), op);
    RankedTensorType inputType = getStaticTensorType(input);
    if (auto dynResult = getConvertedRankedResultType(this->getTypeConverter(),
                                                      op);
        dynResult && !dynResult.hasStaticShape())
      return lowerSymbolicReshape(op, input, dynResult, rewriter);
    if (!resultType || !inputType)
      return emitNodeError(op) << "needs static shapes", failure();
    if (inputType.getNumElements() != resultType.getNumElements())
      return emitNodeError(op) << "cannot reshape " << inputType << " to "
                               << resultType,
             failure();
    rewriter.replaceOp(
        op, createReshape(rewriter, op.getLoc(), input, resultType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

struct TransposeLowering : OpConversionPattern<onnx::TransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // Symbolic dims are permuted like the others.
    auto inputType = dyn_cast<RankedTensorType>(adaptor.getData().getType());
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!inputType || !resultType)
      return emitNodeError(op) << "needs ranked tensors", failure();
    int64_t rank = inputType.getRank();
    SmallVector<int64_t> perm;
    if (auto permAttr = op.getPerm()) {
      for (Attribute a : *permAttr)
        perm.push_back(cast<IntegerAttr>(a).getInt());
    } else {
      for (int64_t i = rank - 1; i >= 0; --i)
        perm.push_back(i);
    }
    SmallVector<bool> seen(rank, false);
    for (int64_t &p : perm) {
      std::optional<int64_t> axis = normalizeAxis(p, rank);
      if (!axis || seen[*axis] || perm.size() != static_cast<size_t>(rank))
        return emitNodeError(op) << "invalid perm", failure();
      p = *axis;
      seen[p] = true;
    }
    if (applyPermutation(inputType.getShape(), perm) !=
        SmallVector<int64_t>(resultType.getShape()))
      return emitNodeError(op) << "result type " << resultType
                               << " does not match perm",
             failure();
    bool identity = llvm::all_of(llvm::enumerate(perm), [](auto it) {
      return static_cast<int64_t>(it.index()) == it.value();
    });
    if (identity || rank < 2) {
      rewriter.replaceOp(op, adaptor.getData());
      return success();
    }
    rewriter.replaceOp(op, createTranspose(rewriter, op.getLoc(),
                                           adaptor.getData(), perm));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Concat, Split
//===----------------------------------------------------------------------===//

struct ConcatLowering : OpConversionPattern<onnx::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // Symbolic dims (kiln-symbolic-shapes proved them equal across the
    // inputs, and the concatenated one the sum) are read with tensor.dim.
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!resultType)
      return emitNodeError(op) << "needs a ranked result", failure();
    int64_t rank = resultType.getRank();
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), rank);
    if (!axis)
      return emitNodeError(op) << "axis " << op.getAxis() << " out of range",
             failure();
    auto dimOf = [&](Value v, int64_t d) -> OpFoldResult {
      auto type = cast<RankedTensorType>(v.getType());
      if (!type.isDynamicDim(d))
        return rewriter.getIndexAttr(type.getDimSize(d));
      return tensor::DimOp::create(rewriter, loc, v, d).getResult();
    };
    for (Value input : adaptor.getInputs()) {
      auto inputType = dyn_cast<RankedTensorType>(input.getType());
      if (!inputType || inputType.getRank() != rank)
        return emitNodeError(op) << "inputs need rank " << rank, failure();
      for (int64_t d = 0; d < rank; ++d)
        if (d != *axis && inputType.getDimSize(d) != resultType.getDimSize(d))
          return emitNodeError(op) << "input " << inputType
                                   << " does not match the result "
                                   << resultType,
                 failure();
    }
    // The offset along the axis: a constant while the inputs before are
    // static there, then a sum of tensor.dims.
    SmallVector<OpFoldResult> resultSizes;
    for (int64_t d = 0; d < rank; ++d)
      resultSizes.push_back(d == *axis ? OpFoldResult()
                                       : dimOf(adaptor.getInputs()[0], d));
    OpFoldResult offset = rewriter.getIndexAttr(0);
    SmallVector<std::pair<Value, OpFoldResult>> pieces;
    for (Value input : adaptor.getInputs()) {
      OpFoldResult size = dimOf(input, *axis);
      if (isConstantIntValue(size, 0))
        continue;
      pieces.push_back({input, offset});
      std::optional<int64_t> a = getConstantIntValue(offset),
                             b = getConstantIntValue(size);
      if (a && *a == 0)
        offset = size;
      else
        offset = a && b ? OpFoldResult(rewriter.getIndexAttr(*a + *b))
                        : OpFoldResult(arith::AddIOp::create(
                            rewriter, loc,
                            getValueOrCreateConstantIndexOp(rewriter, loc,
                                                            offset),
                            getValueOrCreateConstantIndexOp(rewriter, loc,
                                                            size)));
    }
    resultSizes[*axis] = offset;
    if (!resultType.isDynamicDim(*axis) &&
        getConstantIntValue(offset) != resultType.getDimSize(*axis))
      return emitNodeError(op) << "inputs do not add up to the result "
                               << resultType,
             failure();
    Value result = tensor::EmptyOp::create(rewriter, loc, resultSizes,
                                           resultType.getElementType());
    if (result.getType() != resultType)
      result = tensor::CastOp::create(rewriter, loc, resultType, result);
    for (auto [input, at] : pieces) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
          sizes, strides(rank, rewriter.getIndexAttr(1));
      offsets[*axis] = at;
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(dimOf(input, d));
      result = tensor::InsertSliceOp::create(rewriter, loc, input, result,
                                             offsets, sizes, strides);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SplitLowering : OpConversionPattern<onnx::SplitOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inputType = dyn_cast<RankedTensorType>(adaptor.getInput().getType());
    if (!inputType)
      return emitNodeError(op) << "needs a ranked input", failure();
    int64_t rank = inputType.getRank();
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), rank);
    if (!axis || inputType.isDynamicDim(*axis))
      return emitNodeError(op) << "axis " << op.getAxis()
                               << " out of range or symbolic",
             failure();
    // The sizes come from the inferred output types; a symbolic dim (not
    // the split axis: shape inference) is the input's, read with tensor.dim.
    SmallVector<Value> results;
    int64_t offset = 0;
    for (unsigned i = 0, e = op->getNumResults(); i < e; ++i) {
      RankedTensorType type =
          getConvertedRankedResultType(getTypeConverter(), op, i);
      if (!type || type.getRank() != rank || type.isDynamicDim(*axis))
        return emitNodeError(op) << "outputs need static split sizes",
               failure();
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
          sizes, strides(rank, rewriter.getIndexAttr(1));
      offsets[*axis] = rewriter.getIndexAttr(offset);
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(type.isDynamicDim(d)
                            ? OpFoldResult(tensor::DimOp::create(
                                  rewriter, loc, adaptor.getInput(), d)
                                  .getResult())
                            : OpFoldResult(
                                  rewriter.getIndexAttr(type.getDimSize(d))));
      results.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, type, adaptor.getInput(), offsets, sizes, strides));
      offset += type.getDimSize(*axis);
    }
    if (offset != inputType.getDimSize(*axis))
      return emitNodeError(op) << "outputs do not add up to the input "
                               << inputType,
             failure();
    rewriter.replaceOp(op, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

struct SliceLowering : OpConversionPattern<onnx::SliceOp> {
  using OpConversionPattern::OpConversionPattern;

  /// x[i : i + c] at a Loop's iteration number i (onnx::getIterationSlice, which shape
  /// inference proved for the result type): an extract_slice at the run-time offset i,
  /// clamped into the dim as ONNX clamps (a no-op where the proof holds).
  static LogicalResult lowerIterationSlice(onnx::SliceOp op, OpAdaptor adaptor,
                                           RankedTensorType inputType,
                                           RankedTensorType resultType,
                                           ConversionPatternRewriter &rewriter) {
    Location loc = op.getLoc();
    auto startsType = dyn_cast<RankedTensorType>(adaptor.getStarts().getType());
    int64_t rank = inputType.getRank(), axis = 0;
    if (!isNoneValue(op.getAxes())) {
      auto axes = readConstantInts(op.getAxes());
      if (!axes || axes->size() != 1)
        return emitNodeError(op) << "axes must be a constant", failure();
      std::optional<int64_t> a = normalizeAxis((*axes)[0], rank);
      if (!a)
        return emitNodeError(op) << "invalid axis " << (*axes)[0], failure();
      axis = *a;
    }
    bool unitSteps = isNoneValue(op.getSteps());
    if (!unitSteps) {
      auto steps = readConstantInts(op.getSteps());
      unitSteps = steps && steps->size() == 1 && (*steps)[0] == 1;
    }
    int64_t dim = inputType.getDimSize(axis), size = resultType.getDimSize(axis);
    if (!startsType || startsType.getShape() != ArrayRef<int64_t>{1} || !unitSteps ||
        ShapedType::isDynamic(dim) || ShapedType::isDynamic(size) || size > dim)
      return emitNodeError(op) << "starts must be a constant, or a Loop's iteration "
                                  "number sliced over a length known at compile time",
             failure();
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value start = tensor::ExtractOp::create(rewriter, loc, adaptor.getStarts(), {zero});
    start = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), start);
    start = arith::MaxSIOp::create(rewriter, loc, start, zero);
    start = arith::MinSIOp::create(
        rewriter, loc, start, arith::ConstantIndexOp::create(rewriter, loc, dim - size));
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes, strides(
        rank, rewriter.getIndexAttr(1));
    for (int64_t d : resultType.getShape())
      sizes.push_back(rewriter.getIndexAttr(d));
    offsets[axis] = start;
    rewriter.replaceOp(op, tensor::ExtractSliceOp::create(rewriter, loc, resultType,
                                                          adaptor.getData(), offsets, sizes,
                                                          strides));
    return success();
  }

  LogicalResult
  matchAndRewrite(onnx::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // Symbolic dims are permuted like the others.
    auto inputType = dyn_cast<RankedTensorType>(adaptor.getData().getType());
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!inputType || !resultType)
      return emitNodeError(op) << "needs ranked tensors", failure();
    int64_t rank = inputType.getRank();
    auto starts = readConstantInts(op.getStarts());
    auto ends = readConstantInts(op.getEnds());
    if (!starts)
      return lowerIterationSlice(op, adaptor, inputType, resultType, rewriter);
    if (!ends || starts->size() != ends->size())
      return emitNodeError(op)
                 << "starts and ends must be constants of equal length",
             failure();
    SmallVector<int64_t> axes, steps;
    if (isNoneValue(op.getAxes())) {
      for (int64_t i = 0, e = starts->size(); i < e; ++i)
        axes.push_back(i);
    } else if (auto values = readConstantInts(op.getAxes())) {
      axes = *values;
    } else {
      return emitNodeError(op) << "axes must be a constant", failure();
    }
    if (isNoneValue(op.getSteps())) {
      steps.assign(starts->size(), 1);
    } else if (auto values = readConstantInts(op.getSteps())) {
      steps = *values;
    } else {
      return emitNodeError(op) << "steps must be a constant", failure();
    }
    if (axes.size() != starts->size() || steps.size() != starts->size())
      return emitNodeError(op) << "starts/ends/axes/steps lengths differ",
             failure();

    SmallVector<int64_t> offsets(rank, 0), sizes(inputType.getShape()),
        strides(rank, 1);
    SmallVector<bool> seen(rank, false);
    for (size_t i = 0; i < axes.size(); ++i) {
      std::optional<int64_t> axis = normalizeAxis(axes[i], rank);
      if (!axis || seen[*axis])
        return emitNodeError(op) << "invalid or repeated axis " << axes[i],
               failure();
      seen[*axis] = true;
      int64_t dim = inputType.getDimSize(*axis);
      int64_t start = (*starts)[i], end = (*ends)[i], step = steps[i];
      if (step == 0)
        return emitNodeError(op) << "step 0", failure();
      if (start < 0)
        start = start < -dim ? 0 : start + dim;
      if (end < 0)
        end = end < -dim ? -1 : end + dim;
      if (step > 0) {
        start = std::clamp<int64_t>(start, 0, dim);
        end = std::clamp<int64_t>(end, 0, dim);
      } else {
        start = std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
        end = std::clamp<int64_t>(end, -1, dim - 1);
      }
      int64_t size = 0;
      if (step > 0 && end > start)
        size = (end - start + step - 1) / step;
      else if (step < 0 && start > end)
        size = (start - end + (-step) - 1) / (-step);
      offsets[*axis] = start;
      sizes[*axis] = size;
      strides[*axis] = step;
    }
    if (ArrayRef<int64_t>(sizes) != resultType.getShape())
      return emitNodeError(op) << "result type " << resultType
                               << " does not match the slice",
             failure();
    if (resultType.getNumElements() == 0) {
      rewriter.replaceOp(op, createEmptyTensor(rewriter, loc, resultType));
      return success();
    }
    if (llvm::all_of(strides, [](int64_t s) { return s > 0; })) {
      rewriter.replaceOp(op, tensor::ExtractSliceOp::create(
                                 rewriter, loc, resultType, adaptor.getData(),
                                 indexAttrs(rewriter, offsets),
                                 indexAttrs(rewriter, sizes),
                                 indexAttrs(rewriter, strides)));
      return success();
    }
    // Negative steps: read input[offset + i * stride] per dim.
    Value data = adaptor.getData();
    rewriter.replaceOp(
        op, createIndexedGeneric(
                rewriter, loc, resultType,
                [&](OpBuilder &b, Location l, ArrayRef<Value> ivs) -> Value {
                  SmallVector<Value> coords;
                  for (int64_t d = 0; d < rank; ++d) {
                    Value c = ivs[d];
                    if (strides[d] != 1)
                      c = arith::MulIOp::create(
                          b, l, c, indexConstant(b, l, strides[d]));
                    if (offsets[d] != 0)
                      c = arith::AddIOp::create(
                          b, l, c, indexConstant(b, l, offsets[d]));
                    coords.push_back(c);
                  }
                  return tensor::ExtractOp::create(b, l, data, coords);
                }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Gather, GatherElements
//===----------------------------------------------------------------------===//

/// `index` (an integer scalar of the indices' type) as an `index` value,
/// made non-negative (+ dim) and clamped into [0, dim - 1].
Value normalizeAndClamp(OpBuilder &b, Location loc, Value index, int64_t dim) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
  Value zero = indexConstant(b, loc, 0);
  Value isNeg =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
  Value shifted = arith::AddIOp::create(b, loc, i, indexConstant(b, loc, dim));
  i = arith::SelectOp::create(b, loc, isNeg, shifted, i);
  i = arith::MaxSIOp::create(b, loc, i, zero);
  return arith::MinSIOp::create(b, loc, i, indexConstant(b, loc, dim - 1));
}

/// Emits kiln.check that every element of `indices` lies in [-dim, dim).
void emitIndexCheck(OpBuilder &b, Location loc, Operation *op, Value indices,
                    int64_t dim) {
  auto type = cast<RankedTensorType>(indices.getType());
  Type elemType = type.getElementType();
  int64_t rank = type.getRank();
  auto okType = RankedTensorType::get({}, b.getI1Type());
  Value init = createFilledTensor(
      b, loc, okType, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 AffineMap::get(rank, 0, {}, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  Value ok =
      linalg::GenericOp::create(
          b, loc, TypeRange{okType}, ValueRange{indices}, ValueRange{init},
          maps, iterators,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value lo = createIntConstant(nb, l, elemType, -dim);
            Value hi = createIntConstant(nb, l, elemType, dim);
            Value geLo = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::sge, args[0], lo);
            Value ltHi = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::slt, args[0], hi);
            Value inRange = arith::AndIOp::create(nb, l, geLo, ltHi);
            linalg::YieldOp::create(
                nb, l, arith::AndIOp::create(nb, l, inRange, args[1])
                           .getResult());
          })
          .getResult(0);
  kiln::CheckOp::create(b, loc, ok,
                        getNodeMessagePrefix(op) + "index out of range");
}

/// Reads the constant indices behind `original`: std::nullopt when not a
/// constant; emits an error and sets `failed` when one is out of range
/// [-dim, dim). Returns the indices made non-negative.
std::optional<SmallVector<int64_t>>
readConstantIndices(Operation *op, Value original, int64_t dim, bool &failed) {
  failed = false;
  auto values = readConstantInts(original);
  if (!values)
    return std::nullopt;
  for (int64_t &v : *values) {
    if (v < -dim || v >= dim) {
      emitNodeError(op) << "index " << v << " out of range for a dimension of "
                        << dim;
      failed = true;
      return std::nullopt;
    }
    if (v < 0)
      v += dim;
  }
  return values;
}

struct GatherLowering : OpConversionPattern<onnx::GatherOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // Symbolic dims are allowed anywhere but the gathered axis
    // (kiln-symbolic-shapes checked it).
    auto dataType = dyn_cast<RankedTensorType>(adaptor.getData().getType());
    auto indicesType =
        dyn_cast<RankedTensorType>(adaptor.getIndices().getType());
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!dataType || !indicesType || !resultType)
      return emitNodeError(op) << "needs ranked tensors", failure();
    if (!isa<IntegerType>(indicesType.getElementType()))
      return emitNodeError(op) << "indices must be integers", failure();
    int64_t rank = dataType.getRank();
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), rank);
    if (!axis)
      return emitNodeError(op) << "axis " << op.getAxis() << " out of range",
             failure();
    int64_t dim = dataType.getDimSize(*axis);
    int64_t indRank = indicesType.getRank();
    SmallVector<int64_t> expected(dataType.getShape().take_front(*axis));
    llvm::append_range(expected, indicesType.getShape());
    llvm::append_range(expected, dataType.getShape().drop_front(*axis + 1));
    if (ArrayRef<int64_t>(expected) != resultType.getShape())
      return emitNodeError(op) << "result type " << resultType
                               << " does not match the operands",
             failure();
    bool dynamic = !resultType.hasStaticShape();
    if (ShapedType::isDynamic(dim)) {
      // One constant index within the symbol's minimum (kiln-symbolic-shapes
      // checked it): the slice below.
      auto index = readConstantInts(op.getIndices());
      if (indRank != 0 || !index || (*index)[0] < 0)
        return emitNodeError(op) << "gathering along a symbolic axis is not "
                                    "supported yet",
               failure();
      dim = (*index)[0] + 1;
    }
    if (!dynamic && resultType.getNumElements() == 0) {
      rewriter.replaceOp(op, createEmptyTensor(rewriter, loc, resultType));
      return success();
    }
    if (dim == 0)
      return emitNodeError(op) << "gathering from an empty dimension",
             failure();

    Value data = adaptor.getData();
    Value indices = adaptor.getIndices();
    bool failed = false;
    std::optional<SmallVector<int64_t>> constant =
        readConstantIndices(op, op.getIndices(), dim, failed);
    if (failed)
      return failure();
    if (constant && indRank == 0 && dynamic) {
      // One index of symbolic data: a slice of run-time sizes, collapsed.
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
          sizes = tensor::getMixedSizes(rewriter, loc, data),
          strides(rank, rewriter.getIndexAttr(1));
      offsets[*axis] = rewriter.getIndexAttr((*constant)[0]);
      sizes[*axis] = rewriter.getIndexAttr(1);
      Value slice = tensor::ExtractSliceOp::create(rewriter, loc, data, offsets,
                                                   sizes, strides);
      SmallVector<ReassociationIndices> groups;
      for (int64_t i = 0; i < rank; ++i) {
        if (i == *axis && i > 0)
          groups.back().push_back(i);
        else if (i == *axis + 1 && *axis == 0)
          groups.back().push_back(i);
        else
          groups.push_back({i});
      }
      rewriter.replaceOp(op, tensor::CollapseShapeOp::create(
                                 rewriter, loc, resultType, slice, groups));
      return success();
    }
    if (constant && indRank == 0) {
      // One index: a slice.
      SmallVector<int64_t> offsets(rank, 0), sizes(dataType.getShape()),
          strides(rank, 1);
      offsets[*axis] = (*constant)[0];
      sizes[*axis] = 1;
      Value slice = tensor::ExtractSliceOp::create(
          rewriter, loc, data, indexAttrs(rewriter, offsets),
          indexAttrs(rewriter, sizes), indexAttrs(rewriter, strides));
      rewriter.replaceOp(op, createReshape(rewriter, loc, slice, resultType));
      return success();
    }
    if (constant) {
      // Normalized constant indices need no clamp and no run-time check.
      auto type = RankedTensorType::get(indicesType.getShape(),
                                        rewriter.getI64Type());
      indices = arith::ConstantOp::create(
          rewriter, loc, DenseIntElementsAttr::get(type, *constant));
    } else {
      emitIndexCheck(rewriter, loc, op, indices, dim);
    }

    int64_t outRank = resultType.getRank();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> indexExprs;
    for (int64_t i = 0; i < indRank; ++i)
      indexExprs.push_back(getAffineDimExpr(*axis + i, ctx));
    SmallVector<AffineMap> maps = {
        AffineMap::get(outRank, 0, indexExprs, ctx),
        AffineMap::getMultiDimIdentityMap(outRank, ctx)};
    SmallVector<Value> dynSizes;
    for (int64_t i = 0; i < outRank; ++i) {
      if (!resultType.isDynamicDim(i))
        continue;
      if (i < *axis)
        dynSizes.push_back(tensor::DimOp::create(rewriter, loc, data, i));
      else if (i < *axis + indRank)
        dynSizes.push_back(
            tensor::DimOp::create(rewriter, loc, indices, i - *axis));
      else
        dynSizes.push_back(
            tensor::DimOp::create(rewriter, loc, data, i - indRank + 1));
    }
    Value empty = tensor::EmptyOp::create(rewriter, loc, resultType, dynSizes);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{resultType}, ValueRange{indices},
            ValueRange{empty}, maps, getParallelIterators(outRank),
            [&](OpBuilder &b, Location l, ValueRange args) {
              SmallVector<Value> coords;
              for (int64_t d = 0; d < *axis; ++d)
                coords.push_back(linalg::IndexOp::create(b, l, d));
              coords.push_back(normalizeAndClamp(b, l, args[0], dim));
              for (int64_t d = *axis + 1; d < rank; ++d)
                coords.push_back(
                    linalg::IndexOp::create(b, l, d - 1 + indRank));
              linalg::YieldOp::create(
                  b, l,
                  tensor::ExtractOp::create(b, l, data, coords).getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GatherElementsLowering : OpConversionPattern<onnx::GatherElementsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::GatherElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType dataType = getStaticTensorType(adaptor.getData());
    RankedTensorType indicesType = getStaticTensorType(adaptor.getIndices());
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    if (!dataType || !indicesType || !resultType)
      return emitNodeError(op) << "needs static shapes", failure();
    if (!isa<IntegerType>(indicesType.getElementType()))
      return emitNodeError(op) << "indices must be integers", failure();
    int64_t rank = dataType.getRank();
    std::optional<int64_t> axis = normalizeAxis(op.getAxis(), rank);
    if (!axis || indicesType.getRank() != rank ||
        indicesType.getShape() != resultType.getShape())
      return emitNodeError(op) << "invalid axis or shapes", failure();
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && indicesType.getDimSize(d) > dataType.getDimSize(d))
        return emitNodeError(op) << "indices " << indicesType
                                 << " exceed the data " << dataType,
               failure();
    if (resultType.getNumElements() == 0) {
      rewriter.replaceOp(op, createEmptyTensor(rewriter, loc, resultType));
      return success();
    }
    int64_t dim = dataType.getDimSize(*axis);
    if (dim == 0)
      return emitNodeError(op) << "gathering from an empty dimension",
             failure();
    Value data = adaptor.getData();
    Value indices = adaptor.getIndices();
    bool failed = false;
    std::optional<SmallVector<int64_t>> constant =
        readConstantIndices(op, op.getIndices(), dim, failed);
    if (failed)
      return failure();
    if (constant) {
      auto type = RankedTensorType::get(indicesType.getShape(),
                                        rewriter.getI64Type());
      indices = arith::ConstantOp::create(
          rewriter, loc, DenseIntElementsAttr::get(type, *constant));
    } else {
      emitIndexCheck(rewriter, loc, op, indices, dim);
    }
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps(2,
                                AffineMap::getMultiDimIdentityMap(rank, ctx));
    Value empty = createEmptyTensor(rewriter, loc, resultType);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{resultType}, ValueRange{indices},
            ValueRange{empty}, maps, getParallelIterators(rank),
            [&](OpBuilder &b, Location l, ValueRange args) {
              SmallVector<Value> coords;
              for (int64_t d = 0; d < rank; ++d)
                coords.push_back(d == *axis
                                     ? normalizeAndClamp(b, l, args[0], dim)
                                     : linalg::IndexOp::create(b, l, d)
                                           .getResult());
              linalg::YieldOp::create(
                  b, l,
                  tensor::ExtractOp::create(b, l, data, coords).getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// GatherND
//===----------------------------------------------------------------------===//

// out[b..., s...] = data[b[:batch_dims]..., indices[b..., 0..k-1], s...]: one
// generic over the output reading each index component (clamped; each
// component's range checked at run time through kiln.check).
struct GatherNDLowering : OpConversionPattern<onnx::GatherNDOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::GatherNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType dataType = getStaticTensorType(adaptor.getData());
    // The indices' leading dims (not batch_dims', not the last) may be
    // symbols or run dims (NonZero -> Transpose -> GatherND).
    auto indexType = dyn_cast<RankedTensorType>(adaptor.getIndices().getType());
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!dataType || !indexType || !resultType || indexType.getRank() < 1 ||
        indexType.isDynamicDim(indexType.getRank() - 1))
      return emitNodeError(op) << "needs static shapes", failure();
    int64_t bd = op.getBatchDims(), k = indexType.getShape().back();
    int64_t q = indexType.getRank();
    if (bd < 0 || bd >= q || k < 1 || bd + k > dataType.getRank())
      return emitNodeError(op) << "batch_dims " << bd << " and index depth "
                               << k << " do not fit data " << dataType,
             failure();
    for (int64_t d = 0; d < bd; ++d)
      if (indexType.isDynamicDim(d))
        return emitNodeError(op) << "needs static batch dims", failure();
    // Each component j of the index tuples addresses data dim bd + j.
    for (int64_t j = 0; j < k; ++j) {
      SmallVector<OpFoldResult> offsets(q, rewriter.getIndexAttr(0)),
          sizes, strides(q, rewriter.getIndexAttr(1));
      offsets[q - 1] = rewriter.getIndexAttr(j);
      for (int64_t d = 0; d < q; ++d)
        sizes.push_back(
            d == q - 1 ? OpFoldResult(rewriter.getIndexAttr(1))
            : indexType.isDynamicDim(d)
                ? OpFoldResult(tensor::DimOp::create(
                                   rewriter, loc, adaptor.getIndices(), d)
                                   .getResult())
                : OpFoldResult(rewriter.getIndexAttr(indexType.getDimSize(d))));
      Value component = tensor::ExtractSliceOp::create(
          rewriter, loc, adaptor.getIndices(), offsets, sizes, strides);
      emitIndexCheck(rewriter, loc, op, component, dataType.getDimSize(bd + j));
    }
    int64_t rank = resultType.getRank();
    MLIRContext *ctx = rewriter.getContext();
    // The result's dims: the indices' but the last, then data's.
    SmallVector<Value> dynSizes;
    for (int64_t d = 0; d < rank; ++d)
      if (resultType.isDynamicDim(d)) {
        if (d >= q - 1)
          return emitNodeError(op) << "needs static shapes", failure();
        dynSizes.push_back(
            tensor::DimOp::create(rewriter, loc, adaptor.getIndices(), d));
      }
    Value empty = tensor::EmptyOp::create(rewriter, loc, resultType, dynSizes);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{resultType}, ValueRange{},
            ValueRange{empty},
            SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx)},
            getParallelIterators(rank),
            [&](OpBuilder &b, Location l, ValueRange) {
              SmallVector<Value> iv;
              for (int64_t d = 0; d < rank; ++d)
                iv.push_back(linalg::IndexOp::create(b, l, d));
              SmallVector<Value> coords(iv.begin(), iv.begin() + bd);
              for (int64_t j = 0; j < k; ++j) {
                SmallVector<Value> at(iv.begin(), iv.begin() + (q - 1));
                at.push_back(indexConstant(b, l, j));
                Value raw = tensor::ExtractOp::create(b, l, adaptor.getIndices(), at);
                coords.push_back(normalizeAndClamp(b, l, raw, dataType.getDimSize(bd + j)));
              }
              coords.append(iv.begin() + (q - 1), iv.end());
              linalg::YieldOp::create(
                  b, l, tensor::ExtractOp::create(b, l, adaptor.getData(), coords)
                            .getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Expand, Tile
//===----------------------------------------------------------------------===//

struct ExpandLowering : OpConversionPattern<onnx::ExpandOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType inputType = getStaticTensorType(adaptor.getInput());
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    if (!inputType || !resultType)
      return emitNodeError(op) << "needs static shapes", failure();
    if (!isBroadcastableTo(inputType.getShape(), resultType.getShape()))
      return emitNodeError(op) << inputType << " does not broadcast to "
                               << resultType,
             failure();
    if (inputType.getShape() == resultType.getShape()) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    rewriter.replaceOp(
        op, createElementwiseGeneric(
                rewriter, op.getLoc(), resultType, adaptor.getInput(),
                [](OpBuilder &, Location, ValueRange args) { return args[0]; }));
    return success();
  }
};

struct TileLowering : OpConversionPattern<onnx::TileOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::TileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inputType = getStaticTensorType(adaptor.getInput());
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    if (!inputType || !resultType || inputType.getRank() != resultType.getRank())
      return emitNodeError(op) << "needs static shapes of equal rank",
             failure();
    if (resultType.getNumElements() == 0) {
      rewriter.replaceOp(op, createEmptyTensor(rewriter, loc, resultType));
      return success();
    }
    int64_t rank = inputType.getRank();
    // [r0, d0, r1, d1, ...] reading input[i1, i3, ...], then collapsed.
    SmallVector<int64_t> pairShape;
    SmallVector<AffineExpr> exprs;
    MLIRContext *ctx = rewriter.getContext();
    for (int64_t d = 0; d < rank; ++d) {
      int64_t in = inputType.getDimSize(d), out = resultType.getDimSize(d);
      if (in == 0 || out % in != 0)
        return emitNodeError(op) << "result " << resultType
                                 << " is not a tiling of " << inputType,
               failure();
      pairShape.append({out / in, in});
      exprs.push_back(getAffineDimExpr(2 * d + 1, ctx));
    }
    auto pairType =
        RankedTensorType::get(pairShape, resultType.getElementType());
    SmallVector<AffineMap> maps = {
        AffineMap::get(2 * rank, 0, exprs, ctx),
        AffineMap::getMultiDimIdentityMap(2 * rank, ctx)};
    Value empty = createEmptyTensor(rewriter, loc, pairType);
    Value tiled = linalg::GenericOp::create(
                      rewriter, loc, TypeRange{pairType},
                      ValueRange{adaptor.getInput()}, ValueRange{empty}, maps,
                      getParallelIterators(2 * rank),
                      [](OpBuilder &b, Location l, ValueRange args) {
                        linalg::YieldOp::create(b, l, args[0]);
                      })
                      .getResult(0);
    SmallVector<ReassociationIndices> pairs;
    for (int64_t d = 0; d < rank; ++d)
      pairs.push_back({2 * d, 2 * d + 1});
    rewriter.replaceOp(op, tensor::CollapseShapeOp::create(
                               rewriter, loc, resultType, tiled, pairs));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

struct PadLowering : OpConversionPattern<onnx::PadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // Symbolic dims are permuted like the others.
    auto inputType = dyn_cast<RankedTensorType>(adaptor.getData().getType());
    RankedTensorType resultType =
        getConvertedRankedResultType(getTypeConverter(), op);
    if (!inputType || !resultType)
      return emitNodeError(op) << "needs ranked tensors", failure();
    int64_t rank = inputType.getRank();
    Type elemType = resultType.getElementType();
    auto pads = readConstantInts(op.getPads());
    if (!pads)
      return emitNodeError(op) << "pads must be a constant", failure();
    SmallVector<int64_t> axes;
    if (isNoneValue(op.getAxes())) {
      for (int64_t i = 0; i < rank; ++i)
        axes.push_back(i);
    } else if (auto values = readConstantInts(op.getAxes())) {
      axes = *values;
    } else {
      return emitNodeError(op) << "axes must be a constant", failure();
    }
    if (pads->size() != 2 * axes.size())
      return emitNodeError(op) << "pads must have 2 values per axis",
             failure();
    SmallVector<int64_t> low(rank, 0), high(rank, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      std::optional<int64_t> axis = normalizeAxis(axes[i], rank);
      if (!axis)
        return emitNodeError(op) << "axis " << axes[i] << " out of range",
               failure();
      low[*axis] = (*pads)[i];
      high[*axis] = (*pads)[axes.size() + i];
    }
    for (int64_t d = 0; d < rank; ++d) {
      // A symbolic dim (a batch) is never padded (shape inference).
      if (inputType.isDynamicDim(d) || resultType.isDynamicDim(d)) {
        if (inputType.isDynamicDim(d) != resultType.isDynamicDim(d) ||
            low[d] || high[d])
          return emitNodeError(op) << "cannot pad symbolic axis " << d,
                 failure();
        continue;
      }
      if (inputType.getDimSize(d) + low[d] + high[d] !=
          resultType.getDimSize(d))
        return emitNodeError(op) << "result type " << resultType
                                 << " does not match the pads",
               failure();
    }

    // Negative pads crop first.
    Value data = adaptor.getData();
    SmallVector<int64_t> cropOffsets(rank, 0), cropSizes(inputType.getShape());
    bool crop = false;
    for (int64_t d = 0; d < rank; ++d) {
      if (low[d] < 0) {
        cropOffsets[d] = -low[d];
        cropSizes[d] += low[d];
        low[d] = 0;
        crop = true;
      }
      if (high[d] < 0) {
        cropSizes[d] += high[d];
        high[d] = 0;
        crop = true;
      }
    }
    if (crop && !inputType.hasStaticShape())
      return emitNodeError(op) << "negative pads with symbolic dims are not "
                                  "supported yet",
             failure();
    if (crop) {
      data = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get(cropSizes, elemType), data,
          indexAttrs(rewriter, cropOffsets), indexAttrs(rewriter, cropSizes),
          indexAttrs(rewriter, SmallVector<int64_t>(rank, 1)));
    }
    ArrayRef<int64_t> srcShape = cast<RankedTensorType>(data.getType()).getShape();
    if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
        llvm::all_of(high, [](int64_t v) { return v == 0; })) {
      rewriter.replaceOp(op, data);
      return success();
    }

    StringRef mode = op.getMode();
    if (mode == "constant") {
      Value padValue;
      if (isNoneValue(op.getConstantValue()) ||
          (isa<RankedTensorType>(op.getConstantValue().getType()) &&
           cast<RankedTensorType>(op.getConstantValue().getType())
                   .getNumElements() == 0)) {
        padValue = createScalarConstant(rewriter, loc, elemType, 0.0);
      } else {
        RankedTensorType cvType =
            getStaticTensorType(adaptor.getConstantValue());
        if (!cvType || cvType.getNumElements() != 1)
          return emitNodeError(op) << "constant_value must be one element",
                 failure();
        SmallVector<Value> zeros(cvType.getRank(),
                                 indexConstant(rewriter, loc, 0));
        padValue = tensor::ExtractOp::create(
            rewriter, loc, adaptor.getConstantValue(), zeros);
      }
      rewriter.replaceOp(op, tensor::PadOp::create(
                                 rewriter, loc, resultType, data,
                                 indexAttrs(rewriter, low),
                                 indexAttrs(rewriter, high), padValue)
                                 .getResult());
      return success();
    }
    if (mode != "edge" && mode != "reflect" && mode != "wrap")
      return emitNodeError(op) << "unsupported Pad mode '" << mode << "'",
             failure();
    for (int64_t d = 0; d < rank; ++d)
      if ((low[d] || high[d]) && srcShape[d] == 0)
        return emitNodeError(op) << "cannot pad an empty dimension in mode '"
                                 << mode << "'",
               failure();
    SmallVector<int64_t> srcDims(srcShape);
    rewriter.replaceOp(
        op,
        createIndexedGeneric(
            rewriter, loc, resultType, data,
            [&](OpBuilder &b, Location l, ArrayRef<Value> ivs) -> Value {
              SmallVector<Value> coords;
              for (int64_t d = 0; d < rank; ++d) {
                int64_t n = srcDims[d];
                if (!low[d] && !high[d]) {
                  coords.push_back(ivs[d]);
                  continue;
                }
                Value zero = indexConstant(b, l, 0);
                Value j = arith::SubIOp::create(b, l, ivs[d],
                                                indexConstant(b, l, low[d]));
                Value src;
                if (mode == "edge") {
                  src = arith::MaxSIOp::create(b, l, j, zero);
                  src = arith::MinSIOp::create(b, l, src,
                                               indexConstant(b, l, n - 1));
                } else if (mode == "wrap" || n == 1) {
                  // ((j mod n) + n) mod n; reflect of a 1-element dim is 0.
                  Value nv = indexConstant(b, l, n);
                  src = arith::RemSIOp::create(b, l, j, nv);
                  src = arith::AddIOp::create(b, l, src, nv);
                  src = arith::RemSIOp::create(b, l, src, nv);
                } else {
                  // Reflect with period p = 2(n-1): m = j mod p; m < n ? m
                  // : p - m.
                  Value p = indexConstant(b, l, 2 * (n - 1));
                  Value m = arith::RemSIOp::create(b, l, j, p);
                  m = arith::AddIOp::create(b, l, m, p);
                  m = arith::RemSIOp::create(b, l, m, p);
                  Value inside = arith::CmpIOp::create(
                      b, l, arith::CmpIPredicate::slt, m,
                      indexConstant(b, l, n));
                  Value mirrored = arith::SubIOp::create(b, l, p, m);
                  src = arith::SelectOp::create(b, l, inside, m, mirrored);
                }
                coords.push_back(src);
              }
              return tensor::ExtractOp::create(b, l, data, coords);
            }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

struct DepthToSpaceLowering : OpConversionPattern<onnx::DepthToSpaceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::DepthToSpaceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inputType = getStaticTensorType(adaptor.getInput());
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    int64_t bs = op.getBlocksize();
    if (!inputType || !resultType || inputType.getRank() != 4 || bs < 1)
      return emitNodeError(op) << "needs a static 4-D input", failure();
    int64_t n = inputType.getDimSize(0), c = inputType.getDimSize(1),
            h = inputType.getDimSize(2), w = inputType.getDimSize(3);
    if (c % (bs * bs) != 0)
      return emitNodeError(op) << "channels not divisible by blocksize^2",
             failure();
    int64_t cOut = c / (bs * bs);
    Type elemType = resultType.getElementType();
    SmallVector<int64_t> shape6, perm;
    if (op.getMode() == "DCR") {
      shape6 = {n, bs, bs, cOut, h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (op.getMode() == "CRD") {
      shape6 = {n, cOut, bs, bs, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      return emitNodeError(op) << "unsupported mode '" << op.getMode() << "'",
             failure();
    }
    Value v = createReshape(rewriter, loc, adaptor.getInput(),
                            RankedTensorType::get(shape6, elemType));
    v = createTranspose(rewriter, loc, v, perm);
    rewriter.replaceOp(op, createReshape(rewriter, loc, v, resultType));
    return success();
  }
};

struct SpaceToDepthLowering : OpConversionPattern<onnx::SpaceToDepthOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::SpaceToDepthOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inputType = getStaticTensorType(adaptor.getInput());
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    int64_t bs = op.getBlocksize();
    if (!inputType || !resultType || inputType.getRank() != 4 || bs < 1)
      return emitNodeError(op) << "needs a static 4-D input", failure();
    int64_t n = inputType.getDimSize(0), c = inputType.getDimSize(1),
            h = inputType.getDimSize(2), w = inputType.getDimSize(3);
    if (h % bs != 0 || w % bs != 0)
      return emitNodeError(op) << "spatial dims not divisible by blocksize",
             failure();
    // DCR: the block offsets outermost in the depth; CRD: the channel.
    SmallVector<int64_t> perm;
    if (op.getMode() == "DCR")
      perm = {0, 3, 5, 1, 2, 4};
    else if (op.getMode() == "CRD")
      perm = {0, 1, 3, 5, 2, 4};
    else
      return emitNodeError(op) << "unsupported mode '" << op.getMode() << "'",
             failure();
    Type elemType = resultType.getElementType();
    Value v = createReshape(
        rewriter, loc, adaptor.getInput(),
        RankedTensorType::get({n, c, h / bs, bs, w / bs, bs}, elemType));
    v = createTranspose(rewriter, loc, v, perm);
    rewriter.replaceOp(op, createReshape(rewriter, loc, v, resultType));
    return success();
  }
};

} // namespace

void populateDataMovementPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns) {
  patterns.add<ReshapeLikeLowering<onnx::ReshapeOp>,
               ReshapeLikeLowering<onnx::FlattenOp>,
               ReshapeLikeLowering<onnx::SqueezeOp>,
               ReshapeLikeLowering<onnx::UnsqueezeOp>, TransposeLowering,
               ConcatLowering, SplitLowering, SliceLowering, GatherLowering,
               GatherElementsLowering, GatherNDLowering, ExpandLowering,
               TileLowering,
               PadLowering, DepthToSpaceLowering, SpaceToDepthLowering>(
      converter, patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
