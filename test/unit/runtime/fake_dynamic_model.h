/* The fake model with a symbolic batch (fake_dynamic_model.c). */
#ifndef KILN_TEST_FAKE_DYNAMIC_MODEL_H
#define KILN_TEST_FAKE_DYNAMIC_MODEL_H

#include <stdint.h>

#include "kiln/model_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The static part of the arena (the descriptor's host-scratch need) and the
 * bytes each batch row adds at a run. */
#define FAKE_DYNAMIC_STATIC_BYTES 256
#define FAKE_DYNAMIC_ROW_BYTES 64

const kiln_model_desc *fake_dynamic_descriptor(void);
/* The arena bytes a run at `batch` needs (what the shape function reports). */
uint64_t fake_dynamic_scratch_bytes(int64_t batch);
/* The arena the calling thread's last run was given. */
void *fake_dynamic_last_scratch(void);

#ifdef __cplusplus
}
#endif

#endif
