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

memref::GlobalOp WeightPacker::constantSource(Value weights) {
  auto getGlobal = weights.getDefiningOp<memref::GetGlobalOp>();
  if (!getGlobal)
    return {};
  auto global = symbols.lookup<memref::GlobalOp>(getGlobal.getName());
  if (!global || !global.getConstant() || !global.getInitialValue())
    return {};
  return global;
}

memref::GlobalOp WeightPacker::addPacked(Location loc, memref::GlobalOp source,
                                         StringRef suffix, MemRefType type,
                                         Attribute init,
                                         const std::string &key) {
  OpBuilder mb(module.getBodyRegion());
  mb.setInsertionPoint(source);
  auto packed = memref::GlobalOp::create(
      mb, loc, mb.getStringAttr(source.getSymName() + "_" + suffix),
      mb.getStringAttr("private"), TypeAttr::get(type), init, mb.getUnitAttr(),
      mb.getI64IntegerAttr(64));
  symbols.insert(packed); // renames on collision
  packedGlobals[key] = packed;
  return packed;
}

Value WeightPacker::pack(OpBuilder &b, Location loc, Value weights,
                         ArrayRef<int64_t> redShape, int64_t n, int64_t nr,
                         int64_t batch) {
  memref::GlobalOp global = constantSource(weights);
  if (!global)
    return {};
  // The panels are built from 32-bit values, f32 or i32 (other element types
  // are not packed: their kernels read B in place, if any).
  Type elementType = global.getType().getElementType();
  if (!elementType.isF32() && !elementType.isSignlessInteger(32))
    return {};
  std::string key = (global.getSymName() + "/" + Twine(nr) + "/" +
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
    packed = addPacked(loc, global, "packed", type, init, key);
  }
  return memref::GetGlobalOp::create(b, loc, type, packed.getSymName());
}

/// The bytes of an i8 dense or dense_resource attribute, or nullopt.
static std::optional<SmallVector<int8_t>> int8ConstantData(Attribute attr) {
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (!dense.getElementType().isSignlessInteger(8))
      return std::nullopt;
    return llvm::to_vector(dense.getValues<int8_t>());
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    if (!resource.getType().getElementType().isSignlessInteger(8))
      return std::nullopt;
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    ArrayRef<char> data = blob->getData();
    return SmallVector<int8_t>(data.begin(), data.end());
  }
  return std::nullopt;
}

Value WeightPacker::packGrouped(OpBuilder &b, Location loc, Value weights,
                                int64_t nr, int64_t span, bool ownChannels) {
  memref::GlobalOp global = constantSource(weights);
  if (!global || global.getType().getRank() != 5)
    return {};
  Type elementType = global.getType().getElementType();
  if (!elementType.isF32() && !elementType.isSignlessInteger(32))
    return {};
  ArrayRef<int64_t> ws = global.getType().getShape();
  int64_t groups = ws[0], f = ws[1], kh = ws[2], kw = ws[3], cg = ws[4];
  int64_t m = groups * f, np = (m + nr - 1) / nr;
  if (span < cg || span > groups * cg || (ownChannels && span != cg))
    return {};
  SmallVector<int64_t> shape = {np, kh, kw, span, nr};
  auto type = MemRefType::get(shape, elementType);
  std::string key = (global.getSymName() + "/grouped/" + Twine(nr) + "/" +
                     Twine(span) + (ownChannels ? "/own" : ""))
                        .str();
  memref::GlobalOp packed = packedGlobals.lookup(key);
  if (!packed) {
    std::optional<SmallVector<uint32_t>> data =
        kiln::word32ConstantData(*global.getInitialValue());
    if (!data || (int64_t)data->size() != m * kh * kw * cg)
      return {};
    SmallVector<uint32_t> out(np * kh * kw * span * nr, 0); // 0.0f and 0
    for (int64_t p = 0; p < np; ++p) {
      int64_t start = groupedPanelStart(p, nr, groups, f, cg, span);
      for (int64_t j = 0; j < nr && p * nr + j < m; ++j) {
        int64_t col = p * nr + j, g = col / f;
        // The column's own channels within the panel's span (all of them:
        // groupedPanelChannels covers every group the panel touches), or
        // at 0 with `ownChannels`.
        int64_t first = ownChannels ? 0 : g * cg - start;
        for (int64_t y = 0; y < kh; ++y)
          for (int64_t x = 0; x < kw; ++x)
            for (int64_t c = 0; c < cg; ++c)
              out[(((p * kh + y) * kw + x) * span + first + c) * nr + j] =
                  (*data)[((col * kh + y) * kw + x) * cg + c];
      }
    }
    Attribute init = kiln::word32ConstantAttr(
        RankedTensorType::get(shape, elementType), out, "kiln_packed");
    packed = addPacked(loc, global, "packed", type, init, key);
  }
  return memref::GetGlobalOp::create(b, loc, type, packed.getSymName());
}

bool WeightPacker::bytePairsFitInt16(Value weights, int64_t r, int64_t n) {
  memref::GlobalOp global = constantSource(weights);
  if (!global || n <= 0 || r % 2 ||
      !global.getType().getElementType().isSignlessInteger(8))
    return false;
  std::optional<SmallVector<int8_t>> data =
      int8ConstantData(*global.getInitialValue());
  if (!data || int64_t(data->size()) != r * n)
    return false;
  for (int64_t k = 0; k < r; k += 2)
    for (int64_t j = 0; j < n; ++j) {
      int32_t w0 = (*data)[k * n + j], w1 = (*data)[(k + 1) * n + j];
      int32_t pos = std::max(w0, 0) + std::max(w1, 0);
      int32_t neg = std::min(w0, 0) + std::min(w1, 0);
      if (pos > 128 || neg < -128)
        return false;
    }
  return true;
}

Value WeightPacker::packBytes(OpBuilder &b, Location loc, Value weights,
                              ArrayRef<int64_t> redShape, int64_t n, int64_t nr,
                              int64_t group, Value *columnTerm) {
  memref::GlobalOp global = constantSource(weights);
  if (!global || redShape.empty() || redShape.back() % group ||
      !global.getType().getElementType().isSignlessInteger(8))
    return {};
  int64_t r = 1;
  for (int64_t d : redShape)
    r *= d;
  int64_t np = (n + nr - 1) / nr;
  SmallVector<int64_t> shape = {np};
  shape.append(redShape.begin(), redShape.end());
  shape.back() /= group;
  shape.push_back(nr * group);
  auto type = MemRefType::get(shape, b.getI8Type());
  auto termType = MemRefType::get({np * nr}, b.getI32Type());
  std::string key = (global.getSymName() + "/bytes/" + Twine(nr) + "/" +
                     Twine(redShape.size()) + "/" + Twine(group))
                        .str();
  memref::GlobalOp packed = packedGlobals.lookup(key);
  memref::GlobalOp term = packedGlobals.lookup(key + "/term");
  if (!packed || (columnTerm && !term)) {
    std::optional<SmallVector<int8_t>> data =
        int8ConstantData(*global.getInitialValue());
    if (!data || (int64_t)data->size() != r * n)
      return {};
    SmallVector<int8_t> out(np * r * nr, 0);
    SmallVector<int32_t> sums(np * nr, 0);
    for (int64_t k = 0; k < r; ++k)
      for (int64_t j = 0; j < n; ++j) {
        int64_t p = j / nr, jj = j % nr;
        int64_t step = k / group, lane = k % group;
        int8_t w = (*data)[k * n + j];
        out[((p * (r / group) + step) * nr + jj) * group + lane] = w;
        sums[j] -= 128 * int32_t(w);
      }
    auto tensorType = RankedTensorType::get(shape, b.getI8Type());
    Attribute init =
        out.size() <= size_t(kiln::kMaxInlineConstantBytes)
            ? Attribute(
                  DenseElementsAttr::get(tensorType, ArrayRef<int8_t>(out)))
            : Attribute(DenseResourceElementsAttr::get(
                  tensorType, "kiln_packed",
                  HeapAsmResourceBlob::allocateAndCopyInferAlign<int8_t>(out)));
    if (!packed) {
      packed = addPacked(loc, global, "packed", type, init, key);
    }
    if (!columnTerm)
      return memref::GetGlobalOp::create(b, loc, type, packed.getSymName());
    auto termTensor = RankedTensorType::get({np * nr}, b.getI32Type());
    term = addPacked(
        loc, global, "colterm", termType,
        kiln::word32ConstantAttr(
            termTensor,
            ArrayRef<uint32_t>(reinterpret_cast<const uint32_t *>(sums.data()),
                               sums.size()),
            "kiln_colterm"),
        key + "/term");
  }
  if (columnTerm)
    *columnTerm =
        memref::GetGlobalOp::create(b, loc, termType, term.getSymName());
  return memref::GetGlobalOp::create(b, loc, type, packed.getSymName());
}

Value WeightPacker::packHalf(OpBuilder &b, Location loc, Value weights,
                             ArrayRef<int64_t> redShape, int64_t n, int64_t nr,
                             int64_t group, int64_t batch) {
  memref::GlobalOp global = constantSource(weights);
  if (!global || redShape.empty() || redShape.back() % group)
    return {};
  Type elementType = global.getType().getElementType();
  if (!elementType.isF16() && !elementType.isBF16())
    return {};
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
  shape.back() /= group;
  shape.push_back(nr * group);
  auto type = MemRefType::get(shape, elementType);
  std::string key = (global.getSymName() + "/half/" + Twine(nr) + "/" +
                     Twine(redShape.size()) + "/" + Twine(group) + "/" +
                     Twine(batch))
                        .str();
  memref::GlobalOp packed = packedGlobals.lookup(key);
  if (!packed) {
    std::optional<SmallVector<uint16_t>> data =
        kiln::word16ConstantData(*global.getInitialValue());
    if (!data || (int64_t)data->size() != batches * r * n)
      return {};
    SmallVector<uint16_t> out(batches * np * r * nr, 0); // +0.0
    for (int64_t bt = 0; bt < batches; ++bt) {
      const uint16_t *in = data->data() + bt * r * n;
      uint16_t *to = out.data() + bt * np * r * nr;
      for (int64_t k = 0; k < r; ++k)
        for (int64_t j = 0; j < n; ++j) {
          int64_t p = j / nr, jj = j % nr;
          int64_t step = k / group, lane = k % group;
          to[((p * (r / group) + step) * nr + jj) * group + lane] =
              in[k * n + j];
        }
    }
    Attribute init = kiln::word16ConstantAttr(
        RankedTensorType::get(shape, elementType), out, "kiln_packed");
    packed = addPacked(loc, global, "packed", type, init, key);
  }
  return memref::GetGlobalOp::create(b, loc, type, packed.getSymName());
}

} // namespace kiln::kernels
