/*===- runtime/src/descriptor.c - Element types and descriptor checks ------===*
 *
 * Everything the runtime reads from a descriptor is checked here before the
 * model opens: a malformed descriptor is refused with INVALID_ARGUMENT, a
 * well-formed one this runtime cannot run yet (device executables, symbolic
 * dims) with UNSUPPORTED; neither crashes. Structure is checked first, so a
 * malformed descriptor is never called merely unsupported.
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "internal.h"

/*===----------------------------------------------------------------------===*
 * Element types (the one table in model_abi.h)
 *===----------------------------------------------------------------------===*/

const char *kiln_dtype_name(kiln_dtype dtype) {
  switch ((int)dtype) {
  case KILN_DTYPE_UNDEFINED:
    return "undefined";
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  case ID:                                                                     \
    return STR;
    KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  }
  return "invalid";
}

size_t kiln_dtype_size(kiln_dtype dtype) {
  switch ((int)dtype) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  case ID:                                                                     \
    return BYTES;
    KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  }
  return 0;
}

/*===----------------------------------------------------------------------===*
 * Descriptor checks
 *===----------------------------------------------------------------------===*/

#define KILN_MALFORMED(name, ...)                                              \
  kiln_malformed(name, __VA_ARGS__)

static kiln_status kiln_malformed(const char *name, const char *format, ...)
    KILN_PRINTF(2, 3);
static kiln_status kiln_malformed(const char *name, const char *format, ...) {
  kiln_strbuf buf = {0};
  kiln_strbuf_appendf(&buf, "malformed descriptor of model '%s': ", name);
  va_list args;
  va_start(args, format);
  kiln_status detail = kiln_make_status_v(KILN_STATUS_INVALID_ARGUMENT, format,
                                          args);
  va_end(args);
  kiln_strbuf_appendf(&buf, "%s", kiln_status_message(detail));
  kiln_status_free(detail);
  return kiln_strbuf_to_status(&buf, KILN_STATUS_INVALID_ARGUMENT);
}

const char *kiln_executable_format_name(uint32_t format) {
  switch (format) {
  case KILN_EXECUTABLE_HOST:
    return "host";
  case KILN_EXECUTABLE_SPIRV:
    return "spirv";
  case KILN_EXECUTABLE_PTX:
    return "ptx";
  case KILN_EXECUTABLE_CUBIN:
    return "cubin";
  case KILN_EXECUTABLE_HSACO:
    return "hsaco";
  }
  return NULL;
}

const char *kiln_memory_kind_name(uint32_t kind) {
  switch (kind) {
  case KILN_MEMORY_HOST_SCRATCH:
    return "host-scratch";
  case KILN_MEMORY_DEVICE_LOCAL:
    return "device-local";
  case KILN_MEMORY_HOST_VISIBLE:
    return "host-visible";
  case KILN_MEMORY_DEVICE_CONSTANT:
    return "device-constant";
  }
  return NULL;
}

/* Structure of the inputs or outputs; *symbolic is set when a dim is a
 * symbol. */
static kiln_status kiln_check_tensors(const kiln_model_desc *desc,
                                      const char *name, const char *kind,
                                      const kiln_tensor_desc *descs,
                                      uint32_t count, int *symbolic) {
  if (count > 0 && !descs)
    return KILN_MALFORMED(name, "%u %ss but no %s array", (unsigned)count,
                          kind, kind);
  for (uint32_t i = 0; i < count; ++i) {
    const kiln_tensor_desc *t = &descs[i];
    if (!t->name)
      return KILN_MALFORMED(name, "%s %u has no name", kind, (unsigned)i);
    if (t->rank < 0 || (t->rank > 0 && !t->shape))
      return KILN_MALFORMED(name, "%s '%s' has rank %d and %s shape", kind,
                            t->name, (int)t->rank, t->shape ? "a" : "no");
    for (int32_t d = 0; d < t->rank; ++d) {
      int64_t dim = t->shape[d];
      if (!KILN_DIM_IS_SYMBOL(dim))
        continue;
      if (KILN_DIM_SYMBOL_ID(dim) >= desc->num_symbols)
        return KILN_MALFORMED(name,
                              "dim %d of %s '%s' names symbol %llu, but the "
                              "model has %u symbols",
                              (int)d, kind, t->name,
                              (unsigned long long)KILN_DIM_SYMBOL_ID(dim),
                              (unsigned)desc->num_symbols);
      *symbolic = 1;
    }
  }
  return NULL;
}

/* Element types and sizes, once the structure is known to be sound and every
 * dim static. */
static kiln_status kiln_check_tensor_sizes(const char *name, const char *kind,
                                           const kiln_tensor_desc *descs,
                                           uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    const kiln_tensor_desc *t = &descs[i];
    if (kiln_dtype_size((kiln_dtype)t->dtype) == 0)
      return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                              "model '%s': %s '%s' has element type %d, which "
                              "this runtime does not support",
                              name, kind, t->name, (int)t->dtype);
    if (!kiln_tensor_desc_fits(t))
      return KILN_MALFORMED(name, "%s '%s' has a size that overflows", kind,
                            t->name);
  }
  return NULL;
}

static kiln_status kiln_check_symbols(const kiln_model_desc *desc,
                                      const char *name) {
  if (desc->num_symbols > 0 && !desc->symbols)
    return KILN_MALFORMED(name, "%u symbols but no symbol array",
                          (unsigned)desc->num_symbols);
  for (uint32_t s = 0; s < desc->num_symbols; ++s) {
    const kiln_dim_symbol *sym = &desc->symbols[s];
    if (!sym->name)
      return KILN_MALFORMED(name, "symbol %u has no name", (unsigned)s);
    if (sym->min < 0 || (sym->max != KILN_DIM_UNBOUNDED && sym->max < sym->min))
      return KILN_MALFORMED(name, "symbol '%s' has bounds [%lld, %lld]",
                            sym->name, (long long)sym->min,
                            (long long)sym->max);
    if ((sym->flags & ~KILN_SYMBOL_RUN) != 0 || sym->reserved != 0)
      return KILN_MALFORMED(name, "symbol '%s' has flags 0x%x (reserved %u)",
                            sym->name, (unsigned)sym->flags,
                            (unsigned)sym->reserved);
  }
  if ((desc->num_symbols > 0) != (desc->shape_fn != NULL))
    return KILN_MALFORMED(name, "%u symbols and %s shape function",
                          (unsigned)desc->num_symbols,
                          desc->shape_fn ? "a" : "no");
  return NULL;
}

static kiln_status kiln_check_executables(const kiln_model_desc *desc,
                                          const char *name) {
  if (desc->num_executables > 0 && !desc->executables)
    return KILN_MALFORMED(name, "%u executables but no executable array",
                          (unsigned)desc->num_executables);
  for (uint32_t e = 0; e < desc->num_executables; ++e) {
    const kiln_executable_desc *x = &desc->executables[e];
    const char *format = kiln_executable_format_name(x->format);
    if (!format)
      return KILN_MALFORMED(name, "executable %u has unknown format %u",
                            (unsigned)e, (unsigned)x->format);
    if (x->format == KILN_EXECUTABLE_HOST) {
      if ((x->entry != NULL) == (x->dynamic_entry != NULL))
        return KILN_MALFORMED(name,
                              "host executable %u needs exactly one entry "
                              "function, has %s",
                              (unsigned)e, x->entry ? "two" : "none");
      if (x->flags)
        return KILN_MALFORMED(name, "host executable %u has flags 0x%x",
                              (unsigned)e, (unsigned)x->flags);
      if ((x->dynamic_entry != NULL) != (desc->num_symbols > 0))
        return KILN_MALFORMED(name,
                              "host executable %u has a %s entry, but the "
                              "model has %u symbols",
                              (unsigned)e, x->entry ? "static" : "dynamic",
                              (unsigned)desc->num_symbols);
      /* Optional kernel table (profiles): num_kernels body pointers at
       * `data`, named by kernel_names. */
      if (x->num_kernels == 0 && (x->data || x->size || x->kernel_names))
        return KILN_MALFORMED(name, "host executable %u has device code",
                              (unsigned)e);
      if (x->num_kernels > 0 &&
          (!x->data || !x->kernel_names ||
           x->size != (uint64_t)x->num_kernels * sizeof(void *)))
        return KILN_MALFORMED(name,
                              "host executable %u has %u kernels but not a "
                              "table of as many body pointers and names",
                              (unsigned)e, (unsigned)x->num_kernels);
      for (uint32_t k = 0; k < x->num_kernels; ++k)
        if (!x->kernel_names[k])
          return KILN_MALFORMED(name, "kernel %u of host executable %u has "
                                      "no name",
                                (unsigned)k, (unsigned)e);
      continue;
    }
    if (x->flags & ~KILN_EXECUTABLE_ALTERNATIVE)
      return KILN_MALFORMED(name, "%s executable %u has unknown flags 0x%x",
                            format, (unsigned)e, (unsigned)x->flags);
    if (!x->data || x->size == 0)
      return KILN_MALFORMED(name, "%s executable %u has no code", format,
                            (unsigned)e);
    if (x->entry || x->dynamic_entry)
      return KILN_MALFORMED(name, "%s executable %u has a host entry", format,
                            (unsigned)e);
    if (x->num_kernels > 0 && !x->kernel_names)
      return KILN_MALFORMED(name, "%s executable %u has %u kernels but no "
                                  "names",
                            format, (unsigned)e, (unsigned)x->num_kernels);
    for (uint32_t k = 0; k < x->num_kernels; ++k)
      if (!x->kernel_names[k])
        return KILN_MALFORMED(name, "kernel %u of %s executable %u has no "
                                    "name",
                              (unsigned)k, format, (unsigned)e);
    /* Another build of the executable before it: the same kernels. */
    if (x->flags & KILN_EXECUTABLE_ALTERNATIVE) {
      const kiln_executable_desc *prev =
          e > 0 ? &desc->executables[e - 1] : NULL;
      int same = prev && prev->format != KILN_EXECUTABLE_HOST &&
                 prev->num_kernels == x->num_kernels;
      for (uint32_t k = 0; same && k < x->num_kernels; ++k)
        same = prev->kernel_names[k] &&
               strcmp(prev->kernel_names[k], x->kernel_names[k]) == 0;
      if (!same)
        return KILN_MALFORMED(name,
                              "%s executable %u is flagged an alternative of "
                              "the executable before it, but that is %s with "
                              "other kernels",
                              format, (unsigned)e,
                              prev ? "an executable" : "none: it is first,");
    }
  }
  if (desc->entry_executable != KILN_NO_EXECUTABLE &&
      (desc->entry_executable >= desc->num_executables ||
       desc->executables[desc->entry_executable].format !=
           KILN_EXECUTABLE_HOST))
    return KILN_MALFORMED(name, "entry executable %u is not a host executable "
                                "(the model has %u executables)",
                          (unsigned)desc->entry_executable,
                          (unsigned)desc->num_executables);
  if (desc->entry_executable == KILN_NO_EXECUTABLE &&
      desc->num_dispatches == 0)
    return KILN_MALFORMED(name, "no entry executable and no dispatches");
  return NULL;
}

static kiln_status kiln_check_binding(const kiln_model_desc *desc,
                                      const char *name, uint32_t d,
                                      const kiln_binding_desc *b) {
  uint32_t limit = b->kind == KILN_BINDING_INPUT    ? desc->num_inputs
                   : b->kind == KILN_BINDING_OUTPUT ? desc->num_outputs
                   : b->kind == KILN_BINDING_MEMORY ? desc->num_memory_needs
                                                    : 0;
  if (b->kind > KILN_BINDING_MEMORY)
    return KILN_MALFORMED(name, "dispatch %u has a binding of unknown kind %u",
                          (unsigned)d, (unsigned)b->kind);
  if (b->index >= limit)
    return KILN_MALFORMED(name, "dispatch %u binds index %u of %u", (unsigned)d,
                          (unsigned)b->index, (unsigned)limit);
  if ((b->flags & ~KILN_BINDING_DYNAMIC_OFFSET) != 0 || b->reserved != 0)
    return KILN_MALFORMED(name, "dispatch %u has a binding with unknown flags",
                          (unsigned)d);
  if ((b->flags & KILN_BINDING_DYNAMIC_OFFSET) &&
      b->offset >= desc->num_dynamic_offsets)
    return KILN_MALFORMED(name, "dispatch %u names dynamic offset %llu of %u",
                          (unsigned)d, (unsigned long long)b->offset,
                          (unsigned)desc->num_dynamic_offsets);
  return NULL;
}

static kiln_status kiln_check_dispatches(const kiln_model_desc *desc,
                                         const char *name) {
  if (desc->num_dispatches > 0 && !desc->dispatches)
    return KILN_MALFORMED(name, "%u dispatches but no dispatch array",
                          (unsigned)desc->num_dispatches);
  for (uint32_t d = 0; d < desc->num_dispatches; ++d) {
    const kiln_dispatch_desc *x = &desc->dispatches[d];
    if (x->executable >= desc->num_executables ||
        desc->executables[x->executable].format == KILN_EXECUTABLE_HOST)
      return KILN_MALFORMED(name, "dispatch %u names executable %u, which is "
                                  "no device executable",
                            (unsigned)d, (unsigned)x->executable);
    if (desc->executables[x->executable].flags & KILN_EXECUTABLE_ALTERNATIVE)
      return KILN_MALFORMED(name,
                            "dispatch %u names executable %u, an "
                            "alternative (dispatches name the first "
                            "build of a group)",
                            (unsigned)d, (unsigned)x->executable);
    if (x->kernel >= desc->executables[x->executable].num_kernels)
      return KILN_MALFORMED(name, "dispatch %u names kernel %u of %u",
                            (unsigned)d, (unsigned)x->kernel,
                            (unsigned)desc->executables[x->executable]
                                .num_kernels);
    if ((x->num_bindings > 0 && !x->bindings) ||
        (x->num_constants > 0 && !x->constants) ||
        (x->num_symbol_constants > 0 && !x->symbol_constants))
      return KILN_MALFORMED(name, "dispatch %u has a count without its array",
                            (unsigned)d);
    for (uint32_t b = 0; b < x->num_bindings; ++b) {
      kiln_status status = kiln_check_binding(desc, name, d, &x->bindings[b]);
      if (status)
        return status;
    }
    for (uint32_t c = 0; c < x->num_symbol_constants; ++c)
      if (x->symbol_constants[c] >= desc->num_symbols)
        return KILN_MALFORMED(name, "dispatch %u pushes symbol %u, but the "
                                    "model has %u symbols",
                              (unsigned)d, (unsigned)x->symbol_constants[c],
                              (unsigned)desc->num_symbols);
  }
  return NULL;
}

static kiln_status kiln_check_memory(const kiln_model_desc *desc,
                                     const char *name) {
  if (desc->num_memory_needs > 0 && !desc->memory_needs)
    return KILN_MALFORMED(name, "%u memory needs but no array",
                          (unsigned)desc->num_memory_needs);
  uint32_t host_scratch = 0, run_status = 0;
  for (uint32_t m = 0; m < desc->num_memory_needs; ++m) {
    const kiln_memory_need *need = &desc->memory_needs[m];
    const char *kind = kiln_memory_kind_name(need->kind);
    if (!kind)
      return KILN_MALFORMED(name, "memory need %u has unknown kind %u",
                            (unsigned)m, (unsigned)need->kind);
    if ((need->flags & ~KILN_MEMORY_RUN_STATUS) != 0)
      return KILN_MALFORMED(name, "memory need %u has unknown flags 0x%x",
                            (unsigned)m, (unsigned)need->flags);
    if (need->flags & KILN_MEMORY_RUN_STATUS) {
      if (need->kind != KILN_MEMORY_DEVICE_LOCAL || need->size < 4 ||
          need->size == KILN_SIZE_UNBOUNDED)
        return KILN_MALFORMED(name,
                              "memory need %u holds the run status but is %s "
                              "memory of %llu bytes; it must be device-local, "
                              "at least 4 bytes",
                              (unsigned)m, kind,
                              (unsigned long long)need->size);
      if (++run_status > 1)
        return KILN_MALFORMED(name, "more than one run-status memory need");
    }
    if (need->alignment == 0 || (need->alignment & (need->alignment - 1)))
      return KILN_MALFORMED(name, "memory need %u has alignment %llu, not a "
                                  "power of two",
                            (unsigned)m, (unsigned long long)need->alignment);
    if (need->size == KILN_SIZE_UNBOUNDED && desc->num_symbols == 0)
      return KILN_MALFORMED(name, "memory need %u has no bound but the model "
                                  "has no symbols",
                            (unsigned)m);
    /* Device-constant memory comes with its bytes (an empty one may have
     * none); no other kind has any. */
    int constant = need->kind == KILN_MEMORY_DEVICE_CONSTANT;
    if ((constant && need->size > 0 && !need->initial_data) ||
        (!constant && need->initial_data))
      return KILN_MALFORMED(name, "memory need %u (%s) %s initial data",
                            (unsigned)m, kind,
                            need->initial_data ? "has" : "lacks");
    if (need->kind == KILN_MEMORY_HOST_SCRATCH && ++host_scratch > 1)
      return KILN_MALFORMED(name, "more than one host-scratch memory need");
  }
  return NULL;
}

/*===----------------------------------------------------------------------===*
 * Device plans (dispatch tables over SPIR-V)
 *===----------------------------------------------------------------------===*/

/* Once every tensor size is known to fit: what each dispatch binds lies
 * inside its buffer, and its launch is sound. Device limits (alignment,
 * ranges, push-constant bytes) are checked when the device is known
 * (gpu/vulkan.c). */
static kiln_status kiln_check_device_binding(const kiln_model_desc *desc,
                                             const char *name, uint32_t d,
                                             const char *kernel, uint32_t slot,
                                             const kiln_binding_desc *b) {
  uint64_t bytes = 0;
  const char *what = "";
  char label[64];
  if (b->flags & KILN_BINDING_DYNAMIC_OFFSET)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s': binding %u of dispatch %u (kernel "
                            "'%s') has a dynamic offset: not supported yet",
                            name, (unsigned)slot, (unsigned)d, kernel);
  if (b->kind == KILN_BINDING_MEMORY) {
    const kiln_memory_need *need = &desc->memory_needs[b->index];
    if (need->kind != KILN_MEMORY_DEVICE_LOCAL &&
        need->kind != KILN_MEMORY_DEVICE_CONSTANT)
      return KILN_MALFORMED(name,
                            "binding %u of dispatch %u (kernel '%s') binds "
                            "memory need %u, of kind %s, which a kernel cannot "
                            "address",
                            (unsigned)slot, (unsigned)d, kernel,
                            (unsigned)b->index, kiln_memory_kind_name(need->kind));
    bytes = need->size;
    snprintf(label, sizeof(label), "memory need %u (%s)", (unsigned)b->index,
             kiln_memory_kind_name(need->kind));
    what = label;
  } else {
    const kiln_tensor_desc *t = b->kind == KILN_BINDING_INPUT
                                    ? &desc->inputs[b->index]
                                    : &desc->outputs[b->index];
    bytes = (uint64_t)kiln_tensor_desc_byte_size(t);
    snprintf(label, sizeof(label), "%s %u",
             b->kind == KILN_BINDING_INPUT ? "input" : "output",
             (unsigned)b->index);
    what = label;
  }
  if (b->offset > bytes || b->size > bytes - b->offset)
    return KILN_MALFORMED(name,
                          "binding %u of dispatch %u (kernel '%s') covers "
                          "bytes [%llu, %llu) of %s, which has %llu bytes",
                          (unsigned)slot, (unsigned)d, kernel,
                          (unsigned long long)b->offset,
                          (unsigned long long)(b->offset + b->size), what,
                          (unsigned long long)bytes);
  if (b->offset % 4 != 0 || b->size % 4 != 0)
    return KILN_MALFORMED(name,
                          "binding %u of dispatch %u (kernel '%s') has offset "
                          "%llu and size %llu; storage buffers need multiples "
                          "of 4",
                          (unsigned)slot, (unsigned)d, kernel,
                          (unsigned long long)b->offset,
                          (unsigned long long)b->size);
  return NULL;
}

/* Every kernel a dispatch names is an entry point of its module, built for
 * the workgroup size the dispatch gives. */
static kiln_status kiln_check_spirv_kernels(const kiln_model_desc *desc,
                                            const char *name, uint32_t e) {
  const kiln_executable_desc *x = &desc->executables[e];
  char error[160];
  uint32_t features = 0;
  if (!x->target || strncmp(x->target, "vulkan", 6) != 0)
    return KILN_MALFORMED(name,
                          "spirv executable %u has target '%s', not a Vulkan "
                          "environment such as 'vulkan1.1'",
                          (unsigned)e, x->target ? x->target : "(null)");
  if (!kiln_spirv_scan(x->data, x->size, &features, error, sizeof(error)))
    return KILN_MALFORMED(name, "spirv executable %u is not a valid module: %s",
                          (unsigned)e, error);
  if (x->num_kernels == 0)
    return NULL;
  kiln_spirv_entry *entries =
      (kiln_spirv_entry *)calloc(x->num_kernels, sizeof(*entries));
  if (!entries)
    return kiln_out_of_memory_status();
  kiln_spirv_find_entries(x->data, x->size, x->num_kernels, x->kernel_names,
                          entries);
  kiln_status status = NULL;
  for (uint32_t d = 0; d < desc->num_dispatches && !status; ++d) {
    const kiln_dispatch_desc *dispatch = &desc->dispatches[d];
    if (dispatch->executable != e)
      continue;
    const kiln_spirv_entry *entry = &entries[dispatch->kernel];
    const char *kernel = x->kernel_names[dispatch->kernel];
    const uint32_t *size = dispatch->workgroup_size;
    if (!entry->found)
      status = KILN_MALFORMED(name,
                              "kernel '%s' (dispatch %u) is no GLCompute entry "
                              "point of spirv executable %u",
                              kernel, (unsigned)d, (unsigned)e);
    else if (entry->has_local_size &&
             (entry->local_size[0] != size[0] ||
              entry->local_size[1] != size[1] ||
              entry->local_size[2] != size[2]))
      status = KILN_MALFORMED(
          name,
          "kernel '%s' (dispatch %u) is built for workgroup size [%u,%u,%u], "
          "but the dispatch says [%u,%u,%u]",
          kernel, (unsigned)d, (unsigned)entry->local_size[0],
          (unsigned)entry->local_size[1], (unsigned)entry->local_size[2],
          (unsigned)size[0], (unsigned)size[1], (unsigned)size[2]);
  }
  free(entries);
  return status;
}

/* A PTX module is NUL-terminated text built for "sm_XY" that defines each
 * kernel as an `.entry`; a cubin is an ELF file for "sm_XY". What the driver
 * checks beyond that it reports when it loads the module. */
static kiln_status kiln_check_cuda_module(const kiln_model_desc *desc,
                                          const char *name, uint32_t e) {
  const kiln_executable_desc *x = &desc->executables[e];
  const char *format = kiln_executable_format_name(x->format);
  const unsigned char *bytes = (const unsigned char *)x->data;
  int arch_specific = 0;
  if (!x->target || !kiln_cuda_parse_sm(x->target, &arch_specific))
    return KILN_MALFORMED(name,
                          "%s executable %u has target '%s', not a CUDA "
                          "architecture such as 'sm_80'",
                          format, (unsigned)e,
                          x->target ? x->target : "(null)");
  if (x->format == KILN_EXECUTABLE_CUBIN) {
    if (x->size < 4 || memcmp(bytes,
                              "\x7f"
                              "ELF",
                              4) != 0)
      return KILN_MALFORMED(name, "cubin executable %u is not an ELF file",
                            (unsigned)e);
    return NULL;
  }
  if (bytes[x->size - 1] != 0 ||
      memchr(bytes, 0, x->size) != bytes + x->size - 1)
    return KILN_MALFORMED(name, "ptx executable %u is not NUL-terminated text",
                          (unsigned)e);
  for (uint32_t k = 0; k < x->num_kernels; ++k) {
    /* ".entry NAME(" (LLVM writes one space; accept any blanks). */
    const char *text = (const char *)bytes;
    const char *kernel = x->kernel_names[k];
    size_t n = strlen(kernel);
    int found = 0;
    for (const char *at = strstr(text, ".entry"); at && !found;
         at = strstr(at + 6, ".entry")) {
      const char *p = at + 6;
      while (*p == ' ' || *p == '\t')
        ++p;
      found = strncmp(p, kernel, n) == 0 &&
              (p[n] == '(' || p[n] == ' ' || p[n] == '\t' || p[n] == '\n');
    }
    if (!found)
      return KILN_MALFORMED(name,
                            "kernel '%s' is no .entry of ptx executable %u",
                            kernel, (unsigned)e);
  }
  return NULL;
}

/* An HSA code object is an ELF file for the AMD GPU (EM_AMDGPU) built for
 * "gfxNNN" whose symbol names include each kernel's descriptor
 * ("NAME.kd"). What the loader checks beyond that it reports when it loads
 * the module. */
static kiln_status kiln_check_hip_module(const kiln_model_desc *desc,
                                         const char *name, uint32_t e) {
  const kiln_executable_desc *x = &desc->executables[e];
  const unsigned char *bytes = (const unsigned char *)x->data;
  if (!x->target || strncmp(x->target, "gfx", 3) != 0 || !x->target[3])
    return KILN_MALFORMED(name,
                          "hsaco executable %u has target '%s', not an AMD "
                          "GPU such as 'gfx90a'",
                          (unsigned)e, x->target ? x->target : "(null)");
  if (x->size < 20 || memcmp(bytes, "\x7f" "ELF", 4) != 0 ||
      (bytes[18] | bytes[19] << 8) != 224 /* EM_AMDGPU */)
    return KILN_MALFORMED(name,
                          "hsaco executable %u is not an AMD GPU ELF file",
                          (unsigned)e);
  for (uint32_t k = 0; k < x->num_kernels; ++k) {
    const char *kernel = x->kernel_names[k];
    size_t n = strlen(kernel);
    int found = 0;
    for (const unsigned char *at = bytes; !found && at + n + 4 <= bytes + x->size;) {
      const unsigned char *hit = (const unsigned char *)memchr(
          at, (unsigned char)kernel[0], (size_t)(bytes + x->size - at));
      if (!hit || hit + n + 4 > bytes + x->size)
        break;
      found = (hit == bytes || hit[-1] == 0) && memcmp(hit, kernel, n) == 0 &&
              memcmp(hit + n, ".kd", 4) == 0;
      at = hit + 1;
    }
    if (!found)
      return KILN_MALFORMED(name,
                            "hsaco executable %u has no kernel descriptor "
                            "'%s.kd'",
                            (unsigned)e, kernel);
  }
  return NULL;
}

static kiln_status kiln_check_device_plan(const kiln_model_desc *desc,
                                          const char *name) {
  for (uint32_t d = 0; d < desc->num_dispatches; ++d) {
    const kiln_dispatch_desc *x = &desc->dispatches[d];
    const char *kernel =
        desc->executables[x->executable].kernel_names[x->kernel];
    const uint32_t *count = x->workgroup_count, *size = x->workgroup_size;
    if (x->workgroup_count_fn)
      return KILN_MALFORMED(name,
                            "dispatch %u (kernel '%s') has a workgroup-count "
                            "function, but the model has no symbols",
                            (unsigned)d, kernel);
    if (!count[0] || !count[1] || !count[2])
      return KILN_MALFORMED(name,
                            "dispatch %u (kernel '%s') has workgroup count "
                            "[%u,%u,%u]; each must be > 0",
                            (unsigned)d, kernel, (unsigned)count[0],
                            (unsigned)count[1], (unsigned)count[2]);
    if (!size[0] || !size[1] || !size[2])
      return KILN_MALFORMED(name,
                            "dispatch %u (kernel '%s') has workgroup size "
                            "[%u,%u,%u]; each must be > 0",
                            (unsigned)d, kernel, (unsigned)size[0],
                            (unsigned)size[1], (unsigned)size[2]);
    if (x->shared_memory_size != 0 &&
        desc->executables[x->executable].format == KILN_EXECUTABLE_SPIRV)
      return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                              "model '%s': dispatch %u (kernel '%s') asks for "
                              "%u bytes of dynamic workgroup memory, which the "
                              "Vulkan back end does not support",
                              name, (unsigned)d, kernel,
                              (unsigned)x->shared_memory_size);
    if (x->num_constants > 1024)
      return KILN_MALFORMED(name,
                            "dispatch %u (kernel '%s') pushes %u constant "
                            "words",
                            (unsigned)d, kernel, (unsigned)x->num_constants);
    for (uint32_t b = 0; b < x->num_bindings; ++b) {
      kiln_status status =
          kiln_check_device_binding(desc, name, d, kernel, b, &x->bindings[b]);
      if (status)
        return status;
    }
  }
  for (uint32_t e = 0; e < desc->num_executables; ++e) {
    uint32_t format = desc->executables[e].format;
    kiln_status status =
        format == KILN_EXECUTABLE_SPIRV
            ? kiln_check_spirv_kernels(desc, name, e)
        : format == KILN_EXECUTABLE_PTX || format == KILN_EXECUTABLE_CUBIN
            ? kiln_check_cuda_module(desc, name, e)
        : format == KILN_EXECUTABLE_HSACO
            ? kiln_check_hip_module(desc, name, e)
            : NULL;
    if (status)
      return status;
  }
  return NULL;
}

const kiln_gpu_backend *kiln_gpu_backend_for(const kiln_model_desc *desc) {
  if (desc->entry_executable != KILN_NO_EXECUTABLE)
    return NULL;
  for (uint32_t e = 0; e < desc->num_executables; ++e) {
    uint32_t format = desc->executables[e].format;
    if (format == KILN_EXECUTABLE_SPIRV)
      return &kiln_vulkan_backend;
    if (format == KILN_EXECUTABLE_PTX || format == KILN_EXECUTABLE_CUBIN)
      return &kiln_cuda_backend;
    if (format == KILN_EXECUTABLE_HSACO)
      return &kiln_hip_backend;
  }
  return NULL;
}

kiln_status kiln_check_descriptor(const kiln_model_desc *desc) {
  /* Only the first two fields may be read before the version matches. */
  if (desc->abi_version != KILN_MODEL_ABI_VERSION)
    return kiln_make_status(
        KILN_STATUS_UNSUPPORTED,
        "model '%s' was built for model ABI version %u, but this runtime "
        "supports version %u; recompile the model with a matching kiln or "
        "link a matching runtime",
        desc->name ? desc->name : "?", (unsigned)desc->abi_version,
        (unsigned)KILN_MODEL_ABI_VERSION);
  const char *name = desc->name ? desc->name : "?";
  if (desc->flags != 0)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' has flags 0x%x, which this runtime "
                            "does not know",
                            name, (unsigned)desc->flags);
  if (desc->num_check_messages > 0 && !desc->check_messages)
    return KILN_MALFORMED(name, "%u check messages but no array",
                          (unsigned)desc->num_check_messages);
  int symbolic = 0;
  kiln_status status = kiln_check_symbols(desc, name);
  if (!status)
    status = kiln_check_tensors(desc, name, "input", desc->inputs,
                                desc->num_inputs, &symbolic);
  if (!status)
    status = kiln_check_tensors(desc, name, "output", desc->outputs,
                                desc->num_outputs, &symbolic);
  if (!status)
    status = kiln_check_executables(desc, name);
  if (!status)
    status = kiln_check_memory(desc, name);
  if (!status)
    status = kiln_check_dispatches(desc, name);
  if (status)
    return status;

  /* Well formed; now what this runtime cannot run yet. */
  int device_model = desc->num_dispatches > 0;
  int spirv = 0, cuda = 0, hip = 0;
  for (uint32_t e = 0; e < desc->num_executables; ++e) {
    const kiln_executable_desc *x = &desc->executables[e];
    if (x->format == KILN_EXECUTABLE_HOST)
      continue;
    if (x->format == KILN_EXECUTABLE_PTX ||
        x->format == KILN_EXECUTABLE_CUBIN) {
      cuda = 1;
      continue;
    }
    if (x->format == KILN_EXECUTABLE_HSACO) {
      hip = 1;
      continue;
    }
    if (x->format != KILN_EXECUTABLE_SPIRV)
      return kiln_make_status(
          KILN_STATUS_UNSUPPORTED,
          "model '%s' has a %s executable (for '%s'): %s executables are not "
          "supported yet by this runtime (its device back ends run spirv on "
          "Vulkan, ptx and cubin on CUDA, hsaco on HIP)",
          name, kiln_executable_format_name(x->format),
          x->target ? x->target : "?", kiln_executable_format_name(x->format));
    spirv = 1;
    if (!kiln_vulkan_built())
      return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                              "model '%s' has a spirv executable (for '%s'), "
                              "but this runtime was built without its Vulkan "
                              "back end (the Vulkan headers were missing)",
                              name, x->target ? x->target : "?");
  }
  if (spirv && cuda)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' has both spirv and ptx/cubin "
                            "executables: one model runs on one device back "
                            "end",
                            name);
  if (hip && (spirv || cuda))
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' has both hsaco and %s executables: "
                            "one model runs on one device back end",
                            name, spirv ? "spirv" : "ptx/cubin");
  if (device_model && desc->entry_executable != KILN_NO_EXECUTABLE)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' has a host entry and %u dispatches: "
                            "host code between device dispatches is not "
                            "supported yet by this runtime",
                            name, (unsigned)desc->num_dispatches);
  /* Symbolic dims run on the host (docs/dynamic-shapes.md): the runtime
   * binds every symbol from the inputs' dims, so each must appear in one. */
  if ((symbolic || desc->num_symbols > 0) && device_model)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' has symbolic dims ('%s') and device "
                            "dispatches: shapes known only at run time are "
                            "not supported yet on a device",
                            name, desc->symbols[0].name);
  for (uint32_t s = 0; s < desc->num_symbols; ++s) {
    int bound = 0;
    for (uint32_t i = 0; i < desc->num_inputs && !bound; ++i)
      for (int32_t d = 0; d < desc->inputs[i].rank && !bound; ++d)
        bound = desc->inputs[i].shape[d] == KILN_DIM_SYMBOL(s);
    /* A run symbol is written by the entry, never bound from an input. */
    if (desc->symbols[s].flags & KILN_SYMBOL_RUN) {
      if (bound)
        return KILN_MALFORMED(name,
                              "run symbol '%s' is in an input's dims (the "
                              "entry decides it during the run)",
                              desc->symbols[s].name);
      continue;
    }
    if (!bound)
      return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                              "model '%s': symbol '%s' is in no input's dims; "
                              "symbols computed by the shape function are not "
                              "supported yet by this runtime",
                              name, desc->symbols[s].name);
  }
  for (uint32_t m = 0; m < desc->num_memory_needs; ++m) {
    uint32_t kind = desc->memory_needs[m].kind;
    if (kind == KILN_MEMORY_HOST_SCRATCH ||
        (device_model && (kind == KILN_MEMORY_DEVICE_LOCAL ||
                          kind == KILN_MEMORY_DEVICE_CONSTANT)))
      continue;
    return kiln_make_status(
        KILN_STATUS_UNSUPPORTED,
        device_model ? "model '%s' needs %s memory: not supported yet by this "
                       "runtime's device back end"
                     : "model '%s' needs %s memory, but has no dispatches "
                       "that could use it",
        name, kiln_memory_kind_name(kind));
  }
  status = kiln_check_tensor_sizes(name, "input", desc->inputs,
                                   desc->num_inputs);
  if (!status)
    status = kiln_check_tensor_sizes(name, "output", desc->outputs,
                                     desc->num_outputs);
  if (!status && device_model)
    status = kiln_check_device_plan(desc, name);
  if (status)
    return status;
  const kiln_memory_need *scratch = kiln_host_scratch_need(desc);
  if (scratch && (scratch->size > (uint64_t)SIZE_MAX - KILN_HUGE_PAGE ||
                  scratch->alignment > KILN_HUGE_PAGE))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "model '%s' needs %llu bytes of scratch aligned to "
                            "%llu, more than this platform can give",
                            name, (unsigned long long)scratch->size,
                            (unsigned long long)scratch->alignment);
  status = kiln_cpu_check_features(desc->cpu_features);
  if (status) {
    kiln_status wrapped = kiln_make_status(
        kiln_status_code(status),
        "cannot run model '%s' (compiled for cpu '%s'): %s", name,
        desc->cpu && desc->cpu[0] ? desc->cpu : "generic",
        kiln_status_message(status));
    kiln_status_free(status);
    return wrapped;
  }
  return NULL;
}

const kiln_memory_need *kiln_host_scratch_need(const kiln_model_desc *desc) {
  for (uint32_t m = 0; m < desc->num_memory_needs; ++m)
    if (desc->memory_needs[m].kind == KILN_MEMORY_HOST_SCRATCH)
      return &desc->memory_needs[m];
  return NULL;
}
