/*===- runtime/src/gpu/spirv.c - What the runtime reads from SPIR-V --------===*
 *
 * Just enough of the SPIR-V binary format to refuse a damaged module before a
 * driver sees it, to find a kernel's entry point and workgroup size, and to
 * know which optional device features its capabilities need.
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <string.h>

#include "gpu/gpu.h"

#define KILN_SPIRV_MAGIC 0x07230203u
#define KILN_OP_ENTRY_POINT 15u
#define KILN_OP_EXECUTION_MODE 16u
#define KILN_OP_CAPABILITY 17u
#define KILN_EXECUTION_MODEL_GLCOMPUTE 5u
#define KILN_EXECUTION_MODE_LOCAL_SIZE 17u

/* SPIR-V capability numbers, in KILN_SPIRV_* bit order. */
static const struct {
  uint32_t capability;
  const char *capability_name;
  const char *feature;
} kiln_spirv_features[KILN_SPIRV_NUM_FEATURES] = {
    {39, "Int8", "shaderInt8"},
    {22, "Int16", "shaderInt16"},
    {11, "Int64", "shaderInt64"},
    {9, "Float16", "shaderFloat16"},
    {10, "Float64", "shaderFloat64"},
    {4448, "StorageBuffer8BitAccess", "storageBuffer8BitAccess"},
    {4449, "UniformAndStorageBuffer8BitAccess",
     "uniformAndStorageBuffer8BitAccess"},
    {4450, "StoragePushConstant8", "storagePushConstant8"},
    {4433, "StorageBuffer16BitAccess", "storageBuffer16BitAccess"},
    {4434, "UniformAndStorageBuffer16BitAccess",
     "uniformAndStorageBuffer16BitAccess"},
    {4435, "StoragePushConstant16", "storagePushConstant16"},
};

const char *kiln_spirv_feature_name(unsigned bit) {
  return bit < KILN_SPIRV_NUM_FEATURES ? kiln_spirv_features[bit].feature : "?";
}

const char *kiln_spirv_capability_name(unsigned bit) {
  return bit < KILN_SPIRV_NUM_FEATURES
             ? kiln_spirv_features[bit].capability_name
             : "?";
}

/* The module's words (little-endian, as model_abi.h says), read without
 * assuming the data is 4-byte aligned. */
static uint32_t kiln_word(const unsigned char *p, uint64_t i) {
  const unsigned char *w = p + 4 * i;
  return (uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 |
         (uint32_t)w[3] << 24;
}

/* Whether the literal string of `count` words from word `i` ends in NUL. */
static int kiln_string_terminated(const unsigned char *p, uint64_t i,
                                  uint64_t count) {
  return count > 0 && memchr(p + 4 * i, 0, 4 * count) != NULL;
}

int kiln_spirv_scan(const void *data, uint64_t size, uint32_t *out_features,
                    char *error, size_t error_size) {
  const unsigned char *p = (const unsigned char *)data;
  if (size % 4 != 0 || size < 20) {
    snprintf(error, error_size,
             "its size, %llu bytes, is not a SPIR-V module (a multiple of 4, "
             "at least 20)",
             (unsigned long long)size);
    return 0;
  }
  uint64_t n = size / 4;
  if (kiln_word(p, 0) != KILN_SPIRV_MAGIC) {
    snprintf(error, error_size,
             "it does not start with the SPIR-V magic number 0x07230203 "
             "(little-endian) but 0x%08x",
             (unsigned)kiln_word(p, 0));
    return 0;
  }
  uint32_t features = 0;
  for (uint64_t i = 5; i < n;) {
    uint32_t first = kiln_word(p, i);
    uint32_t count = first >> 16, opcode = first & 0xffffu;
    if (count == 0 || count > n - i) {
      snprintf(error, error_size,
               "the instruction at word %llu (opcode %u) has word count %u, "
               "past the module's end",
               (unsigned long long)i, (unsigned)opcode, (unsigned)count);
      return 0;
    }
    if (opcode == KILN_OP_CAPABILITY && count >= 2) {
      uint32_t capability = kiln_word(p, i + 1);
      for (unsigned b = 0; b < KILN_SPIRV_NUM_FEATURES; ++b)
        if (kiln_spirv_features[b].capability == capability)
          features |= 1u << b;
    } else if (opcode == KILN_OP_ENTRY_POINT &&
               (count < 4 || !kiln_string_terminated(p, i + 3, count - 3))) {
      snprintf(error, error_size,
               "the OpEntryPoint at word %llu has no terminated name",
               (unsigned long long)i);
      return 0;
    }
    i += count;
  }
  *out_features = features;
  return 1;
}

void kiln_spirv_find_entries(const void *data, uint64_t size,
                             uint32_t num_names, const char *const *names,
                             kiln_spirv_entry *out_entries) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t n = size / 4;
  memset(out_entries, 0, num_names * sizeof(*out_entries));
  for (uint64_t i = 5; i < n;) {
    uint32_t first = kiln_word(p, i);
    uint32_t count = first >> 16, opcode = first & 0xffffu;
    if (count == 0 || count > n - i)
      return;
    if (opcode == KILN_OP_ENTRY_POINT && count >= 4 &&
        kiln_word(p, i + 1) == KILN_EXECUTION_MODEL_GLCOMPUTE) {
      const char *s = (const char *)(p + 4 * (i + 3));
      size_t room = 4 * (size_t)(count - 3);
      for (uint32_t k = 0; k < num_names; ++k) {
        size_t len = strlen(names[k]);
        if (!out_entries[k].found && len < room &&
            memcmp(s, names[k], len) == 0 && s[len] == '\0') {
          out_entries[k].found = 1;
          out_entries[k].id = kiln_word(p, i + 2);
        }
      }
    } else if (opcode == KILN_OP_EXECUTION_MODE && count >= 6 &&
               kiln_word(p, i + 2) == KILN_EXECUTION_MODE_LOCAL_SIZE) {
      uint32_t id = kiln_word(p, i + 1);
      for (uint32_t k = 0; k < num_names; ++k) {
        if (!out_entries[k].found || out_entries[k].id != id)
          continue;
        out_entries[k].has_local_size = 1;
        for (int d = 0; d < 3; ++d)
          out_entries[k].local_size[d] = kiln_word(p, i + 3 + d);
      }
    }
    i += count;
  }
}
