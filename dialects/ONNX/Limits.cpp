//===- Limits.cpp - What kiln accepts from a model ------------------------===//

#include "dialects/ONNX/Limits.h"

#include "llvm/Support/MathExtras.h"

namespace kiln {

namespace {
// Set once by the driver before it compiles (like a cl::opt), read by the
// passes; kiln-opt and the unit tests keep the defaults.
CompileLimits &limitsStorage() {
  static CompileLimits limits;
  return limits;
}
} // namespace

const CompileLimits &getCompileLimits() { return limitsStorage(); }

void setCompileLimits(const CompileLimits &limits) { limitsStorage() = limits; }

std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (llvm::MulOverflow(a, b, r))
    return std::nullopt;
  return r;
}

std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (llvm::AddOverflow(a, b, r))
    return std::nullopt;
  return r;
}

std::optional<int64_t> checkedSub(int64_t a, int64_t b) {
  int64_t r;
  if (llvm::SubOverflow(a, b, r))
    return std::nullopt;
  return r;
}

std::optional<int64_t> getCheckedExtent(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    std::optional<int64_t> next = checkedMul(n, d == 0 ? 1 : d);
    if (!next)
      return std::nullopt;
    n = *next;
  }
  return n;
}

std::optional<int64_t> getCheckedBytes(int64_t elements, unsigned bitWidth) {
  return checkedMul(elements, (static_cast<int64_t>(bitWidth) + 7) / 8);
}

} // namespace kiln
