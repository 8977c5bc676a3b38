/* A hand-written stand-in for a model compiled by kiln, used by the runtime
 * tests. It follows model_abi.h exactly as generated code must:
 *
 *   inputs  "a" float32 [2,3], "b" float32 [2,3]
 *   outputs "sum" float32 [2,3]           = a + b  (through kiln_parallel_for)
 *           "stats/../positive:0" int64 []  = how many sums are > 0
 *                                           (a name that needs sanitizing)
 *   scratch 256 bytes: the entry fills it with 0xAB, checks its alignment and
 *           stages the sums in bytes [128, 152)
 *   checks  a[0] == -1000 -> returns 1, a[0] == -2000 -> returns 2,
 *           a[0] == -3000 -> returns 7 (a bad status: no such check message)
 *   gate    a[0] == -5000 -> waits for fake_add_gate_open (see below)
 *
 * Build knobs: FAKE_ABI_VERSION (default KILN_MODEL_ABI_VERSION);
 * FAKE_STATIC_ONLY omits the fixed-name `kiln_model_descriptor`, as in a
 * static-library build of a model; FAKE_USE_SYMBOL calls the runtime's
 * kiln_parallel_for symbol instead of the context's function pointer. */
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "kiln/parallel.h"

#ifndef FAKE_ABI_VERSION
#define FAKE_ABI_VERSION KILN_MODEL_ABI_VERSION
#endif

#define EXPORT __attribute__((visibility("default")))

static const int64_t kShape23[] = {2, 3};

static const kiln_tensor_desc kInputs[] = {
    {"a", KILN_DTYPE_FLOAT32, 2, kShape23},
    {"b", KILN_DTYPE_FLOAT32, 2, kShape23},
};
static const kiln_tensor_desc kOutputs[] = {
    {"sum", KILN_DTYPE_FLOAT32, 2, kShape23},
    {"stats/../positive:0", KILN_DTYPE_INT64, 0, 0},
};
static const char *const kCheckMessages[] = {
    "node 'Gather_0' (Gather, opset 13): index 5 is out of range [-3, 3) on "
    "axis 0",
    "node 'Div_1' (Div, opset 14): integer division by zero",
};

/* A run with a[0] == -5000 sets `entered` and waits until `open` is set: lets
 * the tests hold a run in progress. */
EXPORT int fake_add_gate_entered;
EXPORT int fake_add_gate_open;

typedef struct add_closure {
  const float *a, *b;
  float *sum;
} add_closure;

static void add_body(void *closure, int64_t begin, int64_t end) {
  const add_closure *c = (const add_closure *)closure;
  for (int64_t i = begin; i < end; ++i)
    c->sum[i] = c->a[i] + c->b[i];
}

static kiln_model_status fake_add_main(void *const *inputs,
                                       void *const *outputs, void *scratch,
                                       kiln_exec_context *context) {
  const float *a = (const float *)inputs[0];
  const float *b = (const float *)inputs[1];
  if (a[0] == -1000.0f)
    return 1;
  if (a[0] == -2000.0f)
    return 2;
  if (a[0] == -3000.0f)
    return 7;
  if (a[0] == -5000.0f) { /* hold the run until the test opens the gate */
    __atomic_store_n(&fake_add_gate_entered, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&fake_add_gate_open, __ATOMIC_ACQUIRE))
      ;
  }
  if (!scratch || ((uintptr_t)scratch % 64) != 0)
    return 7;
  memset(scratch, 0xAB, 256);
  /* The sums go through the arena, so that two runs sharing one arena at
   * once would show in their outputs. */
  float *staged = (float *)((unsigned char *)scratch + 128);
  add_closure c = {a, b, staged};
#ifdef FAKE_USE_SYMBOL
  kiln_parallel_for(context, 6, add_body, &c);
#else
  kiln_exec_parallel_for(context, 6, add_body, &c);
#endif
  sched_yield(); /* widens the window in which a shared arena would show */
  float *sum = (float *)outputs[0];
  int64_t positive = 0;
  for (int i = 0; i < 6; ++i) {
    sum[i] = staged[i];
    positive += staged[i] > 0.0f;
  }
  memcpy(outputs[1], &positive, sizeof(positive));
  return 0;
}

static const kiln_executable_desc kExecutables[] = {
    {KILN_EXECUTABLE_HOST, 0, "x86_64-unknown-linux-gnu", fake_add_main, 0, 0,
     0, 0, 0},
};
static const kiln_memory_need kMemory[] = {
    {KILN_MEMORY_HOST_SCRATCH, 0, 256, 64, 0},
};

static const kiln_model_desc kDesc = {
    .abi_version = FAKE_ABI_VERSION,
    .name = "fake_add",
    .producer = "kiln unit tests",
    .target_triple = "x86_64-unknown-linux-gnu",
    .cpu = "generic",
    .cpu_features = "",
    .num_inputs = 2,
    .num_outputs = 2,
    .inputs = kInputs,
    .outputs = kOutputs,
    .num_executables = 1,
    .executables = kExecutables,
    .entry_executable = 0,
    .num_memory_needs = 1,
    .memory_needs = kMemory,
    .num_check_messages = 2,
    .check_messages = kCheckMessages,
};

EXPORT const kiln_model_desc *fake_add_descriptor(void) { return &kDesc; }

#ifndef FAKE_STATIC_ONLY
EXPORT const kiln_model_desc *kiln_model_descriptor(void) { return &kDesc; }
#endif
