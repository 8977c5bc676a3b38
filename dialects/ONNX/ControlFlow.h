//===- ControlFlow.h - Queries on onnx.If / onnx.Loop / onnx.Scan -*- C++ -*-===//
//
// What shape inference and the lowering both need to know about a control-flow
// op, computed in one place so the two agree.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_CONTROLFLOW_H
#define KILN_DIALECTS_ONNX_CONTROLFLOW_H

#include "dialects/ONNX/ONNXOps.h"

#include <optional>

namespace kiln::onnx {

/// The number of iterations `loop` runs when it is known at compile time: its
/// trip count M is a constant, its initial condition is absent or constant
/// true, and its body yields constant true or its own condition argument. Then
/// it runs exactly M (>= 0) times. std::nullopt otherwise (the loop ends on a
/// run-time value).
std::optional<int64_t> getStaticTripCount(LoopOp loop);

/// Whether `value` is a constant whose single element is true (a tensor<i1>
/// of one element).
bool isConstantTrue(mlir::Value value);

/// The number of loop-carried values of `loop` (its v_initial operands).
unsigned getNumCarried(LoopOp loop);

/// The number of states of `scan` (its operands that are not scan inputs).
unsigned getNumStates(ScanOp scan);

/// `attr` (an I64ArrayAttr) as integers; `count` zeros when absent.
llvm::SmallVector<int64_t> getIntsOrZeros(std::optional<mlir::ArrayAttr> attr,
                                          unsigned count);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_CONTROLFLOW_H
