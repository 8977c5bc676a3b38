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
 * - A segment: eight 64-bit lanes, lane l starting at
 *   KILN_ARTIFACT_HASH_INIT + l. Each 64-byte stripe of the segment (the
 *   last one padded with zero bytes) gives eight little-endian words; word l
 *   goes into lane l as lane = rotl64(lane ^ w, 31) * K, with K =
 *   KILN_ARTIFACT_HASH_MUL (odd). The segment's digest: d = 0, then
 *   d = mix(d ^ lane[l]) for l = 0..7, where mix is MurmurHash3's 64-bit
 *   finalizer (kiln_artifact_mix).
 * - The file: h = KILN_ARTIFACT_HASH_INIT, h = mix(h ^ d_j) for every
 *   segment j in order, and finally hash = mix(h ^ L).
 * Every step is a bijection of the state it updates (xor, a multiply by an
 * odd constant, a rotation, mix), so a change confined to one 64-bit word
 * always changes its lane and its segment's state; after the 512 bits of
 * lanes are folded to 64, two files differ in the hash but for a chance of
 * about 2^-64. The rotation brings the high bits, which the multiply fills,
 * down before the next multiply, so flips of the same bit in two words do not cancel (they did
 * in format 1, FNV-1a, for the top bit). Lengths differ in the final step,
 * reordered segments in the order-dependent fold.
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
#define KILN_ARTIFACT_HASH_INIT UINT64_C(0xcbf29ce484222325)
#define KILN_ARTIFACT_HASH_MUL UINT64_C(0x9e3779b97f4a7c15)

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

/* One segment being hashed. */
typedef struct kiln_artifact_segment_state {
  uint64_t lane[8];
} kiln_artifact_segment_state;

static inline void
kiln_artifact_segment_init(kiln_artifact_segment_state *s) {
  for (int l = 0; l < 8; ++l)
    s->lane[l] = KILN_ARTIFACT_HASH_INIT + (uint64_t)l;
}

/* Continues a segment over `size` bytes. Every call but a segment's last
 * must pass a multiple of KILN_ARTIFACT_STRIPE bytes; the last one's partial
 * stripe is padded with zero bytes. Eight independent multiply chains, so
 * that several multiplies are in flight at once. */
static inline void
kiln_artifact_segment_update(kiln_artifact_segment_state *s, const void *data,
                             size_t size) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t lane[8];
  memcpy(lane, s->lane, sizeof(lane));
  const uint64_t K = KILN_ARTIFACT_HASH_MUL;
  size_t stripes = size / KILN_ARTIFACT_STRIPE;
  for (size_t i = 0; i < stripes; ++i, p += KILN_ARTIFACT_STRIPE)
    for (int l = 0; l < 8; ++l) {
      uint64_t x = lane[l] ^ kiln_artifact_word(p + 8 * l);
      lane[l] = ((x << 31) | (x >> 33)) * K;
    }
  size_t rest = size % KILN_ARTIFACT_STRIPE;
  if (rest) {
    unsigned char tail[KILN_ARTIFACT_STRIPE] = {0};
    memcpy(tail, p, rest);
    for (int l = 0; l < 8; ++l) {
      uint64_t x = lane[l] ^ kiln_artifact_word(tail + 8 * l);
      lane[l] = ((x << 31) | (x >> 33)) * K;
    }
  }
  memcpy(s->lane, lane, sizeof(lane));
}

static inline uint64_t
kiln_artifact_segment_digest(const kiln_artifact_segment_state *s) {
  uint64_t d = 0;
  for (int l = 0; l < 8; ++l)
    d = kiln_artifact_mix(d ^ s->lane[l]);
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
