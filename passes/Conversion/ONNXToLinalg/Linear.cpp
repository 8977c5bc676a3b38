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

/// Rows per block of a product with a symbolic M (createSymbolicRowsMatmul).
constexpr int64_t kSymbolicRowBlock = 64;

/// `lhs` [?, K] x a static `rhs` [K, N] as products of static shapes, so that
/// a target's matmul kernels (chosen for static shapes) compute them: an
/// scf.for over blocks of kSymbolicRowBlock rows, then one over the
/// remaining rows one at a time, each block a linalg.matmul of static shape
/// into a slice of the result.
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
    Value stepValue = step == 1 ? c1 : block;
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
  return rows(full, m, 1, blocks);
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
