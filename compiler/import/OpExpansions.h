//===- OpExpansions.h - ONNX ops imported as other ONNX ops -----*- C++ -*-===//
//
// Some ONNX ops are defined by the ONNX spec as functions of simpler ops
// (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, RMSNormalization, ...).
// kiln imports those by expanding the node into the simpler nodes, the way the
// spec's function body does, instead of giving each its own dialect lowering.
// The expansion is written here in C++ because these function bodies depend on
// the node's attributes and input types (ONNX builds them in C++ too), and the
// ONNX C++ library available at build time predates several of them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_OPEXPANSIONS_H
#define KILN_COMPILER_IMPORT_OPEXPANSIONS_H

#include "compiler/import/VersionAdapters.h"

#include "llvm/ADT/SmallVector.h"

namespace onnx {
class NodeProto;
} // namespace onnx

namespace kiln::import {

/// When kiln expands `node`'s op, appends the nodes that replace it to `out`
/// (in order; they write the node's own outputs) and returns true; returns
/// false for any other op. Fails, with an error naming the node, on a variant
/// the expansion does not cover. `opset` is the model's default-domain opset
/// (it decides what the original node means, e.g. Hardmax before 13); the new
/// nodes are written in the newest form of their ops and must be imported
/// without version adaptation.
mlir::FailureOr<bool> expandNode(const onnx::NodeProto &node, int64_t opset,
                                 AdapterContext &ctx,
                                 llvm::SmallVectorImpl<onnx::NodeProto> &out);

} // namespace kiln::import

#endif // KILN_COMPILER_IMPORT_OPEXPANSIONS_H
