/* Unit tests of GPU dispatch sites in libstc_rt (runtime/trial_gpu.c and
 * its hooks in trial_cpu.c, dispatch.c, controls.c): hand-written sites
 * whose arguments are device memory (stc_rt_arg.memory = DEVICE) and whose
 * "variants" are C functions that launch a hand-written PTX kernel
 * c[i] += s * a[i], as compiled variants launch theirs (a stream, the
 * launch, a stream synchronize):
 *   reference   s = 2, 128 threads per block
 *   bad_launch  2048 threads per block: the launch cannot start
 *   wrong       s = 3
 *   wide        s = 2, 256 threads per block (correct)
 *   cublas      eligibility CUBLAS, never runs (STC_CUBLAS=off)
 *
 * The first group runs everywhere (no device needed): the device marking,
 * the environment's GPU part without a device, and a device site on a
 * machine without a GPU (the trial runner says why, the reference runs).
 * The second group needs a CUDA device and exits 77 (skipped, with the
 * reason) without one. */
#include "stc_test.h"

#include "../../runtime/dispatch_internal.h"
#include "../../runtime/gpu_internal.h"
#include "stc/rt.h"
#include "stc/rt_gpu.h"

#include <stdatomic.h>
#include <stdlib.h>

#define SKIP_RETURN_CODE 77
#define N 4096

typedef struct memref1 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} memref1;

static const char axpy_ptx[] =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry stc_axpy(.param .u64 a, .param .u64 c, .param .f32 s) {\n"
    "  .reg .b32 %r<5>; .reg .b64 %rd<6>; .reg .f32 %f<4>;\n"
    "  ld.param.u64 %rd1, [a];\n  ld.param.u64 %rd2, [c];\n"
    "  ld.param.f32 %f1, [s];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n  cvta.to.global.u64 %rd2, %rd2;\n"
    "  mov.u32 %r1, %ctaid.x;\n  mov.u32 %r2, %ntid.x;\n  mov.u32 %r3, %tid.x;\n"
    "  mad.lo.s32 %r4, %r1, %r2, %r3;\n  mul.wide.u32 %rd3, %r4, 4;\n"
    "  add.s64 %rd4, %rd1, %rd3;\n  add.s64 %rd5, %rd2, %rd3;\n"
    "  ld.global.f32 %f2, [%rd4];\n  ld.global.f32 %f3, [%rd5];\n"
    "  fma.rn.f32 %f3, %f2, %f1, %f3;\n  st.global.f32 [%rd5], %f3;\n"
    "  ret;\n}\n";

static void *g_function; /* stc_axpy, loaded by require_gpu */

enum { REFERENCE, BAD_LAUNCH, WRONG, WIDE, CUBLAS, NUM_VARIANTS };
static atomic_int g_calls[NUM_VARIANTS];

static void axpy(int variant, float s, int threads, memref1 *a, memref1 *c) {
  atomic_fetch_add(&g_calls[variant], 1);
  float *pa = a->aligned + a->offset, *pc = c->aligned + c->offset;
  void *params[3] = {&pa, &pc, &s};
  void *stream = mgpuStreamCreate();
  mgpuLaunchKernel(g_function, c->size / threads, 1, 1, threads, 1, 1, 0, stream,
                   params, NULL, 3);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
}

static void reference_ciface(memref1 *a, memref1 *c) { axpy(REFERENCE, 2, 128, a, c); }
static void bad_launch_ciface(memref1 *a, memref1 *c) { axpy(BAD_LAUNCH, 2, 2048, a, c); }
static void wrong_ciface(memref1 *a, memref1 *c) { axpy(WRONG, 3, 128, a, c); }
static void wide_ciface(memref1 *a, memref1 *c) { axpy(WIDE, 2, 256, a, c); }
static void cublas_ciface(memref1 *a, memref1 *c) { axpy(CUBLAS, 2, 128, a, c); }

#define UNPACKED(p) float *p##_al, float *p##_ad, int64_t p##_o, int64_t p##_s, int64_t p##_t
#define DEFINE_ENTRY(name)                                                    \
  static void name##_entry(UNPACKED(a), UNPACKED(c)) {                        \
    memref1 a = {a_al, a_ad, a_o, a_s, a_t}, c = {c_al, c_ad, c_o, c_s, c_t}; \
    name##_ciface(&a, &c);                                                    \
  }
DEFINE_ENTRY(reference)
DEFINE_ENTRY(bad_launch)
DEFINE_ENTRY(wrong)
DEFINE_ENTRY(wide)
DEFINE_ENTRY(cublas)

static const stc_rt_arg device_args[2] = {
    {STC_RT_ARG_INPUT, STC_RT_F32, 1, STC_RT_MEMORY_DEVICE},
    {STC_RT_ARG_INOUT, STC_RT_F32, 1, STC_RT_MEMORY_DEVICE},
};

#define VARIANT(name, eligibility)                                            \
  {#name, "1", (void *)name##_entry, (void *)name##_ciface, 0, eligibility, 0, NULL}
static const stc_rt_variant device_variants[NUM_VARIANTS] = {
    VARIANT(reference, STC_RT_ELIGIBLE_ALWAYS),
    VARIANT(bad_launch, STC_RT_ELIGIBLE_ALWAYS),
    VARIANT(wrong, STC_RT_ELIGIBLE_ALWAYS),
    VARIANT(wide, STC_RT_ELIGIBLE_ALWAYS),
    VARIANT(cublas, STC_RT_ELIGIBLE_CUBLAS),
};

static void *g_slot;
static stc_rt_site g_site = {STC_RT_DISPATCH_ABI_VERSION, 2, "test/axpy#gpu",
                             "linalg.generic", device_args, NUM_VARIANTS,
                             REFERENCE, device_variants, &g_slot, NULL};

static void fresh_runtime(const char *gpu_switch) {
  stc_rt__dispatch_reset();
  g_slot = NULL;
  if (gpu_switch)
    setenv("STC_GPU", gpu_switch, 1);
  else
    unsetenv("STC_GPU");
  setenv("STC_CUBLAS", "off", 1);
  unsetenv("STC_CUDA_DRIVER_LIBRARY");
  stc_rt__gpu_reset();
  stc_rt__cublas_reset();
  for (int v = 0; v < NUM_VARIANTS; v++)
    atomic_store(&g_calls[v], 0);
  stc_rt_dispatch_config config;
  stc_rt_dispatch_config_init(&config);
  config.policy.mode = STC_MODE_EXPLORE;
  config.policy.warmups = 1;
  config.policy.samples = 5;
  config.policy.max_relative_mad = 1.0;
  STC_CHECK_EQ_INT(stc_rt_dispatch_configure(&config, NULL), STC_OK);
}

/* Exits 77 (skipped) with the reason when no device is usable; loads the
 * kernel otherwise. */
static void require_gpu(void) {
  fresh_runtime(NULL);
  const char *why = NULL;
  if (!stc_rt_gpu_available(&why)) {
    printf("SKIP: no usable CUDA device: %s\n", why);
    fflush(stdout);
    exit(SKIP_RETURN_CODE);
  }
  void *module = mgpuModuleLoadJIT((void *)axpy_ptx, 2);
  g_function = module ? mgpuModuleGetFunction(module, "stc_axpy") : NULL;
  STC_CHECK(g_function != NULL);
}

static void enter(memref1 *a, memref1 *c) {
  uint64_t words[10];
  memcpy(&words[0], a, sizeof *a);
  memcpy(&words[5], c, sizeof *c);
  stc_rt_site_enter(&g_site, words, 10);
}

/* The note of candidate `name` in the last report (owned), and the winner. */
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

/* ---- everywhere ---- */

STC_TEST(device_site_is_marked_by_its_arguments) {
  STC_CHECK(stc_rt__site_on_device(&g_site));
  static const stc_rt_arg host_args[2] = {
      {STC_RT_ARG_INPUT, STC_RT_F32, 1, STC_RT_MEMORY_HOST},
      {STC_RT_ARG_INOUT, STC_RT_F32, 1, STC_RT_MEMORY_HOST},
  };
  stc_rt_site host = g_site;
  host.args = host_args;
  STC_CHECK(!stc_rt__site_on_device(&host));
}

STC_TEST(environment_without_a_device_is_not_persistent) {
  fresh_runtime("off");
  char environment[128] = "cpu:x86_64";
  bool persistent = true;
  stc_rt__gpu_environment(environment, sizeof environment, &persistent);
  STC_CHECK(strcmp(environment, "cpu:x86_64;gpu=unknown") == 0);
  STC_CHECK(!persistent);
  /* Too small to hold the GPU part: left as it was, not persistent. */
  char tiny[14] = "cpu:x86_64";
  persistent = true;
  stc_rt__gpu_environment(tiny, sizeof tiny, &persistent);
  STC_CHECK(strcmp(tiny, "cpu:x86_64") == 0);
  STC_CHECK(!persistent);
}

STC_TEST(device_site_without_a_gpu_runs_the_reference_and_says_why) {
  fresh_runtime("off");
  float a[8] = {0}, c[8] = {0};
  memref1 ma = {a, a, 0, 8, 1}, mc = {c, c, 0, 8, 1};
  void *descriptors[2] = {&ma, &mc};
  stc_rt__trial *trial = NULL;
  char message[256] = "";
  STC_CHECK_EQ_INT(stc_rt__trial_create(&g_site, descriptors, &trial, message,
                                        sizeof message),
                   STC_ERR_UNAVAILABLE);
  STC_CHECK(trial == NULL);
  STC_CHECK(strstr(message, "no usable GPU") && strstr(message, "STC_GPU=off"));
  /* cuBLAS variants are ineligible with the reason. */
  const char *why = stc_rt__ineligible_reason(&g_site, CUBLAS);
  STC_CHECK(why && strstr(why, "cuBLAS"));
  STC_CHECK(stc_rt__ineligible_reason(&g_site, WIDE) == NULL);
  /* A call: only the reference runs (its launch is skipped with a warning:
   * no GPU), no candidate is tried, and the program goes on. */
  enter(&ma, &mc);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[REFERENCE]), 1);
  for (int v = 1; v < NUM_VARIANTS; v++)
    STC_CHECK_EQ_INT(atomic_load(&g_calls[v]), 0);
}

STC_TEST(gpu_batch_size_makes_samples_long_enough) {
  /* A 15 us call: 14 calls make a 200 us sample. */
  STC_CHECK_EQ_INT(stc_rt__gpu_batch_size(15000, 200000, 64), 14);
  STC_CHECK_EQ_INT(stc_rt__gpu_batch_size(20000, 200000, 64), 10);
  /* Calls as long as a sample, or longer, are timed one by one. */
  STC_CHECK_EQ_INT(stc_rt__gpu_batch_size(200000, 200000, 64), 1);
  STC_CHECK_EQ_INT(stc_rt__gpu_batch_size(700000000, 200000, 64), 1);
  /* Very short (or unmeasurable) calls: capped. */
  STC_CHECK_EQ_INT(stc_rt__gpu_batch_size(1000, 200000, 64), 64);
  STC_CHECK_EQ_INT(stc_rt__gpu_batch_size(0, 200000, 64), 64);
  STC_CHECK_EQ_INT(stc_rt__gpu_batch_size(1000, 200000, 1), 1);
  STC_CHECK_EQ_INT(stc_rt__gpu_batch_size(1000, 200000, 0), 1);
}

/* ---- with a device ---- */

/* A device a (a[i] = i mod 7) and c (c[i] = 1), and what one reference run
 * makes of c. */
typedef struct device_problem {
  float *a, *c;
  float expected[N];
  memref1 ma, mc;
} device_problem;

static void problem_init(device_problem *p) {
  static float host_a[N], host_c[N];
  for (int i = 0; i < N; i++) {
    host_a[i] = (float)(i % 7);
    host_c[i] = 1.0f;
    p->expected[i] = 1.0f + 2.0f * host_a[i];
  }
  STC_CHECK_EQ_INT(stc_rt_gpu_alloc(sizeof host_a, (void **)&p->a, NULL), STC_OK);
  STC_CHECK_EQ_INT(stc_rt_gpu_alloc(sizeof host_c, (void **)&p->c, NULL), STC_OK);
  STC_CHECK_EQ_INT(stc_rt_gpu_copy(p->a, host_a, sizeof host_a, NULL), STC_OK);
  STC_CHECK_EQ_INT(stc_rt_gpu_copy(p->c, host_c, sizeof host_c, NULL), STC_OK);
  p->ma = (memref1){p->a, p->a, 0, N, 1};
  p->mc = (memref1){p->c, p->c, 0, N, 1};
}

static bool problem_correct(device_problem *p) {
  static float back[N];
  if (stc_rt_gpu_copy(back, p->c, sizeof back, NULL) != STC_OK)
    return false;
  return memcmp(back, p->expected, sizeof back) == 0;
}

static void problem_free(device_problem *p) {
  stc_rt_gpu_free(p->a);
  stc_rt_gpu_free(p->c);
}

STC_TEST(gpu_site_tunes_rejects_a_failing_launch_and_a_wrong_result) {
  require_gpu();
  device_problem p;
  problem_init(&p);
  enter(&p.ma, &p.mc);
  /* The call computed exactly one reference run's result on the caller's
   * buffer, whatever ran during the trials. */
  STC_CHECK(problem_correct(&p));
  char *winner = NULL;
  char *bad = last_note("bad_launch", &winner);
  char *wrong = last_note("wrong", NULL);
  char *cublas = last_note("cublas", NULL);
  STC_CHECK(bad && strstr(bad, "failed on the GPU") && strstr(bad, "cuLaunchKernel"));
  STC_CHECK(wrong && strstr(wrong, "wrong result"));
  STC_CHECK(cublas && strstr(cublas, "ineligible"));
  STC_CHECK(winner && (strcmp(winner, "reference") == 0 || strcmp(winner, "wide") == 0));
  STC_CHECK_EQ_INT(atomic_load(&g_calls[CUBLAS]), 0);
  STC_CHECK(atomic_load(&g_calls[BAD_LAUNCH]) >= 1);
  STC_CHECK(stc_rt_gpu_available(NULL)); /* a failed launch is not sticky */
  stc_rt_dispatch_reports_print(stdout);
  /* The winner is published: the next call takes the slot. */
  void *slot = __atomic_load_n(&g_slot, __ATOMIC_ACQUIRE);
  STC_CHECK(slot == (void *)reference_entry || slot == (void *)wide_entry);
  free(winner);
  free(bad);
  free(wrong);
  free(cublas);
  problem_free(&p);
}

STC_TEST(gpu_trial_measures_with_events_and_compares_by_read_back) {
  require_gpu();
  device_problem p;
  problem_init(&p);
  void *descriptors[2] = {&p.ma, &p.mc};
  stc_rt__trial *trial = NULL;
  char message[256] = "";
  STC_CHECK_EQ_INT(stc_rt__trial_create(&g_site, descriptors, &trial, message,
                                        sizeof message),
                   STC_OK);
  uint64_t ns = 0;
  /* The first measurement times one call; it sizes the batches. */
  int calls = atomic_load(&g_calls[WIDE]);
  STC_CHECK_EQ_INT(stc_rt__trial_measure(trial, WIDE, &ns), STC_OK);
  STC_CHECK(ns > 0 && ns < 1000000000u);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WIDE]) - calls, 1);
  uint32_t batch = stc_rt__gpu_batch_size(ns, STC_GPU_SAMPLE_NS, STC_GPU_MAX_BATCH);
  /* A launch + wait of a 4096-element kernel is far under 200 us. */
  STC_CHECK(ns < STC_GPU_SAMPLE_NS / 2 && batch >= 2);
  /* Later ones: a warm-up call, then batches of calls whose time per call
   * is reported; the batch is fixed by the first measurement. */
  for (int sample = 0; sample < 3; sample++) {
    calls = atomic_load(&g_calls[WIDE]);
    uint64_t per_call = 0;
    STC_CHECK_EQ_INT(stc_rt__trial_measure(trial, WIDE, &per_call), STC_OK);
    int made = atomic_load(&g_calls[WIDE]) - calls;
    STC_CHECK(per_call > 0 && per_call < STC_GPU_SAMPLE_NS);
    STC_CHECK_EQ_INT(made - 1, (int)batch);
  }
  /* The scratch buffer took every call; the caller's data is untouched
   * (checked below), and a comparison restores it first. */
  STC_CHECK(atomic_load(&g_calls[REFERENCE]) == 0);
  stc_tolerance tolerance = {0};
  tolerance.relative = 1e-6;
  tolerance.readback_limit = UINT64_MAX;
  stc_rt__comparison c;
  STC_CHECK_EQ_INT(stc_rt__trial_compare(trial, REFERENCE, WIDE, &tolerance, &c), STC_OK);
  STC_CHECK(c.supported && c.mismatches == 0);
  STC_CHECK_EQ_INT(stc_rt__trial_compare(trial, REFERENCE, WRONG, &tolerance, &c), STC_OK);
  STC_CHECK(c.supported && c.mismatches > 0);
  /* Over the read-back limit: nothing runs, nothing is compared. */
  tolerance.readback_limit = 16;
  int before = atomic_load(&g_calls[WIDE]);
  STC_CHECK_EQ_INT(stc_rt__trial_compare(trial, REFERENCE, WIDE, &tolerance, &c), STC_OK);
  STC_CHECK(!c.supported);
  STC_CHECK_EQ_INT(atomic_load(&g_calls[WIDE]), before);
  stc_rt__trial_destroy(trial);
  /* The caller's buffer was never written. */
  static float back[N];
  STC_CHECK_EQ_INT(stc_rt_gpu_copy(back, p.c, sizeof back, NULL), STC_OK);
  STC_CHECK(back[0] == 1.0f && back[N - 1] == 1.0f);
  problem_free(&p);
}

STC_TEST(gpu_environment_names_the_device) {
  require_gpu();
  char environment[512] = "cpu:x";
  bool persistent = true;
  stc_rt__gpu_environment(environment, sizeof environment, &persistent);
  STC_CHECK(persistent);
  STC_CHECK(strncmp(environment, "cpu:x;gpu=cuda:", 15) == 0);
}
