/* matmul_bench.c - GFLOP/s of --target=cuda matmul kernels and of cuBLAS on
 * the same device buffers, for tools/gpu/device-run.sh.
 *
 * In:  the kernels' C interfaces, listed by the generated matmul_variants.h
 *      (STC_VARIANT(name, m, k, n, block) per compiled variant, grouped by
 *      shape; each computes C += A B in place, A m x k, B k x n, row-major
 *      f32, and returns nothing: tools/gpu/matmul.mlir.in).
 * Out: CSV on stdout, one line per (shape, variant):
 *      m,k,n,variant,block,ms,gflops,max_rel_err_vs_cublas,status
 *      ms is the CUDA-event time of one complete call, on the legacy
 *      default stream, which every runtime stream synchronizes with: the
 *      median of `reps` samples, each a batch of back-to-back calls between
 *      one event pair lasting at least 1 ms (batch sized by one timed call
 *      after a warm-up call; at most 256 calls), divided by the batch. A
 *      compiled variant's call is complete when it returns (it waits for
 *      its stream); a cuBLAS call is not (the host does not wait), as when
 *      a site's cuBLAS variant runs. L2 is warm for every variant alike.
 *      One event pair around a single 20-70 us call had measured the same
 *      kernel 4% apart in two places of one run (docs/gpu.md). The error is each variant's
 *      C (from C = 0) against cuBLAS's, max |x - y| / (|y| + 0.01 max|y|):
 *      the summation orders differ, so elements near 0 get a scale term.
 * A variant labelled "pick" is a GPU dispatch site (--target=cuda's
 * default): its first call tunes (runtime/trial_gpu.c) and its block
 * column says "pick:<winner>" (from the tuner's report; "pick:cached" when
 * the decision came from the cache and no tuning ran). On stderr at the
 * end: the dispatch counters (tunes, memory and disk cache hits).
 * $STC_BENCH_ONLY=text runs only the variants whose name contains text (and
 * no cuBLAS timing): for compute-sanitizer runs of a few kernels.
 * TF32 variants (a name containing "tf32": tensor-core products of inputs
 * rounded to 11 significant bits) are judged by the runtime's TF32 rule
 * instead (docs/gpu.md, "TF32 tensor-core variants"): max |x - y| /
 * (|y| + mean|y|) <= 1e-2 (tolerance_tf32), printed on stderr as
 *      tf32-error,m,k,n,name,<that maximum>
 * (the column's metric reaches 0.03-0.1 for cuBLAS's own TF32 mode too).
 * Exit 0 when every variant ran and matched; 1 otherwise; 77 when no GPU
 * is usable. */
#include "stc/rt.h"
#include "stc/rt_gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*matmul_fn)(stc_rt_memref2 *a, stc_rt_memref2 *b, stc_rt_memref2 *c);

#define STC_VARIANT(name, m, k, n, block) \
  void _mlir_ciface_##name(stc_rt_memref2 *, stc_rt_memref2 *, stc_rt_memref2 *);
#include "matmul_variants.h"
#undef STC_VARIANT

static const struct {
  const char *name;
  int64_t m, k, n;
  const char *block;
  matmul_fn fn;
} variants[] = {
#define STC_VARIANT(name, m, k, n, block) {#name, m, k, n, block, _mlir_ciface_##name},
#include "matmul_variants.h"
#undef STC_VARIANT
};

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static stc_rt_memref2 descriptor(float *p, int64_t rows, int64_t cols) {
  return (stc_rt_memref2){p, p, 0, {rows, cols}, {cols, 1}};
}

static void call(matmul_fn fn, stc_rt_memref2 *a, stc_rt_memref2 *b,
                 stc_rt_memref2 *c) {
  if (fn)
    fn(a, b, c);
  else
    _mlir_ciface_stc_rt_cublas_matmul_f32(a, b, c);
}

/* Event-timed ms of `calls` back-to-back calls, per call; -1 on failure. */
static double time_batch(matmul_fn fn, stc_rt_memref2 *a, stc_rt_memref2 *b,
                         stc_rt_memref2 *c, int calls, stc_rt_gpu_timer *timer) {
  double ms = 0;
  if (stc_rt_gpu_timer_start(timer, NULL) != STC_OK)
    return -1;
  for (int i = 0; i < calls; i++)
    call(fn, a, b, c);
  if (stc_rt_gpu_timer_stop(timer, &ms, NULL) != STC_OK)
    return -1;
  return ms / calls;
}

/* Median ms per call of `reps` batched samples (see the header); cuBLAS
 * when fn is NULL. */
static double time_calls(matmul_fn fn, stc_rt_memref2 *a, stc_rt_memref2 *b,
                         stc_rt_memref2 *c, int reps, stc_rt_gpu_timer *timer) {
  double samples[32];
  if (reps > 32)
    reps = 32;
  call(fn, a, b, c); /* warm-up */
  double one = time_batch(fn, a, b, c, 1, timer);
  if (one < 0)
    return -1;
  int batch = one >= 1.0 ? 1 : one <= 1.0 / 256 ? 256 : (int)ceil(1.0 / one);
  for (int r = 0; r < reps; r++)
    if ((samples[r] = time_batch(fn, a, b, c, batch, timer)) < 0)
      return -1;
  qsort(samples, (size_t)reps, sizeof *samples, compare_double);
  return samples[reps / 2];
}

int main(void) {
  const char *why = NULL;
  if (!stc_rt_gpu_available(&why)) {
    fprintf(stderr, "matmul_bench: no usable GPU: %s\n", why);
    return 77;
  }
  bool have_cublas = stc_rt_cublas_available(&why);
  if (!have_cublas)
    fprintf(stderr, "matmul_bench: cuBLAS not loaded: %s\n", why);
  stc_rt_gpu_device info;
  stc_rt_gpu_device_info(&info, NULL);
  fprintf(stderr, "matmul_bench: %s, sm_%d%d, %d SMs, driver %d\n", info.name,
          info.compute_major, info.compute_minor, info.multiprocessors,
          info.driver_version);
  stc_rt_gpu_timer *timer = NULL;
  if (stc_rt_gpu_timer_create(&timer, NULL) != STC_OK)
    return 1;
  printf("m,k,n,variant,block,ms,gflops,max_rel_err_vs_cublas,status\n");
  int failures = 0;
  size_t count = sizeof variants / sizeof *variants;
  const char *only = getenv("STC_BENCH_ONLY");
  if (only && !*only)
    only = NULL;
  for (size_t v0 = 0; v0 < count; v0++) {
    int64_t m = variants[v0].m, k = variants[v0].k, n = variants[v0].n;
    if (v0 > 0 && variants[v0 - 1].m == m && variants[v0 - 1].k == k &&
        variants[v0 - 1].n == n)
      continue;
    bool wanted = !only;
    for (size_t v = v0; v < count && !wanted && variants[v].m == m &&
                        variants[v].k == k && variants[v].n == n;
         v++)
      wanted = strstr(variants[v].name, only) != NULL;
    if (!wanted)
      continue;
    size_t elements = (size_t)(m * n), bytes = elements * sizeof(float);
    size_t elements_a = (size_t)(m * k), elements_b = (size_t)(k * n);
    float *host_a = malloc(elements_a * 4), *host_b = malloc(elements_b * 4),
          *want = malloc(bytes), *got = malloc(bytes);
    float *a = NULL, *b = NULL, *c = NULL, *c_ref = NULL;
    if (!host_a || !host_b || !want || !got ||
        stc_rt_gpu_alloc(elements_a * 4, (void **)&a, NULL) != STC_OK ||
        stc_rt_gpu_alloc(elements_b * 4, (void **)&b, NULL) != STC_OK ||
        stc_rt_gpu_alloc(bytes, (void **)&c, NULL) != STC_OK ||
        stc_rt_gpu_alloc(bytes, (void **)&c_ref, NULL) != STC_OK)
      return 1;
    for (size_t i = 0; i < elements_a; i++)
      host_a[i] = (float)((i * 7919 + 13) % 2003) / 1001.5f - 1.0f;
    for (size_t i = 0; i < elements_b; i++)
      host_b[i] = (float)((i * 104729 + 7) % 1999) / 999.5f - 1.0f;
    stc_rt_gpu_copy(a, host_a, elements_a * 4, NULL);
    stc_rt_gpu_copy(b, host_b, elements_b * 4, NULL);
    stc_rt_memref2 da = descriptor(a, m, k), db = descriptor(b, k, n),
                   dc = descriptor(c, m, n), dref = descriptor(c_ref, m, n);
    double flops = 2.0 * (double)m * (double)n * (double)k;
    int reps = flops >= 1e11 ? 3 : flops >= 1.6e10 ? 5 : 9;
    double max_ref = 0, mean_ref = 0;
    /* C starts non-zero: every kernel computes C += A B (split-K adds its
     * partial sums into C atomically; a site's trials restore C first). */
    for (size_t i = 0; i < elements; i++)
      got[i] = (float)((i * 6007 + 5) % 1013) / 506.5f - 1.0f;
    if (have_cublas) {
      memcpy(want, got, bytes);
      stc_rt_gpu_copy(c_ref, want, bytes, NULL);
      _mlir_ciface_stc_rt_cublas_matmul_f32(&da, &db, &dref);
      stc_rt_gpu_copy(want, c_ref, bytes, NULL);
      for (size_t i = 0; i < elements; i++)
        max_ref = fmax(max_ref, fabs(want[i])), mean_ref += fabs(want[i]) / (double)elements;
      double ms = only ? 0 : time_calls(NULL, &da, &db, &dref, 20, timer);
      printf("%lld,%lld,%lld,cublas_sgemm,-,%.4f,%.1f,0,%s\n", (long long)m,
             (long long)k, (long long)n, ms,
             ms > 0 ? flops / (ms * 1e6) : 0.0, ms > 0 ? "ok" : "timing-failed");
    }
    for (size_t v = v0; v < count && variants[v].m == m && variants[v].k == k &&
                        variants[v].n == n;
         v++) {
      if (only && !strstr(variants[v].name, only))
        continue;
      for (size_t i = 0; i < elements; i++)
        got[i] = (float)((i * 6007 + 5) % 1013) / 506.5f - 1.0f;
      stc_rt_gpu_copy(c, got, bytes, NULL);
      bool pick = strcmp(variants[v].block, "pick") == 0;
      stc_tune_report *reports = NULL;
      size_t before = 0, after = 0;
      if (pick && stc_rt_dispatch_reports(&reports, &before) == STC_OK)
        stc_tune_reports_free(reports, before);
      variants[v].fn(&da, &db, &dc); /* a site tunes here, on its first call */
      char label[300];
      snprintf(label, sizeof label, "%s", variants[v].block);
      if (pick && stc_rt_dispatch_reports(&reports, &after) == STC_OK) {
        snprintf(label, sizeof label, "pick:%s",
                 after > before ? reports[after - 1].winner : "cached");
        stc_tune_reports_free(reports, after);
      }
      stc_rt_gpu_copy(got, c, bytes, NULL);
      double err = 0, err_scaled = 0;
      bool finite = true, tf32 = strstr(variants[v].name, "tf32") != NULL;
      for (size_t i = 0; i < elements && have_cublas; i++) {
        finite &= isfinite(got[i]);
        err = fmax(err, fabs(got[i] - want[i]) / (fabs(want[i]) + 1e-2 * max_ref));
        err_scaled = fmax(err_scaled, fabs(got[i] - want[i]) / (fabs(want[i]) + mean_ref));
      }
      if (tf32 && have_cublas)
        fprintf(stderr, "tf32-error,%lld,%lld,%lld,%s,%.3e\n", (long long)m, (long long)k,
                (long long)n, variants[v].name, err_scaled);
      double ms = time_calls(variants[v].fn, &da, &db, &dc, only ? 1 : reps, timer);
      const char *status = stc_rt_gpu_last_status(NULL) != STC_OK ? "gpu-error"
                           : !finite || (tf32 ? err_scaled > 1e-2 : err > 1e-3) ? "WRONG"
                           : ms <= 0                                ? "timing-failed"
                                                                    : "ok";
      failures += strcmp(status, "ok") != 0;
      printf("%lld,%lld,%lld,%s,%s,%.4f,%.1f,%.2e,%s\n", (long long)m,
             (long long)k, (long long)n, variants[v].name,
             label, ms, ms > 0 ? flops / (ms * 1e6) : 0.0,
             have_cublas ? err : -1.0, status);
      fflush(stdout);
    }
    stc_rt_gpu_free(a), stc_rt_gpu_free(b), stc_rt_gpu_free(c), stc_rt_gpu_free(c_ref);
    free(host_a), free(host_b), free(want), free(got);
  }
  stc_rt_gpu_timer_destroy(timer);
  stc_rt_dispatch_stats stats;
  stc_rt_dispatch_stats_get(&stats);
  fprintf(stderr,
          "matmul_bench: dispatch: tunes=%llu memory_hits=%llu disk_hits=%llu "
          "cached_calls=%llu reference_fallbacks=%llu\n",
          (unsigned long long)stats.tuner.tunes,
          (unsigned long long)stats.tuner.memory_hits,
          (unsigned long long)stats.tuner.disk_hits,
          (unsigned long long)stats.cached_calls,
          (unsigned long long)stats.reference_fallbacks);
  return failures ? 1 : 0;
}
