//===- Limits.h - What kiln accepts from a model ----------------*- C++ -*-===//
//
// The one place that bounds what a model may make kiln compute at compile time
// and plan for run time: elements and bytes of one tensor or buffer, steps an
// expansion unrolls, elements of a table kiln generates, and the bytes of all
// constants a model holds. A model over a limit is rejected with an error naming
// the node, never by running out of memory or by wrapping a size (docs/reliability.md).
// `kiln compile --max-...` flags override the defaults; everything else reads
// them here. Sizes are computed with the checked helpers below, never with
// plain `*` and `+`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_LIMITS_H
#define KILN_DIALECTS_ONNX_LIMITS_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>

namespace kiln {

struct CompileLimits {
  /// Elements of one tensor (model input, constant, inferred result, buffer);
  /// a zero dimension counts as 1, so no dimension product can wrap.
  int64_t maxTensorElements = int64_t(1) << 34;
  /// Bytes of one tensor or buffer, the scratch arena included.
  int64_t maxTensorBytes = int64_t(1) << 36;
  /// Steps an expansion unrolls (the sequence length of RNN, GRU, LSTM).
  int64_t maxUnrolledSteps = 4096;
  /// Elements of a table kiln generates at compile time (OneHot depth, the
  /// windows, EyeLike, iotas).
  int64_t maxTableElements = int64_t(1) << 24;
  /// Bytes of all the model's constants together (initializers, Constant
  /// nodes, attribute tensors).
  int64_t maxConstantBytes = int64_t(1) << 36;
  /// Nesting of subgraphs (If branches, Loop and Scan bodies) in subgraphs;
  /// the main graph's subgraphs are at depth 1.
  int64_t maxSubgraphDepth = 64;
};

/// The limits in effect (the defaults unless setCompileLimits changed them).
const CompileLimits &getCompileLimits();
/// Sets the limits for the compilations that follow (the driver, once).
void setCompileLimits(const CompileLimits &limits);

/// a * b, a + b and a - b, or std::nullopt when the result does not fit int64.
std::optional<int64_t> checkedMul(int64_t a, int64_t b);
std::optional<int64_t> checkedAdd(int64_t a, int64_t b);
std::optional<int64_t> checkedSub(int64_t a, int64_t b);

/// The product of `shape`'s dimensions with a zero dimension counted as 1, or
/// std::nullopt when it does not fit int64 (or a dimension is negative).
std::optional<int64_t> getCheckedExtent(llvm::ArrayRef<int64_t> shape);

/// The bytes of `elements` elements of `bitWidth` bits each (whole bytes per
/// element, as buffers store them), or std::nullopt on overflow.
std::optional<int64_t> getCheckedBytes(int64_t elements, unsigned bitWidth);

} // namespace kiln

#endif // KILN_DIALECTS_ONNX_LIMITS_H
