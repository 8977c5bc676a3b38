/* A model built for model ABI version 1 (kiln before the v2 descriptor): the
 * v1 layout written out by hand, as an old kiln generated it. The runtime
 * must read its version and name and refuse it, naming both versions, without
 * touching anything else. */
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct v1_tensor_desc {
  const char *name;
  int32_t dtype;
  int32_t rank;
  const int64_t *shape;
} v1_tensor_desc;

typedef int32_t (*v1_entry_fn)(void *const *, void *const *, void *, void *);

/* The tag is kiln_model_desc, as in the old model_abi.h: the function's type
 * is then the one the runtime calls it through (UBSan's -fsanitize=function
 * compares them). */
typedef struct kiln_model_desc {
  uint32_t abi_version; /* 1 */
  const char *name;
  const char *producer;
  const char *target_triple;
  const char *cpu;
  const char *cpu_features;
  uint32_t num_inputs;
  uint32_t num_outputs;
  const v1_tensor_desc *inputs;
  const v1_tensor_desc *outputs;
  uint64_t scratch_size;
  uint32_t num_check_messages;
  const char *const *check_messages;
  v1_entry_fn run;
} v1_model_desc;

static const int64_t kShape[] = {4};
static const v1_tensor_desc kInputs[] = {{"x", 1, 1, kShape}};
static const v1_tensor_desc kOutputs[] = {{"y", 1, 1, kShape}};

static int32_t v1_main(void *const *inputs, void *const *outputs,
                       void *scratch, void *context) {
  (void)scratch;
  (void)context;
  for (int i = 0; i < 4; ++i)
    ((float *)outputs[0])[i] = ((const float *)inputs[0])[i];
  return 0;
}

static const v1_model_desc kDesc = {
    1, "old_model", "kiln 0.1", "x86_64-unknown-linux-gnu", "generic", "",
    1, 1, kInputs, kOutputs, 4096, 0, 0, v1_main,
};

EXPORT const v1_model_desc *kiln_model_descriptor(void) { return &kDesc; }
