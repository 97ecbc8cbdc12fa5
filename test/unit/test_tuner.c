/* Unit tests of the stack tuner (lib/tuner/policy.c, lib/tuner/tuner.c):
 * the policy, and one or more tests per numbered rule of DESIGN.md section 6
 * (named ruleN_...), driven by a scripted fake trial runner. */
#include "stc_test.h"

#include "stc/tuner.h"
#include "stc/tuner_cache.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the fake trial runner ---------------------------------------------- */

#define FAKE_MAX 8
#define FAKE_LOG 1024

typedef struct fake fake;
struct fake {
  size_t count;
  uint64_t fixed_ns[FAKE_MAX];     /* time of every call, unless scripted */
  const uint64_t *script[FAKE_MAX]; /* per-call times; the last repeats */
  size_t script_len[FAKE_MAX];
  stc_status validate_status[FAKE_MAX]; /* STC_OK: outcome below */
  stc_validation outcome[FAKE_MAX];
  stc_status measure_status[FAKE_MAX]; /* fails calls after measure_ok[] */
  size_t measure_ok[FAKE_MAX];
  size_t measures[FAKE_MAX], validations[FAKE_MAX];
  uint64_t *clock; /* advanced by every measured time */
  void (*hook)(fake *f, size_t candidate); /* called on every measure */
  void *hook_user;
  size_t log[FAKE_LOG]; /* measured candidates, in order */
  size_t log_len;
};

static stc_status fake_validate(void *user, size_t reference, size_t candidate,
                                const stc_tolerance *tolerance,
                                stc_validation *outcome, char *message,
                                size_t message_size) {
  fake *f = user;
  (void)reference, (void)tolerance;
  f->validations[candidate]++;
  if (f->validate_status[candidate] != STC_OK) {
    snprintf(message, message_size, "injected %s of %zu",
             stc_status_str(f->validate_status[candidate]), candidate);
    return f->validate_status[candidate];
  }
  *outcome = f->outcome[candidate];
  return STC_OK;
}

static stc_status fake_measure(void *user, size_t candidate, uint64_t *ns,
                               char *message, size_t message_size) {
  fake *f = user;
  size_t call = f->measures[candidate]++;
  if (f->log_len < FAKE_LOG)
    f->log[f->log_len++] = candidate;
  if (f->hook)
    f->hook(f, candidate);
  if (f->measure_status[candidate] != STC_OK && call >= f->measure_ok[candidate]) {
    snprintf(message, message_size, "injected %s",
             stc_status_str(f->measure_status[candidate]));
    return f->measure_status[candidate];
  }
  uint64_t time = f->fixed_ns[candidate];
  if (f->script[candidate]) {
    size_t last = f->script_len[candidate] - 1;
    time = f->script[candidate][call < last ? call : last];
  }
  if (f->clock)
    *f->clock += time;
  *ns = time;
  return STC_OK;
}

/* A runner whose candidate i takes times[i] ns on every call. */
static void fake_init(fake *f, size_t count, const uint64_t *times) {
  memset(f, 0, sizeof *f);
  f->count = count;
  for (size_t i = 0; i < count; i++)
    f->fixed_ns[i] = times[i];
}

static stc_trial_runner runner_of(fake *f) {
  return (stc_trial_runner){f, fake_validate, fake_measure, NULL};
}

static size_t total_measures(const fake *f) {
  size_t n = 0;
  for (size_t i = 0; i < f->count; i++)
    n += f->measures[i];
  return n;
}

static uint64_t fake_clock(void *user) { return *(uint64_t *)user; }

/* ---- fixtures ----------------------------------------------------------- */

static const char *const NAMES[FAKE_MAX] = {"ref", "a", "b", "c",
                                            "d",   "e", "f", "g"};

static void make_candidates(stc_candidate *c, size_t count) {
  for (size_t i = 0; i < count; i++)
    c[i] = (stc_candidate){NAMES[i], NULL, true, 0, true, NULL};
}

static stc_problem make_problem(const char *workload) {
  return (stc_problem){STC_SCOPE_OPERATOR, "linalg.matmul", "cpu:test",
                       workload, "", false};
}

static stc_tuner *new_tuner(const stc_tuner_policy *policy, const char *dir) {
  stc_tuner *t = NULL;
  stc_error err;
  if (stc_tuner_create(policy, dir, &t, &err) != STC_OK)
    return NULL;
  return t;
}

static stc_tuner *default_tuner(void) {
  stc_tuner_policy p;
  stc_tuner_policy_init(&p);
  return new_tuner(&p, NULL);
}

/* The rule tests whose scripts count the runs, or time the order, of the
 * seed engine's exhaustive search run under its rules
 * (stc_tuner_policy_init_seed); the others run the defaults. */
static stc_tuner *seed_tuner(void) {
  stc_tuner_policy p;
  stc_tuner_policy_init_seed(&p);
  return new_tuner(&p, NULL);
}

/* Selects with reference 0. */
static stc_status select0(stc_tuner *t, const stc_problem *problem,
                          const stc_candidate *c, size_t count, fake *f,
                          stc_decision *d) {
  stc_trial_runner r = runner_of(f);
  stc_error err;
  return stc_tuner_select(t, problem, c, count, 0, &r, d, &err);
}

/* A path under the scratch directory that no other test in this process
 * has used (all tests share one scratch directory when run together). */
static void cache_dir(char *out, size_t size, const char *name) {
  static int count;
  snprintf(out, size, "%s/%s-%d", stc_test_tmpdir(), name, count++);
}

/* The report whose workload is workload (the newest such), or -1. */
static long find_report(const stc_tune_report *reports, size_t count,
                        const char *workload) {
  for (size_t i = count; i-- > 0;)
    if (strcmp(reports[i].workload, workload) == 0)
      return (long)i;
  return -1;
}

/* ---- policy ------------------------------------------------------------- */

STC_TEST(policy_defaults) {
  stc_tuner_policy p;
  stc_tuner_policy_init(&p);
  STC_CHECK(p.mode == STC_MODE_EXPLORE);
  STC_CHECK(p.require_validation);
  STC_CHECK(p.tolerance.absolute == 1e-4);
  STC_CHECK(p.tolerance.relative == 1e-3);
  STC_CHECK_EQ_U64(p.tolerance.readback_limit, 64ull << 20);
  STC_CHECK_EQ_U64(p.warmups, 2);
  STC_CHECK_EQ_U64(p.samples, 7);
  STC_CHECK_EQ_U64(p.max_candidates, 32);
  STC_CHECK_EQ_U64(p.budget_ns, 30000000000ull);
  STC_CHECK(p.min_speedup == 1.05);
  STC_CHECK(p.max_relative_mad == 0.15);
  STC_CHECK(!p.has_workspace_limit);
  STC_CHECK_EQ_U64(p.capacity, 1024);
  STC_CHECK_EQ_U64(p.ttl_seconds, 7ull * 24 * 3600);
  STC_CHECK_EQ_U64(p.max_parallel_tunes, 1);
  STC_CHECK_EQ_U64(p.regression_pairs, 7);
  STC_CHECK(p.regression_ratio == 1.15);
  stc_error err;
  STC_CHECK_EQ_INT(stc_tuner_policy_validate(&p, &err), STC_OK);
}

STC_TEST(policy_validate_rejects_bad_fields) {
  enum { N = 22 };
  for (int i = 0; i < N; i++) {
    stc_tuner_policy p;
    stc_tuner_policy_init(&p);
    switch (i) {
    case 0: p.samples = 0; break;
    case 1: p.samples = 8; break;
    case 2: p.max_candidates = 0; break;
    case 3: p.tolerance.absolute = NAN; break;
    case 4: p.tolerance.absolute = -1e-6; break;
    case 5: p.tolerance.relative = NAN; break;
    case 6: p.tolerance.relative = -1; break;
    case 7: p.min_speedup = 0.99; break;
    case 8: p.min_speedup = NAN; break;
    case 9: p.max_relative_mad = 0; break;
    case 10: p.max_relative_mad = NAN; break;
    case 11: p.capacity = 0; break;
    case 12: p.ttl_seconds = 0; break;
    case 13: p.budget_ns = 0; break;
    case 14: p.regression_pairs = 0; break;
    case 15: p.regression_ratio = 1.0; break;
    case 16: p.regression_ratio = NAN; break;
    case 17: p.max_parallel_tunes = 0; break;
    case 18: p.mode = (stc_tune_mode)7; break;
    case 19: p.tolerance.readback_limit = 0; break;
    case 20: p.tolerance.absolute = INFINITY; break;
    case 21: p.min_speedup = INFINITY; break;
    }
    stc_error err;
    stc_error_clear(&err);
    STC_CHECK_EQ_INT(stc_tuner_policy_validate(&p, &err), STC_ERR_INVALID);
    STC_CHECK(err.message[0] != 0);
    stc_tuner *t = (stc_tuner *)1;
    STC_CHECK_EQ_INT(stc_tuner_create(&p, NULL, &t, &err), STC_ERR_INVALID);
    STC_CHECK(t == NULL);
  }
  STC_CHECK_EQ_INT(stc_tuner_policy_validate(NULL, NULL), STC_ERR_INVALID);
}

STC_TEST(policy_set_parses_every_field) {
  stc_tuner_policy p;
  stc_tuner_policy_init(&p);
  stc_error err;
#define SET(field, value) STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, field, value, &err), STC_OK)
  SET("mode", "cache-only");
  STC_CHECK(p.mode == STC_MODE_CACHE_ONLY);
  SET("mode", "off");
  STC_CHECK(p.mode == STC_MODE_DISABLED);
  SET("mode", "disabled");
  STC_CHECK(p.mode == STC_MODE_DISABLED);
  SET("mode", "explore");
  STC_CHECK(p.mode == STC_MODE_EXPLORE);
  SET("require-validation", "false");
  STC_CHECK(!p.require_validation);
  SET("require_validation", "1");
  STC_CHECK(p.require_validation);
  SET("tolerance_absolute", "1e-6");
  STC_CHECK(p.tolerance.absolute == 1e-6);
  SET("tolerance-relative", "0.01");
  STC_CHECK(p.tolerance.relative == 0.01);
  SET("readback_limit", "16MiB");
  STC_CHECK_EQ_U64(p.tolerance.readback_limit, 16ull << 20);
  SET("warmups", "0");
  STC_CHECK_EQ_U64(p.warmups, 0);
  SET("samples", "11");
  STC_CHECK_EQ_U64(p.samples, 11);
  SET("max-candidates", "4");
  STC_CHECK_EQ_U64(p.max_candidates, 4);
  SET("budget_ms", "250");
  STC_CHECK_EQ_U64(p.budget_ns, 250000000ull);
  SET("budget-ns", "12345");
  STC_CHECK_EQ_U64(p.budget_ns, 12345);
  SET("min_speedup", "1.2");
  STC_CHECK(p.min_speedup == 1.2);
  SET("max_relative_mad", " 0.05 ");
  STC_CHECK(p.max_relative_mad == 0.05);
  SET("workspace-limit", "64MiB");
  STC_CHECK(p.has_workspace_limit);
  STC_CHECK_EQ_U64(p.workspace_limit, 64ull << 20);
  SET("workspace_limit", "none");
  STC_CHECK(!p.has_workspace_limit);
  SET("capacity", "16");
  STC_CHECK_EQ_U64(p.capacity, 16);
  SET("ttl_seconds", "60");
  STC_CHECK_EQ_U64(p.ttl_seconds, 60);
  SET("max_parallel_tunes", "3");
  STC_CHECK_EQ_U64(p.max_parallel_tunes, 3);
  SET("regression-pairs", "5");
  STC_CHECK_EQ_U64(p.regression_pairs, 5);
  SET("regression_ratio", "1.5");
  STC_CHECK(p.regression_ratio == 1.5);
  SET("SAMPLES", "3"); /* STC_TUNE_SAMPLES spelling */
  STC_CHECK_EQ_U64(p.samples, 3);
#undef SET
  STC_CHECK_EQ_INT(stc_tuner_policy_validate(&p, &err), STC_OK);
}

/* Sets each (field, value) of bad on p; every one must fail with
 * STC_ERR_INVALID and a message and leave p as it was. Returns the index of
 * the first that does not (count when all do). */
static size_t first_accepted(stc_tuner_policy *p, const char *const (*bad)[2],
                             size_t count) {
  stc_tuner_policy before = *p;
  for (size_t i = 0; i < count; i++) {
    stc_error err;
    stc_error_clear(&err);
    if (stc_tuner_policy_set(p, bad[i][0], bad[i][1], &err) != STC_ERR_INVALID ||
        err.message[0] == 0 || memcmp(p, &before, sizeof *p) != 0)
      return i;
  }
  return count;
}

STC_TEST(policy_set_rejects_garbage) {
  stc_tuner_policy p;
  stc_tuner_policy_init(&p);
  stc_error err;
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, "no_such_field", "1", &err),
                   STC_ERR_NOT_FOUND);
  static const char *const bad[][2] = {
      {"samples", "abc"},        {"samples", "-1"},
      {"samples", "7x"},         {"samples", ""},
      {"samples", "8"},          {"samples", "0"},
      {"samples", "4294967297"}, {"warmups", "99999999999999999999999"},
      {"min_speedup", "nan"},    {"min_speedup", "inf"},
      {"min_speedup", "0.5"},    {"max_relative_mad", "0"},
      {"tolerance_absolute", "-1"}, {"mode", "fast"},
      {"require_validation", "maybe"}, {"budget_ms", "0"},
      {"budget_ms", "99999999999999999"}, {"workspace_limit", "lots"},
      {"readback_limit", "12 parsecs"}, {"capacity", "0"},
      {"ttl", "0"},              {"regression_ratio", "1"},
      {"regression_pairs", "0"}, {"max_parallel_tunes", "0"},
      {"max_candidates", "0"},   {"samples", " "},
  };
  STC_CHECK_EQ_U64(first_accepted(&p, bad, sizeof bad / sizeof bad[0]),
                   sizeof bad / sizeof bad[0]);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, "samples", NULL, &err),
                   STC_ERR_INVALID);
}

/* TF32 (docs/gpu.md "TF32 tensor-core variants"): off by default, one
 * bound, settable and checked; a TF32 variant's tolerance derives from it;
 * the opt-in and the bound are part of a decision's key. */
STC_TEST(policy_tf32_opt_in_and_tolerance) {
  stc_tuner_policy p;
  stc_tuner_policy_init(&p);
  STC_CHECK(!p.allow_tf32);
  STC_CHECK(p.tolerance.tf32 == 1e-2);
  STC_CHECK(p.tolerance.scaled == 0); /* f32 variants: the per-element rule */
  stc_tuner_policy seed;
  stc_tuner_policy_init_seed(&seed);
  STC_CHECK(!seed.allow_tf32);
  stc_error err;
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, "allow_tf32", "1", &err), STC_OK);
  STC_CHECK(p.allow_tf32);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, "allow-tf32", "off", &err), STC_OK);
  STC_CHECK(!p.allow_tf32);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, "tolerance_tf32", "0.02", &err), STC_OK);
  STC_CHECK(p.tolerance.tf32 == 0.02);
  static const char *const bad[] = {"0", "-1e-3", "nan", "inf", "0.6", "tight"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    stc_error_clear(&err);
    STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, "tolerance_tf32", bad[i], &err),
                     STC_ERR_INVALID);
    STC_CHECK(p.tolerance.tf32 == 0.02);
  }
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, "allow_tf32", "perhaps", &err),
                   STC_ERR_INVALID);
  p.tolerance.tf32 = 0;
  STC_CHECK_EQ_INT(stc_tuner_policy_validate(&p, &err), STC_ERR_INVALID);
  /* A TF32 variant's tolerance: relative raised to the bound, plus the
   * bound times the output's mean magnitude; the rest as the policy's. */
  stc_tolerance base = {2e-4, 1e-3, 1u << 20, 0, 2e-2}, tf32;
  stc_tolerance_for_tf32(&base, &tf32);
  STC_CHECK(tf32.absolute == 2e-4 && tf32.relative == 2e-2 && tf32.scaled == 2e-2);
  STC_CHECK_EQ_U64(tf32.readback_limit, 1u << 20);
  base.relative = 5e-2; /* a laxer f32 rule is kept */
  stc_tolerance_for_tf32(&base, &tf32);
  STC_CHECK(tf32.relative == 5e-2);
}

STC_TEST(mode_and_source_names) {
  for (int m = STC_MODE_EXPLORE; m <= STC_MODE_DISABLED; m++) {
    stc_tune_mode parsed;
    STC_CHECK_EQ_INT(stc_tune_mode_parse(stc_tune_mode_str((stc_tune_mode)m),
                                         &parsed),
                     STC_OK);
    STC_CHECK_EQ_INT(parsed, m);
  }
  STC_CHECK_STR_EQ(stc_tune_mode_str(STC_MODE_CACHE_ONLY), "cache-only");
  STC_CHECK_STR_EQ(stc_tune_mode_str(STC_MODE_DISABLED), "off");
  stc_tune_mode mode;
  STC_CHECK_EQ_INT(stc_tune_mode_parse("disabled", &mode), STC_OK);
  STC_CHECK(mode == STC_MODE_DISABLED);
  STC_CHECK_EQ_INT(stc_tune_mode_parse("bogus", &mode), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_tune_mode_parse(NULL, &mode), STC_ERR_INVALID);
  static const char *const sources[] = {
      "tuned", "memory-cache", "disk-cache", "cache-miss",
      "disabled", "busy", "nested", "validation-unavailable"};
  for (int s = 0; s < 8; s++)
    STC_CHECK_STR_EQ(stc_decision_source_str((stc_decision_source)s),
                     sources[s]);
}

/* ---- rule 1: invalid requests ------------------------------------------- */

/* Every rule-1 test checks that a refused request never reaches the runner. */
static stc_status refused(stc_tuner *t, const stc_problem *problem,
                          const stc_candidate *c, size_t count,
                          size_t reference, stc_error *err) {
  uint64_t times[FAKE_MAX] = {100, 50, 50, 50, 50, 50, 50, 50};
  fake f;
  fake_init(&f, FAKE_MAX, times);
  stc_trial_runner r = runner_of(&f);
  stc_decision d;
  stc_status status = stc_tuner_select(t, problem, c, count, reference, &r, &d, err);
  if (total_measures(&f) != 0 || f.validations[0] != 0)
    return STC_ERR_DEVICE; /* never expected: makes the check fail */
  if (status != STC_OK && (d.name || d.cache_key))
    return STC_ERR_DEVICE;
  stc_decision_clear(&d);
  return status;
}

STC_TEST(rule1_rejects_no_candidates) {
  stc_tuner *t = default_tuner();
  STC_CHECK(t);
  stc_problem p = make_problem("w");
  stc_candidate c[1];
  make_candidates(c, 1);
  stc_error err;
  STC_CHECK_EQ_INT(refused(t, &p, c, 0, 0, &err), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(refused(t, &p, NULL, 1, 0, &err), STC_ERR_INVALID);
  STC_CHECK_CONTAINS(err.message, "reference");
  stc_tuner_destroy(t);
}

STC_TEST(rule1_rejects_more_than_4096_candidates) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.max_candidates = 2;
  stc_tuner *t = new_tuner(&pol, NULL);
  STC_CHECK(t);
  stc_problem p = make_problem("w");
  enum { N = 4097 };
  stc_candidate *c = calloc(N, sizeof *c);
  char(*names)[16] = calloc(N, sizeof *names);
  STC_CHECK(c && names);
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "v%d", i);
    c[i] = (stc_candidate){names[i], NULL, true, 0, true, NULL};
  }
  stc_error err;
  STC_CHECK_EQ_INT(refused(t, &p, c, N, 0, &err), STC_ERR_INVALID);
  /* 4096 is still a valid request. */
  uint64_t times[FAKE_MAX] = {100, 50};
  fake f;
  fake_init(&f, 2, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, N - 1, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK_EQ_U64(d.index, 1);
  stc_decision_clear(&d);
  free(c);
  free(names);
  stc_tuner_destroy(t);
}

STC_TEST(rule1_rejects_reference_out_of_range) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  stc_error err;
  STC_CHECK_EQ_INT(refused(t, &p, c, 2, 2, &err), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(refused(t, &p, c, 2, (size_t)-1, &err), STC_ERR_INVALID);
  stc_tuner_destroy(t);
}

STC_TEST(rule1_rejects_empty_operation_environment_workload) {
  stc_tuner *t = default_tuner();
  stc_candidate c[2];
  make_candidates(c, 2);
  stc_error err;
  for (int i = 0; i < 6; i++) {
    stc_problem p = make_problem("w");
    const char *value = i % 2 ? "" : NULL;
    if (i / 2 == 0)
      p.operation = value;
    else if (i / 2 == 1)
      p.environment = value;
    else
      p.workload = value;
    STC_CHECK_EQ_INT(refused(t, &p, c, 2, 0, &err), STC_ERR_INVALID);
  }
  stc_problem bad_scope = make_problem("w");
  bad_scope.scope = (stc_scope)9;
  STC_CHECK_EQ_INT(refused(t, &bad_scope, c, 2, 0, &err), STC_ERR_INVALID);
  stc_tuner_destroy(t);
}

STC_TEST(rule1_rejects_empty_long_or_duplicate_names) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  stc_error err;
  char *long_name = malloc(4098);
  STC_CHECK(long_name);
  memset(long_name, 'x', 4097);
  long_name[4097] = 0;
  for (int i = 0; i < 4; i++) {
    make_candidates(c, 3);
    if (i == 0)
      c[1].name = "";
    else if (i == 1)
      c[1].name = NULL;
    else if (i == 2)
      c[2].name = long_name;
    else
      c[2].name = "a"; /* duplicate of c[1] */
    stc_error_clear(&err);
    STC_CHECK_EQ_INT(refused(t, &p, c, 3, 0, &err), STC_ERR_INVALID);
    STC_CHECK_CONTAINS(err.message, "unique");
  }
  /* Exactly 4096 bytes is allowed. */
  long_name[4096] = 0;
  make_candidates(c, 3);
  c[2].name = long_name;
  uint64_t times[FAKE_MAX] = {100, 100, 100};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  stc_decision_clear(&d);
  free(long_name);
  stc_tuner_destroy(t);
}

STC_TEST(rule1_rejects_ineligible_reference) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  c[0].eligible = false;
  stc_error err;
  STC_CHECK_EQ_INT(refused(t, &p, c, 2, 0, &err), STC_ERR_INVALID);
  STC_CHECK_CONTAINS(err.message, "reference");
  /* An ineligible non-reference candidate is not an error. */
  make_candidates(c, 2);
  c[1].eligible = false;
  uint64_t times[FAKE_MAX] = {100, 10};
  fake f;
  fake_init(&f, 2, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 0);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule1_rejects_reference_outside_workspace_limit) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.has_workspace_limit = true;
  pol.workspace_limit = 1000;
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  stc_error err;
  c[0].workspace_bytes = 1001;
  STC_CHECK_EQ_INT(refused(t, &p, c, 2, 0, &err), STC_ERR_INVALID);
  c[0].workspace_bytes = 0;
  c[0].workspace_known = false; /* unknown never fits a set limit */
  STC_CHECK_EQ_INT(refused(t, &p, c, 2, 0, &err), STC_ERR_INVALID);
  c[0].workspace_known = true;
  c[0].workspace_bytes = 1000;
  uint64_t times[FAKE_MAX] = {100, 100};
  fake f;
  fake_init(&f, 2, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
  /* Without a limit an unknown workspace is fine. */
  t = default_tuner();
  c[0].workspace_known = false;
  fake_init(&f, 2, times);
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule1_rejects_key_over_384_kib) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.max_candidates = 1;
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_problem p = make_problem("w");
  enum { N = 100, LEN = 4000 };
  stc_candidate c[N];
  char *names = malloc((size_t)N * (LEN + 1));
  STC_CHECK(names);
  for (int i = 0; i < N; i++) {
    char *name = names + (size_t)i * (LEN + 1);
    memset(name, 'a' + i % 26, LEN);
    snprintf(name, 8, "%03d", i);
    name[3] = 'x';
    name[LEN] = 0;
    c[i] = (stc_candidate){name, NULL, true, 0, true, NULL};
  }
  stc_error err;
  STC_CHECK_EQ_INT(refused(t, &p, c, N, 0, &err), STC_ERR_INVALID);
  STC_CHECK_CONTAINS(err.message, "384 KiB");
  /* 90 such names (about 360 KB of key) are still accepted. */
  uint64_t times[FAKE_MAX] = {100};
  fake f;
  fake_init(&f, 1, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 90, &f, &d), STC_OK);
  STC_CHECK(strlen(d.cache_key) > 360000 && strlen(d.cache_key) <= 384 * 1024);
  stc_decision_clear(&d);
  free(names);
  stc_tuner_destroy(t);
}

STC_TEST(select_rejects_null_arguments) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {100, 100};
  fake f;
  fake_init(&f, 2, times);
  stc_trial_runner r = runner_of(&f);
  stc_decision d;
  STC_CHECK_EQ_INT(stc_tuner_select(NULL, &p, c, 2, 0, &r, &d, NULL), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_tuner_select(t, NULL, c, 2, 0, &r, &d, NULL), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_tuner_select(t, &p, c, 2, 0, NULL, &d, NULL), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_tuner_select(t, &p, c, 2, 0, &r, NULL, NULL), STC_ERR_INVALID);
  r.measure = NULL;
  STC_CHECK_EQ_INT(stc_tuner_select(t, &p, c, 2, 0, &r, &d, NULL), STC_ERR_INVALID);
  STC_CHECK_EQ_U64(total_measures(&f), 0);
  stc_tuner_destroy(t);
  stc_tuner_destroy(NULL);
  stc_decision_clear(NULL);
  stc_tune_reports_free(NULL, 0);
}

/* ---- rule 2: quarantine, disabled --------------------------------------- */

STC_TEST(rule2_quarantined_environment_fails) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w1");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 50};
  fake f;
  fake_init(&f, 3, times);
  f.measure_status[1] = STC_ERR_DEVICE;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_ERR_DEVICE);
  /* Any later request on that lane fails before running anything. */
  fake g;
  fake_init(&g, 3, times);
  stc_problem other_workload = make_problem("w2");
  stc_error err;
  stc_trial_runner r = runner_of(&g);
  STC_CHECK_EQ_INT(stc_tuner_select(t, &other_workload, c, 3, 0, &r, &d, &err),
                   STC_ERR_QUARANTINED);
  STC_CHECK_CONTAINS(err.message, "quarantined");
  STC_CHECK(d.name == NULL);
  STC_CHECK_EQ_U64(total_measures(&g) + g.validations[0], 0);
  /* Another lane still tunes. */
  stc_problem other_lane = make_problem("w1");
  other_lane.environment = "cpu:other";
  STC_CHECK_EQ_INT(select0(t, &other_lane, c, 3, &g, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  stc_decision_clear(&d);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.device_failures, 1);
  stc_tuner_destroy(t);
}

STC_TEST(rule2_disabled_mode_returns_reference) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.mode = STC_MODE_DISABLED;
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 10, 10};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(stc_tuner_select(t, &p, c, 3, 2, &(stc_trial_runner){&f, fake_validate, fake_measure, NULL}, &d, NULL), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_DISABLED);
  STC_CHECK_EQ_U64(d.index, 2);
  STC_CHECK_EQ_U64(d.reference_index, 2);
  STC_CHECK_STR_EQ(d.name, "b");
  STC_CHECK(!d.verified && !d.has_ratio);
  STC_CHECK(d.cache_key && d.cache_key[0]);
  STC_CHECK_EQ_U64(total_measures(&f) + f.validations[2], 0);
  stc_decision_clear(&d);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.tunes + s.misses + s.memory_hits, 0);
  stc_tuner_destroy(t);
}

/* ---- rule 3: memory records, bypass ------------------------------------- */

STC_TEST(rule3_memory_hit_returns_verified_record) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d1, d2;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d1), STC_OK);
  STC_CHECK_EQ_INT(d1.source, STC_SOURCE_TUNED);
  size_t runs = total_measures(&f);
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d2), STC_OK);
  STC_CHECK_EQ_INT(d2.source, STC_SOURCE_MEMORY_CACHE);
  STC_CHECK_EQ_U64(d2.index, 1);
  STC_CHECK_STR_EQ(d2.name, "a");
  STC_CHECK(d2.verified);
  STC_CHECK(d2.has_ratio && fabs(d2.ratio - 0.5) < 1e-12);
  STC_CHECK_STR_EQ(d2.cache_key, d1.cache_key);
  STC_CHECK_EQ_U64(total_measures(&f), runs);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.memory_hits, 1);
  STC_CHECK_EQ_U64(s.misses, 1);
  STC_CHECK_EQ_U64(s.tunes, 1);
  stc_decision_clear(&d1);
  stc_decision_clear(&d2);
  stc_tuner_destroy(t);
}

/* stc_tuner_set_explore_hook: called once per exploration, before its
 * budget clock starts (a JIT compiles the candidates there), and never for
 * a decision from memory. */
typedef struct explore_probe {
  uint64_t *now;
  int calls;
} explore_probe;

static void probe_explore(void *user) {
  explore_probe *probe = user;
  probe->calls++;
  *probe->now += UINT64_C(3600) * 1000000000u; /* an hour: past any budget */
}

STC_TEST(explore_hook_runs_before_the_budget_clock) {
  stc_tuner *t = default_tuner();
  uint64_t now = 5000;
  stc_tuner_set_clock(t, fake_clock, &now);
  explore_probe probe = {&now, 0};
  stc_tuner_set_explore_hook(t, probe_explore, &probe);
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  f.clock = &now;
  stc_decision d1, d2;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d1), STC_OK);
  STC_CHECK_EQ_INT(d1.source, STC_SOURCE_TUNED);
  STC_CHECK_EQ_INT(probe.calls, 1);
  STC_CHECK_EQ_U64(d1.index, 1); /* every candidate ran: no budget cut */
  STC_CHECK(f.measures[2] > 0);
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK(!r[0].budget_exhausted);
  STC_CHECK(r[0].elapsed_ns < UINT64_C(1000000000));
  stc_tune_reports_free(r, n);
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d2), STC_OK);
  STC_CHECK_EQ_INT(d2.source, STC_SOURCE_MEMORY_CACHE);
  STC_CHECK_EQ_INT(probe.calls, 1);
  stc_decision_clear(&d1);
  stc_decision_clear(&d2);
  stc_tuner_destroy(t);
}

STC_TEST(rule3_unchecked_winner_stays_unverified) {
  /* Without required validation a candidate may win unchecked, and its
   * decisions never claim verification, in memory either. */
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.require_validation = false;
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {100, 50};
  fake f;
  fake_init(&f, 2, times);
  f.outcome[0] = f.outcome[1] = STC_VALIDATION_UNSUPPORTED;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK_EQ_U64(d.index, 1);
  STC_CHECK(!d.verified);
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_MEMORY_CACHE);
  STC_CHECK(!d.verified);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule3_expired_memory_record_retunes) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.ttl_seconds = 1;
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {100, 50};
  fake f;
  fake_init(&f, 2, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  stc_decision_clear(&d);
  /* Wait until the wall clock has moved a whole second past the record. */
  int64_t created = stc_now_seconds();
  while (stc_now_seconds() < created + 1)
    nanosleep(&(struct timespec){0, 20000000}, NULL);
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  stc_decision_clear(&d);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.tunes, 2);
  STC_CHECK_EQ_U64(s.memory_hits, 0);
  stc_tuner_destroy(t);
}

STC_TEST(rule3_validation_unavailable_keeps_reference) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {100, 10};
  fake f;
  fake_init(&f, 2, times);
  f.outcome[0] = f.outcome[1] = STC_VALIDATION_UNSUPPORTED;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_VALIDATION_UNAVAILABLE);
  STC_CHECK_EQ_U64(d.index, 0);
  STC_CHECK(!d.verified);
  STC_CHECK_EQ_U64(f.measures[1], 0); /* never an unchecked candidate */
  stc_decision_clear(&d);
  size_t runs = total_measures(&f) + f.validations[0];
  /* The key keeps using the reference without trying again. */
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_VALIDATION_UNAVAILABLE);
  STC_CHECK_EQ_U64(total_measures(&f) + f.validations[0], runs);
  stc_decision_clear(&d);
  stc_tune_report *reports;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &reports, &n), STC_OK);
  STC_CHECK_EQ_U64(n, 1);
  STC_CHECK_STR_EQ(reports[0].winner, "ref");
  STC_CHECK_EQ_U64(reports[0].num_candidates, 1);
  STC_CHECK_CONTAINS(reports[0].candidates[0].note, "no numerical validator");
  stc_tune_reports_free(reports, n);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.tunes, 0);
  STC_CHECK_EQ_U64(s.misses, 1);
  stc_tuner_destroy(t);
}

/* ---- rule 4: nested, busy ----------------------------------------------- */

typedef struct inner_call {
  stc_tuner *tuner;
  stc_problem problem;
  stc_candidate candidates[3];
  size_t count;
  bool done;
  bool was_tuning;
  stc_status status;
  stc_decision decision;
  fake runner;
} inner_call;

static void *inner_select(void *arg) {
  inner_call *call = arg;
  call->was_tuning = stc_tuner_is_tuning();
  call->status = select0(call->tuner, &call->problem, call->candidates,
                         call->count, &call->runner, &call->decision);
  call->done = true;
  return NULL;
}

/* Hooks: make one inner call from the first measured run, on this thread
 * (nested) or on another thread that this one joins (busy). */
static void nested_hook(fake *f, size_t candidate) {
  inner_call *call = f->hook_user;
  if (!call->done)
    inner_select(call);
}

static void other_thread_hook(fake *f, size_t candidate) {
  inner_call *call = f->hook_user;
  if (call->done)
    return;
  pthread_t thread;
  if (pthread_create(&thread, NULL, inner_select, call) == 0)
    pthread_join(thread, NULL);
}

static void inner_init(inner_call *call, stc_tuner *t, const char *workload,
                       const char *environment) {
  memset(call, 0, sizeof *call);
  call->tuner = t;
  call->problem = make_problem(workload);
  call->problem.environment = environment;
  call->count = 3;
  make_candidates(call->candidates, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake_init(&call->runner, 3, times);
}

STC_TEST(rule4_nested_select_gets_reference) {
  stc_tuner *t = default_tuner();
  STC_CHECK(!stc_tuner_is_tuning());
  stc_problem p = make_problem("outer");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  inner_call call;
  inner_init(&call, t, "inner", "cpu:test");
  f.hook = nested_hook;
  f.hook_user = &call;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  stc_decision_clear(&d);
  STC_CHECK(call.done && call.was_tuning);
  STC_CHECK_EQ_INT(call.status, STC_OK);
  STC_CHECK_EQ_INT(call.decision.source, STC_SOURCE_NESTED);
  STC_CHECK_EQ_U64(call.decision.index, 0);
  STC_CHECK_STR_EQ(call.decision.name, "ref");
  STC_CHECK_EQ_U64(total_measures(&call.runner), 0);
  stc_decision_clear(&call.decision);
  STC_CHECK(!stc_tuner_is_tuning());
  stc_tuner_destroy(t);
}

/* Runs an outer tune (of a fresh workload, or of workload when same_key)
 * whose first measurement makes an inner call from another thread; returns
 * the inner decision's source. */
static int busy_probe(stc_tuner *t, const char *workload,
                      const char *environment, inner_call *call) {
  static int outer_count;
  char outer[32];
  snprintf(outer, sizeof outer, "outer%d", outer_count++);
  stc_problem p = make_problem(workload ? outer : "same");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  inner_init(call, t, workload ? workload : "same", environment);
  f.hook = other_thread_hook;
  f.hook_user = call;
  stc_decision d;
  if (select0(t, &p, c, 3, &f, &d) != STC_OK || d.source != STC_SOURCE_TUNED)
    return -1;
  stc_decision_clear(&d);
  if (!call->done || call->was_tuning || call->status != STC_OK)
    return -2;
  int source = (int)call->decision.source;
  stc_decision_clear(&call->decision);
  return source;
}

STC_TEST(rule4_busy_key_device_or_parallel_limit_returns_reference) {
  stc_tuner *t = default_tuner();
  inner_call call;
  /* Same key. */
  STC_CHECK_EQ_INT(busy_probe(t, NULL, "cpu:test", &call), STC_SOURCE_BUSY);
  STC_CHECK_EQ_U64(total_measures(&call.runner), 0);
  stc_tuner_destroy(t);
  /* Same device, other workload. */
  t = default_tuner();
  STC_CHECK_EQ_INT(busy_probe(t, "other", "cpu:test", &call), STC_SOURCE_BUSY);
  /* Other device, but max_parallel_tunes = 1. */
  STC_CHECK_EQ_INT(busy_probe(t, "other2", "cpu:other", &call), STC_SOURCE_BUSY);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.busy_fallbacks, 2);
  stc_tuner_destroy(t);
  /* With two parallel tunes allowed, another device tunes meanwhile. */
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.max_parallel_tunes = 2;
  t = new_tuner(&pol, NULL);
  STC_CHECK_EQ_INT(busy_probe(t, "other", "cpu:other", &call), STC_SOURCE_TUNED);
  STC_CHECK_EQ_INT(busy_probe(t, "other3", "cpu:test", &call), STC_SOURCE_BUSY);
  stc_tuner_destroy(t);
}

/* Eight threads select the same key at once; the tuning thread's first
 * measurement waits until the seven others have their answers. */
typedef struct race {
  stc_tuner *tuner;
  pthread_barrier_t start;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  int answered; /* threads whose select returned without tuning */
  bool waited_too_long;
} race;

typedef struct racer {
  race *race;
  fake runner;
  stc_status status;
  stc_decision decision;
} racer;

static void race_hook(fake *f, size_t candidate) {
  race *r = f->hook_user;
  pthread_mutex_lock(&r->lock);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 20;
  while (r->answered < 7 && !r->waited_too_long)
    if (pthread_cond_timedwait(&r->changed, &r->lock, &deadline) == ETIMEDOUT)
      r->waited_too_long = true;
  pthread_mutex_unlock(&r->lock);
}

static void *race_thread(void *arg) {
  racer *me = arg;
  race *r = me->race;
  stc_problem p = make_problem("shared");
  stc_candidate c[3];
  make_candidates(c, 3);
  pthread_barrier_wait(&r->start);
  me->status = select0(r->tuner, &p, c, 3, &me->runner, &me->decision);
  if (me->decision.source != STC_SOURCE_TUNED) {
    pthread_mutex_lock(&r->lock);
    r->answered++;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
  }
  return NULL;
}

STC_TEST_THREADED(rule4_eight_threads_one_tunes_others_busy) {
  race r;
  memset(&r, 0, sizeof r);
  r.tuner = default_tuner();
  STC_CHECK(r.tuner);
  pthread_barrier_init(&r.start, NULL, 8);
  pthread_mutex_init(&r.lock, NULL);
  pthread_cond_init(&r.changed, NULL);
  racer racers[8];
  pthread_t threads[8];
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  for (int i = 0; i < 8; i++) {
    racers[i].race = &r;
    fake_init(&racers[i].runner, 3, times);
    racers[i].runner.hook = race_hook;
    racers[i].runner.hook_user = &r;
    memset(&racers[i].decision, 0, sizeof racers[i].decision);
  }
  for (int i = 0; i < 8; i++)
    STC_CHECK(pthread_create(&threads[i], NULL, race_thread, &racers[i]) == 0);
  for (int i = 0; i < 8; i++)
    pthread_join(threads[i], NULL);
  STC_CHECK(!r.waited_too_long); /* the busy callers never waited */
  int tuned = 0, busy = 0;
  for (int i = 0; i < 8; i++) {
    STC_CHECK_EQ_INT(racers[i].status, STC_OK);
    if (racers[i].decision.source == STC_SOURCE_TUNED) {
      tuned++;
      STC_CHECK_EQ_U64(racers[i].decision.index, 1);
    } else {
      STC_CHECK_EQ_INT(racers[i].decision.source, STC_SOURCE_BUSY);
      STC_CHECK_EQ_U64(racers[i].decision.index, 0);
      STC_CHECK_EQ_U64(total_measures(&racers[i].runner), 0);
      busy++;
    }
    stc_decision_clear(&racers[i].decision);
  }
  STC_CHECK_EQ_INT(tuned, 1);
  STC_CHECK_EQ_INT(busy, 7);
  stc_tuner_stats s;
  stc_tuner_stats_get(r.tuner, &s);
  STC_CHECK_EQ_U64(s.tunes, 1);
  STC_CHECK_EQ_U64(s.busy_fallbacks, 7);
  STC_CHECK_EQ_U64(s.misses, 1);
  stc_tuner_destroy(r.tuner);
  pthread_barrier_destroy(&r.start);
  pthread_mutex_destroy(&r.lock);
  pthread_cond_destroy(&r.changed);
}

/* Many threads and keys at once: every answer is a decision, the counters
 * add up, and nothing races (run under TSan). */
typedef struct churn {
  stc_tuner *tuner;
  int id;
  int tuned, other;
  bool failed;
} churn;

static void *churn_thread(void *arg) {
  churn *me = arg;
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  stc_candidate c[3];
  make_candidates(c, 3);
  for (int i = 0; i < 40; i++) {
    char workload[32];
    snprintf(workload, sizeof workload, "w%d", (i + me->id) % 10);
    stc_problem p = make_problem(workload);
    fake f;
    fake_init(&f, 3, times);
    stc_decision d;
    if (select0(me->tuner, &p, c, 3, &f, &d) != STC_OK) {
      me->failed = true;
      continue;
    }
    if (d.source == STC_SOURCE_TUNED)
      me->tuned++;
    else
      me->other++;
    if (i % 7 == 3)
      stc_tuner_invalidate(me->tuner, &d, false);
    stc_decision_clear(&d);
  }
  return NULL;
}

STC_TEST_THREADED(concurrent_selects_on_many_keys) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.capacity = 4;
  pol.max_parallel_tunes = 4;
  stc_tuner *t = new_tuner(&pol, NULL);
  churn state[6];
  pthread_t threads[6];
  for (int i = 0; i < 6; i++) {
    state[i] = (churn){t, i, 0, 0, false};
    STC_CHECK(pthread_create(&threads[i], NULL, churn_thread, &state[i]) == 0);
  }
  for (int i = 0; i < 6; i++)
    pthread_join(threads[i], NULL);
  uint64_t tuned = 0, other = 0;
  for (int i = 0; i < 6; i++) {
    STC_CHECK(!state[i].failed);
    tuned += (uint64_t)state[i].tuned;
    other += (uint64_t)state[i].other;
  }
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(tuned + other, 240);
  STC_CHECK_EQ_U64(s.tunes, tuned);
  STC_CHECK_EQ_U64(s.tunes + s.memory_hits + s.busy_fallbacks, 240);
  stc_tune_report *reports;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &reports, &n), STC_OK);
  STC_CHECK(n <= 4);
  stc_tune_reports_free(reports, n);
  stc_tuner_destroy(t);
}

/* ---- rule 5: disk records, cache-only ----------------------------------- */

/* Tunes one persistent problem (winner "a") into dir with a fresh tuner. */
static stc_status seed_disk(const char *dir, const stc_problem *p,
                            const stc_candidate *c) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  stc_tuner *t = new_tuner(&pol, dir);
  if (!t)
    return STC_ERR_INVALID;
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  stc_status status = select0(t, p, c, 3, &f, &d);
  if (status == STC_OK && (d.source != STC_SOURCE_TUNED || d.index != 1))
    status = STC_ERR_INVALID;
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  if (s.cache_warnings != 0)
    status = STC_ERR_IO;
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
  return status;
}

STC_TEST(rule5_disk_round_trip_second_tuner_gets_disk_cache) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  STC_CHECK_EQ_INT(seed_disk(dir, &p, c), STC_OK);
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  stc_tuner *t = new_tuner(&pol, dir);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_DISK_CACHE);
  STC_CHECK_EQ_U64(d.index, 1);
  STC_CHECK(d.verified);
  STC_CHECK(d.has_ratio && fabs(d.ratio - 0.5) < 1e-12);
  /* Checked once in this process, never re-timed. */
  STC_CHECK_EQ_U64(f.validations[1], 1);
  STC_CHECK_EQ_U64(total_measures(&f), 0);
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_MEMORY_CACHE);
  STC_CHECK_EQ_U64(f.validations[1], 1);
  stc_decision_clear(&d);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.disk_hits, 1);
  STC_CHECK_EQ_U64(s.memory_hits, 1);
  STC_CHECK_EQ_U64(s.tunes, 0);
  STC_CHECK_EQ_U64(s.cache_warnings, 0);
  stc_tuner_destroy(t);
}

STC_TEST(rule5_disk_record_deleted_when_validation_fails) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  STC_CHECK_EQ_INT(seed_disk(dir, &p, c), STC_OK);
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.mode = STC_MODE_CACHE_ONLY;
  stc_tuner *t = new_tuner(&pol, dir);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  f.validate_status[1] = STC_ERR_REJECTED;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_CACHE_MISS);
  STC_CHECK_EQ_U64(d.index, 0);
  STC_CHECK_EQ_U64(f.validations[1], 1);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
  /* The record is gone for everyone. */
  t = new_tuner(&pol, dir);
  fake_init(&f, 3, times);
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_CACHE_MISS);
  STC_CHECK_EQ_U64(f.validations[1], 0);
  stc_decision_clear(&d);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.disk_hits, 0);
  stc_tuner_destroy(t);
}

STC_TEST(rule5_disk_validation_failure_then_explores) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  STC_CHECK_EQ_INT(seed_disk(dir, &p, c), STC_OK);
  stc_tuner *t = NULL;
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  t = new_tuner(&pol, dir);
  /* On this machine "a" computes wrong results: explore picks "b". */
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  f.validate_status[1] = STC_ERR_REJECTED;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK_STR_EQ(d.name, "b");
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule5_disk_device_error_quarantines) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  STC_CHECK_EQ_INT(seed_disk(dir, &p, c), STC_OK);
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  stc_tuner *t = new_tuner(&pol, dir);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  f.validate_status[1] = STC_ERR_DEVICE;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_ERR_DEVICE);
  STC_CHECK_EQ_U64(total_measures(&f), 0);
  f.validate_status[1] = STC_OK;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_ERR_QUARANTINED);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.device_failures, 1);
  STC_CHECK_EQ_U64(s.disk_hits, 0);
  stc_tuner_destroy(t);
}

/* ---- rule 5: the check on the call, and trust_verified ----------------- */

/* A scripted check_on_call over a fake: "the call" is an argument state
 * that records whose result it holds; the reference runs on scratch. */
typedef struct call_fake {
  fake base;
  size_t checks;                 /* check_on_call calls */
  size_t reference_runs;         /* reference runs on scratch copies */
  size_t real_runs[FAKE_MAX];    /* runs on the call's own arguments */
  bool wrong[FAKE_MAX];          /* computes a wrong result */
  stc_status check_status;       /* injected failure (STC_OK: none) */
  bool fail_after_run;           /* the failure comes after the winner ran */
  long holds;                    /* whose result the call holds, -1: none */
} call_fake;

static stc_status call_fake_check(void *user, size_t reference,
                                  size_t candidate,
                                  const stc_tolerance *tolerance,
                                  stc_validation *outcome, bool *served,
                                  char *message, size_t message_size) {
  call_fake *f = user;
  (void)tolerance;
  f->checks++;
  *served = false;
  if (f->check_status != STC_OK && !f->fail_after_run)
    return f->check_status;
  f->reference_runs++;
  f->real_runs[candidate]++;
  f->holds = (long)candidate;
  *served = true;
  if (f->check_status != STC_OK || f->wrong[candidate]) {
    f->holds = (long)reference; /* the reference's result copied back */
    snprintf(message, message_size, "wrong result of %zu", candidate);
    return f->check_status != STC_OK ? f->check_status : STC_ERR_REJECTED;
  }
  *outcome = STC_VALIDATION_PASSED;
  return STC_OK;
}

static void call_fake_init(call_fake *f, size_t count, const uint64_t *times) {
  memset(f, 0, sizeof *f);
  fake_init(&f->base, count, times);
  f->holds = -1;
}

static stc_status select_call(stc_tuner *t, const stc_problem *problem,
                              const stc_candidate *c, size_t count,
                              call_fake *f, stc_decision *d) {
  stc_trial_runner r = {f, fake_validate, fake_measure, call_fake_check};
  stc_error err;
  return stc_tuner_select(t, problem, c, count, 0, &r, d, &err);
}

static size_t runner_calls(const call_fake *f) {
  size_t n = f->checks + total_measures(&f->base);
  for (size_t i = 0; i < f->base.count; i++)
    n += f->base.validations[i];
  return n;
}

STC_TEST(rule5_check_on_call_costs_one_reference_run) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  STC_CHECK_EQ_INT(seed_disk(dir, &p, c), STC_OK); /* winner "a" */
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  STC_CHECK(pol.check_on_call && !pol.trust_verified);
  stc_tuner *t = new_tuner(&pol, dir); /* a new process */
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  call_fake f;
  call_fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_DISK_CACHE);
  STC_CHECK_STR_EQ(d.name, "a");
  STC_CHECK(d.verified && d.served && !d.trusted);
  /* One check: the reference once on scratch, the winner once on the
   * call's arguments (which hold its result), nothing else. */
  STC_CHECK_EQ_U64(f.checks, 1);
  STC_CHECK_EQ_U64(f.reference_runs, 1);
  STC_CHECK_EQ_U64(f.real_runs[1], 1);
  STC_CHECK_EQ_U64(f.real_runs[0] + f.real_runs[2], 0);
  STC_CHECK_EQ_INT(f.holds, 1);
  STC_CHECK_EQ_U64(runner_calls(&f), 1);
  stc_decision_clear(&d);
  /* Verified in memory: never checked again in this process, and a later
   * call is not served by the tuner. */
  STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_MEMORY_CACHE);
  STC_CHECK(d.verified && !d.served);
  STC_CHECK_EQ_U64(runner_calls(&f), 1);
  stc_decision_clear(&d);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.disk_hits, 1);
  STC_CHECK_EQ_U64(s.disk_checks, 1);
  STC_CHECK_EQ_U64(s.trusted_hits, 0);
  stc_tuner_destroy(t);
}

STC_TEST(rule5_check_on_call_catches_a_wrong_winner) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  STC_CHECK_EQ_INT(seed_disk(dir, &p, c), STC_OK);
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  stc_tuner *t = new_tuner(&pol, dir);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  call_fake f;
  call_fake_init(&f, 3, times);
  f.wrong[1] = true; /* the planted winner is wrong here */
  stc_decision d;
  STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_CHECK_FAILED);
  STC_CHECK_STR_EQ(stc_decision_source_str(d.source), "check-failed");
  STC_CHECK_EQ_U64(d.index, 0);
  STC_CHECK(d.served && !d.verified);
  /* The call holds the reference's result; nothing else ran. */
  STC_CHECK_EQ_INT(f.holds, 0);
  STC_CHECK_EQ_U64(runner_calls(&f), 1);
  stc_decision_clear(&d);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.disk_hits, 0);
  STC_CHECK_EQ_U64(s.invalidations, 1);
  /* The next call explores, with "a" banned: "b" wins. */
  STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK_STR_EQ(d.name, "b");
  STC_CHECK(!d.served);
  STC_CHECK_EQ_U64(f.base.measures[1] + f.base.validations[1], 0);
  STC_CHECK_EQ_U64(f.checks, 1);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
  /* The wrong record is gone for everyone: "b" is on disk now. */
  pol.mode = STC_MODE_CACHE_ONLY;
  t = new_tuner(&pol, dir);
  call_fake_init(&f, 3, times);
  STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_DISK_CACHE);
  STC_CHECK_STR_EQ(d.name, "b");
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule5_check_on_call_wrong_winner_in_cache_only_keeps_reference) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  STC_CHECK_EQ_INT(seed_disk(dir, &p, c), STC_OK);
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.mode = STC_MODE_CACHE_ONLY;
  stc_tuner *t = new_tuner(&pol, dir);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  call_fake f;
  call_fake_init(&f, 3, times);
  f.wrong[1] = true;
  stc_decision d;
  STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_CHECK_FAILED);
  STC_CHECK_EQ_INT(f.holds, 0);
  stc_decision_clear(&d);
  /* Next call: no record, cache-only: the reference, nothing runs. */
  STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_CACHE_MISS);
  STC_CHECK(!d.served);
  STC_CHECK_EQ_U64(runner_calls(&f), 1);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule5_check_on_call_device_error_quarantines_and_says_served) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  STC_CHECK_EQ_INT(seed_disk(dir, &p, c), STC_OK);
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  stc_tuner *t = new_tuner(&pol, dir);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  for (int after = 0; after < 2; after++) {
    call_fake f;
    call_fake_init(&f, 3, times);
    f.check_status = STC_ERR_DEVICE;
    f.fail_after_run = after;
    stc_decision d;
    if (after) {
      stc_tuner_destroy(t);
      t = new_tuner(&pol, dir);
    }
    STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_ERR_DEVICE);
    /* Served only when the winner ran: then the call holds the reference's
     * result, and the caller must not run the call again. */
    STC_CHECK(d.served == (bool)after);
    STC_CHECK_EQ_INT(f.holds, after ? 0 : -1);
    STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_ERR_QUARANTINED);
    stc_tuner_stats s;
    stc_tuner_stats_get(t, &s);
    STC_CHECK_EQ_U64(s.device_failures, 1);
  }
  stc_tuner_destroy(t);
}

STC_TEST(rule5_seed_policy_validates_on_scratch_then_the_call_runs) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  STC_CHECK_EQ_INT(seed_disk(dir, &p, c), STC_OK);
  stc_tuner_policy pol;
  stc_tuner_policy_init_seed(&pol);
  STC_CHECK(!pol.check_on_call && !pol.trust_verified);
  stc_tuner *t = new_tuner(&pol, dir);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  call_fake f;
  call_fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_DISK_CACHE);
  STC_CHECK(d.verified && !d.served);
  STC_CHECK_EQ_U64(f.checks, 0);
  STC_CHECK_EQ_U64(f.base.validations[1], 1);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule5_check_on_call_reference_winner_needs_no_check) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  stc_tuner *t = new_tuner(&pol, dir);
  uint64_t times[FAKE_MAX] = {100, 150, 180}; /* the reference wins */
  call_fake f;
  call_fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK_EQ_U64(d.index, 0);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
  t = new_tuner(&pol, dir);
  call_fake_init(&f, 3, times);
  STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_DISK_CACHE);
  STC_CHECK_EQ_U64(d.index, 0);
  STC_CHECK(!d.served);
  STC_CHECK_EQ_U64(runner_calls(&f), 0);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

/* Tunes (p, c) once under pol into dir with a plain fake: winner "a". */
static stc_status tune_into(const char *dir, const stc_tuner_policy *pol,
                            const stc_problem *p, const stc_candidate *c) {
  stc_tuner *t = new_tuner(pol, dir);
  if (!t)
    return STC_ERR_INVALID;
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  stc_status status = select0(t, p, c, 3, &f, &d);
  if (status == STC_OK && (d.source != STC_SOURCE_TUNED || d.index != 1))
    status = STC_ERR_INVALID;
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
  return status;
}

STC_TEST(trust_verified_skips_the_check_only_for_the_same_code) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  const char *ids[3] = {"code=r1", "code=a1", "code=b1;blas=/lib/x.so;size=1"};
  for (int i = 0; i < 3; i++)
    c[i].code_identity = ids[i];
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&pol, "trust-verified", "1", NULL),
                   STC_OK);
  STC_CHECK_EQ_INT(tune_into(dir, &pol, &p, c), STC_OK);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  call_fake f;
  stc_decision d;
  stc_tuner_stats s;
  /* Same code and library: used with no runner call at all. */
  stc_tuner *t = new_tuner(&pol, dir);
  call_fake_init(&f, 3, times);
  STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_DISK_CACHE);
  STC_CHECK_STR_EQ(d.name, "a");
  STC_CHECK(d.trusted && d.verified && !d.served);
  STC_CHECK_EQ_U64(runner_calls(&f), 0);
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.trusted_hits, 1);
  STC_CHECK_EQ_U64(s.disk_checks, 0);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
  /* Without trust_verified the same record is not even found (its key
   * names the code), and the check path keeps its own records. */
  stc_tuner_policy plain;
  stc_tuner_policy_init(&plain);
  plain.mode = STC_MODE_CACHE_ONLY;
  t = new_tuner(&plain, dir);
  call_fake_init(&f, 3, times);
  STC_CHECK_EQ_INT(select_call(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_CACHE_MISS);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
  /* A changed code hash, or a changed library identity: a miss. */
  stc_tuner_policy only = pol;
  only.mode = STC_MODE_CACHE_ONLY;
  for (int changed = 0; changed < 2; changed++) {
    stc_candidate other[3];
    memcpy(other, c, sizeof other);
    if (changed == 0)
      other[1].code_identity = "code=a2";
    else
      other[2].code_identity = "code=b1;blas=/lib/y.so;size=1";
    t = new_tuner(&only, dir);
    call_fake_init(&f, 3, times);
    STC_CHECK_EQ_INT(select_call(t, &p, other, 3, &f, &d), STC_OK);
    STC_CHECK_EQ_INT(d.source, STC_SOURCE_CACHE_MISS);
    STC_CHECK(!d.trusted);
    STC_CHECK_EQ_U64(runner_calls(&f), 0);
    stc_decision_clear(&d);
    stc_tuner_destroy(t);
  }
  /* A candidate whose code is unknown: nothing can be trusted; the record
   * (keyed with the unknown code) is checked on the call instead. */
  stc_candidate unknown[3];
  memcpy(unknown, c, sizeof unknown);
  unknown[2].code_identity = NULL;
  STC_CHECK_EQ_INT(tune_into(dir, &pol, &p, unknown), STC_OK);
  t = new_tuner(&pol, dir);
  call_fake_init(&f, 3, times);
  STC_CHECK_EQ_INT(select_call(t, &p, unknown, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_DISK_CACHE);
  STC_CHECK(!d.trusted && d.served && d.verified);
  STC_CHECK_EQ_U64(f.checks, 1);
  STC_CHECK_EQ_U64(f.reference_runs, 1);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(trust_verified_and_check_on_call_policy_fields) {
  stc_tuner_policy p;
  stc_tuner_policy_init(&p);
  STC_CHECK(p.check_on_call);
  STC_CHECK(!p.trust_verified);
  stc_error err;
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, "TRUST_VERIFIED", "yes", &err),
                   STC_OK);
  STC_CHECK(p.trust_verified);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, "check-on-call", "0", &err),
                   STC_OK);
  STC_CHECK(!p.check_on_call);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, "trust_verified", "maybe", &err),
                   STC_ERR_INVALID);
  STC_CHECK(p.trust_verified); /* unchanged on error */
  STC_CHECK_EQ_INT(stc_tuner_policy_validate(&p, &err), STC_OK);
}

STC_TEST(rule5_cache_only_stops_after_disk) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.mode = STC_MODE_CACHE_ONLY;
  stc_tuner *t = new_tuner(&pol, dir);
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  /* Nothing on disk: the reference, and nothing runs. */
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_CACHE_MISS);
  STC_CHECK_EQ_U64(d.index, 0);
  STC_CHECK_EQ_U64(total_measures(&f) + f.validations[0] + f.validations[1], 0);
  stc_decision_clear(&d);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.misses, 1);
  STC_CHECK_EQ_U64(s.tunes, 0);
  /* With a record on disk: the record, validated once. */
  STC_CHECK_EQ_INT(seed_disk(dir, &p, c), STC_OK);
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_DISK_CACHE);
  STC_CHECK_EQ_U64(d.index, 1);
  STC_CHECK_EQ_U64(f.validations[1], 1);
  STC_CHECK_EQ_U64(total_measures(&f), 0);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule5_non_persistent_problem_skips_disk) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  STC_CHECK_EQ_INT(seed_disk(dir, &p, c), STC_OK); /* p.persistent false */
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  stc_tuner *t = new_tuner(&pol, dir);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  stc_decision_clear(&d);
  /* Nor does a persistent problem find it: nothing was written. */
  p.persistent = true;
  stc_tuner_destroy(t);
  t = new_tuner(&pol, dir);
  fake_init(&f, 3, times);
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule5_unusable_cache_directory_is_a_warning) {
  char path[4200];
  cache_dir(path, sizeof path, "not-a-directory");
  FILE *file = fopen(path, "w");
  STC_CHECK(file);
  fputs("x", file);
  fclose(file);
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  stc_tuner *t = NULL;
  stc_error err;
  STC_CHECK_EQ_INT(stc_tuner_create(&pol, path, &t, &err), STC_OK);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.cache_warnings, 1);
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule5_unwritable_cache_counts_warnings) {
  /* Runs as root too: the cache honours a version directory its owner made
   * read-only even where it could write (lib/tuner/cache.c). */
  char dir[4200], version[4300];
  cache_dir(dir, sizeof dir, "cache");
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  stc_tuner *t = new_tuner(&pol, dir);
  STC_CHECK(t);
  snprintf(version, sizeof version, "%s/v%d", dir, STC_TUNER_CACHE_FORMAT);
  STC_CHECK(chmod(version, 0500) == 0);
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK_EQ_U64(d.index, 1);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  chmod(version, 0700);
  STC_CHECK(s.cache_warnings >= 1); /* the save failed; execution went on */
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

/* ---- rule 6: exploration ------------------------------------------------ */

STC_TEST(rule6_exploration_picks_fastest_checked_candidate) {
  stc_tuner *t = seed_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[4];
  make_candidates(c, 4);
  uint64_t times[FAKE_MAX] = {100, 80, 50, 70};
  fake f;
  fake_init(&f, 4, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 4, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK_EQ_U64(d.index, 2);
  STC_CHECK_STR_EQ(d.name, "b");
  STC_CHECK(d.verified);
  STC_CHECK(d.has_ratio && fabs(d.ratio - 0.5) < 1e-12);
  /* 2 warm-ups, 1 validation each; reference: 2 + 1 + 7 per candidate. */
  STC_CHECK_EQ_U64(f.measures[0], 3 + 3 * 7);
  STC_CHECK_EQ_U64(f.measures[1], 2 + 7);
  STC_CHECK_EQ_U64(f.validations[0], 1);
  STC_CHECK_EQ_U64(f.validations[2], 1);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_min_speedup_not_met_keeps_reference) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {1000, 960}; /* 1.042x < 1.05 */
  fake f;
  fake_init(&f, 2, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 0);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK(d.has_ratio && d.ratio == 1.0);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
  /* 950 of 1000 is exactly 1/1.05 away... 0.95 * 1.05 = 0.9975 <= 1: wins. */
  t = default_tuner();
  times[1] = 950;
  fake_init(&f, 2, times);
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 1);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_win_requires_beating_current_best) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[4];
  make_candidates(c, 4);
  uint64_t times[FAKE_MAX] = {100, 60, 70, 60};
  fake f;
  fake_init(&f, 4, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 4, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 1); /* a tie does not replace the best */
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_noisy_candidate_rejected) {
  stc_tuner *t = seed_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {100, 0};
  /* Ratios 0.3 0.5 0.7 0.4 0.6 0.2 0.8: median 0.5, MAD 0.2, relative 0.4. */
  static const uint64_t noisy[] = {50, 50, 30, 50, 70, 40, 60, 20, 80};
  fake f;
  fake_init(&f, 2, times);
  f.script[1] = noisy;
  f.script_len[1] = 9;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 0);
  stc_decision_clear(&d);
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_EQ_U64(n, 1);
  STC_CHECK_CONTAINS(r[0].candidates[1].note, "noisy");
  STC_CHECK(r[0].candidates[1].has_ratio);
  STC_CHECK(fabs(r[0].candidates[1].ratio - 0.5) < 1e-12);
  STC_CHECK(fabs(r[0].candidates[1].relative_mad - 0.4) < 1e-12);
  STC_CHECK_EQ_U64(r[0].candidates[1].samples, 7);
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);
  /* The same spread under a looser limit wins. */
  stc_tuner_policy pol;
  stc_tuner_policy_init_seed(&pol);
  pol.max_relative_mad = 0.5;
  t = new_tuner(&pol, NULL);
  fake_init(&f, 2, times);
  f.script[1] = noisy;
  f.script_len[1] = 9;
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 1);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_wrong_result_rejected) {
  stc_tuner *t = seed_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 10, 60};
  fake f;
  fake_init(&f, 3, times);
  f.validate_status[1] = STC_ERR_REJECTED;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 2);
  STC_CHECK_EQ_U64(f.measures[1], 2); /* warm-ups only: never timed */
  stc_decision_clear(&d);
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_CONTAINS(r[0].candidates[1].note, "rejected");
  STC_CHECK_CONTAINS(r[0].candidates[1].note, "injected rejected");
  STC_CHECK(!r[0].candidates[1].verified);
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_unsupported_candidate_validation) {
  /* Required validation: a candidate without a validator cannot win. */
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {100, 10};
  fake f;
  fake_init(&f, 2, times);
  f.outcome[1] = STC_VALIDATION_UNSUPPORTED;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK_EQ_U64(d.index, 0);
  STC_CHECK(d.verified);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
  /* Optional validation: it may win, unverified. */
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.require_validation = false;
  t = new_tuner(&pol, NULL);
  fake_init(&f, 2, times);
  f.outcome[1] = STC_VALIDATION_UNSUPPORTED;
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 1);
  STC_CHECK(!d.verified);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_zero_time_rejects_candidate) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 0, 60};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 2);
  stc_decision_clear(&d);
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_CONTAINS(r[0].candidates[1].note, "zero duration");
  STC_CHECK(!r[0].candidates[1].has_ratio);
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_zero_reference_time_is_validation_unavailable) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {0, 10};
  fake f;
  fake_init(&f, 2, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_VALIDATION_UNAVAILABLE);
  STC_CHECK_EQ_U64(d.index, 0);
  STC_CHECK_EQ_U64(f.measures[1], 0);
  stc_decision_clear(&d);
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_EQ_U64(n, 1);
  STC_CHECK_CONTAINS(r[0].candidates[0].note, "zero elapsed time");
  stc_tune_reports_free(r, n);
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_VALIDATION_UNAVAILABLE);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_budget_is_soft_and_checked_between_trials) {
  stc_tuner_policy pol;
  stc_tuner_policy_init_seed(&pol);
  pol.budget_ns = 2000;
  stc_tuner *t = new_tuner(&pol, NULL);
  uint64_t now = 5000;
  stc_tuner_set_clock(t, fake_clock, &now);
  stc_problem p = make_problem("w");
  stc_candidate c[4];
  make_candidates(c, 4);
  /* Reference 300 ns of setup; "a" 2*50 + 7*150 = 1150 (elapsed 1450);
   * "b" starts, warm-ups reach 1530, samples end at 1670, 1810, 1950 and
   * one more that starts at 1950 < 2000 and completes at 2090; the next
   * check stops it. "c" is never started. */
  uint64_t times[FAKE_MAX] = {100, 50, 40, 10};
  fake f;
  fake_init(&f, 4, times);
  f.clock = &now;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 4, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 1);
  STC_CHECK_EQ_U64(f.measures[2], 2 + 4);
  STC_CHECK_EQ_U64(f.measures[3], 0);
  stc_decision_clear(&d);
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK(r[0].budget_exhausted);
  STC_CHECK_EQ_U64(r[0].elapsed_ns, 2090);
  STC_CHECK_CONTAINS(r[0].candidates[2].note, "budget exhausted");
  STC_CHECK_CONTAINS(r[0].candidates[3].note, "search budget exhausted");
  STC_CHECK_EQ_U64(r[0].candidates[3].samples, 0);
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_reference_checked_even_when_budget_is_spent) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.budget_ns = 1;
  stc_tuner *t = new_tuner(&pol, NULL);
  uint64_t now = 0;
  stc_tuner_set_clock(t, fake_clock, &now);
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {100, 10};
  fake f;
  fake_init(&f, 2, times);
  f.clock = &now;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 0);
  STC_CHECK(d.verified);
  STC_CHECK_EQ_U64(f.validations[0], 1);
  STC_CHECK_EQ_U64(f.measures[1], 0);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_candidate_limit) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.max_candidates = 2; /* the reference and one other */
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_problem p = make_problem("w");
  stc_candidate c[4];
  make_candidates(c, 4);
  c[1].eligible = false; /* a skipped candidate does not count */
  uint64_t times[FAKE_MAX] = {100, 10, 80, 20};
  fake f;
  fake_init(&f, 4, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 4, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 2);
  STC_CHECK_EQ_U64(f.measures[3], 0);
  stc_decision_clear(&d);
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK(r[0].budget_exhausted);
  STC_CHECK_CONTAINS(r[0].candidates[3].note, "candidate limit");
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_ineligible_and_workspace_limits_skip_candidates) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.has_workspace_limit = true;
  pol.workspace_limit = 1000;
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_problem p = make_problem("w");
  stc_candidate c[5];
  make_candidates(c, 5);
  c[1].eligible = false;
  c[2].workspace_bytes = 2000;
  c[3].workspace_known = false;
  c[4].workspace_bytes = 1000;
  uint64_t times[FAKE_MAX] = {100, 10, 10, 10, 60};
  fake f;
  fake_init(&f, 5, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 5, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 4);
  STC_CHECK_EQ_U64(f.measures[1] + f.measures[2] + f.measures[3], 0);
  STC_CHECK_EQ_U64(f.validations[1] + f.validations[2] + f.validations[3], 0);
  stc_decision_clear(&d);
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  for (int i = 1; i <= 3; i++) {
    STC_CHECK_CONTAINS(r[0].candidates[i].note, "skipped");
    STC_CHECK_EQ_U64(r[0].candidates[i].samples, 0);
  }
  STC_CHECK(!r[0].budget_exhausted);
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_failing_reference_is_an_error) {
  stc_tuner *t = seed_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {100, 10};
  fake f;
  fake_init(&f, 2, times);
  f.validate_status[0] = STC_ERR_REJECTED;
  stc_decision d;
  stc_error err;
  stc_trial_runner r = runner_of(&f);
  STC_CHECK_EQ_INT(stc_tuner_select(t, &p, c, 2, 0, &r, &d, &err),
                   STC_ERR_REJECTED);
  STC_CHECK(d.name == NULL && d.cache_key == NULL);
  STC_CHECK_CONTAINS(err.message, "injected rejected");
  STC_CHECK_EQ_U64(f.measures[1] + f.validations[1], 0);
  /* A failing reference measurement is an error too. */
  fake_init(&f, 2, times);
  f.measure_status[0] = STC_ERR_IO;
  f.measure_ok[0] = 2; /* warm-ups pass, the timed run fails */
  r = runner_of(&f);
  STC_CHECK_EQ_INT(stc_tuner_select(t, &p, c, 2, 0, &r, &d, &err), STC_ERR_IO);
  STC_CHECK_EQ_U64(f.measures[1], 0);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.tunes, 0);
  STC_CHECK_EQ_U64(s.device_failures, 0);
  STC_CHECK_EQ_U64(s.misses, 2);
  /* Nothing was remembered: a healthy runner tunes normally afterwards. */
  fake_init(&f, 2, times);
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK_EQ_U64(d.index, 1);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_device_error_aborts_and_quarantines) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[4];
  make_candidates(c, 4);
  uint64_t times[FAKE_MAX] = {100, 90, 50, 10};
  fake f;
  fake_init(&f, 4, times);
  f.measure_status[2] = STC_ERR_DEVICE;
  f.measure_ok[2] = 4; /* fails during the paired samples */
  stc_decision d;
  stc_error err;
  stc_trial_runner r = runner_of(&f);
  STC_CHECK_EQ_INT(stc_tuner_select(t, &p, c, 4, 0, &r, &d, &err),
                   STC_ERR_DEVICE);
  STC_CHECK_CONTAINS(err.message, "injected");
  STC_CHECK_EQ_U64(f.measures[3], 0); /* the tune stopped */
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.device_failures, 1);
  STC_CHECK_EQ_U64(s.tunes, 0);
  stc_tune_report *reports;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &reports, &n), STC_OK);
  STC_CHECK_EQ_U64(n, 0);
  STC_CHECK(reports == NULL);
  fake_init(&f, 4, times);
  STC_CHECK_EQ_INT(select0(t, &p, c, 4, &f, &d), STC_ERR_QUARANTINED);
  /* A device error on the reference quarantines too. */
  stc_problem q = make_problem("w");
  q.environment = "gpu:1";
  fake_init(&f, 4, times);
  f.measure_status[0] = STC_ERR_DEVICE;
  STC_CHECK_EQ_INT(select0(t, &q, c, 4, &f, &d), STC_ERR_DEVICE);
  STC_CHECK_EQ_INT(select0(t, &q, c, 4, &f, &d), STC_ERR_QUARANTINED);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_paired_order_alternates) {
  stc_tuner_policy pol;
  stc_tuner_policy_init_seed(&pol);
  pol.warmups = 1;
  pol.samples = 3;
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 60};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  stc_decision_clear(&d);
  /* ref warm-up, ref timed; a: warm-up, then (s+1)%2: a first at s=0,2;
   * b: warm-up, then (s+2)%2: ref first at s=0,2. */
  static const size_t expected[] = {0, 0, 1, 1, 0, 0, 1, 1, 0,
                                    2, 0, 2, 2, 0, 0, 2};
  STC_CHECK_EQ_U64(f.log_len, sizeof expected / sizeof expected[0]);
  for (size_t i = 0; i < f.log_len; i++)
    STC_CHECK_EQ_U64(f.log[i], expected[i]);
  stc_tuner_destroy(t);
}

STC_TEST(rule6_nonzero_reference_index) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {40, 90, 100};
  fake f;
  fake_init(&f, 3, times);
  stc_trial_runner r = runner_of(&f);
  stc_decision d;
  STC_CHECK_EQ_INT(stc_tuner_select(t, &p, c, 3, 2, &r, &d, NULL), STC_OK);
  STC_CHECK_EQ_U64(d.index, 0);
  STC_CHECK_EQ_U64(d.reference_index, 2);
  STC_CHECK(fabs(d.ratio - 0.4) < 1e-12);
  stc_decision_clear(&d);
  stc_tune_report *reports;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &reports, &n), STC_OK);
  STC_CHECK_STR_EQ(reports[0].candidates[0].name, "b"); /* reference first */
  STC_CHECK_STR_EQ(reports[0].candidates[1].name, "ref");
  STC_CHECK_STR_EQ(reports[0].candidates[2].name, "a");
  STC_CHECK_STR_EQ(reports[0].winner, "ref");
  stc_tune_reports_free(reports, n);
  stc_tuner_destroy(t);
}

/* ---- rule 7: reports and counters --------------------------------------- */

STC_TEST(rule7_report_contents_and_notes) {
  stc_tuner *t = seed_tuner();
  uint64_t now = 0;
  stc_tuner_set_clock(t, fake_clock, &now);
  stc_problem p = {STC_SCOPE_GRAPH, "fused.mlp", "cpu:test", "4x128", "ctx1",
                   false};
  stc_candidate c[5];
  make_candidates(c, 5);
  c[4].eligible = false;
  uint64_t times[FAKE_MAX] = {100, 50, 97, 10, 10};
  fake f;
  fake_init(&f, 5, times);
  f.clock = &now;
  f.validate_status[3] = STC_ERR_REJECTED;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 5, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 1);
  stc_decision_clear(&d);
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_EQ_U64(n, 1);
  STC_CHECK_STR_EQ(r[0].operation, "fused.mlp");
  STC_CHECK_STR_EQ(r[0].environment, "cpu:test");
  STC_CHECK_STR_EQ(r[0].workload, "4x128");
  STC_CHECK_STR_EQ(r[0].execution_context, "ctx1");
  STC_CHECK_STR_EQ(r[0].winner, "a");
  STC_CHECK(!r[0].budget_exhausted);
  STC_CHECK_EQ_U64(r[0].elapsed_ns, now);
  STC_CHECK_EQ_U64(r[0].num_candidates, 5);
  const stc_candidate_report *cr = r[0].candidates;
  STC_CHECK_STR_EQ(cr[0].name, "ref");
  STC_CHECK_CONTAINS(cr[0].note, "reference; replaced by a");
  STC_CHECK(cr[0].verified && cr[0].has_ratio && cr[0].ratio == 1.0);
  STC_CHECK_STR_EQ(cr[1].name, "a");
  STC_CHECK_CONTAINS(cr[1].note, "won");
  STC_CHECK_EQ_U64(cr[1].samples, 7);
  STC_CHECK(cr[1].verified && fabs(cr[1].ratio - 0.5) < 1e-12);
  STC_CHECK(cr[1].relative_mad == 0.0);
  STC_CHECK_CONTAINS(cr[2].note, "lost");
  STC_CHECK_CONTAINS(cr[2].note, "not 1.05x faster");
  STC_CHECK(fabs(cr[2].ratio - 0.97) < 1e-12);
  STC_CHECK_CONTAINS(cr[3].note, "rejected");
  STC_CHECK(!cr[3].has_ratio && !cr[3].verified);
  STC_CHECK_CONTAINS(cr[4].note, "skipped");
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);
  /* A candidate that qualifies but is beaten says who beat it. */
  t = seed_tuner();
  uint64_t times2[FAKE_MAX] = {100, 50, 80};
  fake_init(&f, 3, times2);
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_CONTAINS(r[0].candidates[2].note, "a was faster");
  stc_tune_reports_free(r, n);
  /* Nobody qualifies: the reference says it was retained. */
  uint64_t times3[FAKE_MAX] = {100, 100, 120};
  fake_init(&f, 3, times3);
  stc_problem p2 = p;
  p2.workload = "other";
  STC_CHECK_EQ_INT(select0(t, &p2, c, 3, &f, &d), STC_OK);
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_EQ_U64(n, 2);
  STC_CHECK_CONTAINS(r[1].candidates[0].note, "retained");
  STC_CHECK_STR_EQ(r[1].winner, "ref");
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);
}

STC_TEST(rule7_reports_are_bounded) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.capacity = 2; /* reports kept: min(capacity, 128) */
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {100, 50};
  const char *workloads[] = {"w0", "w1", "w2"};
  for (int i = 0; i < 3; i++) {
    stc_problem p = make_problem(workloads[i]);
    fake f;
    fake_init(&f, 2, times);
    stc_decision d;
    STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
    stc_decision_clear(&d);
  }
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_EQ_U64(n, 2);
  STC_CHECK_STR_EQ(r[0].workload, "w1");
  STC_CHECK_STR_EQ(r[1].workload, "w2");
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);
  /* A large capacity still keeps at most 128 reports. */
  stc_tuner_policy_init(&pol);
  t = new_tuner(&pol, NULL);
  for (int i = 0; i < 130; i++) {
    char workload[16];
    snprintf(workload, sizeof workload, "w%d", i);
    stc_problem p = make_problem(workload);
    fake f;
    fake_init(&f, 2, times);
    stc_decision d;
    STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
    stc_decision_clear(&d);
  }
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_EQ_U64(n, 128);
  STC_CHECK_STR_EQ(r[0].workload, "w2");
  STC_CHECK(find_report(r, n, "w129") == 127);
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);
}

STC_TEST(rule7_counters) {
  stc_tuner *t = default_tuner();
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  stc_decision d;
  stc_problem p = make_problem("w");
  fake_init(&f, 3, times);
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK); /* miss + tune */
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK); /* memory hit */
  stc_tuner_invalidate(t, &d, false);                     /* invalidation */
  stc_decision_clear(&d);
  inner_call call;
  STC_CHECK_EQ_INT(busy_probe(t, "x", "cpu:test", &call), STC_SOURCE_BUSY);
  stc_problem q = make_problem("w");
  q.environment = "gpu:0";
  fake_init(&f, 3, times);
  f.measure_status[1] = STC_ERR_DEVICE;
  STC_CHECK_EQ_INT(select0(t, &q, c, 3, &f, &d), STC_ERR_DEVICE);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.memory_hits, 1);
  STC_CHECK_EQ_U64(s.disk_hits, 0);
  STC_CHECK_EQ_U64(s.misses, 3); /* w, outer (busy probe), gpu:0 */
  STC_CHECK_EQ_U64(s.busy_fallbacks, 1);
  STC_CHECK_EQ_U64(s.tunes, 2); /* w, outer */
  STC_CHECK_EQ_U64(s.cache_warnings, 0);
  STC_CHECK_EQ_U64(s.invalidations, 1);
  STC_CHECK_EQ_U64(s.device_failures, 1);
  stc_tuner_destroy(t);
}

/* ---- rule 8: invalidate, record_comparison ------------------------------ */

STC_TEST(rule8_invalidate_with_ban) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 1);
  stc_tuner_invalidate(t, &d, true);
  stc_decision_clear(&d);
  size_t a_runs = f.measures[1];
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK_STR_EQ(d.name, "b");
  STC_CHECK_EQ_U64(f.measures[1], a_runs); /* banned: never run again */
  stc_decision_clear(&d);
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_CONTAINS(r[n - 1].candidates[1].note, "banned");
  stc_tune_reports_free(r, n);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.invalidations, 1);
  stc_tuner_destroy(t);
}

STC_TEST(rule8_invalidate_without_ban_retunes) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  stc_tuner_invalidate(t, &d, false);
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK_STR_EQ(d.name, "a");
  stc_decision_clear(&d);
  /* A ban never applies to the reference: its record keeps being used. */
  stc_problem q = make_problem("slow-candidates");
  uint64_t slow[FAKE_MAX] = {100, 120, 130};
  fake_init(&f, 3, slow);
  STC_CHECK_EQ_INT(select0(t, &q, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 0);
  stc_tuner_invalidate(t, &d, true);
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(select0(t, &q, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK_EQ_U64(d.index, 0);
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(select0(t, &q, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_MEMORY_CACHE);
  stc_decision_clear(&d);
  stc_tuner_invalidate(NULL, &d, true);
  stc_tuner_invalidate(t, NULL, true);
  stc_tuner_destroy(t);
}

STC_TEST(rule8_invalidate_removes_disk_record) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "cache");
  stc_problem p = make_problem("w");
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  STC_CHECK_EQ_INT(seed_disk(dir, &p, c), STC_OK);
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  stc_tuner *t = new_tuner(&pol, dir);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_DISK_CACHE);
  stc_tuner_invalidate(t, &d, false);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
  pol.mode = STC_MODE_CACHE_ONLY;
  t = new_tuner(&pol, dir);
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_CACHE_MISS);
  stc_decision_clear(&d);
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.cache_warnings, 0);
  stc_tuner_destroy(t);
}

STC_TEST(rule8_record_comparison_window) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.regression_pairs = 3;
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_STR_EQ(d.name, "a");
  bool invalidated = true;
  /* A window that is not yet full never invalidates, however bad. */
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, &d, 100, 200, true, &invalidated), STC_OK);
  STC_CHECK(!invalidated);
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, &d, 100, 200, true, &invalidated), STC_OK);
  STC_CHECK(!invalidated);
  stc_tuner_destroy(t);
  /* The median, not one outlier, decides. */
  t = new_tuner(&pol, NULL);
  fake_init(&f, 3, times);
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, &d, 100, 100, true, &invalidated), STC_OK);
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, &d, 100, 300, true, &invalidated), STC_OK);
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, &d, 100, 110, true, &invalidated), STC_OK);
  STC_CHECK(!invalidated); /* median 1.10 <= 1.15 despite one outlier */
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, &d, 100, 120, true, &invalidated), STC_OK);
  STC_CHECK(invalidated); /* window {3.0, 1.1, 1.2}: median 1.2 > 1.15 */
  stc_tuner_stats s;
  stc_tuner_stats_get(t, &s);
  STC_CHECK_EQ_U64(s.invalidations, 1);
  /* The record is gone: later comparisons are ignored... */
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, &d, 100, 500, true, &invalidated), STC_OK);
  STC_CHECK(!invalidated);
  /* ...and the regressed winner is banned. */
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  STC_CHECK_STR_EQ(d.name, "b");
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(rule8_record_comparison_rejects_invalid_input) {
  stc_tuner *t = default_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  bool invalidated = true;
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, &d, 100, 200, false, &invalidated), STC_ERR_INVALID);
  STC_CHECK(!invalidated);
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, &d, 0, 200, true, NULL), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, &d, 100, 0, true, NULL), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, NULL, 100, 200, true, NULL), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(NULL, &d, 100, 200, true, NULL), STC_ERR_INVALID);
  /* Invalid input never fills the window: 7 bad pairs are needed after it. */
  for (int i = 0; i < 6; i++) {
    STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, &d, 100, 500, true, &invalidated), STC_OK);
    STC_CHECK(!invalidated);
  }
  /* A decision that is not the one on record is ignored. */
  stc_decision other = d;
  other.name = "b";
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, &other, 100, 500, true, &invalidated), STC_OK);
  STC_CHECK(!invalidated);
  STC_CHECK_EQ_INT(stc_tuner_record_comparison(t, &d, 100, 500, true, &invalidated), STC_OK);
  STC_CHECK(invalidated);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

/* ---- rule 9: pipeline fingerprint --------------------------------------- */

STC_TEST(rule9_pipeline_key_changes_when_operator_decision_changes) {
  stc_tuner *t = default_tuner();
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  char empty[65], after_op[65], after_pipe[65], after_retune[65];
  stc_tuner_lower_level_fingerprint(t, empty);
  STC_CHECK_EQ_U64(strlen(empty), 64);

  stc_problem op = make_problem("w");
  stc_decision op_d, pipe1, pipe2, pipe3;
  STC_CHECK_EQ_INT(select0(t, &op, c, 3, &f, &op_d), STC_OK);
  STC_CHECK_STR_EQ(op_d.name, "a");
  stc_tuner_lower_level_fingerprint(t, after_op);
  STC_CHECK(strcmp(empty, after_op) != 0);

  stc_problem pipe = {STC_SCOPE_PIPELINE, "model", "cpu:test", "batch1", "",
                      false};
  STC_CHECK_EQ_INT(select0(t, &pipe, c, 3, &f, &pipe1), STC_OK);
  STC_CHECK_EQ_INT(pipe1.source, STC_SOURCE_TUNED);
  STC_CHECK_CONTAINS(pipe1.cache_key, after_op);
  /* A pipeline decision is not a lower-level one. */
  stc_tuner_lower_level_fingerprint(t, after_pipe);
  STC_CHECK_STR_EQ(after_pipe, after_op);
  STC_CHECK_EQ_INT(select0(t, &pipe, c, 3, &f, &pipe2), STC_OK);
  STC_CHECK_EQ_INT(pipe2.source, STC_SOURCE_MEMORY_CACHE);
  STC_CHECK_STR_EQ(pipe2.cache_key, pipe1.cache_key);

  /* The operator's winner regresses and is banned: it retunes to "b". */
  stc_tuner_invalidate(t, &op_d, true);
  stc_decision_clear(&op_d);
  STC_CHECK_EQ_INT(select0(t, &op, c, 3, &f, &op_d), STC_OK);
  STC_CHECK_STR_EQ(op_d.name, "b");
  stc_tuner_lower_level_fingerprint(t, after_retune);
  STC_CHECK(strcmp(after_retune, after_op) != 0);
  STC_CHECK_EQ_INT(select0(t, &pipe, c, 3, &f, &pipe3), STC_OK);
  STC_CHECK_EQ_INT(pipe3.source, STC_SOURCE_TUNED);
  STC_CHECK(strcmp(pipe3.cache_key, pipe1.cache_key) != 0);
  /* An operator-scope key does not depend on the fingerprint. */
  stc_decision op_again;
  STC_CHECK_EQ_INT(select0(t, &op, c, 3, &f, &op_again), STC_OK);
  STC_CHECK_STR_EQ(op_again.cache_key, op_d.cache_key);
  STC_CHECK_EQ_INT(op_again.source, STC_SOURCE_MEMORY_CACHE);
  stc_decision_clear(&op_again);
  stc_decision_clear(&op_d);
  stc_decision_clear(&pipe1);
  stc_decision_clear(&pipe2);
  stc_decision_clear(&pipe3);
  stc_tuner_destroy(t);
}

STC_TEST(rule9_bypassed_operator_counts_in_fingerprint) {
  stc_tuner *t = default_tuner();
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {0, 10}; /* zero reference time: bypass */
  fake f;
  fake_init(&f, 2, times);
  char before[65], after[65];
  stc_tuner_lower_level_fingerprint(t, before);
  stc_problem op = make_problem("w");
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &op, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_VALIDATION_UNAVAILABLE);
  stc_decision_clear(&d);
  stc_tuner_lower_level_fingerprint(t, after);
  STC_CHECK(strcmp(before, after) != 0);
  stc_tuner_destroy(t);
}

/* ---- keys and capacity -------------------------------------------------- */

static char *key_of(stc_tuner *t, const stc_problem *p, const stc_candidate *c,
                    size_t count, size_t reference) {
  stc_decision d;
  uint64_t times[FAKE_MAX] = {100, 100, 100, 100};
  fake f;
  fake_init(&f, 4, times);
  stc_trial_runner r = runner_of(&f);
  if (stc_tuner_select(t, p, c, count, reference, &r, &d, NULL) != STC_OK)
    return NULL;
  char *key = d.cache_key;
  d.cache_key = NULL;
  stc_decision_clear(&d);
  return key;
}

STC_TEST(cache_key_is_unambiguous_and_complete) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.mode = STC_MODE_DISABLED; /* keys only */
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_candidate c[3];
  make_candidates(c, 3);
  stc_problem p1 = {STC_SCOPE_OPERATOR, "ab", "cpu", "c", "", false};
  stc_problem p2 = {STC_SCOPE_OPERATOR, "a", "cpu", "bc", "", false};
  char *keys[12] = {0};
  int k = 0;
  keys[k++] = key_of(t, &p1, c, 3, 0);
  keys[k++] = key_of(t, &p2, c, 3, 0);
  stc_problem p3 = p1;
  p3.scope = STC_SCOPE_GRAPH;
  keys[k++] = key_of(t, &p3, c, 3, 0);
  stc_problem p4 = p1;
  p4.execution_context = "stream2";
  keys[k++] = key_of(t, &p4, c, 3, 0);
  keys[k++] = key_of(t, &p1, c, 3, 1); /* another reference */
  keys[k++] = key_of(t, &p1, c, 2, 0); /* fewer candidates */
  c[1].revision = "2";
  keys[k++] = key_of(t, &p1, c, 3, 0);
  make_candidates(c, 3);
  c[1].workspace_bytes = 4096;
  keys[k++] = key_of(t, &p1, c, 3, 0);
  make_candidates(c, 3);
  c[1].workspace_known = false;
  keys[k++] = key_of(t, &p1, c, 3, 0);
  make_candidates(c, 3);
  c[2].eligible = false;
  keys[k++] = key_of(t, &p1, c, 3, 0);
  make_candidates(c, 3);
  stc_tuner *t2;
  pol.tolerance.relative = 1e-2;
  t2 = new_tuner(&pol, NULL);
  keys[k++] = key_of(t2, &p1, c, 3, 0);
  pol.tolerance.relative = 1e-3;
  pol.require_validation = false;
  stc_tuner *t3 = new_tuner(&pol, NULL);
  keys[k++] = key_of(t3, &p1, c, 3, 0);
  for (int i = 0; i < k; i++) {
    STC_CHECK(keys[i] != NULL);
    for (int j = 0; j < i; j++)
      STC_CHECK(strcmp(keys[i], keys[j]) != 0);
  }
  /* Same request, same key; a NULL context and revision mean "" and "1". */
  char *again = key_of(t, &p1, c, 3, 0);
  STC_CHECK_STR_EQ(again, keys[0]);
  free(again);
  stc_problem p5 = p1;
  p5.execution_context = NULL;
  c[0].revision = "1";
  again = key_of(t, &p5, c, 3, 0);
  STC_CHECK_STR_EQ(again, keys[0]);
  free(again);
  for (int i = 0; i < k; i++)
    free(keys[i]);
  stc_tuner_destroy(t);
  stc_tuner_destroy(t2);
  stc_tuner_destroy(t3);
}

/* The key's bytes, field by field, are what every stored record was keyed
 * by: a change would turn every disk record into a miss. The expected texts
 * were printed by the snprintf-based key writer this one replaced (lib/tuner
 * before the warm-path work): extremes of each number's spelling (a 20-digit
 * workspace, a double's 16 hex digits, an empty field), every optional field
 * (code identities, trust-verified, tf32, a context) and a pipeline key's
 * fingerprint of a lower-level record (the digest computed on demand). */
STC_TEST(key_bytes_are_stable) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.trust_verified = true;
  pol.allow_tf32 = true;
  pol.tolerance.absolute = 3e-5;
  pol.tolerance.relative = 0.0125;
  pol.tolerance.readback_limit = 1234567890123ull;
  stc_tuner *t = new_tuner(&pol, NULL);
  STC_CHECK(t != NULL);
  stc_candidate c[3] = {
      {"ref", NULL, true, 0, true, "code=abc"},
      {"variant_with_a_longer_name", "12", true, UINT64_MAX, true,
       "code=def;blas=none"},
      {"c", "1", false, 0, false, NULL}};
  stc_problem op = {STC_SCOPE_OPERATOR, "site|linalg.matmul",
                    "cpu:test x86-64 avx512",
                    "f32[-9223372036854775808x0:1,-1]+off", "ctx", true};
  uint64_t times[FAKE_MAX] = {100, 50, 100};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &op, c, 3, &f, &d), STC_OK);
  STC_CHECK_STR_EQ(
      d.cache_key,
      "stc-tuner-key=1:1;scope=1:0;operation=18:site|linalg.matmul;"
      "environment=22:cpu:test x86-64 avx512;"
      "workload=36:f32[-9223372036854775808x0:1,-1]+off;context=3:ctx;"
      "candidates=1:3;name=3:ref;revision=1:1;workspace=1:0;eligible=1:1;"
      "code=8:code=abc;name=26:variant_with_a_longer_name;revision=2:12;"
      "workspace=20:18446744073709551615;eligible=1:1;"
      "code=18:code=def;blas=none;name=1:c;revision=1:1;"
      "workspace=7:unknown;eligible=1:0;code=0:;reference=1:0;"
      "require-validation=1:1;tolerance-absolute=16:3eff75104d551d69;"
      "tolerance-relative=16:3f8999999999999a;"
      "tolerance-readback=13:1234567890123;trust-verified=1:1;"
      "tolerance-tf32=16:3f847ae147ae147b;");
  stc_decision_clear(&d);
  stc_problem pipe = {STC_SCOPE_PIPELINE, "model", "cpu:test", "batch1", NULL,
                      false};
  STC_CHECK_EQ_INT(select0(t, &pipe, c, 2, &f, &d), STC_OK);
  STC_CHECK_STR_EQ(
      d.cache_key,
      "stc-tuner-key=1:1;scope=1:2;operation=5:model;environment=8:cpu:test;"
      "workload=6:batch1;context=0:;candidates=1:2;name=3:ref;revision=1:1;"
      "workspace=1:0;eligible=1:1;code=8:code=abc;"
      "name=26:variant_with_a_longer_name;revision=2:12;"
      "workspace=20:18446744073709551615;eligible=1:1;"
      "code=18:code=def;blas=none;reference=1:0;require-validation=1:1;"
      "tolerance-absolute=16:3eff75104d551d69;"
      "tolerance-relative=16:3f8999999999999a;"
      "tolerance-readback=13:1234567890123;trust-verified=1:1;"
      "tolerance-tf32=16:3f847ae147ae147b;lower-level=64:"
      "eec4b59bf3c5e0099e346f5212119ca1353c79096ff7f127e3d847616e21da9f;");
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(capacity_evicts_oldest_record) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.capacity = 2;
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {100, 50};
  fake f;
  fake_init(&f, 2, times);
  stc_problem w[3] = {make_problem("w0"), make_problem("w1"), make_problem("w2")};
  stc_decision d;
  for (int i = 0; i < 3; i++) {
    STC_CHECK_EQ_INT(select0(t, &w[i], c, 2, &f, &d), STC_OK);
    STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
    stc_decision_clear(&d);
  }
  STC_CHECK_EQ_INT(select0(t, &w[2], c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_MEMORY_CACHE);
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(select0(t, &w[1], c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_MEMORY_CACHE);
  stc_decision_clear(&d);
  /* w0 was evicted; tuning it again evicts w1 (FIFO, not LRU). */
  STC_CHECK_EQ_INT(select0(t, &w[0], c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(select0(t, &w[1], c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

STC_TEST(many_keys_stay_bounded_and_findable) {
  /* Exercises the hash map's growth and eviction with more keys than
   * capacity; every retained key is still a memory hit. */
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.capacity = 100;
  pol.warmups = 0;
  pol.samples = 1;
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {100, 50};
  fake f;
  fake_init(&f, 2, times);
  stc_decision d;
  for (int i = 0; i < 250; i++) {
    char workload[16];
    snprintf(workload, sizeof workload, "w%d", i);
    stc_problem p = make_problem(workload);
    STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
    stc_decision_clear(&d);
  }
  for (int i = 150; i < 250; i++) {
    char workload[16];
    snprintf(workload, sizeof workload, "w%d", i);
    stc_problem p = make_problem(workload);
    STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
    STC_CHECK_EQ_INT(d.source, STC_SOURCE_MEMORY_CACHE);
    stc_decision_clear(&d);
  }
  stc_problem old = make_problem("w149");
  STC_CHECK_EQ_INT(select0(t, &old, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  stc_decision_clear(&d);
  stc_tuner_destroy(t);
}

/* ---- economics: racing, order, budget cuts, targets, trials ------------- */

/* A fixed exploration order, and how often the tuner asked for it. It may
 * claim more indices than it holds (to test the capacity check). */
typedef struct fixed_order {
  const size_t *items;
  size_t count, claimed, calls;
} fixed_order;

static size_t fill_fixed(void *user, size_t *order, size_t capacity) {
  fixed_order *o = user;
  o->calls++;
  size_t n = o->count < capacity ? o->count : capacity;
  if (n)
    memcpy(order, o->items, n * sizeof *order);
  return o->claimed > o->count ? o->claimed : o->count;
}

/* stc_tuner_select_ordered with the order items[0..n-1]. */
static stc_status select_in_order(stc_tuner *t, const stc_problem *p,
                                  const stc_candidate *c, size_t count,
                                  size_t reference, const size_t *items,
                                  size_t n, const stc_trial_runner *r,
                                  stc_decision *d, stc_error *err) {
  fixed_order o = {items, n, 0, 0};
  stc_exploration_order order = {&o, fill_fixed};
  return stc_tuner_select_ordered(t, p, c, count, reference, &order, r, d,
                                  err);
}

/* The default policy without a target or a reachable budget: what the
 * racing property compares with the exhaustive search. */
static void unbounded_policy(stc_tuner_policy *pol) {
  stc_tuner_policy_init(pol);
  pol->target_ns = 0;
  pol->budget_ns = UINT64_MAX;
  pol->race_min_ns = 0; /* scripted times are nanoseconds */
}

/* noise_retries: a candidate whose first set of pairs is too noisy is timed
 * again on fresh pairs; stable ones then score it (it wins). With 0 (the
 * seed's rule), or when the fresh pairs are noisy too, it is rejected and
 * the note says how often it was timed again. */
STC_TEST(economics_noisy_candidate_timed_again) {
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {100, 0};
  /* One warm-up (validation counts as the first), 7 noisy pairs (relative
   * MAD 0.4, as in rule6_noisy_candidate_rejected), then 50 for ever. */
  static const uint64_t noisy_then_stable[] = {50, 30, 50, 70, 40, 60, 20, 80, 50};
  static const uint64_t always_noisy[] = {50, 30, 50, 70, 40, 60, 20, 80,
                                          30, 50, 70, 40, 60, 20, 80,
                                          30, 50, 70, 40, 60, 20, 80};
  for (int retries = 0; retries <= 1; retries++) {
    for (int stable = 0; stable <= 1; stable++) {
      stc_tuner_policy pol;
      unbounded_policy(&pol);
      pol.noise_retries = (uint32_t)retries;
      stc_tuner *t = new_tuner(&pol, NULL);
      fake f;
      fake_init(&f, 2, times);
      f.script[1] = stable ? noisy_then_stable : always_noisy;
      f.script_len[1] = stable ? 9 : 22;
      stc_decision d;
      STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
      STC_CHECK_EQ_U64(d.index, retries && stable ? 1u : 0u);
      STC_CHECK_EQ_U64(f.measures[1], 1 + 7 * (size_t)(1 + retries));
      stc_decision_clear(&d);
      stc_tune_report *r;
      size_t n;
      STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
      STC_CHECK_EQ_U64(n, 1);
      if (retries && stable) {
        STC_CHECK_CONTAINS(r[0].candidates[1].note, "won");
        STC_CHECK(fabs(r[0].candidates[1].ratio - 0.5) < 1e-12);
      } else {
        STC_CHECK_CONTAINS(r[0].candidates[1].note, "too noisy");
        if (retries)
          STC_CHECK_CONTAINS(r[0].candidates[1].note, "on its 1 fresh set(s) of pairs too");
      }
      stc_tune_reports_free(r, n);
      stc_tuner_destroy(t);
    }
  }
  stc_tuner_policy pol;
  stc_tuner_policy_init_seed(&pol);
  STC_CHECK_EQ_U64(pol.noise_retries, 0);
  stc_tuner_policy_init(&pol);
  STC_CHECK_EQ_U64(pol.noise_retries, 1);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&pol, "noise_retries", "3", NULL), STC_OK);
  STC_CHECK_EQ_U64(pol.noise_retries, 3);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&pol, "noise_retries", "9", NULL), STC_ERR_INVALID);
  STC_CHECK_EQ_U64(pol.noise_retries, 3);
}

STC_TEST(economics_policy_defaults_seed_and_validation) {
  stc_tuner_policy p;
  stc_tuner_policy_init(&p);
  STC_CHECK(p.early_rejection);
  STC_CHECK_EQ_U64(p.race_pairs, 2);
  STC_CHECK(p.race_margin == 0.25);
  STC_CHECK(p.race_warmup_factor == 8.0);
  STC_CHECK_EQ_U64(p.race_min_ns, 1000000);
  STC_CHECK_EQ_INT(p.order, STC_ORDER_PROMISING);
  STC_CHECK(p.validate_first);
  STC_CHECK_EQ_U64(p.target_ns, 1000000000ull);
  STC_CHECK_EQ_U64(p.budget_cut_samples, 3);
  stc_tuner_policy seed;
  stc_tuner_policy_init_seed(&seed);
  STC_CHECK(!seed.early_rejection);
  STC_CHECK_EQ_INT(seed.order, STC_ORDER_DECLARED);
  STC_CHECK(!seed.validate_first);
  STC_CHECK_EQ_U64(seed.target_ns, 0);
  STC_CHECK_EQ_U64(seed.budget_cut_samples, 0);
  /* Everything else is the seed's DESIGN.md defaults. */
  STC_CHECK_EQ_U64(seed.budget_ns, 30000000000ull);
  STC_CHECK_EQ_U64(seed.warmups, 2);
  STC_CHECK_EQ_U64(seed.samples, 7);
  stc_error err;
  STC_CHECK_EQ_INT(stc_tuner_policy_validate(&seed, &err), STC_OK);
  for (int i = 0; i < 8; i++) {
    stc_tuner_policy bad;
    stc_tuner_policy_init(&bad);
    switch (i) {
    case 0: bad.race_pairs = 0; break;
    case 1: bad.race_margin = -0.01; break;
    case 2: bad.race_margin = NAN; break;
    case 3: bad.race_warmup_factor = 0.99; break;
    case 4: bad.race_warmup_factor = INFINITY; break;
    case 5: bad.order = (stc_tune_order)5; break;
    case 6: bad.budget_cut_samples = 200000; break;
    case 7: bad.race_pairs = 200000; break;
    }
    stc_error_clear(&err);
    STC_CHECK_EQ_INT(stc_tuner_policy_validate(&bad, &err), STC_ERR_INVALID);
    STC_CHECK(err.message[0] != 0);
  }
  STC_CHECK_STR_EQ(stc_tune_order_str(STC_ORDER_PROMISING), "promising");
  STC_CHECK_STR_EQ(stc_tune_order_str(STC_ORDER_DECLARED), "declared");
}

STC_TEST(economics_policy_set_by_name) {
  stc_tuner_policy p;
  stc_tuner_policy_init(&p);
  stc_error err;
#define SET(field, value) STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, field, value, &err), STC_OK)
  SET("EARLY_REJECTION", "0"); /* STC_TUNE_EARLY_REJECTION=0 */
  STC_CHECK(!p.early_rejection);
  STC_CHECK(p.require_validation); /* a bool sets only its own field */
  SET("early-rejection", "on");
  STC_CHECK(p.early_rejection);
  SET("race_pairs", "3");
  STC_CHECK_EQ_U64(p.race_pairs, 3);
  SET("race_margin", "0");
  STC_CHECK(p.race_margin == 0);
  SET("race-warmup-factor", "4.5");
  STC_CHECK(p.race_warmup_factor == 4.5);
  SET("race_min_us", "250");
  STC_CHECK_EQ_U64(p.race_min_ns, 250000);
  SET("race_min_ms", "0");
  STC_CHECK_EQ_U64(p.race_min_ns, 0);
  SET("order", "declared");
  STC_CHECK_EQ_INT(p.order, STC_ORDER_DECLARED);
  SET("ORDER", "Promising");
  STC_CHECK_EQ_INT(p.order, STC_ORDER_PROMISING);
  SET("validate_first", "false");
  STC_CHECK(!p.validate_first);
  STC_CHECK(p.require_validation);
  SET("target_ms", "250");
  STC_CHECK_EQ_U64(p.target_ns, 250000000ull);
  SET("target_s", "2");
  STC_CHECK_EQ_U64(p.target_ns, 2000000000ull);
  SET("target_ns", "0");
  STC_CHECK_EQ_U64(p.target_ns, 0);
  SET("budget_cut_samples", "0");
  STC_CHECK_EQ_U64(p.budget_cut_samples, 0);
#undef SET
  STC_CHECK_EQ_INT(stc_tuner_policy_validate(&p, &err), STC_OK);
  static const char *const bad[][2] = {
      {"early_rejection", "maybe"}, {"race_pairs", "0"},
      {"race_pairs", "-1"},         {"race_margin", "-0.5"},
      {"race_margin", "nan"},       {"race_warmup_factor", "0.5"},
      {"order", "fastest"},         {"order", ""},
      {"validate_first", "2"},      {"target_ms", "-1"},
      {"target_s", "99999999999999999999"}, {"budget_cut_samples", "x"},
      {"budget_cut_samples", "4294967297"}, {"race_min_ms", "soon"},
  };
  STC_CHECK_EQ_U64(first_accepted(&p, bad, sizeof bad / sizeof bad[0]),
                   sizeof bad / sizeof bad[0]);
}

STC_TEST(economics_racing_stops_clearly_slower_candidates) {
  stc_tuner *t = new_tuner(&(stc_tuner_policy){0}, NULL); /* invalid: NULL */
  STC_CHECK(t == NULL);
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.race_min_ns = 0; /* scripted times are nanoseconds */
  /* The run counts below are those of racing from the first pair, with a
   * warm-up factor of 3 (the defaults are stricter about stopping). */
  pol.race_pairs = 1;
  pol.race_warmup_factor = 3.0;
  t = new_tuner(&pol, NULL);
  stc_problem p = make_problem("w");
  stc_candidate c[4];
  make_candidates(c, 4);
  /* "a" is 4x faster (the bar becomes 0.25); "b" at 0.8 and "c" at 0.5
   * are over 1.25x the bar in their warm-up run and first pair: two runs,
   * the fewest racing judges. */
  uint64_t times[FAKE_MAX] = {100, 25, 80, 50};
  fake f;
  fake_init(&f, 4, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 4, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 1);
  STC_CHECK(fabs(d.ratio - 0.25) < 1e-12);
  stc_decision_clear(&d);
  /* Validation first (it warms like a warm-up), one more warm-up. */
  STC_CHECK_EQ_U64(f.measures[1], 1 + 7);
  STC_CHECK_EQ_U64(f.measures[2], 1 + 1);
  STC_CHECK_EQ_U64(f.measures[3], 1 + 1);
  STC_CHECK_EQ_U64(f.validations[2], 1);
  STC_CHECK_EQ_U64(f.measures[0], 2 + 7 + 1 + 1);
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  const stc_candidate_report *cr = r[0].candidates;
  STC_CHECK_CONTAINS(cr[1].note, "won");
  STC_CHECK_CONTAINS(cr[2].note, "rejected early: best ratio 0.8000");
  STC_CHECK_CONTAINS(cr[3].note, "rejected early: best ratio 0.5000");
  STC_CHECK_CONTAINS(cr[3].note, "after 1 of 7 pairs");
  STC_CHECK_EQ_U64(cr[3].samples, 1);
  STC_CHECK(cr[3].has_ratio && fabs(cr[3].ratio - 0.5) < 1e-12);
  STC_CHECK(cr[3].verified);
  /* Trials: every runner call, the paired reference runs included. */
  STC_CHECK_EQ_U64(cr[0].trials, 3);      /* validation, warm-up, timed */
  STC_CHECK_EQ_U64(cr[1].trials, 2 + 14); /* validation, warm-up, 7 pairs */
  STC_CHECK_EQ_U64(cr[2].trials, 2 + 2);
  STC_CHECK_EQ_U64(cr[3].trials, 2 + 2);
  STC_CHECK_EQ_U64(r[0].trials, 3 + 16 + 4 + 4);
  STC_CHECK_EQ_U64(r[0].trials, total_measures(&f) + f.validations[0] +
                                    f.validations[1] + f.validations[2] +
                                    f.validations[3]);
  STC_CHECK(!r[0].budget_exhausted);
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);

  /* Warm-ups before validation (validate_first=0), two timed: "b" is over
   * race_warmup_factor (3) x the bar in both and stops before any pair;
   * "c" (2x the bar) goes on to its first pair. */
  pol.validate_first = false;
  t = new_tuner(&pol, NULL);
  fake_init(&f, 4, times);
  STC_CHECK_EQ_INT(select0(t, &p, c, 4, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 1);
  stc_decision_clear(&d);
  STC_CHECK_EQ_U64(f.measures[2], 2);
  STC_CHECK_EQ_U64(f.validations[2], 0); /* a loser needs no check */
  STC_CHECK_EQ_U64(f.measures[3], 2 + 1);
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_CONTAINS(r[0].candidates[2].note,
                     "rejected early: best ratio 0.8000 in 2 runs (0 pairs)");
  STC_CHECK_EQ_U64(r[0].candidates[2].samples, 0);
  STC_CHECK(!r[0].candidates[2].has_ratio);
  STC_CHECK_EQ_U64(r[0].candidates[2].trials, 2);
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);
  pol.validate_first = true;

  /* STC_TUNE_EARLY_REJECTION=0: the same candidates are timed in full. */
  stc_error err;
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&pol, "early_rejection", "0", &err),
                   STC_OK);
  t = new_tuner(&pol, NULL);
  fake_init(&f, 4, times);
  STC_CHECK_EQ_INT(select0(t, &p, c, 4, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 1);
  stc_decision_clear(&d);
  STC_CHECK_EQ_U64(f.measures[2], 1 + 7);
  STC_CHECK_EQ_U64(f.measures[3], 1 + 7);
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_CONTAINS(r[0].candidates[3].note, "lost");
  STC_CHECK_EQ_U64(r[0].candidates[3].trials, 2 + 14);
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);

  /* Runs shorter than race_min_ns are never judged (the default 1 ms is
   * far above these nanoseconds). */
  stc_tuner_policy_init(&pol);
  t = new_tuner(&pol, NULL);
  fake_init(&f, 4, times);
  STC_CHECK_EQ_INT(select0(t, &p, c, 4, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 1);
  stc_decision_clear(&d);
  STC_CHECK_EQ_U64(f.measures[2], 1 + 7);
  STC_CHECK_EQ_U64(f.measures[3], 1 + 7);
  stc_tuner_destroy(t);
}

STC_TEST(economics_racing_judges_the_median_from_three_pairs) {
  /* One lucky fast pair (0.5) among slow ones (1.3): the smallest ratio
   * would keep it forever; from three pairs on the median (1.3) is judged
   * against 1 + 0.25/sqrt(3) = 1.144x the bar 1/1.05. */
  stc_tuner_policy pol;
  unbounded_policy(&pol);
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_problem p = make_problem("w");
  stc_candidate c[2];
  make_candidates(c, 2);
  uint64_t times[FAKE_MAX] = {100, 0};
  static const uint64_t lucky_once[] = {130, 50, 130};
  fake f;
  fake_init(&f, 2, times);
  f.script[1] = lucky_once;
  f.script_len[1] = 3;
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 2, &f, &d), STC_OK);
  STC_CHECK_EQ_U64(d.index, 0);
  stc_decision_clear(&d);
  STC_CHECK_EQ_U64(f.measures[1], 1 + 3);
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_CONTAINS(r[0].candidates[1].note,
                     "rejected early: paired median ratio 1.3000 after 3 of 7");
  STC_CHECK_EQ_U64(r[0].candidates[1].samples, 3);
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);
}

STC_TEST(economics_one_slow_run_does_not_stop_a_candidate) {
  /* "a" is 4x faster, but its first paired run is preempted (10x its
   * time): its warm-up run still shows 0.25, and racing judges the best
   * ratio seen, so it is not stopped. "b" sets a bar of 0.5 first. */
  stc_tuner_policy pol;
  unbounded_policy(&pol);
  pol.duel_rematch = 0; /* b, at 2x a's ratio, would get a rematch: the
                           runs counted here are exploration's */
  stc_tuner *t = new_tuner(&pol, NULL);
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 0, 50};
  static const uint64_t preempted[] = {25, 250, 25};
  fake f;
  fake_init(&f, 3, times);
  f.script[1] = preempted;
  f.script_len[1] = 3;
  const size_t order[] = {2, 1};
  stc_trial_runner r = runner_of(&f);
  stc_decision d;
  STC_CHECK_EQ_INT(
      select_in_order(t, &p, c, 3, 0, order, 2, &r, &d, NULL), STC_OK);
  STC_CHECK_STR_EQ(d.name, "a");
  STC_CHECK(fabs(d.ratio - 0.25) < 1e-12);
  stc_decision_clear(&d);
  STC_CHECK_EQ_U64(f.measures[1], 1 + 7);
  stc_tuner_destroy(t);
}

STC_TEST(economics_slow_first_runs_do_not_lose_the_fastest) {
  /* The regret benchmark's misses (mnist_mlp_l1, gpt2_c_attn): an OpenMP
   * variant's first runs pay for starting its thread pool, or share the
   * cores with the previous candidate's still spinning pool. Scripted: "a"
   * runs its warm-up at 10x the reference and its first pair at 3x, then
   * steadily at 0.4x; "b" (0.8x, steady) sets the bar first. With the
   * default racing settings "a" must still win, with its steady ratio, as
   * it does with early rejection off. */
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 0, 80};
  static const uint64_t cold_start[] = {1000, 300, 40};
  const size_t order[] = {2, 1};
  for (int racing = 0; racing < 2; racing++) {
    stc_tuner_policy pol;
    unbounded_policy(&pol);
    pol.early_rejection = racing;
    pol.duel_rematch = 0; /* as above: exploration's runs only */
    stc_tuner *t = new_tuner(&pol, NULL);
    fake f;
    fake_init(&f, 3, times);
    f.script[1] = cold_start;
    f.script_len[1] = 3;
    stc_trial_runner r = runner_of(&f);
    stc_decision d;
    STC_CHECK_EQ_INT(
        select_in_order(t, &p, c, 3, 0, order, 2, &r, &d, NULL), STC_OK);
    STC_CHECK_STR_EQ(d.name, "a");
    STC_CHECK(fabs(d.ratio - 0.4) < 1e-12);
    /* Validation, one warm-up and all 7 pairs: never stopped. */
    STC_CHECK_EQ_U64(f.measures[1], 1 + 7);
    stc_decision_clear(&d);
    stc_tuner_destroy(t);
  }
}

STC_TEST(economics_seed_trial_counts) {
  /* Under the seed's rules each candidate costs 2 warm-ups, a validation
   * and 7 pairs, the reference 2 warm-ups, a validation and a timed run. */
  stc_tuner *t = seed_tuner();
  stc_problem p = make_problem("w");
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 80};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  stc_decision_clear(&d);
  stc_tune_report *r;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
  STC_CHECK_EQ_U64(r[0].candidates[0].trials, 4);
  STC_CHECK_EQ_U64(r[0].candidates[1].trials, 17);
  STC_CHECK_EQ_U64(r[0].candidates[2].trials, 17);
  STC_CHECK_EQ_U64(r[0].trials, 38);
  STC_CHECK_EQ_U64(r[0].trials, total_measures(&f) + 3);
  stc_tune_reports_free(r, n);
  stc_tuner_destroy(t);
}

/* One random stable script: every candidate always takes the same time.
 * Times come partly from a small set (ties, the min_speedup boundary
 * 952/953 of 1000) and partly uniform. */
static size_t random_script(unsigned *state, uint64_t *times, stc_candidate *c,
                            size_t *reference, size_t *order,
                            size_t *order_count) {
  static const uint64_t special[] = {250, 500, 900, 952, 953, 1000, 1200, 4000};
  size_t count = 2 + (size_t)(rand_r(state) % (FAKE_MAX - 1));
  make_candidates(c, count);
  for (size_t i = 0; i < count; i++)
    times[i] = rand_r(state) % 2
                   ? special[rand_r(state) % 8]
                   : 200 + (uint64_t)(rand_r(state) % 1300);
  *reference = (size_t)rand_r(state) % count;
  times[*reference] = 1000;
  /* A random permutation as the exploration order, sometimes partial. */
  for (size_t i = 0; i < count; i++)
    order[i] = i;
  for (size_t i = count; i > 1; i--) {
    size_t j = (size_t)rand_r(state) % i, swap = order[i - 1];
    order[i - 1] = order[j];
    order[j] = swap;
  }
  *order_count = (size_t)rand_r(state) % (count + 1);
  return count;
}

STC_TEST(economics_racing_never_changes_the_winner_on_stable_timings) {
  unsigned state = 20261203;
  size_t raced_out = 0, racing_runs = 0, exhaustive_runs = 0;
  for (int round = 0; round < 1500; round++) {
    uint64_t times[FAKE_MAX];
    stc_candidate c[FAKE_MAX];
    size_t reference, order[FAKE_MAX], order_count;
    size_t count = random_script(&state, times, c, &reference, order,
                                 &order_count);
    /* Any valid racing setting must keep the winner. */
    stc_tuner_policy on;
    unbounded_policy(&on);
    on.race_pairs = 1 + (uint32_t)(rand_r(&state) % 3);
    on.race_margin = rand_r(&state) % 2 ? 0.0 : 0.25;
    on.race_warmup_factor = rand_r(&state) % 2 ? 1.0 : 2.0;
    on.validate_first = rand_r(&state) % 2;
    stc_tuner_policy off = on;
    off.early_rejection = false;
    stc_decision d_on, d_off;
    fake f_on, f_off;
    stc_problem p = make_problem("w");
    stc_tuner *t_on = new_tuner(&on, NULL), *t_off = new_tuner(&off, NULL);
    STC_CHECK(t_on && t_off);
    fake_init(&f_on, count, times);
    fake_init(&f_off, count, times);
    stc_trial_runner r_on = runner_of(&f_on), r_off = runner_of(&f_off);
    STC_CHECK_EQ_INT(select_in_order(t_on, &p, c, count, reference,
                                              order, order_count, &r_on,
                                              &d_on, NULL),
                     STC_OK);
    STC_CHECK_EQ_INT(select_in_order(t_off, &p, c, count, reference,
                                              order, order_count, &r_off,
                                              &d_off, NULL),
                     STC_OK);
    if (d_on.index != d_off.index || d_on.ratio != d_off.ratio) {
      fprintf(stderr, "round %d: reference %zu, times", round, reference);
      for (size_t i = 0; i < count; i++)
        fprintf(stderr, " %" PRIu64, times[i]);
      fprintf(stderr, "; racing picked %zu, exhaustive %zu\n", d_on.index,
              d_off.index);
    }
    STC_CHECK_EQ_U64(d_on.index, d_off.index);
    STC_CHECK(d_on.ratio == d_off.ratio);
    stc_tune_report *reports;
    size_t n;
    STC_CHECK_EQ_INT(stc_tuner_reports(t_on, &reports, &n), STC_OK);
    for (size_t i = 0; i < reports[0].num_candidates; i++)
      raced_out += strstr(reports[0].candidates[i].note, "rejected early") != NULL;
    stc_tune_reports_free(reports, n);
    racing_runs += total_measures(&f_on);
    exhaustive_runs += total_measures(&f_off);
    stc_decision_clear(&d_on);
    stc_decision_clear(&d_off);
    stc_tuner_destroy(t_on);
    stc_tuner_destroy(t_off);
  }
  /* The property was exercised: racing did stop candidates, and saved. */
  STC_CHECK(raced_out > 1000);
  fprintf(stderr, "racing: %zu runs, exhaustive: %zu runs\n", racing_runs,
          exhaustive_runs);
  STC_CHECK(racing_runs * 3 < exhaustive_runs * 2);
}

STC_TEST(economics_racing_equals_the_seed_search_on_stable_timings) {
  /* Racing plus the other economics (validation first, caller's order
   * ignored here) against the seed's engine itself: index order, so ties
   * resolve alike. */
  unsigned state = 7;
  for (int round = 0; round < 500; round++) {
    uint64_t times[FAKE_MAX];
    stc_candidate c[FAKE_MAX];
    size_t reference, order[FAKE_MAX], order_count;
    size_t count = random_script(&state, times, c, &reference, order,
                                 &order_count);
    stc_tuner_policy economics, seed;
    unbounded_policy(&economics);
    /* The seed's tie rule: any faster candidate replaces the winner
     * (min_improvement has its own test). */
    economics.min_improvement = 1.0;
    stc_tuner_policy_init_seed(&seed);
    stc_tuner *te = new_tuner(&economics, NULL), *ts = new_tuner(&seed, NULL);
    fake fe, fs;
    fake_init(&fe, count, times);
    fake_init(&fs, count, times);
    stc_trial_runner re = runner_of(&fe), rs = runner_of(&fs);
    stc_problem p = make_problem("w");
    stc_decision de, ds;
    STC_CHECK_EQ_INT(
        stc_tuner_select(te, &p, c, count, reference, &re, &de, NULL), STC_OK);
    STC_CHECK_EQ_INT(
        stc_tuner_select(ts, &p, c, count, reference, &rs, &ds, NULL), STC_OK);
    STC_CHECK_EQ_U64(de.index, ds.index);
    STC_CHECK(de.ratio == ds.ratio);
    stc_decision_clear(&de);
    stc_decision_clear(&ds);
    stc_tuner_destroy(te);
    stc_tuner_destroy(ts);
  }
}

STC_TEST(economics_near_tie_keeps_the_earlier_winner) {
  /* Reference 100, "a" 50, "b" 49: b is 2% faster than a, under the 3% of
   * min_improvement, so a (explored first) stays the winner; with the
   * seed's rule (1.0) b wins; a clear improvement (c: 40) always wins. */
  static const double improvements[] = {1.03, 1.0, 1.03};
  static const size_t expected[] = {1, 2, 3};
  for (int k = 0; k < 3; k++) {
    uint64_t times[4] = {100000, 50000, 49000, k == 2 ? 40000 : 60000};
    stc_candidate c[4] = {{"ref", NULL, true, 0, true, NULL}, {"a", NULL, true, 0, true, NULL},
                          {"b", NULL, true, 0, true, NULL}, {"c", NULL, true, 0, true, NULL}};
    stc_tuner_policy policy;
    unbounded_policy(&policy);
    policy.order = STC_ORDER_DECLARED;
    policy.min_improvement = improvements[k];
    stc_tuner *t = new_tuner(&policy, NULL);
    fake f;
    fake_init(&f, 4, times);
    stc_trial_runner r = runner_of(&f);
    stc_problem p = make_problem("tie");
    stc_decision d;
    STC_CHECK_EQ_INT(stc_tuner_select(t, &p, c, 4, 0, &r, &d, NULL), STC_OK);
    STC_CHECK_EQ_U64(d.index, expected[k]);
    stc_decision_clear(&d);
    stc_tuner_destroy(t);
  }
  stc_tuner_policy policy;
  stc_tuner_policy_init(&policy);
  STC_CHECK(policy.min_improvement == 1.03);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&policy, "min_improvement", "0.9", NULL),
                   STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&policy, "min_improvement", "1.1", NULL), STC_OK);
  STC_CHECK(policy.min_improvement == 1.1);
  stc_tuner_policy_init_seed(&policy);
  STC_CHECK(policy.min_improvement == 1.0);
}

STC_TEST(economics_caller_order_is_explored_first) {
  /* Three equally fast candidates: the first explored wins (a tie never
   * replaces the best), so the winner shows the order. */
  stc_candidate c[4];
  make_candidates(c, 4);
  uint64_t times[FAKE_MAX] = {100, 50, 50, 50};
  const size_t order[] = {3, 0, 1}; /* the reference may be listed */
  stc_problem p = make_problem("w");
  stc_tuner_policy pol;
  unbounded_policy(&pol);
  stc_tuner *t = new_tuner(&pol, NULL);
  fake f;
  fake_init(&f, 4, times);
  stc_trial_runner r = runner_of(&f);
  stc_decision d;
  STC_CHECK_EQ_INT(
      select_in_order(t, &p, c, 4, 0, order, 3, &r, &d, NULL), STC_OK);
  STC_CHECK_STR_EQ(d.name, "c");
  stc_decision_clear(&d);
  /* The reference's runs come first, then c's validation-warmed runs. */
  size_t first_candidate = 0;
  while (first_candidate < f.log_len && f.log[first_candidate] == 0)
    first_candidate++;
  STC_CHECK_EQ_U64(f.log[first_candidate], 3);
  stc_tune_report *reports;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &reports, &n), STC_OK);
  STC_CHECK_STR_EQ(reports[0].candidates[0].name, "ref");
  STC_CHECK_STR_EQ(reports[0].candidates[1].name, "c"); /* listed */
  STC_CHECK_STR_EQ(reports[0].candidates[2].name, "a"); /* then index order */
  STC_CHECK_STR_EQ(reports[0].candidates[3].name, "b");
  stc_tune_reports_free(reports, n);
  stc_tuner_destroy(t);

  /* order=declared (the seed): index order whatever the caller says. */
  stc_error err;
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&pol, "order", "declared", &err),
                   STC_OK);
  t = new_tuner(&pol, NULL);
  fake_init(&f, 4, times);
  r = runner_of(&f);
  STC_CHECK_EQ_INT(
      select_in_order(t, &p, c, 4, 0, order, 3, &r, &d, NULL), STC_OK);
  STC_CHECK_STR_EQ(d.name, "a");
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &reports, &n), STC_OK);
  STC_CHECK_STR_EQ(reports[0].candidates[1].name, "a");
  stc_tune_reports_free(reports, n);

  stc_tuner_destroy(t);

  /* The order is asked for only when the tuner explores: a memory hit
   * never pays for it. */
  stc_tuner_policy_init(&pol);
  t = new_tuner(&pol, NULL);
  fixed_order asked = {order, 3, 0, 0};
  stc_exploration_order by_asked = {&asked, fill_fixed};
  fake_init(&f, 4, times);
  r = runner_of(&f);
  STC_CHECK_EQ_INT(
      stc_tuner_select_ordered(t, &p, c, 4, 0, &by_asked, &r, &d, NULL),
      STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_TUNED);
  stc_decision_clear(&d);
  STC_CHECK_EQ_U64(asked.calls, 1);
  STC_CHECK_EQ_INT(
      stc_tuner_select_ordered(t, &p, c, 4, 0, &by_asked, &r, &d, NULL),
      STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_MEMORY_CACHE);
  stc_decision_clear(&d);
  STC_CHECK_EQ_U64(asked.calls, 1);
  /* NULL orders and fills: index order. */
  stc_exploration_order no_fill = {NULL, NULL};
  stc_problem q = make_problem("other");
  STC_CHECK_EQ_INT(
      stc_tuner_select_ordered(t, &q, c, 4, 0, &no_fill, &r, &d, NULL), STC_OK);
  STC_CHECK_STR_EQ(d.name, "a");
  stc_decision_clear(&d);
  stc_tuner_destroy(t);

  /* A bad order is a bad request: nothing runs, nothing is remembered. */
  t = new_tuner(&pol, NULL);
  const size_t duplicate[] = {1, 1}, outside[] = {4}, four[] = {1, 2, 3, 0};
  fixed_order bad[] = {
      {duplicate, 2, 0, 0}, {outside, 1, 0, 0}, {four, 4, 5, 0}};
  for (size_t i = 0; i < 3; i++) {
    stc_exploration_order by_bad = {&bad[i], fill_fixed};
    fake_init(&f, 4, times);
    r = runner_of(&f);
    stc_error_clear(&err);
    STC_CHECK_EQ_INT(
        stc_tuner_select_ordered(t, &p, c, 4, 0, &by_bad, &r, &d, &err),
        STC_ERR_INVALID);
    STC_CHECK_CONTAINS(err.message, "order");
    STC_CHECK(d.name == NULL);
    STC_CHECK_EQ_U64(total_measures(&f) + f.validations[0], 0);
  }
  stc_tuner_stats stats;
  stc_tuner_stats_get(t, &stats);
  STC_CHECK_EQ_U64(stats.tunes, 0);
  stc_tuner_destroy(t);
}

STC_TEST(economics_order_decides_what_a_target_cut_drops) {
  /* The target stops exploration after the reference and one candidate:
   * the caller's first choice is the one measured. */
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.target_ns = 250; /* the reference's runs end at 200 */
  stc_tuner *t = new_tuner(&pol, NULL);
  uint64_t now = 0;
  stc_tuner_set_clock(t, fake_clock, &now);
  stc_candidate c[4];
  make_candidates(c, 4);
  uint64_t times[FAKE_MAX] = {100, 90, 80, 20};
  fake f;
  fake_init(&f, 4, times);
  f.clock = &now;
  stc_trial_runner r = runner_of(&f);
  stc_problem p = make_problem("w");
  const size_t order[] = {3};
  stc_decision d;
  STC_CHECK_EQ_INT(
      select_in_order(t, &p, c, 4, 0, order, 1, &r, &d, NULL), STC_OK);
  STC_CHECK_STR_EQ(d.name, "c");
  stc_decision_clear(&d);
  /* A target never cuts a started candidate: c got all its pairs. */
  STC_CHECK_EQ_U64(f.measures[3], 1 + 7);
  STC_CHECK_EQ_U64(f.measures[1] + f.measures[2], 0);
  stc_tune_report *reports;
  size_t n;
  STC_CHECK_EQ_INT(stc_tuner_reports(t, &reports, &n), STC_OK);
  STC_CHECK(reports[0].budget_exhausted);
  STC_CHECK_EQ_U64(reports[0].candidates[1].samples, 7);
  STC_CHECK_CONTAINS(reports[0].candidates[2].note, "tuning target 0.00025 ms");
  STC_CHECK_CONTAINS(reports[0].candidates[3].note, "budget exhausted");
  STC_CHECK_EQ_U64(reports[0].candidates[3].trials, 0);
  stc_tune_reports_free(reports, n);
  stc_tuner_destroy(t);

  /* A reference that alone takes the target still lets the first
   * candidate in the order try (else a slow reference keeps itself). */
  pol.target_ns = 1;
  t = new_tuner(&pol, NULL);
  now = 0;
  stc_tuner_set_clock(t, fake_clock, &now);
  fake_init(&f, 4, times);
  f.clock = &now;
  r = runner_of(&f);
  STC_CHECK_EQ_INT(
      select_in_order(t, &p, c, 4, 0, order, 1, &r, &d, NULL), STC_OK);
  STC_CHECK_STR_EQ(d.name, "c");
  stc_decision_clear(&d);
  STC_CHECK_EQ_U64(f.measures[3], 1 + 7);
  STC_CHECK_EQ_U64(f.measures[1] + f.measures[2], 0);
  stc_tuner_destroy(t);
}

/* Selects with a scripted clock and budget; returns the decision's index
 * (or -1) and leaves the report in *report (free with
 * stc_tune_reports_free(report, 1)). */
static long budget_cut_select(uint64_t budget_ns, uint32_t cut_samples,
                              const uint64_t *script, size_t script_len,
                              stc_tune_report **report) {
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  pol.target_ns = 0;
  pol.budget_ns = budget_ns;
  pol.budget_cut_samples = cut_samples;
  stc_tuner *t = new_tuner(&pol, NULL);
  uint64_t now = 0;
  stc_tuner_set_clock(t, fake_clock, &now);
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 50, 10};
  fake f;
  fake_init(&f, 3, times);
  f.clock = &now;
  f.script[1] = script;
  f.script_len[1] = script_len;
  stc_problem p = make_problem("w");
  stc_decision d;
  long index = -1;
  if (select0(t, &p, c, 3, &f, &d) == STC_OK)
    index = (long)d.index;
  stc_decision_clear(&d);
  size_t n = 0;
  *report = NULL;
  if (stc_tuner_reports(t, report, &n) != STC_OK || n != 1) {
    stc_tune_reports_free(*report, n);
    *report = NULL;
  }
  stc_tuner_destroy(t);
  return index;
}

STC_TEST(economics_budget_cut_scores_the_best_stable_candidate) {
  /* The reference's runs end at 200 ns; "a" (50 ns) warms up to 250 and
   * each pair adds 150: the budget check before pair 4 (at 700) cuts it
   * with 3 pairs. "b" (10 ns, faster still) is never started. */
  static const uint64_t stable[] = {50};
  stc_tune_report *r = NULL;
  STC_CHECK_EQ_INT(budget_cut_select(700, 3, stable, 1, &r), 1);
  STC_CHECK(r != NULL);
  STC_CHECK(r[0].budget_exhausted);
  STC_CHECK_STR_EQ(r[0].winner, "a");
  STC_CHECK_EQ_U64(r[0].candidates[1].samples, 3);
  STC_CHECK(r[0].candidates[1].verified);
  STC_CHECK_CONTAINS(r[0].candidates[1].note, "won");
  STC_CHECK_CONTAINS(r[0].candidates[1].note,
                     "budget exhausted: scored on 3 of 7 pairs");
  STC_CHECK_CONTAINS(r[0].candidates[2].note, "search budget exhausted");
  stc_tune_reports_free(r, 1);
  /* Two pairs are not enough. */
  STC_CHECK_EQ_INT(budget_cut_select(550, 3, stable, 1, &r), 0);
  STC_CHECK(r != NULL);
  STC_CHECK_CONTAINS(r[0].candidates[1].note,
                     "budget exhausted before enough paired samples (2 of 7)");
  stc_tune_reports_free(r, 1);
  /* budget_cut_samples=0 is the seed: a cut candidate never scores. */
  STC_CHECK_EQ_INT(budget_cut_select(700, 0, stable, 1, &r), 0);
  STC_CHECK(r != NULL);
  STC_CHECK_CONTAINS(r[0].candidates[1].note, "rejected: budget exhausted");
  stc_tune_reports_free(r, 1);
  /* Enough pairs but unstable ones (ratios 0.2, 0.5, 0.9: relative MAD
   * 0.6) are not a measurement either. */
  static const uint64_t noisy[] = {50, 20, 50, 90};
  STC_CHECK_EQ_INT(budget_cut_select(700, 3, noisy, 4, &r), 0);
  STC_CHECK(r != NULL);
  STC_CHECK_CONTAINS(r[0].candidates[1].note, "too noisy");
  stc_tune_reports_free(r, 1);
}

/* Tunes one persistent problem of operation op whose fastest candidate is
 * `fastest` (1 or 2). */
static stc_status tune_op(stc_tuner *t, const char *op, const char *workload,
                          size_t fastest) {
  stc_problem p = make_problem(workload);
  p.operation = op;
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, fastest == 1 ? 20 : 60,
                              fastest == 2 ? 20 : 60};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  stc_status status = select0(t, &p, c, 3, &f, &d);
  if (status == STC_OK && d.index != fastest)
    status = STC_ERR_REJECTED; /* not the scripted winner */
  stc_decision_clear(&d);
  return status;
}

/* The wins of name in counts, 0 when absent. */
static uint64_t wins_of(const stc_win_count *counts, size_t count,
                        const char *name) {
  for (size_t i = 0; i < count; i++)
    if (strcmp(counts[i].name, name) == 0)
      return counts[i].wins;
  return 0;
}

STC_TEST(economics_win_counts_per_kind_from_memory_and_disk) {
  char dir[4200];
  cache_dir(dir, sizeof dir, "wins");
  stc_tuner_policy pol;
  stc_tuner_policy_init(&pol);
  stc_tuner *t = new_tuner(&pol, dir);
  STC_CHECK_EQ_INT(tune_op(t, "site1|linalg.matmul", "w1", 1), STC_OK);
  STC_CHECK_EQ_INT(tune_op(t, "site2|linalg.matmul", "w2", 1), STC_OK);
  STC_CHECK_EQ_INT(tune_op(t, "site3|linalg.matmul", "w3", 2), STC_OK);
  STC_CHECK_EQ_INT(tune_op(t, "site4|linalg.conv_2d", "w4", 2), STC_OK);
  STC_CHECK_EQ_INT(tune_op(t, "linalg.matmul_transpose_b", "w5", 2), STC_OK);
  stc_win_count *counts = NULL;
  size_t n = 0;
  STC_CHECK_EQ_INT(stc_tuner_win_counts(t, "linalg.matmul", NULL, &counts, &n),
                   STC_OK);
  STC_CHECK_EQ_U64(n, 2);
  STC_CHECK_STR_EQ(counts[0].name, "a"); /* most wins first */
  STC_CHECK_EQ_U64(counts[0].wins, 2);
  STC_CHECK_STR_EQ(counts[1].name, "b");
  STC_CHECK_EQ_U64(counts[1].wins, 1);
  stc_win_counts_free(counts, n);
  /* An operation without '|' is its own kind. */
  STC_CHECK_EQ_INT(stc_tuner_win_counts(t, "linalg.matmul_transpose_b", NULL,
                                        &counts, &n),
                   STC_OK);
  STC_CHECK_EQ_U64(n, 1);
  STC_CHECK_EQ_U64(wins_of(counts, n, "b"), 1);
  stc_win_counts_free(counts, n);
  STC_CHECK_EQ_INT(stc_tuner_win_counts(t, "linalg.matmul", "cpu:other",
                                        &counts, &n),
                   STC_OK);
  STC_CHECK_EQ_U64(n, 0);
  STC_CHECK(counts == NULL);
  STC_CHECK_EQ_INT(stc_tuner_win_counts(t, "linalg.matmul", "cpu:test",
                                        &counts, &n),
                   STC_OK);
  STC_CHECK_EQ_U64(n, 2);
  stc_win_counts_free(counts, n);
  STC_CHECK_EQ_INT(stc_tuner_win_counts(t, NULL, NULL, &counts, &n),
                   STC_ERR_INVALID);
  stc_tuner_destroy(t);

  /* A new process: the wins come from disk... */
  t = new_tuner(&pol, dir);
  STC_CHECK_EQ_INT(stc_tuner_win_counts(t, "linalg.matmul", NULL, &counts, &n),
                   STC_OK);
  STC_CHECK_EQ_U64(wins_of(counts, n, "a"), 2);
  STC_CHECK_EQ_U64(wins_of(counts, n, "b"), 1);
  stc_win_counts_free(counts, n);
  STC_CHECK_EQ_INT(
      stc_tuner_win_counts(t, "linalg.conv_2d", NULL, &counts, &n), STC_OK);
  STC_CHECK_EQ_U64(wins_of(counts, n, "b"), 1);
  stc_win_counts_free(counts, n);
  /* ...a record also in memory (a disk hit) counts once... */
  stc_problem p = make_problem("w1");
  p.operation = "site1|linalg.matmul";
  p.persistent = true;
  stc_candidate c[3];
  make_candidates(c, 3);
  uint64_t times[FAKE_MAX] = {100, 20, 60};
  fake f;
  fake_init(&f, 3, times);
  stc_decision d;
  STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
  STC_CHECK_EQ_INT(d.source, STC_SOURCE_DISK_CACHE);
  STC_CHECK_EQ_INT(stc_tuner_win_counts(t, "linalg.matmul", NULL, &counts, &n),
                   STC_OK);
  STC_CHECK_EQ_U64(wins_of(counts, n, "a"), 2);
  stc_win_counts_free(counts, n);
  /* ...and an invalidated one no longer counts. */
  stc_tuner_invalidate(t, &d, false);
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(stc_tuner_win_counts(t, "linalg.matmul", NULL, &counts, &n),
                   STC_OK);
  STC_CHECK_EQ_U64(wins_of(counts, n, "a"), 1);
  STC_CHECK_EQ_U64(wins_of(counts, n, "b"), 1);
  stc_win_counts_free(counts, n);
  stc_tuner_destroy(t);
  /* Without a cache directory, memory only. */
  t = new_tuner(&pol, NULL);
  STC_CHECK_EQ_INT(stc_tuner_win_counts(t, "linalg.matmul", NULL, &counts, &n),
                   STC_OK);
  STC_CHECK_EQ_U64(n, 0);
  stc_tuner_destroy(t);
}

/* A simulated machine for cost checks: candidate i takes base[i] ns with a
 * deterministic jitter of up to +-jitter_percent; a validation runs the
 * candidate (and, the first time, the reference) on the clock too. */
typedef struct simulation {
  const uint64_t *base;
  unsigned jitter_percent;
  unsigned state;
  bool reference_validated;
  uint64_t clock;
  size_t runs;
} simulation;

static uint64_t simulated_time(simulation *s, size_t candidate) {
  uint64_t t = s->base[candidate];
  if (s->jitter_percent) {
    int spread = (int)(rand_r(&s->state) % (2 * s->jitter_percent + 1)) -
                 (int)s->jitter_percent;
    t = t / 100 * (uint64_t)(100 + spread);
  }
  return t;
}

static stc_status simulated_validate(void *user, size_t reference,
                                     size_t candidate,
                                     const stc_tolerance *tolerance,
                                     stc_validation *outcome, char *message,
                                     size_t message_size) {
  simulation *s = user;
  (void)tolerance, (void)message, (void)message_size;
  if (!s->reference_validated) {
    s->clock += simulated_time(s, reference);
    s->reference_validated = true;
  }
  s->clock += simulated_time(s, candidate);
  s->runs++;
  *outcome = STC_VALIDATION_PASSED;
  return STC_OK;
}

static stc_status simulated_measure(void *user, size_t candidate, uint64_t *ns,
                                    char *message, size_t message_size) {
  simulation *s = user;
  (void)message, (void)message_size;
  *ns = simulated_time(s, candidate);
  s->clock += *ns;
  s->runs++;
  return STC_OK;
}

/* Tunes the simulated site; *cost_ns is the simulated tuning time. */
static stc_status simulate_tune(const stc_tuner_policy *pol,
                                const uint64_t *base, size_t count,
                                const size_t *order, size_t order_count,
                                unsigned jitter, stc_decision *d,
                                uint64_t *cost_ns) {
  stc_tuner *t = new_tuner(pol, NULL);
  if (!t)
    return STC_ERR_INVALID;
  simulation s = {base, jitter, 12345, false, 0, 0};
  stc_tuner_set_clock(t, fake_clock, &s.clock);
  stc_candidate c[FAKE_MAX + 2];
  static const char *const names[] = {"ref", "blas", "v1", "v2", "v3",
                                      "v4",  "v5",   "v6", "v7", "v8"};
  for (size_t i = 0; i < count; i++)
    c[i] = (stc_candidate){names[i], NULL, true, 0, true, NULL};
  stc_trial_runner r = {&s, simulated_validate, simulated_measure, NULL};
  stc_problem p = make_problem("1024x1024x1024");
  stc_status status =
      select_in_order(t, &p, c, count, 0, order, order_count, &r, d, NULL);
  *cost_ns = s.clock;
  stc_tuner_destroy(t);
  return status;
}

STC_TEST(economics_simulated_large_matmul_tunes_within_seconds) {
  /* The issue's worst case: a 1024^3 f32 matmul whose (vectorized)
   * reference takes 40 ms, vendor BLAS 10 ms, 8 generated candidates
   * within 0.5-2x of the reference (descriptor order = static cost order,
   * which is only roughly right), 5% timing jitter. */
  const uint64_t ms = 1000000;
  const uint64_t base[] = {40 * ms, 10 * ms, 30 * ms, 50 * ms, 20 * ms,
                           80 * ms, 25 * ms, 60 * ms, 40 * ms, 70 * ms};
  const size_t count = 10, vendor_first[] = {1};
  stc_tuner_policy economics, seed;
  stc_tuner_policy_init(&economics);
  stc_tuner_policy_init_seed(&seed);
  stc_decision d;
  uint64_t cost_default, cost_seed, cost_untargeted, cost_generated;
  STC_CHECK_EQ_INT(simulate_tune(&economics, base, count, vendor_first, 1, 5,
                                 &d, &cost_default),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "blas");
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(
      simulate_tune(&seed, base, count, NULL, 0, 5, &d, &cost_seed), STC_OK);
  STC_CHECK_STR_EQ(d.name, "blas");
  stc_decision_clear(&d);
  /* Without the target every candidate is tried: still within 3 s. */
  stc_tuner_policy untargeted = economics;
  untargeted.target_ns = 0;
  STC_CHECK_EQ_INT(simulate_tune(&untargeted, base, count, vendor_first, 1, 5,
                                 &d, &cost_untargeted),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "blas");
  stc_decision_clear(&d);
  /* No vendor library: nine generated candidates (the first as fast as
   * the reference) race among themselves; without a target the fastest
   * (v3, 20 ms) is found; with it, exploration stops near a second, so the
   * static cost order decides what is left out. */
  uint64_t no_vendor[10];
  memcpy(no_vendor, base, sizeof no_vendor);
  no_vendor[1] = 40 * ms;
  uint64_t cost_generated_targeted;
  STC_CHECK_EQ_INT(simulate_tune(&untargeted, no_vendor, count, NULL, 0, 5, &d,
                                 &cost_generated),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "v3");
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(simulate_tune(&economics, no_vendor, count, NULL, 0, 5, &d,
                                 &cost_generated_targeted),
                   STC_OK);
  stc_decision_clear(&d);
  fprintf(stderr,
          "simulated 1024^3 matmul tuning: default %.2f s, no target %.2f s, "
          "no vendor %.2f s (no target %.2f s), seed %.2f s\n",
          (double)cost_default / 1e9, (double)cost_untargeted / 1e9,
          (double)cost_generated_targeted / 1e9, (double)cost_generated / 1e9,
          (double)cost_seed / 1e9);
  STC_CHECK(cost_default <= 1500 * ms);
  STC_CHECK(cost_untargeted <= 3000 * ms);
  STC_CHECK(cost_generated_targeted <= 1500 * ms);
  /* Without the target every generated candidate gets two pairs before
   * racing judges it (race_pairs 2, against thread-pool start-up noise). */
  STC_CHECK(cost_generated <= 4000 * ms);
  STC_CHECK(cost_seed > 3 * cost_default);
}

/* ---- the final duel (policy duel_pairs) ---------------------------------- */

static bool starts_with(const char *text, const char *prefix) {
  return text && strncmp(text, prefix, strlen(prefix)) == 0;
}

/* The report's candidate named name, or NULL. */
static const stc_candidate_report *report_of_name(const stc_tune_report *r,
                                                   const char *name) {
  for (size_t i = 0; i < r->num_candidates; i++)
    if (strcmp(r->candidates[i].name, name) == 0)
      return &r->candidates[i];
  return NULL;
}

/* Whether r exists and none of its notes mentions a duel (none was held). */
static bool no_duel_noted(const stc_tune_report *r) {
  for (size_t i = 0; r && i < r->num_candidates; i++)
    if (r->candidates[i].note && strstr(r->candidates[i].note, "duel"))
      return false;
  return r != NULL;
}

/* One select of ref, a, b (explored in that order) under pol: candidate
 * `scripted` (1 = a, 2 = b) takes explore ns in its first explore_calls
 * runs and later ns after them, the other one other_ns always, the
 * reference 100 us. *report gets the newest report (free with
 * stc_tune_reports_free(*report, 1)); *clock (may be NULL) the fake
 * clock's end (the sum of every measured time). */
static stc_status scripted_select(const stc_tuner_policy *pol, size_t scripted,
                                  uint64_t explore, size_t explore_calls,
                                  uint64_t later, uint64_t other_ns, fake *f,
                                  stc_decision *d, stc_tune_report **report,
                                  uint64_t *clock) {
  uint64_t script[64];
  for (size_t i = 0; i < 64; i++)
    script[i] = i < explore_calls ? explore : later;
  uint64_t times[FAKE_MAX] = {100000, 0, 0};
  times[scripted == 1 ? 2 : 1] = other_ns;
  stc_candidate c[3];
  make_candidates(c, 3);
  stc_tuner *t = new_tuner(pol, NULL);
  if (!t)
    return STC_ERR_INVALID;
  uint64_t now = 0;
  stc_tuner_set_clock(t, fake_clock, &now);
  fake_init(f, 3, times);
  f->clock = &now;
  f->script[scripted] = script;
  f->script_len[scripted] = 64;
  stc_problem p = make_problem("duel");
  stc_status status = select0(t, &p, c, 3, f, d);
  f->script[scripted] = NULL; /* the script dies here */
  *report = NULL;
  size_t n = 0;
  if (status == STC_OK && stc_tuner_reports(t, report, &n) == STC_OK && n > 1) {
    stc_tune_reports_free(*report, n);
    *report = NULL;
  }
  if (clock)
    *clock = now;
  stc_tuner_destroy(t);
  return status;
}

/* b scripted: b_explore in its first b_explore_calls runs, then b_later;
 * a takes a_ns. */
static stc_status duel_select(const stc_tuner_policy *pol, uint64_t a_ns,
                              uint64_t b_explore, size_t b_explore_calls,
                              uint64_t b_later, fake *f, stc_decision *d,
                              stc_tune_report **report, uint64_t *clock) {
  return scripted_select(pol, 2, b_explore, b_explore_calls, b_later, a_ns, f,
                         d, report, clock);
}

STC_TEST(economics_duel_policy_fields) {
  stc_tuner_policy p;
  stc_tuner_policy_init(&p);
  STC_CHECK_EQ_U64(p.duel_pairs, 7);
  STC_CHECK(p.duel_margin == 1.15);
  STC_CHECK_EQ_U64(p.duel_limit_ns, 500000000ull);
  stc_tuner_policy seed;
  stc_tuner_policy_init_seed(&seed);
  STC_CHECK_EQ_U64(seed.duel_pairs, 0);
  stc_error err;
#define SET(field, value) STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, field, value, &err), STC_OK)
  SET("DUEL_PAIRS", "5"); /* STC_TUNE_DUEL_PAIRS=5 */
  STC_CHECK_EQ_U64(p.duel_pairs, 5);
  SET("duel-pairs", "0");
  STC_CHECK_EQ_U64(p.duel_pairs, 0);
  SET("duel_margin", "1.3");
  STC_CHECK(p.duel_margin == 1.3);
  SET("duel_margin", "1");
  STC_CHECK(p.duel_margin == 1.0);
  STC_CHECK(p.duel_rematch == 2.0);
  SET("duel_rematch", "1.5");
  STC_CHECK(p.duel_rematch == 1.5);
  SET("duel-rematch", "0");
  STC_CHECK(p.duel_rematch == 0.0);
  SET("duel_limit_ms", "250");
  STC_CHECK_EQ_U64(p.duel_limit_ns, 250000000ull);
  SET("duel_limit_s", "2");
  STC_CHECK_EQ_U64(p.duel_limit_ns, 2000000000ull);
  SET("duel_limit_us", "7");
  STC_CHECK_EQ_U64(p.duel_limit_ns, 7000ull);
#undef SET
  static const char *const bad[][2] = {
      {"duel_pairs", "4"},       {"duel_pairs", "-1"},
      {"duel_pairs", "200001"},  {"duel_pairs", "4294967297"},
      {"duel_margin", "0.99"},   {"duel_margin", "nan"},
      {"duel_margin", "inf"},    {"duel_margin", "x"},
      {"duel_limit_ms", "0"},    {"duel_limit_ns", "soon"},
      {"duel_rematch", "0.5"},   {"duel_rematch", "-1"},
      {"duel_rematch", "inf"},   {"duel_rematch", "nan"},
  };
  STC_CHECK_EQ_U64(first_accepted(&p, bad, sizeof bad / sizeof bad[0]),
                   sizeof bad / sizeof bad[0]);
  /* The even count's error says what is wanted. */
  stc_error_clear(&err);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&p, "duel_pairs", "6", &err),
                   STC_ERR_INVALID);
  STC_CHECK_CONTAINS(err.message, "duel_pairs must be 0 (no duel) or odd");
  for (int i = 0; i < 5; i++) {
    stc_tuner_policy q;
    stc_tuner_policy_init(&q);
    switch (i) {
    case 0: q.duel_pairs = 2; break;
    case 1: q.duel_margin = 0.5; break;
    case 2: q.duel_margin = INFINITY; break;
    case 3: q.duel_limit_ns = 0; break;
    case 4: q.duel_rematch = 0.99; break;
    }
    stc_error_clear(&err);
    STC_CHECK_EQ_INT(stc_tuner_policy_validate(&q, &err), STC_ERR_INVALID);
    STC_CHECK(err.message[0] != 0);
  }
}

STC_TEST(economics_duel_overturns_a_pick_the_load_got_wrong) {
  /* Under load a parallel candidate's ratio to a one-thread reference
   * moves more than the gap between two close ones: "b" (45 us, really 10%
   * faster than "a" at 50 us) ran its exploration slowed to 50.4 us
   * (ratio 0.504 against a's 0.5), so exploration keeps "a". Head to head
   * b/a is 0.9: the duel picks "b", with b's own ratio. Without the duel
   * (duel_pairs=0) "a" stays. Each candidate's exploration is one warm-up
   * (validation counts as the first) and 7 pairs: 8 runs. */
  for (int on = 0; on <= 1; on++) {
    stc_tuner_policy pol;
    unbounded_policy(&pol);
    if (!on)
      pol.duel_pairs = 0;
    fake f;
    stc_decision d;
    stc_tune_report *r;
    uint64_t clock;
    STC_CHECK_EQ_INT(duel_select(&pol, 50000, 50400, 8, 45000, &f, &d, &r, &clock),
                     STC_OK);
    STC_CHECK(r != NULL);
    if (!r)
      continue;
    STC_CHECK_EQ_U64(f.measures[1], on ? 8 + 7 : 8);
    STC_CHECK_EQ_U64(f.measures[2], on ? 8 + 7 : 8);
    const stc_candidate_report *a = report_of_name(r, "a"), *b = report_of_name(r, "b");
    STC_CHECK(a && b);
    if (on) {
      STC_CHECK_STR_EQ(d.name, "b");
      STC_CHECK_STR_EQ(r->winner, "b");
      /* The decision keeps b's own ratio to the reference, not a derived
       * one: ratio, reference_ns and winner_ns all come from b's pairs. */
      STC_CHECK(fabs(d.ratio - 0.504) < 1e-12);
      STC_CHECK(d.verified);
      STC_CHECK(fabs(b->ratio - 0.504) < 1e-12);
      STC_CHECK(fabs(a->ratio - 0.5) < 1e-12);
      STC_CHECK_CONTAINS(b->note, "won: paired median ratio 0.5040");
      STC_CHECK_CONTAINS(b->note, "duel a vs b: 7 pairs, paired median ratio "
                                  "b/a 0.9000 (relative MAD 0): b is at least "
                                  "1.03x faster, b wins (the ratios to the "
                                  "reference had it the other way)");
      STC_CHECK(starts_with(a->note, "lost: paired median ratio 0.5000; b was "
                                     "faster; duel a vs b: 7 pairs"));
      STC_CHECK_CONTAINS(r->candidates[0].note, "replaced by b");
      /* The duel's runs count in the finalists' trials (validation, one
       * warm-up, 7 pairs with the reference's half, then 7 of their own). */
      STC_CHECK_EQ_U64(a->trials, 1 + 1 + 14 + 7);
      STC_CHECK_EQ_U64(b->trials, 1 + 1 + 14 + 7);
    } else {
      STC_CHECK_STR_EQ(d.name, "a");
      STC_CHECK(fabs(d.ratio - 0.5) < 1e-12);
      STC_CHECK(strstr(a->note, "duel") == NULL);
      STC_CHECK(strstr(b->note, "duel") == NULL);
    }
    STC_CHECK_EQ_U64(r->trials, total_measures(&f) + 3);
    stc_tune_reports_free(r, 1);
    stc_decision_clear(&d);
  }
}

/* A machine whose load moves: every 16 runs a new load factor in
 * [1, 1.10] slows the (parallel) candidates, not the (one-thread)
 * reference; every run also jitters by +-0.5%. */
typedef struct loaded {
  unsigned seed;
  size_t calls;
  double load;
  uint64_t base[FAKE_MAX];
} loaded;

static double jitter(unsigned *seed, double amount) {
  return 1.0 + amount * (2.0 * (double)(rand_r(seed) % 10001) / 10000.0 - 1.0);
}

static void loaded_run(fake *f, size_t candidate) {
  loaded *m = f->hook_user;
  if (m->calls++ % 16 == 0)
    m->load = 1.0 + 0.10 * (double)(rand_r(&m->seed) % 1001) / 1000.0;
  double ns = (double)m->base[candidate] * jitter(&m->seed, 0.005);
  if (candidate != 0)
    ns *= m->load;
  f->fixed_ns[candidate] = (uint64_t)llround(ns);
}

STC_TEST(economics_duel_keeps_the_earlier_on_a_tie_so_tunes_agree) {
  /* "a" (explored first, the more promising) and "b" are equally fast;
   * which looks faster against the reference depends on the load while
   * each was paired with it. Without the duel, cold tunes disagree; with
   * it, every tune sees b/a within min_improvement and keeps "a". */
  size_t picks_b[2] = {0, 0}, duels = 0;
  for (unsigned seed = 1; seed <= 40; seed++) {
    for (int on = 0; on <= 1; on++) {
      stc_tuner_policy pol;
      unbounded_policy(&pol);
      if (!on)
        pol.duel_pairs = 0;
      stc_tuner *t = new_tuner(&pol, NULL);
      stc_candidate c[3];
      make_candidates(c, 3);
      uint64_t times[FAKE_MAX] = {0};
      fake f;
      fake_init(&f, 3, times);
      loaded m = {seed, 0, 1.0, {100000, 50000, 50000}};
      f.hook = loaded_run;
      f.hook_user = &m;
      stc_problem p = make_problem("tie");
      stc_decision d;
      STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
      picks_b[on] += d.index == 2;
      stc_tune_report *r;
      size_t n;
      STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
      if (on && n == 1) {
        const stc_candidate_report *a = report_of_name(&r[0], "a");
        duels += a && strstr(a->note, "duel a vs b: 7 pairs") != NULL;
        if (d.index != 1)
          fprintf(stderr, "seed %u: %s / %s\n", seed, a ? a->note : "",
                  report_of_name(&r[0], "b")->note);
      }
      stc_tune_reports_free(r, n);
      stc_decision_clear(&d);
      stc_tuner_destroy(t);
    }
  }
  fprintf(stderr, "ties: without the duel b won %zu of 40 tunes, with it %zu "
                  "(%zu duels)\n", picks_b[0], picks_b[1], duels);
  STC_CHECK(picks_b[0] >= 5); /* the load does flip picks */
  STC_CHECK_EQ_U64(picks_b[1], 0);
  STC_CHECK_EQ_U64(duels, 40);
}

STC_TEST(economics_duel_only_within_the_margin) {
  /* "a" 40 us (ratio 0.4), "b" 48 us (0.48: 1.2x a's ratio, outside the
   * default margin 1.15): no duel, and racing stops b after 2 pairs. */
  stc_tuner_policy pol;
  unbounded_policy(&pol);
  fake f;
  stc_decision d;
  stc_tune_report *r;
  uint64_t clock;
  STC_CHECK_EQ_INT(duel_select(&pol, 40000, 48000, 64, 48000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "a");
  STC_CHECK_EQ_U64(f.measures[1], 8);
  STC_CHECK_EQ_U64(f.measures[2], 3);
  STC_CHECK(r != NULL);
  STC_CHECK(no_duel_noted(r));
  STC_CHECK_CONTAINS(report_of_name(r, "b")->note, "rejected early");
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);

  /* A margin of 1.25 takes the raced-out b (its partial ratio 0.48) into a
   * duel; b/a = 1.2 there: a stays. */
  pol.duel_margin = 1.25;
  STC_CHECK_EQ_INT(duel_select(&pol, 40000, 48000, 64, 48000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "a");
  STC_CHECK_EQ_U64(f.measures[1], 8 + 7);
  STC_CHECK_EQ_U64(f.measures[2], 3 + 7);
  STC_CHECK_CONTAINS(report_of_name(r, "a")->note,
                     "duel a vs b: 7 pairs, paired median ratio b/a 1.2000 "
                     "(relative MAD 0): b is not 1.03x faster, a wins");
  STC_CHECK(starts_with(report_of_name(r, "b")->note, "rejected early"));
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);

  /* ... and when head to head it is faster after all (36 us after its 3
   * exploration runs), the raced-out b wins, with its partial ratio. */
  STC_CHECK_EQ_INT(duel_select(&pol, 40000, 48000, 3, 36000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "b");
  STC_CHECK(fabs(d.ratio - 0.48) < 1e-12);
  const char *note = report_of_name(r, "b")->note;
  STC_CHECK(starts_with(note, "won: duel a vs b: 7 pairs, paired median ratio "
                              "b/a 0.9000"));
  STC_CHECK_CONTAINS(note, "; before the duel: rejected early");
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);

  /* A runner-up that is not min_speedup faster than the reference is no
   * finalist: a at 0.9, b at 0.96 (within 1.15x, but over 1/1.05). */
  STC_CHECK_EQ_INT(duel_select(&pol, 90000, 96000, 64, 40000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "a");
  STC_CHECK(no_duel_noted(r));
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);
}

/* a scripted: a_explore in its first a_explore_calls runs, then a_later;
 * b takes b_ns. */
static stc_status rematch_select(const stc_tuner_policy *pol,
                                 uint64_t a_explore, size_t a_explore_calls,
                                 uint64_t a_later, uint64_t b_ns, fake *f,
                                 stc_decision *d, stc_tune_report **report) {
  return scripted_select(pol, 1, a_explore, a_explore_calls, a_later, b_ns, f,
                         d, report, NULL);
}

STC_TEST(economics_duel_rematches_the_favorite_a_slowed_burst_lost) {
  /* What bench/regret.sh's stability runs saw: "a" (matmul_blas, explored
   * first) ran its 8 exploration runs at half speed (90 us, ratio 0.9)
   * and "b" (the OpenMP variant, 50 us, 0.5) won by 1.8x, outside
   * duel_margin, so no duel was held. Head to head a runs at its real
   * 45 us: the rematch gives a (b/a 1.11), with a's own ratio. */
  stc_tuner_policy pol;
  unbounded_policy(&pol);
  fake f;
  stc_decision d;
  stc_tune_report *r;
  STC_CHECK_EQ_INT(rematch_select(&pol, 90000, 8, 45000, 50000, &f, &d, &r),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "a");
  STC_CHECK(fabs(d.ratio - 0.9) < 1e-12);
  STC_CHECK_EQ_U64(f.measures[1], 8 + 7);
  STC_CHECK_EQ_U64(f.measures[2], 8 + 7);
  STC_CHECK(r != NULL);
  if (r) {
    STC_CHECK_CONTAINS(report_of_name(r, "a")->note,
                       "duel a vs b (a rematch: a, explored first, had a "
                       "ratio 1.8x the winner's): 7 pairs, paired median "
                       "ratio b/a 1.1111 (relative MAD 0): b is not 1.03x "
                       "faster, a wins (the ratios to the reference had it "
                       "the other way)");
    stc_tune_reports_free(r, 1);
  }
  stc_decision_clear(&d);

  /* No rematch (duel_rematch=0, or the seed policy's no duel): b stays. */
  pol.duel_rematch = 0;
  STC_CHECK_EQ_INT(rematch_select(&pol, 90000, 8, 45000, 50000, &f, &d, &r),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "b");
  STC_CHECK_EQ_U64(f.measures[1], 8);
  STC_CHECK(no_duel_noted(r));
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);

  /* A favorite that really is slower loses the rematch too: b keeps the
   * pick (b/a 0.56). */
  pol.duel_rematch = 2.0;
  STC_CHECK_EQ_INT(rematch_select(&pol, 90000, 8, 90000, 50000, &f, &d, &r),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "b");
  STC_CHECK(fabs(d.ratio - 0.5) < 1e-12);
  STC_CHECK_CONTAINS(report_of_name(r, "b")->note,
                     "(a rematch: a, explored first, had a ratio 1.8x the "
                     "winner's): 7 pairs, paired median ratio b/a 0.5556 "
                     "(relative MAD 0): b is at least 1.03x faster, b wins");
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);

  /* Beyond duel_rematch (a at 2.2x b's ratio) there is no rematch; nor
   * when the favorite is not min_speedup faster than the reference (0.97),
   * nor when the winner is the favorite itself. */
  const uint64_t no_rematch[][2] = {{110000, 50000}, {97000, 40000},
                                    {40000, 50000}};
  for (size_t i = 0; i < 3; i++) {
    STC_CHECK_EQ_INT(rematch_select(&pol, no_rematch[i][0], 64, no_rematch[i][0],
                                    no_rematch[i][1], &f, &d, &r),
                     STC_OK);
    STC_CHECK_STR_EQ(d.name, i == 2 ? "a" : "b");
    STC_CHECK(no_duel_noted(r));
    stc_tune_reports_free(r, 1);
    stc_decision_clear(&d);
  }
}

STC_TEST(economics_duel_respects_the_budget_the_target_and_its_limit) {
  /* a 50 us, b 51 us: a duel (b/a 1.02) that keeps a. The exploration
   * costs the same with or without the duel: measured once with it off. */
  stc_tuner_policy pol;
  unbounded_policy(&pol);
  pol.duel_pairs = 0;
  fake f;
  stc_decision d;
  stc_tune_report *r;
  uint64_t explored, clock;
  STC_CHECK_EQ_INT(duel_select(&pol, 50000, 51000, 64, 51000, &f, &d, &r, &explored),
                   STC_OK);
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);
  /* Reference: a warm-up and a timed run; a: a warm-up and 7 pairs; b
   * likewise. */
  STC_CHECK_EQ_U64(explored, 200000 + 50000 + 7 * 150000 + 51000 + 7 * 151000);
  const uint64_t pair = 50000 + 51000;

  /* Unbounded: all 7 pairs. */
  unbounded_policy(&pol);
  STC_CHECK_EQ_INT(duel_select(&pol, 50000, 51000, 64, 51000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "a");
  STC_CHECK_EQ_U64(clock - explored, 7 * pair);
  STC_CHECK_CONTAINS(report_of_name(r, "a")->note, "duel a vs b: 7 pairs");
  STC_CHECK(!r->budget_exhausted);
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);

  /* The duel's limit: 3.5 pairs' time plans 3 pairs. */
  pol.duel_limit_ns = 7 * pair / 2;
  STC_CHECK_EQ_INT(duel_select(&pol, 50000, 51000, 64, 51000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_EQ_U64(clock - explored, 3 * pair);
  STC_CHECK_CONTAINS(report_of_name(r, "a")->note, "duel a vs b: 3 pairs, paired median");
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);

  /* Runs slower than planned (b takes 200 us in the duel): the limit is
   * checked between pairs at the pace so far, so after one pair of
   * 0.25 ms, with 0.1 ms of the 0.35 ms limit left, the 2 more a decision
   * needs cannot fit: it stops, a kept. */
  STC_CHECK_EQ_INT(duel_select(&pol, 50000, 51000, 8, 200000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "a");
  STC_CHECK_EQ_U64(clock - explored, 250000);
  STC_CHECK_CONTAINS(report_of_name(r, "a")->note,
                     "duel a vs b cut by the duel limit after 1 of 3 pairs; a kept");
  STC_CHECK_CONTAINS(report_of_name(r, "b")->note, "cut by the duel limit");
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);

  /* The budget: 1.5 pairs left after exploration plans 1 pair, fewer than
   * the 3 a duel needs: none is run, and the report says so. */
  unbounded_policy(&pol);
  pol.budget_ns = explored + 3 * pair / 2;
  STC_CHECK_EQ_INT(duel_select(&pol, 50000, 51000, 64, 51000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "a");
  STC_CHECK_EQ_U64(clock, explored);
  STC_CHECK_CONTAINS(report_of_name(r, "a")->note,
                     "duel a vs b not held: 3 pairs (about 0.303 ms) do not "
                     "fit the budget left (");
  STC_CHECK_CONTAINS(report_of_name(r, "a")->note, " ms); a kept");
  STC_CHECK(r->budget_exhausted);
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);

  /* The budget spent during the duel (b slower than planned): it stops
   * at the budget, between pairs. */
  pol.budget_ns = explored + 3 * pair;
  STC_CHECK_EQ_INT(duel_select(&pol, 50000, 51000, 8, 200000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_EQ_U64(clock - explored, 250000);
  STC_CHECK_CONTAINS(report_of_name(r, "a")->note, "cut by the budget after 1 of 3 pairs");
  STC_CHECK(r->budget_exhausted);
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);

  /* A pace that still reaches 3 pairs goes on past the planned time, to
   * the limit: b at 70 us in the duel (0.12 ms pairs), a limit of 3.5
   * planned pairs (0.3535 ms): 3 pairs fit, taken, and decided. Slower
   * (b at 90 us: 0.14 ms pairs), the third would start at 0.28 ms, within
   * the limit, so it runs too: the limit is checked between pairs, and
   * the duel ends at most one pair past it. */
  unbounded_policy(&pol);
  pol.duel_limit_ns = 7 * pair / 2;
  STC_CHECK_EQ_INT(duel_select(&pol, 50000, 51000, 8, 70000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_EQ_U64(clock - explored, 3 * 120000);
  STC_CHECK_CONTAINS(report_of_name(r, "a")->note, "duel a vs b: 3 pairs, paired median ratio b/a 1.4000");
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);
  STC_CHECK_EQ_INT(duel_select(&pol, 50000, 51000, 8, 90000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_EQ_U64(clock - explored, 3 * 140000);
  STC_CHECK(clock - explored <= pol.duel_limit_ns + 140000);
  STC_CHECK(!r->budget_exhausted);
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);

  /* The target stops new candidates, not the duel: b starts just before
   * it (after the reference and a: 1.3 ms), and the duel runs past it, up
   * to its own limit. */
  unbounded_policy(&pol);
  pol.target_ns = 200000 + 50000 + 7 * 150000 + 1;
  STC_CHECK_EQ_INT(duel_select(&pol, 50000, 51000, 64, 51000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK(explored > pol.target_ns);
  STC_CHECK_EQ_U64(clock - explored, 7 * pair);
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);
  pol.duel_limit_ns = 5 * pair;
  STC_CHECK_EQ_INT(duel_select(&pol, 50000, 51000, 64, 51000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_EQ_U64(clock - explored, 5 * pair);
  STC_CHECK(clock <= explored + pol.duel_limit_ns);
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);
}

STC_TEST(economics_duel_off_in_the_seed_policy) {
  /* The overturn scenario under the seed's rules: no duel, each candidate
   * its 2 warm-ups and 7 pairs, the exploration's pick; the same policy
   * with duel_pairs set duels (the field, not the rest, decides). */
  stc_tuner_policy pol;
  stc_tuner_policy_init_seed(&pol);
  fake f;
  stc_decision d;
  stc_tune_report *r;
  uint64_t clock;
  STC_CHECK_EQ_INT(duel_select(&pol, 50000, 50400, 9, 45000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "a");
  STC_CHECK_EQ_U64(f.measures[1], 9);
  STC_CHECK_EQ_U64(f.measures[2], 9);
  STC_CHECK(no_duel_noted(r));
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);
  pol.duel_pairs = 7;
  STC_CHECK_EQ_INT(duel_select(&pol, 50000, 50400, 9, 45000, &f, &d, &r, &clock),
                   STC_OK);
  STC_CHECK_STR_EQ(d.name, "b");
  STC_CHECK_EQ_U64(f.measures[1], 9 + 7);
  stc_tune_reports_free(r, 1);
  stc_decision_clear(&d);
}

STC_TEST(economics_duel_finalist_that_fails_loses) {
  /* a 50 us, b 51 us (a duel that would keep a). A finalist whose run
   * fails in the duel loses it, as it would lose in exploration: when a
   * fails, b wins; when b fails, a stays. Neither is an error. */
  for (size_t failing = 1; failing <= 2; failing++) {
    stc_tuner_policy pol;
    unbounded_policy(&pol);
    stc_tuner *t = new_tuner(&pol, NULL);
    stc_candidate c[3];
    make_candidates(c, 3);
    uint64_t times[FAKE_MAX] = {100000, 50000, 51000};
    fake f;
    fake_init(&f, 3, times);
    f.measure_status[failing] = STC_ERR_REJECTED;
    f.measure_ok[failing] = 8 + 2; /* exploration, then 2 duel runs */
    stc_problem p = make_problem("duel-fail");
    stc_decision d;
    STC_CHECK_EQ_INT(select0(t, &p, c, 3, &f, &d), STC_OK);
    STC_CHECK_STR_EQ(d.name, failing == 1 ? "b" : "a");
    STC_CHECK(fabs(d.ratio - (failing == 1 ? 0.51 : 0.5)) < 1e-12);
    stc_tune_report *r;
    size_t n;
    STC_CHECK_EQ_INT(stc_tuner_reports(t, &r, &n), STC_OK);
    STC_CHECK_EQ_U64(n, 1);
    STC_CHECK_CONTAINS(report_of_name(&r[0], "a")->note,
                       failing == 1 ? "duel a vs b: a failed after 2 pair(s) (injected"
                                    : "duel a vs b: b failed after 2 pair(s) (injected");
    STC_CHECK_CONTAINS(report_of_name(&r[0], "b")->note,
                       failing == 1 ? "; b wins" : "; a wins");
    STC_CHECK_EQ_U64(r[0].trials, total_measures(&f) + 3);
    stc_tune_reports_free(r, n);
    stc_decision_clear(&d);
    stc_tuner_destroy(t);
  }
}

STC_TEST(economics_duel_never_changes_the_winner_on_stable_timings) {
  /* On stable timings a candidate's ratio to the reference is exact, so
   * the duel's head-to-head ratio agrees with the ratios and the tie rule
   * is the exploration's (min_improvement, earlier first): with or without
   * the duel the same candidate wins, with the same ratio. */
  unsigned state = 99;
  size_t duels = 0;
  for (int round = 0; round < 1000; round++) {
    uint64_t times[FAKE_MAX];
    stc_candidate c[FAKE_MAX];
    size_t reference, order[FAKE_MAX], order_count;
    size_t count = random_script(&state, times, c, &reference, order,
                                 &order_count);
    stc_tuner_policy on;
    unbounded_policy(&on);
    on.duel_margin = 1.0 + (double)(rand_r(&state) % 4) * 0.1;
    on.early_rejection = rand_r(&state) % 2;
    stc_tuner_policy off = on;
    off.duel_pairs = 0;
    stc_tuner *t_on = new_tuner(&on, NULL), *t_off = new_tuner(&off, NULL);
    fake f_on, f_off;
    fake_init(&f_on, count, times);
    fake_init(&f_off, count, times);
    stc_trial_runner r_on = runner_of(&f_on), r_off = runner_of(&f_off);
    stc_problem p = make_problem("w");
    stc_decision d_on, d_off;
    STC_CHECK_EQ_INT(select_in_order(t_on, &p, c, count, reference, order,
                                     order_count, &r_on, &d_on, NULL),
                     STC_OK);
    STC_CHECK_EQ_INT(select_in_order(t_off, &p, c, count, reference, order,
                                     order_count, &r_off, &d_off, NULL),
                     STC_OK);
    STC_CHECK_EQ_U64(d_on.index, d_off.index);
    STC_CHECK(d_on.ratio == d_off.ratio);
    duels += total_measures(&f_on) > total_measures(&f_off);
    stc_decision_clear(&d_on);
    stc_decision_clear(&d_off);
    stc_tuner_destroy(t_on);
    stc_tuner_destroy(t_off);
  }
  /* The property was exercised. */
  fprintf(stderr, "stable timings: %zu of 1000 tunes held a duel\n", duels);
  STC_CHECK(duels > 100);
}
