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

/// Whether the number of iterations `loop` runs is known when it starts: it has a
/// trip count M and its body yields constant true or its own condition argument. Then
/// it runs `cond ? max(M, 0) : 0` times (`cond` its initial condition, true when
/// absent), which the lowering computes before the loop (the scan outputs' run dim).
bool hasTripCountBeforeLoop(LoopOp loop);

/// Whether `value` is a constant whose single element is true (a tensor<i1>
/// of one element).
bool isConstantTrue(mlir::Value value);

/// The number of loop-carried values of `loop` (its v_initial operands).
unsigned getNumCarried(LoopOp loop);

/// The number of states of `scan` (its operands that are not scan inputs).
unsigned getNumStates(ScanOp scan);

/// The Loop whose iteration number `value` is (the body's argument 0, possibly
/// reshaped to one element by Unsqueeze / Squeeze / Reshape / Identity), or null.
LoopOp getLoopOfIterationNumber(mlir::Value value);

/// The range [first, last] a Loop body's iteration number takes when `value` is
/// that number (the body's argument 0, possibly reshaped to one element by
/// Unsqueeze / Squeeze / Reshape / Identity) and the Loop's trip count M is a
/// constant >= 1: [0, M - 1], whatever the condition does. std::nullopt
/// otherwise.
std::optional<std::pair<int64_t, int64_t>> getIterationNumberRange(mlir::Value value);

/// `c` when `value` is `base + c` for a constant one-element `c` (an Add, with
/// one-element reshapes as getIterationNumberRange strips them on either side).
std::optional<int64_t> getConstantOffset(mlir::Value value, mlir::Value base);

/// A Slice whose start is a Loop's iteration number i (one axis, step 1) and
/// whose end is i + c: its length along `axis` is `size` = c for every
/// iteration when 0 <= i and i + c <= the dim throughout [0, M - 1]. What
/// shape inference and the lowering (an extract_slice at a run-time offset)
/// both rely on; std::nullopt for any other Slice.
struct IterationSlice {
  int64_t axis, size;
};
std::optional<IterationSlice> getIterationSlice(SliceOp slice);

/// `attr` (an I64ArrayAttr) as integers; `count` zeros when absent.
llvm::SmallVector<int64_t> getIntsOrZeros(std::optional<mlir::ArrayAttr> attr,
                                          unsigned count);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_CONTROLFLOW_H
