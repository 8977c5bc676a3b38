//===- ConstantData.h - f32 constants read and made at compile time ------===//
//
// The CPU passes that transform weights at compile time (micro-kernel
// packing, Winograd filter transforms) read f32 constants in either form the
// importer produces and write their results the same way.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CPU_CONSTANTDATA_H
#define KILN_CODEGEN_CPU_CONSTANTDATA_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>
#include <optional>

namespace kiln {

/// Up to this many bytes a generated constant is an inline dense attribute;
/// larger ones are resource blobs (never large inline attributes).
constexpr int64_t kMaxInlineConstantBytes = 4096;

/// The values of an f32 dense or dense_resource attribute, or nullopt.
inline std::optional<llvm::SmallVector<float>>
f32ConstantData(mlir::Attribute attr) {
  if (auto dense = llvm::dyn_cast_or_null<mlir::DenseElementsAttr>(attr)) {
    if (!dense.getElementType().isF32())
      return std::nullopt;
    return llvm::to_vector(dense.getValues<float>());
  }
  if (auto resource =
          llvm::dyn_cast_or_null<mlir::DenseF32ResourceElementsAttr>(attr)) {
    std::optional<llvm::ArrayRef<float>> data = resource.tryGetAsArrayRef();
    if (!data)
      return std::nullopt;
    return llvm::SmallVector<float>(data->begin(), data->end());
  }
  return std::nullopt;
}

/// The 32-bit words of an f32 or i32 dense or dense_resource attribute (the
/// weight packing only moves them), or nullopt.
inline std::optional<llvm::SmallVector<uint32_t>>
word32ConstantData(mlir::Attribute attr) {
  if (std::optional<llvm::SmallVector<float>> f = f32ConstantData(attr)) {
    llvm::SmallVector<uint32_t> words(f->size());
    std::memcpy(words.data(), f->data(), f->size() * 4);
    return words;
  }
  if (auto dense = llvm::dyn_cast_or_null<mlir::DenseElementsAttr>(attr)) {
    if (!dense.getElementType().isSignlessInteger(32))
      return std::nullopt;
    llvm::SmallVector<uint32_t> words;
    for (const llvm::APInt &v : dense.getValues<llvm::APInt>())
      words.push_back(uint32_t(v.getZExtValue()));
    return words;
  }
  if (auto resource =
          llvm::dyn_cast_or_null<mlir::DenseI32ResourceElementsAttr>(attr)) {
    std::optional<llvm::ArrayRef<int32_t>> data = resource.tryGetAsArrayRef();
    if (!data)
      return std::nullopt;
    llvm::SmallVector<uint32_t> words(data->size());
    std::memcpy(words.data(), data->data(), data->size() * 4);
    return words;
  }
  return std::nullopt;
}

/// `value` as bfloat16 / IEEE half bits, rounded to nearest even (NaN stays
/// NaN; beyond the range: infinity). Defined in NarrowPrecision.cpp.
uint16_t floatToBF16Bits(float value);
uint16_t floatToHalfBits(float value);

/// The 16-bit words of an f16 or bf16 dense or dense_resource attribute (the
/// narrow weights of --precision and of f16 / bf16 models), or nullopt.
inline std::optional<llvm::SmallVector<uint16_t>>
word16ConstantData(mlir::Attribute attr) {
  auto elements = llvm::dyn_cast_or_null<mlir::ElementsAttr>(attr);
  if (!elements)
    return std::nullopt;
  mlir::Type elementType = elements.getElementType();
  if (!elementType.isF16() && !elementType.isBF16())
    return std::nullopt;
  if (auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(attr)) {
    llvm::SmallVector<uint16_t> words;
    words.reserve(dense.getNumElements());
    for (const llvm::APFloat &v : dense.getValues<llvm::APFloat>())
      words.push_back(uint16_t(v.bitcastToAPInt().getZExtValue()));
    return words;
  }
  if (auto resource = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(attr)) {
    mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    llvm::ArrayRef<char> data = blob->getData();
    if (data.size() != size_t(resource.getNumElements()) * 2)
      return std::nullopt;
    llvm::SmallVector<uint16_t> words(data.size() / 2);
    std::memcpy(words.data(), data.data(), data.size());
    return words;
  }
  return std::nullopt;
}

/// 16-bit `words` as an attribute of `type` (f16 or bf16 elements): inline
/// when small, else a resource blob named after `blobName`.
inline mlir::ElementsAttr word16ConstantAttr(mlir::RankedTensorType type,
                                             llvm::ArrayRef<uint16_t> words,
                                             llvm::StringRef blobName) {
  if ((int64_t)words.size() * 2 <= kMaxInlineConstantBytes) {
    llvm::ArrayRef<char> raw(reinterpret_cast<const char *>(words.data()),
                             words.size() * 2);
    return mlir::DenseElementsAttr::getFromRawBuffer(type, raw);
  }
  return mlir::DenseResourceElementsAttr::get(
      type, blobName,
      mlir::HeapAsmResourceBlob::allocateAndCopyInferAlign<uint16_t>(words));
}

/// `data` as an attribute of `type`: inline when small, else a resource blob
/// named after `blobName` (the parser/printer renames on collision).
inline mlir::ElementsAttr f32ConstantAttr(mlir::RankedTensorType type,
                                          llvm::ArrayRef<float> data,
                                          llvm::StringRef blobName) {
  if ((int64_t)data.size() * 4 <= kMaxInlineConstantBytes)
    return mlir::DenseElementsAttr::get(type, data);
  return mlir::DenseResourceElementsAttr::get(
      type, blobName,
      mlir::HeapAsmResourceBlob::allocateAndCopyInferAlign<float>(data));
}

/// 32-bit `words` as an attribute of `type` (f32 or i32 elements), like
/// f32ConstantAttr.
inline mlir::ElementsAttr word32ConstantAttr(mlir::RankedTensorType type,
                                             llvm::ArrayRef<uint32_t> words,
                                             llvm::StringRef blobName) {
  if (type.getElementType().isF32()) {
    llvm::SmallVector<float> f(words.size());
    std::memcpy(f.data(), words.data(), words.size() * 4);
    return f32ConstantAttr(type, f, blobName);
  }
  llvm::ArrayRef<int32_t> ints(reinterpret_cast<const int32_t *>(words.data()),
                               words.size());
  if ((int64_t)words.size() * 4 <= kMaxInlineConstantBytes)
    return mlir::DenseElementsAttr::get(type, ints);
  return mlir::DenseResourceElementsAttr::get(
      type, blobName,
      mlir::HeapAsmResourceBlob::allocateAndCopyInferAlign<int32_t>(ints));
}

} // namespace kiln

#endif // KILN_CODEGEN_CPU_CONSTANTDATA_H
