//===- LoweringConfig.cpp - the kiln.gpu_lowering attribute ---------------===//

#include "codegen/GPU/Common/LoweringConfig.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace kiln {

StringRef stringifyGPUKernelKind(GPUKernelKind kind) {
  switch (kind) {
  case GPUKernelKind::Generic:
    return "generic";
  case GPUKernelKind::MatmulTiled:
    return "matmul_tiled";
  case GPUKernelKind::MatmulMma:
    return "matmul_mma";
  case GPUKernelKind::RowReduction:
    return "row_reduction";
  }
  llvm_unreachable("unknown GPU kernel kind");
}

static std::optional<SmallVector<int64_t, 3>> getSizes(DictionaryAttr dict,
                                                       StringRef name) {
  Attribute attr = dict.get(name);
  if (!attr)
    return SmallVector<int64_t, 3>();
  auto array = dyn_cast<DenseI64ArrayAttr>(attr);
  if (!array || llvm::any_of(array.asArrayRef(),
                             [](int64_t size) { return size <= 0; }))
    return std::nullopt;
  return SmallVector<int64_t, 3>(array.asArrayRef());
}

std::optional<GPULoweringConfig> getGPULoweringConfig(Operation *op) {
  auto dict = op->getAttrOfType<DictionaryAttr>(kGPULoweringAttrName);
  if (!dict)
    return std::nullopt;
  auto kind = dict.getAs<StringAttr>("kind");
  if (!kind)
    return std::nullopt;
  GPULoweringConfig config;
  if (kind.getValue() == "generic")
    config.kind = GPUKernelKind::Generic;
  else if (kind.getValue() == "matmul_tiled")
    config.kind = GPUKernelKind::MatmulTiled;
  else if (kind.getValue() == "matmul_mma")
    config.kind = GPUKernelKind::MatmulMma;
  else if (kind.getValue() == "row_reduction")
    config.kind = GPUKernelKind::RowReduction;
  else
    return std::nullopt;
  auto tiles = getSizes(dict, "tile_sizes");
  auto workgroup = getSizes(dict, "workgroup_size");
  auto warpTile = getSizes(dict, "warp_tile");
  auto mmaShape = getSizes(dict, "mma_shape");
  if (!tiles || !workgroup || !warpTile || !mmaShape)
    return std::nullopt;
  config.tileSizes = std::move(*tiles);
  config.workgroupSize = std::move(*workgroup);
  config.warpTile.assign(warpTile->begin(), warpTile->end());
  config.mmaShape = std::move(*mmaShape);
  bool wellFormed = true;
  switch (config.kind) {
  case GPUKernelKind::Generic:
    break;
  case GPUKernelKind::MatmulTiled:
    wellFormed = config.tileSizes.size() == 3 &&
                 config.workgroupSize.size() == 3;
    break;
  case GPUKernelKind::MatmulMma:
    wellFormed = config.tileSizes.size() == 3 &&
                 config.workgroupSize.size() == 3 &&
                 config.warpTile.size() == 2 && config.mmaShape.size() == 3;
    break;
  case GPUKernelKind::RowReduction:
    wellFormed = config.workgroupSize.size() == 3;
    break;
  }
  if (!wellFormed)
    return std::nullopt;
  return config;
}

void setGPULoweringConfig(Operation *op, const GPULoweringConfig &config) {
  Builder b(op->getContext());
  SmallVector<NamedAttribute> fields;
  fields.push_back(
      b.getNamedAttr("kind", b.getStringAttr(stringifyGPUKernelKind(config.kind))));
  if (!config.tileSizes.empty())
    fields.push_back(b.getNamedAttr("tile_sizes",
                                    b.getDenseI64ArrayAttr(config.tileSizes)));
  if (!config.workgroupSize.empty())
    fields.push_back(b.getNamedAttr(
        "workgroup_size", b.getDenseI64ArrayAttr(config.workgroupSize)));
  if (!config.warpTile.empty())
    fields.push_back(
        b.getNamedAttr("warp_tile", b.getDenseI64ArrayAttr(config.warpTile)));
  if (!config.mmaShape.empty())
    fields.push_back(
        b.getNamedAttr("mma_shape", b.getDenseI64ArrayAttr(config.mmaShape)));
  op->setAttr(kGPULoweringAttrName, b.getDictionaryAttr(fields));
}

} // namespace kiln
