//===- NarrowFloat.cpp - loads and products of f16 / bf16 operands -------===//
//
// The matmul and conv kernels on f16 or bf16 A and B with an f32
// accumulator (f16 / bf16 models, whose products accumulate in f32, and
// `--precision bf16|fp16`, kiln-narrow-precision). Two forms:
//   - vdpbf16ps (x86 AVX512-BF16, the op's kiln.bf16_dot; bf16 matmuls with
//     an even K and a constant B): B is packed with 2 consecutive reduction
//     steps of a column side by side ([N/NR][K/2][NR][2]), A's pair of steps
//     is read as one i32 and broadcast, and one instruction adds both
//     products of every lane to its f32 accumulator;
//   - otherwise each operand is widened to f32 as it is loaded (f16: F16C's
//     vcvtph2ps; bf16: a 16-bit shift, exact) and multiplied with the f32
//     FMA; B is packed narrow ([N/NR][K][NR] of 16-bit values), so the
//     kernel streams half the weight bytes.
// The accumulators and the result are f32 either way.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Kernels/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::kernels {

bool hasBF16Dot(Operation *op) {
  auto attr = op->getAttrOfType<StringAttr>(kBF16DotAttrName);
  return attr && attr.getValue() == "vdpbf16ps";
}

Value widenToF32(KernelBuilder &kb, Value value) {
  Type type = value.getType();
  Type elem = getElementTypeOrSelf(type);
  if (!elem.isF16() && !elem.isBF16()) // f32, i32: as they are
    return value;
  Type f32 = kb.b.getF32Type();
  Type to = f32;
  if (auto vt = dyn_cast<VectorType>(type))
    to = VectorType::get(vt.getShape(), f32);
  return arith::ExtFOp::create(kb.b, kb.loc, to, value);
}

Value loadBF16PairA(KernelBuilder &kb, Value memref, ValueRange indices) {
  auto pair = VectorType::get({2}, kb.b.getBF16Type());
  Value v = vector::LoadOp::create(kb.b, kb.loc, pair, memref, indices);
  v = vector::BitCastOp::create(kb.b, kb.loc,
                                VectorType::get({1}, kb.b.getI32Type()), v);
  return vector::ExtractOp::create(kb.b, kb.loc, v, ArrayRef<int64_t>{0});
}

/// "llvm.x86.avx512bf16.dpbf16ps.<bits>" at `vw` f32 lanes.
static std::string bf16DotName(int64_t vw) {
  return "llvm.x86.avx512bf16.dpbf16ps." + std::to_string(vw * 32);
}

std::string declareBF16Dot(Operation *kernel, int64_t vw) {
  // Called by name, like the 8-bit products (Int8.cpp says why).
  std::string name = bf16DotName(vw);
  auto module = kernel->getParentOfType<ModuleOp>();
  if (!module.lookupSymbol<func::FuncOp>(name)) {
    OpBuilder mb(module.getBodyRegion());
    auto acc = VectorType::get({vw}, mb.getF32Type());
    auto pairs = VectorType::get({vw * 2}, mb.getBF16Type());
    auto decl = func::FuncOp::create(
        mb, kernel->getLoc(), name,
        mb.getFunctionType({acc, pairs, pairs}, {acc}));
    decl.setPrivate();
  }
  return name;
}

Value bf16DotAccumulate(KernelBuilder &kb, StringRef name, Value a, Value b,
                        Value acc) {
  auto pairs = VectorType::get({kb.vw * 2}, kb.b.getBF16Type());
  Value ab = vector::BitCastOp::create(kb.b, kb.loc, pairs, a);
  return func::CallOp::create(kb.b, kb.loc, name, TypeRange{acc.getType()},
                              ValueRange{acc, ab, b})
      .getResult(0);
}

} // namespace kiln::kernels
