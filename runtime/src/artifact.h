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
 * The hash is FNV-1a in four lanes over 64-bit words. With P = 0x100000001b3
 * and lane l starting at 0xcbf29ce484222325 + l: little-endian 8-byte word i
 * of the data (i < 4 * floor(L / 32)) goes into lane i % 4 as
 * lane = (lane ^ w) * P; the last L % 32 bytes go, one by one, into lane 0
 * the same way; then h = 0xcbf29ce484222325, h = (h ^ lane[l]) * P for
 * l = 0..3, and finally h ^= L. Every step is a bijection of the state, so a
 * change confined to one word always changes the result. Header-only so the
 * compiler (C++) writes exactly what the runtime (C) reads.
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

/* Four FNV-1a lanes over 64-bit words, so that four multiplies are in
 * flight at once (one lane is a chain of dependent multiplies). */
typedef struct kiln_artifact_hash_state {
  uint64_t lane[4];
} kiln_artifact_hash_state;

static inline void kiln_artifact_hash_init(kiln_artifact_hash_state *s) {
  for (int l = 0; l < 4; ++l)
    s->lane[l] = KILN_ARTIFACT_HASH_INIT + (uint64_t)l;
}

static inline uint64_t kiln_artifact_word(const unsigned char *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t w;
  memcpy(&w, p, 8);
  return w;
#else
  return kiln_artifact_load_le64(p);
#endif
}

/* Continues the hash over `size` bytes. Every call but the last must pass a
 * multiple of 32 bytes, so that words and lanes stay aligned to the data's
 * start. */
static inline void kiln_artifact_hash_update(kiln_artifact_hash_state *s,
                                             const void *data, size_t size) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t a = s->lane[0], b = s->lane[1], c = s->lane[2], d = s->lane[3];
  size_t blocks = size / 32;
  for (size_t i = 0; i < blocks; ++i, p += 32) {
    a = (a ^ kiln_artifact_word(p)) * KILN_ARTIFACT_HASH_PRIME;
    b = (b ^ kiln_artifact_word(p + 8)) * KILN_ARTIFACT_HASH_PRIME;
    c = (c ^ kiln_artifact_word(p + 16)) * KILN_ARTIFACT_HASH_PRIME;
    d = (d ^ kiln_artifact_word(p + 24)) * KILN_ARTIFACT_HASH_PRIME;
  }
  /* The tail (< 32 bytes, last call only) goes byte by byte into lane 0. */
  for (size_t i = blocks * 32; i < size; ++i, ++p)
    a = (a ^ *p) * KILN_ARTIFACT_HASH_PRIME;
  s->lane[0] = a, s->lane[1] = b, s->lane[2] = c, s->lane[3] = d;
}

static inline uint64_t
kiln_artifact_hash_final(const kiln_artifact_hash_state *s, uint64_t length) {
  uint64_t h = KILN_ARTIFACT_HASH_INIT;
  for (int l = 0; l < 4; ++l)
    h = (h ^ s->lane[l]) * KILN_ARTIFACT_HASH_PRIME;
  return h ^ length;
}

/* The hash of `size` bytes in one call. */
static inline uint64_t kiln_artifact_hash(const void *data, size_t size) {
  kiln_artifact_hash_state s;
  kiln_artifact_hash_init(&s);
  kiln_artifact_hash_update(&s, data, size);
  return kiln_artifact_hash_final(&s, size);
}

#endif /* KILN_RUNTIME_ARTIFACT_H */
