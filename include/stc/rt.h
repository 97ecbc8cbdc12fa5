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
#include "stc/rt_dispatch.h"
#include "stc/rt_region.h"
#include "stc/status.h"
#include "stc/tuner.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime's ABI version: bumped when a declaration here or in
 * stc/rt_region.h changes incompatibly (compiled code checks nothing at run
 * time today; hosts may). The library version is stc_version(). */
#define STC_RT_ABI_VERSION 1

/* Returns STC_RT_ABI_VERSION as compiled into the library. */
int stc_rt_abi_version(void);

/* ---- OpenMP ---- */

/* Caps how long the idle workers of a libomp spin after a parallel region
 * (KMP_BLOCKTIME: 1 ms instead of 200; on few cores a spinning pool takes a
 * core from the next vendor-BLAS call and from the tuner's timing) unless
 * the user chose a blocktime or an OMP_WAIT_POLICY. libomp_handle: what
 * dlopen returned for it (or RTLD_DEFAULT). Call after loading libomp
 * yourself and before its first parallel region; returns true when it set
 * the cap. libstc_rt does this for a libomp the program links, the AOT
 * start-up stub for the one it loads; the environment is never changed. */
bool stc_rt_cap_openmp_spin(void *libomp_handle);

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
 * change under a process): on x86 from CPUID (brand string, ISA features the
 * OS enables), the same text /proc/cpuinfo gives; elsewhere, or without a
 * brand string, from /proc/cpuinfo. Tags are read at each call. Returns
 * STC_OK, or STC_ERR_INVALID when buf is NULL or too small (1024 bytes always
 * hold the CPU part and the version; tags add their own length). */
stc_status stc_rt_environment(char *buf, size_t size);

/* True when the CPU identity could be read (CPUID with a brand string, or
 * /proc/cpuinfo readable with a model or feature list). Without a reliable
 * identity, tuning decisions must stay in memory only (DESIGN.md section
 * 5). */
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

/* ---- site dispatch (DESIGN.md section 5; ABI in stc/rt_dispatch.h) ----
 *
 * Compiled sites call stc_rt_site_enter (stc/rt_dispatch.h). The first call
 * of each (site, workload) tunes with one process-wide stack tuner
 * (stc/tuner.h), created on first use from the configuration below. Unless
 * an application calls stc_rt_dispatch_configure before the first site call,
 * the configuration is read once from the environment:
 *   STC_TUNE=explore|cache-only|off, STC_CACHE_DIR (default per
 *   stc_cache_default_directory), STC_TUNE_REPORT=1, STC_TUNE_CHECK_ALL=1,
 *   STC_TUNE_RECHECK_EVERY=N, and every other STC_TUNE_<FIELD> as the policy
 *   field <field> (stc_tuner_policy_set), e.g. STC_TUNE_SAMPLES=3,
 *   STC_TUNE_BUDGET_MS=500. STC_TUNE_BUILD_TAG/DRIVER_TAG/CONTEXT_TAG belong
 *   to the environment fingerprint. A bad value prints one warning and keeps
 *   the default (docs/runtime.md). */

typedef struct stc_rt_dispatch_config {
  stc_tuner_policy policy;     /* policy.mode is STC_TUNE */
  bool use_cache;              /* false: decisions stay in this process */
  char cache_directory[4096];  /* used when use_cache */
  bool print_reports;          /* STC_TUNE_REPORT: each tune's table on stderr */
  bool check_all;              /* STC_TUNE_CHECK_ALL: validate every variant
                                  at each site's first call, print a line each */
  uint64_t recheck_every;      /* STC_TUNE_RECHECK_EVERY: 0 = off; else every
                                  N-th call of a tuned workload replays
                                  reference and winner (static sites then keep
                                  their slot empty so calls reach the runtime) */
  bool warm_start;             /* STC_TUNE_WARM_START (default on): first
                                  calls may be answered by the warm-start
                                  index (README "Warm starts") */
} stc_rt_dispatch_config;

/* Fills the built-in defaults: tuner policy defaults, no disk cache, no
 * reports, no check-all, no recheck, the warm-start index on. */
void stc_rt_dispatch_config_init(stc_rt_dispatch_config *config);

/* Fills config from the environment variables listed above over the
 * defaults (the default cache directory included). Prints one warning on
 * stderr per bad value, which keeps its default. */
void stc_rt_dispatch_config_from_environment(stc_rt_dispatch_config *config);

/* Sets the configuration (copied) the tuner is created with. Must come
 * before the first site call: STC_ERR_INVALID (with the reason in err, may
 * be NULL) for an invalid policy or when dispatch has already started. */
stc_status stc_rt_dispatch_configure(const stc_rt_dispatch_config *config,
                                     stc_error *err);

typedef struct stc_rt_dispatch_stats {
  stc_tuner_stats tuner;        /* the tuner's counters (zero before first use) */
  uint64_t cached_calls;        /* stc_rt_site_enter calls served from a
                                   workload's published decision (a cheap
                                   count: threads racing on one workload may
                                   lose increments) */
  uint64_t selections;          /* calls that asked the tuner */
  uint64_t reference_fallbacks; /* calls that ran the reference because of a
                                   busy/nested tuner, an error or a bad site */
  uint64_t checked_variants;    /* STC_TUNE_CHECK_ALL: variants validated */
  uint64_t check_mismatches;    /* ... of which failed */
  uint64_t rechecks;            /* STC_TUNE_RECHECK_EVERY replays */
  uint64_t recheck_invalidations; /* winners dropped by a replay */
  uint64_t warm_start_hits;     /* first calls the warm-start index answered
                                   (README "Warm starts"): the reference ran
                                   without asking the tuner */
} stc_rt_dispatch_stats;

/* Copies the dispatch counters (never creates the tuner). */
void stc_rt_dispatch_stats_get(stc_rt_dispatch_stats *out);

/* Copies the tuner's retained reports, oldest first; free with
 * stc_tune_reports_free. *out NULL and *count 0 before the first tune. */
stc_status stc_rt_dispatch_reports(stc_tune_report **out, size_t *count);

/* Prints every retained report as a table on stream (stderr when NULL). */
void stc_rt_dispatch_reports_print(FILE *stream);

/* For a JIT that compiles variants on demand (stc-run's lazy variants):
 * hook(site, user) runs on the tuning thread when a select of site is about
 * to explore (time its candidates), before the tuning's budget clock starts,
 * so that compiling them there counts in no trial, budget or target; it
 * runs for no select served from memory or disk. NULL: none. Set it before
 * the first site call. */
typedef void (*stc_rt_explore_hook)(const stc_rt_site *site, void *user);
void stc_rt_set_explore_hook(stc_rt_explore_hook hook, void *user);

/* Drops every decision of site (memory and disk) and empties its static
 * slot, so the next call of each workload re-tunes; with ban, those winners
 * other than the reference are never selected again for their workloads.
 * STC_ERR_INVALID for NULL; STC_ERR_NOT_FOUND when the site holds none. */
stc_status stc_rt_site_invalidate(stc_rt_site *site, bool ban);

/* For a host that uses the fleet cache (STC_CACHE_REMOTE) itself, such as
 * stc-run's object tier: true for the first caller in the process when the
 * runtime has not warned about the remote tier yet; after that, neither the
 * runtime nor another caller warns about it again (README "Fleet cache
 * (Redis)": at most one remote warning per process). Thread-safe. */
bool stc_rt_claim_remote_warning(void);

#ifdef __cplusplus
}
#endif

#endif /* STC_RT_H */
