/* The stack tuner engine (include/stc/tuner.h, DESIGN.md section 6).
 *
 * In: a problem, its candidates, the index of the declared reference and the
 * caller's trial runner. Out: a decision (which candidate to run, and why),
 * plus memory records, disk records (stc/tuner_cache.h), tuning reports and
 * counters kept by the tuner.
 *
 * stc_tuner_select applies the numbered rules of DESIGN.md section 6 in the
 * order of the reference engine (seeds/stack_tuner_engine.rs.txt):
 * request checks -> quarantine -> disabled -> memory record -> bypass ->
 * nested -> busy/permit -> disk record (checked once, or trusted) -> cache-only ->
 * exploration. The state lock guards only in-memory state: it is never held
 * while a runner callback or a disk operation runs, so a runner may call
 * select again (it gets the reference) and contenders never wait. */
#include "stc/tuner.h"

#include "wins.h"

#include "stc/hash.h"
#include "stc/tuner_cache.h"
#include "stc/tuner_remote.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STC_TUNER_MAX_CANDIDATES 4096u
#define STC_TUNER_MAX_NAME 4096u
#define STC_TUNER_MAX_KEY (384u * 1024u)
#define STC_TUNER_MAX_REPORTS 128u
#define STC_TUNER_MESSAGE 512

/* Depth of tuning on this thread: a select called from inside a runner
 * callback (of any tuner) gets the reference instead of re-entering. */
static _Thread_local size_t stc_tuner_depth;

bool stc_tuner_is_tuning(void) { return stc_tuner_depth != 0; }

/* ---- small helpers ------------------------------------------------------ */

/* printf into a fresh allocation; NULL when out of memory. */
static char *format_string(const char *format, ...)
    __attribute__((format(printf, 1, 2)));
static char *format_string(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  int size = vsnprintf(NULL, 0, format, ap);
  va_end(ap);
  if (size < 0)
    return NULL;
  char *text = malloc((size_t)size + 1);
  if (!text)
    return NULL;
  va_start(ap, format);
  vsnprintf(text, (size_t)size + 1, format, ap);
  va_end(ap);
  return text;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of values (reordered in place); NaN for none. An even count takes
 * the mean of the two middle values. */
static double median(double *values, size_t count) {
  if (count == 0)
    return NAN;
  qsort(values, count, sizeof *values, compare_doubles);
  if (count % 2)
    return values[count / 2];
  return (values[count / 2 - 1] + values[count / 2]) / 2;
}

static uint64_t ns_from_double(double ns) {
  if (!(ns > 0))
    return 0;
  if (ns >= 18446744073709551615.0)
    return UINT64_MAX;
  return (uint64_t)llround(ns);
}

/* A set of owned strings. The sets here (tunes in flight, busy devices,
 * quarantined lanes, banned names of one key) stay small. */
typedef struct string_set {
  char **items;
  size_t count, capacity;
} string_set;

static bool set_contains(const string_set *set, const char *text) {
  for (size_t i = 0; i < set->count; i++)
    if (strcmp(set->items[i], text) == 0)
      return true;
  return false;
}

static stc_status set_add(string_set *set, const char *text) {
  if (set_contains(set, text))
    return STC_OK;
  if (set->count == set->capacity) {
    size_t capacity = set->capacity ? set->capacity * 2 : 4;
    char **items = realloc(set->items, capacity * sizeof *items);
    if (!items)
      return STC_ERR_NOMEM;
    set->items = items;
    set->capacity = capacity;
  }
  char *copy = strdup(text);
  if (!copy)
    return STC_ERR_NOMEM;
  set->items[set->count++] = copy;
  return STC_OK;
}

static void set_remove(string_set *set, const char *text) {
  for (size_t i = 0; i < set->count; i++) {
    if (strcmp(set->items[i], text) == 0) {
      free(set->items[i]);
      set->items[i] = set->items[--set->count];
      return;
    }
  }
}

static void set_free(string_set *set) {
  for (size_t i = 0; i < set->count; i++)
    free(set->items[i]);
  free(set->items);
  memset(set, 0, sizeof *set);
}

/* ---- per-key state ------------------------------------------------------ */

/* Everything the tuner remembers about one cache key. An entry holds one
 * FIFO slot of the capacity whether it carries a record, a bypass mark, a
 * ban list or a regression window; evicting it forgets all of them (as the
 * reference engine's insert does). */
typedef struct key_entry {
  char *key;
  uint64_t hash;
  /* sha256 of key: what the fingerprint and the win counts compare, ""
   * until one asks (entry_digest): a cached decision never needs it, and
   * each site's first call would hash its whole key once more. */
  char key_digest[65];
  struct key_entry *chain;          /* next in the hash bucket */
  struct key_entry *older, *newer;  /* FIFO order of first insertion */
  bool has_record;
  stc_cache_record record;
  bool bypass; /* validation unavailable: keep using the reference */
  stc_scope bypass_scope;
  string_set banned;
  double *window; /* regression ratios, a ring of regression_pairs */
  size_t window_head, window_count;
} key_entry;

struct stc_tuner {
  stc_tuner_policy policy;
  stc_disk_cache *disk; /* NULL: memory only */
  pthread_mutex_t lock;
  /* Guarded by lock: */
  key_entry **buckets;
  size_t bucket_count, entry_count;
  key_entry *oldest, *newest;
  string_set pending;  /* keys being tuned */
  string_set devices;  /* environments being tuned */
  string_set poisoned; /* quarantined environments */
  stc_tune_report *reports; /* ring of report_capacity */
  size_t report_capacity, report_head, report_count;
  stc_tuner_stats stats;
  uint64_t (*clock)(void *user);
  void *clock_user;
  void (*explore_hook)(void *user); /* stc_tuner_set_explore_hook */
  void *explore_user;
  /* The disk records' winners, read once (stc_tuner_win_counts). */
  enum { DISK_WINS_UNREAD, DISK_WINS_READING, DISK_WINS_READ } disk_wins_state;
  stc__won_records disk_wins;
};

static void lock_state(stc_tuner *t) { pthread_mutex_lock(&t->lock); }
static void unlock_state(stc_tuner *t) { pthread_mutex_unlock(&t->lock); }

static uint64_t key_hash(const char *key) {
  return stc_hash64(key, strlen(key), STC_HASH_SEED);
}

static key_entry *entry_find(stc_tuner *t, const char *key, uint64_t hash) {
  if (!t->bucket_count)
    return NULL;
  for (key_entry *e = t->buckets[hash % t->bucket_count]; e; e = e->chain)
    if (e->hash == hash && strcmp(e->key, key) == 0)
      return e;
  return NULL;
}

/* e's key digest, computed the first time it is asked for. Lock held. */
static const char *entry_digest(key_entry *e) {
  if (!e->key_digest[0])
    stc_sha256_hex(e->key, strlen(e->key), e->key_digest);
  return e->key_digest;
}

static void entry_free(key_entry *e) {
  free(e->key);
  stc_cache_record_clear(&e->record);
  set_free(&e->banned);
  free(e->window);
  free(e);
}

/* Unlinks e from its bucket and from the FIFO, then frees it. */
static void entry_drop(stc_tuner *t, key_entry *e) {
  key_entry **link = &t->buckets[e->hash % t->bucket_count];
  while (*link != e)
    link = &(*link)->chain;
  *link = e->chain;
  if (e->older)
    e->older->newer = e->newer;
  else
    t->oldest = e->newer;
  if (e->newer)
    e->newer->older = e->older;
  else
    t->newest = e->older;
  t->entry_count--;
  entry_free(e);
}

static bool entry_is_empty(const key_entry *e) {
  return !e->has_record && !e->bypass && e->banned.count == 0 &&
         e->window_count == 0;
}

static stc_status grow_buckets(stc_tuner *t) {
  size_t count = t->bucket_count ? t->bucket_count * 2 : 16;
  key_entry **buckets = calloc(count, sizeof *buckets);
  if (!buckets)
    return STC_ERR_NOMEM;
  for (key_entry *e = t->oldest; e; e = e->newer) {
    e->chain = buckets[e->hash % count];
    buckets[e->hash % count] = e;
  }
  free(t->buckets);
  t->buckets = buckets;
  t->bucket_count = count;
  return STC_OK;
}

/* Finds key's entry or creates it at the back of the FIFO, first evicting
 * the oldest entries so that at most `capacity` remain (DESIGN.md: capacity
 * records; the FIFO position is that of first insertion). */
static stc_status entry_touch(stc_tuner *t, const char *key, uint64_t hash,
                              key_entry **out) {
  key_entry *e = entry_find(t, key, hash);
  if (e) {
    *out = e;
    return STC_OK;
  }
  if ((t->entry_count + 1) * 4 > t->bucket_count * 3 &&
      grow_buckets(t) != STC_OK)
    return STC_ERR_NOMEM;
  e = calloc(1, sizeof *e);
  if (!e || !(e->key = strdup(key))) {
    free(e);
    return STC_ERR_NOMEM;
  }
  while (t->entry_count >= t->policy.capacity && t->oldest)
    entry_drop(t, t->oldest);
  e->hash = hash;
  e->chain = t->buckets[hash % t->bucket_count];
  t->buckets[hash % t->bucket_count] = e;
  e->older = t->newest;
  if (t->newest)
    t->newest->newer = e;
  else
    t->oldest = e;
  t->newest = e;
  t->entry_count++;
  *out = e;
  return STC_OK;
}

/* ---- reports ------------------------------------------------------------ */

static void report_clear(stc_tune_report *r) {
  free(r->operation);
  free(r->environment);
  free(r->workload);
  free(r->execution_context);
  free(r->winner);
  for (size_t i = 0; i < r->num_candidates; i++) {
    free(r->candidates[i].name);
    free(r->candidates[i].note);
  }
  free(r->candidates);
  memset(r, 0, sizeof *r);
}

void stc_tune_reports_free(stc_tune_report *reports, size_t count) {
  if (!reports)
    return;
  for (size_t i = 0; i < count; i++)
    report_clear(&reports[i]);
  free(reports);
}

/* Fills the problem part of a report; false when out of memory. */
static bool report_start(stc_tune_report *r, const stc_problem *problem,
                         const char *winner, size_t num_candidates) {
  memset(r, 0, sizeof *r);
  r->operation = strdup(problem->operation);
  r->environment = strdup(problem->environment);
  r->workload = strdup(problem->workload);
  r->execution_context =
      strdup(problem->execution_context ? problem->execution_context : "");
  r->winner = strdup(winner);
  r->candidates = calloc(num_candidates, sizeof *r->candidates);
  r->num_candidates = num_candidates;
  if (!r->operation || !r->environment || !r->workload ||
      !r->execution_context || !r->winner || !r->candidates) {
    if (!r->candidates)
      r->num_candidates = 0;
    report_clear(r);
    return false;
  }
  return true;
}

static stc_status report_copy(const stc_tune_report *from, stc_tune_report *to) {
  memset(to, 0, sizeof *to);
  *to = *from;
  to->operation = strdup(from->operation);
  to->environment = strdup(from->environment);
  to->workload = strdup(from->workload);
  to->execution_context = strdup(from->execution_context);
  to->winner = strdup(from->winner);
  to->candidates = calloc(from->num_candidates ? from->num_candidates : 1,
                          sizeof *to->candidates);
  bool ok = to->operation && to->environment && to->workload &&
            to->execution_context && to->winner && to->candidates;
  for (size_t i = 0; ok && i < from->num_candidates; i++) {
    to->candidates[i] = from->candidates[i];
    to->candidates[i].name = strdup(from->candidates[i].name);
    to->candidates[i].note = strdup(from->candidates[i].note);
    ok = to->candidates[i].name && to->candidates[i].note;
  }
  if (!ok) {
    if (!to->candidates)
      to->num_candidates = 0;
    report_clear(to);
    return STC_ERR_NOMEM;
  }
  return STC_OK;
}

/* Keeps report (taking ownership), dropping the oldest beyond the bound. */
static void push_report_locked(stc_tuner *t, stc_tune_report *report) {
  if (t->report_count == t->report_capacity) {
    report_clear(&t->reports[t->report_head]);
    t->report_head = (t->report_head + 1) % t->report_capacity;
    t->report_count--;
  }
  t->reports[(t->report_head + t->report_count) % t->report_capacity] = *report;
  t->report_count++;
  memset(report, 0, sizeof *report);
}

/* ---- creation ----------------------------------------------------------- */

stc_status stc_tuner_create(const stc_tuner_policy *policy,
                            const char *cache_directory, stc_tuner **out,
                            stc_error *err) {
  if (!out) {
    stc_error_set(err, NULL, 0, 0, "no output tuner");
    return STC_ERR_INVALID;
  }
  *out = NULL;
  stc_status status = stc_tuner_policy_validate(policy, err);
  if (status != STC_OK)
    return status;
  stc_tuner *t = calloc(1, sizeof *t);
  if (!t)
    return STC_ERR_NOMEM;
  t->policy = *policy;
  t->report_capacity = policy->capacity < STC_TUNER_MAX_REPORTS
                           ? policy->capacity
                           : STC_TUNER_MAX_REPORTS;
  t->reports = calloc(t->report_capacity, sizeof *t->reports);
  if (!t->reports || pthread_mutex_init(&t->lock, NULL) != 0) {
    free(t->reports);
    free(t);
    stc_error_set(err, NULL, 0, 0, "out of memory creating the tuner");
    return STC_ERR_NOMEM;
  }
  if (cache_directory &&
      stc_disk_cache_open(cache_directory, policy->capacity,
                          policy->ttl_seconds, &t->disk, NULL) != STC_OK) {
    /* An unusable cache directory costs persistence, never execution. */
    t->disk = NULL;
    t->stats.cache_warnings++;
  }
  *out = t;
  return STC_OK;
}

void stc_tuner_destroy(stc_tuner *tuner) {
  if (!tuner)
    return;
  while (tuner->oldest)
    entry_drop(tuner, tuner->oldest);
  free(tuner->buckets);
  set_free(&tuner->pending);
  set_free(&tuner->devices);
  set_free(&tuner->poisoned);
  for (size_t i = 0; i < tuner->report_count; i++)
    report_clear(&tuner->reports[(tuner->report_head + i) %
                                 tuner->report_capacity]);
  free(tuner->reports);
  stc__won_records_free(&tuner->disk_wins);
  stc_disk_cache_close(tuner->disk);
  pthread_mutex_destroy(&tuner->lock);
  free(tuner);
}

void stc_tuner_get_policy(stc_tuner *tuner, stc_tuner_policy *out) {
  if (tuner && out)
    *out = tuner->policy;
}

void stc_tuner_stats_get(stc_tuner *tuner, stc_tuner_stats *out) {
  if (!tuner || !out)
    return;
  lock_state(tuner);
  *out = tuner->stats;
  unlock_state(tuner);
}

stc_status stc_tuner_reports(stc_tuner *tuner, stc_tune_report **out,
                             size_t *count) {
  if (!tuner || !out || !count)
    return STC_ERR_INVALID;
  *out = NULL;
  *count = 0;
  lock_state(tuner);
  size_t n = tuner->report_count;
  stc_tune_report *copies = n ? calloc(n, sizeof *copies) : NULL;
  stc_status status = (n && !copies) ? STC_ERR_NOMEM : STC_OK;
  size_t done = 0;
  for (; status == STC_OK && done < n; done++)
    status = report_copy(
        &tuner->reports[(tuner->report_head + done) % tuner->report_capacity],
        &copies[done]);
  unlock_state(tuner);
  if (status != STC_OK) {
    stc_tune_reports_free(copies, done);
    return status;
  }
  *out = copies;
  *count = n;
  return STC_OK;
}

static uint64_t monotonic_ns(void *user) {
  (void)user;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

void stc_tuner_set_clock(stc_tuner *tuner, uint64_t (*now_ns)(void *user),
                         void *user) {
  if (!tuner)
    return;
  lock_state(tuner);
  tuner->clock = now_ns;
  tuner->clock_user = now_ns ? user : NULL;
  unlock_state(tuner);
}

void stc_tuner_set_explore_hook(stc_tuner *tuner, void (*hook)(void *user),
                                void *user) {
  if (!tuner)
    return;
  lock_state(tuner);
  tuner->explore_hook = hook;
  tuner->explore_user = hook ? user : NULL;
  unlock_state(tuner);
}

/* The budget clock of one exploration, read once at its start. */
typedef struct budget_clock {
  uint64_t (*now)(void *user);
  void *user;
  uint64_t started;
} budget_clock;

static uint64_t elapsed_ns(const budget_clock *clock) {
  uint64_t now = clock->now(clock->user);
  return now > clock->started ? now - clock->started : 0;
}

/* ---- decisions ---------------------------------------------------------- */

void stc_decision_clear(stc_decision *decision) {
  if (!decision)
    return;
  free(decision->name);
  free(decision->cache_key);
  memset(decision, 0, sizeof *decision);
}

static stc_status make_decision(stc_decision *out, size_t index,
                                size_t reference, const char *name,
                                stc_decision_source source, bool verified,
                                bool has_ratio, double ratio, const char *key,
                                stc_error *err) {
  memset(out, 0, sizeof *out);
  out->name = strdup(name);
  out->cache_key = strdup(key);
  if (!out->name || !out->cache_key) {
    stc_decision_clear(out);
    stc_error_set(err, NULL, 0, 0, "out of memory building a decision");
    return STC_ERR_NOMEM;
  }
  out->index = index;
  out->reference_index = reference;
  out->source = source;
  out->verified = verified;
  out->has_ratio = has_ratio;
  out->ratio = ratio;
  return STC_OK;
}

/* ---- the request -------------------------------------------------------- */

/* One select call's inputs, checked and keyed. */
typedef struct select_request {
  const stc_problem *problem;
  const stc_candidate *candidates;
  size_t count;
  size_t reference;
  const stc_trial_runner *runner;
  const stc_exploration_order *order; /* may be NULL */
  char *key; /* owned */
  uint64_t hash;
} select_request;

static bool candidate_fits(const stc_tuner_policy *policy,
                           const stc_candidate *candidate) {
  if (!candidate->eligible)
    return false;
  if (!policy->has_workspace_limit)
    return true;
  return candidate->workspace_known &&
         candidate->workspace_bytes <= policy->workspace_limit;
}

static bool nonempty(const char *text) { return text && text[0]; }

static int compare_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Rule 1, apart from the key length. */
static stc_status check_request(const stc_tuner *t, const stc_problem *problem,
                                const stc_candidate *candidates, size_t count,
                                size_t reference, stc_error *err) {
  if (!candidates || count == 0 || count > STC_TUNER_MAX_CANDIDATES ||
      reference >= count || !nonempty(problem->operation) ||
      !nonempty(problem->environment) || !nonempty(problem->workload) ||
      (unsigned)problem->scope > STC_SCOPE_PIPELINE) {
    stc_error_set(err, NULL, 0, 0,
                  "a workload, environment and valid reference candidate are "
                  "required (1 to %u candidates)",
                  STC_TUNER_MAX_CANDIDATES);
    return STC_ERR_INVALID;
  }
  const char **names = malloc(count * sizeof *names);
  if (!names) {
    stc_error_set(err, NULL, 0, 0, "out of memory checking candidate names");
    return STC_ERR_NOMEM;
  }
  bool ok = true;
  for (size_t i = 0; ok && i < count; i++) {
    names[i] = candidates[i].name;
    ok = nonempty(names[i]) &&
         strnlen(names[i], STC_TUNER_MAX_NAME + 1) <= STC_TUNER_MAX_NAME;
  }
  if (ok) {
    qsort(names, count, sizeof *names, compare_names);
    for (size_t i = 1; ok && i < count; i++)
      ok = strcmp(names[i - 1], names[i]) != 0;
  }
  free(names);
  if (!ok) {
    stc_error_set(err, NULL, 0, 0,
                  "candidate names must be nonempty, bounded and unique");
    return STC_ERR_INVALID;
  }
  if (!candidate_fits(&t->policy, &candidates[reference])) {
    stc_error_set(err, NULL, 0, 0,
                  "reference does not satisfy eligibility/workspace policy");
    return STC_ERR_INVALID;
  }
  return STC_OK;
}

/* The key is written twice by one function: first only counted (so that an
 * over-long key is refused before it is allocated), then stored. Every
 * field is "tag=<length>:<bytes>;", which no choice of strings can make
 * ambiguous. */
typedef struct key_writer {
  char *buffer; /* NULL: count only */
  size_t length;
} key_writer;

static void put_bytes(key_writer *w, const char *bytes, size_t size) {
  if (w->buffer)
    memcpy(w->buffer + w->length, bytes, size);
  w->length += size;
}

/* Writes value in decimal at text (at most 20 digits); returns how many. */
static size_t decimal(char *text, uint64_t value) {
  char digits[20];
  size_t n = 0;
  do {
    digits[n++] = (char)('0' + value % 10);
    value /= 10;
  } while (value);
  for (size_t i = 0; i < n; i++)
    text[i] = digits[n - 1 - i];
  return n;
}

/* Fields are formatted by hand, not by snprintf: the key is built on every
 * site's first call in a process, and formatting was most of that. The
 * bytes are exactly the "%s=%zu:", "%" PRIu64 and "%016" PRIx64 spellings
 * every stored record's key was written with (test_tuner
 * key_bytes_are_stable). */
static void put_sized(key_writer *w, const char *tag, const char *value,
                      size_t size) {
  char prefix[24];
  size_t n = decimal(prefix, size);
  put_bytes(w, tag, strlen(tag));
  put_bytes(w, "=", 1);
  put_bytes(w, prefix, n);
  put_bytes(w, ":", 1);
  put_bytes(w, value, size);
  put_bytes(w, ";", 1);
}

static void put_field(key_writer *w, const char *tag, const char *value) {
  put_sized(w, tag, value, strlen(value));
}

static void put_number(key_writer *w, const char *tag, uint64_t value) {
  char text[24];
  put_sized(w, tag, text, decimal(text, value));
}

/* Doubles go in as their bits: exact, and independent of the locale. */
static void put_double(key_writer *w, const char *tag, double value) {
  static const char hex[] = "0123456789abcdef";
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  char text[16];
  for (int i = 15; i >= 0; i--, bits >>= 4)
    text[i] = hex[bits & 15];
  put_sized(w, tag, text, sizeof text);
}

static void write_key(key_writer *w, const stc_tuner_policy *policy,
                      const stc_problem *problem,
                      const stc_candidate *candidates, size_t count,
                      size_t reference, const char *lower_level) {
  put_field(w, "stc-tuner-key", "1");
  put_number(w, "scope", (uint64_t)problem->scope);
  put_field(w, "operation", problem->operation);
  put_field(w, "environment", problem->environment);
  put_field(w, "workload", problem->workload);
  put_field(w, "context",
            problem->execution_context ? problem->execution_context : "");
  put_number(w, "candidates", count);
  for (size_t i = 0; i < count; i++) {
    const stc_candidate *c = &candidates[i];
    put_field(w, "name", c->name);
    put_field(w, "revision", c->revision ? c->revision : "1");
    if (c->workspace_known)
      put_number(w, "workspace", c->workspace_bytes);
    else
      put_field(w, "workspace", "unknown");
    put_number(w, "eligible", c->eligible ? 1 : 0);
    /* Trusted records are keyed by what every candidate's code is, so a
     * changed compile or vendor library is a different key: a miss. Other
     * keys stay as they were (old records stay readable). */
    if (policy->trust_verified)
      put_field(w, "code", c->code_identity ? c->code_identity : "");
  }
  put_number(w, "reference", reference);
  /* What a decision means depends on how it was checked. */
  put_number(w, "require-validation", policy->require_validation ? 1 : 0);
  put_double(w, "tolerance-absolute", policy->tolerance.absolute);
  put_double(w, "tolerance-relative", policy->tolerance.relative);
  put_number(w, "tolerance-readback", policy->tolerance.readback_limit);
  if (policy->trust_verified)
    put_number(w, "trust-verified", 1);
  /* TF32 variants are eligible (the candidates say so) and checked with
   * this bound; without the opt-in the key is as before. */
  if (policy->allow_tf32)
    put_double(w, "tolerance-tf32", policy->tolerance.tf32);
  if (lower_level)
    put_field(w, "lower-level", lower_level);
}

static stc_status build_key(stc_tuner *t, select_request *req, stc_error *err) {
  char fingerprint[65];
  const char *lower_level = NULL;
  if (req->problem->scope == STC_SCOPE_PIPELINE) {
    /* Rule 9: a changed operator choice makes a new pipeline key. */
    stc_tuner_lower_level_fingerprint(t, fingerprint);
    lower_level = fingerprint;
  }
  key_writer w = {NULL, 0};
  write_key(&w, &t->policy, req->problem, req->candidates, req->count,
            req->reference, lower_level);
  if (w.length > STC_TUNER_MAX_KEY) {
    stc_error_set(err, NULL, 0, 0,
                  "autotune key exceeds 384 KiB (%zu bytes)", w.length);
    return STC_ERR_INVALID;
  }
  w.buffer = malloc(w.length + 1);
  if (!w.buffer) {
    stc_error_set(err, NULL, 0, 0, "out of memory building the cache key");
    return STC_ERR_NOMEM;
  }
  w.length = 0;
  write_key(&w, &t->policy, req->problem, req->candidates, req->count,
            req->reference, lower_level);
  w.buffer[w.length] = 0;
  req->key = w.buffer;
  req->hash = key_hash(req->key);
  return STC_OK;
}

/* ---- runner calls ------------------------------------------------------- */

/* Why a trial failed: a status and the runner's (or our) message. */
typedef struct failure {
  stc_status status;
  char message[STC_TUNER_MESSAGE];
} failure;

static stc_status fail(failure *f, stc_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static stc_status fail(failure *f, stc_status status, const char *format, ...) {
  f->status = status;
  va_list ap;
  va_start(ap, format);
  vsnprintf(f->message, sizeof f->message, format, ap);
  va_end(ap);
  return status;
}

static stc_status run_measure(const select_request *req, size_t candidate,
                              uint64_t *elapsed, failure *f) {
  char message[STC_TUNER_MESSAGE] = "";
  uint64_t ns = 0;
  stc_status status = req->runner->measure(req->runner->user, candidate, &ns,
                                           message, sizeof message);
  if (status == STC_OK) {
    *elapsed = ns;
    return STC_OK;
  }
  message[sizeof message - 1] = 0;
  if (message[0])
    return fail(f, status, "%s", message);
  return fail(f, status, "measuring %s failed: %s",
              req->candidates[candidate].name, stc_status_str(status));
}

/* Validates candidate against the reference. *checked is true only when the
 * validator reported PASSED; UNSUPPORTED is acceptable (unchecked) only
 * when the policy does not require validation. */
static stc_status run_validation(const stc_tuner *t, const select_request *req,
                                 size_t candidate, bool *checked, failure *f) {
  char message[STC_TUNER_MESSAGE] = "";
  stc_validation outcome = STC_VALIDATION_UNSUPPORTED;
  stc_status status =
      req->runner->validate(req->runner->user, req->reference, candidate,
                            &t->policy.tolerance, &outcome, message,
                            sizeof message);
  message[sizeof message - 1] = 0;
  if (status != STC_OK) {
    if (message[0])
      return fail(f, status, "%s", message);
    return fail(f, status, "validating %s failed: %s",
                req->candidates[candidate].name, stc_status_str(status));
  }
  switch (outcome) {
  case STC_VALIDATION_PASSED:
    *checked = true;
    return STC_OK;
  case STC_VALIDATION_UNSUPPORTED:
    if (!t->policy.require_validation) {
      *checked = false;
      return STC_OK;
    }
    return fail(f, STC_ERR_UNAVAILABLE,
                "no numerical validator for this output/size");
  }
  return fail(f, STC_ERR_REJECTED, "validator returned an unknown outcome");
}

/* ---- state updates ------------------------------------------------------ */

/* A disk status that is a cache fault (a warning): anything but success or
 * "no such record". */
static bool disk_fault(stc_status status) {
  return status != STC_OK && status != STC_ERR_NOT_FOUND;
}

static void count_warning(stc_tuner *t) {
  lock_state(t);
  t->stats.cache_warnings++;
  unlock_state(t);
}

static void fail_device(stc_tuner *t, const char *environment) {
  lock_state(t);
  /* Out of memory here loses the quarantine mark but still counts. */
  (void)set_add(&t->poisoned, environment);
  t->stats.device_failures++;
  unlock_state(t);
}

/* Keeps record as key's memory record (taking ownership). A record that
 * cannot be kept only costs a later re-tune: counted as a cache warning. */
static void store_record_locked(stc_tuner *t, const select_request *req,
                                stc_cache_record *record) {
  key_entry *e;
  if (entry_touch(t, req->key, req->hash, &e) != STC_OK) {
    stc_cache_record_clear(record);
    t->stats.cache_warnings++;
    return;
  }
  stc_cache_record_clear(&e->record);
  e->record = *record;
  e->has_record = true;
  memset(record, 0, sizeof *record);
}

static bool banned_locked(const key_entry *e, const char *name) {
  return e && set_contains(&e->banned, name);
}

static bool allowed(stc_tuner *t, const select_request *req, size_t index) {
  if (!candidate_fits(&t->policy, &req->candidates[index]))
    return false;
  lock_state(t);
  bool banned = banned_locked(entry_find(t, req->key, req->hash),
                              req->candidates[index].name);
  unlock_state(t);
  return !banned;
}

/* Rule 3 (and the usability half of rule 5): a record is usable when it is
 * fresh, verified if validation is required, and its winner is still an
 * allowed candidate; *index gets that candidate. Lock held. */
static bool usable_record_locked(stc_tuner *t, const select_request *req,
                                 const key_entry *entry,
                                 const stc_cache_record *record,
                                 size_t *index) {
  if (!stc_cache_record_is_fresh(record, stc_now_seconds(),
                                 t->policy.ttl_seconds) ||
      (t->policy.require_validation && !record->verified) || !record->winner)
    return false;
  for (size_t i = 0; i < req->count; i++) {
    if (strcmp(req->candidates[i].name, record->winner) == 0) {
      if (!candidate_fits(&t->policy, &req->candidates[i]) ||
          banned_locked(entry, record->winner))
        return false;
      *index = i;
      return true;
    }
  }
  return false;
}

static stc_status fallback(const select_request *req, stc_decision_source source,
                           stc_decision *out, stc_error *err) {
  return make_decision(out, req->reference, req->reference,
                       req->candidates[req->reference].name, source, false,
                       false, 0, req->key, err);
}

/* ---- exploration (rule 6) ----------------------------------------------- */

typedef struct exploration {
  size_t winner;
  size_t reference; /* the declared reference's index */
  double ratio;
  bool checked;
  uint64_t reference_ns, winner_ns;
  /* The reference's time as last measured: what an unpaired warm-up run of
   * a candidate is compared with. */
  double reference_estimate;
  stc_tune_report report;
} exploration;

typedef enum score_verdict { SCORE_OK, SCORE_NOISY, SCORE_INCOMPLETE } score_verdict;

/* Scores paired samples: the median of candidate/reference ratios and the
 * relative median absolute deviation (MAD / median) of those ratios. */
static score_verdict paired_score(const uint64_t (*pairs)[2], size_t count,
                                  double max_relative_mad, double *scratch,
                                  double *ratio, double *relative_mad) {
  if (count == 0)
    return SCORE_INCOMPLETE;
  for (size_t i = 0; i < count; i++)
    scratch[i] = (double)pairs[i][1] / (double)pairs[i][0];
  double m = median(scratch, count);
  if (!(m > 0) || !isfinite(m))
    return SCORE_INCOMPLETE;
  for (size_t i = 0; i < count; i++)
    scratch[i] = fabs(scratch[i] - m);
  double mad = median(scratch, count) / m;
  *ratio = m;
  *relative_mad = mad;
  return (mad <= max_relative_mad) ? SCORE_OK : SCORE_NOISY;
}

/* Whether count pairs are scored "too noisy" (paired_score's verdict). */
static bool too_noisy(const uint64_t (*pairs)[2], size_t count,
                      double max_relative_mad, double *scratch) {
  double ratio, mad;
  return paired_score(pairs, count, max_relative_mad, scratch, &ratio, &mad) ==
         SCORE_NOISY;
}

/* The racing rule. A ratio (candidate/reference) is beyond the bar when,
 * even divided by factor (>= 1), it could not win: it is not below the
 * best ratio so far, or not min_speedup faster than the reference. The
 * expressions are the win rule's (score_candidate) with factor folded in,
 * so that on stable timings, where a candidate's first ratio is its final
 * one, a candidate rejected early is one that would have lost anyway. */
static bool beyond_bar(const stc_tuner_policy *p, const exploration *x,
                       double ratio, double factor) {
  return ratio > x->ratio * factor || ratio * p->min_speedup > factor;
}

/* What one candidate's trial did. */
typedef struct trial {
  size_t pairs;   /* paired samples taken */
  size_t runs;    /* runner calls (measure and validate) */
  bool checked;   /* its validator reported PASSED */
  bool cut;       /* the budget ran out before its last pair */
  bool raced_out; /* rejected early; the failure's message says why */
  uint32_t retimed; /* fresh sets of pairs taken after a noisy one */
} trial;

/* The best ratio a candidate must beat, for notes. */
static double bar_of(const stc_tuner_policy *p, const exploration *x) {
  double speedup_bar = 1.0 / p->min_speedup;
  return x->ratio < speedup_bar ? x->ratio : speedup_bar;
}

/* Racing's view of one candidate: its fastest run and its smallest ratio
 * so far, over its timed runs (warm-ups against the reference's estimate,
 * pairs against their own reference run). */
typedef struct race {
  size_t runs;
  uint64_t fastest;
  double optimistic;
} race;

#define RACE_START ((race){0, UINT64_MAX, INFINITY})

/* Adds one timed run of the candidate and judges it: true when it should
 * stop (f gets why). Racing judges from the candidate's second timed run
 * on, and only runs of at least race_min_ns: shorter ones are too noisy to
 * judge and timing them in full costs little. Its ratio is the smallest
 * seen until it has three pairs, so that one slow run (a preemption)
 * cannot stop it, then the median of its pairs, which three already make
 * robust to one outlier either way (the smallest of many would only grow
 * more optimistic). Before race_pairs pairs that ratio must be over
 * race_warmup_factor x the bar; after k pairs over (1 + race_margin /
 * sqrt(k)) x the bar: the margin shrinks like the standard error of k
 * pairs, so a candidate a little slower than the bar stops after a few
 * pairs instead of all. On stable timings every ratio is the candidate's
 * final one, so racing only stops candidates that would have lost
 * (beyond_bar). */
static bool race_stops(const stc_tuner_policy *p, const exploration *x,
                       race *r, uint64_t ns, double ratio,
                       const uint64_t (*pairs)[2], size_t num_pairs,
                       double *scratch, trial *tr, failure *f) {
  r->runs++;
  r->fastest = ns < r->fastest ? ns : r->fastest;
  r->optimistic = ratio < r->optimistic ? ratio : r->optimistic;
  /* The last pair is scored as a whole instead: a full measurement says
   * "lost" with its noise, which racing need not guess. */
  if (!p->early_rejection || r->runs < 2 || r->fastest < p->race_min_ns ||
      num_pairs >= p->samples)
    return false;
  double judged = r->optimistic;
  if (num_pairs >= 3) {
    for (size_t i = 0; i < num_pairs; i++)
      scratch[i] = (double)pairs[i][1] / (double)pairs[i][0];
    judged = median(scratch, num_pairs);
  }
  double factor = num_pairs >= p->race_pairs
                      ? 1.0 + p->race_margin / sqrt((double)num_pairs)
                      : p->race_warmup_factor;
  if (!beyond_bar(p, x, judged, factor))
    return false;
  tr->raced_out = true;
  if (num_pairs >= p->race_pairs)
    fail(f, STC_ERR_REJECTED,
         "rejected early: %s ratio %.4f after %zu of %" PRIu32
         " pairs is over %.3gx the bar %.4f",
         num_pairs >= 3 ? "paired median" : "best", judged, num_pairs,
         p->samples, factor, bar_of(p, x));
  else
    fail(f, STC_ERR_REJECTED,
         "rejected early: best ratio %.4f in %zu runs (%zu pairs) is over "
         "%.3gx the bar %.4f",
         judged, r->runs, num_pairs, factor, bar_of(p, x));
  return true;
}

static stc_status take_pairs(stc_tuner *t, const select_request *req,
                             size_t index, const budget_clock *clock,
                             const exploration *x, uint64_t (*pairs)[2],
                             double *scratch, race *r, trial *tr, failure *f);

/* One candidate's validation, warm-ups and paired samples. The budget is
 * checked between trials only, never interrupting one. With validate_first
 * the validation runs first and counts as a warm-up (it runs the candidate
 * on the same data), so a wrong candidate costs one run. With
 * early_rejection every timed run is judged (race_stops). STC_OK with
 * tr->pairs pairs: all samples, or fewer when the budget cut them
 * (tr->cut). */
static stc_status run_trial(stc_tuner *t, const select_request *req,
                            size_t index, const budget_clock *clock,
                            const exploration *x, uint64_t (*pairs)[2],
                            double *scratch, trial *tr, failure *f) {
  const stc_tuner_policy *p = &t->policy;
  uint32_t warmups = p->warmups;
  bool validated = false;
  race r = RACE_START;
  if (p->validate_first) {
    tr->runs++;
    if (run_validation(t, req, index, &tr->checked, f) != STC_OK)
      return f->status;
    validated = true;
    if (warmups)
      warmups--;
  }
  for (uint32_t w = 0; w < warmups; w++) {
    if (elapsed_ns(clock) >= p->budget_ns)
      return fail(f, STC_ERR_REJECTED, "budget exhausted during warm-up");
    uint64_t ns = 0;
    tr->runs++;
    if (run_measure(req, index, &ns, f) != STC_OK)
      return f->status;
    if (race_stops(p, x, &r, ns, (double)ns / x->reference_estimate,
                   (const uint64_t(*)[2])pairs, 0, scratch, tr, f))
      return f->status;
  }
  if (!validated) {
    tr->runs++;
    if (run_validation(t, req, index, &tr->checked, f) != STC_OK)
      return f->status;
  }
  return take_pairs(t, req, index, clock, x, pairs, scratch, &r, tr, f);
}

/* The paired samples of one candidate into pairs[0..samples), judged by
 * racing (r) as they come. STC_OK with tr->pairs pairs: all samples, or
 * fewer when the budget cut them (tr->cut). */
static stc_status take_pairs(stc_tuner *t, const select_request *req,
                             size_t index, const budget_clock *clock,
                             const exploration *x, uint64_t (*pairs)[2],
                             double *scratch, race *r, trial *tr, failure *f) {
  const stc_tuner_policy *p = &t->policy;
  tr->pairs = 0;
  for (uint32_t sample = 0; sample < p->samples; sample++) {
    if (elapsed_ns(clock) >= p->budget_ns) {
      tr->cut = true;
      /* Enough stable pairs are a measurement, not a loss (scored by the
       * caller, which also applies the noise limit). */
      if (p->budget_cut_samples && sample >= p->budget_cut_samples)
        return STC_OK;
      return fail(f, STC_ERR_REJECTED,
                  "budget exhausted before enough paired samples (%" PRIu32
                  " of %" PRIu32 ")",
                  sample, p->samples);
    }
    /* Alternate which runs first to cancel warm-up, clock and thermal drift. */
    uint64_t *pair = pairs[sample];
    bool reference_first = (sample + index) % 2 == 0;
    size_t first = reference_first ? req->reference : index;
    size_t second = reference_first ? index : req->reference;
    uint64_t t_first, t_second;
    tr->runs++;
    if (run_measure(req, first, &t_first, f) != STC_OK)
      return f->status;
    tr->runs++;
    if (run_measure(req, second, &t_second, f) != STC_OK)
      return f->status;
    pair[0] = reference_first ? t_first : t_second;
    pair[1] = reference_first ? t_second : t_first;
    if (pair[0] == 0 || pair[1] == 0)
      return fail(f, STC_ERR_REJECTED, "zero duration cannot be scored");
    tr->pairs = sample + 1;
    if (race_stops(p, x, r, pair[1], (double)pair[1] / (double)pair[0],
                   (const uint64_t(*)[2])pairs, tr->pairs, scratch, tr, f))
      return f->status;
  }
  return STC_OK;
}

/* A candidate's own measurement against the reference: the median of its
 * pair ratios and of each side's times. Kept for every candidate scored,
 * and for one raced out with pairs (its ratio so far): the duel's runner-up
 * comes from these, and a decision keeps the chosen one's. */
typedef struct standing {
  bool measured;
  bool checked;
  double ratio;
  uint64_t reference_ns, ns;
} standing;

static void stand(const uint64_t (*pairs)[2], size_t count, bool checked,
                  double ratio, double *scratch, standing *own) {
  own->measured = true;
  own->checked = checked;
  own->ratio = ratio;
  for (size_t s = 0; s < count; s++)
    scratch[s] = (double)pairs[s][0];
  own->reference_ns = ns_from_double(median(scratch, count));
  for (size_t s = 0; s < count; s++)
    scratch[s] = (double)pairs[s][1];
  own->ns = ns_from_double(median(scratch, count));
}

/* Makes index the winner with its own measurement. */
static void crown(exploration *x, size_t index, const standing *own) {
  x->winner = index;
  x->ratio = own->ratio;
  x->checked = own->checked;
  x->reference_ns = own->reference_ns;
  x->winner_ns = own->ns;
}

/* The final duel's outcome (run_duel); text is appended to both
 * finalists' notes. */
typedef struct duel {
  bool held;          /* a runner-up was within the margin */
  size_t earlier, later; /* the finalists, in exploration order */
  size_t pairs;       /* head-to-head pairs taken */
  size_t runs[2];     /* runner calls of earlier and later */
  bool cut_by_budget; /* budget_ns stopped it */
  char *text;         /* owned */
} duel;

/* Sets a report note (taking the formatted text); false when out of memory. */
static bool set_note(stc_candidate_report *report, char *note) {
  free(report->note);
  report->note = note;
  return note != NULL;
}

/* After the search: every scored candidate's note says why it won or lost
 * (and on how many pairs, when the budget cut them short). */
static bool finish_notes(const stc_tuner *t, const select_request *req,
                         exploration *x, const bool *scored,
                         const size_t *report_of, const duel *final) {
  stc_candidate_report *cr = x->report.candidates;
  const char *winner = req->candidates[x->winner].name;
  bool ok = x->winner == req->reference
                ? set_note(&cr[0], format_string(
                                       "reference; retained: no candidate was "
                                       "stably at least %.3gx faster",
                                       t->policy.min_speedup))
                : set_note(&cr[0], format_string("reference; replaced by %s",
                                                 winner));
  for (size_t i = 0; ok && i < req->count; i++) {
    if (!scored[i])
      continue;
    stc_candidate_report *r = &cr[report_of[i]];
    char cut[96] = "";
    if (r->samples < t->policy.samples)
      snprintf(cut, sizeof cut,
               " (budget exhausted: scored on %zu of %" PRIu32 " pairs)",
               r->samples, t->policy.samples);
    if (i == x->winner)
      ok = set_note(r, format_string(
                           "won: paired median ratio %.4f (%.3gx faster than "
                           "the reference, relative MAD %.3g)%s",
                           r->ratio, 1 / r->ratio, r->relative_mad, cut));
    else if (r->ratio * t->policy.min_speedup > 1.0)
      ok = set_note(r, format_string(
                           "lost: paired median ratio %.4f is not %.3gx "
                           "faster than the reference%s",
                           r->ratio, t->policy.min_speedup, cut));
    else
      ok = set_note(r, format_string(
                           "lost: paired median ratio %.4f; %s was faster%s",
                           r->ratio, winner, cut));
  }
  /* The duel's finalists: what it found goes after their notes. A
   * runner-up raced out early that won the duel was not scored above. */
  for (int k = 0; ok && final->held && k < 2; k++) {
    size_t i = k ? final->later : final->earlier;
    stc_candidate_report *r = &cr[report_of[i]];
    ok = set_note(r, i == x->winner && !scored[i]
                         ? format_string("won: %s; before the duel: %s",
                                         final->text, r->note)
                         : format_string("%s; %s", r->note, final->text));
  }
  return ok;
}

/* Scores one candidate's completed pairs (count of them) into its report
 * and, under the win rule, makes it the winner: it must beat the best so
 * far and be at least min_speedup faster than the reference. Returns the
 * note (owned; NULL when out of memory); *scored marks a candidate whose
 * final note finish_notes writes. */
static char *score_candidate(const stc_tuner *t, exploration *x, size_t index,
                             bool checked, const uint64_t (*pairs)[2],
                             size_t count, double *scratch,
                             stc_candidate_report *report, bool *scored,
                             standing *own) {
  const stc_tuner_policy *p = &t->policy;
  report->verified = checked;
  report->samples = count;
  double ratio = 0, mad = 0;
  score_verdict verdict = paired_score(pairs, count, p->max_relative_mad,
                                       scratch, &ratio, &mad);
  if (verdict == SCORE_INCOMPLETE)
    return format_string("rejected: timings incomplete");
  report->has_ratio = true;
  report->ratio = ratio;
  report->relative_mad = mad;
  if (verdict == SCORE_NOISY)
    return format_string("rejected: timings too noisy (relative MAD %.3g > "
                         "%.3g)",
                         mad, p->max_relative_mad);
  *scored = true;
  stand(pairs, count, checked, ratio, scratch, own);
  /* Against the reference: min_speedup. Against another winner:
   * min_improvement, so that a near-tie keeps the earlier (more promising)
   * candidate instead of whichever noise favoured. */
  double beat = x->winner == x->reference ? 1.0 : p->min_improvement;
  if (ratio * beat < x->ratio && ratio * p->min_speedup <= 1.0)
    crown(x, index, own);
  return format_string("scored"); /* finish_notes says won or lost */
}

/* The pairs of a candidate that stopped early still tell its ratio so far;
 * the report shows it, while the note says why it stopped. */
static void report_partial(const uint64_t (*pairs)[2], const trial *tr,
                           double *scratch, stc_candidate_report *report) {
  report->verified = tr->checked;
  report->samples = tr->pairs;
  double ratio, mad;
  if (tr->pairs &&
      paired_score(pairs, tr->pairs, INFINITY, scratch, &ratio, &mad) !=
          SCORE_INCOMPLETE) {
    report->has_ratio = true;
    report->ratio = ratio;
    report->relative_mad = mad;
  }
}

/* STC_OK once the duel's text is written, else out of memory. */
static stc_status duel_said(const duel *d, failure *f) {
  return d->text ? STC_OK
                 : fail(f, STC_ERR_NOMEM, "out of memory writing a duel's note");
}

/* The fewest pairs a duel decides on: a median of three already ignores
 * one outlier either way (a duel_pairs below it needs all of them). */
#define DUEL_MIN_PAIRS 3u

/* The final duel (include/stc/tuner.h, duel_pairs). Picks the runner-up:
 * the candidate other than the winner with the lowest own ratio, scored or
 * raced out with pairs, itself min_speedup faster than the reference and
 * within duel_margin of the winner's ratio (a tie goes to the earlier
 * explored); failing that, the first explored candidate when it is
 * measured, min_speedup faster than the reference and within duel_rematch
 * of the winner (a rematch: a slowdown of its exploration's pairs alone
 * must not hand the pick to a later one). Times winner and runner-up head
 * to head, alternating which runs first, checking budget_ns and
 * duel_limit_ns between pairs; the
 * pairs it expects not to fit (from the two candidates' median times) are
 * not started, and a duel that cannot take DUEL_MIN_PAIRS is not held (nor
 * continued once they cannot start in the time left at the pace so far).
 * The later explored of the two wins only when the paired median of
 * later/earlier is stable (max_relative_mad) and at least min_improvement
 * faster; a stable duel otherwise gives the earlier, a noisy or cut one
 * keeps the exploration's winner, and a finalist whose run fails loses. STC_OK (d says what
 * happened), STC_ERR_DEVICE, or STC_ERR_NOMEM. */
static stc_status duel_fight(stc_tuner *t, const select_request *req,
                             exploration *x, const budget_clock *clock,
                             const standing *own, size_t winner, size_t rival,
                             const char *title, uint64_t (*pairs)[2],
                             double *scratch, duel *d, failure *f);

static stc_status run_duel(stc_tuner *t, const select_request *req,
                           exploration *x, const budget_clock *clock,
                           const standing *own, const size_t *report_of,
                           uint64_t (*pairs)[2], double *scratch, duel *d,
                           failure *f) {
  const stc_tuner_policy *p = &t->policy;
  size_t rival = SIZE_MAX;
  for (size_t i = 0; i < req->count; i++) {
    if (i == x->winner || i == req->reference || !own[i].measured ||
        own[i].ratio * p->min_speedup > 1.0 ||
        own[i].ratio > x->ratio * p->duel_margin)
      continue;
    if (rival == SIZE_MAX || own[i].ratio < own[rival].ratio ||
        (own[i].ratio == own[rival].ratio && report_of[i] < report_of[rival]))
      rival = i;
  }
  /* No runner-up within the margin: the favorite (the first explored, the
   * most promising by the order) gets a rematch when a later candidate beat
   * it by at most duel_rematch. */
  bool rematch = false;
  if (rival == SIZE_MAX && p->duel_rematch > 0) {
    size_t favorite = SIZE_MAX;
    for (size_t i = 0; i < req->count; i++)
      if (i != req->reference &&
          (favorite == SIZE_MAX || report_of[i] < report_of[favorite]))
        favorite = i;
    rematch = favorite != SIZE_MAX && favorite != x->winner &&
              x->winner != req->reference && own[favorite].measured &&
              own[favorite].ratio * p->min_speedup <= 1.0 &&
              own[favorite].ratio <= x->ratio * p->duel_rematch;
    if (rematch)
      rival = favorite;
  }
  if (rival == SIZE_MAX)
    return STC_OK;
  const size_t winner = x->winner;
  d->held = true;
  d->earlier = report_of[rival] < report_of[winner] ? rival : winner;
  d->later = d->earlier == rival ? winner : rival;
  char *title =
      rematch ? format_string("duel %s vs %s (a rematch: %s, explored first, "
                              "had a ratio %.3gx the winner's)",
                              req->candidates[d->earlier].name,
                              req->candidates[d->later].name,
                              req->candidates[rival].name,
                              own[rival].ratio / x->ratio)
              : format_string("duel %s vs %s", req->candidates[d->earlier].name,
                              req->candidates[d->later].name);
  if (!title)
    return fail(f, STC_ERR_NOMEM, "out of memory writing a duel's note");
  stc_status status = duel_fight(t, req, x, clock, own, winner, rival, title,
                                 pairs, scratch, d, f);
  free(title);
  return status;
}

/* run_duel's head-to-head part, the finalists and the title chosen. */
static stc_status duel_fight(stc_tuner *t, const select_request *req,
                             exploration *x, const budget_clock *clock,
                             const standing *own, size_t winner, size_t rival,
                             const char *title, uint64_t (*pairs)[2],
                             double *scratch, duel *d, failure *f) {
  const stc_tuner_policy *p = &t->policy;
  const char *earlier = req->candidates[d->earlier].name;
  const char *later = req->candidates[d->later].name;
  const char *kept = req->candidates[winner].name;
  const size_t needed =
      p->duel_pairs < DUEL_MIN_PAIRS ? p->duel_pairs : DUEL_MIN_PAIRS;

  /* What fits: the budget left and the duel's own limit, at the two
   * candidates' median times. */
  uint64_t started = elapsed_ns(clock);
  uint64_t allowed = started < p->budget_ns ? p->budget_ns - started : 0;
  if (allowed > p->duel_limit_ns)
    allowed = p->duel_limit_ns;
  double pair_ns = (double)own[winner].ns + (double)own[rival].ns;
  size_t planned = p->duel_pairs;
  if (pair_ns > 0 && (double)allowed / pair_ns < (double)planned)
    planned = (size_t)((double)allowed / pair_ns);
  if (planned > 1 && planned % 2 == 0)
    planned--; /* odd: the median is one measured pair */
  if (planned < needed) {
    d->text = format_string(
        "%s not held: %zu pairs (about %.3g ms) do not fit the "
        "%s left (%.3g ms); %s kept",
        title, needed, (double)needed * pair_ns / 1e6,
        allowed == p->duel_limit_ns ? "duel limit" : "budget",
        (double)allowed / 1e6, kept);
    d->cut_by_budget = allowed < p->duel_limit_ns;
    return duel_said(d, f);
  }

  const char *cut = NULL;
  for (size_t s = 0; s < planned; s++) {
    uint64_t now = elapsed_ns(clock);
    uint64_t budget_left = now < p->budget_ns ? p->budget_ns - now : 0;
    uint64_t used = now - started;
    uint64_t limit_left = used < p->duel_limit_ns ? p->duel_limit_ns - used : 0;
    /* At the pace so far (when slower than planned), pairs that cannot
     * reach the fewest a duel decides on are not started either: a pair
     * starts while time is left, so ceil(left / pace) more can. */
    double pace = s && (double)used / (double)s > pair_ns
                      ? (double)used / (double)s
                      : pair_ns;
    bool hopeless = s < needed && pace > 0 &&
                    (double)s + ceil((double)(budget_left < limit_left
                                                  ? budget_left
                                                  : limit_left) /
                                     pace) < (double)needed;
    if (budget_left == 0 || (hopeless && budget_left < limit_left)) {
      cut = "budget";
      d->cut_by_budget = true;
      break;
    }
    if (limit_left == 0 || hopeless) {
      cut = "duel limit";
      break;
    }
    /* Alternate which runs first, as take_pairs does. */
    bool earlier_first = s % 2 == 0;
    size_t first = earlier_first ? d->earlier : d->later;
    size_t second = earlier_first ? d->later : d->earlier;
    uint64_t t_first = 0, t_second = 0;
    size_t failed = first;
    d->runs[earlier_first ? 0 : 1]++;
    stc_status status = run_measure(req, first, &t_first, f);
    if (status == STC_OK && t_first == 0)
      status = fail(f, STC_ERR_REJECTED, "zero duration cannot be scored");
    if (status == STC_OK) {
      failed = second;
      d->runs[earlier_first ? 1 : 0]++;
      status = run_measure(req, second, &t_second, f);
      if (status == STC_OK && t_second == 0)
        status = fail(f, STC_ERR_REJECTED, "zero duration cannot be scored");
    }
    if (status == STC_ERR_DEVICE)
      return status;
    if (status != STC_OK) {
      /* A finalist that fails loses, as it would in exploration. */
      size_t other = failed == winner ? rival : winner;
      if (other != winner)
        crown(x, other, &own[other]);
      d->text = format_string("%s: %s failed after %zu pair(s) "
                              "(%s); %s wins",
                              title, req->candidates[failed].name, s,
                              f->message, req->candidates[other].name);
      return duel_said(d, f);
    }
    pairs[s][0] = earlier_first ? t_first : t_second;
    pairs[s][1] = earlier_first ? t_second : t_first;
    d->pairs = s + 1;
  }
  if (d->pairs < needed) {
    d->text = format_string("%s cut by the %s after %zu of %zu "
                            "pairs; %s kept",
                            title, cut, d->pairs, planned, kept);
    return duel_said(d, f);
  }
  double ratio = 0, mad = 0;
  score_verdict verdict = paired_score((const uint64_t(*)[2])pairs, d->pairs,
                                       p->max_relative_mad, scratch, &ratio,
                                       &mad);
  char taken[96] = "";
  if (cut)
    snprintf(taken, sizeof taken, " (cut by the %s: %zu of %zu)", cut,
             d->pairs, planned);
  if (verdict != SCORE_OK) {
    d->text = format_string(
        "%s: %zu pairs%s too noisy (paired median ratio %s/%s "
        "%.4f, relative MAD %.3g > %.3g); %s kept",
        title, d->pairs, taken, later, earlier,
        ratio, mad, p->max_relative_mad, kept);
    return duel_said(d, f);
  }
  bool later_wins = ratio * p->min_improvement < 1.0;
  size_t chosen = later_wins ? d->later : d->earlier;
  if (chosen != winner)
    crown(x, chosen, &own[chosen]);
  d->text = format_string(
      "%s: %zu pairs%s, paired median ratio %s/%s %.4f (relative "
      "MAD %.3g): %s %s %.3gx faster, %s wins%s",
      title, d->pairs, taken, later, earlier, ratio, mad, later,
      later_wins ? "is at least" : "is not", p->min_improvement,
      req->candidates[chosen].name,
      chosen != winner ? " (the ratios to the reference had it the other way)"
                       : "");
  return duel_said(d, f);
}

/* The exploration order of the candidates other than the reference into
 * sequence: the caller's (given, under "promising"), then the rest in index
 * order. False when the caller's lists an index out of range or twice. */
static bool exploration_order(const select_request *req, const size_t *given,
                              size_t given_count, bool *listed,
                              size_t *sequence) {
  size_t n = 0;
  if (given_count > req->count)
    return false;
  for (size_t i = 0; i < given_count; i++) {
    size_t index = given[i];
    if (index >= req->count || listed[index])
      return false;
    listed[index] = true;
    if (index != req->reference)
      sequence[n++] = index;
  }
  for (size_t index = 0; index < req->count; index++)
    if (index != req->reference && !listed[index])
      sequence[n++] = index;
  return true;
}

static stc_status explore(stc_tuner *t, const select_request *req,
                          exploration *x, failure *f) {
  const stc_tuner_policy *p = &t->policy;
  const size_t reference = req->reference;
  budget_clock clock;
  lock_state(t);
  clock.now = t->clock ? t->clock : monotonic_ns;
  clock.user = t->clock_user;
  void (*hook)(void *user) = t->explore_hook;
  void *hook_user = t->explore_user;
  unlock_state(t);
  if (hook)
    hook(hook_user); /* before the clock: no budget pays for it */
  clock.started = clock.now(clock.user);

  memset(x, 0, sizeof *x);
  /* The buffers serve each candidate's pairs and the duel's. */
  size_t most_pairs = p->samples > p->duel_pairs ? p->samples : p->duel_pairs;
  uint64_t(*pairs)[2] = malloc(most_pairs * sizeof *pairs);
  double *scratch = malloc(most_pairs * sizeof *scratch);
  bool *scored = calloc(req->count, sizeof *scored);
  standing *own = calloc(req->count, sizeof *own);
  duel final = {0};
  size_t *report_of = calloc(req->count, sizeof *report_of);
  bool *listed = calloc(req->count, sizeof *listed);
  size_t *sequence = calloc(req->count, sizeof *sequence);
  size_t *given = calloc(req->count, sizeof *given);
  stc_status status = STC_OK;
  if (!pairs || !scratch || !scored || !own || !report_of || !listed ||
      !sequence || !given ||
      !report_start(&x->report, req->problem, req->candidates[reference].name,
                    req->count)) {
    status = fail(f, STC_ERR_NOMEM, "out of memory starting a tune");
    goto done;
  }
  /* Report order: the reference first, then the exploration order, asked
   * for now that it is needed. */
  size_t given_count = 0;
  if (p->order == STC_ORDER_PROMISING && req->order && req->order->fill)
    given_count = req->order->fill(req->order->user, given, req->count);
  if (!exploration_order(req, given, given_count, listed, sequence)) {
    status = fail(f, STC_ERR_INVALID,
                  "an exploration order lists candidate indices below the "
                  "candidate count, each at most once");
    goto done;
  }
  report_of[reference] = 0;
  for (size_t i = 0; i + 1 < req->count; i++)
    report_of[sequence[i]] = i + 1;
  for (size_t i = 0; i < req->count; i++)
    if (!(x->report.candidates[report_of[i]].name =
              strdup(req->candidates[i].name))) {
      status = fail(f, STC_ERR_NOMEM, "out of memory starting a tune");
      goto done;
    }

  /* The reference is warmed up and checked first, whatever the budget: a
   * failing reference is an error, never permission to pick an unchecked
   * candidate. */
  stc_candidate_report *ref_report = &x->report.candidates[0];
  uint64_t ignored, reference_time = 0;
  bool reference_checked = false;
  uint32_t reference_warmups = p->warmups;
  if (p->validate_first) {
    ref_report->trials++;
    if ((status = run_validation(t, req, reference, &reference_checked, f)))
      goto done;
    if (reference_warmups)
      reference_warmups--;
  }
  for (uint32_t w = 0; w < reference_warmups; w++) {
    ref_report->trials++;
    if ((status = run_measure(req, reference, &ignored, f)) != STC_OK)
      goto done;
  }
  if (!p->validate_first) {
    ref_report->trials++;
    if ((status = run_validation(t, req, reference, &reference_checked, f)))
      goto done;
  }
  ref_report->trials++;
  if ((status = run_measure(req, reference, &reference_time, f)))
    goto done;
  if (reference_time == 0) {
    status = fail(f, STC_ERR_UNAVAILABLE, "reference has zero elapsed time");
    goto done;
  }
  x->winner = reference;
  x->reference = reference;
  x->ratio = 1.0;
  x->checked = reference_checked;
  x->reference_ns = x->winner_ns = reference_time;
  x->reference_estimate = (double)reference_time;

  ref_report->samples = 1;
  ref_report->has_ratio = true;
  ref_report->ratio = 1.0;
  ref_report->relative_mad = 0.0;
  ref_report->verified = reference_checked;

  uint32_t attempted = 1;
  bool exhausted = false;
  for (size_t position = 0; position + 1 < req->count; position++) {
    size_t index = sequence[position];
    stc_candidate_report *report = &x->report.candidates[report_of[index]];
    char *note = NULL;
    if (!allowed(t, req, index)) {
      note = format_string("skipped: ineligible, unknown/over-limit "
                           "workspace, or banned after a regression");
    } else if (attempted >= p->max_candidates) {
      exhausted = true;
      note = format_string("skipped: search budget exhausted (candidate "
                           "limit %" PRIu32 " reached)",
                           p->max_candidates);
    } else if (elapsed_ns(&clock) >= p->budget_ns) {
      exhausted = true;
      note = format_string("skipped: search budget exhausted (time)");
    } else if (p->target_ns && attempted > 1 &&
               elapsed_ns(&clock) >= p->target_ns) {
      /* The less promising rest is what a target cut drops; the most
       * promising (a vendor library, say) is tried even when the
       * reference alone took the target, or a slow reference would keep
       * itself. */
      exhausted = true;
      note = format_string("skipped: search budget exhausted (tuning "
                           "target %.4g ms reached)",
                           (double)p->target_ns / 1e6);
    } else {
      attempted++;
      trial tr = {0};
      status = run_trial(t, req, index, &clock, x, pairs, scratch, &tr, f);
      /* Too noisy: fresh pairs, noise_retries times at most, while the
       * budget lasts (a cut set is scored as it is). */
      while (status == STC_OK && !tr.cut && tr.retimed < p->noise_retries &&
             elapsed_ns(&clock) < p->budget_ns &&
             too_noisy((const uint64_t(*)[2])pairs, tr.pairs,
                       p->max_relative_mad, scratch)) {
        race fresh = RACE_START;
        tr.retimed++;
        status = take_pairs(t, req, index, &clock, x, pairs, scratch, &fresh,
                            &tr, f);
      }
      report->trials = tr.runs;
      exhausted |= tr.cut;
      if (tr.pairs) {
        for (size_t s = 0; s < tr.pairs; s++)
          scratch[s] = (double)pairs[s][0];
        x->reference_estimate = median(scratch, tr.pairs);
      }
      if (status == STC_ERR_DEVICE)
        goto done;
      if (status != STC_OK) {
        if (tr.raced_out) {
          report_partial((const uint64_t(*)[2])pairs, &tr, scratch, report);
          if (report->has_ratio)
            stand((const uint64_t(*)[2])pairs, tr.pairs, tr.checked,
                  report->ratio, scratch, &own[index]);
          note = format_string("%s", f->message);
        } else {
          note = format_string("rejected: %s", f->message);
        }
        status = STC_OK;
      } else {
        note = score_candidate(t, x, index, tr.checked,
                               (const uint64_t(*)[2])pairs, tr.pairs, scratch,
                               report, &scored[index], &own[index]);
        if (note && tr.retimed && !scored[index]) {
          char *longer = format_string("%s, on its %" PRIu32 " fresh set(s) of "
                                       "pairs too", note, tr.retimed);
          free(note);
          note = longer;
        }
      }
    }
    if (!set_note(report, note)) {
      status = fail(f, STC_ERR_NOMEM, "out of memory writing a report");
      goto done;
    }
  }
  if (p->duel_pairs && x->winner != reference) {
    status = run_duel(t, req, x, &clock, own, report_of, pairs, scratch,
                      &final, f);
    if (status != STC_OK)
      goto done;
    if (final.held) {
      x->report.candidates[report_of[final.earlier]].trials += final.runs[0];
      x->report.candidates[report_of[final.later]].trials += final.runs[1];
      exhausted |= final.cut_by_budget;
    }
  }
  if (!finish_notes(t, req, x, scored, report_of, &final)) {
    status = fail(f, STC_ERR_NOMEM, "out of memory writing a report");
    goto done;
  }
  free(x->report.winner);
  if (!(x->report.winner = strdup(req->candidates[x->winner].name))) {
    status = fail(f, STC_ERR_NOMEM, "out of memory writing a report");
    goto done;
  }
  x->report.elapsed_ns = elapsed_ns(&clock);
  x->report.budget_exhausted = exhausted || x->report.elapsed_ns >= p->budget_ns;
  for (size_t i = 0; i < x->report.num_candidates; i++)
    x->report.trials += x->report.candidates[i].trials;

done:
  free(pairs);
  free(scratch);
  free(scored);
  free(own);
  free(final.text);
  free(report_of);
  free(listed);
  free(sequence);
  free(given);
  if (status != STC_OK)
    report_clear(&x->report);
  return status;
}

/* ---- selection (rules 1-6) ---------------------------------------------- */

/* Rule 6's outcome: keep the record and report, or mark the key bypassed
 * (validation unavailable), or fail. */
static stc_status finish_exploration(stc_tuner *t, const select_request *req,
                                     stc_decision *out, stc_error *err) {
  exploration x;
  failure f = {STC_OK, ""};
  stc_status status = explore(t, req, &x, &f);
  if (status == STC_OK) {
    stc_cache_record record = {
        .scope = (uint8_t)req->problem->scope,
        .key = strdup(req->key),
        .winner = strdup(req->candidates[x.winner].name),
        .created = stc_now_seconds(),
        .reference_ns = x.reference_ns,
        .winner_ns = x.winner_ns,
        .ratio = x.ratio,
        .verified = x.checked,
    };
    status = (record.key && record.winner)
                 ? make_decision(out, x.winner, req->reference,
                                 record.winner, STC_SOURCE_TUNED, x.checked,
                                 true, x.ratio, req->key, err)
                 : STC_ERR_NOMEM;
    if (status != STC_OK) {
      stc_error_set(err, NULL, 0, 0, "out of memory keeping a decision");
      stc_cache_record_clear(&record);
      report_clear(&x.report);
      return status;
    }
    if (req->problem->persistent && t->disk &&
        stc_disk_cache_save(t->disk, &record, NULL) != STC_OK)
      count_warning(t);
    lock_state(t);
    store_record_locked(t, req, &record);
    t->stats.tunes++;
    push_report_locked(t, &x.report);
    unlock_state(t);
    return STC_OK;
  }
  if (status == STC_ERR_UNAVAILABLE) {
    /* The reference cannot be checked or timed here: keep running the
     * declared reference for this key, never an unchecked winner. */
    stc_tune_report report;
    bool have_report = report_start(&report, req->problem,
                                     req->candidates[req->reference].name, 1);
    if (have_report) {
      report.candidates[0].name = strdup(req->candidates[req->reference].name);
      report.candidates[0].note = strdup(f.message);
      have_report = report.candidates[0].name && report.candidates[0].note;
      if (!have_report)
        report_clear(&report);
    }
    lock_state(t);
    key_entry *e;
    if (entry_touch(t, req->key, req->hash, &e) == STC_OK) {
      e->bypass = true;
      e->bypass_scope = req->problem->scope;
    } else {
      t->stats.cache_warnings++;
    }
    if (have_report)
      push_report_locked(t, &report);
    unlock_state(t);
    return fallback(req, STC_SOURCE_VALIDATION_UNAVAILABLE, out, err);
  }
  if (status == STC_ERR_DEVICE)
    fail_device(t, req->problem->environment);
  stc_error_set(err, NULL, 0, 0, "%s", f.message);
  return status;
}

/* Whether every candidate has a code identity: only then does a
 * trust_verified key say what every candidate's code is. */
static bool identities_known(const select_request *req) {
  for (size_t i = 0; i < req->count; i++)
    if (!nonempty(req->candidates[i].code_identity))
      return false;
  return true;
}

/* A disk record found usable: kept in memory (taking ownership) and
 * answered as a disk-cache decision. */
static stc_status disk_hit(stc_tuner *t, const select_request *req,
                           stc_cache_record *record, size_t index,
                           bool checked, bool trusted, bool served,
                           stc_decision *out, stc_error *err) {
  record->verified = checked;
  stc_status status =
      make_decision(out, index, req->reference, req->candidates[index].name,
                    STC_SOURCE_DISK_CACHE, checked, true, record->ratio,
                    req->key, err);
  if (status != STC_OK) {
    /* A served call holds the winner's result: say so even now. */
    out->served = served;
    stc_cache_record_clear(record);
    return status;
  }
  out->trusted = trusted;
  out->served = served;
  out->record_created = record->created;
  lock_state(t);
  store_record_locked(t, req, record);
  t->stats.disk_hits++;
  if (trusted)
    t->stats.trusted_hits++;
  unlock_state(t);
  return STC_OK;
}

/* Deletes key's disk record; with ban, winner is never selected again for
 * the key in this process (a wrong result seen here). */
static void drop_disk_record(stc_tuner *t, const select_request *req,
                             const char *winner, bool ban) {
  if (ban) {
    lock_state(t);
    key_entry *e = entry_find(t, req->key, req->hash);
    if ((e || entry_touch(t, req->key, req->hash, &e) == STC_OK) &&
        set_add(&e->banned, winner) != STC_OK)
      t->stats.cache_warnings++;
    t->stats.invalidations++;
    unlock_state(t);
  }
  if (disk_fault(stc_disk_cache_remove(t->disk, req->key, NULL)))
    count_warning(t);
}

/* The check on the call being served (check_on_call): the winner runs on
 * the call's arguments and the reference on scratch copies, so the check
 * costs one reference run. Returns as try_disk. */
static stc_status check_on_call(stc_tuner *t, const select_request *req,
                                stc_cache_record *record, size_t index,
                                stc_decision *out, stc_error *err) {
  char message[STC_TUNER_MESSAGE] = "";
  stc_validation outcome = STC_VALIDATION_UNSUPPORTED;
  bool served = false;
  stc_status status = req->runner->check_on_call(
      req->runner->user, req->reference, index, &t->policy.tolerance,
      &outcome, &served, message, sizeof message);
  message[sizeof message - 1] = 0;
  lock_state(t);
  t->stats.disk_checks++;
  unlock_state(t);
  if (status == STC_OK && outcome == STC_VALIDATION_PASSED)
    return disk_hit(t, req, record, index, true, false, served, out, err);
  if (status == STC_OK && outcome == STC_VALIDATION_UNSUPPORTED && !served) {
    /* No validator for these outputs, and nothing ran. */
    if (!t->policy.require_validation)
      return disk_hit(t, req, record, index, false, false, false, out, err);
    /* A verified record that cannot be checked here: the seed's answer. */
    stc_cache_record_clear(record);
    drop_disk_record(t, req, NULL, false);
    return STC_ERR_NOT_FOUND;
  }
  bool wrong = status == STC_ERR_REJECTED; /* a wrong result, seen here */
  if (status == STC_OK)
    status = STC_ERR_REJECTED; /* an outcome the contract does not allow */
  if (status == STC_ERR_DEVICE) {
    stc_cache_record_clear(record);
    fail_device(t, req->problem->environment);
    stc_error_set(err, NULL, 0, 0, "%s",
                  message[0] ? message : "device error checking a cached decision");
    out->served = served; /* then the call holds the reference's result */
    return status;
  }
  /* The stored winner is wrong (or failed) in this process: forget it, and
   * ban it when it was seen to compute a wrong result. */
  char *winner = record->winner;
  record->winner = NULL;
  stc_cache_record_clear(record);
  drop_disk_record(t, req, winner, wrong);
  free(winner);
  if (!served)
    return STC_ERR_NOT_FOUND; /* nothing ran: select on as the seed did */
  /* The call holds the reference's result: this call is answered, and the
   * next one selects again (the record is gone). */
  status = make_decision(out, req->reference, req->reference,
                         req->candidates[req->reference].name,
                         STC_SOURCE_CHECK_FAILED, false, false, 0, req->key,
                         err);
  out->served = true;
  return status;
}

/* Rule 5: a disk record is used only after its winner is checked once in
 * this process: on the call it serves (check_on_call), else by a separate
 * validation (the seed); under trust_verified a verified record whose key
 * names every candidate's code is used unchecked. Returns STC_OK with *out
 * filled on a hit (or a check-failed answer), STC_ERR_NOT_FOUND to go on,
 * or an error (a device fault). */
static stc_status try_disk(stc_tuner *t, const select_request *req,
                           stc_decision *out, stc_error *err) {
  stc_cache_record record;
  memset(&record, 0, sizeof record);
  stc_status status = stc_disk_cache_load(t->disk, req->key, &record, NULL);
  if (status == STC_ERR_NOT_FOUND)
    return STC_ERR_NOT_FOUND;
  if (disk_fault(status)) {
    count_warning(t);
    return STC_ERR_NOT_FOUND;
  }
  size_t index = 0;
  lock_state(t);
  bool usable = record.key && strcmp(record.key, req->key) == 0 &&
                record.scope == (uint8_t)req->problem->scope &&
                usable_record_locked(t, req,
                                     entry_find(t, req->key, req->hash),
                                     &record, &index);
  unlock_state(t);
  if (!usable) {
    stc_cache_record_clear(&record);
    return STC_ERR_NOT_FOUND;
  }
  if (t->policy.trust_verified && record.verified && identities_known(req))
    return disk_hit(t, req, &record, index, true, true, false, out, err);
  if (t->policy.check_on_call && req->runner->check_on_call) {
    /* The reference is what every fallback runs: nothing to check. */
    if (index == req->reference)
      return disk_hit(t, req, &record, index, record.verified, false, false,
                      out, err);
    return check_on_call(t, req, &record, index, out, err);
  }
  bool checked = false;
  failure f = {STC_OK, ""};
  lock_state(t);
  t->stats.disk_checks++;
  unlock_state(t);
  status = run_validation(t, req, index, &checked, &f);
  if (status == STC_ERR_DEVICE) {
    stc_cache_record_clear(&record);
    fail_device(t, req->problem->environment);
    stc_error_set(err, NULL, 0, 0, "%s", f.message);
    return status;
  }
  if (status != STC_OK) {
    /* The stored winner is wrong for this process: forget it. */
    stc_cache_record_clear(&record);
    drop_disk_record(t, req, NULL, false);
    return STC_ERR_NOT_FOUND;
  }
  return disk_hit(t, req, &record, index, checked, false, false, out, err);
}

/* What runs while this call holds the permit for its key and device. */
static stc_status select_with_permit(stc_tuner *t, const select_request *req,
                                     stc_decision *out, stc_error *err) {
  if (req->problem->persistent && t->disk) {
    stc_status status = try_disk(t, req, out, err);
    if (status != STC_ERR_NOT_FOUND)
      return status;
  }
  if (t->policy.mode == STC_MODE_CACHE_ONLY)
    return fallback(req, STC_SOURCE_CACHE_MISS, out, err);
  /* A fleet shares the disk cache's remote tier: one machine tunes a key,
   * the others run the reference and find its record on a later call. */
  if (req->problem->persistent && t->disk &&
      !stc_disk_cache_may_tune(t->disk, req->key))
    return fallback(req, STC_SOURCE_BUSY, out, err);
  return finish_exploration(t, req, out, err);
}

/* Rules 2-4 against memory state, under one lock hold. Returns STC_OK with
 * *out filled when the call is answered, STC_ERR_NOT_FOUND to go on. */
static stc_status answer_from_memory(stc_tuner *t, const select_request *req,
                                     stc_decision *out, stc_error *err) {
  lock_state(t);
  if (set_contains(&t->poisoned, req->problem->environment)) {
    unlock_state(t);
    stc_error_set(err, NULL, 0, 0,
                  "device tuning lane '%.200s' is quarantined after an "
                  "unconfirmed device completion",
                  req->problem->environment);
    return STC_ERR_QUARANTINED;
  }
  if (t->policy.mode == STC_MODE_DISABLED) {
    unlock_state(t);
    return fallback(req, STC_SOURCE_DISABLED, out, err);
  }
  key_entry *e = entry_find(t, req->key, req->hash);
  size_t index;
  if (e && e->has_record &&
      usable_record_locked(t, req, e, &e->record, &index)) {
    bool verified = e->record.verified;
    double ratio = e->record.ratio;
    t->stats.memory_hits++;
    unlock_state(t);
    return make_decision(out, index, req->reference,
                         req->candidates[index].name, STC_SOURCE_MEMORY_CACHE,
                         verified, true, ratio, req->key, err);
  }
  bool bypass = e && e->bypass;
  unlock_state(t);
  if (bypass)
    return fallback(req, STC_SOURCE_VALIDATION_UNAVAILABLE, out, err);
  return STC_ERR_NOT_FOUND;
}

/* Rule 4: takes the permit (key + device) or answers "busy" at once. */
static stc_status take_permit(stc_tuner *t, const select_request *req,
                              bool *busy) {
  *busy = false;
  lock_state(t);
  if (set_contains(&t->pending, req->key) ||
      set_contains(&t->devices, req->problem->environment) ||
      t->pending.count >= t->policy.max_parallel_tunes) {
    t->stats.busy_fallbacks++;
    unlock_state(t);
    *busy = true;
    return STC_OK;
  }
  if (set_add(&t->pending, req->key) != STC_OK ||
      set_add(&t->devices, req->problem->environment) != STC_OK) {
    set_remove(&t->pending, req->key);
    unlock_state(t);
    return STC_ERR_NOMEM;
  }
  t->stats.misses++;
  unlock_state(t);
  return STC_OK;
}

static void release_permit(stc_tuner *t, const select_request *req) {
  lock_state(t);
  set_remove(&t->pending, req->key);
  set_remove(&t->devices, req->problem->environment);
  unlock_state(t);
}

stc_status stc_tuner_select(stc_tuner *tuner, const stc_problem *problem,
                            const stc_candidate *candidates, size_t count,
                            size_t reference, const stc_trial_runner *runner,
                            stc_decision *out, stc_error *err) {
  return stc_tuner_select_ordered(tuner, problem, candidates, count, reference,
                                  NULL, runner, out, err);
}

stc_status stc_tuner_select_ordered(stc_tuner *tuner, const stc_problem *problem,
                                    const stc_candidate *candidates,
                                    size_t count, size_t reference,
                                    const stc_exploration_order *order,
                                    const stc_trial_runner *runner,
                                    stc_decision *out, stc_error *err) {
  if (out)
    memset(out, 0, sizeof *out);
  if (!tuner || !problem || !runner || !runner->validate || !runner->measure ||
      !out) {
    stc_error_set(err, NULL, 0, 0,
                  "a tuner, problem, trial runner and output are required");
    return STC_ERR_INVALID;
  }
  stc_status status =
      check_request(tuner, problem, candidates, count, reference, err);
  if (status != STC_OK)
    return status;
  select_request req = {problem, candidates, count, reference, runner,
                        order,   NULL,       0};
  if ((status = build_key(tuner, &req, err)) != STC_OK)
    return status;

  status = answer_from_memory(tuner, &req, out, err);
  if (status != STC_ERR_NOT_FOUND)
    goto done;
  if (stc_tuner_is_tuning()) {
    status = fallback(&req, STC_SOURCE_NESTED, out, err);
    goto done;
  }
  bool busy;
  if ((status = take_permit(tuner, &req, &busy)) != STC_OK) {
    stc_error_set(err, NULL, 0, 0, "out of memory taking a tuning permit");
    goto done;
  }
  if (busy) {
    status = fallback(&req, STC_SOURCE_BUSY, out, err);
    goto done;
  }
  stc_tuner_depth++;
  status = select_with_permit(tuner, &req, out, err);
  stc_tuner_depth--;
  release_permit(tuner, &req);
done:
  free(req.key);
  return status;
}

/* ---- invalidation and regressions (rule 8) ------------------------------ */

void stc_tuner_invalidate(stc_tuner *tuner, const stc_decision *decision,
                          bool ban) {
  if (!tuner || !decision || !decision->cache_key || !decision->name)
    return;
  uint64_t hash = key_hash(decision->cache_key);
  bool want_ban = ban && decision->index != decision->reference_index;
  char digest[65];
  stc_sha256_hex(decision->cache_key, strlen(decision->cache_key), digest);
  lock_state(tuner);
  /* The disk record goes below: its win no longer counts either. */
  stc__won_records_remove(&tuner->disk_wins, hash, digest);
  key_entry *e = entry_find(tuner, decision->cache_key, hash);
  if (e) {
    stc_cache_record_clear(&e->record);
    e->has_record = false;
    e->bypass = false;
    free(e->window);
    e->window = NULL;
    e->window_head = e->window_count = 0;
  }
  /* A ban keeps the key's FIFO slot (created if it had none), so that it
   * stays bounded by capacity like every other retained state. */
  if (want_ban && (e || entry_touch(tuner, decision->cache_key, hash, &e) ==
                            STC_OK)) {
    if (set_add(&e->banned, decision->name) != STC_OK)
      tuner->stats.cache_warnings++;
  }
  if (e && entry_is_empty(e))
    entry_drop(tuner, e);
  tuner->stats.invalidations++;
  unlock_state(tuner);
  if (tuner->disk &&
      disk_fault(stc_disk_cache_remove(tuner->disk, decision->cache_key, NULL)))
    count_warning(tuner);
}

stc_status stc_tuner_record_comparison(stc_tuner *tuner,
                                       const stc_decision *decision,
                                       uint64_t reference_ns,
                                       uint64_t selected_ns, bool checked,
                                       bool *invalidated) {
  if (invalidated)
    *invalidated = false;
  if (!tuner || !decision || !decision->cache_key || !decision->name ||
      !checked || reference_ns == 0 || selected_ns == 0)
    return STC_ERR_INVALID;
  const uint32_t window = tuner->policy.regression_pairs;
  uint64_t hash = key_hash(decision->cache_key);
  bool regressed = false;
  lock_state(tuner);
  key_entry *e = entry_find(tuner, decision->cache_key, hash);
  /* Only the decision still on record is judged; a stale one is ignored. */
  if (!e || !e->has_record || strcmp(e->record.winner, decision->name) != 0) {
    unlock_state(tuner);
    return STC_OK;
  }
  if (!e->window && !(e->window = malloc(window * sizeof *e->window))) {
    unlock_state(tuner);
    return STC_ERR_NOMEM;
  }
  double ratio = (double)selected_ns / (double)reference_ns;
  if (e->window_count == window) {
    e->window[e->window_head] = ratio;
    e->window_head = (e->window_head + 1) % window;
  } else {
    e->window[(e->window_head + e->window_count) % window] = ratio;
    e->window_count++;
  }
  stc_status status = STC_OK;
  if (e->window_count >= window) {
    /* median() reorders: judge a copy, keep the ring in arrival order. */
    double *values = malloc(e->window_count * sizeof *values);
    if (values) {
      memcpy(values, e->window, e->window_count * sizeof *values);
      regressed = median(values, e->window_count) >
                  tuner->policy.regression_ratio;
      free(values);
    } else {
      status = STC_ERR_NOMEM;
    }
  }
  unlock_state(tuner);
  if (status != STC_OK)
    return status;
  if (regressed) {
    stc_tuner_invalidate(tuner, decision, true);
    if (invalidated)
      *invalidated = true;
  }
  return STC_OK;
}

/* ---- winners per operation kind (ordering) ----------------------------- */

void stc_win_counts_free(stc_win_count *counts, size_t count) {
  if (!counts)
    return;
  for (size_t i = 0; i < count; i++)
    free(counts[i].name);
  free(counts);
}

/* Whether key's state is in memory, found by its digest (a disk record
 * whose key is also in memory counts there, or not at all). Lock held. */
static bool entry_known_locked(stc_tuner *t, uint64_t hash,
                               const char *digest) {
  if (!t->bucket_count)
    return false;
  for (key_entry *e = t->buckets[hash % t->bucket_count]; e; e = e->chain)
    if (e->hash == hash && strcmp(entry_digest(e), digest) == 0)
      return true;
  return false;
}

stc_status stc_tuner_win_counts(stc_tuner *tuner, const char *kind,
                                const char *environment, stc_win_count **out,
                                size_t *count) {
  if (out)
    *out = NULL;
  if (count)
    *count = 0;
  if (!tuner || !kind || !out || !count)
    return STC_ERR_INVALID;
  /* The first caller reads the disk records, without the lock; a caller
   * meanwhile counts memory only rather than wait. */
  lock_state(tuner);
  bool read_disk = tuner->disk && tuner->disk_wins_state == DISK_WINS_UNREAD;
  if (read_disk)
    tuner->disk_wins_state = DISK_WINS_READING;
  unlock_state(tuner);
  if (read_disk) {
    stc__won_records loaded = {0};
    stc_status status = stc__won_records_load(tuner->disk, &loaded);
    if (status != STC_OK && status != STC_ERR_NOMEM)
      count_warning(tuner);
    lock_state(tuner);
    tuner->disk_wins = loaded; /* what was read before a fault still counts */
    tuner->disk_wins_state = DISK_WINS_READ;
    unlock_state(tuner);
  }
  const int64_t now = stc_now_seconds();
  stc__tally tally = {0};
  stc_status status = STC_OK;
  lock_state(tuner);
  for (key_entry *e = tuner->oldest; status == STC_OK && e; e = e->newer)
    if (e->has_record && e->record.winner &&
        stc_cache_record_is_fresh(&e->record, now, tuner->policy.ttl_seconds) &&
        stc__tuner_key_matches(e->key, kind, environment))
      status = stc__tally_add(&tally, e->record.winner);
  for (size_t i = 0; status == STC_OK && i < tuner->disk_wins.count; i++) {
    const stc__won_record *r = &tuner->disk_wins.items[i];
    stc_cache_record created = {.created = r->created};
    if (strcmp(r->kind, kind) == 0 &&
        (!environment || strcmp(r->environment, environment) == 0) &&
        stc_cache_record_is_fresh(&created, now, tuner->policy.ttl_seconds) &&
        !entry_known_locked(tuner, r->key_hash, r->key_digest))
      status = stc__tally_add(&tally, r->winner);
  }
  unlock_state(tuner);
  if (status != STC_OK) {
    stc_win_counts_free(tally.counts, tally.count);
    return status;
  }
  stc__tally_sort(&tally);
  *out = tally.count ? tally.counts : NULL;
  *count = tally.count;
  if (!tally.count)
    free(tally.counts);
  return STC_OK;
}

/* ---- rule 9 ------------------------------------------------------------- */

static int compare_digests(const void *a, const void *b) {
  return memcmp(a, b, 64);
}

/* One retained lower-level decision, as a fixed-size digest so that the
 * parts can be collected under the lock without copying whole keys. */
static void part_digest(const char *key_digest, const char *tag,
                        const char *choice, char out[65]) {
  key_writer w = {NULL, 0};
  put_field(&w, "key", key_digest);
  put_field(&w, tag, choice);
  char *text = malloc(w.length + 1);
  if (!text) {
    memset(out, 'f', 64);
    out[64] = 0;
    return;
  }
  w.buffer = text;
  w.length = 0;
  put_field(&w, "key", key_digest);
  put_field(&w, tag, choice);
  stc_sha256_hex(text, w.length, out);
  free(text);
}

bool stc_tuner_cache_fault(stc_tuner *tuner, char *buffer, size_t size) {
  if (size)
    buffer[0] = 0;
  return tuner && tuner->disk && stc_disk_cache_last_fault(tuner->disk, buffer, size);
}

bool stc_tuner_set_remote(stc_tuner *tuner, stc_remote_cache *remote) {
  if (!tuner || !tuner->disk) {
    stc_remote_cache_close(remote);
    return false;
  }
  stc_disk_cache_set_remote(tuner->disk, remote);
  return true;
}

bool stc_tuner_remote_fault(stc_tuner *tuner, char *buffer, size_t size) {
  if (buffer && size)
    buffer[0] = 0;
  return tuner && stc_remote_cache_last_fault(stc_disk_cache_remote(tuner->disk),
                                              buffer, size, NULL);
}

void stc_tuner_lower_level_fingerprint(stc_tuner *tuner, char out[65]) {
  static atomic_ullong unavailable;
  if (!out)
    return;
  if (!tuner) {
    out[0] = 0;
    return;
  }
  const int64_t now = stc_now_seconds();
  lock_state(tuner);
  char(*parts)[65] = malloc((tuner->entry_count ? tuner->entry_count : 1) * 2 *
                            sizeof *parts);
  size_t count = 0;
  for (key_entry *e = parts ? tuner->oldest : NULL; e; e = e->newer) {
    if (e->has_record && e->record.scope != STC_SCOPE_PIPELINE &&
        stc_cache_record_is_fresh(&e->record, now, tuner->policy.ttl_seconds))
      part_digest(entry_digest(e), "winner", e->record.winner,
                  parts[count++]);
    /* Bypassed operators run their declared reference, never an unchecked
     * winner. */
    if (e->bypass && e->bypass_scope != STC_SCOPE_PIPELINE)
      part_digest(entry_digest(e), "unverified-reference", "",
                  parts[count++]);
  }
  unlock_state(tuner);
  if (!parts) {
    /* Never hide a changed choice: an unknown state matches no earlier key. */
    snprintf(out, 65, "unavailable-%llu",
             (unsigned long long)atomic_fetch_add(&unavailable, 1));
    return;
  }
  qsort(parts, count, sizeof *parts, compare_digests);
  stc_sha256_hex(parts, count * sizeof *parts, out);
  free(parts);
}
