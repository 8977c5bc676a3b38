/*===- runtime/src/internal.h - Declarations shared inside the runtime -----===*/
#ifndef KILN_RUNTIME_INTERNAL_H
#define KILN_RUNTIME_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/parallel.h"
#include "kiln/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define KILN_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define KILN_INTERNAL __attribute__((visibility("hidden")))
#else
#define KILN_PRINTF(fmt, args)
#define KILN_INTERNAL
#endif

/* status.c */
KILN_INTERNAL kiln_status kiln_make_status(kiln_status_code_t code,
                                           const char *format, ...)
    KILN_PRINTF(2, 3);
KILN_INTERNAL kiln_status kiln_make_status_v(kiln_status_code_t code,
                                             const char *format, va_list args);
KILN_INTERNAL kiln_status kiln_out_of_memory_status(void);

/* A growable string for building messages; on allocation failure `failed` is
 * set and the text is truncated. */
typedef struct kiln_strbuf {
  char *data;
  size_t size, capacity;
  int failed;
} kiln_strbuf;
KILN_INTERNAL void kiln_strbuf_appendf(kiln_strbuf *buf, const char *format,
                                       ...) KILN_PRINTF(2, 3);
KILN_INTERNAL void kiln_strbuf_append_shape(kiln_strbuf *buf, int32_t rank,
                                            const int64_t *shape);
/* Turns the buffer into a status (frees the buffer). */
KILN_INTERNAL kiln_status kiln_strbuf_to_status(kiln_strbuf *buf,
                                                kiln_status_code_t code);
KILN_INTERNAL void kiln_strbuf_free(kiln_strbuf *buf);

/* descriptor.c */
#define KILN_ALIGNMENT 64                /* the least alignment the runtime gives */
#define KILN_HUGE_PAGE ((size_t)2 << 20) /* arenas from this size up use THP */
/* Checks the ABI version, the structure, what this runtime can run and the
 * CPU features; NULL when the model can open. */
KILN_INTERNAL kiln_status kiln_check_descriptor(const kiln_model_desc *desc);
/* The model's host-scratch memory need, or NULL. */
KILN_INTERNAL const kiln_memory_need *
kiln_host_scratch_need(const kiln_model_desc *desc);
/* model.c: whether a static tensor's byte size fits in size_t. */
KILN_INTERNAL int kiln_tensor_desc_fits(const kiln_tensor_desc *t);
/* model.c: a static tensor's byte size (0 on overflow or unknown dtype). */
KILN_INTERNAL size_t kiln_tensor_desc_byte_size(const kiln_tensor_desc *t);

/* variants.c: checks a variant table's version and structure. */
KILN_INTERNAL kiln_status
kiln_check_artifact_table(const kiln_artifact_desc *artifact);
/* variants.c: the index of the CPU variant to open: `requested` (options.
 * cpu_variant) or else KILN_CPU by name, else the first CPU variant whose
 * features this CPU has. Other devices' variants are not considered. */
KILN_INTERNAL kiln_status kiln_artifact_pick(const kiln_artifact_desc *artifact,
                                             const char *requested,
                                             uint32_t *out_index);
/* variants.c: the first variant of `device` ("vulkan", "cuda"; not "cpu":
 * kiln_artifact_pick) in the table, or -1. */
KILN_INTERNAL int64_t kiln_artifact_find_device(
    const kiln_artifact_desc *artifact, const char *device);
/* variants.c: appends the devices the table holds ("cpu (x86-64-v3,
 * x86-64-v2), vulkan") to `buf`. */
KILN_INTERNAL void kiln_artifact_append_devices(kiln_strbuf *buf,
                                                const kiln_artifact_desc *artifact);

/* variants.c: the device option (kiln_model_options.device, docs/gpu.md)
 * resolved: the option, else KILN_DEVICE when the option is NULL, "" or
 * "auto", else auto's order. `list` is one device or a comma-separated list
 * of them, each "cpu", "vulkan[:SEL]" or "cuda[:SEL]", tried in order. */
#define KILN_DEVICE_AUTO_ORDER "cuda,hip,vulkan,cpu"
#define KILN_DEVICE_ITEM_MAX 128 /* bytes of one item, its NUL included */
typedef struct kiln_device_request {
  const char *list;   /* what to try; borrowed (the option or environment) */
  const char *source; /* "options.device", "KILN_DEVICE" or "auto" */
  int none;           /* "none": describe the model, open no back end */
  int fallback;       /* several choices: one the artifact lacks, or whose
                         back end finds no driver or device, is skipped */
} kiln_device_request;
/* INVALID_ARGUMENT naming the source for an item that is no device. */
KILN_INTERNAL kiln_status kiln_device_request_resolve(const char *option,
                                                      kiln_device_request *out);
/* The next item of `*cursor` (start: request.list): copied into `item`
 * (KILN_DEVICE_ITEM_MAX bytes), with *kind "cpu", "vulkan" or "cuda"
 * (static) and *selector what followed "vulkan:" / "cuda:" inside `item`
 * (NULL when none). 0 past the last item. Only for a resolved request. */
KILN_INTERNAL int kiln_device_request_next(const char **cursor, char *item,
                                           const char **kind,
                                           const char **selector);

/* artifact.c: opens `path` without blocking, refuses anything but a regular
 * file and checks its checksum trailer (artifact.h), all with plain reads,
 * before dlopen may see it; NULL when it is intact. A large file is hashed by
 * up to `max_threads` threads at once (0: one per available CPU; at most 8),
 * which end before it returns. */
KILN_INTERNAL kiln_status kiln_check_artifact(const char *path,
                                              int32_t max_threads);

/* thread_pool.c: a pool of `num_threads - 1` workers plus the caller. It is
 * also the kiln_exec_context handed to entry functions (it starts with a
 * kiln_exec_context_header). */
typedef struct kiln_thread_pool kiln_thread_pool;
KILN_INTERNAL kiln_status kiln_thread_pool_create(int32_t num_threads,
                                                  kiln_thread_pool **out_pool);
KILN_INTERNAL void kiln_thread_pool_destroy(kiln_thread_pool *pool);
KILN_INTERNAL kiln_exec_context *
kiln_thread_pool_context(kiln_thread_pool *pool);
/* kiln_parallel_for on `pool`, without going through its context header.
 * Any number of threads may call it at once: while one thread's loop runs on
 * the pool, the others run theirs on their own thread. */
KILN_INTERNAL void kiln_thread_pool_parallel_for(kiln_thread_pool *pool,
                                                 int64_t n,
                                                 kiln_parallel_body_fn body,
                                                 void *closure);
/* CPUs this process may run on (sched_getaffinity, else sysconf), >= 1. */
KILN_INTERNAL int32_t kiln_available_cpus(void);

/* profile.c: KILN_PROFILE (docs/tools.md). Nothing of it runs when off. */
/* Whether KILN_PROFILE was set (read once, at the first model opened). */
KILN_INTERNAL int kiln_profile_enabled(void);
/* Copies the names of `desc`'s kernel table; returns the label (a stable
 * string) that keys the model's run events, or NULL when out of memory. */
KILN_INTERNAL const char *kiln_profile_register_model(const kiln_model_desc *desc);
KILN_INTERNAL int64_t kiln_profile_now(void);
/* Records a run of the model `label` names, from `start` to now. */
KILN_INTERNAL void kiln_profile_run(const char *label, int64_t start);
/* kiln_thread_pool_parallel_for, recording the kernel and its chunks. */
KILN_INTERNAL void kiln_profile_parallel_for(kiln_thread_pool *pool, int64_t n,
                                             kiln_parallel_body_fn body,
                                             void *closure);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_INTERNAL_H */
