//===- Expansion.h - Building the ops that replace one onnx op --*- C++ -*-===//
//
// kiln-decompose replaces some onnx ops (NegativeLogLikelihoodLoss, Attention, LSTM,
// QLinearConv, ...) by the simpler onnx ops of the function body the ONNX spec gives for
// them. Each expansion is written against `Expansion`, which reads the op's inputs and
// attributes and creates the new ops in order through kiln::onnx::buildONNXOp (types
// inferred, constants folded, exactly as the importer builds nodes). The expansions were
// written for the importer's NodeProto rewriting; the API keeps that shape: a value is a
// `V` (empty: an absent optional input), an attribute an `Attr`, and `add(opType, inputs,
// attrs, output)` builds one op.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_TRANSFORMS_DECOMPOSE_EXPANSION_H
#define KILN_PASSES_TRANSFORMS_DECOMPOSE_EXPANSION_H

#include "runtime/include/kiln/model_abi.h" // KILN_DTYPE_*: ONNX dtype ids
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::decompose {

/// ONNX TensorProto data type numbers the expansions write into `to` / `dtype`.

/// A value an expansion computes with; empty for an absent optional input (ONNX's "").
class V {
public:
  V() = default;
  V(mlir::Value value) : value(value) {}
  bool empty() const { return !value; }
  operator mlir::Value() const { return value; }
  mlir::Value get() const { return value; }

private:
  mlir::Value value;
};

/// One attribute of a new op (or of the op being expanded), with the accessors of an
/// onnx::AttributeProto.
class Attr {
public:
  static Attr ofInt(llvm::StringRef name, int64_t v);
  static Attr ofInts(llvm::StringRef name, llvm::ArrayRef<int64_t> v);
  static Attr ofFloat(llvm::StringRef name, float v);
  static Attr ofString(llvm::StringRef name, llvm::StringRef v);
  /// An attribute as the op stores it (kept as it is when forwarded).
  static Attr of(mlir::NamedAttribute attr);

  llvm::StringRef name() const { return attrName; }
  int64_t i() const { return intValue; }
  float f() const { return floatValue; }
  const std::string &s() const { return stringValue; }
  llvm::ArrayRef<int64_t> ints() const { return intsValue; }
  int ints_size() const { return static_cast<int>(intsValue.size()); }
  float floats(int k) const { return floatsValue[k]; }
  int floats_size() const { return static_cast<int>(floatsValue.size()); }
  const std::string &strings(int k) const { return stringsValue[k]; }
  int strings_size() const { return static_cast<int>(stringsValue.size()); }

  /// The attribute as an op of `ctx` stores it.
  mlir::NamedAttribute get(mlir::MLIRContext *ctx) const;

private:
  enum class Kind { Int, Ints, Float, String, Stored };
  Kind kind = Kind::Int;
  std::string attrName;
  int64_t intValue = 0;
  std::vector<int64_t> intsValue;
  float floatValue = 0;
  std::vector<float> floatsValue;
  std::string stringValue;
  std::vector<std::string> stringsValue;
  mlir::Attribute stored;
};

inline Attr intAttr(llvm::StringRef name, int64_t value) {
  return Attr::ofInt(name, value);
}
inline Attr intsAttr(llvm::StringRef name, llvm::ArrayRef<int64_t> values) {
  return Attr::ofInts(name, values);
}
inline Attr floatAttr(llvm::StringRef name, float value) {
  return Attr::ofFloat(name, value);
}

/// The op being expanded, seen as the ONNX node it was imported from.
class Node {
public:
  explicit Node(mlir::Operation *op);
  /// The op type without the dialect prefix ("LSTM").
  llvm::StringRef op_type() const { return opType; }
  llvm::ArrayRef<Attr> attribute() const { return attrs; }

private:
  llvm::StringRef opType;
  llvm::SmallVector<Attr> attrs;
};

/// The attribute `name` of `node`, or null.
const Attr *findAttr(const Node &node, llvm::StringRef name);

/// An output of the op being expanded: `add` of a value for it makes that value the
/// output. Empty when the output is absent.
struct Output {
  int index = -1;
  bool present = false;
  bool empty() const { return !present; }
};

/// Builds the replacement ops of one op, before it.
class Expansion {
public:
  using Output = decompose::Output;

  Expansion(mlir::Operation *op, mlir::OpBuilder &builder, mlir::Value noValue);

  /// Input `i` of the op, empty when absent.
  V input(int i) const;
  /// Output `i` of the op (empty when absent: `none` typed or past the results).
  Output output(int i) const;
  /// The type of output `i` as shape inference gave it (null when absent or
  /// not a ranked tensor).
  mlir::RankedTensorType outputType(int i) const {
    return i < static_cast<int>(op->getNumResults())
               ? mlir::dyn_cast<mlir::RankedTensorType>(op->getResult(i).getType())
               : mlir::RankedTensorType();
  }
  mlir::RankedTensorType type(V value) const {
    return value.empty() ? mlir::RankedTensorType()
                         : mlir::dyn_cast<mlir::RankedTensorType>(value.get().getType());
  }
  int64_t getInt(llvm::StringRef name, int64_t dflt) const;
  float getFloat(llvm::StringRef name, float dflt) const;
  std::string getString(llvm::StringRef name, llvm::StringRef dflt) const;
  bool hasAttr(llvm::StringRef name) const { return findAttr(node, name); }
  /// The integer values of `value` when it is a constant (float constants truncated
  /// toward zero, as ONNX reads e.g. OneHot's depth).
  std::optional<llvm::SmallVector<int64_t>> constantInts(V value) const;
  /// Starts an error naming the op's node: `node 'NAME' (OpType, opset N): `.
  mlir::InFlightDiagnostic error();
  /// Error unless a table of `elements` elements that the expansion generates
  /// at compile time (`what`) is within kiln's limit (dialects/ONNX/Limits.h).
  mlir::LogicalResult checkTable(int64_t elements, llvm::StringRef what);

  /// Builds `opType` (the newest form of the op) on `inputs` and returns its first result;
  /// with `result`, that value becomes the op's output. After a failure (an error was
  /// emitted) builds nothing and returns an empty value.
  V add(llvm::StringRef opType, llvm::ArrayRef<V> inputs, llvm::ArrayRef<Attr> attrs = {},
        Output result = {});

  /// A 1-D int64 constant.
  V i64s(llvm::ArrayRef<int64_t> values);
  /// A 0-d constant of `elemType` (int or float) holding `value`.
  V scalar(mlir::Type elemType, double value);
  V unsqueeze(V x, llvm::ArrayRef<int64_t> axes) { return add("Unsqueeze", {x, i64s(axes)}); }
  V squeeze(V x, llvm::ArrayRef<int64_t> axes) { return add("Squeeze", {x, i64s(axes)}); }
  /// Reduce* over `axes` (empty: all axes).
  V reduce(llvm::StringRef opType, V x, llvm::ArrayRef<int64_t> axes, bool keepdims,
           Output result = {});

  /// Whether an error was emitted.
  bool failed() const { return hasFailed; }
  /// Whether every present output of the op got a value.
  bool complete() const;
  /// The values for the op's outputs (null where absent).
  llvm::ArrayRef<mlir::Value> outputs() const { return outputValues; }

  /// What the expansions ask of the surroundings (the importer's AdapterContext before).
  class Context {
  public:
    explicit Context(Expansion &e) : e(e) {}
    /// An onnx.Constant holding `value`.
    V addConstant(mlir::DenseElementsAttr value, llvm::StringRef hint);
    mlir::MLIRContext *getContext() const;

  private:
    Expansion &e;
  };

  Node node;
  /// The model's default-domain opset (it decides what the op means, e.g. Hardmax < 13).
  int64_t opset;
  Context ctx;

private:
  mlir::Operation *op;
  mlir::OpBuilder &builder;
  mlir::Value noValue;
  llvm::SmallVector<mlir::Value> outputValues;
  bool hasFailed = false;
};

/// The expansions, one function per op (grouped by family in the files of this folder).
using ExpandFn = mlir::LogicalResult (*)(Expansion &);
/// The expansion of the onnx op `opType` (without the dialect prefix), or null.
ExpandFn lookupExpansion(llvm::StringRef opType);

// Families (one file each).
mlir::LogicalResult expandNegativeLogLikelihoodLoss(Expansion &e);
mlir::LogicalResult expandSoftmaxCrossEntropyLoss(Expansion &e);
mlir::LogicalResult expandRMSNormalization(Expansion &e);
mlir::LogicalResult expandGroupNormalization(Expansion &e);
mlir::LogicalResult expandLpNormalization(Expansion &e);
mlir::LogicalResult expandAttention(Expansion &e);
mlir::LogicalResult expandRNN(Expansion &e);
mlir::LogicalResult expandGRU(Expansion &e);
mlir::LogicalResult expandLSTM(Expansion &e);
mlir::LogicalResult expandConvTranspose(Expansion &e);
mlir::LogicalResult expandLpPool(Expansion &e);
mlir::LogicalResult expandHardmax(Expansion &e);
mlir::LogicalResult expandOneHot(Expansion &e);
mlir::LogicalResult expandCenterCropPad(Expansion &e);
mlir::LogicalResult expandSwish(Expansion &e);
mlir::LogicalResult expandEyeLike(Expansion &e);
mlir::LogicalResult expandWindow(Expansion &e);
mlir::LogicalResult expandDequantizeLinear(Expansion &e);
mlir::LogicalResult expandQuantizeLinear(Expansion &e);
mlir::LogicalResult expandMatMulInteger(Expansion &e);
mlir::LogicalResult expandQLinearMatMul(Expansion &e);
mlir::LogicalResult expandConvInteger(Expansion &e);
mlir::LogicalResult expandQLinearConv(Expansion &e);
mlir::LogicalResult expandDynamicQuantizeLinear(Expansion &e);

/// MatMulInteger / ConvInteger in the form convert-onnx-to-linalg lowers to 8-bit
/// products (kept by kiln-decompose): per-tensor 8-bit activations, constant 8-bit
/// weights whose centered values w - w_zp fit in s8 (onnxruntime's symmetric s8
/// weights always do), 2-D B, group 1.
bool keptForIntegerKernel(mlir::Operation *op);

/// Ops with an expansion for some of their forms only, the others kept for
/// convert-onnx-to-linalg: Einsum equations that are not MatMul-shaped (one or
/// three+ operands, a diagonal, a broadcast dim, nothing contracted: one
/// linalg.generic, Einsum.cpp), BatchNormalization in inference form, OneHot
/// and CenterCropPad whose depth / shape are read at run time.
bool keptForLowering(mlir::Operation *op);
mlir::LogicalResult expandEinsum(Expansion &e);
mlir::LogicalResult expandShrink(Expansion &e);
mlir::LogicalResult expandMeanVarianceNormalization(Expansion &e);
mlir::LogicalResult expandLRN(Expansion &e);
mlir::LogicalResult expandDFT(Expansion &e);
mlir::LogicalResult expandSTFT(Expansion &e);
mlir::LogicalResult expandAffineGrid(Expansion &e);
mlir::LogicalResult expandReverseSequence(Expansion &e);
mlir::LogicalResult expandCol2Im(Expansion &e);
mlir::LogicalResult expandBatchNormalizationTraining(Expansion &e);
mlir::LogicalResult expandMaxUnpool(Expansion &e);

/// Integer building blocks (Quantization.cpp), shared with kiln-fold-qdq. Each returns
/// an empty value after an error.
/// (a - a_zero_point) x (b - b_zero_point) as an int32 MatMul (8-bit a and b; zero
/// points per row of a and per column of b, or scalars; absent: 0).
V integerMatMul(Expansion &e, const V &a, const V &azp, const V &b, const V &bzp);
/// ConvInteger's product as an int32 Conv with `convAttrs` (w_zero_point per output
/// channel or scalar).
V integerConv(Expansion &e, const V &x, const V &xzp, const V &w, const V &wzp,
              llvm::ArrayRef<Attr> convAttrs);
/// The int32 accumulator `acc` requantized as onnxruntime does: saturate(round half
/// to even(float(acc) * multiplier) + zp) as `target`; `floor` (a folded Relu or
/// Clip) raises the lower saturation bound, `ceiling` (a folded Clip) lowers the
/// upper one.
V requantize(Expansion &e, const V &acc, const V &multiplier, const V &zp,
             mlir::Type target, std::optional<double> floor = std::nullopt,
             std::optional<double> ceiling = std::nullopt);

/// Helpers shared by families.
/// The ONNX TensorProto data type of a float element type; 0 if none.
int64_t onnxFloatType(mlir::Type t);
/// [0, 1, ..., n - 1] as int64 with shape [1, .., n, .., 1] (n at `axis`).
V iota(Expansion &e, int64_t n, int64_t axis, int64_t rank);

} // namespace kiln::decompose

#endif // KILN_PASSES_TRANSFORMS_DECOMPOSE_EXPANSION_H
