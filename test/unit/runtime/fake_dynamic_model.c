/* A hand-written stand-in for a model compiled with a symbolic batch
 * (docs/dynamic-shapes.md), for the tests of the scratch arena's growth
 * (run_context_test.cpp, runtime_test.cpp). It follows model_abi.h as
 * generated code does:
 *
 *   symbol  0 "batch", 1..unbounded
 *   input   "x" float32 [batch, 4]
 *   output  "y" float32 [batch, 4]  = 2 x + 1
 *   scratch FAKE_DYNAMIC_STATIC_BYTES in the descriptor (the static part);
 *           the shape function reports FAKE_DYNAMIC_STATIC_BYTES +
 *           FAKE_DYNAMIC_ROW_BYTES x batch for a run, as kiln-plan-memory's
 *           symbol-sized buffers make it. The entry fills all of that with
 *           0xAB (ASan sees an arena smaller than the run's size) and stages
 *           y in its last batch x 16 bytes, so that an arena shared by two
 *           runs at once, or not grown, would show in the outputs.
 *   checks  an arena not 64-byte aligned -> returns 1
 *
 * fake_dynamic_last_scratch() is the arena the calling thread's last run was
 * given (the entry runs on the thread that called kiln_model_run). */
#include <stdint.h>
#include <string.h>

#include "kiln/model_abi.h"

#include "fake_dynamic_model.h"

static const int64_t kShape[] = {KILN_DIM_SYMBOL(0), 4};

static const kiln_dim_symbol kSymbols[] = {{"batch", 1, KILN_DIM_UNBOUNDED}};
static const kiln_tensor_desc kInputs[] = {
    {"x", KILN_DTYPE_FLOAT32, 2, kShape},
};
static const kiln_tensor_desc kOutputs[] = {
    {"y", KILN_DTYPE_FLOAT32, 2, kShape},
};
static const char *const kCheckMessages[] = {
    "fake_dynamic: the scratch arena is not 64-byte aligned",
};

static _Thread_local void *last_scratch;

void *fake_dynamic_last_scratch(void) { return last_scratch; }

uint64_t fake_dynamic_scratch_bytes(int64_t batch) {
  return FAKE_DYNAMIC_STATIC_BYTES + FAKE_DYNAMIC_ROW_BYTES * (uint64_t)batch;
}

static kiln_model_status shape(int64_t *symbols, int64_t *const *output_dims,
                               uint64_t *memory_sizes,
                               uint64_t *binding_offsets) {
  (void)binding_offsets;
  output_dims[0][0] = symbols[0];
  output_dims[0][1] = 4;
  memory_sizes[0] = fake_dynamic_scratch_bytes(symbols[0]);
  return 0;
}

static kiln_model_status entry(int64_t *symbols, void *const *inputs,
                               void *const *outputs, void *scratch,
                               kiln_exec_context *context) {
  (void)context;
  last_scratch = scratch;
  if (!scratch || ((uintptr_t)scratch % 64) != 0)
    return 1;
  int64_t n = symbols[0] * 4;
  uint64_t need = fake_dynamic_scratch_bytes(symbols[0]);
  memset(scratch, 0xAB, need);
  float *staged = (float *)((unsigned char *)scratch + need) - n;
  const float *x = (const float *)inputs[0];
  for (int64_t i = 0; i < n; ++i)
    staged[i] = 2.0f * x[i] + 1.0f;
  memcpy(outputs[0], staged, (size_t)n * sizeof(float));
  return 0;
}

static const kiln_executable_desc kExecutables[] = {
    {KILN_EXECUTABLE_HOST, 0, "x86_64-unknown-linux-gnu", 0, entry, 0, 0, 0,
     0},
};
static const kiln_memory_need kMemory[] = {
    {KILN_MEMORY_HOST_SCRATCH, 0, FAKE_DYNAMIC_STATIC_BYTES, 64, 0},
};

static const kiln_model_desc kDesc = {
    .abi_version = KILN_MODEL_ABI_VERSION,
    .name = "fake_dynamic",
    .producer = "kiln unit tests",
    .target_triple = "x86_64-unknown-linux-gnu",
    .cpu = "generic",
    .cpu_features = "",
    .num_inputs = 1,
    .num_outputs = 1,
    .inputs = kInputs,
    .outputs = kOutputs,
    .num_symbols = 1,
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

const kiln_model_desc *fake_dynamic_descriptor(void) { return &kDesc; }
