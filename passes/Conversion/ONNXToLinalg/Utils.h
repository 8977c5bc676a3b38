//===- Utils.h - Shared helpers for onnx -> linalg lowering -----*- C++ -*-===//
//
// Helpers shared by the pattern families in passes/Conversion/ONNXToLinalg.
// Append new helpers at the end (several engineers add to this file).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_CONVERSION_ONNXTOLINALG_UTILS_H
#define KILN_PASSES_CONVERSION_ONNXTOLINALG_UTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <utility>

namespace kiln::onnx_to_linalg {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

// The element type of a shaped type, or `type` itself: use
// mlir::getElementTypeOrSelf (mlir/IR/TypeUtilities.h).

/// `type` with unsigned/signed integers made signless (element types of
/// tensors too); everything else unchanged. Matches the pass's TypeConverter.
mlir::Type toSignless(mlir::Type type);

/// True when the (element) type of `type` is an unsigned integer (uiN).
/// Look at the *original* onnx op's types: converted types are signless.
bool isUnsignedInt(mlir::Type type);
/// True for an integer element type other than i1 (bool).
bool isIntNotBool(mlir::Type type);
/// True for i1 (ONNX bool).
bool isBool(mlir::Type type);
/// True for any float element type.
bool isFloat(mlir::Type type);

/// A scalar arith.constant of `elemType` (int or float, signless) holding
/// `value` (converted: for an integer type the value is truncated to int64).
mlir::Value createScalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Type elemType, double value);
/// A scalar arith.constant of the integer type `elemType` holding `value`.
mlir::Value createIntConstant(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Type elemType, int64_t value);

/// The typed attribute for `value` of `elemType` (signless int or float).
mlir::TypedAttr getScalarAttr(mlir::Type elemType, double value);

/// Converts scalar `value` to `toType` (both signless int or float; i1 is
/// bool). `srcUnsigned`/`dstUnsigned` tell how integers are interpreted:
/// extension is zero-extension for an unsigned source, float -> int uses
/// fptoui for an unsigned destination. float -> int truncates toward zero;
/// anything -> i1 is `!= 0`; i1 -> anything is 0/1.
mlir::Value convertScalar(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value value, mlir::Type toType,
                          bool srcUnsigned = false, bool dstUnsigned = false);

/// The type a product (MatMul, Gemm, Conv) of `elemType` accumulates in: f32
/// for the narrow floats (f16, bf16), as onnxruntime's and MLAS's half
/// kernels do; `elemType` itself otherwise.
mlir::Type getAccumulatorType(mlir::Type elemType);

/// `product` (a tensor accumulated in getAccumulatorType) converted to
/// `elemType` elementwise (f32 -> f16/bf16, rounding to nearest even), or
/// `product` itself when it already has that element type.
mlir::Value narrowProduct(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value product, mlir::Type elemType);

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

/// tensor.empty of the static `type`.
mlir::Value createEmptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::RankedTensorType type);
/// tensor.empty of `shape` x `elemType`.
mlir::Value createEmptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::ArrayRef<int64_t> shape,
                              mlir::Type elemType);
/// tensor.empty of `resultType`, whose `?` dims take their sizes from
/// `sources` (tensor.dim of the first source with a `?` at that dim, shapes
/// aligned on the right, as broadcasting aligns them). Null when a `?` dim has
/// no source.
mlir::Value createEmptyTensorLike(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::RankedTensorType resultType,
                                  mlir::ValueRange sources);
/// tensor.empty of `resultType` (result 0 of `op`) whose `?` dims take the
/// sizes kiln-symbolic-shapes recorded on `op` as `kiln.result_dims` (a map
/// over the symbols), each symbol read with tensor.dim from the first entry
/// argument whose dims name it (the function's `kiln.input_dims`, else the
/// arguments' `kiln.dims`). Null when `op` has no such sizes.
mlir::Value createEmptyTensorFromSymbols(mlir::OpBuilder &b, mlir::Location loc,
                                         mlir::Operation *op,
                                         mlir::RankedTensorType resultType);
/// linalg.fill of a tensor.empty of `type` with `value` (a scalar Value).
mlir::Value createFilledTensor(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::RankedTensorType type, mlir::Value value);
/// linalg.fill of a tensor.empty of `type` with the constant `value`.
mlir::Value createFilledTensor(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::RankedTensorType type, double value);

//===----------------------------------------------------------------------===//
// Broadcasting (multidirectional, numpy style) through indexing maps
//===----------------------------------------------------------------------===//

/// The indexing map that reads an operand of `operandShape` inside a
/// linalg.generic iterating over `resultShape` (numpy broadcasting: shapes
/// aligned on the right; a size-1 operand dim that is not size 1 in the
/// result reads index 0, i.e. becomes the constant 0 in the map).
/// A 0-d operand gets the map (d0, ..., dn-1) -> ().
/// Precondition: operandShape broadcasts to resultShape (check with
/// `isBroadcastableTo`).
mlir::AffineMap getBroadcastIndexingMap(mlir::MLIRContext *ctx,
                                        llvm::ArrayRef<int64_t> operandShape,
                                        llvm::ArrayRef<int64_t> resultShape);

/// True when `operandShape` broadcasts (numpy rules) to `resultShape`. A `?`
/// dim matches only a `?` (kiln-symbolic-shapes proved them the same symbol);
/// a 1 broadcasts to a `?`.
bool isBroadcastableTo(llvm::ArrayRef<int64_t> operandShape,
                       llvm::ArrayRef<int64_t> resultShape);

/// Builds one elementwise linalg.generic over `resultType` (static shape)
/// reading every operand in `inputs` (ranked tensors, broadcast to the
/// result shape by getBroadcastIndexingMap) and writing into a tensor.empty;
/// `bodyBuilder` gets the scalar arguments (one per input) and returns the
/// scalar result of type resultType's element type. Returns the result.
/// `?` result dims take their sizes from the inputs (createEmptyTensorLike).
/// Fails (returns nullptr) when an input does not broadcast.
mlir::Value createElementwiseGeneric(
    mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType resultType,
    mlir::ValueRange inputs,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::ValueRange)>
        bodyBuilder);

/// All-parallel iterator types for a rank-`rank` generic.
llvm::SmallVector<mlir::utils::IteratorType>
getParallelIterators(int64_t rank);

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// `attr` retyped to signless integers (uiN/siN -> iN) without copying big
/// data: a DenseElementsAttr is re-wrapped with bitcast semantics
/// (DenseElementsAttr::bitcast keeps the raw buffer), a
/// DenseResourceElementsAttr keeps its blob handle with the new type.
/// Returns `attr` itself when already signless; null when it cannot.
mlir::ElementsAttr convertElementsAttrToSignless(mlir::ElementsAttr attr);

/// The constant integer values behind `value` (onnx.Constant / arith.constant
/// folded values), see kiln::onnx::getConstantIntValues. std::nullopt when
/// not a readable integer constant.
std::optional<llvm::SmallVector<int64_t>> readConstantInts(mlir::Value value);
/// Same for float constants (as doubles).
std::optional<llvm::SmallVector<double>> readConstantFloats(mlir::Value value);
/// A single (splat or 1-element) numeric constant behind `value` as a double
/// (ints converted); std::nullopt otherwise.
std::optional<double> readConstantScalar(mlir::Value value);

/// Normalizes an ONNX axis (possibly negative) against `rank`; std::nullopt
/// when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// The static ranked tensor type of `value`, or null when not static ranked.
mlir::RankedTensorType getStaticTensorType(mlir::Value value);
/// The converted (signless) ranked result type of `op`'s result `i`, `?`
/// dims allowed (the ops that take symbolic dims), or null.
mlir::RankedTensorType
getConvertedRankedResultType(const mlir::TypeConverter *converter,
                             mlir::Operation *op, unsigned i = 0);
/// The converted (signless) static ranked result type of `op`'s result `i`
/// via `converter`, or null.
mlir::RankedTensorType getConvertedResultType(const mlir::TypeConverter *converter,
                                              mlir::Operation *op,
                                              unsigned i = 0);


//===----------------------------------------------------------------------===//
// Layout helpers (Linear, Convolution, Pooling, DataMovement)
//===----------------------------------------------------------------------===//

/// A copy of the constant `attr` (DenseElementsAttr or
/// DenseResourceElementsAttr) with its dimensions permuted like
/// linalg.transpose (result dim i = source dim perm[i]), done at compile time.
/// `shape` is the logical row-major shape of the data (empty: attr's own
/// shape; it may differ from attr's type when the element counts match, to
/// transpose a reshaped view). The result is a new DenseResourceElementsAttr
/// (a splat stays a splat DenseElementsAttr; bool stays inline). Null when
/// the data cannot be read.
mlir::ElementsAttr transposeElementsAttr(mlir::ElementsAttr attr,
                                         llvm::ArrayRef<int64_t> perm,
                                         llvm::ArrayRef<int64_t> shape = {});

/// `attr` with its type replaced by `shape` (same element count; no copy of a
/// resource blob). Null when it cannot.
mlir::ElementsAttr reshapeElementsAttr(mlir::ElementsAttr attr,
                                       llvm::ArrayRef<int64_t> shape);

/// linalg.transpose of the static ranked `value` by `perm` into a tensor.empty.
mlir::Value createTranspose(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value value, llvm::ArrayRef<int64_t> perm);

/// `value` (static ranked tensor) reshaped to the static `type` (same element
/// count) with tensor.collapse_shape / tensor.expand_shape: one of them when
/// the reshape is a pure collapse or expand, else a collapse to 1-D followed
/// by an expand. Returns `value` when the shapes already match.
mlir::Value createReshape(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value value, mlir::RankedTensorType type);

/// The prefix kiln::onnx::emitNodeError puts before a message:
/// "node 'NAME' (OpType, opset N): " (name/opset parts left out when absent).
/// For messages carried to run time, e.g. by kiln.check.
std::string getNodeMessagePrefix(mlir::Operation *op);

/// Pads for one spatial dim of a conv/pool window from ONNX attributes:
/// explicit `pads` (NOTSET) or computed for auto_pad SAME_UPPER/SAME_LOWER
/// (VALID: 0). Returns {begin, end}; std::nullopt for an unknown auto_pad.
std::optional<std::pair<int64_t, int64_t>>
computeWindowPads(llvm::StringRef autoPad, int64_t inSize, int64_t kernel,
                  int64_t stride, int64_t dilation, int64_t explicitBegin,
                  int64_t explicitEnd);


//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// `shape` without the dims where `reduced[i]` is true (keepdims = false), or
/// with them set to 1 (keepdims = true).
llvm::SmallVector<int64_t> getReducedShape(llvm::ArrayRef<int64_t> shape,
                                           llvm::ArrayRef<bool> reduced,
                                           bool keepdims);

/// One linalg.generic reducing the static ranked `input` over the dims where
/// `reduced[i]` is true into a tensor of the reduced shape (dims dropped)
/// with element type `accType`, initialized (linalg.fill) with `init`.
/// `extras` are further inputs of exactly the reduced shape (dims dropped),
/// read at the same reduced position (e.g. a max for log-sum-exp).
/// `combine(b, loc, x, extras, acc)` returns the new accumulator.
mlir::Value createReductionGeneric(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
    llvm::ArrayRef<bool> reduced, mlir::Type accType, mlir::Value init,
    mlir::ValueRange extras,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::Value, mlir::ValueRange, mlir::Value)>
        combine);

/// The identity (init) value of a max (isMax) or min reduction over
/// `elemType`: -inf/+inf for floats, the smallest/largest signed or unsigned
/// integer otherwise.
mlir::Value createMinMaxInit(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Type elemType, bool isMax, bool isUnsigned);

} // namespace kiln::onnx_to_linalg

#endif // KILN_PASSES_CONVERSION_ONNXTOLINALG_UTILS_H
