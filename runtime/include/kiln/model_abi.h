/*===- kiln/model_abi.h - Contract between compiled models and the runtime -===*
 *
 * A model compiled by kiln is code for the whole graph plus a constant
 * descriptor of that code. This header is the binary contract between the two
 * sides: the compiler generates code and a descriptor that match it, the
 * runtime reads them. Users call runtime.h, not this header. It is plain C99
 * and also included by the compiler (C++), which takes the dtype table below
 * from here.
 *
 * Version 2 describes, beside the host code of today's CPU models, what GPU
 * targets and shapes known only at run time need, so that they plug in without
 * another ABI break: symbolic dims with bounds and a compiled shape function;
 * executables of several formats with a dispatch table; memory needs per
 * memory kind. What the CPU back end fills today is marked "CPU:"; a runtime
 * refuses (UNSUPPORTED) what it cannot run yet and never trusts a field it did
 * not validate.
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

/* Bumped on any incompatible change to the structures below. Version 1 (one
 * host entry, static shapes, a scratch size) and version 2 (no run symbols:
 * kiln_dim_symbol without `flags`, read-only symbols in the dynamic entry)
 * are refused by this runtime. */
#define KILN_MODEL_ABI_VERSION 3

/*===----------------------------------------------------------------------===*
 * Element types: the one table
 *===----------------------------------------------------------------------===*/

/* Classes of element types: how a dtype's bits are read. */
#define KILN_DTYPE_CLASS_FLOAT 0    /* IEEE-754 binary16/32/64 */
#define KILN_DTYPE_CLASS_BFLOAT 1   /* bfloat16: the high half of a float32 */
#define KILN_DTYPE_CLASS_SIGNED 2   /* two's-complement integer */
#define KILN_DTYPE_CLASS_UNSIGNED 3 /* unsigned integer */
#define KILN_DTYPE_CLASS_BOOL 4     /* one byte per element, 0 or 1 */
#define KILN_DTYPE_CLASS_FLOAT8 5   /* an 8-bit float of the OCP/ONNX formats; the
                                       ONNX_ID says which (E4M3FN, E4M3FNUZ,
                                       E5M2, E5M2FNUZ) */

/* Every element type kiln knows, once: X(NAME, ONNX_ID, STRING, BYTES, CLASS,
 * CTYPE) with
 *   NAME     the suffix of the enumerator KILN_DTYPE_<NAME>;
 *   ONNX_ID  its ONNX TensorProto.DataType number (the enumerator's value);
 *   STRING   the lower-case name kiln_dtype_name() returns ("float32");
 *   BYTES    bytes per element;
 *   CLASS    a KILN_DTYPE_CLASS_* value (with BYTES it gives the MLIR type:
 *            FLOAT 2/4/8 = f16/f32/f64, BFLOAT = bf16, SIGNED/UNSIGNED n =
 *            an integer of 8n bits, BOOL = i1, FLOAT8 = the f8E* type
 *            the ONNX_ID names);
 *   CTYPE    the C type one element is stored as (16-bit floats: their bits).
 * Users of the table (runtime, descriptor generator, kiln-run, compiler)
 * define X and expand it, e.g. in C++:
 *   #define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE) case ID: return STR;
 *   switch (id) { KILN_DTYPE_TABLE(KILN_X) }
 * Adding a dtype here is all it takes for every user to know it. */
#define KILN_DTYPE_TABLE(X)                                                    \
  X(FLOAT32, 1, "float32", 4, KILN_DTYPE_CLASS_FLOAT, float)                   \
  X(UINT8, 2, "uint8", 1, KILN_DTYPE_CLASS_UNSIGNED, uint8_t)                  \
  X(INT8, 3, "int8", 1, KILN_DTYPE_CLASS_SIGNED, int8_t)                       \
  X(UINT16, 4, "uint16", 2, KILN_DTYPE_CLASS_UNSIGNED, uint16_t)               \
  X(INT16, 5, "int16", 2, KILN_DTYPE_CLASS_SIGNED, int16_t)                    \
  X(INT32, 6, "int32", 4, KILN_DTYPE_CLASS_SIGNED, int32_t)                    \
  X(INT64, 7, "int64", 8, KILN_DTYPE_CLASS_SIGNED, int64_t)                    \
  X(BOOL, 9, "bool", 1, KILN_DTYPE_CLASS_BOOL, uint8_t)                        \
  X(FLOAT16, 10, "float16", 2, KILN_DTYPE_CLASS_FLOAT, uint16_t)               \
  X(FLOAT64, 11, "float64", 8, KILN_DTYPE_CLASS_FLOAT, double)                 \
  X(UINT32, 12, "uint32", 4, KILN_DTYPE_CLASS_UNSIGNED, uint32_t)              \
  X(UINT64, 13, "uint64", 8, KILN_DTYPE_CLASS_UNSIGNED, uint64_t)              \
  X(BFLOAT16, 16, "bfloat16", 2, KILN_DTYPE_CLASS_BFLOAT, uint16_t)           \
  X(FLOAT8E4M3FN, 17, "float8e4m3fn", 1, KILN_DTYPE_CLASS_FLOAT8, uint8_t)     \
  X(FLOAT8E4M3FNUZ, 18, "float8e4m3fnuz", 1, KILN_DTYPE_CLASS_FLOAT8, uint8_t) \
  X(FLOAT8E5M2, 19, "float8e5m2", 1, KILN_DTYPE_CLASS_FLOAT8, uint8_t)         \
  X(FLOAT8E5M2FNUZ, 20, "float8e5m2fnuz", 1, KILN_DTYPE_CLASS_FLOAT8, uint8_t)

/* Element types use ONNX's TensorProto.DataType numbering. */
#define KILN_DTYPE_ENUMERATOR_(NAME, ID, STR, BYTES, CLASS, CTYPE)             \
  KILN_DTYPE_##NAME = ID,
typedef enum kiln_dtype {
  KILN_DTYPE_UNDEFINED = 0,
  KILN_DTYPE_TABLE(KILN_DTYPE_ENUMERATOR_)
} kiln_dtype;
#undef KILN_DTYPE_ENUMERATOR_

/*===----------------------------------------------------------------------===*
 * Tensors, dims and symbols
 *===----------------------------------------------------------------------===*/

/* One dim of a tensor is an int64: a value >= 0 is a static size; a negative
 * value names symbol `KILN_DIM_SYMBOL_ID(dim)` of the descriptor's `symbols`
 * (a size known only at run time). */
#define KILN_DIM_SYMBOL(id) (-(int64_t)(id)-1)
#define KILN_DIM_IS_SYMBOL(dim) ((dim) < 0)
#define KILN_DIM_SYMBOL_ID(dim) ((uint32_t)(-((dim) + 1)))

/* A `max` with no compile-time bound. */
#define KILN_DIM_UNBOUNDED INT64_C(-1)

/* Symbol flag: a *run symbol*, a size decided by the values the run computes
 * (a Reshape whose shape is a graph input, a Slice with run-time ends, ...),
 * known only when the host entry returns. It never appears in an input's
 * dims; before the run its value is -1 (the shape function leaves it so and
 * gives -1 for every output dim naming it); the dynamic entry writes it into
 * `symbols` before returning (every run symbol some output's dims name). An
 * output whose dims name a run symbol is a *run output*: see
 * kiln_dynamic_entry_fn. A run symbol has min 0, max KILN_DIM_UNBOUNDED, and
 * no memory need's size depends on it. */
#define KILN_SYMBOL_RUN 1u

/* A size known only at run time (ONNX's dim_param, e.g. "batch"). The runtime
 * binds the symbols that appear in input dims from the caller's tensors
 * (every occurrence must agree, and min <= value <= max); the shape function
 * computes the others, but run symbols (KILN_SYMBOL_RUN), which the entry
 * writes. */
typedef struct kiln_dim_symbol {
  const char *name; /* for messages, e.g. "batch", "y.dim1"; never NULL */
  int64_t min;      /* smallest value the code handles, >= 0 */
  int64_t max;      /* largest, >= min, or KILN_DIM_UNBOUNDED */
  uint32_t flags;   /* KILN_SYMBOL_RUN or 0 */
  uint32_t reserved; /* 0 */
} kiln_dim_symbol;

/* One graph input or output. */
typedef struct kiln_tensor_desc {
  const char *name;     /* the ONNX value name; never NULL */
  int32_t dtype;        /* a kiln_dtype */
  int32_t rank;         /* >= 0 */
  const int64_t *shape; /* rank dims (see KILN_DIM_SYMBOL); NULL when rank 0.
                           CPU: every dim static (>= 0). */
} kiln_tensor_desc;

/* Status codes compiled functions return. 0 is success; a positive value N
 * means run-time check N failed, and `check_messages[N - 1]` says which ONNX
 * node and what (e.g. a Gather index out of range). */
typedef int32_t kiln_model_status;

/* The shape function: for a model with symbols, computes from the symbols
 * bound from the inputs everything the run needs to know before it starts.
 *   symbols        num_symbols entries. In: the value of every symbol that
 *                  appears in an input's dims (bound and checked by the
 *                  runtime); -1 for the others. Out: every symbol set but the
 *                  run symbols (KILN_SYMBOL_RUN), left -1.
 *   output_dims    output_dims[j] has outputs[j].rank entries: written with
 *                  output j's actual dims (static ones too); -1 for a dim
 *                  that names a run symbol (the runtime fills it in from
 *                  `symbols` after the entry).
 *   memory_sizes   num_memory_needs entries: written with the bytes each
 *                  memory need takes in this run (<= its `size` unless that
 *                  is KILN_SIZE_UNBOUNDED).
 *   binding_offsets  num_dynamic_offsets entries: written with the byte
 *                  offsets of bindings flagged KILN_BINDING_DYNAMIC_OFFSET.
 * Returns 0, or a check number N when the dims break a constraint of the graph
 * (e.g. two broadcast dims that differ; check_messages[N - 1] says which).
 * Pure: no global state, safe to call from several threads at once.
 * CPU: NULL (every dim static, the descriptor's sizes are the run's). */
typedef kiln_model_status (*kiln_shape_fn)(int64_t *symbols,
                                           int64_t *const *output_dims,
                                           uint64_t *memory_sizes,
                                           uint64_t *binding_offsets);

/*===----------------------------------------------------------------------===*
 * Executables
 *===----------------------------------------------------------------------===*/

/* The per-run context handed to host code. Generated code treats it as
 * opaque and passes it back to runtime callbacks (kiln/parallel.h: it starts
 * with a kiln_exec_context_header). Each concurrent run has its own. */
typedef struct kiln_exec_context kiln_exec_context;

/* A host entry for static shapes: `inputs[i]` points at input i's dense
 * row-major data, `outputs[i]` at a buffer of output i's full size; both
 * caller-owned and 64-byte alignment is not required. `scratch` is the run's
 * KILN_MEMORY_HOST_SCRATCH memory (its need's size and alignment; NULL when
 * the model has none or its size is 0). Returns 0 or a check number. Must keep
 * no mutable global state: concurrent runs call it at once with different
 * scratch and context. */
typedef kiln_model_status (*kiln_entry_fn)(void *const *inputs,
                                           void *const *outputs, void *scratch,
                                           kiln_exec_context *context);

/* A host entry for a model with symbols: as kiln_entry_fn, with the values of
 * every symbol (as the shape function completed them) first. `symbols` is
 * writable: before returning 0, the entry writes the value of every run
 * symbol (KILN_SYMBOL_RUN) that an output's dims name.
 *
 * Run outputs (an output whose dims name a run symbol): its size is not known
 * before the run, so `outputs[j]` points at a `void *` slot (the runtime sets
 * it to NULL) instead of a buffer. The entry allocates the output's buffer
 * with the C library's malloc() (of exactly the output's bytes, row-major;
 * any alignment malloc gives), writes the output there and stores the pointer
 * in the slot; from then on the runtime owns it and frees it with free(). A
 * slot left NULL is allowed only for an output of 0 bytes. When the entry
 * returns a check number instead of 0, the runtime frees whatever the slots
 * hold. */
typedef kiln_model_status (*kiln_dynamic_entry_fn)(int64_t *symbols,
                                                   void *const *inputs,
                                                   void *const *outputs,
                                                   void *scratch,
                                                   kiln_exec_context *context);

/* What an executable's code is. */
typedef enum kiln_executable_format {
  /* Native code of the artifact's own target, linked into it: `entry` or
   * `dynamic_entry`. CPU: the only one. */
  KILN_EXECUTABLE_HOST = 0,
  KILN_EXECUTABLE_SPIRV = 1, /* a Vulkan SPIR-V module (words, little-endian) */
  KILN_EXECUTABLE_PTX = 2,   /* NVIDIA PTX text (NUL-terminated) */
  KILN_EXECUTABLE_CUBIN = 3, /* an NVIDIA cubin ELF for one sm_XX */
  KILN_EXECUTABLE_HSACO = 4  /* an AMD HSA code object for one gfxNNN */
} kiln_executable_format;

/* Executable flag: this executable is another build of the executable
 * before it: the same kernels (names, order, parameters), e.g. a cubin that
 * ptxas assembled from the PTX before it. The first executable of such a
 * group is the one dispatches name (a PTX module, which any newer GPU can
 * run through the driver's JIT); a runtime runs whichever build of the group
 * suits the device (CUDA: a cubin whose sm_XY has the device's major
 * version and a minor version <= the device's; else the PTX, whose sm_XY
 * must be <= the device's compute capability). No dispatch names an
 * alternative. */
#define KILN_EXECUTABLE_ALTERNATIVE 1u

/* One executable of the model: host code, or a device module whose kernels
 * the dispatch table launches. */
typedef struct kiln_executable_desc {
  uint32_t format; /* a kiln_executable_format */
  uint32_t flags;  /* KILN_EXECUTABLE_ALTERNATIVE or 0 */
  /* What the code was built for: HOST: the target triple; SPIRV: the Vulkan
   * environment ("vulkan1.3"); PTX/CUBIN: "sm_80"; HSACO: "gfx90a". */
  const char *target;
  /* HOST: exactly one of the two is set: `dynamic_entry` when the model has
   * symbols, else `entry`. Device formats: both NULL. */
  kiln_entry_fn entry;
  kiln_dynamic_entry_fn dynamic_entry;
  /* Device formats: the module's `size` bytes. HOST: NULL and 0, or the
   * kernel table: `num_kernels` pointers to the host code's parallel-loop
   * bodies (the `body` functions it passes to parallel_for, kiln/parallel.h;
   * NULL for one the code generator dropped), size = num_kernels *
   * sizeof(void *). Only profiles read it (KILN_PROFILE, docs/tools.md). */
  const void *data;
  uint64_t size;
  /* Device formats: the kernels' entry-point names; a dispatch names one by
   * its ordinal. HOST: 0 and NULL, or with the kernel table above the ONNX
   * nodes each body computes ("Conv_3, Relu_4"). */
  uint32_t num_kernels;
  const char *const *kernel_names;
} kiln_executable_desc;

/* Where a dispatch binding's buffer comes from. */
typedef enum kiln_binding_kind {
  KILN_BINDING_INPUT = 0,  /* graph input `index` (its device copy) */
  KILN_BINDING_OUTPUT = 1, /* graph output `index` (its device copy) */
  KILN_BINDING_MEMORY = 2  /* memory need `index` of the run or the model */
} kiln_binding_kind;

/* `offset` is an index into the shape function's binding_offsets. */
#define KILN_BINDING_DYNAMIC_OFFSET 1u

typedef struct kiln_binding_desc {
  uint32_t kind;   /* a kiln_binding_kind */
  uint32_t index;  /* the input, output or memory need */
  uint32_t flags;  /* KILN_BINDING_DYNAMIC_OFFSET or 0 */
  uint32_t reserved; /* 0 */
  uint64_t offset; /* bytes from the buffer's start (or see the flag) */
  uint64_t size;   /* bytes bound; 0 = to the buffer's end */
} kiln_binding_desc;

/* Workgroup counts computed at run time from the symbols (bound as for the
 * shape function). */
typedef void (*kiln_workgroup_count_fn)(const int64_t *symbols,
                                        uint32_t counts[3]);

/* One kernel launch. A run performs the dispatches in table order, each
 * seeing every write of the ones before it (a full barrier between two). */
typedef struct kiln_dispatch_desc {
  uint32_t executable; /* index into executables; a device format */
  uint32_t kernel;     /* ordinal into that executable's kernel_names */
  uint32_t workgroup_count[3]; /* used when workgroup_count_fn is NULL */
  kiln_workgroup_count_fn workgroup_count_fn;
  uint32_t workgroup_size[3];  /* threads per workgroup the kernel was built
                                  for (CUDA/HIP launch parameters) */
  uint32_t shared_memory_size; /* dynamic workgroup-shared bytes */
  uint32_t num_bindings;
  const kiln_binding_desc *bindings; /* in binding-slot order */
  /* Push constants: `num_constants` 32-bit words, then for each of the
   * `num_symbol_constants` symbol ids its value as two words (low, high). */
  uint32_t num_constants;
  const uint32_t *constants;
  uint32_t num_symbol_constants;
  const uint32_t *symbol_constants;
} kiln_dispatch_desc;

/* No executable (entry_executable of a model that is only dispatches). */
#define KILN_NO_EXECUTABLE UINT32_MAX

/*===----------------------------------------------------------------------===*
 * Memory needs
 *===----------------------------------------------------------------------===*/

typedef enum kiln_memory_kind {
  /* Host memory for one run: the host entry's `scratch` (at most one such
   * need). Contents undefined at the start of a run. CPU: the arena of
   * kiln-plan-memory. */
  KILN_MEMORY_HOST_SCRATCH = 0,
  /* Device memory for one run, not visible to the host (transients). */
  KILN_MEMORY_DEVICE_LOCAL = 1,
  /* Device memory for one run that the host can map (staging of inputs and
   * outputs). */
  KILN_MEMORY_HOST_VISIBLE = 2,
  /* Device memory for the opened model, filled once from `initial_data` when
   * it is opened and only read by runs (weights). */
  KILN_MEMORY_DEVICE_CONSTANT = 3
} kiln_memory_kind;

/* A size known only per run (the shape function gives it). */
#define KILN_SIZE_UNBOUNDED UINT64_MAX

/* Memory-need flag: the run's check status, for device code that cannot
 * return one. A KILN_MEMORY_DEVICE_LOCAL need of at least 4 bytes (at most
 * one per model): the runtime sets its first uint32 to 0 before the
 * dispatches and reads it after them; a kernel whose run-time check fails
 * stores the check number N there (atomically, e.g. OpAtomicUMax, since
 * dispatches that bind it run without barriers between them; any failing
 * check may win), and the run fails with check_messages[N - 1], as a host
 * entry returning N does. */
#define KILN_MEMORY_RUN_STATUS 1u

typedef struct kiln_memory_need {
  uint32_t kind; /* a kiln_memory_kind */
  uint32_t flags; /* KILN_MEMORY_RUN_STATUS or 0 */
  /* Bytes: with symbols, the size at their maxima (the shape function gives
   * each run's, never more), or KILN_SIZE_UNBOUNDED when a symbol it depends
   * on has no maximum. */
  uint64_t size;
  uint64_t alignment; /* a power of two; the runtime gives at least 64 */
  /* KILN_MEMORY_DEVICE_CONSTANT: `size` bytes to upload (NULL allowed when
   * `size` is 0); other kinds: NULL. */
  const void *initial_data;
} kiln_memory_need;

/*===----------------------------------------------------------------------===*
 * The model
 *===----------------------------------------------------------------------===*/

/* How a run goes: the runtime binds the symbols and calls the shape function
 * (when the model has symbols), gets each per-run memory need, calls the host
 * entry of `entry_executable` (when there is one), then performs the
 * dispatches. CPU: no symbols, one host executable, no dispatches, one
 * host-scratch memory need (size 0 when nothing needs scratch). */
typedef struct kiln_model_desc {
  /* The first two fields are the same in every ABI version, so a runtime can
   * read and refuse, by name, a model of any version. */
  uint32_t abi_version; /* KILN_MODEL_ABI_VERSION */
  const char *name;     /* the model's symbol prefix */

  const char *producer; /* e.g. "pytorch 1.13.1" from the ONNX file */
  const char *target_triple; /* the host code's target */
  const char *cpu;          /* CPU the host code was tuned for, e.g. "znver5" */
  const char *cpu_features; /* comma-separated features the host code needs,
                               e.g. "avx512f,avx512bw,fma"; "" if baseline */
  uint32_t flags;           /* none defined yet: 0 */

  uint32_t num_inputs;
  uint32_t num_outputs;
  const kiln_tensor_desc *inputs;
  const kiln_tensor_desc *outputs;

  uint32_t num_symbols;
  const kiln_dim_symbol *symbols;
  kiln_shape_fn shape_fn; /* non-NULL exactly when num_symbols > 0 */
  uint32_t num_dynamic_offsets; /* entries of the shape fn's binding_offsets */

  uint32_t num_executables;
  const kiln_executable_desc *executables;
  uint32_t entry_executable; /* a HOST executable, or KILN_NO_EXECUTABLE */
  uint32_t num_dispatches;
  const kiln_dispatch_desc *dispatches;

  uint32_t num_memory_needs;
  const kiln_memory_need *memory_needs;

  uint32_t num_check_messages;
  const char *const *check_messages;
} kiln_model_desc;

/* Every shared library kiln builds exports this one fixed-name function (the
 * prefixed descriptor `<name>_descriptor` is exported too, for static links). */
#define KILN_DESCRIPTOR_SYMBOL "kiln_model_descriptor"
typedef const kiln_model_desc *(*kiln_descriptor_fn)(void);

/*===----------------------------------------------------------------------===*
 * The artifact: several variants of one model in one file
 *===----------------------------------------------------------------------===*/

/* An artifact built for several CPUs (`kiln compile --cpu
 * x86-64-v2,x86-64-v3,x86-64-v4`, or `--cpu portable`), or for several
 * devices (`--device cpu --device vulkan`), holds one complete
 * kiln_model_desc per variant (own code, own descriptor; the same graph, so
 * the same inputs and outputs) and this table of them, which the runtime reads
 * at open to pick the variant the running machine supports. An artifact of
 * one variant has no table and is opened through KILN_DESCRIPTOR_SYMBOL, as
 * every artifact before the table was. The table is versioned on its own: a
 * variant's model keeps KILN_MODEL_ABI_VERSION. */
#define KILN_ARTIFACT_ABI_VERSION 1

/* One variant: a device and what it needs of the machine. An artifact
 * compiled for several devices (`kiln compile --device cpu --device vulkan`)
 * holds one entry per device build beside its CPU variants. */
typedef struct kiln_variant_desc {
  /* The device the variant's code runs on: "cpu", "vulkan" or "cuda"; the
   * runtime picks the device by kiln_model_options.device (docs/gpu.md) and
   * skips devices it does not know. */
  const char *device;
  /* The variant's name: for the CPU what `--cpu` named it, KILN_CPU and
   * kiln_model_options.cpu_variant select it by, e.g. "x86-64-v3",
   * "armv8.2-a+dotprod+fp16"; for another device its `--device`
   * ("vulkan", "cuda:sm_80"). */
  const char *name;
  /* Comma-separated CPU features the runtime checks before picking it (the
   * variant model's cpu_features); "" if it runs on the architecture's
   * baseline. */
  const char *cpu_features;
  uint32_t flags;    /* none defined yet: 0 */
  uint32_t reserved; /* 0 */
  kiln_descriptor_fn descriptor; /* the variant's model descriptor */
} kiln_variant_desc;

typedef struct kiln_artifact_desc {
  uint32_t abi_version; /* KILN_ARTIFACT_ABI_VERSION */
  uint32_t num_variants; /* >= 1 */
  const char *name;      /* the model's symbol prefix */
  /* Other devices' variants first, then the CPU ones in order of
   * preference: the runtime picks the first CPU variant the machine runs
   * (the compiler puts the variants needing the most features first, so the
   * last is the most portable). */
  const kiln_variant_desc *variants;
} kiln_artifact_desc;

/* A shared library with the table exports this fixed-name function (and the
 * prefixed `<name>_artifact` for static links); its KILN_DESCRIPTOR_SYMBOL
 * then returns the most portable variant, so a runtime that predates the
 * table still opens it. */
#define KILN_ARTIFACT_SYMBOL "kiln_artifact_descriptor"
typedef const kiln_artifact_desc *(*kiln_artifact_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_MODEL_ABI_H */
