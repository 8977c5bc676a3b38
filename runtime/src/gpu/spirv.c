/*===- runtime/src/gpu/spirv.c - What the runtime reads from SPIR-V --------===*
 *
 * Just enough of the SPIR-V binary format to refuse a damaged module before a
 * driver sees it, to find a kernel's entry point and workgroup size, and to
 * know which optional device features its capabilities need.
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>
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

/* Opcodes the write analysis knows. */
enum {
  KILN_OP_NAME = 5,
  KILN_OP_MEMBER_NAME = 6,
  KILN_OP_VARIABLE = 59,
  KILN_OP_LOAD = 61,
  KILN_OP_STORE = 62,
  KILN_OP_COPY_MEMORY = 63,
  KILN_OP_COPY_MEMORY_SIZED = 64,
  KILN_OP_ACCESS_CHAIN = 65,
  KILN_OP_IN_BOUNDS_ACCESS_CHAIN = 66,
  KILN_OP_PTR_ACCESS_CHAIN = 67,
  KILN_OP_ARRAY_LENGTH = 68,
  KILN_OP_IN_BOUNDS_PTR_ACCESS_CHAIN = 70,
  KILN_OP_DECORATE = 71,
  KILN_OP_MEMBER_DECORATE = 72,
  KILN_OP_COPY_OBJECT = 83,
  KILN_OP_ATOMIC_LOAD = 227,
};
#define KILN_DECORATION_BINDING 33u
#define KILN_DECORATION_DESCRIPTOR_SET 34u
#define KILN_STORAGE_CLASS_UNIFORM 2u
#define KILN_STORAGE_CLASS_STORAGE_BUFFER 12u

uint64_t kiln_spirv_written_bindings(const void *data, uint64_t size) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t n = size / 4;
  if (n < 5)
    return ~UINT64_C(0);
  uint32_t bound = kiln_word(p, 3);
  /* binding[id]: 1 + the binding of a set-0 decoration on id; set[id]: 1 +
   * its descriptor set; root[id]: 1 + the binding of the set-0 storage
   * buffer a pointer id points into. */
  uint32_t *binding = (uint32_t *)calloc(bound ? bound : 1, sizeof(uint32_t));
  uint32_t *set = (uint32_t *)calloc(bound ? bound : 1, sizeof(uint32_t));
  uint32_t *root = (uint32_t *)calloc(bound ? bound : 1, sizeof(uint32_t));
  uint64_t written = 0;
  if (!binding || !set || !root) {
    written = ~UINT64_C(0);
    goto done;
  }
#define KILN_ROOT(id) ((id) < bound ? root[id] : 0)
#define KILN_MARK(id)                                                          \
  do {                                                                         \
    uint32_t r_ = KILN_ROOT(id);                                               \
    if (r_)                                                                    \
      written |= r_ - 1 < 63 ? UINT64_C(1) << (r_ - 1) : UINT64_C(1) << 63;    \
  } while (0)
  for (uint64_t i = 5; i < n;) {
    uint32_t first = kiln_word(p, i);
    uint32_t count = first >> 16, op = first & 0xffffu;
    if (count == 0 || count > n - i) {
      written = ~UINT64_C(0);
      goto done;
    }
#define W(k) (k < count ? kiln_word(p, i + k) : 0)
    switch (op) {
    case KILN_OP_DECORATE:
      if (W(1) < bound && count >= 4 && W(2) == KILN_DECORATION_BINDING)
        binding[W(1)] = W(3) + 1;
      if (W(1) < bound && count >= 4 && W(2) == KILN_DECORATION_DESCRIPTOR_SET)
        set[W(1)] = W(3) + 1;
      break;
    case KILN_OP_VARIABLE:
      if (count >= 4 && W(2) < bound &&
          (W(3) == KILN_STORAGE_CLASS_STORAGE_BUFFER ||
           W(3) == KILN_STORAGE_CLASS_UNIFORM)) {
        if (!binding[W(2)] || !set[W(2)]) {
          /* Decorated some other way (OpGroupDecorate): no knowing. */
          written = ~UINT64_C(0);
          goto done;
        }
        if (set[W(2)] == 1)
          root[W(2)] = binding[W(2)];
      }
      break;
    case KILN_OP_ACCESS_CHAIN:
    case KILN_OP_IN_BOUNDS_ACCESS_CHAIN:
    case KILN_OP_PTR_ACCESS_CHAIN:
    case KILN_OP_IN_BOUNDS_PTR_ACCESS_CHAIN:
    case KILN_OP_COPY_OBJECT:
      /* A pointer into the same buffer (indices are not pointers). */
      if (count >= 4 && W(2) < bound)
        root[W(2)] = KILN_ROOT(W(3));
      break;
    case KILN_OP_LOAD:
    case KILN_OP_ARRAY_LENGTH:
    case KILN_OP_ATOMIC_LOAD:
    case KILN_OP_NAME:
    case KILN_OP_MEMBER_NAME:
    case 73: /* OpDecorationGroup */
    case KILN_OP_MEMBER_DECORATE:
    case KILN_OP_ENTRY_POINT:
    case KILN_OP_EXECUTION_MODE:
      break; /* reads, or names */
    case KILN_OP_STORE:
    case KILN_OP_COPY_MEMORY:
    case KILN_OP_COPY_MEMORY_SIZED:
      KILN_MARK(W(1));
      for (uint32_t k = 2; k < count; ++k) /* a pointer stored elsewhere */
        KILN_MARK(W(k));
      break;
    default:
      /* Anything else that names a buffer pointer (atomics, function
       * calls, OpPhi, OpSelect, extended instructions) may write through
       * it. Literals that happen to equal such an id only cost a barrier. */
      for (uint32_t k = 1; k < count; ++k)
        KILN_MARK(W(k));
      break;
    }
#undef W
    i += count;
  }
#undef KILN_MARK
#undef KILN_ROOT
done:
  free(binding);
  free(set);
  free(root);
  return written;
}
