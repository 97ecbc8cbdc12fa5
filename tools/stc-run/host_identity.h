/* host_identity.h - what code compiled for this host depends on besides
 * its input, for stc-run's object-cache key, found without LLVM (a start
 * whose object cache holds the module must not load libLLVM: ~10 ms).
 *
 * x86-64: the CPUID leaves and registers LLVM's host detection reads
 * (llvm/lib/TargetParser/Host.cpp, getHostCPUName and getHostCPUFeatures:
 * leaves 0, 1, 7.0, 7.1, 0xd.1, 0x14, 0x19, 0x1e.1, 0x24, 0x80000000-1 and
 * 0x80000008) and XCR0 (the OS's saved state, which gates AVX, AVX-512 and
 * AMX), as a SHA-256 digest: the same bits give the same CPU name and
 * features, so the same code. Most leaves come from glibc's copy (what its
 * ld.so read at start-up, <sys/platform/x86.h>): each CPUID traps to the
 * hypervisor in a VM (~9 us), and 12 of them were 0.1 ms. Per-core and per-VM-size fields (APIC id,
 * logical processor and core counts) are left out. Other architectures:
 * the auxiliary vector's hardware capabilities and /proc/cpuinfo without
 * its per-core and clock lines.
 * Also LLVM's version and default triple, as stc was built against them
 * (llvm-config.h): LLVM is not loaded to ask. */
#ifndef STC_RUN_HOST_IDENTITY_H
#define STC_RUN_HOST_IDENTITY_H

#include "stc/status.h"

/* The identity as lines of text (malloc'd), e.g.
 *   llvm 22.1.8
 *   triple x86_64-pc-linux-gnu
 *   cpu GenuineIntel family 6 model 207 stepping 2
 *   cpuid sha256:<64 hex digits>
 * STC_OK, or an error (no memory). */
stc_status stc_run_host_identity(char **text, stc_error *err);

#endif /* STC_RUN_HOST_IDENTITY_H */
