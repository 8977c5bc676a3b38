//===- Int8.cpp - loads and products of the 8-bit kernels ----------------===//
//
// The matmul and conv kernels on i8 operands with an i32 accumulator (the
// products of quantized models, convert-onnx-to-linalg's MatMulInteger /
// ConvInteger form: signed activations and weights). The form is the op's
// kiln.int8_dot (kiln-select-kernel-strategy, from the target):
//   - vpdpbusd (x86 AVX512-VNNI / AVX-VNNI: 4 u8 x s8 multiply-adds per i32
//     lane): A is read as 4 bytes at once, broadcast, with each byte's sign
//     bit flipped so it is the unsigned a + 128 vpdpbusd wants; B is packed
//     with 4 consecutive reduction steps of a column side by side
//     ([N/NR][K/4][NR][4]); the accumulators start at -128 * sum_k w (packed
//     per column) so the result is the signed product;
//   - sdot (AArch64 armv8.2-a dotprod: 4 s8 x s8 multiply-adds per i32
//     lane): the same packing and broadcast, both operands signed, so
//     neither the sign flip nor the column term;
//   - pmaddwd (x86 without VNNI: SSE2, AVX2, AVX-512BW): 2 reduction steps
//     per i32 lane ([N/NR][K/2][NR][2]), both operands sign-extended to 16
//     bits (A's 2 bytes before the broadcast, B's vector as it is loaded:
//     vpmovsxbw), then vpmaddwd, s16 x s16 products summed in pairs into
//     i32, and an add. Exact: a pair is at most 2 * 128 * 128 = 2^15;
//   - pmaddubsw (x86 AVX2 / AVX-512BW without VNNI, where the weights allow
//     it: refineInt8Dot): vpdpbusd's packing, sign flip and column term,
//     the product split in two: vpmaddubsw (u8 x s8, adjacent pairs summed
//     into s16 with saturation) then vpmaddwd by ones (s16 pairs into i32)
//     and an add: 32 products per 3 instructions, twice pmaddwd's. Its
//     pair sums saturate for full-range weights (255 * (127 + 127) >
//     32767: the bug of kernels that use it as it is), so it is taken only
//     when every pair of the constant weights is exact at compile time
//     (positive parts adding to at most 128, negative ones to at least
//     -128: 7-bit weights, onnxruntime's reduce_range, always are);
//     otherwise pmaddwd, as XNNPACK's and onnxruntime's (MLAS) s8 x s8 AVX2
//     kernels widen to 16 bits and use vpmaddwd (oneDNN halves the
//     weights' scale instead; onnxruntime's u8 x s8 asks for reduce_range);
//   - otherwise one byte per step sign-extended to i32, multiplied and
//     added (plain NEON: sxtl + mla; any other target): exact everywhere.
// An op marked kiln.int8_flipped_lhs (kiln-flip-int8-activations: u8
// activations as stored) has A's sign bits flipped already: vpdpbusd and
// vpmaddubsw read it as it is, pmaddwd and the byte form zero-extend it (and
// add the column term too), sdot flips it back (int8UsesColumnTerm).
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/Kernels/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/StringSwitch.h"

namespace kiln::kernels {

Int8Dot int8DotOf(Operation *op) {
  auto attr = op->getAttrOfType<StringAttr>(kInt8DotAttrName);
  if (!attr)
    return Int8Dot::Bytes;
  return llvm::StringSwitch<Int8Dot>(attr.getValue())
      .Case("vpdpbusd", Int8Dot::Vpdpbusd)
      .Case("pmaddwd", Int8Dot::Pmaddwd)
      .Case("sdot", Int8Dot::Sdot)
      .Default(Int8Dot::Bytes);
}

int64_t pmaddubswRows(KernelStrategyAttr strategy) {
  int64_t vecs = strategy.getVectors();
  return std::max<int64_t>(1, (strategy.getRegisters() - vecs - 3) / vecs);
}

bool hasFlippedLhs(Operation *op) {
  return op->hasAttr(kInt8FlippedLhsAttrName);
}

bool int8UsesColumnTerm(Int8Dot form, bool flipped) {
  switch (form) {
  case Int8Dot::Vpdpbusd:
  case Int8Dot::Pmaddubsw:
    return true;
  case Int8Dot::Pmaddwd:
  case Int8Dot::Bytes:
    return flipped;
  case Int8Dot::Sdot:
    break;
  }
  return false;
}

Int8Dot refineInt8Dot(Int8Dot form, int64_t vw, int64_t inner, Value weights,
                      WeightPacker &packer) {
  if (form != Int8Dot::Pmaddwd || (vw != 8 && vw != 16) || inner % 4)
    return form;
  auto type = dyn_cast<ShapedType>(weights.getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 2)
    return form;
  // The weights are [R][N] (matmul B, a conv's HWIO filter): N is the last
  // dim, the reduction steps are the rest, flattened.
  int64_t n = type.getShape().back();
  if (n <= 0 || !packer.bytePairsFitInt16(weights, type.getNumElements() / n, n))
    return form;
  return Int8Dot::Pmaddubsw;
}

int64_t int8Group(Int8Dot form) {
  switch (form) {
  case Int8Dot::Vpdpbusd:
  case Int8Dot::Pmaddubsw:
  case Int8Dot::Sdot:
    return 4;
  case Int8Dot::Pmaddwd:
    return 2;
  case Int8Dot::Bytes:
    break;
  }
  return 1;
}

Value loadInt8A(KernelBuilder &kb, Value memref, ValueRange indices,
                Int8Dot form, bool flipped) {
  Type i32 = kb.b.getI32Type();
  if (form == Int8Dot::Bytes) {
    Value byte = memref::LoadOp::create(kb.b, kb.loc, memref, indices);
    if (flipped) // a + 128, unsigned (the column term takes the 128 off)
      return arith::ExtUIOp::create(kb.b, kb.loc, i32, byte);
    return arith::ExtSIOp::create(kb.b, kb.loc, i32, byte);
  }
  int64_t group = int8Group(form);
  auto bytes = VectorType::get({group}, kb.b.getI8Type());
  Value v = vector::LoadOp::create(kb.b, kb.loc, bytes, memref, indices);
  if (form == Int8Dot::Pmaddwd) {
    auto halves = VectorType::get({group}, kb.b.getI16Type());
    v = flipped ? arith::ExtUIOp::create(kb.b, kb.loc, halves, v).getResult()
                : arith::ExtSIOp::create(kb.b, kb.loc, halves, v).getResult();
  }
  v = vector::BitCastOp::create(kb.b, kb.loc, VectorType::get({1}, i32), v);
  Value word = vector::ExtractOp::create(kb.b, kb.loc, v, ArrayRef<int64_t>{0});
  // vpdpbusd / vpmaddubsw multiply unsigned bytes, sdot signed ones.
  bool unsignedProduct =
      form == Int8Dot::Vpdpbusd || form == Int8Dot::Pmaddubsw;
  if (form == Int8Dot::Pmaddwd || unsignedProduct == flipped)
    return word;
  Value signBits = arith::ConstantIntOp::create(kb.b, kb.loc, i32,
                                                int64_t(int32_t(0x80808080u)));
  return arith::XOrIOp::create(kb.b, kb.loc, word, signBits);
}

Value loadInt8B(KernelBuilder &kb, Value packed, ValueRange indices,
                Int8Dot form) {
  Type i8 = kb.b.getI8Type();
  int64_t group = int8Group(form);
  Value v = vector::LoadOp::create(
      kb.b, kb.loc, VectorType::get({kb.vw * group}, i8), packed, indices);
  if (form == Int8Dot::Bytes)
    return arith::ExtSIOp::create(kb.b, kb.loc, kb.vt, v);
  if (form == Int8Dot::Pmaddwd)
    v = arith::ExtSIOp::create(
        kb.b, kb.loc, VectorType::get({kb.vw * 2}, kb.b.getI16Type()), v);
  return vector::BitCastOp::create(kb.b, kb.loc, kb.vt, v);
}

/// The LLVM intrinsic of `form` at `vw` i32 lanes, and its operands' type.
static std::pair<std::string, VectorType> intrinsicOf(MLIRContext *ctx,
                                                      Int8Dot form,
                                                      int64_t vw) {
  auto i8 = IntegerType::get(ctx, 8), i16 = IntegerType::get(ctx, 16);
  switch (form) {
  case Int8Dot::Vpdpbusd:
    // The 256-bit form is AVX-VNNI's vpdpbusd too (VEX-encoded where the
    // target has avxvnni rather than avx512vl).
    return {"llvm.x86.avx512.vpdpbusd." + std::to_string(vw * 32),
            VectorType::get({vw * 4}, i8)};
  case Int8Dot::Pmaddubsw:
    return {vw == 16 ? "llvm.x86.avx512.pmaddubs.w.512"
                     : "llvm.x86.avx2.pmadd.ub.sw",
            VectorType::get({vw * 4}, i8)};
  case Int8Dot::Sdot:
    return {"llvm.aarch64.neon.sdot.v" + std::to_string(vw) + "i32.v" +
                std::to_string(vw * 4) + "i8",
            VectorType::get({vw * 4}, i8)};
  case Int8Dot::Pmaddwd:
    return {vw == 16  ? "llvm.x86.avx512.pmaddw.d.512"
            : vw == 8 ? "llvm.x86.avx2.pmadd.wd"
                      : "llvm.x86.sse2.pmadd.wd",
            VectorType::get({vw * 2}, i16)};
  case Int8Dot::Bytes:
    break;
  }
  return {"", VectorType()};
}

std::string declareInt8Dot(Operation *kernel, int64_t vw, Int8Dot form) {
  if (form == Int8Dot::Bytes)
    return "";
  // Called by name (a declaration named llvm.* is the intrinsic in LLVM IR):
  // buffer deallocation refuses llvm.call_intrinsic, whose memory effects it
  // does not know, while a call without memref arguments is fine.
  auto [name, operands] = intrinsicOf(kernel->getContext(), form, vw);
  auto module = kernel->getParentOfType<ModuleOp>();
  if (!module.lookupSymbol<func::FuncOp>(name)) {
    OpBuilder mb(module.getBodyRegion());
    auto vt = VectorType::get({vw}, mb.getI32Type());
    // vpdpbusd / sdot: (acc, a, b); pmaddwd: (a, b); pmaddubsw: (a, b) into
    // 2 * vw i16.
    SmallVector<Type> args;
    if (form != Int8Dot::Pmaddwd && form != Int8Dot::Pmaddubsw)
      args.push_back(vt);
    args.append({operands, operands});
    Type result = form == Int8Dot::Pmaddubsw
                      ? Type(VectorType::get({vw * 2}, mb.getI16Type()))
                      : Type(vt);
    auto decl = func::FuncOp::create(mb, kernel->getLoc(), name,
                                     mb.getFunctionType(args, {result}));
    decl.setPrivate();
  }
  // pmaddubsw's s16 pair sums go on through pmaddwd (by ones).
  if (form == Int8Dot::Pmaddubsw)
    declareInt8Dot(kernel, vw, Int8Dot::Pmaddwd);
  return name;
}

Value int8DotAccumulate(KernelBuilder &kb, Int8Dot form, StringRef name,
                        Value a, Value b, Value acc) {
  VectorType operands = intrinsicOf(kb.b.getContext(), form, kb.vw).second;
  Value ab = vector::BitCastOp::create(kb.b, kb.loc, operands, a);
  Value bb = vector::BitCastOp::create(kb.b, kb.loc, operands, b);
  if (form == Int8Dot::Pmaddubsw) {
    // u8 x s8 pairs summed into s16 (exact: refineInt8Dot), then the s16
    // pairs by ones into i32.
    auto halves = VectorType::get({kb.vw * 2}, kb.b.getI16Type());
    Value pairs16 = func::CallOp::create(kb.b, kb.loc, name, TypeRange{halves},
                                         ValueRange{ab, bb})
                        .getResult(0);
    Value ones = arith::ConstantOp::create(
        kb.b, kb.loc, DenseElementsAttr::get(halves, kb.b.getI16IntegerAttr(1)));
    std::string wd = intrinsicOf(kb.b.getContext(), Int8Dot::Pmaddwd, kb.vw).first;
    Value quads = func::CallOp::create(kb.b, kb.loc, wd, TypeRange{kb.vt},
                                       ValueRange{pairs16, ones})
                      .getResult(0);
    return arith::AddIOp::create(kb.b, kb.loc, acc, quads);
  }
  if (form != Int8Dot::Pmaddwd)
    return func::CallOp::create(kb.b, kb.loc, name, TypeRange{kb.vt},
                                ValueRange{acc, ab, bb})
        .getResult(0);
  Value pairs = func::CallOp::create(kb.b, kb.loc, name, TypeRange{kb.vt},
                                     ValueRange{ab, bb})
                    .getResult(0);
  return arith::AddIOp::create(kb.b, kb.loc, acc, pairs);
}

//===----------------------------------------------------------------------===//
// Lane-wise products (8-bit depthwise)
//===----------------------------------------------------------------------===//

/// Whether `form` has a lane product: s16 pairs multiplied and summed into
/// each i32 lane (vpdpwssd adds the accumulator too).
static bool hasLaneProduct(Int8Dot form) {
  return form == Int8Dot::Vpdpbusd || form == Int8Dot::Pmaddwd;
}

Value int8LaneOperand(KernelBuilder &kb, Value bytes, Int8Dot form) {
  if (!hasLaneProduct(form))
    return arith::ExtSIOp::create(kb.b, kb.loc, kb.vt, bytes);
  Value halves = arith::ExtSIOp::create(
      kb.b, kb.loc, VectorType::get({kb.vw}, kb.b.getI16Type()), bytes);
  return arith::ExtUIOp::create(kb.b, kb.loc, kb.vt, halves);
}

std::string declareInt8LaneProduct(Operation *kernel, int64_t vw,
                                   Int8Dot form) {
  if (!hasLaneProduct(form))
    return "";
  if (form == Int8Dot::Pmaddwd)
    return declareInt8Dot(kernel, vw, form);
  // The 256-bit form is AVX-VNNI's too, like vpdpbusd's.
  std::string name = "llvm.x86.avx512.vpdpwssd." + std::to_string(vw * 32);
  auto module = kernel->getParentOfType<ModuleOp>();
  if (!module.lookupSymbol<func::FuncOp>(name)) {
    OpBuilder mb(module.getBodyRegion());
    auto vt = VectorType::get({vw}, mb.getI32Type());
    auto halves = VectorType::get({vw * 2}, mb.getI16Type());
    auto decl = func::FuncOp::create(
        mb, kernel->getLoc(), name,
        mb.getFunctionType({vt, halves, halves}, {vt}));
    decl.setPrivate();
  }
  return name;
}

Value int8LaneProduct(KernelBuilder &kb, Int8Dot form, StringRef name, Value a,
                      Value b, Value acc) {
  if (!hasLaneProduct(form))
    return kb.multiplyAdd(a, b, acc);
  auto halves = VectorType::get({kb.vw * 2}, kb.b.getI16Type());
  Value ah = vector::BitCastOp::create(kb.b, kb.loc, halves, a);
  Value bh = vector::BitCastOp::create(kb.b, kb.loc, halves, b);
  if (form == Int8Dot::Vpdpbusd)
    return func::CallOp::create(kb.b, kb.loc, name, TypeRange{kb.vt},
                                ValueRange{acc, ah, bh})
        .getResult(0);
  Value pairs = func::CallOp::create(kb.b, kb.loc, name, TypeRange{kb.vt},
                                     ValueRange{ah, bh})
                    .getResult(0);
  return arith::AddIOp::create(kb.b, kb.loc, acc, pairs);
}

} // namespace kiln::kernels
