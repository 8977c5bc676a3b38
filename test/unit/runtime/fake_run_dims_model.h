/* The fake model with a run output (fake_run_dims_model.c). */
#ifndef KILN_TEST_FAKE_RUN_DIMS_MODEL_H
#define KILN_TEST_FAKE_RUN_DIMS_MODEL_H

#include "kiln/model_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

const kiln_model_desc *fake_run_dims_descriptor(void);
/* When set, the entry hands out a buffer that is not 64-byte aligned (the
 * runtime must copy it into an aligned one). */
extern int fake_run_dims_misalign;

#ifdef __cplusplus
}
#endif

#endif
