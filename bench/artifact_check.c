/*===- bench/artifact_check.c - What kiln_model_open's checksum costs -----===*
 *
 * Writes a file of SIZE MB (pseudo-random bytes and kiln's checksum trailer,
 * runtime/src/artifact.h) and times the check kiln_model_open runs before
 * dlopen: the runtime's own kiln_check_artifact at 1, 2, 4, 8 threads and
 * "auto" (one per CPU, at most 8), beside format 1's single-threaded check
 * (1 MiB preads and four FNV-1a lanes, as it was) and a plain read of the
 * file (pread into a 128 KiB buffer, no hash), the floor of one thread.
 * The file stays in the page cache (read once before timing), as an artifact
 * opened again does. Prints the minimum and the median of REPS runs.
 *
 *   clang-22 -O2 -Iruntime/src -Iruntime/include bench/artifact_check.c \
 *     build/runtime/libkiln_runtime.a -lpthread -ldl -lm -o /tmp/artifact_check
 *   /tmp/artifact_check [SIZE_MB=420] [REPS=7] [DIR=/tmp]
 *
 * docs/reliability.md has its figures.
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "artifact.h"
#include "kiln/runtime.h"

kiln_status kiln_check_artifact(const char *path, int32_t max_threads);

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Format 1's loop as the runtime had it (FNV-1a in four lanes over 64-bit
 * words), kept out of line as it was in the runtime, over 1 MiB preads. */
__attribute__((noinline)) static void v1_update(uint64_t *lane,
                                                const unsigned char *p,
                                                size_t size) {
  const uint64_t P = 0x100000001b3ull;
  uint64_t a = lane[0], b = lane[1], c = lane[2], d = lane[3];
  for (size_t i = 0; i < size / 32; ++i, p += 32) {
    a = (a ^ kiln_artifact_word(p)) * P;
    b = (b ^ kiln_artifact_word(p + 8)) * P;
    c = (c ^ kiln_artifact_word(p + 16)) * P;
    d = (d ^ kiln_artifact_word(p + 24)) * P;
  }
  for (size_t i = size / 32 * 32; i < size; ++i, ++p)
    a = (a ^ *p) * P;
  lane[0] = a, lane[1] = b, lane[2] = c, lane[3] = d;
}

static uint64_t v1_check(const char *path, uint64_t length) {
  int fd = open(path, O_RDONLY);
  unsigned char *buf = malloc(1 << 20);
  uint64_t lane[4] = {0xcbf29ce484222325ull, 0xcbf29ce484222326ull,
                      0xcbf29ce484222327ull, 0xcbf29ce484222328ull};
  for (uint64_t at = 0; at < length;) {
    size_t n = length - at < (1 << 20) ? (size_t)(length - at) : (1 << 20);
    if (pread(fd, buf, n, (off_t)at) != (ssize_t)n)
      abort();
    v1_update(lane, buf, n);
    at += n;
  }
  free(buf);
  close(fd);
  return lane[0] ^ lane[1] ^ lane[2] ^ lane[3];
}

static uint64_t plain_read(const char *path, uint64_t length) {
  int fd = open(path, O_RDONLY);
  unsigned char *buf = malloc(128 << 10);
  uint64_t sum = 0;
  for (uint64_t at = 0; at < length; at += 128 << 10) {
    size_t n = length - at < (128 << 10) ? (size_t)(length - at) : (128 << 10);
    if (pread(fd, buf, n, (off_t)at) != (ssize_t)n)
      abort();
    sum += buf[0];
  }
  free(buf);
  close(fd);
  return sum;
}

/* CPU time of the whole process (every thread), ms: unlike the wall time, it
 * does not grow when other processes take the CPUs. */
static double cpu_ms(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static void report(const char *what, double *ms, double *cpu, int reps,
                   uint64_t bytes) {
  qsort(ms, reps, sizeof(double), cmp);
  qsort(cpu, reps, sizeof(double), cmp);
  printf("%-34s wall min %7.1f ms (%5.1f GB/s), median %7.1f; cpu min %7.1f ms "
         "(%5.1f GB/s per CPU)\n",
         what, ms[0], bytes / ms[0] / 1e6, ms[reps / 2], cpu[0],
         bytes / cpu[0] / 1e6);
}

int main(int argc, char **argv) {
  uint64_t size = (argc > 1 ? strtoull(argv[1], 0, 10) : 420) * 1000000ull;
  int reps = argc > 2 ? atoi(argv[2]) : 7;
  const char *dir = argc > 3 ? argv[3] : "/tmp";
  if (reps < 1 || reps > 100)
    reps = 7;
  char path[4096];
  snprintf(path, sizeof(path), "%s/kiln_artifact_check.bin", dir);
  unsigned char *data = malloc(size + KILN_ARTIFACT_TRAILER_SIZE);
  if (!data)
    return 1;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (uint64_t i = 0; i + 8 <= size; i += 8) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    memcpy(data + i, &x, 8);
  }
  kiln_artifact_store_le64(data + size, size);
  kiln_artifact_store_le64(data + size + 8, kiln_artifact_hash(data, size));
  memcpy(data + size + 16, KILN_ARTIFACT_MAGIC, 8);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size + 24, f) != size + 24 || fclose(f))
    return 1;
  free(data);
  printf("%s: %.0f MB, %ld CPUs online\n", path, size / 1e6,
         sysconf(_SC_NPROCESSORS_ONLN));
  plain_read(path, size); /* into the page cache */
  double ms[100], cpu[100];
  volatile uint64_t sink = 0;
  for (int r = 0; r < reps; ++r) {
    double t = now_ms(), c = cpu_ms();
    sink += plain_read(path, size);
    ms[r] = now_ms() - t, cpu[r] = cpu_ms() - c;
  }
  report("read only (1 thread, no hash)", ms, cpu, reps, size);
  for (int r = 0; r < reps; ++r) {
    double t = now_ms(), c = cpu_ms();
    sink += v1_check(path, size);
    ms[r] = now_ms() - t, cpu[r] = cpu_ms() - c;
  }
  report("format 1 (FNV-1a x4, 1 thread)", ms, cpu, reps, size);
  int threads[] = {1, 2, 4, 8, 0};
  for (int k = 0; k < 5; ++k) {
    for (int r = 0; r < reps; ++r) {
      double t = now_ms(), c = cpu_ms();
      kiln_status s = kiln_check_artifact(path, threads[k]);
      ms[r] = now_ms() - t, cpu[r] = cpu_ms() - c;
      if (s) {
        fprintf(stderr, "check failed: %s\n", kiln_status_message(s));
        return 1;
      }
    }
    char what[64];
    if (threads[k])
      snprintf(what, sizeof(what), "format 2, %d thread%s", threads[k],
               threads[k] == 1 ? "" : "s");
    else
      snprintf(what, sizeof(what), "format 2, auto (kiln_model_open)");
    report(what, ms, cpu, reps, size);
  }
  unlink(path);
  return (int)(sink & 0);
}
