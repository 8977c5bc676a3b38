//===- WeightPool.h - weight bytes stored once, by content ------*- C++ -*-===//
//
// The large constants of a compiled model (weights, packed weights) leave
// the LLVM module for one data file that the assembler includes with
// `.incbin` (codegen/CPU/ExternalWeights.cpp). A pool keys them by content:
// the same bytes added twice, from one module or from the modules of
// several CPU variants of one artifact, are stored once and get one symbol.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_WEIGHTPOOL_H
#define KILN_CODEGEN_WEIGHTPOOL_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

class WeightPool {
public:
  /// Symbols are `<symbolPrefix>_kw<N>` over the label
  /// `<symbolPrefix>_kweights`; the bytes go to `dataPath` (created at the
  /// first add(), which must stay until the object including it is built).
  WeightPool(std::string symbolPrefix, std::string dataPath);
  ~WeightPool();

  /// The symbol of `bytes`, placed at a multiple of `alignment` (a power of
  /// two): a symbol already returned when the same bytes were added before
  /// (and its place meets `alignment`), else a new one. nullopt with `error`
  /// when the data file cannot be written.
  std::optional<std::string> add(llvm::ArrayRef<char> bytes,
                                 uint64_t alignment, std::string &error);

  /// Whether nothing was added.
  bool empty() const { return symbols.empty(); }
  /// Bytes of the data file (with alignment padding).
  uint64_t storedBytes() const { return offset; }
  /// Bytes of every add(), repeats counted each time.
  uint64_t addedBytes() const { return added; }

  /// Closes the data file; false with `error` when writing it failed.
  bool finish(std::string &error);

  /// Assembly (ELF directives) defining every symbol from the data file: in
  /// .rodata, local to the object, or, with `hiddenGlobal`, global with
  /// hidden visibility, for other objects of the same link (the modules of
  /// the variants reach them as hidden declarations). Call after finish().
  std::string definitions(bool hiddenGlobal) const;

  const std::string &getDataPath() const { return dataPath; }

private:
  struct Symbol {
    std::string name;
    uint64_t offset;
    uint64_t size;
  };
  std::string symbolPrefix, dataPath;
  std::unique_ptr<llvm::raw_fd_ostream> data;
  /// Content hash (BLAKE3, with the size) -> index in `symbols`.
  llvm::StringMap<size_t> byContent;
  std::vector<Symbol> symbols;
  uint64_t offset = 0, added = 0, maxAlignment = 64;
};

/// `text` as a GNU assembler string literal (quotes and backslashes escaped,
/// control bytes as octal escapes), for module-level assembly.
std::string asmString(llvm::StringRef text);

} // namespace kiln

#endif // KILN_CODEGEN_WEIGHTPOOL_H
