/* stc/rt.h - libstc_rt, the runtime that compiled models link or the JIT
 * loads (DESIGN.md section 5): the region timer that instrumented code calls
 * (its ABI is in stc/rt_region.h), the profile it writes, and the identity of
 * the machine it runs on. libstc_rt never depends on MLIR or LLVM.
 *
 * Region timer. Every instrumented region calls
 *   token = stc_rt_region_begin(id);  ...region...;
 *   stc_rt_region_end(id, token, bytes);
 * (contract in stc/rt_region.h). Samples go to a per-thread shard (no global
 * lock on that path; the id pointer is the first lookup key, the id string
 * the fallback, so one region at two addresses is still one region) and are
 * merged into one hints store when the profile is exported, read, or the
 * process exits. Shards of threads that exit early are folded into a retired
 * shard at thread exit, so their samples are kept. The token is the thread's
 * CLOCK_MONOTONIC reading minus the tuning time accumulated on that thread,
 * so that the difference at end excludes tuning in any nesting; it is only
 * meaningful on the thread that made it (a negative difference records 0 ns).
 * A sample that cannot be stored for lack of memory is counted in
 * stc_rt_regions_dropped and otherwise lost; the timer never fails.
 *
 * Profile output. When $STC_PROFILE_OUT is set (or stc_rt_set_profile_out
 * gave a path), the merged profile is written there at process exit; a write
 * failure prints exactly one line on stderr
 *   stc: warning: cannot write profile 'PATH': REASON
 * and never aborts the program (at exit nobody is left to return a status to;
 * this is the one place libstc_rt prints). stc_rt_profile_export writes now.
 *
 * Thread safety: every function here may be called from any thread at any
 * time, including concurrently with region timing on other threads. */
#ifndef STC_RT_H
#define STC_RT_H

#include "stc/hints.h"
#include "stc/rt_region.h"
#include "stc/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime's ABI version: bumped when a declaration here or in
 * stc/rt_region.h changes incompatibly (compiled code checks nothing at run
 * time today; hosts may). The library version is stc_version(). */
#define STC_RT_ABI_VERSION 1

/* Returns STC_RT_ABI_VERSION as compiled into the library. */
int stc_rt_abi_version(void);

/* ---- configuration and profile output ---- */

/* Sets the path the profile is written to at process exit (copied),
 * overriding $STC_PROFILE_OUT; NULL disables writing at exit. STC_ERR_NOMEM
 * leaves the previous setting. */
stc_status stc_rt_set_profile_out(const char *path);

/* Copies the current at-exit profile path into buf (NUL-terminated) and
 * returns STC_OK, STC_ERR_NOT_FOUND when none is configured, or
 * STC_ERR_INVALID when buf is NULL or too small. */
stc_status stc_rt_profile_out(char *buf, size_t size);

/* Writes the merged profile now (atomically: the destination is the old file
 * or the complete new one): producer "stc <version>", environment =
 * stc_rt_environment, created = now, every region recorded since the start
 * (or the last stc_rt_regions_reset). path NULL means the configured at-exit
 * path (STC_ERR_NOT_FOUND when there is none). On failure returns the status
 * (STC_ERR_IO, STC_ERR_PERMISSION, STC_ERR_NOMEM, ...) with the reason in err
 * (may be NULL) and prints nothing. A successful export to the at-exit path
 * makes the exit-time write skip when no sample arrived since. */
stc_status stc_rt_profile_export(const char *path, stc_error *err);

/* ---- reading region statistics ---- */

/* Copies the merged record of one region into *out and returns true, or
 * returns false (leaving *out untouched) when nothing was recorded for it. */
bool stc_rt_region_stats(const char *region_id, stc_region_record *out);

/* Merges every shard into a new hints store (capacity large enough to hold
 * every region: nothing is evicted). The caller owns *out and destroys it
 * with stc_hints_destroy. */
stc_status stc_rt_regions_snapshot(stc_hints **out);

/* Samples dropped because memory ran out while recording (those samples are
 * missing from every profile). */
uint64_t stc_rt_regions_dropped(void);

/* Zeroes every recorded sample (region entries stay). Samples recorded by
 * other threads while the reset runs may be kept or lost. */
void stc_rt_regions_reset(void);

/* ---- environment identity ---- */

/* Writes the environment fingerprint into buf:
 *   "cpu:<arch>:<model>:<sorted codegen ISA features>;stc:<version>"
 * followed by ";build:<tag>", ";driver:<tag>", ";context:<tag>" for each of
 * $STC_TUNE_BUILD_TAG, $STC_TUNE_DRIVER_TAG, $STC_TUNE_CONTEXT_TAG that is set
 * and non-empty. The CPU part is read once per process (the machine does not
 * change under a process); tags are read at each call. Returns STC_OK, or
 * STC_ERR_INVALID when buf is NULL or too small (1024 bytes always hold the
 * CPU part and the version; tags add their own length). */
stc_status stc_rt_environment(char *buf, size_t size);

/* True when the CPU identity could be read (/proc/cpuinfo readable with a
 * model or feature list). Without a reliable identity, tuning decisions must
 * stay in memory only (DESIGN.md section 5). */
bool stc_rt_environment_reliable(void);

/* ---- symbols for JIT hosts ---- */

/* One entry point compiled code may call, for a JIT host to register (e.g.
 * with mlirExecutionEngineRegisterSymbol) before running a module. */
typedef struct stc_rt_symbol {
  const char *name;
  void *address;
} stc_rt_symbol;

/* Every runtime entry point compiled code may call (static storage; later
 * parts of the runtime, such as site dispatch, add theirs here). */
const stc_rt_symbol *stc_rt_symbols(size_t *count);

/* ---- reserved: site dispatch (DESIGN.md section 5) goes below ---- */

#ifdef __cplusplus
}
#endif

#endif /* STC_RT_H */
