//===- MapLoops.cpp - top-level scf.parallel -> workgroups x threads ------===//
//
// The generic mapping, correct for any loop nest: the iterations of each
// top-level scf.parallel are linearized row-major and spread over
// `workgroup-size` threads per workgroup on x. Row-major linearization puts
// the innermost (contiguous) dim on consecutive threads: coalesced accesses
// for elementwise ops, unlike upstream gpu-map-parallel-loops, which maps dim
// 0 to thread x. Each thread recovers its multi-dimensional index with
// divisions by constants. More than 65535 workgroups (the smallest limit
// Vulkan guarantees) make each thread loop over several iterations.
//
//===----------------------------------------------------------------------===//

#include "codegen/GPU/Passes.h"
#include "dialects/ONNX/Diagnostics.h"

#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/IR/IRMapping.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUMAPLOOPSPASS
#include "codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr int64_t kMaxWorkgroups = 65535;

/// Replaces `loop` (no reductions) by a scf.for nest running its body.
LogicalResult sequentialize(scf::ParallelOp loop) {
  if (loop.getNumReductions())
    return kiln::onnx::emitNodeError(loop)
           << "a parallel loop with reductions cannot be sequentialized";
  OpBuilder b(loop);
  IRMapping map;
  for (auto [lb, ub, step, iv] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
                 loop.getInductionVars())) {
    auto inner = scf::ForOp::create(b, loop.getLoc(), lb, ub, step);
    map.map(iv, inner.getInductionVar());
    b.setInsertionPoint(inner.getBody()->getTerminator());
  }
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, map);
  loop.erase();
  return success();
}

gpu::ParallelLoopDimMappingAttr mapTo(MLIRContext *ctx, gpu::Processor p) {
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
  return gpu::ParallelLoopDimMappingAttr::get(ctx, p, identity, identity);
}

struct MapLoopsPass : kiln::impl::KilnGPUMapLoopsPassBase<MapLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<scf::ParallelOp> nested;
    func.walk([&](scf::ParallelOp loop) {
      if (loop->getParentOp() != func)
        nested.push_back(loop); // post-order: inner loops first
    });
    for (scf::ParallelOp loop : nested)
      if (failed(sequentialize(loop)))
        return signalPassFailure();
    for (auto loop :
         llvm::to_vector(func.getBody().front().getOps<scf::ParallelOp>()))
      if (failed(map(loop)))
        return signalPassFailure();
  }

  LogicalResult map(scf::ParallelOp loop) {
    if (loop.getNumReductions())
      return kiln::onnx::emitNodeError(loop)
             << "a top-level parallel loop with reductions is not supported";
    SmallVector<int64_t> lbs, steps, counts;
    int64_t total = 1;
    for (auto [lbValue, ubValue, stepValue] : llvm::zip(
             loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      std::optional<int64_t> lb = getConstantIntValue(lbValue);
      std::optional<int64_t> ub = getConstantIntValue(ubValue);
      std::optional<int64_t> step = getConstantIntValue(stepValue);
      if (!lb || !ub || !step || *step <= 0)
        return kiln::onnx::emitNodeError(loop)
               << "a parallel loop without static bounds cannot be mapped to "
                  "workgroups";
      int64_t count = *ub > *lb ? (*ub - *lb + *step - 1) / *step : 0;
      lbs.push_back(*lb);
      steps.push_back(*step);
      counts.push_back(count);
      if (count && total > INT32_MAX / count)
        return kiln::onnx::emitNodeError(loop)
               << "a loop nest of more than 2^31 iterations";
      total *= count;
    }
    if (total == 0) {
      loop.erase();
      return success();
    }
    int64_t threads = std::min<int64_t>(workgroupSize, total);
    int64_t groups = (total + threads - 1) / threads;
    int64_t perThread = (groups + kMaxWorkgroups - 1) / kMaxWorkgroups;
    groups = (total + threads * perThread - 1) / (threads * perThread);
    bool guard = groups * threads * perThread != total;

    MLIRContext *ctx = &getContext();
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    auto cst = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    Value zero = cst(0), one = cst(1);
    auto outer = scf::ParallelOp::create(
        b, loc, ValueRange{zero}, ValueRange{cst(groups)}, ValueRange{one});
    b.setInsertionPoint(outer.getBody()->getTerminator());
    auto inner =
        scf::ParallelOp::create(b, loc, ValueRange{cst(0)},
                                ValueRange{cst(threads)}, ValueRange{cst(1)});
    b.setInsertionPoint(inner.getBody()->getTerminator());
    Value group = outer.getInductionVars()[0];
    Value thread = inner.getInductionVars()[0];
    Value linear;
    if (perThread == 1) {
      linear = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, group, cst(threads)), thread);
    } else {
      auto each = scf::ForOp::create(b, loc, cst(0), cst(perThread), cst(1));
      b.setInsertionPoint(each.getBody()->getTerminator());
      Value chunk = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, group, cst(perThread)),
          each.getInductionVar());
      linear = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, chunk, cst(threads)), thread);
    }
    if (guard) {
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            linear, cst(total));
      auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    }
    // Row-major: the last dim varies fastest.
    IRMapping map;
    Value rest = linear;
    for (int64_t i = counts.size() - 1; i >= 0; --i) {
      Value index = rest;
      if (i > 0) {
        index = arith::RemUIOp::create(b, loc, rest, cst(counts[i]));
        rest = arith::DivUIOp::create(b, loc, rest, cst(counts[i]));
      }
      if (steps[i] != 1)
        index = arith::MulIOp::create(b, loc, index, cst(steps[i]));
      if (lbs[i] != 0)
        index = arith::AddIOp::create(b, loc, index, cst(lbs[i]));
      map.map(loop.getInductionVars()[i], index);
    }
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, map);
    loop.erase();
    if (failed(
            gpu::setMappingAttr(outer, {mapTo(ctx, gpu::Processor::BlockX)})) ||
        failed(
            gpu::setMappingAttr(inner, {mapTo(ctx, gpu::Processor::ThreadX)})))
      return failure();
    return success();
  }
};

} // namespace
