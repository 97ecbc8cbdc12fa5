/* rt_internal.h - declarations shared between the files of libstc_rt and its
 * unit tests; not installed, not part of the public contract (stc/rt.h). */
#ifndef STC_RT_INTERNAL_H
#define STC_RT_INTERNAL_H

#include "stc/hints.h"
#include "stc/rt.h"
#include "stc/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Adds ns of tuning work done on the calling thread. Every region open on
 * this thread excludes that time from its sample (the profile measures steady
 * state, DESIGN.md section 4). For the dispatch code of libstc_rt. */
void stc_rt__tuning_ns_add(uint64_t ns);

/* Merges every shard (live threads and retired ones) into a new hints store
 * big enough that nothing is evicted; the caller owns *out. *samples (may be
 * NULL) receives the total number of samples merged, which rt.c uses to skip
 * a redundant exit-time write. */
stc_status stc_rt__regions_collect(stc_hints **out, uint64_t *samples);

/* Registers the exit-time profile write once (idempotent). */
void stc_rt__exit_hook_install(void);


/* The CPU identity "cpu:<arch>:<model>:<features>" from a /proc/cpuinfo-like
 * text; *reliable says whether a model or feature list was found. `arch` is
 * the uname machine. Pure; for tests and environment.c. */
stc_status stc_rt__cpu_identity_from_text(const char *cpuinfo, const char *arch,
                                          char *buf, size_t size,
                                          bool *reliable);
/* Reads `path` (normally /proc/cpuinfo) and builds the identity; an
 * unreadable file gives "cpu:<arch>:unknown:" and *reliable = false. */
stc_status stc_rt__cpu_identity_from_file(const char *path, char *buf,
                                          size_t size, bool *reliable);

/* The CPUID words the CPU identity reads on x86: EAX, EBX, ECX, EDX of each
 * leaf (zeros where the CPU lacks the leaf), the brand string of leaves
 * 0x80000002-0x80000004 (NUL-terminated; empty without them), and XCR0
 * (XGETBV 0; 0 unless leaf 1 says the OS enabled XSAVE). */
typedef struct stc_rt__x86_cpuid {
  uint32_t leaf_1[4];
  uint32_t leaf_7_0[4];
  uint32_t leaf_7_1[4];
  uint32_t leaf_80000001[4];
  char brand[49];
  uint64_t xcr0;
} stc_rt__x86_cpuid;
/* The CPU identity from CPUID words, the text stc_rt__cpu_identity_from_text
 * gives for the /proc/cpuinfo of the same CPU: the brand string trimmed as
 * "model name", the features the CPU has and the OS saves the registers of,
 * under the kernel's flag names. STC_ERR_NOT_FOUND when the brand string is
 * empty (read /proc/cpuinfo instead), STC_ERR_INVALID when buf is too small.
 * Pure; for tests and environment.c. */
stc_status stc_rt__cpu_identity_from_cpuid(const stc_rt__x86_cpuid *cpuid,
                                           const char *arch, char *buf,
                                           size_t size);
/* Fills *cpuid from this CPU: CPUID and XGETBV, or with from_libc the
 * feature leaves glibc read at start-up where it has them (the brand string
 * and XCR0 are read here either way). False where there is no CPUID (not
 * x86), *cpuid then zeroed. */
bool stc_rt__x86_cpuid_read(stc_rt__x86_cpuid *cpuid, bool from_libc);

#endif /* STC_RT_INTERNAL_H */
