//===- WeightPacking.cpp - constant B operands packed at compile time -----===//
//
// A constant B (matmul weights, HWCF conv filters, a batch matmul's
// per-batch matrices such as the Winograd products' transformed filters) is
// rewritten at compile time into panels [batch][N / NR][reduction...][NR],
// zero padded to whole panels, as a new 64-byte aligned `memref.global`: a
// kernel then reads one contiguous stream of B per column panel.
//
//===----------------------------------------------------------------------===//

#include "codegen/CPU/ConstantData.h"
#include "codegen/CPU/Kernels/Kernels.h"

namespace kiln::kernels {

Value WeightPacker::pack(OpBuilder &b, Location loc, Value weights,
                         ArrayRef<int64_t> redShape, int64_t n, int64_t nr,
                         int64_t batch) {
  auto getGlobal = weights.getDefiningOp<memref::GetGlobalOp>();
  if (!getGlobal)
    return {};
  auto global = symbols.lookup<memref::GlobalOp>(getGlobal.getName());
  if (!global || !global.getConstant() || !global.getInitialValue())
    return {};
  // The panels are built from 32-bit values, f32 or i32 (other element types
  // are not packed: their kernels read B in place, if any).
  Type elementType = global.getType().getElementType();
  if (!elementType.isF32() && !elementType.isSignlessInteger(32))
    return {};
  std::string key = (getGlobal.getName() + "/" + Twine(nr) + "/" +
                     Twine(redShape.size()) + "/" + Twine(batch))
                        .str();
  memref::GlobalOp packed = packedGlobals.lookup(key);
  int64_t r = 1;
  for (int64_t d : redShape)
    r *= d;
  int64_t np = (n + nr - 1) / nr;
  int64_t batches = std::max<int64_t>(batch, 1);
  SmallVector<int64_t> shape;
  if (batch)
    shape.push_back(batch);
  shape.push_back(np);
  shape.append(redShape.begin(), redShape.end());
  shape.push_back(nr);
  auto type = MemRefType::get(shape, elementType);
  if (!packed) {
    std::optional<SmallVector<uint32_t>> data =
        kiln::word32ConstantData(*global.getInitialValue());
    if (!data || (int64_t)data->size() != batches * r * n)
      return {};
    SmallVector<uint32_t> out(batches * np * r * nr, 0); // 0.0f and 0
    for (int64_t bt = 0; bt < batches; ++bt) {
      const uint32_t *in = data->data() + bt * r * n;
      uint32_t *to = out.data() + bt * np * r * nr;
      for (int64_t p = 0; p < np; ++p)
        for (int64_t k = 0; k < r; ++k)
          for (int64_t j = 0; j < nr && p * nr + j < n; ++j)
            to[(p * r + k) * nr + j] = in[k * n + p * nr + j];
    }
    Attribute init = kiln::word32ConstantAttr(
        RankedTensorType::get(shape, elementType), out, "kiln_packed");
    OpBuilder mb(module.getBodyRegion());
    mb.setInsertionPoint(global);
    packed = memref::GlobalOp::create(
        mb, loc, mb.getStringAttr(global.getSymName() + "_packed"),
        mb.getStringAttr("private"), TypeAttr::get(type), init,
        mb.getUnitAttr(), mb.getI64IntegerAttr(64));
    symbols.insert(packed); // renames on collision
    packedGlobals[key] = packed;
  }
  return memref::GetGlobalOp::create(b, loc, type, packed.getSymName());
}

} // namespace kiln::kernels
