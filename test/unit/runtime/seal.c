/*===- test/unit/runtime/seal.c - Append kiln's checksum trailer -----------===*
 *
 * The fake models are linked by CMake, not by `kiln compile`, so this adds
 * the trailer kiln_model_open checks (runtime/src/artifact.h) after the
 * link, as compiler/Packaging.cpp does for real models.
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>

#include "artifact.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 2;
  }
  FILE *f = fopen(argv[1], "r+b");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  /* One segment at a time (artifact.h). */
  static unsigned char buf[KILN_ARTIFACT_SEGMENT];
  uint64_t length = 0, h = KILN_ARTIFACT_HASH_INIT;
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
    h = kiln_artifact_fold(h, kiln_artifact_segment_hash(buf, n));
    length += n;
    if (n < sizeof(buf))
      break;
  }
  unsigned char trailer[KILN_ARTIFACT_TRAILER_SIZE];
  kiln_artifact_store_le64(trailer, length);
  kiln_artifact_store_le64(trailer + 8, kiln_artifact_finish(h, length));
  memcpy(trailer + 16, KILN_ARTIFACT_MAGIC, 8);
  if (fseek(f, 0, SEEK_END) != 0 ||
      fwrite(trailer, 1, sizeof(trailer), f) != sizeof(trailer) ||
      fclose(f) != 0) {
    perror(argv[1]);
    return 1;
  }
  return 0;
}
