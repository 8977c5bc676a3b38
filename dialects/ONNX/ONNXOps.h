//===- ONNXOps.h - onnx dialect ops -----------------------------*- C++ -*-===//
//
// The generated onnx ops (kiln::onnx::<OpType>Op) and onnx.NoValue (NoValueOp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_ONNXOPS_H
#define KILN_DIALECTS_ONNX_ONNXOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/ONNX/ONNXDialect.h"

#define GET_OP_CLASSES
#include "dialects/ONNX/ONNXOps.h.inc"

#endif // KILN_DIALECTS_ONNX_ONNXOPS_H
