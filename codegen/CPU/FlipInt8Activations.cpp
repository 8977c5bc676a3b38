//===- FlipInt8Activations.cpp - u8 activations straight into the kernels -===//
//
// convert-onnx-to-linalg gives the 8-bit products one form: signed bytes,
// u8 activations moved to the signed range by an elementwise xor with 0x80
// (x - 128). x86's products want the activations unsigned (vpdpbusd,
// vpmaddubsw: u8 x s8; pmaddwd takes them zero-extended as well as signed),
// so the kernel flipped every byte back, once per column panel it read it
// for. On tensors, before fusion, this pass takes the xor away where its
// result reaches a linalg.matmul / linalg.conv_2d_nhwc_hwcf's activations
// (operand 0) only, through single-use transposes, reshapes and pads (a
// pad's value flipped too), and marks the product kiln.int8_flipped_lhs:
// its operand 0 holds the signed operand with each sign bit flipped, the
// product is the same. The kernels (Kernels/Int8.cpp) read such bytes as
// they are for vpdpbusd / vpmaddubsw and zero-extended for pmaddwd and the
// byte form, with the column term -128 * sum_k w; kiln-emit-microkernels
// flips them back in a copy for an op it does not emit.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Kernels/Kernels.h"
#include "codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace kiln {
#define GEN_PASS_DEF_KILNFLIPINT8ACTIVATIONSPASS
#include "codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Whether `generic` is y = x ^ 0x80 on i8, elementwise, one input.
bool isSignFlip(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      !getElementTypeOrSelf(generic.getDpsInputs()[0].getType())
           .isSignlessInteger(8) ||
      generic.getDpsInputs()[0].getType() != generic.getResult(0).getType())
    return false;
  // The body: the xori, its constant (inside or outside), the yield.
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto xorOp = yield.getOperand(0).getDefiningOp<arith::XOrIOp>();
  if (!xorOp || xorOp->getBlock() != &body ||
      !llvm::all_of(body.without_terminator(), [&](Operation &o) {
        return &o == xorOp.getOperation() || isa<arith::ConstantOp>(o);
      }))
    return false;
  APInt bit;
  Value other;
  if (xorOp.getLhs() == body.getArgument(0))
    other = xorOp.getRhs();
  else if (xorOp.getRhs() == body.getArgument(0))
    other = xorOp.getLhs();
  else
    return false;
  return matchPattern(other, m_ConstantInt(&bit)) && bit.getBitWidth() == 8 &&
         bit == APInt(8, 0x80);
}

/// The constant value a tensor.pad pads with (its region yields it), or null.
Value padConstant(tensor::PadOp pad) {
  Value v = pad.getConstantPaddingValue();
  if (!v || !matchPattern(v, m_Constant()))
    return Value();
  return v;
}

struct FlipInt8ActivationsPass
    : kiln::impl::KilnFlipInt8ActivationsPassBase<FlipInt8ActivationsPass> {
  using KilnFlipInt8ActivationsPassBase::KilnFlipInt8ActivationsPassBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> products;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::Conv2DNhwcHwcfOp>(op.getOperation()) &&
          op.hasPureTensorSemantics() && op.getNumDpsInputs() == 2 &&
          getElementTypeOrSelf(op.getDpsInputs()[0].getType())
              .isSignlessInteger(8) &&
          getElementTypeOrSelf(op.getDpsInputs()[1].getType())
              .isSignlessInteger(8) &&
          !op->hasAttr(kiln::kernels::kInt8FlippedLhsAttrName))
        products.push_back(op);
    });
    for (linalg::LinalgOp op : products)
      flip(op);
  }

  /// Takes away the sign flip behind `op`'s operand 0, if there is one that
  /// only it reads.
  void flip(linalg::LinalgOp op) {
    SmallVector<tensor::PadOp> pads;
    Value v = op.getDpsInputs()[0];
    linalg::GenericOp signFlip;
    while (true) {
      if (!v.hasOneUse())
        return;
      Operation *def = v.getDefiningOp();
      if (!def)
        return;
      if (auto generic = dyn_cast<linalg::GenericOp>(def)) {
        if (!isSignFlip(generic))
          return;
        signFlip = generic;
        break;
      }
      if (auto pad = dyn_cast<tensor::PadOp>(def)) {
        if (!padConstant(pad))
          return;
        pads.push_back(pad);
        v = pad.getSource();
        continue;
      }
      if (auto t = dyn_cast<linalg::TransposeOp>(def)) {
        v = t.getInput();
        continue;
      }
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def)) {
        v = def->getOperand(0);
        continue;
      }
      return;
    }
    for (tensor::PadOp pad : pads) {
      Value old = padConstant(pad);
      APInt value;
      matchPattern(old, m_ConstantInt(&value));
      auto yield = cast<tensor::YieldOp>(pad.getRegion().front().getTerminator());
      OpBuilder b(yield);
      Value flipped = arith::ConstantIntOp::create(
          b, pad.getLoc(), b.getI8Type(),
          int64_t(int8_t(uint8_t(value.getZExtValue() ^ 0x80))));
      yield->setOperand(0, flipped);
    }
    signFlip.getResult(0).replaceAllUsesWith(signFlip.getDpsInputs()[0]);
    signFlip.erase();
    op->setAttr(kiln::kernels::kInt8FlippedLhsAttrName,
                UnitAttr::get(op->getContext()));
  }
};

} // namespace
