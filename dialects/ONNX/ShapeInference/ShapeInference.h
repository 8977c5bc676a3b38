//===- ShapeInference.h - Shape inference external models -------*- C++ -*-===//
//
// The per-op implementations of ShapeInferenceOpInterface are attached as
// external models (one file per op family in this folder).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_SHAPEINFERENCE_SHAPEINFERENCE_H
#define KILN_DIALECTS_ONNX_SHAPEINFERENCE_SHAPEINFERENCE_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace kiln::onnx {

/// Attaches ShapeInferenceOpInterface to every onnx op that has an
/// implementation.
void registerShapeInferenceModels(mlir::DialectRegistry &registry);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_SHAPEINFERENCE_SHAPEINFERENCE_H
