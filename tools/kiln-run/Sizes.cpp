//===- Sizes.cpp - `kiln inspect --sizes` ---------------------------------===//
//
// Reads the artifact's ELF section headers and symbol table (kiln keeps the
// local symbols: the outlined loop bodies `<name>_main_ctx_parallel_N`, the
// constants `__constant_*` and `<name>_main_kw<N>`) and the `.kiln.weights`
// table of who reads each constant (codegen/CPU/ExternalWeights.cpp) with
// plain reads; no LLVM in kiln-run.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln-run/Sizes.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

namespace kiln_run {
namespace {

struct Symbol {
  std::string name;
  uint64_t value = 0, size = 0;
  unsigned type = 0;
  uint16_t section = 0;
};

class ElfFile {
public:
  explicit ElfFile(const std::string &path)
      : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~ElfFile() {
    if (fd >= 0)
      ::close(fd);
  }

  bool read(uint64_t offset, void *out, size_t size) const {
    return fd >= 0 && ::pread(fd, out, size, (off_t)offset) == (ssize_t)size;
  }

  /// False when the file is not a 64-bit little-endian ELF we can read.
  bool load() {
    Elf64_Ehdr header;
    if (!read(0, &header, sizeof(header)) ||
        std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
        header.e_ident[EI_CLASS] != ELFCLASS64 ||
        header.e_ident[EI_DATA] != ELFDATA2LSB ||
        header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0 ||
        header.e_shnum > 4096 || header.e_shstrndx >= header.e_shnum)
      return false;
    sections.resize(header.e_shnum);
    if (!read(header.e_shoff, sections.data(),
              sizeof(Elf64_Shdr) * sections.size()))
      return false;
    std::string names = readTable(sections[header.e_shstrndx]);
    for (const Elf64_Shdr &section : sections)
      sectionNames.push_back(section.sh_name < names.size()
                                 ? std::string(names.c_str() + section.sh_name)
                                 : std::string("?"));
    for (const Elf64_Shdr &section : sections) {
      if (section.sh_type != SHT_SYMTAB || section.sh_link >= sections.size() ||
          section.sh_entsize != sizeof(Elf64_Sym))
        continue;
      std::string strings = readTable(sections[section.sh_link]);
      std::vector<Elf64_Sym> raw(section.sh_size / sizeof(Elf64_Sym));
      if (raw.size() > (1u << 24) ||
          !read(section.sh_offset, raw.data(), raw.size() * sizeof(Elf64_Sym)))
        return true; // sections only
      for (const Elf64_Sym &sym : raw) {
        if (sym.st_name >= strings.size())
          continue;
        symbols.push_back({std::string(strings.c_str() + sym.st_name),
                           sym.st_value, sym.st_size,
                           (unsigned)ELF64_ST_TYPE(sym.st_info), sym.st_shndx});
      }
    }
    return true;
  }

  std::vector<Elf64_Shdr> sections;
  std::vector<std::string> sectionNames;
  std::vector<Symbol> symbols;

  /// The bytes of the section named `name` (at most 64 MiB), empty if none.
  std::string sectionText(const char *name) const {
    for (size_t i = 0; i < sections.size(); ++i)
      if (sectionNames[i] == name && sections[i].sh_type != SHT_NOBITS) {
        std::string text = readTable(sections[i]);
        if (!text.empty())
          text.pop_back(); // readTable's terminator
        return text;
      }
    return std::string();
  }

private:
  std::string readTable(const Elf64_Shdr &section) const {
    if (section.sh_size > (64u << 20))
      return std::string();
    std::string text(section.sh_size, '\0');
    if (!read(section.sh_offset, text.data(), text.size()))
      return std::string();
    text.push_back('\0');
    return text;
  }

  int fd;
};

/// The op family of a `.kiln.weights` reader list or a kernel name, "w1, mm1
/// (MatMul), bias1 (Add)": the op type of its first node with one, Constant
/// nodes left out (their values are what is read, not what reads).
std::string familyOf(const std::string &text) {
  for (size_t open = text.find(" ("); open != std::string::npos;
       open = text.find(" (", open + 2)) {
    size_t close = text.find(')', open);
    if (close == std::string::npos)
      break;
    std::string type = text.substr(open + 2, close - open - 2);
    if (type != "Constant")
      return type;
  }
  return "(unknown)";
}

/// `.kiln.weights` (codegen/CPU/ExternalWeights.cpp): "<symbol>\t<readers>"
/// lines -> readers by symbol.
std::map<std::string, std::string> weightReaders(const std::string &table) {
  std::map<std::string, std::string> readers;
  size_t at = 0;
  while (at < table.size()) {
    size_t end = table.find('\n', at);
    if (end == std::string::npos)
      end = table.size();
    std::string line = table.substr(at, end - at);
    size_t tab = line.find('\t');
    if (tab != std::string::npos)
      readers[line.substr(0, tab)] = line.substr(tab + 1);
    at = end + 1;
  }
  return readers;
}

struct FamilyFigures {
  uint64_t code = 0, weights = 0;
  unsigned kernels = 0, constants = 0;
};

uint64_t scratchBytes(const kiln_model_desc *desc) {
  for (uint32_t m = 0; m < desc->num_memory_needs; ++m)
    if (desc->memory_needs[m].kind == KILN_MEMORY_HOST_SCRATCH)
      return desc->memory_needs[m].size;
  return 0;
}

} // namespace

void printSizes(const std::string &path, const kiln_model_desc *desc) {
  std::printf("sizes:\n");
  std::printf("  scratch: %" PRIu64 " bytes per run context\n",
              scratchBytes(desc));
  ElfFile file(path);
  if (!file.load()) {
    std::printf("  (not an ELF file: no section or code sizes)\n");
    return;
  }
  uint64_t code = 0, fileBytes = 0;
  for (size_t i = 0; i < file.sections.size(); ++i) {
    const Elf64_Shdr &s = file.sections[i];
    if (s.sh_flags & SHF_EXECINSTR)
      code += s.sh_size;
    if (s.sh_type != SHT_NOBITS)
      fileBytes = std::max<uint64_t>(fileBytes, s.sh_offset + s.sh_size);
  }
  // Weights: the constants kiln emits into read-only data: small ones as
  // `__constant_*` globals, large ones as `<prefix>_main_kw<N>` slices of the
  // weights blob (codegen/CPU/ExternalWeights.cpp).
  auto isExternalWeight = [](const std::string &name) {
    size_t at = name.rfind("_kw");
    if (at == std::string::npos || at + 3 == name.size())
      return false;
    for (size_t i = at + 3; i < name.size(); ++i)
      if (name[i] < '0' || name[i] > '9')
        return false;
    return true;
  };
  uint64_t weights = 0;
  std::vector<const Symbol *> constants;
  for (const Symbol &sym : file.symbols)
    if (sym.type == STT_OBJECT && (sym.name.rfind("__constant", 0) == 0 ||
                                   isExternalWeight(sym.name))) {
      weights += sym.size;
      constants.push_back(&sym);
    }
  // Each constant under the op family of its first reader.
  std::map<std::string, std::string> readers =
      weightReaders(file.sectionText(".kiln.weights"));
  std::map<std::string, FamilyFigures> families;
  for (const Symbol *constant : constants) {
    auto it = readers.find(constant->name);
    FamilyFigures &f = families[it == readers.end() ? "(no readers recorded)"
                                                    : familyOf(it->second)];
    f.weights += constant->size;
    f.constants += 1;
  }
  std::printf("  code: %" PRIu64 " bytes (executable sections)\n", code);
  std::printf("  weights: %" PRIu64 " bytes in %zu constants\n", weights,
              constants.size());
  std::printf("  sections (bytes):\n");
  for (size_t i = 0; i < file.sections.size(); ++i) {
    const Elf64_Shdr &s = file.sections[i];
    if ((s.sh_flags & SHF_ALLOC) && s.sh_size > 0)
      std::printf("    %-16s %10" PRIu64 "%s\n", file.sectionNames[i].c_str(),
                  (uint64_t)s.sh_size,
                  s.sh_type == SHT_NOBITS ? " (not in the file)" : "");
  }

  // Kernels: the descriptor's body pointers, located in the file through the
  // descriptor's own symbol (its address in memory minus its file value). An
  // artifact of several CPU variants has one local `kiln_descriptor` per
  // variant: the one opened is that whose base puts the most body pointers
  // on functions.
  const kiln_executable_desc *host =
      desc->entry_executable < desc->num_executables
          ? &desc->executables[desc->entry_executable]
          : nullptr;
  std::map<uint64_t, const Symbol *> functions;
  std::map<std::string, uint64_t> functionSizes;
  for (const Symbol &sym : file.symbols)
    if (sym.type == STT_FUNC && sym.size) {
      functions[sym.value] = &sym;
      functionSizes[sym.name] = sym.size;
    }
  const Symbol *anchor = nullptr;
  if (host && host->format == KILN_EXECUTABLE_HOST && host->data) {
    const void *const *bodies = (const void *const *)host->data;
    size_t best = 0;
    for (const Symbol &sym : file.symbols) {
      if (sym.name != "kiln_descriptor" || sym.type != STT_OBJECT)
        continue;
      uintptr_t base = (uintptr_t)desc - sym.value;
      size_t found = 0;
      for (uint32_t k = 0; k < host->num_kernels; ++k)
        found += functions.count((uintptr_t)bodies[k] - base);
      if (!anchor || found > best)
        anchor = &sym, best = found;
    }
  }
  std::vector<std::pair<uint64_t, const char *>> kernels;
  if (anchor) {
    uintptr_t base = (uintptr_t)desc - anchor->value;
    const void *const *bodies = (const void *const *)host->data;
    uint64_t kernelBytes = 0;
    for (uint32_t k = 0; k < host->num_kernels; ++k) {
      auto it = functions.find((uintptr_t)bodies[k] - base);
      uint64_t size = it == functions.end() ? 0 : it->second->size;
      // Kernels merged by kiln-merge-kernels are thunks calling one shared
      // `<first>_merged` body: its code counts under the first of them.
      if (it != functions.end()) {
        auto merged = functionSizes.find(it->second->name + "_merged");
        if (merged != functionSizes.end())
          size += merged->second;
      }
      kernelBytes += size;
      kernels.emplace_back(size, host->kernel_names[k]);
    }
    // Largest first; kernels of one size in table order.
    std::sort(
        kernels.begin(), kernels.end(), [&](const auto &a, const auto &b) {
          return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
    std::printf("  kernels: %u parallel loops, %" PRIu64
                " bytes of code; the rest of the graph runs in the entry\n",
                host->num_kernels, kernelBytes);
    // Per op family: each kernel under the op type of its first node ("mm1
    // (MatMul), bias1 (Add)" counts as MatMul).
    for (const auto &[size, name] : kernels) {
      FamilyFigures &f = families[familyOf(name)];
      f.code += size;
      f.kernels += 1;
    }
  }
  if (!families.empty()) {
    std::vector<std::pair<std::string, FamilyFigures>> byFamily(
        families.begin(), families.end());
    // Most bytes first.
    std::sort(byFamily.begin(), byFamily.end(),
              [](const auto &a, const auto &b) {
                uint64_t x = a.second.code + a.second.weights,
                         y = b.second.code + b.second.weights;
                return x != y ? x > y : a.first < b.first;
              });
    std::printf("  by op family (kernel code under each kernel's first node, "
                "constants under their first reader):\n");
    std::printf("    %10s %12s %8s %10s  %s\n", "code", "weights", "kernels",
                "constants", "family");
    for (const auto &[family, f] : byFamily)
      std::printf("    %10" PRIu64 " %12" PRIu64 " %8u %10u  %s\n", f.code,
                  f.weights, f.kernels, f.constants, family.c_str());
  }
  if (anchor) {
    std::printf("  kernels by code size:\n");
    for (size_t k = 0; k < kernels.size() && k < 20; ++k)
      std::printf("    %10" PRIu64 "  %s\n", kernels[k].first,
                  kernels[k].second);
    if (kernels.size() > 20)
      std::printf("    ... %zu more\n", kernels.size() - 20);
  }
  for (const Symbol &sym : file.symbols)
    if (sym.type == STT_FUNC && sym.size && sym.name.size() > 8 &&
        sym.name.compare(sym.name.size() - 8, 8, "main_ctx") == 0)
      std::printf("  entry (sequential code): %" PRIu64 " bytes\n", sym.size);
  std::sort(constants.begin(), constants.end(),
            [](const Symbol *a, const Symbol *b) { return a->size > b->size; });
  if (!constants.empty()) {
    std::printf("  largest constants:\n");
    for (size_t c = 0; c < constants.size() && c < 5; ++c) {
      auto it = readers.find(constants[c]->name);
      std::printf("    %10" PRIu64 "  %s%s%s\n", constants[c]->size,
                  constants[c]->name.c_str(),
                  it == readers.end() ? "" : "  read by ",
                  it == readers.end() ? "" : it->second.c_str());
    }
  }
}

} // namespace kiln_run
