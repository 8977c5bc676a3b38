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
