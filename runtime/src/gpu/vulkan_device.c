/*===- runtime/src/gpu/vulkan_device.c - Vulkan back end: loader, device ---===*
 *
 * The Vulkan loader (dlopen, never linked; every function from
 * vkGetInstanceProcAddr / vkGetDeviceProcAddr), the instance, the device
 * picked and created with the optional shader features kiln's modules may
 * need, device memory (with KILN_VULKAN_MEMORY_LIMIT), submissions, and the
 * mapping of VkResults to kiln statuses.
 *===----------------------------------------------------------------------===*/
#if !defined(_GNU_SOURCE) && defined(__linux__)
#define _GNU_SOURCE
#endif

#include "gpu/gpu.h"

#ifdef KILN_HAVE_VULKAN

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/vulkan.h"

/*===----------------------------------------------------------------------===*
 * Errors
 *===----------------------------------------------------------------------===*/

const char *kiln_vk_result_name(VkResult result) {
  switch (result) {
#define KILN_CASE(name)                                                        \
  case name:                                                                   \
    return #name;
    KILN_CASE(VK_SUCCESS)
    KILN_CASE(VK_NOT_READY)
    KILN_CASE(VK_TIMEOUT)
    KILN_CASE(VK_INCOMPLETE)
    KILN_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    KILN_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    KILN_CASE(VK_ERROR_INITIALIZATION_FAILED)
    KILN_CASE(VK_ERROR_DEVICE_LOST)
    KILN_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    KILN_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    KILN_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    KILN_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    KILN_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    KILN_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    KILN_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    KILN_CASE(VK_ERROR_FRAGMENTED_POOL)
    KILN_CASE(VK_ERROR_UNKNOWN)
    KILN_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    KILN_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef KILN_CASE
  default:
    return "VkResult error";
  }
}

/* "model 'm' on Vulkan device 'd': <what>: <result>", with the kiln status
 * the result means. */
kiln_status kiln_vk_error(const kiln_vulkan_model *gpu, VkResult result,
                          const char *format, ...) {
  kiln_status_code_t code = KILN_STATUS_INTERNAL;
  const char *meaning = "";
  switch (result) {
  case VK_ERROR_OUT_OF_HOST_MEMORY:
    code = KILN_STATUS_OUT_OF_MEMORY;
    meaning = "out of host memory";
    break;
  case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    code = KILN_STATUS_OUT_OF_MEMORY;
    meaning = "out of device memory";
    break;
  case VK_ERROR_DEVICE_LOST:
    meaning = "the device was lost (a driver reset, a hang or a crash of "
              "the device); the model cannot run again until it is reopened";
    break;
  case VK_ERROR_FEATURE_NOT_PRESENT:
  case VK_ERROR_EXTENSION_NOT_PRESENT:
  case VK_ERROR_INCOMPATIBLE_DRIVER:
  case VK_ERROR_INITIALIZATION_FAILED:
  case VK_ERROR_LAYER_NOT_PRESENT:
    code = KILN_STATUS_UNSUPPORTED;
    break;
  default:
    break;
  }
  kiln_strbuf buf = {0};
  kiln_strbuf_appendf(&buf, "model '%s' on Vulkan device '%s': ", gpu->name,
                      gpu->properties.deviceName[0] ? gpu->properties.deviceName
                                                    : "(none yet)");
  va_list args;
  va_start(args, format);
  kiln_status detail = kiln_make_status_v(code, format, args);
  va_end(args);
  kiln_strbuf_appendf(&buf, "%s: %s%s%s", kiln_status_message(detail),
                      kiln_vk_result_name(result), meaning[0] ? ", " : "",
                      meaning);
  kiln_status_free(detail);
  return kiln_strbuf_to_status(&buf, code);
}

/*===----------------------------------------------------------------------===*
 * Memory
 *===----------------------------------------------------------------------===*/

/* KILN_VULKAN_MEMORY_LIMIT: bytes, with an optional K, M or G (binary)
 * suffix; unset or 0: no limit. -1 when malformed. */
int64_t kiln_vk_memory_limit(void) {
  const char *text = getenv("KILN_VULKAN_MEMORY_LIMIT");
  if (!text || !text[0])
    return 0;
  char *end = NULL;
  unsigned long long value = strtoull(text, &end, 10);
  if (end == text)
    return -1;
  unsigned shift = 0;
  switch (toupper((unsigned char)*end)) {
  case 'K':
    shift = 10, ++end;
    break;
  case 'M':
    shift = 20, ++end;
    break;
  case 'G':
    shift = 30, ++end;
    break;
  default:
    break;
  }
  if (*end == 'B' || *end == 'b')
    ++end;
  if (*end != '\0' || value > (unsigned long long)(INT64_MAX >> shift))
    return -1;
  return (int64_t)(value << shift);
}

uint64_t kiln_vk_timeout_ns(void) {
  const char *text = getenv("KILN_VULKAN_TIMEOUT_MS");
  if (!text || !text[0])
    return 120000ull * 1000000ull;
  char *end = NULL;
  errno = 0;
  unsigned long long ms = strtoull(text, &end, 10);
  if (end == text || *end != '\0' || errno || ms == 0 ||
      ms > UINT64_MAX / 1000000ull || text[0] == '-')
    return 0;
  return ms * 1000000ull;
}

static int kiln_vk_memory_type(const kiln_vulkan_model *gpu, uint32_t bits,
                               VkMemoryPropertyFlags flags) {
  for (uint32_t t = 0; t < gpu->memory.memoryTypeCount; ++t)
    if ((bits & (1u << t)) &&
        (gpu->memory.memoryTypes[t].propertyFlags & flags) == flags)
      return (int)t;
  return -1;
}

kiln_status kiln_vk_buffer_create(kiln_vulkan_model *gpu, VkDeviceSize size,
                                  VkBufferUsageFlags usage,
                                  VkMemoryPropertyFlags required,
                                  VkMemoryPropertyFlags preferred,
                                  const char *what, kiln_vk_buffer *out) {
  const kiln_vk_fns *vk = &gpu->vk;
  memset(out, 0, sizeof(*out));
  VkBufferCreateInfo info = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vk->vkCreateBuffer(gpu->device, &info, NULL, &out->buffer);
  if (r != VK_SUCCESS)
    return kiln_vk_error(gpu, r, "cannot create the %llu-byte buffer of %s",
                         (unsigned long long)size, what);
  VkMemoryRequirements req;
  vk->vkGetBufferMemoryRequirements(gpu->device, out->buffer, &req);
  int type = kiln_vk_memory_type(gpu, req.memoryTypeBits, required | preferred);
  if (type < 0)
    type = kiln_vk_memory_type(gpu, req.memoryTypeBits, required);
  if (type < 0) {
    kiln_vk_buffer_destroy(gpu, out);
    return kiln_vk_error(gpu, VK_ERROR_FEATURE_NOT_PRESENT,
                         "no memory type with property flags 0x%x for %s",
                         (unsigned)required, what);
  }
  uint32_t heap = gpu->memory.memoryTypes[type].heapIndex;
  uint64_t used = atomic_fetch_add(&gpu->memory_used, req.size) + req.size;
  out->charged = req.size;
  if (gpu->memory_limit && used > gpu->memory_limit) {
    kiln_vk_buffer_destroy(gpu, out);
    return kiln_make_status(
        KILN_STATUS_OUT_OF_MEMORY,
        "model '%s' on Vulkan device '%s': out of device memory: %s needs "
        "%llu bytes, and with them the model would hold %llu bytes, more "
        "than KILN_VULKAN_MEMORY_LIMIT=%llu",
        gpu->name, gpu->properties.deviceName, what,
        (unsigned long long)req.size, (unsigned long long)used,
        (unsigned long long)gpu->memory_limit);
  }
  if (req.size > gpu->memory.memoryHeaps[heap].size) {
    kiln_vk_buffer_destroy(gpu, out);
    return kiln_make_status(
        KILN_STATUS_OUT_OF_MEMORY,
        "model '%s' on Vulkan device '%s': out of device memory: %s needs "
        "%llu bytes, more than its memory heap's %llu",
        gpu->name, gpu->properties.deviceName, what,
        (unsigned long long)req.size,
        (unsigned long long)gpu->memory.memoryHeaps[heap].size);
  }
  VkMemoryAllocateInfo alloc = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = (uint32_t)type;
  r = vk->vkAllocateMemory(gpu->device, &alloc, NULL, &out->memory);
  if (r == VK_SUCCESS)
    r = vk->vkBindBufferMemory(gpu->device, out->buffer, out->memory, 0);
  out->size = size;
  out->flags = gpu->memory.memoryTypes[type].propertyFlags;
  if (r == VK_SUCCESS &&
      ((required | preferred) & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
      (out->flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
    r = vk->vkMapMemory(gpu->device, out->memory, 0, VK_WHOLE_SIZE, 0,
                        &out->mapped);
  if (r != VK_SUCCESS) {
    kiln_vk_buffer_destroy(gpu, out);
    return kiln_vk_error(gpu, r, "cannot allocate %llu bytes for %s",
                         (unsigned long long)req.size, what);
  }
  return NULL;
}

void kiln_vk_buffer_destroy(kiln_vulkan_model *gpu, kiln_vk_buffer *buffer) {
  const kiln_vk_fns *vk = &gpu->vk;
  if (buffer->buffer)
    vk->vkDestroyBuffer(gpu->device, buffer->buffer, NULL);
  if (buffer->memory)
    vk->vkFreeMemory(gpu->device, buffer->memory, NULL); /* unmaps too */
  atomic_fetch_sub(&gpu->memory_used, buffer->charged);
  memset(buffer, 0, sizeof(*buffer));
}

kiln_status kiln_vk_submit_wait(kiln_vulkan_model *gpu, uint32_t count,
                                const VkCommandBuffer *cbs, VkFence fence,
                                const char *what, int *timed_out) {
  const kiln_vk_fns *vk = &gpu->vk;
  *timed_out = 0;
  if (atomic_load(&gpu->lost))
    return kiln_vk_error(gpu, VK_ERROR_DEVICE_LOST, "cannot run %s", what);
  VkResult r = vk->vkResetFences(gpu->device, 1, &fence);
  if (r == VK_SUCCESS) {
    VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = count;
    submit.pCommandBuffers = cbs;
    pthread_mutex_lock(&gpu->queue_lock);
    r = vk->vkQueueSubmit(gpu->queue, 1, &submit, fence);
    pthread_mutex_unlock(&gpu->queue_lock);
  }
  if (r == VK_SUCCESS)
    r = vk->vkWaitForFences(gpu->device, 1, &fence, VK_TRUE, gpu->timeout_ns);
  if (r == VK_SUCCESS)
    return NULL;
  if (r == VK_TIMEOUT) {
    /* A kernel that never ends must not hang the caller. Vulkan cannot
     * cancel submitted work: it stays queued, so its objects stay alive. */
    *timed_out = 1;
    atomic_fetch_add(&gpu->abandoned, 1);
    return kiln_make_status(
        KILN_STATUS_INTERNAL,
        "model '%s' on Vulkan device '%s': %s did not finish within %llu ms "
        "(KILN_VULKAN_TIMEOUT_MS); a kernel may never end",
        gpu->name, gpu->properties.deviceName, what,
        (unsigned long long)(gpu->timeout_ns / 1000000));
  }
  if (r == VK_ERROR_DEVICE_LOST)
    atomic_store(&gpu->lost, 1);
  return kiln_vk_error(gpu, r, "%s failed", what);
}

/*===----------------------------------------------------------------------===*
 * Loader, instance, device
 *===----------------------------------------------------------------------===*/

kiln_status kiln_vk_load(kiln_vulkan_model *gpu) {
  const char *path = getenv("KILN_VULKAN_LOADER");
  if (!path || !path[0])
    path = "libvulkan.so.1";
  dlerror();
  gpu->loader = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!gpu->loader) {
    const char *err = dlerror();
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' runs on Vulkan, but the Vulkan loader "
                            "'%s' cannot be loaded (%s); install it (Debian: "
                            "libvulkan1, and a driver such as "
                            "mesa-vulkan-drivers)",
                            gpu->name, path, err ? err : "dlopen failed");
  }
  void *sym = dlsym(gpu->loader, "vkGetInstanceProcAddr");
  if (!sym)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s': '%s' is no Vulkan loader (it has no "
                            "vkGetInstanceProcAddr)",
                            gpu->name, path);
  memcpy(&gpu->vk.vkGetInstanceProcAddr, &sym, sizeof(sym));
  gpu->vk.vkCreateInstance =
      (PFN_vkCreateInstance)gpu->vk.vkGetInstanceProcAddr(NULL,
                                                          "vkCreateInstance");
  if (!gpu->vk.vkCreateInstance)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s': the Vulkan loader '%s' has no "
                            "vkCreateInstance",
                            gpu->name, path);
  return NULL;
}

kiln_status kiln_vk_create_instance(kiln_vulkan_model *gpu) {
  kiln_vk_fns *vk = &gpu->vk;
  PFN_vkEnumerateInstanceVersion version_fn =
      (PFN_vkEnumerateInstanceVersion)vk->vkGetInstanceProcAddr(
          NULL, "vkEnumerateInstanceVersion");
  uint32_t version = VK_API_VERSION_1_0;
  if (version_fn && version_fn(&version) != VK_SUCCESS)
    version = VK_API_VERSION_1_0;
  if (version < VK_API_VERSION_1_1)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s': the Vulkan loader supports Vulkan "
                            "%u.%u, kiln needs 1.1",
                            gpu->name, (unsigned)VK_API_VERSION_MAJOR(version),
                            (unsigned)VK_API_VERSION_MINOR(version));
  VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = gpu->name;
  app.pEngineName = "kiln";
  app.apiVersion =
      version < VK_API_VERSION_1_3 ? VK_API_VERSION_1_1 : VK_API_VERSION_1_3;
  VkInstanceCreateInfo info = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  VkResult r = vk->vkCreateInstance(&info, NULL, &gpu->instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
    const char *icd = getenv("VK_ICD_FILENAMES");
    return kiln_make_status(
        KILN_STATUS_UNSUPPORTED,
        "model '%s' runs on Vulkan, but the Vulkan loader found no device "
        "(no driver%s%s%s); install one (Debian: mesa-vulkan-drivers has "
        "lavapipe, which runs on the CPU)",
        gpu->name, icd ? " in VK_ICD_FILENAMES='" : "", icd ? icd : "",
        icd ? "'" : "");
  }
  if (r != VK_SUCCESS)
    return kiln_vk_error(gpu, r, "vkCreateInstance failed");
#define KILN_VK_LOAD(fn)                                                       \
  vk->fn = (PFN_##fn)vk->vkGetInstanceProcAddr(gpu->instance, #fn);            \
  if (!vk->fn)                                                                 \
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,                           \
                            "model '%s': the Vulkan loader lacks " #fn,        \
                            gpu->name);
  KILN_VK_INSTANCE_FNS(KILN_VK_LOAD)
#undef KILN_VK_LOAD
  return NULL;
}

/* A compute queue family of `device`, or -1. */
static int kiln_vk_compute_family(const kiln_vulkan_model *gpu,
                                  VkPhysicalDevice device) {
  uint32_t n = 0;
  gpu->vk.vkGetPhysicalDeviceQueueFamilyProperties(device, &n, NULL);
  VkQueueFamilyProperties families[32];
  if (n > 32)
    n = 32;
  gpu->vk.vkGetPhysicalDeviceQueueFamilyProperties(device, &n, families);
  int any = -1;
  for (uint32_t f = 0; f < n; ++f) {
    if (!(families[f].queueFlags & VK_QUEUE_COMPUTE_BIT) ||
        families[f].queueCount == 0)
      continue;
    /* A compute-only family is the one that does not share with graphics. */
    if (!(families[f].queueFlags & VK_QUEUE_GRAPHICS_BIT))
      return (int)f;
    if (any < 0)
      any = (int)f;
  }
  return any;
}

static int kiln_vk_type_rank(VkPhysicalDeviceType type) {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    return 4;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    return 3;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
    return 2;
  case VK_PHYSICAL_DEVICE_TYPE_CPU:
    return 1;
  default:
    return 0;
  }
}

static int kiln_vk_name_matches(const char *name, const char *part) {
  size_t n = strlen(name), m = strlen(part);
  for (size_t i = 0; i + m <= n; ++i) {
    size_t j = 0;
    while (j < m && tolower((unsigned char)name[i + j]) ==
                        tolower((unsigned char)part[j]))
      ++j;
    if (j == m)
      return 1;
  }
  return 0;
}

kiln_status kiln_vk_pick_device(kiln_vulkan_model *gpu, const char *selector) {
  kiln_vk_fns *vk = &gpu->vk;
  const char *from = "the device option";
  if (!selector || !selector[0]) {
    selector = getenv("KILN_VULKAN_DEVICE");
    from = "KILN_VULKAN_DEVICE";
  }
  if (selector && !selector[0])
    selector = NULL;
  uint32_t n = 0;
  VkResult r = vk->vkEnumeratePhysicalDevices(gpu->instance, &n, NULL);
  VkPhysicalDevice devices[16];
  if (n > 16)
    n = 16;
  if (r == VK_SUCCESS || r == VK_INCOMPLETE)
    r = vk->vkEnumeratePhysicalDevices(gpu->instance, &n, devices);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE)
    return kiln_vk_error(gpu, r, "vkEnumeratePhysicalDevices failed");
  if (n == 0)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' runs on Vulkan, but the Vulkan loader "
                            "found no device",
                            gpu->name);
  int chosen = -1, best_rank = -1;
  int index = -1;
  if (selector) {
    char *end = NULL;
    long v = strtol(selector, &end, 10);
    if (end != selector && *end == '\0' && v >= 0)
      index = (int)v;
  }
  kiln_strbuf names = {0};
  for (uint32_t d = 0; d < n; ++d) {
    VkPhysicalDeviceProperties p;
    vk->vkGetPhysicalDeviceProperties(devices[d], &p);
    kiln_strbuf_appendf(&names, "%s%u '%s'", d ? ", " : "", (unsigned)d,
                        p.deviceName);
    if (selector) {
      if ((index >= 0 && (uint32_t)index == d) ||
          (index < 0 && chosen < 0 &&
           kiln_vk_name_matches(p.deviceName, selector)))
        chosen = (int)d;
      continue;
    }
    /* Unselected: the best kind of device that can run kiln's code. */
    if (p.apiVersion < VK_API_VERSION_1_1 ||
        kiln_vk_compute_family(gpu, devices[d]) < 0)
      continue;
    if (kiln_vk_type_rank(p.deviceType) > best_rank) {
      best_rank = kiln_vk_type_rank(p.deviceType);
      chosen = (int)d;
    }
  }
  if (chosen < 0) {
    kiln_status status =
        selector ? kiln_make_status(KILN_STATUS_NOT_FOUND,
                                    "model '%s': no Vulkan device matches "
                                    "'%s' (from %s; the devices: %s)",
                                    gpu->name, selector, from,
                                    names.data ? names.data : "")
                 : kiln_make_status(KILN_STATUS_UNSUPPORTED,
                                    "model '%s': no Vulkan device has Vulkan "
                                    "1.1 and a compute queue (the devices: "
                                    "%s)",
                                    gpu->name, names.data ? names.data : "");
    kiln_strbuf_free(&names);
    return status;
  }
  kiln_strbuf_free(&names);
  gpu->physical = devices[chosen];
  vk->vkGetPhysicalDeviceProperties(gpu->physical, &gpu->properties);
  vk->vkGetPhysicalDeviceMemoryProperties(gpu->physical, &gpu->memory);
  int family = kiln_vk_compute_family(gpu, gpu->physical);
  if (gpu->properties.apiVersion < VK_API_VERSION_1_1 || family < 0)
    return kiln_make_status(
        KILN_STATUS_UNSUPPORTED, "model '%s': Vulkan device '%s' %s", gpu->name,
        gpu->properties.deviceName,
        family < 0 ? "has no compute queue"
                   : "supports only Vulkan 1.0; kiln needs 1.1");
  gpu->queue_family = (uint32_t)family;
  return NULL;
}

/* Whether KILN_VULKAN_MASK_FEATURES (name,...) lists `name`: a feature (or
 * "hostVisibleDeviceLocal", device-local memory the host can map) taken for
 * absent, to see (and test) how the runtime does on a device without it. */
int kiln_vk_masked(const char *name) {
  const char *mask = getenv("KILN_VULKAN_MASK_FEATURES");
  size_t len = strlen(name);
  for (const char *p = mask; p && *p;) {
    size_t item = strcspn(p, ",");
    if (item == len && strncmp(p, name, len) == 0)
      return 1;
    p += item + (p[item] == ',');
  }
  return 0;
}

static int kiln_vk_has_extension(const VkExtensionProperties *exts, uint32_t n,
                                 const char *name) {
  for (uint32_t i = 0; i < n; ++i)
    if (strcmp(exts[i].extensionName, name) == 0)
      return 1;
  return 0;
}

/* Creates the device with every optional feature kiln's modules may use that
 * it has, after checking that each module's needs are among them. */
kiln_status kiln_vk_create_device(kiln_vulkan_model *gpu) {
  kiln_vk_fns *vk = &gpu->vk;
  uint32_t n_ext = 0;
  VkResult r = vk->vkEnumerateDeviceExtensionProperties(gpu->physical, NULL,
                                                        &n_ext, NULL);
  VkExtensionProperties *exts = NULL;
  if (r == VK_SUCCESS && n_ext > 0) {
    exts = (VkExtensionProperties *)calloc(n_ext, sizeof(*exts));
    if (!exts)
      return kiln_out_of_memory_status();
    r = vk->vkEnumerateDeviceExtensionProperties(gpu->physical, NULL, &n_ext,
                                                 exts);
  }
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    free(exts);
    return kiln_vk_error(gpu, r, "vkEnumerateDeviceExtensionProperties failed");
  }
  const char *enabled[3];
  uint32_t n_enabled = 0;
  int has8 = kiln_vk_has_extension(exts, n_ext, "VK_KHR_8bit_storage");
  int has_f16i8 =
      kiln_vk_has_extension(exts, n_ext, "VK_KHR_shader_float16_int8");
  if (has8)
    enabled[n_enabled++] = "VK_KHR_8bit_storage";
  if (has_f16i8)
    enabled[n_enabled++] = "VK_KHR_shader_float16_int8";
  if (kiln_vk_has_extension(exts, n_ext, "VK_KHR_storage_buffer_storage_class"))
    enabled[n_enabled++] = "VK_KHR_storage_buffer_storage_class";
  free(exts);

  VkPhysicalDevice16BitStorageFeatures s16 = {
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDevice8BitStorageFeaturesKHR s8 = {
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR};
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16i8 = {
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 features = {
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  void **next = &features.pNext;
  *next = &s16, next = &s16.pNext;
  if (has8)
    *next = &s8, next = &s8.pNext;
  if (has_f16i8)
    *next = &f16i8, next = &f16i8.pNext;
  vk->vkGetPhysicalDeviceFeatures2(gpu->physical, &features);

  /* What the device has, per KILN_SPIRV_* bit. */
  VkBool32 have[KILN_SPIRV_NUM_FEATURES] = {
      f16i8.shaderInt8,
      features.features.shaderInt16,
      features.features.shaderInt64,
      f16i8.shaderFloat16,
      features.features.shaderFloat64,
      s8.storageBuffer8BitAccess,
      s8.uniformAndStorageBuffer8BitAccess,
      s8.storagePushConstant8,
      s16.storageBuffer16BitAccess,
      s16.uniformAndStorageBuffer16BitAccess,
      s16.storagePushConstant16,
  };
  for (unsigned b = 0; b < KILN_SPIRV_NUM_FEATURES; ++b)
    if (kiln_vk_masked(kiln_spirv_feature_name(b)))
      have[b] = VK_FALSE;
  const kiln_model_desc *desc = gpu->desc;
  for (uint32_t e = 0; e < desc->num_executables; ++e) {
    const kiln_executable_desc *x = &desc->executables[e];
    if (x->format != KILN_EXECUTABLE_SPIRV)
      continue;
    /* "vulkanX.Y": the Vulkan version the module was built for (its SPIR-V
     * version follows from it). */
    unsigned major = 1, minor = 0;
    if (sscanf(x->target, "vulkan%u.%u", &major, &minor) == 2 &&
        VK_MAKE_API_VERSION(0, major, minor, 0) >
            VK_MAKE_API_VERSION(
                0, VK_API_VERSION_MAJOR(gpu->properties.apiVersion),
                VK_API_VERSION_MINOR(gpu->properties.apiVersion), 0))
      return kiln_make_status(
          KILN_STATUS_UNSUPPORTED,
          "model '%s': spirv executable %u (kernels '%s'%s) is built for %s, "
          "but Vulkan device '%s' supports Vulkan %u.%u",
          gpu->name, (unsigned)e, x->num_kernels ? x->kernel_names[0] : "",
          x->num_kernels > 1 ? ", ..." : "", x->target,
          gpu->properties.deviceName,
          (unsigned)VK_API_VERSION_MAJOR(gpu->properties.apiVersion),
          (unsigned)VK_API_VERSION_MINOR(gpu->properties.apiVersion));
    uint32_t needs = 0;
    char error[160];
    if (!kiln_spirv_scan(x->data, x->size, &needs, error, sizeof(error)))
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "model '%s': spirv executable %u: %s", gpu->name,
                              (unsigned)e, error);
    for (unsigned b = 0; b < KILN_SPIRV_NUM_FEATURES; ++b)
      if ((needs & (1u << b)) && !have[b])
        return kiln_make_status(
            KILN_STATUS_UNSUPPORTED,
            "model '%s': spirv executable %u (kernels '%s'%s) needs the "
            "Vulkan feature %s (SPIR-V capability %s), which device '%s' "
            "lacks",
            gpu->name, (unsigned)e, x->num_kernels ? x->kernel_names[0] : "",
            x->num_kernels > 1 ? ", ..." : "", kiln_spirv_feature_name(b),
            kiln_spirv_capability_name(b), gpu->properties.deviceName);
  }
  /* Enable exactly what the device has of these: only the ones this
   * runtime knows, nothing a module could not use. */
  VkPhysicalDeviceFeatures base = {0};
  base.shaderInt16 = features.features.shaderInt16;
  base.shaderInt64 = features.features.shaderInt64;
  base.shaderFloat64 = features.features.shaderFloat64;
  features.features = base;
  s16.storageInputOutput16 = VK_FALSE;

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueFamilyIndex = gpu->queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  VkDeviceCreateInfo info = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  info.enabledExtensionCount = n_enabled;
  info.ppEnabledExtensionNames = enabled;
  r = vk->vkCreateDevice(gpu->physical, &info, NULL, &gpu->device);
  if (r != VK_SUCCESS)
    return kiln_vk_error(gpu, r, "vkCreateDevice failed");
#define KILN_VK_LOAD(fn)                                                       \
  vk->fn = (PFN_##fn)vk->vkGetDeviceProcAddr(gpu->device, #fn);                \
  if (!vk->fn)                                                                 \
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,                           \
                            "model '%s': the Vulkan driver lacks " #fn,        \
                            gpu->name);
  KILN_VK_DEVICE_FNS(KILN_VK_LOAD)
#undef KILN_VK_LOAD
  vk->vkGetDeviceQueue(gpu->device, gpu->queue_family, 0, &gpu->queue);
  return NULL;
}

#endif /* KILN_HAVE_VULKAN */
