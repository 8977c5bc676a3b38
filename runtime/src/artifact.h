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
 *   bytes [L+16, L+24) the magic "KILNSUM2" ("KILNSUM1": the format before,
 *                      refused with a message to recompile)
 *
 * The hash (format 2; docs/reliability.md gives the same definition):
 * - The data is cut into segments of KILN_ARTIFACT_SEGMENT (1 MiB) bytes, the
 *   last one shorter; each is hashed on its own, so that several threads can
 *   check one file (artifact.c), each reading its own segments.
 * - A segment, in 64-byte stripes (the last one padded with zero bytes),
 *   16 stripes to a 1 KiB block: eight 64-bit accumulators, acc[l] starting
 *   at KILN_ARTIFACT_HASH_INIT + l. Stripe s of a block (s = 0..15) gives
 *   eight little-endian words w[l]; for each l, with x = w[l] ^ K[s + l]:
 *   acc[l ^ 1] += w[l] and acc[l] += (x mod 2^32) * (x >> 32), all mod 2^64.
 *   After each whole block: acc[l] = ((acc[l] ^ (acc[l] >> 47)) ^ K[16 + l])
 *   * 0x9e3779b1. K[0..23] are the first 24 outputs of splitmix64 from state
 *   0 (kiln_artifact_keys). The segment's digest: d = 0, then
 *   d = mix(d ^ acc[l]) for l = 0..7, mix being MurmurHash3's 64-bit
 *   finalizer (kiln_artifact_mix).
 * - The file: h = KILN_ARTIFACT_HASH_INIT, h = mix(h ^ d_j) for every
 *   segment j in order, and finally hash = mix(h ^ L).
 * This is XXH3's accumulate-and-scramble loop (with kiln's own keys), whose
 * 32x32->64-bit multiplies the compiler vectorizes with SSE2: the hash runs
 * faster than the file is copied from the page cache. Each word goes
 * whole into the neighbouring accumulator, so a change confined to one word
 * always changes the state, and the scramble is a bijection; the per-stripe
 * keys make reordered stripes, and the order-dependent fold reordered
 * segments, different. After the 512 bits of state are folded to 64, two
 * different files have the same hash only by a chance of about 2^-64 (format
 * 1, FNV-1a, missed any two flips of a word's top bit).
 *
 * Header-only so the compiler (C++) writes exactly what the runtime (C)
 * reads.
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_ARTIFACT_H
#define KILN_RUNTIME_ARTIFACT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define KILN_ARTIFACT_MAGIC "KILNSUM2"
#define KILN_ARTIFACT_MAGIC_V1 "KILNSUM1"
#define KILN_ARTIFACT_TRAILER_SIZE 24
#define KILN_ARTIFACT_SEGMENT (UINT64_C(1) << 20)
#define KILN_ARTIFACT_STRIPE 64
#define KILN_ARTIFACT_BLOCK 1024 /* 16 stripes */
#define KILN_ARTIFACT_HASH_INIT UINT64_C(0xcbf29ce484222325)

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

static inline uint64_t kiln_artifact_word(const unsigned char *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t w;
  memcpy(&w, p, 8);
  return w;
#else
  return kiln_artifact_load_le64(p);
#endif
}

/* MurmurHash3's 64-bit finalizer: a bijection in which every input bit
 * affects every output bit. */
static inline uint64_t kiln_artifact_mix(uint64_t x) {
  x ^= x >> 33;
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  x *= UINT64_C(0xc4ceb9fe1a85ec53);
  x ^= x >> 33;
  return x;
}

/* K[0..23]: splitmix64's first 24 outputs from state 0. */
static const uint64_t kiln_artifact_keys[24] = {
    UINT64_C(0xe220a8397b1dcdaf), UINT64_C(0x6e789e6aa1b965f4),
    UINT64_C(0x06c45d188009454f), UINT64_C(0xf88bb8a8724c81ec),
    UINT64_C(0x1b39896a51a8749b), UINT64_C(0x53cb9f0c747ea2ea),
    UINT64_C(0x2c829abe1f4532e1), UINT64_C(0xc584133ac916ab3c),
    UINT64_C(0x3ee5789041c98ac3), UINT64_C(0xf3b8488c368cb0a6),
    UINT64_C(0x657eecdd3cb13d09), UINT64_C(0xc2d326e0055bdef6),
    UINT64_C(0x8621a03fe0bbdb7b), UINT64_C(0x8e1f7555983aa92f),
    UINT64_C(0xb54e0f1600cc4d19), UINT64_C(0x84bb3f97971d80ab),
    UINT64_C(0x7d29825c75521255), UINT64_C(0xc3cf17102b7f7f86),
    UINT64_C(0x3466e9a083914f64), UINT64_C(0xd81a8d2b5a4485ac),
    UINT64_C(0xdb01602b100b9ed7), UINT64_C(0xa9038a921825f10d),
    UINT64_C(0xedf5f1d90dca2f6a), UINT64_C(0x54496ad67bd2634c),
};

/* One segment being hashed. */
typedef struct kiln_artifact_segment_state {
  uint64_t acc[8];
} kiln_artifact_segment_state;

static inline void
kiln_artifact_segment_init(kiln_artifact_segment_state *s) {
  for (int l = 0; l < 8; ++l)
    s->acc[l] = KILN_ARTIFACT_HASH_INIT + (uint64_t)l;
}

/* Inlined into the block loop whole, lanes side by side, so that the
 * compiler vectorizes across the eight accumulators (two per SSE2 register).
 */
#if defined(__GNUC__)
#define KILN_ARTIFACT_ALWAYS_INLINE __attribute__((always_inline))
#else
#define KILN_ARTIFACT_ALWAYS_INLINE
#endif
static inline KILN_ARTIFACT_ALWAYS_INLINE void
kiln_artifact_stripe(uint64_t *acc, const unsigned char *p,
                     const uint64_t *key) {
  for (int l = 0; l < 8; ++l) {
    uint64_t w = kiln_artifact_word(p + 8 * l);
    uint64_t x = w ^ key[l];
    acc[l ^ 1] += w;
    acc[l] += (x & UINT64_C(0xffffffff)) * (x >> 32);
  }
}

/* Continues a segment over `size` bytes. Every call but a segment's last
 * must pass a multiple of KILN_ARTIFACT_BLOCK bytes. */
static inline void
kiln_artifact_segment_update(kiln_artifact_segment_state *s, const void *data,
                             size_t size) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t acc[8];
  memcpy(acc, s->acc, sizeof(acc));
  size_t blocks = size / KILN_ARTIFACT_BLOCK;
  for (size_t b = 0; b < blocks; ++b, p += KILN_ARTIFACT_BLOCK) {
    for (int st = 0; st < 16; ++st)
      kiln_artifact_stripe(acc, p + KILN_ARTIFACT_STRIPE * st,
                           kiln_artifact_keys + st);
    for (int l = 0; l < 8; ++l) {
      uint64_t a = acc[l];
      a = (a ^ (a >> 47)) ^ kiln_artifact_keys[16 + l];
      acc[l] = a * UINT64_C(0x9e3779b1);
    }
  }
  /* The segment's last, partial block: whole stripes, then one padded. */
  size_t rest = size % KILN_ARTIFACT_BLOCK;
  int st = 0;
  for (; rest >= KILN_ARTIFACT_STRIPE; rest -= KILN_ARTIFACT_STRIPE, ++st,
                                       p += KILN_ARTIFACT_STRIPE)
    kiln_artifact_stripe(acc, p, kiln_artifact_keys + st);
  if (rest) {
    unsigned char tail[KILN_ARTIFACT_STRIPE] = {0};
    memcpy(tail, p, rest);
    kiln_artifact_stripe(acc, tail, kiln_artifact_keys + st);
  }
  memcpy(s->acc, acc, sizeof(acc));
}

static inline uint64_t
kiln_artifact_segment_digest(const kiln_artifact_segment_state *s) {
  uint64_t d = 0;
  for (int l = 0; l < 8; ++l)
    d = kiln_artifact_mix(d ^ s->acc[l]);
  return d;
}

/* The digest of one whole segment (at most KILN_ARTIFACT_SEGMENT bytes). */
static inline uint64_t kiln_artifact_segment_hash(const void *data,
                                                  size_t size) {
  kiln_artifact_segment_state s;
  kiln_artifact_segment_init(&s);
  kiln_artifact_segment_update(&s, data, size);
  return kiln_artifact_segment_digest(&s);
}

/* The fold of the segments' digests, in order: start from
 * KILN_ARTIFACT_HASH_INIT, add each digest, finish with the length. */
static inline uint64_t kiln_artifact_fold(uint64_t h, uint64_t digest) {
  return kiln_artifact_mix(h ^ digest);
}

static inline uint64_t kiln_artifact_finish(uint64_t h, uint64_t length) {
  return kiln_artifact_mix(h ^ length);
}

/* The hash of `size` bytes in memory, in one call. */
static inline uint64_t kiln_artifact_hash(const void *data, size_t size) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t h = KILN_ARTIFACT_HASH_INIT;
  for (size_t at = 0; at < size; at += KILN_ARTIFACT_SEGMENT) {
    size_t n = size - at < KILN_ARTIFACT_SEGMENT
                   ? size - at
                   : (size_t)KILN_ARTIFACT_SEGMENT;
    h = kiln_artifact_fold(h, kiln_artifact_segment_hash(p + at, n));
  }
  return kiln_artifact_finish(h, size);
}

#endif /* KILN_RUNTIME_ARTIFACT_H */
