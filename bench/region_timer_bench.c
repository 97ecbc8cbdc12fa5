/* region_timer_bench - cost of one stc_rt_region_begin/end pair.
 *
 * In: optional iteration count (argv[1], default 10,000,000). Out: a table
 * on stdout: ns per pair for one thread on one region, one thread cycling
 * over 64 regions, 1..8 threads on one shared region id (the per-thread
 * shards mean no shared cache line on the hot path), the bare
 * clock_gettime(CLOCK_MONOTONIC) the timer calls twice, and for contrast
 * stc_hints_record on one shared store (what recording straight into the
 * global store would cost).
 *   bench/region_timer_bench [iterations] */
#include "stc/hints.h"
#include "stc/rt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long iterations = 10000000;
static const char *const shared_id = "bench/shared#00000000";
static char many_ids[64][32];

static void *pairs_one_region(void *arg) {
  (void)arg;
  for (long i = 0; i < iterations; i++)
    stc_rt_region_end(shared_id, stc_rt_region_begin(shared_id), 64);
  return NULL;
}

static void *pairs_many_regions(void *arg) {
  (void)arg;
  for (long i = 0; i < iterations; i++) {
    const char *id = many_ids[i & 63];
    stc_rt_region_end(id, stc_rt_region_begin(id), 64);
  }
  return NULL;
}

static volatile uint64_t sink;
static void *clock_only(void *arg) {
  (void)arg;
  uint64_t sum = 0;
  for (long i = 0; i < iterations; i++)
    sum += now_ns();
  sink = sum;
  return NULL;
}

static stc_hints *g_store;
static void *hints_record(void *arg) {
  (void)arg;
  for (long i = 0; i < iterations; i++)
    stc_hints_record(g_store, shared_id, 100, 64);
  return NULL;
}

/* Runs fn on `threads` threads at once; returns ns per iteration per thread. */
static double run(void *(*fn)(void *), int threads) {
  pthread_t tid[8];
  uint64_t start = now_ns();
  for (int t = 0; t < threads; t++)
    pthread_create(&tid[t], NULL, fn, NULL);
  for (int t = 0; t < threads; t++)
    pthread_join(tid[t], NULL);
  return (double)(now_ns() - start) / (double)iterations;
}

int main(int argc, char **argv) {
  if (argc > 1)
    iterations = atol(argv[1]);
  if (iterations <= 0)
    iterations = 10000000;
  for (int i = 0; i < 64; i++)
    snprintf(many_ids[i], sizeof many_ids[i], "bench/region#%08x", i);
  if (stc_hints_create(STC_HINTS_DEFAULT_CAPACITY, &g_store) != STC_OK)
    return 1;
  run(pairs_one_region, 1); /* warm-up: creates the shard and entry */

  printf("%-46s %12s\n", "case", "ns/iteration");
  printf("%-46s %12.1f\n", "clock_gettime(CLOCK_MONOTONIC) alone",
         run(clock_only, 1));
  printf("%-46s %12.1f\n", "begin/end pair, 1 thread, 1 region",
         run(pairs_one_region, 1));
  printf("%-46s %12.1f\n", "begin/end pair, 1 thread, 64 regions",
         run(pairs_many_regions, 1));
  for (int threads = 2; threads <= 8; threads *= 2) {
    char label[64];
    snprintf(label, sizeof label,
             "begin/end pair, %d threads, 1 shared id (wall)", threads);
    printf("%-46s %12.1f\n", label, run(pairs_one_region, threads));
  }
  printf("%-46s %12.1f\n", "stc_hints_record (shared store), 1 thread",
         run(hints_record, 1));
  printf("%-46s %12.1f\n", "stc_hints_record (shared store), 4 threads",
         run(hints_record, 4));

  stc_region_record record;
  if (stc_rt_region_stats(shared_id, &record))
    printf("recorded %llu pairs of %s\n",
           (unsigned long long)record.dispatch_count, shared_id);
  stc_hints_destroy(g_store);
  return 0;
}
