/* dispatch_internal.h - declarations shared by the site-dispatch files of
 * libstc_rt (dispatch.c, trial_cpu.c, controls.c) and their unit tests; not
 * installed, not part of the public contract (stc/rt.h, stc/rt_dispatch.h). */
#ifndef STC_DISPATCH_INTERNAL_H
#define STC_DISPATCH_INTERNAL_H

#include "stc/rt.h"
#include "stc/rt_dispatch.h"
#include "stc/tuner.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Ranks above this make a site unusable for tuning (the reference runs):
 * it bounds the per-call workload key, which lives on the stack. */
#define STC_RT__MAX_RANK 32

/* ---- controls.c ---- */

/* Prints "stc: warning: <message>" on stderr (the runtime's one voice). */
void stc_rt__warn(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* The process-wide tuner, created on first use from the configuration
 * (stc_rt_dispatch_configure, else the environment), and the configuration
 * it was created with (read-only once published). NULL when the tuner cannot
 * be created (out of memory): callers run the reference. */
stc_tuner *stc_rt__dispatch_tuner(const stc_rt_dispatch_config **config);

/* The configuration alone, fixed on first use like the tuner's (the two
 * are the same), without creating the tuner: STC_TUNE=off dispatch needs
 * no tuner, whose creation opens the cache directory. */
const stc_rt_dispatch_config *stc_rt__dispatch_config(void);

/* The tuner if it exists already (never creates it), else NULL. */
stc_tuner *stc_rt__tuner_if_started(void);

/* The tuner's explore hook (stc_tuner_set_explore_hook): calls the
 * application's stc_rt_set_explore_hook with the site being selected on
 * this thread. */
void stc_rt__explore_started(void *user);

/* The tuner's counters, zero while it does not exist. */
void stc_rt__tuner_stats(stc_tuner_stats *out);

/* Counts a cache fault the tuner reported during a call (stats before vs
 * after) and warns once per process. */
void stc_rt__note_cache_warnings(stc_tuner *tuner, uint64_t before);

/* Prints one report as a table on stream; site (may be NULL) adds the
 * runtime's reason to candidates it marked ineligible. */
void stc_rt__report_print(const stc_tune_report *report,
                          const stc_rt_site *site, FILE *stream);

/* Why variant `index` of site is ineligible at run time, or NULL. */
const char *stc_rt__ineligible_reason(const stc_rt_site *site, size_t index);
/* The tolerance `variant` is validated with: base (the policy's), or for a
 * TF32 variant (STC_RT_ELIGIBLE_TF32) stc_tolerance_for_tf32(base) written
 * into *storage. */
const stc_tolerance *stc_rt__variant_tolerance(const stc_rt_site *site, size_t variant,
                                               const stc_tolerance *base,
                                               stc_tolerance *storage);

/* NULL when BLAS variants are eligible, else "vendor BLAS not loaded:
 * <why>" (static storage; blas.c). Decided without loading the library:
 * eligible when the library dlopen would open is found (library_lookup.c),
 * until a load of it fails. */
const char *stc_rt__blas_ineligible_reason(void);
/* The identity of the vendor BLAS that BLAS variants run (the file found,
 * or the one loaded): "blas=<real path>;size=<bytes>;mtime=<s.ns>;
 * build-id=<hex|none>", or NULL when there is none or its file cannot be
 * named (static storage). Never loads the library. */
const char *stc_rt__blas_identity(void);
/* Loads the library found (once per process); call before a BLAS variant
 * runs. False when it does not load, lacks a routine, or is not the file
 * identified before (then BLAS variants are ineligible from now on, and a
 * warning is printed once); *why (may be NULL) gets the reason. */
bool stc_rt__blas_load(const char **why);
/* Test-only: the next BLAS call reads $STC_BLAS / $STC_BLAS_LIBRARY again.
 * Not safe while another thread is inside an entry point. */
void stc_rt__blas_reset(void);
/* Whether anything tried to load the vendor BLAS since the last reset
 * (STC_TUNE=off must not: loading OpenBLAS starts its threads; nor must a
 * warm start whose winners are not BLAS variants). dispatch.c's rent-or-buy
 * rule reads it: once true, a BLAS winner's start cost is paid. */
bool stc_rt__blas_attempted(void);
/* Test-only: whether anything looked for the vendor BLAS since the last
 * reset (STC_TUNE=off must not even do that). */
bool stc_rt__blas_probed(void);

/* ---- library_lookup.c ---- */

typedef enum stc_rt__lookup {
  STC_RT__LIBRARY_FOUND,     /* the file dlopen would open */
  STC_RT__LIBRARY_MISSING,   /* dlopen would fail to find one */
  STC_RT__LIBRARY_UNDECIDED, /* only loading it would tell */
} stc_rt__lookup;

/* Where dlopen(name) would find a shared library, without loading it: for
 * a name with a '/', that file; else the first loadable file on the
 * loader's search path (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH), in its
 * cache, then in the system directories. FOUND fills path (as found, to be
 * given to dlopen) and the file's stamp (stc_rt__library_stamp, into
 * identity); MISSING fills
 * why; UNDECIDED (an object of that soname is loaded already, glibc-hwcaps
 * cache entries, no search-path query) fills nothing. */
stc_rt__lookup stc_rt__library_find(const char *name, char *path,
                                    size_t path_size, char *identity,
                                    size_t identity_size, char *why,
                                    size_t why_size);
/* FOUND when path is a readable ELF shared object of this process's
 * machine, with identity "<real path>;size=<bytes>;mtime=<s.ns>;
 * build-id=<hex|none>" (the build id read from the file's notes); else
 * MISSING with "<path>: <reason>" in why. */
stc_rt__lookup stc_rt__library_examine(const char *path, char *identity,
                                       size_t identity_size, char *why,
                                       size_t why_size);
/* The same checks, with the cheap stamp "dev=<d>;ino=<i>;size=<bytes>;
 * mtime=<s.ns>" (one fstat) instead of the identity: whether the file
 * found is still the same one later, without reading its real path or
 * notes. */
stc_rt__lookup stc_rt__library_stamp(const char *path, char *stamp,
                                     size_t stamp_size, char *why,
                                     size_t why_size);

/* ---- trial_cpu.c: the CPU trial runner ---- */

typedef struct stc_rt__trial stc_rt__trial;

/* Outcome of running reference and candidate from the same pristine state
 * and comparing every written element. */
typedef struct stc_rt__comparison {
  bool supported;        /* false: over the read-back limit */
  uint64_t mismatches;   /* elements outside tolerance */
  double max_error;      /* largest |a - b| (inf for a non-finite mismatch) */
  uint64_t compared_bytes;
} stc_rt__comparison;

/* Creates a trial runner for one call of site whose argument descriptors
 * (C-interface layout) are descriptors[0..num_args-1]. A scratch buffer and
 * a reference-output buffer per OUTPUT/INOUT argument are allocated when
 * first needed (a cached decision whose winner is the reference runs
 * nothing; a check on the call needs only the reference's); the caller's
 * buffers are never written, except by trial_check_on_call. STC_ERR_NOMEM / STC_ERR_INVALID (bad
 * shapes) with a reason in message. The caller owns *out. */
stc_status stc_rt__trial_create(const stc_rt_site *site,
                                void *const *descriptors, stc_rt__trial **out,
                                char *message, size_t message_size);
/* Frees a trial runner; accepts NULL. */
void stc_rt__trial_destroy(stc_rt__trial *trial);
/* The tuner's view of the runner (validate + measure over variant indices). */
stc_trial_runner stc_rt__trial_runner(stc_rt__trial *trial);
/* Runs variant on scratch state restored from the caller's data; *ns is the
 * CLOCK_MONOTONIC time of the call alone. This and the two comparisons
 * below load the vendor BLAS before a BLAS variant runs, and return
 * STC_ERR_UNAVAILABLE, having run nothing, when it does not load. */
stc_status stc_rt__trial_measure(stc_rt__trial *trial, size_t variant,
                                 uint64_t *ns);
/* Runs reference (outputs kept after the first time) and candidate from the
 * same pristine state and compares their written elements. */
stc_status stc_rt__trial_compare(stc_rt__trial *trial, size_t reference,
                                 size_t candidate,
                                 const stc_tolerance *tolerance,
                                 stc_rt__comparison *out);
/* The check of a disk decision on the call being served: runs reference on
 * copies of the caller's (still pristine) state, then candidate on the
 * caller's own arguments, and compares their written elements. On a
 * mismatch the caller's written spans get the reference's result. Over the
 * read-back limit nothing runs (out->supported false). Afterwards the trial
 * runs nothing more (STC_ERR_INVALID). */
stc_status stc_rt__trial_check_on_call(stc_rt__trial *trial, size_t reference,
                                       size_t candidate,
                                       const stc_tolerance *tolerance,
                                       stc_rt__comparison *out);
/* Timed runs of trial_measure during which the process's threads waited
 * for a CPU (stc_rt__contended) and that were slower than the variant's
 * fastest uncontended run (or it had none), so were timed again or, out of
 * retakes, kept as the fastest of their attempts. */
size_t stc_rt__trial_contended(const stc_rt__trial *trial);
/* Whether a run of run_ns whose threads waited wait_ns for a CPU is
 * contended: wait_ns > run_ns / 20 + 50 us. */
bool stc_rt__contended(uint64_t wait_ns, uint64_t run_ns);
/* For tests: where the process's CPU wait comes from (NULL: the threads'
 * /proc/self/task/TID/schedstat; a source returning false: unknown, no run
 * is retaken) and the clock read at the start and the end of a timed run
 * (NULL: CLOCK_MONOTONIC). Not thread-safe: set them while no trial runs. */
void stc_rt__set_trial_sources(bool (*wait)(uint64_t *wait_ns),
                               uint64_t (*clock)(void));
/* True once check_on_call ran a variant on the caller's arguments. */
bool stc_rt__trial_served(const stc_rt__trial *trial);
/* Why check_on_call found the candidate wrong, or "" (never NULL). */
const char *stc_rt__trial_check_message(const stc_rt__trial *trial);
/* Calls variant's C-interface entry with descriptors (1..8 arguments). */
void stc_rt__call_variant(const stc_rt_site *site, size_t variant,
                          void *const *descriptors);
/* Bytes per element of an stc_rt_element, 0 when unknown. */
size_t stc_rt__element_size(uint32_t element);
/* "f32", "f64", ...; "?" when unknown. */
const char *stc_rt__element_name(uint32_t element);

/* ---- trial_gpu.c: the GPU trial runner (sites of --target=cuda) ---- */

/* True when the site's arguments are device memory (stc_rt_arg.memory). */
bool stc_rt__site_on_device(const stc_rt_site *site);
/* Appends the GPU's identity to an environment fingerprint:
 * ";gpu=<stc_rt_gpu_fingerprint>", or ";gpu=unknown" with *persistent
 * cleared when the device cannot be named. */
void stc_rt__gpu_environment(char *environment, size_t size, bool *persistent);

/* The same operations as the CPU runner's, on device memory: every
 * OUTPUT/INOUT argument gets a device scratch and a device reference-output
 * buffer over its span, restored from the caller's device data by
 * device-to-device copies outside the timed interval; times are CUDA events
 * around the completed call; comparisons read both spans back to the host.
 * A variant during which the GPU layer records a failure (a launch that
 * cannot start: too many threads or too much shared memory per block) is
 * STC_ERR_REJECTED with the failure in message; a sticky device error
 * (the lane quarantined) is STC_ERR_DEVICE. trial_cpu.c's stc_rt__trial_*
 * forward here for device sites. */
typedef struct stc_rt__gpu_trial stc_rt__gpu_trial;
stc_status stc_rt__gpu_trial_create(const stc_rt_site *site,
                                    void *const *descriptors,
                                    stc_rt__gpu_trial **out, char *message,
                                    size_t message_size);
void stc_rt__gpu_trial_destroy(stc_rt__gpu_trial *trial);
stc_status stc_rt__gpu_trial_measure(stc_rt__gpu_trial *trial, size_t variant,
                                     uint64_t *ns, char *message,
                                     size_t message_size);
stc_status stc_rt__gpu_trial_compare(stc_rt__gpu_trial *trial, size_t reference,
                                     size_t candidate,
                                     const stc_tolerance *tolerance,
                                     stc_rt__comparison *out, char *message,
                                     size_t message_size);
stc_status stc_rt__gpu_trial_check_on_call(stc_rt__gpu_trial *trial,
                                           size_t reference, size_t candidate,
                                           const stc_tolerance *tolerance,
                                           stc_rt__comparison *out,
                                           char *message, size_t message_size);
bool stc_rt__gpu_trial_served(const stc_rt__gpu_trial *trial);
/* Batched samples (runtime/trial_gpu.c): a variant's first measurement
 * times one call; later ones time stc_rt__gpu_batch_size(that call) calls
 * back to back and report the time per call. */
#define STC_GPU_SAMPLE_NS 200000u /* a sample lasts at least this long */
#define STC_GPU_MAX_BATCH 64u     /* calls per sample at most */
/* Calls per sample for calls of call_ns: ceil(sample_ns / call_ns), 1 for
 * calls at least sample_ns long, at most max_batch (0 ns: max_batch). */
uint32_t stc_rt__gpu_batch_size(uint64_t call_ns, uint64_t sample_ns,
                                uint32_t max_batch);
/* The batch size of variant's samples; 0 before its first measurement. */
uint32_t stc_rt__gpu_trial_batch(const stc_rt__gpu_trial *trial, size_t variant);

/* trial_cpu.c's span arithmetic and element comparison, shared with
 * trial_gpu.c. span: the addressed elements of a descriptor relative to its
 * offset, [lo, hi], and their count; false on a bad shape. compare: every
 * addressed element of a (rank, element) memref whose layout is
 * `descriptor`'s strides and offset, a = candidate and b = reference buffers
 * (positions relative to that offset). */
bool stc_rt__span(const void *descriptor, uint32_t rank, int64_t *lo,
                  int64_t *hi, uint64_t *elements);
void stc_rt__compare_elements(const int64_t *descriptor, uint32_t rank,
                              uint32_t element, uint64_t elements,
                              const char *a, const char *b,
                              const stc_tolerance *tolerance,
                              stc_rt__comparison *out);

/* ---- dispatch.c, test-only ---- */

/* Test-only: forgets every site's state (unpublishing static slots), counts
 * and the tuner, and the configuration, so the next call reads the
 * environment again (or takes a new stc_rt_dispatch_configure). No site call
 * may be running. */
void stc_rt__dispatch_reset(void);
/* Test-only: the clock the rent-or-buy rule times the reference's runs
 * with while a winner is pending (NULL: CLOCK_MONOTONIC). Set it while no
 * site call runs. */
void stc_rt__set_rent_clock(uint64_t (*clock)(void));
/* The tuner's workload string of a binary workload key (per argument: its
 * offset flag, sizes, strides; the site's ranks): "f32[32x32:32,1]+off ...".
 * Malloc'd (NULL without memory). In the header for its unit test. */
char *stc_rt__workload_text(const stc_rt_site *site, const int64_t *key);
/* controls.c's half of the reset (tuner, configuration, warnings). */
void stc_rt__controls_reset(void);

#endif /* STC_DISPATCH_INTERNAL_H */
