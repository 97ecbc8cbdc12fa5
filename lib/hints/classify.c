/* Hot / warm / cold classification of recorded regions (include/stc/hints.h).
 *
 * In:  a snapshot of region records and classification options.
 * Out: the same regions ranked by total time (descending, ties by id), each
 *      with its share, cumulative share, rank and hotness.
 *
 * Share rule (default): walking regions in rank order, a region is hot while
 * the regions ranked above it cover less than hot_share of all time (so the
 * region that crosses the line is hot: the hot set is the smallest prefix that
 * covers hot_share); it is cold once the regions above it already cover
 * cold_share (it lies in the negligible tail); the rest are warm. A region
 * with fewer than min_samples dispatches is cold whatever its share: too few
 * samples are noise, not evidence. When no time was recorded at all there is
 * no evidence of any hot path, so every region is cold.
 * Absolute rule (hot_mean_ns != 0): hot iff mean >= hot_mean_ns, else cold,
 * which reproduces the original store's is_hot decisions.
 * In both rules max_hot caps the hot set; the excess, lowest ranked, is warm. */
#include "stc/hints.h"

#include <stdlib.h>
#include <string.h>

const char *stc_hotness_str(stc_hotness hotness) {
  switch (hotness) {
  case STC_HOTNESS_COLD: return "cold";
  case STC_HOTNESS_WARM: return "warm";
  case STC_HOTNESS_HOT: return "hot";
  }
  return "unknown";
}

void stc_classify_options_init(stc_classify_options *options) {
  if (!options)
    return;
  options->hot_share = 0.90;
  options->cold_share = 0.999;
  options->min_samples = 1;
  options->max_hot = 0;
  options->hot_mean_ns = 0;
}

stc_status stc_classify_options_validate(const stc_classify_options *options,
                                         stc_error *err) {
  if (!options) {
    stc_error_set(err, NULL, 0, 0, "no classification options");
    return STC_ERR_INVALID;
  }
  /* Written so that NaN fails every comparison and is rejected. */
  if (!(options->hot_share > 0.0 && options->hot_share <= 1.0)) {
    stc_error_set(err, NULL, 0, 0, "hot share %g is not in (0, 1]",
                  options->hot_share);
    return STC_ERR_INVALID;
  }
  if (!(options->cold_share >= options->hot_share && options->cold_share <= 1.0)) {
    stc_error_set(err, NULL, 0, 0,
                  "cold share %g is not in [hot share %g, 1]",
                  options->cold_share, options->hot_share);
    return STC_ERR_INVALID;
  }
  return STC_OK;
}

typedef struct rank_key {
  const stc_hints_entry *entry;
  size_t index; /* makes the order total even for duplicate ids */
} rank_key;

static int compare_rank(const void *a, const void *b) {
  const rank_key *x = a, *y = b;
  uint64_t tx = x->entry->record.total_ns, ty = y->entry->record.total_ns;
  if (tx != ty)
    return tx > ty ? -1 : 1;
  int by_id = strcmp(x->entry->region, y->entry->region);
  if (by_id != 0)
    return by_id;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Share of `part` in `whole`, in long double so that sums of uint64 values
 * stay exact, then rounded once to double: 90 of 100 gives exactly the double
 * 0.9 a user writes as hot_share, so boundaries behave as written. */
static double share_of(long double part, long double whole) {
  return whole > 0 ? (double)(part / whole) : 0.0;
}

static stc_hotness share_hotness(const stc_classify_options *options,
                                 double preceding_share, long double all_ns) {
  if (all_ns <= 0)
    return STC_HOTNESS_COLD;
  if (preceding_share < options->hot_share)
    return STC_HOTNESS_HOT;
  if (preceding_share >= options->cold_share)
    return STC_HOTNESS_COLD;
  return STC_HOTNESS_WARM;
}

stc_status stc_classify(const stc_hints_entry *entries, size_t count,
                        const stc_classify_options *options,
                        stc_ranked_region *out, stc_error *err) {
  stc_classify_options defaults;
  if (!options) {
    stc_classify_options_init(&defaults);
    options = &defaults;
  }
  stc_status status = stc_classify_options_validate(options, err);
  if (status != STC_OK)
    return status;
  if (count == 0)
    return STC_OK;
  if (!entries || !out) {
    stc_error_set(err, NULL, 0, 0, "no entries or no output array");
    return STC_ERR_INVALID;
  }
  for (size_t i = 0; i < count; i++) {
    if (!entries[i].region) {
      stc_error_set(err, NULL, 0, 0, "entry %zu has no region id", i);
      return STC_ERR_INVALID;
    }
  }
  if (count > SIZE_MAX / sizeof(rank_key))
    return STC_ERR_NOMEM;
  rank_key *keys = malloc(count * sizeof *keys);
  if (!keys) {
    stc_error_set(err, NULL, 0, 0, "out of memory");
    return STC_ERR_NOMEM;
  }
  long double all_ns = 0;
  for (size_t i = 0; i < count; i++) {
    keys[i].entry = &entries[i];
    keys[i].index = i;
    all_ns += (long double)entries[i].record.total_ns;
  }
  qsort(keys, count, sizeof *keys, compare_rank);

  long double covered_ns = 0;
  double preceding_share = 0.0;
  size_t num_hot = 0;
  for (size_t i = 0; i < count; i++) {
    const stc_hints_entry *entry = keys[i].entry;
    stc_ranked_region *row = &out[i];
    covered_ns += (long double)entry->record.total_ns;
    row->region = entry->region;
    row->record = entry->record;
    row->rank = i + 1;
    row->share = share_of((long double)entry->record.total_ns, all_ns);
    row->cumulative_share = share_of(covered_ns, all_ns);

    stc_hotness hotness;
    if (options->hot_mean_ns != 0)
      hotness = stc_region_record_mean_ns(&entry->record) >= options->hot_mean_ns
                    ? STC_HOTNESS_HOT
                    : STC_HOTNESS_COLD;
    else
      hotness = share_hotness(options, preceding_share, all_ns);
    if (entry->record.dispatch_count < options->min_samples)
      hotness = STC_HOTNESS_COLD;
    if (hotness == STC_HOTNESS_HOT && options->max_hot != 0 &&
        num_hot >= options->max_hot)
      hotness = STC_HOTNESS_WARM;
    if (hotness == STC_HOTNESS_HOT)
      num_hot++;
    row->hotness = hotness;
    preceding_share = row->cumulative_share;
  }
  free(keys);
  return STC_OK;
}
