/* fleet_bench - one machine of a fleet sharing a Redis tier under the
 * tuning cache (README "Fleet cache (Redis)"); bench/fleet.sh runs many at
 * once and sums their lines.
 *
 * In: the runtime's environment (STC_CACHE_DIR, STC_CACHE_REMOTE, STC_TUNE_*;
 * set by the caller), optional argv[1] = elements per array (default 1<<20)
 * and argv[2] = how long to keep calling, in ms (default 1500). Out: one line
 *   fleet_bench: first_call_ms=X source=tuned|remote|local-disk|reference
 *     picked_up_ms=Y tunes=N calls=C
 * where source says how the first call was answered (cached: a record from
 * disk or, on an empty disk, from Redis; reference: another
 * process held the lease, so this one ran the reference) and picked_up_ms
 * when a later call of a process that started on the reference got the
 * shared decision (-1: never, within the time).
 *
 * The site: y += 2 * x on f32 arrays, one reference and three variants that
 * compute the same bits in different orders (one faster, two slower), called
 * through a static slot as generated code does. */
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

/* Blocks of 64 elements visited with a stride: same results, worse order. */
__attribute__((noinline)) static void axpy_strided(float *xa, float *x,
                                                   int64_t xo, int64_t n,
                                                   int64_t xs, float *ya,
                                                   float *y, int64_t yo,
                                                   int64_t yn, int64_t ys) {
  (void)xa, (void)xs, (void)ya, (void)yn, (void)ys;
  int64_t blocks = n / 64, stride = 61;
  for (int64_t k = 0; k < blocks; k++) {
    int64_t b = (k * stride) % blocks;
    for (int64_t i = b * 64; i < b * 64 + 64; i++)
      y[yo + i] += 2.0f * x[xo + i];
  }
  for (int64_t i = blocks * 64; i < n; i++)
    y[yo + i] += 2.0f * x[xo + i];
}

__attribute__((noinline)) static void axpy_plain(float *xa, float *x,
                                                 int64_t xo, int64_t n,
                                                 int64_t xs, float *ya,
                                                 float *y, int64_t yo,
                                                 int64_t yn, int64_t ys) {
  (void)xa, (void)xs, (void)ya, (void)yn, (void)ys;
  for (int64_t i = 0; i < n; i++)
    y[yo + i] += 2.0f * x[xo + i];
}

/* Two passes over the arrays (the second adds what the first doubled). */
__attribute__((noinline)) static void axpy_two_pass(float *xa, float *x,
                                                    int64_t xo, int64_t n,
                                                    int64_t xs, float *ya,
                                                    float *y, int64_t yo,
                                                    int64_t yn, int64_t ys) {
  axpy_strided(xa, x, xo, n / 2, xs, ya, y, yo, yn, ys);
  axpy_strided(xa, x + n / 2, xo, n - n / 2, xs, ya, y + n / 2, yo, yn, ys);
}

__attribute__((noinline)) static void axpy_backward(float *xa, float *x,
                                                    int64_t xo, int64_t n,
                                                    int64_t xs, float *ya,
                                                    float *y, int64_t yo,
                                                    int64_t yn, int64_t ys) {
  (void)xa, (void)xs, (void)ya, (void)yn, (void)ys;
  for (int64_t i = n; i-- > 0;)
    y[yo + i] += 2.0f * x[xo + i];
}

#define CIFACE(name)                                                          \
  static void name##_ciface(memref1 *x, memref1 *y) {                         \
    name(x->allocated, x->aligned, x->offset, x->sizes[0], x->strides[0],     \
         y->allocated, y->aligned, y->offset, y->sizes[0], y->strides[0]);    \
  }
CIFACE(axpy_strided)
CIFACE(axpy_plain)
CIFACE(axpy_two_pass)
CIFACE(axpy_backward)

typedef void (*axpy_fn)(float *, float *, int64_t, int64_t, int64_t, float *,
                        float *, int64_t, int64_t, int64_t);

static const stc_rt_arg args[2] = {{STC_RT_ARG_INPUT, STC_RT_F32, 1, 0},
                                   {STC_RT_ARG_INOUT, STC_RT_F32, 1, 0}};
static const stc_rt_variant variants[4] = {
    {"reference", "1", (void *)axpy_strided, (void *)axpy_strided_ciface, 0,
     STC_RT_ELIGIBLE_ALWAYS, 0, NULL},
    {"plain", "1", (void *)axpy_plain, (void *)axpy_plain_ciface, 0,
     STC_RT_ELIGIBLE_ALWAYS, 0, NULL},
    {"two_pass", "1", (void *)axpy_two_pass, (void *)axpy_two_pass_ciface, 0,
     STC_RT_ELIGIBLE_ALWAYS, 0, NULL},
    {"backward", "1", (void *)axpy_backward, (void *)axpy_backward_ciface, 0,
     STC_RT_ELIGIBLE_ALWAYS, 0, NULL},
};
static void *slot;
static stc_rt_site site = {STC_RT_DISPATCH_ABI_VERSION, 2, "bench/axpy#fleet",
                           "bench.axpy", args, 4, 0, variants, &slot, NULL};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* What generated code does for a static site. */
static void call_site(float *x, float *y, int64_t n) {
  axpy_fn f = (axpy_fn)__atomic_load_n(&slot, __ATOMIC_ACQUIRE);
  if (f) {
    f(x, x, 0, n, 1, y, y, 0, n, 1);
    return;
  }
  memref1 mx = {x, x, 0, {n}, {1}}, my = {y, y, 0, {n}, {1}};
  uint64_t words[10];
  memcpy(words, &mx, sizeof mx);
  memcpy(words + 5, &my, sizeof my);
  stc_rt_site_enter(&site, words, 10);
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 1 << 20;
  double keep_ms = argc > 2 ? atof(argv[2]) : 1500;
  if (n <= 0 || keep_ms < 0) {
    fprintf(stderr, "usage: fleet_bench [elements > 0] [ms >= 0]\n");
    return 2;
  }
  float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  if (!x || !y)
    return 1;
  for (int64_t i = 0; i < n; i++) {
    x[i] = (float)(i % 7);
    y[i] = 0;
  }
  double start = now_ms();
  call_site(x, y, n);
  double first = now_ms() - start;
  stc_rt_dispatch_stats stats;
  stc_rt_dispatch_stats_get(&stats);
  const char *source = stats.tuner.tunes          ? "tuned"
                       : stats.tuner.disk_hits    ? "cached"
                       : stats.reference_fallbacks ? "reference"
                                                   : "untuned";
  double picked_up = -1;
  long calls = 1;
  bool waiting = !__atomic_load_n(&slot, __ATOMIC_ACQUIRE);
  while (now_ms() - start < keep_ms) {
    call_site(x, y, n);
    calls++;
    if (waiting && __atomic_load_n(&slot, __ATOMIC_ACQUIRE)) {
      picked_up = now_ms() - start;
      waiting = false;
    }
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  stc_rt_dispatch_stats_get(&stats);
  /* Every call added 2*x once: y must be exactly calls * 2 * x. */
  for (int64_t i = 0; i < n; i++)
    if (y[i] != (float)calls * 2.0f * x[i]) {
      fprintf(stderr, "fleet_bench: wrong result at %lld\n", (long long)i);
      return 1;
    }
  printf("fleet_bench: first_call_ms=%.3f source=%s picked_up_ms=%.1f "
         "tunes=%llu disk_hits=%llu calls=%ld\n",
         first, source, picked_up, (unsigned long long)stats.tuner.tunes,
         (unsigned long long)stats.tuner.disk_hits, calls);
  free(x);
  free(y);
  return 0;
}
