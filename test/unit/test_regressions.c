/* Regression tests for behaviours that mutation testing of 30c14cf changed
 * without any test failing (issue 11, "Tests that pass without checking"):
 *
 * - a busy (or nested) answer must be the declared reference even when the
 *   reference is not candidate 0;
 * - a dynamic site's workload key includes each argument's `offset != 0`
 *   flag (docs/dispatch-abi.md), so a view at an offset is its own
 *   workload;
 * - the trial runner's read-back limit is inclusive: outputs of exactly
 *   limit bytes are compared, limit + 1 are "unsupported".
 *
 * Each test fails when the behaviour is mutated (`reference` -> 0, the
 * offset flag dropped from the key, `>` -> `>=` at the limit). */
#include "stc_test.h"

#include "../../runtime/dispatch_internal.h"
#include "../../runtime/rt_internal.h"
#include "stc/rt.h"
#include "stc/tuner.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* ---- busy and nested answers return the declared reference ------------- */

enum { BUSY_CANDIDATES = 3, BUSY_REFERENCE = 2 };

typedef struct busy_probe {
  stc_tuner *tuner;
  stc_problem problem;
  const stc_candidate *candidates;
  stc_trial_runner idle_runner; /* must never run: the key is busy */
  atomic_int idle_calls;
  bool probed;
  stc_status status;
  stc_decision busy;   /* another thread, same key */
  stc_decision nested; /* this thread, inside the tune */
  stc_status nested_status;
} busy_probe;

static stc_status idle_validate(void *user, size_t reference, size_t candidate,
                                const stc_tolerance *tolerance,
                                stc_validation *outcome, char *message,
                                size_t message_size) {
  busy_probe *probe = user;
  atomic_fetch_add(&probe->idle_calls, 1);
  *outcome = STC_VALIDATION_PASSED;
  return STC_OK;
}

static stc_status idle_measure(void *user, size_t candidate,
                               uint64_t *elapsed_ns, char *message,
                               size_t message_size) {
  busy_probe *probe = user;
  atomic_fetch_add(&probe->idle_calls, 1);
  *elapsed_ns = 1000;
  return STC_OK;
}

static void *select_while_busy(void *data) {
  busy_probe *probe = data;
  probe->status = stc_tuner_select(probe->tuner, &probe->problem,
                                   probe->candidates, BUSY_CANDIDATES,
                                   BUSY_REFERENCE, &probe->idle_runner,
                                   &probe->busy, NULL);
  return NULL;
}

static stc_status probe_validate(void *user, size_t reference,
                                 size_t candidate,
                                 const stc_tolerance *tolerance,
                                 stc_validation *outcome, char *message,
                                 size_t message_size) {
  *outcome = STC_VALIDATION_PASSED;
  return STC_OK;
}

/* The reference (2) takes 100 ns, candidate 0 takes 50: a tune picks 0, so
 * an answer of 0 while busy would be a candidate nobody checked yet. */
static stc_status probe_measure(void *user, size_t candidate,
                                uint64_t *elapsed_ns, char *message,
                                size_t message_size) {
  busy_probe *probe = user;
  if (!probe->probed) {
    probe->probed = true;
    pthread_t thread;
    if (pthread_create(&thread, NULL, select_while_busy, probe) == 0)
      pthread_join(thread, NULL);
    probe->nested_status = stc_tuner_select(
        probe->tuner, &probe->problem, probe->candidates, BUSY_CANDIDATES,
        BUSY_REFERENCE, &probe->idle_runner, &probe->nested, NULL);
  }
  *elapsed_ns = candidate == BUSY_REFERENCE ? 100 : candidate == 0 ? 50 : 90;
  return STC_OK;
}

STC_TEST(busy_and_nested_answers_are_the_declared_reference) {
  stc_tuner_policy policy;
  stc_tuner_policy_init_seed(&policy);
  policy.warmups = 0;
  policy.samples = 3;
  stc_tuner *tuner = NULL;
  STC_CHECK_EQ_INT(stc_tuner_create(&policy, NULL, &tuner, NULL), STC_OK);
  stc_candidate candidates[BUSY_CANDIDATES] = {
      {"fast", NULL, true, 0, true, NULL},
      {"middle", NULL, true, 0, true, NULL},
      {"reference", NULL, true, 0, true, NULL},
  };
  busy_probe probe = {0};
  probe.tuner = tuner;
  probe.problem = (stc_problem){STC_SCOPE_OPERATOR, "op", "cpu", "w", NULL,
                                false};
  probe.candidates = candidates;
  probe.idle_runner = (stc_trial_runner){&probe, idle_validate, idle_measure, NULL};
  stc_trial_runner runner = {&probe, probe_validate, probe_measure, NULL};
  stc_decision tuned = {0};
  STC_CHECK_EQ_INT(stc_tuner_select(tuner, &probe.problem, candidates,
                                    BUSY_CANDIDATES, BUSY_REFERENCE, &runner,
                                    &tuned, NULL),
                   STC_OK);
  STC_CHECK(probe.probed);
  STC_CHECK_EQ_INT(probe.status, STC_OK);
  STC_CHECK_EQ_INT(probe.busy.source, STC_SOURCE_BUSY);
  STC_CHECK_EQ_U64(probe.busy.index, BUSY_REFERENCE);
  STC_CHECK_EQ_U64(probe.busy.reference_index, BUSY_REFERENCE);
  STC_CHECK_STR_EQ(probe.busy.name, "reference");
  STC_CHECK_EQ_INT(probe.nested_status, STC_OK);
  STC_CHECK_EQ_INT(probe.nested.source, STC_SOURCE_NESTED);
  STC_CHECK_EQ_U64(probe.nested.index, BUSY_REFERENCE);
  STC_CHECK_STR_EQ(probe.nested.name, "reference");
  STC_CHECK_EQ_INT(atomic_load(&probe.idle_calls), 0);
  /* The tune itself still picks the fastest checked candidate. */
  STC_CHECK_EQ_INT(tuned.source, STC_SOURCE_TUNED);
  STC_CHECK_EQ_U64(tuned.index, 0);
  stc_tuner_stats stats;
  stc_tuner_stats_get(tuner, &stats);
  STC_CHECK_EQ_U64(stats.busy_fallbacks, 1);
  stc_decision_clear(&tuned);
  stc_decision_clear(&probe.busy);
  stc_decision_clear(&probe.nested);
  stc_tuner_destroy(tuner);
}

/* ---- a one-dimensional site: out[i] += 2 * in[i] ----------------------- */

typedef struct memref1 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} memref1;

static void axpy(int repeats, const memref1 *in, memref1 *out) {
  for (int64_t i = 0; i < out->size; i++) {
    float value = 0;
    for (int r = 0; r < repeats; r++)
      value = 2.0f * in->aligned[in->offset + i * in->stride];
    out->aligned[out->offset + i * out->stride] += value;
  }
}

static void reference_ciface(memref1 *in, memref1 *out) { axpy(8, in, out); }
static void fast_ciface(memref1 *in, memref1 *out) { axpy(1, in, out); }

#define UNPACKED(p)                                                           \
  float *p##_al, float *p##_ad, int64_t p##_o, int64_t p##_s, int64_t p##_t
#define PACK(p) {p##_al, p##_ad, p##_o, p##_s, p##_t}
static void reference_entry(UNPACKED(a), UNPACKED(b)) {
  memref1 a = PACK(a), b = PACK(b);
  reference_ciface(&a, &b);
}
static void fast_entry(UNPACKED(a), UNPACKED(b)) {
  memref1 a = PACK(a), b = PACK(b);
  fast_ciface(&a, &b);
}

static const stc_rt_arg axpy_args[2] = {
    {STC_RT_ARG_INPUT, STC_RT_F32, 1, 0},
    {STC_RT_ARG_INOUT, STC_RT_F32, 1, 0},
};
static const stc_rt_variant axpy_variants[2] = {
    {"reference", "1", (void *)reference_entry, (void *)reference_ciface, 0,
     STC_RT_ELIGIBLE_ALWAYS, 0, NULL},
    {"fast", "1", (void *)fast_entry, (void *)fast_ciface, 0,
     STC_RT_ELIGIBLE_ALWAYS, 0, NULL},
};
static stc_rt_site g_axpy_site = {
    STC_RT_DISPATCH_ABI_VERSION, 2, "test/axpy#dynamic", "linalg.generic",
    axpy_args, 2, 0, axpy_variants, NULL, NULL};

static void enter_axpy(memref1 *in, memref1 *out) {
  uint64_t words[10];
  memcpy(&words[0], in, sizeof *in);
  memcpy(&words[5], out, sizeof *out);
  stc_rt_site_enter(&g_axpy_site, words, 10);
}

static bool fresh_runtime(void) {
  stc_rt__dispatch_reset();
  stc_rt_dispatch_config config;
  stc_rt_dispatch_config_init(&config);
  config.policy.mode = STC_MODE_EXPLORE;
  config.policy.warmups = 1;
  config.policy.samples = 3;
  config.policy.max_relative_mad = 1.0;
  return stc_rt_dispatch_configure(&config, NULL) == STC_OK;
}

STC_TEST(dynamic_site_key_includes_the_offset_flag) {
  STC_CHECK(fresh_runtime());
  enum { N = 64 };
  float in[N + 8], out[N + 8], expected[N + 8];
  for (int i = 0; i < N + 8; i++) {
    in[i] = (float)(i % 7);
    out[i] = expected[i] = (float)(i % 3);
  }
  /* Same sizes, strides and element types; only the offsets differ. */
  memref1 in_at_0 = {in, in, 0, N, 1}, out_at_0 = {out, out, 0, N, 1};
  memref1 in_at_4 = {in, in, 4, N, 1}, out_at_4 = {out, out, 4, N, 1};
  enter_axpy(&in_at_0, &out_at_0);
  for (int i = 0; i < N; i++)
    expected[i] += 2.0f * in[i];
  enter_axpy(&in_at_4, &out_at_4);
  for (int i = 0; i < N; i++)
    expected[4 + i] += 2.0f * in[4 + i];
  STC_CHECK(memcmp(out, expected, sizeof out) == 0);
  stc_rt_dispatch_stats stats;
  stc_rt_dispatch_stats_get(&stats);
  STC_CHECK_EQ_U64(stats.tuner.tunes, 2); /* two workloads, not one */
  stc_tune_report *reports = NULL;
  size_t count = 0;
  STC_CHECK(stc_rt_dispatch_reports(&reports, &count) == STC_OK);
  bool distinct = count == 2 &&
                  strcmp(reports[0].workload, reports[1].workload) != 0 &&
                  !strstr(reports[0].workload, "+off") &&
                  strstr(reports[1].workload, "+off");
  if (!distinct)
    for (size_t i = 0; i < count; i++)
      fprintf(stderr, "workload %zu: %s\n", i, reports[i].workload);
  stc_tune_reports_free(reports, count);
  STC_CHECK(distinct);
  /* A third call at another non-zero offset is the offset workload again. */
  memref1 in_at_2 = {in, in, 2, N, 1}, out_at_2 = {out, out, 2, N, 1};
  enter_axpy(&in_at_2, &out_at_2);
  stc_rt_dispatch_stats_get(&stats);
  STC_CHECK_EQ_U64(stats.tuner.tunes, 2);
  stc_rt__dispatch_reset();
}

/* ---- the read-back limit is inclusive --------------------------------- */

STC_TEST(read_back_limit_boundary_is_inclusive) {
  enum { N = 16 };
  float in[N], out[N];
  for (int i = 0; i < N; i++)
    in[i] = out[i] = (float)i;
  memref1 min = {in, in, 0, N, 1}, mout = {out, out, 0, N, 1};
  void *descriptors[2] = {&min, &mout};
  stc_rt__trial *trial = NULL;
  char message[256];
  STC_CHECK(stc_rt__trial_create(&g_axpy_site, descriptors, &trial, message,
                                 sizeof message) == STC_OK);
  const uint64_t bytes = N * sizeof(float); /* the one written argument */
  stc_tolerance tolerance = {1e-4, 1e-3, bytes, 0, 1e-2};
  stc_rt__comparison comparison;
  STC_CHECK(stc_rt__trial_compare(trial, 0, 1, &tolerance, &comparison) ==
            STC_OK);
  bool at_limit = comparison.supported && comparison.compared_bytes == bytes &&
                  comparison.mismatches == 0;
  tolerance.readback_limit = bytes - 1;
  STC_CHECK(stc_rt__trial_compare(trial, 0, 1, &tolerance, &comparison) ==
            STC_OK);
  bool over_limit = !comparison.supported;
  stc_rt__trial_destroy(trial);
  STC_CHECK(at_limit);   /* == limit: compared */
  STC_CHECK(over_limit); /* limit + 1: unsupported */
}

/* ---- bounded reads in the runtime ------------------------------------- */

/* The CPU identity reader read its file to EOF: /dev/zero (or any endless
 * file) allocated until memory ran out. It stops at a bound now. */
STC_TEST(cpu_identity_reader_is_bounded) {
  char identity[1024];
  bool reliable = true;
  STC_CHECK_EQ_INT(stc_rt__cpu_identity_from_file("/dev/zero", identity,
                                                  sizeof identity, &reliable),
                   STC_OK);
  STC_CHECK(!reliable);
  STC_CHECK_CONTAINS(identity, "cpu:");
}
