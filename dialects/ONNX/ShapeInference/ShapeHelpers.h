//===- ShapeHelpers.h - Helpers shared by the shape inference models -*- C++
//-*-===//
//
// Reading operand types and constant operands, setting result types,
// broadcasting, axis normalization, conv/pool output sizes and ONNX data types.
// Every helper that can fail emits the error on the op (emitNodeError) itself
// and returns failure.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_SHAPEINFERENCE_SHAPEHELPERS_H
#define KILN_DIALECTS_ONNX_SHAPEINFERENCE_SHAPEHELPERS_H

#include "dialects/ONNX/Limits.h"
#include "dialects/ONNX/ONNXDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace kiln::onnx {

//===----------------------------------------------------------------------===//
// Attaching models
//===----------------------------------------------------------------------===//

/// A shape inference function over the generic op.
using InferShapesFn = mlir::LogicalResult (*)(mlir::Operation *);

/// External model forwarding ShapeInferenceOpInterface::inferShapes to `Fn`.
template <typename OpT, InferShapesFn Fn>
struct InferShapesModel
    : public ShapeInferenceOpInterface::ExternalModel<InferShapesModel<OpT, Fn>,
                                                      OpT> {
  mlir::LogicalResult inferShapes(mlir::Operation *op) const { return Fn(op); }
};

/// Attaches `Fn` as the shape inference of every op in `OpTs`.
template <InferShapesFn Fn, typename... OpTs>
void attachInferShapes(mlir::MLIRContext *ctx) {
  (OpTs::template attachInterface<InferShapesModel<OpTs, Fn>>(*ctx), ...);
}

/// Registration functions of the op families (one per file).
void registerElementwiseShapeInference(mlir::DialectRegistry &registry);
void registerLinearShapeInference(mlir::DialectRegistry &registry);
void registerConvolutionShapeInference(mlir::DialectRegistry &registry);
void registerPoolingShapeInference(mlir::DialectRegistry &registry);
void registerNormalizationShapeInference(mlir::DialectRegistry &registry);
void registerDataMovementShapeInference(mlir::DialectRegistry &registry);
void registerDataDependentShapeInference(mlir::DialectRegistry &registry);
void registerReductionShapeInference(mlir::DialectRegistry &registry);
void registerConstantShapeInference(mlir::DialectRegistry &registry);
void registerControlFlowShapeInference(mlir::DialectRegistry &registry);
void registerQuantizationShapeInference(mlir::DialectRegistry &registry);
void registerRecurrentShapeInference(mlir::DialectRegistry &registry);
void registerAttentionShapeInference(mlir::DialectRegistry &registry);
void registerLossShapeInference(mlir::DialectRegistry &registry);

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

/// The type of operand `index` as a ranked tensor. Emits an error naming the
/// input (`name`, the ONNX schema's input name) when it is absent (`none`),
/// unranked, or has a symbolic (`?`) dim and the op is not one that
/// acceptsSymbolicDims.
mlir::FailureOr<mlir::RankedTensorType>
getInputType(mlir::Operation *op, unsigned index, llvm::StringRef name);

/// True for the ops whose shape inference and lowering take symbolic (`?`)
/// dims (docs/dynamic-shapes.md); getInputType rejects a `?` dim of any
/// other op's input, naming the node, the input and the dim.
bool acceptsSymbolicDims(mlir::Operation *op);

/// The name of the symbol at `axis` of `value` when it is an argument of the
/// graph with `kiln.dims` (e.g. "batch"); "" otherwise.
std::string describeSymbolicDim(mlir::Value value, int64_t axis);

/// Like getInputType, but an absent (`none`) input gives a null type instead of
/// an error.
mlir::FailureOr<mlir::RankedTensorType>
getOptionalInputType(mlir::Operation *op, unsigned index, llvm::StringRef name);

/// The integer values of the constant operand `index`. Errors: not a constant
/// ("shape depends on a non-constant input 'name' (dynamic shapes are not
/// supported yet)"), not an integer tensor.
mlir::FailureOr<llvm::SmallVector<int64_t>>
getConstantInts(mlir::Operation *op, unsigned index, llvm::StringRef name);

/// For an op whose output shape the run decides (docs/dynamic-shapes.md,
/// "Run dims"): the static length of the non-constant 1-D integer operand
/// `index` (a Reshape's `shape`, a Slice's `starts`), whose values the
/// lowering reads at run time. Errors name the input: not 1-D, or of a length
/// known only at run time.
mlir::FailureOr<int64_t> getRunTimeValuesLength(mlir::Operation *op,
                                                unsigned index,
                                                llvm::StringRef name);

/// True when operand `index` of `op` is present and not a compile-time
/// constant, and `op` is at the top level of a function (run dims are not
/// supported inside Loop / If / Scan bodies): its values are read at run time
/// by an op that opts in to run dims.
bool isRunTimeOperand(mlir::Operation *op, unsigned index);

/// Like getConstantInts, but an absent (`none`) input gives std::nullopt.
mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
getOptionalConstantInts(mlir::Operation *op, unsigned index,
                        llvm::StringRef name);

/// The values of a constant numeric operand (int or float) as doubles.
mlir::FailureOr<llvm::SmallVector<double>>
getConstantNumbers(mlir::Operation *op, unsigned index, llvm::StringRef name);

/// The values of a small integer tensor (rank 0 or 1) computed from shapes:
/// a constant, or a chain of Shape, Gather, Unsqueeze, Squeeze, Concat,
/// Slice, Cast, Identity and elementwise Add/Sub/Mul/Div over them (the
/// Shape -> Gather -> Unsqueeze -> Concat chains of exported models), with
/// ShapedType::kDynamic for an element that is a symbolic dim (or computed
/// from one). std::nullopt when any element depends on anything else (the
/// values of an input, ...). kiln-symbolic-shapes gives the dynamic elements
/// their expressions over the symbols.
std::optional<llvm::SmallVector<int64_t>> getShapeValues(mlir::Value value);

/// One element of getShapeValueSources: its value (kDynamic for a symbolic
/// one) and, for an element that is exactly dim `axis` of a tensor (Shape's
/// element, through Gather, Concat, Slice, Unsqueeze, ...), that tensor
/// (null otherwise: a constant or a computed element).
struct ShapeValue {
  int64_t value;
  mlir::Value source;
  int64_t axis;
};

/// getShapeValues with each element's source: a Reshape's shape `[x.size(0),
/// -1]` names its `?` as dim 0 of x, so its -1 can be resolved statically.
std::optional<llvm::SmallVector<ShapeValue>>
getShapeValueSources(mlir::Value value);

/// Error for an output shape that depends on a non-constant input.
mlir::LogicalResult emitNonConstantInput(mlir::Operation *op,
                                         llvm::StringRef name);

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

/// Sets result `index` to tensor<shape x elementType>. Fails (with an error) on
/// a negative dimension and on a tensor over the limits (checkTensorSize).
mlir::LogicalResult setResultType(mlir::Operation *op, unsigned index,
                                  llvm::ArrayRef<int64_t> shape,
                                  mlir::Type elementType);

/// Error unless a tensor of `shape` and `elementType` is within the limits of
/// dialects/ONNX/Limits.h (elements and bytes per tensor, computed without
/// wrapping); `what` names it in the message ("output 0").
mlir::LogicalResult checkTensorSize(mlir::Operation *op,
                                    llvm::ArrayRef<int64_t> shape,
                                    mlir::Type elementType,
                                    llvm::StringRef what);

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// Dimension arithmetic that cannot wrap: each step checks for int64 overflow
/// and remembers it (the step's value is then 0); check() reports it. Used
/// wherever a dimension is computed from model-given numbers (Tile's repeats,
/// pads, strides, block sizes), so a wrapped size never looks valid.
class CheckedDims {
public:
  int64_t mul(int64_t a, int64_t b) { return step(kiln::checkedMul(a, b)); }
  int64_t add(int64_t a, int64_t b) { return step(kiln::checkedAdd(a, b)); }
  int64_t sub(int64_t a, int64_t b) { return step(kiln::checkedSub(a, b)); }
  bool failed() const { return overflowed; }
  /// Emits `node ...: <what> overflows 64-bit integers` after an overflow.
  mlir::LogicalResult check(mlir::Operation *op,
                            llvm::StringRef what = "the output shape") const;

private:
  int64_t step(std::optional<int64_t> v) {
    overflowed |= !v;
    return v.value_or(0);
  }
  bool overflowed = false;
};

/// Multidirectional (numpy) broadcast of `shapes`; error on incompatible
/// dimensions.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(mlir::Operation *op,
                llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);

/// True when `from` broadcasts unidirectionally to `to`.
bool isUnidirectionalBroadcastable(llvm::ArrayRef<int64_t> from,
                                   llvm::ArrayRef<int64_t> to);

/// `axis` in [-rank, rank) made non-negative; error naming `attrName`
/// otherwise.
mlir::FailureOr<int64_t> normalizeAxis(mlir::Operation *op, int64_t axis,
                                       int64_t rank,
                                       llvm::StringRef attrName = "axis");

/// Every axis normalized; error on an out-of-range or repeated axis.
mlir::FailureOr<llvm::SmallVector<int64_t>>
normalizeAxes(mlir::Operation *op, llvm::ArrayRef<int64_t> axes, int64_t rank,
              llvm::StringRef attrName = "axes");

/// The product of `shape`; ShapedType::kDynamic when a dim is symbolic.
int64_t getNumElements(llvm::ArrayRef<int64_t> shape);

/// The integer attribute `name` of `op` (signed), or `dflt` when absent.
int64_t getIntAttr(mlir::Operation *op, llvm::StringRef name, int64_t dflt);

/// The I64ArrayAttr `name` of `op` as a vector, or std::nullopt when absent.
std::optional<llvm::SmallVector<int64_t>> getI64ArrayAttr(mlir::Operation *op,
                                                          llvm::StringRef name);

//===----------------------------------------------------------------------===//
// Convolution / pooling windows
//===----------------------------------------------------------------------===//

/// The windowing attributes of Conv-like and Pool-like ops, resolved for
/// `spatialRank` spatial dimensions: defaults filled in (strides/dilations 1,
/// pads 0).
struct WindowParams {
  llvm::StringRef autoPad = "NOTSET";
  llvm::SmallVector<int64_t> kernel, strides, dilations,
      pads; // pads: begins, then ends
  bool ceilMode = false;
};

/// Reads auto_pad / strides / dilations / pads (and kernel_shape when `kernel`
/// is empty) from `op` and checks their sizes against `spatialRank`.
mlir::FailureOr<WindowParams>
getWindowParams(mlir::Operation *op, int64_t spatialRank,
                llvm::ArrayRef<int64_t> kernel = {});

/// The output spatial sizes of a window sliding over `input` (spatial dims
/// only), following ONNX's conv/pool shape inference; with SAME_* auto_pad,
/// `params.pads` is set to the pads that auto_pad implies. Errors on a kernel
/// larger than the padded input.
mlir::FailureOr<llvm::SmallVector<int64_t>>
computeWindowOutputShape(mlir::Operation *op, llvm::ArrayRef<int64_t> input,
                         WindowParams &params);

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// The MLIR element type of an ONNX TensorProto.DataType number (FLOAT = 1 ->
/// f32, ..., BOOL -> i1, uiN for unsigned); null for unsupported ones (STRING,
/// COMPLEX*, ...).
mlir::Type getTypeFromONNXDataType(mlir::MLIRContext *ctx, int64_t dataType);

/// getTypeFromONNXDataType, with an error naming `attrName` for unsupported
/// ones.
mlir::FailureOr<mlir::Type> getElementTypeFromAttr(mlir::Operation *op,
                                                   int64_t dataType,
                                                   llvm::StringRef attrName);

/// Error unless every type in `types` has the element type of the first.
mlir::LogicalResult
checkSameElementType(mlir::Operation *op,
                     llvm::ArrayRef<mlir::RankedTensorType> types);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_SHAPEINFERENCE_SHAPEHELPERS_H
