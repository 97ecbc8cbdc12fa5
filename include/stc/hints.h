/* stc/hints.h - the hot-path hints store (DESIGN.md section 3).
 *
 * A bounded table of per-region records (dispatch count, total ns, max ns,
 * bytes touched) with O(1) record/lookup/eviction (hash map + recency list),
 * plus the classification the scheduling pass uses: hot / warm / cold by share
 * of total recorded time, or the original absolute "mean >= threshold" rule.
 *
 * Thread safety: every stc_hints_* function may be called from any thread at
 * the same time on the same store. stc_classify is a pure function. */
#ifndef STC_HINTS_H
#define STC_HINTS_H

#include "stc/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STC_HINTS_DEFAULT_CAPACITY 256
#define STC_HINTS_DEFAULT_HOT_NS 100000 /* 100 us */

/* One region's accumulated samples. Counters saturate at UINT64_MAX. */
typedef struct stc_region_record {
  uint64_t dispatch_count;
  uint64_t total_ns;
  uint64_t max_ns;
  uint64_t bytes_total;
} stc_region_record;

/* Mean ns per dispatch (integer division); 0 when nothing was recorded. */
uint64_t stc_region_record_mean_ns(const stc_region_record *record);
/* Mean bytes per dispatch; 0 when nothing was recorded. */
uint64_t stc_region_record_mean_bytes(const stc_region_record *record);

typedef struct stc_hints stc_hints;

/* Creates an empty store holding at most `capacity` regions; capacity 0
 * disables recording (every query returns its default). The hot threshold
 * starts at STC_HINTS_DEFAULT_HOT_NS. The caller owns *out. */
stc_status stc_hints_create(size_t capacity, stc_hints **out);
/* Destroys a store; accepts NULL. */
void stc_hints_destroy(stc_hints *hints);

/* Sets / reads the mean-ns threshold of stc_hints_is_hot. */
void stc_hints_set_hot_threshold_ns(stc_hints *hints, uint64_t threshold_ns);
uint64_t stc_hints_hot_threshold_ns(stc_hints *hints);
size_t stc_hints_capacity(stc_hints *hints);

/* Records one dispatch sample: accumulates into the region's record (count+1,
 * total+ns, max, bytes) and makes it the most recent; a new region past
 * capacity evicts the least recently recorded one. Copies `region`.
 * Returns STC_ERR_INVALID for a NULL region, STC_ERR_NOMEM (store unchanged). */
stc_status stc_hints_record(stc_hints *hints, const char *region,
                            uint64_t ns, uint64_t bytes);

/* Adds a whole record (as read from a profile): sums count, total and bytes
 * (saturating), keeps the max of max, bumps recency like stc_hints_record. */
stc_status stc_hints_accumulate(stc_hints *hints, const char *region,
                                const stc_region_record *record);

/* True iff the region's recorded mean is >= the hot threshold. */
bool stc_hints_is_hot(stc_hints *hints, const char *region);
/* Dispatch count, or 0 for an unrecorded region. */
uint64_t stc_hints_dispatch_count(stc_hints *hints, const char *region);
/* Mean ns, or 0 for an unrecorded region. */
uint64_t stc_hints_mean_ns(stc_hints *hints, const char *region);
/* Copies the region's record into *out and returns true, or returns false
 * (leaving *out untouched) when the region is not recorded. */
bool stc_hints_record_for(stc_hints *hints, const char *region,
                          stc_region_record *out);
size_t stc_hints_len(stc_hints *hints);
bool stc_hints_is_empty(stc_hints *hints);
/* Removes every record (capacity and threshold unchanged). */
void stc_hints_clear(stc_hints *hints);

/* One row of a snapshot; region is owned by the snapshot array. */
typedef struct stc_hints_entry {
  char *region;
  stc_region_record record;
} stc_hints_entry;

/* Copies every record, least recent first, into a new array the caller
 * frees with stc_hints_entries_free. *out is NULL when count is 0. */
stc_status stc_hints_snapshot(stc_hints *hints, stc_hints_entry **out,
                              size_t *count);
/* Frees a snapshot array; accepts NULL. */
void stc_hints_entries_free(stc_hints_entry *entries, size_t count);

/* ---- classification ---- */

typedef enum stc_hotness {
  STC_HOTNESS_COLD = 0,
  STC_HOTNESS_WARM = 1,
  STC_HOTNESS_HOT = 2,
} stc_hotness;

/* "cold" / "warm" / "hot". */
const char *stc_hotness_str(stc_hotness hotness);

typedef struct stc_classify_options {
  /* Hot = the smallest set of regions, by total time, covering this share
   * of all recorded time. Default 0.90; (0, 1]. */
  double hot_share;
  /* Regions outside this cumulative share are cold. Default 0.999; must be
   * >= hot_share and <= 1. */
  double cold_share;
  /* Regions with fewer dispatches are cold. Default 1. */
  uint64_t min_samples;
  /* At most this many hot regions (the rest of the hot set becomes warm);
   * 0 = no cap. Default 0. */
  size_t max_hot;
  /* Non-zero selects the original absolute rule instead of shares: hot iff
   * mean >= hot_mean_ns (and min_samples holds), everything else cold.
   * Default 0. */
  uint64_t hot_mean_ns;
} stc_classify_options;

/* Fills the defaults above. */
void stc_classify_options_init(stc_classify_options *options);
/* STC_OK, or STC_ERR_INVALID with a reason in err (may be NULL). */
stc_status stc_classify_options_validate(const stc_classify_options *options,
                                         stc_error *err);

/* One classified region. region points into the caller's input. */
typedef struct stc_ranked_region {
  const char *region;
  stc_region_record record;
  double share;            /* total_ns / all recorded ns (0 when all is 0) */
  double cumulative_share; /* share of this and every higher-ranked region */
  size_t rank;             /* 1 = most total time; ties broken by id */
  stc_hotness hotness;
} stc_ranked_region;

/* Ranks `count` entries by total time (descending, ties by region id) and
 * classifies each; writes `count` rows to out in rank order. Pure. */
stc_status stc_classify(const stc_hints_entry *entries, size_t count,
                        const stc_classify_options *options,
                        stc_ranked_region *out, stc_error *err);

#ifdef __cplusplus
}
#endif

#endif /* STC_HINTS_H */
