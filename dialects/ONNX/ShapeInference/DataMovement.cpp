//===- DataMovement.cpp - Shape inference of data movement ops ------------===//
//
// Flatten, Concat, Reshape, Transpose, Split, Gather*, Unsqueeze, Squeeze,
// Slice, Shape, Size, Expand, Tile, Pad, DepthToSpace, SpaceToDepth, OneHot,
// Resize, GridSample.
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/ControlFlow.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx {
namespace {

/// A dimension computed in floating point (Resize's scales), as an integer; an
/// error naming `input` when it is not finite or over the elements limit.
FailureOr<int64_t> toDimension(Operation *op, double value, StringRef input) {
  int64_t max = getCompileLimits().maxTensorElements;
  if (!(value >= 0) || value > static_cast<double>(max)) {
    emitNodeError(op) << "input '" << input << "' makes an output dimension of "
                      << value << ", outside [0, " << max
                      << "] (--max-tensor-elements)";
    return failure();
  }
  return static_cast<int64_t>(value);
}

Type getI64(Operation *op) { return IntegerType::get(op->getContext(), 64); }

//===----------------------------------------------------------------------===//
// Flatten
//===----------------------------------------------------------------------===//

// Flatten: (prod(d[:axis]), prod(d[axis:])), axis in [-r, r].
LogicalResult inferFlatten(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  if (failed(x))
    return failure();
  int64_t rank = x->getRank(), axis = getIntAttr(op, "axis", 1);
  if (axis < -rank || axis > rank) {
    emitNodeError(op) << "axis " << axis << " is out of range for rank " << rank
                      << " (expected [" << -rank << ", " << rank << "])";
    return failure();
  }
  if (axis < 0)
    axis += rank;
  ArrayRef<int64_t> shape = x->getShape();
  return setResultType(op, 0,
                       {getNumElements(shape.take_front(axis)),
                        getNumElements(shape.drop_front(axis))},
                       x->getElementType());
}

//===----------------------------------------------------------------------===//
// GridSample
//===----------------------------------------------------------------------===//

// GridSample(X [N, C, D1..Dk], grid [N, O1..Ok, k]) -> [N, C, O1..Ok].
LogicalResult inferGridSample(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  FailureOr<RankedTensorType> grid = getInputType(op, 1, "grid");
  if (failed(x) || failed(grid))
    return failure();
  int64_t k = x->getRank() - 2;
  if (k < 1 || grid->getRank() != k + 2 || grid->getShape().back() != k ||
      grid->getDimSize(0) != x->getDimSize(0)) {
    emitNodeError(op) << "grid " << *grid << " does not fit X " << *x
                      << " (expected [N, out..., " << k << "])";
    return failure();
  }
  SmallVector<int64_t> shape = {x->getDimSize(0), x->getDimSize(1)};
  for (int64_t d : grid->getShape().drop_front().drop_back())
    shape.push_back(d);
  return setResultType(op, 0, shape, x->getElementType());
}

// AffineGrid(theta [N, k, k + 1], size [N, C, D1..Dk]) -> [N, D1..Dk, k]
// (k = 2 or 3).
LogicalResult inferAffineGrid(Operation *op) {
  FailureOr<RankedTensorType> theta = getInputType(op, 0, "theta");
  if (failed(theta))
    return failure();
  FailureOr<SmallVector<int64_t>> size = getConstantInts(op, 1, "size");
  if (failed(size))
    return failure();
  int64_t k = static_cast<int64_t>(size->size()) - 2;
  if ((k != 2 && k != 3) || theta->getRank() != 3 ||
      theta->getDimSize(0) != (*size)[0] || theta->getDimSize(1) != k ||
      theta->getDimSize(2) != k + 1 ||
      !isa<FloatType>(theta->getElementType())) {
    emitNodeError(op) << "theta " << *theta << " does not fit size ["
                      << llvm::make_range(size->begin(), size->end())
                      << "] (expected a float [N, k, k + 1] for a size of "
                         "[N, C, D1..Dk], k 2 or 3)";
    return failure();
  }
  SmallVector<int64_t> shape = {(*size)[0]};
  shape.append(size->begin() + 2, size->end());
  shape.push_back(k);
  return setResultType(op, 0, shape, theta->getElementType());
}

//===----------------------------------------------------------------------===//
// ReverseSequence
//===----------------------------------------------------------------------===//

// Same as the input; sequence_lens is [batch].
LogicalResult inferReverseSequence(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  FailureOr<RankedTensorType> lens = getInputType(op, 1, "sequence_lens");
  if (failed(x) || failed(lens))
    return failure();
  int64_t batchAxis = getIntAttr(op, "batch_axis", 1),
          timeAxis = getIntAttr(op, "time_axis", 0);
  if (x->getRank() < 2 || batchAxis == timeAxis || batchAxis < 0 ||
      batchAxis > 1 || timeAxis < 0 || timeAxis > 1) {
    emitNodeError(op) << "batch_axis and time_axis must be 0 and 1 (in either "
                         "order) of an input of rank >= 2, got "
                      << batchAxis << " and " << timeAxis << " for " << *x;
    return failure();
  }
  if (lens->getRank() != 1 || lens->getDimSize(0) != x->getDimSize(batchAxis) ||
      !lens->getElementType().isInteger(64)) {
    emitNodeError(op) << "sequence_lens must be int64 [" << x->getDimSize(batchAxis)
                      << "], got " << *lens;
    return failure();
  }
  return setResultType(op, 0, x->getShape(), x->getElementType());
}

//===----------------------------------------------------------------------===//
// Concat
//===----------------------------------------------------------------------===//

LogicalResult inferConcat(Operation *op) {
  if (op->getNumOperands() == 0) {
    emitNodeError(op) << "expects at least one input";
    return failure();
  }
  SmallVector<RankedTensorType> types;
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i) {
    FailureOr<RankedTensorType> t = getInputType(op, i, "inputs");
    if (failed(t))
      return failure();
    types.push_back(*t);
  }
  if (failed(checkSameElementType(op, types)))
    return failure();
  int64_t rank = types[0].getRank();
  FailureOr<int64_t> axis = normalizeAxis(op, getIntAttr(op, "axis", 0), rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(types[0].getShape());
  shape[*axis] = 0;
  for (auto [i, t] : llvm::enumerate(types)) {
    if (t.getRank() != rank) {
      emitNodeError(op) << "input " << i << " " << t << " has rank "
                        << t.getRank() << ", expected " << rank;
      return failure();
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != *axis && t.getDimSize(d) != shape[d]) {
        emitNodeError(op) << "input " << i << " " << t
                          << " differs from input 0 " << types[0]
                          << " in dimension " << d << " (only axis " << *axis
                          << " may differ)";
        return failure();
      }
    }
    shape[*axis] += t.getDimSize(*axis);
  }
  return setResultType(op, 0, shape, types[0].getElementType());
}

//===----------------------------------------------------------------------===//
// Reshape
//===----------------------------------------------------------------------===//

// Reshape: shape is a constant; 0 copies the input dim (allowzero = 0) or means
// 0 (allowzero = 1); one -1 is inferred.
LogicalResult inferReshape(Operation *op) {
  FailureOr<RankedTensorType> data = getInputType(op, 0, "data");
  if (failed(data))
    return failure();
  // A shape computed from symbolic dims (Shape -> Gather -> Concat): each
  // element a size, 0, -1 or a symbolic dim (`?`); kiln-symbolic-shapes
  // gives the `?`s their expressions and makes the shape a constant. A -1 is
  // static when every symbolic dim of data is taken whole, by a 0 at its axis
  // or by an element that is that dim of data (`x.view(x.size(0), -1)`): it
  // is then data's static dims over the shape's sizes.
  if (!getConstantAttr(op->getOperand(1)))
    if (std::optional<SmallVector<ShapeValue>> values =
            getShapeValueSources(op->getOperand(1));
        values && llvm::any_of(*values, [](const ShapeValue &v) {
          return ShapedType::isDynamic(v.value);
        })) {
      bool allowZero = getIntAttr(op, "allowzero", 0) != 0;
      int64_t rank = data->getRank();
      SmallVector<bool> taken(rank, false);
      bool resolvable = true;
      int64_t inferred = -1, known = 1;
      auto take = [&](int64_t axis) {
        if (taken[axis])
          resolvable = false;
        taken[axis] = true;
      };
      SmallVector<int64_t> shape;
      for (auto [i, v] : llvm::enumerate(*values)) {
        int64_t d = v.value;
        if (d == 0 && !allowZero && static_cast<int64_t>(i) < rank) {
          shape.push_back(data->getDimSize(i));
          take(i);
        } else if (ShapedType::isDynamic(d)) {
          shape.push_back(ShapedType::kDynamic);
          if (v.source == op->getOperand(0) && v.axis < rank)
            take(v.axis);
          else
            resolvable = false; // a symbolic dim of something else
        } else if (d == -1) {
          if (inferred != -1)
            return emitNodeError(op) << "shape has more than one -1", failure();
          inferred = i;
          shape.push_back(ShapedType::kDynamic);
        } else if (d < 0) {
          return emitNodeError(op) << "shape has invalid dimension " << d,
                 failure();
        } else {
          shape.push_back(d);
          std::optional<int64_t> product = checkedMul(known, d);
          if (!product)
            return emitNodeError(op) << "shape's dimensions multiply to more "
                                        "than 64-bit integers hold",
                   failure();
          known = *product;
        }
      }
      int64_t rest = 1; // data's elements not taken whole
      for (int64_t i = 0; i < rank; ++i) {
        if (taken[i])
          continue;
        if (data->isDynamicDim(i))
          resolvable = false;
        else
          rest *= data->getDimSize(i);
      }
      if (inferred != -1 && resolvable) {
        if (known == 0 || rest % known != 0) {
          InFlightDiagnostic diag = emitNodeError(op);
          diag << "cannot reshape " << *data << " to [";
          llvm::interleaveComma(*values, diag, [&](const ShapeValue &v) {
            if (ShapedType::isDynamic(v.value))
              diag << "?";
            else
              diag << v.value;
          });
          diag << "]: the -1 would be " << rest << " elements over " << known
               << ", which do not divide";
          return failure();
        }
        shape[inferred] = rest / known;
      }
      return setResultType(op, 0, shape, data->getElementType());
    }
  // A shape the run computes (a graph input, ...): every dim is decided by
  // its values at run time (kiln-symbolic-shapes gives each a run symbol;
  // the lowering reads the shape and checks the element count).
  if (isRunTimeOperand(op, 1) && !getShapeValues(op->getOperand(1))) {
    FailureOr<int64_t> length = getRunTimeValuesLength(op, 1, "shape");
    if (failed(length))
      return failure();
    return setResultType(op, 0,
                         SmallVector<int64_t>(*length, ShapedType::kDynamic),
                         data->getElementType());
  }
  FailureOr<SmallVector<int64_t>> target = getConstantInts(op, 1, "shape");
  if (failed(target))
    return failure();
  bool allowZero = getIntAttr(op, "allowzero", 0) != 0;
  const SmallVector<int64_t> given = *target; // the loop below rewrites 0s
  SmallVector<int64_t> shape;
  int64_t inferred = -1, known = 1;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == -1) {
      if (inferred != -1) {
        emitNodeError(op) << "shape has more than one -1";
        return failure();
      }
      inferred = i;
      shape.push_back(-1);
      continue;
    }
    if (d < -1) {
      emitNodeError(op) << "shape has invalid dimension " << d;
      return failure();
    }
    if (d == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= data->getRank()) {
        emitNodeError(op) << "shape has 0 at index " << i
                          << " (copy the input dimension) but data " << *data
                          << " has rank " << data->getRank();
        return failure();
      }
      d = data->getDimSize(i);
    }
    shape.push_back(d);
    if (ShapedType::isDynamic(d))
      continue; // copied from a symbolic dim of data
    std::optional<int64_t> product = checkedMul(known, d);
    if (!product) {
      emitNodeError(op) << "shape's dimensions multiply to more than 64-bit "
                           "integers hold";
      return failure();
    }
    known = *product;
  }
  if (!data->hasStaticShape()) {
    // Symbolic data: a -1 is static when every symbolic dim of data is
    // copied in place by a 0 ([b, s, 8, 4] -> [0, 0, -1] gives 32), else
    // symbolic; kiln-symbolic-shapes checks that the element counts agree
    // and expresses the dim in the data's symbols.
    if (inferred != -1) {
      int64_t rest = 1, staticKnown = 1;
      bool staticRest = true;
      for (int64_t i = 0; i < data->getRank(); ++i) {
        bool copied = i < static_cast<int64_t>(given.size()) &&
                      given[i] == 0 && !allowZero;
        if (copied)
          continue;
        if (data->isDynamicDim(i))
          staticRest = false;
        else
          rest *= data->getDimSize(i);
      }
      for (int64_t d : given)
        if (d > 0)
          staticKnown *= d;
        else if (d == 0 && allowZero)
          staticKnown = 0;
      if (staticRest && (staticKnown == 0 || rest % staticKnown != 0)) {
        // Every symbolic dim is copied in place: the -1 is rest / staticKnown,
        // whatever the symbols' values.
        InFlightDiagnostic diag = emitNodeError(op);
        diag << "cannot reshape " << *data << " to [";
        llvm::interleaveComma(given, diag);
        diag << "]: the -1 would be " << rest << " elements over "
             << staticKnown << ", which do not divide";
        return failure();
      }
      shape[inferred] = staticRest ? rest / staticKnown : ShapedType::kDynamic;
    }
    return setResultType(op, 0, shape, data->getElementType());
  }
  int64_t total = data->getNumElements();
  if (inferred != -1) {
    if (known == 0 || total % known != 0) {
      InFlightDiagnostic diag = emitNodeError(op);
      diag << "cannot reshape " << *data << " (" << total << " elements) to [";
      llvm::interleaveComma(*target, diag);
      diag << "]";
      return failure();
    }
    shape[inferred] = total / known;
    known *= shape[inferred];
  }
  if (known != total) {
    InFlightDiagnostic diag = emitNodeError(op);
    diag << "cannot reshape " << *data << " (" << total << " elements) to [";
    llvm::interleaveComma(shape, diag);
    diag << "] (" << known << " elements)";
    return failure();
  }
  return setResultType(op, 0, shape, data->getElementType());
}

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

LogicalResult inferTranspose(Operation *op) {
  FailureOr<RankedTensorType> data = getInputType(op, 0, "data");
  if (failed(data))
    return failure();
  int64_t rank = data->getRank();
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> p = getI64ArrayAttr(op, "perm")) {
    perm = *p;
  } else {
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank) {
    emitNodeError(op) << "perm has " << perm.size() << " values, expected "
                      << rank;
    return failure();
  }
  FailureOr<SmallVector<int64_t>> normalized =
      normalizeAxes(op, perm, rank, "perm");
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t p : *normalized)
    shape.push_back(data->getDimSize(p));
  return setResultType(op, 0, shape, data->getElementType());
}

//===----------------------------------------------------------------------===//
// Split
//===----------------------------------------------------------------------===//

// Split(input, split): the sizes come from the constant `split`, or, without
// it, from num_outputs (or the number of results): ceil(dim / n) each, the last
// one smaller.
LogicalResult inferSplit(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(op, getIntAttr(op, "axis", 0), x->getRank());
  if (failed(axis))
    return failure();
  int64_t dim = x->getDimSize(*axis);
  if (ShapedType::isDynamic(dim)) {
    emitNodeError(op) << "splitting along axis " << *axis
                      << ", a symbolic dimension, is not supported yet";
    return failure();
  }
  int64_t numResults = op->getNumResults();
  // A `split` read at run time (run dims): each result's size along the axis.
  if (isRunTimeOperand(op, 1)) {
    FailureOr<int64_t> length = getRunTimeValuesLength(op, 1, "split");
    if (failed(length))
      return failure();
    if (*length != numResults) {
      emitNodeError(op) << "split has " << *length
                        << " sizes but the node has " << numResults
                        << " outputs";
      return failure();
    }
    for (int64_t i = 0; i < numResults; ++i) {
      SmallVector<int64_t> shape(x->getShape());
      shape[*axis] = ShapedType::kDynamic;
      if (failed(setResultType(op, i, shape, x->getElementType())))
        return failure();
    }
    return success();
  }
  FailureOr<std::optional<SmallVector<int64_t>>> split =
      getOptionalConstantInts(op, 1, "split");
  if (failed(split))
    return failure();
  SmallVector<int64_t> sizes;
  if (*split && !(*split)->empty()) {
    sizes = **split;
    if (static_cast<int64_t>(sizes.size()) != numResults) {
      emitNodeError(op) << "split has " << sizes.size()
                        << " sizes but the node has " << numResults
                        << " outputs";
      return failure();
    }
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0) {
        emitNodeError(op) << "split has negative size " << s;
        return failure();
      }
      sum += s;
    }
    if (sum != dim) {
      emitNodeError(op) << "split sizes sum to " << sum << ", but axis "
                        << *axis << " has size " << dim;
      return failure();
    }
  } else {
    int64_t n = getIntAttr(op, "num_outputs", numResults);
    if (n != numResults || n <= 0) {
      emitNodeError(op) << "num_outputs = " << n << " but the node has "
                        << numResults << " outputs";
      return failure();
    }
    int64_t chunk = dim == 0 ? 0 : (dim - 1) / n + 1;
    if (dim > 0 && dim - chunk * (n - 1) <= 0) {
      emitNodeError(op) << "cannot split axis " << *axis << " of size " << dim
                        << " into " << n << " outputs";
      return failure();
    }
    for (int64_t i = 0; i < n; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  }
  for (int64_t i = 0; i < numResults; ++i) {
    SmallVector<int64_t> shape(x->getShape());
    shape[*axis] = sizes[i];
    if (failed(setResultType(op, i, shape, x->getElementType())))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Gather, GatherElements, GatherND
//===----------------------------------------------------------------------===//

LogicalResult checkIndices(Operation *op, RankedTensorType indices) {
  if (!indices.getElementType().isInteger(32) &&
      !indices.getElementType().isInteger(64)) {
    emitNodeError(op) << "indices must be int32 or int64, got " << indices;
    return failure();
  }
  return success();
}

// Gather: data.shape[:axis] + indices.shape + data.shape[axis+1:].
LogicalResult inferGather(Operation *op) {
  FailureOr<RankedTensorType> data = getInputType(op, 0, "data");
  FailureOr<RankedTensorType> indices = getInputType(op, 1, "indices");
  if (failed(data) || failed(indices) || failed(checkIndices(op, *indices)))
    return failure();
  if (data->getRank() == 0) {
    emitNodeError(op) << "data must have rank >= 1";
    return failure();
  }
  FailureOr<int64_t> axis =
      normalizeAxis(op, getIntAttr(op, "axis", 0), data->getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(data->getShape().take_front(*axis));
  shape.append(indices->getShape().begin(), indices->getShape().end());
  shape.append(data->getShape().begin() + *axis + 1, data->getShape().end());
  return setResultType(op, 0, shape, data->getElementType());
}

// GatherElements: indices.shape (same rank as data).
LogicalResult inferGatherElements(Operation *op) {
  FailureOr<RankedTensorType> data = getInputType(op, 0, "data");
  FailureOr<RankedTensorType> indices = getInputType(op, 1, "indices");
  if (failed(data) || failed(indices) || failed(checkIndices(op, *indices)))
    return failure();
  if (data->getRank() != indices->getRank() || data->getRank() == 0) {
    emitNodeError(op) << "data " << *data << " and indices " << *indices
                      << " must have the same rank >= 1";
    return failure();
  }
  if (failed(normalizeAxis(op, getIntAttr(op, "axis", 0), data->getRank())))
    return failure();
  return setResultType(op, 0, indices->getShape(), data->getElementType());
}

// GatherND: indices.shape[:-1] + data.shape[batch_dims + indices.shape[-1]:].
LogicalResult inferGatherND(Operation *op) {
  FailureOr<RankedTensorType> data = getInputType(op, 0, "data");
  FailureOr<RankedTensorType> indices = getInputType(op, 1, "indices");
  if (failed(data) || failed(indices))
    return failure();
  if (!indices->getElementType().isInteger(64)) {
    emitNodeError(op) << "indices must be int64, got " << *indices;
    return failure();
  }
  int64_t r = data->getRank(), q = indices->getRank();
  int64_t b = getIntAttr(op, "batch_dims", 0);
  // Symbolic dims (or run dims: NonZero -> Transpose -> GatherND) in the
  // indices' leading dims only.
  bool symbolic = !data->hasStaticShape() ||
                  (q >= 1 && indices->isDynamicDim(q - 1));
  for (int64_t i = 0; i < std::min(b, q); ++i)
    symbolic |= indices->isDynamicDim(i);
  if (symbolic) {
    emitNodeError(op) << "data " << *data << " and indices " << *indices
                      << ": GatherND takes symbolic dimensions in the indices' "
                         "leading dims only (not batch_dims' nor the last): "
                         "fix them with --shape or --specialize";
    return failure();
  }
  if (r < 1 || q < 1 || b < 0 || b >= std::min(r, q)) {
    emitNodeError(op) << "batch_dims " << b
                      << " must be less than the ranks of data " << *data
                      << " and indices " << *indices;
    return failure();
  }
  for (int64_t i = 0; i < b; ++i) {
    if (data->getDimSize(i) != indices->getDimSize(i)) {
      emitNodeError(op) << "the batch dimensions of data " << *data
                        << " and indices " << *indices << " differ";
      return failure();
    }
  }
  int64_t last = indices->getShape().back();
  if (last < 1 || last > r - b) {
    emitNodeError(op) << "indices.shape[-1] = " << last << " must be in [1, "
                      << r - b << "]";
    return failure();
  }
  SmallVector<int64_t> shape(indices->getShape().drop_back());
  shape.append(data->getShape().begin() + b + last, data->getShape().end());
  return setResultType(op, 0, shape, data->getElementType());
}

//===----------------------------------------------------------------------===//
// Unsqueeze, Squeeze
//===----------------------------------------------------------------------===//

LogicalResult inferUnsqueeze(Operation *op) {
  // Axes read at run time (run dims): the rank is static, every dim is
  // decided by the axes' values.
  if (isRunTimeOperand(op, 1)) {
    FailureOr<RankedTensorType> data = getInputType(op, 0, "data");
    FailureOr<int64_t> n = getRunTimeValuesLength(op, 1, "axes");
    if (failed(data) || failed(n))
      return failure();
    return setResultType(
        op, 0,
        SmallVector<int64_t>(data->getRank() + *n, ShapedType::kDynamic),
        data->getElementType());
  }
  FailureOr<RankedTensorType> data = getInputType(op, 0, "data");
  FailureOr<SmallVector<int64_t>> axes = getConstantInts(op, 1, "axes");
  if (failed(data) || failed(axes))
    return failure();
  int64_t rank = data->getRank() + axes->size();
  FailureOr<SmallVector<int64_t>> normalized = normalizeAxes(op, *axes, rank);
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> shape;
  auto it = data->getShape().begin();
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(llvm::is_contained(*normalized, i) ? 1 : *it++);
  return setResultType(op, 0, shape, data->getElementType());
}

LogicalResult inferSqueeze(Operation *op) {
  if (isRunTimeOperand(op, 1)) {
    FailureOr<RankedTensorType> data = getInputType(op, 0, "data");
    FailureOr<int64_t> n = getRunTimeValuesLength(op, 1, "axes");
    if (failed(data) || failed(n))
      return failure();
    if (*n > data->getRank()) {
      emitNodeError(op) << "squeezes " << *n << " axes of " << *data;
      return failure();
    }
    return setResultType(
        op, 0,
        SmallVector<int64_t>(data->getRank() - *n, ShapedType::kDynamic),
        data->getElementType());
  }
  FailureOr<RankedTensorType> data = getInputType(op, 0, "data");
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      getOptionalConstantInts(op, 1, "axes");
  if (failed(data) || failed(axes))
    return failure();
  SmallVector<int64_t> squeezed;
  if (*axes) {
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(op, **axes, data->getRank());
    if (failed(normalized))
      return failure();
    for (int64_t a : *normalized) {
      if (data->getDimSize(a) != 1) {
        emitNodeError(op) << "cannot squeeze axis " << a << " of size "
                          << data->getDimSize(a) << " in " << *data;
        return failure();
      }
    }
    squeezed = *normalized;
  } else {
    for (int64_t i = 0, e = data->getRank(); i < e; ++i)
      if (data->getDimSize(i) == 1)
        squeezed.push_back(i);
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0, e = data->getRank(); i < e; ++i)
    if (!llvm::is_contained(squeezed, i))
      shape.push_back(data->getDimSize(i));
  return setResultType(op, 0, shape, data->getElementType());
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

// Slice(data, starts, ends, axes, steps): starts/ends (and axes/steps when
// present) constant; indices clamped as in ONNX.
LogicalResult inferSlice(Operation *op) {
  // Starts, ends, axes or steps read at run time: data may have symbolic (or
  // run) dims, the lowering reads them with tensor.dim (a Slice of a Pad
  // with run-time pads: CenterCropPad's expansion).
  bool runTimeParams = isRunTimeOperand(op, 1) || isRunTimeOperand(op, 2) ||
                       isRunTimeOperand(op, 3) || isRunTimeOperand(op, 4);
  auto ranked = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  FailureOr<RankedTensorType> data =
      runTimeParams && ranked ? FailureOr<RankedTensorType>(ranked)
                              : getInputType(op, 0, "data");
  if (failed(data))
    return failure();
  // x[i : i + c] at a Loop's iteration number i, in range for every i.
  if (!getConstantIntValues(op->getOperand(1))) {
    if (std::optional<IterationSlice> s = getIterationSlice(cast<SliceOp>(op))) {
      SmallVector<int64_t> shape(data->getShape());
      shape[s->axis] = s->size;
      return setResultType(op, 0, shape, data->getElementType());
    }
    // At the iteration number of a Loop whose trip count is given at run time: the
    // trip count is what would make the length known.
    LoopOp loop = getLoopOfIterationNumber(op->getOperand(1));
    if (loop && !isNoneValue(loop.getM()) && !getConstantIntValues(loop.getM())) {
      emitNodeError(loop) << "a Slice at the iteration number (node '"
                          << getNodeName(op).value_or("Slice") << "') has a length known only for a "
                          << "known trip count: output shape depends on a non-constant "
                          << "input 'M'";
      return failure();
    }
  }
  // Starts, ends, axes or steps read at run time (run dims): the sliced dims
  // are decided by their values (every dim when the axes are).
  if (isRunTimeOperand(op, 1) || isRunTimeOperand(op, 2) ||
      isRunTimeOperand(op, 3) || isRunTimeOperand(op, 4)) {
    FailureOr<int64_t> n = getRunTimeValuesLength(op, 1, "starts");
    if (failed(n))
      return failure();
    SmallVector<int64_t> shape(data->getRank(), ShapedType::kDynamic);
    if (!isRunTimeOperand(op, 3)) {
      FailureOr<std::optional<SmallVector<int64_t>>> axes =
          getOptionalConstantInts(op, 3, "axes");
      if (failed(axes))
        return failure();
      SmallVector<int64_t> list;
      if (*axes)
        list = **axes;
      else
        for (int64_t i = 0; i < *n; ++i)
          list.push_back(i);
      FailureOr<SmallVector<int64_t>> normalized =
          normalizeAxes(op, list, data->getRank());
      if (failed(normalized))
        return failure();
      shape.assign(data->getShape().begin(), data->getShape().end());
      for (int64_t a : *normalized)
        shape[a] = ShapedType::kDynamic;
    }
    return setResultType(op, 0, shape, data->getElementType());
  }
  FailureOr<SmallVector<int64_t>> starts = getConstantInts(op, 1, "starts");
  if (failed(starts))
    return failure();
  FailureOr<SmallVector<int64_t>> ends = getConstantInts(op, 2, "ends");
  if (failed(ends))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> axesOpt =
      getOptionalConstantInts(op, 3, "axes");
  if (failed(axesOpt))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> stepsOpt =
      getOptionalConstantInts(op, 4, "steps");
  if (failed(stepsOpt))
    return failure();
  size_t n = starts->size();
  int64_t rank = data->getRank();
  SmallVector<int64_t> axes;
  if (*axesOpt)
    axes = **axesOpt;
  else
    for (size_t i = 0; i < n; ++i)
      axes.push_back(i);
  SmallVector<int64_t> steps =
      *stepsOpt ? **stepsOpt : SmallVector<int64_t>(n, 1);
  if (ends->size() != n || axes.size() != n || steps.size() != n) {
    emitNodeError(op)
        << "starts, ends, axes and steps must have the same length (got " << n
        << ", " << ends->size() << ", " << axes.size() << ", " << steps.size()
        << ")";
    return failure();
  }
  FailureOr<SmallVector<int64_t>> normalized = normalizeAxes(op, axes, rank);
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> shape(data->getShape());
  for (size_t i = 0; i < n; ++i) {
    int64_t axis = (*normalized)[i], dim = data->getDimSize(axis),
            step = steps[i];
    if (step == 0) {
      emitNodeError(op) << "steps must not be 0";
      return failure();
    }
    int64_t start = (*starts)[i], end = (*ends)[i];
    if (start < 0)
      start += dim;
    if (end < 0 && end != std::numeric_limits<int64_t>::min())
      end += dim;
    int64_t size;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      size = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      // -step would overflow for INT64_MIN; the span is below 2^63.
      size = start <= end ? 0
             : step == std::numeric_limits<int64_t>::min()
                 ? 1
                 : (start - end - 1) / (-step) + 1;
    }
    shape[axis] = size;
  }
  return setResultType(op, 0, shape, data->getElementType());
}

//===----------------------------------------------------------------------===//
// Shape, Size
//===----------------------------------------------------------------------===//

// Shape: 1-D i64 of size end - start (both clamped to [0, rank]).
LogicalResult inferShape(Operation *op) {
  FailureOr<RankedTensorType> data = getInputType(op, 0, "data");
  if (failed(data))
    return failure();
  int64_t rank = data->getRank();
  auto clampIndex = [&](int64_t i) {
    if (i < 0)
      i += rank;
    return std::clamp<int64_t>(i, 0, rank);
  };
  int64_t start = clampIndex(getIntAttr(op, "start", 0));
  int64_t end = clampIndex(getIntAttr(op, "end", rank));
  return setResultType(op, 0, {std::max<int64_t>(0, end - start)}, getI64(op));
}

// Size: an i64 scalar.
LogicalResult inferSize(Operation *op) {
  if (failed(getInputType(op, 0, "data")))
    return failure();
  return setResultType(op, 0, {}, getI64(op));
}

//===----------------------------------------------------------------------===//
// CenterCropPad
//===----------------------------------------------------------------------===//

// CenterCropPad(input_data, shape): the input's shape with each of `axes` (all
// when absent) set to the constant target size.
LogicalResult inferCenterCropPad(Operation *op) {
  FailureOr<RankedTensorType> input = getInputType(op, 0, "input_data");
  if (failed(input))
    return failure();
  int64_t rank = input->getRank();
  SmallVector<int64_t> axes;
  if (std::optional<SmallVector<int64_t>> given = getI64ArrayAttr(op, "axes"))
    axes = *given;
  else
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  FailureOr<SmallVector<int64_t>> normalized = normalizeAxes(op, axes, rank);
  if (failed(normalized))
    return failure();
  // A shape read at run time: the listed axes are run dims.
  if (isRunTimeOperand(op, 1)) {
    FailureOr<int64_t> length = getRunTimeValuesLength(op, 1, "shape");
    if (failed(length))
      return failure();
    if (*length != static_cast<int64_t>(normalized->size())) {
      emitNodeError(op) << "'shape' needs one value per axis ("
                        << normalized->size() << "), got " << *length;
      return failure();
    }
    SmallVector<int64_t> shape(input->getShape());
    for (int64_t axis : *normalized)
      shape[axis] = ShapedType::kDynamic;
    return setResultType(op, 0, shape, input->getElementType());
  }
  FailureOr<SmallVector<int64_t>> target = getConstantInts(op, 1, "shape");
  if (failed(target))
    return failure();
  if (normalized->size() != target->size()) {
    emitNodeError(op) << "'shape' needs one value per axis (" << normalized->size()
                      << "), got " << target->size();
    return failure();
  }
  SmallVector<int64_t> shape(input->getShape());
  for (auto [axis, size] : llvm::zip(*normalized, *target))
    shape[axis] = size;
  return setResultType(op, 0, shape, input->getElementType());
}

//===----------------------------------------------------------------------===//
// Expand, Tile, Pad
//===----------------------------------------------------------------------===//

// Expand: input broadcast with the constant `shape`.
LogicalResult inferExpand(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  // A shape read at run time: the result's rank is the larger of the two;
  // a dim of x other than 1 stays (the shape's value must be 1 or the same),
  // the others are run dims.
  if (succeeded(x) && isRunTimeOperand(op, 1) &&
      !getShapeValues(op->getOperand(1))) {
    FailureOr<int64_t> length = getRunTimeValuesLength(op, 1, "shape");
    if (failed(length))
      return failure();
    int64_t rank = std::max<int64_t>(*length, x->getRank());
    SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
    for (int64_t i = 0; i < x->getRank(); ++i) {
      int64_t d = x->getDimSize(i);
      if (d != 1 && !ShapedType::isDynamic(d))
        shape[rank - x->getRank() + i] = d;
    }
    return setResultType(op, 0, shape, x->getElementType());
  }
  FailureOr<SmallVector<int64_t>> target = getConstantInts(op, 1, "shape");
  if (failed(x) || failed(target))
    return failure();
  for (int64_t d : *target) {
    if (d < 0) {
      emitNodeError(op) << "shape has negative dimension " << d;
      return failure();
    }
  }
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(op, {x->getShape(), *target});
  if (failed(shape))
    return failure();
  return setResultType(op, 0, *shape, x->getElementType());
}

// Tile: d[i] * repeats[i].
LogicalResult inferTile(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  // Repeats read at run time: run dims but where the input's dim is 0.
  if (succeeded(x) && isRunTimeOperand(op, 1)) {
    FailureOr<int64_t> length = getRunTimeValuesLength(op, 1, "repeats");
    if (failed(length))
      return failure();
    if (*length != x->getRank()) {
      emitNodeError(op) << "repeats has " << *length << " values, expected "
                        << x->getRank();
      return failure();
    }
    SmallVector<int64_t> shape;
    for (int64_t d : x->getShape())
      shape.push_back(d == 0 ? 0 : ShapedType::kDynamic);
    return setResultType(op, 0, shape, x->getElementType());
  }
  FailureOr<SmallVector<int64_t>> repeats = getConstantInts(op, 1, "repeats");
  if (failed(x) || failed(repeats))
    return failure();
  if (static_cast<int64_t>(repeats->size()) != x->getRank()) {
    emitNodeError(op) << "repeats has " << repeats->size()
                      << " values, expected " << x->getRank();
    return failure();
  }
  SmallVector<int64_t> shape;
  CheckedDims dims;
  for (auto [d, r] : llvm::zip(x->getShape(), *repeats)) {
    if (r < 0) {
      emitNodeError(op) << "repeats has negative value " << r;
      return failure();
    }
    shape.push_back(dims.mul(d, r));
  }
  if (failed(dims.check(op, "input shape times repeats")))
    return failure();
  return setResultType(op, 0, shape, x->getElementType());
}

// Pad(data, pads, constant_value, axes): d + pad_begin + pad_end on the padded
// axes.
LogicalResult inferPad(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "data");
  if (failed(x))
    return failure();
  // Pads (or axes) read at run time (run dims): the padded dims are decided
  // by their values (every dim when the axes are). Static data only.
  if (isRunTimeOperand(op, 1) || isRunTimeOperand(op, 3)) {
    if (!x->hasStaticShape()) {
      emitNodeError(op) << "pads read at run time need data of static shape, "
                           "got "
                        << *x;
      return failure();
    }
    FailureOr<int64_t> length = getRunTimeValuesLength(op, 1, "pads");
    if (failed(length))
      return failure();
    SmallVector<int64_t> shape(x->getRank(), ShapedType::kDynamic);
    int64_t n = x->getRank();
    if (isRunTimeOperand(op, 3)) {
      FailureOr<int64_t> axes = getRunTimeValuesLength(op, 3, "axes");
      if (failed(axes))
        return failure();
      n = *axes;
    } else {
      FailureOr<std::optional<SmallVector<int64_t>>> axes =
          getOptionalConstantInts(op, 3, "axes");
      if (failed(axes))
        return failure();
      if (*axes) {
        FailureOr<SmallVector<int64_t>> normalized =
            normalizeAxes(op, **axes, x->getRank());
        if (failed(normalized))
          return failure();
        shape.assign(x->getShape().begin(), x->getShape().end());
        for (int64_t a : *normalized)
          shape[a] = ShapedType::kDynamic;
        n = normalized->size();
      }
    }
    if (*length != 2 * n) {
      emitNodeError(op) << "pads has " << *length << " values, expected "
                        << 2 * n;
      return failure();
    }
    return setResultType(op, 0, shape, x->getElementType());
  }
  FailureOr<SmallVector<int64_t>> pads = getConstantInts(op, 1, "pads");
  if (failed(pads))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> axesOpt =
      getOptionalConstantInts(op, 3, "axes");
  if (failed(axesOpt))
    return failure();
  int64_t rank = x->getRank();
  SmallVector<int64_t> axes;
  if (*axesOpt) {
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(op, **axesOpt, rank);
    if (failed(normalized))
      return failure();
    axes = *normalized;
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  int64_t n = axes.size();
  if (static_cast<int64_t>(pads->size()) != 2 * n) {
    emitNodeError(op) << "pads has " << pads->size() << " values, expected "
                      << 2 * n;
    return failure();
  }
  SmallVector<int64_t> shape(x->getShape());
  CheckedDims dims;
  for (int64_t i = 0; i < n; ++i) {
    // A symbolic dim (a batch) may be padded by nothing only.
    if (ShapedType::isDynamic(shape[axes[i]])) {
      if ((*pads)[i] || (*pads)[i + n]) {
        emitNodeError(op) << "padding axis " << axes[i]
                          << ", a symbolic dimension, is not supported yet";
        return failure();
      }
      continue;
    }
    shape[axes[i]] =
        dims.add(shape[axes[i]], dims.add((*pads)[i], (*pads)[i + n]));
  }
  if (failed(dims.check(op, "input shape plus pads")))
    return failure();
  return setResultType(op, 0, shape, x->getElementType());
}

//===----------------------------------------------------------------------===//
// DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

LogicalResult inferDepthToSpace(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  if (failed(x))
    return failure();
  int64_t b = getIntAttr(op, "blocksize", 0);
  CheckedDims dims;
  int64_t b2 = dims.mul(b, b);
  if (x->getRank() != 4 || b <= 0 || dims.failed() ||
      x->getDimSize(1) % b2 != 0) {
    emitNodeError(op)
        << "input " << *x
        << " must be 4-D with channels divisible by blocksize^2 (blocksize = "
        << b << ")";
    return failure();
  }
  ArrayRef<int64_t> s = x->getShape();
  SmallVector<int64_t> shape = {s[0], s[1] / b2, dims.mul(s[2], b),
                                dims.mul(s[3], b)};
  if (failed(dims.check(op)))
    return failure();
  return setResultType(op, 0, shape, x->getElementType());
}

LogicalResult inferSpaceToDepth(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  if (failed(x))
    return failure();
  int64_t b = getIntAttr(op, "blocksize", 0);
  if (x->getRank() != 4 || b <= 0 || x->getDimSize(2) % b != 0 ||
      x->getDimSize(3) % b != 0) {
    emitNodeError(op)
        << "input " << *x
        << " must be 4-D with height and width divisible by blocksize " << b;
    return failure();
  }
  ArrayRef<int64_t> s = x->getShape();
  CheckedDims dims;
  SmallVector<int64_t> shape = {s[0], dims.mul(dims.mul(s[1], b), b), s[2] / b,
                                s[3] / b};
  if (failed(dims.check(op)))
    return failure();
  return setResultType(op, 0, shape, x->getElementType());
}

//===----------------------------------------------------------------------===//
// OneHot
//===----------------------------------------------------------------------===//

// OneHot(indices, depth, values): indices.shape with `depth` inserted at axis;
// values' element type.
LogicalResult inferOneHot(Operation *op) {
  FailureOr<RankedTensorType> indices = getInputType(op, 0, "indices");
  FailureOr<RankedTensorType> values = getInputType(op, 2, "values");
  if (failed(indices) || failed(values))
    return failure();
  if (values->getNumElements() != 2) {
    emitNodeError(op) << "input 'values' must hold two values, got " << *values;
    return failure();
  }
  int64_t rank = indices->getRank() + 1;
  FailureOr<int64_t> axis = normalizeAxis(op, getIntAttr(op, "axis", -1), rank);
  if (failed(axis))
    return failure();
  // A depth read at run time: a run dim at the axis.
  if (isRunTimeOperand(op, 1)) {
    FailureOr<RankedTensorType> depth = getInputType(op, 1, "depth");
    if (failed(depth))
      return failure();
    if (depth->getNumElements() != 1) {
      emitNodeError(op) << "input 'depth' must hold one value, got " << *depth;
      return failure();
    }
    SmallVector<int64_t> shape(indices->getShape());
    shape.insert(shape.begin() + *axis, ShapedType::kDynamic);
    return setResultType(op, 0, shape, values->getElementType());
  }
  FailureOr<SmallVector<double>> depth = getConstantNumbers(op, 1, "depth");
  if (failed(depth))
    return failure();
  if (depth->size() != 1) {
    emitNodeError(op) << "input 'depth' must be a scalar";
    return failure();
  }
  // The depth is a generated table's size (kiln-decompose's iota); checked
  // before it becomes an integer.
  double d = (*depth)[0];
  int64_t maxDepth = getCompileLimits().maxTableElements;
  if (!(d >= 0) || d > static_cast<double>(maxDepth)) {
    emitNodeError(op) << "depth " << d << " is negative or over kiln's limit of "
                      << maxDepth << " elements per generated table "
                      << "(--max-table-elements)";
    return failure();
  }
  SmallVector<int64_t> shape(indices->getShape());
  shape.insert(shape.begin() + *axis, static_cast<int64_t>(d));
  return setResultType(op, 0, shape, values->getElementType());
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

// Resize(X, roi, scales, sizes): from the constant sizes (with
// keep_aspect_ratio_policy) or else the constant scales (floor(d * scale));
// `axes` selects the resized axes. Sizes or scales read at run time give run
// dims.
LogicalResult inferResize(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  SmallVector<int64_t> axes;
  if (std::optional<SmallVector<int64_t>> a = getI64ArrayAttr(op, "axes")) {
    FailureOr<SmallVector<int64_t>> normalized = normalizeAxes(op, *a, rank);
    if (failed(normalized))
      return failure();
    axes = *normalized;
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  SmallVector<int64_t> shape(x->getShape());
  auto checkCount = [&](StringRef name, size_t count) -> LogicalResult {
    if (count == axes.size())
      return success();
    emitNodeError(op) << "input '" << name << "' has " << count
                      << " values, expected " << axes.size();
    return failure();
  };

  Value sizesValue = op->getOperand(3);
  bool hasSizes =
      !isNoneValue(sizesValue) &&
      !(isa<RankedTensorType>(sizesValue.getType()) &&
        cast<RankedTensorType>(sizesValue.getType()).getNumElements() == 0);
  // Sizes or scales the run decides (graph inputs): the resized dims are run
  // dims (docs/dynamic-shapes.md); the lowering computes them.
  unsigned decider = hasSizes ? 3 : 2;
  if (isRunTimeOperand(op, decider)) {
    StringRef name = hasSizes ? "sizes" : "scales";
    if (!hasSizes) {
      auto type = dyn_cast<RankedTensorType>(op->getOperand(2).getType());
      if (!type || type.getRank() != 1 || type.isDynamicDim(0) ||
          !isa<FloatType>(type.getElementType())) {
        emitNodeError(op) << "input 'scales' must be a 1-D float tensor of a "
                             "static length to be read at run time, got "
                          << op->getOperand(2).getType();
        return failure();
      }
      if (failed(checkCount(name, type.getDimSize(0))))
        return failure();
    } else {
      FailureOr<int64_t> length = getRunTimeValuesLength(op, 3, name);
      if (failed(length) || failed(checkCount(name, *length)))
        return failure();
    }
    for (int64_t axis : axes)
      shape[axis] = ShapedType::kDynamic;
    return setResultType(op, 0, shape, x->getElementType());
  }
  if (hasSizes) {
    FailureOr<SmallVector<int64_t>> sizes = getConstantInts(op, 3, "sizes");
    if (failed(sizes) || failed(checkCount("sizes", sizes->size())))
      return failure();
    StringRef policy = "stretch";
    if (auto attr = op->getAttrOfType<StringAttr>("keep_aspect_ratio_policy"))
      policy = attr.getValue();
    if (policy == "stretch") {
      for (auto [axis, size] : llvm::zip(axes, *sizes))
        shape[axis] = size;
    } else if (policy == "not_larger" || policy == "not_smaller") {
      bool notLarger = policy == "not_larger";
      float scale = notLarger ? std::numeric_limits<float>::max() : 0.0f;
      for (auto [axis, size] : llvm::zip(axes, *sizes)) {
        float s =
            static_cast<float>(size) / static_cast<float>(x->getDimSize(axis));
        scale = notLarger ? std::min(scale, s) : std::max(scale, s);
      }
      for (int64_t axis : axes) {
        FailureOr<int64_t> size = toDimension(
            op, std::round(double(scale) * double(x->getDimSize(axis))), "sizes");
        if (failed(size))
          return failure();
        shape[axis] = *size;
      }
    } else {
      emitNodeError(op) << "unknown keep_aspect_ratio_policy '" << policy
                        << "'";
      return failure();
    }
    return setResultType(op, 0, shape, x->getElementType());
  }

  if (isNoneValue(op->getOperand(2))) {
    emitNodeError(op) << "one of the inputs 'scales' and 'sizes' must be given";
    return failure();
  }
  FailureOr<SmallVector<double>> scales = getConstantNumbers(op, 2, "scales");
  if (failed(scales) || failed(checkCount("scales", scales->size())))
    return failure();
  for (auto [axis, scale] : llvm::zip(axes, *scales)) {
    if (scale <= 0) {
      emitNodeError(op) << "scales must be positive, got " << scale;
      return failure();
    }
    FailureOr<int64_t> size = toDimension(
        op,
        std::floor(static_cast<float>(x->getDimSize(axis)) *
                   static_cast<float>(scale)),
        "scales");
    if (failed(size))
      return failure();
    shape[axis] = *size;
  }
  return setResultType(op, 0, shape, x->getElementType());
}

} // namespace

void registerDataMovementShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferFlatten, FlattenOp>(ctx);
    attachInferShapes<inferGridSample, GridSampleOp>(ctx);
    attachInferShapes<inferAffineGrid, AffineGridOp>(ctx);
    attachInferShapes<inferReverseSequence, ReverseSequenceOp>(ctx);
    attachInferShapes<inferConcat, ConcatOp>(ctx);
    attachInferShapes<inferReshape, ReshapeOp>(ctx);
    attachInferShapes<inferTranspose, TransposeOp>(ctx);
    attachInferShapes<inferSplit, SplitOp>(ctx);
    attachInferShapes<inferGather, GatherOp>(ctx);
    attachInferShapes<inferGatherElements, GatherElementsOp>(ctx);
    attachInferShapes<inferGatherND, GatherNDOp>(ctx);
    attachInferShapes<inferUnsqueeze, UnsqueezeOp>(ctx);
    attachInferShapes<inferSqueeze, SqueezeOp>(ctx);
    attachInferShapes<inferSlice, SliceOp>(ctx);
    attachInferShapes<inferShape, ShapeOp>(ctx);
    attachInferShapes<inferSize, SizeOp>(ctx);
    attachInferShapes<inferExpand, ExpandOp>(ctx);
    attachInferShapes<inferTile, TileOp>(ctx);
    attachInferShapes<inferPad, PadOp>(ctx);
    attachInferShapes<inferDepthToSpace, DepthToSpaceOp>(ctx);
    attachInferShapes<inferSpaceToDepth, SpaceToDepthOp>(ctx);
    attachInferShapes<inferOneHot, OneHotOp>(ctx);
    attachInferShapes<inferCenterCropPad, CenterCropPadOp>(ctx);
    attachInferShapes<inferResize, ResizeOp>(ctx);
  });
}

} // namespace kiln::onnx
