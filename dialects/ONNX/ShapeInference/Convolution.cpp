//===- Convolution.cpp - Shape inference of convolutions ------------------===//
//
// Conv, ConvInteger, QLinearConv and ConvTranspose. X is (N, C, D1..Dn), W is
// (M, C/group, k1..kn) (ConvTranspose: (C, M/group, k1..kn)).
//
//===----------------------------------------------------------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;

namespace kiln::onnx {
namespace {

struct ConvOperands {
  RankedTensorType x, w;
  int64_t group;
  SmallVector<int64_t> kernel;
};

// Reads and checks X, W, group and kernel_shape (which must match W when
// present).
FailureOr<ConvOperands> getConvOperands(Operation *op, unsigned xIndex,
                                        unsigned wIndex) {
  FailureOr<RankedTensorType> x = getInputType(op, xIndex, "X");
  FailureOr<RankedTensorType> w = getInputType(op, wIndex, "W");
  if (failed(x) || failed(w))
    return failure();
  ConvOperands r{*x, *w, 1, {}};
  if (x->getRank() < 3) {
    emitNodeError(op) << "X must have rank >= 3 (N, C, D1, ...), got " << *x;
    return failure();
  }
  if (w->getRank() != x->getRank()) {
    emitNodeError(op) << "W " << *w << " must have the rank of X " << *x;
    return failure();
  }
  if (auto group = op->getAttrOfType<IntegerAttr>("group"))
    r.group = group.getInt();
  if (r.group <= 0) {
    emitNodeError(op) << "group must be positive, got " << r.group;
    return failure();
  }
  r.kernel.assign(w->getShape().begin() + 2, w->getShape().end());
  if (std::optional<SmallVector<int64_t>> k =
          getI64ArrayAttr(op, "kernel_shape")) {
    if (*k != ArrayRef<int64_t>(r.kernel)) {
      InFlightDiagnostic diag = emitNodeError(op);
      diag << "kernel_shape [";
      llvm::interleaveComma(*k, diag);
      diag << "] does not match the spatial dimensions of W " << *w;
      return failure();
    }
  }
  return r;
}

// Checks the bias: absent, or 1-D of size `channels`.
LogicalResult checkBias(Operation *op, unsigned index, int64_t channels) {
  FailureOr<RankedTensorType> b = getOptionalInputType(op, index, "B");
  if (failed(b))
    return failure();
  if (*b && (b->getRank() != 1 || b->getDimSize(0) != channels)) {
    emitNodeError(op) << "B must be 1-D of size " << channels << ", got " << *b;
    return failure();
  }
  return success();
}

// Conv-like: output (N, M, O1..On).
LogicalResult inferConvGeneric(Operation *op, unsigned xIndex, unsigned wIndex,
                               std::optional<unsigned> bIndex,
                               Type elementType) {
  FailureOr<ConvOperands> c = getConvOperands(op, xIndex, wIndex);
  if (failed(c))
    return failure();
  int64_t channels = c->x.getDimSize(1), m = c->w.getDimSize(0);
  if (std::optional<int64_t>(channels) !=
      checkedMul(c->w.getDimSize(1), c->group)) {
    emitNodeError(op) << "input channels " << channels << " do not match W "
                      << c->w << " with group " << c->group
                      << " (expected W.shape[1] * group = " << channels << ")";
    return failure();
  }
  if (m % c->group != 0) {
    emitNodeError(op) << "output channels " << m
                      << " are not divisible by group " << c->group;
    return failure();
  }
  if (bIndex && failed(checkBias(op, *bIndex, m)))
    return failure();
  int64_t spatialRank = c->x.getRank() - 2;
  FailureOr<WindowParams> params = getWindowParams(op, spatialRank, c->kernel);
  if (failed(params))
    return failure();
  FailureOr<SmallVector<int64_t>> spatial =
      computeWindowOutputShape(op, c->x.getShape().drop_front(2), *params);
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> shape = {c->x.getDimSize(0), m};
  shape.append(spatial->begin(), spatial->end());
  return setResultType(op, 0, shape, elementType);
}

LogicalResult inferConv(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  FailureOr<RankedTensorType> w = getInputType(op, 1, "W");
  if (failed(x) || failed(w) || failed(checkSameElementType(op, {*x, *w})))
    return failure();
  return inferConvGeneric(op, 0, 1, 2, x->getElementType());
}

LogicalResult inferConvInteger(Operation *op) {
  return inferConvGeneric(op, 0, 1, std::nullopt,
                          IntegerType::get(op->getContext(), 32));
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
// y_zero_point, B)
LogicalResult inferQLinearConv(Operation *op) {
  FailureOr<RankedTensorType> yZeroPoint = getInputType(op, 7, "y_zero_point");
  if (failed(yZeroPoint))
    return failure();
  return inferConvGeneric(op, 0, 3, 8, yZeroPoint->getElementType());
}

// ConvTranspose: output (N, W.shape[1] * group, O1..On) with
//   O = stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pad_begin
//   - pad_end,
// or output_shape when given, or in * stride with SAME_* auto_pad.
LogicalResult inferConvTranspose(Operation *op) {
  FailureOr<ConvOperands> c = getConvOperands(op, 0, 1);
  if (failed(c) || failed(checkSameElementType(op, {c->x, c->w})))
    return failure();
  if (c->x.getDimSize(1) != c->w.getDimSize(0)) {
    emitNodeError(op) << "input channels " << c->x.getDimSize(1)
                      << " do not match W.shape[0] of " << c->w;
    return failure();
  }
  CheckedDims dims;
  int64_t m = dims.mul(c->w.getDimSize(1), c->group);
  if (failed(dims.check(op, "W.shape[1] * group")) ||
      failed(checkBias(op, 2, m)))
    return failure();
  int64_t n = c->x.getRank() - 2;
  FailureOr<WindowParams> params = getWindowParams(op, n, c->kernel);
  if (failed(params))
    return failure();
  SmallVector<int64_t> outputPadding(n, 0);
  if (std::optional<SmallVector<int64_t>> p =
          getI64ArrayAttr(op, "output_padding")) {
    if (static_cast<int64_t>(p->size()) != n) {
      emitNodeError(op) << "output_padding has " << p->size()
                        << " values, expected " << n;
      return failure();
    }
    outputPadding = *p;
  }
  std::optional<SmallVector<int64_t>> outputShape =
      getI64ArrayAttr(op, "output_shape");
  if (outputShape && static_cast<int64_t>(outputShape->size()) == n + 2)
    outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
  if (outputShape && static_cast<int64_t>(outputShape->size()) != n) {
    emitNodeError(op) << "output_shape has " << outputShape->size()
                      << " values, expected " << n;
    return failure();
  }
  SmallVector<int64_t> shape = {c->x.getDimSize(0), m};
  for (int64_t i = 0; i < n; ++i) {
    int64_t in = c->x.getDimSize(i + 2);
    if (outputShape) {
      shape.push_back((*outputShape)[i]);
    } else if (params->autoPad == "SAME_UPPER" ||
               params->autoPad == "SAME_LOWER") {
      shape.push_back(dims.mul(in, params->strides[i]));
    } else {
      int64_t pads = params->autoPad == "VALID"
                         ? 0
                         : dims.add(params->pads[i], params->pads[i + n]);
      int64_t span = dims.add(dims.mul(params->strides[i], in - 1),
                              outputPadding[i]);
      int64_t kernel =
          dims.add(dims.mul(c->kernel[i] - 1, params->dilations[i]), 1);
      shape.push_back(dims.sub(dims.add(span, kernel), pads));
    }
  }
  if (failed(dims.check(op)))
    return failure();
  return setResultType(op, 0, shape, c->x.getElementType());
}

// Col2Im(input [N, C * prod(block), L], image_shape, block_shape) ->
// [N, C, image...]; L must be the number of blocks that fit the padded
// image at the strides and dilations.
LogicalResult inferCol2Im(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "input");
  if (failed(x))
    return failure();
  FailureOr<SmallVector<int64_t>> image = getConstantInts(op, 1, "image_shape");
  if (failed(image))
    return failure();
  FailureOr<SmallVector<int64_t>> block = getConstantInts(op, 2, "block_shape");
  if (failed(block))
    return failure();
  int64_t k = static_cast<int64_t>(image->size());
  if (k < 1 || static_cast<int64_t>(block->size()) != k || x->getRank() != 3) {
    emitNodeError(op) << "needs an input [N, C * prod(block_shape), L] and "
                         "image_shape and block_shape of one size, got "
                      << *x;
    return failure();
  }
  std::optional<SmallVector<int64_t>> strides = getI64ArrayAttr(op, "strides");
  std::optional<SmallVector<int64_t>> dilations =
      getI64ArrayAttr(op, "dilations");
  std::optional<SmallVector<int64_t>> pads = getI64ArrayAttr(op, "pads");
  SmallVector<int64_t> s = strides.value_or(SmallVector<int64_t>(k, 1));
  SmallVector<int64_t> d = dilations.value_or(SmallVector<int64_t>(k, 1));
  SmallVector<int64_t> p = pads.value_or(SmallVector<int64_t>(2 * k, 0));
  if (static_cast<int64_t>(s.size()) != k ||
      static_cast<int64_t>(d.size()) != k ||
      static_cast<int64_t>(p.size()) != 2 * k) {
    emitNodeError(op) << "strides, dilations and pads need one value (pads "
                         "two) per image dimension";
    return failure();
  }
  CheckedDims dims;
  int64_t blockSize = 1, blocks = 1;
  for (int64_t i = 0; i < k; ++i) {
    if ((*image)[i] < 1 || (*block)[i] < 1 || s[i] < 1 || d[i] < 1 ||
        p[i] < 0 || p[k + i] < 0) {
      emitNodeError(op) << "image_shape, block_shape, strides and dilations "
                           "must be positive, pads non-negative";
      return failure();
    }
    blockSize = dims.mul(blockSize, (*block)[i]);
    int64_t span = dims.add(dims.mul(d[i], (*block)[i] - 1), 1);
    int64_t padded = dims.add((*image)[i], p[i] + p[k + i]);
    if (padded < span) {
      emitNodeError(op) << "block_shape does not fit the padded image";
      return failure();
    }
    blocks = dims.mul(blocks, (padded - span) / s[i] + 1);
  }
  if (failed(dims.check(op)))
    return failure();
  if (x->getDimSize(1) % blockSize != 0 || x->getDimSize(2) != blocks) {
    emitNodeError(op) << "input " << *x << " does not hold C * " << blockSize
                      << " rows of " << blocks << " blocks";
    return failure();
  }
  SmallVector<int64_t> shape = {x->getDimSize(0), x->getDimSize(1) / blockSize};
  shape.append(image->begin(), image->end());
  return setResultType(op, 0, shape, x->getElementType());
}

} // namespace

void registerConvolutionShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferConv, ConvOp>(ctx);
    attachInferShapes<inferConvInteger, ConvIntegerOp>(ctx);
    attachInferShapes<inferQLinearConv, QLinearConvOp>(ctx);
    attachInferShapes<inferConvTranspose, ConvTransposeOp>(ctx);
    attachInferShapes<inferCol2Im, Col2ImOp>(ctx);
  });
}

} // namespace kiln::onnx
