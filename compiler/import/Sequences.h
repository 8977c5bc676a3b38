//===- Sequences.h - Sequence and Optional values at import -----*- C++ -*-===//
//
// kiln compiles tensor graphs: a sequence or optional value never reaches the onnx
// dialect. The importer follows them while it reads the graph instead: a sequence is a
// list of segments, each one tensor (an item) or a stacked tensor whose axis 0 runs over
// its items (what a Loop's appends become); an optional is its tensor or sequence, or
// absent. The sequence and optional ops become tensor ops on those (ConcatFromSequence a
// Concat, SequenceAt a Gather, which takes a run-time position) or constants
// (SequenceLength, OptionalHasElement). A Loop that appends one item per iteration to a
// loop-carried sequence is rewritten to give that item as a scan output (one stacked
// segment of the sequence after the loop): the loop stays a loop. A sequence graph input
// or output is its items, the tensors NAME[0] .. NAME[N-1] (--sequence NAME=N for an
// input; docs/runtime-api.md), and SequenceMap imports its body once per item
// (ModelImporter). Where a sequence or optional would have to exist at run time (an If
// output, a length that depends on the run), the node is rejected by name
// (docs/architecture.md).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_SEQUENCES_H
#define KILN_COMPILER_IMPORT_SEQUENCES_H

#include "compiler/import/VersionAdapters.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <string>

namespace onnx {
class NodeProto;
} // namespace onnx

namespace kiln::import {

/// One part of a sequence known at compile time: one item, or `stacked` items (axis 0 of
/// `value`, a static dim, runs over them).
struct SequenceSegment {
  mlir::Value value;
  bool stacked = false;
};
using SequenceValue = llvm::SmallVector<SequenceSegment>;

/// The sequences and absent optionals of the graphs being imported, by value name. The
/// importer saves and restores it around a subgraph like its map of tensor values.
struct SequenceScope {
  llvm::StringMap<SequenceValue> sequences;
  llvm::StringSet<> absentOptionals;
};

/// What the sequence import asks of the importer besides an adapter's needs.
class SequenceContext : public AdapterContext {
public:
  /// The tensor value named `name`, or null.
  virtual mlir::Value lookupValue(llvm::StringRef name) = 0;
  /// Makes `name` denote the tensor `value` from now on in the current graph.
  virtual void bindValue(llvm::StringRef name, mlir::Value value) = 0;
  /// Imports `node`, already in the newest form of its op, as part of the node being
  /// imported (errors name that node); its outputs are then bound to their names.
  virtual mlir::LogicalResult importNewestNode(const ::onnx::NodeProto &node) = 0;
};

/// The ops importSequenceNode handles (the sequence ops but SequenceMap, and Optional,
/// OptionalHasElement, OptionalGetElement).
bool isSequenceOrOptionalOp(llvm::StringRef opType);

/// Imports one node of isSequenceOrOptionalOp, or an Identity of a sequence or of an absent
/// optional: binds its outputs in `scope` or as tensors through `ctx`. Errors name the node.
mlir::LogicalResult importSequenceNode(const ::onnx::NodeProto &node, SequenceScope &scope,
                                       SequenceContext &ctx);

/// A Loop `node` with loop-carried sequences: each must be appended to (SequenceInsert
/// without a position, at the end of the body) and read by nothing else in the body. Fills
/// `rewritten` with the Loop without those carried values, each appended item a scan
/// output instead, and `finals` with, per such sequence, the Loop output that names the
/// final sequence, its initial value and the name of the scan output to append (stacked)
/// after the rewritten Loop is imported. Sets `handled` when the node had any.
struct LoopSequenceResult {
  std::string finalName;
  SequenceValue initial;
  std::string scanOutput;
};
mlir::LogicalResult
rewriteSequenceLoop(const ::onnx::NodeProto &node, SequenceScope &scope,
                    SequenceContext &ctx, bool &handled, ::onnx::NodeProto &rewritten,
                    llvm::SmallVectorImpl<LoopSequenceResult> &finals);

} // namespace kiln::import

#endif // KILN_COMPILER_IMPORT_SEQUENCES_H
