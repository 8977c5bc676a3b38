/*===- runtime/src/gpu/cuda.c - CUDA and HIP back ends (driver API) -------===*
 *
 * Runs a model whose executables are PTX modules (and cubins, their
 * alternatives: model_abi.h) on an NVIDIA GPU through the CUDA driver API,
 * which it takes from libcuda.so.1 with dlopen: no CUDA header or library is
 * needed to build the runtime, and a program that never opens a CUDA model
 * never loads the driver. The few types and prototypes it uses are declared
 * below, as the driver API (cuda.h) defines them.
 *
 * HIP's module API (hip_runtime_api.h) mirrors the same functions one for
 * one, so the same code runs HSA code objects (hsaco) on AMD GPUs through
 * libamdhip64.so: each driver function has its CUDA and its HIP symbol
 * (KILN_CUDA_FNS), and `kiln_driver_api` holds what differs (library,
 * environment variables, names in messages). The HIP side is compiled and
 * its no-library/no-device paths tested; no AMD GPU has run it yet
 * (docs/gpu.md).
 *
 * Opening: the driver, the device (option "cuda:SEL", $KILN_CUDA_DEVICE, or
 * device 0), its primary context retained, per executable group the build
 * that suits the device loaded once (a cubin of the device's major version,
 * else the PTX through the driver's JIT), each dispatched kernel looked up,
 * the weights (device-constant memory) uploaded once. Each run context has
 * a stream, one device allocation (arena, run status, inputs, outputs) and
 * the kernel parameters of every dispatch, fixed when it is created; the
 * dispatches are captured once into a CUDA graph and replayed per run
 * (KILN_CUDA_GRAPH=0: launched one by one). docs/gpu.md.
 *===----------------------------------------------------------------------===*/
#if !defined(_GNU_SOURCE) && defined(__linux__)
#define _GNU_SOURCE
#endif

#include <ctype.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpu/gpu.h"

/*===----------------------------------------------------------------------===*
 * The driver API, as cuda.h declares it (only what is used)
 *===----------------------------------------------------------------------===*/

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;

#define KILN_CUDA_SUCCESS 0
#define KILN_CUDA_ERROR_OUT_OF_MEMORY 2
#define KILN_CUDA_ERROR_NO_DEVICE 100
#define KILN_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define KILN_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define KILN_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
#define KILN_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES 1
#define KILN_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define KILN_CU_JIT_ERROR_LOG_BUFFER 5
#define KILN_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define KILN_CU_STREAM_NON_BLOCKING 0x1u
#define KILN_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL 1

/* X(field, symbol in libcuda, symbol in libamdhip64 (NULL: HIP has none,
 * the field stays NULL), parameters). HIP's types have CUDA's sizes and
 * codes: hipDeviceptr_t is a pointer (64 bits, passed as CUdeviceptr is),
 * hipSuccess 0, hipErrorOutOfMemory 2, hipErrorNoDevice 100. */
#define KILN_CUDA_FNS(X)                                                       \
  X(cuInit, "cuInit", "hipInit", (unsigned flags))                             \
  X(cuGetErrorName, "cuGetErrorName", NULL,                                    \
    (CUresult error, const char **name))                                       \
  X(cuGetErrorString, "cuGetErrorString", NULL,                                \
    (CUresult error, const char **text))                                       \
  X(cuDeviceGetCount, "cuDeviceGetCount", "hipGetDeviceCount", (int *count))   \
  X(cuDeviceGet, "cuDeviceGet", "hipDeviceGet",                                \
    (CUdevice * device, int ordinal))                                          \
  X(cuDeviceGetName, "cuDeviceGetName", "hipDeviceGetName",                    \
    (char *name, int len, CUdevice dev))                                       \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL,                        \
    (int *value, int attribute, CUdevice dev))                                 \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",                      \
    "hipDevicePrimaryCtxRetain", (CUcontext * context, CUdevice dev))          \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",                 \
    "hipDevicePrimaryCtxRelease", (CUdevice dev))                              \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", "hipCtxSetCurrent",                    \
    (CUcontext context))                                                       \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", "hipModuleLoadDataEx",           \
    (CUmodule * module, const void *image, unsigned num_options, int *options, \
     void **values))                                                           \
  X(cuModuleUnload, "cuModuleUnload", "hipModuleUnload", (CUmodule module))    \
  X(cuModuleGetFunction, "cuModuleGetFunction", "hipModuleGetFunction",        \
    (CUfunction * function, CUmodule module, const char *name))                \
  X(cuFuncGetAttribute, "cuFuncGetAttribute", "hipFuncGetAttribute",           \
    (int *value, int attribute, CUfunction function))                          \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", NULL,                            \
    (CUfunction function, int attribute, int value))                           \
  X(cuMemAlloc, "cuMemAlloc_v2", "hipMalloc",                                  \
    (CUdeviceptr * pointer, size_t bytes))                                     \
  X(cuMemFree, "cuMemFree_v2", "hipFree", (CUdeviceptr pointer))               \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", "hipMemcpyHtoD",                          \
    (CUdeviceptr dst, const void *src, size_t bytes))                          \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", "hipMemcpyHtoDAsync",           \
    (CUdeviceptr dst, const void *src, size_t bytes, CUstream stream))         \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", "hipMemcpyDtoHAsync",           \
    (void *dst, CUdeviceptr src, size_t bytes, CUstream stream))               \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", "hipMemcpyDtoDAsync",           \
    (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream))         \
  X(cuMemsetD32Async, "cuMemsetD32Async", "hipMemsetD32Async",                 \
    (CUdeviceptr dst, unsigned value, size_t count, CUstream stream))          \
  X(cuStreamCreate, "cuStreamCreate", "hipStreamCreateWithFlags",              \
    (CUstream * stream, unsigned flags))                                       \
  X(cuStreamDestroy, "cuStreamDestroy_v2", "hipStreamDestroy",                 \
    (CUstream stream))                                                         \
  X(cuStreamSynchronize, "cuStreamSynchronize", "hipStreamSynchronize",        \
    (CUstream stream))                                                         \
  X(cuLaunchKernel, "cuLaunchKernel", "hipModuleLaunchKernel",                 \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,         \
     unsigned by, unsigned bz, unsigned shared, CUstream stream,               \
     void **params, void **extra))                                             \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", "hipStreamBeginCapture",  \
    (CUstream stream, int mode))                                               \
  X(cuStreamEndCapture, "cuStreamEndCapture", "hipStreamEndCapture",           \
    (CUstream stream, CUgraph * graph))                                        \
  X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags",                \
    "hipGraphInstantiateWithFlags",                                            \
    (CUgraphExec * exec, CUgraph graph, unsigned long long flags))             \
  X(cuGraphLaunch, "cuGraphLaunch", "hipGraphLaunch",                          \
    (CUgraphExec exec, CUstream stream))                                       \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", "hipGraphExecDestroy",          \
    (CUgraphExec exec))                                                        \
  X(cuGraphDestroy, "cuGraphDestroy", "hipGraphDestroy", (CUgraph graph))

typedef struct kiln_cuda_fns {
#define KILN_CUDA_FIELD(field, symbol, hip_symbol, params)                     \
  CUresult(*field) params;
  KILN_CUDA_FNS(KILN_CUDA_FIELD)
#undef KILN_CUDA_FIELD
  /* HIP returns its error names and texts instead of storing them. */
  const char *(*hipGetErrorName)(CUresult error);
  const char *(*hipGetErrorString)(CUresult error);
} kiln_cuda_fns;

/* What differs between the two driver APIs this file runs. */
typedef struct kiln_driver_api {
  const char *device;      /* "cuda", "hip": kiln_model_device() */
  const char *api;         /* "CUDA", "HIP": in messages */
  const char *libraries[5]; /* tried in order; NULL-terminated */
  const char *library_env; /* names another library */
  const char *device_env;  /* picks the device */
  const char *graph_env;   /* "0": launch kernel by kernel */
  const char *install;     /* what to install, for messages */
  const char *serialize;   /* the environment that serializes launches */
  int hip;
} kiln_driver_api;

static const kiln_driver_api kiln_cuda_api = {
    "cuda",
    "CUDA",
    {"libcuda.so.1", NULL},
    "KILN_CUDA_DRIVER",
    "KILN_CUDA_DEVICE",
    "KILN_CUDA_GRAPH",
    "NVIDIA's driver (it ships libcuda.so.1)",
    "CUDA_LAUNCH_BLOCKING=1",
    0};

static const kiln_driver_api kiln_hip_api = {
    "hip",
    "HIP",
    {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
     "libamdhip64.so.5", NULL},
    "KILN_HIP_LIBRARY",
    "KILN_HIP_DEVICE",
    "KILN_HIP_GRAPH",
    "ROCm's HIP runtime (libamdhip64.so) and the amdgpu driver",
    "AMD_SERIALIZE_KERNEL=3",
    1};

/*===----------------------------------------------------------------------===*
 * State
 *===----------------------------------------------------------------------===*/

typedef struct kiln_cuda_model {
  const kiln_model_desc *desc;
  const char *name;
  const kiln_driver_api *api;
  void *driver; /* dlopen handle of the library (kept loaded: see close) */
  kiln_cuda_fns cu;
  CUdevice device;
  int ordinal;
  unsigned sm; /* compute capability, 10 * major + minor (0 on HIP) */
  char device_name[128];
  CUcontext context; /* the device's primary context, retained */
  CUmodule *modules; /* per executable: the loaded build of its group */
  /* Per dispatch: the kernel to launch. */
  CUfunction *functions;
  CUdeviceptr *constants; /* per memory need (device-constant ones set) */
  int64_t status_need;    /* the KILN_MEMORY_RUN_STATUS need, or -1 */
  uint64_t alignment;     /* of every region of a run context's buffer */
  int use_graph;          /* KILN_CUDA_GRAPH (KILN_HIP_GRAPH) is not 0 */
  atomic_int lost;        /* a run failed with a sticky error */
} kiln_cuda_model;

typedef struct kiln_cuda_context {
  kiln_cuda_model *gpu;
  CUstream stream;
  CUdeviceptr memory;      /* device-local needs, then inputs, outputs */
  uint64_t *need_offsets;  /* per memory need (device-local ones) */
  uint64_t *input_offsets; /* in `memory` */
  uint64_t *output_offsets;
  CUdeviceptr *args;     /* every dispatch's kernel arguments, in order */
  void **params;         /* pointers to them, as cuLaunchKernel takes */
  uint32_t *first_param; /* per dispatch: its first entry of params */
  CUgraph graph;
  CUgraphExec graph_exec;
  uint32_t run_status; /* read back after each run */
} kiln_cuda_context;

/*===----------------------------------------------------------------------===*
 * Errors
 *===----------------------------------------------------------------------===*/

static const char *kiln_cuda_error_name(const kiln_cuda_fns *cu,
                                        CUresult result) {
  const char *name = NULL;
  if (cu->hipGetErrorName)
    name = cu->hipGetErrorName(result);
  else if (cu->cuGetErrorName && cu->cuGetErrorName(result, &name) != 0)
    name = NULL;
  return name ? name : "unknown error";
}

static const char *kiln_cuda_error_string(const kiln_cuda_fns *cu,
                                          CUresult result) {
  const char *text = NULL;
  if (cu->hipGetErrorString)
    text = cu->hipGetErrorString(result);
  else if (cu->cuGetErrorString && cu->cuGetErrorString(result, &text) != 0)
    text = NULL;
  return text;
}

/* "model 'm' on CUDA device 0 'd': <what>: CUDA_ERROR_X (text)". */
static kiln_status kiln_cuda_error(const kiln_cuda_model *gpu, CUresult result,
                                   const char *format, ...) KILN_PRINTF(3, 4);
static kiln_status kiln_cuda_error(const kiln_cuda_model *gpu, CUresult result,
                                   const char *format, ...) {
  kiln_strbuf buf = {0};
  if (gpu->device_name[0])
    kiln_strbuf_appendf(&buf, "model '%s' on %s device %d '%s': ", gpu->name,
                        gpu->api->api, gpu->ordinal, gpu->device_name);
  else
    kiln_strbuf_appendf(&buf, "model '%s' on %s: ", gpu->name, gpu->api->api);
  va_list args;
  va_start(args, format);
  kiln_status detail = kiln_make_status_v(KILN_STATUS_INTERNAL, format, args);
  va_end(args);
  kiln_strbuf_appendf(&buf, "%s", kiln_status_message(detail));
  kiln_status_free(detail);
  const char *text = kiln_cuda_error_string(&gpu->cu, result);
  kiln_strbuf_appendf(&buf, ": %s%s%s%s",
                      kiln_cuda_error_name(&gpu->cu, result), text ? " (" : "",
                      text ? text : "", text ? ")" : "");
  kiln_status_code_t code = result == KILN_CUDA_ERROR_OUT_OF_MEMORY
                                ? KILN_STATUS_OUT_OF_MEMORY
                                : KILN_STATUS_INTERNAL;
  return kiln_strbuf_to_status(&buf, code);
}

unsigned kiln_cuda_parse_sm(const char *target, int *arch_specific) {
  *arch_specific = 0;
  if (!target || strncmp(target, "sm_", 3) != 0)
    return 0;
  const char *p = target + 3;
  unsigned value = 0;
  int digits = 0;
  while (isdigit((unsigned char)*p) && digits < 4) {
    value = value * 10 + (unsigned)(*p++ - '0');
    ++digits;
  }
  if (digits < 2)
    return 0;
  if (*p == 'a') {
    *arch_specific = 1;
    ++p;
  }
  return *p == '\0' ? value : 0;
}

/*===----------------------------------------------------------------------===*
 * Opening
 *===----------------------------------------------------------------------===*/

static kiln_status kiln_cuda_load(kiln_cuda_model *gpu) {
  const kiln_driver_api *api = gpu->api;
  const char *library = getenv(api->library_env);
  char why[512] = ""; /* the first library's reason (dlerror's is reused) */
  int named = library && *library;
  for (int i = 0; !gpu->driver && (named ? i == 0 : !!api->libraries[i]);
       ++i) {
    if (!named)
      library = api->libraries[i];
    gpu->driver = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    const char *error = gpu->driver ? NULL : dlerror();
    if (error && !why[0])
      snprintf(why, sizeof(why), "%s", error);
  }
  if (!gpu->driver && !named)
    library = api->libraries[0];
  if (!gpu->driver)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' runs on %s, but the %s driver "
                            "library '%s' cannot be loaded (%s); install "
                            "%s, or compile the model for another device",
                            gpu->name, api->api, api->api, library,
                            why[0] ? why : "unknown error", api->install);
  const char *older = api->hip ? "ROCm 5.3" : "CUDA 11.4";
#define KILN_CUDA_LOAD(field, symbol, hip_symbol, params)                      \
  {                                                                            \
    const char *name = api->hip ? hip_symbol : symbol;                         \
    void *fn = name ? dlsym(gpu->driver, name) : NULL;                         \
    if (name && !fn)                                                           \
      return kiln_make_status(KILN_STATUS_UNSUPPORTED,                         \
                              "model '%s' runs on %s, but the driver "         \
                              "library '%s' has no '%s' (a driver older than " \
                              "%s?)",                                          \
                              gpu->name, api->api, library, name, older);      \
    memcpy(&gpu->cu.field, &fn, sizeof(fn));                                   \
  }
  KILN_CUDA_FNS(KILN_CUDA_LOAD)
#undef KILN_CUDA_LOAD
  if (api->hip) {
    void *name = dlsym(gpu->driver, "hipGetErrorName");
    void *text = dlsym(gpu->driver, "hipGetErrorString");
    memcpy(&gpu->cu.hipGetErrorName, &name, sizeof(name));
    memcpy(&gpu->cu.hipGetErrorString, &text, sizeof(text));
  }
  return NULL;
}

/* The device: `selector` ("cuda:SEL"), else $KILN_CUDA_DEVICE, else 0. SEL
 * is an ordinal or a case-insensitive part of the device's name. */
static kiln_status kiln_cuda_pick_device(kiln_cuda_model *gpu,
                                         const char *selector) {
  const kiln_cuda_fns *cu = &gpu->cu;
  const char *api = gpu->api->api;
  CUresult result = cu->cuInit(0);
  if (result == KILN_CUDA_ERROR_NO_DEVICE)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' runs on %s, but the driver found no "
                            "%s device (%s)",
                            gpu->name, api, api,
                            kiln_cuda_error_name(cu, result));
  if (result != KILN_CUDA_SUCCESS)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' runs on %s, but the driver cannot "
                            "start: %s failed with %s",
                            gpu->name, api,
                            gpu->api->hip ? "hipInit" : "cuInit",
                            kiln_cuda_error_name(cu, result));
  int count = 0;
  result = cu->cuDeviceGetCount(&count);
  if (result != KILN_CUDA_SUCCESS || count <= 0)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' runs on %s, but the driver found no "
                            "%s device",
                            gpu->name, api, api);
  const char *from = "the device option";
  if (!selector || !*selector) {
    selector = getenv(gpu->api->device_env);
    from = gpu->api->device_env;
    size_t prefix = strlen(gpu->api->device);
    if (selector && strncmp(selector, gpu->api->device, prefix) == 0 &&
        selector[prefix] == ':')
      selector += prefix + 1;
  }
  kiln_strbuf names = {0};
  int chosen = selector && *selector ? -1 : 0;
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    char name[128] = "";
    if (cu->cuDeviceGet(&dev, i) != KILN_CUDA_SUCCESS)
      continue;
    cu->cuDeviceGetName(name, (int)sizeof(name) - 1, dev);
    kiln_strbuf_appendf(&names, "%s%d '%s'", i ? ", " : "", i, name);
    if (chosen >= 0)
      continue;
    char *end = NULL;
    long ordinal = strtol(selector, &end, 10);
    if (end != selector && *end == '\0') {
      if (ordinal == i)
        chosen = i;
      continue;
    }
    size_t n = strlen(selector);
    for (const char *p = name; *p && chosen < 0; ++p)
      if (strncasecmp(p, selector, n) == 0)
        chosen = i;
  }
  if (chosen < 0) {
    kiln_strbuf buf = {0};
    kiln_strbuf_appendf(&buf,
                        "model '%s': no %s device matches '%s' (from %s; "
                        "the devices: %s)",
                        gpu->name, api, selector, from,
                        names.data ? names.data : "");
    kiln_strbuf_free(&names);
    return kiln_strbuf_to_status(&buf, KILN_STATUS_NOT_FOUND);
  }
  kiln_strbuf_free(&names);
  gpu->ordinal = chosen;
  result = cu->cuDeviceGet(&gpu->device, chosen);
  if (result != KILN_CUDA_SUCCESS)
    return kiln_cuda_error(gpu, result, "cuDeviceGet(%d)", chosen);
  cu->cuDeviceGetName(gpu->device_name, (int)sizeof(gpu->device_name) - 1,
                      gpu->device);
  int major = 0, minor = 0;
  if (cu->cuDeviceGetAttribute) { /* CUDA only: HIP's loader picks by gfx */
    cu->cuDeviceGetAttribute(
        &major, KILN_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, gpu->device);
    cu->cuDeviceGetAttribute(
        &minor, KILN_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, gpu->device);
  }
  gpu->sm = (unsigned)(major * 10 + minor);
  result = cu->cuDevicePrimaryCtxRetain(&gpu->context, gpu->device);
  if (result != KILN_CUDA_SUCCESS) {
    gpu->context = NULL;
    return kiln_cuda_error(gpu, result, "cannot retain the primary context");
  }
  result = cu->cuCtxSetCurrent(gpu->context);
  if (result != KILN_CUDA_SUCCESS)
    return kiln_cuda_error(gpu, result, "cuCtxSetCurrent");
  return NULL;
}

/* Which build of the group starting at executable `first` the device runs:
 * a cubin of its major version and a minor <= its own (the highest), else
 * the PTX if built for at most the device's compute capability. */
static int64_t kiln_cuda_pick_build(const kiln_cuda_model *gpu,
                                    uint32_t first) {
  const kiln_model_desc *desc = gpu->desc;
  int64_t best = -1, ptx = -1;
  unsigned best_sm = 0;
  for (uint32_t e = first; e < desc->num_executables; ++e) {
    const kiln_executable_desc *x = &desc->executables[e];
    if (e > first && !(x->flags & KILN_EXECUTABLE_ALTERNATIVE))
      break;
    int specific = 0;
    unsigned sm = kiln_cuda_parse_sm(x->target, &specific);
    if (x->format == KILN_EXECUTABLE_CUBIN) {
      int fits =
          specific ? sm == gpu->sm : sm / 10 == gpu->sm / 10 && sm <= gpu->sm;
      if (fits && (best < 0 || sm > best_sm)) {
        best = e;
        best_sm = sm;
      }
    } else if (x->format == KILN_EXECUTABLE_PTX && ptx < 0) {
      if (specific ? sm == gpu->sm : sm <= gpu->sm)
        ptx = e;
    }
  }
  return best >= 0 ? best : ptx;
}

/* HIP: the first code object of the group starting at executable `first`
 * that the device's loader accepts (each is built for one gfx name, and the
 * loader knows the device's). */
static kiln_status kiln_hip_load_group(kiln_cuda_model *gpu, uint32_t first) {
  const kiln_model_desc *desc = gpu->desc;
  const kiln_executable_desc *x = &desc->executables[first];
  CUresult result = KILN_CUDA_SUCCESS;
  kiln_strbuf targets = {0};
  for (uint32_t e = first; e < desc->num_executables; ++e) {
    const kiln_executable_desc *build = &desc->executables[e];
    if (e > first && !(build->flags & KILN_EXECUTABLE_ALTERNATIVE))
      break;
    kiln_strbuf_appendf(&targets, "%s%s", e > first ? ", " : "",
                        build->target);
    result = gpu->cu.cuModuleLoadDataEx(&gpu->modules[first], build->data, 0,
                                        NULL, NULL);
    if (result == KILN_CUDA_SUCCESS) {
      kiln_strbuf_free(&targets);
      return NULL;
    }
    gpu->modules[first] = NULL;
  }
  kiln_status status = kiln_cuda_error(
      gpu, result,
      "cannot load the code object of kernel '%s' (executable %u, built for "
      "%s; recompile with `kiln compile --device hip:GFX` naming this "
      "device's gfx architecture)",
      x->num_kernels ? x->kernel_names[0] : "?", (unsigned)first,
      targets.data ? targets.data : "?");
  kiln_strbuf_free(&targets);
  return status;
}

static kiln_status kiln_cuda_load_modules(kiln_cuda_model *gpu) {
  const kiln_model_desc *desc = gpu->desc;
  const kiln_cuda_fns *cu = &gpu->cu;
  gpu->modules = (CUmodule *)calloc(desc->num_executables, sizeof(CUmodule));
  gpu->functions =
      (CUfunction *)calloc(desc->num_dispatches, sizeof(CUfunction));
  if (!gpu->modules || !gpu->functions)
    return kiln_out_of_memory_status();
  for (uint32_t e = 0; e < desc->num_executables; ++e) {
    const kiln_executable_desc *x = &desc->executables[e];
    if (x->flags & KILN_EXECUTABLE_ALTERNATIVE)
      continue;
    int used = 0;
    for (uint32_t d = 0; d < desc->num_dispatches && !used; ++d)
      used = desc->dispatches[d].executable == e;
    if (!used)
      continue;
    if (gpu->api->hip) {
      kiln_status status = kiln_hip_load_group(gpu, e);
      if (status)
        return status;
      continue;
    }
    int64_t build = kiln_cuda_pick_build(gpu, e);
    if (build < 0) {
      kiln_strbuf buf = {0};
      kiln_strbuf_appendf(
          &buf,
          "model '%s': CUDA device %d '%s' has compute "
          "capability %u.%u, but the module of kernel '%s' "
          "(executable %u) was built for",
          gpu->name, gpu->ordinal, gpu->device_name, gpu->sm / 10, gpu->sm % 10,
          x->num_kernels ? x->kernel_names[0] : "?", (unsigned)e);
      for (uint32_t a = e; a < desc->num_executables; ++a) {
        if (a > e &&
            !(desc->executables[a].flags & KILN_EXECUTABLE_ALTERNATIVE))
          break;
        kiln_strbuf_appendf(
            &buf, "%s %s %s", a > e ? "," : "",
            kiln_executable_format_name(desc->executables[a].format),
            desc->executables[a].target);
      }
      kiln_strbuf_appendf(&buf,
                          " (recompile with `kiln compile --device "
                          "cuda:sm_%u`)",
                          gpu->sm);
      return kiln_strbuf_to_status(&buf, KILN_STATUS_UNSUPPORTED);
    }
    const kiln_executable_desc *chosen = &desc->executables[build];
    char log[4096] = "";
    int options[] = {KILN_CU_JIT_ERROR_LOG_BUFFER,
                     KILN_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, (void *)(uintptr_t)(sizeof(log) - 1)};
    CUresult result = cu->cuModuleLoadDataEx(&gpu->modules[e], chosen->data, 2,
                                             options, values);
    if (result != KILN_CUDA_SUCCESS) {
      gpu->modules[e] = NULL;
      log[sizeof(log) - 1] = '\0';
      return kiln_cuda_error(gpu, result,
                             "cannot load the %s module (for %s) of kernel "
                             "'%s' (executable %u)%s%s",
                             kiln_executable_format_name(chosen->format),
                             chosen->target,
                             x->num_kernels ? x->kernel_names[0] : "?",
                             (unsigned)build, log[0] ? ": " : "", log);
    }
  }
  for (uint32_t d = 0; d < desc->num_dispatches; ++d) {
    const kiln_dispatch_desc *x = &desc->dispatches[d];
    const char *kernel =
        desc->executables[x->executable].kernel_names[x->kernel];
    CUresult result = cu->cuModuleGetFunction(
        &gpu->functions[d], gpu->modules[x->executable], kernel);
    if (result != KILN_CUDA_SUCCESS)
      return kiln_cuda_error(gpu, result,
                             "kernel '%s' (dispatch %u) is not in its module",
                             kernel, (unsigned)d);
    if (x->num_constants || x->num_symbol_constants)
      return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                              "model '%s': dispatch %u (kernel '%s') pushes "
                              "constants, which the %s back end does not "
                              "pass yet (kernel parameters are the bindings)",
                              gpu->name, (unsigned)d, kernel, gpu->api->api);
    int max_threads = 0;
    cu->cuFuncGetAttribute(&max_threads,
                           KILN_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                           gpu->functions[d]);
    uint64_t threads = (uint64_t)x->workgroup_size[0] * x->workgroup_size[1] *
                       x->workgroup_size[2];
    if (max_threads > 0 && threads > (uint64_t)max_threads)
      return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                              "model '%s': dispatch %u (kernel '%s') runs %llu "
                              "threads per workgroup; on %s device %d '%s' "
                              "the kernel allows %d",
                              gpu->name, (unsigned)d, kernel,
                              (unsigned long long)threads, gpu->api->api,
                              gpu->ordinal,
                              gpu->device_name, max_threads);
    if (x->workgroup_count[1] > 65535 || x->workgroup_count[2] > 65535 ||
        x->workgroup_count[0] > 0x7fffffffu)
      return kiln_make_status(
          KILN_STATUS_UNSUPPORTED,
          "model '%s': dispatch %u (kernel '%s') has "
          "workgroup count [%u,%u,%u], beyond %s's "
          "grid limits",
          gpu->name, (unsigned)d, kernel, (unsigned)x->workgroup_count[0],
          (unsigned)x->workgroup_count[1], (unsigned)x->workgroup_count[2],
          gpu->api->api);
    /* HIP has no opt-in: its workgroups get up to 64 KiB. */
    if (!cu->cuFuncSetAttribute && x->shared_memory_size > 64 * 1024)
      return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                              "model '%s': dispatch %u (kernel '%s') needs %u "
                              "bytes of workgroup memory; %s allows 64 KiB",
                              gpu->name, (unsigned)d, kernel,
                              (unsigned)x->shared_memory_size, gpu->api->api);
    if (cu->cuFuncSetAttribute && x->shared_memory_size > 48 * 1024) {
      result = cu->cuFuncSetAttribute(
          gpu->functions[d],
          KILN_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
          (int)x->shared_memory_size);
      if (result != KILN_CUDA_SUCCESS)
        return kiln_cuda_error(gpu, result,
                               "dispatch %u (kernel '%s') needs %u bytes of "
                               "dynamic shared memory",
                               (unsigned)d, kernel,
                               (unsigned)x->shared_memory_size);
    }
  }
  return NULL;
}

static kiln_status kiln_cuda_upload_constants(kiln_cuda_model *gpu) {
  const kiln_model_desc *desc = gpu->desc;
  gpu->constants =
      (CUdeviceptr *)calloc(desc->num_memory_needs + 1, sizeof(CUdeviceptr));
  if (!gpu->constants)
    return kiln_out_of_memory_status();
  for (uint32_t m = 0; m < desc->num_memory_needs; ++m) {
    const kiln_memory_need *need = &desc->memory_needs[m];
    if (need->kind != KILN_MEMORY_DEVICE_CONSTANT)
      continue;
    size_t bytes = need->size ? (size_t)need->size : 4;
    CUresult result = gpu->cu.cuMemAlloc(&gpu->constants[m], bytes);
    if (result != KILN_CUDA_SUCCESS) {
      gpu->constants[m] = 0;
      return kiln_cuda_error(gpu, result,
                             "cannot allocate %llu bytes for the weights "
                             "(memory need %u)",
                             (unsigned long long)bytes, (unsigned)m);
    }
    if (need->size) {
      result = gpu->cu.cuMemcpyHtoD(gpu->constants[m], need->initial_data,
                                    (size_t)need->size);
      if (result != KILN_CUDA_SUCCESS)
        return kiln_cuda_error(gpu, result,
                               "cannot upload the weights (memory need %u)",
                               (unsigned)m);
    }
  }
  return NULL;
}

static void kiln_cuda_close(void *model) {
  kiln_cuda_model *gpu = (kiln_cuda_model *)model;
  if (!gpu)
    return;
  if (gpu->context) {
    const kiln_cuda_fns *cu = &gpu->cu;
    cu->cuCtxSetCurrent(gpu->context);
    for (uint32_t m = 0; gpu->constants && m < gpu->desc->num_memory_needs; ++m)
      if (gpu->constants[m])
        cu->cuMemFree(gpu->constants[m]);
    for (uint32_t e = 0; gpu->modules && e < gpu->desc->num_executables; ++e)
      if (gpu->modules[e])
        cu->cuModuleUnload(gpu->modules[e]);
    cu->cuDevicePrimaryCtxRelease(gpu->device);
  }
  /* libcuda stays loaded: unloading the driver while its threads or exit
   * handlers may still run is unsafe, and dlopen counts references. */
  free(gpu->constants);
  free(gpu->functions);
  free(gpu->modules);
  free(gpu);
}

static kiln_status kiln_driver_open(const kiln_driver_api *api,
                                    const kiln_model_desc *desc,
                                    const char *selector, void **out_model) {
  *out_model = NULL;
  kiln_cuda_model *gpu = (kiln_cuda_model *)calloc(1, sizeof(*gpu));
  if (!gpu)
    return kiln_out_of_memory_status();
  gpu->desc = desc;
  gpu->name = desc->name ? desc->name : "?";
  gpu->api = api;
  gpu->status_need = -1;
  gpu->alignment = 256;
  const char *graph = getenv(api->graph_env);
  gpu->use_graph = !(graph && strcmp(graph, "0") == 0);
  for (uint32_t m = 0; m < desc->num_memory_needs; ++m) {
    const kiln_memory_need *need = &desc->memory_needs[m];
    if (need->flags & KILN_MEMORY_RUN_STATUS)
      gpu->status_need = m;
    if (need->alignment > gpu->alignment)
      gpu->alignment = need->alignment;
  }
  kiln_status status = kiln_cuda_load(gpu);
  if (!status)
    status = kiln_cuda_pick_device(gpu, selector);
  if (!status)
    status = kiln_cuda_load_modules(gpu);
  if (!status)
    status = kiln_cuda_upload_constants(gpu);
  if (status) {
    kiln_cuda_close(gpu);
    return status;
  }
  *out_model = gpu;
  return NULL;
}

static kiln_status kiln_cuda_open(const kiln_model_desc *desc,
                                  const char *selector, void **out_model) {
  return kiln_driver_open(&kiln_cuda_api, desc, selector, out_model);
}

static kiln_status kiln_hip_open(const kiln_model_desc *desc,
                                 const char *selector, void **out_model) {
  return kiln_driver_open(&kiln_hip_api, desc, selector, out_model);
}

void kiln_cuda_get_handles(const void *model, kiln_cuda_handles *out) {
  const kiln_cuda_model *gpu = (const kiln_cuda_model *)model;
  out->device = gpu->ordinal;
  out->compute_capability = gpu->sm;
  out->context = (void *)gpu->context;
}

/*===----------------------------------------------------------------------===*
 * Run contexts
 *===----------------------------------------------------------------------===*/

static uint64_t kiln_cuda_align(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

static void kiln_cuda_context_destroy(void *context) {
  kiln_cuda_context *ctx = (kiln_cuda_context *)context;
  if (!ctx)
    return;
  const kiln_cuda_fns *cu = &ctx->gpu->cu;
  cu->cuCtxSetCurrent(ctx->gpu->context);
  if (ctx->stream)
    cu->cuStreamSynchronize(ctx->stream);
  if (ctx->graph_exec)
    cu->cuGraphExecDestroy(ctx->graph_exec);
  if (ctx->graph)
    cu->cuGraphDestroy(ctx->graph);
  if (ctx->memory)
    cu->cuMemFree(ctx->memory);
  if (ctx->stream)
    cu->cuStreamDestroy(ctx->stream);
  free(ctx->need_offsets);
  free(ctx->input_offsets);
  free(ctx->output_offsets);
  free(ctx->args);
  free(ctx->params);
  free(ctx->first_param);
  free(ctx);
}

/* The device address a binding starts at. */
static CUdeviceptr kiln_cuda_binding_address(const kiln_cuda_context *ctx,
                                             const kiln_binding_desc *b) {
  const kiln_cuda_model *gpu = ctx->gpu;
  if (b->kind == KILN_BINDING_INPUT)
    return ctx->memory + ctx->input_offsets[b->index] + b->offset;
  if (b->kind == KILN_BINDING_OUTPUT)
    return ctx->memory + ctx->output_offsets[b->index] + b->offset;
  if (gpu->desc->memory_needs[b->index].kind == KILN_MEMORY_DEVICE_CONSTANT)
    return gpu->constants[b->index] + b->offset;
  return ctx->memory + ctx->need_offsets[b->index] + b->offset;
}

/* Zeroes the run status and launches every dispatch on the stream. */
static kiln_status kiln_cuda_enqueue(kiln_cuda_context *ctx) {
  kiln_cuda_model *gpu = ctx->gpu;
  const kiln_model_desc *desc = gpu->desc;
  const kiln_cuda_fns *cu = &gpu->cu;
  CUresult result;
  if (gpu->status_need >= 0) {
    result = cu->cuMemsetD32Async(
        ctx->memory + ctx->need_offsets[gpu->status_need], 0, 1, ctx->stream);
    if (result != KILN_CUDA_SUCCESS)
      return kiln_cuda_error(gpu, result, "cannot clear the run status");
  }
  for (uint32_t d = 0; d < desc->num_dispatches; ++d) {
    const kiln_dispatch_desc *x = &desc->dispatches[d];
    result = cu->cuLaunchKernel(
        gpu->functions[d], x->workgroup_count[0], x->workgroup_count[1],
        x->workgroup_count[2], x->workgroup_size[0], x->workgroup_size[1],
        x->workgroup_size[2], x->shared_memory_size, ctx->stream,
        x->num_bindings ? &ctx->params[ctx->first_param[d]] : NULL, NULL);
    if (result != KILN_CUDA_SUCCESS)
      return kiln_cuda_error(
          gpu, result, "cannot launch kernel '%s' (dispatch %u)",
          desc->executables[x->executable].kernel_names[x->kernel],
          (unsigned)d);
  }
  return NULL;
}

static kiln_status kiln_cuda_context_create(void *model, void **out_context) {
  kiln_cuda_model *gpu = (kiln_cuda_model *)model;
  const kiln_model_desc *desc = gpu->desc;
  const kiln_cuda_fns *cu = &gpu->cu;
  *out_context = NULL;
  kiln_cuda_context *ctx = (kiln_cuda_context *)calloc(1, sizeof(*ctx));
  if (!ctx)
    return kiln_out_of_memory_status();
  ctx->gpu = gpu;
  uint32_t num_params = 0;
  for (uint32_t d = 0; d < desc->num_dispatches; ++d)
    num_params += desc->dispatches[d].num_bindings;
  ctx->need_offsets = (uint64_t *)calloc(desc->num_memory_needs + 1, 8);
  ctx->input_offsets = (uint64_t *)calloc(desc->num_inputs + 1, 8);
  ctx->output_offsets = (uint64_t *)calloc(desc->num_outputs + 1, 8);
  ctx->args = (CUdeviceptr *)calloc(num_params + 1, sizeof(CUdeviceptr));
  ctx->params = (void **)calloc(num_params + 1, sizeof(void *));
  ctx->first_param = (uint32_t *)calloc(desc->num_dispatches + 1, 4);
  if (!ctx->need_offsets || !ctx->input_offsets || !ctx->output_offsets ||
      !ctx->args || !ctx->params || !ctx->first_param) {
    kiln_cuda_context_destroy(ctx);
    return kiln_out_of_memory_status();
  }
  /* One allocation: device-local needs, then inputs, then outputs. */
  uint64_t size = 0, align = gpu->alignment;
  for (uint32_t m = 0; m < desc->num_memory_needs; ++m) {
    const kiln_memory_need *need = &desc->memory_needs[m];
    if (need->kind != KILN_MEMORY_DEVICE_LOCAL)
      continue;
    ctx->need_offsets[m] = size;
    size = kiln_cuda_align(size + need->size, align);
  }
  for (uint32_t i = 0; i < desc->num_inputs; ++i) {
    ctx->input_offsets[i] = size;
    size = kiln_cuda_align(size + kiln_tensor_desc_byte_size(&desc->inputs[i]),
                           align);
  }
  for (uint32_t i = 0; i < desc->num_outputs; ++i) {
    ctx->output_offsets[i] = size;
    size = kiln_cuda_align(size + kiln_tensor_desc_byte_size(&desc->outputs[i]),
                           align);
  }
  CUresult result = cu->cuCtxSetCurrent(gpu->context);
  if (result == KILN_CUDA_SUCCESS)
    result = cu->cuStreamCreate(&ctx->stream, KILN_CU_STREAM_NON_BLOCKING);
  if (result != KILN_CUDA_SUCCESS) {
    ctx->stream = NULL;
    kiln_cuda_context_destroy(ctx);
    return kiln_cuda_error(gpu, result, "cannot create a stream");
  }
  result = cu->cuMemAlloc(&ctx->memory, size ? (size_t)size : 256);
  if (result != KILN_CUDA_SUCCESS) {
    ctx->memory = 0;
    kiln_cuda_context_destroy(ctx);
    return kiln_cuda_error(gpu, result,
                           "cannot allocate %llu bytes of device memory for a "
                           "run context (arena, inputs, outputs)",
                           (unsigned long long)size);
  }
  /* Kernel parameters: binding slot b is kernel parameter b, a pointer. */
  uint32_t p = 0;
  for (uint32_t d = 0; d < desc->num_dispatches; ++d) {
    const kiln_dispatch_desc *x = &desc->dispatches[d];
    ctx->first_param[d] = p;
    for (uint32_t b = 0; b < x->num_bindings; ++b, ++p) {
      ctx->args[p] = kiln_cuda_binding_address(ctx, &x->bindings[b]);
      ctx->params[p] = &ctx->args[p];
    }
  }
  /* The whole run as one CUDA graph, replayed per run. A driver that cannot
   * capture leaves the context launching kernel by kernel. */
  if (gpu->use_graph) {
    result = cu->cuStreamBeginCapture(ctx->stream,
                                      KILN_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (result == KILN_CUDA_SUCCESS) {
      kiln_status status = kiln_cuda_enqueue(ctx);
      CUgraph graph = NULL;
      result = cu->cuStreamEndCapture(ctx->stream, &graph);
      if (status) {
        if (graph)
          cu->cuGraphDestroy(graph);
        kiln_cuda_context_destroy(ctx);
        return status;
      }
      if (result == KILN_CUDA_SUCCESS && graph) {
        ctx->graph = graph;
        if (cu->cuGraphInstantiateWithFlags(&ctx->graph_exec, graph, 0) !=
            KILN_CUDA_SUCCESS)
          ctx->graph_exec = NULL;
      }
    }
  }
  *out_context = ctx;
  return NULL;
}

static int kiln_cuda_context_unusable(const void *context) {
  (void)context;
  return 0;
}

/* Runs the dispatches (the graph, or launch by launch), reads the run status
 * back and waits for the stream. */
static kiln_status kiln_cuda_execute(kiln_cuda_context *ctx,
                                     void *const *outputs) {
  kiln_cuda_model *gpu = ctx->gpu;
  const kiln_model_desc *desc = gpu->desc;
  const kiln_cuda_fns *cu = &gpu->cu;
  kiln_status status = NULL;
  CUresult result;
  if (ctx->graph_exec) {
    result = cu->cuGraphLaunch(ctx->graph_exec, ctx->stream);
    if (result != KILN_CUDA_SUCCESS)
      status = kiln_cuda_error(gpu, result, "cannot launch the run's graph");
  } else {
    status = kiln_cuda_enqueue(ctx);
  }
  ctx->run_status = 0;
  if (!status && gpu->status_need >= 0) {
    result = cu->cuMemcpyDtoHAsync(
        &ctx->run_status, ctx->memory + ctx->need_offsets[gpu->status_need], 4,
        ctx->stream);
    if (result != KILN_CUDA_SUCCESS)
      status = kiln_cuda_error(gpu, result, "cannot read the run status");
  }
  for (uint32_t i = 0; !status && outputs && i < desc->num_outputs; ++i) {
    size_t bytes = kiln_tensor_desc_byte_size(&desc->outputs[i]);
    if (!bytes)
      continue;
    result = cu->cuMemcpyDtoHAsync(
        outputs[i], ctx->memory + ctx->output_offsets[i], bytes, ctx->stream);
    if (result != KILN_CUDA_SUCCESS)
      status = kiln_cuda_error(gpu, result, "cannot copy output '%s' back",
                               desc->outputs[i].name);
  }
  /* Wait even after an error: nothing may still use the caller's memory. */
  result = cu->cuStreamSynchronize(ctx->stream);
  if (result != KILN_CUDA_SUCCESS && !status) {
    const kiln_dispatch_desc *first = &desc->dispatches[0];
    const kiln_dispatch_desc *last =
        &desc->dispatches[desc->num_dispatches - 1];
    atomic_store(&gpu->lost, 1);
    status = kiln_cuda_error(
        gpu, result,
        "the run failed (while running its %u dispatches, kernels '%s' to "
        "'%s'; run with %s=0 %s to find the kernel); the model cannot run "
        "again until it is reopened",
        (unsigned)desc->num_dispatches,
        desc->executables[first->executable].kernel_names[first->kernel],
        desc->executables[last->executable].kernel_names[last->kernel],
        gpu->api->graph_env, gpu->api->serialize);
  }
  if (status)
    return status;
  uint32_t check = ctx->run_status;
  if (check) {
    if (check <= desc->num_check_messages && desc->check_messages[check - 1])
      return kiln_make_status(KILN_STATUS_RUNTIME_CHECK_FAILED, "%s",
                              desc->check_messages[check - 1]);
    return kiln_make_status(KILN_STATUS_INTERNAL,
                            "model '%s' stored run status %u, which names no "
                            "check (it has %u check messages)",
                            gpu->name, (unsigned)check,
                            (unsigned)desc->num_check_messages);
  }
  return NULL;
}

static kiln_status kiln_cuda_check_lost(const kiln_cuda_model *gpu) {
  if (!atomic_load(&gpu->lost))
    return NULL;
  return kiln_make_status(KILN_STATUS_INTERNAL,
                          "model '%s' on %s device %d '%s': an earlier run "
                          "failed on the device and left its context "
                          "unusable; reopen the model",
                          gpu->name, gpu->api->api, gpu->ordinal,
                          gpu->device_name);
}

/* What every run starts with: refuse a model whose context an earlier run
 * left unusable, and make its context current on the calling thread. */
static kiln_status kiln_cuda_begin_run(kiln_cuda_model *gpu) {
  kiln_status status = kiln_cuda_check_lost(gpu);
  if (status)
    return status;
  CUresult result = gpu->cu.cuCtxSetCurrent(gpu->context);
  if (result != KILN_CUDA_SUCCESS)
    return kiln_cuda_error(gpu, result, "cuCtxSetCurrent");
  return NULL;
}

static kiln_status kiln_cuda_run(void *context, void *const *inputs,
                                 void *const *outputs) {
  kiln_cuda_context *ctx = (kiln_cuda_context *)context;
  kiln_cuda_model *gpu = ctx->gpu;
  const kiln_model_desc *desc = gpu->desc;
  const kiln_cuda_fns *cu = &gpu->cu;
  kiln_status status = kiln_cuda_begin_run(gpu);
  if (status)
    return status;
  CUresult result;
  for (uint32_t i = 0; i < desc->num_inputs; ++i) {
    size_t bytes = kiln_tensor_desc_byte_size(&desc->inputs[i]);
    if (!bytes)
      continue;
    result = cu->cuMemcpyHtoDAsync(ctx->memory + ctx->input_offsets[i],
                                   inputs[i], bytes, ctx->stream);
    if (result != KILN_CUDA_SUCCESS) {
      cu->cuStreamSynchronize(ctx->stream);
      return kiln_cuda_error(gpu, result, "cannot copy input '%s' in",
                             desc->inputs[i].name);
    }
  }
  return kiln_cuda_execute(ctx, outputs);
}

static kiln_status kiln_cuda_run_device(void *context,
                                        const uint64_t *input_buffers,
                                        const uint64_t *input_offsets,
                                        const uint64_t *output_buffers,
                                        const uint64_t *output_offsets) {
  kiln_cuda_context *ctx = (kiln_cuda_context *)context;
  kiln_cuda_model *gpu = ctx->gpu;
  const kiln_model_desc *desc = gpu->desc;
  const kiln_cuda_fns *cu = &gpu->cu;
  kiln_status status = kiln_cuda_begin_run(gpu);
  if (status)
    return status;
  CUresult result;
  for (uint32_t i = 0; i < desc->num_inputs; ++i) {
    size_t bytes = kiln_tensor_desc_byte_size(&desc->inputs[i]);
    if (!bytes)
      continue;
    result = cu->cuMemcpyDtoDAsync(ctx->memory + ctx->input_offsets[i],
                                   input_buffers[i] + input_offsets[i], bytes,
                                   ctx->stream);
    if (result != KILN_CUDA_SUCCESS) {
      cu->cuStreamSynchronize(ctx->stream);
      return kiln_cuda_error(gpu, result, "cannot copy input '%s' in",
                             desc->inputs[i].name);
    }
  }
  status = kiln_cuda_execute(ctx, NULL);
  if (status)
    return status;
  for (uint32_t i = 0; i < desc->num_outputs; ++i) {
    size_t bytes = kiln_tensor_desc_byte_size(&desc->outputs[i]);
    if (!bytes)
      continue;
    result = cu->cuMemcpyDtoDAsync(output_buffers[i] + output_offsets[i],
                                   ctx->memory + ctx->output_offsets[i], bytes,
                                   ctx->stream);
    if (result != KILN_CUDA_SUCCESS) {
      cu->cuStreamSynchronize(ctx->stream);
      return kiln_cuda_error(gpu, result, "cannot copy output '%s' out",
                             desc->outputs[i].name);
    }
  }
  result = cu->cuStreamSynchronize(ctx->stream);
  if (result != KILN_CUDA_SUCCESS)
    return kiln_cuda_error(gpu, result, "copying the outputs failed");
  return NULL;
}

const kiln_gpu_backend kiln_cuda_backend = {
    "cuda",
    kiln_cuda_open,
    kiln_cuda_close,
    kiln_cuda_context_create,
    kiln_cuda_context_destroy,
    kiln_cuda_context_unusable,
    kiln_cuda_run,
    kiln_cuda_run_device,
};

const kiln_gpu_backend kiln_hip_backend = {
    "hip",
    kiln_hip_open,
    kiln_cuda_close,
    kiln_cuda_context_create,
    kiln_cuda_context_destroy,
    kiln_cuda_context_unusable,
    kiln_cuda_run,
    kiln_cuda_run_device,
};
