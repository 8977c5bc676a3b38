//===- ONNXDialect.h - The onnx dialect -------------------------*- C++ -*-===//
//
// The dialect class and the ShapeInferenceOpInterface. Include ONNXOps.h for
// the ops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_ONNXDIALECT_H
#define KILN_DIALECTS_ONNX_ONNXDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include "dialects/ONNX/ONNXDialect.h.inc"

#include "dialects/ONNX/ShapeInferenceInterface.h.inc"

#endif // KILN_DIALECTS_ONNX_ONNXDIALECT_H
