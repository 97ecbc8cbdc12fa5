/* Unit tests of site dispatch (runtime/dispatch.c, trial_cpu.c, controls.c):
 * hand-written sites whose "variants" are C functions with the C-interface
 * signature - a matmul-accumulate C += A*B reference, a correct variant doing
 * a quarter of the reference's work ("fast"), a correct one doing four times
 * more ("slow"), one that perturbs an element ("wrong"), and a BLAS-eligible
 * one that must never run (STC_BLAS=off: no vendor BLAS is loaded; the
 * loaded case is test_blas.c) - each with an unpacked `entry` too. Every test starts from stc_rt__dispatch_reset, so the tests
 * also pass when run in one process. */
#include "stc_test.h"

#include "../../runtime/dispatch_internal.h"
#include "../../runtime/warm_start.h"
#include "stc/rt.h"
#include "stc/rt_blas.h"
#include "stc/tuner_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the variants ---- */

typedef struct memref2 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
} memref2;

static float dot(const memref2 *a, const memref2 *b, int64_t i, int64_t j) {
  float acc = 0;
  for (int64_t k = 0; k < a->sizes[1]; k++)
    acc += a->aligned[a->offset + i * a->strides[0] + k * a->strides[1]] *
           b->aligned[b->offset + k * b->strides[0] + j * b->strides[1]];
  return acc;
}

/* Called through a volatile pointer so repeated work cannot be optimized
 * away: every variant computes bit-identical sums, only the amount of work
 * differs. */
static float (*volatile g_dot)(const memref2 *, const memref2 *, int64_t,
                               int64_t) = dot;

enum { REFERENCE, SLOW, WRONG, BLAS, FAST, NUM_VARIANTS };
static atomic_int g_calls[NUM_VARIANTS];
static atomic_int g_fast_repeats = 1;

static void matmul(int variant, int repeats, const memref2 *a,
                   const memref2 *b, memref2 *c) {
  atomic_fetch_add(&g_calls[variant], 1);
  for (int64_t i = 0; i < c->sizes[0]; i++)
    for (int64_t j = 0; j < c->sizes[1]; j++) {
      float acc = 0;
      for (int r = 0; r < repeats; r++)
        acc = g_dot(a, b, i, j);
      c->aligned[c->offset + i * c->strides[0] + j * c->strides[1]] += acc;
    }
  if (variant == WRONG && c->sizes[0] > 0 && c->sizes[1] > 0)
    c->aligned[c->offset] += 1.0f;
}

static void reference_ciface(memref2 *a, memref2 *b, memref2 *c) {
  matmul(REFERENCE, 4, a, b, c);
}
static void slow_ciface(memref2 *a, memref2 *b, memref2 *c) {
  matmul(SLOW, 16, a, b, c);
}
static void wrong_ciface(memref2 *a, memref2 *b, memref2 *c) {
  matmul(WRONG, 1, a, b, c);
}
static void blas_ciface(memref2 *a, memref2 *b, memref2 *c) {
  matmul(BLAS, 1, a, b, c);
}
static void fast_ciface(memref2 *a, memref2 *b, memref2 *c) {
  matmul(FAST, atomic_load(&g_fast_repeats), a, b, c);
}

/* The unpacked entries generated code would publish into a slot. */
#define UNPACKED(p)                                                           \
  float *p##_al, float *p##_ad, int64_t p##_o, int64_t p##_s0,              \
      int64_t p##_s1, int64_t p##_t0, int64_t p##_t1
#define PACK(p) {p##_al, p##_ad, p##_o, {p##_s0, p##_s1}, {p##_t0, p##_t1}}
#define DEFINE_ENTRY(name)                                                    \
  static void name##_entry(UNPACKED(a), UNPACKED(b), UNPACKED(c)) {           \
    memref2 a = PACK(a), b = PACK(b), c = PACK(c);                            \
    name##_ciface(&a, &b, &c);                                                \
  }
DEFINE_ENTRY(reference)
DEFINE_ENTRY(slow)
DEFINE_ENTRY(wrong)
DEFINE_ENTRY(blas)
DEFINE_ENTRY(fast)

typedef void (*entry_fn)(UNPACKED(a), UNPACKED(b), UNPACKED(c));
#define SPREAD(m)                                                             \
  (m)->allocated, (m)->aligned, (m)->offset, (m)->sizes[0], (m)->sizes[1],    \
      (m)->strides[0], (m)->strides[1]

/* What the generated dispatch function does on its fast path. */
static bool call_through_slot(void **slot, memref2 *a, memref2 *b,
                              memref2 *c) {
  void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (!f)
    return false;
  ((entry_fn)f)(SPREAD(a), SPREAD(b), SPREAD(c));
  return true;
}

static const stc_rt_arg matmul_args[3] = {
    {STC_RT_ARG_INPUT, STC_RT_F32, 2, 0},
    {STC_RT_ARG_INPUT, STC_RT_F32, 2, 0},
    {STC_RT_ARG_INOUT, STC_RT_F32, 2, 0},
};

#define VARIANT(name, eligibility)                                            \
  {#name, "1", (void *)name##_entry, (void *)name##_ciface, 0, eligibility, 0, \
   "code-" #name}
static const stc_rt_variant matmul_variants[NUM_VARIANTS] = {
    VARIANT(reference, STC_RT_ELIGIBLE_ALWAYS),
    VARIANT(slow, STC_RT_ELIGIBLE_ALWAYS),
    VARIANT(wrong, STC_RT_ELIGIBLE_ALWAYS),
    VARIANT(blas, STC_RT_ELIGIBLE_BLAS),
    VARIANT(fast, STC_RT_ELIGIBLE_ALWAYS),
};

static void *g_slot;
static stc_rt_site g_static_site = {
    STC_RT_DISPATCH_ABI_VERSION, 3, "test/matmul#static", "linalg.matmul",
    matmul_args, NUM_VARIANTS, REFERENCE, matmul_variants, &g_slot, NULL};
static stc_rt_site g_dynamic_site = {
    STC_RT_DISPATCH_ABI_VERSION, 3, "test/matmul#dynamic", "linalg.matmul",
    matmul_args, NUM_VARIANTS, REFERENCE, matmul_variants, NULL, NULL};

/* ---- helpers ---- */

/* A, B and C (row-major n x n, C possibly a padded view) with the data the
 * reference would produce. */
typedef struct problem {
  int64_t n;
  float *a, *b, *c, *expected, *a_copy, *b_copy;
  size_t c_elements;
  memref2 ma, mb, mc;
} problem;

static void problem_free(problem *p) {
  free(p->a);
  free(p->b);
  free(p->c);
  free(p->expected);
  free(p->a_copy);
  free(p->b_copy);
}

/* C is n x n inside an n x (n + pad) buffer at an offset of `offset`. */
static void problem_init(problem *p, int64_t n, int64_t pad, int64_t offset,
                         unsigned seed) {
  memset(p, 0, sizeof *p);
  p->n = n;
  size_t nn = (size_t)(n * n);
  p->c_elements = (size_t)(offset + n * (n + pad));
  p->a = malloc(nn * sizeof(float));
  p->b = malloc(nn * sizeof(float));
  p->a_copy = malloc(nn * sizeof(float));
  p->b_copy = malloc(nn * sizeof(float));
  p->c = malloc(p->c_elements * sizeof(float));
  p->expected = malloc(p->c_elements * sizeof(float));
  srand(seed);
  for (size_t i = 0; i < nn; i++) {
    p->a[i] = (float)(rand() % 200 - 100) / 32.0f;
    p->b[i] = (float)(rand() % 200 - 100) / 32.0f;
  }
  for (size_t i = 0; i < p->c_elements; i++)
    p->c[i] = (float)(rand() % 50) / 8.0f;
  memcpy(p->a_copy, p->a, nn * sizeof(float));
  memcpy(p->b_copy, p->b, nn * sizeof(float));
  memcpy(p->expected, p->c, p->c_elements * sizeof(float));
  p->ma = (memref2){p->a, p->a, 0, {n, n}, {n, 1}};
  p->mb = (memref2){p->b, p->b, 0, {n, n}, {n, 1}};
  p->mc = (memref2){p->c, p->c, offset, {n, n}, {n + pad, 1}};
  memref2 e = p->mc;
  e.allocated = e.aligned = p->expected;
  matmul(REFERENCE, 1, &p->ma, &p->mb, &e);
  atomic_fetch_sub(&g_calls[REFERENCE], 1); /* not a dispatch */
}

/* The output is what one run of the reference gives, and the inputs are
 * bit-identical to what the caller passed. */
static bool problem_correct(const problem *p) {
  size_t nn = (size_t)(p->n * p->n);
  return memcmp(p->c, p->expected, p->c_elements * sizeof(float)) == 0 &&
         memcmp(p->a, p->a_copy, nn * sizeof(float)) == 0 &&
         memcmp(p->b, p->b_copy, nn * sizeof(float)) == 0;
}

/* Starts the next accumulation from the current result. */
static void problem_rebase(problem *p) {
  memcpy(p->c, p->expected, p->c_elements * sizeof(float));
  memref2 e = p->mc;
  e.allocated = e.aligned = p->expected;
  matmul(REFERENCE, 1, &p->ma, &p->mb, &e);
  atomic_fetch_sub(&g_calls[REFERENCE], 1);
}

/* What generated code does on the slow path: every descriptor's words in
 * order. */
static void enter(stc_rt_site *site, problem *p) {
  uint64_t words[21];
  memcpy(&words[0], &p->ma, sizeof p->ma);
  memcpy(&words[7], &p->mb, sizeof p->mb);
  memcpy(&words[14], &p->mc, sizeof p->mc);
  stc_rt_site_enter(site, words, 21);
}

/* A fresh runtime with a fast, noise-tolerant test policy. */
static void fresh_config(stc_rt_dispatch_config *config, stc_tune_mode mode,
                         const char *cache_directory) {
  stc_rt__dispatch_reset();
  /* Read once per process, before the first site: the same in every test. */
  setenv("STC_BLAS", "off", 1);
  stc_rt__blas_reset();
  for (int v = 0; v < NUM_VARIANTS; v++)
    atomic_store(&g_calls[v], 0);
  atomic_store(&g_fast_repeats, 1);
  stc_rt_dispatch_config_init(config);
  config->policy.mode = mode;
  config->policy.warmups = 1;
  /* A shared, loaded 2-core machine (and sanitizers): more pairs and a lax
   * noise limit; the 4x speed difference still decides by the median. */
  config->policy.samples = 9;
  config->policy.max_relative_mad = 1.0;
  /* The rent-or-buy rule has its own tests (rent_or_buy_*); the others see
   * BLAS winners switch at check_at_call, as with start_cost 0. */
  config->policy.start_cost_ns = 0;
  if (cache_directory) {
    config->use_cache = true;
    snprintf(config->cache_directory, sizeof config->cache_directory, "%s",
             cache_directory);
  }
}

static bool fresh_runtime(stc_tune_mode mode, const char *cache_directory) {
  stc_rt_dispatch_config config;
  fresh_config(&config, mode, cache_directory);
  stc_error err;
  if (stc_rt_dispatch_configure(&config, &err) == STC_OK)
    return true;
  fprintf(stderr, "configure: %s\n", err.message);
  return false;
}

/* A directory of its own for one test. */
static const char *test_dir(const char *name) {
  static char path[2048];
  snprintf(path, sizeof path, "%s/%s", stc_test_tmpdir(), name);
  mkdir(path, 0700);
  return path;
}

static stc_rt_dispatch_stats stats(void) {
  stc_rt_dispatch_stats s;
  stc_rt_dispatch_stats_get(&s);
  return s;
}

/* The note of candidate `name` in the last report, or NULL. Owned. */
static char *last_note(const char *name, char **winner) {
  stc_tune_report *reports = NULL;
  size_t count = 0;
  char *note = NULL;
  if (stc_rt_dispatch_reports(&reports, &count) != STC_OK || count == 0)
    return NULL;
  const stc_tune_report *r = &reports[count - 1];
  for (size_t i = 0; i < r->num_candidates; i++)
    if (strcmp(r->candidates[i].name, name) == 0)
      note = strdup(r->candidates[i].note ? r->candidates[i].note : "");
  if (winner)
    *winner = strdup(r->winner);
  stc_tune_reports_free(reports, count);
  return note;
}

/* stderr redirected into a file between capture_begin and capture_end. */
static int capture_begin(const char *path) {
  fflush(stderr);
  int saved = dup(2);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(fd, 2);
  close(fd);
  return saved;
}

static char *capture_end(int saved, const char *path) {
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  FILE *f = fopen(path, "r");
  char *text = calloc(1, 1 << 16);
  if (f && text)
    (void)!fread(text, 1, (1 << 16) - 1, f);
  if (f)
    fclose(f);
  return text;
}

static int count_of(const char *haystack, const char *needle) {
  int n = 0;
  for (const char *p = haystack; p && (p = strstr(p, needle)); p++)
    n++;
  return n;
}

/* True when the static site published the fast variant; prints the reports
 * otherwise, so that a timing surprise explains itself. */
static bool slot_holds_fast(void) {
  if (__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == (void *)fast_entry)
    return true;
  stc_rt_dispatch_reports_print(stderr);
  return false;
}

/* ---- tests ---- */

STC_TEST(first_call_tunes_then_cache_and_slot_serve) {
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, NULL));
  problem p;
  problem_init(&p, 32, 0, 0, 1);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.tunes, 1);
  STC_CHECK_EQ_U64(s.selections, 1);
  STC_CHECK(slot_holds_fast());
  STC_CHECK_EQ_INT(atomic_load(&g_calls[BLAS]), 0);

  /* A later slow-path call is served from the workload table. */
  problem_rebase(&p);
  int fast_before = atomic_load(&g_calls[FAST]);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  s = stats();
  STC_CHECK_EQ_U64(s.cached_calls, 1);
  STC_CHECK_EQ_U64(s.selections, 1);
  STC_CHECK_EQ_U64(s.tuner.tunes, 1);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), fast_before + 1);

  /* And the generated fast path takes the published entry. */
  problem_rebase(&p);
  STC_CHECK(call_through_slot(&g_slot, &p.ma, &p.mb, &p.mc));
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), fast_before + 2);
  problem_free(&p);
}

STC_TEST(report_says_why_wrong_slow_and_blas_lost) {
  /* The seed's exhaustive timing: "slow" is scored, not raced out (that
   * is early_rejection_says_so_in_the_report). */
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_EXPLORE, NULL);
  config.policy.early_rejection = false;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem p;
  problem_init(&p, 32, 0, 0, 2);
  enter(&g_dynamic_site, &p);
  STC_CHECK(problem_correct(&p));
  char *winner = NULL;
  char *wrong = last_note("wrong", &winner);
  char *slow = last_note("slow", NULL);
  char *blas = last_note("blas", NULL);
  char *fast = last_note("fast", NULL);
  bool ok = winner && wrong && slow && blas && fast;
  if (ok) {
    STC_CHECK_STR_EQ(winner, "fast");
    STC_CHECK_CONTAINS(wrong, "rejected");
    STC_CHECK_CONTAINS(wrong, "wrong result");
    STC_CHECK_CONTAINS(slow, "lost: paired median ratio");
    STC_CHECK_CONTAINS(fast, "won: paired median ratio");
    STC_CHECK_CONTAINS(blas, "ineligible");
  }
  free(winner);
  free(wrong);
  free(slow);
  free(blas);
  free(fast);
  STC_CHECK(ok);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[BLAS]), 0);
  problem_free(&p);
}

STC_TEST(printed_report_is_a_table_with_runtime_reasons) {
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_EXPLORE, NULL);
  config.print_reports = true;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem p;
  problem_init(&p, 24, 0, 0, 3);
  char path[4096];
  snprintf(path, sizeof path, "%s/report.txt", test_dir("report"));
  int saved = capture_begin(path);
  enter(&g_dynamic_site, &p);
  char *text = capture_end(saved, path);
  STC_CHECK(problem_correct(&p));
  STC_CHECK(text != NULL);
  STC_CHECK_CONTAINS(text, "site:     test/matmul#dynamic|linalg.matmul");
  STC_CHECK_CONTAINS(text, "workload: f32[24x24:24,1]");
  STC_CHECK_CONTAINS(text, "winner:   fast");
  STC_CHECK_CONTAINS(text, "(vendor BLAS not loaded: STC_BLAS=off)");
  STC_CHECK_CONTAINS(text, "samples");
  free(text);
  problem_free(&p);
}

STC_TEST(tune_off_runs_the_reference_without_tuning) {
  /* A cache directory that does not exist yet: creating the tuner would
   * create it (and open it); with tuning off nothing reads it. */
  char cache[4096];
  snprintf(cache, sizeof cache, "%s/never-opened", test_dir("off"));
  STC_CHECK(fresh_runtime(STC_MODE_DISABLED, cache));
  stc_rt__blas_reset();
  problem p;
  problem_init(&p, 16, 0, 0, 4);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.tunes, 0);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 1);
  /* The reference's entry is published: no later call reaches the runtime. */
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == (void *)reference_entry);
  /* Nobody needed the BLAS variant's eligibility: the library stays unloaded. */
  STC_CHECK(!stc_rt__blas_attempted());
  /* Nor the tuner: no cache directory opened (or created). */
  struct stat st;
  STC_CHECK(stc_rt__tuner_if_started() == NULL);
  STC_CHECK(stat(cache, &st) != 0 && errno == ENOENT);
  /* The configuration was fixed by the call all the same. */
  stc_rt_dispatch_config again;
  stc_rt_dispatch_config_init(&again);
  STC_CHECK(stc_rt_dispatch_configure(&again, NULL) == STC_ERR_INVALID);
  problem_free(&p);
}

STC_TEST(environment_controls_are_read_once_with_warnings) {
  const char *dir = test_dir("envcache");
  setenv("STC_TUNE", "off", 1);
  setenv("STC_CACHE_DIR", dir, 1);
  setenv("STC_TUNE_SAMPLES", "3", 1);
  setenv("STC_TUNE_WARMUPS", "lots", 1);
  setenv("STC_TUNE_BUDGET_MS", "500", 1);
  setenv("STC_TUNE_MIN_SPEEDUP", "1.1", 1);
  setenv("STC_TUNE_NO_SUCH_FIELD", "1", 1);
  setenv("STC_TUNE_REPORT", "maybe", 1);
  setenv("STC_TUNE_RECHECK_EVERY", "9", 1);
  stc_rt_dispatch_config config;
  char path[4096];
  snprintf(path, sizeof path, "%s/warnings.txt", dir);
  int saved = capture_begin(path);
  stc_rt_dispatch_config_from_environment(&config);
  char *text = capture_end(saved, path);
  unsetenv("STC_TUNE");
  unsetenv("STC_CACHE_DIR");
  unsetenv("STC_TUNE_SAMPLES");
  unsetenv("STC_TUNE_WARMUPS");
  unsetenv("STC_TUNE_BUDGET_MS");
  unsetenv("STC_TUNE_MIN_SPEEDUP");
  unsetenv("STC_TUNE_NO_SUCH_FIELD");
  unsetenv("STC_TUNE_REPORT");
  unsetenv("STC_TUNE_RECHECK_EVERY");
  STC_CHECK_EQ_INT(config.policy.mode, STC_MODE_DISABLED);
  STC_CHECK_EQ_U64(config.policy.samples, 3);
  STC_CHECK_EQ_U64(config.policy.warmups, 2); /* bad value: the default */
  STC_CHECK_EQ_U64(config.policy.budget_ns, 500000000u);
  STC_CHECK(config.policy.min_speedup > 1.09 && config.policy.min_speedup < 1.11);
  STC_CHECK(config.use_cache);
  STC_CHECK_STR_EQ(config.cache_directory, dir);
  STC_CHECK(!config.print_reports);
  STC_CHECK_EQ_U64(config.recheck_every, 9);
  STC_CHECK_EQ_INT(count_of(text, "stc: warning:"), 3);
  STC_CHECK_CONTAINS(text, "STC_TUNE_WARMUPS");
  STC_CHECK_CONTAINS(text, "STC_TUNE_NO_SUCH_FIELD");
  STC_CHECK_CONTAINS(text, "STC_TUNE_REPORT");
  free(text);
}

STC_TEST(unconfigured_runtime_reads_the_environment) {
  stc_rt__dispatch_reset();
  /* Read once per process, before the first site: the same in every test. */
  setenv("STC_BLAS", "off", 1);
  stc_rt__blas_reset();
  for (int v = 0; v < NUM_VARIANTS; v++)
    atomic_store(&g_calls[v], 0);
  setenv("STC_TUNE", "off", 1);
  setenv("STC_CACHE_DIR", test_dir("envrun"), 1);
  problem p;
  problem_init(&p, 8, 0, 0, 5);
  enter(&g_dynamic_site, &p);
  unsetenv("STC_TUNE");
  unsetenv("STC_CACHE_DIR");
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_U64(stats().tuner.tunes, 0);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
  /* Read once: configuring now is too late. */
  stc_rt_dispatch_config config;
  stc_rt_dispatch_config_init(&config);
  stc_error err;
  STC_CHECK(stc_rt_dispatch_configure(&config, &err) == STC_ERR_INVALID);
  STC_CHECK_CONTAINS(err.message, "already started");
  problem_free(&p);
}

STC_TEST(cache_only_with_empty_cache_runs_the_reference) {
  STC_CHECK(fresh_runtime(STC_MODE_CACHE_ONLY, test_dir("empty")));
  problem p;
  problem_init(&p, 16, 0, 0, 6);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_U64(stats().tuner.tunes, 0);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == (void *)reference_entry);
  problem_free(&p);
}

STC_TEST(cache_only_uses_a_decision_from_a_previous_run) {
  STC_CHECK(stc_rt_environment_reliable()); /* else nothing persists */
  const char *dir = test_dir("persist");
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", dir);
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, directory));
  problem p;
  problem_init(&p, 32, 0, 0, 7);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_U64(stats().tuner.tunes, 1);

  /* A new runtime instance, as in the next process: the first call runs
   * the reference (the check is deferred, check_at_call 2), the second
   * checks the winner on itself and publishes it. */
  STC_CHECK(fresh_runtime(STC_MODE_CACHE_ONLY, directory));
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.tunes, 0);
  STC_CHECK_EQ_U64(s.tuner.disk_hits, 1);
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == NULL);
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_U64(stats().tuner.tunes, 0);
  STC_CHECK(slot_holds_fast());
  problem_free(&p);
}

/* ---- disk decisions in a new process (DESIGN.md section 6, rule 5) ---- */

typedef struct planting {
  stc_disk_cache *cache;
  const char *winner;
  int planted;
  int named; /* records whose winner is `winner` (planted == 0: count) */
  double ratio; /* > 0: planted as the record's ratio too */
} planting;

static bool plant_one(void *user, const stc_cache_entry *entry) {
  planting *p = user;
  if (entry->status != STC_OK)
    return true;
  if (strcmp(entry->record->winner, p->winner) == 0)
    p->named++;
  if (p->planted < 0)
    return true;
  stc_cache_record copy;
  if (stc_cache_record_copy(entry->record, &copy) != STC_OK)
    return false;
  free(copy.winner);
  copy.winner = strdup(p->winner);
  if (p->ratio > 0)
    copy.ratio = p->ratio;
  if (copy.winner && stc_disk_cache_save(p->cache, &copy, NULL) == STC_OK)
    p->planted++;
  stc_cache_record_clear(&copy);
  return true;
}

/* Rewrites every record in dir to name `winner` (checksums and all, as a
 * stale or foreign cache would hold it); returns how many. With count_only,
 * counts the records that name it instead. */
static int plant_winner(const char *dir, const char *winner, bool count_only) {
  planting p = {NULL, winner, count_only ? -1 : 0, 0};
  if (stc_disk_cache_open(dir, 1024, 3600, &p.cache, NULL) != STC_OK)
    return -1;
  stc_disk_cache_list(p.cache, plant_one, &p, NULL);
  stc_disk_cache_close(p.cache);
  return count_only ? p.named : p.planted;
}

static int plant_winner_ratio(const char *dir, const char *winner,
                              double ratio) {
  planting p = {NULL, winner, 0, 0, ratio};
  if (stc_disk_cache_open(dir, 1024, 3600, &p.cache, NULL) != STC_OK)
    return -1;
  stc_disk_cache_list(p.cache, plant_one, &p, NULL);
  stc_disk_cache_close(p.cache);
  return p.planted;
}

static void reset_calls(void) {
  for (int v = 0; v < NUM_VARIANTS; v++)
    atomic_store(&g_calls[v], 0);
}

STC_TEST(disk_decision_is_checked_on_the_call_in_one_reference_run) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("oncall"));
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, directory));
  problem p;
  problem_init(&p, 32, 0, 0, 21);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK(slot_holds_fast());

  /* The next process, with the check on the first call (check_at_call 1):
   * the first call checks the record on itself. C is accumulated into
   * (INOUT), so a second run of anything on the caller's arguments would
   * show in the result. */
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_EXPLORE, directory);
  config.policy.check_at_call = 1;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  reset_calls();
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 1); /* on scratch */
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 1);      /* the call */
  STC_CHECK_EQ_INT(atomic_load(&g_calls[SLOW]) + atomic_load(&g_calls[WRONG]) +
                       atomic_load(&g_calls[BLAS]),
                   0);
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.disk_hits, 1);
  STC_CHECK_EQ_U64(s.tuner.disk_checks, 1);
  STC_CHECK_EQ_U64(s.tuner.tunes, 0);
  STC_CHECK(slot_holds_fast());
  /* Then the slot serves: no more reference runs. */
  problem_rebase(&p);
  STC_CHECK(call_through_slot(&g_slot, &p.ma, &p.mb, &p.mc));
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 1);

  /* The seed's rule (check_on_call=0): validated on scratch (reference +
   * winner), then the call: the winner runs twice. */
  fresh_config(&config, STC_MODE_EXPLORE, directory);
  config.policy.check_on_call = false;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 1);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 2);
  STC_CHECK_EQ_U64(stats().tuner.disk_hits, 1);
  problem_free(&p);
}

STC_TEST(planted_wrong_winner_is_caught_on_the_call) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048], log[4096];
  snprintf(directory, sizeof directory, "%s", test_dir("planted"));
  snprintf(log, sizeof log, "%s/log.txt", directory);
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, directory));
  problem p;
  problem_init(&p, 32, 0, 4, 22); /* C a view at an offset */
  enter(&g_dynamic_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", false), 1);

  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_EXPLORE, directory);
  config.policy.check_at_call = 1;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  reset_calls();
  problem_rebase(&p);
  int saved = capture_begin(log);
  enter(&g_dynamic_site, &p);
  char *text = capture_end(saved, log);
  /* The caller's C holds the reference's result, not the wrong one. */
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WRONG]), 1);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 1);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
  STC_CHECK_CONTAINS(text, "the cached decision failed its check (wrong result:");
  STC_CHECK_EQ_INT(count_of(text, "stc: warning:"), 1);
  free(text);
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.disk_hits, 0);
  STC_CHECK_EQ_U64(s.tuner.invalidations, 1);
  STC_CHECK_EQ_U64(s.tuner.tunes, 0);
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", true), 0); /* deleted */

  /* The next call re-tunes, with the wrong variant banned. */
  problem_rebase(&p);
  enter(&g_dynamic_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_U64(stats().tuner.tunes, 1);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WRONG]), 1);
  problem_free(&p);
}

/* The default (check_at_call 2): a disk decision's first call in a process
 * runs the reference alone, what the default lowering runs (not the winner,
 * no vendor library); the second call checks the winner on itself in one
 * reference run and publishes it. */
STC_TEST(deferred_check_first_call_runs_the_reference_alone) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("deferred"));
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, directory));
  problem p;
  problem_init(&p, 32, 0, 0, 24);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK(slot_holds_fast());

  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_EXPLORE, directory);
  STC_CHECK_EQ_U64(config.policy.check_at_call, 2); /* the default */
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  reset_calls();
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 1); /* the call */
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]) + atomic_load(&g_calls[SLOW]) +
                       atomic_load(&g_calls[WRONG]) +
                       atomic_load(&g_calls[BLAS]),
                   0);
  STC_CHECK(!stc_rt__blas_attempted());
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.disk_hits, 1);
  STC_CHECK_EQ_U64(s.tuner.tunes, 0);
  STC_CHECK_EQ_U64(s.reference_fallbacks, 0);
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == NULL);

  /* The second call: the reference on scratch, the winner on the call. */
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 2);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 1);
  s = stats();
  STC_CHECK_EQ_U64(s.tuner.disk_hits, 1);
  STC_CHECK_EQ_U64(s.tuner.tunes, 0);
  STC_CHECK_EQ_U64(s.tuner.invalidations, 0);
  STC_CHECK(slot_holds_fast());
  STC_CHECK_EQ_INT(plant_winner(directory, "fast", true), 1); /* kept */

  /* Then the winner serves: through the slot, and through the runtime. */
  problem_rebase(&p);
  STC_CHECK(call_through_slot(&g_slot, &p.ma, &p.mb, &p.mc));
  STC_CHECK(problem_correct(&p));
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 2);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 3);
  STC_CHECK_EQ_U64(stats().cached_calls, 1);
  problem_free(&p);
}

STC_TEST(deferred_check_catches_a_planted_wrong_winner) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048], log[4096];
  snprintf(directory, sizeof directory, "%s", test_dir("deferred-wrong"));
  snprintf(log, sizeof log, "%s/log.txt", directory);
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, directory));
  problem p;
  problem_init(&p, 32, 0, 4, 25); /* C a view at an offset */
  enter(&g_dynamic_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", false), 1);

  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, directory));
  reset_calls();
  int saved = capture_begin(log);
  /* First call: the reference alone; the wrong winner has not run. */
  problem_rebase(&p);
  enter(&g_dynamic_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WRONG]), 0);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 1);
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", true), 1); /* not yet */
  /* Second call: checked on the call, caught; C holds the reference's
   * result. */
  problem_rebase(&p);
  enter(&g_dynamic_site, &p);
  char *text = capture_end(saved, log);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WRONG]), 1);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 2);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
  STC_CHECK_CONTAINS(text, "the cached decision failed its check (wrong result:");
  STC_CHECK_EQ_INT(count_of(text, "stc: warning:"), 1);
  free(text);
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.invalidations, 1);
  STC_CHECK_EQ_U64(s.tuner.tunes, 0);
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", true), 0); /* deleted */

  /* The next call re-tunes with the wrong variant banned; every call after
   * that is right too. */
  for (int i = 0; i < 3; i++) {
    problem_rebase(&p);
    enter(&g_dynamic_site, &p);
    STC_CHECK(problem_correct(&p));
  }
  STC_CHECK_EQ_U64(stats().tuner.tunes, 1);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WRONG]), 1);
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", true), 0);

  /* And in cache-only mode the workload keeps the reference afterwards. */
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", false), 1);
  STC_CHECK(fresh_runtime(STC_MODE_CACHE_ONLY, directory));
  reset_calls();
  saved = capture_begin(log);
  for (int i = 0; i < 4; i++) {
    problem_rebase(&p);
    enter(&g_dynamic_site, &p);
    STC_CHECK(problem_correct(&p));
  }
  text = capture_end(saved, log);
  STC_CHECK_EQ_INT(count_of(text, "stc: warning:"), 1);
  free(text);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WRONG]), 1);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", true), 0);
  problem_free(&p);
}

/* check_at_call 3: calls 1 and 2 run the reference alone, call 3 checks the
 * winner on itself, call 4 runs it through the slot. */
STC_TEST(check_at_call_three_runs_the_reference_twice) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("deferred-three"));
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, directory));
  problem p;
  problem_init(&p, 32, 0, 0, 29);
  enter(&g_static_site, &p);
  STC_CHECK(slot_holds_fast());

  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_CACHE_ONLY, directory);
  config.policy.check_at_call = 3;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  reset_calls();
  for (int call = 1; call <= 2; call++) {
    problem_rebase(&p);
    enter(&g_static_site, &p);
    STC_CHECK(problem_correct(&p));
    STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), call);
    STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
    STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == NULL);
  }
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 3); /* on scratch */
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 1);
  STC_CHECK(slot_holds_fast());
  problem_rebase(&p);
  STC_CHECK(call_through_slot(&g_slot, &p.ma, &p.mb, &p.mc));
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 2);
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.disk_hits, 1);
  STC_CHECK_EQ_U64(s.reference_fallbacks, 0);
  problem_free(&p);
}

/* A site invalidated while its disk decision awaits the deferred check:
 * the pending winner is dropped (and banned), never published. */
STC_TEST(invalidating_a_site_drops_a_pending_check) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("deferred-invalidate"));
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, directory));
  problem p;
  problem_init(&p, 32, 0, 0, 26);
  enter(&g_static_site, &p);
  STC_CHECK(slot_holds_fast());

  STC_CHECK(fresh_runtime(STC_MODE_CACHE_ONLY, directory));
  reset_calls();
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(stc_rt_site_invalidate(&g_static_site, true), STC_OK);
  STC_CHECK_EQ_INT(plant_winner(directory, "fast", true), 0); /* deleted */
  for (int i = 0; i < 3; i++) {
    problem_rebase(&p);
    enter(&g_static_site, &p);
    STC_CHECK(problem_correct(&p));
  }
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) ==
            (void *)reference_entry);
  problem_free(&p);
}

STC_TEST(check_at_call_policy_field) {
  stc_tuner_policy policy;
  stc_tuner_policy_init(&policy);
  STC_CHECK_EQ_U64(policy.check_at_call, 2);
  stc_error err;
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&policy, "check-at-call", "1", &err),
                   STC_OK);
  STC_CHECK_EQ_U64(policy.check_at_call, 1);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&policy, "check_at_call", "0", &err),
                   STC_ERR_INVALID);
  STC_CHECK_CONTAINS(err.message, "check_at_call must be >= 1");
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&policy, "check_at_call", "-1", &err),
                   STC_ERR_INVALID);
  STC_CHECK_EQ_INT(
      stc_tuner_policy_set(&policy, "check_at_call", "4294967296", &err),
      STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&policy, "check_at_call", "two", &err),
                   STC_ERR_INVALID);
  STC_CHECK_EQ_U64(policy.check_at_call, 1); /* unchanged on error */
  stc_tuner_policy_init_seed(&policy);
  STC_CHECK_EQ_U64(policy.check_at_call, 1);
  /* From the environment: a bad value warns and keeps the default. */
  char path[4096];
  snprintf(path, sizeof path, "%s/warnings.txt", test_dir("check-at-call"));
  stc_rt_dispatch_config config;
  setenv("STC_TUNE_CHECK_AT_CALL", "1", 1);
  stc_rt_dispatch_config_from_environment(&config);
  STC_CHECK_EQ_U64(config.policy.check_at_call, 1);
  setenv("STC_TUNE_CHECK_AT_CALL", "0", 1);
  int saved = capture_begin(path);
  stc_rt_dispatch_config_from_environment(&config);
  char *text = capture_end(saved, path);
  unsetenv("STC_TUNE_CHECK_AT_CALL");
  STC_CHECK_EQ_U64(config.policy.check_at_call, 2);
  STC_CHECK_CONTAINS(text, "STC_TUNE_CHECK_AT_CALL");
  STC_CHECK_CONTAINS(text, "check_at_call must be >= 1");
  free(text);
}

STC_TEST(trust_verified_runs_a_disk_decision_unchecked_for_the_same_code) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("trust"));
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_EXPLORE, directory);
  config.policy.trust_verified = true;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem p;
  problem_init(&p, 32, 0, 0, 23);
  enter(&g_dynamic_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_U64(stats().tuner.tunes, 1);

  /* Same code: no check at all, the call runs the winner once. */
  fresh_config(&config, STC_MODE_EXPLORE, directory);
  config.policy.trust_verified = true;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem_rebase(&p);
  enter(&g_dynamic_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 0);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 1);
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.trusted_hits, 1);
  STC_CHECK_EQ_U64(s.tuner.disk_checks, 0);

  /* The same site compiled differently (another code hash for "fast"):
   * a miss, so cache-only keeps the reference. */
  static stc_rt_variant changed[NUM_VARIANTS];
  memcpy(changed, matmul_variants, sizeof changed);
  changed[FAST].code_hash = "code-fast-recompiled";
  static stc_rt_site recompiled;
  recompiled = g_dynamic_site;
  recompiled.variants = changed;
  recompiled.state = NULL;
  fresh_config(&config, STC_MODE_CACHE_ONLY, directory);
  config.policy.trust_verified = true;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem_rebase(&p);
  enter(&recompiled, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 1);
  s = stats();
  STC_CHECK_EQ_U64(s.tuner.disk_hits, 0);
  STC_CHECK_EQ_U64(s.tuner.trusted_hits, 0);
  stc_rt__dispatch_reset(); /* recompiled's state goes before it does */
  problem_free(&p);
}

/* Overwrites every record file under dir/v1 with junk; returns how many. */
static int corrupt_records(const char *dir) {
  char version[4200];
  snprintf(version, sizeof version, "%s/v%d", dir, 1);
  DIR *d = opendir(version);
  int count = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (!strstr(e->d_name, ".rec"))
      continue;
    char path[4600];
    snprintf(path, sizeof path, "%s/%s", version, e->d_name);
    FILE *f = fopen(path, "w");
    if (f) {
      fputs("winner: wrong\x01\x02 truncated", f);
      fclose(f);
      count++;
    }
  }
  if (d)
    closedir(d);
  return count;
}

STC_TEST(corrupt_cache_file_is_a_miss_and_retunes) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("corrupt"));
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, directory));
  problem p;
  problem_init(&p, 32, 0, 0, 8);
  enter(&g_static_site, &p);
  STC_CHECK_EQ_U64(stats().tuner.tunes, 1);
  STC_CHECK(corrupt_records(directory) >= 1);

  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, directory));
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.disk_hits, 0);
  STC_CHECK_EQ_U64(s.tuner.tunes, 1);
  STC_CHECK(slot_holds_fast());
  problem_free(&p);
}

STC_TEST(unusable_cache_directory_warns_and_still_computes) {
  /* A regular file where the directory should be: refused even for root. */
  char path[4096], log[4096];
  snprintf(path, sizeof path, "%s/not-a-directory", test_dir("unusable"));
  snprintf(log, sizeof log, "%s/stderr.txt", test_dir("unusable"));
  FILE *f = fopen(path, "w");
  STC_CHECK(f != NULL);
  fclose(f);
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, path));
  problem p;
  problem_init(&p, 32, 0, 0, 9);
  int saved = capture_begin(log);
  enter(&g_static_site, &p);
  problem_rebase(&p);
  enter(&g_static_site, &p);
  char *text = capture_end(saved, log);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_CONTAINS(text, "stc: warning: cannot use the cache directory");
  STC_CHECK_EQ_INT(count_of(text, "stc: warning:"), 1);
  stc_rt_dispatch_stats s = stats();
  STC_CHECK(s.tuner.cache_warnings >= 1);
  STC_CHECK_EQ_U64(s.tuner.tunes, 1);
  free(text);
  problem_free(&p);
}

typedef struct thread_arg {
  pthread_barrier_t *barrier;
  problem p;
  bool correct;
} thread_arg;

static void *first_caller(void *opaque) {
  thread_arg *t = opaque;
  pthread_barrier_wait(t->barrier);
  enter(&g_static_site, &t->p);
  t->correct = problem_correct(&t->p);
  return NULL;
}

STC_TEST_THREADED(concurrent_first_calls_all_correct_one_tune) {
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, NULL));
  enum { THREADS = 8 };
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, THREADS);
  thread_arg args[THREADS];
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++) {
    args[i].barrier = &barrier;
    problem_init(&args[i].p, 32, 0, 0, 100 + (unsigned)i);
  }
  for (int i = 0; i < THREADS; i++)
    pthread_create(&threads[i], NULL, first_caller, &args[i]);
  for (int i = 0; i < THREADS; i++)
    pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&barrier);
  int correct = 0;
  for (int i = 0; i < THREADS; i++) {
    correct += args[i].correct;
    problem_free(&args[i].p);
  }
  STC_CHECK_EQ_INT(correct, THREADS);
  STC_CHECK_EQ_U64(stats().tuner.tunes, 1);
  /* Timing under 8 threads is too noisy to insist on the winner here. */
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) != NULL);
}

static void *repeated_caller(void *opaque) {
  thread_arg *t = opaque;
  pthread_barrier_wait(t->barrier);
  t->correct = true;
  for (int i = 0; i < 3; i++) {
    problem_rebase(&t->p);
    enter(&g_static_site, &t->p);
    t->correct &= problem_correct(&t->p);
  }
  return NULL;
}

/* Threads racing through a deferred check of a planted wrong winner: every
 * call is right, the winner runs once (the one check), the record goes. */
/* Eight threads call g_static_site, whose disk decision is a planted wrong
 * winner checked on a later call, then this thread twice more (one more
 * call checks, if no thread did: all theirs may have come while the first
 * was still deferring; the next keeps the reference): every result right,
 * the winner run once, by the check, which caught it. */
static void wrong_winner_called_from_threads(const char *directory,
                                             unsigned seed) {
  enum { THREADS = 8 };
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, THREADS);
  thread_arg args[THREADS];
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++) {
    args[i].barrier = &barrier;
    problem_init(&args[i].p, 32, 0, 0, seed + 1 + (unsigned)i);
  }
  char log[4096];
  snprintf(log, sizeof log, "%s/log.txt", directory);
  int saved = capture_begin(log);
  for (int i = 0; i < THREADS; i++)
    pthread_create(&threads[i], NULL, repeated_caller, &args[i]);
  for (int i = 0; i < THREADS; i++)
    pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&barrier);
  int correct = 0;
  for (int i = 0; i < THREADS; i++) {
    correct += args[i].correct;
    problem_free(&args[i].p);
  }
  STC_CHECK_EQ_INT(correct, THREADS);
  /* One more call checks, if no thread did (all their calls may have come
   * while the first was still deferring); the next keeps the reference. */
  problem last;
  problem_init(&last, 32, 0, 0, seed);
  for (int i = 0; i < 2; i++) {
    problem_rebase(&last);
    enter(&g_static_site, &last);
    STC_CHECK(problem_correct(&last));
  }
  problem_free(&last);
  char *text = capture_end(saved, log);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WRONG]), 1);
  STC_CHECK_EQ_INT(count_of(text, "failed its check"), 1);
  free(text);
}

STC_TEST_THREADED(concurrent_calls_through_a_deferred_check_all_correct) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("deferred-threads"));
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, directory));
  problem first;
  problem_init(&first, 32, 0, 0, 27);
  enter(&g_static_site, &first);
  problem_free(&first);
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", false), 1);

  STC_CHECK(fresh_runtime(STC_MODE_CACHE_ONLY, directory));
  reset_calls();
  wrong_winner_called_from_threads(directory, 199);
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", true), 0);
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) ==
            (void *)reference_entry);
}

STC_TEST(dynamic_site_tunes_each_workload_once) {
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, NULL));
  problem small, large;
  problem_init(&small, 24, 0, 0, 10);
  problem_init(&large, 40, 0, 0, 11);
  enter(&g_dynamic_site, &small);
  enter(&g_dynamic_site, &large);
  STC_CHECK(problem_correct(&small));
  STC_CHECK(problem_correct(&large));
  STC_CHECK_EQ_U64(stats().tuner.tunes, 2);
  for (int i = 0; i < 3; i++) {
    problem_rebase(&small);
    enter(&g_dynamic_site, &small);
    STC_CHECK(problem_correct(&small));
    problem_rebase(&large);
    enter(&g_dynamic_site, &large);
    STC_CHECK(problem_correct(&large));
  }
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.tunes, 2);
  STC_CHECK_EQ_U64(s.cached_calls, 6);
  STC_CHECK(g_dynamic_site.slot == NULL);
  stc_tune_report *reports = NULL;
  size_t count = 0;
  STC_CHECK(stc_rt_dispatch_reports(&reports, &count) == STC_OK);
  bool distinct = count == 2 && strcmp(reports[0].workload, reports[1].workload) != 0 &&
                  strstr(reports[0].workload, "f32[24x24:24,1]") &&
                  strstr(reports[1].workload, "f32[40x40:40,1]");
  stc_tune_reports_free(reports, count);
  STC_CHECK(distinct);
  problem_free(&small);
  problem_free(&large);
}

STC_TEST(trials_never_touch_the_callers_arguments) {
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, NULL));
  /* C is a strided view (row pitch n + 5, offset 3): the padding must stay
   * as it was too, and the accumulation must happen exactly once. */
  problem p;
  problem_init(&p, 20, 5, 3, 12);
  enter(&g_dynamic_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_U64(stats().tuner.tunes, 1);
  STC_CHECK(atomic_load(&g_calls[FAST]) > 1); /* trials ran, on scratch */
  problem_free(&p);
}

STC_TEST(check_all_finds_the_wrong_variant) {
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_DISABLED, NULL);
  config.check_all = true;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem p;
  problem_init(&p, 16, 0, 0, 13);
  char log[4096];
  snprintf(log, sizeof log, "%s/check.txt", test_dir("checkall"));
  int saved = capture_begin(log);
  enter(&g_dynamic_site, &p);
  char *text = capture_end(saved, log);
  STC_CHECK(problem_correct(&p));
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.checked_variants, 4); /* blas skipped */
  STC_CHECK_EQ_U64(s.check_mismatches, 1);
  STC_CHECK_CONTAINS(text, "] wrong: FAIL (1 mismatches");
  STC_CHECK_CONTAINS(text, "] fast: pass");
  STC_CHECK_CONTAINS(text, "] blas: skipped (vendor BLAS not loaded: STC_BLAS=off)");
  STC_CHECK_CONTAINS(text, "stc: check-all: 4 variants, 1 mismatches");
  free(text);
  problem_free(&p);
}

STC_TEST(recheck_invalidates_a_winner_that_became_slow) {
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_EXPLORE, NULL);
  config.recheck_every = 1;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem p;
  problem_init(&p, 32, 0, 0, 14);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_U64(stats().tuner.tunes, 1);
  char *first_winner = NULL;
  free(last_note("fast", &first_winner));
  bool fast_won = first_winner && strcmp(first_winner, "fast") == 0;
  free(first_winner);
  if (!fast_won)
    stc_rt_dispatch_reports_print(stderr);
  STC_CHECK(fast_won);
  /* With rechecks on, calls must keep reaching the runtime. */
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == NULL);
  atomic_store(&g_fast_repeats, 32); /* the winner regresses: 8x the reference */
  int calls = 0;
  while (stats().recheck_invalidations == 0 && calls < 40) {
    problem_rebase(&p);
    enter(&g_static_site, &p);
    STC_CHECK(problem_correct(&p));
    calls++;
  }
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.recheck_invalidations, 1);
  STC_CHECK(s.rechecks >= 7); /* the regression window */
  STC_CHECK(s.tuner.invalidations >= 1);
  /* The next call re-tunes; the banned winner is not chosen again. */
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_U64(stats().tuner.tunes, 2);
  char *winner = NULL;
  free(last_note("fast", &winner));
  STC_CHECK(winner != NULL);
  bool not_fast = strcmp(winner, "fast") != 0;
  free(winner);
  STC_CHECK(not_fast);
  problem_free(&p);
}

STC_TEST(invalidate_drops_the_decision_and_the_slot) {
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, NULL));
  STC_CHECK(stc_rt_site_invalidate(&g_static_site, false) == STC_ERR_NOT_FOUND);
  STC_CHECK(stc_rt_site_invalidate(NULL, false) == STC_ERR_INVALID);
  problem p;
  problem_init(&p, 32, 0, 0, 15);
  enter(&g_static_site, &p);
  STC_CHECK(slot_holds_fast());
  STC_CHECK(stc_rt_site_invalidate(&g_static_site, true) == STC_OK);
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == NULL);
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.tunes, 2);
  STC_CHECK(s.tuner.invalidations >= 1);
  /* Banned: the re-tune picked something else. */
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) != (void *)fast_entry);
  problem_free(&p);
}

/* A site whose workload key does not fit stc_rt_site_enter's stack buffer
 * (8 arguments of rank 8): three of rank 24, so the key is built in an
 * allocation (ASan sees its bounds). Each call runs the variant the site
 * publishes; two shapes are two workloads; the second call of a shape goes
 * through the slot. */
static _Atomic int g_rank24_calls;
static void rank24_ciface(void *a, void *b, void *c) {
  (void)a, (void)b;
  /* c's descriptor: allocated, aligned, offset, then sizes: one float. */
  float **aligned = (float **)((char *)c + sizeof(void *));
  **aligned += 1.0f;
  atomic_fetch_add(&g_rank24_calls, 1);
}
static void rank24_entry(void) {}

STC_TEST(high_rank_site_keys_do_not_fit_the_stack_buffer) {
  enum { RANK = 24, WORDS = 3 + 2 * RANK };
  static const stc_rt_arg args[3] = {{STC_RT_ARG_INPUT, STC_RT_F32, RANK, 0},
                                     {STC_RT_ARG_INPUT, STC_RT_F32, RANK, 0},
                                     {STC_RT_ARG_INOUT, STC_RT_F32, RANK, 0}};
  static const stc_rt_variant variants[1] = {
      {"reference", "1", (void *)rank24_entry, (void *)rank24_ciface, 0,
       STC_RT_ELIGIBLE_ALWAYS, 0, "code-rank24"}};
  static void *slot;
  static stc_rt_site site = {STC_RT_DISPATCH_ABI_VERSION, 3, "test/rank24",
                             "linalg.generic", args, 1, 0, variants, &slot,
                             NULL};
  STC_CHECK(fresh_runtime(STC_MODE_DISABLED, NULL));
  atomic_store(&g_rank24_calls, 0);
  float value[3] = {0, 0, 0};
  uint64_t words[3 * WORDS];
  for (int shape = 1; shape <= 2; shape++) {
    for (int a = 0; a < 3; a++) {
      uint64_t *w = &words[a * WORDS];
      w[0] = w[1] = (uint64_t)(uintptr_t)&value[a];
      w[2] = 0;
      for (int d = 0; d < RANK; d++) {
        w[3 + d] = d == RANK - 1 ? (uint64_t)shape : 1; /* sizes */
        w[3 + RANK + d] = 1;                            /* strides */
      }
    }
    slot = NULL; /* the second shape is a new workload: through the runtime */
    stc_rt_site_enter(&site, words, 3 * WORDS);
  }
  STC_CHECK_EQ_INT(atomic_load(&g_rank24_calls), 2);
  STC_CHECK(value[2] == 2.0f);
  STC_CHECK(slot == (void *)rank24_entry);
  stc_rt_dispatch_stats st = stats();
  STC_CHECK_EQ_U64(st.reference_fallbacks, 0);
}

STC_TEST(bad_calls_run_the_reference_and_warn_once) {
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, NULL));
  static stc_rt_site future, short_words;
  static void *future_slot;
  future = g_static_site;
  future.abi_version = STC_RT_DISPATCH_ABI_VERSION + 1;
  future.slot = &future_slot;
  short_words = g_dynamic_site;
  short_words.site_id = "test/short";
  problem p;
  problem_init(&p, 8, 0, 0, 16);
  char log[4096];
  snprintf(log, sizeof log, "%s/bad.txt", test_dir("bad"));
  int saved = capture_begin(log);
  enter(&future, &p);
  problem_rebase(&p);
  enter(&future, &p);
  bool correct = problem_correct(&p);
  /* Too few words: nothing can be called safely; nothing is. */
  uint64_t words[21] = {0};
  int calls_before = atomic_load(&g_calls[REFERENCE]);
  stc_rt_site_enter(&short_words, words, 20);
  stc_rt_site_enter(&short_words, NULL, 0);
  stc_rt_site_enter(NULL, words, 21);
  char *text = capture_end(saved, log);
  STC_CHECK(correct);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), calls_before);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
  STC_CHECK(future_slot == NULL);
  char future_line[128];
  snprintf(future_line, sizeof future_line,
           "site 'test/matmul#static': dispatch ABI version %d",
           STC_RT_DISPATCH_ABI_VERSION + 1);
  STC_CHECK_EQ_INT(count_of(text, future_line), 1);
  STC_CHECK_EQ_INT(count_of(text, "site 'test/short'"), 1);
  STC_CHECK_EQ_U64(stats().tuner.tunes, 0);
  free(text);
  problem_free(&p);
}

STC_TEST(jit_symbol_table_has_site_enter) {
  size_t count = 0;
  const stc_rt_symbol *symbols = stc_rt_symbols(&count);
  bool found = false;
  for (size_t i = 0; i < count; i++)
    found |= strcmp(symbols[i].name, "stc_rt_site_enter") == 0 &&
             symbols[i].address == (void *)stc_rt_site_enter;
  STC_CHECK(found);
}

STC_TEST(trial_runner_compares_with_tolerance_and_read_back_limit) {
  /* The runner alone, on the matmul site's variants. */
  problem p;
  problem_init(&p, 8, 0, 0, 17);
  float *c_before = malloc(p.c_elements * sizeof(float));
  STC_CHECK(c_before != NULL);
  memcpy(c_before, p.c, p.c_elements * sizeof(float));
  stc_rt__trial *trial = NULL;
  char message[256];
  void *desc[3] = {&p.ma, &p.mb, &p.mc};
  STC_CHECK(stc_rt__trial_create(&g_dynamic_site, desc, &trial, message,
                                 sizeof message) == STC_OK);
  stc_tolerance tol = {1e-4, 1e-3, 1u << 20, 0, 1e-2};
  stc_rt__comparison c;
  STC_CHECK(stc_rt__trial_compare(trial, REFERENCE, FAST, &tol, &c) == STC_OK);
  STC_CHECK(c.supported);
  STC_CHECK_EQ_U64(c.mismatches, 0);
  STC_CHECK(stc_rt__trial_compare(trial, REFERENCE, WRONG, &tol, &c) == STC_OK);
  STC_CHECK_EQ_U64(c.mismatches, 1);
  STC_CHECK(c.max_error > 0.99 && c.max_error < 1.01);
  tol.absolute = 2.0; /* now within tolerance */
  STC_CHECK(stc_rt__trial_compare(trial, REFERENCE, WRONG, &tol, &c) == STC_OK);
  STC_CHECK_EQ_U64(c.mismatches, 0);
  tol.readback_limit = 8 * 8 * 4 - 1; /* one byte short */
  STC_CHECK(stc_rt__trial_compare(trial, REFERENCE, FAST, &tol, &c) == STC_OK);
  STC_CHECK(!c.supported);
  stc_trial_runner runner = stc_rt__trial_runner(trial);
  stc_validation outcome = STC_VALIDATION_PASSED;
  STC_CHECK(runner.validate(runner.user, REFERENCE, FAST, &tol, &outcome,
                            message, sizeof message) == STC_OK);
  STC_CHECK_EQ_INT(outcome, STC_VALIDATION_UNSUPPORTED);
  uint64_t ns = 0;
  STC_CHECK(runner.measure(runner.user, SLOW, &ns, message, sizeof message) ==
            STC_OK);
  STC_CHECK(ns > 0);
  stc_rt__trial_destroy(trial);
  /* None of this touched the caller's data. */
  bool untouched =
      memcmp(c_before, p.c, p.c_elements * sizeof(float)) == 0 &&
      memcmp(p.a, p.a_copy, (size_t)(p.n * p.n) * sizeof(float)) == 0;
  free(c_before);
  STC_CHECK(untouched);
  /* A negative size is refused cleanly. */
  p.mc.sizes[0] = -1;
  STC_CHECK(stc_rt__trial_create(&g_dynamic_site, desc, &trial, message,
                                 sizeof message) == STC_ERR_INVALID);
  STC_CHECK(trial == NULL);
  problem_free(&p);
}

/* The trial runner's contention rule with scripted CPU waits and run
 * times: each reading of the process's run-queue wait returns the next
 * value of its script, each reading of the run clock the next value of its
 * own (the last repeats); both are read at the start and the end of every
 * timed run. */
typedef struct script {
  uint64_t values[16];
  size_t count, next;
} script;
static script g_waits, g_clock;
static bool g_wait_unknown;

static uint64_t script_next(script *s) {
  return s->values[s->next < s->count ? s->next++ : s->count - 1];
}

static bool scripted_wait(uint64_t *wait_ns) {
  if (g_wait_unknown)
    return false;
  *wait_ns = script_next(&g_waits);
  return true;
}

static uint64_t scripted_clock(void) { return script_next(&g_clock); }

/* Scripts runs: run i takes times[i] ns while the threads wait waits[i]. */
static void script_runs(const uint64_t *times, const uint64_t *waits,
                        size_t runs) {
  uint64_t now = 1000000000u, waited = 0;
  g_clock.count = g_waits.count = 2 * runs;
  g_clock.next = g_waits.next = 0;
  for (size_t i = 0; i < runs; i++) {
    g_clock.values[2 * i] = now;
    g_clock.values[2 * i + 1] = now += times[i];
    g_waits.values[2 * i] = waited;
    g_waits.values[2 * i + 1] = waited += waits[i];
    now += 1000; /* the restore between runs */
    waited += 1000000; /* waits between runs do not count */
  }
  g_wait_unknown = false;
}

static void *spin_for(void *arg) {
  const atomic_bool *stop = arg;
  volatile uint64_t sink = 0;
  while (!atomic_load(stop))
    sink++;
  return NULL;
}

/* Measures FAST once; returns how many runs it took. */
static int measure_fast(stc_rt__trial *trial, uint64_t *ns) {
  int before = atomic_load(&g_calls[FAST]);
  if (stc_rt__trial_measure(trial, FAST, ns) != STC_OK)
    return -1;
  return atomic_load(&g_calls[FAST]) - before;
}

STC_TEST(trial_runner_times_contended_runs_again) {
  /* The rule: waits over 1/20 of the run plus 50 us. */
  STC_CHECK(!stc_rt__contended(50000, 0));
  STC_CHECK(stc_rt__contended(50001, 0));
  STC_CHECK(!stc_rt__contended(100000, 1000000));
  STC_CHECK(stc_rt__contended(100001, 1000000));
  problem p;
  problem_init(&p, 8, 0, 0, 19);
  void *desc[3] = {&p.ma, &p.mb, &p.mc};
  char message[256];
  stc_rt__trial *trial = NULL;
  STC_CHECK(stc_rt__trial_create(&g_dynamic_site, desc, &trial, message,
                                 sizeof message) == STC_OK);
  stc_rt__set_trial_sources(scripted_wait, scripted_clock);
  uint64_t ns = 0;
  const uint64_t ms = 1000000;
  /* 5 ms of waits in a 2 ms run: timed again; the second run (no wait)
   * is kept, although the first was faster. */
  script_runs((const uint64_t[]){2 * ms, 3 * ms}, (const uint64_t[]){5 * ms, 0}, 2);
  STC_CHECK_EQ_INT(measure_fast(trial, &ns), 2);
  STC_CHECK_EQ_U64(ns, 3 * ms);
  STC_CHECK_EQ_U64(stc_rt__trial_contended(trial), 1);
  /* FAST's fastest uncontended run is now 3 ms: waits in a run within
   * 1/20 of it did not slow it (an idle worker's spin), so it is kept... */
  script_runs((const uint64_t[]){3 * ms + ms / 20}, (const uint64_t[]){5 * ms}, 1);
  STC_CHECK_EQ_INT(measure_fast(trial, &ns), 1);
  STC_CHECK_EQ_U64(ns, 3 * ms + ms / 20);
  STC_CHECK_EQ_U64(stc_rt__trial_contended(trial), 1);
  /* ...a slower one is timed again: contended for good, three retakes at
   * most, then the fastest attempt is kept. */
  script_runs((const uint64_t[]){9 * ms, 7 * ms, 8 * ms, 9 * ms, 1 * ms},
              (const uint64_t[]){5 * ms, 5 * ms, 5 * ms, 5 * ms, 0}, 5);
  STC_CHECK_EQ_INT(measure_fast(trial, &ns), 4);
  STC_CHECK_EQ_U64(ns, 7 * ms);
  STC_CHECK_EQ_U64(stc_rt__trial_contended(trial), 1 + 4);
  /* A thread that exited between the readings takes its waits along: a
   * smaller sum is no wait, not an overflow. */
  script_runs((const uint64_t[]){5 * ms}, (const uint64_t[]){0}, 1);
  g_waits.values[0] = 5000 * ms;
  g_waits.values[1] = 0;
  STC_CHECK_EQ_INT(measure_fast(trial, &ns), 1);
  STC_CHECK_EQ_U64(ns, 5 * ms);
  STC_CHECK_EQ_U64(stc_rt__trial_contended(trial), 5);
  /* Waits unknown (no schedstats): every run is kept as it is. */
  script_runs((const uint64_t[]){6 * ms}, (const uint64_t[]){0}, 1);
  g_wait_unknown = true;
  STC_CHECK_EQ_INT(measure_fast(trial, &ns), 1);
  STC_CHECK_EQ_U64(ns, 6 * ms);
  STC_CHECK_EQ_U64(stc_rt__trial_contended(trial), 5);
  /* Retakes cost at most the runs kept plus 20 ms (a fresh trial: no
   * uncontended run yet). A 10 ms run is retaken; a 50 ms retake would
   * overspend, so the fastest attempt so far is kept. */
  stc_rt__trial_destroy(trial);
  STC_CHECK(stc_rt__trial_create(&g_dynamic_site, desc, &trial, message,
                                 sizeof message) == STC_OK);
  script_runs((const uint64_t[]){10 * ms, 50 * ms},
              (const uint64_t[]){10 * ms, 50 * ms}, 2);
  STC_CHECK_EQ_INT(measure_fast(trial, &ns), 2);
  STC_CHECK_EQ_U64(ns, 10 * ms);
  script_runs((const uint64_t[]){50 * ms, 40 * ms, 50 * ms},
              (const uint64_t[]){50 * ms, 50 * ms, 50 * ms}, 3);
  /* 10 ms retaken + 50 > 10 ms kept + 20: kept at once. */
  STC_CHECK_EQ_INT(measure_fast(trial, &ns), 1);
  STC_CHECK_EQ_U64(ns, 50 * ms);
  /* A variant whose uncontended run is under 200 us is not watched any
   * more: its waits are not even read. */
  stc_rt__trial_destroy(trial);
  STC_CHECK(stc_rt__trial_create(&g_dynamic_site, desc, &trial, message,
                                 sizeof message) == STC_OK);
  script_runs((const uint64_t[]){150000, 190000}, (const uint64_t[]){0, 5 * ms}, 2);
  STC_CHECK_EQ_INT(measure_fast(trial, &ns), 1);
  STC_CHECK_EQ_U64(ns, 150000);
  STC_CHECK_EQ_U64(g_waits.next, 2);
  STC_CHECK_EQ_INT(measure_fast(trial, &ns), 1);
  STC_CHECK_EQ_U64(ns, 190000);
  STC_CHECK_EQ_U64(g_waits.next, 2);
  STC_CHECK_EQ_U64(stc_rt__trial_contended(trial), 0);
  /* Validation runs are never timed, hence never taken again. */
  script_runs((const uint64_t[]){9 * ms}, (const uint64_t[]){50 * ms}, 1);
  stc_tolerance tol = {1e-4, 1e-3, 1u << 20};
  stc_rt__comparison c;
  int before = atomic_load(&g_calls[FAST]);
  size_t contended = stc_rt__trial_contended(trial);
  STC_CHECK(stc_rt__trial_compare(trial, REFERENCE, FAST, &tol, &c) == STC_OK);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]) - before, 1);
  STC_CHECK_EQ_U64(stc_rt__trial_contended(trial), contended);
  stc_rt__set_trial_sources(NULL, NULL);
  stc_rt__trial_destroy(trial);

  /* The real sources, where Linux keeps schedstats: with twice as many
   * spinning threads as CPUs, threads of the process wait on a run queue
   * during a run of a few ms, and a fresh trial (no uncontended run to
   * compare with) times it again. */
  if (access("/proc/self/schedstat", R_OK) != 0) {
    problem_free(&p);
    return;
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t spinners = cpus > 0 && cpus < 16 ? 2 * (size_t)cpus : 32;
  pthread_t threads[32];
  atomic_bool stop = false;
  for (size_t i = 0; i < spinners; i++)
    STC_CHECK(pthread_create(&threads[i], NULL, spin_for, &stop) == 0);
  struct timespec settle = {0, 20000000}; /* the spinners are running */
  nanosleep(&settle, NULL);
  atomic_store(&g_fast_repeats, 20000);
  size_t seen = 0;
  for (int i = 0; i < 4 && seen == 0; i++) {
    STC_CHECK(stc_rt__trial_create(&g_dynamic_site, desc, &trial, message,
                                   sizeof message) == STC_OK);
    STC_CHECK_EQ_INT(stc_rt__trial_measure(trial, FAST, &ns), STC_OK);
    seen = stc_rt__trial_contended(trial);
    stc_rt__trial_destroy(trial);
  }
  atomic_store(&g_fast_repeats, 1);
  atomic_store(&stop, true);
  for (size_t i = 0; i < spinners; i++)
    pthread_join(threads[i], NULL);
  STC_CHECK(seen > 0);
  problem_free(&p);
}

STC_TEST(static_shape_variants_only_run_at_static_sites) {
  static const stc_rt_variant variants[2] = {
      VARIANT(reference, STC_RT_ELIGIBLE_ALWAYS),
      VARIANT(fast, STC_RT_ELIGIBLE_STATIC_SHAPE),
  };
  static void *slot;
  static stc_rt_site static_site = {
      STC_RT_DISPATCH_ABI_VERSION, 3, "test/static-shape#s", "linalg.matmul",
      matmul_args, 2, 0, variants, &slot, NULL};
  static stc_rt_site dynamic_site = {
      STC_RT_DISPATCH_ABI_VERSION, 3, "test/static-shape#d", "linalg.matmul",
      matmul_args, 2, 0, variants, NULL, NULL};
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, NULL));
  problem p;
  problem_init(&p, 32, 0, 0, 18);
  enter(&dynamic_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0); /* never even tried */
  problem_rebase(&p);
  enter(&static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK(atomic_load(&g_calls[FAST]) > 0);
  STC_CHECK(__atomic_load_n(&slot, __ATOMIC_ACQUIRE) == (void *)fast_entry);
  problem_free(&p);
}

STC_TEST(tuner_error_runs_the_reference_with_one_warning) {
  /* Duplicate candidate names: the tuner rejects the request. */
  static const stc_rt_variant variants[2] = {
      VARIANT(reference, STC_RT_ELIGIBLE_ALWAYS),
      {"reference", "1", (void *)fast_entry, (void *)fast_ciface, 0,
       STC_RT_ELIGIBLE_ALWAYS, 0, NULL},
  };
  static stc_rt_site site = {STC_RT_DISPATCH_ABI_VERSION, 3, "test/dup#1",
                             "linalg.matmul", matmul_args, 2, 0, variants,
                             NULL, NULL};
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, NULL));
  problem p;
  problem_init(&p, 8, 0, 0, 19);
  char log[4096];
  snprintf(log, sizeof log, "%s/dup.txt", test_dir("dup"));
  int saved = capture_begin(log);
  enter(&site, &p);
  bool first = problem_correct(&p);
  problem_rebase(&p);
  enter(&site, &p);
  char *text = capture_end(saved, log);
  STC_CHECK(first);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
  STC_CHECK_EQ_INT(count_of(text, "site 'test/dup#1': tuning failed (invalid)"), 1);
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.selections, 1); /* the reference was published */
  STC_CHECK_EQ_U64(s.cached_calls, 1);
  free(text);
  problem_free(&p);
}

typedef struct mixed_arg {
  pthread_barrier_t *barrier;
  int index;
  int correct;
} mixed_arg;

/* Sizes by thread: new workloads are added while other threads read the
 * table without a lock. */
static const int64_t mixed_sizes[4] = {8, 12, 16, 20};

static void *mixed_caller(void *opaque) {
  mixed_arg *t = opaque;
  problem p[2];
  problem_init(&p[0], mixed_sizes[t->index % 4], 0, 0, 200u + (unsigned)t->index);
  problem_init(&p[1], mixed_sizes[(t->index + 1) % 4], 0, 0, 300u + (unsigned)t->index);
  pthread_barrier_wait(t->barrier);
  for (int i = 0; i < 20; i++) {
    problem *q = &p[i & 1];
    problem_rebase(q);
    enter(&g_dynamic_site, q);
    t->correct += problem_correct(q);
  }
  problem_free(&p[0]);
  problem_free(&p[1]);
  return NULL;
}

STC_TEST_THREADED(concurrent_workloads_on_one_dynamic_site) {
  STC_CHECK(fresh_runtime(STC_MODE_EXPLORE, NULL));
  enum { THREADS = 8 };
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, THREADS);
  mixed_arg args[THREADS];
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++) {
    args[i] = (mixed_arg){&barrier, i, 0};
    pthread_create(&threads[i], NULL, mixed_caller, &args[i]);
  }
  int correct = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(threads[i], NULL);
    correct += args[i].correct;
  }
  pthread_barrier_destroy(&barrier);
  STC_CHECK_EQ_INT(correct, THREADS * 20);
  STC_CHECK(stats().tuner.tunes <= 4);
  /* Every workload ends up tuned exactly once (busy callers retried). */
  for (int i = 0; i < 4; i++) {
    problem p;
    problem_init(&p, mixed_sizes[i], 0, 0, 400u + (unsigned)i);
    enter(&g_dynamic_site, &p);
    bool ok = problem_correct(&p);
    problem_free(&p);
    STC_CHECK(ok);
  }
  STC_CHECK_EQ_U64(stats().tuner.tunes, 4);
}

/* ---- tuning economics ---- */

/* The report of the newest tune whose site is site_id, copied. */
static bool newest_report(const char *site_id, stc_tune_report **all,
                          size_t *count, const stc_tune_report **out) {
  *out = NULL;
  if (stc_rt_dispatch_reports(all, count) != STC_OK)
    return false;
  for (size_t i = *count; i-- > 0 && !*out;)
    if (strncmp((*all)[i].operation, site_id, strlen(site_id)) == 0)
      *out = &(*all)[i];
  return *out != NULL;
}

STC_TEST(early_rejection_says_so_in_the_report) {
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_EXPLORE, NULL);
  /* These runs take a fraction of a millisecond: judge them anyway. 96^3
   * rather than 32^3 so that one preempted run on a loaded machine cannot
   * hide a 4x difference (32^3 runs of a few microseconds once failed so). */
  config.policy.race_min_ns = 0;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem p;
  problem_init(&p, 96, 0, 0, 40);
  enter(&g_dynamic_site, &p);
  STC_CHECK(problem_correct(&p));
  stc_tune_report *all = NULL;
  size_t count = 0;
  const stc_tune_report *r;
  STC_CHECK(newest_report("test/matmul#dynamic", &all, &count, &r));
  size_t sum = 0;
  const stc_candidate_report *slow = NULL, *fast = NULL;
  for (size_t i = 0; i < r->num_candidates; i++) {
    sum += r->candidates[i].trials;
    if (strcmp(r->candidates[i].name, "slow") == 0)
      slow = &r->candidates[i];
    if (strcmp(r->candidates[i].name, "fast") == 0)
      fast = &r->candidates[i];
  }
  bool ok = slow && fast;
  if (ok) {
    /* 4x slower than the reference: stopped long before its 9 pairs
     * (fast's runs are too short to insist it was not stopped too). */
    STC_CHECK_CONTAINS(slow->note, "rejected early");
    STC_CHECK(slow->samples < 9);
    STC_CHECK(slow->trials < 1 + 2 * 9);
    STC_CHECK(fast->trials > 0);
  }
  STC_CHECK_EQ_U64(r->trials, sum);
  STC_CHECK(sum > 0);
  stc_tune_reports_free(all, count);
  STC_CHECK(ok);
  problem_free(&p);
}

STC_TEST(printed_report_counts_trials) {
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_EXPLORE, NULL);
  config.print_reports = true;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem p;
  problem_init(&p, 20, 0, 0, 41);
  char path[4096];
  snprintf(path, sizeof path, "%s/trials.txt", test_dir("trials"));
  int saved = capture_begin(path);
  enter(&g_dynamic_site, &p);
  char *text = capture_end(saved, path);
  STC_CHECK(problem_correct(&p));
  STC_CHECK(text != NULL);
  stc_tune_report *all = NULL;
  size_t count = 0;
  const stc_tune_report *r;
  bool found = newest_report("test/matmul#dynamic", &all, &count, &r);
  char line[64] = "";
  if (found)
    snprintf(line, sizeof line, "\n  trials:   %zu runs\n", r->trials);
  stc_tune_reports_free(all, count);
  STC_CHECK(found);
  /* The total after "elapsed:", a trials column before the note, and the
   * old lines unchanged. */
  const char *elapsed = strstr(text, "  elapsed:  ");
  STC_CHECK(elapsed != NULL);
  STC_CHECK(strstr(elapsed, line) == strchr(elapsed, '\n'));
  STC_CHECK_CONTAINS(text, "site:     test/matmul#dynamic|linalg.matmul");
  STC_CHECK_CONTAINS(text, "winner:   ");
  STC_CHECK(strstr(text, " candidate ") != NULL);
  const char *header = strstr(text, "samples    ratio   noise verified trials  note\n");
  STC_CHECK(header != NULL);
  free(text);
  problem_free(&p);
}

STC_TEST(environment_sets_the_economics_fields) {
  setenv("STC_TUNE_EARLY_REJECTION", "0", 1);
  setenv("STC_TUNE_ORDER", "declared", 1);
  setenv("STC_TUNE_TARGET_MS", "0", 1);
  setenv("STC_TUNE_RACE_MARGIN", "0.5", 1);
  setenv("STC_TUNE_BUDGET_CUT_SAMPLES", "0", 1);
  setenv("STC_TUNE_VALIDATE_FIRST", "off", 1);
  setenv("STC_TUNE_RACE_PAIRS", "0", 1); /* invalid: a warning, default */
  const char *dir = test_dir("envecon");
  char path[4096];
  snprintf(path, sizeof path, "%s/warnings.txt", dir);
  stc_rt_dispatch_config config;
  int saved = capture_begin(path);
  stc_rt_dispatch_config_from_environment(&config);
  char *text = capture_end(saved, path);
  unsetenv("STC_TUNE_EARLY_REJECTION");
  unsetenv("STC_TUNE_ORDER");
  unsetenv("STC_TUNE_TARGET_MS");
  unsetenv("STC_TUNE_RACE_MARGIN");
  unsetenv("STC_TUNE_BUDGET_CUT_SAMPLES");
  unsetenv("STC_TUNE_VALIDATE_FIRST");
  unsetenv("STC_TUNE_RACE_PAIRS");
  /* With the old budget, these reproduce the seed's rules. */
  stc_tuner_policy seed;
  stc_tuner_policy_init_seed(&seed);
  STC_CHECK(config.policy.early_rejection == seed.early_rejection);
  STC_CHECK_EQ_INT(config.policy.order, seed.order);
  STC_CHECK_EQ_U64(config.policy.target_ns, seed.target_ns);
  STC_CHECK_EQ_U64(config.policy.budget_cut_samples, seed.budget_cut_samples);
  STC_CHECK(config.policy.validate_first == seed.validate_first);
  STC_CHECK(config.policy.race_margin == 0.5);
  STC_CHECK_EQ_U64(config.policy.race_pairs, 2); /* the default: a bad value is ignored */
  STC_CHECK_EQ_INT(count_of(text, "stc: warning:"), 1);
  STC_CHECK_CONTAINS(text, "STC_TUNE_RACE_PAIRS");
  free(text);
}

/* Tunes the dynamic, then the static site (the same op kind) at n=16 and
 * gives the candidate explored first at each (after the reference). */
static bool first_explored(stc_rt_dispatch_config *config, char *dynamic_first,
                           char *static_first, char *dynamic_winner,
                           size_t size) {
  if (stc_rt_dispatch_configure(config, NULL) != STC_OK)
    return false;
  problem p;
  problem_init(&p, 16, 0, 0, 42);
  enter(&g_dynamic_site, &p);
  problem_rebase(&p);
  enter(&g_static_site, &p);
  bool ok = problem_correct(&p);
  problem_free(&p);
  stc_tune_report *all = NULL;
  size_t count = 0;
  const stc_tune_report *r;
  ok = ok && newest_report("test/matmul#dynamic", &all, &count, &r) &&
       r->num_candidates == NUM_VARIANTS;
  if (ok) {
    snprintf(dynamic_first, size, "%s", r->candidates[1].name);
    snprintf(dynamic_winner, size, "%s", r->winner);
  }
  stc_tune_reports_free(all, count);
  ok = ok && newest_report("test/matmul#static", &all, &count, &r) &&
       r->num_candidates == NUM_VARIANTS;
  if (ok)
    snprintf(static_first, size, "%s", r->candidates[1].name);
  stc_tune_reports_free(all, count);
  return ok;
}

STC_TEST(promising_order_tries_vendor_then_prior_winners) {
  char dynamic_first[64], static_first[64], winner[64];
  /* No vendor library: the dynamic site explores in descriptor order; the
   * static site, same op kind, tries the dynamic site's winner first. */
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_EXPLORE, NULL);
  STC_CHECK(first_explored(&config, dynamic_first, static_first, winner,
                           sizeof winner));
  STC_CHECK_STR_EQ(dynamic_first, "slow");
  if (strcmp(winner, "reference") != 0)
    STC_CHECK_STR_EQ(static_first, winner);
  else
    STC_CHECK_STR_EQ(static_first, "slow");
  STC_CHECK(strcmp(winner, "reference") != 0 || slot_holds_fast());

  /* order=declared: descriptor order at both. */
  fresh_config(&config, STC_MODE_EXPLORE, NULL);
  config.policy.order = STC_ORDER_DECLARED;
  STC_CHECK(first_explored(&config, dynamic_first, static_first, winner,
                           sizeof winner));
  STC_CHECK_STR_EQ(dynamic_first, "slow");
  STC_CHECK_STR_EQ(static_first, "slow");

  /* A loaded vendor library goes first of all (this test's "blas" variant
   * computes the right result, so it may run). */
  fresh_config(&config, STC_MODE_EXPLORE, NULL);
  unsetenv("STC_BLAS");
  stc_rt__blas_reset();
  const char *library = NULL, *why = NULL;
  if (stc_rt_blas_available(&library, &why)) {
    STC_CHECK(first_explored(&config, dynamic_first, static_first, winner,
                             sizeof winner));
    STC_CHECK_STR_EQ(dynamic_first, "blas");
    STC_CHECK_STR_EQ(static_first, "blas");
  } else {
    fprintf(stderr, "note: no vendor BLAS here (%s): vendor-first order "
                    "not checked\n", why ? why : "?");
  }
  setenv("STC_BLAS", "off", 1);
  stc_rt__blas_reset();
}

/* ---- a vendor library found at eligibility time that does not load ---- */

/* BLAS variants use the stand-in library at `lib` (test/unit/fake_blas.c,
 * loaded afresh), and "fast" is no faster than the reference: the "blas"
 * variant wins a tune. */
static void use_fake_blas(const char *lib) {
  unsetenv("STC_BLAS");
  setenv("STC_BLAS_LIBRARY", lib, 1);
  stc_rt__blas_reset();
  atomic_store(&g_fast_repeats, 4);
}

/* A fresh runtime in mode on cache with use_fake_blas(lib). */
static bool blas_runtime(stc_tune_mode mode, const char *cache,
                         const char *lib, bool trust_verified) {
  stc_rt_dispatch_config config;
  fresh_config(&config, mode, cache);
  use_fake_blas(lib);
  config.policy.trust_verified = trust_verified;
  return stc_rt_dispatch_configure(&config, NULL) == STC_OK;
}

/* A test's directory (test_dir(name)) holding copies of the fake vendor
 * BLAS and of its dependency, and the paths of the cache, the library and
 * the dependency in it. */
typedef struct fake_blas_dir {
  char dir[2048], cache[2100], lib[2100], dep[2100];
} fake_blas_dir;

static bool fake_blas_dir_make(fake_blas_dir *d, const char *name) {
  snprintf(d->dir, sizeof d->dir, "%s", test_dir(name));
  snprintf(d->cache, sizeof d->cache, "%s/cache", d->dir);
  snprintf(d->lib, sizeof d->lib, "%s/libstc_fake_blas.so", d->dir);
  snprintf(d->dep, sizeof d->dep, "%s/libstc_fake_blas_dep.so", d->dir);
  return stc_test_copy_file(STC_FAKE_BLAS, d->lib) &&
         stc_test_copy_file(STC_FAKE_BLAS_DEP, d->dep);
}

/* The first process of a two-process test, in a child (a library once
 * loaded stays loaded): tunes the static site on problem seed from d's
 * empty cache; true when it computed right, picked the BLAS variant and
 * exited cleanly. */
static bool blas_wins_in_a_child(const fake_blas_dir *d, bool trust_verified,
                                 int seed) {
  fflush(stderr);
  pid_t child = fork();
  if (child < 0)
    return false;
  if (child == 0) {
    problem p;
    bool ok = blas_runtime(STC_MODE_EXPLORE, d->cache, d->lib, trust_verified);
    problem_init(&p, 24, 0, 0, seed);
    enter(&g_static_site, &p);
    ok = ok && problem_correct(&p) &&
         __atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == (void *)blas_entry &&
         stc_rt__blas_attempted();
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  return waitpid(child, &status, 0) == child && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

/* The deferred check with a vendor-BLAS winner: in the next process the
 * first call runs the reference and does not even try to load the library
 * (a one-call process never starts OpenBLAS); the second loads it, checks
 * the BLAS winner on itself and publishes it. */
STC_TEST(deferred_check_loads_no_blas_on_the_first_call) {
  STC_CHECK(stc_rt_environment_reliable());
  fake_blas_dir d;
  STC_CHECK(fake_blas_dir_make(&d, "blasdeferred"));
  STC_CHECK(blas_wins_in_a_child(&d, false, 42));

  STC_CHECK(blas_runtime(STC_MODE_CACHE_ONLY, d.cache, d.lib, false));
  problem p;
  problem_init(&p, 24, 0, 0, 42);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 1);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[BLAS]), 0);
  STC_CHECK(!stc_rt__blas_attempted());
  STC_CHECK_EQ_U64(stats().tuner.disk_hits, 1);
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == NULL);
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK(stc_rt__blas_attempted());
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 2); /* on scratch */
  STC_CHECK_EQ_INT(atomic_load(&g_calls[BLAS]), 1);      /* the call */
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == (void *)blas_entry);
  problem_free(&p);
  unsetenv("STC_BLAS_LIBRARY");
  stc_rt__dispatch_reset();
  setenv("STC_BLAS", "off", 1);
  stc_rt__blas_reset();
}

/* A process tunes with a working library and the BLAS variant wins; in
 * the next process the library's file is unchanged (same identity, so the
 * trusted record is found and used unchecked) but its dependency is gone.
 * The call runs the reference with a warning instead of crashing or
 * running a BLAS variant without its library, and the next call selects
 * again with BLAS ineligible. */
STC_TEST(blas_winner_whose_library_no_longer_loads_runs_the_reference) {
  STC_CHECK(stc_rt_environment_reliable());
  fake_blas_dir d;
  STC_CHECK(fake_blas_dir_make(&d, "blasbreaks"));
  STC_CHECK(blas_wins_in_a_child(&d, true, 41));

  STC_CHECK(unlink(d.dep) == 0);
  STC_CHECK(blas_runtime(STC_MODE_EXPLORE, d.cache, d.lib, true));
  char path[2100];
  snprintf(path, sizeof path, "%s/warnings.txt", d.dir);
  problem p;
  problem_init(&p, 24, 0, 0, 41);
  int saved = capture_begin(path);
  enter(&g_static_site, &p);
  char *text = capture_end(saved, path);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[BLAS]), 0);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 1);
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == NULL);
  STC_CHECK_EQ_U64(stats().tuner.trusted_hits, 1);
  STC_CHECK_CONTAINS(text, "was found but does not load");
  STC_CHECK_CONTAINS(text, "libstc_fake_blas_dep.so");
  free(text);
  /* The next call: BLAS is ineligible now (another key), so it tunes
   * among the rest; never the BLAS variant. */
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[BLAS]), 0);
  STC_CHECK_EQ_U64(stats().tuner.tunes, 1);
  void *published = __atomic_load_n(&g_slot, __ATOMIC_ACQUIRE);
  STC_CHECK(published != NULL && published != (void *)blas_entry);
  problem_free(&p);
  unsetenv("STC_BLAS_LIBRARY");
  stc_rt__dispatch_reset();
  setenv("STC_BLAS", "off", 1);
  stc_rt__blas_reset();
}

/* ---- TF32 variants (docs/gpu.md, "TF32 tensor-core variants") ---- */

/* A stand-in for a TF32 tensor-core kernel: once the work of the reference
 * (4x faster), every product of the sum off by a relative 4e-3: outside
 * the f32 tolerance (1e-3 relative), inside the TF32 one (1e-2). */
static atomic_int g_tf32_calls;
static void perturbed(const memref2 *a, const memref2 *b, memref2 *c) {
  for (int64_t i = 0; i < c->sizes[0]; i++)
    for (int64_t j = 0; j < c->sizes[1]; j++)
      c->aligned[c->offset + i * c->strides[0] + j * c->strides[1]] +=
          g_dot(a, b, i, j) * (1.0f + 4e-3f);
}
static void tf32_ciface(memref2 *a, memref2 *b, memref2 *c) {
  atomic_fetch_add(&g_tf32_calls, 1);
  perturbed(a, b, c);
}
DEFINE_ENTRY(tf32)

/* The same numbers from a variant that claims to be f32-exact. */
static void inexact_ciface(memref2 *a, memref2 *b, memref2 *c) { perturbed(a, b, c); }
DEFINE_ENTRY(inexact)

static const stc_rt_variant tf32_variants[3] = {
    VARIANT(reference, STC_RT_ELIGIBLE_ALWAYS),
    VARIANT(tf32, STC_RT_ELIGIBLE_TF32),
    VARIANT(inexact, STC_RT_ELIGIBLE_ALWAYS),
};
static void *g_tf32_slot;
static stc_rt_site g_tf32_site = {
    STC_RT_DISPATCH_ABI_VERSION, 3, "test/matmul#tf32", "linalg.matmul",
    matmul_args, 3, 0, tf32_variants, &g_tf32_slot, NULL};

/* A fresh runtime whose policy allows TF32 (or not), with its TF32 bound. */
static bool tf32_runtime(bool allow, double tolerance) {
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_EXPLORE, NULL);
  config.policy.allow_tf32 = allow;
  config.policy.tolerance.tf32 = tolerance;
  __atomic_store_n(&g_tf32_slot, NULL, __ATOMIC_RELEASE);
  atomic_store(&g_tf32_calls, 0);
  return stc_rt_dispatch_configure(&config, NULL) == STC_OK;
}

STC_TEST(tf32_variant_is_ineligible_without_the_opt_in) {
  STC_CHECK(tf32_runtime(false, 1e-2));
  problem p;
  problem_init(&p, 32, 0, 0, 51);
  enter(&g_tf32_site, &p);
  STC_CHECK(problem_correct(&p));
  char *winner = NULL;
  char *note = last_note("tf32", &winner);
  STC_CHECK_CONTAINS(note, "skipped: ineligible");
  const char *why = stc_rt__ineligible_reason(&g_tf32_site, 1);
  STC_CHECK_CONTAINS(why, "not allowed by the policy");
  STC_CHECK_CONTAINS(why, "STC_TUNE_ALLOW_TF32=1");
  STC_CHECK(stc_rt__ineligible_reason(&g_tf32_site, 2) == NULL);
  /* The inexact f32 variant is a wrong result under the f32 tolerance. */
  char *inexact = last_note("inexact", NULL);
  STC_CHECK_CONTAINS(inexact, "wrong result");
  STC_CHECK(winner && strcmp(winner, "reference") == 0);
  free(note), free(inexact), free(winner);
  /* The TF32 variant never ran, not even for validation. */
  STC_CHECK_EQ_INT(atomic_load(&g_tf32_calls), 0);
  problem_free(&p);
}

STC_TEST(tf32_variant_is_validated_with_the_tf32_tolerance_when_allowed) {
  STC_CHECK(tf32_runtime(true, 1e-2));
  problem p;
  problem_init(&p, 32, 0, 0, 52);
  enter(&g_tf32_site, &p);
  char *winner = NULL;
  char *note = last_note("tf32", &winner);
  char *inexact = last_note("inexact", NULL);
  /* Same numbers: the TF32 variant passes its bound, the f32 one does not. */
  STC_CHECK(note && !strstr(note, "wrong result") && !strstr(note, "ineligible"));
  STC_CHECK_CONTAINS(inexact, "wrong result");
  STC_CHECK(stc_rt__ineligible_reason(&g_tf32_site, 1) == NULL);
  STC_CHECK(winner && strcmp(winner, "tf32") == 0);
  STC_CHECK(__atomic_load_n(&g_tf32_slot, __ATOMIC_ACQUIRE) == (void *)tf32_entry);
  free(note), free(inexact), free(winner);
  problem_free(&p);
  /* A tighter TF32 bound (policy tolerance_tf32) rejects it. */
  STC_CHECK(tf32_runtime(true, 1e-3));
  problem_init(&p, 32, 0, 0, 53);
  enter(&g_tf32_site, &p);
  STC_CHECK(problem_correct(&p));
  note = last_note("tf32", &winner);
  STC_CHECK_CONTAINS(note, "wrong result");
  STC_CHECK(winner && strcmp(winner, "reference") == 0);
  free(note), free(winner);
  problem_free(&p);
}

STC_TEST(scaled_tolerance_allows_errors_relative_to_the_outputs_mean) {
  /* Reference [100, 0.001, -100, 0]: mean |y| = 50.00025. */
  float reference[4] = {100.0f, 0.001f, -100.0f, 0.0f};
  float candidate[4] = {100.0f, 0.45f, -100.0f, 0.0f};
  int64_t descriptor[5] = {0, 0, 0, 4, 1}; /* allocated, aligned, offset, size, stride */
  stc_tolerance tol = {1e-4, 1e-3, 1u << 20, 0, 1e-2};
  stc_rt__comparison c;
  memset(&c, 0, sizeof c);
  stc_rt__compare_elements(descriptor, 1, STC_RT_F32, 4, (const char *)candidate,
                           (const char *)reference, &tol, &c);
  STC_CHECK_EQ_U64(c.mismatches, 1); /* per element: 0.45 is far off 0.001 */
  stc_tolerance tf32;
  stc_tolerance_for_tf32(&tol, &tf32);
  STC_CHECK(tf32.relative == 1e-2 && tf32.scaled == 1e-2 && tf32.absolute == 1e-4);
  memset(&c, 0, sizeof c);
  stc_rt__compare_elements(descriptor, 1, STC_RT_F32, 4, (const char *)candidate,
                           (const char *)reference, &tf32, &c);
  STC_CHECK_EQ_U64(c.mismatches, 0); /* 0.449 <= 1e-4 + 1e-5 + 0.5 */
  candidate[1] = 0.51f;
  memset(&c, 0, sizeof c);
  stc_rt__compare_elements(descriptor, 1, STC_RT_F32, 4, (const char *)candidate,
                           (const char *)reference, &tf32, &c);
  STC_CHECK_EQ_U64(c.mismatches, 1);
  /* A non-finite reference element must still match exactly and does not
   * enter the mean. */
  reference[3] = INFINITY;
  candidate[1] = 0.45f;
  candidate[3] = 1.0f;
  memset(&c, 0, sizeof c);
  stc_rt__compare_elements(descriptor, 1, STC_RT_F32, 4, (const char *)candidate,
                           (const char *)reference, &tf32, &c);
  STC_CHECK_EQ_U64(c.mismatches, 1);
}

/* ---- rent or buy (policy start_cost_ns) ---- */

/* FAST and WRONG start a thread team (as an OpenMP variant would). */
#define THREADS_VARIANT(name)                                                 \
  {#name, "1", (void *)name##_entry, (void *)name##_ciface, 0,               \
   STC_RT_ELIGIBLE_ALWAYS, STC_RT_VARIANT_STARTS_THREADS, "code-" #name}
static const stc_rt_variant threads_variants[NUM_VARIANTS] = {
    VARIANT(reference, STC_RT_ELIGIBLE_ALWAYS),
    VARIANT(slow, STC_RT_ELIGIBLE_ALWAYS),
    THREADS_VARIANT(wrong),
    VARIANT(blas, STC_RT_ELIGIBLE_BLAS),
    THREADS_VARIANT(fast),
};
static void *g_threads_slot, *g_threads_slot2;
static stc_rt_site g_threads_site = {
    STC_RT_DISPATCH_ABI_VERSION, 3, "test/matmul#threads", "linalg.matmul",
    matmul_args, NUM_VARIANTS, REFERENCE, threads_variants, &g_threads_slot,
    NULL};
static stc_rt_site g_threads_site2 = {
    STC_RT_DISPATCH_ABI_VERSION, 3, "test/matmul#threads2", "linalg.matmul",
    matmul_args, NUM_VARIANTS, REFERENCE, threads_variants, &g_threads_slot2,
    NULL};

/* The scripted clock: every reading advances 1 ms, so each reference run
 * timed while a winner is pending takes exactly 1 ms. */
static atomic_uint_fast64_t g_rent_script_ns;
static uint64_t rent_clock(void) {
  return atomic_fetch_add(&g_rent_script_ns, 1000000) + 1000000;
}

/* Tunes both threads sites in a first process, then plants `winner` with a
 * ratio of 0.5 in every record: the winner saves 0.5 ms of each 1 ms
 * reference call, so a 3 ms start cost is earned back by 6 calls. */
static bool rent_cache(const char *directory, const char *winner, problem *p) {
  if (!fresh_runtime(STC_MODE_EXPLORE, directory))
    return false;
  problem_init(p, 32, 0, 0, 61);
  enter(&g_threads_site, p);
  enter(&g_threads_site2, p);
  return plant_winner_ratio(directory, winner, 0.5) == 2;
}

static bool rent_runtime(const char *directory, uint64_t start_cost_ns,
                         bool trusted) {
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_CACHE_ONLY, directory);
  config.policy.start_cost_ns = start_cost_ns;
  config.policy.trust_verified = trusted;
  atomic_store(&g_rent_script_ns, 0);
  stc_rt__set_rent_clock(rent_clock);
  return stc_rt_dispatch_configure(&config, NULL) == STC_OK;
}

/* A process that calls the site fewer times than it takes to earn back the
 * start cost runs only the reference; a longer one checks and switches on
 * the computed call (7 = 6 rented calls x 0.5 ms >= 3 ms); then another
 * site's threads winner, its cost paid, switches at check_at_call. */
STC_TEST(rent_or_buy_keeps_the_reference_until_the_start_cost_is_earned) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("rent"));
  problem p;
  STC_CHECK(rent_cache(directory, "fast", &p));
  STC_CHECK(rent_runtime(directory, 3000000, false));
  reset_calls();
  for (int call = 1; call <= 6; call++) {
    problem_rebase(&p);
    enter(&g_threads_site, &p);
    STC_CHECK(problem_correct(&p));
    STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), call);
    STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
    STC_CHECK(__atomic_load_n(&g_threads_slot, __ATOMIC_ACQUIRE) == NULL);
  }
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.disk_hits, 1);
  STC_CHECK_EQ_U64(s.tuner.tunes, 0);
  STC_CHECK_EQ_U64(s.reference_fallbacks, 0);
  /* Call 7: the check (the reference on scratch, the winner on the call),
   * then the slot serves. */
  problem_rebase(&p);
  enter(&g_threads_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 7);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 1);
  STC_CHECK(__atomic_load_n(&g_threads_slot, __ATOMIC_ACQUIRE) ==
            (void *)fast_entry);
  problem_rebase(&p);
  STC_CHECK(call_through_slot(&g_threads_slot, &p.ma, &p.mb, &p.mc));
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 2);

  /* The team exists now: the second site's threads winner is checked on
   * call 2 (check_at_call), with no rent. */
  reset_calls();
  problem_rebase(&p);
  enter(&g_threads_site2, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
  problem_rebase(&p);
  enter(&g_threads_site2, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 2);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 1);
  STC_CHECK(__atomic_load_n(&g_threads_slot2, __ATOMIC_ACQUIRE) ==
            (void *)fast_entry);
  STC_CHECK_EQ_U64(stats().tuner.disk_hits, 2);

  /* start_cost 0: the threads winner switches at check_at_call, as a
   * serial one does. */
  STC_CHECK(rent_runtime(directory, 0, false));
  reset_calls();
  for (int call = 1; call <= 2; call++) {
    problem_rebase(&p);
    enter(&g_threads_site, &p);
    STC_CHECK(problem_correct(&p));
  }
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 1);
  STC_CHECK(__atomic_load_n(&g_threads_slot, __ATOMIC_ACQUIRE) ==
            (void *)fast_entry);

  /* check_at_call 1 with a cost to earn back defers too: the first call
   * runs the reference alone. */
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_CACHE_ONLY, directory);
  config.policy.start_cost_ns = 3000000;
  config.policy.check_at_call = 1;
  atomic_store(&g_rent_script_ns, 0);
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  reset_calls();
  for (int call = 1; call <= 7; call++) {
    problem_rebase(&p);
    enter(&g_threads_site, &p);
    STC_CHECK(problem_correct(&p));
    STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), call == 7);
  }
  stc_rt__set_rent_clock(NULL);
  stc_rt__dispatch_reset();
  problem_free(&p);
}

/* A wrong threads winner is still caught when its check finally comes: the
 * call keeps the reference's result and the record is deleted. */
STC_TEST(rent_or_buy_still_catches_a_wrong_winner_when_it_checks) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048], log[4096];
  snprintf(directory, sizeof directory, "%s", test_dir("rent-wrong"));
  snprintf(log, sizeof log, "%s/log.txt", directory);
  problem p;
  STC_CHECK(rent_cache(directory, "wrong", &p));
  STC_CHECK(rent_runtime(directory, 3000000, false));
  reset_calls();
  int saved = capture_begin(log);
  for (int call = 1; call <= 6; call++) {
    problem_rebase(&p);
    enter(&g_threads_site, &p);
    STC_CHECK(problem_correct(&p));
  }
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WRONG]), 0);
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", true), 2); /* not yet */
  problem_rebase(&p);
  enter(&g_threads_site, &p);
  char *text = capture_end(saved, log);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WRONG]), 1);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 7);
  STC_CHECK_CONTAINS(text, "the cached decision failed its check (wrong result:");
  free(text);
  STC_CHECK_EQ_U64(stats().tuner.invalidations, 1);
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", true), 1); /* site 2's */
  for (int call = 0; call < 3; call++) {
    problem_rebase(&p);
    enter(&g_threads_site, &p);
    STC_CHECK(problem_correct(&p));
  }
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WRONG]), 1);
  stc_rt__set_rent_clock(NULL);
  stc_rt__dispatch_reset();
  problem_free(&p);
}

/* trust_verified: the same rule without the check: the reference until the
 * cost is earned back, then the winner alone. */
STC_TEST(rent_or_buy_applies_to_trusted_decisions_without_a_check) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("rent-trust"));
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_EXPLORE, directory);
  config.policy.trust_verified = true;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem p;
  problem_init(&p, 32, 0, 0, 62);
  enter(&g_threads_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(plant_winner_ratio(directory, "fast", 0.5), 1);

  STC_CHECK(rent_runtime(directory, 3000000, true));
  reset_calls();
  for (int call = 1; call <= 7; call++) {
    problem_rebase(&p);
    enter(&g_threads_site, &p);
    STC_CHECK(problem_correct(&p));
    STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), call < 7 ? call : 6);
    STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), call == 7);
  }
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.trusted_hits, 1);
  STC_CHECK_EQ_U64(s.tuner.disk_checks, 0);
  STC_CHECK(__atomic_load_n(&g_threads_slot, __ATOMIC_ACQUIRE) ==
            (void *)fast_entry);
  stc_rt__set_rent_clock(NULL);
  stc_rt__dispatch_reset();
  problem_free(&p);
}

STC_TEST(start_cost_policy_field) {
  stc_tuner_policy policy;
  stc_tuner_policy_init(&policy);
  STC_CHECK_EQ_U64(policy.start_cost_ns, 3000000);
  stc_error err;
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&policy, "start_cost_ms", "5", &err),
                   STC_OK);
  STC_CHECK_EQ_U64(policy.start_cost_ns, 5000000);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&policy, "start-cost-us", "0", &err),
                   STC_OK);
  STC_CHECK_EQ_U64(policy.start_cost_ns, 0);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&policy, "start_cost_ms", "-1", &err),
                   STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&policy, "start_cost_ms", "1.5", &err),
                   STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_tuner_policy_set(&policy, "start_cost_ms", "10001", &err),
                   STC_ERR_INVALID);
  STC_CHECK_CONTAINS(err.message, "start_cost must be at most 10 s");
  STC_CHECK_EQ_INT(
      stc_tuner_policy_set(&policy, "start_cost_ms", "99999999999999999", &err),
      STC_ERR_INVALID);
  STC_CHECK_EQ_U64(policy.start_cost_ns, 0); /* unchanged on error */
  char path[4096];
  snprintf(path, sizeof path, "%s/warnings.txt", test_dir("start-cost"));
  stc_rt_dispatch_config config;
  setenv("STC_TUNE_START_COST_MS", "7", 1);
  stc_rt_dispatch_config_from_environment(&config);
  STC_CHECK_EQ_U64(config.policy.start_cost_ns, 7000000);
  setenv("STC_TUNE_START_COST_MS", "lots", 1);
  int saved = capture_begin(path);
  stc_rt_dispatch_config_from_environment(&config);
  char *text = capture_end(saved, path);
  unsetenv("STC_TUNE_START_COST_MS");
  STC_CHECK_EQ_U64(config.policy.start_cost_ns, 3000000);
  STC_CHECK_CONTAINS(text, "STC_TUNE_START_COST_MS");
  free(text);
}

/* A vendor-BLAS winner has the library load's cost: the vendor BLAS is not
 * even loaded while the reference rents, and the check on the computed call
 * loads it. (The first process tunes in a child: a library once loaded
 * stays loaded.) */
STC_TEST(rent_or_buy_defers_loading_the_vendor_blas) {
  STC_CHECK(stc_rt_environment_reliable());
  fake_blas_dir d;
  STC_CHECK(fake_blas_dir_make(&d, "rent-blas"));
  STC_CHECK(blas_wins_in_a_child(&d, false, 43));
  STC_CHECK_EQ_INT(plant_winner_ratio(d.cache, "blas", 0.5), 1);

  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_CACHE_ONLY, d.cache);
  config.policy.start_cost_ns = 3000000;
  unsetenv("STC_BLAS");
  setenv("STC_BLAS_LIBRARY", d.lib, 1);
  stc_rt__blas_reset();
  atomic_store(&g_rent_script_ns, 0);
  stc_rt__set_rent_clock(rent_clock);
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem p;
  problem_init(&p, 24, 0, 0, 43);
  for (int call = 1; call <= 7; call++) {
    problem_rebase(&p);
    enter(&g_static_site, &p);
    STC_CHECK(problem_correct(&p));
    STC_CHECK(stc_rt__blas_attempted() == (call == 7));
    STC_CHECK_EQ_INT(atomic_load(&g_calls[BLAS]), call == 7);
    STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), call);
  }
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == (void *)blas_entry);
  problem_free(&p);
  stc_rt__set_rent_clock(NULL);
  unsetenv("STC_BLAS_LIBRARY");
  stc_rt__dispatch_reset();
  setenv("STC_BLAS", "off", 1);
  stc_rt__blas_reset();
}

static void *rent_caller(void *opaque) {
  thread_arg *t = opaque;
  pthread_barrier_wait(t->barrier);
  t->correct = true;
  for (int i = 0; i < 10; i++) {
    problem_rebase(&t->p);
    enter(&g_threads_site, &t->p);
    t->correct &= problem_correct(&t->p);
  }
  return NULL;
}

/* Threads racing through a rented wrong threads winner: every call is
 * right, the winner runs once (the one check, once the rent is paid), the
 * record goes. */
STC_TEST_THREADED(concurrent_calls_through_a_rented_winner_all_correct) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("rent-threads"));
  problem first;
  STC_CHECK(rent_cache(directory, "wrong", &first));
  problem_free(&first);
  STC_CHECK(rent_runtime(directory, 3000000, false));
  reset_calls();
  enum { THREADS = 4 };
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, THREADS);
  thread_arg args[THREADS];
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++) {
    args[i].barrier = &barrier;
    problem_init(&args[i].p, 32, 0, 0, 300 + (unsigned)i);
  }
  char log[4096];
  snprintf(log, sizeof log, "%s/log.txt", directory);
  int saved = capture_begin(log);
  for (int i = 0; i < THREADS; i++)
    pthread_create(&threads[i], NULL, rent_caller, &args[i]);
  for (int i = 0; i < THREADS; i++)
    pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&barrier);
  char *text = capture_end(saved, log);
  int correct = 0;
  for (int i = 0; i < THREADS; i++) {
    correct += args[i].correct;
    problem_free(&args[i].p);
  }
  STC_CHECK_EQ_INT(correct, THREADS);
  /* 40 calls of 1 ms at 0.5 earn 3 ms by the 7th: checked, caught. */
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WRONG]), 1);
  STC_CHECK_EQ_INT(count_of(text, "failed its check"), 1);
  free(text);
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", true), 1); /* site 2's */
  stc_rt__set_rent_clock(NULL);
  stc_rt__dispatch_reset();
}

/* ---- the trial runner and the thread pools' idle spin ---- */

static uint64_t wall_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Nanoseconds one trial measurement of variant took, waits included. */
static uint64_t measure_wall(stc_rt__trial *trial, size_t variant) {
  uint64_t ns = 0, start = wall_ns();
  if (stc_rt__trial_measure(trial, variant, &ns) != STC_OK)
    return 0;
  return wall_ns() - start;
}

/* A BLAS candidate timed right after a variant that starts an OpenMP team
 * waits out libomp's spin (2 ms), and a candidate right after BLAS waits
 * out OpenBLAS's (3 ms): the final duel times the two back to back, and
 * the spinning workers of one took a core from the other. */
/* ---- the warm-start index (runtime/warm_start.c) ---- */

/* A "process" of the index tests: settle 0 (the records were just written;
 * a real process waits 2 s after a record change to write the index). Its
 * exit is stc_rt__warm_flush. */
static bool warm_process(const char *directory) {
  stc_rt__warm_set_settle_seconds(0);
  return fresh_runtime(STC_MODE_CACHE_ONLY, directory);
}

/* The path of the one index file in directory/warm-v1, or "" without. */
static const char *warm_index_path(const char *directory) {
  static char path[4096];
  char sub[3000];
  path[0] = 0;
  snprintf(sub, sizeof sub, "%s/warm-v1", directory);
  DIR *d = opendir(sub);
  if (!d)
    return path;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strstr(e->d_name, ".idx") && strncmp(e->d_name, "tmp.", 4) != 0)
      snprintf(path, sizeof path, "%s/%s", sub, e->d_name);
  closedir(d);
  return path;
}

static bool write_file(const char *path, const char *data, size_t size) {
  int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0600);
  if (fd < 0)
    return false;
  bool ok = write(fd, data, size) == (ssize_t)size;
  return close(fd) == 0 && ok;
}

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *data = malloc(1 << 20);
  *size = data ? fread(data, 1, 1 << 20, f) : 0;
  fclose(f);
  return data;
}

/* Tunes g_static_site in a first process and plants `winner` (ratio 0.5),
 * then runs a second process whose first call asks the tuner and which
 * writes the index at its exit. */
static bool warm_cache(const char *directory, const char *winner, problem *p,
                       unsigned seed) {
  if (!fresh_runtime(STC_MODE_EXPLORE, directory))
    return false;
  problem_init(p, 32, 0, 0, seed);
  enter(&g_static_site, p);
  if (!problem_correct(p) || plant_winner_ratio(directory, winner, 0.5) != 1 ||
      !warm_process(directory))
    return false;
  problem_rebase(p);
  enter(&g_static_site, p);
  bool asked = stats().tuner.disk_hits == 1 && stats().warm_start_hits == 0;
  stc_rt__warm_flush();
  return asked && problem_correct(p) && warm_index_path(directory)[0];
}

/* A disk decision naming the reference: the next process's first call runs
 * the reference and publishes it with no tuner at all; a record changed
 * since (another winner planted) makes the index stale. */
STC_TEST(warm_start_index_answers_a_reference_decision_without_the_tuner) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("warm-reference"));
  problem p;
  STC_CHECK(warm_cache(directory, "reference", &p, 71));

  STC_CHECK(warm_process(directory));
  reset_calls();
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 1);
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.warm_start_hits, 1);
  STC_CHECK_EQ_U64(s.selections, 0);
  STC_CHECK(stc_rt__tuner_if_started() == NULL); /* never created */
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) ==
            (void *)reference_entry);
  problem_rebase(&p);
  enter(&g_static_site, &p); /* decided: served without the index */
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_U64(stats().warm_start_hits, 1);
  STC_CHECK_EQ_U64(stats().cached_calls, 1);
  stc_rt__warm_flush(); /* nothing new: the file stays as it is */

  /* Another winner planted: the records changed, the index is stale. */
  STC_CHECK_EQ_INT(plant_winner_ratio(directory, "fast", 0.5), 1);
  STC_CHECK(warm_process(directory));
  reset_calls();
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  s = stats();
  STC_CHECK_EQ_U64(s.warm_start_hits, 0);
  STC_CHECK_EQ_U64(s.tuner.disk_hits, 1);
  problem_rebase(&p);
  enter(&g_static_site, &p); /* call 2 checks the planted winner */
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 1);
  STC_CHECK(slot_holds_fast());
  stc_rt__warm_set_settle_seconds(2);
  stc_rt__dispatch_reset();
  problem_free(&p);
}

/* A winner whose check waits for call 2: with the index, call 1 runs the
 * reference alone without the tuner, and call 2 asks it and checks - the
 * same calls as without the index; so does a wrong planted winner, which
 * the check still catches (and deletes). */
STC_TEST(warm_start_deferred_winner_is_checked_on_the_same_call) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("warm-deferred"));
  problem p;
  STC_CHECK(warm_cache(directory, "fast", &p, 72));

  STC_CHECK(warm_process(directory));
  reset_calls();
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 1);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 0);
  STC_CHECK_EQ_U64(stats().warm_start_hits, 1);
  STC_CHECK(stc_rt__tuner_if_started() == NULL);
  STC_CHECK(__atomic_load_n(&g_slot, __ATOMIC_ACQUIRE) == NULL);
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 2); /* on scratch */
  STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), 1);
  stc_rt_dispatch_stats s = stats();
  STC_CHECK_EQ_U64(s.tuner.disk_hits, 1);
  STC_CHECK_EQ_U64(s.tuner.disk_checks, 1);
  STC_CHECK(slot_holds_fast());

  /* The same index over a wrong winner: plant it, let a process write the
   * index for it (call 1 only), then the next process's call 2 checks. */
  STC_CHECK_EQ_INT(plant_winner_ratio(directory, "wrong", 0.5), 1);
  STC_CHECK(warm_process(directory));
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  stc_rt__warm_flush();
  STC_CHECK(warm_process(directory));
  reset_calls();
  for (int call = 1; call <= 2; call++) {
    problem_rebase(&p);
    enter(&g_static_site, &p);
    STC_CHECK(problem_correct(&p)); /* call 2 keeps the reference's result */
  }
  STC_CHECK_EQ_U64(stats().warm_start_hits, 1);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WRONG]), 1);
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", true), 0); /* deleted */
  stc_rt__warm_set_settle_seconds(2);
  stc_rt__dispatch_reset();
  problem_free(&p);
}

/* Rent or buy through the index: the calls it answers count toward the
 * start cost, so the winner is checked on call 7 as without it (1 ms per
 * reference run, ratio 0.5, 3 ms) - and the tuner is first created there. */
STC_TEST(warm_start_rented_winner_switches_on_the_same_call) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("warm-rent"));
  problem p;
  STC_CHECK(rent_cache(directory, "fast", &p));
  stc_rt__warm_set_settle_seconds(0);
  STC_CHECK(rent_runtime(directory, 3000000, false));
  problem_rebase(&p);
  enter(&g_threads_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_U64(stats().warm_start_hits, 0);
  stc_rt__warm_flush();

  STC_CHECK(rent_runtime(directory, 3000000, false));
  reset_calls();
  for (int call = 1; call <= 7; call++) {
    problem_rebase(&p);
    enter(&g_threads_site, &p);
    STC_CHECK(problem_correct(&p));
    STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), call);
    STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), call == 7);
    if (call < 7)
      STC_CHECK(stc_rt__tuner_if_started() == NULL);
  }
  STC_CHECK_EQ_U64(stats().warm_start_hits, 1);
  STC_CHECK_EQ_U64(stats().tuner.disk_checks, 1);
  STC_CHECK(__atomic_load_n(&g_threads_slot, __ATOMIC_ACQUIRE) ==
            (void *)fast_entry);

  /* trust_verified: the index keeps the decision as trusted ("t"), and the
   * winner is switched to, unchecked, on call 7 as well. */
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_EXPLORE, directory);
  config.policy.trust_verified = true;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem_rebase(&p);
  enter(&g_threads_site, &p); /* retunes: trusted records key by code */
  STC_CHECK(problem_correct(&p));
  STC_CHECK(plant_winner_ratio(directory, "fast", 0.5) >= 1);
  STC_CHECK(rent_runtime(directory, 3000000, true));
  problem_rebase(&p);
  enter(&g_threads_site, &p);
  STC_CHECK_EQ_U64(stats().tuner.trusted_hits, 1);
  stc_rt__warm_flush();
  size_t size = 0;
  char *index = read_file(warm_index_path(directory), &size);
  STC_CHECK(index && size < (1 << 20));
  index[size] = 0;
  STC_CHECK(strstr(index, " t ") != NULL);
  free(index);
  STC_CHECK(rent_runtime(directory, 3000000, true));
  reset_calls();
  for (int call = 1; call <= 7; call++) {
    problem_rebase(&p);
    enter(&g_threads_site, &p);
    STC_CHECK(problem_correct(&p));
    STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), call < 7 ? call : 6);
    STC_CHECK_EQ_INT(atomic_load(&g_calls[FAST]), call == 7);
  }
  STC_CHECK_EQ_U64(stats().warm_start_hits, 1);
  STC_CHECK_EQ_U64(stats().tuner.disk_checks, 0);
  STC_CHECK(__atomic_load_n(&g_threads_slot, __ATOMIC_ACQUIRE) ==
            (void *)fast_entry);
  stc_rt__set_rent_clock(NULL);
  stc_rt__warm_set_settle_seconds(2);
  stc_rt__dispatch_reset();
  problem_free(&p);
}

/* Eight threads' calls through a workload the index answered "deferred"
 * over a planted wrong winner: one lookup, one check, which catches it;
 * every result right (TSan). */
STC_TEST_THREADED(warm_start_concurrent_calls_through_a_deferred_answer) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("warm-threads"));
  problem first;
  STC_CHECK(warm_cache(directory, "wrong", &first, 74));
  problem_free(&first);

  STC_CHECK(warm_process(directory));
  reset_calls();
  wrong_winner_called_from_threads(directory, 299);
  STC_CHECK_EQ_U64(stats().warm_start_hits, 1);
  STC_CHECK_EQ_INT(plant_winner(directory, "wrong", true), 0);
  stc_rt__warm_set_settle_seconds(2);
  stc_rt__dispatch_reset();
}

/* A directory shared by many hosts or configurations keeps the newest 16
 * index files: a write removes the oldest beyond that, never its own. */
STC_TEST(warm_start_keeps_at_most_sixteen_index_files) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("warm-files"));
  problem p;
  STC_CHECK(warm_cache(directory, "reference", &p, 75));
  char own[4096];
  snprintf(own, sizeof own, "%s", warm_index_path(directory));
  STC_CHECK(unlink(own) == 0);
  for (int i = 0; i < 20; i++) {
    char other[4096];
    snprintf(other, sizeof other, "%s/warm-v1/hother-c%02d.idx", directory, i);
    STC_CHECK(write_file(other, "stc-warm-start 1\n", 17));
  }
  STC_CHECK(warm_process(directory));
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  stc_rt__warm_flush();
  char sub[4096];
  snprintf(sub, sizeof sub, "%s/warm-v1", directory);
  DIR *d = opendir(sub);
  STC_CHECK(d != NULL);
  int files = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    files += strstr(e->d_name, ".idx") != NULL;
  closedir(d);
  STC_CHECK_EQ_INT(files, 16);
  STC_CHECK(access(own, F_OK) == 0);
  stc_rt__warm_set_settle_seconds(2);
  stc_rt__dispatch_reset();
  problem_free(&p);
}

/* An index that is truncated, corrupt, garbage or empty is no index: the
 * process asks the tuner and computes right; the next exit rewrites it. So
 * is one of another configuration, and none is written while the records
 * changed too recently to be sure of them (the settle time). */
STC_TEST(warm_start_index_that_does_not_hold_is_ignored) {
  STC_CHECK(stc_rt_environment_reliable());
  char directory[2048];
  snprintf(directory, sizeof directory, "%s", test_dir("warm-bad"));
  problem p;
  STC_CHECK(warm_cache(directory, "reference", &p, 73));
  char path[4096];
  snprintf(path, sizeof path, "%s", warm_index_path(directory));
  size_t size = 0;
  char *good = read_file(path, &size);
  STC_CHECK(good && size > 40);
  char *bad = malloc(size);
  memcpy(bad, good, size);
  bad[size - 30] ^= 1; /* one bit of an entry: the checksum says no */
  struct {
    const char *data;
    size_t size;
  } cases[] = {{good, size / 2}, {bad, size}, {"garbage\n", 8}, {"", 0}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    STC_CHECK(write_file(path, cases[i].data, cases[i].size));
    STC_CHECK(warm_process(directory));
    problem_rebase(&p);
    enter(&g_static_site, &p);
    STC_CHECK(problem_correct(&p));
    STC_CHECK_EQ_U64(stats().warm_start_hits, 0);
    STC_CHECK_EQ_U64(stats().tuner.disk_hits, 1);
    stc_rt__warm_flush(); /* rewrites it */
    STC_CHECK(warm_process(directory));
    problem_rebase(&p);
    enter(&g_static_site, &p);
    STC_CHECK(problem_correct(&p));
    STC_CHECK_EQ_U64(stats().warm_start_hits, 1);
  }

  /* Another policy is another configuration. */
  stc_rt_dispatch_config config;
  fresh_config(&config, STC_MODE_CACHE_ONLY, directory);
  config.policy.samples = 11;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_U64(stats().warm_start_hits, 0);

  /* Records changed within the settle time: nothing is written. */
  STC_CHECK(unlink(path) == 0);
  stc_rt__warm_set_settle_seconds(3600);
  STC_CHECK(fresh_runtime(STC_MODE_CACHE_ONLY, directory));
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  stc_rt__warm_flush();
  STC_CHECK(warm_index_path(directory)[0] == 0);

  /* warm_start off (STC_TUNE_WARM_START=0) turns it off. */
  STC_CHECK(write_file(path, good, size));
  fresh_config(&config, STC_MODE_CACHE_ONLY, directory);
  STC_CHECK(config.warm_start); /* the default */
  config.warm_start = false;
  STC_CHECK(stc_rt_dispatch_configure(&config, NULL) == STC_OK);
  problem_rebase(&p);
  enter(&g_static_site, &p);
  STC_CHECK(problem_correct(&p));
  STC_CHECK_EQ_U64(stats().warm_start_hits, 0);
  free(good);
  free(bad);
  stc_rt__warm_set_settle_seconds(2);
  stc_rt__dispatch_reset();
  problem_free(&p);
}

STC_TEST(trial_runner_waits_out_the_other_thread_pools_spin) {
  fake_blas_dir d;
  STC_CHECK(fake_blas_dir_make(&d, "spin-wait"));
  use_fake_blas(d.lib);
  problem p;
  problem_init(&p, 8, 0, 0, 23);
  void *desc[3] = {&p.ma, &p.mb, &p.mc};
  char message[256];
  stc_rt__trial *trial = NULL;
  STC_CHECK(stc_rt__trial_create(&g_threads_site, desc, &trial, message,
                                 sizeof message) == STC_OK);
  STC_CHECK(measure_wall(trial, BLAS) > 0); /* loads the library */
  STC_CHECK(measure_wall(trial, FAST) >= 2900000u); /* after BLAS */
  STC_CHECK(measure_wall(trial, BLAS) >= 1900000u); /* after OpenMP */
  stc_rt__trial_destroy(trial);
  problem_free(&p);
  unsetenv("STC_BLAS_LIBRARY");
  setenv("STC_BLAS", "off", 1);
  stc_rt__blas_reset();
}

/* ---- the workload text ---- */

/* The text as the runtime wrote it before it stopped using a stdio stream
 * (runtime/dispatch.c before the warm-path work, kept here as the oracle):
 * it is the tuner's workload string, so a changed byte would key every
 * disk record anew. */
static char *stream_workload_text(const stc_rt_site *site, const int64_t *key) {
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  if (!out)
    return NULL;
  size_t n = 0;
  for (uint32_t i = 0; i < site->num_args; i++) {
    uint32_t rank = site->args[i].rank;
    bool offset = key[n++] != 0;
    fprintf(out, "%s%s[", i ? " " : "",
            stc_rt__element_name(site->args[i].element));
    for (uint32_t d = 0; d < rank; d++)
      fprintf(out, "%s%" PRId64, d ? "x" : "", key[n + d]);
    fputc(':', out);
    for (uint32_t d = 0; d < rank; d++)
      fprintf(out, "%s%" PRId64, d ? "," : "", key[n + rank + d]);
    fputs(offset ? "]+off" : "]", out);
    n += 2 * rank;
  }
  if (fclose(out) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

STC_TEST(workload_text_is_unchanged) {
  /* Every element type and an unknown one, ranks 0 to the limit, the
   * extremes of int64 and random values, with and without offsets. */
  static const int64_t extremes[] = {0,  1,         -1,        INT64_MIN,
                                     INT64_MAX, 10, 999999999, -1000000};
  static const uint32_t ranks[] = {0, 1, 2, 3, 7, STC_RT__MAX_RANK};
  uint64_t state = 0x9E3779B97F4A7C15u;
  size_t compared = 0, longest = 0;
  for (int round = 0; round < 400; round++) {
    stc_rt_arg args[STC_RT_MAX_SITE_ARGS];
    uint32_t num_args = 1 + (uint32_t)(round % STC_RT_MAX_SITE_ARGS);
    bool widest = round == 399; /* every argument at the limits */
    int64_t key[STC_RT_MAX_SITE_ARGS * (1 + 2 * STC_RT__MAX_RANK)];
    size_t n = 0;
    for (uint32_t i = 0; i < num_args; i++) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      uint32_t rank = widest ? STC_RT__MAX_RANK
                             : ranks[(state >> 33) % (sizeof ranks / sizeof *ranks)];
      args[i] = (stc_rt_arg){STC_RT_ARG_INPUT,
                             widest ? STC_RT_BF16 : (uint32_t)((state >> 40) % 9),
                             rank, 0};
      key[n++] = widest || (state >> 50) % 2;
      for (uint32_t d = 0; d < 2 * rank; d++) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        key[n++] = widest ? INT64_MIN
                   : (state >> 60) < 8
                       ? extremes[(state >> 20) % 8]
                       : (int64_t)(state ^ (state >> 29)) >> (state >> 58);
      }
    }
    stc_rt_site site = {STC_RT_DISPATCH_ABI_VERSION, num_args, "test/text",
                        "linalg.generic", args, NUM_VARIANTS, REFERENCE,
                        matmul_variants, NULL, NULL};
    char *expected = stream_workload_text(&site, key);
    char *got = stc_rt__workload_text(&site, key);
    STC_CHECK(expected && got);
    if (expected && got) {
      STC_CHECK_STR_EQ(got, expected);
      compared++;
      if (strlen(got) > longest)
        longest = strlen(got);
    }
    free(expected);
    free(got);
  }
  STC_CHECK_EQ_U64(compared, 400);
  /* The widest text: 8 bf16 arguments of rank 32, all INT64_MIN, offsets. */
  STC_CHECK_EQ_U64(longest, 8 * (4 + 1 + 2 * (32 * 20 + 31) + 1 + 5) + 7);
}
