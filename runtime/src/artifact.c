/*===- runtime/src/artifact.c - Checking a model file before dlopen
 * --------===*/
#if !defined(_GNU_SOURCE) && defined(__linux__)
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact.h"
#include "internal.h"

/* Reads exactly `size` bytes at `offset`; 0 on success, else an errno value
 * (EIO for a short file). */
static int kiln_pread_all(int fd, void *buf, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    ssize_t n =
        pread(fd, (char *)buf + done, size - done, (off_t)(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    if (n == 0)
      return EIO;
    done += (size_t)n;
  }
  return 0;
}

static kiln_status kiln_damaged(const char *path, const char *why) {
  return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                          "cannot open model '%s': the file is damaged or "
                          "not a kiln model library: %s",
                          path, why);
}

/* Segments [first, end) of the file, each read in CHUNK-byte pieces into a
 * buffer that stays in the L2 cache while it is hashed. */
typedef struct kiln_hash_job {
  int fd;
  uint64_t length, first, end;
  uint64_t *digests;
  int err;
} kiln_hash_job;

enum { KILN_HASH_CHUNK = 128 << 10 }; /* divides KILN_ARTIFACT_SEGMENT */

static void *kiln_hash_segments(void *arg) {
  kiln_hash_job *job = (kiln_hash_job *)arg;
  unsigned char *buf = (unsigned char *)malloc(KILN_HASH_CHUNK);
  if (!buf) {
    job->err = ENOMEM;
    return NULL;
  }
  for (uint64_t j = job->first; j < job->end && !job->err; ++j) {
    uint64_t at = j * KILN_ARTIFACT_SEGMENT;
    uint64_t stop = job->length - at < KILN_ARTIFACT_SEGMENT
                        ? job->length
                        : at + KILN_ARTIFACT_SEGMENT;
    kiln_artifact_segment_state state;
    kiln_artifact_segment_init(&state);
    for (; at < stop; at += KILN_HASH_CHUNK) {
      size_t n = stop - at < KILN_HASH_CHUNK ? (size_t)(stop - at)
                                             : (size_t)KILN_HASH_CHUNK;
      job->err = kiln_pread_all(job->fd, buf, n, at);
      if (job->err)
        break;
      kiln_artifact_segment_update(&state, buf, n);
    }
    job->digests[j] = kiln_artifact_segment_digest(&state);
  }
  free(buf);
  return NULL;
}

/* The hash of the first `length` bytes of `fd` (artifact.h). The segments
 * are independent, so a large file is read by several threads at once: one
 * thread copies from the page cache at a fraction of the memory bandwidth,
 * which is what the check costs (the hash itself runs faster than the copy).
 * At most `max_threads` threads (0: one per available CPU), at most 8, and
 * at least 16 segments (16 MiB) per thread; a thread that cannot be started
 * leaves its segments to the caller. 0 or an errno value. */
static int kiln_hash_file(int fd, uint64_t length, int32_t max_threads,
                          uint64_t *out_hash) {
  enum { MAX_JOBS = 8, MIN_SEGMENTS_PER_JOB = 16 };
  uint64_t segments = length / KILN_ARTIFACT_SEGMENT +
                      (length % KILN_ARTIFACT_SEGMENT != 0);
  if (segments > SIZE_MAX / sizeof(uint64_t))
    return ENOMEM;
  uint64_t *digests =
      (uint64_t *)malloc(segments ? (size_t)segments * sizeof(uint64_t) : 1);
  if (!digests)
    return ENOMEM;
  int64_t jobs = max_threads > 0 ? max_threads : kiln_available_cpus();
  if (jobs > MAX_JOBS)
    jobs = MAX_JOBS;
  if ((uint64_t)jobs > segments / MIN_SEGMENTS_PER_JOB)
    jobs = (int64_t)(segments / MIN_SEGMENTS_PER_JOB);
  if (jobs < 1)
    jobs = 1;
  kiln_hash_job job[MAX_JOBS];
  pthread_t thread[MAX_JOBS];
  int started[MAX_JOBS] = {0};
  for (int64_t t = 0; t < jobs; ++t) {
    job[t].fd = fd;
    job[t].length = length;
    job[t].first = segments * (uint64_t)t / (uint64_t)jobs;
    job[t].end = segments * (uint64_t)(t + 1) / (uint64_t)jobs;
    job[t].digests = digests;
    job[t].err = 0;
  }
  /* Job 0 runs on the calling thread, after the others are started. */
  for (int64_t t = 1; t < jobs; ++t)
    started[t] = pthread_create(&thread[t], NULL, kiln_hash_segments,
                                &job[t]) == 0;
  kiln_hash_segments(&job[0]);
  int err = 0;
  for (int64_t t = 0; t < jobs; ++t) {
    if (t > 0 && started[t])
      pthread_join(thread[t], NULL);
    else if (t > 0)
      kiln_hash_segments(&job[t]);
    if (!err)
      err = job[t].err;
  }
  if (!err) {
    uint64_t h = KILN_ARTIFACT_HASH_INIT;
    for (uint64_t j = 0; j < segments; ++j)
      h = kiln_artifact_fold(h, digests[j]);
    *out_hash = kiln_artifact_finish(h, length);
  }
  free(digests);
  return err;
}

kiln_status kiln_check_artifact(const char *path, int32_t max_threads) {
  /* O_NONBLOCK: opening a FIFO must not wait for a writer; only regular
   * files go on. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    return kiln_make_status(err == ENOENT || err == ENOTDIR
                                ? KILN_STATUS_NOT_FOUND
                                : KILN_STATUS_INVALID_ARGUMENT,
                            "cannot open model '%s': %s", path, strerror(err));
  }
  struct stat st;
  kiln_status status = NULL;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    status =
        kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                         "cannot open model '%s': %s", path, strerror(err));
  } else if (S_ISDIR(st.st_mode)) {
    status =
        kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                         "cannot open model '%s': it is a directory", path);
  } else if (!S_ISREG(st.st_mode)) {
    status = kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "cannot open model '%s': it is not a regular "
                              "file (a FIFO, socket or device)",
                              path);
  } else if ((uint64_t)st.st_size < KILN_ARTIFACT_TRAILER_SIZE) {
    status = kiln_damaged(path, "it is too short to hold kiln's checksum "
                                "trailer");
  }
  if (status) {
    close(fd);
    return status;
  }
  uint64_t file_size = (uint64_t)st.st_size;
  uint64_t length = file_size - KILN_ARTIFACT_TRAILER_SIZE;
  unsigned char trailer[KILN_ARTIFACT_TRAILER_SIZE];
  int err = kiln_pread_all(fd, trailer, sizeof(trailer), length);
  if (err) {
    close(fd);
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "cannot read model '%s': %s", path, strerror(err));
  }
  if (memcmp(trailer + 16, KILN_ARTIFACT_MAGIC_V1, 8) == 0) {
    close(fd);
    return kiln_damaged(path, "its checksum trailer is format 1, written by "
                              "an older kiln: compile the model again");
  }
  if (memcmp(trailer + 16, KILN_ARTIFACT_MAGIC, 8) != 0) {
    close(fd);
    return kiln_damaged(path, "it has no kiln checksum trailer (truncated, "
                              "or not written by kiln compile --emit so)");
  }
  uint64_t want_length = kiln_artifact_load_le64(trailer);
  uint64_t want_hash = kiln_artifact_load_le64(trailer + 8);
  if (want_length != length) {
    close(fd);
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "cannot open model '%s': the file is damaged: "
                            "its checksum trailer covers %llu bytes, but "
                            "%llu precede it",
                            path, (unsigned long long)want_length,
                            (unsigned long long)length);
  }
  uint64_t h;
  err = kiln_hash_file(fd, length, max_threads, &h);
  close(fd);
  if (err == ENOMEM)
    return kiln_out_of_memory_status();
  if (err)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "cannot read model '%s': %s", path, strerror(err));
  if (h != want_hash)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "cannot open model '%s': the file is damaged: "
                            "checksum %016llx, but its trailer says %016llx",
                            path, (unsigned long long)h,
                            (unsigned long long)want_hash);
  return NULL;
}
