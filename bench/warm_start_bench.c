/* warm_start_bench - what the runtime costs a process whose tuning cache
 * already holds every site's decision (issue 13: a warm tuned process must
 * start like the default lowering's).
 *
 * Five matmul sites (3 f32 2-D arguments, 5 variants with the names and
 * 64-digit code hashes of the examples' sites, so keys and records have the
 * examples' sizes, about 1.1 KB) are tuned once into a fresh disk cache.
 * Then each "process" is simulated by stc_rt__dispatch_reset (forgets the
 * sites, the tuner and the configuration; the next call reads the
 * environment, opens the cache and loads the records again) followed by the
 * first call of every site: the warm path (workload table, key, cache
 * directory, record read, checksum, deferral of the check; the reference
 * runs on 8x8 to 16x16 matrices, a few microseconds). What a process does
 * once whatever the runtime (the CPU identity, the BLAS probe: STC_BLAS=off
 * here) is outside the loop.
 *
 * In: optional number of processes (argv[1], default 1000). Out: one line
 * with the median, first quartile and minimum microseconds for the five
 * first calls, and a RESULT line.
 *   bench/warm_start_bench [processes] */
#include "../runtime/dispatch_internal.h"
#include "stc/rt.h"
#include "stc/rt_blas.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The f32 2-D memref descriptor (stc/rt_blas.h). */
typedef stc_rt_memref2 memref2;

static void matmul(int repeats, const memref2 *a, const memref2 *b,
                   memref2 *c) {
  const float *pa = a->aligned, *pb = b->aligned;
  float *pc = c->aligned;
  for (int64_t i = 0; i < c->sizes[0]; i++)
    for (int64_t j = 0; j < c->sizes[1]; j++) {
      float acc = 0;
      for (int r = 0; r < repeats; r++) {
        acc = 0;
        for (int64_t k = 0; k < a->sizes[1]; k++)
          acc += pa[i * a->strides[0] + k] * pb[k * b->strides[0] + j];
        __asm__ volatile("" : "+x"(acc)); /* each repeat is work */
      }
      pc[i * c->strides[0] + j] += acc;
    }
}

/* The reference does 4x the work, so a schedule wins the cold tune and
 * the warm path is a disk record's (a non-reference winner, checked later). */
static void reference_ciface(memref2 *a, memref2 *b, memref2 *c) {
  matmul(4, a, b, c);
}
static void fast_ciface(memref2 *a, memref2 *b, memref2 *c) {
  matmul(1, a, b, c);
}
static void slow_ciface(memref2 *a, memref2 *b, memref2 *c) {
  matmul(6, a, b, c);
}

#define HASH "9f2c0a5d3b7e41c8a6d0f1e2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6"
static const stc_rt_arg args[3] = {
    {STC_RT_ARG_INPUT, STC_RT_F32, 2, 0},
    {STC_RT_ARG_INPUT, STC_RT_F32, 2, 0},
    {STC_RT_ARG_INOUT, STC_RT_F32, 2, 0},
};
static const stc_rt_variant variants[5] = {
    {"reference", "1", NULL, (void *)reference_ciface, 0,
     STC_RT_ELIGIBLE_ALWAYS, 0, HASH},
    {"matmul_parallel_reg8x32_vec", "1", NULL, (void *)slow_ciface, 0,
     STC_RT_ELIGIBLE_ALWAYS, 0, HASH},
    {"matmul_pack_vec", "1", NULL, (void *)fast_ciface, 0,
     STC_RT_ELIGIBLE_ALWAYS, 0, HASH},
    {"matmul_tile16_vec", "1", NULL, (void *)slow_ciface, 0,
     STC_RT_ELIGIBLE_ALWAYS, 0, HASH},
    {"matmul_parallel_vec", "1", NULL, (void *)slow_ciface, 0,
     STC_RT_ELIGIBLE_ALWAYS, 0, HASH},
};

#define NUM_SITES 5
#define MAX_N 16
static stc_rt_site sites[NUM_SITES];
static char site_ids[NUM_SITES][64];
static float a_data[NUM_SITES][MAX_N * MAX_N], b_data[NUM_SITES][MAX_N * MAX_N],
    c_data[NUM_SITES][MAX_N * MAX_N];

/* What generated code does on the slow path: every descriptor's words. */
static void call_site(int s) {
  int64_t n = 8 + 2 * s;
  memref2 m[3] = {{a_data[s], a_data[s], 0, {n, n}, {n, 1}},
                  {b_data[s], b_data[s], 0, {n, n}, {n, 1}},
                  {c_data[s], c_data[s], 0, {n, n}, {n, 1}}};
  uint64_t words[21];
  for (int i = 0; i < 3; i++)
    memcpy(&words[7 * i], &m[i], 7 * sizeof(uint64_t));
  stc_rt_site_enter(&sites[s], words, 21);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Removes the cache this run made: <dir>/v1/<records> and both dirs. */
static void remove_cache(const char *dir) {
  char version[4200], path[4500];
  snprintf(version, sizeof version, "%s/v1", dir);
  DIR *d = opendir(version);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (e->d_name[0] == '.')
      continue;
    snprintf(path, sizeof path, "%s/%s", version, e->d_name);
    unlink(path);
  }
  if (d)
    closedir(d);
  rmdir(version);
  rmdir(dir);
}

int main(int argc, char **argv) {
  int processes = argc > 1 ? atoi(argv[1]) : 1000;
  if (processes < 1) {
    fprintf(stderr, "usage: warm_start_bench [processes >= 1]\n");
    return 2;
  }
  const char *tmp = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/stc-warm-start-XXXXXX",
           tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("warm_start_bench: mkdtemp");
    return 1;
  }
  setenv("STC_CACHE_DIR", dir, 1);
  setenv("STC_BLAS", "off", 1);
  unsetenv("STC_TUNE");
  for (int s = 0; s < NUM_SITES; s++) {
    snprintf(site_ids[s], sizeof site_ids[s],
             "bench/model_linalg_matmul_%08x#%d", 0x98f79f99u + (unsigned)s,
             s);
    sites[s] = (stc_rt_site){STC_RT_DISPATCH_ABI_VERSION,
                             3,
                             site_ids[s],
                             "linalg.matmul",
                             args,
                             5,
                             0,
                             variants,
                             NULL,
                             NULL};
    for (int i = 0; i < MAX_N * MAX_N; i++) {
      a_data[s][i] = (float)(i % 7) / 8;
      b_data[s][i] = (float)(i % 5) / 4;
    }
  }
  for (int s = 0; s < NUM_SITES; s++)
    call_site(s); /* the cold start tunes and fills the cache */
  double *times = malloc((size_t)processes * sizeof *times);
  if (!times)
    return 1;
  uint64_t disk_hits = 0;
  for (int p = -20; p < processes; p++) { /* 20 untimed warm-ups */
    stc_rt__dispatch_reset();
    for (int s = 0; s < NUM_SITES; s++)
      sites[s].state = NULL;
    double start = now_us();
    for (int s = 0; s < NUM_SITES; s++)
      call_site(s);
    double elapsed = now_us() - start;
    stc_rt_dispatch_stats stats;
    stc_rt_dispatch_stats_get(&stats);
    disk_hits += stats.tuner.disk_hits;
    if (p >= 0)
      times[p] = elapsed;
  }
  stc_rt__dispatch_reset();
  remove_cache(dir);
  qsort(times, (size_t)processes, sizeof *times, compare_doubles);
  double median = times[processes / 2], q1 = times[processes / 4];
  printf("first calls of %d sites from a warm cache, %d processes: median "
         "%.1f us, q1 %.1f us, min %.1f us; %llu of %llu decisions from "
         "disk\n",
         NUM_SITES, processes, median, q1, times[0],
         (unsigned long long)disk_hits,
         (unsigned long long)(processes + 20) * NUM_SITES);
  printf("RESULT warm_start sites=%d median_us=%.1f min_us=%.1f\n", NUM_SITES,
         median, times[0]);
  free(times);
  bool all_disk = disk_hits == (uint64_t)(processes + 20) * NUM_SITES;
  if (!all_disk)
    fprintf(stderr, "warm_start_bench: not every decision came from the "
                    "disk cache; the figures are not a warm start's\n");
  return all_disk ? 0 : 1;
}
