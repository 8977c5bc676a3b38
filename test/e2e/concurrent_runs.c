/* Concurrent runs of one opened model (test_concurrency.py builds this with
 * the runtime's sources under ThreadSanitizer):
 *
 *   concurrent_runs MODEL.so THREADS RUNS POOL_THREADS OUT.bin IN0.bin ...
 *
 * The model has one input and one output. Thread t feeds IN<t>.bin (one input
 * file per thread, so runs that shared state would show in the outputs).
 * 1. single-threaded: one run per input file, the references (the first is
 *    written to OUT.bin for the caller to compare with onnxruntime);
 * 2. THREADS threads x RUNS runs of kiln_model_run on the one handle;
 * 3. THREADS threads x RUNS runs, each thread in its own kiln_run_context.
 * Every output of 2 and 3 must be bit-equal to its thread's reference. Prints
 * "ok" and exits 0, or says what differed and exits 1. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/runtime.h"

#define MAX_THREADS 16

static kiln_model *model;
static kiln_tensor_info in_info, out_info;
static void *inputs[MAX_THREADS], *refs[MAX_THREADS];
static size_t in_bytes, out_bytes;
static int runs;

static void *read_file(const char *path, size_t want) {
  FILE *f = fopen(path, "rb");
  void *data = malloc(want ? want : 1);
  if (!f || !data || fread(data, 1, want, f) != want) {
    fprintf(stderr, "cannot read %zu bytes from %s\n", want, path);
    exit(2);
  }
  fclose(f);
  return data;
}

/* One run; 0 when it succeeded, with the output in `out`. */
static int run_once(kiln_run_context *context, int t, void *out) {
  kiln_tensor in = {in_info.name, in_info.dtype, in_info.rank, in_info.shape,
                    inputs[t], in_bytes};
  kiln_tensor o = {out_info.name, KILN_DTYPE_UNDEFINED, 0, NULL, out,
                   out_bytes};
  kiln_status s = context
                      ? kiln_model_run_with_context(model, context, &in, 1, &o, 1)
                      : kiln_model_run(model, &in, 1, &o, 1);
  if (s) {
    fprintf(stderr, "thread %d: %s\n", t, kiln_status_message(s));
    kiln_status_free(s);
    return 1;
  }
  return 0;
}

typedef struct worker {
  int index, own_context, failures;
} worker;

static void *work(void *arg) {
  worker *w = (worker *)arg;
  kiln_run_context *context = NULL;
  if (w->own_context) {
    kiln_status s = kiln_run_context_create(model, &context);
    if (s) {
      fprintf(stderr, "thread %d: %s\n", w->index, kiln_status_message(s));
      kiln_status_free(s);
      w->failures = 1;
      return NULL;
    }
  }
  void *out = malloc(out_bytes);
  for (int r = 0; r < runs; ++r) {
    memset(out, 0xCD, out_bytes);
    if (run_once(context, w->index, out) || memcmp(out, refs[w->index], out_bytes)) {
      if (w->failures++ == 0)
        fprintf(stderr, "thread %d run %d (%s): output differs from the "
                        "single-threaded run\n",
                w->index, r, w->own_context ? "own context" : "kiln_model_run");
    }
  }
  free(out);
  kiln_run_context_destroy(context);
  return NULL;
}

static int phase(int threads, int own_context) {
  pthread_t ids[MAX_THREADS];
  worker workers[MAX_THREADS];
  for (int t = 0; t < threads; ++t) {
    workers[t] = (worker){t, own_context, 0};
    pthread_create(&ids[t], NULL, work, &workers[t]);
  }
  int failures = 0;
  for (int t = 0; t < threads; ++t) {
    pthread_join(ids[t], NULL);
    failures += workers[t].failures;
  }
  return failures;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: concurrent_runs MODEL THREADS RUNS POOL_THREADS "
                    "OUT.bin IN0.bin...\n");
    return 2;
  }
  int threads = atoi(argv[2]);
  runs = atoi(argv[3]);
  if (threads < 1 || threads > MAX_THREADS || argc != 6 + threads) {
    fprintf(stderr, "need 1-%d threads and one input file each\n", MAX_THREADS);
    return 2;
  }
  kiln_model_options options;
  kiln_model_options_init(&options);
  options.num_threads = atoi(argv[4]);
  kiln_status s = kiln_model_open(argv[1], &options, &model);
  if (!s && (kiln_model_num_inputs(model) != 1 || kiln_model_num_outputs(model) != 1)) {
    fprintf(stderr, "the model must have one input and one output\n");
    return 2;
  }
  if (!s)
    s = kiln_model_input_info(model, 0, &in_info);
  if (!s)
    s = kiln_model_output_info(model, 0, &out_info);
  if (s) {
    fprintf(stderr, "%s\n", kiln_status_message(s));
    return 1;
  }
  in_bytes = kiln_tensor_info_byte_size(&in_info);
  out_bytes = kiln_tensor_info_byte_size(&out_info);
  for (int t = 0; t < threads; ++t) {
    inputs[t] = read_file(argv[6 + t], in_bytes);
    refs[t] = malloc(out_bytes);
    if (run_once(NULL, t, refs[t]))
      return 1;
  }
  FILE *f = fopen(argv[5], "wb");
  if (!f || fwrite(refs[0], 1, out_bytes, f) != out_bytes || fclose(f)) {
    fprintf(stderr, "cannot write %s\n", argv[5]);
    return 2;
  }
  int failures = phase(threads, 0) + phase(threads, 1);
  kiln_model_close(model);
  for (int t = 0; t < threads; ++t) {
    free(inputs[t]);
    free(refs[t]);
  }
  if (failures) {
    fprintf(stderr, "%d runs differed\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
