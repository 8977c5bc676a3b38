// Accuracy of kiln's exp / erf / tanh / log / sigmoid (kiln-approximate-math) against
// double-precision libm over every STEP-th f32 bit pattern (both signs, NaNs,
// infinities and subnormals included). Build and run (from the repo root):
//   .venv/bin/python bench/approx_accuracy.py        (model, compile, run)
// or by hand: approx_accuracy MODEL.so [STEP], MODEL with one input x[2^22]
// and outputs Exp(x), Erf(x), Tanh(x), Log(x), Sigmoid(x) in that order.
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kiln/model_abi.h"
#define N (1 << 22)
static float bits2f(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static double ulp(double r) { float f = (float)fabs(r); if (f < 1.17549435e-38f) f = 1.17549435e-38f; if (isinf(f)) f = 3.4028235e38f; return (double)nextafterf(f, INFINITY) - f; }
int main(int argc, char **argv) {
  uint32_t step = argc > 2 ? atoi(argv[2]) : 16;
  void *h = dlopen(argv[1], RTLD_NOW); if (!h) { puts(dlerror()); return 1; }
  const kiln_model_desc *d = ((kiln_descriptor_fn)dlsym(h, KILN_DESCRIPTOR_SYMBOL))();
  float *x = malloc(N * 4), *o[5]; for (int i = 0; i < 5; ++i) o[i] = malloc(N * 4);
  if (d->abi_version != KILN_MODEL_ABI_VERSION) { printf("model ABI version %u, expected %u\n", d->abi_version, KILN_MODEL_ABI_VERSION); return 1; }
  kiln_entry_fn entry = d->executables[d->entry_executable].entry;
  uint64_t scratch_size = 0;
  for (uint32_t m = 0; m < d->num_memory_needs; ++m)
    if (d->memory_needs[m].kind == KILN_MEMORY_HOST_SCRATCH) scratch_size = d->memory_needs[m].size;
  void *scratch = aligned_alloc(64, (scratch_size + 64) / 64 * 64);
  const char *names[5] = {"exp", "erf", "tanh", "log", "sigmoid"};
  double maxulp[5] = {0}, maxrel[5] = {0}, worstx[5] = {0}, flushabs[5] = {0};
  long special_bad[5] = {0};
  uint64_t total = 0x100000000ull / step;
  for (uint64_t start = 0; start < total; start += N) {
    size_t n = total - start < N ? total - start : N;
    for (size_t i = 0; i < N; ++i) x[i] = bits2f((uint32_t)(((start + (i < n ? i : 0)) * step) + (step > 1 ? 7 : 0)));
    void *ins[1] = {x}; void *outs[5] = {o[0], o[1], o[2], o[3], o[4]};
    entry(ins, outs, scratch, NULL);
    for (size_t i = 0; i < n; ++i) {
      double xi = x[i];
      double ref[5] = {exp(xi), erf(xi), tanh(xi), log(xi), 1 / (1 + exp(-xi))};
      for (int k = 0; k < 5; ++k) {
        double y = o[k][i], r = ref[k];
        if (isnan(r) || isinf(r) || isnan(xi)) {
          float rf = (float)r;
          if (!((isnan(rf) && isnan(y)) || rf == y)) {
            if (special_bad[k]++ < 3) printf("%s special x=%g ref=%g got=%g\n", names[k], xi, r, y);
          }
          continue;
        }
        if ((float)r == 0 || fabs(r) < 1.17549435e-38) { if (fabs(y - r) > flushabs[k]) flushabs[k] = fabs(y - r); continue; }
        if (isinf((float)r)) { if (!isinf(y) && special_bad[k]++ < 3) printf("%s overflow x=%g got %g\n", names[k], xi, y); continue; }
        double e = fabs(y - r) / ulp(r), rel = fabs(y - r) / fabs(r);
        if (e > maxulp[k]) { maxulp[k] = e; worstx[k] = xi; }
        if (rel > maxrel[k]) maxrel[k] = rel;
      }
    }
  }
  for (int k = 0; k < 5; ++k)
    printf("%-5s max %.2f ulp (x=%.9g), max rel %.3g, max abs where |ref| < FLT_MIN %.3g, special mismatches %ld\n",
           names[k], maxulp[k], worstx[k], maxrel[k], flushabs[k], special_bad[k]);
  return 0;
}
