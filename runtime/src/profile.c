/*===- runtime/src/profile.c - KILN_PROFILE: where a model's time goes -----===*
 *
 * With the environment variable KILN_PROFILE set when a model is opened, its
 * runs are timed: each run, each kernel (one parallel_for of the generated
 * code: an outlined parallel loop, named by the ONNX nodes it computes from
 * the descriptor's kernel table, model_abi.h) on the thread that called it,
 * and each chunk of a kernel on the thread that ran it. At exit the events go
 * to the file KILN_PROFILE names as a Chrome trace (chrome://tracing,
 * https://ui.perfetto.dev), or with KILN_PROFILE=- the kernels taking the most
 * time are printed to stderr.
 *
 * Off (KILN_PROFILE unset), nothing here runs: model.c gives run contexts the
 * plain parallel_for and checks one pointer per run.
 *
 * Events go into one preallocated array (an atomic counter hands out slots;
 * no lock on the hot path); past KILN_PROFILE_MAX_EVENTS they are counted as
 * dropped. Kernel names are copied at open (a model may be closed and its
 * library unloaded before the trace is written).
 *===----------------------------------------------------------------------===*/
#if !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime, strdup */
#endif

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#define KILN_PROFILE_MAX_EVENTS (1 << 21)

enum { KILN_EVENT_RUN = 0, KILN_EVENT_KERNEL = 1, KILN_EVENT_CHUNK = 2 };

typedef struct {
  const void *key; /* a kernel's body, or a run's label */
  int64_t start_ns;
  int64_t end_ns;
  int64_t a, b; /* kernel: iterations; chunk: [begin, end) */
  int32_t tid;
  int32_t kind;
} kiln_profile_event;

typedef struct {
  const void *body;
  char *name;
} kiln_profile_name;

static pthread_once_t kiln_profile_once = PTHREAD_ONCE_INIT;
static char *kiln_profile_path; /* NULL: profiling is off */
static kiln_profile_event *kiln_profile_events;
static atomic_int_fast64_t kiln_profile_count;
static int64_t kiln_profile_origin;
static atomic_int kiln_profile_next_tid;
static _Thread_local int32_t kiln_profile_tid = -1;

static pthread_mutex_t kiln_profile_lock = PTHREAD_MUTEX_INITIALIZER;
static kiln_profile_name *kiln_profile_names; /* guarded by the lock */
static size_t kiln_profile_num_names, kiln_profile_cap_names;

int64_t kiln_profile_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void kiln_profile_write(void);

static void kiln_profile_init(void) {
  const char *path = getenv("KILN_PROFILE");
  if (!path || !*path)
    return;
  kiln_profile_events = (kiln_profile_event *)malloc(
      sizeof(kiln_profile_event) * (size_t)KILN_PROFILE_MAX_EVENTS);
  kiln_profile_path = strdup(path);
  if (!kiln_profile_events || !kiln_profile_path) {
    fprintf(stderr, "kiln: KILN_PROFILE: out of memory, not profiling\n");
    free(kiln_profile_events);
    free(kiln_profile_path);
    kiln_profile_events = NULL;
    kiln_profile_path = NULL;
    return;
  }
  kiln_profile_origin = kiln_profile_now();
  atexit(kiln_profile_write);
}

int kiln_profile_enabled(void) {
  pthread_once(&kiln_profile_once, kiln_profile_init);
  return kiln_profile_path != NULL;
}

static int32_t kiln_profile_thread(void) {
  if (kiln_profile_tid < 0)
    kiln_profile_tid = atomic_fetch_add(&kiln_profile_next_tid, 1);
  return kiln_profile_tid;
}

static void kiln_profile_record(int32_t kind, const void *key, int64_t start,
                                int64_t end, int64_t a, int64_t b) {
  int_fast64_t slot =
      atomic_fetch_add_explicit(&kiln_profile_count, 1, memory_order_relaxed);
  if (slot >= KILN_PROFILE_MAX_EVENTS)
    return;
  kiln_profile_event *e = &kiln_profile_events[slot];
  e->key = key;
  e->start_ns = start;
  e->end_ns = end;
  e->a = a;
  e->b = b;
  e->tid = kiln_profile_thread();
  e->kind = kind;
}

static int kiln_profile_add_name(const void *body, const char *name) {
  if (kiln_profile_num_names == kiln_profile_cap_names) {
    size_t cap = kiln_profile_cap_names ? 2 * kiln_profile_cap_names : 64;
    kiln_profile_name *grown =
        (kiln_profile_name *)realloc(kiln_profile_names, cap * sizeof(*grown));
    if (!grown)
      return 0;
    kiln_profile_names = grown;
    kiln_profile_cap_names = cap;
  }
  char *copy = strdup(name);
  if (!copy)
    return 0;
  kiln_profile_names[kiln_profile_num_names].body = body;
  kiln_profile_names[kiln_profile_num_names].name = copy;
  ++kiln_profile_num_names;
  return 1;
}

const char *kiln_profile_register_model(const kiln_model_desc *desc) {
  pthread_mutex_lock(&kiln_profile_lock);
  /* The run label: the model's name, copied; its address keys run events. */
  char label[256];
  snprintf(label, sizeof(label), "run %s", desc->name ? desc->name : "?");
  const char *result = NULL;
  if (kiln_profile_add_name(NULL, label)) {
    kiln_profile_name *entry = &kiln_profile_names[kiln_profile_num_names - 1];
    entry->body = entry->name; /* run events are keyed by their label */
    result = entry->name;
  }
  if (desc->entry_executable < desc->num_executables) {
    const kiln_executable_desc *x = &desc->executables[desc->entry_executable];
    const void *const *bodies = (const void *const *)x->data;
    if (x->format == KILN_EXECUTABLE_HOST && bodies)
      for (uint32_t k = 0; k < x->num_kernels; ++k)
        if (bodies[k])
          kiln_profile_add_name(bodies[k], x->kernel_names[k]);
  }
  pthread_mutex_unlock(&kiln_profile_lock);
  return result;
}

void kiln_profile_run(const char *label, int64_t start) {
  kiln_profile_record(KILN_EVENT_RUN, label, start, kiln_profile_now(), 0, 0);
}

typedef struct {
  kiln_parallel_body_fn body;
  void *closure;
} kiln_profile_closure;

static void kiln_profile_chunk(void *closure, int64_t begin, int64_t end) {
  const kiln_profile_closure *c = (const kiln_profile_closure *)closure;
  int64_t start = kiln_profile_now();
  c->body(c->closure, begin, end);
  kiln_profile_record(KILN_EVENT_CHUNK, (const void *)c->body, start,
                      kiln_profile_now(), begin, end);
}

void kiln_profile_parallel_for(kiln_thread_pool *pool, int64_t n,
                               kiln_parallel_body_fn body, void *closure) {
  kiln_profile_closure c = {body, closure};
  int64_t start = kiln_profile_now();
  kiln_thread_pool_parallel_for(pool, n, kiln_profile_chunk, &c);
  kiln_profile_record(KILN_EVENT_KERNEL, (const void *)body, start,
                      kiln_profile_now(), n, 0);
}

/*===----------------------------------------------------------------------===*
 * Output
 *===----------------------------------------------------------------------===*/

static int kiln_profile_by_key(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const kiln_profile_name *)a)->body;
  uintptr_t y = (uintptr_t)((const kiln_profile_name *)b)->body;
  return (x > y) - (x < y);
}

/* The names, sorted by key (kiln_profile_write sorts them first). */
static const char *kiln_profile_lookup(const void *key, char *buf,
                                       size_t size) {
  kiln_profile_name wanted = {key, NULL};
  const kiln_profile_name *found = (const kiln_profile_name *)bsearch(
      &wanted, kiln_profile_names, kiln_profile_num_names,
      sizeof(kiln_profile_name), kiln_profile_by_key);
  if (found)
    return found->name;
  snprintf(buf, size, "kernel at %p", key);
  return buf;
}

static void kiln_profile_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

typedef struct {
  const void *key;
  int64_t total_ns;
  int64_t calls;
} kiln_profile_total;

static int kiln_profile_by_time(const void *a, const void *b) {
  int64_t x = ((const kiln_profile_total *)a)->total_ns;
  int64_t y = ((const kiln_profile_total *)b)->total_ns;
  return (x < y) - (x > y);
}

static void kiln_profile_summary(size_t count, int64_t dropped) {
  kiln_profile_total *totals =
      (kiln_profile_total *)calloc(count ? count : 1, sizeof(*totals));
  if (!totals)
    return;
  size_t used = 0;
  int64_t runs = 0, run_ns = 0, kernel_ns = 0;
  for (size_t i = 0; i < count; ++i) {
    const kiln_profile_event *e = &kiln_profile_events[i];
    if (e->kind == KILN_EVENT_RUN) {
      ++runs;
      run_ns += e->end_ns - e->start_ns;
      continue;
    }
    if (e->kind != KILN_EVENT_KERNEL)
      continue;
    size_t j = 0;
    while (j < used && totals[j].key != e->key)
      ++j;
    if (j == used)
      totals[used++].key = e->key;
    totals[j].total_ns += e->end_ns - e->start_ns;
    kernel_ns += e->end_ns - e->start_ns;
    ++totals[j].calls;
  }
  qsort(totals, used, sizeof(*totals), kiln_profile_by_time);
  fprintf(stderr,
          "kiln profile: %" PRId64 " runs, %.3f ms in runs; kernels by time "
          "(parallel loops; the rest of a run is sequential code):\n",
          runs, (double)run_ns / 1e6);
  fprintf(stderr, "  %10s %7s %10s %6s  %s\n", "total ms", "calls", "mean us",
          "%run", "kernel (ONNX nodes)");
  for (size_t j = 0; j < used && j < 20; ++j) {
    char buf[64];
    fprintf(stderr, "  %10.3f %7" PRId64 " %10.1f %5.1f%%  %s\n",
            (double)totals[j].total_ns / 1e6, totals[j].calls,
            (double)totals[j].total_ns / 1e3 / (double)totals[j].calls,
            run_ns ? 100.0 * (double)totals[j].total_ns / (double)run_ns : 0.0,
            kiln_profile_lookup(totals[j].key, buf, sizeof(buf)));
  }
  if (used > 20)
    fprintf(stderr, "  ... %zu more kernels\n", used - 20);
  /* Kernels run inside runs, one at a time per run: the rest is the entry's
   * sequential code (ops too small to split over threads). */
  if (run_ns >= kernel_ns)
    fprintf(stderr, "  %10.3f %7s %10s %5.1f%%  (sequential code between kernels)\n",
            (double)(run_ns - kernel_ns) / 1e6, "", "",
            run_ns ? 100.0 * (double)(run_ns - kernel_ns) / (double)run_ns : 0.0);
  if (dropped)
    fprintf(stderr, "  (%" PRId64 " events past the first %d dropped)\n",
            dropped, KILN_PROFILE_MAX_EVENTS);
  free(totals);
}

static void kiln_profile_write(void) {
  int64_t recorded = (int64_t)atomic_load(&kiln_profile_count);
  size_t count = recorded > KILN_PROFILE_MAX_EVENTS
                     ? (size_t)KILN_PROFILE_MAX_EVENTS
                     : (size_t)recorded;
  int64_t dropped = recorded - (int64_t)count;
  pthread_mutex_lock(&kiln_profile_lock);
  if (kiln_profile_num_names)
    qsort(kiln_profile_names, kiln_profile_num_names, sizeof(kiln_profile_name),
          kiln_profile_by_key);
  if (strcmp(kiln_profile_path, "-") == 0) {
    kiln_profile_summary(count, dropped);
    pthread_mutex_unlock(&kiln_profile_lock);
    return;
  }
  FILE *f = fopen(kiln_profile_path, "w");
  if (!f) {
    fprintf(stderr, "kiln: KILN_PROFILE: cannot write '%s'\n",
            kiln_profile_path);
    pthread_mutex_unlock(&kiln_profile_lock);
    return;
  }
  static const char *const kinds[] = {"run", "kernel", "chunk"};
  fprintf(f,
          "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"producer\": "
          "\"kiln\", \"dropped_events\": %" PRId64 "},\n"
          "\"traceEvents\": [\n",
          dropped);
  int32_t threads = atomic_load(&kiln_profile_next_tid);
  for (int32_t t = 0; t < threads; ++t)
    fprintf(f,
            "%s{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, "
            "\"tid\": %d, \"args\": {\"name\": \"kiln thread %d\"}}",
            t ? ",\n" : "", (int)t, (int)t);
  for (size_t i = 0; i < count; ++i) {
    const kiln_profile_event *e = &kiln_profile_events[i];
    char buf[64];
    fputs(i || threads ? ",\n{\"name\": " : "{\"name\": ", f);
    kiln_profile_json_string(f, kiln_profile_lookup(e->key, buf, sizeof(buf)));
    fprintf(f,
            ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": 1, \"tid\": %d, "
            "\"ts\": %.3f, \"dur\": %.3f",
            kinds[e->kind], (int)e->tid,
            (double)(e->start_ns - kiln_profile_origin) / 1e3,
            (double)(e->end_ns - e->start_ns) / 1e3);
    if (e->kind == KILN_EVENT_KERNEL)
      fprintf(f, ", \"args\": {\"iterations\": %" PRId64 "}", e->a);
    else if (e->kind == KILN_EVENT_CHUNK)
      fprintf(f, ", \"args\": {\"begin\": %" PRId64 ", \"end\": %" PRId64 "}",
              e->a, e->b);
    fputc('}', f);
  }
  fputs("\n]}\n", f);
  if (fclose(f) != 0)
    fprintf(stderr, "kiln: KILN_PROFILE: cannot write '%s'\n",
            kiln_profile_path);
  pthread_mutex_unlock(&kiln_profile_lock);
}
