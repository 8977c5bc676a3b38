//===- npy_fuzzer.cpp - libFuzzer target: kiln-run's .npy reader ----------===//
//
// Any bytes must parse or throw NpyError; a crash, a sanitizer report or an
// array whose data does not match its shape and dtype is a bug.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln-run/Npy.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    kiln_run::NpyArray array = kiln_run::parseNpy(
        reinterpret_cast<const char *>(data), size, "fuzz.npy");
    uint64_t count = 1;
    for (int64_t d : array.shape) {
      if (d < 0)
        abort();
      count *= static_cast<uint64_t>(d);
    }
    if (count * kiln_dtype_size(array.dtype) != array.data.size())
      abort();
  } catch (const kiln_run::NpyError &) {
  }
  return 0;
}
