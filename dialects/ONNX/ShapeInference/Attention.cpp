//===- Attention.cpp - Shape inference of Attention -----------------------===//

#include "dialects/ONNX/ShapeInference/ShapeHelpers.h"

#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

using namespace mlir;

namespace kiln::onnx {
namespace {

// Attention (Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen):
// rank 4 (batch, heads, seq, head size) or rank 3 (batch, seq, heads * head
// size, with q_num_heads / kv_num_heads). Y is Q's shape with V's head size;
// present_key / present_value [batch, kv heads, past + kv seq, head size];
// qk_matmul_output [batch, q heads, q seq, past + kv seq], broadcast with the
// mask for the modes that include it (2, 3).
LogicalResult inferAttention(Operation *op) {
  FailureOr<RankedTensorType> q = getInputType(op, 0, "Q");
  FailureOr<RankedTensorType> k = getInputType(op, 1, "K");
  FailureOr<RankedTensorType> v = getInputType(op, 2, "V");
  FailureOr<RankedTensorType> mask = getOptionalInputType(op, 3, "attn_mask");
  FailureOr<RankedTensorType> pastKey = getOptionalInputType(op, 4, "past_key");
  FailureOr<RankedTensorType> pastValue = getOptionalInputType(op, 5, "past_value");
  if (failed(q) || failed(k) || failed(v) || failed(mask) || failed(pastKey) ||
      failed(pastValue))
    return failure();
  int64_t rank = q->getRank();
  if ((rank != 3 && rank != 4) || k->getRank() != rank || v->getRank() != rank) {
    emitNodeError(op) << "Q, K and V must all have rank 3 or all rank 4";
    return failure();
  }
  int64_t batch = q->getDimSize(0), qHeads, kvHeads, headSize, vHeadSize;
  int64_t qLen = q->getDimSize(rank == 3 ? 1 : 2);
  int64_t kvLen = k->getDimSize(rank == 3 ? 1 : 2);
  if (rank == 3) {
    qHeads = getIntAttr(op, "q_num_heads", 0);
    kvHeads = getIntAttr(op, "kv_num_heads", 0);
    if (qHeads <= 0 || kvHeads <= 0 || q->getDimSize(2) % qHeads ||
        k->getDimSize(2) % kvHeads || v->getDimSize(2) % kvHeads) {
      emitNodeError(op) << "3-D inputs need q_num_heads and kv_num_heads that "
                           "divide the hidden sizes";
      return failure();
    }
    headSize = q->getDimSize(2) / qHeads;
    vHeadSize = v->getDimSize(2) / kvHeads;
  } else {
    qHeads = q->getDimSize(1);
    kvHeads = k->getDimSize(1);
    headSize = q->getDimSize(3);
    vHeadSize = v->getDimSize(3);
  }
  // Grouped-query attention shares each K/V head among qHeads / kvHeads query
  // heads: ONNX needs a positive multiple (no K/V head at all is an error, not
  // a division by zero).
  int64_t vHeads = rank == 4 ? v->getDimSize(1) : kvHeads;
  if (kvHeads <= 0 || qHeads % kvHeads != 0 || vHeads != kvHeads) {
    emitNodeError(op) << "Q has " << qHeads << " heads, K " << kvHeads
                      << " and V " << vHeads
                      << "; K and V need the same positive number of heads "
                         "that divides Q's";
    return failure();
  }
  CheckedDims dims;
  int64_t qHidden = dims.mul(qHeads, vHeadSize);
  if (failed(dims.check(op)))
    return failure();
  int64_t pastLen = *pastKey ? pastKey->getDimSize(2) : 0;
  int64_t totalLen = pastLen + kvLen;
  Type elem = q->getElementType();
  SmallVector<int64_t> y = rank == 4
                               ? SmallVector<int64_t>{batch, qHeads, qLen, vHeadSize}
                               : SmallVector<int64_t>{batch, qLen, qHidden};
  if (failed(setResultType(op, 0, y, elem)) ||
      failed(setResultType(op, 1, {batch, kvHeads, totalLen, headSize}, elem)) ||
      failed(setResultType(op, 2, {batch, kvHeads, totalLen, vHeadSize}, elem)))
    return failure();
  SmallVector<int64_t> scores = {batch, qHeads, qLen, totalLen};
  if (*mask && getIntAttr(op, "qk_matmul_output_mode", 0) >= 2) {
    SmallVector<int64_t> maskShape(mask->getShape());
    if (!maskShape.empty())
      maskShape.back() = totalLen; // a shorter mask is padded
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(op, {ArrayRef<int64_t>(scores), ArrayRef<int64_t>(maskShape)});
    if (failed(shape))
      return failure();
    scores = *shape;
  }
  return setResultType(op, 3, scores, elem);
}

} // namespace

void registerAttentionShapeInference(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ONNXDialect *) {
    attachInferShapes<inferAttention, AttentionOp>(ctx);
  });
}

} // namespace kiln::onnx
