/* A hand-written stand-in for a model with a run output (docs/dynamic-shapes.md,
 * "Run dims"; model_abi.h's KILN_SYMBOL_RUN), for run_dims_test.cpp. It
 * follows model_abi.h as generated code does:
 *
 *   symbols 0 "batch", 1..unbounded (bound from x)
 *           1 "y.dim0", a run symbol (KILN_SYMBOL_RUN)
 *   inputs  "x" float32 [batch], "n" int64 [1]
 *   outputs "y" float32 [y.dim0] = 2 x[i] for i < min(n, batch): a run
 *           output: outputs[0] points at a slot where the entry stores a
 *           malloc()ed buffer, and the entry writes symbols[1]
 *           "z" float32 [batch] = x + 1 (a symbolic output of the usual kind)
 *   checks  n < 0 -> returns 1, after having stored y's buffer (the runtime
 *           must free it)
 *
 * fake_run_dims_misalign: y's buffer is one malloc gave that is not 64-byte
 * aligned. */
#include <stdint.h>
#include <stdlib.h>

#include "kiln/model_abi.h"

#include "fake_run_dims_model.h"

int fake_run_dims_misalign;

static const int64_t kX[] = {KILN_DIM_SYMBOL(0)};
static const int64_t kN[] = {1};
static const int64_t kY[] = {KILN_DIM_SYMBOL(1)};

static const kiln_dim_symbol kSymbols[] = {
    {"batch", 1, KILN_DIM_UNBOUNDED, 0, 0},
    {"y.dim0", 0, KILN_DIM_UNBOUNDED, KILN_SYMBOL_RUN, 0},
};
static const kiln_tensor_desc kInputs[] = {
    {"x", KILN_DTYPE_FLOAT32, 1, kX},
    {"n", KILN_DTYPE_INT64, 1, kN},
};
static const kiln_tensor_desc kOutputs[] = {
    {"y", KILN_DTYPE_FLOAT32, 1, kY},
    {"z", KILN_DTYPE_FLOAT32, 1, kX},
};
static const char *const kCheckMessages[] = {
    "node 'Take' (FakeTake, opset 1): n is negative",
};

static kiln_model_status shape(int64_t *symbols, int64_t *const *output_dims,
                               uint64_t *memory_sizes,
                               uint64_t *binding_offsets) {
  (void)binding_offsets;
  output_dims[0][0] = symbols[1]; /* -1: the run decides */
  output_dims[1][0] = symbols[0];
  memory_sizes[0] = 0;
  return 0;
}

/* A malloc()ed buffer of `bytes` (at least 1) that is not 64-byte aligned:
 * the others tried are freed. */
static void *misaligned(size_t bytes) {
  void *held[64];
  int n = 0;
  void *p = malloc(bytes);
  while (p && ((uintptr_t)p % 64) == 0 && n < 64) {
    held[n++] = p;
    p = malloc(bytes);
  }
  while (n > 0)
    free(held[--n]);
  return p;
}

static kiln_model_status entry(int64_t *symbols, void *const *inputs,
                               void *const *outputs, void *scratch,
                               kiln_exec_context *context) {
  (void)scratch;
  (void)context;
  const float *x = (const float *)inputs[0];
  int64_t batch = symbols[0];
  int64_t n = *(const int64_t *)inputs[1];
  int64_t k = n < 0 ? 0 : n < batch ? n : batch;
  size_t bytes = (size_t)k * sizeof(float);
  float *y = (float *)(fake_run_dims_misalign ? misaligned(bytes + 4)
                                              : malloc(bytes ? bytes : 1));
  if (!y)
    return 1;
  for (int64_t i = 0; i < k; ++i)
    y[i] = 2.0f * x[i];
  *(void **)outputs[0] = y;
  float *z = (float *)outputs[1];
  for (int64_t i = 0; i < batch; ++i)
    z[i] = x[i] + 1.0f;
  if (n < 0)
    return 1;
  symbols[1] = k;
  return 0;
}

static const kiln_executable_desc kExecutables[] = {
    {KILN_EXECUTABLE_HOST, 0, "x86_64-unknown-linux-gnu", 0, entry, 0, 0, 0,
     0},
};
static const kiln_memory_need kMemory[] = {
    {KILN_MEMORY_HOST_SCRATCH, 0, 0, 64, 0},
};

static const kiln_model_desc kDesc = {
    .abi_version = KILN_MODEL_ABI_VERSION,
    .name = "fake_run_dims",
    .producer = "kiln unit tests",
    .target_triple = "x86_64-unknown-linux-gnu",
    .cpu = "generic",
    .cpu_features = "",
    .num_inputs = 2,
    .num_outputs = 2,
    .inputs = kInputs,
    .outputs = kOutputs,
    .num_symbols = 2,
    .symbols = kSymbols,
    .shape_fn = shape,
    .num_executables = 1,
    .executables = kExecutables,
    .entry_executable = 0,
    .num_memory_needs = 1,
    .memory_needs = kMemory,
    .num_check_messages = 1,
    .check_messages = kCheckMessages,
};

const kiln_model_desc *fake_run_dims_descriptor(void) { return &kDesc; }
