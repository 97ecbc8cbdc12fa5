/* dispatch_bench - cost of a cached site dispatch next to a direct call of
 * the same tiny function (x[0] += 1 on a 1-D f32 memref).
 *
 * In: optional iteration count (argv[1], default 20,000,000). Out: a table
 * on stdout, ns per call and the ratio to the direct call, for
 *   direct         a direct call of the variant's unpacked entry (noinline)
 *   static slot    what generated code does for a static site once tuned:
 *                  an atomic acquire load of the slot + an indirect call
 *   dynamic site   a tuned dynamic-shape site: the words array is built and
 *                  stc_rt_site_enter looks the workload up and calls the
 *                  variant's C-interface entry
 * Each is measured in 5 interleaved rounds; the best round is shown. The
 * first call of each site tunes (memory-only cache) before timing starts.
 *   bench/dispatch_bench [iterations] */
#include "stc/rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct memref1 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} memref1;

__attribute__((noinline)) static void tiny_entry(float *allocated,
                                                 float *aligned, int64_t offset,
                                                 int64_t size, int64_t stride) {
  (void)allocated, (void)size, (void)stride;
  aligned[offset] += 1.0f;
}

__attribute__((noinline)) static void tiny_ciface(memref1 *m) {
  tiny_entry(m->allocated, m->aligned, m->offset, m->sizes[0], m->strides[0]);
}

typedef void (*tiny_fn)(float *, float *, int64_t, int64_t, int64_t);

static const stc_rt_arg args[1] = {{STC_RT_ARG_INOUT, STC_RT_F32, 1, 0}};
static const stc_rt_variant variants[2] = {
    {"reference", "1", (void *)tiny_entry, (void *)tiny_ciface, 0,
     STC_RT_ELIGIBLE_ALWAYS, 0, NULL},
    {"same", "1", (void *)tiny_entry, (void *)tiny_ciface, 0,
     STC_RT_ELIGIBLE_ALWAYS, 0, NULL},
};
static void *slot;
static stc_rt_site static_site = {STC_RT_DISPATCH_ABI_VERSION, 1,
                                  "bench/tiny#static", "bench.tiny", args, 2,
                                  0, variants, &slot, NULL};
static stc_rt_site dynamic_site = {STC_RT_DISPATCH_ABI_VERSION, 1,
                                   "bench/tiny#dynamic", "bench.tiny", args, 2,
                                   0, variants, NULL, NULL};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static float data[16];
static long iterations = 20000000;

static double run_direct(void) {
  uint64_t start = now_ns();
  for (long i = 0; i < iterations; i++)
    tiny_entry(data, data, 0, 16, 1);
  return (double)(now_ns() - start) / (double)iterations;
}

/* The generated dispatch function, static-shaped: load, test, call. */
static inline void dispatch_static(float *x) {
  tiny_fn f = (tiny_fn)__atomic_load_n(&slot, __ATOMIC_ACQUIRE);
  if (f) {
    f(x, x, 0, 16, 1);
    return;
  }
  uint64_t words[5];
  memref1 m = {x, x, 0, {16}, {1}};
  memcpy(words, &m, sizeof m);
  stc_rt_site_enter(&static_site, words, 5);
}

static double run_static(void) {
  uint64_t start = now_ns();
  for (long i = 0; i < iterations; i++)
    dispatch_static(data);
  return (double)(now_ns() - start) / (double)iterations;
}

/* The generated dispatch function, dynamic-shaped: always the runtime. */
static inline void dispatch_dynamic(float *x) {
  uint64_t words[5];
  memref1 m = {x, x, 0, {16}, {1}};
  memcpy(words, &m, sizeof m);
  stc_rt_site_enter(&dynamic_site, words, 5);
}

static double run_dynamic(void) {
  uint64_t start = now_ns();
  for (long i = 0; i < iterations; i++)
    dispatch_dynamic(data);
  return (double)(now_ns() - start) / (double)iterations;
}

int main(int argc, char **argv) {
  if (argc > 1)
    iterations = atol(argv[1]);
  if (iterations <= 0) {
    fprintf(stderr, "usage: dispatch_bench [iterations > 0]\n");
    return 2;
  }
  stc_rt_dispatch_config config;
  stc_rt_dispatch_config_init(&config); /* memory only: no cache files */
  config.policy.warmups = 1;
  config.policy.samples = 3;
  stc_error err;
  if (stc_rt_dispatch_configure(&config, &err) != STC_OK) {
    fprintf(stderr, "dispatch_bench: %s\n", err.message);
    return 1;
  }
  dispatch_static(data); /* tunes, publishes the slot */
  dispatch_dynamic(data);
  if (!__atomic_load_n(&slot, __ATOMIC_ACQUIRE)) {
    fprintf(stderr, "dispatch_bench: the static slot was not published\n");
    return 1;
  }
  double best[3] = {1e30, 1e30, 1e30};
  for (int round = 0; round < 5; round++) {
    double t[3] = {run_direct(), run_static(), run_dynamic()};
    for (int k = 0; k < 3; k++)
      if (t[k] < best[k])
        best[k] = t[k];
  }
  stc_rt_dispatch_stats stats;
  stc_rt_dispatch_stats_get(&stats);
  printf("dispatch_bench: %ld calls per round, best of 5 rounds\n",
         iterations);
  printf("%-34s %10s %8s\n", "path", "ns/call", "ratio");
  printf("%-34s %10.2f %8.2f\n", "direct call", best[0], 1.0);
  printf("%-34s %10.2f %8.2f\n", "static site (slot load + indirect)",
         best[1], best[1] / best[0]);
  printf("%-34s %10.2f %8.2f\n", "dynamic site (stc_rt_site_enter)", best[2],
         best[2] / best[0]);
  printf("tunes %llu, cached runtime calls %llu\n",
         (unsigned long long)stats.tuner.tunes,
         (unsigned long long)stats.cached_calls);
  return data[0] > 0 ? 0 : 1;
}
