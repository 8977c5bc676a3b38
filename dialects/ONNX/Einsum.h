//===- Einsum.h - Parsing an Einsum equation --------------------*- C++ -*-===//
//
// One parse of ONNX Einsum's `equation` against the input shapes, shared by
// shape inference, kiln-decompose (the MatMul-shaped equations) and the
// linalg.generic lowering (the rest).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_EINSUM_H
#define KILN_DIALECTS_ONNX_EINSUM_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln::onnx {

/// An Einsum equation resolved against its input shapes. Every dimension
/// letter and every dimension an ellipsis stands for is a label (0 ..
/// numLabels() - 1): the ellipsis dims are labels 0 .. ellipsisRank - 1
/// (aligned on the right, as numpy broadcasting aligns them), the letters
/// follow in order of first appearance.
struct EinsumEquation {
  /// Per input, the label of each dimension (a repeated label: a diagonal).
  llvm::SmallVector<llvm::SmallVector<int64_t>> inputs;
  /// Per input, its shape.
  llvm::SmallVector<llvm::SmallVector<int64_t>> inputShapes;
  /// The label of each output dimension (each label at most once).
  llvm::SmallVector<int64_t> output;
  /// The size of each label: the largest size it has in any input (a size-1
  /// dimension broadcasts; any other mismatch is an error).
  llvm::SmallVector<int64_t> sizes;
  /// The letter of each label ('.' for an ellipsis dim).
  llvm::SmallVector<char> letters;
  int64_t ellipsisRank = 0;

  int64_t numLabels() const { return static_cast<int64_t>(sizes.size()); }
  llvm::SmallVector<int64_t> outputShape() const;
  /// True when input `i` has a dim of size 1 whose label is larger (it
  /// broadcasts).
  bool needsBroadcast(unsigned i) const;
  /// True when input `i` repeats a label (a diagonal).
  bool hasRepeatedLabel(unsigned i) const;
  /// True when `label` appears in the output.
  bool inOutput(int64_t label) const;
};

/// Parses `equation` for inputs of `shapes` (static). On error returns failure
/// and sets `error` to the reason (without the node prefix).
mlir::FailureOr<EinsumEquation>
parseEinsumEquation(llvm::StringRef equation,
                    llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes,
                    std::string &error);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_EINSUM_H
