/* Runs of a model with symbolic dims at several sizes in one process, for the
 * tests of its scratch arena (test_dynamic_arena.py builds this with the
 * runtime's sources under ThreadSanitizer, as concurrent_runs.c is built):
 *
 *   dynamic_arena MODEL.so DIR POOL_THREADS THREADS ROUNDS SCRATCH RUN...
 *
 * A RUN is the symbols' values in the model's symbol order, joined by 'x'
 * ("130", "2x7"); its inputs are DIR/RUN/<input name>.bin (raw elements, each
 * symbolic dim the RUN's value), its outputs are written to DIR/RUN/out<k>.bin
 * (output k, by index).
 *
 * SCRATCH = 0: 1. one run per RUN, in order, through kiln_model_run (the
 *    arena grows at each larger size and is kept for the smaller ones); their
 *    outputs are written and are the references;
 *    2. THREADS threads x ROUNDS passes over the RUNs through kiln_model_run
 *    on the one handle, thread t starting at RUN t, so that the threads run
 *    different sizes at once;
 *    3. the same, each thread in its own kiln_run_context.
 *    Every output of 2 and 3 must be bit-equal to its reference. Prints "ok".
 * SCRATCH > 0: the model is opened with options.scratch of SCRATCH bytes
 *    (followed by a canary the runs must leave alone); one run per RUN, in
 *    order, through kiln_model_run, each printing "RUN ok" (outputs written)
 *    or "RUN error: <status>".
 * Exits 0, or 1 saying what went wrong (2: bad arguments or files). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/runtime.h"

#define MAX_THREADS 16
#define MAX_RUNS 32
#define MAX_TENSORS 8
#define MAX_SYMBOLS 4
#define MAX_RANK 8
#define CANARY 4096

typedef struct run_spec {
  const char *label;
  int64_t symbols[MAX_SYMBOLS];
  int64_t in_shape[MAX_TENSORS][MAX_RANK], out_shape[MAX_TENSORS][MAX_RANK];
  void *in[MAX_TENSORS], *ref[MAX_TENSORS];
  size_t in_bytes[MAX_TENSORS], out_bytes[MAX_TENSORS];
} run_spec;

static kiln_model *model;
static size_t n_in, n_out, n_runs;
static kiln_tensor_info in_info[MAX_TENSORS], out_info[MAX_TENSORS];
static run_spec specs[MAX_RUNS];
static int rounds;

static void die(const char *what, const char *detail) {
  fprintf(stderr, "%s%s\n", what, detail ? detail : "");
  exit(2);
}

/* `info`'s shape with each symbolic dim replaced by the run's value; the
 * bytes of such a tensor. */
static size_t concrete(const kiln_tensor_info *info, const int64_t *symbols,
                       int64_t *shape) {
  size_t elements = 1;
  for (int32_t d = 0; d < info->rank; ++d) {
    int64_t dim = info->shape[d];
    shape[d] = dim < 0 ? symbols[-(dim + 1)] : dim;
    elements *= (size_t)shape[d];
  }
  return elements * kiln_dtype_size(info->dtype);
}

static void *read_file(const char *path, size_t want) {
  FILE *f = fopen(path, "rb");
  void *data = malloc(want ? want : 1);
  if (!f || !data || fread(data, 1, want, f) != want || fgetc(f) != EOF)
    die("cannot read exactly the expected bytes from ", path);
  fclose(f);
  return data;
}

static void write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f))
    die("cannot write ", path);
}

/* One run of spec `r` into `outs`; NULL when it succeeded, else the status
 * (the caller frees it). */
static kiln_status run_once(kiln_run_context *context, const run_spec *r,
                            void **outs) {
  kiln_tensor in[MAX_TENSORS], out[MAX_TENSORS];
  for (size_t i = 0; i < n_in; ++i)
    in[i] = (kiln_tensor){in_info[i].name, in_info[i].dtype, in_info[i].rank,
                          r->in_shape[i], r->in[i], r->in_bytes[i]};
  for (size_t k = 0; k < n_out; ++k)
    out[k] = (kiln_tensor){out_info[k].name, KILN_DTYPE_UNDEFINED, 0, NULL,
                           outs[k], r->out_bytes[k]};
  kiln_status s = context ? kiln_model_run_with_context(model, context, in,
                                                        n_in, out, n_out)
                          : kiln_model_run(model, in, n_in, out, n_out);
  if (s)
    return s;
  for (size_t k = 0; k < n_out; ++k) /* the dims the run reports */
    for (int32_t d = 0; d < out[k].rank; ++d)
      if (out[k].shape[d] != r->out_shape[k][d]) {
        fprintf(stderr, "run %s: output %zu dim %d is %lld, want %lld\n",
                r->label, k, d, (long long)out[k].shape[d],
                (long long)r->out_shape[k][d]);
        exit(1);
      }
  return NULL;
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
  void *outs[MAX_TENSORS];
  for (size_t k = 0; k < n_out; ++k) {
    size_t most = 1;
    for (size_t r = 0; r < n_runs; ++r)
      most = specs[r].out_bytes[k] > most ? specs[r].out_bytes[k] : most;
    outs[k] = malloc(most);
  }
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < n_runs; ++i) {
      const run_spec *r = &specs[(i + (size_t)w->index) % n_runs];
      for (size_t k = 0; k < n_out; ++k)
        memset(outs[k], 0xCD, r->out_bytes[k]);
      kiln_status s = run_once(context, r, outs);
      int differs = 0;
      for (size_t k = 0; !s && k < n_out; ++k)
        differs |= memcmp(outs[k], r->ref[k], r->out_bytes[k]) != 0;
      if ((s || differs) && w->failures++ == 0)
        fprintf(stderr, "thread %d (%s) round %d run %s: %s\n", w->index,
                w->own_context ? "own context" : "kiln_model_run", round,
                r->label,
                s ? kiln_status_message(s)
                  : "output differs from the single-threaded run");
      kiln_status_free(s);
    }
  for (size_t k = 0; k < n_out; ++k)
    free(outs[k]);
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
  if (argc < 8)
    die("usage: dynamic_arena MODEL DIR POOL_THREADS THREADS ROUNDS SCRATCH "
        "RUN...",
        NULL);
  const char *dir = argv[2];
  int threads = atoi(argv[4]);
  rounds = atoi(argv[5]);
  size_t scratch_size = (size_t)strtoull(argv[6], NULL, 10);
  n_runs = (size_t)(argc - 7);
  if (threads < 1 || threads > MAX_THREADS || n_runs > MAX_RUNS)
    die("need 1-16 threads and at most 32 runs", NULL);

  kiln_model_options options;
  kiln_model_options_init(&options);
  options.num_threads = atoi(argv[3]);
  unsigned char *scratch = NULL;
  if (scratch_size > 0) {
    /* Page-aligned: more than any model's scratch alignment asks. */
    if (posix_memalign((void **)&scratch, 4096, scratch_size + CANARY))
      die("cannot allocate options.scratch", NULL);
    memset(scratch, 0x5A, scratch_size + CANARY);
    options.scratch = scratch;
    options.scratch_size = scratch_size;
  }
  kiln_status s = kiln_model_open(argv[1], &options, &model);
  if (s) {
    fprintf(stderr, "%s\n", kiln_status_message(s));
    return 1;
  }
  n_in = kiln_model_num_inputs(model);
  n_out = kiln_model_num_outputs(model);
  size_t n_symbols = kiln_model_num_symbols(model);
  if (n_in > MAX_TENSORS || n_out > MAX_TENSORS || n_symbols < 1 ||
      n_symbols > MAX_SYMBOLS)
    die("the model must have symbols and at most 8 inputs and outputs", NULL);
  for (size_t i = 0; i < n_in; ++i)
    if ((s = kiln_model_input_info(model, i, &in_info[i])) ||
        in_info[i].rank > MAX_RANK)
      die("bad input", NULL);
  for (size_t k = 0; k < n_out; ++k)
    if ((s = kiln_model_output_info(model, k, &out_info[k])) ||
        out_info[k].rank > MAX_RANK)
      die("bad output", NULL);

  char path[4096];
  for (size_t r = 0; r < n_runs; ++r) {
    run_spec *spec = &specs[r];
    spec->label = argv[7 + r];
    const char *at = spec->label;
    for (size_t j = 0; j < n_symbols; ++j) {
      char *end = NULL;
      spec->symbols[j] = strtoll(at, &end, 10);
      if (end == at || (j + 1 < n_symbols ? *end != 'x' : *end != '\0'))
        die("a RUN gives each symbol's value, joined by 'x': ", spec->label);
      at = end + 1;
    }
    for (size_t i = 0; i < n_in; ++i) {
      spec->in_bytes[i] =
          concrete(&in_info[i], spec->symbols, spec->in_shape[i]);
      snprintf(path, sizeof(path), "%s/%s/%s.bin", dir, spec->label,
               in_info[i].name);
      spec->in[i] = read_file(path, spec->in_bytes[i]);
    }
    for (size_t k = 0; k < n_out; ++k)
      spec->out_bytes[k] =
          concrete(&out_info[k], spec->symbols, spec->out_shape[k]);
  }

  /* 1 (or the caller's arena): each run once, in order, its outputs written. */
  for (size_t r = 0; r < n_runs; ++r) {
    run_spec *spec = &specs[r];
    for (size_t k = 0; k < n_out; ++k) {
      spec->ref[k] = malloc(spec->out_bytes[k] ? spec->out_bytes[k] : 1);
      memset(spec->ref[k], 0xCD, spec->out_bytes[k]);
    }
    s = run_once(NULL, spec, spec->ref);
    if (s && scratch_size == 0) {
      fprintf(stderr, "run %s: %s\n", spec->label, kiln_status_message(s));
      return 1;
    }
    if (s) {
      printf("%s error: %s\n", spec->label, kiln_status_message(s));
      kiln_status_free(s);
      continue;
    }
    for (size_t k = 0; k < n_out; ++k) {
      snprintf(path, sizeof(path), "%s/%s/out%zu.bin", dir, spec->label, k);
      write_file(path, spec->ref[k], spec->out_bytes[k]);
    }
    if (scratch_size > 0)
      printf("%s ok\n", spec->label);
  }
  int failures = 0;
  if (scratch_size == 0)
    failures = phase(threads, 0) + phase(threads, 1);
  kiln_model_close(model);
  for (size_t i = scratch_size; scratch && i < scratch_size + CANARY; ++i)
    if (scratch[i] != 0x5A) {
      fprintf(stderr, "byte %zu past options.scratch was written\n", i);
      return 1;
    }
  free(scratch);
  for (size_t r = 0; r < n_runs; ++r)
    for (size_t k = 0; k < MAX_TENSORS; ++k) {
      free(specs[r].in[k]);
      free(specs[r].ref[k]);
    }
  if (failures) {
    fprintf(stderr, "%d threads saw runs fail or differ\n", failures);
    return 1;
  }
  if (scratch_size == 0)
    printf("ok\n");
  return 0;
}
