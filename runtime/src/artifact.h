/*===- runtime/src/artifact.h - The checksum trailer of a model .so --------===*
 *
 * `kiln compile --emit so` appends a 24-byte trailer to the linked library,
 * and kiln_model_open checks it with plain file reads before dlopen sees the
 * file, so a truncated or damaged artifact is an error, not a crash in the
 * dynamic loader. The trailer catches damage, not malice: anyone who can
 * change the file can recompute it (a model is native code; open only
 * artifacts you trust). The ELF loader ignores bytes after the sections.
 *
 *   bytes [0, L)       the library as linked
 *   bytes [L, L+8)     L, little-endian uint64
 *   bytes [L+8, L+16)  kiln_artifact_hash of bytes [0, L), little-endian
 *   bytes [L+16, L+24) the magic "KILNSUM1"
 *
 * The hash is FNV-1a over 64-bit words: h = 0xcbf29ce484222325; for each
 * little-endian 8-byte word w of the data, h = (h ^ w) * 0x100000001b3; then
 * each of the last L % 8 bytes b, h = (h ^ b) * 0x100000001b3; finally
 * h ^= L. Each step is a bijection of h, so any change confined to one word
 * always changes the result. Header-only so the compiler (C++) writes
 * exactly what the runtime (C) reads.
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_ARTIFACT_H
#define KILN_RUNTIME_ARTIFACT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define KILN_ARTIFACT_MAGIC "KILNSUM1"
#define KILN_ARTIFACT_TRAILER_SIZE 24
#define KILN_ARTIFACT_HASH_INIT UINT64_C(0xcbf29ce484222325)
#define KILN_ARTIFACT_HASH_PRIME UINT64_C(0x100000001b3)

static inline uint64_t kiln_artifact_load_le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

static inline void kiln_artifact_store_le64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = (unsigned char)(v >> (8 * i));
}

/* Continues hash `h` over `size` bytes. Every call but the last must pass a
 * multiple of 8 bytes, so that words stay aligned to the data's start. */
static inline uint64_t kiln_artifact_hash_update(uint64_t h, const void *data,
                                                 size_t size) {
  const unsigned char *p = (const unsigned char *)data;
  size_t words = size / 8;
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    memcpy(&w, p + 8 * i, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = kiln_artifact_load_le64(p + 8 * i);
#endif
    h = (h ^ w) * KILN_ARTIFACT_HASH_PRIME;
  }
  for (size_t i = words * 8; i < size; ++i)
    h = (h ^ p[i]) * KILN_ARTIFACT_HASH_PRIME;
  return h;
}

static inline uint64_t kiln_artifact_hash_final(uint64_t h, uint64_t length) {
  return h ^ length;
}

#endif /* KILN_RUNTIME_ARTIFACT_H */
