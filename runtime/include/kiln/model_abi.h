/*===- kiln/model_abi.h - Contract between compiled models and the runtime -===*
 *
 * A model compiled by kiln is native code for the whole graph behind one entry
 * function plus a constant descriptor of that function. This header is the
 * binary contract between the two sides: the compiler generates code that
 * matches it, the runtime reads it. Users call runtime.h, not this header.
 *
 * Ownership: everything a descriptor points to is static, read-only data inside
 * the compiled artifact; it lives as long as the artifact is loaded.
 *===----------------------------------------------------------------------===*/
#ifndef KILN_MODEL_ABI_H
#define KILN_MODEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change to the structures below. */
#define KILN_MODEL_ABI_VERSION 1

/* Element types use ONNX's TensorProto.DataType numbering. */
typedef enum kiln_dtype {
  KILN_DTYPE_UNDEFINED = 0,
  KILN_DTYPE_FLOAT32 = 1,
  KILN_DTYPE_UINT8 = 2,
  KILN_DTYPE_INT8 = 3,
  KILN_DTYPE_UINT16 = 4,
  KILN_DTYPE_INT16 = 5,
  KILN_DTYPE_INT32 = 6,
  KILN_DTYPE_INT64 = 7,
  KILN_DTYPE_BOOL = 9, /* one byte per element, 0 or 1 */
  KILN_DTYPE_FLOAT16 = 10,
  KILN_DTYPE_FLOAT64 = 11,
  KILN_DTYPE_UINT32 = 12,
  KILN_DTYPE_UINT64 = 13,
  KILN_DTYPE_BFLOAT16 = 16
} kiln_dtype;

/* One graph input or output. Shapes are static: every dim is >= 0. */
typedef struct kiln_tensor_desc {
  const char *name;     /* the ONNX value name */
  int32_t dtype;        /* a kiln_dtype */
  int32_t rank;
  const int64_t *shape; /* rank entries (NULL when rank == 0) */
} kiln_tensor_desc;

/* Status codes a compiled entry function returns. 0 is success; a positive
 * value N means run-time check N failed, and `check_messages[N - 1]` says which
 * ONNX node and what (e.g. a Gather index out of range). */
typedef int32_t kiln_model_status;

/* The per-run context handed to the entry function. Generated code treats it as
 * opaque and passes it back to runtime callbacks (thread pool, future use). */
typedef struct kiln_exec_context kiln_exec_context;

/* Entry function: `inputs[i]` points at input i's dense row-major data,
 * `outputs[i]` at a buffer of output i's full size; both caller-owned and
 * 64-byte alignment is not required. `scratch` is `scratch_size` bytes (may be
 * NULL when scratch_size is 0). Returns 0 or a check number (see above). */
typedef kiln_model_status (*kiln_entry_fn)(void *const *inputs,
                                           void *const *outputs, void *scratch,
                                           kiln_exec_context *context);

typedef struct kiln_model_desc {
  uint32_t abi_version;  /* KILN_MODEL_ABI_VERSION */
  const char *name;      /* the model's symbol prefix */
  const char *producer;  /* e.g. "pytorch 1.13.1" from the ONNX file */
  const char *target_triple;
  const char *cpu;          /* CPU the code was tuned for, e.g. "znver5" */
  const char *cpu_features; /* comma-separated features the code needs,
                               e.g. "avx512f,avx512bw,fma"; "" if baseline */
  uint32_t num_inputs;
  uint32_t num_outputs;
  const kiln_tensor_desc *inputs;
  const kiln_tensor_desc *outputs;
  uint64_t scratch_size; /* bytes of scratch the entry needs per run */
  uint32_t num_check_messages;
  const char *const *check_messages;
  kiln_entry_fn run;
} kiln_model_desc;

/* Every shared library kiln builds exports this one fixed-name function (the
 * prefixed descriptor `<name>_descriptor` is exported too, for static links). */
#define KILN_DESCRIPTOR_SYMBOL "kiln_model_descriptor"
typedef const kiln_model_desc *(*kiln_descriptor_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_MODEL_ABI_H */
