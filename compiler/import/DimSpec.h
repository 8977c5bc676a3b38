//===- DimSpec.h - what `--shape` says about one input dim -------*- C++ -*-===//
#ifndef KILN_COMPILER_IMPORT_DIMSPEC_H
#define KILN_COMPILER_IMPORT_DIMSPEC_H

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <string>

namespace kiln {

/// One dim of `--shape NAME=...`: a fixed size (`8`: min == max) or the
/// bounds of a symbolic one (`1..8`; `1..` has no maximum: max is -1).
struct DimSpec {
  int64_t min = 0;
  int64_t max = 0;
  DimSpec() = default;
  DimSpec(int64_t size) : min(size), max(size) {}
  DimSpec(int64_t min, int64_t max) : min(min), max(max) {}
  static DimSpec range(int64_t min, int64_t max) { return DimSpec(min, max); }
  bool isFixed() const { return min == max; }
  bool isBounded() const { return max >= 0; }
  /// "8", "1..64" or "1..".
  std::string str() const {
    if (isFixed())
      return std::to_string(min);
    return std::to_string(min) + ".." + (isBounded() ? std::to_string(max) : "");
  }
  bool operator==(const DimSpec &o) const {
    return min == o.min && max == o.max;
  }
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const DimSpec &d) {
  return os << d.str();
}

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_DIMSPEC_H
