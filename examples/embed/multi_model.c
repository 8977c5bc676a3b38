/* multi_model: several models in one program. kiln_add_model() adds
 *   cls_a, cls_b  the classifier, twice under two names
 *   reg           the regressor (two outputs)
 * Every symbol of a model carries its name, so they link side by side.
 *
 *   multi_model DIR
 * For each model M and input i it reads DIR/M.in<i>.bin (raw, C order, this machine's
 * byte order) and writes each output j to DIR/M.out<j>.bin. It also calls reg_main()
 * directly, without the runtime, and checks that it agrees with kiln_model_run(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cls_a.h"
#include "cls_b.h"
#include "reg.h"
#include "kiln/runtime.h"

static int report(const char *model, const char *what, kiln_status status) {
  fprintf(stderr, "multi_model: %s: %s: %s\n", model, what, kiln_status_message(status));
  kiln_status_free(status);
  return 1;
}

static void *read_file(const char *path, size_t size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return NULL;
  }
  void *data = malloc(size ? size : 1);
  size_t got = data ? fread(data, 1, size, f) : 0;
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (!data || got != size || extra) {
    fprintf(stderr, "multi_model: %s: expected %zu bytes\n", path, size);
    free(data);
    return NULL;
  }
  return data;
}

static int write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
    perror(path);
    return 1;
  }
  return 0;
}

/* Runs one model on DIR/<name>.in<i>.bin through the runtime; returns 0 on success.
 * The outputs stay in `outputs` (runtime-allocated; the caller frees them). */
static int run_model(const kiln_model_desc *desc, const char *dir, kiln_tensor *outputs,
                     size_t max_outputs) {
  kiln_model *model = NULL;
  kiln_status status = kiln_model_open_descriptor(desc, NULL, &model);
  if (status)
    return report(desc->name, "cannot open", status);
  size_t n_in = kiln_model_num_inputs(model), n_out = kiln_model_num_outputs(model);
  kiln_tensor inputs[8];
  int rc = 1;
  if (n_in > 8 || n_out > max_outputs) {
    fprintf(stderr, "multi_model: %s: too many inputs or outputs\n", desc->name);
    kiln_model_close(model);
    return 1;
  }
  memset(inputs, 0, sizeof inputs);
  for (size_t i = 0; i < n_in; ++i) {
    kiln_tensor_info info;
    kiln_model_input_info(model, i, &info);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.in%zu.bin", dir, desc->name, i);
    size_t bytes = kiln_tensor_info_byte_size(&info);
    inputs[i] = (kiln_tensor){info.name, info.dtype, info.rank, info.shape, NULL, bytes};
    if (!(inputs[i].data = read_file(path, bytes)))
      goto done;
  }
  for (size_t j = 0; j < n_out; ++j) {
    kiln_tensor_info info;
    kiln_model_output_info(model, j, &info);
    outputs[j] = (kiln_tensor){info.name, 0, 0, NULL, NULL, 0}; /* runtime-allocated */
  }
  status = kiln_model_run(model, inputs, n_in, outputs, n_out);
  if (status) {
    report(desc->name, "run failed", status);
    goto done;
  }
  rc = 0;
  for (size_t j = 0; j < n_out && rc == 0; ++j) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.out%zu.bin", dir, desc->name, j);
    rc = write_file(path, outputs[j].data, outputs[j].byte_size);
  }
done:
  for (size_t i = 0; i < n_in; ++i)
    free(inputs[i].data);
  kiln_model_close(model);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: multi_model DIR\n");
    return 2;
  }
  const kiln_model_desc *models[] = {cls_a_descriptor(), cls_b_descriptor(), reg_descriptor()};
  const char *names[] = {"cls_a", "cls_b", "reg"};
  kiln_tensor outputs[3][4];
  memset(outputs, 0, sizeof outputs);
  int rc = 0;
  for (int m = 0; m < 3 && rc == 0; ++m) {
    if (strcmp(models[m]->name, names[m]) != 0) {
      fprintf(stderr, "multi_model: descriptor %d is named '%s', expected '%s'\n", m,
              models[m]->name, names[m]);
      return 1;
    }
    rc = run_model(models[m], argv[1], outputs[m], 4);
  }

  /* The same graph through its raw entry point, sized by the header's constants. */
  if (rc == 0) {
    static REG_INPUT0_CTYPE features[REG_INPUT0_ELEMENTS];
    static REG_OUTPUT0_CTYPE hidden[REG_OUTPUT0_ELEMENTS];
    static REG_OUTPUT1_CTYPE score[REG_OUTPUT1_ELEMENTS];
    char path[4096];
    snprintf(path, sizeof path, "%s/reg.in0.bin", argv[1]);
    void *data = read_file(path, REG_INPUT0_BYTES);
    if (!data)
      return 1;
    memcpy(features, data, REG_INPUT0_BYTES);
    free(data);
    int32_t check = -1;
    reg_main(features, hidden, score, &check);
    if (check != 0 || memcmp(hidden, outputs[2][0].data, REG_OUTPUT0_BYTES) != 0 ||
        memcmp(score, outputs[2][1].data, REG_OUTPUT1_BYTES) != 0) {
      fprintf(stderr, "multi_model: reg_main() (status %d) disagrees with kiln_model_run()\n",
              (int)check);
      rc = 1;
    }
  }
  for (int m = 0; m < 3; ++m)
    for (int j = 0; j < 4; ++j)
      kiln_tensor_free_data(&outputs[m][j]);
  if (rc == 0)
    printf("ran %s, %s and %s\n", names[0], names[1], names[2]);
  return rc;
}
