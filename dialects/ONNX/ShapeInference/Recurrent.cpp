//===- Recurrent.cpp - Shape inference of RNN, GRU, LSTM ------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;

namespace kiln::onnx {
namespace {

// RNN / GRU / LSTM (X, W, R, ...): Y [seq, dirs, batch, hidden] and Y_h (Y_c)
// [dirs, batch, hidden]; layout = 1 puts batch first: Y [batch, seq, dirs,
// hidden], Y_h [batch, dirs, hidden]. hidden is hidden_size, else W's
// gates * hidden dimension divided by the gate count.
template <int64_t Gates>
LogicalResult inferRecurrent(Operation *op) {
  FailureOr<RankedTensorType> x = getInputType(op, 0, "X");
  FailureOr<RankedTensorType> w = getInputType(op, 1, "W");
  if (failed(x) || failed(w))
    return failure();
  if (x->getRank() != 3 || w->getRank() != 3) {
    emitNodeError(op) << "X and W must have rank 3, got " << *x << " and " << *w;
    return failure();
  }
  auto direction = op->getAttrOfType<StringAttr>("direction");
  int64_t dirs = direction && direction.getValue() == "bidirectional" ? 2 : 1;
  int64_t hidden = getIntAttr(op, "hidden_size", w->getDimSize(1) / Gates);
  int64_t layout = getIntAttr(op, "layout", 0);
  if (layout != 0 && layout != 1) {
    emitNodeError(op) << "layout must be 0 or 1, got " << layout;
    return failure();
  }
  int64_t seq = x->getDimSize(layout ? 1 : 0), batch = x->getDimSize(layout ? 0 : 1);
  Type elem = x->getElementType();
  SmallVector<int64_t> y = layout ? SmallVector<int64_t>{batch, seq, dirs, hidden}
                                  : SmallVector<int64_t>{seq, dirs, batch, hidden};
  SmallVector<int64_t> last = layout ? SmallVector<int64_t>{batch, dirs, hidden}
                                     : SmallVector<int64_t>{dirs, batch, hidden};
  if (failed(setResultType(op, 0, y, elem)))
    return failure();
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    if (failed(setResultType(op, i, last, elem)))
      return failure();
  return success();
}

} // namespace

void registerRecurrentShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferRecurrent<1>, RNNOp>(ctx);
    attachInferShapes<inferRecurrent<3>, GRUOp>(ctx);
    attachInferShapes<inferRecurrent<4>, LSTMOp>(ctx);
  });
}

} // namespace kiln::onnx
