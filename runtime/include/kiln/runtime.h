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
 *    (kiln_model_open / kiln_model_close, kiln_run_context_create /
 *    kiln_run_context_destroy).
 *  - Every declaration says who owns what. "Borrowed" means the callee only
 *    reads the memory during the call; "model-owned" means the memory lives
 *    until kiln_model_close().
 *
 * Threading: one opened model serves any number of threads at once, as an
 * onnxruntime session does. Its code and weights are loaded once; what a run
 * writes (scratch arena, argument arrays, the context the compiled code gets)
 * lives in a kiln_run_context. kiln_model_run() may be called from many
 * threads at once on one handle: each call takes an idle context from a pool
 * the model keeps (creating one when none is idle) and gives it back. Callers
 * that prefer to hold their own create one context per thread and call
 * kiln_model_run_with_context(); one context serves one run at a time.
 * Functions taking a `const kiln_model *` may be called from any thread at any
 * time. The model's thread pool is shared by its runs: a parallel loop that
 * finds it busy with another run's loop runs on its calling thread.
 * kiln_model_close() must not race with a run, and every context created with
 * kiln_run_context_create() must be destroyed before it. Distinct handles are
 * independent.
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
#define KILN_API_VERSION_MINOR 4
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
   * CPU lacks or this runtime does not know, a device executable or
   * symbolic dims this runtime cannot run yet. */
  KILN_STATUS_UNSUPPORTED = 3,
  /* A run-time check inside the compiled model failed (e.g. a Gather index out
   * of range); the message names the ONNX node. */
  KILN_STATUS_RUNTIME_CHECK_FAILED = 4,
  KILN_STATUS_OUT_OF_MEMORY = 5,
  /* The call is not allowed in the current state (e.g. one run context used
   * by two runs at once). */
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

/* Bytes per element (bool: 1), or 0 for an unknown dtype. For the packed
 * dtypes (int4, uint4, float4e2m1, int2, uint2: KILN_DTYPE_PACKED_TABLE in
 * model_abi.h) 1: one unpacked element, as numpy holds ml_dtypes' arrays; the
 * runtime's buffers hold them packed (kiln_dtype_buffer_size). */
size_t kiln_dtype_size(kiln_dtype dtype);

/* Bits per element as the runtime's buffers hold them: 4 for int4, uint4 and
 * float4e2m1, 2 for int2 and uint2, 8 * kiln_dtype_size() otherwise; 0 for an
 * unknown dtype. */
size_t kiln_dtype_bits(kiln_dtype dtype);

/* Bytes of a buffer of `num_elements` elements of `dtype` as kiln_model_run()
 * reads and writes it: ceil(num_elements * bits / 8) (packed dtypes: low bits
 * first, the last byte's unused high bits 0). 0 for an unknown dtype, a
 * negative count or on overflow. */
size_t kiln_dtype_buffer_size(kiln_dtype dtype, int64_t num_elements);

/* Packs `num_elements` unpacked elements of a packed dtype (one per byte, the
 * element's code in its low bits: ml_dtypes' int4/uint4/int2/uint2/
 * float4_e2m1fn arrays) from `src` into kiln_dtype_buffer_size() bytes at
 * `dst` (caller-owned, not overlapping). For any other dtype it copies
 * num_elements * kiln_dtype_size() bytes. */
void kiln_pack_elements(kiln_dtype dtype, const void *src, void *dst,
                        int64_t num_elements);

/* The reverse: `num_elements` elements packed at `src` into one byte each at
 * `dst` (the code in the low bits, high bits 0). `dst` may be `src` itself
 * (it unpacks in place, from the end: give it the unpacked size). */
void kiln_unpack_elements(kiln_dtype dtype, const void *src, void *dst,
                          int64_t num_elements);

/* A fixed name of a descriptor's executable format (kiln_executable_format in
 * model_abi.h: "host", "spirv", "ptx", "cubin", "hsaco") or memory kind
 * (kiln_memory_kind: "host-scratch", "device-local", "host-visible",
 * "device-constant"); NULL for a value that is none of them. Static storage. */
const char *kiln_executable_format_name(uint32_t format);
const char *kiln_memory_kind_name(uint32_t kind);

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

/* The buffer's bytes: kiln_dtype_buffer_size(dtype, num_elements)
 * (num_elements * kiln_dtype_size(dtype) but for the packed dtypes). 0 for an
 * unknown dtype or on overflow. */
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
 * sets `dtype`, `rank`, `shape` (runtime-owned pointer: the model's for static
 * shapes; with symbolic dims, this run's dims, valid until the calling
 * thread's next kiln_model_run, or the context's next run for
 * kiln_model_run_with_context) and `byte_size` (the output's size). On failure, buffers the runtime allocated are freed and
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

/* An opened model: the loaded code and weights (for kiln_model_open), its
 * thread pool and its pool of run contexts. Created by kiln_model_open*(),
 * destroyed by kiln_model_close(). */
typedef struct kiln_model kiln_model;

/* The state of one run at a time on one model: its scratch arena, argument
 * arrays and the exec context the compiled code gets. Created by
 * kiln_run_context_create(), destroyed by kiln_run_context_destroy(). */
typedef struct kiln_run_context kiln_run_context;

typedef struct kiln_model_options {
  /* Threads that run the model, the calling thread included: 0 (default)
   * means one per CPU this process may run on; 1 means no worker threads. The
   * pool is created by kiln_model_open*() and lives with the model.
   * kiln_model_open() also checks a large file's checksum with up to this
   * many threads (at most 8), which end before it returns. */
  int32_t num_threads;
  /* An optional caller-owned scratch arena of `scratch_size` bytes, 64-byte
   * aligned (or the model's scratch alignment, when larger), at least
   * kiln_model_scratch_size() bytes; borrowed until kiln_model_close(). It
   * serves one run context at a time: the one the model creates when it is
   * opened (so a single-threaded caller runs in it, as before), or, once
   * that is destroyed, the next one created. Contexts created while it is
   * held allocate their own arena. NULL (default): every context allocates
   * its own, the first when the model is opened. A model with symbolic dims
   * may need more at a run (buffers sized from the symbols): a context
   * owning its arena grows it (and keeps it grown); a run needing more than
   * `scratch_size` of this arena fails with KILN_STATUS_OUT_OF_MEMORY. */
  void *scratch;
  size_t scratch_size;
  /* Where the model runs (borrowed during kiln_model_open*):
   *  NULL, "" or "auto"  the environment variable KILN_DEVICE when it is set
   *                  (any form below), else the first of "cuda", "vulkan",
   *                  "cpu" that the artifact holds and that opens here: a
   *                  device whose driver library or hardware is missing
   *                  (UNSUPPORTED) is passed over (a CPU model on the CPU, a
   *                  Vulkan model on a Vulkan device);
   *  "cpu"           the host CPU: a model with only Vulkan code is refused
   *                  (UNSUPPORTED);
   *  "vulkan"        a Vulkan device (the one $KILN_VULKAN_DEVICE names, else
   *                  the best: discrete, integrated, virtual, then CPU
   *                  implementations); a CPU model is refused (UNSUPPORTED);
   *  "vulkan:SEL"    the Vulkan device SEL: its index among the loader's
   *                  devices, or a case-insensitive part of its name
   *                  (overrides $KILN_VULKAN_DEVICE);
   *  "cuda"          a CUDA device through libcuda.so.1 (the one
   *                  $KILN_CUDA_DEVICE names, else device 0) for a model
   *                  compiled with `--device cuda`; other models are refused
   *                  (UNSUPPORTED);
   *  "cuda:SEL"      the CUDA device SEL: its ordinal, or a case-insensitive
   *                  part of its name (overrides $KILN_CUDA_DEVICE);
   *  "hip", "hip:SEL" the same for an AMD GPU through libamdhip64.so
   *                  ($KILN_HIP_DEVICE) and a model compiled with
   *                  `--device hip`;
   *  "vulkan,cpu"    a comma-separated list of the above, tried in order as
   *                  auto's is;
   *  "none"          opened and checked, no device started (its runs fail).
   * A device named alone must open: one the artifact does not hold is
   * UNSUPPORTED naming those it holds, and a back end that cannot start
   * gives its own error. An artifact compiled with several `--device` holds
   * a variant per device. See docs/gpu.md. */
  const char *device;
  /* The CPU variant of a multi-variant artifact to open, by its name
   * ("x86-64-v3"; `kiln inspect` lists them): INVALID_ARGUMENT when the
   * artifact has none of that name, UNSUPPORTED when this CPU cannot run it.
   * NULL (default): the environment variable KILN_CPU when set, else the
   * first variant this CPU runs (the artifact lists the most capable first).
   * A model without variants counts as one variant named by its `cpu`. */
  const char *cpu_variant;
} kiln_model_options;

/* Sets `options` to the defaults (num_threads 0, no caller scratch, device
 * NULL = auto, the best CPU variant). */
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

/* Opens the variant of a multi-variant artifact linked into the program
 * (`<name>_artifact()` of a statically linked model, model_abi.h) for the
 * device `options->device` chooses (a multi-device artifact; see
 * kiln_model_options) and, on the CPU, the variant `options->cpu_variant`,
 * else KILN_CPU, else this CPU's features select, as kiln_model_open() does
 * for a .so. `artifact` is borrowed and must outlive the model. UNSUPPORTED
 * when no variant runs on this CPU, naming each variant and what it lacks, or
 * when no device chosen opens, naming why and the devices it holds. */
kiln_status kiln_model_open_artifact(const kiln_artifact_desc *artifact,
                                     const kiln_model_options *options,
                                     kiln_model **out_model);

/* The CPU variant kiln_model_open_artifact() with default options would open
 * on the CPU (other devices' variants are not considered): the variant
 * KILN_CPU names, else the first this CPU runs; when none fits, the last
 * one (the most portable CPU one), whose open then says what this CPU lacks.
 * NULL for a NULL or malformed table. What a multi-variant object's
 * `<name>_descriptor()` returns. */
const kiln_model_desc *
kiln_artifact_default_model(const kiln_artifact_desc *artifact);

/* Stops the thread pool, frees the pooled run contexts and their arenas (not
 * a caller's), unloads the library. Every model-owned pointer becomes
 * invalid. NULL is a no-op. Must not race with a run on the same handle;
 * contexts from kiln_run_context_create() must be destroyed first. */
void kiln_model_close(kiln_model *model);

/* The descriptor (model-owned): name, producer, target, cpu features, ...
 * (Not called kiln_model_descriptor: that is the fixed-name function every
 * model .so exports, see model_abi.h.) */
const kiln_model_desc *kiln_model_get_descriptor(const kiln_model *model);

/* The model's name (its symbol prefix). Model-owned. */
const char *kiln_model_name(const kiln_model *model);

/* The name of the variant that was opened ("x86-64-v3"), or "" when the model
 * was opened from a plain descriptor (no variant table). Model-owned. */
const char *kiln_model_variant(const kiln_model *model);

/* The variant table the model was opened from, or NULL when it has none.
 * Model-owned (static data of the artifact). */
const kiln_artifact_desc *kiln_model_get_artifact(const kiln_model *model);

/* Threads the model runs with (the caller included), >= 1. */
int32_t kiln_model_num_threads(const kiln_model *model);

/* Bytes of scratch the model needs per run context (the size of the
 * descriptor's host-scratch memory need; 0 when it has none). A model with
 * symbolic dims needs more at large sizes: its shape function gives each
 * run's size (docs/dynamic-shapes.md). */
uint64_t kiln_model_scratch_size(const kiln_model *model);

size_t kiln_model_num_inputs(const kiln_model *model);
size_t kiln_model_num_outputs(const kiln_model *model);

/* Symbolic dims (docs/dynamic-shapes.md): a dim of an input or output shape
 * below 0 is symbol KILN_DIM_SYMBOL_ID(dim) (model_abi.h). The number of
 * symbols (0 for a model with static shapes), and symbol `index`'s name
 * (model-owned, valid until kiln_model_close()) and bounds: every run's value
 * is in min..max, max = KILN_DIM_UNBOUNDED (-1) when it has none. Each out
 * pointer may be NULL. INVALID_ARGUMENT for a NULL model or an index out of
 * range. */
size_t kiln_model_num_symbols(const kiln_model *model);
kiln_status kiln_model_symbol_info(const kiln_model *model, size_t index,
                                   const char **out_name, int64_t *out_min,
                                   int64_t *out_max);

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
 *   OUT_OF_MEMORY       allocating an output or a new run context failed
 *
 * Thread-safe: calls on one handle may overlap; each runs in a context taken
 * from the model's pool (a new one, with its own arena, when every pooled
 * context is busy; contexts are kept until kiln_model_close()). */
kiln_status kiln_model_run(kiln_model *model, const kiln_tensor *inputs,
                           size_t n_inputs, kiln_tensor *outputs,
                           size_t n_outputs);

/* Creates a run context of `model` (borrowed; it must outlive the context):
 * its own scratch arena (or options.scratch, when no other context holds it)
 * and argument arrays. On success `*out_context` is caller-owned.
 * Errors: INVALID_ARGUMENT (NULL argument), OUT_OF_MEMORY. */
kiln_status kiln_run_context_create(kiln_model *model,
                                    kiln_run_context **out_context);

/* Frees `context` and its arena (gives options.scratch back to the model).
 * NULL is a no-op. Must not race with a run in it. */
void kiln_run_context_destroy(kiln_run_context *context);

/* kiln_model_run() in `context`, a context of `model` (else
 * INVALID_ARGUMENT). Calls with different contexts may overlap; one context
 * serves one run at a time (an overlapping call fails with
 * FAILED_PRECONDITION rather than corrupt its arena). */
kiln_status kiln_model_run_with_context(kiln_model *model,
                                        kiln_run_context *context,
                                        const kiln_tensor *inputs,
                                        size_t n_inputs, kiln_tensor *outputs,
                                        size_t n_outputs);

/*===----------------------------------------------------------------------===*
 * Devices
 *===----------------------------------------------------------------------===*/

/* Where an opened model runs: "cpu", "vulkan", "cuda" or "hip". Static
 * storage. */
const char *kiln_model_device(const kiln_model *model);

/* The Vulkan objects a model opened on "vulkan" runs on, for callers that
 * keep their data on that device (kiln_model_run_device). The handles are
 * model-owned: valid until kiln_model_close(); do not destroy them. Callers
 * must not submit to the model's queue (the runtime holds no lock for them);
 * they create buffers on `device` (memory of `physical_device`) with
 * VK_BUFFER_USAGE_TRANSFER_SRC_BIT (inputs) or _DST_BIT (outputs), with the
 * loader's functions from `get_instance_proc_addr`.
 * Errors: INVALID_ARGUMENT (NULL argument), FAILED_PRECONDITION (the model
 * does not run on Vulkan). */
typedef struct kiln_vulkan_handles {
  void *instance;        /* VkInstance */
  void *physical_device; /* VkPhysicalDevice */
  void *device;          /* VkDevice */
  uint32_t queue_family_index; /* the family of the model's compute queue */
  uint32_t api_version;        /* the device's VkPhysicalDeviceProperties one */
  /* PFN_vkGetInstanceProcAddr of the loader the runtime loaded. */
  void (*(*get_instance_proc_addr)(void *instance, const char *name))(void);
} kiln_vulkan_handles;
kiln_status kiln_model_vulkan_handles(const kiln_model *model,
                                      kiln_vulkan_handles *out_handles);

/* The CUDA device a model opened on "cuda" runs on, for callers that keep
 * their data there (kiln_model_run_device). The context is the device's
 * primary context (the one the CUDA runtime API, cudaMalloc, uses on that
 * device), retained by the model until kiln_model_close(); do not destroy
 * it. Errors: INVALID_ARGUMENT (NULL argument), FAILED_PRECONDITION (the
 * model does not run on CUDA). */
typedef struct kiln_cuda_handles {
  int32_t device;   /* the CUdevice ordinal */
  uint32_t compute_capability; /* 10 * major + minor, e.g. 90 */
  void *context;    /* CUcontext */
} kiln_cuda_handles;
kiln_status kiln_model_cuda_handles(const kiln_model *model,
                                    kiln_cuda_handles *out_handles);

/* An input or output in caller device memory: `byte_size` bytes from
 * `offset` in `buffer`, at least the tensor's size; dense row-major as
 * kiln_tensor's data. On Vulkan `buffer` is a VkBuffer of the model's
 * VkDevice; on CUDA a CUdeviceptr of the model's device (kiln_cuda_handles);
 * on HIP a hipDeviceptr_t of the model's device. Matched by name like
 * kiln_tensor. Borrowed for the call. */
typedef struct kiln_device_tensor {
  const char *name;
  uint64_t buffer; /* VkBuffer, CUdeviceptr or hipDeviceptr_t */
  uint64_t offset;
  uint64_t byte_size;
} kiln_device_tensor;

/* kiln_model_run on device buffers: the run copies each input from its
 * buffer into the model's own device memory, runs, and copies each output
 * into its buffer, all on the device; no host copy. Synchronous: it returns
 * once the outputs are written. The caller's writes to the inputs must be
 * complete (their submissions waited for) before the call, and nothing may
 * access the outputs during it. Thread-safe as kiln_model_run.
 * Errors: as kiln_model_run (a buffer shorter than its tensor:
 * INVALID_ARGUMENT), FAILED_PRECONDITION for a model on the CPU. */
kiln_status kiln_model_run_device(kiln_model *model,
                                  const kiln_device_tensor *inputs,
                                  size_t n_inputs,
                                  const kiln_device_tensor *outputs,
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
 * avxvnni, amx-tile, ...). On AArch64 Linux and Android they are checked
 * against getauxval(AT_HWCAP/AT_HWCAP2), under LLVM's names too (crc, lse,
 * rdm, fullfp16, dotprod, rcpc, i8mm, bf16, sve, ...). Elsewhere every
 * feature is accepted for now (no check is done). KILN_CPU_DISABLE=a,b,c* in
 * the environment makes the named features (a trailing '*': every feature
 * with that prefix) count as missing, to try what a smaller CPU would run. */
kiln_status kiln_cpu_check_features(const char *features);

/* Whether `feature` (one name, as above) is available: 1 yes, 0 no, -1 name
 * unknown to this runtime. Where no check is done: always 1. */
int kiln_cpu_has_feature(const char *feature);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_H */
