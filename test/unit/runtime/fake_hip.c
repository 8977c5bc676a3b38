/* A stand-in for libamdhip64.so that runs on the host, so that the runtime's
 * HIP back end (runtime/src/gpu/cuda.c through kiln_hip_api) is exercised
 * end to end where no AMD GPU exists: device memory is host memory, a code
 * object "loads" when it is an AMD GPU ELF for gfx90a, and launching a kernel
 * runs a C function named like it (add: y = x + w over 100 floats; fail:
 * store 1 into its one buffer). Stream capture records launches; a graph
 * replays them. KILN_FAKE_HIP_NO_DEVICE=1 makes hipInit report no device. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HIP_SUCCESS 0
#define HIP_ERROR_NO_DEVICE 100
#define HIP_ERROR_INVALID_VALUE 1
#define HIP_ERROR_NO_BINARY_FOR_GPU 209
#define HIP_ERROR_NOT_FOUND 500

typedef struct launch {
  const char *kernel;
  void *args[4];
  unsigned count;
} launch;

typedef struct stream {
  int capturing;
  launch *recorded;
  unsigned num_recorded;
} stream;

static void run(const launch *l) {
  if (strcmp(l->kernel, "add") == 0) {
    const float *x = (const float *)l->args[0];
    const float *w = (const float *)l->args[1];
    float *y = (float *)l->args[2];
    for (int i = 0; i < 100; ++i)
      y[i] = x[i] + w[i];
  } else if (strcmp(l->kernel, "fail") == 0) {
    *(uint32_t *)l->args[0] = 1;
  }
}

int hipInit(unsigned flags) {
  (void)flags;
  const char *none = getenv("KILN_FAKE_HIP_NO_DEVICE");
  return none && strcmp(none, "1") == 0 ? HIP_ERROR_NO_DEVICE : HIP_SUCCESS;
}
const char *hipGetErrorName(int error) {
  switch (error) {
  case HIP_ERROR_NO_DEVICE:
    return "hipErrorNoDevice";
  case HIP_ERROR_NO_BINARY_FOR_GPU:
    return "hipErrorNoBinaryForGpu";
  case HIP_ERROR_NOT_FOUND:
    return "hipErrorNotFound";
  }
  return "hipErrorUnknown";
}
const char *hipGetErrorString(int error) {
  return error == HIP_ERROR_NO_BINARY_FOR_GPU
             ? "no kernel image is available for execution on the device"
             : "fake";
}
int hipGetDeviceCount(int *count) {
  *count = 1;
  return HIP_SUCCESS;
}
int hipDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal == 0 ? HIP_SUCCESS : HIP_ERROR_INVALID_VALUE;
}
int hipDeviceGetName(char *name, int len, int device) {
  (void)device;
  strncpy(name, "Fake AMD Instinct (gfx90a)", (size_t)len);
  return HIP_SUCCESS;
}
int hipDevicePrimaryCtxRetain(void **context, int device) {
  (void)device;
  *context = (void *)1;
  return HIP_SUCCESS;
}
int hipDevicePrimaryCtxRelease(int device) {
  (void)device;
  return HIP_SUCCESS;
}
int hipCtxSetCurrent(void *context) {
  (void)context;
  return HIP_SUCCESS;
}
/* The ELF header's e_flags, low byte: EF_AMDGPU_MACH (0x3f: gfx90a). */
int hipModuleLoadDataEx(void **module, const void *image, unsigned n,
                        int *options, void **values) {
  (void)n, (void)options, (void)values;
  const unsigned char *bytes = (const unsigned char *)image;
  if (memcmp(bytes, "\x7f" "ELF", 4) != 0 || (bytes[48] & 0xff) != 0x3f)
    return HIP_ERROR_NO_BINARY_FOR_GPU;
  *module = (void *)image;
  return HIP_SUCCESS;
}
int hipModuleUnload(void *module) {
  (void)module;
  return HIP_SUCCESS;
}
int hipModuleGetFunction(void **function, void *module, const char *name) {
  (void)module;
  if (strcmp(name, "add") != 0 && strcmp(name, "fail") != 0)
    return HIP_ERROR_NOT_FOUND;
  *function = (void *)(strcmp(name, "add") == 0 ? "add" : "fail");
  return HIP_SUCCESS;
}
int hipFuncGetAttribute(int *value, int attribute, void *function) {
  (void)function;
  *value = attribute == 0 ? 1024 : 0;
  return HIP_SUCCESS;
}
int hipMalloc(void **pointer, size_t bytes) {
  *pointer = calloc(1, bytes);
  return HIP_SUCCESS;
}
int hipFree(void *pointer) {
  free(pointer);
  return HIP_SUCCESS;
}
int hipMemcpyHtoD(void *dst, const void *src, size_t bytes) {
  memcpy(dst, src, bytes);
  return HIP_SUCCESS;
}
int hipMemcpyHtoDAsync(void *dst, const void *src, size_t bytes, void *s) {
  (void)s;
  memcpy(dst, src, bytes);
  return HIP_SUCCESS;
}
int hipMemcpyDtoHAsync(void *dst, const void *src, size_t bytes, void *s) {
  (void)s;
  memcpy(dst, src, bytes);
  return HIP_SUCCESS;
}
int hipMemcpyDtoDAsync(void *dst, const void *src, size_t bytes, void *s) {
  (void)s;
  memcpy(dst, src, bytes);
  return HIP_SUCCESS;
}
int hipMemsetD32Async(void *dst, int value, size_t count, void *s) {
  (void)s;
  for (size_t i = 0; i < count; ++i)
    ((int32_t *)dst)[i] = value;
  return HIP_SUCCESS;
}
int hipStreamCreateWithFlags(void **s, unsigned flags) {
  (void)flags;
  *s = calloc(1, sizeof(stream));
  return HIP_SUCCESS;
}
int hipStreamDestroy(void *s) {
  free(((stream *)s)->recorded);
  free(s);
  return HIP_SUCCESS;
}
int hipStreamSynchronize(void *s) {
  (void)s;
  return HIP_SUCCESS;
}
int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned by, unsigned bz,
                          unsigned shared, void *s, void **params,
                          void **extra) {
  (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared;
  (void)extra;
  launch l = {(const char *)f, {0}, strcmp((const char *)f, "add") ? 1u : 3u};
  for (unsigned i = 0; i < l.count; ++i)
    l.args[i] = *(void **)params[i];
  stream *st = (stream *)s;
  if (!st->capturing) {
    run(&l);
    return HIP_SUCCESS;
  }
  st->recorded = (launch *)realloc(st->recorded,
                                   (st->num_recorded + 1) * sizeof(launch));
  st->recorded[st->num_recorded++] = l;
  return HIP_SUCCESS;
}
int hipStreamBeginCapture(void *s, int mode) {
  (void)mode;
  ((stream *)s)->capturing = 1;
  return HIP_SUCCESS;
}
/* A graph is the launches captured, copied out of the stream. */
int hipStreamEndCapture(void *s, void **graph) {
  stream *st = (stream *)s;
  stream *g = (stream *)calloc(1, sizeof(stream));
  g->recorded = st->recorded;
  g->num_recorded = st->num_recorded;
  st->recorded = NULL;
  st->num_recorded = 0;
  st->capturing = 0;
  *graph = g;
  return HIP_SUCCESS;
}
int hipGraphInstantiateWithFlags(void **exec, void *graph,
                                 unsigned long long flags) {
  (void)flags;
  *exec = graph;
  return HIP_SUCCESS;
}
int hipGraphLaunch(void *exec, void *s) {
  (void)s;
  stream *g = (stream *)exec;
  for (unsigned i = 0; i < g->num_recorded; ++i)
    run(&g->recorded[i]);
  return HIP_SUCCESS;
}
int hipGraphExecDestroy(void *exec) {
  (void)exec; /* the graph owns the launches */
  return HIP_SUCCESS;
}
int hipGraphDestroy(void *graph) {
  free(((stream *)graph)->recorded);
  free(graph);
  return HIP_SUCCESS;
}
