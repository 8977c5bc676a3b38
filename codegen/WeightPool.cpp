//===- WeightPool.cpp - weight bytes stored once, by content --------------===//

#include "codegen/WeightPool.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace kiln {

std::string asmString(llvm::StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c < 0x20 || c == 0x7f) {
      out += {'\\', char('0' + (c >> 6)), char('0' + ((c >> 3) & 7)),
              char('0' + (c & 7))};
    } else {
      out += c;
    }
  }
  return out + "\"";
}

WeightPool::WeightPool(std::string symbolPrefix, std::string dataPath)
    : symbolPrefix(std::move(symbolPrefix)), dataPath(std::move(dataPath)) {}

WeightPool::~WeightPool() = default;

std::optional<std::string> WeightPool::add(llvm::ArrayRef<char> bytes,
                                           uint64_t alignment,
                                           std::string &error) {
  added += bytes.size();
  // 256 bits of BLAKE3 and the size: two different constants never meet.
  llvm::BLAKE3Result<32> hash = llvm::BLAKE3::hash<32>(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
  std::string key = llvm::toHex(hash) + ":" + std::to_string(bytes.size());
  auto found = byContent.find(key);
  if (found != byContent.end() &&
      symbols[found->second].offset % alignment == 0)
    return symbols[found->second].name;

  if (!data) {
    std::error_code ec;
    data = std::make_unique<llvm::raw_fd_ostream>(dataPath, ec,
                                                  llvm::sys::fs::OF_None);
    if (ec) {
      error = "cannot write '" + dataPath + "': " + ec.message();
      return std::nullopt;
    }
  }
  maxAlignment = std::max(maxAlignment, alignment);
  static const char zeros[256] = {};
  for (uint64_t pad = llvm::alignTo(offset, alignment) - offset; pad;) {
    uint64_t chunk = std::min<uint64_t>(pad, sizeof(zeros));
    data->write(zeros, chunk);
    pad -= chunk;
    offset += chunk;
  }
  std::string name =
      symbolPrefix + "_kw" + std::to_string(symbols.size());
  symbols.push_back({name, offset, bytes.size()});
  byContent[key] = symbols.size() - 1;
  data->write(bytes.data(), bytes.size());
  offset += bytes.size();
  return name;
}

bool WeightPool::finish(std::string &error) {
  if (!data)
    return true;
  data->close();
  if (data->has_error()) {
    error = "cannot write '" + dataPath + "': " + data->error().message();
    data->clear_error();
    return false;
  }
  return true;
}

std::string WeightPool::definitions(bool hiddenGlobal) const {
  if (symbols.empty())
    return "";
  // One label over the whole file and one `.incbin` of it: the assembler
  // keeps every file it includes in memory, so an `.incbin` per constant
  // would hold the file once per constant. Each constant is a symbol at its
  // (aligned) offset from the label.
  std::string base = symbolPrefix + "_kweights";
  std::string assembly;
  llvm::raw_string_ostream as(assembly);
  for (const Symbol &symbol : symbols) {
    if (hiddenGlobal)
      as << "\t.globl\t" << symbol.name << "\n\t.hidden\t" << symbol.name
         << "\n";
    as << "\t.type\t" << symbol.name << ",%object\n"
       << "\t.set\t" << symbol.name << ", " << base << " + " << symbol.offset
       << "\n"
       << "\t.size\t" << symbol.name << ", " << symbol.size << "\n";
  }
  as << "\t.section\t.rodata,\"a\",%progbits\n"
     << "\t.p2align\t" << llvm::Log2_64(maxAlignment) << "\n"
     << base << ":\n\t.incbin\t" << asmString(dataPath) << "\n";
  return assembly;
}

} // namespace kiln
