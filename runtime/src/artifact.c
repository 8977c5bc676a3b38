/*===- runtime/src/artifact.c - Checking a model file before dlopen
 * --------===*/
#if !defined(_GNU_SOURCE) && defined(__linux__)
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
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

kiln_status kiln_check_artifact(const char *path) {
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
  enum { CHUNK = 1 << 20 }; /* a multiple of 32 (artifact.h) */
  unsigned char *buf = (unsigned char *)malloc(CHUNK);
  if (!buf) {
    close(fd);
    return kiln_out_of_memory_status();
  }
  kiln_artifact_hash_state state;
  kiln_artifact_hash_init(&state);
  for (uint64_t at = 0; at < length;) {
    size_t n = length - at < CHUNK ? (size_t)(length - at) : (size_t)CHUNK;
    err = kiln_pread_all(fd, buf, n, at);
    if (err)
      break;
    kiln_artifact_hash_update(&state, buf, n);
    at += n;
  }
  free(buf);
  close(fd);
  if (err)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "cannot read model '%s': %s", path, strerror(err));
  uint64_t h = kiln_artifact_hash_final(&state, length);
  if (h != want_hash)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "cannot open model '%s': the file is damaged: "
                            "checksum %016llx, but its trailer says %016llx",
                            path, (unsigned long long)h,
                            (unsigned long long)want_hash);
  return NULL;
}
