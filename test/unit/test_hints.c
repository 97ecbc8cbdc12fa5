/* Unit tests of the hot-path hints store and its classification
 * (include/stc/hints.h): every test of the original store, ported, plus
 * saturation, O(1) eviction at scale, concurrent recording, and the share
 * rule on known distributions. */
#include "stc_test.h"

#include "stc/hints.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static stc_hints *new_hints(size_t capacity) {
  stc_hints *hints = NULL;
  if (stc_hints_create(capacity, &hints) != STC_OK)
    return NULL;
  return hints;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- ported from the original store's tests ---- */

STC_TEST(hints_empty_returns_defaults) {
  stc_hints *hints = new_hints(STC_HINTS_DEFAULT_CAPACITY);
  STC_CHECK(hints);
  stc_region_record record = {7, 7, 7, 7};
  STC_CHECK(stc_hints_is_empty(hints));
  STC_CHECK_EQ_U64(stc_hints_len(hints), 0);
  STC_CHECK(!stc_hints_is_hot(hints, "any-region"));
  STC_CHECK_EQ_U64(stc_hints_dispatch_count(hints, "any-region"), 0);
  STC_CHECK_EQ_U64(stc_hints_mean_ns(hints, "any-region"), 0);
  STC_CHECK(!stc_hints_record_for(hints, "any-region", &record));
  STC_CHECK_EQ_U64(record.dispatch_count, 7); /* untouched on a miss */
  STC_CHECK_EQ_U64(stc_hints_capacity(hints), 256);
  STC_CHECK_EQ_U64(stc_hints_hot_threshold_ns(hints), 100000);
  stc_hints_destroy(hints);
  stc_hints_destroy(NULL);
}

STC_TEST(hints_record_accumulates_running_mean_and_max) {
  stc_hints *hints = new_hints(STC_HINTS_DEFAULT_CAPACITY);
  STC_CHECK(hints);
  STC_CHECK_EQ_INT(stc_hints_record(hints, "matmul", 1000, 100), STC_OK);
  STC_CHECK_EQ_INT(stc_hints_record(hints, "matmul", 3000, 300), STC_OK);
  STC_CHECK_EQ_INT(stc_hints_record(hints, "matmul", 2000, 200), STC_OK);
  stc_region_record record;
  STC_CHECK(stc_hints_record_for(hints, "matmul", &record));
  STC_CHECK_EQ_U64(record.dispatch_count, 3);
  STC_CHECK_EQ_U64(record.total_ns, 6000);
  STC_CHECK_EQ_U64(record.max_ns, 3000);
  STC_CHECK_EQ_U64(record.bytes_total, 600);
  STC_CHECK_EQ_U64(stc_region_record_mean_ns(&record), 2000);
  STC_CHECK_EQ_U64(stc_region_record_mean_bytes(&record), 200);
  STC_CHECK_EQ_U64(stc_hints_mean_ns(hints, "matmul"), 2000);
  STC_CHECK_EQ_U64(stc_hints_dispatch_count(hints, "matmul"), 3);
  STC_CHECK_EQ_U64(stc_hints_len(hints), 1);
  stc_region_record empty = {0};
  STC_CHECK_EQ_U64(stc_region_record_mean_ns(&empty), 0);
  STC_CHECK_EQ_U64(stc_region_record_mean_bytes(&empty), 0);
  stc_hints_destroy(hints);
}

STC_TEST(hints_is_hot_uses_recorded_mean) {
  stc_hints *hints = new_hints(STC_HINTS_DEFAULT_CAPACITY);
  STC_CHECK(hints);
  stc_hints_set_hot_threshold_ns(hints, 1000);
  STC_CHECK_EQ_U64(stc_hints_hot_threshold_ns(hints), 1000);
  stc_hints_record(hints, "region", 500, 0);
  STC_CHECK(!stc_hints_is_hot(hints, "region"));
  stc_hints_record(hints, "region", 2000, 0);
  /* mean = (500 + 2000) / 2 = 1250 >= 1000 */
  STC_CHECK(stc_hints_is_hot(hints, "region"));
  stc_hints_destroy(hints);
}

/* The default rule is "mean >= 100 us": exactly at the threshold is hot. */
STC_TEST(hints_default_threshold_is_mean_at_least_100us) {
  stc_hints *hints = new_hints(STC_HINTS_DEFAULT_CAPACITY);
  STC_CHECK(hints);
  stc_hints_record(hints, "below", 99999, 0);
  stc_hints_record(hints, "at", 100000, 0);
  stc_hints_record(hints, "mixed", 199999, 0);
  stc_hints_record(hints, "mixed", 0, 0); /* mean 99999 (integer division) */
  STC_CHECK(!stc_hints_is_hot(hints, "below"));
  STC_CHECK(stc_hints_is_hot(hints, "at"));
  STC_CHECK(!stc_hints_is_hot(hints, "mixed"));
  STC_CHECK(!stc_hints_is_hot(hints, "never-recorded"));
  stc_hints_destroy(hints);
}

STC_TEST(hints_lru_evicts_oldest_when_capacity_reached) {
  stc_hints *hints = new_hints(2);
  STC_CHECK(hints);
  stc_hints_record(hints, "a", 100, 10);
  stc_hints_record(hints, "b", 200, 20);
  stc_hints_record(hints, "c", 300, 30);
  STC_CHECK_EQ_U64(stc_hints_len(hints), 2);
  STC_CHECK(!stc_hints_record_for(hints, "a", NULL));
  STC_CHECK(stc_hints_record_for(hints, "b", NULL));
  STC_CHECK(stc_hints_record_for(hints, "c", NULL));
  stc_hints_destroy(hints);
}

STC_TEST(hints_lru_recency_promotes_on_repeat_record) {
  stc_hints *hints = new_hints(2);
  STC_CHECK(hints);
  stc_hints_record(hints, "a", 100, 10);
  stc_hints_record(hints, "b", 200, 20);
  stc_hints_record(hints, "a", 100, 10); /* a becomes most recent */
  stc_hints_record(hints, "c", 300, 30);
  STC_CHECK(stc_hints_record_for(hints, "a", NULL));
  STC_CHECK(!stc_hints_record_for(hints, "b", NULL));
  STC_CHECK(stc_hints_record_for(hints, "c", NULL));
  STC_CHECK_EQ_U64(stc_hints_dispatch_count(hints, "a"), 2);
  stc_hints_destroy(hints);
}

STC_TEST(hints_capacity_zero_disables_recording) {
  stc_hints *hints = new_hints(0);
  STC_CHECK(hints);
  STC_CHECK_EQ_INT(stc_hints_record(hints, "a", 100, 10), STC_OK);
  stc_region_record record = {1, 2, 3, 4};
  STC_CHECK_EQ_INT(stc_hints_accumulate(hints, "a", &record), STC_OK);
  STC_CHECK(stc_hints_is_empty(hints));
  STC_CHECK(!stc_hints_is_hot(hints, "a"));
  STC_CHECK_EQ_U64(stc_hints_dispatch_count(hints, "a"), 0);
  stc_hints_entry *entries = (stc_hints_entry *)&record;
  size_t count = 9;
  STC_CHECK_EQ_INT(stc_hints_snapshot(hints, &entries, &count), STC_OK);
  STC_CHECK(entries == NULL);
  STC_CHECK_EQ_U64(count, 0);
  stc_hints_destroy(hints);
}

/* ---- beyond the original ---- */

STC_TEST(hints_counters_saturate) {
  stc_hints *hints = new_hints(4);
  STC_CHECK(hints);
  stc_hints_record(hints, "r", UINT64_MAX - 5, UINT64_MAX - 1);
  stc_hints_record(hints, "r", 10, 10);
  stc_region_record record;
  STC_CHECK(stc_hints_record_for(hints, "r", &record));
  STC_CHECK_EQ_U64(record.total_ns, UINT64_MAX);
  STC_CHECK_EQ_U64(record.bytes_total, UINT64_MAX);
  STC_CHECK_EQ_U64(record.max_ns, UINT64_MAX - 5);
  STC_CHECK_EQ_U64(record.dispatch_count, 2);
  stc_region_record huge = {UINT64_MAX, 1, 1, 1};
  STC_CHECK_EQ_INT(stc_hints_accumulate(hints, "r", &huge), STC_OK);
  STC_CHECK(stc_hints_record_for(hints, "r", &record));
  STC_CHECK_EQ_U64(record.dispatch_count, UINT64_MAX);
  STC_CHECK_EQ_U64(record.total_ns, UINT64_MAX);
  stc_hints_destroy(hints);
}

STC_TEST(hints_accumulate_sums_keeps_max_and_bumps_recency) {
  stc_hints *hints = new_hints(2);
  STC_CHECK(hints);
  stc_region_record first = {.dispatch_count = 4, .total_ns = 400, .max_ns = 150, .bytes_total = 40};
  stc_region_record second = {.dispatch_count = 6, .total_ns = 900, .max_ns = 120, .bytes_total = 60};
  STC_CHECK_EQ_INT(stc_hints_accumulate(hints, "a", &first), STC_OK);
  stc_hints_record(hints, "b", 1, 1);
  STC_CHECK_EQ_INT(stc_hints_accumulate(hints, "a", &second), STC_OK); /* a most recent */
  stc_hints_record(hints, "c", 1, 1);                                  /* evicts b */
  stc_region_record record;
  STC_CHECK(stc_hints_record_for(hints, "a", &record));
  STC_CHECK_EQ_U64(record.dispatch_count, 10);
  STC_CHECK_EQ_U64(record.total_ns, 1300);
  STC_CHECK_EQ_U64(record.max_ns, 150);
  STC_CHECK_EQ_U64(record.bytes_total, 100);
  STC_CHECK_EQ_U64(stc_hints_mean_ns(hints, "a"), 130);
  STC_CHECK(!stc_hints_record_for(hints, "b", NULL));
  STC_CHECK_EQ_INT(stc_hints_accumulate(hints, "a", NULL), STC_ERR_INVALID);
  stc_hints_destroy(hints);
}

STC_TEST(hints_snapshot_is_least_recent_first_and_clear_keeps_settings) {
  stc_hints *hints = new_hints(8);
  STC_CHECK(hints);
  stc_hints_set_hot_threshold_ns(hints, 5);
  stc_hints_record(hints, "x", 1, 0);
  stc_hints_record(hints, "y", 2, 0);
  stc_hints_record(hints, "z", 3, 0);
  stc_hints_record(hints, "x", 4, 0);
  stc_hints_entry *entries = NULL;
  size_t count = 0;
  STC_CHECK_EQ_INT(stc_hints_snapshot(hints, &entries, &count), STC_OK);
  STC_CHECK_EQ_U64(count, 3);
  STC_CHECK_STR_EQ(entries[0].region, "y");
  STC_CHECK_STR_EQ(entries[1].region, "z");
  STC_CHECK_STR_EQ(entries[2].region, "x");
  STC_CHECK_EQ_U64(entries[2].record.total_ns, 5);
  stc_hints_entries_free(entries, count);
  stc_hints_entries_free(NULL, 0);
  stc_hints_clear(hints);
  STC_CHECK(stc_hints_is_empty(hints));
  STC_CHECK(!stc_hints_record_for(hints, "x", NULL));
  STC_CHECK_EQ_U64(stc_hints_capacity(hints), 8);
  STC_CHECK_EQ_U64(stc_hints_hot_threshold_ns(hints), 5);
  stc_hints_record(hints, "x", 9, 0); /* usable after clear */
  STC_CHECK(stc_hints_is_hot(hints, "x"));
  stc_hints_destroy(hints);
}

STC_TEST(hints_rejects_null_arguments) {
  stc_hints *hints = new_hints(4);
  STC_CHECK(hints);
  STC_CHECK_EQ_INT(stc_hints_record(hints, NULL, 1, 1), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_hints_record(NULL, "a", 1, 1), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_hints_create(4, NULL), STC_ERR_INVALID);
  STC_CHECK(!stc_hints_is_hot(hints, NULL));
  STC_CHECK(!stc_hints_is_hot(NULL, "a"));
  STC_CHECK_EQ_U64(stc_hints_len(NULL), 0);
  STC_CHECK(stc_hints_is_empty(hints));
  /* The empty string is a valid, distinct region id. */
  STC_CHECK_EQ_INT(stc_hints_record(hints, "", 1, 1), STC_OK);
  STC_CHECK_EQ_U64(stc_hints_dispatch_count(hints, ""), 1);
  stc_hints_destroy(hints);
}

/* 100k distinct regions through a 256-slot store: must keep exactly the last
 * 256, least recent first. */
STC_TEST(hints_many_regions_keep_the_most_recent) {
  stc_hints *hints = new_hints(256);
  STC_CHECK(hints);
  char name[32];
  for (int i = 0; i < 100000; i++) {
    snprintf(name, sizeof name, "region-%d", i);
    STC_CHECK_EQ_INT(stc_hints_record(hints, name, (uint64_t)i, 1), STC_OK);
  }
  STC_CHECK_EQ_U64(stc_hints_len(hints), 256);
  STC_CHECK(!stc_hints_record_for(hints, "region-0", NULL));
  STC_CHECK(!stc_hints_record_for(hints, "region-99743", NULL));
  STC_CHECK(stc_hints_record_for(hints, "region-99744", NULL));
  STC_CHECK(stc_hints_record_for(hints, "region-99999", NULL));
  stc_hints_entry *entries = NULL;
  size_t count = 0;
  STC_CHECK_EQ_INT(stc_hints_snapshot(hints, &entries, &count), STC_OK);
  STC_CHECK_EQ_U64(count, 256);
  int in_order = 1;
  for (size_t i = 0; i < count; i++) {
    snprintf(name, sizeof name, "region-%d", 99744 + (int)i);
    in_order = in_order && strcmp(entries[i].region, name) == 0 &&
               entries[i].record.total_ns == 99744 + i;
  }
  stc_hints_entries_free(entries, count);
  STC_CHECK(in_order);
  stc_hints_destroy(hints);
}

/* O(1) sanity: a large store under constant eviction. A linear scan per
 * record or per eviction would need ~10^10 string comparisons here (minutes);
 * the hash map + recency list needs well under a second, even under ASan. */
STC_TEST(hints_record_and_evict_are_constant_time) {
  enum { CAPACITY = 50000, REGIONS = 200000 };
  stc_hints *hints = new_hints(CAPACITY);
  STC_CHECK(hints);
  char name[32];
  double start = now_seconds();
  for (int i = 0; i < REGIONS; i++) {
    snprintf(name, sizeof name, "r%d", i);
    STC_CHECK_EQ_INT(stc_hints_record(hints, name, 1, 0), STC_OK);
    /* Re-record a region near the recency head: a bump that a scan-based
     * list would pay for in full. */
    if (i >= CAPACITY) {
      snprintf(name, sizeof name, "r%d", i - CAPACITY + 1);
      STC_CHECK(stc_hints_dispatch_count(hints, name) == 1);
    }
  }
  double elapsed = now_seconds() - start;
  STC_CHECK_EQ_U64(stc_hints_len(hints), CAPACITY);
  STC_CHECK(stc_hints_record_for(hints, "r199999", NULL));
  STC_CHECK(!stc_hints_record_for(hints, "r149999", NULL));
  STC_CHECK(stc_hints_record_for(hints, "r150000", NULL));
  fprintf(stderr, "200k records with 150k evictions: %.3f s\n", elapsed);
  STC_CHECK(elapsed < 5.0);
  stc_hints_destroy(hints);
}

/* ---- concurrency ---- */

enum { THREADS = 8, SAMPLES_PER_THREAD = 20000 };

typedef struct worker {
  stc_hints *hints;
  int index;
  int failures;
} worker;

static void *record_worker(void *arg) {
  worker *w = arg;
  char own[32];
  snprintf(own, sizeof own, "own-%d", w->index);
  for (int i = 0; i < SAMPLES_PER_THREAD; i++) {
    if (stc_hints_record(w->hints, "shared", (uint64_t)w->index + 1, 2) != STC_OK)
      w->failures++;
    if (stc_hints_record(w->hints, own, 10, 0) != STC_OK)
      w->failures++;
    /* Readers run concurrently with writers. */
    (void)stc_hints_is_hot(w->hints, "shared");
    (void)stc_hints_mean_ns(w->hints, own);
  }
  return NULL;
}

STC_TEST_THREADED(hints_concurrent_records_are_exact) {
  stc_hints *hints = new_hints(64);
  STC_CHECK(hints);
  pthread_t threads[THREADS];
  worker workers[THREADS];
  for (int t = 0; t < THREADS; t++) {
    workers[t] = (worker){hints, t, 0};
    STC_CHECK(pthread_create(&threads[t], NULL, record_worker, &workers[t]) == 0);
  }
  for (int t = 0; t < THREADS; t++)
    pthread_join(threads[t], NULL);
  for (int t = 0; t < THREADS; t++)
    STC_CHECK_EQ_INT(workers[t].failures, 0);
  stc_region_record record;
  STC_CHECK(stc_hints_record_for(hints, "shared", &record));
  STC_CHECK_EQ_U64(record.dispatch_count, (uint64_t)THREADS * SAMPLES_PER_THREAD);
  /* sum over threads of (t + 1) * samples = 36 * samples */
  STC_CHECK_EQ_U64(record.total_ns, 36ull * SAMPLES_PER_THREAD);
  STC_CHECK_EQ_U64(record.max_ns, THREADS);
  STC_CHECK_EQ_U64(record.bytes_total, 2ull * THREADS * SAMPLES_PER_THREAD);
  for (int t = 0; t < THREADS; t++) {
    char own[32];
    snprintf(own, sizeof own, "own-%d", t);
    STC_CHECK_EQ_U64(stc_hints_dispatch_count(hints, own), SAMPLES_PER_THREAD);
  }
  STC_CHECK_EQ_U64(stc_hints_len(hints), THREADS + 1);
  stc_hints_destroy(hints);
}

static void *evicting_worker(void *arg) {
  worker *w = arg;
  char name[32];
  for (int i = 0; i < SAMPLES_PER_THREAD; i++) {
    snprintf(name, sizeof name, "t%d-%d", w->index, i % 50);
    if (stc_hints_record(w->hints, name, 1, 0) != STC_OK)
      w->failures++;
    if (i % 1000 == 0) {
      stc_hints_entry *entries = NULL;
      size_t count = 0;
      if (stc_hints_snapshot(w->hints, &entries, &count) != STC_OK || count > 16)
        w->failures++;
      stc_hints_entries_free(entries, count);
    }
  }
  return NULL;
}

/* Eviction, snapshots and lookups racing on a small store keep it bounded
 * and consistent (run under TSan for data races). */
STC_TEST_THREADED(hints_concurrent_eviction_stays_bounded) {
  stc_hints *hints = new_hints(16);
  STC_CHECK(hints);
  pthread_t threads[THREADS];
  worker workers[THREADS];
  for (int t = 0; t < THREADS; t++) {
    workers[t] = (worker){hints, t, 0};
    STC_CHECK(pthread_create(&threads[t], NULL, evicting_worker, &workers[t]) == 0);
  }
  for (int t = 0; t < THREADS; t++)
    pthread_join(threads[t], NULL);
  for (int t = 0; t < THREADS; t++)
    STC_CHECK_EQ_INT(workers[t].failures, 0);
  STC_CHECK_EQ_U64(stc_hints_len(hints), 16);
  stc_hints_destroy(hints);
}

/* ---- classification ---- */

static stc_hints_entry entry(const char *region, uint64_t count, uint64_t total_ns) {
  stc_hints_entry e = {(char *)region, {count, total_ns, count ? total_ns / count : 0, 0}};
  return e;
}

/* Shares 90 / 5 / 3 / 1.9 / 0.1 percent, given out of rank order. */
static void known_distribution(stc_hints_entry out[5]) {
  out[0] = entry("d", 10, 19000);
  out[1] = entry("a", 10, 900000);
  out[2] = entry("e", 10, 1000);
  out[3] = entry("c", 10, 30000);
  out[4] = entry("b", 10, 50000);
}

STC_TEST(classify_known_distribution_by_share) {
  stc_hints_entry entries[5];
  known_distribution(entries);
  stc_classify_options options;
  stc_classify_options_init(&options);
  STC_CHECK(options.hot_share == 0.90 && options.cold_share == 0.999);
  STC_CHECK_EQ_U64(options.min_samples, 1);
  stc_ranked_region rows[5];
  STC_CHECK_EQ_INT(stc_classify(entries, 5, &options, rows, NULL), STC_OK);
  const char *ids = "abcde";
  const stc_hotness expected[5] = {STC_HOTNESS_HOT, STC_HOTNESS_WARM, STC_HOTNESS_WARM,
                                   STC_HOTNESS_WARM, STC_HOTNESS_COLD};
  const double shares[5] = {0.90, 0.05, 0.03, 0.019, 0.001};
  const double cumulative[5] = {0.90, 0.95, 0.98, 0.999, 1.0};
  for (int i = 0; i < 5; i++) {
    STC_CHECK(rows[i].region[0] == ids[i]);
    STC_CHECK_EQ_U64(rows[i].rank, (uint64_t)i + 1);
    STC_CHECK_EQ_INT(rows[i].hotness, expected[i]);
    STC_CHECK(fabs(rows[i].share - shares[i]) < 1e-12);
    STC_CHECK(fabs(rows[i].cumulative_share - cumulative[i]) < 1e-12);
  }
  STC_CHECK_STR_EQ(stc_hotness_str(rows[0].hotness), "hot");
  STC_CHECK_STR_EQ(stc_hotness_str(rows[1].hotness), "warm");
  STC_CHECK_STR_EQ(stc_hotness_str(rows[4].hotness), "cold");

  /* hot_share 0.95: b crosses from 0.90 to 0.95 and joins the hot set. */
  options.hot_share = 0.95;
  STC_CHECK_EQ_INT(stc_classify(entries, 5, &options, rows, NULL), STC_OK);
  STC_CHECK_EQ_INT(rows[0].hotness, STC_HOTNESS_HOT);
  STC_CHECK_EQ_INT(rows[1].hotness, STC_HOTNESS_HOT);
  STC_CHECK_EQ_INT(rows[2].hotness, STC_HOTNESS_WARM);
  /* cold_share 0.98: d (preceded by 0.98) and e are cold. */
  options.cold_share = 0.98;
  STC_CHECK_EQ_INT(stc_classify(entries, 5, &options, rows, NULL), STC_OK);
  STC_CHECK_EQ_INT(rows[2].hotness, STC_HOTNESS_WARM);
  STC_CHECK_EQ_INT(rows[3].hotness, STC_HOTNESS_COLD);
  STC_CHECK_EQ_INT(rows[4].hotness, STC_HOTNESS_COLD);
}

/* The region that crosses hot_share is hot; the one after it is not. */
STC_TEST(classify_region_crossing_hot_share_is_hot) {
  stc_hints_entry entries[3] = {entry("x", 5, 600), entry("y", 5, 350), entry("z", 5, 50)};
  stc_ranked_region rows[3];
  STC_CHECK_EQ_INT(stc_classify(entries, 3, NULL, rows, NULL), STC_OK);
  STC_CHECK_EQ_INT(rows[0].hotness, STC_HOTNESS_HOT);  /* 0.60 */
  STC_CHECK_EQ_INT(rows[1].hotness, STC_HOTNESS_HOT);  /* 0.60 -> 0.95 */
  STC_CHECK_EQ_INT(rows[2].hotness, STC_HOTNESS_WARM); /* preceded by 0.95 */
  /* A single region is always the whole hot set. */
  STC_CHECK_EQ_INT(stc_classify(entries, 1, NULL, rows, NULL), STC_OK);
  STC_CHECK_EQ_INT(rows[0].hotness, STC_HOTNESS_HOT);
  STC_CHECK(rows[0].share == 1.0);
}

STC_TEST(classify_max_hot_demotes_excess_to_warm) {
  /* Four equal quarters: each is preceded by < 0.90, so all four are hot. */
  stc_hints_entry entries[4] = {entry("a", 1, 25), entry("b", 1, 25), entry("c", 1, 25),
                                entry("d", 1, 25)};
  stc_classify_options options;
  stc_classify_options_init(&options);
  stc_ranked_region rows[4];
  STC_CHECK_EQ_INT(stc_classify(entries, 4, &options, rows, NULL), STC_OK);
  for (int i = 0; i < 4; i++)
    STC_CHECK_EQ_INT(rows[i].hotness, STC_HOTNESS_HOT);
  options.max_hot = 2;
  STC_CHECK_EQ_INT(stc_classify(entries, 4, &options, rows, NULL), STC_OK);
  STC_CHECK_EQ_INT(rows[0].hotness, STC_HOTNESS_HOT);
  STC_CHECK_EQ_INT(rows[1].hotness, STC_HOTNESS_HOT);
  STC_CHECK_EQ_INT(rows[2].hotness, STC_HOTNESS_WARM);
  STC_CHECK_EQ_INT(rows[3].hotness, STC_HOTNESS_WARM);
}

STC_TEST(classify_min_samples_makes_regions_cold) {
  stc_hints_entry entries[3] = {entry("big", 2, 800), entry("mid", 50, 150),
                                entry("small", 50, 50)};
  stc_classify_options options;
  stc_classify_options_init(&options);
  options.min_samples = 10;
  stc_ranked_region rows[3];
  STC_CHECK_EQ_INT(stc_classify(entries, 3, &options, rows, NULL), STC_OK);
  STC_CHECK_STR_EQ(rows[0].region, "big");
  STC_CHECK_EQ_INT(rows[0].hotness, STC_HOTNESS_COLD); /* 80% but 2 samples */
  STC_CHECK_EQ_INT(rows[1].hotness, STC_HOTNESS_HOT);  /* crosses 0.8 -> 0.95 */
  STC_CHECK_EQ_INT(rows[2].hotness, STC_HOTNESS_WARM);
  /* Defaults: min_samples 1, so a region that never dispatched is cold. */
  stc_hints_entry idle[2] = {entry("busy", 3, 100), entry("idle", 0, 0)};
  STC_CHECK_EQ_INT(stc_classify(idle, 2, NULL, rows, NULL), STC_OK);
  STC_CHECK_EQ_INT(rows[0].hotness, STC_HOTNESS_HOT);
  STC_CHECK_EQ_INT(rows[1].hotness, STC_HOTNESS_COLD);
}

/* hot_mean_ns selects the original rule: the same decisions as is_hot. */
STC_TEST(classify_absolute_rule_matches_is_hot) {
  stc_hints *hints = new_hints(16);
  STC_CHECK(hints);
  stc_hints_set_hot_threshold_ns(hints, 1000);
  stc_hints_record(hints, "region", 500, 0);
  stc_hints_record(hints, "region", 2000, 0); /* mean 1250: hot */
  stc_hints_record(hints, "slow-once", 999, 0); /* mean 999: not hot */
  stc_hints_record(hints, "exact", 1000, 0);  /* mean 1000: hot */
  for (int i = 0; i < 1000; i++)
    stc_hints_record(hints, "many-fast", 100, 0); /* most total time, not hot */
  stc_hints_entry *entries = NULL;
  size_t count = 0;
  STC_CHECK_EQ_INT(stc_hints_snapshot(hints, &entries, &count), STC_OK);
  STC_CHECK_EQ_U64(count, 4);
  stc_classify_options options;
  stc_classify_options_init(&options);
  options.hot_mean_ns = 1000;
  stc_ranked_region rows[4];
  stc_status status = stc_classify(entries, count, &options, rows, NULL);
  int agree = status == STC_OK;
  for (size_t i = 0; agree && i < count; i++)
    agree = (rows[i].hotness == STC_HOTNESS_HOT) == stc_hints_is_hot(hints, rows[i].region) &&
            rows[i].hotness != STC_HOTNESS_WARM;
  STC_CHECK(agree);
  STC_CHECK_STR_EQ(rows[0].region, "many-fast");
  STC_CHECK_EQ_INT(rows[0].hotness, STC_HOTNESS_COLD);
  /* The share rule disagrees on purpose: many-fast is where the time goes. */
  options.hot_mean_ns = 0;
  STC_CHECK_EQ_INT(stc_classify(entries, count, &options, rows, NULL), STC_OK);
  STC_CHECK_EQ_INT(rows[0].hotness, STC_HOTNESS_HOT);
  stc_hints_entries_free(entries, count);
  stc_hints_destroy(hints);
}

STC_TEST(classify_ties_are_ranked_by_id) {
  stc_hints_entry entries[4] = {entry("m", 1, 100), entry("b", 1, 100), entry("z", 1, 300),
                                entry("a", 1, 100)};
  stc_ranked_region rows[4];
  STC_CHECK_EQ_INT(stc_classify(entries, 4, NULL, rows, NULL), STC_OK);
  STC_CHECK_STR_EQ(rows[0].region, "z");
  STC_CHECK_STR_EQ(rows[1].region, "a");
  STC_CHECK_STR_EQ(rows[2].region, "b");
  STC_CHECK_STR_EQ(rows[3].region, "m");
  STC_CHECK_EQ_U64(rows[3].rank, 4);
  /* Region pointers refer to the caller's input. */
  STC_CHECK(rows[0].region == entries[2].region);
}

STC_TEST(classify_zero_total_time_is_all_cold) {
  stc_hints_entry entries[2] = {entry("a", 5, 0), entry("b", 7, 0)};
  stc_ranked_region rows[2];
  STC_CHECK_EQ_INT(stc_classify(entries, 2, NULL, rows, NULL), STC_OK);
  for (int i = 0; i < 2; i++) {
    STC_CHECK_EQ_INT(rows[i].hotness, STC_HOTNESS_COLD);
    STC_CHECK(rows[i].share == 0.0 && rows[i].cumulative_share == 0.0);
  }
  STC_CHECK_STR_EQ(rows[0].region, "a");
  /* Nothing to classify is fine too. */
  STC_CHECK_EQ_INT(stc_classify(NULL, 0, NULL, NULL, NULL), STC_OK);
  /* Totals near UINT64_MAX do not overflow the shares. */
  stc_hints_entry huge[2] = {entry("h1", 1, UINT64_MAX), entry("h2", 1, UINT64_MAX)};
  STC_CHECK_EQ_INT(stc_classify(huge, 2, NULL, rows, NULL), STC_OK);
  STC_CHECK(fabs(rows[0].share - 0.5) < 1e-12 && fabs(rows[1].cumulative_share - 1.0) < 1e-12);
}

STC_TEST(classify_rejects_invalid_options) {
  stc_classify_options options;
  stc_error err;
  stc_hints_entry entries[1] = {entry("a", 1, 1)};
  stc_ranked_region rows[1];
  const double bad_hot[] = {0.0, -0.1, 1.5, NAN};
  for (size_t i = 0; i < sizeof bad_hot / sizeof bad_hot[0]; i++) {
    stc_classify_options_init(&options);
    options.hot_share = bad_hot[i];
    STC_CHECK_EQ_INT(stc_classify_options_validate(&options, &err), STC_ERR_INVALID);
    STC_CHECK_CONTAINS(err.message, "hot share");
    STC_CHECK_EQ_INT(stc_classify(entries, 1, &options, rows, &err), STC_ERR_INVALID);
  }
  stc_classify_options_init(&options);
  options.cold_share = 0.5; /* below hot_share */
  STC_CHECK_EQ_INT(stc_classify_options_validate(&options, &err), STC_ERR_INVALID);
  STC_CHECK_CONTAINS(err.message, "cold share");
  options.cold_share = 1.01;
  STC_CHECK_EQ_INT(stc_classify_options_validate(&options, NULL), STC_ERR_INVALID);
  stc_classify_options_init(&options);
  options.hot_share = 1.0;
  options.cold_share = 1.0;
  STC_CHECK_EQ_INT(stc_classify_options_validate(&options, &err), STC_OK);
  STC_CHECK_EQ_INT(stc_classify(entries, 1, &options, NULL, &err), STC_ERR_INVALID);
  stc_hints_entry nameless[1] = {{NULL, {1, 1, 1, 1}}};
  STC_CHECK_EQ_INT(stc_classify(nameless, 1, &options, rows, &err), STC_ERR_INVALID);
}
