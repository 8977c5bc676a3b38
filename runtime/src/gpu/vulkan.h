/*===- runtime/src/gpu/vulkan.h - The Vulkan back end's shared state -------===*
 *
 * Shared by vulkan_device.c (loader, device, memory), vulkan.c (opening a
 * model) and vulkan_run.c (run contexts).
 * Included only where the Vulkan headers exist (KILN_HAVE_VULKAN).
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_GPU_VULKAN_H
#define KILN_RUNTIME_GPU_VULKAN_H

#include <pthread.h>
#include <stdatomic.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "gpu/gpu.h"

/* Vulkan structures are written `T x = {VK_STRUCTURE_TYPE_...};`: the rest
 * zero, as C guarantees. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif

/* Functions from vkGetInstanceProcAddr(instance, ...). */
#define KILN_VK_INSTANCE_FNS(X)                                                \
  X(vkDestroyInstance)                                                         \
  X(vkEnumeratePhysicalDevices)                                                \
  X(vkGetPhysicalDeviceProperties)                                             \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                  \
  X(vkGetPhysicalDeviceMemoryProperties)                                       \
  X(vkGetPhysicalDeviceFeatures2)                                              \
  X(vkEnumerateDeviceExtensionProperties)                                      \
  X(vkCreateDevice)                                                            \
  X(vkGetDeviceProcAddr)

/* Functions from vkGetDeviceProcAddr(device, ...). */
#define KILN_VK_DEVICE_FNS(X)                                                  \
  X(vkDestroyDevice)                                                           \
  X(vkGetDeviceQueue)                                                          \
  X(vkCreateBuffer)                                                            \
  X(vkDestroyBuffer)                                                           \
  X(vkGetBufferMemoryRequirements)                                             \
  X(vkAllocateMemory)                                                          \
  X(vkFreeMemory)                                                              \
  X(vkBindBufferMemory)                                                        \
  X(vkMapMemory)                                                               \
  X(vkUnmapMemory)                                                             \
  X(vkFlushMappedMemoryRanges)                                                 \
  X(vkInvalidateMappedMemoryRanges)                                            \
  X(vkCreateShaderModule)                                                      \
  X(vkDestroyShaderModule)                                                     \
  X(vkCreateDescriptorSetLayout)                                               \
  X(vkDestroyDescriptorSetLayout)                                              \
  X(vkCreatePipelineLayout)                                                    \
  X(vkDestroyPipelineLayout)                                                   \
  X(vkCreateComputePipelines)                                                  \
  X(vkDestroyPipeline)                                                         \
  X(vkCreateDescriptorPool)                                                    \
  X(vkDestroyDescriptorPool)                                                   \
  X(vkAllocateDescriptorSets)                                                  \
  X(vkUpdateDescriptorSets)                                                    \
  X(vkCreateCommandPool)                                                       \
  X(vkDestroyCommandPool)                                                      \
  X(vkAllocateCommandBuffers)                                                  \
  X(vkFreeCommandBuffers)                                                      \
  X(vkBeginCommandBuffer)                                                      \
  X(vkEndCommandBuffer)                                                        \
  X(vkResetCommandPool)                                                        \
  X(vkCmdBindPipeline)                                                         \
  X(vkCmdBindDescriptorSets)                                                   \
  X(vkCmdPushConstants)                                                        \
  X(vkCmdDispatch)                                                             \
  X(vkCmdCopyBuffer)                                                           \
  X(vkCmdFillBuffer)                                                           \
  X(vkCmdPipelineBarrier)                                                      \
  X(vkCreateFence)                                                             \
  X(vkDestroyFence)                                                            \
  X(vkResetFences)                                                             \
  X(vkWaitForFences)                                                           \
  X(vkGetFenceStatus)                                                          \
  X(vkQueueSubmit)                                                             \
  X(vkDeviceWaitIdle)

typedef struct kiln_vk_fns {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
  PFN_vkCreateInstance vkCreateInstance;
#define KILN_VK_FIELD(name) PFN_##name name;
  KILN_VK_INSTANCE_FNS(KILN_VK_FIELD)
  KILN_VK_DEVICE_FNS(KILN_VK_FIELD)
#undef KILN_VK_FIELD
} kiln_vk_fns;

/* A buffer with its own memory. */
typedef struct kiln_vk_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  VkDeviceSize size;    /* what was asked for */
  VkDeviceSize charged; /* what the allocation counts against the limit */
  VkMemoryPropertyFlags flags; /* of the memory type it got */
  void *mapped; /* when asked for HOST_VISIBLE memory: its mapping */
} kiln_vk_buffer;

struct kiln_vulkan_model {
  const kiln_model_desc *desc;
  const char *name;
  void *loader; /* dlopen handle of libvulkan */
  kiln_vk_fns vk;
  VkInstance instance;
  VkPhysicalDevice physical;
  VkPhysicalDeviceProperties properties;
  VkPhysicalDeviceMemoryProperties memory;
  VkDevice device;
  uint32_t queue_family;
  VkQueue queue;
  pthread_mutex_t queue_lock; /* vkQueueSubmit needs the queue to itself */
  int queue_lock_ready;

  /* KILN_VULKAN_MEMORY_LIMIT (0 = none) and what the model holds. */
  uint64_t memory_limit;
  _Atomic uint64_t memory_used;
  atomic_int lost; /* the device was lost: every later run fails */
  /* The fence wait of a submission (KILN_VULKAN_TIMEOUT_MS), and how many
   * submissions outlived it and may still be on the device: closing the
   * model then leaks its Vulkan objects instead of waiting forever. */
  uint64_t timeout_ns;
  atomic_int abandoned;

  VkShaderModule *modules; /* per executable (NULL for host ones) */
  /* Per kernel: pipelines[kernel_base[e] + k] for kernel k of executable e,
   * created for the kernels some dispatch launches. */
  uint32_t *kernel_base;
  uint32_t num_pipelines;
  VkPipeline *pipelines;
  VkDescriptorSetLayout set_layout; /* max_bindings storage buffers */
  VkPipelineLayout pipeline_layout; /* that set + push_size bytes */
  uint32_t max_bindings;
  uint32_t push_size;
  VkDeviceSize alignment;    /* every binding offset inside our buffers */
  kiln_vk_buffer *constants; /* per memory need (device-constant ones set) */
  int64_t status_need;       /* the KILN_MEMORY_RUN_STATUS need, or -1 */
  uint64_t *written;         /* per executable: kiln_spirv_written_bindings */
  atomic_uint dispatch_barriers; /* recorded between dispatches (tests) */
};

/* vulkan_device.c: opening the device, in this order. */
/* KILN_VULKAN_MEMORY_LIMIT in bytes (0: none), or -1 when malformed. */
KILN_INTERNAL int64_t kiln_vk_memory_limit(void);
KILN_INTERNAL kiln_status kiln_vk_load(kiln_vulkan_model *gpu);
KILN_INTERNAL kiln_status kiln_vk_create_instance(kiln_vulkan_model *gpu);
/* `selector`: see kiln_vulkan_open. */
KILN_INTERNAL kiln_status kiln_vk_pick_device(kiln_vulkan_model *gpu,
                                              const char *selector);
/* Also refuses a module that needs a feature the device lacks. */
KILN_INTERNAL kiln_status kiln_vk_create_device(kiln_vulkan_model *gpu);
/* KILN_VULKAN_TIMEOUT_MS in nanoseconds (default 120 s), or 0 when
 * malformed. */
KILN_INTERNAL uint64_t kiln_vk_timeout_ns(void);
/* Whether KILN_VULKAN_MASK_FEATURES lists `name`. */
KILN_INTERNAL int kiln_vk_masked(const char *name);

/* vulkan_device.c and vulkan.c, for vulkan_run.c */
KILN_INTERNAL kiln_status kiln_vk_error(const kiln_vulkan_model *gpu,
                                        VkResult result, const char *format,
                                        ...) KILN_PRINTF(3, 4);
/* A buffer of `size` bytes with `usage`, in memory with `required` property
 * flags (preferring `preferred` too); counts against the memory limit; `what`
 * names it in messages. */
KILN_INTERNAL kiln_status kiln_vk_buffer_create(
    kiln_vulkan_model *gpu, VkDeviceSize size, VkBufferUsageFlags usage,
    VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred,
    const char *what, kiln_vk_buffer *out);
KILN_INTERNAL void kiln_vk_buffer_destroy(kiln_vulkan_model *gpu,
                                          kiln_vk_buffer *buffer);
/* Submits `cb` under the queue lock and waits for `fence`, at most
 * gpu->timeout_ns. When the wait times out, sets *timed_out (the work may
 * still be running: the caller must not free what it uses) and counts it in
 * gpu->abandoned. */
KILN_INTERNAL kiln_status kiln_vk_submit_wait(kiln_vulkan_model *gpu,
                                              uint32_t count,
                                              const VkCommandBuffer *cbs,
                                              VkFence fence, const char *what,
                                              int *timed_out);
KILN_INTERNAL const char *kiln_vk_result_name(VkResult result);
/* The bytes a dispatch binding spans (its size, or the rest of its
 * region). */
KILN_INTERNAL VkDeviceSize kiln_vk_binding_range(const kiln_vulkan_model *gpu,
                                                 const kiln_binding_desc *b);

#endif /* KILN_RUNTIME_GPU_VULKAN_H */
