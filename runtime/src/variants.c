/*===- runtime/src/variants.c - Picking a variant of a multi-variant artifact ===*
 *
 * An artifact compiled for several CPUs carries a kiln_artifact_desc
 * (model_abi.h) listing one model descriptor per variant, most capable first.
 * The variant opened is the one options.cpu_variant names, else the one
 * KILN_CPU names, else the first whose CPU features this machine has.
 *===----------------------------------------------------------------------===*/
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int kiln_is_cpu_variant(const kiln_variant_desc *v) {
  return strcmp(v->device, "cpu") == 0;
}

kiln_status kiln_check_artifact_table(const kiln_artifact_desc *artifact) {
  if (!artifact)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "the artifact descriptor is NULL");
  if (artifact->abi_version != KILN_ARTIFACT_ABI_VERSION)
    return kiln_make_status(KILN_STATUS_UNSUPPORTED,
                            "model '%s' has a variant table of version %u; "
                            "this runtime reads version %d (rebuild the model "
                            "with this kiln, or update the runtime)",
                            artifact->name ? artifact->name : "?",
                            (unsigned)artifact->abi_version,
                            KILN_ARTIFACT_ABI_VERSION);
  const char *name = artifact->name ? artifact->name : "?";
  if (artifact->num_variants == 0 || !artifact->variants)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "model '%s': its variant table is empty", name);
  for (uint32_t i = 0; i < artifact->num_variants; ++i) {
    const kiln_variant_desc *v = &artifact->variants[i];
    if (!v->device || !v->name || !v->cpu_features || !v->descriptor)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "model '%s': variant %u of its table lacks its "
                              "device, name, cpu_features or descriptor",
                              name, (unsigned)i);
  }
  return NULL;
}

/* The list of variant names, for messages: "x86-64-v4, x86-64-v3". */
static void kiln_append_variant_names(kiln_strbuf *buf,
                                      const kiln_artifact_desc *artifact) {
  for (uint32_t i = 0; i < artifact->num_variants; ++i)
    kiln_strbuf_appendf(buf, "%s%s", i ? ", " : "",
                        artifact->variants[i].name);
}

kiln_status kiln_artifact_pick(const kiln_artifact_desc *artifact,
                               const char *requested, uint32_t *out_index) {
  kiln_status status = kiln_check_artifact_table(artifact);
  if (status)
    return status;
  const char *name = artifact->name ? artifact->name : "?";
  const char *source = "options.cpu_variant";
  if (!requested || !*requested) {
    requested = getenv("KILN_CPU");
    source = "KILN_CPU";
  }
  if (requested && *requested) {
    for (uint32_t i = 0; i < artifact->num_variants; ++i) {
      const kiln_variant_desc *v = &artifact->variants[i];
      if (!kiln_is_cpu_variant(v) || strcmp(v->name, requested) != 0)
        continue;
      status = kiln_cpu_check_features(v->cpu_features);
      if (status) {
        kiln_status wrapped = kiln_make_status(
            kiln_status_code(status),
            "cannot run variant '%s' of model '%s' (chosen by %s): %s",
            requested, name, source, kiln_status_message(status));
        kiln_status_free(status);
        return wrapped;
      }
      *out_index = i;
      return NULL;
    }
    kiln_strbuf buf = {0};
    kiln_strbuf_appendf(&buf, "model '%s' has no CPU variant '%s' (chosen by "
                              "%s); its variants: ",
                        name, requested, source);
    kiln_append_variant_names(&buf, artifact);
    return kiln_strbuf_to_status(&buf, KILN_STATUS_INVALID_ARGUMENT);
  }
  kiln_strbuf why = {0};
  for (uint32_t i = 0; i < artifact->num_variants; ++i) {
    const kiln_variant_desc *v = &artifact->variants[i];
    if (!kiln_is_cpu_variant(v)) /* device variants: not routed here yet */
      continue;
    status = kiln_cpu_check_features(v->cpu_features);
    if (!status) {
      kiln_strbuf_free(&why);
      *out_index = i;
      return NULL;
    }
    kiln_strbuf_appendf(&why, "%s%s: %s", why.data ? "; " : "", v->name,
                        kiln_status_message(status));
    kiln_status_free(status);
  }
  kiln_strbuf buf = {0};
  kiln_strbuf_appendf(&buf, "no variant of model '%s' runs on this CPU (%s)",
                      name, why.data ? why.data : "it has no CPU variant");
  kiln_strbuf_free(&why);
  return kiln_strbuf_to_status(&buf, KILN_STATUS_UNSUPPORTED);
}

const kiln_model_desc *
kiln_artifact_default_model(const kiln_artifact_desc *artifact) {
  uint32_t index = 0;
  kiln_status status = kiln_artifact_pick(artifact, NULL, &index);
  if (!status)
    return artifact->variants[index].descriptor();
  kiln_status_free(status);
  status = kiln_check_artifact_table(artifact);
  if (status) {
    kiln_status_free(status);
    return NULL;
  }
  return artifact->variants[artifact->num_variants - 1].descriptor();
}

/*===----------------------------------------------------------------------===*
 * The device option: one device, a list tried in order, or auto
 *===----------------------------------------------------------------------===*/

/* One item "cpu", "vulkan[:SEL]", "cuda[:SEL]" or "hip[:SEL]" of `len` bytes: its kind
 * (static) and the offset of SEL (0 when none); NULL when it is no device. */
static const char *kiln_device_kind(const char *item, size_t len,
                                    size_t *selector_at) {
  static const char *const kinds[] = {"cpu", "vulkan", "cuda", "hip"};
  *selector_at = 0;
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); ++i) {
    size_t n = strlen(kinds[i]);
    if (len < n || strncmp(item, kinds[i], n) != 0)
      continue;
    if (len == n)
      return kinds[i];
    /* The CPU takes no selector; a device's must not be empty. */
    if (i == 0 || item[n] != ':' || len == n + 1)
      return NULL;
    *selector_at = n + 1;
    return kinds[i];
  }
  return NULL;
}

kiln_status kiln_device_request_resolve(const char *option,
                                        kiln_device_request *out) {
  memset(out, 0, sizeof(*out));
  out->list = option;
  out->source = "options.device";
  if (!option || !*option || strcmp(option, "auto") == 0) {
    const char *env = getenv("KILN_DEVICE");
    if (env && *env && strcmp(env, "auto") != 0) {
      out->list = env;
      out->source = "KILN_DEVICE";
    } else {
      out->list = KILN_DEVICE_AUTO_ORDER;
      out->source = "auto";
    }
  }
  if (strcmp(out->list, "none") == 0) {
    out->none = 1;
    return NULL;
  }
  size_t items = 0;
  for (const char *p = out->list;; ++items) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p), at;
    if (len >= KILN_DEVICE_ITEM_MAX || !kiln_device_kind(p, len, &at))
      return kiln_make_status(
          KILN_STATUS_INVALID_ARGUMENT,
          "%s is '%s'; expected 'auto', 'cpu', 'vulkan', 'vulkan:DEVICE', "
          "'cuda', 'cuda:DEVICE', 'hip', 'hip:DEVICE', 'none' or a "
          "comma-separated list of devices to try in order ('vulkan,cpu')",
          out->source, out->list);
    if (!end)
      break;
    p = end + 1;
  }
  out->fallback = items > 0;
  return NULL;
}

int kiln_device_request_next(const char **cursor, char *item,
                             const char **kind, const char **selector) {
  if (!*cursor)
    return 0;
  const char *p = *cursor, *end = strchr(p, ',');
  size_t len = end ? (size_t)(end - p) : strlen(p), at = 0;
  if (len >= KILN_DEVICE_ITEM_MAX)
    len = KILN_DEVICE_ITEM_MAX - 1; /* resolve() refused it */
  memcpy(item, p, len);
  item[len] = '\0';
  *cursor = end ? end + 1 : NULL;
  *kind = kiln_device_kind(item, len, &at);
  *selector = at ? item + at : NULL;
  return *kind != NULL;
}

int64_t kiln_artifact_find_device(const kiln_artifact_desc *artifact,
                                  const char *device) {
  for (uint32_t i = 0; i < artifact->num_variants; ++i)
    if (strcmp(artifact->variants[i].device, device) == 0)
      return (int64_t)i;
  return -1;
}

void kiln_artifact_append_devices(kiln_strbuf *buf,
                                  const kiln_artifact_desc *artifact) {
  int first = 1;
  for (uint32_t i = 0; i < artifact->num_variants; ++i) {
    const char *device = artifact->variants[i].device;
    if (kiln_artifact_find_device(artifact, device) != (int64_t)i)
      continue; /* listed with its first variant */
    kiln_strbuf_appendf(buf, "%s%s", first ? "" : ", ", device);
    first = 0;
    if (strcmp(device, "cpu") != 0)
      continue;
    kiln_strbuf_appendf(buf, " (");
    for (uint32_t j = 0, n = 0; j < artifact->num_variants; ++j)
      if (kiln_is_cpu_variant(&artifact->variants[j]))
        kiln_strbuf_appendf(buf, "%s%s", n++ ? ", " : "",
                            artifact->variants[j].name);
    kiln_strbuf_appendf(buf, ")");
  }
}
