/*===- runtime/src/gpu/vulkan_run.c - Vulkan back end: run contexts --------===*
 *
 * A run context owns everything one run at a time writes: one device buffer
 * (the device-local memory needs, then the device copies of the inputs and
 * outputs), one host-visible staging buffer (inputs, then outputs), one
 * descriptor set per dispatch, and one command buffer recorded when the
 * context is created: copy the inputs in, every dispatch (a barrier only
 * where a dispatch touches bytes an earlier one since the last barrier may
 * have written), copy the outputs out. A run fills the staging buffer,
 * resubmits that command buffer and waits for its fence. Runs in different
 * contexts overlap; only vkQueueSubmit is serialised (the model's queue
 * lock).
 *===----------------------------------------------------------------------===*/
#include "gpu/gpu.h"

#ifndef KILN_HAVE_VULKAN

kiln_status kiln_vulkan_context_create(kiln_vulkan_model *gpu,
                                       kiln_vulkan_context **out) {
  (void)gpu;
  (void)out;
  return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                          "this runtime was built without its Vulkan back end");
}
void kiln_vulkan_context_destroy(kiln_vulkan_context *context) {
  (void)context;
}
int kiln_vulkan_context_unusable(const kiln_vulkan_context *context) {
  (void)context;
  return 0;
}
kiln_status kiln_vulkan_run(kiln_vulkan_context *context, void *const *inputs,
                            void *const *outputs) {
  (void)context;
  (void)inputs;
  (void)outputs;
  return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                          "this runtime was built without its Vulkan back end");
}
kiln_status kiln_vulkan_run_device(kiln_vulkan_context *context,
                                   const uint64_t *input_buffers,
                                   const uint64_t *input_offsets,
                                   const uint64_t *output_buffers,
                                   const uint64_t *output_offsets) {
  (void)input_buffers;
  (void)input_offsets;
  (void)output_buffers;
  (void)output_offsets;
  return kiln_vulkan_run(context, NULL, NULL);
}
void kiln_vulkan_get_handles(const kiln_vulkan_model *gpu,
                             kiln_vulkan_handles *out) {
  (void)gpu;
  (void)out;
}

#else /* KILN_HAVE_VULKAN */

#include <stdlib.h>
#include <string.h>

#include "gpu/vulkan.h"

struct kiln_vulkan_context {
  kiln_vulkan_model *gpu;
  kiln_vk_buffer device;  /* device-local needs, inputs, outputs */
  kiln_vk_buffer staging; /* inputs, outputs; host-visible */
  /* Offsets in `device` of each memory need (device-local ones), input and
   * output; in `staging` of each input and output. */
  VkDeviceSize *need_offset, *input_offset, *output_offset;
  VkDeviceSize *input_staging, *output_staging;
  VkDeviceSize status_staging; /* the run status (KILN_MEMORY_RUN_STATUS) */
  VkDescriptorPool descriptor_pool;
  VkDescriptorSet *sets; /* per dispatch */
  VkCommandPool command_pool;
  VkCommandBuffer commands;        /* the recorded run (host tensors) */
  VkCommandPool device_pool;       /* kiln_vulkan_run_device's, re-recorded */
  VkCommandBuffer device_commands; /* per run */
  VkFence fence;
  /* A run outlived its fence wait (KILN_VULKAN_TIMEOUT_MS): its work may
   * still be on the device, so later runs on this context fail and its
   * Vulkan objects are not freed while the fence is unsignalled. */
  int unusable;
};

/* A caller's VkBuffer handle, passed as uint64_t (a pointer type on 64-bit
 * hosts, uint64_t on 32-bit ones; 8 bytes on both). */
static VkBuffer kiln_buffer_handle(uint64_t handle) {
  VkBuffer buffer;
  memcpy(&buffer, &handle, sizeof(buffer));
  return buffer;
}

static VkDeviceSize kiln_align(VkDeviceSize value, VkDeviceSize alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

/* More than any device has: layouts past it are refused, and sums of
 * sizes below it cannot wrap. */
#define KILN_VK_MAX_BYTES ((VkDeviceSize)1 << 56)

/* A region of `bytes` in a buffer laid out so far up to *end: padded so that
 * even an empty one can be bound (4 bytes at least). Past KILN_VK_MAX_BYTES,
 * *end sticks there (and the caller refuses the layout). */
static VkDeviceSize kiln_place(VkDeviceSize *end, uint64_t bytes,
                               VkDeviceSize alignment) {
  if (*end > KILN_VK_MAX_BYTES || bytes > KILN_VK_MAX_BYTES ||
      alignment > KILN_VK_MAX_BYTES) {
    *end = KILN_VK_MAX_BYTES + 1;
    return 0;
  }
  VkDeviceSize offset = kiln_align(*end, alignment);
  *end = offset + kiln_align(bytes ? bytes : 4, 4);
  return offset;
}

static size_t kiln_input_bytes(const kiln_model_desc *desc, uint32_t i) {
  return kiln_tensor_desc_byte_size(&desc->inputs[i]);
}

static size_t kiln_output_bytes(const kiln_model_desc *desc, uint32_t i) {
  return kiln_tensor_desc_byte_size(&desc->outputs[i]);
}

/* The buffer and offset a dispatch binding addresses in this context. */
static void kiln_resolve(const kiln_vulkan_context *ctx,
                         const kiln_binding_desc *b,
                         VkDescriptorBufferInfo *out) {
  const kiln_vulkan_model *gpu = ctx->gpu;
  out->buffer = ctx->device.buffer;
  out->range = kiln_vk_binding_range(gpu, b);
  switch (b->kind) {
  case KILN_BINDING_INPUT:
    out->offset = ctx->input_offset[b->index] + b->offset;
    break;
  case KILN_BINDING_OUTPUT:
    out->offset = ctx->output_offset[b->index] + b->offset;
    break;
  default:
    if (gpu->desc->memory_needs[b->index].kind == KILN_MEMORY_DEVICE_CONSTANT) {
      out->buffer = gpu->constants[b->index].buffer;
      out->offset = b->offset;
    } else {
      out->offset = ctx->need_offset[b->index] + b->offset;
    }
    break;
  }
}

static kiln_status kiln_create_buffers(kiln_vulkan_context *ctx) {
  kiln_vulkan_model *gpu = ctx->gpu;
  const kiln_model_desc *desc = gpu->desc;
  uint32_t nm = desc->num_memory_needs, ni = desc->num_inputs,
           no = desc->num_outputs;
  ctx->need_offset = (VkDeviceSize *)calloc(nm ? nm : 1, sizeof(VkDeviceSize));
  ctx->input_offset = (VkDeviceSize *)calloc(ni ? ni : 1, sizeof(VkDeviceSize));
  ctx->output_offset =
      (VkDeviceSize *)calloc(no ? no : 1, sizeof(VkDeviceSize));
  ctx->input_staging =
      (VkDeviceSize *)calloc(ni ? ni : 1, sizeof(VkDeviceSize));
  ctx->output_staging =
      (VkDeviceSize *)calloc(no ? no : 1, sizeof(VkDeviceSize));
  if (!ctx->need_offset || !ctx->input_offset || !ctx->output_offset ||
      !ctx->input_staging || !ctx->output_staging)
    return kiln_out_of_memory_status();
  VkDeviceSize end = 0, staged = 0;
  for (uint32_t m = 0; m < nm; ++m) {
    const kiln_memory_need *need = &desc->memory_needs[m];
    if (need->kind != KILN_MEMORY_DEVICE_LOCAL)
      continue;
    VkDeviceSize alignment = gpu->alignment;
    while (alignment < need->alignment && alignment <= KILN_VK_MAX_BYTES)
      alignment *= 2;
    ctx->need_offset[m] = kiln_place(&end, need->size, alignment);
  }
  for (uint32_t i = 0; i < ni; ++i) {
    ctx->input_offset[i] =
        kiln_place(&end, kiln_input_bytes(desc, i), gpu->alignment);
    ctx->input_staging[i] = kiln_place(&staged, kiln_input_bytes(desc, i), 64);
  }
  for (uint32_t o = 0; o < no; ++o) {
    ctx->output_offset[o] =
        kiln_place(&end, kiln_output_bytes(desc, o), gpu->alignment);
    ctx->output_staging[o] =
        kiln_place(&staged, kiln_output_bytes(desc, o), 64);
  }
  ctx->status_staging = kiln_place(&staged, 4, 64);
  if (end > KILN_VK_MAX_BYTES || staged > KILN_VK_MAX_BYTES)
    return kiln_make_status(KILN_STATUS_OUT_OF_MEMORY,
                            "model '%s': a run needs more than 2^56 bytes of "
                            "device memory",
                            gpu->name);
  kiln_status status = kiln_vk_buffer_create(
      gpu, end + 256,
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
          VK_BUFFER_USAGE_TRANSFER_DST_BIT,
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0,
      "a run context's device memory (arena, inputs, outputs)", &ctx->device);
  if (status)
    return status;
  /* Cached memory reads the outputs back fast; coherent needs no flushes. */
  return kiln_vk_buffer_create(
      gpu, staged + 64,
      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
          VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
      VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
      "a run context's staging memory (inputs, outputs)", &ctx->staging);
}

static kiln_status kiln_create_descriptors(kiln_vulkan_context *ctx) {
  kiln_vulkan_model *gpu = ctx->gpu;
  const kiln_model_desc *desc = gpu->desc;
  const kiln_vk_fns *vk = &gpu->vk;
  uint32_t nd = desc->num_dispatches, nb = gpu->max_bindings;
  if (nb == 0)
    return NULL; /* no dispatch binds anything: no sets */
  if ((uint64_t)nd * nb > UINT32_MAX)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s': %u dispatches of up to %u bindings "
                            "are more descriptors than one pool holds",
                            gpu->name, (unsigned)nd, (unsigned)nb);
  VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, nd * nb};
  VkDescriptorPoolCreateInfo pool_info = {
      VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool_info.maxSets = nd;
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &size;
  VkResult r = vk->vkCreateDescriptorPool(gpu->device, &pool_info, NULL,
                                          &ctx->descriptor_pool);
  if (r != VK_SUCCESS)
    return kiln_vk_error(gpu, r, "vkCreateDescriptorPool failed");
  ctx->sets = (VkDescriptorSet *)calloc(nd, sizeof(VkDescriptorSet));
  VkDescriptorSetLayout *layouts =
      (VkDescriptorSetLayout *)calloc(nd, sizeof(VkDescriptorSetLayout));
  VkDescriptorBufferInfo *infos =
      (VkDescriptorBufferInfo *)calloc((size_t)nd * nb, sizeof(*infos));
  VkWriteDescriptorSet *writes =
      (VkWriteDescriptorSet *)calloc(nd, sizeof(*writes));
  kiln_status status = NULL;
  if (!ctx->sets || !layouts || !infos || !writes) {
    status = kiln_out_of_memory_status();
    goto done;
  }
  for (uint32_t d = 0; d < nd; ++d)
    layouts[d] = gpu->set_layout;
  VkDescriptorSetAllocateInfo alloc = {
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  alloc.descriptorPool = ctx->descriptor_pool;
  alloc.descriptorSetCount = nd;
  alloc.pSetLayouts = layouts;
  r = vk->vkAllocateDescriptorSets(gpu->device, &alloc, ctx->sets);
  if (r != VK_SUCCESS) {
    status = kiln_vk_error(gpu, r, "vkAllocateDescriptorSets failed");
    goto done;
  }
  for (uint32_t d = 0; d < nd; ++d) {
    const kiln_dispatch_desc *x = &desc->dispatches[d];
    VkDescriptorBufferInfo *info = &infos[(size_t)d * nb];
    for (uint32_t b = 0; b < nb; ++b) {
      if (b < x->num_bindings) {
        kiln_resolve(ctx, &x->bindings[b], &info[b]);
      } else {
        /* A slot this kernel does not declare: still a valid descriptor. */
        info[b].buffer = ctx->device.buffer;
        info[b].offset = 0;
        info[b].range = 4;
      }
    }
    writes[d].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[d].dstSet = ctx->sets[d];
    writes[d].dstBinding = 0;
    writes[d].descriptorCount = nb; /* consecutive bindings 0..nb-1 */
    writes[d].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[d].pBufferInfo = info;
  }
  vk->vkUpdateDescriptorSets(gpu->device, nd, writes, 0, NULL);
done:
  free(layouts);
  free(infos);
  free(writes);
  return status;
}

static void kiln_barrier(const kiln_vk_fns *vk, VkCommandBuffer cb,
                         VkPipelineStageFlags src_stage, VkAccessFlags src,
                         VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
  VkMemoryBarrier barrier = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = src;
  barrier.dstAccessMask = dst;
  vk->vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &barrier, 0, NULL, 0,
                           NULL);
}

/* A byte range of a buffer some dispatch since the last barrier bound. */
typedef struct kiln_touched {
  VkBuffer buffer;
  VkDeviceSize begin, end;
  int written; /* the dispatch's kernel may write it */
} kiln_touched;

/* Whether a binding addresses the run status: kernels only ever store a
 * failed check's number there, so any order of those stores is right and
 * they need no barrier. */
static int kiln_is_status(const kiln_vulkan_model *gpu,
                          const kiln_binding_desc *b) {
  return b->kind == KILN_BINDING_MEMORY &&
         (int64_t)b->index == gpu->status_need;
}

/* The run status starts at 0 (before the barrier that precedes the first
 * dispatch) ... */
static void kiln_record_status_reset(const kiln_vulkan_context *ctx,
                                     VkCommandBuffer cb) {
  const kiln_vulkan_model *gpu = ctx->gpu;
  if (gpu->status_need >= 0)
    gpu->vk.vkCmdFillBuffer(cb, ctx->device.buffer,
                            ctx->need_offset[gpu->status_need], 4, 0);
}

/* ... and is copied to staging after the last (after the barrier that
 * follows it). */
static void kiln_record_status_copy(const kiln_vulkan_context *ctx,
                                    VkCommandBuffer cb) {
  const kiln_vulkan_model *gpu = ctx->gpu;
  if (gpu->status_need < 0)
    return;
  VkBufferCopy region = {ctx->need_offset[gpu->status_need],
                         ctx->status_staging, 4};
  gpu->vk.vkCmdCopyBuffer(cb, ctx->device.buffer, ctx->staging.buffer, 1,
                          &region);
}

/* Every dispatch, in table order; a barrier before one that binds bytes that
 * a dispatch since the last barrier bound too, when either may write them
 * (what a kernel writes comes from its module's code,
 * kiln_spirv_written_bindings; weights are never written). Dispatches that
 * only read what the others since the barrier touch run without one. */
static kiln_status kiln_record_dispatches(kiln_vulkan_context *ctx,
                                          VkCommandBuffer cb) {
  kiln_vulkan_model *gpu = ctx->gpu;
  const kiln_model_desc *desc = gpu->desc;
  const kiln_vk_fns *vk = &gpu->vk;
  size_t capacity = 64, count = 0;
  kiln_touched *touched = (kiln_touched *)malloc(capacity * sizeof(*touched));
  if (!touched)
    return kiln_out_of_memory_status();
  VkPipeline bound = VK_NULL_HANDLE;
  uint32_t barriers = 0;
  for (uint32_t d = 0; d < desc->num_dispatches; ++d) {
    const kiln_dispatch_desc *x = &desc->dispatches[d];
    uint64_t written = gpu->written[x->executable];
    int depends = 0;
    for (uint32_t b = 0; b < x->num_bindings && !depends; ++b) {
      VkDescriptorBufferInfo info;
      if (kiln_is_status(gpu, &x->bindings[b]))
        continue;
      kiln_resolve(ctx, &x->bindings[b], &info);
      if (info.buffer != ctx->device.buffer)
        continue; /* weights: only read */
      int writes = (written >> (b < 63 ? b : 63)) & 1;
      for (size_t t = 0; t < count && !depends; ++t)
        depends = (writes || touched[t].written) &&
                  touched[t].buffer == info.buffer &&
                  touched[t].begin < info.offset + info.range &&
                  info.offset < touched[t].end;
    }
    if (depends) {
      ++barriers;
      kiln_barrier(vk, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      count = 0;
    }
    for (uint32_t b = 0; b < x->num_bindings; ++b) {
      VkDescriptorBufferInfo info;
      if (kiln_is_status(gpu, &x->bindings[b]))
        continue;
      kiln_resolve(ctx, &x->bindings[b], &info);
      if (info.buffer != ctx->device.buffer)
        continue;
      if (count == capacity) {
        kiln_touched *grown =
            (kiln_touched *)realloc(touched, 2 * capacity * sizeof(*touched));
        if (!grown) {
          free(touched);
          return kiln_out_of_memory_status();
        }
        touched = grown, capacity *= 2;
      }
      touched[count++] =
          (kiln_touched){info.buffer, info.offset, info.offset + info.range,
                         (int)((written >> (b < 63 ? b : 63)) & 1)};
    }
    VkPipeline pipeline =
        gpu->pipelines[gpu->kernel_base[x->executable] + x->kernel];
    if (pipeline != bound)
      vk->vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    bound = pipeline;
    if (ctx->sets)
      vk->vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE,
                                  gpu->pipeline_layout, 0, 1, &ctx->sets[d], 0,
                                  NULL);
    if (x->num_constants)
      vk->vkCmdPushConstants(cb, gpu->pipeline_layout,
                             VK_SHADER_STAGE_COMPUTE_BIT, 0,
                             x->num_constants * 4, x->constants);
    vk->vkCmdDispatch(cb, x->workgroup_count[0], x->workgroup_count[1],
                      x->workgroup_count[2]);
  }
  free(touched);
  atomic_store(&gpu->dispatch_barriers, barriers);
  return NULL;
}

/* What came before in the queue (an earlier run's reads and writes of these
 * buffers) completes before this run writes them. */
static void kiln_barrier_from_earlier_runs(const kiln_vk_fns *vk,
                                           VkCommandBuffer cb) {
  kiln_barrier(
      vk, cb,
      VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
      VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
      VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

/* The whole run on host tensors, recorded once: staging -> device, the
 * dispatches, device -> staging. */
static kiln_status kiln_record_run(kiln_vulkan_context *ctx) {
  kiln_vulkan_model *gpu = ctx->gpu;
  const kiln_model_desc *desc = gpu->desc;
  const kiln_vk_fns *vk = &gpu->vk;
  VkCommandBuffer cb = ctx->commands;
  VkCommandBufferBeginInfo begin = {
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkResult r = vk->vkBeginCommandBuffer(cb, &begin);
  if (r != VK_SUCCESS)
    return kiln_vk_error(gpu, r, "vkBeginCommandBuffer failed");
  kiln_barrier_from_earlier_runs(vk, cb);
  uint32_t ni = desc->num_inputs, no = desc->num_outputs;
  VkBufferCopy *regions =
      (VkBufferCopy *)calloc((ni > no ? ni : no) + 1, sizeof(VkBufferCopy));
  if (!regions)
    return kiln_out_of_memory_status();
  uint32_t n = 0;
  for (uint32_t i = 0; i < ni; ++i)
    if (kiln_input_bytes(desc, i))
      regions[n++] = (VkBufferCopy){ctx->input_staging[i], ctx->input_offset[i],
                                    kiln_input_bytes(desc, i)};
  if (n)
    vk->vkCmdCopyBuffer(cb, ctx->staging.buffer, ctx->device.buffer, n,
                        regions);
  kiln_record_status_reset(ctx, cb);
  kiln_barrier(vk, cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
               VK_ACCESS_TRANSFER_WRITE_BIT,
               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
               VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  kiln_status status = kiln_record_dispatches(ctx, cb);
  if (status) {
    free(regions);
    return status;
  }
  kiln_barrier(vk, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
               VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
               VK_ACCESS_TRANSFER_READ_BIT);
  n = 0;
  for (uint32_t o = 0; o < no; ++o)
    if (kiln_output_bytes(desc, o))
      regions[n++] =
          (VkBufferCopy){ctx->output_offset[o], ctx->output_staging[o],
                         kiln_output_bytes(desc, o)};
  if (n)
    vk->vkCmdCopyBuffer(cb, ctx->device.buffer, ctx->staging.buffer, n,
                        regions);
  kiln_record_status_copy(ctx, cb);
  free(regions);
  kiln_barrier(vk, cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
               VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
               VK_ACCESS_HOST_READ_BIT);
  r = vk->vkEndCommandBuffer(cb);
  if (r != VK_SUCCESS)
    return kiln_vk_error(gpu, r, "cannot record the run's command buffer");
  return NULL;
}

static kiln_status kiln_create_commands(kiln_vulkan_context *ctx) {
  kiln_vulkan_model *gpu = ctx->gpu;
  const kiln_vk_fns *vk = &gpu->vk;
  VkCommandPoolCreateInfo pool_info = {
      VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = gpu->queue_family;
  VkResult r = vk->vkCreateCommandPool(gpu->device, &pool_info, NULL,
                                       &ctx->command_pool);
  if (r == VK_SUCCESS) {
    VkCommandBufferAllocateInfo info = {
        VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = ctx->command_pool;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    r = vk->vkAllocateCommandBuffers(gpu->device, &info, &ctx->commands);
  }
  if (r == VK_SUCCESS) {
    VkFenceCreateInfo fence_info = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    r = vk->vkCreateFence(gpu->device, &fence_info, NULL, &ctx->fence);
  }
  if (r != VK_SUCCESS)
    return kiln_vk_error(gpu, r, "cannot create a run context's commands");
  return kiln_record_run(ctx);
}

kiln_status kiln_vulkan_context_create(kiln_vulkan_model *gpu,
                                       kiln_vulkan_context **out) {
  kiln_vulkan_context *ctx = (kiln_vulkan_context *)calloc(1, sizeof(*ctx));
  if (!ctx)
    return kiln_out_of_memory_status();
  ctx->gpu = gpu;
  kiln_status status = kiln_create_buffers(ctx);
  if (!status)
    status = kiln_create_descriptors(ctx);
  if (!status)
    status = kiln_create_commands(ctx);
  if (status) {
    kiln_vulkan_context_destroy(ctx);
    return status;
  }
  *out = ctx;
  return NULL;
}

/* Frees what the host owns of a context whose work may still be on the
 * device; its Vulkan objects leak (the device may still use them). */
static void kiln_vk_leak_context(kiln_vulkan_context *ctx) {
  free(ctx->sets);
  free(ctx->need_offset);
  free(ctx->input_offset);
  free(ctx->output_offset);
  free(ctx->input_staging);
  free(ctx->output_staging);
  free(ctx);
}

void kiln_vulkan_context_destroy(kiln_vulkan_context *ctx) {
  if (!ctx)
    return;
  kiln_vulkan_model *gpu = ctx->gpu;
  const kiln_vk_fns *vk = &gpu->vk;
  /* A run waits for its fence before it returns: nothing is in flight,
   * unless a run timed out and its work has not finished since. */
  if (ctx->unusable) {
    if (!ctx->fence ||
        vk->vkGetFenceStatus(gpu->device, ctx->fence) != VK_SUCCESS) {
      kiln_vk_leak_context(ctx);
      return;
    }
    atomic_fetch_sub(&gpu->abandoned, 1); /* it finished after all */
  }
  if (ctx->fence)
    vk->vkDestroyFence(gpu->device, ctx->fence, NULL);
  if (ctx->command_pool)
    vk->vkDestroyCommandPool(gpu->device, ctx->command_pool, NULL);
  if (ctx->device_pool)
    vk->vkDestroyCommandPool(gpu->device, ctx->device_pool, NULL);
  if (ctx->descriptor_pool)
    vk->vkDestroyDescriptorPool(gpu->device, ctx->descriptor_pool, NULL);
  kiln_vk_buffer_destroy(gpu, &ctx->device);
  kiln_vk_buffer_destroy(gpu, &ctx->staging);
  free(ctx->sets);
  free(ctx->need_offset);
  free(ctx->input_offset);
  free(ctx->output_offset);
  free(ctx->input_staging);
  free(ctx->output_staging);
  free(ctx);
}

/* The message of a failed run names the model's kernels: Vulkan does not
 * say which dispatch of a command buffer failed. */
static kiln_status kiln_run_failed(kiln_vulkan_context *ctx, kiln_status status,
                                   int timed_out) {
  const kiln_model_desc *desc = ctx->gpu->desc;
  ctx->unusable |= timed_out;
  if (desc->num_dispatches == 0)
    return status;
  const kiln_dispatch_desc *first = &desc->dispatches[0];
  const kiln_dispatch_desc *last = &desc->dispatches[desc->num_dispatches - 1];
  kiln_status wrapped = kiln_make_status(
      kiln_status_code(status),
      "%s (while running its %u dispatches, kernels '%s' to '%s')%s",
      kiln_status_message(status), (unsigned)desc->num_dispatches,
      desc->executables[first->executable].kernel_names[first->kernel],
      desc->executables[last->executable].kernel_names[last->kernel],
      timed_out ? "; this run context is unusable from now on (its work may "
                  "still be on the device): use another one"
                : "");
  kiln_status_free(status);
  return wrapped;
}

/* A failed run-time check the kernels stored in the run status. */
static kiln_status kiln_check_run_status(kiln_vulkan_context *ctx) {
  const kiln_vulkan_model *gpu = ctx->gpu;
  const kiln_model_desc *desc = gpu->desc;
  if (gpu->status_need < 0)
    return NULL;
  uint32_t check;
  memcpy(&check, (unsigned char *)ctx->staging.mapped + ctx->status_staging, 4);
  if (check == 0)
    return NULL;
  if (check <= desc->num_check_messages && desc->check_messages[check - 1])
    return kiln_make_status(KILN_STATUS_RUNTIME_CHECK_FAILED, "%s",
                            desc->check_messages[check - 1]);
  return kiln_make_status(KILN_STATUS_INTERNAL,
                          "model '%s' stored run status %u, which names no "
                          "check (it has %u check messages)",
                          gpu->name, (unsigned)check,
                          (unsigned)desc->num_check_messages);
}

int kiln_vulkan_context_unusable(const kiln_vulkan_context *ctx) {
  return ctx->unusable;
}

/* A context an earlier run timed out on refuses every later run. */
static kiln_status kiln_check_usable(const kiln_vulkan_context *ctx) {
  if (!ctx->unusable)
    return NULL;
  return kiln_make_status(
      KILN_STATUS_FAILED_PRECONDITION,
      "model '%s': this run context is unusable: an earlier run on it did "
      "not finish within %llu ms (KILN_VULKAN_TIMEOUT_MS) and its work may "
      "still be on the device; use another run context",
      ctx->gpu->name, (unsigned long long)(ctx->gpu->timeout_ns / 1000000));
}

kiln_status kiln_vulkan_run(kiln_vulkan_context *ctx, void *const *inputs,
                            void *const *outputs) {
  kiln_status unusable = kiln_check_usable(ctx);
  if (unusable)
    return unusable;
  kiln_vulkan_model *gpu = ctx->gpu;
  const kiln_model_desc *desc = gpu->desc;
  unsigned char *staging = (unsigned char *)ctx->staging.mapped;
  for (uint32_t i = 0; i < desc->num_inputs; ++i) {
    size_t bytes = kiln_input_bytes(desc, i);
    if (bytes)
      memcpy(staging + ctx->input_staging[i], inputs[i], bytes);
  }
  int timed_out = 0;
  kiln_status status = kiln_vk_submit_wait(gpu, 1, &ctx->commands, ctx->fence,
                                           "the run", &timed_out);
  if (status)
    return kiln_run_failed(ctx, status, timed_out);
  status = kiln_check_run_status(ctx);
  if (status)
    return status;
  for (uint32_t o = 0; o < desc->num_outputs; ++o) {
    size_t bytes = kiln_output_bytes(desc, o);
    if (bytes)
      memcpy(outputs[o], staging + ctx->output_staging[o], bytes);
  }
  return NULL;
}

kiln_status kiln_vulkan_run_device(kiln_vulkan_context *ctx,
                                   const uint64_t *input_buffers,
                                   const uint64_t *input_offsets,
                                   const uint64_t *output_buffers,
                                   const uint64_t *output_offsets) {
  kiln_status unusable = kiln_check_usable(ctx);
  if (unusable)
    return unusable;
  kiln_vulkan_model *gpu = ctx->gpu;
  const kiln_model_desc *desc = gpu->desc;
  const kiln_vk_fns *vk = &gpu->vk;
  VkResult r = VK_SUCCESS;
  if (!ctx->device_pool) {
    VkCommandPoolCreateInfo pool_info = {
        VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pool_info.queueFamilyIndex = gpu->queue_family;
    r = vk->vkCreateCommandPool(gpu->device, &pool_info, NULL,
                                &ctx->device_pool);
    if (r == VK_SUCCESS) {
      VkCommandBufferAllocateInfo info = {
          VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      info.commandPool = ctx->device_pool;
      info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      info.commandBufferCount = 1;
      r = vk->vkAllocateCommandBuffers(gpu->device, &info,
                                       &ctx->device_commands);
    }
    if (r != VK_SUCCESS)
      return kiln_vk_error(gpu, r, "cannot create the device run's commands");
  }
  /* The caller's buffers change from run to run: record this run's copies
   * around the dispatches. */
  VkCommandBuffer cb = ctx->device_commands;
  r = vk->vkResetCommandPool(gpu->device, ctx->device_pool, 0);
  VkCommandBufferBeginInfo begin = {
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (r == VK_SUCCESS)
    r = vk->vkBeginCommandBuffer(cb, &begin);
  if (r != VK_SUCCESS)
    return kiln_vk_error(gpu, r, "cannot record the device run");
  kiln_barrier_from_earlier_runs(vk, cb);
  for (uint32_t i = 0; i < desc->num_inputs; ++i) {
    size_t bytes = kiln_input_bytes(desc, i);
    VkBufferCopy region = {input_offsets[i], ctx->input_offset[i], bytes};
    if (bytes)
      vk->vkCmdCopyBuffer(cb, kiln_buffer_handle(input_buffers[i]),
                          ctx->device.buffer, 1, &region);
  }
  kiln_record_status_reset(ctx, cb);
  kiln_barrier(vk, cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
               VK_ACCESS_TRANSFER_WRITE_BIT,
               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
               VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  kiln_status status = kiln_record_dispatches(ctx, cb);
  if (status) {
    vk->vkEndCommandBuffer(cb);
    return status;
  }
  kiln_barrier(vk, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
               VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
               VK_ACCESS_TRANSFER_READ_BIT);
  for (uint32_t o = 0; o < desc->num_outputs; ++o) {
    size_t bytes = kiln_output_bytes(desc, o);
    VkBufferCopy region = {ctx->output_offset[o], output_offsets[o], bytes};
    if (bytes)
      vk->vkCmdCopyBuffer(cb, ctx->device.buffer,
                          kiln_buffer_handle(output_buffers[o]), 1, &region);
  }
  kiln_record_status_copy(ctx, cb);
  /* The caller's later work on the outputs, on any queue, sees them. */
  kiln_barrier(vk, cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
               VK_ACCESS_TRANSFER_WRITE_BIT,
               VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT,
               VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT |
                   VK_ACCESS_HOST_READ_BIT);
  r = vk->vkEndCommandBuffer(cb);
  if (r != VK_SUCCESS)
    return kiln_vk_error(gpu, r, "cannot record the device run");
  int timed_out = 0;
  status = kiln_vk_submit_wait(gpu, 1, &cb, ctx->fence, "the device run",
                               &timed_out);
  return status ? kiln_run_failed(ctx, status, timed_out)
                : kiln_check_run_status(ctx);
}

#endif /* KILN_HAVE_VULKAN */
