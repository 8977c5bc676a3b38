// Per-loop times of a compiled model: every thread-pool loop (`parallel_for`)
// of one run, its wall time and each thread's busy time, averaged over REPEAT
// runs, plus the sequential time between loops. It wraps the runtime's pool in
// an exec context of its own and calls the descriptor's `run` directly.
// Build and run (from the repo root; the .py builds it against build/):
//   .venv/bin/python bench/loop_times.py MODEL.so [THREADS] [REPEAT]
// Loops are numbered in run order, like the outlined `<name>_main_ctx_parallel_N`
// functions (perf report names those). Inputs: floats 0.0-0.6, integers 0-6.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h" /* kiln_thread_pool_create (runtime/src) */
#include "kiln/model_abi.h"
#include "kiln/parallel.h"

#define MAX_LOOPS 4096
#define MAX_THREADS 64

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

typedef struct {
  kiln_exec_context_header header; /* must stay first */
  kiln_exec_context *pool;
} timing_context;

static int loop_index, num_loops;
static double wall[MAX_LOOPS], gap[MAX_LOOPS], last_end, run_total;
static int64_t items[MAX_LOOPS];
/* busy[loop][thread]; a thread's slot is handed out on its first chunk. */
static double busy[MAX_LOOPS][MAX_THREADS];
static _Thread_local int thread_slot = -1;
static int next_slot; /* under __atomic */

typedef struct {
  kiln_parallel_body_fn body;
  void *closure;
  int loop;
} timed_body;

static void run_timed(void *closure, int64_t begin, int64_t end) {
  timed_body *t = closure;
  if (thread_slot < 0)
    thread_slot = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED);
  double start = now_ns();
  t->body(t->closure, begin, end);
  if (thread_slot < MAX_THREADS)
    busy[t->loop][thread_slot] += now_ns() - start; /* one writer per slot */
}

static void timed_parallel_for(kiln_exec_context *context, int64_t n,
                               kiln_parallel_body_fn body, void *closure) {
  timing_context *c = (timing_context *)context;
  int loop = loop_index < MAX_LOOPS ? loop_index : MAX_LOOPS - 1;
  ++loop_index;
  timed_body t = {body, closure, loop};
  double start = now_ns();
  if (last_end > 0)
    gap[loop] += start - last_end;
  kiln_parallel_for(c->pool, n, run_timed, &t);
  last_end = now_ns();
  wall[loop] += last_end - start;
  items[loop] = n;
}

static size_t dtype_size(int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_FLOAT64: case KILN_DTYPE_INT64: case KILN_DTYPE_UINT64: return 8;
  case KILN_DTYPE_FLOAT32: case KILN_DTYPE_INT32: case KILN_DTYPE_UINT32: return 4;
  case KILN_DTYPE_FLOAT16: case KILN_DTYPE_BFLOAT16: case KILN_DTYPE_INT16:
  case KILN_DTYPE_UINT16: return 2;
  default: return 1;
  }
}

static void *make_buffer(const kiln_tensor_desc *t, int fill) {
  size_t count = 1;
  for (int32_t r = 0; r < t->rank; ++r)
    count *= (size_t)t->shape[r];
  void *p = calloc(count ? count : 1, dtype_size(t->dtype));
  for (size_t j = 0; fill && j < count; ++j) {
    if (t->dtype == KILN_DTYPE_FLOAT32) ((float *)p)[j] = (float)(j % 7) * 0.1f;
    else if (t->dtype == KILN_DTYPE_INT64) ((int64_t *)p)[j] = (int64_t)(j % 7);
    else if (t->dtype == KILN_DTYPE_INT32) ((int32_t *)p)[j] = (int32_t)(j % 7);
  }
  return p;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: loop_times MODEL.so [THREADS] [REPEAT]\n");
    return 2;
  }
  int threads = argc > 2 ? atoi(argv[2]) : 1;
  int repeat = argc > 3 ? atoi(argv[3]) : 20;
  if (threads < 1 || threads > MAX_THREADS || repeat < 1) {
    fprintf(stderr, "loop_times: THREADS must be 1-%d, REPEAT >= 1\n", MAX_THREADS);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "loop_times: %s\n", dlerror());
    return 1;
  }
  kiln_descriptor_fn get = (kiln_descriptor_fn)dlsym(lib, KILN_DESCRIPTOR_SYMBOL);
  if (!get) {
    fprintf(stderr, "loop_times: %s is not a kiln model\n", argv[1]);
    return 1;
  }
  const kiln_model_desc *d = get();
  if (d->abi_version != KILN_MODEL_ABI_VERSION || d->entry_executable >= d->num_executables ||
      !d->executables[d->entry_executable].entry) {
    fprintf(stderr, "loop_times: %s: model ABI version %u (expected %u) or no static host entry\n",
            argv[1], d->abi_version, KILN_MODEL_ABI_VERSION);
    return 1;
  }
  kiln_entry_fn entry = d->executables[d->entry_executable].entry;
  uint64_t scratch_size = 0;
  for (uint32_t m = 0; m < d->num_memory_needs; ++m)
    if (d->memory_needs[m].kind == KILN_MEMORY_HOST_SCRATCH)
      scratch_size = d->memory_needs[m].size;
  void **inputs = calloc(d->num_inputs + 1, sizeof(void *));
  void **outputs = calloc(d->num_outputs + 1, sizeof(void *));
  for (uint32_t i = 0; i < d->num_inputs; ++i)
    inputs[i] = make_buffer(&d->inputs[i], 1);
  for (uint32_t i = 0; i < d->num_outputs; ++i)
    outputs[i] = make_buffer(&d->outputs[i], 0);
  void *scratch = NULL;
  if (scratch_size && posix_memalign(&scratch, 1 << 21, scratch_size))
    return 1;

  kiln_thread_pool *pool = NULL;
  kiln_status status = kiln_thread_pool_create(threads, &pool);
  if (status) {
    fprintf(stderr, "loop_times: %s\n", kiln_status_message(status));
    return 1;
  }
  timing_context context = {
      {KILN_EXEC_CONTEXT_VERSION, threads, timed_parallel_for},
      kiln_thread_pool_context(pool)};
  for (int i = 0; i < 3 + repeat; ++i) {
    if (i == 3) { /* the first runs warm up: start counting */
      memset(wall, 0, sizeof wall);
      memset(gap, 0, sizeof gap);
      memset(busy, 0, sizeof busy);
    }
    loop_index = 0;
    last_end = 0;
    double start = now_ns();
    kiln_model_status s = entry(inputs, outputs, scratch, (kiln_exec_context *)&context);
    if (s) {
      fprintf(stderr, "loop_times: run failed with check %d\n", (int)s);
      return 1;
    }
    if (i >= 3)
      run_total += now_ns() - start;
    num_loops = loop_index;
  }
  double total = 0, gaps = 0;
  printf("%s: %d loops per run, %d thread(s), %d runs\n", d->name, num_loops, threads, repeat);
  printf("%5s %8s %10s %10s %10s\n", "loop", "items", "wall_us", "max_busy", "gap_before");
  if (num_loops > MAX_LOOPS)
    printf("(more than %d loops: the last line sums the rest)\n", MAX_LOOPS);
  for (int l = 0; l < num_loops && l < MAX_LOOPS; ++l) {
    double most = 0;
    for (int t = 0; t < MAX_THREADS; ++t)
      most = busy[l][t] > most ? busy[l][t] : most;
    printf("%5d %8lld %10.1f %10.1f %10.1f\n", l, (long long)items[l],
           wall[l] / repeat / 1e3, most / repeat / 1e3, gap[l] / repeat / 1e3);
    total += wall[l];
    gaps += gap[l];
  }
  printf("run %.3f ms: loops %.3f ms, between loops %.3f ms\n",
         run_total / repeat / 1e6, total / repeat / 1e6, gaps / repeat / 1e6);
  kiln_thread_pool_destroy(pool);
  return 0;
}
