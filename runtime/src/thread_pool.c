/*===- runtime/src/thread_pool.c - The pool behind kiln_parallel_for -------===*
 *
 * `num_threads - 1` worker threads plus the calling thread, pthreads and C11
 * atomics only.
 *
 * A parallel_for publishes a job (body, closure, chunking) and bumps
 * `generation`; idle workers notice it by spinning briefly on the counter and
 * otherwise sleep on a condition variable.
 *
 * Chunks have a home thread: chunk indices [0, C) are split into one
 * contiguous range per thread (the caller takes the first), so consecutive
 * jobs give a thread the same part of their index space. The kernels order
 * tasks row-major (output rows outermost), so a thread keeps writing and then
 * reading the same rows of every feature map, which stay in its own cache:
 * with chunks handed out from one shared counter, the two threads took
 * alternate chunks and MobileNetV2's depthwise convolutions at 2 threads read
 * most of their input from the other core's cache (2-7x their 1-thread CPU
 * time). A thread claims from the front of its own range and, once that is
 * empty, steals from the back of the others', so load still balances and the
 * caller never waits for a worker that has not woken up (a busy or
 * oversubscribed machine does not stall every call).
 *
 * Each range is one 64-bit atomic word (job tag << 40 | front << 20 | back),
 * claimed by compare-and-swap that only succeeds while the tag is the job's: a
 * worker that wakes late, after its job finished, cannot claim a chunk of a
 * later job by mistake.
 *
 * Concurrent runs of one model share its pool: a caller takes it with the
 * `busy` flag (acquire; cleared with release after the job's last chunk, so
 * the next owner sees every field the previous one wrote), and a caller that
 * finds it taken runs its whole loop on its own thread, touching no pool
 * state. Only one job is ever published at a time. (ThreadSanitizer runs of
 * test/unit/runtime and test/e2e/test_concurrency.py check this.)
 *
 * Publishing protocol (caller, alone thanks to `busy`):
 *   every range = (tag, empty) -> job fields (release) -> done = 0
 *   -> every range = (tag, its chunks) (release)
 *   -> generation = tag (release, under mutex)
 * A claimer loads a range (acquire); sees the job's tag and a chunk; reads the
 * fields (acquire); CASes the range. If the fields it read belong to a later
 * job, that job's empty-range store happened before them, so the CAS fails.
 *===----------------------------------------------------------------------===*/
#if !defined(_GNU_SOURCE) && defined(__linux__)
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* How long an idle thread polls before sleeping on the condition variable. */
#define KILN_SPIN_NS 200000 /* 0.2 ms */
/* Chunks per thread: many, so that uneven or few items balance out (a conv
 * split into 9 items ran as chunks of 2: 6 items on one thread, 3 on the
 * other). Claiming a chunk is one compare-and-swap, far below an item's cost. */
#define KILN_CHUNKS_PER_THREAD 16

/* A range word: tag (24 bits) | front (20) | back (20), chunks [front, back). */
#define KILN_RANGE_BITS 20
#define KILN_RANGE_MASK ((UINT64_C(1) << KILN_RANGE_BITS) - 1)
#define KILN_TAG_SHIFT (2 * KILN_RANGE_BITS)
#define KILN_TAG_MASK ((UINT64_C(1) << (64 - KILN_TAG_SHIFT)) - 1)
#define KILN_MAX_CHUNKS ((int64_t)KILN_RANGE_MASK)

/* One thread's chunk range, on its own cache line. */
typedef struct {
  _Alignas(64) atomic_uint_fast64_t range;
} kiln_chunk_range;

struct kiln_thread_pool {
  kiln_exec_context_header header; /* must stay first: the exec context ABI */
  int32_t num_threads;
  int32_t num_workers;
  pthread_t *workers;

  pthread_mutex_t mutex;
  pthread_cond_t work_cond; /* workers wait for a new generation */
  pthread_cond_t done_cond; /* the caller waits for done == num_chunks */

  /* The current job (see the publishing protocol above). */
  _Atomic(kiln_parallel_body_fn) body;
  _Atomic(void *) closure;
  atomic_int_fast64_t n;
  atomic_int_fast64_t chunk_size;
  atomic_int_fast64_t num_chunks;
  kiln_chunk_range *ranges; /* one per thread: the caller's, then workers' */
  atomic_int next_worker;   /* hands each starting worker its range index */
  atomic_int_fast64_t done; /* chunks of the current job finished */
  atomic_uint generation;    /* the current job's tag; 0 = none yet */
  atomic_int stop;
  atomic_flag busy; /* a parallel_for is in progress on this pool */
};

/* Set while this thread runs a body: nested parallel_for runs inline. */
static _Thread_local int kiln_in_parallel_body;

static inline void kiln_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ __volatile__("pause");
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield");
#endif
}

static int64_t kiln_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int32_t kiln_available_cpus(void) {
#if defined(__linux__) && defined(CPU_COUNT)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int count = CPU_COUNT(&set);
    if (count > 0)
      return count;
  }
#endif
  long count = sysconf(_SC_NPROCESSORS_ONLN);
  return count > 0 ? (int32_t)(count > 1024 ? 1024 : count) : 1;
}

static inline uint64_t kiln_range_word(uint64_t tag, int64_t front,
                                       int64_t back) {
  return (tag << KILN_TAG_SHIFT) | ((uint64_t)front << KILN_RANGE_BITS) |
         (uint64_t)back;
}

/* Runs chunk `index` of a job; returns whether it was the job's last. */
static int kiln_run_chunk(kiln_thread_pool *pool, kiln_parallel_body_fn body,
                          void *closure, int64_t n, int64_t chunk,
                          int64_t index, int64_t num_chunks) {
  int64_t begin = index * chunk;
  int64_t end = n - begin > chunk ? begin + chunk : n;
  kiln_in_parallel_body = 1;
  body(closure, begin, end);
  kiln_in_parallel_body = 0;
  if (atomic_fetch_add_explicit(&pool->done, 1, memory_order_acq_rel) + 1 !=
      num_chunks)
    return 0;
  pthread_mutex_lock(&pool->mutex);
  pthread_cond_signal(&pool->done_cond);
  pthread_mutex_unlock(&pool->mutex);
  return 1;
}

/* Claims and runs chunks of job `tag` until none is left: thread `self`'s own
 * range from the front, then the others' from the back. */
static void kiln_run_chunks(kiln_thread_pool *pool, uint64_t tag, int32_t self) {
  int32_t num_threads = pool->num_threads;
  for (int32_t k = 0; k < num_threads; ++k) {
    int32_t owner = (self + k) % num_threads;
    atomic_uint_fast64_t *range = &pool->ranges[owner].range;
    uint64_t v = atomic_load_explicit(range, memory_order_acquire);
    for (;;) {
      if ((v >> KILN_TAG_SHIFT) != tag)
        return; /* a later job: this one has finished */
      int64_t front = (int64_t)((v >> KILN_RANGE_BITS) & KILN_RANGE_MASK);
      int64_t back = (int64_t)(v & KILN_RANGE_MASK);
      if (front >= back)
        break; /* empty: try the next thread's range */
      int64_t num_chunks =
          atomic_load_explicit(&pool->num_chunks, memory_order_acquire);
      kiln_parallel_body_fn body =
          atomic_load_explicit(&pool->body, memory_order_acquire);
      void *closure =
          atomic_load_explicit(&pool->closure, memory_order_acquire);
      int64_t n = atomic_load_explicit(&pool->n, memory_order_acquire);
      int64_t chunk =
          atomic_load_explicit(&pool->chunk_size, memory_order_acquire);
      int64_t index = k == 0 ? front : back - 1;
      uint64_t claimed = k == 0 ? kiln_range_word(tag, front + 1, back)
                                : kiln_range_word(tag, front, back - 1);
      if (!atomic_compare_exchange_weak_explicit(range, &v, claimed,
                                                 memory_order_acq_rel,
                                                 memory_order_acquire))
        continue; /* v now holds the current value */
      if (kiln_run_chunk(pool, body, closure, n, chunk, index, num_chunks))
        return;
      v = atomic_load_explicit(range, memory_order_acquire);
    }
  }
}

static void *kiln_worker_main(void *arg) {
  kiln_thread_pool *pool = (kiln_thread_pool *)arg;
  /* Range 0 is the caller's. */
  int32_t self =
      1 + atomic_fetch_add_explicit(&pool->next_worker, 1, memory_order_relaxed);
  /* The generation was 0 when the pool started this thread; a job may already
   * have been published before the thread got here. */
  unsigned seen = 0;
  for (;;) {
    /* Spin, then sleep, until a new job or stop. */
    unsigned gen = atomic_load_explicit(&pool->generation, memory_order_acquire);
    if (gen == seen && !atomic_load_explicit(&pool->stop, memory_order_acquire)) {
      int64_t deadline = kiln_now_ns() + KILN_SPIN_NS;
      for (unsigned i = 1;; ++i) {
        kiln_cpu_relax();
        gen = atomic_load_explicit(&pool->generation, memory_order_acquire);
        if (gen != seen || atomic_load_explicit(&pool->stop, memory_order_acquire))
          break;
        if ((i & 63) == 0 && kiln_now_ns() > deadline)
          break;
      }
      if (gen == seen) {
        pthread_mutex_lock(&pool->mutex);
        while ((gen = atomic_load_explicit(&pool->generation,
                                           memory_order_acquire)) == seen &&
               !atomic_load_explicit(&pool->stop, memory_order_acquire))
          pthread_cond_wait(&pool->work_cond, &pool->mutex);
        pthread_mutex_unlock(&pool->mutex);
      }
    }
    if (gen == seen) /* woken for stop, no job pending */
      return NULL;
    seen = gen;
    kiln_run_chunks(pool, gen, self);
  }
}

static void kiln_pool_parallel_for(kiln_exec_context *context, int64_t n,
                                   kiln_parallel_body_fn body, void *closure) {
  kiln_thread_pool *pool = (kiln_thread_pool *)(void *)context;
  if (n <= 0)
    return;
  /* Serial cases: no workers, one item, nested inside a body, or another
   * thread is using the pool right now. */
  if (!pool || pool->num_workers == 0 || n == 1 || kiln_in_parallel_body ||
      atomic_flag_test_and_set_explicit(&pool->busy, memory_order_acquire)) {
    body(closure, 0, n);
    return;
  }

  int64_t max_chunks = (int64_t)pool->num_threads * KILN_CHUNKS_PER_THREAD;
  if (max_chunks > KILN_MAX_CHUNKS)
    max_chunks = KILN_MAX_CHUNKS;
  int64_t num_chunks = n < max_chunks ? n : max_chunks;
  int64_t chunk = n / num_chunks + (n % num_chunks != 0);
  num_chunks = n / chunk + (n % chunk != 0);
  unsigned gen = atomic_load_explicit(&pool->generation, memory_order_relaxed);
  gen = (unsigned)((gen + 1) & KILN_TAG_MASK);
  if (gen == 0) /* 0 means "no job yet" to a starting worker */
    gen = 1;
  uint64_t tag = gen;
  int32_t num_threads = pool->num_threads;
  for (int32_t t = 0; t < num_threads; ++t)
    atomic_store_explicit(&pool->ranges[t].range, kiln_range_word(tag, 0, 0),
                          memory_order_seq_cst);
  atomic_store_explicit(&pool->body, body, memory_order_release);
  atomic_store_explicit(&pool->closure, closure, memory_order_release);
  atomic_store_explicit(&pool->n, n, memory_order_release);
  atomic_store_explicit(&pool->chunk_size, chunk, memory_order_release);
  atomic_store_explicit(&pool->num_chunks, num_chunks, memory_order_release);
  atomic_store_explicit(&pool->done, 0, memory_order_release);
  /* Thread t's home chunks: [ceil(t * C / T), ceil((t + 1) * C / T)); with
   * fewer chunks than threads the caller's range is not the empty one. The
   * caller's first chunk (chunk 0) is taken before the workers wake: a
   * spinning worker would otherwise steal it while the caller signals, with
   * small bodies. */
  for (int32_t t = 0; t < num_threads; ++t)
    atomic_store_explicit(
        &pool->ranges[t].range,
        kiln_range_word(tag,
                        t == 0 ? 1
                               : (t * num_chunks + num_threads - 1) /
                                     num_threads,
                        ((t + 1) * num_chunks + num_threads - 1) / num_threads),
        memory_order_release);
  pthread_mutex_lock(&pool->mutex);
  atomic_store_explicit(&pool->generation, gen, memory_order_release);
  pthread_cond_broadcast(&pool->work_cond);
  pthread_mutex_unlock(&pool->mutex);
  if (!kiln_run_chunk(pool, body, closure, n, chunk, 0, num_chunks))
    kiln_run_chunks(pool, tag, 0);
  /* Wait for chunks other threads still run: spin, then sleep. */
  if (atomic_load_explicit(&pool->done, memory_order_acquire) != num_chunks) {
    int64_t deadline = kiln_now_ns() + KILN_SPIN_NS;
    for (unsigned i = 1;
         atomic_load_explicit(&pool->done, memory_order_acquire) != num_chunks;
         ++i) {
      kiln_cpu_relax();
      if ((i & 63) == 0 && kiln_now_ns() > deadline) {
        pthread_mutex_lock(&pool->mutex);
        while (atomic_load_explicit(&pool->done, memory_order_acquire) !=
               num_chunks)
          pthread_cond_wait(&pool->done_cond, &pool->mutex);
        pthread_mutex_unlock(&pool->mutex);
        break;
      }
    }
  }
  atomic_flag_clear_explicit(&pool->busy, memory_order_release);
}

void kiln_thread_pool_parallel_for(kiln_thread_pool *pool, int64_t n,
                                   kiln_parallel_body_fn body, void *closure) {
  kiln_pool_parallel_for((kiln_exec_context *)(void *)pool, n, body, closure);
}

void kiln_parallel_for(kiln_exec_context *context, int64_t n,
                       kiln_parallel_body_fn body, void *closure) {
  if (!context) {
    if (n > 0)
      body(closure, 0, n);
    return;
  }
  ((const kiln_exec_context_header *)(const void *)context)
      ->parallel_for(context, n, body, closure);
}

int32_t kiln_exec_context_num_threads(const kiln_exec_context *context) {
  if (!context)
    return 1;
  return ((const kiln_exec_context_header *)(const void *)context)->num_threads;
}

kiln_exec_context *kiln_thread_pool_context(kiln_thread_pool *pool) {
  return (kiln_exec_context *)(void *)pool;
}

static void kiln_stop_workers(kiln_thread_pool *pool, int32_t started) {
  pthread_mutex_lock(&pool->mutex);
  atomic_store_explicit(&pool->stop, 1, memory_order_release);
  pthread_cond_broadcast(&pool->work_cond);
  pthread_mutex_unlock(&pool->mutex);
  for (int32_t i = 0; i < started; ++i)
    pthread_join(pool->workers[i], NULL);
}

kiln_status kiln_thread_pool_create(int32_t num_threads,
                                    kiln_thread_pool **out_pool) {
  if (num_threads < 0)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "num_threads must be >= 0 (0 = one per CPU), got %d",
                            (int)num_threads);
  if (num_threads == 0)
    num_threads = kiln_available_cpus();
  kiln_thread_pool *pool = (kiln_thread_pool *)calloc(1, sizeof(*pool));
  if (!pool)
    return kiln_out_of_memory_status();
  pool->header.version = KILN_EXEC_CONTEXT_VERSION;
  pool->header.num_threads = num_threads;
  pool->header.parallel_for = kiln_pool_parallel_for;
  pool->num_threads = num_threads;
  pool->num_workers = num_threads - 1;
  atomic_init(&pool->body, NULL);
  atomic_init(&pool->closure, NULL);
  atomic_init(&pool->n, 0);
  atomic_init(&pool->chunk_size, 0);
  atomic_init(&pool->num_chunks, 0);
  atomic_init(&pool->next_worker, 0);
  atomic_init(&pool->done, 0);
  atomic_init(&pool->generation, 0);
  atomic_init(&pool->stop, 0);
  atomic_flag_clear(&pool->busy);
  if (pthread_mutex_init(&pool->mutex, NULL) != 0) {
    free(pool);
    return kiln_make_status(KILN_STATUS_INTERNAL, "pthread_mutex_init failed");
  }
  if (pthread_cond_init(&pool->work_cond, NULL) != 0 ||
      pthread_cond_init(&pool->done_cond, NULL) != 0) {
    /* Leaks at most one condition variable on a failure that does not occur
     * on Linux; keeps the error path simple. */
    pthread_mutex_destroy(&pool->mutex);
    free(pool);
    return kiln_make_status(KILN_STATUS_INTERNAL, "pthread_cond_init failed");
  }
  /* Tag 0 (no job) in every range. */
  pool->ranges = (kiln_chunk_range *)aligned_alloc(
      _Alignof(kiln_chunk_range),
      (size_t)num_threads * sizeof(kiln_chunk_range));
  if (!pool->ranges) {
    kiln_thread_pool_destroy(pool);
    return kiln_out_of_memory_status();
  }
  for (int32_t t = 0; t < num_threads; ++t)
    atomic_init(&pool->ranges[t].range, 0);
  if (pool->num_workers > 0) {
    pool->workers =
        (pthread_t *)calloc((size_t)pool->num_workers, sizeof(pthread_t));
    if (!pool->workers) {
      kiln_thread_pool_destroy(pool);
      return kiln_out_of_memory_status();
    }
  }
  for (int32_t i = 0; i < pool->num_workers; ++i) {
    int err = pthread_create(&pool->workers[i], NULL, kiln_worker_main, pool);
    if (err != 0) {
      kiln_stop_workers(pool, i);
      pool->num_workers = 0;
      kiln_thread_pool_destroy(pool);
      return kiln_make_status(KILN_STATUS_INTERNAL,
                              "cannot start worker thread %d of %d: %s",
                              (int)i + 1, (int)num_threads - 1, strerror(err));
    }
  }
  *out_pool = pool;
  return NULL;
}

void kiln_thread_pool_destroy(kiln_thread_pool *pool) {
  if (!pool)
    return;
  if (pool->workers)
    kiln_stop_workers(pool, pool->num_workers);
  pthread_cond_destroy(&pool->work_cond);
  pthread_cond_destroy(&pool->done_cond);
  pthread_mutex_destroy(&pool->mutex);
  free(pool->workers);
  free(pool->ranges);
  free(pool);
}
