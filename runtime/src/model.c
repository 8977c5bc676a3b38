/*===- runtime/src/model.c - Opening, describing and running models --------===*/
#if !defined(_GNU_SOURCE) && defined(__linux__)
#define _GNU_SOURCE
#endif

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gpu/gpu.h"
#include "internal.h"

/* What one opened model shares between its runs: the loaded code and
 * weights (the library), the descriptor, the thread pool, and the run
 * contexts kiln_model_run() takes and gives back. */
struct kiln_model {
  const kiln_model_desc *desc;
  void *library; /* dlopen handle, or NULL for kiln_model_open_descriptor */
  kiln_thread_pool *pool;
  kiln_entry_fn entry;   /* the host executable's entry (static shapes) */
  kiln_dynamic_entry_fn dynamic_entry; /* ... or a model with symbols' */
  /* A model run on a device: its back end and the back end's model. */
  const kiln_gpu_backend *backend;
  void *gpu;
  int no_device;         /* opened with device "none": described, never run */
  uint64_t scratch_size; /* the host-scratch need (0 when none) */
  size_t scratch_align;  /* at least KILN_ALIGNMENT */
  void *caller_scratch;  /* options.scratch, or NULL */
  size_t caller_scratch_size; /* options.scratch_size */
  const char *variant;   /* the variant opened from a table, or "" */
  const kiln_artifact_desc *artifact; /* that table, or NULL */
  const char *profile_label; /* KILN_PROFILE is on: the runs' label */

  pthread_mutex_t lock;    /* guards the two fields below */
  int caller_scratch_held; /* a context uses caller_scratch */
  kiln_run_context *idle;  /* contexts for kiln_model_run, a stack */
};

/* Everything one run writes, so that runs on one model may overlap. */
struct kiln_run_context {
  /* First: the kiln_exec_context the entry gets (kiln/parallel.h). */
  kiln_exec_context_header header;
  kiln_model *model;
  void *scratch;
  int owns_scratch; /* 0: no scratch, or the caller's arena */
  /* The arena's bytes: the model's scratch_size, or more once a run of a
   * model with symbols needed more (the shape function's size; the arena
   * grows and stays grown). */
  uint64_t scratch_capacity;
  void **input_ptrs;
  void **output_ptrs;
  unsigned char *input_seen;
  unsigned char *output_seen; /* 1 given by caller, 2 allocated by the runtime */
  /* A model with symbols (docs/dynamic-shapes.md): each symbol's value in
   * this run (-1 until bound), the input that bound it (for messages), and
   * each output's dims as the shape function gave them. */
  int64_t *symbols;
  uint32_t *symbol_input;
  int32_t *symbol_dim;
  int64_t *output_dims;
  int64_t **output_dim_ptrs;
  /* Run outputs (dims naming a run symbol, KILN_SYMBOL_RUN): the slot each
   * one's `outputs[j]` points at, where the entry stores the buffer it
   * allocated with malloc(); NULL when the run does not hold one. */
  void **run_slots;
  void *gpu; /* a device model's back-end context: arena, copies, commands */
  atomic_flag running;        /* a run is using this context */
  kiln_run_context *next;     /* in model->idle */
};

/*===----------------------------------------------------------------------===*
 * Tensor sizes
 *===----------------------------------------------------------------------===*/

static int64_t kiln_num_elements(int32_t rank, const int64_t *shape) {
  int64_t count = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (shape[i] < 0)
      return -1;
    if (shape[i] != 0 && count > INT64_MAX / shape[i])
      return -1;
    count *= shape[i];
  }
  return count;
}

/* 0 on overflow or unknown dtype; *ok tells them apart from a real 0. */
static size_t kiln_byte_size(kiln_dtype dtype, int32_t rank,
                             const int64_t *shape, int *ok) {
  size_t elem = kiln_dtype_size(dtype);
  int64_t count = rank < 0 || (rank > 0 && !shape) ? -1
                                                    : kiln_num_elements(rank, shape);
  *ok = 0;
  if (elem == 0 || count < 0)
    return 0;
  if ((uint64_t)count > (uint64_t)SIZE_MAX / elem)
    return 0;
  *ok = 1;
  return (size_t)count * elem;
}

int64_t kiln_tensor_info_num_elements(const kiln_tensor_info *info) {
  if (!info || info->rank < 0 || (info->rank > 0 && !info->shape))
    return -1;
  return kiln_num_elements(info->rank, info->shape);
}

size_t kiln_tensor_info_byte_size(const kiln_tensor_info *info) {
  int ok;
  return info ? kiln_byte_size(info->dtype, info->rank, info->shape, &ok) : 0;
}

void kiln_tensor_free_data(kiln_tensor *tensor) {
  if (!tensor)
    return;
  free(tensor->data);
  tensor->data = NULL;
}

static size_t kiln_desc_byte_size(const kiln_tensor_desc *t) {
  int ok;
  return kiln_byte_size((kiln_dtype)t->dtype, t->rank, t->shape, &ok);
}

size_t kiln_tensor_desc_byte_size(const kiln_tensor_desc *t) {
  return kiln_desc_byte_size(t);
}

int kiln_tensor_desc_fits(const kiln_tensor_desc *t) {
  /* A symbolic dim counts as 1 here: each run's size is checked when the
   * inputs are bound. */
  size_t elem = kiln_dtype_size((kiln_dtype)t->dtype);
  if (elem == 0 || t->rank < 0 || (t->rank > 0 && !t->shape))
    return 0;
  uint64_t count = 1;
  for (int32_t i = 0; i < t->rank; ++i) {
    int64_t d = KILN_DIM_IS_SYMBOL(t->shape[i]) ? 1 : t->shape[i];
    if (d != 0 && count > (uint64_t)INT64_MAX / (uint64_t)d)
      return 0;
    count *= (uint64_t)d;
  }
  return count <= (uint64_t)SIZE_MAX / elem;
}

/*===----------------------------------------------------------------------===*
 * Options and memory
 *===----------------------------------------------------------------------===*/

void kiln_model_options_init(kiln_model_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof(*options));
}

static void *kiln_aligned_alloc(size_t size) {
  void *p = NULL;
  if (posix_memalign(&p, KILN_ALIGNMENT, size ? size : 1) != 0)
    return NULL;
  return p;
}

/* The scratch arena: from 2 MiB up, 2 MiB aligned and (Linux) advised to
 * transparent huge pages, which the usual THP "madvise" mode grants only on
 * request: a multi-megabyte arena in 4 KiB pages misses the TLB every few
 * cache lines in the memory-bound layers. Freed with free(). */
static void *kiln_arena_alloc(size_t size, size_t alignment) {
  if (size < KILN_HUGE_PAGE) {
    void *p = NULL;
    return posix_memalign(&p, alignment, size ? size : 1) == 0 ? p : NULL;
  }
  /* Rounding up must not wrap: a size near SIZE_MAX would become 0. */
  if (size > SIZE_MAX - (KILN_HUGE_PAGE - 1))
    return NULL;
  size_t rounded = (size + KILN_HUGE_PAGE - 1) & ~(KILN_HUGE_PAGE - 1);
  void *p = NULL;
  if (posix_memalign(&p, KILN_HUGE_PAGE, rounded) != 0)
    return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  (void)madvise(p, rounded, MADV_HUGEPAGE); /* advice: may be refused */
#endif
  return p;
}

/*===----------------------------------------------------------------------===*
 * Run contexts
 *===----------------------------------------------------------------------===*/

/* The entry's parallel loops run on the model's one pool, whichever context
 * they come from; a pool busy with another run's loop runs this one on the
 * calling thread (thread_pool.c). */
static void kiln_run_context_parallel_for(kiln_exec_context *context, int64_t n,
                                          kiln_parallel_body_fn body,
                                          void *closure) {
  kiln_run_context *rc = (kiln_run_context *)(void *)context;
  kiln_thread_pool_parallel_for(rc->model->pool, n, body, closure);
}

/* The same with KILN_PROFILE on (profile.c). */
static void kiln_run_context_parallel_for_profiled(kiln_exec_context *context,
                                                   int64_t n,
                                                   kiln_parallel_body_fn body,
                                                   void *closure) {
  kiln_run_context *rc = (kiln_run_context *)(void *)context;
  kiln_profile_parallel_for(rc->model->pool, n, body, closure);
}

static void kiln_context_free(kiln_run_context *rc) {
  if (!rc)
    return;
  if (rc->owns_scratch) {
    free(rc->scratch);
  } else if (rc->scratch) { /* the caller's arena: free for the next one */
    pthread_mutex_lock(&rc->model->lock);
    rc->model->caller_scratch_held = 0;
    pthread_mutex_unlock(&rc->model->lock);
  }
  if (rc->gpu)
    rc->model->backend->context_destroy(rc->gpu);
  free(rc->input_ptrs);
  free(rc->output_ptrs);
  free(rc->input_seen);
  free(rc->output_seen);
  free(rc->symbols);
  free(rc->symbol_input);
  free(rc->symbol_dim);
  free(rc->output_dims);
  free(rc->output_dim_ptrs);
  free(rc->run_slots);
  free(rc);
}

static kiln_status kiln_context_new(kiln_model *model,
                                    kiln_run_context **out_context) {
  const kiln_model_desc *desc = model->desc;
  kiln_run_context *rc = (kiln_run_context *)calloc(1, sizeof(*rc));
  if (!rc)
    return kiln_out_of_memory_status();
  rc->header.version = KILN_EXEC_CONTEXT_VERSION;
  rc->header.num_threads =
      kiln_exec_context_num_threads(kiln_thread_pool_context(model->pool));
  rc->header.parallel_for = model->profile_label
                                ? kiln_run_context_parallel_for_profiled
                                : kiln_run_context_parallel_for;
  rc->model = model;
  atomic_flag_clear(&rc->running);
  size_t ni = desc->num_inputs, no = desc->num_outputs;
  rc->input_ptrs = (void **)calloc(ni ? ni : 1, sizeof(void *));
  rc->output_ptrs = (void **)calloc(no ? no : 1, sizeof(void *));
  rc->input_seen = (unsigned char *)calloc(ni ? ni : 1, 1);
  rc->output_seen = (unsigned char *)calloc(no ? no : 1, 1);
  if (!rc->input_ptrs || !rc->output_ptrs || !rc->input_seen ||
      !rc->output_seen) {
    kiln_context_free(rc);
    return kiln_out_of_memory_status();
  }
  if (desc->num_symbols > 0) {
    size_t ns = desc->num_symbols, dims = 0;
    for (uint32_t i = 0; i < desc->num_outputs; ++i)
      dims += (size_t)desc->outputs[i].rank;
    rc->symbols = (int64_t *)calloc(ns, sizeof(int64_t));
    rc->symbol_input = (uint32_t *)calloc(ns, sizeof(uint32_t));
    rc->symbol_dim = (int32_t *)calloc(ns, sizeof(int32_t));
    rc->output_dims = (int64_t *)calloc(dims ? dims : 1, sizeof(int64_t));
    rc->output_dim_ptrs = (int64_t **)calloc(no ? no : 1, sizeof(int64_t *));
    rc->run_slots = (void **)calloc(no ? no : 1, sizeof(void *));
    if (!rc->symbols || !rc->symbol_input || !rc->symbol_dim ||
        !rc->output_dims || !rc->output_dim_ptrs || !rc->run_slots) {
      kiln_context_free(rc);
      return kiln_out_of_memory_status();
    }
    for (uint32_t i = 0, at = 0; i < desc->num_outputs; ++i) {
      rc->output_dim_ptrs[i] = rc->output_dims + at;
      at += (uint32_t)desc->outputs[i].rank;
    }
  }
  if (model->gpu) {
    kiln_status status = model->backend->context_create(model->gpu, &rc->gpu);
    if (status) {
      kiln_context_free(rc);
      return status;
    }
  }
  if (model->caller_scratch) {
    pthread_mutex_lock(&model->lock);
    if (!model->caller_scratch_held) {
      model->caller_scratch_held = 1;
      rc->scratch = model->caller_scratch;
      rc->scratch_capacity = model->caller_scratch_size;
    }
    pthread_mutex_unlock(&model->lock);
  }
  if (!rc->scratch && model->scratch_size > 0) {
#if SIZE_MAX < UINT64_MAX
    if (model->scratch_size <= SIZE_MAX)
#endif
      rc->scratch =
          kiln_arena_alloc((size_t)model->scratch_size, model->scratch_align);
    if (!rc->scratch) {
      kiln_context_free(rc);
      return kiln_make_status(KILN_STATUS_OUT_OF_MEMORY,
                              "cannot allocate the %llu-byte scratch arena of "
                              "model '%s'",
                              (unsigned long long)model->scratch_size,
                              kiln_model_name(model));
    }
    rc->owns_scratch = 1;
    rc->scratch_capacity = model->scratch_size;
  }
  *out_context = rc;
  return NULL;
}

kiln_status kiln_run_context_create(kiln_model *model,
                                    kiln_run_context **out_context) {
  if (!model || !out_context)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "%s is NULL",
                            model ? "out_context" : "model");
  return kiln_context_new(model, out_context);
}

void kiln_run_context_destroy(kiln_run_context *context) {
  kiln_context_free(context);
}

/* A context for kiln_model_run: an idle one, else a new one. */
static kiln_status kiln_take_context(kiln_model *model,
                                     kiln_run_context **out_context) {
  pthread_mutex_lock(&model->lock);
  kiln_run_context *rc = model->idle;
  if (rc)
    model->idle = rc->next;
  pthread_mutex_unlock(&model->lock);
  if (rc) {
    *out_context = rc;
    return NULL;
  }
  return kiln_context_new(model, out_context);
}

static void kiln_give_context(kiln_model *model, kiln_run_context *rc) {
  if (rc->gpu && model->backend->context_unusable(rc->gpu)) {
    kiln_context_free(rc); /* a timed-out run: later runs take a new one */
    return;
  }
  pthread_mutex_lock(&model->lock);
  rc->next = model->idle;
  model->idle = rc;
  pthread_mutex_unlock(&model->lock);
}

/*===----------------------------------------------------------------------===*
 * Opening and closing
 *===----------------------------------------------------------------------===*/

/* The `device` option (a device, a list or auto; KILN_DEVICE) against
 * where the model's code runs (`code`: "cpu", "vulkan", "cuda" or "hip"): the first
 * item of that device is the one; *selector is the part after "DEVICE:"
 * (NULL when none), inside `item` (KILN_DEVICE_ITEM_MAX bytes); *no_device
 * is set for "none". */
static kiln_status kiln_check_device_option(const kiln_model_desc *desc,
                                            const char *device,
                                            const char *code, char *item,
                                            const char **selector,
                                            int *no_device) {
  const char *name = desc->name ? desc->name : "?";
  kiln_device_request request;
  kiln_status status = kiln_device_request_resolve(device, &request);
  *selector = NULL;
  *no_device = 0;
  if (status)
    return status;
  *no_device = request.none;
  if (request.none)
    return NULL;
  const char *cursor = request.list, *want = NULL, *sel = NULL;
  while (kiln_device_request_next(&cursor, item, &want, &sel))
    if (strcmp(want, code) == 0) {
      *selector = sel;
      return NULL;
    }
  const char *what = strcmp(code, "cpu") == 0    ? "CPU code"
                     : strcmp(code, "cuda") == 0 ? "CUDA code (ptx/cubin)"
                     : strcmp(code, "hip") == 0  ? "HIP code (hsaco)"
                                                 : "Vulkan code (spirv)";
  if (request.fallback)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' holds only %s: it runs on none of "
                            "the devices '%s' (from %s); open it with device "
                            "'%s' or 'auto'",
                            name, what, request.list, request.source, code);
  device = request.list;
  int from_env = strcmp(request.source, "KILN_DEVICE") == 0;
  if (strcmp(code, "cpu") == 0)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' holds only CPU code: it cannot run on "
                            "device '%s'%s (compile it with `kiln compile "
                            "--device %s`, or open it with device 'cpu' "
                            "or 'auto')",
                            name, device, from_env ? " (from KILN_DEVICE)" : "",
                            want);
  return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                          "model '%s' holds only %s: it cannot run "
                          "on device '%s'%s (compile it for %s, or open it "
                          "with device '%s' or 'auto')",
                          name, what, device,
                          from_env ? " (from KILN_DEVICE)" : "",
                          strcmp(want, "cpu") == 0 ? "the CPU" : want, code);
}

static kiln_status kiln_model_create(const kiln_model_desc *desc, void *library,
                                     const kiln_model_options *options,
                                     kiln_model **out_model) {
  kiln_model_options defaults;
  if (!options) {
    kiln_model_options_init(&defaults);
    options = &defaults;
  }
  if (!desc)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "the model descriptor is NULL");
  kiln_status status = kiln_check_descriptor(desc);
  if (status)
    return status;
  const char *name = desc->name ? desc->name : "?";
  const kiln_memory_need *scratch = kiln_host_scratch_need(desc);
  uint64_t scratch_size = scratch ? scratch->size : 0;
  size_t scratch_align = scratch && scratch->alignment > KILN_ALIGNMENT
                             ? (size_t)scratch->alignment
                             : KILN_ALIGNMENT;
  if (options->num_threads < 0)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "options.num_threads must be >= 0 (0 = one per "
                            "CPU), got %d",
                            (int)options->num_threads);
  if (options->scratch) {
    if (options->scratch_size < scratch_size)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "options.scratch has %zu bytes, but model '%s' "
                              "needs %llu",
                              options->scratch_size, name,
                              (unsigned long long)scratch_size);
    if ((uintptr_t)options->scratch % scratch_align != 0)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "options.scratch must be %zu-byte aligned",
                              scratch_align);
  }

  const kiln_gpu_backend *backend = kiln_gpu_backend_for(desc);
  int device_model = backend != NULL;
  const char *selector = NULL;
  int no_device = 0;
  char device_item[KILN_DEVICE_ITEM_MAX];
  status = kiln_check_device_option(desc, options->device,
                                    backend ? backend->device : "cpu",
                                    device_item, &selector, &no_device);
  if (status)
    return status;

  kiln_model *model = (kiln_model *)calloc(1, sizeof(*model));
  if (!model)
    return kiln_out_of_memory_status();
  if (pthread_mutex_init(&model->lock, NULL) != 0) {
    free(model);
    return kiln_make_status(KILN_STATUS_INTERNAL, "pthread_mutex_init failed");
  }
  model->desc = desc;
  if (device_model && no_device) {
    model->backend = backend; /* described only: no back end opened */
    model->no_device = 1;
  } else if (device_model) {
    model->backend = backend;
    status = backend->open(desc, selector, &model->gpu);
    if (status) {
      kiln_model_close(model);
      return status;
    }
  } else {
    model->entry = desc->executables[desc->entry_executable].entry;
    model->dynamic_entry =
        desc->executables[desc->entry_executable].dynamic_entry;
  }
  model->scratch_size = scratch_size;
  model->scratch_align = scratch_align;
  model->caller_scratch = options->scratch;
  model->caller_scratch_size = options->scratch ? options->scratch_size : 0;
  model->variant = "";
  if (kiln_profile_enabled())
    model->profile_label = kiln_profile_register_model(desc);
  /* A device model's host work is copies: no worker threads. */
  status = kiln_thread_pool_create(device_model ? 1 : options->num_threads,
                                   &model->pool);
  if (status) {
    kiln_model_close(model);
    return status;
  }
  /* One context up front: the arena is allocated at open, as a
   * single-threaded caller expects, and its first run allocates nothing. */
  kiln_run_context *first = NULL;
  status = kiln_context_new(model, &first);
  if (status) {
    kiln_model_close(model);
    return status;
  }
  model->idle = first;
  model->library = library;
  *out_model = model;
  return NULL;
}

/* A model without a variant table is one variant, named by its `cpu`: a
 * requested variant must be that one. */
static kiln_status kiln_check_single_variant(const kiln_model_desc *desc,
                                             const kiln_model_options *options) {
  if (!desc || !options || !options->cpu_variant || !*options->cpu_variant ||
      desc->abi_version != KILN_MODEL_ABI_VERSION)
    return NULL;
  const char *cpu = desc->cpu ? desc->cpu : "";
  if (strcmp(cpu, options->cpu_variant) == 0)
    return NULL;
  return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                          "model '%s' has no CPU variant '%s' (chosen by "
                          "options.cpu_variant): it has no variant table and "
                          "was compiled for cpu '%s' only (open a "
                          "multi-variant model with kiln_model_open or "
                          "kiln_model_open_artifact)",
                          desc->name ? desc->name : "?",
                          options->cpu_variant, cpu);
}

kiln_status kiln_model_open_descriptor(const kiln_model_desc *desc,
                                       const kiln_model_options *options,
                                       kiln_model **out_model) {
  if (!out_model)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "out_model is NULL");
  kiln_status status = kiln_check_single_variant(desc, options);
  if (status)
    return status;
  return kiln_model_create(desc, NULL, options, out_model);
}

/* Picks the variant of `artifact` to open and opens it: the devices of the
 * device option in order (auto: KILN_DEVICE_AUTO_ORDER), for the CPU the
 * variant kiln_artifact_pick chooses. With several devices to try, one the
 * artifact lacks, or whose back end is UNSUPPORTED here (no driver library,
 * no device, a feature or CPU it lacks), is skipped; a device named alone
 * must open. */
static kiln_status kiln_model_create_variant(const kiln_artifact_desc *artifact,
                                             void *library,
                                             const kiln_model_options *options,
                                             kiln_model **out_model) {
  kiln_status status = kiln_check_artifact_table(artifact);
  if (status)
    return status;
  kiln_device_request request;
  status = kiln_device_request_resolve(options ? options->device : NULL,
                                       &request);
  if (status)
    return status;
  kiln_model_options sub;
  if (options)
    sub = *options;
  else
    kiln_model_options_init(&sub);
  const char *name = artifact->name ? artifact->name : "?";
  /* "none" describes the variant auto would try first. */
  int fallback = request.fallback || request.none;
  const char *cursor = request.none ? KILN_DEVICE_AUTO_ORDER : request.list;
  const char *kind = NULL, *selector = NULL; /* the back end takes it */
  char item[KILN_DEVICE_ITEM_MAX];
  kiln_strbuf skipped = {0};
  kiln_status last = NULL;
  uint32_t tried = 0;
  while (kiln_device_request_next(&cursor, item, &kind, &selector)) {
    uint32_t index = 0;
    int64_t found = kiln_artifact_find_device(artifact, kind);
    if (found < 0) {
      if (fallback)
        continue;
      kiln_status_free(last);
      kiln_strbuf_free(&skipped);
      kiln_strbuf buf = {0};
      kiln_strbuf_appendf(&buf,
                          "model '%s' holds no code for device '%s' (from "
                          "%s); it holds: ",
                          name, item, request.source);
      kiln_artifact_append_devices(&buf, artifact);
      return kiln_strbuf_to_status(&buf, KILN_STATUS_UNSUPPORTED);
    }
    index = (uint32_t)found;
    status = strcmp(kind, "cpu") == 0
                 ? kiln_artifact_pick(artifact, sub.cpu_variant, &index)
                 : NULL;
    if (!status) {
      const kiln_variant_desc *variant = &artifact->variants[index];
      sub.device = request.none ? "none" : item;
      status = kiln_model_create(variant->descriptor(), library, &sub,
                                 out_model);
      if (!status) {
        kiln_strbuf_free(&skipped);
        kiln_status_free(last);
        (*out_model)->variant = variant->name;
        (*out_model)->artifact = artifact;
        return NULL;
      }
    }
    if (!fallback || kiln_status_code(status) != KILN_STATUS_UNSUPPORTED) {
      kiln_strbuf_free(&skipped);
      kiln_status_free(last);
      return status;
    }
    kiln_strbuf_appendf(&skipped, "%s%s: %s", skipped.data ? "; " : "", item,
                        kiln_status_message(status));
    kiln_status_free(last);
    last = status;
    ++tried;
  }
  /* One device tried (the only one the artifact holds): its own error. */
  if (tried == 1) {
    kiln_strbuf_free(&skipped);
    return last;
  }
  kiln_status_free(last);
  kiln_strbuf buf = {0};
  if (skipped.data)
    kiln_strbuf_appendf(&buf,
                        "model '%s' opens on none of the devices '%s' (from "
                        "%s): %s; it holds: ",
                        name, request.list, request.source, skipped.data);
  else
    kiln_strbuf_appendf(&buf,
                        "model '%s' holds none of the devices '%s' (from "
                        "%s); it holds: ",
                        name, request.none ? KILN_DEVICE_AUTO_ORDER
                                           : request.list,
                        request.source);
  kiln_strbuf_free(&skipped);
  kiln_artifact_append_devices(&buf, artifact);
  return kiln_strbuf_to_status(&buf, KILN_STATUS_UNSUPPORTED);
}

kiln_status kiln_model_open_artifact(const kiln_artifact_desc *artifact,
                                     const kiln_model_options *options,
                                     kiln_model **out_model) {
  if (!out_model)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "out_model is NULL");
  return kiln_model_create_variant(artifact, NULL, options, out_model);
}

kiln_status kiln_model_open(const char *path, const kiln_model_options *options,
                            kiln_model **out_model) {
  if (!path || !out_model)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "%s is NULL",
                            path ? "out_model" : "path");
  /* A FIFO must not block, a truncated or damaged file must not reach the
   * dynamic loader (which may fault on it). */
  kiln_status checked =
      kiln_check_artifact(path, options ? options->num_threads : 0);
  if (checked)
    return checked;

  /* dlopen searches the library path for a name without '/'; a file name
   * given by the user means the file in the working directory. */
  const char *load_path = path;
  char *local = NULL;
  if (!strchr(path, '/')) {
    size_t len = strlen(path);
    local = (char *)malloc(len + 3);
    if (!local)
      return kiln_out_of_memory_status();
    memcpy(local, "./", 2);
    memcpy(local + 2, path, len + 1);
    load_path = local;
  }
  dlerror();
  void *library = dlopen(load_path, RTLD_NOW | RTLD_LOCAL);
  free(local);
  if (!library) {
    const char *err = dlerror();
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "cannot load model '%s': %s", path,
                            err ? err : "dlopen failed");
  }
  /* A variant table first; an artifact without one is a single descriptor. */
  dlerror();
  void *table_sym = dlsym(library, KILN_ARTIFACT_SYMBOL);
  if (table_sym) {
    kiln_artifact_fn get_table;
    memcpy(&get_table, &table_sym, sizeof(get_table));
    kiln_status status =
        kiln_model_create_variant(get_table(), library, options, out_model);
    if (status) {
      dlclose(library);
      kiln_status wrapped = kiln_make_status(kiln_status_code(status),
                                             "%s: %s", path,
                                             kiln_status_message(status));
      kiln_status_free(status);
      return wrapped;
    }
    return NULL;
  }
  dlerror();
  void *sym = dlsym(library, KILN_DESCRIPTOR_SYMBOL);
  if (!sym) {
    dlclose(library);
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "'%s' is not a kiln model: it does not export "
                            "'%s'",
                            path, KILN_DESCRIPTOR_SYMBOL);
  }
  kiln_descriptor_fn get_desc;
  memcpy(&get_desc, &sym, sizeof(get_desc)); /* object -> function pointer */
  const kiln_model_desc *desc = get_desc();
  if (!desc) {
    dlclose(library);
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "'%s': %s() returned NULL", path,
                            KILN_DESCRIPTOR_SYMBOL);
  }
  kiln_status status = kiln_check_single_variant(desc, options);
  if (!status)
    status = kiln_model_create(desc, library, options, out_model);
  if (status) {
    dlclose(library);
    kiln_status wrapped = kiln_make_status(kiln_status_code(status), "%s: %s",
                                           path, kiln_status_message(status));
    kiln_status_free(status);
    return wrapped;
  }
  return NULL;
}

void kiln_model_close(kiln_model *model) {
  if (!model)
    return;
  while (model->idle) {
    kiln_run_context *rc = model->idle;
    model->idle = rc->next;
    kiln_context_free(rc);
  }
  if (model->gpu)
    model->backend->close(model->gpu);
  kiln_thread_pool_destroy(model->pool);
  pthread_mutex_destroy(&model->lock);
  if (model->library)
    dlclose(model->library);
  free(model);
}

/*===----------------------------------------------------------------------===*
 * Describing
 *===----------------------------------------------------------------------===*/

const kiln_model_desc *kiln_model_get_descriptor(const kiln_model *model) {
  return model ? model->desc : NULL;
}

const char *kiln_model_name(const kiln_model *model) {
  return model && model->desc->name ? model->desc->name : "";
}

const char *kiln_model_variant(const kiln_model *model) {
  return model && model->variant ? model->variant : "";
}

const kiln_artifact_desc *kiln_model_get_artifact(const kiln_model *model) {
  return model ? model->artifact : NULL;
}

int32_t kiln_model_num_threads(const kiln_model *model) {
  return model ? kiln_exec_context_num_threads(
                     kiln_thread_pool_context(model->pool))
               : 0;
}

uint64_t kiln_model_scratch_size(const kiln_model *model) {
  return model ? model->scratch_size : 0;
}

size_t kiln_model_num_symbols(const kiln_model *model) {
  return model ? model->desc->num_symbols : 0;
}

kiln_status kiln_model_symbol_info(const kiln_model *model, size_t index,
                                   const char **out_name, int64_t *out_min,
                                   int64_t *out_max) {
  if (!model)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "model is NULL");
  if (index >= model->desc->num_symbols)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "symbol index %zu is out of range: model '%s' has "
                            "%u symbols",
                            index, kiln_model_name(model),
                            (unsigned)model->desc->num_symbols);
  const kiln_dim_symbol *sym = &model->desc->symbols[index];
  if (out_name)
    *out_name = sym->name;
  if (out_min)
    *out_min = sym->min;
  if (out_max)
    *out_max = sym->max;
  return NULL;
}

size_t kiln_model_num_inputs(const kiln_model *model) {
  return model ? model->desc->num_inputs : 0;
}

size_t kiln_model_num_outputs(const kiln_model *model) {
  return model ? model->desc->num_outputs : 0;
}

static void kiln_fill_info(const kiln_tensor_desc *t, kiln_tensor_info *info) {
  info->name = t->name;
  info->dtype = (kiln_dtype)t->dtype;
  info->rank = t->rank;
  info->shape = t->rank > 0 ? t->shape : NULL;
}

static kiln_status kiln_tensor_info_at(const kiln_model *model, size_t index,
                                       int is_input,
                                       kiln_tensor_info *out_info) {
  if (!model || !out_info)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "%s is NULL",
                            model ? "out_info" : "model");
  size_t count = is_input ? model->desc->num_inputs : model->desc->num_outputs;
  if (index >= count)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s index %zu is out of range: model '%s' has %zu "
                            "%ss",
                            is_input ? "input" : "output", index,
                            kiln_model_name(model), count,
                            is_input ? "input" : "output");
  kiln_fill_info(is_input ? &model->desc->inputs[index]
                          : &model->desc->outputs[index],
                 out_info);
  return NULL;
}

kiln_status kiln_model_input_info(const kiln_model *model, size_t index,
                                  kiln_tensor_info *out_info) {
  return kiln_tensor_info_at(model, index, 1, out_info);
}

kiln_status kiln_model_output_info(const kiln_model *model, size_t index,
                                   kiln_tensor_info *out_info) {
  return kiln_tensor_info_at(model, index, 0, out_info);
}

static int kiln_find(const kiln_tensor_desc *descs, uint32_t count,
                     const char *name, size_t *out_index) {
  for (uint32_t i = 0; i < count; ++i) {
    if (strcmp(descs[i].name, name) == 0) {
      *out_index = i;
      return 1;
    }
  }
  return 0;
}

static kiln_status kiln_unknown_name(const kiln_model *model, int is_input,
                                     const char *name) {
  const char *kind = is_input ? "input" : "output";
  const kiln_tensor_desc *descs =
      is_input ? model->desc->inputs : model->desc->outputs;
  uint32_t count = is_input ? model->desc->num_inputs : model->desc->num_outputs;
  kiln_strbuf buf = {0};
  kiln_strbuf_appendf(&buf, "unknown %s '%s' (the model's %ss: ", kind, name,
                      kind);
  for (uint32_t i = 0; i < count; ++i)
    kiln_strbuf_appendf(&buf, i ? ", '%s'" : "'%s'", descs[i].name);
  kiln_strbuf_appendf(&buf, "%s)", count ? "" : "none");
  return kiln_strbuf_to_status(&buf, KILN_STATUS_NOT_FOUND);
}

static kiln_status kiln_find_named(const kiln_model *model, int is_input,
                                   const char *name, size_t *out_index) {
  if (!model || !name || !out_index)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "%s is NULL",
                            !model ? "model" : !name ? "name" : "out_index");
  const kiln_tensor_desc *descs =
      is_input ? model->desc->inputs : model->desc->outputs;
  uint32_t count = is_input ? model->desc->num_inputs : model->desc->num_outputs;
  if (kiln_find(descs, count, name, out_index))
    return NULL;
  return kiln_unknown_name(model, is_input, name);
}

kiln_status kiln_model_find_input(const kiln_model *model, const char *name,
                                  size_t *out_index) {
  return kiln_find_named(model, 1, name, out_index);
}

kiln_status kiln_model_find_output(const kiln_model *model, const char *name,
                                   size_t *out_index) {
  return kiln_find_named(model, 0, name, out_index);
}

/*===----------------------------------------------------------------------===*
 * Running
 *===----------------------------------------------------------------------===*/

/* A model tensor's shape, its symbolic dims by their symbols' names
 * ("[batch,32]"). */
static void kiln_append_model_shape(kiln_strbuf *buf,
                                    const kiln_model_desc *desc, int32_t rank,
                                    const int64_t *shape) {
  kiln_strbuf_appendf(buf, "[");
  for (int32_t i = 0; i < rank && shape; ++i) {
    if (KILN_DIM_IS_SYMBOL(shape[i]) &&
        KILN_DIM_SYMBOL_ID(shape[i]) < desc->num_symbols)
      kiln_strbuf_appendf(buf, i ? ",%s" : "%s",
                          desc->symbols[KILN_DIM_SYMBOL_ID(shape[i])].name);
    else
      kiln_strbuf_appendf(buf, i ? ",%lld" : "%lld", (long long)shape[i]);
  }
  kiln_strbuf_appendf(buf, "]");
}

static kiln_status kiln_shape_mismatch(const kiln_model_desc *desc,
                                       const char *name, int32_t want_rank,
                                       const int64_t *want,
                                       int32_t got_rank, const int64_t *got) {
  kiln_strbuf buf = {0};
  if (want_rank != got_rank) {
    kiln_strbuf_appendf(&buf, "input '%s': expected rank %d, got %d (expected "
                              "shape ",
                        name, (int)want_rank, (int)got_rank);
    kiln_append_model_shape(&buf, desc, want_rank, want);
    if (got_rank >= 0 && (got_rank == 0 || got)) {
      kiln_strbuf_appendf(&buf, ", got ");
      kiln_strbuf_append_shape(&buf, got_rank, got);
    }
    kiln_strbuf_appendf(&buf, ")");
  } else {
    kiln_strbuf_appendf(&buf, "input '%s': expected shape ", name);
    kiln_append_model_shape(&buf, desc, want_rank, want);
    kiln_strbuf_appendf(&buf, ", got ");
    kiln_strbuf_append_shape(&buf, got_rank, got);
  }
  return kiln_strbuf_to_status(&buf, KILN_STATUS_INVALID_ARGUMENT);
}

/* Binds dim `d` of input `i` (a symbol in the descriptor) to `value`: the
 * symbol's first occurrence sets it, within its bounds; every other one must
 * agree. Errors name the input(s), the dim and the symbol. */
static kiln_status kiln_bind_symbol(kiln_run_context *rc, uint32_t i,
                                    int32_t d, int64_t value) {
  const kiln_model_desc *desc = rc->model->desc;
  const kiln_tensor_desc *want = &desc->inputs[i];
  uint32_t id = KILN_DIM_SYMBOL_ID(want->shape[d]);
  const kiln_dim_symbol *sym = &desc->symbols[id];
  if (rc->symbols[id] >= 0) {
    if (rc->symbols[id] == value)
      return NULL;
    return kiln_make_status(
        KILN_STATUS_INVALID_ARGUMENT,
        "input '%s' dim %d is %lld, but input '%s' dim %d gave symbol '%s' "
        "the value %lld (the two dims are one symbol)",
        want->name, (int)d, (long long)value,
        desc->inputs[rc->symbol_input[id]].name, (int)rc->symbol_dim[id],
        sym->name, (long long)rc->symbols[id]);
  }
  if (value < sym->min || (sym->max != KILN_DIM_UNBOUNDED && value > sym->max)) {
    if (sym->max == KILN_DIM_UNBOUNDED)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "input '%s' dim %d ('%s') is %lld, below its "
                              "minimum %lld",
                              want->name, (int)d, sym->name, (long long)value,
                              (long long)sym->min);
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "input '%s' dim %d ('%s') is %lld, outside its "
                            "bounds %lld..%lld (kiln compile --shape)",
                            want->name, (int)d, sym->name, (long long)value,
                            (long long)sym->min, (long long)sym->max);
  }
  rc->symbols[id] = value;
  rc->symbol_input[id] = i;
  rc->symbol_dim[id] = d;
  return NULL;
}

/* Whether output `i`'s dims name a run symbol (KILN_SYMBOL_RUN): the entry
 * allocates it and decides its dims (model_abi.h). */
static int kiln_is_run_output(const kiln_model_desc *desc, uint32_t i) {
  const kiln_tensor_desc *t = &desc->outputs[i];
  for (int32_t d = 0; d < t->rank; ++d)
    if (KILN_DIM_IS_SYMBOL(t->shape[d]) &&
        (desc->symbols[KILN_DIM_SYMBOL_ID(t->shape[d])].flags &
         KILN_SYMBOL_RUN))
      return 1;
  return 0;
}

/* Frees the buffers the entry left in the run slots (a failed run). */
static void kiln_free_run_slots(kiln_run_context *rc) {
  const kiln_model_desc *desc = rc->model->desc;
  if (!rc->run_slots)
    return;
  for (uint32_t i = 0; i < desc->num_outputs; ++i) {
    free(rc->run_slots[i]);
    rc->run_slots[i] = NULL;
  }
}

/* The bytes of output `i` in this run: its dims from the shape function when
 * the model has symbols. */
static size_t kiln_output_byte_size(const kiln_run_context *rc, uint32_t i) {
  const kiln_model_desc *desc = rc->model->desc;
  const kiln_tensor_desc *d = &desc->outputs[i];
  if (desc->num_symbols == 0)
    return kiln_desc_byte_size(d);
  int ok;
  return kiln_byte_size((kiln_dtype)d->dtype, d->rank, rc->output_dim_ptrs[i],
                        &ok);
}

static kiln_status kiln_bind_inputs(kiln_run_context *rc,
                                    const kiln_tensor *inputs,
                                    size_t n_inputs) {
  const kiln_model *model = rc->model;
  const kiln_model_desc *desc = model->desc;
  memset(rc->input_seen, 0, desc->num_inputs ? desc->num_inputs : 1);
  for (uint32_t s = 0; s < desc->num_symbols; ++s)
    rc->symbols[s] = -1;
  for (size_t k = 0; k < n_inputs; ++k) {
    const kiln_tensor *t = &inputs[k];
    if (!t->name)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "inputs[%zu] has no name (inputs are matched by "
                              "name)",
                              k);
    size_t i = 0;
    if (!kiln_find(desc->inputs, desc->num_inputs, t->name, &i))
      return kiln_unknown_name(model, 1, t->name);
    const kiln_tensor_desc *want = &desc->inputs[i];
    if (rc->input_seen[i])
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "input '%s' is given more than once", t->name);
    rc->input_seen[i] = 1;
    if (t->dtype != (kiln_dtype)want->dtype)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "input '%s': expected dtype %s, got %s", t->name,
                              kiln_dtype_name((kiln_dtype)want->dtype),
                              kiln_dtype_name(t->dtype));
    if (t->rank > 0 && !t->shape)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "input '%s': rank is %d but shape is NULL",
                              t->name, (int)t->rank);
    if (t->rank != want->rank)
      return kiln_shape_mismatch(desc, t->name, want->rank, want->shape,
                                 t->rank, t->shape);
    for (int32_t d = 0; d < t->rank; ++d) {
      if (KILN_DIM_IS_SYMBOL(want->shape[d])) {
        kiln_status bound = kiln_bind_symbol(rc, (uint32_t)i, d, t->shape[d]);
        if (bound)
          return bound;
        continue;
      }
      if (t->shape[d] != want->shape[d])
        return kiln_shape_mismatch(desc, t->name, want->rank, want->shape,
                                   t->rank, t->shape);
    }
    int size_ok = 1;
    size_t need = desc->num_symbols > 0
                      ? kiln_byte_size((kiln_dtype)want->dtype, t->rank,
                                       t->shape, &size_ok)
                      : kiln_desc_byte_size(want);
    if (!size_ok)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "input '%s': its size overflows", t->name);
    if (t->byte_size != 0 && t->byte_size < need)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "input '%s': byte_size is %zu, but the tensor "
                              "needs %zu bytes",
                              t->name, t->byte_size, need);
    if (!t->data && need > 0)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "input '%s': data is NULL", t->name);
    if (want->dtype == KILN_DTYPE_BOOL && need > 0) {
      /* The code reads a bool as a byte and may test any bit of it: a value
       * other than 0 or 1 would give answers that depend on the op. */
      const unsigned char *b = (const unsigned char *)t->data;
      for (size_t e = 0; e < need; ++e)
        if (b[e] > 1)
          return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                                  "input '%s': bool element %zu is %u; bools "
                                  "must be 0 or 1",
                                  t->name, e, (unsigned)b[e]);
    }
    rc->input_ptrs[i] = t->data;
  }
  for (uint32_t i = 0; i < desc->num_inputs; ++i) {
    if (rc->input_seen[i])
      continue;
    const kiln_tensor_desc *want = &desc->inputs[i];
    kiln_strbuf buf = {0};
    kiln_strbuf_appendf(&buf, "missing input '%s' (%s ", want->name,
                        kiln_dtype_name((kiln_dtype)want->dtype));
    kiln_append_model_shape(&buf, desc, want->rank, want->shape);
    kiln_strbuf_appendf(&buf, ")");
    return kiln_strbuf_to_status(&buf, KILN_STATUS_INVALID_ARGUMENT);
  }
  return NULL;
}

/* Frees the outputs the runtime allocated in this run (on failure). */
static void kiln_release_outputs(kiln_run_context *rc, kiln_tensor *outputs,
                                 size_t n_outputs) {
  const kiln_model *model = rc->model;
  for (size_t k = 0; k < n_outputs; ++k) {
    size_t i = 0;
    if (!outputs[k].name ||
        !kiln_find(model->desc->outputs, model->desc->num_outputs,
                   outputs[k].name, &i))
      continue;
    if (rc->output_seen[i] == 2 && outputs[k].data == rc->output_ptrs[i]) {
      free(outputs[k].data);
      outputs[k].data = NULL;
      rc->output_seen[i] = 1;
    }
  }
}

static kiln_status kiln_bind_outputs(kiln_run_context *rc, kiln_tensor *outputs,
                                     size_t n_outputs) {
  const kiln_model *model = rc->model;
  const kiln_model_desc *desc = model->desc;
  memset(rc->output_seen, 0, desc->num_outputs ? desc->num_outputs : 1);
  /* Check everything before allocating anything. */
  for (size_t k = 0; k < n_outputs; ++k) {
    const kiln_tensor *t = &outputs[k];
    if (!t->name)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "outputs[%zu] has no name (outputs are matched "
                              "by name)",
                              k);
    size_t i = 0;
    if (!kiln_find(desc->outputs, desc->num_outputs, t->name, &i))
      return kiln_unknown_name(model, 0, t->name);
    if (rc->output_seen[i])
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "output '%s' is given more than once", t->name);
    rc->output_seen[i] = 1;
    if (desc->num_symbols > 0 && kiln_is_run_output(desc, (uint32_t)i))
      continue; /* sized after the run (kiln_take_run_outputs) */
    size_t need = kiln_output_byte_size(rc, (uint32_t)i);
    if (t->data && t->byte_size < need)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "output '%s': buffer has %zu bytes, needs %zu",
                              t->name, t->byte_size, need);
  }
  for (uint32_t i = 0; i < desc->num_outputs; ++i) {
    if (rc->output_seen[i])
      continue;
    const kiln_tensor_desc *want = &desc->outputs[i];
    kiln_strbuf buf = {0};
    kiln_strbuf_appendf(&buf, "missing output '%s' (%s ", want->name,
                        kiln_dtype_name((kiln_dtype)want->dtype));
    kiln_append_model_shape(&buf, desc, want->rank, want->shape);
    kiln_strbuf_appendf(&buf, "): every output needs an entry, with data = "
                              "NULL to have the runtime allocate it");
    return kiln_strbuf_to_status(&buf, KILN_STATUS_INVALID_ARGUMENT);
  }
  for (size_t k = 0; k < n_outputs; ++k) {
    kiln_tensor *t = &outputs[k];
    size_t i = 0;
    kiln_find(desc->outputs, desc->num_outputs, t->name, &i);
    if (desc->num_symbols > 0 && kiln_is_run_output(desc, (uint32_t)i)) {
      rc->run_slots[i] = NULL;
      rc->output_ptrs[i] = &rc->run_slots[i];
      continue;
    }
    size_t need = kiln_output_byte_size(rc, (uint32_t)i);
    if (!t->data) {
      void *data = kiln_aligned_alloc(need);
      if (!data) {
        kiln_release_outputs(rc, outputs, n_outputs);
        return kiln_make_status(KILN_STATUS_OUT_OF_MEMORY,
                                "cannot allocate %zu bytes for output '%s'",
                                need, t->name);
      }
      t->data = data;
      rc->output_seen[i] = 2;
    }
    rc->output_ptrs[i] = t->data;
  }
  return NULL;
}

/* After a successful run of a model with run outputs: their dims from the
 * run symbols the entry wrote, then each buffer the entry allocated copied
 * into the caller's (`data` set: too small is an error naming both sizes) or
 * handed over (`data` NULL: the caller frees it with free(); copied into a
 * 64-byte aligned one when malloc's is not). On failure every buffer of the
 * run is freed and the outputs the runtime allocated are released. */
static kiln_status kiln_take_run_outputs(kiln_run_context *rc,
                                         kiln_tensor *outputs,
                                         size_t n_outputs) {
  const kiln_model *model = rc->model;
  const kiln_model_desc *desc = model->desc;
  kiln_status status = NULL;
  for (uint32_t i = 0; i < desc->num_outputs && !status; ++i) {
    if (!kiln_is_run_output(desc, i))
      continue;
    const kiln_tensor_desc *d = &desc->outputs[i];
    for (int32_t k = 0; k < d->rank; ++k) {
      if (!KILN_DIM_IS_SYMBOL(d->shape[k]))
        continue;
      uint32_t id = KILN_DIM_SYMBOL_ID(d->shape[k]);
      if (!(desc->symbols[id].flags & KILN_SYMBOL_RUN))
        continue;
      if (rc->symbols[id] < 0) {
        status = kiln_make_status(
            KILN_STATUS_INTERNAL,
            "model '%s' left run symbol '%s' (dim %d of output '%s') "
            "unset",
            kiln_model_name(model), desc->symbols[id].name, (int)k, d->name);
        break;
      }
      rc->output_dim_ptrs[i][k] = rc->symbols[id];
    }
    if (status)
      break;
    int ok = 1;
    size_t need = kiln_byte_size((kiln_dtype)d->dtype, d->rank,
                                 rc->output_dim_ptrs[i], &ok);
    if (!ok)
      status = kiln_make_status(KILN_STATUS_INTERNAL,
                                "model '%s': output '%s' of this run has a "
                                "size that overflows",
                                kiln_model_name(model), d->name);
    else if (need > 0 && !rc->run_slots[i])
      status = kiln_make_status(KILN_STATUS_INTERNAL,
                                "model '%s' gave no buffer for output '%s' "
                                "(%zu bytes)",
                                kiln_model_name(model), d->name, need);
  }
  /* Caller buffers too small: checked before any is written. */
  for (size_t k = 0; k < n_outputs && !status; ++k) {
    size_t i = 0;
    kiln_find(desc->outputs, desc->num_outputs, outputs[k].name, &i);
    if (!kiln_is_run_output(desc, (uint32_t)i) || !outputs[k].data)
      continue;
    size_t need = kiln_output_byte_size(rc, (uint32_t)i);
    if (outputs[k].byte_size < need)
      status = kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                                "output '%s': buffer has %zu bytes, needs %zu",
                                outputs[k].name, outputs[k].byte_size, need);
  }
  for (size_t k = 0; k < n_outputs && !status; ++k) {
    kiln_tensor *t = &outputs[k];
    size_t i = 0;
    kiln_find(desc->outputs, desc->num_outputs, t->name, &i);
    if (!kiln_is_run_output(desc, (uint32_t)i))
      continue;
    size_t need = kiln_output_byte_size(rc, (uint32_t)i);
    void *made = rc->run_slots[i];
    if (t->data) {
      if (need > 0)
        memcpy(t->data, made, need);
      free(made);
    } else if (made && ((uintptr_t)made % KILN_ALIGNMENT) == 0) {
      t->data = made;
      rc->output_seen[i] = 2;
    } else {
      void *data = kiln_aligned_alloc(need);
      if (!data) {
        status = kiln_make_status(KILN_STATUS_OUT_OF_MEMORY,
                                  "cannot allocate %zu bytes for output '%s'",
                                  need, t->name);
        break;
      }
      if (need > 0)
        memcpy(data, made, need);
      free(made);
      t->data = data;
      rc->output_seen[i] = 2;
    }
    rc->run_slots[i] = NULL;
    rc->output_ptrs[i] = t->data;
  }
  if (status) {
    kiln_free_run_slots(rc);
    kiln_release_outputs(rc, outputs, n_outputs);
  }
  return status;
}

/* After a successful run: each output's dtype, rank, shape and size. With
 * symbols, `shape` points at the run context's copy of this run's dims. */
static void kiln_set_output_info(const kiln_run_context *rc,
                                 kiln_tensor *outputs, size_t n_outputs) {
  const kiln_model_desc *desc = rc->model->desc;
  for (size_t k = 0; k < n_outputs; ++k) {
    kiln_tensor *t = &outputs[k];
    size_t i = 0;
    kiln_find(desc->outputs, desc->num_outputs, t->name, &i);
    const kiln_tensor_desc *d = &desc->outputs[i];
    t->dtype = (kiln_dtype)d->dtype;
    t->rank = d->rank;
    t->shape = d->rank > 0 ? (desc->num_symbols > 0 ? rc->output_dim_ptrs[i]
                                                    : d->shape)
                           : NULL;
    t->byte_size = kiln_output_byte_size(rc, (uint32_t)i);
  }
}

static kiln_status kiln_run_in(kiln_run_context *rc, const kiln_tensor *inputs,
                               size_t n_inputs, kiln_tensor *outputs,
                               size_t n_outputs) {
  const kiln_model *model = rc->model;
  const kiln_model_desc *desc = model->desc;
  if (model->no_device)
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                            "model '%s' was opened with device 'none' (to be "
                            "described): it cannot run; open it on '%s'",
                            kiln_model_name(model), model->backend->device);
  kiln_status status = kiln_bind_inputs(rc, inputs, n_inputs);
  if (status)
    return status;
  if (desc->num_symbols > 0) {
    /* Every symbol is bound from the inputs; the shape function gives the
     * outputs' dims and this run's scratch bytes (never above the arena). */
    uint64_t memory[8] = {0};
    if (desc->num_memory_needs > 8)
      return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                              "model '%s' has %u memory needs",
                              kiln_model_name(model),
                              (unsigned)desc->num_memory_needs);
    kiln_model_status shaped =
        desc->shape_fn(rc->symbols, rc->output_dim_ptrs, memory, NULL);
    if (shaped != 0)
      return kiln_make_status(
          KILN_STATUS_RUNTIME_CHECK_FAILED, "%s",
          shaped > 0 && (uint32_t)shaped <= desc->num_check_messages
              ? desc->check_messages[shaped - 1]
              : "the shape function failed");
    const kiln_memory_need *scratch = kiln_host_scratch_need(desc);
    uint64_t need = scratch ? memory[scratch - desc->memory_needs] : 0;
    if (need > rc->scratch_capacity) {
      /* Buffers sized from the symbols (kiln-plan-memory) follow the static
       * part: the arena grows to this run's size, once per larger size. A
       * caller's arena (options.scratch) cannot grow. */
      if (!rc->owns_scratch && rc->scratch)
        return kiln_make_status(
            KILN_STATUS_OUT_OF_MEMORY,
            "model '%s' needs %llu scratch bytes for this run, above the "
            "%llu of options.scratch",
            kiln_model_name(model), (unsigned long long)need,
            (unsigned long long)rc->scratch_capacity);
      void *grown = need <= SIZE_MAX ? kiln_arena_alloc((size_t)need,
                                                        model->scratch_align)
                                     : NULL;
      if (!grown)
        return kiln_make_status(KILN_STATUS_OUT_OF_MEMORY,
                                "cannot allocate the %llu-byte scratch arena "
                                "model '%s' needs for this run",
                                (unsigned long long)need,
                                kiln_model_name(model));
      free(rc->scratch);
      rc->scratch = grown;
      rc->owns_scratch = 1;
      rc->scratch_capacity = need;
    }
  }
  status = kiln_bind_outputs(rc, outputs, n_outputs);
  if (status)
    return status;

  if (model->gpu) {
    status = model->backend->run(rc->gpu, (void *const *)rc->input_ptrs,
                                 (void *const *)rc->output_ptrs);
    if (status) {
      kiln_release_outputs(rc, outputs, n_outputs);
      return status;
    }
    kiln_set_output_info(rc, outputs, n_outputs);
    return NULL;
  }
  int64_t start = model->profile_label ? kiln_profile_now() : 0;
  kiln_model_status result =
      model->dynamic_entry
          ? model->dynamic_entry(rc->symbols, (void *const *)rc->input_ptrs,
                                 (void *const *)rc->output_ptrs, rc->scratch,
                                 (kiln_exec_context *)(void *)rc)
          : model->entry((void *const *)rc->input_ptrs,
                         (void *const *)rc->output_ptrs, rc->scratch,
                         (kiln_exec_context *)(void *)rc);
  if (model->profile_label)
    kiln_profile_run(model->profile_label, start);
  if (result != 0) {
    kiln_free_run_slots(rc);
    kiln_release_outputs(rc, outputs, n_outputs);
    if (result > 0 && (uint32_t)result <= desc->num_check_messages &&
        desc->check_messages[result - 1])
      return kiln_make_status(KILN_STATUS_RUNTIME_CHECK_FAILED, "%s",
                              desc->check_messages[result - 1]);
    return kiln_make_status(KILN_STATUS_INTERNAL,
                            "model '%s' returned status %d, which names no "
                            "check (it has %u check messages)",
                            kiln_model_name(model), (int)result,
                            (unsigned)desc->num_check_messages);
  }
  if (desc->num_symbols > 0) {
    status = kiln_take_run_outputs(rc, outputs, n_outputs);
    if (status)
      return status;
  }
  kiln_set_output_info(rc, outputs, n_outputs);
  return NULL;
}

static kiln_status kiln_check_run_args(const kiln_tensor *inputs,
                                       size_t n_inputs,
                                       const kiln_tensor *outputs,
                                       size_t n_outputs) {
  if ((n_inputs > 0 && !inputs) || (n_outputs > 0 && !outputs))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s is NULL but n_%s is %zu",
                            n_inputs > 0 && !inputs ? "inputs" : "outputs",
                            n_inputs > 0 && !inputs ? "inputs" : "outputs",
                            n_inputs > 0 && !inputs ? n_inputs : n_outputs);
  return NULL;
}

/* The calling thread's copy of the output dims of its last kiln_model_run:
 * the pooled context that ran it may serve another thread's run as soon as
 * it is given back, so output shapes cannot point into it. Grown as needed,
 * freed when the thread exits. */
typedef struct kiln_thread_dims {
  size_t capacity;
  int64_t dims[];
} kiln_thread_dims;

static pthread_key_t kiln_thread_dims_key;
static pthread_once_t kiln_thread_dims_once = PTHREAD_ONCE_INIT;
static int kiln_thread_dims_key_ok;

static void kiln_thread_dims_init(void) {
  kiln_thread_dims_key_ok = pthread_key_create(&kiln_thread_dims_key, free) == 0;
}

/* This thread's buffer of at least `n` dims, NULL when it cannot be had. */
static int64_t *kiln_thread_dims_get(size_t n) {
  pthread_once(&kiln_thread_dims_once, kiln_thread_dims_init);
  if (!kiln_thread_dims_key_ok)
    return NULL;
  kiln_thread_dims *held =
      (kiln_thread_dims *)pthread_getspecific(kiln_thread_dims_key);
  if (held && held->capacity >= n)
    return held->dims;
  kiln_thread_dims *grown = (kiln_thread_dims *)malloc(
      sizeof(kiln_thread_dims) + (n ? n : 1) * sizeof(int64_t));
  if (!grown)
    return NULL;
  grown->capacity = n;
  if (pthread_setspecific(kiln_thread_dims_key, grown) != 0) {
    free(grown);
    return NULL;
  }
  free(held);
  return grown->dims;
}

kiln_status kiln_model_run(kiln_model *model, const kiln_tensor *inputs,
                           size_t n_inputs, kiln_tensor *outputs,
                           size_t n_outputs) {
  if (!model)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "model is NULL");
  kiln_status status = kiln_check_run_args(inputs, n_inputs, outputs, n_outputs);
  if (status)
    return status;
  /* With symbols, the outputs' shapes are copied to this thread's buffer
   * before the context goes back to the pool (taken before the run, so a
   * failure to get it loses nothing). */
  const kiln_model_desc *desc = model->desc;
  int64_t *thread_dims = NULL;
  if (desc->num_symbols > 0) {
    size_t total = 0;
    for (size_t k = 0; k < n_outputs; ++k) {
      size_t i = 0;
      if (kiln_find(desc->outputs, desc->num_outputs, outputs[k].name, &i))
        total += (size_t)desc->outputs[i].rank;
    }
    thread_dims = kiln_thread_dims_get(total);
    if (!thread_dims)
      return kiln_make_status(KILN_STATUS_OUT_OF_MEMORY,
                              "model '%s': cannot allocate this thread's copy "
                              "of the output dims",
                              kiln_model_name(model));
  }
  kiln_run_context *rc = NULL;
  status = kiln_take_context(model, &rc);
  if (status)
    return status;
  /* A pooled context is this thread's alone until it is given back. */
  status = kiln_run_in(rc, inputs, n_inputs, outputs, n_outputs);
  if (!status && thread_dims) {
    size_t at = 0;
    for (size_t k = 0; k < n_outputs; ++k) {
      if (!outputs[k].shape)
        continue;
      memcpy(thread_dims + at, outputs[k].shape,
             (size_t)outputs[k].rank * sizeof(int64_t));
      outputs[k].shape = thread_dims + at;
      at += (size_t)outputs[k].rank;
    }
  }
  kiln_give_context(model, rc);
  return status;
}

kiln_status kiln_model_run_with_context(kiln_model *model,
                                        kiln_run_context *context,
                                        const kiln_tensor *inputs,
                                        size_t n_inputs, kiln_tensor *outputs,
                                        size_t n_outputs) {
  if (!model || !context)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "%s is NULL",
                            model ? "context" : "model");
  if (context->model != model)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "the run context belongs to model '%s', not to "
                            "model '%s'",
                            kiln_model_name(context->model),
                            kiln_model_name(model));
  kiln_status status = kiln_check_run_args(inputs, n_inputs, outputs, n_outputs);
  if (status)
    return status;
  if (atomic_flag_test_and_set_explicit(&context->running,
                                        memory_order_acquire))
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                            "a run context of model '%s' was used by two runs "
                            "at once; use one context per thread (or "
                            "kiln_model_run, which takes one from a pool)",
                            kiln_model_name(model));
  status = kiln_run_in(context, inputs, n_inputs, outputs, n_outputs);
  atomic_flag_clear_explicit(&context->running, memory_order_release);
  return status;
}

/*===----------------------------------------------------------------------===*
 * Devices
 *===----------------------------------------------------------------------===*/

const char *kiln_model_device(const kiln_model *model) {
  if (model && model->no_device)
    return "none";
  return model && model->gpu ? model->backend->device : "cpu";
}

kiln_status kiln_model_vulkan_handles(const kiln_model *model,
                                      kiln_vulkan_handles *out_handles) {
  if (!model || !out_handles)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "%s is NULL",
                            model ? "out_handles" : "model");
  if (!model->gpu || model->backend != &kiln_vulkan_backend)
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                            "model '%s' runs on %s: it has no Vulkan device",
                            kiln_model_name(model),
                            model->gpu ? model->backend->device : "the CPU");
  memset(out_handles, 0, sizeof(*out_handles));
  kiln_vulkan_get_handles((const kiln_vulkan_model *)model->gpu, out_handles);
  return NULL;
}

kiln_status kiln_model_cuda_handles(const kiln_model *model,
                                    kiln_cuda_handles *out_handles) {
  if (!model || !out_handles)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "%s is NULL",
                            model ? "out_handles" : "model");
  if (!model->gpu || model->backend != &kiln_cuda_backend)
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                            "model '%s' runs on %s: it has no CUDA device",
                            kiln_model_name(model),
                            model->gpu ? model->backend->device : "the CPU");
  memset(out_handles, 0, sizeof(*out_handles));
  kiln_cuda_get_handles(model->gpu, out_handles);
  return NULL;
}

/* Matches caller device tensors to the model's inputs (is_input) or
 * outputs: buffers[i] and offsets[i] for each; every one exactly once. */
static kiln_status kiln_bind_device(const kiln_model *model, int is_input,
                                    const kiln_device_tensor *tensors,
                                    size_t count, uint64_t *buffers,
                                    uint64_t *offsets, unsigned char *seen) {
  const kiln_model_desc *desc = model->desc;
  const char *kind = is_input ? "input" : "output";
  const kiln_tensor_desc *descs = is_input ? desc->inputs : desc->outputs;
  uint32_t n = is_input ? desc->num_inputs : desc->num_outputs;
  for (size_t k = 0; k < count; ++k) {
    const kiln_device_tensor *t = &tensors[k];
    size_t i = 0;
    if (!t->name)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "%ss[%zu] has no name (%ss are matched by name)",
                              kind, k, kind);
    if (!kiln_find(descs, n, t->name, &i))
      return kiln_unknown_name(model, is_input, t->name);
    if (seen[i])
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "%s '%s' is given more than once", kind, t->name);
    seen[i] = 1;
    size_t need = kiln_desc_byte_size(&descs[i]);
    if (!t->buffer && need > 0)
      return kiln_make_status(
          KILN_STATUS_INVALID_ARGUMENT, "%s '%s': buffer is %s", kind, t->name,
          model->backend == &kiln_vulkan_backend ? "VK_NULL_HANDLE" : "0");
    if (t->byte_size < need)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "%s '%s': device buffer has %llu bytes, needs "
                              "%zu",
                              kind, t->name, (unsigned long long)t->byte_size,
                              need);
    buffers[i] = t->buffer;
    offsets[i] = t->offset;
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (seen[i])
      continue;
    kiln_strbuf buf = {0};
    kiln_strbuf_appendf(&buf, "missing %s '%s' (%s ", kind, descs[i].name,
                        kiln_dtype_name((kiln_dtype)descs[i].dtype));
    kiln_strbuf_append_shape(&buf, descs[i].rank, descs[i].shape);
    kiln_strbuf_appendf(&buf, ")");
    return kiln_strbuf_to_status(&buf, KILN_STATUS_INVALID_ARGUMENT);
  }
  return NULL;
}

kiln_status kiln_model_run_device(kiln_model *model,
                                  const kiln_device_tensor *inputs,
                                  size_t n_inputs,
                                  const kiln_device_tensor *outputs,
                                  size_t n_outputs) {
  if (!model)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "model is NULL");
  if (!model->gpu)
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                            "model '%s' runs on %s: "
                            "kiln_model_run_device needs a model opened on "
                            "a device (Vulkan, CUDA)",
                            kiln_model_name(model),
                            model->no_device ? "no device ('none')"
                                             : "the CPU");
  if ((n_inputs > 0 && !inputs) || (n_outputs > 0 && !outputs))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s is NULL but n_%s is %zu",
                            n_inputs > 0 && !inputs ? "inputs" : "outputs",
                            n_inputs > 0 && !inputs ? "inputs" : "outputs",
                            n_inputs > 0 && !inputs ? n_inputs : n_outputs);
  const kiln_model_desc *desc = model->desc;
  size_t ni = desc->num_inputs, no = desc->num_outputs;
  uint64_t *words = (uint64_t *)calloc(2 * (ni + no) + 1, sizeof(uint64_t));
  unsigned char *seen = (unsigned char *)calloc(ni + no + 1, 1);
  kiln_status status = NULL;
  if (!words || !seen)
    status = kiln_out_of_memory_status();
  uint64_t *in_buffers = words, *in_offsets = words ? words + ni : NULL;
  uint64_t *out_buffers = words ? words + 2 * ni : NULL;
  uint64_t *out_offsets = words ? words + 2 * ni + no : NULL;
  if (!status)
    status = kiln_bind_device(model, 1, inputs, n_inputs, in_buffers,
                              in_offsets, seen);
  if (!status)
    status = kiln_bind_device(model, 0, outputs, n_outputs, out_buffers,
                              out_offsets, seen + ni);
  kiln_run_context *rc = NULL;
  if (!status)
    status = kiln_take_context(model, &rc);
  if (!status) {
    status = model->backend->run_device(rc->gpu, in_buffers, in_offsets,
                                        out_buffers, out_offsets);
    kiln_give_context(model, rc);
  }
  free(words);
  free(seen);
  return status;
}

/* For the tests: the barriers between dispatches in the command buffer a
 * Vulkan model recorded last (0 for a CPU model). Not in runtime.h. */
KILN_INTERNAL uint32_t kiln_model_dispatch_barriers(kiln_model *model);
uint32_t kiln_model_dispatch_barriers(kiln_model *model) {
  return model && model->gpu && model->backend == &kiln_vulkan_backend
             ? kiln_vulkan_dispatch_barriers((kiln_vulkan_model *)model->gpu)
             : 0;
}
