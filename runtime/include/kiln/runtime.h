/*===- kiln/runtime.h - The kiln runtime's public C API -------------------===*
 *
 * Opens a model compiled by kiln (a shared library, or a descriptor linked
 * statically into the program), describes its inputs and outputs, validates
 * inputs and runs it. The full guide, with an example, is docs/runtime-api.md.
 *
 * Conventions, as in IREE's api.h and XNNPACK:
 *  - Every fallible function returns a `kiln_status`: NULL means success;
 *    anything else is an error object the CALLER OWNS and must release with
 *    kiln_status_free().
 *  - Out-parameters come last. On failure they are left untouched unless a
 *    declaration says otherwise.
 *  - Handles are opaque and come in create/destroy pairs
 *    (kiln_model_open / kiln_model_close).
 *  - Every declaration says who owns what. "Borrowed" means the callee only
 *    reads the memory during the call; "model-owned" means the memory lives
 *    until kiln_model_close().
 *
 * Threading: functions taking a `const kiln_model *` may be called from any
 * number of threads at once. kiln_model_run() is NOT reentrant for one model
 * handle (it uses the handle's scratch arena and thread pool); open one handle
 * per concurrent caller. Distinct handles are independent.
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/model_abi.h" /* kiln_dtype, kiln_model_desc */

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Version
 *===----------------------------------------------------------------------===*/

/* The version of this API. The minor version grows with compatible additions,
 * the major version with incompatible changes. */
#define KILN_API_VERSION_MAJOR 0
#define KILN_API_VERSION_MINOR 1
#define KILN_API_VERSION (KILN_API_VERSION_MAJOR * 10000 + KILN_API_VERSION_MINOR)

/* The KILN_API_VERSION the linked runtime library was built with. */
uint32_t kiln_api_version(void);

/*===----------------------------------------------------------------------===*
 * Status
 *===----------------------------------------------------------------------===*/

/* Named as in IREE (iree_status_code_t): the plain name is the accessor. */
typedef enum kiln_status_code_e {
  KILN_STATUS_OK = 0,
  /* A bad argument: a NULL pointer, a wrong dtype/rank/shape, a malformed
   * descriptor, a file that is not a kiln model. */
  KILN_STATUS_INVALID_ARGUMENT = 1,
  /* A file or a name (input, output) that does not exist. */
  KILN_STATUS_NOT_FOUND = 2,
  /* The model cannot run here: another model ABI version, a CPU feature this
   * CPU lacks or this runtime does not know. */
  KILN_STATUS_UNSUPPORTED = 3,
  /* A run-time check inside the compiled model failed (e.g. a Gather index out
   * of range); the message names the ONNX node. */
  KILN_STATUS_RUNTIME_CHECK_FAILED = 4,
  KILN_STATUS_OUT_OF_MEMORY = 5,
  /* The call is not allowed in the current state (e.g. kiln_model_run entered
   * twice at once on one handle). */
  KILN_STATUS_FAILED_PRECONDITION = 6,
  /* A bug in the runtime or the compiled model, or a system call failing. */
  KILN_STATUS_INTERNAL = 7
} kiln_status_code_t;

/* Opaque error object; NULL means OK. Caller-owned: release with
 * kiln_status_free() exactly once. */
typedef struct kiln_status_object *kiln_status;

/* The code of `status`; KILN_STATUS_OK for NULL. Does not take ownership. */
kiln_status_code_t kiln_status_code(kiln_status status);

/* The message of `status` ("OK" for NULL). The string is owned by the status
 * and valid until kiln_status_free(status). Never NULL. */
const char *kiln_status_message(kiln_status status);

/* Releases `status`. NULL is a no-op. */
void kiln_status_free(kiln_status status);

/* A fixed string naming `code`, e.g. "INVALID_ARGUMENT". Static storage. */
const char *kiln_status_code_string(kiln_status_code_t code);

/*===----------------------------------------------------------------------===*
 * Element types
 *===----------------------------------------------------------------------===*/

/* A fixed lower-case name: "float32", "int64", "bool", "bfloat16", ...;
 * "undefined" for 0 and "invalid" for values that are no kiln_dtype.
 * Static storage. */
const char *kiln_dtype_name(kiln_dtype dtype);

/* Bytes per element (bool: 1), or 0 for an unknown dtype. */
size_t kiln_dtype_size(kiln_dtype dtype);

/*===----------------------------------------------------------------------===*
 * Tensors
 *===----------------------------------------------------------------------===*/

/* A description of one model input or output. Every pointer in it is
 * model-owned: valid until kiln_model_close() of the model it came from. */
typedef struct kiln_tensor_info {
  const char *name;
  kiln_dtype dtype;
  int32_t rank;
  const int64_t *shape; /* `rank` entries; NULL when rank == 0 */
} kiln_tensor_info;

/* Product of the dims (1 for rank 0). -1 if it overflows int64. */
int64_t kiln_tensor_info_num_elements(const kiln_tensor_info *info);

/* num_elements * kiln_dtype_size(dtype). 0 for an unknown dtype or on
 * overflow. */
size_t kiln_tensor_info_byte_size(const kiln_tensor_info *info);

/* A tensor handed to kiln_model_run(). Inputs and outputs are matched to the
 * model's by NAME (never by position); order does not matter.
 *
 * As an input (all fields are read, none written; all memory caller-owned and
 * borrowed for the call): `name`, `dtype`, `rank`, `shape` must equal the
 * model input's; `data` points at dense row-major (C order) elements; it may
 * be NULL only when the tensor has no elements. `byte_size` is checked when
 * non-zero (it must be at least the tensor's size) and ignored when 0.
 *
 * As an output, the caller sets `name` and either:
 *  - `data` = a caller-owned buffer of `byte_size` bytes, at least the
 *    output's size (any alignment; it must not overlap an input or another
 *    output), or
 *  - `data` = NULL: the runtime allocates the buffer (64-byte aligned) and the
 *    CALLER OWNS it after a successful run; release it with
 *    kiln_tensor_free_data() (which calls free(); plain free(data) is
 *    equivalent).
 * The caller's `dtype`, `rank` and `shape` are ignored; on success the runtime
 * sets `dtype`, `rank`, `shape` (model-owned pointer) and `byte_size` (the
 * output's size). On failure, buffers the runtime allocated are freed and
 * their `data` set back to NULL; caller buffers hold unspecified contents. */
typedef struct kiln_tensor {
  const char *name;
  kiln_dtype dtype;
  int32_t rank;
  const int64_t *shape;
  void *data;
  size_t byte_size;
} kiln_tensor;

/* Frees `tensor->data` with free() and sets it to NULL. Use it only on buffers
 * the runtime allocated. NULL tensor or NULL data: no-op. */
void kiln_tensor_free_data(kiln_tensor *tensor);

/*===----------------------------------------------------------------------===*
 * Models
 *===----------------------------------------------------------------------===*/

/* An opened model: the loaded code (for kiln_model_open), its scratch arena
 * and its thread pool. Created by kiln_model_open*(), destroyed by
 * kiln_model_close(). */
typedef struct kiln_model kiln_model;

typedef struct kiln_model_options {
  /* Threads that run the model, the calling thread included: 0 (default)
   * means one per CPU this process may run on; 1 means no worker threads. The
   * pool is created by kiln_model_open*() and lives with the model. */
  int32_t num_threads;
  /* An optional caller-owned scratch arena of `scratch_size` bytes, 64-byte
   * aligned, at least kiln_model_scratch_size() bytes; borrowed until
   * kiln_model_close(). NULL (default): the runtime allocates one when the
   * model is opened. Either way it is reused by every run. */
  void *scratch;
  size_t scratch_size;
} kiln_model_options;

/* Sets `options` to the defaults (num_threads 0, no caller scratch). */
void kiln_model_options_init(kiln_model_options *options);

/* Loads the kiln model shared library at `path` (dlopen; a path without '/'
 * is taken relative to the working directory, not searched for), finds its
 * `kiln_model_descriptor` function and opens the descriptor it returns, as
 * kiln_model_open_descriptor() does. `path` and `options` (NULL = defaults)
 * are borrowed. On success `*out_model` is a new caller-owned handle.
 * Errors: NOT_FOUND (no such file), INVALID_ARGUMENT (not loadable, not a kiln
 * model, malformed descriptor, bad options), UNSUPPORTED (ABI version, CPU
 * features), OUT_OF_MEMORY. */
kiln_status kiln_model_open(const char *path, const kiln_model_options *options,
                            kiln_model **out_model);

/* Opens a model linked into the program: `desc` is e.g. the
 * `<name>_descriptor()` result of a statically linked model; it is borrowed
 * and must outlive the model. Checks the ABI version and the CPU features,
 * validates the descriptor, allocates the scratch arena (unless the options
 * provide one) and starts the thread pool. */
kiln_status kiln_model_open_descriptor(const kiln_model_desc *desc,
                                       const kiln_model_options *options,
                                       kiln_model **out_model);

/* Stops the thread pool, frees the scratch arena (not a caller's), unloads the
 * library. Every model-owned pointer becomes invalid. NULL is a no-op. Must not
 * race with a kiln_model_run() on the same handle. */
void kiln_model_close(kiln_model *model);

/* The descriptor (model-owned): name, producer, target, cpu features, ...
 * (Not called kiln_model_descriptor: that is the fixed-name function every
 * model .so exports, see model_abi.h.) */
const kiln_model_desc *kiln_model_get_descriptor(const kiln_model *model);

/* The model's name (its symbol prefix). Model-owned. */
const char *kiln_model_name(const kiln_model *model);

/* Threads the model runs with (the caller included), >= 1. */
int32_t kiln_model_num_threads(const kiln_model *model);

/* Bytes of scratch the model needs per run (the descriptor's scratch_size). */
uint64_t kiln_model_scratch_size(const kiln_model *model);

size_t kiln_model_num_inputs(const kiln_model *model);
size_t kiln_model_num_outputs(const kiln_model *model);

/* Describes input/output `index` into `*out_info` (pointers model-owned).
 * INVALID_ARGUMENT when index is out of range. */
kiln_status kiln_model_input_info(const kiln_model *model, size_t index,
                                  kiln_tensor_info *out_info);
kiln_status kiln_model_output_info(const kiln_model *model, size_t index,
                                   kiln_tensor_info *out_info);

/* The index of the input/output called `name` (borrowed). NOT_FOUND, with
 * the model's names in the message, when there is none. */
kiln_status kiln_model_find_input(const kiln_model *model, const char *name,
                                  size_t *out_index);
kiln_status kiln_model_find_output(const kiln_model *model, const char *name,
                                   size_t *out_index);

/* Runs the model once. `inputs` (n_inputs entries) and `outputs` (n_outputs
 * entries) are matched to the model's inputs and outputs by name; every
 * model input and every model output must appear exactly once (see
 * kiln_tensor for what each field means and who owns what). The input array
 * is borrowed read-only; the output array is borrowed and its entries are
 * updated as kiln_tensor describes.
 *
 * Errors (the message names the tensor):
 *   NOT_FOUND           unknown input 'x' (the model's inputs: 'a', 'b')
 *   INVALID_ARGUMENT    input 'x': expected dtype int64, got float32
 *                       input 'x': expected rank 4, got 3
 *                       input 'x': expected shape [1,3,224,224], got [1,3,224,225]
 *                       missing input 'x' (float32 [1,3,224,224])
 *                       output 'y': buffer has 16 bytes, needs 24
 *   RUNTIME_CHECK_FAILED  the model's check message, naming the ONNX node
 *   FAILED_PRECONDITION   the handle is already running (not reentrant)
 *   OUT_OF_MEMORY       allocating an output failed
 *
 * Not reentrant for one model handle: calls on one handle must not overlap
 * (an overlapping call fails with FAILED_PRECONDITION rather than corrupt the
 * arena). Calls on different handles may run concurrently. */
kiln_status kiln_model_run(kiln_model *model, const kiln_tensor *inputs,
                           size_t n_inputs, kiln_tensor *outputs,
                           size_t n_outputs);

/*===----------------------------------------------------------------------===*
 * CPU
 *===----------------------------------------------------------------------===*/

/* Checks a comma-separated feature list in the form of kiln_model_desc's
 * `cpu_features` (e.g. "avx2,fma" or LLVM's "+avx2,+fma"; entries starting
 * with '-' are ignored; spaces around names are ignored) against the running
 * CPU and OS (for AVX/AVX-512/AMX also the XCR0 state enabled by the OS).
 * Returns NULL when every feature is available; otherwise UNSUPPORTED, naming
 * every missing feature, or the first name this runtime does not know.
 * `features` (NULL = none) is borrowed.
 * On x86 the names are LLVM's (sse4.2, avx2, fma, f16c, bmi2, avx512f,
 * avx512bw, avx512dq, avx512vl, avx512vnni, avx512bf16, avx512fp16,
 * avxvnni, amx-tile, ...). On other architectures every feature is accepted
 * for now (no check is done). */
kiln_status kiln_cpu_check_features(const char *features);

/* Whether `feature` (one name, as above) is available: 1 yes, 0 no, -1 name
 * unknown to this runtime. On non-x86 architectures: always 1. */
int kiln_cpu_has_feature(const char *feature);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_H */
