/* stc/tuner.h - the stack tuner (DESIGN.md section 6).
 *
 * Chooses among semantically equivalent candidates for one problem. The
 * tuner never runs a candidate itself: it calls the caller's trial runner
 * (validate, measure). It keeps decisions in memory and, for persistent
 * problems with a cache directory, on disk (stc/tuner_cache.h).
 *
 * Thread safety: one stc_tuner may be used from many threads at once. No
 * internal lock is held while a runner callback runs; a caller that finds
 * the same key or device being tuned gets the reference at once ("busy"). */
#ifndef STC_TUNER_H
#define STC_TUNER_H

#include "stc/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum stc_scope {
  STC_SCOPE_OPERATOR = 0,
  STC_SCOPE_GRAPH = 1,    /* a fused graph */
  STC_SCOPE_PIPELINE = 2, /* a whole pipeline: key includes lower-level fingerprint */
} stc_scope;

typedef enum stc_tune_mode {
  STC_MODE_EXPLORE = 0,
  STC_MODE_CACHE_ONLY = 1,
  STC_MODE_DISABLED = 2,
} stc_tune_mode;

/* "explore" / "cache-only" / "off"; parse accepts "disabled" too. */
const char *stc_tune_mode_str(stc_tune_mode mode);
stc_status stc_tune_mode_parse(const char *text, stc_tune_mode *out);

typedef struct stc_tolerance {
  double absolute;           /* default 1e-4 */
  double relative;           /* default 1e-3 */
  uint64_t readback_limit;   /* combined bytes compared, default 64 MiB */
  /* An allowance relative to the reference output's scale: an element
   * passes when |x - y| <= absolute + relative |y| + scaled * mean|y|, the
   * mean over the finite elements of the same output. Default 0 (the
   * per-element rule alone); a TF32 variant's tolerance sets it
   * (stc_tolerance_for_tf32). */
  double scaled;
  /* The bound a TF32 tensor-core variant is validated with (policy field
   * tolerance_tf32, default 1e-2; docs/gpu.md "TF32 tensor-core
   * variants"): relative = max(relative, tf32) and scaled = tf32. */
  double tf32;
} stc_tolerance;

/* The tolerance a TF32 variant must meet under `base` (the policy's):
 * base with relative raised to base->tf32 and scaled = base->tf32. */
void stc_tolerance_for_tf32(const stc_tolerance *base, stc_tolerance *out);

/* In which order exploration tries the candidates. */
typedef enum stc_tune_order {
  /* The caller's order (stc_tuner_select_ordered), most promising first;
   * candidates it does not list follow in index order. */
  STC_ORDER_PROMISING = 0,
  STC_ORDER_DECLARED = 1, /* index order, ignoring the caller's (the seed) */
} stc_tune_order;

/* "promising" / "declared". */
const char *stc_tune_order_str(stc_tune_order order);
stc_status stc_tune_order_parse(const char *text, stc_tune_order *out);

typedef struct stc_tuner_policy {
  stc_tune_mode mode;          /* default explore */
  bool require_validation;     /* default true */
  stc_tolerance tolerance;
  uint32_t warmups;            /* default 2 */
  uint32_t samples;            /* paired samples, odd, default 7 */
  uint32_t max_candidates;     /* default 32 (reference included) */
  uint64_t budget_ns;          /* soft budget per workload, default 30 s */
  double min_speedup;          /* default 1.05 (>= 1) */
  double max_relative_mad;     /* default 0.15 */
  bool has_workspace_limit;    /* default false */
  uint64_t workspace_limit;    /* bytes, used when has_workspace_limit */
  size_t capacity;             /* records kept, default 1024 */
  uint64_t ttl_seconds;        /* default 7 days */
  uint32_t max_parallel_tunes; /* per process, default 1 */
  uint32_t regression_pairs;   /* window, default 7 */
  double regression_ratio;     /* invalidate above, default 1.15 */
  /* Economics (DESIGN.md section 6, "Beyond the original engine"); the
   * seed's values are in brackets (stc_tuner_policy_init_seed). A ratio is
   * candidate/reference time; "the bar" is the lower of the best ratio so
   * far and 1/min_speedup, which a candidate must beat to win. */
  bool early_rejection;        /* racing, default true [false]: from its
                                  second timed run on, a candidate whose
                                  ratio (the best so far until 3 pairs, then
                                  their median) is beyond the bar stops */
  uint32_t race_pairs;         /* pairs after which race_margin judges,
                                  default 2 (>= 1) */
  double race_margin;          /* after k pairs: beyond the bar by more than
                                  race_margin / sqrt(k), default 0.25 (>= 0) */
  double race_warmup_factor;   /* before race_pairs pairs: beyond this many
                                  times the bar, default 8 (>= 1) */
  uint64_t race_min_ns;        /* racing judges only runs at least this
                                  long, default 1 ms */
  stc_tune_order order;        /* default promising [declared] */
  bool validate_first;         /* validation runs before the warm-ups and
                                  counts as the first, default true [false] */
  uint64_t target_ns;          /* no candidate but the first starts after
                                  this, default 1 s [0: none] */
  uint32_t budget_cut_samples; /* pairs a candidate cut by budget_ns needs to
                                  be scored anyway, default 3 [0: never] */
  double min_improvement;      /* a candidate replaces a winner other than
                                  the reference only when at least this much
                                  faster than it, default 1.03 [1: any
                                  faster] (>= 1): near-ties keep the earlier,
                                  more promising candidate, so cold tunes
                                  agree */
  uint32_t noise_retries;      /* a candidate whose pairs are too noisy is
                                  timed again on fresh pairs this many
                                  times before it is rejected, default 1
                                  [0] (at most 8) */
  /* The final duel (DESIGN.md section 6, "Beyond the original engine"):
   * candidates are compared by their ratios to the reference, each from its
   * own pairs, so two close fast candidates (a vendor BLAS and an OpenMP
   * variant within a few percent) are ordered by noise, and under load a
   * parallel candidate's ratio to a one-thread reference moves more than
   * the gap between them. After exploration, when the best other candidate
   * (scored, or raced out with a partial ratio) is within duel_margin of
   * the winner's ratio and itself min_speedup faster than the reference,
   * the two are timed head to head in duel_pairs pairs (alternating which
   * runs first): the later explored of the two replaces the earlier only
   * when their paired median shows it stably (max_relative_mad) at least
   * min_improvement faster; otherwise the earlier, more promising one is
   * kept, so repeated tunes agree. A noisy or cut-short duel keeps the
   * exploration's winner; a finalist whose run fails loses. The decision's
   * ratio, reference_ns and winner_ns stay the chosen candidate's own,
   * measured against the reference. */
  uint32_t duel_pairs;         /* pairs of the duel, 0 = no duel, else odd,
                                  default 7 [0] */
  double duel_margin;          /* the runner-up's ratio at most this many
                                  times the winner's, default 1.15 (>= 1) */
  double duel_rematch;         /* with no runner-up within duel_margin, the
                                  first explored candidate (the most
                                  promising by the order) is the finalist
                                  when its ratio is at most this many times
                                  the winner's (and min_speedup faster than
                                  the reference): one slowed burst of its
                                  exploration pairs does not hand the pick
                                  to a later candidate. Default 2 (a
                                  two-thread candidate at half speed);
                                  0 = no rematch, else >= 1 */
  uint64_t duel_limit_ns;      /* the duel starts no pair once it has run
                                  this long, nor past budget_ns; it may run
                                  past target_ns by this much (plus one
                                  pair), default 500 ms (> 0) */
  /* Disk records in a new process (DESIGN.md section 6, rule 5). */
  bool check_on_call;          /* a disk record's first use in a process is
                                  checked on the call it serves (the
                                  runner's check_on_call: the winner on the
                                  call's arguments, the reference on scratch
                                  copies), so the check costs one reference
                                  run, default true [false: the winner is
                                  validated on scratch state, then the call
                                  runs] */
  uint32_t check_at_call;      /* the call of a (site, workload) in a
                                  process on which a disk decision is
                                  checked (with check_on_call; read by the
                                  runtime's dispatcher, libstc_rt): 1 = the
                                  first call runs the winner and the check;
                                  n > 1 = the first n-1 calls run the
                                  reference alone (what the default
                                  lowering runs: no winner, no vendor
                                  library, no thread team) and the n-th
                                  checks, so a process that calls a site
                                  fewer than n times pays nothing for
                                  tuning, default 2 [1] (>= 1) */
  uint64_t start_cost_ns;      /* one-time cost of a disk decision's winner
                                  that starts a thread team (an OpenMP
                                  variant) or loads a library (a vendor
                                  BLAS variant), in a process where nothing
                                  paid it yet: the dispatcher keeps running
                                  the reference until the time the winner
                                  would have saved so far (reference time x
                                  (1 - the record's ratio)) reaches it, then
                                  checks and switches (rent or buy; CPU
                                  sites). Default 3 ms [0: switch at
                                  check_at_call] (at most 10 s) */
  bool trust_verified;         /* a verified disk record is used with no
                                  check at all when every candidate has a
                                  code identity (stc_candidate), which the
                                  key then includes, default false [false] */
  bool allow_tf32;             /* TF32 tensor-core variants (f32 results
                                  within tolerance.tf32, not f32-exact) are
                                  candidates; default false [false]:
                                  STC_TUNE_ALLOW_TF32=1 opts in */
} stc_tuner_policy;

/* Fills the defaults listed above. */
void stc_tuner_policy_init(stc_tuner_policy *policy);
/* Fills the seed engine's rules: the defaults above with exhaustive paired
 * timing of every candidate in index order, warm-ups before validation, no
 * target, no scoring of a budget-cut candidate, no duel and a disk record
 * checked by a separate validation (the bracketed values). */
void stc_tuner_policy_init_seed(stc_tuner_policy *policy);
/* STC_OK or STC_ERR_INVALID with the reason in err (may be NULL). */
stc_status stc_tuner_policy_validate(const stc_tuner_policy *policy,
                                     stc_error *err);
/* Sets one field from text, by its lower-case name with '_' or '-'
 * ("samples", "min_speedup", "budget_ms", "workspace_limit", "mode",
 * "early_rejection", "race_pairs", "race_margin", "race_warmup_factor",
 * "race_min_ms",
 * "order", "validate_first", "target_ms", "budget_cut_samples",
 * "noise_retries", "duel_pairs", "duel_margin", "duel_rematch",
 * "duel_limit_ms",
 * "check_on_call", "check_at_call", "start_cost_ms",
 * "trust_verified",
 * "allow_tf32", "tolerance_tf32", ...).
 * STC_ERR_NOT_FOUND for an unknown field, STC_ERR_INVALID for a bad value;
 * the policy is unchanged on error. */
stc_status stc_tuner_policy_set(stc_tuner_policy *policy, const char *field,
                                const char *value, stc_error *err);

/* What is being tuned. Strings are borrowed for the duration of a call. */
typedef struct stc_problem {
  stc_scope scope;
  const char *operation;         /* non-empty */
  const char *environment;       /* non-empty: also the device lane */
  const char *workload;          /* non-empty */
  const char *execution_context; /* may be NULL or "" */
  bool persistent;               /* may be cached on disk */
} stc_problem;

/* One candidate. Strings are borrowed for the duration of a call. */
typedef struct stc_candidate {
  const char *name;      /* non-empty, unique, at most 4096 bytes */
  const char *revision;  /* NULL means "1" */
  bool workspace_known;  /* false: never fits a set workspace limit */
  uint64_t workspace_bytes;
  bool eligible;
  /* What the candidate's code is, or NULL/"" when unknown: a hash of its
   * compiled code and, for a vendor-library candidate, the identity of the
   * library loaded (path, size, mtime, build id). Only trust_verified reads
   * it: the key then includes it, and a record is trusted only when every
   * candidate has one. */
  const char *code_identity;
} stc_candidate;

typedef enum stc_validation {
  STC_VALIDATION_PASSED = 0,
  STC_VALIDATION_UNSUPPORTED = 1, /* no numerical validator for this output */
} stc_validation;

/* The caller's trial runner. Both callbacks run with no tuner lock held and
 * may call stc_tuner_select again (such nested calls get the reference).
 * Return STC_OK, STC_ERR_REJECTED (e.g. wrong numerical result: the
 * candidate loses), STC_ERR_DEVICE (aborts the tune and quarantines the
 * environment's lane) or any other status (the candidate loses). message
 * (size message_size) may be filled with a reason. */
typedef struct stc_trial_runner {
  void *user;
  /* Compares candidate's outputs with reference's (candidate may equal
   * reference: a self-check of the reference). */
  stc_status (*validate)(void *user, size_t reference, size_t candidate,
                         const stc_tolerance *tolerance,
                         stc_validation *outcome, char *message,
                         size_t message_size);
  /* Runs one complete execution on isolated state; *elapsed_ns is the time
   * of completed work. */
  stc_status (*measure)(void *user, size_t candidate, uint64_t *elapsed_ns,
                        char *message, size_t message_size);
  /* Optional (NULL: a disk record is checked with validate, and the caller
   * then runs the call itself). The check of a disk record on the call it
   * serves: copies the call's writable state to scratch, runs reference on
   * the copies and candidate on the call's own arguments, and compares as
   * validate does. *served tells whether the call's arguments now hold a
   * result: candidate's when it returns STC_OK with PASSED, else the
   * reference's (a wrong or failed candidate's outputs are replaced). It
   * runs nothing (served false) when it returns UNSUPPORTED, or fails
   * before the candidate ran. The runner may be used for nothing else once
   * served. */
  stc_status (*check_on_call)(void *user, size_t reference, size_t candidate,
                              const stc_tolerance *tolerance,
                              stc_validation *outcome, bool *served,
                              char *message, size_t message_size);
} stc_trial_runner;

typedef enum stc_decision_source {
  STC_SOURCE_TUNED = 0,
  STC_SOURCE_MEMORY_CACHE,
  STC_SOURCE_DISK_CACHE,
  STC_SOURCE_CACHE_MISS,  /* cache-only mode, nothing cached: reference */
  STC_SOURCE_DISABLED,    /* mode disabled: reference */
  STC_SOURCE_BUSY,        /* key/device being tuned elsewhere: reference */
  STC_SOURCE_NESTED,      /* called from inside a tune on this thread */
  STC_SOURCE_VALIDATION_UNAVAILABLE,
  /* A disk record's winner failed its check on this call (check_on_call):
   * the call holds the reference's result, the record is deleted and the
   * winner banned for the key; nothing is remembered, so the next call
   * selects again (explores, or in cache-only mode keeps the reference). */
  STC_SOURCE_CHECK_FAILED,
} stc_decision_source;

/* "tuned", "memory-cache", "disk-cache", "cache-miss", "disabled", "busy",
 * "nested", "validation-unavailable", "check-failed". */
const char *stc_decision_source_str(stc_decision_source source);

/* A selection. name and cache_key are owned: free with stc_decision_clear. */
typedef struct stc_decision {
  size_t index;
  size_t reference_index;
  char *name;
  stc_decision_source source;
  bool verified; /* only after a validator reported PASSED */
  bool trusted;  /* a disk record used unchecked under trust_verified */
  /* The runner's check_on_call ran on this call: its arguments hold this
   * decision's result (the reference's for check-failed), so the caller
   * must not run it again. Also set on STC_ERR_DEVICE when the call's
   * arguments hold the reference's result (the rest of *out is empty). */
  bool served;
  bool has_ratio;
  double ratio;  /* winner / reference time */
  char *cache_key;
  /* STC_SOURCE_DISK_CACHE: when the record was written (Unix seconds), for
   * a caller that remembers the answer and must honour the record's TTL;
   * 0 for every other source. */
  int64_t record_created;
} stc_decision;

/* Frees a decision's strings and zeroes it; accepts NULL. */
void stc_decision_clear(stc_decision *decision);

typedef struct stc_candidate_report {
  char *name;
  size_t samples;
  bool has_ratio;
  double ratio;        /* median candidate/reference */
  double relative_mad; /* valid when has_ratio */
  bool verified;
  char *note;          /* why it won or lost */
  size_t trials;       /* runner calls it cost (its runs, validations and
                          the reference runs paired with it) */
} stc_candidate_report;

typedef struct stc_tune_report {
  char *operation;
  char *environment;
  char *workload;
  char *execution_context;
  char *winner;
  uint64_t elapsed_ns;
  bool budget_exhausted;
  stc_candidate_report *candidates; /* the reference, then exploration order */
  size_t num_candidates;
  size_t trials; /* runner calls of the whole tune */
} stc_tune_report;

/* Frees an array of reports returned by stc_tuner_reports; accepts NULL. */
void stc_tune_reports_free(stc_tune_report *reports, size_t count);

typedef struct stc_tuner_stats {
  uint64_t memory_hits;
  uint64_t disk_hits;
  uint64_t misses;
  uint64_t busy_fallbacks;
  uint64_t tunes;
  uint64_t cache_warnings;
  uint64_t invalidations;
  uint64_t device_failures;
  uint64_t disk_checks;  /* disk records checked in this process */
  uint64_t trusted_hits; /* disk records used unchecked (trust_verified) */
} stc_tuner_stats;

typedef struct stc_tuner stc_tuner;

/* Creates a tuner. The policy is copied and validated (STC_ERR_INVALID with
 * the reason in err). cache_directory NULL: memory only. A cache directory
 * that cannot be used is not an error: it is counted as a cache warning and
 * decisions stay in memory. The caller owns *out. */
stc_status stc_tuner_create(const stc_tuner_policy *policy,
                            const char *cache_directory, stc_tuner **out,
                            stc_error *err);
/* Destroys a tuner; accepts NULL. No select may be running. */
void stc_tuner_destroy(stc_tuner *tuner);

/* Copies the tuner's policy. */
void stc_tuner_get_policy(stc_tuner *tuner, stc_tuner_policy *out);

/* Selects a candidate (DESIGN.md section 6, rules 1-6). On STC_OK *out holds
 * an owned decision (stc_decision_clear). Errors: STC_ERR_INVALID (bad
 * request), STC_ERR_QUARANTINED, STC_ERR_DEVICE, or a reference that fails
 * validation/measurement; err (may be NULL) gets the message. */
stc_status stc_tuner_select(stc_tuner *tuner, const stc_problem *problem,
                            const stc_candidate *candidates, size_t count,
                            size_t reference, const stc_trial_runner *runner,
                            stc_decision *out, stc_error *err);

/* The caller's exploration order, asked for only when the tuner explores
 * (a decision from memory or disk never pays for it). */
typedef struct stc_exploration_order {
  void *user;
  /* Writes at most capacity candidate indices into order, most promising
   * first, each at most once (the reference may appear and is skipped: it
   * always runs first), and returns how many it wrote; unlisted candidates
   * follow in index order. Called at most once per select, with no tuner
   * lock held (it may call stc_tuner_win_counts). */
  size_t (*fill)(void *user, size_t *order, size_t capacity);
} stc_exploration_order;

/* stc_tuner_select with an exploration order (order may be NULL, as may
 * its fill: index order). Under the policy's order "declared" the order is
 * not asked for. The order never changes the cache key. STC_ERR_INVALID
 * when the order lists an index out of range or twice, or more than
 * capacity indices: nothing is remembered then. */
stc_status stc_tuner_select_ordered(stc_tuner *tuner, const stc_problem *problem,
                                    const stc_candidate *candidates,
                                    size_t count, size_t reference,
                                    const stc_exploration_order *order,
                                    const stc_trial_runner *runner,
                                    stc_decision *out, stc_error *err);

/* How many retained decisions one candidate name won. */
typedef struct stc_win_count {
  char *name; /* owned by the array */
  uint64_t wins;
} stc_win_count;

/* Counts, per winning candidate name, the fresh decisions of operations of
 * one kind: in memory, and on disk (the disk cache's records are read once
 * per tuner, on the first call; a key held in both counts once). An
 * operation's kind is its text after the last '|' (all of it when there is
 * none): the runtime names operations "<site>|<op name>", so the kind is
 * the op name. environment NULL counts every environment. *out (free with
 * stc_win_counts_free) is sorted by wins, most first, then by name; NULL
 * when *count is 0. */
stc_status stc_tuner_win_counts(stc_tuner *tuner, const char *kind,
                                const char *environment, stc_win_count **out,
                                size_t *count);
/* Frees an array from stc_tuner_win_counts; accepts NULL. */
void stc_win_counts_free(stc_win_count *counts, size_t count);

/* Removes the decision's record from memory and disk; with ban, a
 * non-reference winner is never selected again for that key. */
void stc_tuner_invalidate(stc_tuner *tuner, const stc_decision *decision,
                          bool ban);

/* Feeds one checked, positive paired comparison from a controlled replay.
 * STC_ERR_INVALID unless checked and both times > 0. When the window holds
 * regression_pairs ratios whose median exceeds regression_ratio, the
 * decision is invalidated with a ban and *invalidated (may be NULL) is set. */
stc_status stc_tuner_record_comparison(stc_tuner *tuner,
                                       const stc_decision *decision,
                                       uint64_t reference_ns,
                                       uint64_t selected_ns, bool checked,
                                       bool *invalidated);

/* Copies the counters. */
void stc_tuner_stats_get(stc_tuner *tuner, stc_tuner_stats *out);

/* Copies the retained reports (oldest first); free with
 * stc_tune_reports_free. *out is NULL when count is 0. */
stc_status stc_tuner_reports(stc_tuner *tuner, stc_tune_report **out,
                             size_t *count);

/* Hex digest of every retained fresh non-pipeline decision (and bypassed
 * keys); the key of a pipeline-scope problem includes it. out gets a NUL-
 * terminated string of at most 64 characters. */
void stc_tuner_lower_level_fingerprint(stc_tuner *tuner, char out[65]);

/* The text of the disk cache's latest fault ("symbolic link (not
 * followed)", "read-only (mode 0500); not written", ...) copied into buffer
 * (NUL-terminated, truncated to size); false, with buffer "", when there is
 * no disk cache or no fault yet. Thread-safe. */
bool stc_tuner_cache_fault(stc_tuner *tuner, char *buffer, size_t size);

typedef struct stc_remote_cache stc_remote_cache;

/* Puts a fleet tier (stc/tuner_remote.h) under the tuner's disk cache,
 * taking ownership of remote; false (remote closed) when the tuner has no
 * disk cache. Call before the tuner is shared between threads. From then on
 * a persistent problem's first selection also looks in remote, and explores
 * only when this process holds the key's lease there; otherwise it gets the
 * reference ("busy") and looks again on a later call. */
bool stc_tuner_set_remote(stc_tuner *tuner, stc_remote_cache *remote);

/* The text of the remote tier's latest fault, like stc_tuner_cache_fault;
 * false, with buffer "", when there is no remote tier or no fault yet. */
bool stc_tuner_remote_fault(stc_tuner *tuner, char *buffer, size_t size);

/* True while the calling thread is inside stc_tuner_select's exploration. */
bool stc_tuner_is_tuning(void);

/* Test hook: replaces the monotonic clock used for the budget (NULL
 * restores the real clock). */
void stc_tuner_set_clock(stc_tuner *tuner, uint64_t (*now_ns)(void *user),
                         void *user);

/* Called on the selecting thread when a select is about to explore (run
 * candidates), before its budget clock starts: its time counts in no
 * budget, target or trial (a JIT compiles the candidates there: stc-run's
 * lazy variants). NULL: none. */
void stc_tuner_set_explore_hook(stc_tuner *tuner, void (*hook)(void *user),
                                void *user);

#ifdef __cplusplus
}
#endif

#endif /* STC_TUNER_H */
