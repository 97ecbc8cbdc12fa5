/* warm_start.c - the warm-start index (README "Warm starts", docs/aot.md
 * "Start-up cost").
 *
 * A process from a warm cache asks the tuner about each site's first call.
 * Each answer costs a record's load (open, read, checksum) and the first
 * one creates the tuner (the cache directory's checks), the CPU identity
 * (CPUID, which traps in a virtual machine) and the vendor-BLAS lookup:
 * 0.1-0.3 ms per process here, to learn, for most sites, that the
 * reference stays or that a winner's check waits for a later call. In a
 * process that calls each site once, that is all the tuned program adds to
 * the default lowering's.
 *
 * The index keeps those answers: one small file per host and configuration,
 * DIR/warm-v1/h<host name hash>-c<configuration hash>.idx, mapping (site fingerprint,
 * workload) to "reference" or "deferred" (with the winner, its saving and
 * whether it was trusted) and the record's creation time. A first call it
 * answers runs the reference without the tuner: for "reference" the
 * reference is published, as the tuner's answer would have been; for
 * "deferred" the workload stays undecided, and its calls run the
 * reference, timed, until the one the tuner's deferral would have checked
 * or switched on (check_at_call, rent or buy), which asks the tuner
 * (dispatch.c, warm_call). At most INDEX_FILES files are kept (the newest).
 *
 * Soundness: an index answer only ever runs the reference, which needs no
 * check; a stale, corrupt or planted index can cost speed, never a wrong
 * result. A file that does not parse, or whose stamp differs, is no index.
 *
 * Freshness: the index is valid while nothing the tuner's answers depend
 * on changed since it was written. Its stamp holds:
 *  - the records: DIR/v1's device, inode and modification time (writing,
 *    replacing or deleting a record changes it). A process writes the index
 *    only if that time is at least settle seconds older than the process's
 *    first look (file times come from a coarse clock: a change within the
 *    same tick would not show) and did not change until exit (its answers
 *    were the records' at one time);
 *  - the configuration: the policy's bytes (zero-filled before its fields
 *    are set), and the environment the tuner's key reads: the STC_*
 *    variables but reports and benchmarks (tags, the vendor BLAS), and
 *    LD_LIBRARY_PATH;
 *  - the machine: the host name (the file's name), when this boot began
 *    (the CPU identity cannot change within one boot), the stc version,
 *    and /etc/ld.so.cache (a library installed
 *    with ldconfig may change the vendor-BLAS lookup).
 * Each entry also keeps its record's creation time, judged against the
 * policy's TTL as records are.
 *
 * Not used: without a cache directory, with a remote (fleet) tier, with
 * STC_TUNE_CHECK_ALL, for GPU sites, or with STC_TUNE_WARM_START=0
 * (config->warm_start). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* CLOCK_BOOTTIME */
#endif
#include "warm_start.h"

#include "stc/cache_files.h"
#include "stc/hash.h"
#include "stc/status.h"
#include "stc/tuner_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define WARM_DIRECTORY "warm-v1"
#define WARM_MAGIC "stc-warm-start 1"
#define WARM_MAX_ENTRIES 4096
#define WARM_MAX_BYTES (1u << 20)
#define INDEX_FILES 16 /* hosts x configurations sharing a directory */

typedef struct warm_entry {
  uint64_t key;
  int64_t created;
  uint8_t outcome; /* stc_rt__warm_outcome, never NONE */
  uint32_t winner; /* DEFERRED: as in stc_rt__warm_answer */
  double saving;
  bool trusted;
} warm_entry;

enum { STATE_CLOSED, STATE_UNUSABLE, STATE_USABLE };

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_state = STATE_CLOSED;
/* Set under g_lock before g_state becomes USABLE, then read-only. */
static char g_directory[4096];
static char g_name[48];      /* the index's file name in warm-v1 */
static char g_stamp[512];    /* the header the index must carry */
static struct stat g_records; /* DIR/v1 at the first look */
static bool g_settled;        /* ... last changed settle seconds before */
static uint64_t g_ttl_seconds;
static warm_entry *g_loaded;  /* sorted by key; freed only by reset */
static size_t g_loaded_count;
/* Under g_lock. */
static warm_entry *g_noted;
static size_t g_noted_count, g_noted_capacity;
static int64_t g_settle_seconds = 2;
static pthread_once_t g_exit_once = PTHREAD_ONCE_INIT;

/* ---- text without stdio ----
 * The stamp, the index's path and its checksum line are built on a warm
 * process's first site call, where the first snprintf cost it libc's
 * formatter pages (~10 us measured; the hand parser below avoids sscanf's
 * for the same reason). */

typedef struct text_out {
  char *at, *last; /* last: kept for the NUL */
  bool overflow;
} text_out;

static text_out text_out_of(char *buf, size_t size) {
  return (text_out){buf, buf + size - 1, false};
}

static void put_bytes(text_out *o, const char *bytes, size_t n) {
  if (o->overflow || n > (size_t)(o->last - o->at)) {
    o->overflow = true;
    return;
  }
  memcpy(o->at, bytes, n);
  o->at += n;
}

static void put_text(text_out *o, const char *text) {
  put_bytes(o, text, strlen(text));
}

/* value in base 10 or 16 (lower case), zero-padded to width digits. */
static void put_number(text_out *o, uint64_t value, unsigned base, int width) {
  char digits[64];
  int n = 0;
  do {
    digits[sizeof digits - 1 - n++] = "0123456789abcdef"[value % base];
    value /= base;
  } while (value || n < width);
  put_bytes(o, digits + sizeof digits - n, (size_t)n);
}

static void put_signed(text_out *o, int64_t value) {
  if (value < 0)
    put_bytes(o, "-", 1);
  put_number(o, value < 0 ? 0 - (uint64_t)value : (uint64_t)value, 10, 1);
}

/* NUL-terminates; false when the text did not fit. */
static bool text_done(text_out *o) {
  *o->at = 0;
  return !o->overflow;
}

/* ---- hashing ---- */

static uint64_t hash_str(const char *text, uint64_t h) {
  /* The NUL too, so that ("ab", "c") and ("a", "bc") differ. */
  return text ? stc_hash64(text, strlen(text) + 1, h) : stc_hash64("", 0, h);
}

static uint64_t hash_u64(uint64_t value, uint64_t h) {
  return stc_hash64(&value, sizeof value, h);
}

uint64_t stc_rt__warm_site_fingerprint(const stc_rt_site *site) {
  uint64_t h = hash_str(site->site_id, STC_HASH_SEED);
  h = hash_str(site->op_name, h);
  h = hash_u64(site->num_args, h);
  for (uint32_t i = 0; i < site->num_args; i++)
    h = stc_hash64(&site->args[i], sizeof site->args[i], h);
  h = hash_u64(site->num_variants, h);
  h = hash_u64(site->reference, h);
  h = hash_u64(site->slot != NULL, h); /* static-shape eligibility */
  for (uint32_t v = 0; v < site->num_variants; v++) {
    const stc_rt_variant *variant = &site->variants[v];
    h = hash_str(variant->name, h);
    h = hash_str(variant->revision, h);
    h = hash_u64(variant->eligibility, h);
    h = hash_u64(variant->flags, h);
    h = hash_u64(variant->workspace_bytes, h);
    h = hash_str(variant->code_hash, h);
  }
  return h;
}

static uint64_t entry_key(uint64_t site, const char *workload) {
  return hash_str(workload, site);
}

static bool relevant_variable(const char *entry) {
  static const char *const ignored[] = {"STC_TUNE_REPORT=", "STC_BENCH_",
                                        "STC_PROFILE_OUT="};
  if (entry[0] != 'S' && entry[0] != 'L') /* most of an environment */
    return false;
  if (strncmp(entry, "LD_LIBRARY_PATH=", 16) == 0)
    return true;
  if (strncmp(entry, "STC_", 4) != 0)
    return false;
  for (size_t i = 0; i < sizeof ignored / sizeof *ignored; i++)
    if (strncmp(entry, ignored[i], strlen(ignored[i])) == 0)
      return false;
  return true;
}

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The configuration's hash; false without memory. */
static bool config_hash(const stc_rt_dispatch_config *config, uint64_t *out) {
  uint64_t h = stc_hash64(&config->policy, sizeof config->policy,
                          STC_HASH_SEED);
  h = hash_u64(config->recheck_every, h);
  /* The STC_* variables below cover what else of config the environment
   * set; a host's own configuration (stc_rt_dispatch_configure) changes
   * only the policy and recheck_every in ways that matter here. */
  size_t count = 0;
  for (char **e = environ; e && *e; e++)
    count += relevant_variable(*e);
  const char **list = malloc((count ? count : 1) * sizeof *list);
  if (!list)
    return false;
  count = 0;
  for (char **e = environ; e && *e; e++)
    if (relevant_variable(*e))
      list[count++] = *e;
  qsort(list, count, sizeof *list, compare_strings); /* order-free */
  for (size_t i = 0; i < count; i++)
    h = hash_str(list[i], h);
  free(list);
  *out = h;
  return true;
}

/* ---- the stamp ---- */

/* When this boot began, in minutes of the real-time clock (rounded): two
 * clock reads in the vDSO, where /proc/sys/kernel/random/boot_id cost a
 * warm process 10 us. A clock step moves it (an index rewritten once); two
 * boots within a minute of each other's start would share it. False
 * without a boot-time clock. */
static bool boot_minute(int64_t *out) {
  struct timespec real, boot;
  if (clock_gettime(CLOCK_REALTIME, &real) != 0 ||
      clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
    return false;
  *out = (real.tv_sec - boot.tv_sec + 30) / 60;
  return true;
}

/* Whether the index may be used under config at all. */
static bool usable_config(const stc_rt_dispatch_config *config) {
  if (!config->warm_start || !config->use_cache || config->check_all)
    return false;
  const char *remote = getenv("STC_CACHE_REMOTE");
  return !(remote && *remote);
}

/* g_directory + a + b, allocated (NULL without memory): not a PATH_MAX
 * buffer on the stack, which put the first site call's deeper frames a
 * page further down (a page fault each). */
static char *directory_path(const char *a, const char *b) {
  size_t n = strlen(g_directory), na = strlen(a), nb = strlen(b);
  char *path = malloc(n + na + nb + 1);
  if (path) {
    memcpy(path, g_directory, n);
    memcpy(path + n, a, na);
    memcpy(path + n + na, b, nb + 1);
  }
  return path;
}

/* Fills g_directory, g_name, g_stamp, g_records and g_settled; false when
 * the index cannot be used (no records, no boot time, names too long). */
static bool stamp_locked(const stc_rt_dispatch_config *config) {
  size_t length = strlen(config->cache_directory);
  if (length == 0 || length + sizeof "/" WARM_DIRECTORY "/" > 4000)
    return false;
  memcpy(g_directory, config->cache_directory, length + 1);
  char host[256] = "";
  int64_t boot;
  char *path = directory_path("/v1", "");
  bool records = path &&
                 fstatat(AT_FDCWD, path, &g_records, AT_SYMLINK_NOFOLLOW) ==
                     0 &&
                 S_ISDIR(g_records.st_mode);
  free(path);
  if (!records)
    return false; /* no records: nothing to answer from */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  g_settled = now.tv_sec - g_records.st_mtim.tv_sec > g_settle_seconds ||
              (now.tv_sec - g_records.st_mtim.tv_sec == g_settle_seconds &&
               now.tv_nsec >= g_records.st_mtim.tv_nsec);
  if (!boot_minute(&boot))
    return false;
  uint64_t config_id;
  if (!config_hash(config, &config_id))
    return false;
  struct stat ldcache;
  if (stat("/etc/ld.so.cache", &ldcache) != 0)
    memset(&ldcache, 0, sizeof ldcache);
  /* One file per host and configuration: processes of two configurations
   * sharing a directory keep an index each instead of overwriting one. */
  gethostname(host, sizeof host - 1);
  text_out name = text_out_of(g_name, sizeof g_name);
  put_text(&name, "h");
  put_number(&name, hash_str(host, STC_HASH_SEED), 16, 16);
  put_text(&name, "-c");
  put_number(&name, config_id, 16, 16);
  put_text(&name, ".idx");
  text_out o = text_out_of(g_stamp, sizeof g_stamp);
  put_text(&o, WARM_MAGIC "\nstc ");
  put_text(&o, stc_version());
  put_text(&o, "\nboot ");
  put_signed(&o, boot);
  put_text(&o, "\nconfig ");
  put_number(&o, config_id, 16, 16);
  put_text(&o, "\nrecords ");
  put_number(&o, (uint64_t)g_records.st_dev, 10, 1);
  put_text(&o, " ");
  put_number(&o, (uint64_t)g_records.st_ino, 10, 1);
  put_text(&o, " ");
  put_signed(&o, (int64_t)g_records.st_mtim.tv_sec);
  put_text(&o, " ");
  put_signed(&o, (int64_t)g_records.st_mtim.tv_nsec);
  put_text(&o, "\nldcache ");
  put_number(&o, (uint64_t)ldcache.st_ino, 10, 1);
  put_text(&o, " ");
  put_signed(&o, (int64_t)ldcache.st_size);
  put_text(&o, " ");
  put_signed(&o, (int64_t)ldcache.st_mtim.tv_sec);
  put_text(&o, " ");
  put_signed(&o, (int64_t)ldcache.st_mtim.tv_nsec);
  put_text(&o, "\n");
  g_ttl_seconds = config->policy.ttl_seconds;
  return text_done(&name) && text_done(&o);
}

/* ---- the file ---- */

static int compare_entries(const void *a_, const void *b_) {
  const warm_entry *a = a_, *b = b_;
  return a->key < b->key ? -1 : a->key > b->key;
}

/* Reads a decimal (base 10) or lower-case hexadecimal (base 16) number
 * at *p, which stops at the first other character; advances *p. False
 * without a digit or past UINT64_MAX. (No sscanf: the first use of libc's
 * scanner costs a warm process its pages.) */
static bool read_number(const char **p, unsigned base, uint64_t *out) {
  const char *s = *p;
  uint64_t value = 0;
  for (;; s++) {
    unsigned digit;
    if (*s >= '0' && *s <= '9')
      digit = (unsigned)(*s - '0');
    else if (base == 16 && *s >= 'a' && *s <= 'f')
      digit = (unsigned)(*s - 'a' + 10);
    else
      break;
    if (value > (UINT64_MAX - digit) / base)
      return false;
    value = value * base + digit;
  }
  if (s == *p)
    return false;
  *p = s;
  *out = value;
  return true;
}

/* Parses one "<key> r <created>\n" or "<key> d|t <created> <winner>
 * 0.<saving, 6 digits>\n" line at *p (t: trusted); advances *p. */
static bool parse_entry(const char **p, const char *end, warm_entry *out) {
  const char *newline = memchr(*p, '\n', (size_t)(end - *p));
  if (!newline || newline - *p > 96)
    return false;
  char text[128] = {0}; /* the line, NUL-padded: reads stop in it */
  memcpy(text, *p, (size_t)(newline - *p));
  const char *s = text;
  uint64_t key, created, winner = 0, micro = 0;
  if (!read_number(&s, 16, &key) || s != text + 16 || *s++ != ' ')
    return false;
  char letter = *s++;
  if (*s++ != ' ' || !read_number(&s, 10, &created) || created > INT64_MAX)
    return false;
  if (letter == 'd' || letter == 't') {
    if (*s++ != ' ' || !read_number(&s, 10, &winner) || winner > UINT32_MAX ||
        s[0] != ' ' || s[1] != '0' || s[2] != '.')
      return false;
    s += 3;
    const char *digits = s;
    if (!read_number(&s, 10, &micro) || s - digits != 6)
      return false;
  } else if (letter != 'r') {
    return false;
  }
  if (*s != 0)
    return false;
  *out = (warm_entry){key,
                      (int64_t)created,
                      letter == 'r' ? STC_RT__WARM_REFERENCE
                                    : STC_RT__WARM_DEFERRED,
                      (uint32_t)winner,
                      (double)micro / 1e6,
                      letter == 't'};
  *p = newline + 1;
  return true;
}

/* The entries of text if it is an index for the current stamp, checksum
 * and all; NULL (count 0) otherwise. */
static warm_entry *parse_index(const char *text, size_t size, size_t *count) {
  *count = 0;
  size_t stamp = strlen(g_stamp);
  if (size < stamp || memcmp(text, g_stamp, stamp) != 0)
    return NULL;
  const char *p = text + stamp, *end = text + size;
  uint64_t n = 0;
  if ((size_t)(end - p) < 8 || memcmp(p, "entries ", 8) != 0)
    return NULL;
  p += 8;
  if (!read_number(&p, 10, &n) || *p++ != '\n' || n > WARM_MAX_ENTRIES)
    return NULL;
  warm_entry *entries = calloc(n ? n : 1, sizeof *entries);
  if (!entries)
    return NULL;
  for (size_t i = 0; i < n; i++)
    if (!parse_entry(&p, end, &entries[i]) ||
        (i > 0 && entries[i].key <= entries[i - 1].key)) {
      free(entries);
      return NULL;
    }
  char expected[32];
  text_out o = text_out_of(expected, sizeof expected);
  put_text(&o, "end ");
  put_number(&o, stc_hash64(text, (size_t)(p - text), STC_HASH_SEED), 16, 16);
  put_text(&o, "\n");
  text_done(&o);
  if ((size_t)(end - p) != strlen(expected) ||
      memcmp(p, expected, strlen(expected)) != 0) {
    free(entries);
    return NULL;
  }
  *count = n;
  return entries;
}

/* Reads the index (lean: no directory checks; see the top comment). */
static void load_locked(void) {
  char *path = directory_path("/" WARM_DIRECTORY "/", g_name);
  int fd = path ? open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                : -1;
  free(path);
  if (fd < 0)
    return;
  struct stat st;
  char *text = NULL;
  size_t size = 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
      st.st_size > 0 && (uint64_t)st.st_size <= WARM_MAX_BYTES &&
      (text = malloc((size_t)st.st_size + 1))) {
    while (size < (size_t)st.st_size) {
      ssize_t got = read(fd, text + size, (size_t)st.st_size - size);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        break;
      size += (size_t)got;
    }
    text[size] = 0;
  }
  close(fd);
  if (text && size == (size_t)st.st_size)
    g_loaded = parse_index(text, size, &g_loaded_count);
  free(text);
}

static void open_locked(const stc_rt_dispatch_config *config) {
  if (atomic_load_explicit(&g_state, memory_order_relaxed) != STATE_CLOSED)
    return;
  bool usable = usable_config(config) && stamp_locked(config);
  if (usable)
    load_locked();
  atomic_store_explicit(&g_state, usable ? STATE_USABLE : STATE_UNUSABLE,
                        memory_order_release);
}

static bool ensure_open(const stc_rt_dispatch_config *config) {
  int state = atomic_load_explicit(&g_state, memory_order_acquire);
  if (state == STATE_CLOSED) {
    pthread_mutex_lock(&g_lock);
    open_locked(config);
    pthread_mutex_unlock(&g_lock);
    state = atomic_load_explicit(&g_state, memory_order_acquire);
  }
  return state == STATE_USABLE;
}

/* ---- the interface ---- */

static const warm_entry *find(const warm_entry *entries, size_t count,
                              uint64_t key) {
  if (count == 0)
    return NULL; /* entries may be NULL: not bsearch's to see */
  warm_entry probe = {key, 0, 0, 0, 0, false};
  return bsearch(&probe, entries, count, sizeof *entries, compare_entries);
}

stc_rt__warm_answer stc_rt__warm_lookup(const stc_rt_dispatch_config *config,
                                        uint64_t site, const char *workload) {
  stc_rt__warm_answer none = {STC_RT__WARM_NONE, 0, 0, false};
  if (!config || !workload || !ensure_open(config) || !g_loaded_count)
    return none;
  const warm_entry *e = find(g_loaded, g_loaded_count, entry_key(site, workload));
  if (!e || stc__cache_age_problem(e->created, stc_now_seconds(),
                                   g_ttl_seconds) != NULL)
    return none;
  return (stc_rt__warm_answer){(stc_rt__warm_outcome)e->outcome, e->winner,
                               e->saving, e->trusted};
}

static void flush_at_exit(void) { stc_rt__warm_flush(); }
static void install_exit_hook(void) { atexit(flush_at_exit); }

static bool same_entry(const warm_entry *a, const warm_entry *b) {
  return a->key == b->key && a->outcome == b->outcome &&
         a->created == b->created && a->winner == b->winner &&
         a->saving == b->saving && a->trusted == b->trusted;
}

void stc_rt__warm_note(const stc_rt_dispatch_config *config, uint64_t site,
                       const char *workload, stc_rt__warm_answer answer,
                       int64_t record_created) {
  bool deferred = answer.outcome == STC_RT__WARM_DEFERRED;
  if (!config || !workload || record_created == 0 ||
      (answer.outcome != STC_RT__WARM_REFERENCE && !deferred) ||
      !(answer.saving >= 0 && answer.saving < 1) || !ensure_open(config))
    return;
  /* In the file's unit (millionths, below 1), so that a note and its
   * reading agree. */
  double micro = deferred ? (double)(uint64_t)(answer.saving * 1e6 + 0.5) : 0;
  warm_entry entry = {entry_key(site, workload),
                      record_created,
                      (uint8_t)answer.outcome,
                      deferred ? answer.winner : 0,
                      (micro < 999999 ? micro : 999999) / 1e6,
                      deferred && answer.trusted};
  const warm_entry *known = find(g_loaded, g_loaded_count, entry.key);
  if (known && same_entry(known, &entry))
    return; /* the index says so already */
  pthread_mutex_lock(&g_lock);
  if (g_noted_count == g_noted_capacity && g_noted_count < WARM_MAX_ENTRIES) {
    size_t capacity = g_noted_capacity ? 2 * g_noted_capacity : 16;
    warm_entry *grown = realloc(g_noted, capacity * sizeof *grown);
    if (grown) {
      g_noted = grown;
      g_noted_capacity = capacity;
    }
  }
  if (g_noted_count < g_noted_capacity)
    g_noted[g_noted_count++] = entry;
  pthread_mutex_unlock(&g_lock);
  pthread_once(&g_exit_once, install_exit_hook);
}

typedef struct tagged_entry {
  warm_entry entry;
  size_t order; /* position in the merge's input: later answers win */
} tagged_entry;

static int compare_tagged(const void *a_, const void *b_) {
  const tagged_entry *a = a_, *b = b_;
  if (a->entry.key != b->entry.key)
    return a->entry.key < b->entry.key ? -1 : 1;
  return a->order < b->order ? -1 : a->order > b->order;
}

/* The loaded entries and this process's notes, sorted by key, one per key
 * (a note wins over the index, a later note over an earlier one), in *out;
 * 0 without memory. Over WARM_MAX_ENTRIES, the loaded ones are dropped. */
static size_t merge_locked(warm_entry **out) {
  size_t loaded = g_loaded_count;
  if (loaded + g_noted_count > WARM_MAX_ENTRIES)
    loaded = 0;
  size_t n = loaded + g_noted_count;
  tagged_entry *t = malloc((n ? n : 1) * sizeof *t);
  warm_entry *all = malloc((n ? n : 1) * sizeof *all);
  if (!t || !all) {
    free(t);
    free(all);
    return 0;
  }
  for (size_t i = 0; i < loaded; i++)
    t[i] = (tagged_entry){g_loaded[i], i};
  for (size_t i = 0; i < g_noted_count; i++)
    t[loaded + i] = (tagged_entry){g_noted[i], loaded + i};
  qsort(t, n, sizeof *t, compare_tagged);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if (i + 1 == n || t[i + 1].entry.key != t[i].entry.key)
      all[kept++] = t[i].entry;
  free(t);
  *out = all;
  return kept;
}

static bool same_entries(const warm_entry *a, size_t a_count,
                         const warm_entry *b, size_t b_count) {
  if (a_count != b_count)
    return false;
  for (size_t i = 0; i < a_count; i++)
    if (!same_entry(&a[i], &b[i]))
      return false;
  return true;
}

/* The index text of entries; NULL without memory. */
static char *serialize(const warm_entry *entries, size_t count, size_t *size) {
  size_t capacity = strlen(g_stamp) + 32 + count * 80 + 32;
  char *text = malloc(capacity);
  if (!text)
    return NULL;
  size_t used = (size_t)snprintf(text, capacity, "%sentries %zu\n", g_stamp,
                                 count);
  for (size_t i = 0; i < count && used < capacity; i++) {
    const warm_entry *e = &entries[i];
    used += e->outcome == STC_RT__WARM_DEFERRED
                ? (size_t)snprintf(text + used, capacity - used,
                                   "%016" PRIx64 " %c %lld %" PRIu32
                                   " 0.%06u\n",
                                   e->key, e->trusted ? 't' : 'd',
                                   (long long)e->created, e->winner,
                                   (unsigned)(e->saving * 1e6 + 0.5))
                : (size_t)snprintf(text + used, capacity - used,
                                   "%016" PRIx64 " r %lld\n", e->key,
                                   (long long)e->created);
  }
  if (used >= capacity) {
    free(text);
    return NULL;
  }
  used += (size_t)snprintf(text + used, capacity - used, "end %016" PRIx64 "\n",
                           stc_hash64(text, used, STC_HASH_SEED));
  if (used >= capacity) {
    free(text);
    return NULL;
  }
  *size = used;
  return text;
}

/* Index files are ordered by modification time alone (the oldest beyond
 * INDEX_FILES go first). */
static int64_t no_created(const char *head, size_t size) {
  (void)head;
  (void)size;
  return INT64_MIN;
}

static void write_locked(const char *text, size_t size) {
  char *path = NULL;
  int fd = -1;
  stc_error err;
  stc_error_clear(&err);
  if (stc_cache_private_dir_open(g_directory, WARM_DIRECTORY, &path, &fd,
                                 &err) != STC_OK)
    return;
  stc__cache_files files = {fd, path, geteuid(), ".idx", "", no_created};
  const char *step = NULL;
  if (stc__cache_files_write(&files, g_name, text, size, &step) == 0)
    stc__cache_files_settle(&files, INDEX_FILES, g_name);
  close(fd);
  free(path);
}

void stc_rt__warm_flush(void) {
  pthread_mutex_lock(&g_lock);
  if (atomic_load_explicit(&g_state, memory_order_relaxed) != STATE_USABLE ||
      g_noted_count == 0 || !g_settled)
    goto done;
  /* The answers were the records' answers at one time only if the records
   * did not change while this process ran (nor did this process write). */
  struct stat now;
  char *path = directory_path("/v1", "");
  int got = path ? fstatat(AT_FDCWD, path, &now, AT_SYMLINK_NOFOLLOW) : -1;
  free(path);
  if (got != 0 ||
      now.st_dev != g_records.st_dev || now.st_ino != g_records.st_ino ||
      now.st_mtim.tv_sec != g_records.st_mtim.tv_sec ||
      now.st_mtim.tv_nsec != g_records.st_mtim.tv_nsec)
    goto done;
  warm_entry *merged = NULL;
  size_t count = merge_locked(&merged);
  if (merged && !same_entries(merged, count, g_loaded, g_loaded_count)) {
    size_t size = 0;
    char *text = serialize(merged, count, &size);
    if (text)
      write_locked(text, size);
    free(text);
  }
  free(merged);
done:
  g_noted_count = 0; /* written, or not to be */
  pthread_mutex_unlock(&g_lock);
}

void stc_rt__warm_reset(void) {
  pthread_mutex_lock(&g_lock);
  free(g_loaded);
  g_loaded = NULL;
  g_loaded_count = 0;
  free(g_noted);
  g_noted = NULL;
  g_noted_count = g_noted_capacity = 0;
  atomic_store(&g_state, STATE_CLOSED);
  pthread_mutex_unlock(&g_lock);
}

void stc_rt__warm_set_settle_seconds(int64_t seconds) {
  pthread_mutex_lock(&g_lock);
  g_settle_seconds = seconds;
  pthread_mutex_unlock(&g_lock);
}
