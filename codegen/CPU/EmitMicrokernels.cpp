//===- EmitMicrokernels.cpp - register-blocked kernels on buffers ---------===//
//
// Replaces `linalg.matmul`, `linalg.batch_matmul`, `linalg.conv_2d_nhwc_hwcf`,
// `linalg.depthwise_conv_2d_nhwc_hwc` and NHWC max / sum pooling on buffers by
// explicit loop nests around a register-blocked micro-kernel:
//  - matmul / conv: `rows` output rows x `vectors` vectors of output columns
//    are accumulated in vector registers carried through the reduction loops
//    (`scf.for` iter_args); each reduction step loads `vectors` vectors of B
//    and broadcasts one A element per row into an FMA.
//  - depthwise: `rows` output columns x `vectors` vectors of channels, one
//    input vector load per FMA; pooling is the same kernel with max / add.
// The blocking is the op's #kiln.kernel_strategy, chosen for the target by
// kiln-select-kernel-strategy; an op without one (or of an element type the
// kernels do not implement: only f32 is) keeps the generic lowering.
// The kernel families are in Kernels/{Matmul,Conv,ChannelWindow}.cpp; what
// they share (register block, parallel loop, row groups), epilogue fusion,
// fill folding and compile-time weight packing in Kernels/*.cpp.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Kernels/Kernels.h"
#include "codegen/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_KILNEMITMICROKERNELSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln::kernels;

namespace {

struct EmitMicrokernelsPass
    : kiln::impl::KilnEmitMicrokernelsPassBase<EmitMicrokernelsPass> {
  using KilnEmitMicrokernelsPassBase::KilnEmitMicrokernelsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<Operation *, kiln::KernelStrategyAttr>> work;
    module.walk([&](linalg::LinalgOp op) {
      auto strategy = op->getAttrOfType<kiln::KernelStrategyAttr>(
          kiln::KernelStrategyAttr::kAttrName);
      if (strategy && op.hasPureBufferSemantics() &&
          isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNhwcHwcfOp,
              linalg::Conv2DNhwgcGfhwcOp, linalg::DepthwiseConv2DNhwcHwcOp, linalg::PoolingNhwcMaxOp,
              linalg::PoolingNhwcSumOp>(op.getOperation()))
        work.push_back({op, strategy});
    });
    WeightPacker packer(module);
    for (auto [op, strategy] : work) {
      if (auto mm = dyn_cast<linalg::MatmulOp>(op))
        (void)emitMatmul(mm, /*batched=*/false, strategy, packer);
      else if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op))
        (void)emitMatmul(bmm, /*batched=*/true, strategy, packer);
      else if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op))
        (void)emitConv(conv, strategy, packer);
      else if (auto grouped = dyn_cast<linalg::Conv2DNhwgcGfhwcOp>(op))
        (void)emitGroupedConv(grouped, strategy, packer);
      else if (auto dw = dyn_cast<linalg::DepthwiseConv2DNhwcHwcOp>(op))
        (void)emitDepthwise(dw, strategy);
      else
        (void)emitPooling(cast<linalg::LinalgOp>(op), strategy);
    }
    // A product whose activations are sign-flipped (kiln-flip-int8-
    // activations) and that no kernel took: flipped back in a copy, so the
    // generic lowering computes it as it reads.
    SmallVector<linalg::LinalgOp> flipped;
    module.walk([&](linalg::LinalgOp op) {
      if (hasFlippedLhs(op))
        flipped.push_back(op);
    });
    for (linalg::LinalgOp op : flipped)
      if (failed(unflipLhs(op)))
        return signalPassFailure();
  }

  LogicalResult unflipLhs(linalg::LinalgOp op) {
    Value a = op.getDpsInputs()[0];
    auto type = dyn_cast<MemRefType>(a.getType());
    if (!type || !type.hasStaticShape()) {
      op->emitOpError() << "sign-flipped 8-bit activations of a form "
                           "kiln-emit-microkernels cannot flip back";
      return failure();
    }
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto plain = MemRefType::get(type.getShape(), type.getElementType());
    Value copy = memref::AllocOp::create(b, loc, plain);
    AffineMap id = b.getMultiDimIdentityMap(type.getRank());
    SmallVector<utils::IteratorType> iters(type.getRank(),
                                          utils::IteratorType::parallel);
    linalg::GenericOp::create(
        b, loc, ValueRange{a}, ValueRange{copy}, ArrayRef<AffineMap>{id, id},
        iters, [](OpBuilder &nb, Location l, ValueRange args) {
          Value bit = arith::ConstantIntOp::create(nb, l, nb.getI8Type(), -128);
          linalg::YieldOp::create(
              nb, l, ValueRange{arith::XOrIOp::create(nb, l, args[0], bit)});
        });
    op->setOperand(0, copy);
    op->removeAttr(kInt8FlippedLhsAttrName);
    // (Freed by the pipeline's ownership-based deallocation, which wants no
    // deallocs before it.)
    return success();
  }
};

} // namespace
