/* environment.c - the environment fingerprint (DESIGN.md section 5).
 *
 * In: /proc/cpuinfo (read once per process, as far as the first processor's
 * block when that has the feature list), uname's machine, the stc
 * version, and the optional tags $STC_TUNE_BUILD_TAG, $STC_TUNE_DRIVER_TAG,
 * $STC_TUNE_CONTEXT_TAG (read at each call). Out:
 *   "cpu:<arch>:<model>:<sorted ISA features>;stc:<version>[;build:T][;driver:T][;context:T]"
 * Only ISA features that change generated code are kept (an allowlist):
 * flags such as "hypervisor" or microcode bug lists would split profiles and
 * tuning caches between machines that run identical code. */
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

/* Finds "key<spaces>: value" at the start of a line; copies value (trimmed,
 * ':' replaced so that the fingerprint's fields stay separable). */
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
      if (colon) {
        const char *v = colon + 1;
        const char *v_end = line + line_length;
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
    }
    line = end ? end + 1 : NULL;
  }
  return false;
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
  qsort(kept, num_kept, sizeof *kept, compare_strings);
  for (size_t i = 0; i < num_kept; i++) {
    int n = snprintf(buf + *used, size - *used, "%s%s", i ? "," : "", kept[i]);
    if (n < 0 || (size_t)n >= size - *used)
      return false;
    *used += (size_t)n;
  }
  return true;
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
