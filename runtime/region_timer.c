/* region_timer.c - the region timer instrumented code calls
 * (stc_rt_region_begin / stc_rt_region_end, ABI in stc/rt_region.h).
 *
 * In: (region id, token, bytes) from compiled code on any thread, and tuning
 * time from the dispatch code (stc_rt__tuning_ns_add). Out: per-region
 * samples (count, total ns, max ns, bytes), merged on demand into a hints
 * store (stc_rt__regions_collect) for rt.c to export.
 *
 * Token design. A thread has its own "steady-state clock": CLOCK_MONOTONIC
 * minus the tuning ns accumulated on that thread so far. begin returns that
 * clock's reading; end reads it again and the difference is the region's
 * time with every tuning interval that happened on this thread in between
 * removed, however deeply regions nest, with no stack to keep. A token only
 * means something on the thread that produced it; a negative difference
 * (token from another thread, corrupted token) records 0 ns.
 *
 * Data layout. Each thread owns a shard: a singly linked list of entries
 * (one per distinct region id, id copied into the entry) that only the owner
 * appends to, published with a release store so a reader can walk it without
 * a lock, plus two owner-only hash tables: one keyed by the id POINTER (the
 * ids are constant strings of the compiled module, so a pointer hit is the
 * common case) and one keyed by the id's string hash (the same id at another
 * address, and the first sighting of a pointer). Counters are relaxed atomics
 * written only by the owner: a plain load+store on the hot path, and readers
 * on other threads see whole values. No lock is taken on the hot path except
 * once per new (thread, region).
 *
 * Lifetime. Shards are linked into a global live list under g_lock. When a
 * thread exits, a pthread key destructor moves its entries into the retired
 * shard (under g_lock) so its samples survive; the retired shard is folded by
 * string, so memory stays bounded by the number of distinct regions however
 * many threads come and go. Readers hold g_lock while walking shards, so a
 * shard is never freed under them.
 *
 * Requirement on ids: the bytes at a region id pointer must not change while
 * the process runs (string constants of the loaded module). */
#include "rt_internal.h"

#include "stc/hash.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct region_entry {
  struct region_entry *next; /* immutable once published */
  uint64_t id_hash;
  _Atomic uint64_t count;
  _Atomic uint64_t total_ns;
  _Atomic uint64_t max_ns;
  _Atomic uint64_t bytes;
  char id[]; /* owned copy */
} region_entry;

/* Owner-only open-addressing table (linear probing, power-of-two size, at
 * most half full). Keys are either id pointers or string hashes; a table
 * whose growth failed keeps working at its old size (lookups fall back to
 * the list when it is full), so running out of memory never loses data. */
typedef struct slot {
  uintptr_t key; /* 0 = empty */
  region_entry *entry;
} slot;

typedef struct table {
  slot *slots;
  size_t size; /* 0 or a power of two */
  size_t used;
} table;

typedef struct shard {
  _Atomic(region_entry *) head; /* readers walk from here without a lock */
  size_t num_entries;           /* owner-only (retired: under g_lock) */
  table by_pointer;
  table by_hash; /* several entries may share a hash: probe until empty */
  struct shard *prev, *next;    /* live list, under g_lock */
} shard;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static shard *g_live;   /* under g_lock */
static shard g_retired; /* under g_lock */
static _Atomic uint64_t g_dropped;

static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_key;
static bool g_key_ok;

static _Thread_local shard *tls_shard;
static _Thread_local uint64_t tls_tuning_ns;

/* ---- clock ---- */

static uint64_t monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * UINT64_C(1000000000) + (uint64_t)now.tv_nsec;
}

/* The calling thread's steady-state clock (see "Token design"). */
static uint64_t steady_ns(void) { return monotonic_ns() - tls_tuning_ns; }

void stc_rt__tuning_ns_add(uint64_t ns) { tls_tuning_ns += ns; }

/* ---- owner-only tables ---- */

static size_t slot_of(uintptr_t key, size_t size) {
  return (size_t)(((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> 17) &
         (size - 1);
}

static void table_free(table *t) {
  free(t->slots);
  memset(t, 0, sizeof *t);
}

/* Inserts without growing; false when the table is full. */
static bool table_put_nogrow(table *t, uintptr_t key, region_entry *entry) {
  if (t->size == 0 || t->used + 1 > t->size / 2)
    return false;
  size_t i = slot_of(key, t->size);
  while (t->slots[i].key != 0)
    i = (i + 1) & (t->size - 1);
  t->slots[i].key = key;
  t->slots[i].entry = entry;
  t->used++;
  return true;
}

/* Inserts, growing when half full; false only when growth failed (the
 * caller then relies on the list walk). */
static bool table_put(table *t, uintptr_t key, region_entry *entry) {
  if (table_put_nogrow(t, key, entry))
    return true;
  size_t new_size = t->size ? t->size * 2 : 64;
  slot *slots = calloc(new_size, sizeof *slots);
  if (!slots)
    return false;
  table grown = {slots, new_size, 0};
  for (size_t i = 0; i < t->size; i++)
    if (t->slots[i].key != 0)
      table_put_nogrow(&grown, t->slots[i].key, t->slots[i].entry);
  free(t->slots);
  *t = grown;
  return table_put_nogrow(t, key, entry);
}

static region_entry *lookup_pointer(const shard *s, const char *id) {
  const table *t = &s->by_pointer;
  if (t->size == 0)
    return NULL;
  size_t i = slot_of((uintptr_t)id, t->size);
  for (;;) {
    uintptr_t key = t->slots[i].key;
    if (key == (uintptr_t)id)
      return t->slots[i].entry;
    if (key == 0)
      return NULL;
    i = (i + 1) & (t->size - 1);
  }
}

/* Hash 0 is the empty-slot marker; fold it onto 1. */
static uint64_t id_hash_of(const char *id) {
  uint64_t hash = stc_hash64_str(id, STC_HASH_SEED);
  return hash ? hash : 1;
}

static region_entry *lookup_string(const shard *s, const char *id,
                                   uint64_t hash) {
  const table *t = &s->by_hash;
  if (t->used == s->num_entries && t->size != 0) {
    size_t i = slot_of((uintptr_t)hash, t->size);
    for (; t->slots[i].key != 0; i = (i + 1) & (t->size - 1))
      if (t->slots[i].key == (uintptr_t)hash &&
          strcmp(t->slots[i].entry->id, id) == 0)
        return t->slots[i].entry;
    return NULL;
  }
  /* The index missed some entries (a growth failed): walk the list. */
  for (region_entry *e = atomic_load_explicit(&s->head, memory_order_relaxed);
       e; e = e->next)
    if (e->id_hash == hash && strcmp(e->id, id) == 0)
      return e;
  return NULL;
}

/* Links an initialized entry into s (owner, or retired under g_lock). */
static void shard_link(shard *s, region_entry *e) {
  e->next = atomic_load_explicit(&s->head, memory_order_relaxed);
  atomic_store_explicit(&s->head, e, memory_order_release);
  s->num_entries++;
  if (s->by_hash.used + 1 == s->num_entries)
    table_put(&s->by_hash, (uintptr_t)e->id_hash, e);
}

static region_entry *entry_create(const char *id, uint64_t hash) {
  size_t length = strlen(id);
  region_entry *e = malloc(sizeof *e + length + 1);
  if (!e)
    return NULL;
  e->next = NULL;
  e->id_hash = hash;
  atomic_init(&e->count, 0);
  atomic_init(&e->total_ns, 0);
  atomic_init(&e->max_ns, 0);
  atomic_init(&e->bytes, 0);
  memcpy(e->id, id, length + 1);
  return e;
}

static uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a + b < a ? UINT64_MAX : a + b;
}

/* Adds to counters that only one thread (or g_lock holder) writes: a relaxed
 * load and store, never a locked read-modify-write. */
static void counter_add(_Atomic uint64_t *counter, uint64_t amount) {
  uint64_t old = atomic_load_explicit(counter, memory_order_relaxed);
  atomic_store_explicit(counter, saturating_add(old, amount),
                        memory_order_relaxed);
}

static void counter_max(_Atomic uint64_t *counter, uint64_t value) {
  if (value > atomic_load_explicit(counter, memory_order_relaxed))
    atomic_store_explicit(counter, value, memory_order_relaxed);
}

/* ---- thread lifetime ---- */

/* Moves every entry of a dying thread's shard into the retired shard. */
static void fold_into_retired(shard *dying) {
  region_entry *e = atomic_load_explicit(&dying->head, memory_order_relaxed);
  while (e) {
    region_entry *next = e->next;
    region_entry *kept = lookup_string(&g_retired, e->id, e->id_hash);
    if (kept) {
      uint64_t count = atomic_load_explicit(&e->count, memory_order_relaxed);
      counter_add(&kept->count, count);
      counter_add(&kept->total_ns,
                  atomic_load_explicit(&e->total_ns, memory_order_relaxed));
      counter_max(&kept->max_ns,
                  atomic_load_explicit(&e->max_ns, memory_order_relaxed));
      counter_add(&kept->bytes,
                  atomic_load_explicit(&e->bytes, memory_order_relaxed));
      free(e);
    } else {
      shard_link(&g_retired, e); /* reuses the allocation: cannot fail */
    }
    e = next;
  }
  atomic_store_explicit(&dying->head, NULL, memory_order_relaxed);
}

static void shard_thread_exit(void *arg) {
  shard *s = arg;
  pthread_mutex_lock(&g_lock);
  if (s->prev)
    s->prev->next = s->next;
  else
    g_live = s->next;
  if (s->next)
    s->next->prev = s->prev;
  fold_into_retired(s);
  pthread_mutex_unlock(&g_lock);
  table_free(&s->by_pointer);
  table_free(&s->by_hash);
  free(s);
  tls_shard = NULL;
}

/* A fork while another thread holds g_lock would leave the child's lock
 * held forever (its exit-time export would hang): hold it across fork. */
static void lock_for_fork(void) { pthread_mutex_lock(&g_lock); }
static void unlock_after_fork(void) { pthread_mutex_unlock(&g_lock); }

static void create_key(void) {
  g_key_ok = pthread_key_create(&g_key, shard_thread_exit) == 0;
  pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
}

/* The calling thread's shard, created on first use; NULL without memory. */
static shard *thread_shard(void) {
  if (tls_shard)
    return tls_shard;
  pthread_once(&g_key_once, create_key);
  stc_rt__exit_hook_install();
  shard *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  atomic_init(&s->head, NULL);
  /* Without a key the shard stays live (never retired) until exit: its
   * samples are still merged; only its memory is not reclaimed. */
  if (g_key_ok)
    pthread_setspecific(g_key, s);
  pthread_mutex_lock(&g_lock);
  s->next = g_live;
  if (g_live)
    g_live->prev = s;
  g_live = s;
  pthread_mutex_unlock(&g_lock);
  tls_shard = s;
  return s;
}

/* The slow path of end: first sighting of this id pointer on this thread. */
static region_entry *resolve_entry(shard *s, const char *id) {
  uint64_t hash = id_hash_of(id);
  region_entry *e = lookup_string(s, id, hash);
  if (!e) {
    e = entry_create(id, hash);
    if (!e)
      return NULL;
    shard_link(s, e);
  }
  /* A caller that breaks the contract and passes a fresh pointer each time
   * would grow the pointer table without bound: start it over instead. */
  if (s->by_pointer.used >= 4 * s->num_entries + 64)
    table_free(&s->by_pointer);
  table_put(&s->by_pointer, (uintptr_t)id, e); /* failure: slow path again */
  return e;
}

/* ---- the ABI ---- */

int64_t stc_rt_region_begin(const char *id) {
  (void)id;
  return (int64_t)steady_ns();
}

void stc_rt_region_end(const char *id, int64_t token, int64_t bytes) {
  uint64_t end = steady_ns();
  int64_t elapsed = (int64_t)(end - (uint64_t)token);
  if (!id)
    return;
  shard *s = tls_shard ? tls_shard : thread_shard();
  region_entry *e = s ? lookup_pointer(s, id) : NULL;
  if (!e && s)
    e = resolve_entry(s, id);
  if (!e) {
    atomic_fetch_add_explicit(&g_dropped, 1, memory_order_relaxed);
    return;
  }
  uint64_t ns = elapsed > 0 ? (uint64_t)elapsed : 0;
  counter_add(&e->count, 1);
  counter_add(&e->total_ns, ns);
  counter_max(&e->max_ns, ns);
  counter_add(&e->bytes, bytes > 0 ? (uint64_t)bytes : 0);
}

/* ---- readers ---- */

static size_t count_entries(const shard *s) {
  size_t n = 0;
  for (region_entry *e = atomic_load_explicit(&s->head, memory_order_acquire);
       e; e = e->next)
    n++;
  return n;
}

static stc_status merge_shard(const shard *s, stc_hints *hints,
                              uint64_t *samples) {
  for (region_entry *e = atomic_load_explicit(&s->head, memory_order_acquire);
       e; e = e->next) {
    stc_region_record record = {
        .dispatch_count = atomic_load_explicit(&e->count, memory_order_relaxed),
        .total_ns = atomic_load_explicit(&e->total_ns, memory_order_relaxed),
        .max_ns = atomic_load_explicit(&e->max_ns, memory_order_relaxed),
        .bytes_total = atomic_load_explicit(&e->bytes, memory_order_relaxed),
    };
    if (record.dispatch_count == 0)
      continue; /* reset since: not part of the profile */
    stc_status status = stc_hints_accumulate(hints, e->id, &record);
    if (status != STC_OK)
      return status;
    *samples = saturating_add(*samples, record.dispatch_count);
  }
  return STC_OK;
}

stc_status stc_rt__regions_collect(stc_hints **out, uint64_t *samples) {
  if (!out)
    return STC_ERR_INVALID;
  *out = NULL;
  uint64_t merged = 0;
  pthread_mutex_lock(&g_lock);
  /* Counting and merging under one hold of g_lock: no shard can be retired
   * in between, and the sum over shards bounds the distinct regions, so the
   * store never evicts. New regions on live threads may appear meanwhile;
   * they are not yet counted and the walk below may see them; +64 slack
   * keeps those few from evicting others. */
  size_t bound = count_entries(&g_retired) + 64;
  for (shard *s = g_live; s; s = s->next)
    bound += count_entries(s);
  stc_hints *hints = NULL;
  stc_status status = stc_hints_create(bound, &hints);
  if (status == STC_OK)
    status = merge_shard(&g_retired, hints, &merged);
  for (shard *s = g_live; s && status == STC_OK; s = s->next)
    status = merge_shard(s, hints, &merged);
  pthread_mutex_unlock(&g_lock);
  if (status != STC_OK) {
    stc_hints_destroy(hints);
    return status;
  }
  *out = hints;
  if (samples)
    *samples = merged;
  return STC_OK;
}

static void reset_shard(shard *s) {
  for (region_entry *e = atomic_load_explicit(&s->head, memory_order_acquire);
       e; e = e->next) {
    atomic_store_explicit(&e->count, 0, memory_order_relaxed);
    atomic_store_explicit(&e->total_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&e->max_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&e->bytes, 0, memory_order_relaxed);
  }
}

void stc_rt_regions_reset(void) {
  pthread_mutex_lock(&g_lock);
  reset_shard(&g_retired);
  for (shard *s = g_live; s; s = s->next)
    reset_shard(s);
  pthread_mutex_unlock(&g_lock);
  atomic_store_explicit(&g_dropped, 0, memory_order_relaxed);
}

uint64_t stc_rt_regions_dropped(void) {
  return atomic_load_explicit(&g_dropped, memory_order_relaxed);
}
