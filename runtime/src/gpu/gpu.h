/*===- runtime/src/gpu/gpu.h - The runtime's device back ends --------------===*
 *
 * What model.c and descriptor.c call to run a model whose descriptor is a
 * dispatch table over device executables (model_abi.h). Two back ends, each
 * behind one kiln_gpu_backend table: Vulkan (SPIR-V; vulkan*.c) and CUDA
 * (PTX, cubin; cuda.c). Each loads its driver library with dlopen
 * (libvulkan.so.1, libcuda.so.1) when such a model is opened, so a program
 * that only runs CPU models never needs either. Built without the Vulkan
 * headers, vulkan.c compiles to stubs that refuse Vulkan models; the CUDA
 * back end needs no header at build time and is always built.
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_GPU_GPU_H
#define KILN_RUNTIME_GPU_GPU_H

#include "internal.h"

/* The Vulkan back end is built where the Vulkan headers are (libvulkan-dev);
 * it never links libvulkan. -DKILN_NO_VULKAN leaves it out. */
#if !defined(KILN_NO_VULKAN) && defined(__has_include)
#if __has_include(<vulkan/vulkan.h>)
#define KILN_HAVE_VULKAN 1
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * SPIR-V modules (spirv.c)
 *===----------------------------------------------------------------------===*/

/* Capabilities a module declares that need an optional device feature. */
#define KILN_SPIRV_INT8 (1u << 0)
#define KILN_SPIRV_INT16 (1u << 1)
#define KILN_SPIRV_INT64 (1u << 2)
#define KILN_SPIRV_FLOAT16 (1u << 3)
#define KILN_SPIRV_FLOAT64 (1u << 4)
#define KILN_SPIRV_STORAGE_BUFFER_8BIT (1u << 5)
#define KILN_SPIRV_UNIFORM_STORAGE_8BIT (1u << 6)
#define KILN_SPIRV_PUSH_CONSTANT_8BIT (1u << 7)
#define KILN_SPIRV_STORAGE_BUFFER_16BIT (1u << 8)
#define KILN_SPIRV_UNIFORM_STORAGE_16BIT (1u << 9)
#define KILN_SPIRV_PUSH_CONSTANT_16BIT (1u << 10)
#define KILN_SPIRV_NUM_FEATURES 11

/* The Vulkan feature that a KILN_SPIRV_* bit (index `bit`) needs, e.g.
 * "shaderInt8", and the SPIR-V capability's name. */
KILN_INTERNAL const char *kiln_spirv_feature_name(unsigned bit);
KILN_INTERNAL const char *kiln_spirv_capability_name(unsigned bit);

/* Checks the module's header and instruction stream (every word count in
 * bounds, every entry-point name terminated) and sets *out_features to the
 * KILN_SPIRV_* bits its OpCapability list needs. On failure returns 0 and
 * writes why into `error` (NUL-terminated, at most error_size bytes). */
KILN_INTERNAL int kiln_spirv_scan(const void *data, uint64_t size,
                                  uint32_t *out_features, char *error,
                                  size_t error_size);

/* The GLCompute entry points called names[0..num_names) of a module
 * kiln_spirv_scan accepted, in one pass: out_entries[k] says whether
 * names[k] exists and, when an OpExecutionMode LocalSize gives it, its
 * workgroup size. */
typedef struct kiln_spirv_entry {
  int found;
  int has_local_size;
  uint32_t id;
  uint32_t local_size[3];
} kiln_spirv_entry;
KILN_INTERNAL void kiln_spirv_find_entries(const void *data, uint64_t size,
                                           uint32_t num_names,
                                           const char *const *names,
                                           kiln_spirv_entry *out_entries);

/* The bindings of descriptor set 0 that a module accepted by kiln_spirv_scan
 * may write: bit b for binding b (bit 63 for every binding from 63 up). A
 * binding is written when an OpStore, OpCopyMemory, atomic or any
 * instruction this analysis does not know as a read uses a pointer into its
 * buffer; all ones when in doubt. Module-wide: every entry point counts. */
KILN_INTERNAL uint64_t kiln_spirv_written_bindings(const void *data,
                                                   uint64_t size);

/*===----------------------------------------------------------------------===*
 * Device back ends: one small table each
 *===----------------------------------------------------------------------===*/

/* What model.c calls to run a device model, whichever device it is on. The
 * back end's model and run-context objects are opaque here (`void *`). */
typedef struct kiln_gpu_backend {
  /* The device name kiln_model_device() reports ("vulkan", "cuda", "hip"). */
  const char *device;
  /* Opens the back end for a descriptor kiln_check_descriptor accepted:
   * loads the driver library, picks the device (`selector`: what followed
   * "DEVICE:" in the device option, or NULL; else the back end's
   * environment variable; else its default), loads the modules and uploads
   * the device-constant memory. */
  kiln_status (*open)(const kiln_model_desc *desc, const char *selector,
                      void **out_model);
  void (*close)(void *model);
  /* Everything one run at a time needs: the arena, the device copies of the
   * inputs and outputs, what replays the run. */
  kiln_status (*context_create)(void *model, void **out_context);
  void (*context_destroy)(void *context);
  /* Whether every later run on `context` fails (a run that timed out), so
   * kiln_model_run's pool drops it. */
  int (*context_unusable)(const void *context);
  /* One run with host inputs and outputs (dense, each of its tensor's
   * size). */
  kiln_status (*run)(void *context, void *const *inputs, void *const *outputs);
  /* One run on caller device buffers: for input/output i, buffers[i] is a
   * VkBuffer or a CUdeviceptr / hipDeviceptr_t (as uint64_t) and offsets[i] the byte offset
   * of its data. */
  kiln_status (*run_device)(void *context, const uint64_t *input_buffers,
                            const uint64_t *input_offsets,
                            const uint64_t *output_buffers,
                            const uint64_t *output_offsets);
} kiln_gpu_backend;

/* Vulkan (vulkan.c): SPIR-V executables. */
KILN_INTERNAL extern const kiln_gpu_backend kiln_vulkan_backend;
/* CUDA (cuda.c): PTX and cubin executables, through libcuda.so.1. */
KILN_INTERNAL extern const kiln_gpu_backend kiln_cuda_backend;
/* HIP (cuda.c, the same code over HIP's module API): hsaco executables,
 * through libamdhip64.so. */
KILN_INTERNAL extern const kiln_gpu_backend kiln_hip_backend;

/* The back end that runs the device executables of a descriptor
 * kiln_check_descriptor accepted (NULL for a model with host code). */
KILN_INTERNAL const kiln_gpu_backend *
kiln_gpu_backend_for(const kiln_model_desc *desc);

/*===----------------------------------------------------------------------===*
 * The Vulkan back end (vulkan.c, vulkan_run.c)
 *===----------------------------------------------------------------------===*/

/* 1 when this runtime was built with the Vulkan back end. */
KILN_INTERNAL int kiln_vulkan_built(void);

typedef struct kiln_vulkan_model kiln_vulkan_model;
typedef struct kiln_vulkan_context kiln_vulkan_context;

/* kiln_vulkan_backend's functions, typed. The context's command buffer
 * holds the whole run, recorded once when it is created. */
KILN_INTERNAL kiln_status kiln_vulkan_open(const kiln_model_desc *desc,
                                           const char *selector,
                                           kiln_vulkan_model **out_gpu);
KILN_INTERNAL void kiln_vulkan_close(kiln_vulkan_model *gpu);
KILN_INTERNAL kiln_status kiln_vulkan_context_create(kiln_vulkan_model *gpu,
                                                     kiln_vulkan_context **out);
KILN_INTERNAL void kiln_vulkan_context_destroy(kiln_vulkan_context *context);
/* Whether a run on `context` outlived its fence wait (KILN_VULKAN_TIMEOUT_MS).
 */
KILN_INTERNAL int
kiln_vulkan_context_unusable(const kiln_vulkan_context *context);
KILN_INTERNAL kiln_status kiln_vulkan_run(kiln_vulkan_context *context,
                                          void *const *inputs,
                                          void *const *outputs);
/* input/output i: a VkBuffer (as uint64_t) and the byte offset of its data. */
KILN_INTERNAL kiln_status kiln_vulkan_run_device(
    kiln_vulkan_context *context, const uint64_t *input_buffers,
    const uint64_t *input_offsets, const uint64_t *output_buffers,
    const uint64_t *output_offsets);

/* The barriers between dispatches the last recorded run has (for tests). */
KILN_INTERNAL uint32_t kiln_vulkan_dispatch_barriers(kiln_vulkan_model *gpu);

/* The handles of the model's device (kiln_vulkan_handles in runtime.h). */
KILN_INTERNAL void kiln_vulkan_get_handles(const kiln_vulkan_model *gpu,
                                           kiln_vulkan_handles *out);

/*===----------------------------------------------------------------------===*
 * The CUDA back end (cuda.c)
 *===----------------------------------------------------------------------===*/

/* "sm_XY[a]" -> 10 * X + Y (sm_90 -> 90); 0 when `target` is not that form.
 * *arch_specific is set for an "a" suffix (sm_90a: that chip only). */
KILN_INTERNAL unsigned kiln_cuda_parse_sm(const char *target,
                                          int *arch_specific);

/* The device ordinal of the model's CUDA device (kiln_cuda_handles). */
KILN_INTERNAL void kiln_cuda_get_handles(const void *model,
                                         kiln_cuda_handles *out);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_GPU_GPU_H */
