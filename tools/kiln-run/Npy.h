//===- Npy.h - Reading .npy files for kiln-run ------------------*- C++ -*-===//
//
// C++17 and the kiln runtime only (kiln-run must not link LLVM).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_NPY_H
#define KILN_TOOLS_KILN_RUN_NPY_H

#include "kiln/runtime.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln_run {

/// A malformed or unreadable .npy file; the message names the file.
struct NpyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct NpyArray {
  kiln_dtype dtype = KILN_DTYPE_UNDEFINED;
  std::vector<int64_t> shape;
  std::vector<unsigned char> data;
};

/// numpy's type code of `dtype` without the byte order ("f4", "b1").
std::string npyCode(kiln_dtype dtype);

/// One of the 8-bit float formats (numpy code V1: the model says which).
bool isFloat8(kiln_dtype dtype);

/// The dtypes numpy saves as V1 (ml_dtypes' float8, float8_e8m0fnu,
/// float4_e2m1fn, int4, uint4, int2, uint2: one element per byte): the
/// model's dtype says which.
bool isVoidByte(kiln_dtype dtype);

/// Parses a whole .npy file held in memory (`path` only names it in errors).
NpyArray parseNpy(const char *data, size_t size, const std::string &path);

/// Reads and parses the regular file at `path`.
NpyArray readNpyFile(const std::string &path);

} // namespace kiln_run

#endif // KILN_TOOLS_KILN_RUN_NPY_H
