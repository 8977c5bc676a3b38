/*===- runtime/src/cpu.c - CPU feature checks ------------------------------===*
 *
 * x86: cpuid + xgetbv. Feature names are LLVM's (what `-mattr` / a target's
 * feature string spells), so the compiler can copy them from its target
 * machine. AVX needs the OS to save YMM state (XCR0 bits 1-2), AVX-512 also
 * opmask/ZMM state (bits 5-7), AMX tile state (bits 17-18).
 * AArch64 Linux/Android: getauxval(AT_HWCAP / AT_HWCAP2), the features the
 * kernel says user space may use, under LLVM's names (dotprod, fullfp16,
 * i8mm, ...). Other systems and architectures: no check yet; every feature is
 * accepted.
 *
 * KILN_CPU_DISABLE=f1,f2,... makes the named features count as missing (a
 * trailing '*' matches a prefix: "avx512*"): what a test needs to see the
 * choice a machine without them would make (docs/runtime-api.md).
 *===----------------------------------------------------------------------===*/
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define KILN_X86 1
/* glibc >= 2.33 exposes the cpuid leaves its dynamic loader read at process
 * start: reading them costs nothing, where each cpuid instruction in a
 * virtual machine traps to the hypervisor (7 of them were ~3% of a whole
 * `kiln-run --inspect` process). */
#if defined(__GLIBC__) &&                                                      \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)) &&            \
    defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#define KILN_GLIBC_CPUID 1
#endif
#endif
#endif

#if defined(__aarch64__) && (defined(__linux__) || defined(__ANDROID__))
#include <sys/auxv.h>
#define KILN_AARCH64_HWCAP 1
#endif

/* 1 when KILN_CPU_DISABLE names the `len` bytes at `name`. */
static int kiln_cpu_feature_disabled(const char *name, size_t len) {
  const char *p = getenv("KILN_CPU_DISABLE");
  if (!p)
    return 0;
  while (*p) {
    while (*p == ',' || isspace((unsigned char)*p))
      ++p;
    const char *start = p;
    while (*p && *p != ',')
      ++p;
    const char *end = p;
    while (end > start && isspace((unsigned char)end[-1]))
      --end;
    size_t n = (size_t)(end - start);
    if (n == 0)
      continue;
    if (start[n - 1] == '*') {
      if (n - 1 <= len && strncmp(start, name, n - 1) == 0)
        return 1;
    } else if (n == len && strncmp(start, name, len) == 0) {
      return 1;
    }
  }
  return 0;
}

#ifdef KILN_X86

enum { R_EAX, R_EBX, R_ECX, R_EDX };
enum {
  L1,        /* leaf 1 */
  L7,        /* leaf 7 subleaf 0 */
  L7_1,      /* leaf 7 subleaf 1 */
  LE1,       /* leaf 0x80000001 */
  LD_1,      /* leaf 0xD subleaf 1 */
  NUM_LEAVES
};
/* Which OS-enabled register state a feature needs. */
enum { OS_NONE = 0, OS_AVX = 1, OS_AVX512 = 2, OS_AMX = 4 };

typedef struct kiln_x86_feature {
  const char *name;
  uint8_t leaf, reg, bit, os;
} kiln_x86_feature;

static const kiln_x86_feature kiln_x86_features[] = {
    /* leaf 1 */
    {"sse3", L1, R_ECX, 0, OS_NONE},
    {"pclmul", L1, R_ECX, 1, OS_NONE},
    {"ssse3", L1, R_ECX, 9, OS_NONE},
    {"fma", L1, R_ECX, 12, OS_AVX},
    {"cx16", L1, R_ECX, 13, OS_NONE},
    {"sse4.1", L1, R_ECX, 19, OS_NONE},
    {"sse4.2", L1, R_ECX, 20, OS_NONE},
    {"crc32", L1, R_ECX, 20, OS_NONE},
    {"movbe", L1, R_ECX, 22, OS_NONE},
    {"popcnt", L1, R_ECX, 23, OS_NONE},
    {"aes", L1, R_ECX, 25, OS_NONE},
    {"xsave", L1, R_ECX, 26, OS_NONE},
    {"avx", L1, R_ECX, 28, OS_AVX},
    {"f16c", L1, R_ECX, 29, OS_AVX},
    {"rdrnd", L1, R_ECX, 30, OS_NONE},
    {"cx8", L1, R_EDX, 8, OS_NONE},
    {"cmov", L1, R_EDX, 15, OS_NONE},
    {"mmx", L1, R_EDX, 23, OS_NONE},
    {"fxsr", L1, R_EDX, 24, OS_NONE},
    {"sse", L1, R_EDX, 25, OS_NONE},
    {"sse2", L1, R_EDX, 26, OS_NONE},
    /* leaf 7 subleaf 0 */
    {"fsgsbase", L7, R_EBX, 0, OS_NONE},
    {"bmi", L7, R_EBX, 3, OS_NONE},
    {"avx2", L7, R_EBX, 5, OS_AVX},
    {"bmi2", L7, R_EBX, 8, OS_NONE},
    {"invpcid", L7, R_EBX, 10, OS_NONE},
    {"avx512f", L7, R_EBX, 16, OS_AVX512},
    {"evex512", L7, R_EBX, 16, OS_AVX512}, /* LLVM 18+: 512-bit EVEX */
    {"avx512dq", L7, R_EBX, 17, OS_AVX512},
    {"rdseed", L7, R_EBX, 18, OS_NONE},
    {"adx", L7, R_EBX, 19, OS_NONE},
    {"avx512ifma", L7, R_EBX, 21, OS_AVX512},
    {"clflushopt", L7, R_EBX, 23, OS_NONE},
    {"clwb", L7, R_EBX, 24, OS_NONE},
    {"avx512cd", L7, R_EBX, 28, OS_AVX512},
    {"sha", L7, R_EBX, 29, OS_NONE},
    {"avx512bw", L7, R_EBX, 30, OS_AVX512},
    {"avx512vl", L7, R_EBX, 31, OS_AVX512},
    {"prefetchwt1", L7, R_ECX, 0, OS_NONE},
    {"avx512vbmi", L7, R_ECX, 1, OS_AVX512},
    {"pku", L7, R_ECX, 3, OS_NONE},
    {"waitpkg", L7, R_ECX, 5, OS_NONE},
    {"avx512vbmi2", L7, R_ECX, 6, OS_AVX512},
    {"shstk", L7, R_ECX, 7, OS_NONE},
    {"gfni", L7, R_ECX, 8, OS_NONE},
    {"vaes", L7, R_ECX, 9, OS_AVX},
    {"vpclmulqdq", L7, R_ECX, 10, OS_AVX},
    {"avx512vnni", L7, R_ECX, 11, OS_AVX512},
    {"avx512bitalg", L7, R_ECX, 12, OS_AVX512},
    {"avx512vpopcntdq", L7, R_ECX, 14, OS_AVX512},
    {"rdpid", L7, R_ECX, 22, OS_NONE},
    {"movdiri", L7, R_ECX, 27, OS_NONE},
    {"movdir64b", L7, R_ECX, 28, OS_NONE},
    {"avx512vp2intersect", L7, R_EDX, 8, OS_AVX512},
    {"serialize", L7, R_EDX, 14, OS_NONE},
    {"tsxldtrk", L7, R_EDX, 16, OS_NONE},
    {"amx-bf16", L7, R_EDX, 22, OS_AMX},
    {"avx512fp16", L7, R_EDX, 23, OS_AVX512},
    {"amx-tile", L7, R_EDX, 24, OS_AMX},
    {"amx-int8", L7, R_EDX, 25, OS_AMX},
    /* leaf 7 subleaf 1 */
    {"avxvnni", L7_1, R_EAX, 4, OS_AVX},
    {"avx512bf16", L7_1, R_EAX, 5, OS_AVX512},
    {"amx-fp16", L7_1, R_EAX, 21, OS_AMX},
    {"avxifma", L7_1, R_EAX, 23, OS_AVX},
    {"avxvnniint8", L7_1, R_EDX, 4, OS_AVX},
    {"avxneconvert", L7_1, R_EDX, 5, OS_AVX},
    {"avxvnniint16", L7_1, R_EDX, 10, OS_AVX},
    /* leaf 0x80000001 */
    {"sahf", LE1, R_ECX, 0, OS_NONE},
    {"lzcnt", LE1, R_ECX, 5, OS_NONE},
    {"sse4a", LE1, R_ECX, 6, OS_NONE},
    {"prfchw", LE1, R_ECX, 8, OS_NONE},
    {"xop", LE1, R_ECX, 11, OS_AVX},
    {"fma4", LE1, R_ECX, 16, OS_AVX},
    {"tbm", LE1, R_ECX, 21, OS_NONE},
    {"64bit", LE1, R_EDX, 29, OS_NONE},
    /* leaf 0xD subleaf 1 */
    {"xsaveopt", LD_1, R_EAX, 0, OS_NONE},
    {"xsavec", LD_1, R_EAX, 1, OS_NONE},
    {"xsaves", LD_1, R_EAX, 3, OS_NONE},
};

typedef struct kiln_x86_cpu {
  uint32_t regs[NUM_LEAVES][4];
  unsigned os; /* OS_* bits the OS enabled */
} kiln_x86_cpu;

static uint64_t kiln_xgetbv0(void) {
  uint32_t eax, edx;
  __asm__ __volatile__("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((uint64_t)edx << 32) | eax;
}

#ifdef KILN_GLIBC_CPUID
static void kiln_x86_cpuid_leaves(kiln_x86_cpu *cpu) {
  static const struct {
    int ours;
    unsigned glibc;
  } leaves[] = {{L1, CPUID_INDEX_1},
                {L7, CPUID_INDEX_7},
                {L7_1, CPUID_INDEX_7_ECX_1},
                {LE1, CPUID_INDEX_80000001},
                {LD_1, CPUID_INDEX_D_ECX_1}};
  for (size_t i = 0; i < sizeof(leaves) / sizeof(*leaves); ++i) {
    /* Raw registers (not glibc's "active" view, which tunables may mask);
     * zero where the CPU lacks the leaf, as the cpuid path below leaves them. */
    const struct cpuid_feature *f = __x86_get_cpuid_feature_leaf(leaves[i].glibc);
    if (f)
      memcpy(cpu->regs[leaves[i].ours], f->cpuid_array, sizeof(cpu->regs[0]));
  }
}
#else
static void kiln_x86_cpuid_leaves(kiln_x86_cpu *cpu) {
  unsigned max_leaf = __get_cpuid_max(0, NULL);
  unsigned max_ext = __get_cpuid_max(0x80000000u, NULL);
  uint32_t *r;
  if (max_leaf >= 1) {
    r = cpu->regs[L1];
    __cpuid_count(1, 0, r[0], r[1], r[2], r[3]);
  }
  if (max_leaf >= 7) {
    r = cpu->regs[L7];
    __cpuid_count(7, 0, r[0], r[1], r[2], r[3]);
    if (r[R_EAX] >= 1) {
      uint32_t *r1 = cpu->regs[L7_1];
      __cpuid_count(7, 1, r1[0], r1[1], r1[2], r1[3]);
    }
  }
  if (max_leaf >= 0xD) {
    r = cpu->regs[LD_1];
    __cpuid_count(0xD, 1, r[0], r[1], r[2], r[3]);
  }
  if (max_ext >= 0x80000001u) {
    r = cpu->regs[LE1];
    __cpuid_count(0x80000001u, 0, r[0], r[1], r[2], r[3]);
  }
}
#endif

static void kiln_x86_cpu_read(kiln_x86_cpu *cpu) {
  memset(cpu, 0, sizeof(*cpu));
  kiln_x86_cpuid_leaves(cpu);
  /* OSXSAVE (leaf 1 ecx bit 27) says xgetbv is usable. */
  if (cpu->regs[L1][R_ECX] & (1u << 27)) {
    uint64_t xcr0 = kiln_xgetbv0();
    if ((xcr0 & 0x6) == 0x6)
      cpu->os |= OS_AVX;
    if ((cpu->os & OS_AVX) && (xcr0 & 0xE0) == 0xE0)
      cpu->os |= OS_AVX512;
    if ((xcr0 & 0x60000) == 0x60000)
      cpu->os |= OS_AMX;
  }
}

/* 1 available, 0 missing, -1 unknown name. `name` is `len` bytes. */
static int kiln_x86_has(const kiln_x86_cpu *cpu, const char *name,
                        size_t len) {
  for (size_t i = 0; i < sizeof(kiln_x86_features) / sizeof(*kiln_x86_features);
       ++i) {
    const kiln_x86_feature *f = &kiln_x86_features[i];
    if (strlen(f->name) != len || strncmp(f->name, name, len) != 0)
      continue;
    if (kiln_cpu_feature_disabled(name, len))
      return 0;
    if (!(cpu->regs[f->leaf][f->reg] & (1u << f->bit)))
      return 0;
    return (cpu->os & f->os) == f->os ? 1 : 0;
  }
  return -1;
}

#endif /* KILN_X86 */

#ifdef KILN_AARCH64_HWCAP

/* Linux's arch/arm64/include/uapi/asm/hwcap.h bits; a feature needs every
 * bit of its mask (fullfp16: scalar and vector half precision). */
typedef struct kiln_a64_feature {
  const char *name;
  uint8_t hwcap2; /* 0: AT_HWCAP, 1: AT_HWCAP2 */
  uint64_t mask;
} kiln_a64_feature;

#define KILN_BIT(n) ((uint64_t)1 << (n))
static const kiln_a64_feature kiln_a64_features[] = {
    {"fp-armv8", 0, KILN_BIT(0)},
    {"neon", 0, KILN_BIT(1)},
    {"aes", 0, KILN_BIT(3) | KILN_BIT(4)}, /* AES + PMULL */
    {"sha2", 0, KILN_BIT(6)},
    {"crc", 0, KILN_BIT(7)},
    {"lse", 0, KILN_BIT(8)}, /* ATOMICS */
    {"fullfp16", 0, KILN_BIT(9) | KILN_BIT(10)}, /* FPHP + ASIMDHP */
    {"rdm", 0, KILN_BIT(12)},
    {"jsconv", 0, KILN_BIT(13)},
    {"complxnum", 0, KILN_BIT(14)}, /* FCMA */
    {"rcpc", 0, KILN_BIT(15)},
    {"sha3", 0, KILN_BIT(17)},
    {"sm4", 0, KILN_BIT(18) | KILN_BIT(19)}, /* SM3 + SM4 */
    {"dotprod", 0, KILN_BIT(20)},
    {"sve", 0, KILN_BIT(22)},
    {"fp16fml", 0, KILN_BIT(23)},
    {"flagm", 0, KILN_BIT(27)},
    {"sb", 0, KILN_BIT(29)},
    {"sve2", 1, KILN_BIT(1)},
    {"fptoint", 1, KILN_BIT(8)}, /* FRINT */
    {"i8mm", 1, KILN_BIT(13)},
    {"bf16", 1, KILN_BIT(14)},
};
#undef KILN_BIT

static int kiln_a64_has(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof(kiln_a64_features) / sizeof(*kiln_a64_features);
       ++i) {
    const kiln_a64_feature *f = &kiln_a64_features[i];
    if (strlen(f->name) != len || strncmp(f->name, name, len) != 0)
      continue;
    if (kiln_cpu_feature_disabled(name, len))
      return 0;
    uint64_t caps = (uint64_t)getauxval(f->hwcap2 ? AT_HWCAP2 : AT_HWCAP);
    return (caps & f->mask) == f->mask ? 1 : 0;
  }
  return -1;
}

#endif /* KILN_AARCH64_HWCAP */

/* 1 available, 0 missing, -1 unknown name (of `len` bytes). */
static int kiln_cpu_has(const void *cpu, const char *name, size_t len) {
#if defined(KILN_X86)
  return kiln_x86_has((const kiln_x86_cpu *)cpu, name, len);
#elif defined(KILN_AARCH64_HWCAP)
  (void)cpu;
  return kiln_a64_has(name, len);
#else
  (void)cpu;
  (void)name;
  (void)len;
  return 1;
#endif
}

int kiln_cpu_has_feature(const char *feature) {
  if (!feature)
    return -1;
#ifdef KILN_X86
  kiln_x86_cpu cpu;
  kiln_x86_cpu_read(&cpu);
  return kiln_cpu_has(&cpu, feature, strlen(feature));
#else
  return kiln_cpu_has(NULL, feature, strlen(feature));
#endif
}

kiln_status kiln_cpu_check_features(const char *features) {
  if (!features)
    return NULL;
#if defined(KILN_X86) || defined(KILN_AARCH64_HWCAP)
#ifdef KILN_X86
  kiln_x86_cpu cpu_state;
  kiln_x86_cpu_read(&cpu_state);
  const void *cpu = &cpu_state;
#else
  const void *cpu = NULL;
#endif
  kiln_strbuf missing = {0};
  int num_missing = 0;
  const char *p = features;
  while (*p) {
    while (*p == ',' || isspace((unsigned char)*p))
      ++p;
    if (!*p)
      break;
    const char *start = p;
    while (*p && *p != ',')
      ++p;
    const char *end = p;
    while (end > start && isspace((unsigned char)end[-1]))
      --end;
    if (*start == '-') /* a disabled feature is not a requirement */
      continue;
    if (*start == '+')
      ++start;
    size_t len = (size_t)(end - start);
    if (len == 0)
      continue;
    int has = kiln_cpu_has(cpu, start, len);
    if (has < 0) {
      kiln_strbuf_free(&missing);
      return kiln_make_status(
          KILN_STATUS_UNSUPPORTED,
          "unknown CPU feature '%.*s': this runtime cannot check it (the "
          "model's cpu_features are \"%s\")",
          (int)len, start, features);
    }
    if (has == 0) {
      kiln_strbuf_appendf(&missing, "%s%.*s", num_missing ? ", " : "",
                          (int)len, start);
      ++num_missing;
    }
  }
  if (num_missing == 0)
    return NULL;
  kiln_status status = kiln_make_status(
      KILN_STATUS_UNSUPPORTED,
      "this CPU lacks the feature%s the model was compiled for: %s",
      num_missing > 1 ? "s" : "", missing.data ? missing.data : "?");
  kiln_strbuf_free(&missing);
  return status;
#else
  return NULL;
#endif
}
