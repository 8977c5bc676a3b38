/*===- kiln/parallel.h - Parallel loops for generated code -----------------===*
 *
 * The part of the runtime that compiled models call back into. The entry
 * function receives a `kiln_exec_context *` (model_abi.h), one per run
 * context (concurrent runs get different ones); generated code passes it to
 * kiln_parallel_for() to split a loop over the model's thread pool.
 *
 * Two ways to reach the pool, with the same behaviour:
 *  1. kiln_parallel_for(): an ordinary function of the runtime library. A model
 *     linked statically into a program resolves it at link time. A model .so
 *     opened with dlopen can only resolve it if the host program exports it
 *     (linked with -rdynamic / ENABLE_EXPORTS, or on Linux with
 *     -Wl,--export-dynamic-symbol=kiln_* as kiln-run is); a host that does
 *     not export it makes dlopen fail with "undefined symbol".
 *  2. kiln_exec_parallel_for() below: a static inline call through the function
 *     pointer at the start of every kiln_exec_context (kiln_exec_context_header).
 *     It needs no symbol from the host, so it works in every host. This is the
 *     route kiln's generated code takes: kiln-outline-parallel-loops emits the
 *     load of `parallel_for` from the header and the indirect call inline
 *     (the header's LLVM type: codegen/CPU/ExecContextABI.cpp).
 *
 * Semantics of both: [0, n) is split into contiguous chunks, and the chunks
 * into one contiguous home range per thread (the calling thread's first); each
 * thread runs its own range front to back, then steals chunks from the back of
 * the others' (runtime/src/thread_pool.c). `body` is called once per chunk with
 * begin < end, every index in exactly one chunk, in no particular order and
 * possibly concurrently; the call returns when every chunk has finished (a
 * full barrier: writes made by `body` are visible to the caller afterwards).
 * n <= 0 calls nothing. A NULL context, a pool of one thread, n == 1, a call
 * from inside a `body` (nested), or a call while the pool runs another loop
 * (a concurrent run of the model on another thread) runs [0, n) as one chunk
 * on the calling thread. `body` must not block waiting for another chunk.
 *===----------------------------------------------------------------------===*/
#ifndef KILN_PARALLEL_H
#define KILN_PARALLEL_H

#include <stdint.h>

#include "kiln/model_abi.h" /* kiln_exec_context */

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*kiln_parallel_body_fn)(void *closure, int64_t begin,
                                      int64_t end);

/* Runs body(closure, begin, end) over chunks covering [0, n); see above. */
void kiln_parallel_for(kiln_exec_context *context, int64_t n,
                       kiln_parallel_body_fn body, void *closure);

/* Threads available to kiln_parallel_for (the caller included), >= 1; 1 for a
 * NULL context. Generated code may use it to pick chunk counts. */
int32_t kiln_exec_context_num_threads(const kiln_exec_context *context);

/* Every kiln_exec_context the runtime passes to an entry function starts with
 * this header. Fields are only ever appended (version says how many exist). */
#define KILN_EXEC_CONTEXT_VERSION 1
typedef struct kiln_exec_context_header {
  uint32_t version;    /* KILN_EXEC_CONTEXT_VERSION */
  int32_t num_threads; /* as kiln_exec_context_num_threads() */
  void (*parallel_for)(kiln_exec_context *context, int64_t n,
                       kiln_parallel_body_fn body, void *closure);
} kiln_exec_context_header;

/* kiln_parallel_for() without needing the runtime's symbol (route 2). */
static inline void kiln_exec_parallel_for(kiln_exec_context *context, int64_t n,
                                          kiln_parallel_body_fn body,
                                          void *closure) {
  if (context == 0) {
    if (n > 0)
      body(closure, 0, n);
    return;
  }
  ((const kiln_exec_context_header *)(const void *)context)
      ->parallel_for(context, n, body, closure);
}

#ifdef __cplusplus
}
#endif

#endif /* KILN_PARALLEL_H */
