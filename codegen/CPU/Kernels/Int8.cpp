//===- Int8.cpp - loads and products of the 8-bit kernels ----------------===//
//
// The matmul and conv kernels on i8 operands with an i32 accumulator (the
// products of quantized models, convert-onnx-to-linalg's MatMulInteger /
// ConvInteger form: signed activations and weights). Two ways:
//   - dot4 (x86 VNNI: vpdpbusd, 4 multiply-adds per i32 lane): A is read as
//     4 bytes at once, broadcast, with each byte's sign bit flipped so it is
//     the unsigned a + 128 vpdpbusd wants; B is packed with 4 consecutive
//     reduction steps of a column side by side ([N/NR][K/4][NR][4]); the
//     accumulators start at -128 * sum_k w (packed per column) so the
//     result is the signed product;
//   - otherwise one byte per step, sign-extended to i32 (vpmovsxbd),
//     multiplied and added: exact on every target.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Kernels/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::kernels {

Value loadInt8A(KernelBuilder &kb, Value memref, ValueRange indices,
                bool dot4) {
  Type i32 = kb.b.getI32Type();
  if (!dot4) {
    Value byte = memref::LoadOp::create(kb.b, kb.loc, memref, indices);
    return arith::ExtSIOp::create(kb.b, kb.loc, i32, byte);
  }
  auto bytes = VectorType::get({4}, kb.b.getI8Type());
  Value v = vector::LoadOp::create(kb.b, kb.loc, bytes, memref, indices);
  v = vector::BitCastOp::create(kb.b, kb.loc, VectorType::get({1}, i32), v);
  Value word = vector::ExtractOp::create(kb.b, kb.loc, v, ArrayRef<int64_t>{0});
  Value signBits = arith::ConstantIntOp::create(kb.b, kb.loc, i32,
                                                int64_t(int32_t(0x80808080u)));
  return arith::XOrIOp::create(kb.b, kb.loc, word, signBits);
}

Value loadInt8B(KernelBuilder &kb, Value packed, ValueRange indices,
                bool dot4) {
  Type i8 = kb.b.getI8Type();
  if (!dot4) {
    Value v = vector::LoadOp::create(kb.b, kb.loc, VectorType::get({kb.vw}, i8),
                                     packed, indices);
    return arith::ExtSIOp::create(kb.b, kb.loc, kb.vt, v);
  }
  Value v = vector::LoadOp::create(
      kb.b, kb.loc, VectorType::get({kb.vw * 4}, i8), packed, indices);
  return vector::BitCastOp::create(kb.b, kb.loc, kb.vt, v);
}

std::string declareDot4(Operation *kernel, int64_t vw) {
  // Called by name (a declaration named llvm.* is the intrinsic in LLVM IR):
  // buffer deallocation refuses llvm.call_intrinsic, whose memory effects it
  // does not know, while a call without memref arguments is fine.
  std::string name = "llvm.x86.avx512.vpdpbusd." + std::to_string(vw * 32);
  auto module = kernel->getParentOfType<ModuleOp>();
  if (!module.lookupSymbol<func::FuncOp>(name)) {
    OpBuilder mb(module.getBodyRegion());
    // LLVM 22's signature: the byte operands as <4 * vw x i8>.
    auto vt = VectorType::get({vw}, mb.getI32Type());
    auto bytes = VectorType::get({vw * 4}, mb.getI8Type());
    auto decl =
        func::FuncOp::create(mb, kernel->getLoc(), name,
                             mb.getFunctionType({vt, bytes, bytes}, {vt}));
    decl.setPrivate();
  }
  return name;
}

Value dot4Accumulate(KernelBuilder &kb, StringRef name, Value a, Value b,
                     Value acc) {
  auto bytes = VectorType::get({kb.vw * 4}, kb.b.getI8Type());
  Value ab = vector::BitCastOp::create(kb.b, kb.loc, bytes, a);
  Value bb = vector::BitCastOp::create(kb.b, kb.loc, bytes, b);
  return func::CallOp::create(kb.b, kb.loc, name, TypeRange{kb.vt},
                              ValueRange{acc, ab, bb})
      .getResult(0);
}

} // namespace kiln::kernels
