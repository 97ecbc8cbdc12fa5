/* The stack tuner's policy (include/stc/tuner.h, DESIGN.md section 6).
 *
 * In: a policy struct, or one "field = text" pair (from a command line or an
 * STC_TUNE_<FIELD> environment variable). Out: defaults, a validity verdict
 * with the reason, or the one field updated. Also the names of modes,
 * exploration orders and decision sources. Every field has one check
 * (check_field) that serves both whole-policy validation and single-field
 * assignment. */
#include "stc/tuner.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Limits that keep a policy from asking for absurd allocations: the tuner
 * keeps `samples` pairs and `regression_pairs` ratios per key. */
#define STC_POLICY_MAX_SAMPLES 100001u
/* Re-timing a noisy candidate more often only buys more noise. */
#define STC_POLICY_MAX_NOISE_RETRIES 8u
#define STC_POLICY_MAX_REGRESSION_PAIRS 4096u

const char *stc_tune_mode_str(stc_tune_mode mode) {
  switch (mode) {
  case STC_MODE_EXPLORE: return "explore";
  case STC_MODE_CACHE_ONLY: return "cache-only";
  case STC_MODE_DISABLED: return "off";
  }
  return "unknown";
}

/* ASCII only, without the locale's table: the runtime parses STC_TUNE on
 * a process's first site call, where touching that table was a page
 * fault. */
static char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Compares names ignoring ASCII case and treating '-' and '_' alike, so
 * "cache-only", "CACHE_ONLY" and "max-candidates" all match. */
static bool name_equal(const char *a, const char *b) {
  for (;; a++, b++) {
    char x = ascii_lower(*a), y = ascii_lower(*b);
    if (x == '-')
      x = '_';
    if (y == '-')
      y = '_';
    if (x != y)
      return false;
    if (!x)
      return true;
  }
}

stc_status stc_tune_mode_parse(const char *text, stc_tune_mode *out) {
  static const struct {
    const char *name;
    stc_tune_mode mode;
  } names[] = {
      {"explore", STC_MODE_EXPLORE},   {"cache-only", STC_MODE_CACHE_ONLY},
      {"off", STC_MODE_DISABLED},      {"disabled", STC_MODE_DISABLED},
  };
  if (!text || !out)
    return STC_ERR_INVALID;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (name_equal(text, names[i].name)) {
      *out = names[i].mode;
      return STC_OK;
    }
  }
  return STC_ERR_INVALID;
}

const char *stc_tune_order_str(stc_tune_order order) {
  switch (order) {
  case STC_ORDER_PROMISING: return "promising";
  case STC_ORDER_DECLARED: return "declared";
  }
  return "unknown";
}

stc_status stc_tune_order_parse(const char *text, stc_tune_order *out) {
  if (!text || !out)
    return STC_ERR_INVALID;
  if (name_equal(text, "promising")) {
    *out = STC_ORDER_PROMISING;
    return STC_OK;
  }
  if (name_equal(text, "declared")) {
    *out = STC_ORDER_DECLARED;
    return STC_OK;
  }
  return STC_ERR_INVALID;
}

const char *stc_decision_source_str(stc_decision_source source) {
  switch (source) {
  case STC_SOURCE_TUNED: return "tuned";
  case STC_SOURCE_MEMORY_CACHE: return "memory-cache";
  case STC_SOURCE_DISK_CACHE: return "disk-cache";
  case STC_SOURCE_CACHE_MISS: return "cache-miss";
  case STC_SOURCE_DISABLED: return "disabled";
  case STC_SOURCE_BUSY: return "busy";
  case STC_SOURCE_NESTED: return "nested";
  case STC_SOURCE_VALIDATION_UNAVAILABLE: return "validation-unavailable";
  case STC_SOURCE_CHECK_FAILED: return "check-failed";
  }
  return "unknown";
}

void stc_tuner_policy_init(stc_tuner_policy *policy) {
  if (!policy)
    return;
  memset(policy, 0, sizeof *policy);
  policy->mode = STC_MODE_EXPLORE;
  policy->require_validation = true;
  policy->tolerance.absolute = 1e-4;
  policy->tolerance.relative = 1e-3;
  policy->tolerance.readback_limit = UINT64_C(64) << 20;
  /* TF32 rounds each product's inputs to 11 significant bits (u = 2^-11
   * with round-to-nearest): a K-term dot product's error is about
   * u sqrt(K) times its terms' magnitude, which is also the scale of the
   * output, so relative to mean|y| the error is about u (2^-11 = 4.9e-4)
   * whatever K; 1e-2 is about 2x the largest error measured on the H200
   * for cuBLAS's own TF32 mode and for ours (4.8e-3, docs/gpu.md) and
   * still rejects a wrong kernel, whose errors are of the order of the
   * output itself. */
  policy->tolerance.tf32 = 1e-2;
  policy->allow_tf32 = false;
  policy->warmups = 2;
  policy->samples = 7;
  policy->max_candidates = 32;
  policy->budget_ns = UINT64_C(30) * 1000000000u;
  policy->min_speedup = 1.05;
  policy->max_relative_mad = 0.15;
  policy->has_workspace_limit = false;
  policy->workspace_limit = 0;
  policy->capacity = 1024;
  policy->ttl_seconds = UINT64_C(7) * 24 * 3600;
  policy->max_parallel_tunes = 1;
  policy->regression_pairs = 7;
  policy->regression_ratio = 1.15;
  /* Economics: first-execution tuning must cost well under a second per
   * site (DESIGN.md section 6), so a clearly slower candidate stops being
   * timed, the most promising go first and exploration stops starting
   * candidates after the target. */
  policy->early_rejection = true;
  /* Judged on pairs only from the second on, on the better of the two, and
   * on an unpaired warm-up run only when 8x beyond the bar: a vendor BLAS's
   * or an OpenMP variant's first runs start thread pools, and at 2 pairs /
   * 3x they raced out candidates the exhaustive search found 1.5-2.5x faster
   * than the reference (bench/regret.sh on a quiet machine: mnist_mlp_l1,
   * bert_large_scores, llama7b_proj). Scalar schedules, 10-300x slower,
   * still stop at their first timed run. */
  policy->race_pairs = 2;
  policy->race_margin = 0.25;
  policy->race_warmup_factor = 8.0;
  policy->race_min_ns = UINT64_C(1000000);
  policy->order = STC_ORDER_PROMISING;
  policy->validate_first = true;
  policy->target_ns = UINT64_C(1000000000);
  policy->budget_cut_samples = 3;
  policy->min_improvement = 1.03;
  /* Short runs (a BLAS matvec of tens of microseconds) are at the mercy of
   * one preemption: a candidate found too noisy is timed once more, on
   * fresh pairs, before it is rejected (bench/regret.sh lost a 4.8x faster
   * matvec_blas to one noisy set of 7 pairs). */
  policy->noise_retries = 1;
  /* The final duel: 7 pairs of the two fastest candidates cost 14 of
   * their runs and no reference run. The margin: on the shared 2-core
   * machine one candidate's ratio to the reference moved by 5-15% between
   * cold runs of the same program (bench/regret.sh, matmul_blas on
   * mm_1024 and bert_base_ffn1, pick vs oracle run, with other builds on
   * one core), so a runner-up within 15% of the winner may be the faster.
   * 500 ms: 7 pairs of two 1024^3 matmuls at 30 ms each, or the 3 pairs a
   * duel needs of two at 80 ms; the tune may end that much after the
   * target. */
  policy->duel_pairs = 7;
  policy->duel_margin = 1.15;
  policy->duel_limit_ns = UINT64_C(500000000);
  /* The rematch: in 2 of 16 cold tunes of mm_1024 / bert_base_ffn1 (quiet
   * 2-core VM) matmul_blas, explored first, ran its 7 exploration pairs at
   * half speed (ratio 0.86-0.90 instead of 0.46-0.50, relative MAD 0.007:
   * a steady slowdown, not noise) and matmul_parallel_reg8x32_vec, timed
   * after it at its usual 0.51, won by 1.7x with no duel; a standalone
   * sgemm alternating with 20 ms of one-thread work took 10-16 ms per
   * process where back to back it took 9.7-11 (waking the sleeping worker's
   * vCPU). 2: a two-thread candidate at half speed. */
  policy->duel_rematch = 2.0;
  /* A new process checks a disk decision on the call it serves: one
   * reference run, not reference + winner + the call (whole-process tuned
   * vs default was 0.94x (mlp) and 0.67x (convnet) with the separate
   * validation). Trusting records unchecked is opt-in. */
  policy->check_on_call = true;
  /* ... and on its second call in the process: the first runs the
   * reference alone, so a process that calls a site once costs what the
   * default lowering costs (whole-process warm tuned/default was 1.30x on
   * hot_cold, whose reference is the check's 14.6 ms, and 1.24x on the
   * transformer with the check on the first call). */
  policy->check_at_call = 2;
  /* Measured on the 2-core development machine (docs/aot.md, "Rent or
   * buy"): a process's first OpenMP parallel region adds 1.9 ms of CPU and
   * 2.1 ms of wall time (libomp's initialization and thread start; the
   * workers' spin after it, in a longer process, more), loading OpenBLAS
   * and its first sgemm 3.4 ms of CPU and 3.2 ms of wall time. */
  policy->start_cost_ns = UINT64_C(3000000);
  policy->trust_verified = false;
}

void stc_tuner_policy_init_seed(stc_tuner_policy *policy) {
  if (!policy)
    return;
  stc_tuner_policy_init(policy);
  policy->early_rejection = false;
  policy->order = STC_ORDER_DECLARED;
  policy->validate_first = false;
  policy->target_ns = 0;
  policy->budget_cut_samples = 0;
  policy->min_improvement = 1.0;
  policy->noise_retries = 0;
  policy->duel_pairs = 0;
  policy->check_on_call = false;
  policy->check_at_call = 1;
  policy->start_cost_ns = 0;
}

/* One entry per settable name. Several names may share a field (aliases and
 * unit variants such as budget_ms / budget_ns). */
typedef enum policy_field {
  FIELD_MODE,
  FIELD_REQUIRE_VALIDATION,
  FIELD_TOLERANCE_ABSOLUTE,
  FIELD_TOLERANCE_RELATIVE,
  FIELD_READBACK_LIMIT,
  FIELD_WARMUPS,
  FIELD_SAMPLES,
  FIELD_MAX_CANDIDATES,
  FIELD_BUDGET,
  FIELD_MIN_SPEEDUP,
  FIELD_MAX_RELATIVE_MAD,
  FIELD_WORKSPACE_LIMIT,
  FIELD_CAPACITY,
  FIELD_TTL,
  FIELD_MAX_PARALLEL_TUNES,
  FIELD_REGRESSION_PAIRS,
  FIELD_REGRESSION_RATIO,
  FIELD_EARLY_REJECTION,
  FIELD_RACE_PAIRS,
  FIELD_RACE_MARGIN,
  FIELD_RACE_WARMUP_FACTOR,
  FIELD_RACE_MIN,
  FIELD_ORDER,
  FIELD_VALIDATE_FIRST,
  FIELD_TARGET,
  FIELD_BUDGET_CUT_SAMPLES,
  FIELD_MIN_IMPROVEMENT,
  FIELD_NOISE_RETRIES,
  FIELD_DUEL_PAIRS,
  FIELD_DUEL_MARGIN,
  FIELD_DUEL_REMATCH,
  FIELD_DUEL_LIMIT,
  FIELD_CHECK_ON_CALL,
  FIELD_CHECK_AT_CALL,
  FIELD_START_COST,
  FIELD_TRUST_VERIFIED,
  FIELD_ALLOW_TF32,
  FIELD_TOLERANCE_TF32,
  FIELD_COUNT_,
} policy_field;

/* How a name's text is read. */
typedef enum value_kind {
  VALUE_MODE,
  VALUE_ORDER,
  VALUE_BOOL,
  VALUE_DOUBLE,
  VALUE_COUNT,     /* unsigned integer */
  VALUE_BYTES,     /* unsigned integer with optional K/M/G[i][B] suffix */
  VALUE_WORKSPACE, /* bytes, or none/off/unlimited */
} value_kind;

static const struct {
  const char *name;
  policy_field field;
  value_kind kind;
  uint64_t scale; /* multiplies integer values (budget units) */
} policy_names[] = {
    {"mode", FIELD_MODE, VALUE_MODE, 1},
    {"require_validation", FIELD_REQUIRE_VALIDATION, VALUE_BOOL, 1},
    {"tolerance_absolute", FIELD_TOLERANCE_ABSOLUTE, VALUE_DOUBLE, 1},
    {"absolute_tolerance", FIELD_TOLERANCE_ABSOLUTE, VALUE_DOUBLE, 1},
    {"tolerance_relative", FIELD_TOLERANCE_RELATIVE, VALUE_DOUBLE, 1},
    {"relative_tolerance", FIELD_TOLERANCE_RELATIVE, VALUE_DOUBLE, 1},
    {"readback_limit", FIELD_READBACK_LIMIT, VALUE_BYTES, 1},
    {"tolerance_readback_limit", FIELD_READBACK_LIMIT, VALUE_BYTES, 1},
    {"warmups", FIELD_WARMUPS, VALUE_COUNT, 1},
    {"samples", FIELD_SAMPLES, VALUE_COUNT, 1},
    {"max_candidates", FIELD_MAX_CANDIDATES, VALUE_COUNT, 1},
    {"budget_ns", FIELD_BUDGET, VALUE_COUNT, 1},
    {"budget_us", FIELD_BUDGET, VALUE_COUNT, 1000},
    {"budget_ms", FIELD_BUDGET, VALUE_COUNT, 1000000},
    {"budget_s", FIELD_BUDGET, VALUE_COUNT, 1000000000},
    {"min_speedup", FIELD_MIN_SPEEDUP, VALUE_DOUBLE, 1},
    {"max_relative_mad", FIELD_MAX_RELATIVE_MAD, VALUE_DOUBLE, 1},
    {"workspace_limit", FIELD_WORKSPACE_LIMIT, VALUE_WORKSPACE, 1},
    {"capacity", FIELD_CAPACITY, VALUE_COUNT, 1},
    {"ttl_seconds", FIELD_TTL, VALUE_COUNT, 1},
    {"ttl", FIELD_TTL, VALUE_COUNT, 1},
    {"max_parallel_tunes", FIELD_MAX_PARALLEL_TUNES, VALUE_COUNT, 1},
    {"regression_pairs", FIELD_REGRESSION_PAIRS, VALUE_COUNT, 1},
    {"regression_ratio", FIELD_REGRESSION_RATIO, VALUE_DOUBLE, 1},
    {"early_rejection", FIELD_EARLY_REJECTION, VALUE_BOOL, 1},
    {"race_pairs", FIELD_RACE_PAIRS, VALUE_COUNT, 1},
    {"race_margin", FIELD_RACE_MARGIN, VALUE_DOUBLE, 1},
    {"race_warmup_factor", FIELD_RACE_WARMUP_FACTOR, VALUE_DOUBLE, 1},
    {"race_min_ns", FIELD_RACE_MIN, VALUE_COUNT, 1},
    {"race_min_us", FIELD_RACE_MIN, VALUE_COUNT, 1000},
    {"race_min_ms", FIELD_RACE_MIN, VALUE_COUNT, 1000000},
    {"order", FIELD_ORDER, VALUE_ORDER, 1},
    {"validate_first", FIELD_VALIDATE_FIRST, VALUE_BOOL, 1},
    {"target_ns", FIELD_TARGET, VALUE_COUNT, 1},
    {"target_us", FIELD_TARGET, VALUE_COUNT, 1000},
    {"target_ms", FIELD_TARGET, VALUE_COUNT, 1000000},
    {"target_s", FIELD_TARGET, VALUE_COUNT, 1000000000},
    {"budget_cut_samples", FIELD_BUDGET_CUT_SAMPLES, VALUE_COUNT, 1},
    {"min_improvement", FIELD_MIN_IMPROVEMENT, VALUE_DOUBLE, 1},
    {"noise_retries", FIELD_NOISE_RETRIES, VALUE_COUNT, 1},
    {"duel_pairs", FIELD_DUEL_PAIRS, VALUE_COUNT, 1},
    {"duel_margin", FIELD_DUEL_MARGIN, VALUE_DOUBLE, 1},
    {"duel_rematch", FIELD_DUEL_REMATCH, VALUE_DOUBLE, 1},
    {"duel_limit_ns", FIELD_DUEL_LIMIT, VALUE_COUNT, 1},
    {"duel_limit_us", FIELD_DUEL_LIMIT, VALUE_COUNT, 1000},
    {"duel_limit_ms", FIELD_DUEL_LIMIT, VALUE_COUNT, 1000000},
    {"duel_limit_s", FIELD_DUEL_LIMIT, VALUE_COUNT, 1000000000},
    {"check_on_call", FIELD_CHECK_ON_CALL, VALUE_BOOL, 1},
    {"check_at_call", FIELD_CHECK_AT_CALL, VALUE_COUNT, 1},
    {"start_cost_ns", FIELD_START_COST, VALUE_COUNT, 1},
    {"start_cost_us", FIELD_START_COST, VALUE_COUNT, 1000},
    {"start_cost_ms", FIELD_START_COST, VALUE_COUNT, 1000000},
    {"trust_verified", FIELD_TRUST_VERIFIED, VALUE_BOOL, 1},
    {"allow_tf32", FIELD_ALLOW_TF32, VALUE_BOOL, 1},
    {"tolerance_tf32", FIELD_TOLERANCE_TF32, VALUE_DOUBLE, 1},
    {"tf32_tolerance", FIELD_TOLERANCE_TF32, VALUE_DOUBLE, 1},
};

/* The one check per field; validate runs all of them, set runs the one it
 * changed so that an assignment is judged on its own value. */
static stc_status check_field(const stc_tuner_policy *p, policy_field field,
                              stc_error *err) {
  switch (field) {
  case FIELD_MODE:
    if (p->mode != STC_MODE_EXPLORE && p->mode != STC_MODE_CACHE_ONLY &&
        p->mode != STC_MODE_DISABLED)
      goto bad_mode;
    return STC_OK;
  case FIELD_REQUIRE_VALIDATION:
    return STC_OK;
  case FIELD_TOLERANCE_ABSOLUTE:
    if (!(isfinite(p->tolerance.absolute) && p->tolerance.absolute >= 0)) {
      stc_error_set(err, NULL, 0, 0,
                    "tolerance_absolute must be a finite number >= 0");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_TOLERANCE_RELATIVE:
    if (!(isfinite(p->tolerance.relative) && p->tolerance.relative >= 0)) {
      stc_error_set(err, NULL, 0, 0,
                    "tolerance_relative must be a finite number >= 0");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_TOLERANCE_TF32:
    /* Above 0.5 a TF32 "result" could be anything of the right size. */
    if (!(isfinite(p->tolerance.tf32) && p->tolerance.tf32 > 0 &&
          p->tolerance.tf32 <= 0.5)) {
      stc_error_set(err, NULL, 0, 0,
                    "tolerance_tf32 must be a number > 0 and <= 0.5");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_READBACK_LIMIT:
    /* A validator that may read nothing could never pass. */
    if (p->tolerance.readback_limit == 0) {
      stc_error_set(err, NULL, 0, 0, "readback_limit must be > 0 bytes");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_WARMUPS:
    return STC_OK;
  case FIELD_SAMPLES:
    /* An odd count makes the median one measured pair, not an average. */
    if (p->samples == 0 || p->samples % 2 == 0 ||
        p->samples > STC_POLICY_MAX_SAMPLES) {
      stc_error_set(err, NULL, 0, 0,
                    "samples must be odd and between 1 and %u (got %u)",
                    STC_POLICY_MAX_SAMPLES, p->samples);
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_MAX_CANDIDATES:
    if (p->max_candidates < 1) {
      stc_error_set(err, NULL, 0, 0,
                    "max_candidates must be >= 1 (the reference counts)");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_BUDGET:
    if (p->budget_ns == 0) {
      stc_error_set(err, NULL, 0, 0, "budget must be > 0");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_MIN_SPEEDUP:
    if (!(isfinite(p->min_speedup) && p->min_speedup >= 1.0)) {
      stc_error_set(err, NULL, 0, 0, "min_speedup must be a finite number >= 1");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_MIN_IMPROVEMENT:
    if (!(isfinite(p->min_improvement) && p->min_improvement >= 1.0)) {
      stc_error_set(err, NULL, 0, 0, "min_improvement must be a finite number >= 1");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_NOISE_RETRIES:
    if (p->noise_retries > STC_POLICY_MAX_NOISE_RETRIES) {
      stc_error_set(err, NULL, 0, 0, "noise_retries must be at most %u (got %u)",
                    STC_POLICY_MAX_NOISE_RETRIES, p->noise_retries);
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_DUEL_PAIRS:
    /* Odd, like samples: the median is one measured pair. */
    if (p->duel_pairs > STC_POLICY_MAX_SAMPLES ||
        (p->duel_pairs != 0 && p->duel_pairs % 2 == 0)) {
      stc_error_set(err, NULL, 0, 0,
                    "duel_pairs must be 0 (no duel) or odd and at most %u "
                    "(got %u)",
                    STC_POLICY_MAX_SAMPLES, p->duel_pairs);
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_DUEL_MARGIN:
    if (!(isfinite(p->duel_margin) && p->duel_margin >= 1.0)) {
      stc_error_set(err, NULL, 0, 0,
                    "duel_margin must be a finite number >= 1 (the "
                    "runner-up's ratio to the reference over the winner's)");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_DUEL_REMATCH:
    if (!(isfinite(p->duel_rematch) &&
          (p->duel_rematch == 0.0 || p->duel_rematch >= 1.0))) {
      stc_error_set(err, NULL, 0, 0,
                    "duel_rematch must be 0 (no rematch) or a finite number "
                    ">= 1 (the first explored candidate's ratio over the "
                    "winner's)");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_DUEL_LIMIT:
    if (p->duel_limit_ns == 0) {
      stc_error_set(err, NULL, 0, 0,
                    "duel_limit must be > 0 (duel_pairs=0 turns the duel "
                    "off)");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_CHECK_AT_CALL:
    if (p->check_at_call < 1) {
      stc_error_set(err, NULL, 0, 0,
                    "check_at_call must be >= 1 (1: a disk decision is "
                    "checked on its first call; n: the first n-1 calls run "
                    "the reference and the n-th checks) (got %u)",
                    p->check_at_call);
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_START_COST:
    if (p->start_cost_ns > UINT64_C(10000000000)) {
      stc_error_set(err, NULL, 0, 0,
                    "start_cost must be at most 10 s (0: a winner that "
                    "starts threads or loads a library switches at "
                    "check_at_call) (got %" PRIu64 " ns)",
                    p->start_cost_ns);
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_MAX_RELATIVE_MAD:
    if (!(isfinite(p->max_relative_mad) && p->max_relative_mad > 0)) {
      stc_error_set(err, NULL, 0, 0,
                    "max_relative_mad must be a finite number > 0");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_WORKSPACE_LIMIT:
    return STC_OK;
  case FIELD_CAPACITY:
    if (p->capacity == 0) {
      stc_error_set(err, NULL, 0, 0, "capacity must be >= 1 record");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_TTL:
    if (p->ttl_seconds == 0) {
      stc_error_set(err, NULL, 0, 0, "ttl_seconds must be >= 1");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_MAX_PARALLEL_TUNES:
    if (p->max_parallel_tunes == 0) {
      stc_error_set(err, NULL, 0, 0, "max_parallel_tunes must be >= 1");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_REGRESSION_PAIRS:
    if (p->regression_pairs == 0 ||
        p->regression_pairs > STC_POLICY_MAX_REGRESSION_PAIRS) {
      stc_error_set(err, NULL, 0, 0,
                    "regression_pairs must be between 1 and %u (got %u)",
                    STC_POLICY_MAX_REGRESSION_PAIRS, p->regression_pairs);
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_REGRESSION_RATIO:
    if (!(isfinite(p->regression_ratio) && p->regression_ratio > 1.0)) {
      stc_error_set(err, NULL, 0, 0,
                    "regression_ratio must be a finite number > 1");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_EARLY_REJECTION:
  case FIELD_VALIDATE_FIRST:
  case FIELD_CHECK_ON_CALL:
  case FIELD_TRUST_VERIFIED:
  case FIELD_ALLOW_TF32:
  case FIELD_TARGET: /* 0: no target */
  case FIELD_RACE_MIN: /* 0: judge every run */
    return STC_OK;
  case FIELD_RACE_PAIRS:
    /* More than samples is allowed: racing then never rejects. */
    if (p->race_pairs == 0 || p->race_pairs > STC_POLICY_MAX_SAMPLES) {
      stc_error_set(err, NULL, 0, 0,
                    "race_pairs must be between 1 and %u (got %u)",
                    STC_POLICY_MAX_SAMPLES, p->race_pairs);
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_RACE_MARGIN:
    /* A negative margin would reject candidates that can still win. */
    if (!(isfinite(p->race_margin) && p->race_margin >= 0)) {
      stc_error_set(err, NULL, 0, 0, "race_margin must be a finite number >= 0");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_RACE_WARMUP_FACTOR:
    if (!(isfinite(p->race_warmup_factor) && p->race_warmup_factor >= 1.0)) {
      stc_error_set(err, NULL, 0, 0,
                    "race_warmup_factor must be a finite number >= 1");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_ORDER:
    if (p->order != STC_ORDER_PROMISING && p->order != STC_ORDER_DECLARED) {
      stc_error_set(err, NULL, 0, 0, "order must be promising or declared");
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_BUDGET_CUT_SAMPLES:
    /* More than samples is allowed: a cut candidate then never scores. */
    if (p->budget_cut_samples > STC_POLICY_MAX_SAMPLES) {
      stc_error_set(err, NULL, 0, 0,
                    "budget_cut_samples must be at most %u (got %u)",
                    STC_POLICY_MAX_SAMPLES, p->budget_cut_samples);
      return STC_ERR_INVALID;
    }
    return STC_OK;
  case FIELD_COUNT_:
    break;
  }
bad_mode:
  stc_error_set(err, NULL, 0, 0, "mode must be explore, cache-only or off");
  return STC_ERR_INVALID;
}

stc_status stc_tuner_policy_validate(const stc_tuner_policy *policy,
                                     stc_error *err) {
  if (!policy) {
    stc_error_set(err, NULL, 0, 0, "no policy");
    return STC_ERR_INVALID;
  }
  for (int field = 0; field < FIELD_COUNT_; field++) {
    stc_status status = check_field(policy, (policy_field)field, err);
    if (status != STC_OK)
      return status;
  }
  return STC_OK;
}

/* Copies text without surrounding white space into buf; false when it does
 * not fit or is empty. */
static bool trimmed(const char *text, char *buf, size_t size) {
  while (isspace((unsigned char)*text))
    text++;
  size_t length = strlen(text);
  while (length > 0 && isspace((unsigned char)text[length - 1]))
    length--;
  if (length == 0 || length >= size)
    return false;
  memcpy(buf, text, length);
  buf[length] = 0;
  return true;
}

/* Reads a plain unsigned decimal integer; the rest of the text is returned
 * in *rest (the caller decides what a suffix may be). */
static bool parse_u64_prefix(const char *text, uint64_t *out, const char **rest) {
  if (!isdigit((unsigned char)*text))
    return false; /* rejects signs, which strtoull would silently wrap */
  errno = 0;
  char *end;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno == ERANGE)
    return false;
  *out = value;
  *rest = end;
  return true;
}

static bool multiply(uint64_t value, uint64_t scale, uint64_t *out) {
  if (scale != 0 && value > UINT64_MAX / scale)
    return false;
  *out = value * scale;
  return true;
}

static bool parse_bytes(const char *text, uint64_t *out) {
  static const struct {
    const char *suffix;
    unsigned shift;
  } suffixes[] = {
      {"", 0},     {"b", 0},     {"k", 10},   {"kb", 10},  {"kib", 10},
      {"m", 20},   {"mb", 20},   {"mib", 20}, {"g", 30},   {"gb", 30},
      {"gib", 30}, {"t", 40},    {"tb", 40},  {"tib", 40},
  };
  uint64_t value;
  const char *rest;
  if (!parse_u64_prefix(text, &value, &rest))
    return false;
  while (*rest == ' ')
    rest++;
  for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
    if (strcasecmp(rest, suffixes[i].suffix) == 0)
      return multiply(value, UINT64_C(1) << suffixes[i].shift, out);
  return false;
}

static bool parse_bool(const char *text, bool *out) {
  static const char *const yes[] = {"1", "true", "yes", "on"};
  static const char *const no[] = {"0", "false", "no", "off"};
  for (size_t i = 0; i < 4; i++) {
    if (strcasecmp(text, yes[i]) == 0) {
      *out = true;
      return true;
    }
    if (strcasecmp(text, no[i]) == 0) {
      *out = false;
      return true;
    }
  }
  return false;
}

static bool parse_double(const char *text, double *out) {
  errno = 0;
  char *end;
  double value = strtod(text, &end);
  if (end == text || *end || errno == ERANGE || !isfinite(value))
    return false;
  *out = value;
  return true;
}

/* Stores an unsigned value into a field, refusing values its type cannot
 * hold (a silent truncation would turn 2^32+1 samples into 1). */
static bool store_count(stc_tuner_policy *p, policy_field field, uint64_t value) {
  switch (field) {
  case FIELD_WARMUPS: case FIELD_SAMPLES: case FIELD_MAX_CANDIDATES:
  case FIELD_MAX_PARALLEL_TUNES: case FIELD_REGRESSION_PAIRS:
  case FIELD_RACE_PAIRS: case FIELD_BUDGET_CUT_SAMPLES:
  case FIELD_NOISE_RETRIES: case FIELD_CHECK_AT_CALL: case FIELD_DUEL_PAIRS:
    if (value > UINT32_MAX)
      return false;
    break;
  default:
    break;
  }
  switch (field) {
  case FIELD_WARMUPS: p->warmups = (uint32_t)value; return true;
  case FIELD_SAMPLES: p->samples = (uint32_t)value; return true;
  case FIELD_MAX_CANDIDATES: p->max_candidates = (uint32_t)value; return true;
  case FIELD_MAX_PARALLEL_TUNES: p->max_parallel_tunes = (uint32_t)value; return true;
  case FIELD_REGRESSION_PAIRS: p->regression_pairs = (uint32_t)value; return true;
  case FIELD_RACE_PAIRS: p->race_pairs = (uint32_t)value; return true;
  case FIELD_BUDGET_CUT_SAMPLES: p->budget_cut_samples = (uint32_t)value; return true;
  case FIELD_NOISE_RETRIES: p->noise_retries = (uint32_t)value; return true;
  case FIELD_CHECK_AT_CALL: p->check_at_call = (uint32_t)value; return true;
  case FIELD_DUEL_PAIRS: p->duel_pairs = (uint32_t)value; return true;
  case FIELD_DUEL_LIMIT: p->duel_limit_ns = value; return true;
  case FIELD_START_COST: p->start_cost_ns = value; return true;
  case FIELD_BUDGET: p->budget_ns = value; return true;
  case FIELD_TARGET: p->target_ns = value; return true;
  case FIELD_RACE_MIN: p->race_min_ns = value; return true;
  case FIELD_TTL: p->ttl_seconds = value; return true;
  case FIELD_READBACK_LIMIT: p->tolerance.readback_limit = value; return true;
  case FIELD_CAPACITY:
    if (value > SIZE_MAX)
      return false;
    p->capacity = (size_t)value;
    return true;
  default:
    return false;
  }
}

static bool store_double(stc_tuner_policy *p, policy_field field, double value) {
  switch (field) {
  case FIELD_TOLERANCE_ABSOLUTE: p->tolerance.absolute = value; return true;
  case FIELD_TOLERANCE_RELATIVE: p->tolerance.relative = value; return true;
  case FIELD_TOLERANCE_TF32: p->tolerance.tf32 = value; return true;
  case FIELD_MIN_SPEEDUP: p->min_speedup = value; return true;
  case FIELD_MIN_IMPROVEMENT: p->min_improvement = value; return true;
  case FIELD_MAX_RELATIVE_MAD: p->max_relative_mad = value; return true;
  case FIELD_REGRESSION_RATIO: p->regression_ratio = value; return true;
  case FIELD_RACE_MARGIN: p->race_margin = value; return true;
  case FIELD_RACE_WARMUP_FACTOR: p->race_warmup_factor = value; return true;
  case FIELD_DUEL_MARGIN: p->duel_margin = value; return true;
  case FIELD_DUEL_REMATCH: p->duel_rematch = value; return true;
  default: return false;
  }
}

/* Parses text into the field of copy; false for a value that cannot be
 * read as the field's kind. */
static bool parse_into(stc_tuner_policy *copy, policy_field field,
                       value_kind kind, uint64_t scale, const char *text) {
  switch (kind) {
  case VALUE_MODE:
    return stc_tune_mode_parse(text, &copy->mode) == STC_OK;
  case VALUE_ORDER:
    return stc_tune_order_parse(text, &copy->order) == STC_OK;
  case VALUE_BOOL: {
    bool *target = field == FIELD_EARLY_REJECTION  ? &copy->early_rejection
                   : field == FIELD_VALIDATE_FIRST ? &copy->validate_first
                   : field == FIELD_CHECK_ON_CALL  ? &copy->check_on_call
                   : field == FIELD_TRUST_VERIFIED ? &copy->trust_verified
                   : field == FIELD_ALLOW_TF32     ? &copy->allow_tf32
                                                   : &copy->require_validation;
    return parse_bool(text, target);
  }
  case VALUE_DOUBLE: {
    double value;
    return parse_double(text, &value) && store_double(copy, field, value);
  }
  case VALUE_COUNT: {
    uint64_t value, scaled;
    const char *rest;
    return parse_u64_prefix(text, &value, &rest) && *rest == 0 &&
           multiply(value, scale, &scaled) && store_count(copy, field, scaled);
  }
  case VALUE_BYTES: {
    uint64_t value;
    return parse_bytes(text, &value) && store_count(copy, field, value);
  }
  case VALUE_WORKSPACE: {
    static const char *const none[] = {"none", "off", "unlimited", "no"};
    for (size_t i = 0; i < 4; i++) {
      if (strcasecmp(text, none[i]) == 0) {
        copy->has_workspace_limit = false;
        copy->workspace_limit = 0;
        return true;
      }
    }
    uint64_t value;
    if (!parse_bytes(text, &value))
      return false;
    copy->has_workspace_limit = true;
    copy->workspace_limit = value;
    return true;
  }
  }
  return false;
}

stc_status stc_tuner_policy_set(stc_tuner_policy *policy, const char *field,
                                const char *value, stc_error *err) {
  if (!policy || !field || !value) {
    stc_error_set(err, NULL, 0, 0, "policy, field and value are required");
    return STC_ERR_INVALID;
  }
  size_t entry = 0, count = sizeof policy_names / sizeof policy_names[0];
  while (entry < count && !name_equal(field, policy_names[entry].name))
    entry++;
  if (entry == count) {
    stc_error_set(err, NULL, 0, 0, "unknown tuner policy field '%.200s'", field);
    return STC_ERR_NOT_FOUND;
  }
  char text[128];
  stc_tuner_policy copy = *policy;
  if (!trimmed(value, text, sizeof text) ||
      !parse_into(&copy, policy_names[entry].field, policy_names[entry].kind,
                  policy_names[entry].scale, text)) {
    stc_error_set(err, NULL, 0, 0, "bad value '%.200s' for tuner policy field %s",
                  value, policy_names[entry].name);
    return STC_ERR_INVALID;
  }
  stc_status status = check_field(&copy, policy_names[entry].field, err);
  if (status != STC_OK)
    return status;
  *policy = copy;
  return STC_OK;
}

void stc_tolerance_for_tf32(const stc_tolerance *base, stc_tolerance *out) {
  *out = *base;
  out->relative = fmax(base->relative, base->tf32);
  out->scaled = base->tf32;
}
