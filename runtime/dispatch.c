/* dispatch.c - stc_rt_site_enter, the slow path of compiled sites
 * (stc/rt_dispatch.h, docs/dispatch-abi.md).
 *
 * In: a site descriptor and the unpacked words of one call (each argument's
 * 3 + 2*rank words are a C-interface descriptor in memory, so descriptor
 * pointers point into `words`; nothing is copied). Out: the selected
 * variant runs on the caller's arguments; per (site, workload) a decision is
 * published once (an atomic index in the site's workload table, and for a
 * static site the winner's entry in *slot, release-ordered, which the
 * generated fast path then loads); counters, warnings.
 *
 * Data. site->state points to a site_state (created on first call, never
 * freed except by the test-only reset). Its workload table is an immutable
 * array published through an atomic pointer: readers scan it without a lock;
 * adding a workload copies the array under the site mutex and retires the
 * old one (kept until reset, since a reader may still be scanning it). A
 * workload is keyed by each argument's shape, strides and whether its offset
 * is non-zero (element types are fixed per site); its `selected` index is -1
 * until a decision is published.
 *
 * Deferred check (policy check_at_call n >= 2, the default 2; CPU sites).
 * The first call of a workload whose decision comes from a disk record
 * runs the reference alone, as the default lowering would (the winner is
 * not run, so no vendor library loads and no OpenMP team starts), and
 * leaves the winner `pending`; so do its calls up to n-1, and call n checks
 * it on itself
 * (stc_rt__trial_check_on_call: the reference on scratch copies, the
 * winner on the call's arguments) and publishes it, or, on a wrong result,
 * keeps the reference's result and deletes and bans the record
 * (stc_tuner_invalidate). The tuner never sees the deferral: decide()'s
 * runner answers its check_on_call by running the reference on the call
 * (a correct result, reported as passed), so the tuner keeps the record in
 * memory as if checked; nothing here publishes a winner while its
 * workload's check is pending, and every way out of the pending state
 * either checks the winner or invalidates the tuner's copy first.
 *
 * Rent or buy (policy start_cost_ns, the default 3 ms; CPU sites). A
 * pending winner that starts a thread team (STC_RT_VARIANT_STARTS_THREADS)
 * or loads the vendor BLAS, in a process where nothing has done so yet,
 * has a one-time cost its per-call saving must pay back. Its workload
 * keeps running the reference, timing each run, until the time the winner
 * would have saved so far, sum(reference time) x (1 - the record's ratio),
 * reaches start_cost_ns; the call after that checks and switches (and not
 * before check_at_call). So a process too short to pay the cost back runs
 * exactly the reference, and a long one pays at most twice what the better
 * of the two choices in hindsight costs (ski rental). Once any site has
 * started the team or loaded the library the cost is paid: other pending
 * winners of that kind switch at check_at_call. A trust_verified decision
 * follows the same rule without the check (it is kept pending unverified
 * and published when due). check_at_call 1 with a cost to pay defers too. */
#include "dispatch_internal.h"
#include "rt_internal.h"
#include "warm_start.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A site with more workloads than this runs the reference for new ones: the
 * lock-free lookup is a linear scan. */
#define MAX_WORKLOADS_PER_SITE 256

typedef struct workload {
  uint64_t hash;
  size_t key_length; /* words */
  int64_t *key;
  char *text;                    /* the tuner's workload string */
  _Atomic int32_t selected;      /* variant index, -1 = undecided */
  _Atomic int32_t pending;       /* a disk decision's winner whose check was
                                    deferred to a later call, -1 = none
                                    (stored under the site lock; then
                                    `decision` holds it, unverified, once
                                    decide() has it) */
  atomic_bool checking;          /* a call is running pending's check */
  atomic_uint_fast64_t deferred_calls; /* calls after the first while
                                          pending (what call this is) */
  _Atomic uint32_t rent_kind;    /* set before pending: RENT_* of its
                                    winner when it has a cost to earn back */
  atomic_bool trusted_pending;   /* set before pending: a trusted decision
                                    (no check), published once due */
  _Atomic double saving;         /* 1 - the record's ratio (0: unknown or no
                                    gain; the rent is then never paid) */
  atomic_uint_fast64_t rented_ns; /* reference time of the calls that ran it
                                     while pending */
  atomic_uint_fast64_t calls;    /* cached calls through the runtime
                                    (approximate under racing threads) */
  /* The warm-start index (warm_start.c): asked once, on the first call;
   * the calls it answered "deferred" ran the reference alone (how many,
   * and their time), which the tuner's deferral carries on from. */
  atomic_bool warm_asked;
  _Atomic int32_t warm_winner;   /* "deferred": the pending winner, else -1 */
  _Atomic double warm_saving;    /* ... its saving (rent or buy) */
  atomic_bool warm_trusted;      /* ... a trusted decision (no check) */
  _Atomic uint32_t warm_calls;
  atomic_uint_fast64_t warm_rented_ns;
  bool has_decision;             /* under the site lock */
  stc_decision decision;         /* under the site lock; for invalidation */
} workload;

typedef struct workload_table {
  struct workload_table *retired_next;
  size_t count;
  workload *items[];
} workload_table;

typedef struct site_state {
  stc_rt_site *site;
  pthread_mutex_t lock;
  _Atomic(workload_table *) table;
  workload_table *retired; /* under lock */
  /* Set once a call passed check_call: the descriptor is constant, so
   * later calls with the same word count skip the full check. */
  _Atomic uint32_t checked_words; /* 0 = not yet */
  atomic_bool warned;      /* one warning per site */
  atomic_bool checked_all; /* STC_TUNE_CHECK_ALL ran for this site */
  /* stc_rt__warm_site_fingerprint of the site, computed once. */
  _Atomic uint64_t warm_site;
  atomic_bool warm_site_known;
  struct site_state *next; /* registry (g_registry_lock) */
} site_state;

static pthread_mutex_t g_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static site_state *g_sites;

/* One-time costs a winner may bring into a process (rent or buy). */
enum { RENT_NONE, RENT_THREADS, RENT_LIBRARY };
/* Set once a variant that starts threads has run, or been published, in
 * this process (trials included): its team exists, the cost is paid. */
static atomic_bool g_threads_started;
static uint64_t (*g_rent_clock)(void); /* test-only clock, NULL = real */

static atomic_uint_fast64_t g_selections, g_fallbacks, g_checked_variants,
    g_check_mismatches, g_rechecks, g_recheck_invalidations, g_warm_hits;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rent_now(void) {
  return g_rent_clock ? g_rent_clock() : now_ns();
}

void stc_rt__set_rent_clock(uint64_t (*clock)(void)) { g_rent_clock = clock; }

/* The one-time cost kind of variant (RENT_NONE for the reference). */
static uint32_t rent_kind_of(const stc_rt_site *site, size_t variant) {
  if (variant == site->reference)
    return RENT_NONE;
  if (site->variants[variant].eligibility == STC_RT_ELIGIBLE_BLAS)
    return RENT_LIBRARY;
  if (site->variants[variant].flags & STC_RT_VARIANT_STARTS_THREADS)
    return RENT_THREADS;
  return RENT_NONE;
}

/* Whether the cost of kind is still to pay in this process. */
static bool rent_unpaid(uint32_t kind) {
  switch (kind) {
  case RENT_THREADS:
    return !atomic_load_explicit(&g_threads_started, memory_order_acquire);
  case RENT_LIBRARY:
    return !stc_rt__blas_attempted(); /* a load, even a failed one, ran */
  default:
    return false;
  }
}

/* Notes that variant is about to run or be published. */
static void note_runs(const stc_rt_site *site, size_t variant) {
  if (site->variants[variant].flags & STC_RT_VARIANT_STARTS_THREADS &&
      !atomic_load_explicit(&g_threads_started, memory_order_relaxed))
    atomic_store_explicit(&g_threads_started, true, memory_order_release);
}

/* Whether w's pending winner has a start cost to earn back first: a kind
 * whose cost is unpaid, a cost set, a CPU site. */
static bool rent_applies(const stc_rt_site *site, size_t winner,
                         const stc_rt_dispatch_config *config) {
  return config->policy.start_cost_ns > 0 && !stc_rt__site_on_device(site) &&
         rent_unpaid(rent_kind_of(site, winner));
}

/* Whether the time a winner saving `saving` of the reference's would have
 * saved over rented_ns of reference runs pays the start cost. */
static bool rent_paid(double saving, uint64_t rented_ns,
                      const stc_rt_dispatch_config *config) {
  return saving > 0 &&
         (double)rented_ns * saving >= (double)config->policy.start_cost_ns;
}

/* Whether w's pending winner may be checked and switched to now. */
static bool rent_due(const workload *w, const stc_rt_dispatch_config *config) {
  if (!rent_unpaid(atomic_load_explicit(&w->rent_kind, memory_order_relaxed)) ||
      config->policy.start_cost_ns == 0)
    return true;
  return rent_paid(atomic_load_explicit(&w->saving, memory_order_relaxed),
                   atomic_load_explicit(&w->rented_ns, memory_order_relaxed),
                   config);
}

/* The same for the calls the warm-start index answered "deferred": their
 * reference time against the index's saving. */
static bool warm_rent_paid(const workload *w,
                           const stc_rt_dispatch_config *config) {
  return rent_paid(
      atomic_load_explicit(&w->warm_saving, memory_order_relaxed),
      atomic_load_explicit(&w->warm_rented_ns, memory_order_relaxed), config);
}

/* Runs the reference on the call, adding its time to *rent: w->rented_ns
 * while w's winner is pending, w->warm_rented_ns while the warm-start index
 * defers it. */
static void run_reference_timed(const stc_rt_site *site, void *const *desc,
                                atomic_uint_fast64_t *rent) {
  uint64_t start = rent_now();
  stc_rt__call_variant(site, site->reference, desc);
  uint64_t end = rent_now();
  if (end > start)
    atomic_fetch_add_explicit(rent, end - start, memory_order_relaxed);
}

static void run_rented(const stc_rt_site *site, workload *w,
                       void *const *desc) {
  run_reference_timed(site, desc, &w->rented_ns);
}

/* ---- site state ---- */

static site_state *state_of(stc_rt_site *site) {
  site_state *s = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
  if (s)
    return s;
  site_state *fresh = calloc(1, sizeof *fresh);
  if (!fresh)
    return NULL;
  fresh->site = site;
  pthread_mutex_init(&fresh->lock, NULL);
  void *expected = NULL;
  if (!__atomic_compare_exchange_n(&site->state, &expected, fresh, false,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    pthread_mutex_destroy(&fresh->lock);
    free(fresh);
    return expected; /* another thread won */
  }
  pthread_mutex_lock(&g_registry_lock);
  fresh->next = g_sites;
  g_sites = fresh;
  pthread_mutex_unlock(&g_registry_lock);
  return fresh;
}

static const char *site_name(const stc_rt_site *site) {
  return site && site->site_id ? site->site_id : "(unnamed site)";
}

/* Warns once per site (or on every call when no state can be kept). */
static void warn_site(stc_rt_site *site, const char *why) {
  site_state *s = site ? state_of(site) : NULL;
  if (s && atomic_exchange(&s->warned, true))
    return;
  stc_rt__warn("site '%s': %s; running the reference", site_name(site), why);
}

/* ---- checking a call ---- */

typedef enum site_check {
  SITE_OK,             /* tunable */
  SITE_REFERENCE_ONLY, /* descriptors usable, but only the reference runs */
  SITE_UNUSABLE,       /* nothing can be called safely */
} site_check;

/* stc_rt_set_explore_hook's hook, and the site each thread is selecting
 * for (the tuner's hook knows no site). */
static _Atomic(stc_rt_explore_hook) g_explore_hook;
static void *_Atomic g_explore_user;
static _Thread_local stc_rt_site *g_selecting;

void stc_rt_set_explore_hook(stc_rt_explore_hook hook, void *user) {
  atomic_store(&g_explore_user, user);
  atomic_store(&g_explore_hook, hook);
}

void stc_rt__explore_started(void *user) {
  (void)user;
  stc_rt_explore_hook hook = atomic_load(&g_explore_hook);
  if (hook && g_selecting)
    hook(g_selecting, atomic_load(&g_explore_user));
}

/* Validates site and words, and points desc[i] at argument i's words. */
static site_check check_call(const stc_rt_site *site, uint64_t *words,
                             uint32_t num_words, void **desc, char *why,
                             size_t why_size) {
  if (!site->args || !site->variants || site->num_args == 0 ||
      site->num_args > STC_RT_MAX_SITE_ARGS ||
      site->reference >= site->num_variants ||
      !site->variants[site->reference].ciface) {
    snprintf(why, why_size, "malformed site descriptor");
    return SITE_UNUSABLE;
  }
  uint64_t needed = 0;
  bool huge_rank = false, bad_element = false;
  for (uint32_t i = 0; i < site->num_args; i++) {
    uint32_t rank = site->args[i].rank;
    huge_rank |= rank > STC_RT__MAX_RANK;
    bad_element |= stc_rt__element_size(site->args[i].element) == 0;
    if (words && needed + 3 + 2 * (uint64_t)rank <= num_words)
      desc[i] = &words[needed];
    needed += 3 + 2 * (uint64_t)rank;
  }
  if (!words || needed > num_words) {
    snprintf(why, why_size,
             "%" PRIu32 " argument words where the site needs %" PRIu64
             "; not called",
             num_words, needed);
    return SITE_UNUSABLE;
  }
  if (site->abi_version != STC_RT_DISPATCH_ABI_VERSION) {
    snprintf(why, why_size, "dispatch ABI version %" PRIu32 ", runtime has %d",
             site->abi_version, STC_RT_DISPATCH_ABI_VERSION);
    return SITE_REFERENCE_ONLY;
  }
  if (needed != num_words) {
    snprintf(why, why_size,
             "%" PRIu32 " argument words where the arguments' ranks need "
             "%" PRIu64,
             num_words, needed);
    return SITE_REFERENCE_ONLY;
  }
  if (huge_rank) {
    snprintf(why, why_size, "an argument's rank exceeds %d", STC_RT__MAX_RANK);
    return SITE_REFERENCE_ONLY;
  }
  if (bad_element) {
    snprintf(why, why_size, "an argument has an unknown element type");
    return SITE_REFERENCE_ONLY;
  }
  for (uint32_t v = 0; v < site->num_variants; v++)
    if (!site->variants[v].ciface || !site->variants[v].name) {
      snprintf(why, why_size, "variant %" PRIu32 " has no entry or name", v);
      return SITE_REFERENCE_ONLY;
    }
  return SITE_OK;
}

static void run_reference(const stc_rt_site *site, void *const *desc) {
  atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
  stc_rt__call_variant(site, site->reference, desc);
}

/* ---- workloads ---- */

/* The binary workload key of one call; returns its length in words. */
static size_t workload_key(const stc_rt_site *site, void *const *desc,
                           int64_t *key) {
  size_t n = 0;
  for (uint32_t i = 0; i < site->num_args; i++) {
    const int64_t *w = desc[i];
    uint32_t rank = site->args[i].rank;
    key[n++] = w[2] != 0;
    memcpy(&key[n], &w[3], 2 * rank * sizeof(int64_t));
    n += 2 * rank;
  }
  return n;
}

/* A word-at-a-time hash of a key: on the per-call path, where a byte-wise
 * FNV-1a (stc_hash64) cost most of a cached dynamic dispatch. */
static uint64_t key_hash(const int64_t *key, size_t length) {
  uint64_t hash = UINT64_C(0x9E3779B97F4A7C15) ^ length;
  for (size_t i = 0; i < length; i++) {
    hash = (hash ^ (uint64_t)key[i]) * UINT64_C(0xBF58476D1CE4E5B9);
    hash ^= hash >> 31;
  }
  return hash;
}

/* Writes value in decimal at p (at most 20 characters); returns the end. */
static char *put_decimal(char *p, int64_t value) {
  char digits[20];
  size_t n = 0;
  /* Negated as unsigned: INT64_MIN has no positive int64. */
  uint64_t magnitude = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
  do {
    digits[n++] = (char)('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude);
  if (value < 0)
    *p++ = '-';
  while (n)
    *p++ = digits[--n];
  return p;
}

/* Where the workload text goes: `at` NULL only counts. */
typedef struct text_sink {
  char *at;
  size_t length;
} text_sink;

static void sink_put(text_sink *s, const char *bytes, size_t n) {
  if (s->at) {
    memcpy(s->at, bytes, n);
    s->at += n;
  }
  s->length += n;
}

static void sink_decimal(text_sink *s, int64_t value) {
  char digits[21];
  sink_put(s, digits, (size_t)(put_decimal(digits, value) - digits));
}

static void workload_text_to(const stc_rt_site *site, const int64_t *key,
                             text_sink *s) {
  size_t n = 0;
  for (uint32_t i = 0; i < site->num_args; i++) {
    uint32_t rank = site->args[i].rank;
    bool offset = key[n++] != 0;
    if (i)
      sink_put(s, " ", 1);
    const char *element = stc_rt__element_name(site->args[i].element);
    sink_put(s, element, strlen(element));
    sink_put(s, "[", 1);
    for (uint32_t d = 0; d < rank; d++) {
      if (d)
        sink_put(s, "x", 1);
      sink_decimal(s, key[n + d]);
    }
    sink_put(s, ":", 1);
    for (uint32_t d = 0; d < rank; d++) {
      if (d)
        sink_put(s, ",", 1);
      sink_decimal(s, key[n + rank + d]);
    }
    sink_put(s, "]", 1);
    if (offset)
      sink_put(s, "+off", 4);
    n += 2 * rank;
  }
}

/* "f32[32x32:32,1] f32[...]+off ..." - readable, and unique per key.
 * Measured, then written into its allocation: it is on every new
 * workload's first call, where open_memstream and fprintf were most of
 * adding the workload, and a buffer for the longest text (11 KB) put the
 * first call's frames five stack pages deeper than the program's, each a
 * page fault (the tuner's key and the reports carry this text, so its
 * spelling is fixed: test_dispatch workload_text_is_unchanged). */
char *stc_rt__workload_text(const stc_rt_site *site, const int64_t *key) {
  text_sink count = {NULL, 0};
  workload_text_to(site, key, &count);
  char *text = malloc(count.length + 1);
  if (!text)
    return NULL;
  text_sink out = {text, 0};
  workload_text_to(site, key, &out);
  *out.at = 0;
  return text;
}

static workload *table_find(site_state *s, const int64_t *key, size_t length,
                            uint64_t hash) {
  workload_table *t = atomic_load_explicit(&s->table, memory_order_acquire);
  for (size_t i = 0; t && i < t->count; i++) {
    workload *w = t->items[i];
    if (w->hash == hash && w->key_length == length &&
        memcmp(w->key, key, length * sizeof *key) == 0)
      return w;
  }
  return NULL;
}

static void workload_free(workload *w) {
  if (!w)
    return;
  free(w->key);
  free(w->text);
  stc_decision_clear(&w->decision);
  free(w);
}

/* Finds or adds the workload; NULL without memory or past the limit
 * (*full says which). */
static workload *table_add(site_state *s, const int64_t *key, size_t length,
                           uint64_t hash, bool *full) {
  *full = false;
  pthread_mutex_lock(&s->lock);
  workload *w = table_find(s, key, length, hash);
  if (w)
    goto done;
  workload_table *old = atomic_load_explicit(&s->table, memory_order_relaxed);
  size_t count = old ? old->count : 0;
  if (count >= MAX_WORKLOADS_PER_SITE) {
    *full = true;
    goto done;
  }
  workload_table *t =
      malloc(sizeof *t + (count + 1) * sizeof(workload *));
  w = calloc(1, sizeof *w);
  if (w) {
    w->key = malloc(length ? length * sizeof *key : 1);
    w->text = stc_rt__workload_text(s->site, key);
  }
  if (!t || !w || !w->key || !w->text) {
    free(t);
    workload_free(w);
    w = NULL;
    goto done;
  }
  memcpy(w->key, key, length * sizeof *key);
  w->key_length = length;
  w->hash = hash;
  atomic_init(&w->selected, -1);
  atomic_init(&w->pending, -1);
  atomic_init(&w->checking, false);
  atomic_init(&w->deferred_calls, 0);
  atomic_init(&w->saving, 0.0);
  atomic_init(&w->rent_kind, RENT_NONE);
  atomic_init(&w->trusted_pending, false);
  atomic_init(&w->rented_ns, 0);
  atomic_init(&w->warm_asked, false);
  atomic_init(&w->warm_winner, -1);
  atomic_init(&w->warm_saving, 0.0);
  atomic_init(&w->warm_trusted, false);
  atomic_init(&w->warm_calls, 0);
  atomic_init(&w->warm_rented_ns, 0);
  t->retired_next = NULL;
  t->count = count + 1;
  if (count)
    memcpy(t->items, old->items, count * sizeof(workload *));
  t->items[count] = w;
  if (old) {
    old->retired_next = s->retired;
    s->retired = old;
  }
  atomic_store_explicit(&s->table, t, memory_order_release);
done:
  pthread_mutex_unlock(&s->lock);
  return w;
}

/* ---- decisions ---- */

static void publish_slot(stc_rt_site *site, void *entry) {
  if (site->slot)
    __atomic_store_n(site->slot, entry, __ATOMIC_RELEASE);
}

/* Publishes variant `index` for w unless a decision is already there; takes
 * *decision (may be NULL). Returns the index now selected: the reference,
 * with nothing published, while w's winner awaits its deferred check (a
 * call the tuner answered from the memory that check left). */
static size_t publish(site_state *s, workload *w, size_t index,
                      stc_decision *decision,
                      const stc_rt_dispatch_config *config) {
  pthread_mutex_lock(&s->lock);
  int32_t current = atomic_load_explicit(&w->selected, memory_order_relaxed);
  if (current < 0 &&
      atomic_load_explicit(&w->pending, memory_order_relaxed) >= 0) {
    pthread_mutex_unlock(&s->lock);
    stc_decision_clear(decision);
    return s->site->reference;
  }
  if (current < 0) {
    if (decision) {
      stc_decision_clear(&w->decision);
      w->decision = *decision;
      w->has_decision = true;
      memset(decision, 0, sizeof *decision);
    }
    note_runs(s->site, index);
    atomic_store_explicit(&w->selected, (int32_t)index, memory_order_release);
    current = (int32_t)index;
    /* With rechecks on, calls must keep reaching the runtime to be counted. */
    if (config->recheck_every == 0 && s->site->variants[index].entry)
      publish_slot(s->site, s->site->variants[index].entry);
  }
  pthread_mutex_unlock(&s->lock);
  stc_decision_clear(decision);
  return (size_t)current;
}

/* Forgets w's decision (the next call re-tunes) if it still selects index. */
static void unpublish(site_state *s, workload *w, int32_t index) {
  pthread_mutex_lock(&s->lock);
  if (atomic_load_explicit(&w->selected, memory_order_relaxed) == index) {
    atomic_store_explicit(&w->selected, -1, memory_order_release);
    stc_decision_clear(&w->decision);
    w->has_decision = false;
    publish_slot(s->site, NULL);
  }
  pthread_mutex_unlock(&s->lock);
}

/* Prints one line for a decision that needed no exploration (a cache hit,
 * cache-only miss or disabled tuning), so STC_TUNE_REPORT=1 shows where
 * every site's choice came from, not only the tuned ones. */
static void print_decision(const stc_rt_site *site, const workload *w,
                           const stc_decision *decision) {
  fprintf(stderr, "stc: site %s: %s -> %s (%s%s%s)\n", site->site_id, w->text,
          decision->name ? decision->name : "?",
          stc_decision_source_str(decision->source),
          decision->verified ? ", verified" : "",
          decision->trusted ? ", trusted" : "");
}

/* Prints the report of the tune that just finished for (operation, w). */
static void print_report(const stc_rt_site *site, const char *operation,
                         const workload *w) {
  stc_tune_report *reports = NULL;
  size_t count = 0;
  if (stc_rt_dispatch_reports(&reports, &count) != STC_OK)
    return;
  for (size_t i = count; i-- > 0;)
    if (reports[i].operation && reports[i].workload &&
        strcmp(reports[i].operation, operation) == 0 &&
        strcmp(reports[i].workload, w->text) == 0) {
      stc_rt__report_print(&reports[i], site, stderr);
      break;
    }
  stc_tune_reports_free(reports, count);
}

/* "<site id>|<op name>": the tuner's operation. Owned by the caller. */
static char *operation_of(const stc_rt_site *site) {
  const char *op = site->op_name ? site->op_name : "";
  size_t size = strlen(site_name(site)) + strlen(op) + 2;
  char *text = malloc(size);
  if (text)
    snprintf(text, size, "%s|%s", site_name(site), op);
  return text;
}

/* What the exploration order of one decide() looks at. */
typedef struct order_context {
  const stc_rt_site *site;
  const stc_candidate *candidates;
  stc_tuner *tuner;
} order_context;

/* The exploration order (DESIGN.md section 6, Economics), so that a
 * budget cut drops the least promising: eligible vendor-library variants
 * first (often several times faster than any generated schedule), then the
 * variants that won other workloads of the same op kind in this process or
 * on disk (most wins first), then the descriptor's order, which the
 * compiler emits in static-cost order. The tuner asks for it only when it
 * explores, so a cached decision never reads the disk's records. Writes
 * order (capacity = num_variants); returns how many it wrote (0 without
 * memory: the tuner's index order). */
static size_t promising_order(void *user, size_t *order, size_t capacity) {
  const order_context *context = user;
  const stc_rt_site *site = context->site;
  const stc_candidate *candidates = context->candidates;
  size_t count = site->num_variants, n = 0;
  if (capacity < count)
    return 0;
  bool *placed = calloc(count, sizeof *placed);
  if (!placed)
    return 0;
  placed[site->reference] = true; /* the tuner always runs it first */
  for (size_t v = 0; v < count; v++)
    if (!placed[v] && candidates[v].eligible &&
        site->variants[v].eligibility == STC_RT_ELIGIBLE_BLAS) {
      placed[v] = true;
      order[n++] = v;
    }
  stc_win_count *wins = NULL;
  size_t num_wins = 0;
  if (site->op_name && site->op_name[0] &&
      stc_tuner_win_counts(context->tuner, site->op_name, NULL, &wins,
                           &num_wins) ==
          STC_OK) {
    for (size_t i = 0; i < num_wins; i++)
      for (size_t v = 0; v < count; v++)
        if (!placed[v] && strcmp(site->variants[v].name, wins[i].name) == 0) {
          placed[v] = true;
          order[n++] = v;
        }
    stc_win_counts_free(wins, num_wins);
  }
  for (size_t v = 0; v < count; v++)
    if (!placed[v])
      order[n++] = v;
  free(placed);
  return n;
}

/* The code identities of the candidates (stc_candidate.code_identity):
 * each variant's compiled code hash, and for a BLAS variant the identity of
 * the library loaded too. identities[v] is NULL when unknown; the strings
 * are owned by the array (free_identities). NULL without memory. */
static char **code_identities(const stc_rt_site *site) {
  size_t count = site->num_variants;
  char **identities = calloc(count, sizeof *identities);
  if (!identities)
    return NULL;
  for (size_t v = 0; v < count; v++) {
    const stc_rt_variant *variant = &site->variants[v];
    if (!variant->code_hash || !variant->code_hash[0])
      continue;
    const char *library = "";
    if (variant->eligibility == STC_RT_ELIGIBLE_BLAS) {
      /* None loaded: the variant is ineligible, which the key says. */
      library = stc_rt__blas_ineligible_reason() ? "blas=none"
                                                 : stc_rt__blas_identity();
      if (!library)
        continue; /* a library runs, but which one is unknown */
    }
    size_t size = strlen(variant->code_hash) + strlen(library) + 8;
    if ((identities[v] = malloc(size)))
      snprintf(identities[v], size, "code=%s%s%s", variant->code_hash,
               library[0] ? ";" : "", library);
  }
  return identities;
}

static void free_identities(char **identities, size_t count) {
  for (size_t v = 0; identities && v < count; v++)
    free(identities[v]);
  free(identities);
}

/* Whether variant may run on the caller's arguments now: a BLAS variant
 * needs its library loaded (blas.c loads it here, the first time). */
static bool variant_can_run(const stc_rt_site *site, size_t variant) {
  return site->variants[variant].eligibility != STC_RT_ELIGIBLE_BLAS ||
         stc_rt__blas_load(NULL);
}

/* The runner decide() hands the tuner: the trial's, except that with
 * `defer` the check of a disk decision (check_on_call) is deferred: the
 * winner becomes w's pending one (before the tuner keeps the record in
 * memory, so that no call answered from that memory publishes it
 * unchecked) and the call runs the reference, the result the check would
 * have kept had it failed; the tuner is told the check passed. */
typedef struct call_runner {
  stc_trial_runner trial;
  site_state *s;
  workload *w;
  void *const *desc;
  const stc_rt_dispatch_config *config;
  bool defer;    /* in: a CPU site with check_on_call; defers when
                    check_at_call >= 2 or the winner has a start cost to
                    earn back (rent_applies) */
  bool deferred; /* out: the call ran the reference; w->pending is set */
  size_t winner; /* out: ... to this variant */
} call_runner;

static stc_status runner_validate(void *user, size_t reference,
                                  size_t candidate,
                                  const stc_tolerance *tolerance,
                                  stc_validation *outcome, char *message,
                                  size_t message_size) {
  call_runner *r = user;
  note_runs(r->s->site, candidate);
  return r->trial.validate(r->trial.user, reference, candidate, tolerance,
                           outcome, message, message_size);
}

static stc_status runner_measure(void *user, size_t candidate,
                                 uint64_t *elapsed_ns, char *message,
                                 size_t message_size) {
  call_runner *r = user;
  note_runs(r->s->site, candidate);
  return r->trial.measure(r->trial.user, candidate, elapsed_ns, message,
                          message_size);
}

static stc_status runner_check_on_call(void *user, size_t reference,
                                       size_t candidate,
                                       const stc_tolerance *tolerance,
                                       stc_validation *outcome, bool *served,
                                       char *message, size_t message_size) {
  call_runner *r = user;
  bool rent = r->defer && rent_applies(r->s->site, candidate, r->config);
  /* Calls the warm-start index answered ran the reference alone: this call
   * is call `earlier + 1`, and their time counts toward the rent. */
  uint32_t earlier = atomic_load_explicit(&r->w->warm_calls,
                                          memory_order_relaxed);
  bool due = (uint64_t)earlier + 1 >= r->config->policy.check_at_call &&
             (!rent || warm_rent_paid(r->w, r->config));
  if (!r->defer || r->deferred || due) {
    note_runs(r->s->site, candidate);
    return r->trial.check_on_call(r->trial.user, reference, candidate,
                                  tolerance, outcome, served, message,
                                  message_size);
  }
  pthread_mutex_lock(&r->s->lock);
  atomic_store_explicit(&r->w->rent_kind,
                        rent ? rent_kind_of(r->s->site, candidate) : RENT_NONE,
                        memory_order_relaxed);
  atomic_store_explicit(&r->w->trusted_pending, false, memory_order_relaxed);
  atomic_store_explicit(&r->w->saving, 0.0, memory_order_relaxed);
  atomic_store_explicit(
      &r->w->rented_ns,
      atomic_load_explicit(&r->w->warm_rented_ns, memory_order_relaxed),
      memory_order_relaxed);
  atomic_store_explicit(&r->w->deferred_calls, earlier, memory_order_relaxed);
  atomic_store_explicit(&r->w->pending, (int32_t)candidate,
                        memory_order_release);
  pthread_mutex_unlock(&r->s->lock);
  run_rented(r->s->site, r->w, r->desc);
  r->deferred = true;
  r->winner = candidate;
  *served = true;
  *outcome = STC_VALIDATION_PASSED;
  return STC_OK;
}

/* Ends w's pending check of variant index, if it is still pending:
 * publishes the winner (passed; its decision's `verified` as given) or
 * forgets it. The caller has already invalidated the tuner's copy of a
 * forgotten decision. */
static void resolve_pending(site_state *s, workload *w, int32_t index,
                            bool passed, bool verified,
                            const stc_rt_dispatch_config *config) {
  pthread_mutex_lock(&s->lock);
  if (atomic_load_explicit(&w->pending, memory_order_relaxed) == index) {
    atomic_store_explicit(&w->pending, -1, memory_order_relaxed);
    if (passed && atomic_load_explicit(&w->selected, memory_order_relaxed) < 0) {
      note_runs(s->site, (size_t)index);
      w->decision.verified = verified;
      atomic_store_explicit(&w->selected, index, memory_order_release);
      if (config->recheck_every == 0 && s->site->variants[index].entry)
        publish_slot(s->site, s->site->variants[index].entry);
    } else if (!passed) {
      stc_decision_clear(&w->decision);
      w->has_decision = false;
    }
  }
  pthread_mutex_unlock(&s->lock);
}

/* What fraction of the reference's time decision's winner saves per call
 * (1 - its ratio), 0 when unknown or none. */
static double saving_of(const stc_decision *decision) {
  if (!decision->has_ratio || !(decision->ratio > 0) || !(decision->ratio < 1))
    return 0;
  return 1 - decision->ratio;
}

/* STC_TUNE_REPORT's line for a disk decision left pending on its first
 * call. */
static void print_deferral(const stc_rt_site *site, const workload *w,
                           size_t index, const stc_rt_dispatch_config *config) {
  uint32_t kind = atomic_load_explicit(&w->rent_kind, memory_order_relaxed);
  bool trusted = atomic_load_explicit(&w->trusted_pending, memory_order_relaxed);
  if (kind == RENT_NONE) {
    fprintf(stderr,
            "stc: site %s: %s -> %s (disk-cache, check deferred to call "
            "%" PRIu32 "; this call ran the reference)\n",
            site->site_id, w->text, site->variants[index].name,
            config->policy.check_at_call);
    return;
  }
  double saving = atomic_load_explicit(&w->saving, memory_order_relaxed);
  fprintf(stderr,
          "stc: site %s: %s -> %s (disk-cache%s, %s until the time it would "
          "have saved (%.0f%% of the reference's) reaches its start cost "
          "(%s, %.3f ms); this call ran the reference)\n",
          site->site_id, w->text, site->variants[index].name,
          trusted ? ", trusted" : "",
          trusted ? "switch deferred" : "check deferred", 100 * saving,
          kind == RENT_THREADS ? "a thread team" : "loading the vendor BLAS",
          (double)config->policy.start_cost_ns / 1e6);
}

/* Makes a trusted decision's winner w's pending one, unchecked (rent or
 * buy); takes *decision. False when w is decided or pending already. */
static bool defer_trusted(site_state *s, workload *w, stc_decision *decision,
                          const stc_rt_dispatch_config *config) {
  (void)config;
  bool kept = false;
  pthread_mutex_lock(&s->lock);
  if (atomic_load_explicit(&w->selected, memory_order_relaxed) < 0 &&
      atomic_load_explicit(&w->pending, memory_order_relaxed) < 0) {
    stc_decision_clear(&w->decision);
    w->decision = *decision;
    w->has_decision = true;
    memset(decision, 0, sizeof *decision);
    atomic_store_explicit(&w->rent_kind,
                          rent_kind_of(s->site, w->decision.index),
                          memory_order_relaxed);
    atomic_store_explicit(&w->trusted_pending, true, memory_order_relaxed);
    atomic_store_explicit(&w->saving, saving_of(&w->decision),
                          memory_order_relaxed);
    /* As in runner_check_on_call: the warm-start index's calls count. */
    atomic_store_explicit(
        &w->rented_ns,
        atomic_load_explicit(&w->warm_rented_ns, memory_order_relaxed),
        memory_order_relaxed);
    atomic_store_explicit(
        &w->deferred_calls,
        atomic_load_explicit(&w->warm_calls, memory_order_relaxed),
        memory_order_relaxed);
    atomic_store_explicit(&w->pending, (int32_t)w->decision.index,
                          memory_order_release);
    kept = true;
  }
  pthread_mutex_unlock(&s->lock);
  return kept;
}

/* A pending trusted winner whose rent is paid: published unchecked (a BLAS
 * winner whose library does not load is forgotten, as decide() does), and
 * the call runs what is selected. */
static void switch_trusted(site_state *s, workload *w, void *const *desc,
                           const stc_rt_dispatch_config *config) {
  stc_rt_site *site = s->site;
  int32_t index = atomic_load_explicit(&w->pending, memory_order_acquire);
  if (index < 0 || !variant_can_run(site, (size_t)index)) {
    if (index >= 0)
      resolve_pending(s, w, index, false, false, config);
    run_reference(site, desc);
    return;
  }
  resolve_pending(s, w, index, true, true, config);
  if (config->print_reports) {
    pthread_mutex_lock(&s->lock);
    if (w->has_decision)
      print_decision(site, w, &w->decision);
    pthread_mutex_unlock(&s->lock);
  }
  int32_t selected = atomic_load_explicit(&w->selected, memory_order_acquire);
  stc_rt__call_variant(site, selected >= 0 ? (size_t)selected : site->reference,
                       desc);
}

/* ---- the warm-start index ---- */

static uint64_t warm_site_of(site_state *s) {
  if (!atomic_load_explicit(&s->warm_site_known, memory_order_acquire)) {
    atomic_store_explicit(&s->warm_site,
                          stc_rt__warm_site_fingerprint(s->site),
                          memory_order_relaxed);
    atomic_store_explicit(&s->warm_site_known, true, memory_order_release);
  }
  return atomic_load_explicit(&s->warm_site, memory_order_relaxed);
}

/* Remembers for the index what the tuner answered from the disk cache on a
 * call that ran the reference alone (warm_start.c). */
static void warm_note(site_state *s, const workload *w,
                      const stc_rt_dispatch_config *config,
                      stc_rt__warm_answer answer, int64_t record_created) {
  if (!stc_rt__site_on_device(s->site))
    stc_rt__warm_note(config, warm_site_of(s), w->text, answer,
                      record_created);
}

/* Whether the tuner must be asked on this call of a workload the index
 * answered "deferred": on the call the deferral would have checked (or,
 * trusted, switched) on. */
static bool warm_due(const stc_rt_site *site, const workload *w,
                     const stc_rt_dispatch_config *config) {
  int32_t winner = atomic_load_explicit(&w->warm_winner, memory_order_relaxed);
  uint64_t call =
      (uint64_t)atomic_load_explicit(&w->warm_calls, memory_order_relaxed) + 1;
  if (!atomic_load_explicit(&w->warm_trusted, memory_order_relaxed) &&
      call < config->policy.check_at_call)
    return false;
  return !rent_applies(site, (size_t)winner, config) ||
         warm_rent_paid(w, config);
}

/* A call the warm-start index answers: true when it ran the reference
 * here, without the tuner. Asked on a workload's first call: "reference"
 * publishes the reference, as the tuner's answer would have; "deferred" (a
 * winner whose check or start cost waits) leaves the workload undecided and
 * runs the reference, timed, on each call until the one the tuner's
 * deferral would have checked or switched on, which asks the tuner; its
 * deferral carries on with those calls and their time. */
static bool warm_call(site_state *s, workload *w, void *const *desc,
                      const stc_rt_dispatch_config *config) {
  stc_rt_site *site = s->site;
  if (atomic_load_explicit(&w->selected, memory_order_acquire) >= 0 ||
      atomic_load_explicit(&w->pending, memory_order_acquire) >= 0)
    return false;
  if (!atomic_exchange_explicit(&w->warm_asked, true, memory_order_relaxed)) {
    if (stc_rt__site_on_device(site))
      return false;
    stc_rt__warm_answer answer =
        stc_rt__warm_lookup(config, warm_site_of(s), w->text);
    if (answer.outcome == STC_RT__WARM_REFERENCE) {
      atomic_fetch_add_explicit(&g_warm_hits, 1, memory_order_relaxed);
      size_t chosen = publish(s, w, site->reference, NULL, config);
      if (config->print_reports)
        fprintf(stderr, "stc: site %s: %s -> reference (warm-start index)\n",
                site_name(site), w->text);
      stc_rt__call_variant(site, chosen, desc);
      return true;
    }
    if (answer.outcome != STC_RT__WARM_DEFERRED ||
        answer.winner >= site->num_variants || answer.winner == site->reference)
      return false;
    atomic_store_explicit(&w->warm_saving, answer.saving, memory_order_relaxed);
    atomic_store_explicit(&w->warm_trusted, answer.trusted,
                          memory_order_relaxed);
    atomic_store_explicit(&w->warm_winner, (int32_t)answer.winner,
                          memory_order_release);
    atomic_fetch_add_explicit(&g_warm_hits, 1, memory_order_relaxed);
    if (config->print_reports)
      fprintf(stderr,
              "stc: site %s: %s -> %s (warm-start index, %s deferred; this "
              "call ran the reference)\n",
              site_name(site), w->text, site->variants[answer.winner].name,
              answer.trusted ? "switch" : "check");
  } else if (atomic_load_explicit(&w->warm_winner, memory_order_acquire) < 0) {
    return false;
  }
  if (warm_due(site, w, config))
    return false;
  run_reference_timed(site, desc, &w->warm_rented_ns);
  atomic_fetch_add_explicit(&w->warm_calls, 1, memory_order_relaxed);
  return true;
}

/* Asks the tuner for w's variant, runs the trials, publishes. Returns the
 * variant this call runs; *served is set when the call has already run
 * (the check of a disk decision ran it on the caller's arguments). */
/* Not inlined: its frame is allocated only when it runs, not on every
 * first call (stc_rt_site_enter). */
__attribute__((noinline)) static size_t decide(site_state *s, workload *w, void *const *desc,
                     stc_tuner *tuner, const stc_rt_dispatch_config *config,
                     bool *served) {
  stc_rt_site *site = s->site;
  size_t reference = site->reference, count = site->num_variants;
  char environment[4096], message[512] = "";
  stc_candidate *candidates = calloc(count, sizeof *candidates);
  char *operation = operation_of(site);
  char **identities = NULL;
  stc_rt__trial *trial = NULL;
  *served = false;
  if (!candidates || !operation) {
    warn_site(site, "out of memory while building the tuning problem");
    goto fallback; /* not published: a later call may have memory */
  }
  /* Only trust_verified keys by code: otherwise nothing to compute. */
  if (config->policy.trust_verified && !(identities = code_identities(site))) {
    warn_site(site, "out of memory while building the tuning problem");
    goto fallback;
  }
  bool persistent = stc_rt_environment_reliable();
  if (stc_rt_environment(environment, sizeof environment) != STC_OK) {
    snprintf(environment, sizeof environment, "cpu:unknown");
    persistent = false; /* over-long tags: an identity we cannot trust */
  }
  if (stc_rt__site_on_device(site)) /* GPU records name their device */
    stc_rt__gpu_environment(environment, sizeof environment, &persistent);
  for (size_t v = 0; v < count; v++) {
    const stc_rt_variant *variant = &site->variants[v];
    candidates[v].name = variant->name;
    candidates[v].revision = variant->revision;
    candidates[v].workspace_known = variant->workspace_bytes != UINT64_MAX;
    candidates[v].workspace_bytes = variant->workspace_bytes;
    candidates[v].eligible = stc_rt__ineligible_reason(site, v) == NULL;
    candidates[v].code_identity = identities ? identities[v] : NULL;
  }
  stc_status status =
      stc_rt__trial_create(site, desc, &trial, message, sizeof message);
  if (status != STC_OK) {
    warn_site(site, message);
    if (status == STC_ERR_NOMEM)
      goto fallback;
    free(candidates);
    free(operation);
    free_identities(identities, count);
    atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
    return publish(s, w, reference, NULL, config);
  }
  stc_problem problem = {STC_SCOPE_OPERATOR, operation, environment, w->text,
                         NULL, persistent};
  call_runner deferring = {stc_rt__trial_runner(trial), s, w, desc, config,
                           config->policy.check_on_call &&
                               !stc_rt__site_on_device(site),
                           false, 0};
  stc_trial_runner runner = {&deferring, runner_validate, runner_measure,
                             runner_check_on_call};
  stc_tuner_stats before;
  stc_tuner_stats_get(tuner, &before);
  stc_decision decision;
  memset(&decision, 0, sizeof decision);
  stc_error err;
  stc_error_clear(&err);
  uint64_t start = now_ns();
  order_context context = {site, candidates, tuner};
  stc_exploration_order order = {&context, promising_order};
  stc_rt_site *outer = g_selecting; /* a nested select restores it */
  g_selecting = site;
  status = stc_tuner_select_ordered(tuner, &problem, candidates, count,
                                    reference, &order, &runner, &decision,
                                    &err);
  g_selecting = outer;
  stc_rt__tuning_ns_add(now_ns() - start);
  atomic_fetch_add_explicit(&g_selections, 1, memory_order_relaxed);
  stc_rt__note_cache_warnings(tuner, before.cache_warnings);
  /* The trial ran a variant on the caller's arguments only through
   * check_on_call, which says so in decision.served. */
  *served = (decision.served && stc_rt__trial_served(trial)) ||
            deferring.deferred;
  char check_message[256];
  snprintf(check_message, sizeof check_message, "%s",
           stc_rt__trial_check_message(trial));
  stc_rt__trial_destroy(trial);
  size_t chosen = reference;
  if (deferring.deferred) {
    /* The call ran the reference; the winner waits for the next call. */
    int32_t index = (int32_t)deferring.winner;
    bool kept = false;
    if (status == STC_OK && decision.source == STC_SOURCE_DISK_CACHE &&
        decision.index == deferring.winner) {
      int64_t created = decision.record_created;
      double saving = saving_of(&decision);
      pthread_mutex_lock(&s->lock);
      if (atomic_load_explicit(&w->pending, memory_order_relaxed) == index) {
        stc_decision_clear(&w->decision);
        w->decision = decision;
        w->decision.verified = false;
        w->has_decision = true;
        atomic_store_explicit(&w->saving, saving_of(&w->decision),
                              memory_order_relaxed);
        memset(&decision, 0, sizeof decision);
        kept = true;
      }
      pthread_mutex_unlock(&s->lock);
      if (kept)
        warm_note(s, w, config,
                  (stc_rt__warm_answer){STC_RT__WARM_DEFERRED,
                                        (uint32_t)index, saving, false},
                  created);
      if (kept && config->print_reports)
        print_deferral(site, w, (size_t)index, config);
    }
    if (!kept) {
      /* An error after the runner deferred, or an invalidation that came
       * first: the tuner's memory must not answer the winner unchecked. */
      if (status == STC_OK)
        stc_tuner_invalidate(tuner, &decision, false);
      else
        warn_site(site, "tuning failed after a deferred check");
      resolve_pending(s, w, index, false, false, config);
    }
    stc_decision_clear(&decision);
  } else if (status != STC_OK) {
    char why[1200];
    snprintf(why, sizeof why, "tuning failed (%s): %s",
             stc_status_str(status), err.message);
    warn_site(site, why);
    atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
    chosen = publish(s, w, reference, NULL, config);
  } else if (decision.source == STC_SOURCE_BUSY ||
             decision.source == STC_SOURCE_NESTED) {
    /* Someone else is tuning: run the reference now, decide later. */
    stc_decision_clear(&decision);
    atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
  } else if (decision.source == STC_SOURCE_CHECK_FAILED) {
    /* The cached winner computed a wrong result here; this call holds the
     * reference's. Nothing is published: the next call selects again. */
    stc_rt__warn("site '%s' [%s]: the cached decision failed its check "
                 "(%s); the call keeps the reference's result, the record "
                 "is deleted and the site selects again",
                 site_name(site), w->text, check_message);
    if (config->print_reports)
      print_decision(site, w, &decision);
    stc_decision_clear(&decision);
    atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
  } else if (decision.trusted && !*served && decision.index < count &&
             decision.index != reference &&
             rent_applies(site, decision.index, config) &&
             !warm_rent_paid(w, config)) {
    /* A trusted winner with a start cost to earn back: the reference runs
     * until it is paid (site_enter publishes it then, unchecked). */
    size_t index = decision.index;
    int64_t created = decision.record_created;
    double saving = saving_of(&decision);
    if (defer_trusted(s, w, &decision, config)) {
      warm_note(s, w, config,
                (stc_rt__warm_answer){STC_RT__WARM_DEFERRED, (uint32_t)index,
                                      saving, true},
                created);
      if (config->print_reports)
        print_deferral(site, w, index, config);
      run_rented(site, w, desc);
      *served = true;
    } else {
      atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
    }
    stc_decision_clear(&decision);
  } else if (!*served && decision.index < count &&
             !variant_can_run(site, decision.index)) {
    /* A BLAS winner (a trusted or unchecked record) whose library, found
     * when eligibility was decided, does not load now (blas.c warned):
     * this call runs the reference; nothing is published, so the next
     * call selects again with BLAS variants ineligible (another key). */
    if (config->print_reports)
      print_decision(site, w, &decision);
    stc_decision_clear(&decision);
    atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
  } else if (atomic_load_explicit(&w->pending, memory_order_acquire) >= 0) {
    /* Another call deferred this workload's check: the winner this answer
     * names (from the memory the deferral left) is not checked yet. */
    stc_decision_clear(&decision);
    atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
  } else {
    bool tuned = decision.source == STC_SOURCE_TUNED;
    bool disk_reference = decision.source == STC_SOURCE_DISK_CACHE &&
                          decision.index == reference;
    int64_t created = decision.record_created;
    if (!tuned && config->print_reports)
      print_decision(site, w, &decision);
    chosen = decision.index < count ? decision.index : reference;
    chosen = publish(s, w, chosen, &decision, config);
    if (disk_reference)
      warm_note(s, w, config,
                (stc_rt__warm_answer){STC_RT__WARM_REFERENCE, 0, 0, false},
                created);
    if (tuned && config->print_reports)
      print_report(site, operation, w);
  }
  free(candidates);
  free(operation);
  free_identities(identities, count);
  return chosen;
fallback:
  free(candidates);
  free(operation);
  free_identities(identities, count);
  atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
  return reference;
}

/* *to = a copy of *from that owns its name and cache key (the site's
 * lock held by the caller); false without memory (*to then holds what
 * was copied, for stc_decision_clear). */
static bool decision_copy(const stc_decision *from, stc_decision *to) {
  *to = *from;
  to->name = strdup(from->name ? from->name : "");
  to->cache_key = strdup(from->cache_key ? from->cache_key : "");
  return to->name && to->cache_key;
}

/* The deferred check of w's pending winner (check_at_call >= 2), on the call
 * being served: the reference on scratch copies of the caller's state, the
 * winner on the caller's arguments; as decide()'s check on the first call
 * would have done. Serves the call in every case: a call that cannot check
 * now (another call is checking, no memory) runs the reference. */
__attribute__((noinline)) static void deferred_check(site_state *s, workload *w, void *const *desc,
                           stc_tuner *tuner,
                           const stc_rt_dispatch_config *config) {
  stc_rt_site *site = s->site;
  size_t reference = site->reference;
  if (atomic_exchange(&w->checking, true)) {
    run_reference(site, desc);
    return;
  }
  stc_decision copy;
  memset(&copy, 0, sizeof copy);
  pthread_mutex_lock(&s->lock);
  int32_t index = atomic_load_explicit(&w->pending, memory_order_relaxed);
  bool ready = index >= 0 && w->has_decision;
  if (ready)
    ready = decision_copy(&w->decision, &copy);
  pthread_mutex_unlock(&s->lock);
  if (!ready) { /* the first call has not stored it yet, or no memory */
    stc_decision_clear(&copy);
    atomic_store(&w->checking, false);
    run_reference(site, desc);
    return;
  }
  char message[512] = "";
  stc_rt__trial *trial = NULL;
  stc_rt__comparison c;
  memset(&c, 0, sizeof c);
  uint64_t start = now_ns();
  stc_status status =
      stc_rt__trial_create(site, desc, &trial, message, sizeof message);
  if (status == STC_OK) {
    note_runs(site, (size_t)index);
    status = stc_rt__trial_check_on_call(trial, reference, (size_t)index,
                                         &config->policy.tolerance, &c);
  }
  bool served = trial && stc_rt__trial_served(trial);
  stc_rt__trial_destroy(trial);
  stc_rt__tuning_ns_add(now_ns() - start);
  size_t runs = reference; /* what the call runs when nothing served it */
  if (status == STC_ERR_NOMEM) {
    /* Still pending: a later call may have memory. */
    atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
  } else if (status == STC_ERR_UNAVAILABLE) {
    /* A BLAS winner whose library does not load now (blas.c warned): as
     * decide() does, nothing is published and the next call selects again,
     * under another key (BLAS variants ineligible), so the tuner's copy of
     * this one is never asked again. */
    resolve_pending(s, w, index, false, false, config);
    atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
  } else if (status != STC_OK) {
    char why[700];
    snprintf(why, sizeof why, "the deferred check of a cached decision "
             "failed (%s): %s", stc_status_str(status), message);
    warn_site(site, why);
    stc_tuner_invalidate(tuner, &copy, false);
    resolve_pending(s, w, index, false, false, config);
    atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
  } else if (!c.supported) {
    /* Over the read-back limit, nothing ran: the tuner's rule for a record
     * it cannot check (used unverified unless validation is required, else
     * deleted, and the next call selects again). */
    if (config->policy.require_validation) {
      stc_tuner_invalidate(tuner, &copy, false);
      resolve_pending(s, w, index, false, false, config);
    } else {
      resolve_pending(s, w, index, true, false, config);
      runs = (size_t)index;
    }
  } else if (c.mismatches) {
    /* Wrong here: this call holds the reference's result. The record is
     * deleted and the winner banned before the workload stops being
     * pending, so no other call publishes it meanwhile. */
    stc_rt__warn("site '%s' [%s]: the cached decision failed its check "
                 "(wrong result: %" PRIu64 " element(s) outside tolerance, "
                 "max error %g); the call keeps the reference's result, the "
                 "record is deleted and the site selects again",
                 site_name(site), w->text, c.mismatches, c.max_error);
    stc_tuner_invalidate(tuner, &copy, true);
    resolve_pending(s, w, index, false, false, config);
    if (config->print_reports)
      fprintf(stderr, "stc: site %s: %s -> %s (check-failed)\n",
              site->site_id, w->text, site->variants[reference].name);
    atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
  } else {
    resolve_pending(s, w, index, true, true, config);
    if (config->print_reports) {
      copy.verified = true;
      print_decision(site, w, &copy);
    }
  }
  stc_decision_clear(&copy);
  atomic_store(&w->checking, false);
  if (!served)
    stc_rt__call_variant(site, runs, desc);
}

/* STC_TUNE_CHECK_ALL: validates every variant against the reference on
 * scratch state and prints one line each plus a summary. */
__attribute__((noinline)) static void check_all(site_state *s, const workload *w, void *const *desc,
                      const stc_rt_dispatch_config *config) {
  stc_rt_site *site = s->site;
  char message[512] = "";
  stc_rt__trial *trial = NULL;
  uint64_t start = now_ns();
  if (stc_rt__trial_create(site, desc, &trial, message, sizeof message) !=
      STC_OK) {
    stc_rt__warn("check-all: site '%s': %s", site_name(site), message);
    return;
  }
  size_t checked = 0, mismatches = 0;
  for (size_t v = 0; v < site->num_variants; v++) {
    const char *name = site->variants[v].name;
    const char *reason = stc_rt__ineligible_reason(site, v);
    if (reason) {
      fprintf(stderr, "stc: check-all: %s [%s] %s: skipped (%s)\n",
              site_name(site), w->text, name, reason);
      continue;
    }
    stc_rt__comparison c;
    stc_tolerance tf32;
    note_runs(site, v);
    if (stc_rt__trial_compare(trial, site->reference, v,
                              stc_rt__variant_tolerance(site, v, &config->policy.tolerance,
                                                        &tf32),
                              &c) ==
        STC_ERR_UNAVAILABLE) {
      reason = stc_rt__ineligible_reason(site, v);
      fprintf(stderr, "stc: check-all: %s [%s] %s: skipped (%s)\n",
              site_name(site), w->text, name,
              reason ? reason : "it cannot run");
      continue;
    }
    checked++;
    if (!c.supported)
      fprintf(stderr,
              "stc: check-all: %s [%s] %s: unsupported (%" PRIu64
              " bytes over the read-back limit)\n",
              site_name(site), w->text, name, c.compared_bytes);
    else if (c.mismatches) {
      mismatches++;
      fprintf(stderr,
              "stc: check-all: %s [%s] %s: FAIL (%" PRIu64
              " mismatches, max error %g)\n",
              site_name(site), w->text, name, c.mismatches, c.max_error);
    } else {
      fprintf(stderr, "stc: check-all: %s [%s] %s: pass (max error %g)\n",
              site_name(site), w->text, name, c.max_error);
    }
  }
  fprintf(stderr, "stc: check-all: %zu variants, %zu mismatches (site %s)\n",
          checked, mismatches, site_name(site));
  stc_rt__trial_destroy(trial);
  atomic_fetch_add_explicit(&g_checked_variants, checked, memory_order_relaxed);
  atomic_fetch_add_explicit(&g_check_mismatches, mismatches,
                            memory_order_relaxed);
  stc_rt__tuning_ns_add(now_ns() - start);
}

/* STC_TUNE_RECHECK_EVERY: replays reference and winner on scratch state
 * (paired, alternating which runs first), checks the winner's result and
 * feeds the pair to the tuner; an invalidated winner is unpublished so the
 * next call re-tunes. */
__attribute__((noinline)) static void recheck(site_state *s, workload *w, int32_t selected,
                    void *const *desc, stc_tuner *tuner,
                    const stc_rt_dispatch_config *config, uint64_t call) {
  stc_rt_site *site = s->site;
  stc_decision copy;
  memset(&copy, 0, sizeof copy);
  pthread_mutex_lock(&s->lock);
  bool usable = w->has_decision &&
                (w->decision.source == STC_SOURCE_TUNED ||
                 w->decision.source == STC_SOURCE_MEMORY_CACHE ||
                 w->decision.source == STC_SOURCE_DISK_CACHE);
  if (usable)
    usable = decision_copy(&w->decision, &copy);
  pthread_mutex_unlock(&s->lock);
  stc_rt__trial *trial = NULL;
  char message[512];
  uint64_t start = now_ns();
  if (usable &&
      stc_rt__trial_create(site, desc, &trial, message, sizeof message) ==
          STC_OK) {
    size_t reference = site->reference, first = reference,
           second = (size_t)selected;
    if ((call / config->recheck_every) & 1) {
      first = (size_t)selected;
      second = reference;
    }
    uint64_t ns_first = 0, ns_second = 0;
    stc_rt__trial_measure(trial, first, &ns_first);
    stc_rt__trial_measure(trial, second, &ns_second);
    uint64_t reference_ns = first == reference ? ns_first : ns_second;
    uint64_t selected_ns = first == reference ? ns_second : ns_first;
    stc_rt__comparison c;
    stc_tolerance tf32;
    stc_rt__trial_compare(trial, reference, (size_t)selected,
                          stc_rt__variant_tolerance(site, (size_t)selected,
                                                    &config->policy.tolerance, &tf32),
                          &c);
    bool invalidated = false;
    if (c.supported && c.mismatches) {
      stc_tuner_invalidate(tuner, &copy, true); /* now wrong: never again */
      invalidated = true;
    } else if (c.supported && reference_ns && selected_ns) {
      stc_tuner_record_comparison(tuner, &copy, reference_ns, selected_ns,
                                  true, &invalidated);
    }
    atomic_fetch_add_explicit(&g_rechecks, 1, memory_order_relaxed);
    if (invalidated) {
      atomic_fetch_add_explicit(&g_recheck_invalidations, 1,
                                memory_order_relaxed);
      unpublish(s, w, selected);
    }
  }
  stc_rt__trial_destroy(trial);
  stc_decision_clear(&copy);
  stc_rt__tuning_ns_add(now_ns() - start);
}

/* ---- the slow path ---- */

/* The call of site on desc, whose binary workload key is key[0..length):
 * the published variant, or the first calls' path (the index, the tuner). */
static void enter_workload(stc_rt_site *site, site_state *s,
                           void *const *desc, const int64_t *key,
                           size_t length) {
  uint64_t hash = key_hash(key, length);
  workload *w = table_find(s, key, length, hash);
  if (w) {
    int32_t selected =
        atomic_load_explicit(&w->selected, memory_order_acquire);
    if (selected >= 0) {
      /* Load + store, not an atomic add: a locked add was a third of the
       * cached path. Racing threads may lose counts (stats and the recheck
       * period are approximate then); never a data race. */
      uint64_t call =
          atomic_load_explicit(&w->calls, memory_order_relaxed) + 1;
      atomic_store_explicit(&w->calls, call, memory_order_relaxed);
      const stc_rt_dispatch_config *config = NULL;
      stc_tuner *tuner;
      /* The tuner exists once anything was published; the load is cheap. */
      if (selected != (int32_t)site->reference &&
          (tuner = stc_rt__dispatch_tuner(&config)) && config->recheck_every &&
          call % config->recheck_every == 0)
        recheck(s, w, selected, desc, tuner, config, call);
      stc_rt__call_variant(site, (size_t)selected, desc);
      return;
    }
  }
  /* STC_TUNE=off: the tuner would answer "reference" (rule 2); asking it
   * costs scratch copies of the arguments and loading the vendor BLAS
   * (OpenBLAS starts its threads: 6 ms CPU, 18 ms wall per process) to
   * decide eligibility nobody needs, and creating it opens the cache
   * directory (6 system calls) for records nobody reads. With reports on,
   * it is asked, so that each site's decision is printed. */
  const stc_rt_dispatch_config *config = stc_rt__dispatch_config();
  bool off = config->policy.mode == STC_MODE_DISABLED && !config->print_reports;
  bool full = false;
  if (!w)
    w = table_add(s, key, length, hash, &full);
  if (!w) {
    warn_site(site, full ? "too many workloads at this site"
                         : "out of memory for the workload table");
    run_reference(site, desc);
    return;
  }
  /* Before the tuner: answering from the index is what saves creating it. */
  if (!off && warm_call(s, w, desc, config))
    return;
  stc_tuner *tuner = off ? stc_rt__tuner_if_started()
                         : stc_rt__dispatch_tuner(&config);
  if (!tuner && !off) {
    warn_site(site, "the tuner cannot be created (out of memory?)");
    run_reference(site, desc);
    return;
  }
  if (config->check_all && !atomic_exchange(&s->checked_all, true))
    check_all(s, w, desc, config);
  int32_t selected = atomic_load_explicit(&w->selected, memory_order_acquire);
  bool served = false;
  size_t chosen;
  if (selected >= 0) {
    chosen = (size_t)selected;
  } else if (tuner &&
             atomic_load_explicit(&w->pending, memory_order_acquire) >= 0) {
    /* Call k >= 2 of a pending workload: the check is on call
     * check_at_call, or later while the winner's start cost is not earned
     * back (rent or buy); until then the reference runs. A trusted winner
     * switches, unchecked, once its cost is earned back. */
    uint64_t call = atomic_fetch_add(&w->deferred_calls, 1) + 2;
    bool trusted = atomic_load_explicit(&w->trusted_pending,
                                        memory_order_relaxed);
    if ((!trusted && call < config->policy.check_at_call) ||
        !rent_due(w, config)) {
      run_rented(site, w, desc);
      return;
    }
    if (trusted)
      switch_trusted(s, w, desc, config);
    else
      deferred_check(s, w, desc, tuner, config);
    return;
  } else if (off) {
    chosen = publish(s, w, site->reference, NULL, config);
  } else {
    chosen = decide(s, w, desc, tuner, config, &served);
  }
  if (!served)
    stc_rt__call_variant(site, chosen, desc);
}

/* Keys of up to this many words (8 arguments of rank 8) are built on the
 * stack, longer ones in an allocation: a buffer for the longest (rank 32,
 * 4 KB) put every first call's deeper frames a stack page further down. */
#define SMALL_KEY_WORDS (STC_RT_MAX_SITE_ARGS * (1 + 2 * 8))

static size_t key_words(const stc_rt_site *site) {
  size_t n = 0;
  for (uint32_t i = 0; i < site->num_args; i++)
    n += 1 + 2 * (size_t)site->args[i].rank;
  return n;
}

void stc_rt_site_enter(stc_rt_site *site, uint64_t *words,
                       uint32_t num_words) {
  void *desc[STC_RT_MAX_SITE_ARGS] = {0};
  char why[256];
  if (!site)
    return;
  site_state *s = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
  if (s && words && num_words &&
      atomic_load_explicit(&s->checked_words, memory_order_relaxed) ==
          num_words) {
    uint32_t first = 0;
    for (uint32_t i = 0; i < site->num_args; i++) {
      desc[i] = &words[first];
      first += 3 + 2 * site->args[i].rank;
    }
  } else {
    site_check check =
        check_call(site, words, num_words, desc, why, sizeof why);
    if (check != SITE_OK) {
      warn_site(site, why);
      if (check == SITE_REFERENCE_ONLY)
        run_reference(site, desc);
      else
        atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
      return;
    }
    if (!(s = state_of(site))) {
      run_reference(site, desc); /* no memory for state: untuned but correct */
      return;
    }
    atomic_store_explicit(&s->checked_words, num_words, memory_order_relaxed);
  }
  int64_t small_key[SMALL_KEY_WORDS];
  size_t needed = key_words(site);
  int64_t *key = needed <= SMALL_KEY_WORDS ? small_key
                                           : malloc(needed * sizeof *key);
  if (!key) {
    warn_site(site, "out of memory for the workload key");
    run_reference(site, desc);
    return;
  }
  enter_workload(site, s, desc, key, workload_key(site, desc, key));
  if (key != small_key)
    free(key);
}

/* ---- control ---- */

stc_status stc_rt_site_invalidate(stc_rt_site *site, bool ban) {
  if (!site)
    return STC_ERR_INVALID;
  site_state *s = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
  stc_tuner *tuner = stc_rt__tuner_if_started();
  if (!s)
    return STC_ERR_NOT_FOUND;
  size_t dropped = 0;
  pthread_mutex_lock(&s->lock);
  workload_table *t = atomic_load_explicit(&s->table, memory_order_relaxed);
  for (size_t i = 0; t && i < t->count; i++) {
    workload *w = t->items[i];
    if (atomic_load_explicit(&w->pending, memory_order_relaxed) >= 0) {
      /* A winner awaiting its deferred check: forgotten too. */
      if (w->has_decision && tuner)
        stc_tuner_invalidate(tuner, &w->decision, ban);
      stc_decision_clear(&w->decision);
      w->has_decision = false;
      atomic_store_explicit(&w->pending, -1, memory_order_relaxed);
      dropped++;
      continue;
    }
    if (atomic_load_explicit(&w->selected, memory_order_relaxed) < 0)
      continue;
    if (w->has_decision && tuner)
      stc_tuner_invalidate(tuner, &w->decision, ban);
    stc_decision_clear(&w->decision);
    w->has_decision = false;
    atomic_store_explicit(&w->selected, -1, memory_order_release);
    dropped++;
  }
  publish_slot(site, NULL);
  pthread_mutex_unlock(&s->lock);
  return dropped ? STC_OK : STC_ERR_NOT_FOUND;
}

void stc_rt_dispatch_stats_get(stc_rt_dispatch_stats *out) {
  if (!out)
    return;
  memset(out, 0, sizeof *out);
  stc_rt__tuner_stats(&out->tuner);
  pthread_mutex_lock(&g_registry_lock);
  for (site_state *s = g_sites; s; s = s->next) {
    workload_table *t = atomic_load_explicit(&s->table, memory_order_acquire);
    for (size_t i = 0; t && i < t->count; i++)
      out->cached_calls += atomic_load_explicit(&t->items[i]->calls,
                                                memory_order_relaxed);
  }
  pthread_mutex_unlock(&g_registry_lock);
  out->selections = atomic_load(&g_selections);
  out->reference_fallbacks = atomic_load(&g_fallbacks);
  out->checked_variants = atomic_load(&g_checked_variants);
  out->check_mismatches = atomic_load(&g_check_mismatches);
  out->rechecks = atomic_load(&g_rechecks);
  out->recheck_invalidations = atomic_load(&g_recheck_invalidations);
  out->warm_start_hits = atomic_load(&g_warm_hits);
}

void stc_rt__dispatch_reset(void) {
  pthread_mutex_lock(&g_registry_lock);
  for (site_state *s = g_sites, *next; s; s = next) {
    next = s->next;
    __atomic_store_n(&s->site->state, NULL, __ATOMIC_RELEASE);
    publish_slot(s->site, NULL);
    workload_table *t = atomic_load(&s->table);
    for (size_t i = 0; t && i < t->count; i++)
      workload_free(t->items[i]);
    free(t);
    for (workload_table *r = s->retired, *rn; r; r = rn) {
      rn = r->retired_next;
      free(r);
    }
    pthread_mutex_destroy(&s->lock);
    free(s);
  }
  g_sites = NULL;
  pthread_mutex_unlock(&g_registry_lock);
  atomic_store(&g_selections, 0);
  atomic_store(&g_fallbacks, 0);
  atomic_store(&g_checked_variants, 0);
  atomic_store(&g_check_mismatches, 0);
  atomic_store(&g_rechecks, 0);
  atomic_store(&g_recheck_invalidations, 0);
  atomic_store(&g_warm_hits, 0);
  atomic_store(&g_threads_started, false);
  stc_rt__warm_reset();
  stc_rt__controls_reset();
}
