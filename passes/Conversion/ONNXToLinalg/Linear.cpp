//===- Linear.cpp - MatMul and Gemm to linalg ------------------------------===//
//
// MatMul -> linalg.matmul (2-D, and N-D whose B has no batch: A's batch is
// folded into M) or linalg.batch_matmul (batches broadcast numpy-style and
// collapsed to one batch dim). Gemm -> linalg.matmul on a plain row-major B
// (a constant B with transB=1 is transposed at compile time), followed by one
// elementwise linalg.generic for alpha, beta and the C bias. Accumulators are
// linalg.fill'ed with 0. Float element types, and int32 MatMul (the integer
// products of the quantized ops). f16 and bf16 products accumulate in f32
// (getAccumulatorType) and are rounded to their type once, at the end.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/ONNXToLinalg/PopulatePatterns.h"
#include "passes/Conversion/ONNXToLinalg/Utils.h"

#include "dialects/ONNX/ConstantValues.h"
#include "dialects/ONNX/Diagnostics.h"
#include "dialects/ONNX/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kiln::onnx_to_linalg {
namespace {

using kiln::onnx::emitNodeError;

/// Numpy broadcast of two static batch shapes; std::nullopt if incompatible.
std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    result[i] = x == 1 ? y : x;
  }
  return result;
}

/// Materializes `value` broadcast to `shape` (numpy rules) with a generic,
/// or returns it when it already has that shape.
Value broadcastTo(OpBuilder &b, Location loc, Value value,
                  ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  return createElementwiseGeneric(
      b, loc, RankedTensorType::get(shape, type.getElementType()), value,
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
}

/// An accumulator of `shape` filled with zero.
Value createZeroAccumulator(OpBuilder &b, Location loc,
                            ArrayRef<int64_t> shape, Type elemType) {
  return createFilledTensor(b, loc, RankedTensorType::get(shape, elemType),
                            0.0);
}

/// The longest static row (elements) lowerSymbolicBatchMatMul updates as one
/// vector value (4 zmm registers of f32).
constexpr int64_t kMaxVectorRow = 64;
/// Rows of C lowerSymbolicBatchMatMul computes at once with vector rows.
constexpr int64_t kVectorRows = 4;

/// Rows per block of a product with a symbolic M (createSymbolicRowsMatmul).
constexpr int64_t kSymbolicRowBlock = 64;

/// `lhs` [?, K] x a static `rhs` [K, N] as products of static shapes, so that
/// a target's matmul kernels (chosen for static shapes) compute them: an
/// scf.for over blocks of kSymbolicRowBlock rows, then the remaining rows as
/// at most one block of each smaller power of two (32, 16, ..., 1), each
/// block a linalg.matmul of static shape into a slice of the result.
Value createSymbolicRowsMatmul(OpBuilder &b, Location loc, Value lhs,
                               Value rhs, Type elemType) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  int64_t k = lhsType.getDimSize(1), n = rhsType.getDimSize(1);
  Value m = tensor::DimOp::create(b, loc, lhs, 0);
  Value result = tensor::EmptyOp::create(
      b, loc, RankedTensorType::get({ShapedType::kDynamic, n}, elemType),
      ValueRange{m});
  Type accElem = getAccumulatorType(elemType);
  Value zero = createScalarConstant(b, loc, accElem, 0.0);
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value block = arith::ConstantIndexOp::create(b, loc, kSymbolicRowBlock);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value full = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, m, block), block);
  auto rows = [&](Value from, Value to, int64_t step, Value init) {
    Value stepValue = step == 1                    ? c1
                      : step == kSymbolicRowBlock ? block
                                                  : arith::ConstantIndexOp::create(
                                                        b, loc, step)
                                                        .getResult();
    auto loop = scf::ForOp::create(
        b, loc, from, to, stepValue, ValueRange{init},
        [&](OpBuilder &lb, Location l, Value i, ValueRange iter) {
          SmallVector<OpFoldResult> offsets = {i, lb.getIndexAttr(0)};
          SmallVector<OpFoldResult> strides = {lb.getIndexAttr(1),
                                               lb.getIndexAttr(1)};
          Value a = tensor::ExtractSliceOp::create(
              lb, l, RankedTensorType::get({step, k}, elemType), lhs, offsets,
              {lb.getIndexAttr(step), lb.getIndexAttr(k)}, strides);
          auto accType = RankedTensorType::get({step, n}, accElem);
          Value acc = linalg::FillOp::create(
                          lb, l, ValueRange{zero},
                          ValueRange{tensor::EmptyOp::create(
                              lb, l, accType.getShape(), accElem)})
                          .getResult(0);
          Value product = narrowProduct(
              lb, l,
              linalg::MatmulOp::create(lb, l, TypeRange{accType},
                                       ValueRange{a, rhs}, ValueRange{acc})
                  .getResult(0),
              elemType);
          Value updated = tensor::InsertSliceOp::create(
              lb, l, product, iter[0], offsets,
              {lb.getIndexAttr(step), lb.getIndexAttr(n)}, strides);
          scf::YieldOp::create(lb, l, updated);
        });
    return loop.getResult(0);
  };
  Value blocks = rows(c0, full, kSymbolicRowBlock, result);
  // The rows left (fewer than a block): at most one block of each power of
  // two below it, largest first (33 rows: 32 + 1), each a static product.
  for (int64_t step = kSymbolicRowBlock / 2; step >= 1; step /= 2) {
    Value stepValue = arith::ConstantIndexOp::create(b, loc, step);
    Value left = arith::SubIOp::create(b, loc, m, full);
    Value end = arith::AddIOp::create(
        b, loc, full,
        arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, left, stepValue),
            stepValue));
    blocks = rows(full, end, step, blocks);
    full = end;
  }
  return blocks;
}

/// 2-D product `lhs` [M,K] x `rhs` [K,N] with linalg.matmul. A symbolic M
/// (`?`) takes its size from `lhs` (createSymbolicRowsMatmul when `rhs` is
/// static).
Value createMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                   Type elemType) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  SmallVector<int64_t> shape = {lhsType.getDimSize(0), rhsType.getDimSize(1)};
  Type accElem = getAccumulatorType(elemType);
  Value acc;
  if (lhsType.isDynamicDim(0)) {
    if (rhsType.hasStaticShape() && !lhsType.isDynamicDim(1))
      return createSymbolicRowsMatmul(b, loc, lhs, rhs, elemType);
    auto accType = RankedTensorType::get(shape, accElem);
    Value empty = tensor::EmptyOp::create(
        b, loc, accType, ValueRange{tensor::DimOp::create(b, loc, lhs, 0)});
    Value zero = createScalarConstant(b, loc, accElem, 0.0);
    acc = linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty})
              .getResult(0);
  } else {
    acc = createZeroAccumulator(b, loc, shape, accElem);
  }
  return narrowProduct(b, loc,
                       linalg::MatmulOp::create(b, loc, TypeRange{acc.getType()},
                                                ValueRange{lhs, rhs},
                                                ValueRange{acc})
                           .getResult(0),
                       elemType);
}

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

/// MatMul of A [..., M, K] and B [..., K, N] of one rank >= 3 with symbolic
/// dims on both sides (attention's [b, h, s, d] x [b, h, d, s]): the batch
/// dims (equal in A and B: kiln-symbolic-shapes proved the symbols equal; no
/// broadcasting) collapsed, one batch product with run-time sizes (a
/// linalg.generic, see below), expanded back.
LogicalResult lowerSymbolicBatchMatMul(onnx::MatMulOp op, Value a, Value bv,
                                       RankedTensorType resultType,
                                       ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(bv.getType());
  Type elemType = resultType.getElementType();
  int64_t rank = aType.getRank();
  for (int64_t i = 0; i < rank - 2; ++i)
    if (aType.getDimSize(i) != bType.getDimSize(i))
      return emitNodeError(op)
                 << "MatMul with symbolic dimensions broadcasts batch "
                    "dimension "
                 << i << " (" << aType << " and " << bType
                 << "); not supported yet",
             failure();
  auto collapse = [&](Value v, RankedTensorType t) -> Value {
    if (rank == 3)
      return v;
    SmallVector<ReassociationIndices> assoc(1);
    int64_t batch = 1;
    for (int64_t i = 0; i < rank - 2; ++i) {
      assoc[0].push_back(i);
      batch = t.isDynamicDim(i) || ShapedType::isDynamic(batch)
                  ? ShapedType::kDynamic
                  : batch * t.getDimSize(i);
    }
    assoc.push_back({rank - 2});
    assoc.push_back({rank - 1});
    return tensor::CollapseShapeOp::create(
        rewriter, loc,
        RankedTensorType::get(
            {batch, t.getDimSize(rank - 2), t.getDimSize(rank - 1)},
            t.getElementType()),
        v, assoc);
  };
  Value lhs = collapse(a, aType), rhs = collapse(bv, bType);
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  auto accType = RankedTensorType::get(
      {lhsType.getDimSize(0), lhsType.getDimSize(1), rhsType.getDimSize(2)},
      elemType);
  SmallVector<Value> sizes;
  if (accType.isDynamicDim(0))
    sizes.push_back(tensor::DimOp::create(rewriter, loc, lhs, 0));
  if (accType.isDynamicDim(1))
    sizes.push_back(tensor::DimOp::create(rewriter, loc, lhs, 1));
  if (accType.isDynamicDim(2))
    sizes.push_back(tensor::DimOp::create(rewriter, loc, rhs, 2));
  Value empty = tensor::EmptyOp::create(rewriter, loc, accType, sizes);
  Value zero = createScalarConstant(rewriter, loc, elemType, 0.0);
  Value acc =
      linalg::FillOp::create(rewriter, loc, ValueRange{zero}, ValueRange{empty})
          .getResult(0);
  // Loops over (batch, m, k) around a 1-D generic over n: C[b, m, :] +=
  // A[b, m, k] * B[b, k, :]. A's element is read once per row update (a
  // value the inner loop captures), and the inner loop runs along contiguous
  // rows of B and C, which LLVM vectorizes; linalg.batch_matmul's
  // (batch, m, n, k) order reduces along a column of B instead.
  Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto dimOf = [&](Value v, RankedTensorType t, int64_t i) -> Value {
    return t.isDynamicDim(i)
               ? tensor::DimOp::create(rewriter, loc, v, i).getResult()
               : arith::ConstantIndexOp::create(rewriter, loc, t.getDimSize(i))
                     .getResult();
  };
  Value nb = dimOf(lhs, lhsType, 0), nm = dimOf(lhs, lhsType, 1),
        nk = dimOf(lhs, lhsType, 2);
  OpFoldResult nn = tensor::getMixedSize(rewriter, loc, rhs, 2);
  auto rowType = RankedTensorType::get({rhsType.getDimSize(2)}, elemType);
  // A static N of a few vectors (scores x V: N is the head size) is updated
  // as a vector: the generic over n would be fully unrolled by LLVM into
  // scalar multiply-adds that it does not vectorize.
  // A symbolic N (Q x K^T: N is the sequence) is updated as tiles of one
  // 512-bit vector (see rowBlock).
  VectorType rowVector;
  bool tiledN = false;
  if (elemType.isF32() || elemType.isF64()) {
    if (!rhsType.isDynamicDim(2) && rhsType.getDimSize(2) <= kMaxVectorRow) {
      rowVector = VectorType::get({rhsType.getDimSize(2)}, elemType);
    } else if (rhsType.isDynamicDim(2)) {
      rowVector = VectorType::get({512 / elemType.getIntOrFloatBitWidth()},
                                  elemType);
      tiledN = true;
    }
  }
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<AffineMap> maps(2, AffineMap::getMultiDimIdentityMap(1, ctx));
  auto one = rewriter.getIndexAttr(1), zeroAttr = rewriter.getIndexAttr(0);
  // `rows` rows of C[b] from row `im` with vector accumulators over k: the
  // rows in registers, A's elements broadcast, B's row read once per k for
  // all of them (independent multiply-adds: the chain of one row is bound by
  // the multiply-add's latency).
  auto vectorRows = [&](OpBuilder &b2, Location l2, Value ib, Value im,
                        int64_t rows, Value c, Value n0,
                        bool inBounds) -> Value {
    SmallVector<Value> rowIndices;
    for (int64_t r = 0; r < rows; ++r)
      rowIndices.push_back(
          r == 0 ? im
                 : arith::AddIOp::create(
                       b2, l2, im, arith::ConstantIndexOp::create(b2, l2, r))
                       .getResult());
    Value init = arith::ConstantOp::create(
        b2, l2, rowVector,
        DenseElementsAttr::get(rowVector, b2.getZeroAttr(elemType)));
    auto kLoop = scf::ForOp::create(
        b2, l2, c0, nk, c1, SmallVector<Value>(rows, init),
        [&](OpBuilder &b3, Location l3, Value ik, ValueRange accs) {
          Value bRow = vector::TransferReadOp::create(
              b3, l3, rowVector, rhs, ValueRange{ib, ik, n0},
              /*padding=*/zero, /*inBounds=*/ArrayRef<bool>{inBounds});
          SmallVector<Value> updated;
          for (int64_t r = 0; r < rows; ++r) {
            Value a = tensor::ExtractOp::create(
                b3, l3, lhs, ValueRange{ib, rowIndices[r], ik});
            Value aRow = vector::BroadcastOp::create(b3, l3, rowVector, a);
            updated.push_back(
                vector::FMAOp::create(b3, l3, aRow, bRow, accs[r]));
          }
          scf::YieldOp::create(b3, l3, updated);
        });
    for (int64_t r = 0; r < rows; ++r)
      c = vector::TransferWriteOp::create(b2, l2, kLoop.getResult(r), c,
                                          ValueRange{ib, rowIndices[r], n0},
                                          ArrayRef<bool>{inBounds})
              .getResult();
    return c;
  };
  // Row m of C[b] as row updates C[b, m, :] += A[b, m, k] * B[b, k, :], a
  // generic over n per k (LLVM vectorizes it along a symbolic N).
  auto genericRow = [&](OpBuilder &b2, Location l2, Value ib, Value im,
                        Value c) -> Value {
    SmallVector<OpFoldResult> offsets = {ib, im, zeroAttr};
    SmallVector<OpFoldResult> sizes = {one, one, nn};
    SmallVector<OpFoldResult> strides = {one, one, one};
    Value row = tensor::ExtractSliceOp::create(
        b2, l2, rowType, c, offsets, sizes, strides);
    auto kLoop = scf::ForOp::create(
        b2, l2, c0, nk, c1, ValueRange{row},
        [&](OpBuilder &b3, Location l3, Value ik, ValueRange r) {
          Value a = tensor::ExtractOp::create(b3, l3, lhs,
                                              ValueRange{ib, im, ik});
          Value bRow = tensor::ExtractSliceOp::create(
              b3, l3, rowType, rhs,
              SmallVector<OpFoldResult>{ib, ik, zeroAttr}, sizes,
              strides);
          Value updated =
              linalg::GenericOp::create(
                  b3, l3, TypeRange{rowType}, ValueRange{bRow},
                  ValueRange{r[0]}, maps,
                  getParallelIterators(1),
                  [&](OpBuilder &b4, Location l4, ValueRange args) {
                    Value mul =
                        arith::MulFOp::create(b4, l4, a, args[0]);
                    linalg::YieldOp::create(
                        b4, l4,
                        arith::AddFOp::create(b4, l4, mul, args[1])
                            .getResult());
                  })
                  .getResult(0);
          scf::YieldOp::create(b3, l3, updated);
        });
    Value inserted = tensor::InsertSliceOp::create(
        b2, l2, kLoop.getResult(0), c, offsets, sizes, strides);
    return inserted;
  };
  // `rows` rows from `im`: the whole row (a static N), or tiles of the
  // vector's width along a symbolic N (the columns left after the whole
  // tiles: the row's last tile again; an N below one vector: row updates).
  auto rowBlock = [&](OpBuilder &b2, Location l2, Value ib, Value im,
                      int64_t rows, Value c) -> Value {
    if (!tiledN)
      return vectorRows(b2, l2, ib, im, rows, c, c0, /*inBounds=*/true);
    Value n = tensor::DimOp::create(b2, l2, rhs, 2);
    Value width =
        arith::ConstantIndexOp::create(b2, l2, rowVector.getDimSize(0));
    Value wide = arith::CmpIOp::create(b2, l2, arith::CmpIPredicate::uge, n,
                                       width);
    auto ifOp = scf::IfOp::create(
        b2, l2, wide,
        [&](OpBuilder &b3, Location l3) {
          Value nFull = arith::MulIOp::create(
              b3, l3, arith::DivUIOp::create(b3, l3, n, width), width);
          auto tiles = scf::ForOp::create(
              b3, l3, c0, nFull, width, ValueRange{c},
              [&](OpBuilder &b4, Location l4, Value n0, ValueRange cn) {
                scf::YieldOp::create(b4, l4,
                                     vectorRows(b4, l4, ib, im, rows, cn[0],
                                                n0, /*inBounds=*/true));
              });
          // N % width columns left: the last whole vector of the row,
          // [N - width, N), again (each tile is computed from zero, so the
          // columns it shares with the previous one get the same values).
          auto last = scf::ForOp::create(
              b3, l3, nFull, n, width, ValueRange{tiles.getResult(0)},
              [&](OpBuilder &b4, Location l4, Value, ValueRange cn) {
                Value n0 = arith::SubIOp::create(b4, l4, n, width);
                scf::YieldOp::create(b4, l4,
                                     vectorRows(b4, l4, ib, im, rows, cn[0],
                                                n0, /*inBounds=*/true));
              });
          scf::YieldOp::create(b3, l3, last.getResult(0));
        },
        [&](OpBuilder &b3, Location l3) {
          // N below one vector: row updates.
          Value rowsDone = c;
          for (int64_t r = 0; r < rows; ++r) {
            Value row =
                r == 0 ? im
                       : arith::AddIOp::create(
                             b3, l3, im,
                             arith::ConstantIndexOp::create(b3, l3, r))
                             .getResult();
            rowsDone = genericRow(b3, l3, ib, row, rowsDone);
          }
          scf::YieldOp::create(b3, l3, rowsDone);
        });
    return ifOp.getResult(0);
  };
  auto batchLoop = scf::ForOp::create(
      rewriter, loc, c0, nb, c1, ValueRange{acc},
      [&](OpBuilder &b1, Location l1, Value ib, ValueRange c) {
        if (rowVector) {
          // Blocks of kVectorRows rows, then the rows left one at a time.
          Value block = arith::ConstantIndexOp::create(b1, l1, kVectorRows);
          Value full = arith::MulIOp::create(
              b1, l1, arith::DivUIOp::create(b1, l1, nm, block), block);
          auto blocks = scf::ForOp::create(
              b1, l1, c0, full, block, ValueRange{c[0]},
              [&](OpBuilder &b2, Location l2, Value im, ValueRange cm) {
                scf::YieldOp::create(
                    b2, l2, rowBlock(b2, l2, ib, im, kVectorRows, cm[0]));
              });
          auto rest = scf::ForOp::create(
              b1, l1, full, nm, c1, ValueRange{blocks.getResult(0)},
              [&](OpBuilder &b2, Location l2, Value im, ValueRange cm) {
                scf::YieldOp::create(b2, l2,
                                     rowBlock(b2, l2, ib, im, 1, cm[0]));
              });
          scf::YieldOp::create(b1, l1, rest.getResult(0));
          return;
        }
        auto rowLoop = scf::ForOp::create(
            b1, l1, c0, nm, c1, ValueRange{c[0]},
            [&](OpBuilder &b2, Location l2, Value im, ValueRange cm) {
              scf::YieldOp::create(b2, l2,
                                   genericRow(b2, l2, ib, im, cm[0]));
            });
        scf::YieldOp::create(b1, l1, rowLoop.getResult(0));
      });
  Value product = batchLoop.getResult(0);
  (void)ctx;
  if (rank > 3) {
    SmallVector<ReassociationIndices> assoc(1);
    SmallVector<OpFoldResult> outSizes;
    for (int64_t i = 0; i < rank - 2; ++i) {
      assoc[0].push_back(i);
      outSizes.push_back(tensor::getMixedSize(rewriter, loc, a, i));
    }
    assoc.push_back({rank - 2});
    assoc.push_back({rank - 1});
    outSizes.push_back(tensor::getMixedSize(rewriter, loc, a, rank - 2));
    outSizes.push_back(tensor::getMixedSize(rewriter, loc, bv, rank - 1));
    product = tensor::ExpandShapeOp::create(rewriter, loc, resultType, product,
                                            assoc, outSizes);
  }
  rewriter.replaceOp(op, product);
  return success();
}

/// MatMul with symbolic dims in A's leading (batch and M) dims and a static
/// 2-D B: A collapsed to [?, K], one linalg.matmul with a run-time M,
/// expanded back to the result's shape.
LogicalResult lowerSymbolicMatMul(onnx::MatMulOp op, Value a, Value bv,
                                  RankedTensorType resultType,
                                  ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(bv.getType());
  Type elemType = resultType.getElementType();
  if (isa<FloatType>(elemType) && aType.getRank() >= 3 &&
      aType.getRank() == bType.getRank() &&
      (!bType.hasStaticShape() || aType.isDynamicDim(aType.getRank() - 1)))
    return lowerSymbolicBatchMatMul(op, a, bv, resultType, rewriter);
  if (!isa<FloatType>(elemType) || aType.getRank() < 2 ||
      bType.getRank() != 2 || !bType.hasStaticShape() ||
      aType.isDynamicDim(aType.getRank() - 1))
    return emitNodeError(op)
               << "MatMul with symbolic dimensions needs a float A [..., M, "
                  "K] whose symbolic dims are among its leading ones and a "
                  "static 2-D B (got "
               << aType << " and " << bType << "); not supported yet",
           failure();
  int64_t rank = aType.getRank(), k = aType.getDimSize(rank - 1);
  Value lhs = a;
  if (rank > 2) {
    SmallVector<ReassociationIndices> assoc(1);
    for (int64_t i = 0; i < rank - 1; ++i)
      assoc[0].push_back(i);
    assoc.push_back({rank - 1});
    lhs = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({ShapedType::kDynamic, k}, elemType),
        a, assoc);
  }
  Value product = createMatmul(rewriter, loc, lhs, bv, elemType);
  if (rank > 2) {
    SmallVector<ReassociationIndices> assoc(1);
    for (int64_t i = 0; i < rank - 1; ++i)
      assoc[0].push_back(i);
    assoc.push_back({rank - 1});
    SmallVector<OpFoldResult> sizes;
    for (int64_t i = 0; i < rank - 1; ++i)
      sizes.push_back(tensor::getMixedSize(rewriter, loc, a, i));
    sizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(rank - 1)));
    product = tensor::ExpandShapeOp::create(rewriter, loc, resultType, product,
                                            assoc, sizes);
  }
  rewriter.replaceOp(op, product);
  return success();
}

struct MatMulLowering : OpConversionPattern<onnx::MatMulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::MatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (RankedTensorType ranked =
            getConvertedRankedResultType(getTypeConverter(), op);
        ranked && !ranked.hasStaticShape())
      return lowerSymbolicMatMul(op, adaptor.getA(), adaptor.getB(), ranked,
                                 rewriter);
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    RankedTensorType aType = getStaticTensorType(adaptor.getA());
    RankedTensorType bType = getStaticTensorType(adaptor.getB());
    if (!resultType || !aType || !bType)
      return emitNodeError(op) << "MatMul needs static shapes", failure();
    Type elemType = resultType.getElementType();
    // int32: the zero-point-centered products of MatMulInteger/QLinearMatMul
    // (kiln-decompose), accumulated with wrap-around like onnxruntime.
    bool int32 = elemType.isSignlessInteger(32) &&
                 aType.getElementType() == elemType &&
                 bType.getElementType() == elemType;
    if (!isa<FloatType>(elemType) && !int32)
      return emitNodeError(op)
                 << "integer MatMul is only supported on int32 (element type "
                 << elemType << "); use MatMulInteger/QLinearMatMul",
             failure();
    if (aType.getRank() == 0 || bType.getRank() == 0)
      return emitNodeError(op) << "MatMul operands must have rank >= 1",
             failure();

    // Numpy: a 1-D A is [1,K], a 1-D B is [K,1]; the unit dim is dropped from
    // the result (createReshape at the end goes to the inferred result type).
    bool aVector = aType.getRank() == 1, bVector = bType.getRank() == 1;
    if (aVector)
      aType = RankedTensorType::get({1, aType.getDimSize(0)}, elemType);
    if (bVector)
      bType = RankedTensorType::get({bType.getDimSize(0), 1}, elemType);
    int64_t m = aType.getDimSize(aType.getRank() - 2);
    int64_t k = aType.getDimSize(aType.getRank() - 1);
    int64_t kb = bType.getDimSize(bType.getRank() - 2);
    int64_t n = bType.getDimSize(bType.getRank() - 1);
    if (k != kb)
      return emitNodeError(op) << "MatMul inner dimensions differ (" << k
                               << " vs " << kb << ")",
             failure();
    ArrayRef<int64_t> aBatch = aType.getShape().drop_back(2);
    ArrayRef<int64_t> bBatch = bType.getShape().drop_back(2);
    std::optional<SmallVector<int64_t>> batch =
        broadcastShapes(aBatch, bBatch);
    if (!batch)
      return emitNodeError(op) << "MatMul batch dimensions do not broadcast",
             failure();
    int64_t batchSize = ShapedType::getNumElements(*batch);
    int64_t bBatchSize = ShapedType::getNumElements(bBatch);
    if (ShapedType::getNumElements(*batch) * m * n !=
        resultType.getNumElements())
      return emitNodeError(op) << "MatMul result type " << resultType
                               << " does not match its operands",
             failure();

    Value a = adaptor.getA(), bv = adaptor.getB();
    if (aVector)
      a = createReshape(rewriter, loc, a, aType);
    if (bVector)
      bv = createReshape(rewriter, loc, bv, bType);
    Value product;
    if (bBatchSize == 1) {
      // B is one matrix: fold A's (broadcast) batch into M.
      SmallVector<int64_t> aShape(*batch);
      aShape.append({m, k});
      a = broadcastTo(rewriter, loc, a, aShape);
      a = createReshape(rewriter, loc, a,
                        RankedTensorType::get({batchSize * m, k}, elemType));
      bv = createReshape(rewriter, loc, bv,
                         RankedTensorType::get({k, n}, elemType));
      product = createMatmul(rewriter, loc, a, bv, elemType);
    } else {
      SmallVector<int64_t> aShape(*batch), bShape(*batch);
      aShape.append({m, k});
      bShape.append({k, n});
      a = createReshape(rewriter, loc, broadcastTo(rewriter, loc, a, aShape),
                        RankedTensorType::get({batchSize, m, k}, elemType));
      bv = createReshape(rewriter, loc,
                         broadcastTo(rewriter, loc, bv, bShape),
                         RankedTensorType::get({batchSize, k, n}, elemType));
      Value acc = createZeroAccumulator(rewriter, loc, {batchSize, m, n},
                                        getAccumulatorType(elemType));
      product = narrowProduct(
          rewriter, loc,
          linalg::BatchMatmulOp::create(rewriter, loc,
                                        TypeRange{acc.getType()},
                                        ValueRange{a, bv}, ValueRange{acc})
              .getResult(0),
          elemType);
    }
    rewriter.replaceOp(op, createReshape(rewriter, loc, product, resultType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

/// `value` (2-D) transposed: at compile time into a new constant when
/// `original` (the onnx operand) is a constant, else with linalg.transpose.
Value transposeMatrix(OpBuilder &b, Location loc, Value value,
                      Value original) {
  if (ElementsAttr attr = kiln::onnx::getConstantAttr(original)) {
    if (ElementsAttr signless = convertElementsAttrToSignless(attr))
      if (ElementsAttr transposed = transposeElementsAttr(signless, {1, 0}))
        return arith::ConstantOp::create(b, loc, cast<TypedAttr>(transposed));
  }
  return createTranspose(b, loc, value, {1, 0});
}

struct GemmLowering : OpConversionPattern<onnx::GemmOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(onnx::GemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType =
        getConvertedResultType(getTypeConverter(), op);
    RankedTensorType aType = getStaticTensorType(adaptor.getA());
    RankedTensorType bType = getStaticTensorType(adaptor.getB());
    // A symbolic M: A [?, K] (transA = 0) times a static B.
    if (RankedTensorType ranked =
            getConvertedRankedResultType(getTypeConverter(), op);
        ranked && !ranked.hasStaticShape()) {
      auto dynA = dyn_cast<RankedTensorType>(adaptor.getA().getType());
      if (op.getTransA() != 0 || !bType || !dynA || dynA.getRank() != 2 ||
          dynA.isDynamicDim(1) || !ranked.isDynamicDim(0) ||
          ranked.isDynamicDim(1))
        return emitNodeError(op) << "Gemm with symbolic dimensions needs A "
                                    "[M, K] with only M symbolic (transA = 0) "
                                    "and a static B; not supported yet",
               failure();
      resultType = ranked;
      aType = dynA;
    }
    if (!resultType || !aType || !bType)
      return emitNodeError(op) << "Gemm needs static shapes", failure();
    Type elemType = resultType.getElementType();
    if (!isa<FloatType>(elemType))
      return emitNodeError(op) << "integer Gemm is not supported yet (element "
                                  "type "
                               << elemType << ")",
             failure();
    if (aType.getRank() != 2 || bType.getRank() != 2 ||
        resultType.getRank() != 2)
      return emitNodeError(op) << "Gemm operands must be 2-D", failure();

    int64_t am = aType.getDimSize(op.getTransA() ? 1 : 0);
    int64_t ak = aType.getDimSize(op.getTransA() ? 0 : 1);
    int64_t bk = bType.getDimSize(op.getTransB() ? 1 : 0);
    int64_t bn = bType.getDimSize(op.getTransB() ? 0 : 1);
    if (ak != bk ||
        (am != resultType.getDimSize(0) && !resultType.isDynamicDim(0)) ||
        bn != resultType.getDimSize(1))
      return emitNodeError(op) << "Gemm operand shapes " << aType << " and "
                               << bType << " do not give " << resultType,
             failure();
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    bool hasC = !kiln::onnx::isNoneValue(op.getC()) && beta != 0.0;
    Value c = adaptor.getC();
    if (hasC) {
      auto cType = dyn_cast<RankedTensorType>(c.getType());
      if (!cType ||
          !isBroadcastableTo(cType.getShape(), resultType.getShape()))
        return emitNodeError(op)
                   << "Gemm C does not broadcast to the result " << resultType,
               failure();
    }

    Value a = adaptor.getA(), bv = adaptor.getB();
    if (op.getTransA() != 0)
      a = transposeMatrix(rewriter, loc, a, op.getA());
    if (op.getTransB() != 0)
      bv = transposeMatrix(rewriter, loc, bv, op.getB());
    Value product = createMatmul(rewriter, loc, a, bv, elemType);
    if (alpha == 1.0 && !hasC) {
      rewriter.replaceOp(op, product);
      return success();
    }

    SmallVector<Value> inputs = {product};
    if (hasC)
      inputs.push_back(c);
    Value result = createElementwiseGeneric(
        rewriter, loc, resultType, inputs,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value y = args[0];
          if (alpha != 1.0)
            y = arith::MulFOp::create(
                b, l, y, createScalarConstant(b, l, elemType, alpha));
          if (args.size() > 1) {
            Value cv = args[1];
            if (beta != 1.0)
              cv = arith::MulFOp::create(
                  b, l, cv, createScalarConstant(b, l, elemType, beta));
            y = arith::AddFOp::create(b, l, y, cv);
          }
          return y;
        });
    if (!result)
      return emitNodeError(op) << "Gemm: cannot build the bias generic",
             failure();
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateLinearPatterns(TypeConverter &converter,
                            RewritePatternSet &patterns) {
  patterns.add<MatMulLowering, GemmLowering>(converter,
                                             patterns.getContext());
}

} // namespace kiln::onnx_to_linalg
