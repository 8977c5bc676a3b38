/*===- runtime/src/gpu/vulkan.c - Vulkan back end: opening a model --------===*
 *
 * Opening a model on Vulkan: the device (vulkan_device.c), then the plan
 * checked against its limits; the modules, one pipeline per kernel, the
 * descriptor-set and pipeline layouts are created, and the device-constant
 * memory (weights) uploaded, once. Run contexts are in vulkan_run.c.
 *===----------------------------------------------------------------------===*/
#if !defined(_GNU_SOURCE) && defined(__linux__)
#define _GNU_SOURCE
#endif

#include "gpu/gpu.h"

#ifndef KILN_HAVE_VULKAN

int kiln_vulkan_built(void) { return 0; }

kiln_status kiln_vulkan_open(const kiln_model_desc *desc, const char *selector,
                             kiln_vulkan_model **out_gpu) {
  (void)selector;
  (void)out_gpu;
  return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                          "model '%s': this runtime was built without its "
                          "Vulkan back end",
                          desc->name ? desc->name : "?");
}
void kiln_vulkan_close(kiln_vulkan_model *gpu) { (void)gpu; }
uint32_t kiln_vulkan_dispatch_barriers(kiln_vulkan_model *gpu) {
  (void)gpu;
  return 0;
}

#else /* KILN_HAVE_VULKAN */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/vulkan.h"

int kiln_vulkan_built(void) { return 1; }

/*===----------------------------------------------------------------------===*
 * The model: limits, pipelines, weights
 *===----------------------------------------------------------------------===*/

static const char *kiln_vk_kernel(const kiln_model_desc *desc, uint32_t d) {
  const kiln_dispatch_desc *x = &desc->dispatches[d];
  return desc->executables[x->executable].kernel_names[x->kernel];
}

/* The bytes of the buffer region a binding addresses. */
static uint64_t kiln_vk_region_bytes(const kiln_model_desc *desc,
                                     const kiln_binding_desc *b) {
  if (b->kind == KILN_BINDING_MEMORY)
    return desc->memory_needs[b->index].size;
  return kiln_tensor_desc_byte_size(b->kind == KILN_BINDING_INPUT
                                        ? &desc->inputs[b->index]
                                        : &desc->outputs[b->index]);
}

VkDeviceSize kiln_vk_binding_range(const kiln_vulkan_model *gpu,
                                   const kiln_binding_desc *b) {
  if (b->size)
    return b->size;
  uint64_t bytes = kiln_vk_region_bytes(gpu->desc, b);
  /* An empty rest still needs a range: it reads the region's padding. */
  return bytes > b->offset ? bytes - b->offset : 4;
}

/* What the device's limits allow, checked before anything is created. */
static kiln_status kiln_vk_check_limits(kiln_vulkan_model *gpu) {
  const kiln_model_desc *desc = gpu->desc;
  const VkPhysicalDeviceLimits *lim = &gpu->properties.limits;
  const char *dev = gpu->properties.deviceName;
  for (uint32_t d = 0; d < desc->num_dispatches; ++d) {
    const kiln_dispatch_desc *x = &desc->dispatches[d];
    const char *kernel = kiln_vk_kernel(desc, d);
    uint64_t invocations = 1;
    for (int i = 0; i < 3; ++i) {
      if (x->workgroup_count[i] > lim->maxComputeWorkGroupCount[i] ||
          x->workgroup_size[i] > lim->maxComputeWorkGroupSize[i])
        return kiln_make_status(
            KILN_STATUS_UNSUPPORTED,
            "model '%s': dispatch %u (kernel '%s') launches [%u,%u,%u] "
            "workgroups of [%u,%u,%u]; Vulkan device '%s' allows at most "
            "[%u,%u,%u] of [%u,%u,%u]",
            gpu->name, (unsigned)d, kernel, (unsigned)x->workgroup_count[0],
            (unsigned)x->workgroup_count[1], (unsigned)x->workgroup_count[2],
            (unsigned)x->workgroup_size[0], (unsigned)x->workgroup_size[1],
            (unsigned)x->workgroup_size[2], dev,
            (unsigned)lim->maxComputeWorkGroupCount[0],
            (unsigned)lim->maxComputeWorkGroupCount[1],
            (unsigned)lim->maxComputeWorkGroupCount[2],
            (unsigned)lim->maxComputeWorkGroupSize[0],
            (unsigned)lim->maxComputeWorkGroupSize[1],
            (unsigned)lim->maxComputeWorkGroupSize[2]);
      invocations *= x->workgroup_size[i];
    }
    if (invocations > lim->maxComputeWorkGroupInvocations)
      return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                              "model '%s': dispatch %u (kernel '%s') has "
                              "workgroups of %llu threads; Vulkan device '%s' "
                              "allows %u",
                              gpu->name, (unsigned)d, kernel,
                              (unsigned long long)invocations, dev,
                              (unsigned)lim->maxComputeWorkGroupInvocations);
    if (x->num_constants * 4 > lim->maxPushConstantsSize)
      return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                              "model '%s': dispatch %u (kernel '%s') pushes "
                              "%u bytes of constants; Vulkan device '%s' "
                              "allows %u",
                              gpu->name, (unsigned)d, kernel,
                              (unsigned)(x->num_constants * 4), dev,
                              (unsigned)lim->maxPushConstantsSize);
    if (x->num_bindings > lim->maxPerStageDescriptorStorageBuffers ||
        x->num_bindings > lim->maxDescriptorSetStorageBuffers)
      return kiln_make_status(
          KILN_STATUS_UNSUPPORTED,
          "model '%s': dispatch %u (kernel '%s') binds %u "
          "storage buffers; Vulkan device '%s' allows %u",
          gpu->name, (unsigned)d, kernel, (unsigned)x->num_bindings, dev,
          (unsigned)lim->maxPerStageDescriptorStorageBuffers);
    for (uint32_t b = 0; b < x->num_bindings; ++b) {
      const kiln_binding_desc *bd = &x->bindings[b];
      VkDeviceSize range = kiln_vk_binding_range(gpu, bd);
      if (bd->offset % lim->minStorageBufferOffsetAlignment != 0)
        return kiln_make_status(
            KILN_STATUS_UNSUPPORTED,
            "model '%s': binding %u of dispatch %u (kernel '%s') starts at "
            "offset %llu; Vulkan device '%s' needs multiples of %llu",
            gpu->name, (unsigned)b, (unsigned)d, kernel,
            (unsigned long long)bd->offset, dev,
            (unsigned long long)lim->minStorageBufferOffsetAlignment);
      if (range > lim->maxStorageBufferRange)
        return kiln_make_status(
            KILN_STATUS_UNSUPPORTED,
            "model '%s': binding %u of dispatch %u (kernel '%s') spans %llu "
            "bytes; Vulkan device '%s' binds at most %u",
            gpu->name, (unsigned)b, (unsigned)d, kernel,
            (unsigned long long)range, dev,
            (unsigned)lim->maxStorageBufferRange);
    }
    if (x->num_bindings > gpu->max_bindings)
      gpu->max_bindings = x->num_bindings;
    if (x->num_constants * 4 > gpu->push_size)
      gpu->push_size = x->num_constants * 4;
  }
  gpu->alignment = 256;
  while (gpu->alignment < lim->minStorageBufferOffsetAlignment)
    gpu->alignment *= 2;
  return NULL;
}

static kiln_status kiln_vk_create_pipelines(kiln_vulkan_model *gpu) {
  const kiln_model_desc *desc = gpu->desc;
  const kiln_vk_fns *vk = &gpu->vk;
  uint32_t ne = desc->num_executables;
  gpu->modules = (VkShaderModule *)calloc(ne ? ne : 1, sizeof(VkShaderModule));
  gpu->kernel_base = (uint32_t *)calloc(ne ? ne : 1, sizeof(uint32_t));
  gpu->written = (uint64_t *)calloc(ne ? ne : 1, sizeof(uint64_t));
  if (!gpu->modules || !gpu->kernel_base || !gpu->written)
    return kiln_out_of_memory_status();
  for (uint32_t e = 0; e < ne; ++e) {
    gpu->kernel_base[e] = gpu->num_pipelines;
    gpu->num_pipelines += desc->executables[e].num_kernels;
  }
  gpu->pipelines = (VkPipeline *)calloc(
      gpu->num_pipelines ? gpu->num_pipelines : 1, sizeof(VkPipeline));
  if (!gpu->pipelines)
    return kiln_out_of_memory_status();

  VkDescriptorSetLayoutBinding *bindings =
      (VkDescriptorSetLayoutBinding *)calloc(
          gpu->max_bindings ? gpu->max_bindings : 1, sizeof(*bindings));
  if (!bindings)
    return kiln_out_of_memory_status();
  for (uint32_t b = 0; b < gpu->max_bindings; ++b) {
    bindings[b].binding = b;
    bindings[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[b].descriptorCount = 1;
    bindings[b].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_info = {
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = gpu->max_bindings;
  set_info.pBindings = bindings;
  VkResult r = vk->vkCreateDescriptorSetLayout(gpu->device, &set_info, NULL,
                                               &gpu->set_layout);
  free(bindings);
  if (r != VK_SUCCESS)
    return kiln_vk_error(gpu, r, "vkCreateDescriptorSetLayout failed");
  VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, gpu->push_size};
  VkPipelineLayoutCreateInfo layout_info = {
      VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &gpu->set_layout;
  layout_info.pushConstantRangeCount = gpu->push_size ? 1 : 0;
  layout_info.pPushConstantRanges = &push;
  r = vk->vkCreatePipelineLayout(gpu->device, &layout_info, NULL,
                                 &gpu->pipeline_layout);
  if (r != VK_SUCCESS)
    return kiln_vk_error(gpu, r, "vkCreatePipelineLayout failed");

  for (uint32_t e = 0; e < ne; ++e) {
    const kiln_executable_desc *x = &desc->executables[e];
    if (x->format != KILN_EXECUTABLE_SPIRV)
      continue;
    gpu->written[e] = kiln_spirv_written_bindings(x->data, x->size);
    /* The driver may read the code as words: give it an aligned copy when
     * the artifact's is not. */
    void *copy = NULL;
    const uint32_t *code = (const uint32_t *)x->data;
    if ((uintptr_t)x->data % 4 != 0) {
      copy = malloc((size_t)x->size);
      if (!copy)
        return kiln_out_of_memory_status();
      memcpy(copy, x->data, (size_t)x->size);
      code = (const uint32_t *)copy;
    }
    VkShaderModuleCreateInfo info = {
        VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = (size_t)x->size;
    info.pCode = code;
    r = vk->vkCreateShaderModule(gpu->device, &info, NULL, &gpu->modules[e]);
    free(copy);
    if (r != VK_SUCCESS)
      return kiln_vk_error(gpu, r,
                           "cannot create the shader module of spirv "
                           "executable %u (kernels '%s'%s)",
                           (unsigned)e,
                           x->num_kernels ? x->kernel_names[0] : "",
                           x->num_kernels > 1 ? ", ..." : "");
  }
  for (uint32_t d = 0; d < desc->num_dispatches; ++d) {
    const kiln_dispatch_desc *x = &desc->dispatches[d];
    VkPipeline *slot =
        &gpu->pipelines[gpu->kernel_base[x->executable] + x->kernel];
    if (*slot)
      continue;
    VkComputePipelineCreateInfo info = {
        VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = gpu->modules[x->executable];
    info.stage.pName = kiln_vk_kernel(desc, d);
    info.layout = gpu->pipeline_layout;
    r = vk->vkCreateComputePipelines(gpu->device, VK_NULL_HANDLE, 1, &info,
                                     NULL, slot);
    if (r != VK_SUCCESS) {
      *slot = VK_NULL_HANDLE;
      return kiln_vk_error(gpu, r,
                           "cannot create the pipeline of kernel '%s' "
                           "(dispatch %u, spirv executable %u)",
                           kiln_vk_kernel(desc, d), (unsigned)d,
                           (unsigned)x->executable);
    }
  }
  return NULL;
}

/* Copies `size` bytes from `data` into `dst` through a temporary staging
 * buffer, for device memory the host cannot map. */
static kiln_status kiln_vk_upload_staged(kiln_vulkan_model *gpu,
                                         kiln_vk_buffer *dst, const void *data,
                                         uint64_t size, const char *what) {
  const kiln_vk_fns *vk = &gpu->vk;
  kiln_vk_buffer staging;
  kiln_status status =
      kiln_vk_buffer_create(gpu, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                            0, what, &staging);
  if (status)
    return status;
  memcpy(staging.mapped, data, (size_t)size);
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkCommandPoolCreateInfo pool_info = {
      VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = gpu->queue_family;
  VkResult r = vk->vkCreateCommandPool(gpu->device, &pool_info, NULL, &pool);
  if (r == VK_SUCCESS) {
    VkCommandBufferAllocateInfo cb_info = {
        VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cb_info.commandPool = pool;
    cb_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cb_info.commandBufferCount = 1;
    r = vk->vkAllocateCommandBuffers(gpu->device, &cb_info, &cb);
  }
  if (r == VK_SUCCESS) {
    VkFenceCreateInfo fence_info = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    r = vk->vkCreateFence(gpu->device, &fence_info, NULL, &fence);
  }
  if (r == VK_SUCCESS) {
    VkCommandBufferBeginInfo begin = {
        VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    r = vk->vkBeginCommandBuffer(cb, &begin);
  }
  if (r == VK_SUCCESS) {
    VkBufferCopy region = {0, 0, size};
    vk->vkCmdCopyBuffer(cb, staging.buffer, dst->buffer, 1, &region);
    r = vk->vkEndCommandBuffer(cb);
  }
  int timed_out = 0;
  if (r == VK_SUCCESS)
    status = kiln_vk_submit_wait(gpu, 1, &cb, fence, what, &timed_out);
  else
    status = kiln_vk_error(gpu, r, "cannot record the upload of %s", what);
  if (timed_out) /* still in flight: its objects leak */
    return status;
  if (fence)
    vk->vkDestroyFence(gpu->device, fence, NULL);
  if (pool)
    vk->vkDestroyCommandPool(gpu->device, pool, NULL);
  kiln_vk_buffer_destroy(gpu, &staging);
  return status;
}

/* The device-constant memory needs: filled once, read by every run. */
static kiln_status kiln_vk_upload_constants(kiln_vulkan_model *gpu) {
  const kiln_model_desc *desc = gpu->desc;
  gpu->constants = (kiln_vk_buffer *)calloc(
      desc->num_memory_needs ? desc->num_memory_needs : 1,
      sizeof(kiln_vk_buffer));
  if (!gpu->constants)
    return kiln_out_of_memory_status();
  for (uint32_t m = 0; m < desc->num_memory_needs; ++m) {
    const kiln_memory_need *need = &desc->memory_needs[m];
    if (need->kind != KILN_MEMORY_DEVICE_CONSTANT)
      continue;
    char what[64];
    snprintf(what, sizeof(what), "the weights (memory need %u)", (unsigned)m);
    kiln_vk_buffer *buffer = &gpu->constants[m];
    if (need->size > ((uint64_t)1 << 56))
      return kiln_make_status(KILN_STATUS_OUT_OF_MEMORY,
                              "model '%s': %s has %llu bytes, more than any "
                              "device holds",
                              gpu->name, what, (unsigned long long)need->size);
    /* Device-local, and mapped when the device lets the host see it (an
     * integrated GPU, lavapipe), which saves the staging copy. */
    kiln_status status = kiln_vk_buffer_create(
        gpu, need->size + 4,
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, what, buffer);
    if (status)
      return status;
    if (need->size == 0)
      continue; /* no weights: a buffer only so that bindings are valid */
    if ((buffer->flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
        !kiln_vk_masked("hostVisibleDeviceLocal")) {
      void *mapped = NULL;
      VkResult r = gpu->vk.vkMapMemory(gpu->device, buffer->memory, 0,
                                       VK_WHOLE_SIZE, 0, &mapped);
      if (r != VK_SUCCESS)
        return kiln_vk_error(gpu, r, "cannot map %s", what);
      memcpy(mapped, need->initial_data, (size_t)need->size);
      if (!(buffer->flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
        VkMappedMemoryRange range = {VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        range.memory = buffer->memory;
        range.size = VK_WHOLE_SIZE;
        r = gpu->vk.vkFlushMappedMemoryRanges(gpu->device, 1, &range);
      }
      gpu->vk.vkUnmapMemory(gpu->device, buffer->memory);
      if (r != VK_SUCCESS)
        return kiln_vk_error(gpu, r, "cannot flush %s", what);
      continue;
    }
    status = kiln_vk_upload_staged(gpu, buffer, need->initial_data, need->size,
                                   what);
    if (status)
      return status;
  }
  return NULL;
}

kiln_status kiln_vulkan_open(const kiln_model_desc *desc, const char *selector,
                             kiln_vulkan_model **out_gpu) {
  kiln_vulkan_model *gpu = (kiln_vulkan_model *)calloc(1, sizeof(*gpu));
  if (!gpu)
    return kiln_out_of_memory_status();
  gpu->desc = desc;
  gpu->name = desc->name ? desc->name : "?";
  atomic_init(&gpu->memory_used, 0);
  atomic_init(&gpu->lost, 0);
  atomic_init(&gpu->abandoned, 0);
  atomic_init(&gpu->dispatch_barriers, 0);
  gpu->status_need = -1;
  for (uint32_t m = 0; m < desc->num_memory_needs; ++m)
    if (desc->memory_needs[m].flags & KILN_MEMORY_RUN_STATUS)
      gpu->status_need = m;
  kiln_status status = NULL;
  int64_t limit = kiln_vk_memory_limit();
  if (limit < 0)
    status = kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "KILN_VULKAN_MEMORY_LIMIT='%s' is not a byte "
                              "count (e.g. 268435456, 256M, 2G)",
                              getenv("KILN_VULKAN_MEMORY_LIMIT"));
  gpu->memory_limit = (uint64_t)(limit > 0 ? limit : 0);
  gpu->timeout_ns = kiln_vk_timeout_ns();
  if (!status && gpu->timeout_ns == 0)
    status = kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "KILN_VULKAN_TIMEOUT_MS='%s' is not a number of "
                              "milliseconds > 0 (e.g. 120000)",
                              getenv("KILN_VULKAN_TIMEOUT_MS"));
  if (!status) {
    if (pthread_mutex_init(&gpu->queue_lock, NULL) != 0)
      status =
          kiln_make_status(KILN_STATUS_INTERNAL, "pthread_mutex_init failed");
    else
      gpu->queue_lock_ready = 1;
  }
  if (!status)
    status = kiln_vk_load(gpu);
  if (!status)
    status = kiln_vk_create_instance(gpu);
  if (!status)
    status = kiln_vk_pick_device(gpu, selector);
  if (!status)
    status = kiln_vk_check_limits(gpu);
  if (!status)
    status = kiln_vk_create_device(gpu);
  if (!status)
    status = kiln_vk_create_pipelines(gpu);
  if (!status)
    status = kiln_vk_upload_constants(gpu);
  if (status) {
    kiln_vulkan_close(gpu);
    return status;
  }
  *out_gpu = gpu;
  return NULL;
}

void kiln_vulkan_close(kiln_vulkan_model *gpu) {
  if (!gpu)
    return;
  const kiln_vk_fns *vk = &gpu->vk;
  /* Work that outlived its fence wait may never finish: waiting for the
   * device, or destroying it (which waits too), could hang. Leak the device,
   * the instance and the loader instead. */
  int abandoned = atomic_load(&gpu->abandoned) > 0;
  if (gpu->device && !abandoned) {
    vk->vkDeviceWaitIdle(gpu->device);
    if (gpu->constants)
      for (uint32_t m = 0; m < gpu->desc->num_memory_needs; ++m)
        kiln_vk_buffer_destroy(gpu, &gpu->constants[m]);
    for (uint32_t p = 0; gpu->pipelines && p < gpu->num_pipelines; ++p)
      if (gpu->pipelines[p])
        vk->vkDestroyPipeline(gpu->device, gpu->pipelines[p], NULL);
    for (uint32_t e = 0; gpu->modules && e < gpu->desc->num_executables; ++e)
      if (gpu->modules[e])
        vk->vkDestroyShaderModule(gpu->device, gpu->modules[e], NULL);
    if (gpu->pipeline_layout)
      vk->vkDestroyPipelineLayout(gpu->device, gpu->pipeline_layout, NULL);
    if (gpu->set_layout)
      vk->vkDestroyDescriptorSetLayout(gpu->device, gpu->set_layout, NULL);
    vk->vkDestroyDevice(gpu->device, NULL);
  }
  if (gpu->instance && !abandoned)
    vk->vkDestroyInstance(gpu->instance, NULL);
  if (gpu->loader && !abandoned)
    dlclose(gpu->loader);
  if (gpu->queue_lock_ready)
    pthread_mutex_destroy(&gpu->queue_lock);
  free(gpu->constants);
  free(gpu->pipelines);
  free(gpu->kernel_base);
  free(gpu->modules);
  free(gpu->written);
  free(gpu);
}

uint32_t kiln_vulkan_dispatch_barriers(kiln_vulkan_model *gpu) {
  return atomic_load(&gpu->dispatch_barriers);
}

void kiln_vulkan_get_handles(const kiln_vulkan_model *gpu,
                             kiln_vulkan_handles *out) {
  out->instance = (void *)gpu->instance;
  out->physical_device = (void *)gpu->physical;
  out->device = (void *)gpu->device;
  out->queue_family_index = gpu->queue_family;
  out->api_version = gpu->properties.apiVersion;
  memcpy(&out->get_instance_proc_addr, &gpu->vk.vkGetInstanceProcAddr,
         sizeof(out->get_instance_proc_addr));
}

#endif /* KILN_HAVE_VULKAN */

/*===----------------------------------------------------------------------===*
 * The back-end table (gpu.h)
 *===----------------------------------------------------------------------===*/

static kiln_status kiln_vulkan_backend_open(const kiln_model_desc *desc,
                                            const char *selector,
                                            void **out_model) {
  kiln_vulkan_model *gpu = NULL;
  kiln_status status = kiln_vulkan_open(desc, selector, &gpu);
  *out_model = gpu;
  return status;
}
static void kiln_vulkan_backend_close(void *model) {
  kiln_vulkan_close((kiln_vulkan_model *)model);
}
static kiln_status kiln_vulkan_backend_context_create(void *model,
                                                      void **out_context) {
  kiln_vulkan_context *context = NULL;
  kiln_status status =
      kiln_vulkan_context_create((kiln_vulkan_model *)model, &context);
  *out_context = context;
  return status;
}
static void kiln_vulkan_backend_context_destroy(void *context) {
  kiln_vulkan_context_destroy((kiln_vulkan_context *)context);
}
static int kiln_vulkan_backend_context_unusable(const void *context) {
  return kiln_vulkan_context_unusable((const kiln_vulkan_context *)context);
}
static kiln_status kiln_vulkan_backend_run(void *context, void *const *inputs,
                                           void *const *outputs) {
  return kiln_vulkan_run((kiln_vulkan_context *)context, inputs, outputs);
}
static kiln_status kiln_vulkan_backend_run_device(
    void *context, const uint64_t *input_buffers, const uint64_t *input_offsets,
    const uint64_t *output_buffers, const uint64_t *output_offsets) {
  return kiln_vulkan_run_device((kiln_vulkan_context *)context, input_buffers,
                                input_offsets, output_buffers, output_offsets);
}

const kiln_gpu_backend kiln_vulkan_backend = {
    "vulkan",
    kiln_vulkan_backend_open,
    kiln_vulkan_backend_close,
    kiln_vulkan_backend_context_create,
    kiln_vulkan_backend_context_destroy,
    kiln_vulkan_backend_context_unusable,
    kiln_vulkan_backend_run,
    kiln_vulkan_backend_run_device,
};
