/* environment.c - the environment fingerprint (DESIGN.md section 5).
 *
 * In: on x86, the CPU's CPUID leaves 1, 7.0, 7.1, 0x80000001 and brand
 * string (0x80000002-0x80000004) and XCR0 (XGETBV), read once per process;
 * elsewhere, or where the brand string is empty, /proc/cpuinfo (as far as the
 * first processor's block when that has the feature list). Also uname's
 * machine, the stc version, and the optional tags $STC_TUNE_BUILD_TAG,
 * $STC_TUNE_DRIVER_TAG, $STC_TUNE_CONTEXT_TAG (read at each call). Out:
 *   "cpu:<arch>:<model>:<sorted ISA features>;stc:<version>[;build:T][;driver:T][;context:T]"
 * Only ISA features that change generated code are kept (an allowlist):
 * flags such as "hypervisor" or microcode bug lists would split profiles and
 * tuning caches between machines that run identical code.
 *
 * Why CPUID: reading /proc/cpuinfo makes the kernel format a processor's
 * block, current frequency included (show_cpuinfo), about 0.1-0.16 ms of a
 * process's start on the VMs measured, a quarter of a tuned executable's
 * warm runtime path. The CPUID identity is the text the kernel would print
 * for the same CPU: the brand string trimmed as "model name" is, the features
 * under the kernel's flag names, each kept only when the OS saves the
 * registers its instructions use (the kernel hides those flags too). */
#include "rt_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>
#define STC_RT_HAVE_CPUID 1
/* glibc 2.33+ keeps the CPUID leaves it read at start-up and hands them out
 * (<sys/platform/x86.h>); weak, so that a C library without it leaves the
 * address null and CPUID runs here instead. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
#include <sys/platform/x86.h>
#pragma weak __x86_get_cpuid_feature_leaf
#define STC_RT_HAVE_LIBC_CPUID 1
#endif
#endif

/* x86 "flags" and aarch64 "Features" names as /proc/cpuinfo spells them. */
static const char *const codegen_features[] = {
    /* x86 */
    "sse", "sse2", "pni", "ssse3", "sse4_1", "sse4_2", "popcnt", "avx", "avx2",
    "fma", "f16c", "bmi1", "bmi2", "movbe", "lzcnt", "abm", "avx512f",
    "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512ifma",
    "avx512vbmi", "avx512_vbmi2", "avx512_vnni", "avx512_bitalg",
    "avx512_vpopcntdq", "avx512_bf16", "avx512_fp16", "avx_vnni",
    "avx_vnni_int8", "avx_ne_convert", "amx_tile", "amx_bf16", "amx_int8",
    "amx_fp16", "vaes", "vpclmulqdq", "gfni", "sha_ni", "aes",
    /* aarch64 */
    "fp", "asimd", "asimdhp", "asimddp", "asimdfhm", "asimdrdm", "fphp",
    "sve", "sve2", "svebf16", "svei8mm", "i8mm", "bf16", "sme", "sme2",
    "lse", "atomics",
};

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Copies [v, v_end) without its leading and trailing white space into
 * value, ':' and ';' replaced so that the fingerprint's fields stay
 * separable; false when nothing is left. */
static bool copy_trimmed(const char *v, const char *v_end, char *value,
                         size_t size) {
  while (v < v_end && isspace((unsigned char)*v))
    v++;
  while (v_end > v && isspace((unsigned char)v_end[-1]))
    v_end--;
  size_t n = (size_t)(v_end - v);
  if (n >= size)
    n = size - 1;
  for (size_t i = 0; i < n; i++)
    value[i] = (v[i] == ':' || v[i] == ';') ? '_' : v[i];
  value[n] = 0;
  return n > 0;
}

/* Finds "key<spaces>: value" at the start of a line; copies value
 * (copy_trimmed). */
static bool find_field(const char *text, const char *key, char *value,
                       size_t size) {
  size_t key_length = strlen(key);
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t line_length = end ? (size_t)(end - line) : strlen(line);
    if (line_length > key_length && memcmp(line, key, key_length) == 0 &&
        (line[key_length] == ' ' || line[key_length] == '\t' ||
         line[key_length] == ':')) {
      const char *colon = memchr(line, ':', line_length);
      if (colon)
        return copy_trimmed(colon + 1, line + line_length, value, size);
    }
    line = end ? end + 1 : NULL;
  }
  return false;
}

/* Appends the names in kept (each once), sorted and comma-separated, to buf
 * at *used; false when buf is too small. Both sources of the identity, the
 * text and CPUID, end here. */
static bool append_sorted(const char **kept, size_t num_kept, char *buf,
                          size_t size, size_t *used) {
  qsort(kept, num_kept, sizeof *kept, compare_strings);
  for (size_t i = 0; i < num_kept; i++) {
    size_t length = strlen(kept[i]);
    if ((i > 0) + length >= size - *used)
      return false;
    if (i > 0)
      buf[(*used)++] = ',';
    memcpy(buf + *used, kept[i], length + 1);
    *used += length;
  }
  return true;
}

/* Appends the sorted, deduplicated codegen features of a space-separated
 * list to buf at *used; false when buf is too small. */
static bool append_features(const char *list, char *buf, size_t size,
                            size_t *used) {
  const char *kept[sizeof codegen_features / sizeof *codegen_features];
  size_t num_kept = 0;
  for (const char *p = list; *p;) {
    while (*p == ' ' || *p == '\t')
      p++;
    const char *start = p;
    while (*p && *p != ' ' && *p != '\t')
      p++;
    size_t length = (size_t)(p - start);
    if (length == 0)
      continue;
    for (size_t i = 0; i < sizeof codegen_features / sizeof *codegen_features;
         i++)
      if (strlen(codegen_features[i]) == length &&
          memcmp(codegen_features[i], start, length) == 0) {
        bool seen = false;
        for (size_t k = 0; k < num_kept; k++)
          seen |= kept[k] == codegen_features[i];
        if (!seen)
          kept[num_kept++] = codegen_features[i];
      }
  }
  return append_sorted(kept, num_kept, buf, size, used);
}

stc_status stc_rt__cpu_identity_from_text(const char *cpuinfo, const char *arch,
                                          char *buf, size_t size,
                                          bool *reliable) {
  if (!buf || size == 0 || !arch)
    return STC_ERR_INVALID;
  char model[256] = "unknown";
  char features[8192] = "";
  bool have_model = false, have_features = false;
  if (cpuinfo) {
    have_model = find_field(cpuinfo, "model name", model, sizeof model);
    if (!have_model) {
      /* aarch64 has no model name: implementer and part identify the core. */
      char implementer[64], part[64];
      if (find_field(cpuinfo, "CPU implementer", implementer,
                     sizeof implementer) &&
          find_field(cpuinfo, "CPU part", part, sizeof part)) {
        snprintf(model, sizeof model, "implementer %s part %s", implementer,
                 part);
        have_model = true;
      }
    }
    if (!have_model)
      snprintf(model, sizeof model, "unknown");
    have_features = find_field(cpuinfo, "flags", features, sizeof features) ||
                    find_field(cpuinfo, "Features", features, sizeof features);
  }
  int n = snprintf(buf, size, "cpu:%s:%s:", arch, model);
  if (n < 0 || (size_t)n >= size)
    return STC_ERR_INVALID;
  size_t used = (size_t)n;
  if (!append_features(features, buf, size, &used))
    return STC_ERR_INVALID;
  if (reliable)
    *reliable = have_model || have_features;
  return STC_OK;
}

/* The CPUID registers of each leaf, in stc_rt__x86_cpuid's order. */
enum { CPUID_EAX, CPUID_EBX, CPUID_ECX, CPUID_EDX };
enum { LEAF_1, LEAF_7_0, LEAF_7_1, LEAF_80000001 };

/* XCR0 bits the OS sets when it saves a register state: SSE | YMM for
 * VEX-encoded instructions, plus opmask | ZMM_Hi256 | Hi16_ZMM for
 * EVEX-encoded ones, XTILECFG | XTILEDATA for AMX. */
#define XSTATE_AVX 0x6ull
#define XSTATE_AVX512 0xe6ull
#define XSTATE_AMX 0x60000ull

/* The codegen_features CPUID reports, under the kernel's flag names (LZCNT
 * is "abm" there). A feature counts when its bit is set and XCR0 has every
 * bit of its xstate: the kernel hides AVX and AVX-512 flags whose state it
 * does not enable; f16c (VEX only) and amx_bf16/amx_int8 (tile registers)
 * also need that state here, as compilers require it. Not read: amx_fp16,
 * avx_vnni_int8 and avx_ne_convert, which the kernel does not print (up
 * to 6.18 at least), so that the text stays what /proc/cpuinfo gives. */
static const struct x86_feature {
  unsigned char leaf, reg, bit;
  unsigned long long xstate;
  const char *name;
} x86_features[] = {
    {LEAF_1, CPUID_EDX, 25, 0, "sse"},
    {LEAF_1, CPUID_EDX, 26, 0, "sse2"},
    {LEAF_1, CPUID_ECX, 0, 0, "pni"},
    {LEAF_1, CPUID_ECX, 9, 0, "ssse3"},
    {LEAF_1, CPUID_ECX, 12, XSTATE_AVX, "fma"},
    {LEAF_1, CPUID_ECX, 19, 0, "sse4_1"},
    {LEAF_1, CPUID_ECX, 20, 0, "sse4_2"},
    {LEAF_1, CPUID_ECX, 22, 0, "movbe"},
    {LEAF_1, CPUID_ECX, 23, 0, "popcnt"},
    {LEAF_1, CPUID_ECX, 25, 0, "aes"},
    {LEAF_1, CPUID_ECX, 28, XSTATE_AVX, "avx"},
    {LEAF_1, CPUID_ECX, 29, XSTATE_AVX, "f16c"},
    {LEAF_7_0, CPUID_EBX, 3, 0, "bmi1"},
    {LEAF_7_0, CPUID_EBX, 5, XSTATE_AVX, "avx2"},
    {LEAF_7_0, CPUID_EBX, 8, 0, "bmi2"},
    {LEAF_7_0, CPUID_EBX, 16, XSTATE_AVX512, "avx512f"},
    {LEAF_7_0, CPUID_EBX, 17, XSTATE_AVX512, "avx512dq"},
    {LEAF_7_0, CPUID_EBX, 21, XSTATE_AVX512, "avx512ifma"},
    {LEAF_7_0, CPUID_EBX, 28, XSTATE_AVX512, "avx512cd"},
    {LEAF_7_0, CPUID_EBX, 29, 0, "sha_ni"},
    {LEAF_7_0, CPUID_EBX, 30, XSTATE_AVX512, "avx512bw"},
    {LEAF_7_0, CPUID_EBX, 31, XSTATE_AVX512, "avx512vl"},
    {LEAF_7_0, CPUID_ECX, 1, XSTATE_AVX512, "avx512vbmi"},
    {LEAF_7_0, CPUID_ECX, 6, XSTATE_AVX512, "avx512_vbmi2"},
    {LEAF_7_0, CPUID_ECX, 8, 0, "gfni"},
    {LEAF_7_0, CPUID_ECX, 9, XSTATE_AVX, "vaes"},
    {LEAF_7_0, CPUID_ECX, 10, XSTATE_AVX, "vpclmulqdq"},
    {LEAF_7_0, CPUID_ECX, 11, XSTATE_AVX512, "avx512_vnni"},
    {LEAF_7_0, CPUID_ECX, 12, XSTATE_AVX512, "avx512_bitalg"},
    {LEAF_7_0, CPUID_ECX, 14, XSTATE_AVX512, "avx512_vpopcntdq"},
    {LEAF_7_0, CPUID_EDX, 22, XSTATE_AMX, "amx_bf16"},
    {LEAF_7_0, CPUID_EDX, 23, XSTATE_AVX512, "avx512_fp16"},
    {LEAF_7_0, CPUID_EDX, 24, XSTATE_AMX, "amx_tile"},
    {LEAF_7_0, CPUID_EDX, 25, XSTATE_AMX, "amx_int8"},
    {LEAF_7_1, CPUID_EAX, 4, XSTATE_AVX, "avx_vnni"},
    {LEAF_7_1, CPUID_EAX, 5, XSTATE_AVX512, "avx512_bf16"},
    {LEAF_80000001, CPUID_ECX, 5, 0, "abm"},
};

stc_status stc_rt__cpu_identity_from_cpuid(const stc_rt__x86_cpuid *cpuid,
                                           const char *arch, char *buf,
                                           size_t size) {
  if (!cpuid || !arch || !buf || size == 0)
    return STC_ERR_INVALID;
  /* The kernel prints the brand string as "model name"; the text reader
   * sees it up to a line end. */
  char model[sizeof cpuid->brand];
  size_t brand_length = strnlen(cpuid->brand, sizeof cpuid->brand);
  const char *brand_end = memchr(cpuid->brand, '\n', brand_length);
  if (!copy_trimmed(cpuid->brand,
                    brand_end ? brand_end : cpuid->brand + brand_length, model,
                    sizeof model))
    return STC_ERR_NOT_FOUND;
  const uint32_t *const leaves[] = {cpuid->leaf_1, cpuid->leaf_7_0,
                                    cpuid->leaf_7_1, cpuid->leaf_80000001};
  /* Each name of x86_features is in codegen_features (a test checks it):
   * no allowlist look-up needed here. */
  const char *kept[sizeof x86_features / sizeof *x86_features];
  size_t num_kept = 0;
  for (size_t i = 0; i < sizeof x86_features / sizeof *x86_features; i++) {
    const struct x86_feature *feature = &x86_features[i];
    if (leaves[feature->leaf][feature->reg] >> feature->bit & 1 &&
        (cpuid->xcr0 & feature->xstate) == feature->xstate)
      kept[num_kept++] = feature->name;
  }
  int n = snprintf(buf, size, "cpu:%s:%s:", arch, model);
  if (n < 0 || (size_t)n >= size)
    return STC_ERR_INVALID;
  size_t used = (size_t)n;
  return append_sorted(kept, num_kept, buf, size, &used) ? STC_OK
                                                         : STC_ERR_INVALID;
}

#ifdef STC_RT_HAVE_LIBC_CPUID
/* Copies the feature leaves glibc read when the process started; false when
 * this glibc does not have them. Each CPUID costs a VM exit in a virtual
 * machine (5-7 us each on the nested VM this was measured on), so the five
 * it saves are about 40% of the identity's cost there. */
static bool libc_cpuid_read(stc_rt__x86_cpuid *cpuid, bool *has_brand) {
  if (!__x86_get_cpuid_feature_leaf)
    return false;
  static const struct {
    unsigned index;
    size_t offset;
  } leaves[] = {
      {CPUID_INDEX_1, offsetof(stc_rt__x86_cpuid, leaf_1)},
      {CPUID_INDEX_7, offsetof(stc_rt__x86_cpuid, leaf_7_0)},
      {CPUID_INDEX_7_ECX_1, offsetof(stc_rt__x86_cpuid, leaf_7_1)},
      {CPUID_INDEX_80000001, offsetof(stc_rt__x86_cpuid, leaf_80000001)},
  };
  for (size_t i = 0; i < sizeof leaves / sizeof *leaves; i++)
    memcpy((char *)cpuid + leaves[i].offset,
           __x86_get_cpuid_feature_leaf(leaves[i].index)->cpuid_array,
           4 * sizeof(uint32_t));
  /* glibc reads leaf 1 (whose signature in EAX is never 0) only for the
   * vendors it knows: for another, CPUID runs here. */
  if (cpuid->leaf_1[CPUID_EAX] == 0) {
    memset(cpuid, 0, sizeof *cpuid);
    return false;
  }
  /* glibc reads leaf 0x80000008 (address sizes, never 0) only when the
   * CPU has it, so then it has the brand string's leaves too. */
  *has_brand =
      __x86_get_cpuid_feature_leaf(CPUID_INDEX_80000008)->cpuid_array[0] != 0;
  return true;
}
#endif

bool stc_rt__x86_cpuid_read(stc_rt__x86_cpuid *cpuid, bool from_libc) {
  memset(cpuid, 0, sizeof *cpuid);
#ifdef STC_RT_HAVE_CPUID
  bool has_brand = false, from_cpuid = true;
#ifdef STC_RT_HAVE_LIBC_CPUID
  if (from_libc)
    from_cpuid = !libc_cpuid_read(cpuid, &has_brand);
#else
  (void)from_libc;
#endif
  uint32_t *r;
  if (from_cpuid) {
    unsigned max_leaf = __get_cpuid_max(0, NULL);
    if (max_leaf < 1)
      return false;
    r = cpuid->leaf_1;
    __cpuid(1, r[0], r[1], r[2], r[3]);
    if (max_leaf >= 7) {
      r = cpuid->leaf_7_0;
      __cpuid_count(7, 0, r[0], r[1], r[2], r[3]);
      if (cpuid->leaf_7_0[CPUID_EAX] >= 1) { /* the last subleaf */
        r = cpuid->leaf_7_1;
        __cpuid_count(7, 1, r[0], r[1], r[2], r[3]);
      }
    }
  }
  if (!has_brand) {
    /* Where glibc did not read the extended leaves, nor CPUID yet. A CPU
     * without extended leaves answers 0x80000000 with some basic leaf's
     * words. */
    unsigned max_extended = __get_cpuid_max(0x80000000, NULL);
    if ((max_extended & 0xffff0000u) == 0x80000000u) {
      if (max_extended >= 0x80000001u) {
        r = cpuid->leaf_80000001;
        __cpuid(0x80000001u, r[0], r[1], r[2], r[3]);
      }
      has_brand = max_extended >= 0x80000004u;
    }
  }
  if (has_brand)
    for (unsigned i = 0; i < 3; i++) {
      uint32_t words[4];
      __cpuid(0x80000002u + i, words[0], words[1], words[2], words[3]);
      memcpy(cpuid->brand + 16 * i, words, sizeof words);
    }
  /* XGETBV faults unless the OS enabled XSAVE (OSXSAVE). */
  if (cpuid->leaf_1[CPUID_ECX] >> 27 & 1) {
    uint32_t low, high;
    __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    cpuid->xcr0 = (uint64_t)high << 32 | low;
  }
  return true;
#else
  (void)from_libc;
  return false;
#endif
}

static const char *machine_arch(void) {
  static _Thread_local struct utsname name;
  if (uname(&name) != 0)
    return "unknown";
  return name.machine;
}

#define STC_RT_CPUINFO_MAX_BYTES (16u << 20)

/* One read(2), retried on EINTR; 0 at the end or on an error. */
static size_t read_some(int file, char *buffer, size_t size) {
  ssize_t got;
  do
    got = read(file, buffer, size);
  while (got < 0 && errno == EINTR);
  return got > 0 ? (size_t)got : 0;
}

/* Whether text already holds the first processor's whole block (up to the
 * first blank line) with its feature list: all the identity reads. The
 * kernel formats /proc/cpuinfo one processor at a time as it is read (with
 * each processor's current frequency), so a large machine's later blocks
 * are work nobody needs at the start of every process. */
static bool first_block_read(char *text) {
  char *blank = strstr(text, "\n\n");
  if (!blank)
    return false;
  char kept = blank[1];
  blank[1] = 0;
  char ignored[16];
  bool features = find_field(text, "flags", ignored, sizeof ignored) ||
                  find_field(text, "Features", ignored, sizeof ignored);
  blank[1] = kept;
  return features;
}

stc_status stc_rt__cpu_identity_from_file(const char *path, char *buf,
                                          size_t size, bool *reliable) {
  char *text = NULL;
  size_t length = 0, capacity = 0;
  /* read(2), not stdio: a read returns what the kernel formatted so far,
   * so the first block can end the reading (first_block_read). */
  int file = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
  if (file >= 0) {
    /* /proc files report size 0: read until EOF, but never more than
     * STC_RT_CPUINFO_MAX_BYTES - the first processor's fields, all this
     * reads, come first (a 1024-core machine's cpuinfo is about 2 MiB). */
    char chunk[4096];
    size_t got;
    while (length < STC_RT_CPUINFO_MAX_BYTES &&
           (got = read_some(file, chunk, sizeof chunk)) > 0) {
      if (length + got + 1 > capacity) {
        size_t new_capacity = capacity ? capacity * 2 : 16384;
        while (new_capacity < length + got + 1)
          new_capacity *= 2;
        char *grown = realloc(text, new_capacity);
        if (!grown) {
          free(text);
          close(file);
          return STC_ERR_NOMEM;
        }
        text = grown;
        capacity = new_capacity;
      }
      memcpy(text + length, chunk, got);
      length += got;
      text[length] = 0;
      if (first_block_read(text))
        break;
    }
    close(file);
  }
  stc_status status =
      stc_rt__cpu_identity_from_text(text, machine_arch(), buf, size, reliable);
  free(text);
  return status;
}

/* The CPU part, computed once per process. */
static pthread_once_t g_cpu_once = PTHREAD_ONCE_INIT;
static char g_cpu_identity[1024];
static bool g_cpu_reliable;

static void compute_cpu_identity(void) {
  stc_rt__x86_cpuid cpuid;
  if (stc_rt__x86_cpuid_read(&cpuid, true) &&
      stc_rt__cpu_identity_from_cpuid(&cpuid, machine_arch(), g_cpu_identity,
                                      sizeof g_cpu_identity) == STC_OK) {
    g_cpu_reliable = true;
    return;
  }
  if (stc_rt__cpu_identity_from_file("/proc/cpuinfo", g_cpu_identity,
                                     sizeof g_cpu_identity,
                                     &g_cpu_reliable) != STC_OK) {
    /* Only a failed allocation or an absurd model name gets here. */
    snprintf(g_cpu_identity, sizeof g_cpu_identity, "cpu:%s:unknown:",
             machine_arch());
    g_cpu_reliable = false;
  }
}

bool stc_rt_environment_reliable(void) {
  pthread_once(&g_cpu_once, compute_cpu_identity);
  return g_cpu_reliable;
}

stc_status stc_rt_environment(char *buf, size_t size) {
  static const struct {
    const char *variable;
    const char *label;
  } tags[] = {
      {"STC_TUNE_BUILD_TAG", "build"},
      {"STC_TUNE_DRIVER_TAG", "driver"},
      {"STC_TUNE_CONTEXT_TAG", "context"},
  };
  if (!buf || size == 0)
    return STC_ERR_INVALID;
  pthread_once(&g_cpu_once, compute_cpu_identity);
  int n = snprintf(buf, size, "%s;stc:%s", g_cpu_identity, stc_version());
  if (n < 0 || (size_t)n >= size)
    return STC_ERR_INVALID;
  size_t used = (size_t)n;
  for (size_t i = 0; i < sizeof tags / sizeof *tags; i++) {
    const char *value = getenv(tags[i].variable);
    if (!value || !*value)
      continue;
    n = snprintf(buf + used, size - used, ";%s:%s", tags[i].label, value);
    if (n < 0 || (size_t)n >= size - used)
      return STC_ERR_INVALID;
    used += (size_t)n;
  }
  return STC_OK;
}
