/* A hand-written stand-in for a model compiled by kiln, used by the runtime
 * tests. It follows model_abi.h exactly as generated code must:
 *
 *   inputs  "a" float32 [2,3], "b" float32 [2,3]
 *   outputs "sum" float32 [2,3]           = a + b  (through kiln_parallel_for)
 *           "stats/../positive:0" int64 []  = how many sums are > 0
 *                                           (a name that needs sanitizing)
 *   scratch 256 bytes: the entry fills it with 0xAB and checks its alignment
 *   checks  a[0] == -1000 -> returns 1, a[0] == -2000 -> returns 2,
 *           a[0] == -3000 -> returns 7 (a bad status: no such check message)
 *
 * Build knobs: FAKE_ABI_VERSION (default KILN_MODEL_ABI_VERSION);
 * FAKE_STATIC_ONLY omits the fixed-name `kiln_model_descriptor`, as in a
 * static-library build of a model; FAKE_USE_SYMBOL calls the runtime's
 * kiln_parallel_for symbol instead of the context's function pointer. */
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
  if (!scratch || ((uintptr_t)scratch % 64) != 0)
    return 7;
  memset(scratch, 0xAB, 256);
  add_closure c = {a, b, (float *)outputs[0]};
#ifdef FAKE_USE_SYMBOL
  kiln_parallel_for(context, 6, add_body, &c);
#else
  kiln_exec_parallel_for(context, 6, add_body, &c);
#endif
  int64_t positive = 0;
  for (int i = 0; i < 6; ++i)
    positive += c.sum[i] > 0.0f;
  memcpy(outputs[1], &positive, sizeof(positive));
  return 0;
}

static const kiln_model_desc kDesc = {
    FAKE_ABI_VERSION,
    "fake_add",
    "kiln unit tests",
    "x86_64-unknown-linux-gnu",
    "generic",
    "",
    2,
    2,
    kInputs,
    kOutputs,
    256,
    2,
    kCheckMessages,
    fake_add_main,
};

EXPORT const kiln_model_desc *fake_add_descriptor(void) { return &kDesc; }

#ifndef FAKE_STATIC_ONLY
EXPORT const kiln_model_desc *kiln_model_descriptor(void) { return &kDesc; }
#endif
