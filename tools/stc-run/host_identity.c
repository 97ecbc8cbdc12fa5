/* host_identity.c - the host's identity for stc-run's object-cache key,
 * without LLVM (host_identity.h). In: CPUID and XCR0 (x86-64), else the
 * auxiliary vector and /proc/cpuinfo. Out: lines of text. */
#include "host_identity.h"
#include "stc/hash.h"

#include <llvm/Config/llvm-config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
/* glibc (2.33+) keeps what its ld.so read of most of these leaves at
 * start-up: no CPUID, so no trap to the hypervisor (~9 us each in a VM). */
#if defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#define HAVE_GLIBC_CPUID 1
#endif
#endif

/* One leaf's registers, as hashed. */
typedef struct leaf_bits {
  uint32_t leaf, subleaf, eax, ebx, ecx, edx;
} leaf_bits;

/* glibc's copy of leaf.subleaf into r, or false (CPUID it is; always with
 * STC_RUN_HOST_CPUID=direct, which test/stc-run/host-identity.test uses to
 * check that both give the same key). */
static bool glibc_leaf(uint32_t leaf, uint32_t subleaf, uint32_t r[4]) {
#ifdef HAVE_GLIBC_CPUID
  static int direct = -1; /* the setting, read once */
  if (direct < 0) {
    const char *setting = getenv("STC_RUN_HOST_CPUID");
    direct = setting && strcmp(setting, "direct") == 0;
  }
  if (direct)
    return false;
  static const struct {
    uint32_t leaf, subleaf;
    unsigned index;
  } copies[] = {{1, 0, CPUID_INDEX_1},
                {7, 0, CPUID_INDEX_7},
                {7, 1, CPUID_INDEX_7_ECX_1},
                {0xd, 1, CPUID_INDEX_D_ECX_1},
                {0x14, 0, CPUID_INDEX_14_ECX_0},
                {0x19, 0, CPUID_INDEX_19},
                {0x80000001, 0, CPUID_INDEX_80000001},
                {0x80000008, 0, CPUID_INDEX_80000008}};
  for (size_t i = 0; i < sizeof copies / sizeof *copies; i++)
    if (copies[i].leaf == leaf && copies[i].subleaf == subleaf) {
      const struct cpuid_feature *f =
          __x86_get_cpuid_feature_leaf(copies[i].index);
      if (!f)
        return false;
      memcpy(r, f->cpuid_array, 4 * sizeof *r);
      return true;
    }
#else
  (void)leaf, (void)subleaf, (void)r;
#endif
  return false;
}

/* Reads leaf.subleaf into *out, keeping the registers in keep (bit 0 EAX,
 * 1 EBX, 2 ECX, 3 EDX; the others read as 0). */
static void read_leaf(uint32_t leaf, uint32_t subleaf, unsigned keep,
                      leaf_bits *out) {
  uint32_t r[4] = {0};
  if (!glibc_leaf(leaf, subleaf, r))
    __cpuid_count(leaf, subleaf, r[0], r[1], r[2], r[3]);
  *out = (leaf_bits){leaf, subleaf, keep & 1 ? r[0] : 0, keep & 2 ? r[1] : 0,
                     keep & 4 ? r[2] : 0, keep & 8 ? r[3] : 0};
}

static uint64_t read_xcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t)hi << 32 | lo;
}

enum { EAX = 1, EBX = 2, ECX = 4, EDX = 8, ALL = 15 };

/* The leaves LLVM's host detection reads, each only where the CPU has it
 * (as LLVM asks), with what varies between the cores of one machine or
 * with a VM's size masked: leaf 1's EBX (APIC id, logical processors),
 * 0x80000008's EAX and ECX (address sizes, core count). */
static void cpu_lines(char *cpu, size_t cpu_size, char hex[65]) {
  leaf_bits bits[16];
  size_t n = 0;
  /* Each CPUID traps to the hypervisor in a VM (~9 us): none twice, and
   * glibc's copies where it has them (leaves 0 and 0x80000000, 0x1e and
   * 0x24 are CPUIDs). */
  read_leaf(0, 0, ALL, &bits[n++]);
  uint32_t max = bits[0].eax;
  static const struct {
    uint32_t leaf, subleaf;
    unsigned keep;
  } leaves[] = {{1, 0, EAX | ECX | EDX}, {7, 0, ALL},  {7, 1, ALL},
                {0xd, 1, EAX},           {0x14, 0, ALL}, {0x19, 0, ALL},
                {0x1e, 1, ALL},          {0x24, 0, ALL}};
  bool osxsave = false;
  for (size_t i = 0; i < sizeof leaves / sizeof *leaves; i++)
    if (leaves[i].leaf <= max) {
      read_leaf(leaves[i].leaf, leaves[i].subleaf, leaves[i].keep, &bits[n]);
      if (leaves[i].leaf == 1)
        osxsave = bits[n].ecx >> 27 & 1;
      n++;
    }
  read_leaf(0x80000000, 0, ALL, &bits[n]);
  uint32_t max_ext = bits[n++].eax;
  if (max_ext >= 0x80000001)
    read_leaf(0x80000001, 0, ALL, &bits[n++]);
  if (max_ext >= 0x80000008)
    read_leaf(0x80000008, 0, EBX, &bits[n++]);
  uint64_t xcr0 = osxsave ? read_xcr0() : 0;
  bits[n++] = (leaf_bits){0xffffffffu, 0, (uint32_t)xcr0,
                          (uint32_t)(xcr0 >> 32), 0, 0};
  stc_sha256_hex(bits, n * sizeof *bits, hex);

  char vendor[13];
  memcpy(vendor, &bits[0].ebx, 4);
  memcpy(vendor + 4, &bits[0].edx, 4);
  memcpy(vendor + 8, &bits[0].ecx, 4);
  vendor[12] = 0;
  uint32_t eax = max >= 1 ? bits[1].eax : 0;
  unsigned family = eax >> 8 & 0xf, model = eax >> 4 & 0xf;
  if (family == 0xf)
    family += eax >> 20 & 0xff;
  if (family == 6 || family >= 0xf)
    model |= (eax >> 16 & 0xf) << 4;
  snprintf(cpu, cpu_size, "cpu %s family %u model %u stepping %u\ncpuid",
           vendor, family, model, eax & 0xf);
}

#else
#include <sys/auxv.h>

/* The auxiliary vector's hardware capabilities and /proc/cpuinfo (LLVM
 * reads its features and CPU part numbers there) without the lines that
 * differ between cores or with the clock. */
static void cpu_lines(char *cpu, size_t cpu_size, char hex[65]) {
  size_t size = 0, capacity = 4096;
  char *text = malloc(capacity);
  char line[4096];
  FILE *f = fopen("/proc/cpuinfo", "r");
  int n = snprintf(text ? text : line, text ? capacity : sizeof line,
                   "hwcap %lx %lx\n", getauxval(AT_HWCAP),
#ifdef AT_HWCAP2
                   getauxval(AT_HWCAP2)
#else
                   0UL
#endif
  );
  size = text && n > 0 ? (size_t)n : 0;
  while (text && f && fgets(line, sizeof line, f)) {
    static const char *const skip[] = {"processor", "BogoMIPS", "bogomips",
                                       "cpu MHz", "core id", "apicid",
                                       "initial apicid"};
    bool skipped = false;
    for (size_t i = 0; i < sizeof skip / sizeof *skip; i++)
      skipped |= strncmp(line, skip[i], strlen(skip[i])) == 0;
    size_t length = strlen(line);
    if (skipped)
      continue;
    if (size + length > capacity) {
      char *grown = realloc(text, capacity * 2 + length);
      if (!grown)
        break;
      text = grown;
      capacity = capacity * 2 + length;
    }
    memcpy(text + size, line, length);
    size += length;
  }
  if (f)
    fclose(f);
  stc_sha256_hex(text ? text : "", size, hex);
  free(text);
  snprintf(cpu, cpu_size, "cpuinfo");
}
#endif

stc_status stc_run_host_identity(char **text, stc_error *err) {
  char cpu[256], hex[65];
  cpu_lines(cpu, sizeof cpu, hex);
  size_t length = strlen(cpu) + sizeof LLVM_VERSION_STRING +
                  sizeof LLVM_DEFAULT_TARGET_TRIPLE + sizeof hex + 64;
  *text = malloc(length);
  if (!*text) {
    stc_error_set(err, NULL, 0, 0, "out of memory");
    return STC_ERR_NOMEM;
  }
  snprintf(*text, length, "llvm %s\ntriple %s\n%s sha256:%s\n",
           LLVM_VERSION_STRING, LLVM_DEFAULT_TARGET_TRIPLE, cpu, hex);
  return STC_OK;
}
