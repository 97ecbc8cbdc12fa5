/* The hot-path hints store (include/stc/hints.h, DESIGN.md section 3).
 *
 * In:  dispatch samples (region id, ns, bytes) or whole records from a
 *      profile, from any thread.
 * Out: per-region records, hot/cold answers and least-recent-first snapshots.
 *
 * Layout: a chained hash table keyed by region id finds a node in O(1); every
 * node also sits on an intrusive doubly linked recency list (oldest at the
 * head, newest at the tail), so a re-record moves a node to the tail and an
 * eviction unlinks the head, both O(1). One mutex guards the whole store:
 * every operation is a handful of pointer updates, so a finer scheme would
 * cost more than it saves. */
#include "stc/hints.h"

#include "stc/hash.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct stc_hints_node {
  char *region;
  uint64_t hash;
  stc_region_record record;
  struct stc_hints_node *bucket_next; /* next node in the same bucket */
  struct stc_hints_node *older;       /* towards the recency head */
  struct stc_hints_node *newer;       /* towards the recency tail */
} stc_hints_node;

struct stc_hints {
  pthread_mutex_t mutex;
  size_t capacity;
  uint64_t hot_threshold_ns;
  stc_hints_node **buckets; /* num_buckets is a power of two (or 0) */
  size_t num_buckets;
  size_t len;
  stc_hints_node *oldest;
  stc_hints_node *newest;
};

/* The table starts small and doubles with the number of regions, so a store
 * created with a huge capacity (used as an unbounded map) costs nothing up
 * front, and the load factor stays <= 1 so a lookup walks O(1) nodes. */
#define STC_HINTS_MIN_BUCKETS 16

static uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t stc_region_record_mean_ns(const stc_region_record *record) {
  if (!record || record->dispatch_count == 0)
    return 0;
  return record->total_ns / record->dispatch_count;
}

uint64_t stc_region_record_mean_bytes(const stc_region_record *record) {
  if (!record || record->dispatch_count == 0)
    return 0;
  return record->bytes_total / record->dispatch_count;
}

stc_status stc_hints_create(size_t capacity, stc_hints **out) {
  if (!out)
    return STC_ERR_INVALID;
  *out = NULL;
  stc_hints *hints = calloc(1, sizeof *hints);
  if (!hints)
    return STC_ERR_NOMEM;
  if (pthread_mutex_init(&hints->mutex, NULL) != 0) {
    free(hints);
    return STC_ERR_NOMEM;
  }
  hints->capacity = capacity;
  hints->hot_threshold_ns = STC_HINTS_DEFAULT_HOT_NS;
  *out = hints;
  return STC_OK;
}

static void free_nodes(stc_hints *hints) {
  stc_hints_node *node = hints->oldest;
  while (node) {
    stc_hints_node *newer = node->newer;
    free(node->region);
    free(node);
    node = newer;
  }
  hints->oldest = hints->newest = NULL;
  hints->len = 0;
  if (hints->buckets)
    memset(hints->buckets, 0, hints->num_buckets * sizeof *hints->buckets);
}

void stc_hints_destroy(stc_hints *hints) {
  if (!hints)
    return;
  free_nodes(hints);
  free(hints->buckets);
  pthread_mutex_destroy(&hints->mutex);
  free(hints);
}

void stc_hints_set_hot_threshold_ns(stc_hints *hints, uint64_t threshold_ns) {
  if (!hints)
    return;
  pthread_mutex_lock(&hints->mutex);
  hints->hot_threshold_ns = threshold_ns;
  pthread_mutex_unlock(&hints->mutex);
}

uint64_t stc_hints_hot_threshold_ns(stc_hints *hints) {
  if (!hints)
    return STC_HINTS_DEFAULT_HOT_NS;
  pthread_mutex_lock(&hints->mutex);
  uint64_t threshold = hints->hot_threshold_ns;
  pthread_mutex_unlock(&hints->mutex);
  return threshold;
}

size_t stc_hints_capacity(stc_hints *hints) {
  /* Immutable after creation: no lock needed. */
  return hints ? hints->capacity : 0;
}

/* ---- hash table and recency list (callers hold the mutex) ---- */

static stc_hints_node *find_node(const stc_hints *hints, const char *region,
                                 uint64_t hash) {
  if (hints->num_buckets == 0)
    return NULL;
  stc_hints_node *node = hints->buckets[hash & (hints->num_buckets - 1)];
  for (; node; node = node->bucket_next)
    if (node->hash == hash && strcmp(node->region, region) == 0)
      return node;
  return NULL;
}

static void unlink_recency(stc_hints *hints, stc_hints_node *node) {
  if (node->older)
    node->older->newer = node->newer;
  else
    hints->oldest = node->newer;
  if (node->newer)
    node->newer->older = node->older;
  else
    hints->newest = node->older;
  node->older = node->newer = NULL;
}

static void append_recency(stc_hints *hints, stc_hints_node *node) {
  node->older = hints->newest;
  node->newer = NULL;
  if (hints->newest)
    hints->newest->newer = node;
  else
    hints->oldest = node;
  hints->newest = node;
}

static void unlink_bucket(stc_hints *hints, stc_hints_node *node) {
  stc_hints_node **link = &hints->buckets[node->hash & (hints->num_buckets - 1)];
  while (*link != node)
    link = &(*link)->bucket_next;
  *link = node->bucket_next;
}

static void link_bucket(stc_hints *hints, stc_hints_node *node) {
  stc_hints_node **head = &hints->buckets[node->hash & (hints->num_buckets - 1)];
  node->bucket_next = *head;
  *head = node;
}

/* Makes room for one more node at load factor <= 1. On allocation failure
 * the table keeps its size: lookups get slower, never wrong, so this never
 * fails a record that could otherwise succeed. */
static void grow_buckets(stc_hints *hints) {
  if (hints->len + 1 <= hints->num_buckets)
    return;
  size_t wanted = hints->num_buckets ? hints->num_buckets * 2 : STC_HINTS_MIN_BUCKETS;
  if (wanted < hints->num_buckets || wanted > SIZE_MAX / sizeof(stc_hints_node *))
    return;
  stc_hints_node **buckets = calloc(wanted, sizeof *buckets);
  if (!buckets)
    return;
  stc_hints_node **old = hints->buckets;
  size_t old_count = hints->num_buckets;
  hints->buckets = buckets;
  hints->num_buckets = wanted;
  for (size_t i = 0; i < old_count; i++) {
    stc_hints_node *node = old[i];
    while (node) {
      stc_hints_node *next = node->bucket_next;
      link_bucket(hints, node);
      node = next;
    }
  }
  free(old);
}

static void evict_oldest(stc_hints *hints) {
  stc_hints_node *victim = hints->oldest;
  unlink_recency(hints, victim);
  unlink_bucket(hints, victim);
  hints->len--;
  free(victim->region);
  free(victim);
}

/* The one write path: stc_hints_record adds a one-sample record,
 * stc_hints_accumulate a whole one. */
static stc_status add_record(stc_hints *hints, const char *region,
                             const stc_region_record *sample) {
  if (!hints || !region || !sample)
    return STC_ERR_INVALID;
  uint64_t hash = stc_hash64_str(region, STC_HASH_SEED);
  pthread_mutex_lock(&hints->mutex);
  if (hints->capacity == 0) {
    pthread_mutex_unlock(&hints->mutex);
    return STC_OK;
  }
  stc_hints_node *node = find_node(hints, region, hash);
  if (node) {
    unlink_recency(hints, node);
  } else {
    /* Allocate before evicting so that a failed allocation leaves the store
     * exactly as it was. */
    node = calloc(1, sizeof *node);
    char *copy = node ? strdup(region) : NULL;
    if (!copy) {
      free(node);
      pthread_mutex_unlock(&hints->mutex);
      return STC_ERR_NOMEM;
    }
    node->region = copy;
    node->hash = hash;
    if (hints->len >= hints->capacity)
      evict_oldest(hints);
    grow_buckets(hints);
    if (hints->num_buckets == 0) {
      /* Not even the first table could be allocated. */
      free(node->region);
      free(node);
      pthread_mutex_unlock(&hints->mutex);
      return STC_ERR_NOMEM;
    }
    link_bucket(hints, node);
    hints->len++;
  }
  stc_region_record *record = &node->record;
  record->dispatch_count = saturating_add(record->dispatch_count, sample->dispatch_count);
  record->total_ns = saturating_add(record->total_ns, sample->total_ns);
  if (sample->max_ns > record->max_ns)
    record->max_ns = sample->max_ns;
  record->bytes_total = saturating_add(record->bytes_total, sample->bytes_total);
  append_recency(hints, node);
  pthread_mutex_unlock(&hints->mutex);
  return STC_OK;
}

stc_status stc_hints_record(stc_hints *hints, const char *region, uint64_t ns,
                            uint64_t bytes) {
  stc_region_record sample = {
      .dispatch_count = 1, .total_ns = ns, .max_ns = ns, .bytes_total = bytes};
  return add_record(hints, region, &sample);
}

stc_status stc_hints_accumulate(stc_hints *hints, const char *region,
                                const stc_region_record *record) {
  return add_record(hints, region, record);
}

/* Copies the region's record under the lock; false when not recorded. */
static bool lookup(stc_hints *hints, const char *region, stc_region_record *out,
                   uint64_t *threshold) {
  if (!hints || !region)
    return false;
  uint64_t hash = stc_hash64_str(region, STC_HASH_SEED);
  pthread_mutex_lock(&hints->mutex);
  stc_hints_node *node = find_node(hints, region, hash);
  if (node)
    *out = node->record;
  if (threshold)
    *threshold = hints->hot_threshold_ns;
  pthread_mutex_unlock(&hints->mutex);
  return node != NULL;
}

bool stc_hints_is_hot(stc_hints *hints, const char *region) {
  stc_region_record record;
  uint64_t threshold = 0;
  if (!lookup(hints, region, &record, &threshold))
    return false;
  return stc_region_record_mean_ns(&record) >= threshold;
}

uint64_t stc_hints_dispatch_count(stc_hints *hints, const char *region) {
  stc_region_record record;
  return lookup(hints, region, &record, NULL) ? record.dispatch_count : 0;
}

uint64_t stc_hints_mean_ns(stc_hints *hints, const char *region) {
  stc_region_record record;
  return lookup(hints, region, &record, NULL) ? stc_region_record_mean_ns(&record) : 0;
}

bool stc_hints_record_for(stc_hints *hints, const char *region,
                          stc_region_record *out) {
  stc_region_record record;
  if (!lookup(hints, region, &record, NULL))
    return false;
  if (out)
    *out = record;
  return true;
}

size_t stc_hints_len(stc_hints *hints) {
  if (!hints)
    return 0;
  pthread_mutex_lock(&hints->mutex);
  size_t len = hints->len;
  pthread_mutex_unlock(&hints->mutex);
  return len;
}

bool stc_hints_is_empty(stc_hints *hints) { return stc_hints_len(hints) == 0; }

void stc_hints_clear(stc_hints *hints) {
  if (!hints)
    return;
  pthread_mutex_lock(&hints->mutex);
  free_nodes(hints);
  pthread_mutex_unlock(&hints->mutex);
}

void stc_hints_entries_free(stc_hints_entry *entries, size_t count) {
  if (!entries)
    return;
  for (size_t i = 0; i < count; i++)
    free(entries[i].region);
  free(entries);
}

stc_status stc_hints_snapshot(stc_hints *hints, stc_hints_entry **out,
                              size_t *count) {
  if (!hints || !out || !count)
    return STC_ERR_INVALID;
  *out = NULL;
  *count = 0;
  pthread_mutex_lock(&hints->mutex);
  size_t len = hints->len;
  if (len == 0) {
    pthread_mutex_unlock(&hints->mutex);
    return STC_OK;
  }
  stc_hints_entry *entries = calloc(len, sizeof *entries);
  if (!entries) {
    pthread_mutex_unlock(&hints->mutex);
    return STC_ERR_NOMEM;
  }
  size_t filled = 0;
  for (stc_hints_node *node = hints->oldest; node; node = node->newer) {
    entries[filled].region = strdup(node->region);
    if (!entries[filled].region) {
      pthread_mutex_unlock(&hints->mutex);
      stc_hints_entries_free(entries, filled);
      return STC_ERR_NOMEM;
    }
    entries[filled].record = node->record;
    filled++;
  }
  pthread_mutex_unlock(&hints->mutex);
  *out = entries;
  *count = filled;
  return STC_OK;
}
