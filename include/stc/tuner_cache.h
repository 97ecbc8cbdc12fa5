/* stc/tuner_cache.h - the tuner's disk cache (DESIGN.md section 6).
 *
 * Layout: <directory>/v<STC_TUNER_CACHE_FORMAT>/<hex digest of key>.rec, one
 * record per file. Writes go to a temporary file in the same directory,
 * fsync, rename. Every record carries its full key, its creation time and a
 * checksum; a corrupt, truncated, expired, future-dated, wrong-version or
 * foreign record is a miss (and is removed when it is ours to remove). The
 * version directory is created 0700; symlinks and entries owned by another
 * user are refused. Faults become statuses, never crashes.
 *
 * Thread safety: a cache handle may be used from many threads; several
 * processes may share one directory. */
#ifndef STC_TUNER_CACHE_H
#define STC_TUNER_CACHE_H

#include "stc/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STC_TUNER_CACHE_FORMAT 1

/* One tuning decision as stored in memory and on disk. Strings owned. */
typedef struct stc_cache_record {
  uint8_t scope;   /* stc_scope */
  char *key;       /* the full cache key */
  char *winner;    /* candidate name */
  int64_t created; /* unix seconds */
  uint64_t reference_ns;
  uint64_t winner_ns;
  double ratio;
  bool verified;
} stc_cache_record;

/* Frees a record's strings and zeroes it; accepts NULL. */
void stc_cache_record_clear(stc_cache_record *record);
/* Deep copy; the caller owns *out's strings. */
stc_status stc_cache_record_copy(const stc_cache_record *record,
                                 stc_cache_record *out);
/* Fresh: created <= now + 60 s of clock skew and now - created < ttl. */
bool stc_cache_record_is_fresh(const stc_cache_record *record, int64_t now,
                               uint64_t ttl_seconds);

/* Current wall-clock time in unix seconds. */
int64_t stc_now_seconds(void);

typedef struct stc_disk_cache stc_disk_cache;

/* Opens (creating with 0700 where missing) the cache under directory. Fails
 * with STC_ERR_PERMISSION for a symlinked or foreign-owned directory,
 * STC_ERR_IO when it cannot be created; err gets the reason. */
stc_status stc_disk_cache_open(const char *directory, size_t capacity,
                               uint64_t ttl_seconds, stc_disk_cache **out,
                               stc_error *err);
/* The directory primitive under stc_disk_cache_open, shared with the object
 * cache (stc/object_cache.h): creates <directory> (and its parent, never
 * more) and <directory>/<name> 0700 where missing, refuses a symlinked or
 * foreign-owned <name> (the base may be root-owned, like /tmp), takes group
 * and other bits away, and opens it O_DIRECTORY|O_NOFOLLOW. On STC_OK the
 * caller owns *path (free) and *fd (close). name is one path component. */
stc_status stc_cache_private_dir_open(const char *directory, const char *name,
                                      char **path, int *fd, stc_error *err);
/* Closes a cache; accepts NULL. */
void stc_disk_cache_close(stc_disk_cache *cache);
/* The version directory in use (owned by the cache). */
const char *stc_disk_cache_path(const stc_disk_cache *cache);

/* Loads the record for key. STC_ERR_NOT_FOUND on a miss of any kind
 * (absent, corrupt, truncated, expired, future-dated, wrong version, other
 * key, foreign) - bad files are removed when possible. Other statuses
 * (STC_ERR_IO, STC_ERR_PERMISSION) are cache faults the caller should count
 * as warnings. On STC_OK the caller owns *out's strings. */
stc_status stc_disk_cache_load(stc_disk_cache *cache, const char *key,
                               stc_cache_record *out, stc_error *err);
/* Saves a record atomically, then prunes the oldest records beyond
 * capacity. A failure leaves any previous record intact. */
stc_status stc_disk_cache_save(stc_disk_cache *cache,
                               const stc_cache_record *record, stc_error *err);
/* Removes the record for key; a missing record is STC_OK. */
stc_status stc_disk_cache_remove(stc_disk_cache *cache, const char *key,
                                 stc_error *err);

/* Copies the text of the latest cache fault (a load, save or remove that
 * returned a status other than STC_OK, STC_ERR_NOT_FOUND or
 * STC_ERR_INVALID), e.g. "<dir>/v1: <record>: symbolic link (not
 * followed)" or "...: cannot write: file size limit exceeded (ulimit -f);
 * not saved", into buffer (truncated to size), so that a warning can say
 * what went wrong. False, with buffer empty, when there was none. */
bool stc_disk_cache_last_fault(stc_disk_cache *cache, char *buffer,
                               size_t size);

/* What a listing reports about one file. record is valid only when status
 * is STC_OK; path is the file's path. */
typedef struct stc_cache_entry {
  const char *path;
  stc_status status; /* STC_OK, STC_ERR_CORRUPT, STC_ERR_VERSION, ... */
  const stc_cache_record *record;
  const char *problem; /* why it is not usable, or NULL */
} stc_cache_entry;

/* Calls fn for every record file (valid or not), oldest first; fn returns
 * false to stop. Never removes anything. */
stc_status stc_disk_cache_list(stc_disk_cache *cache,
                               bool (*fn)(void *user,
                                          const stc_cache_entry *entry),
                               void *user, stc_error *err);
/* Removes invalid and expired records, then the oldest beyond capacity;
 * *removed (may be NULL) gets the count. */
stc_status stc_disk_cache_prune(stc_disk_cache *cache, size_t *removed,
                                stc_error *err);
/* Removes every record file. */
stc_status stc_disk_cache_clear(stc_disk_cache *cache, size_t *removed,
                                stc_error *err);

/* The default cache directory (DESIGN.md section 5), one rule for the
 * runtime and stc-cache: stc_cache_dir when non-empty; else
 * <xdg_cache_home>/stc when xdg_cache_home is an absolute path; else
 * <home>/.cache/stc when home is non-empty. Any argument may be NULL.
 * STC_ERR_NOT_FOUND when no rule applies. Touches no file. On STC_OK the
 * caller frees *out with free(). */
stc_status stc_cache_directory_from(const char *stc_cache_dir,
                                    const char *xdg_cache_home,
                                    const char *home, char **out,
                                    stc_error *err);
/* The same rule applied to $STC_CACHE_DIR, $XDG_CACHE_HOME and $HOME. Reads
 * the environment with getenv, so it must not race with setenv. */
stc_status stc_cache_default_directory(char **out, stc_error *err);

/* ---- the fleet tier below (stc/tuner_remote.h) ---- */

typedef struct stc_remote_cache stc_remote_cache;

/* Puts remote (may be NULL: none) under cache, taking ownership: it is
 * closed with the cache, or at once when cache is NULL. From then on a load
 * that misses on disk asks remote and writes a usable record to disk; a save
 * is mirrored to remote (expiring with the record's time-to-live); a remove
 * removes it there too. Remote records are parsed and checked like files.
 * Call before the cache is shared between threads. */
void stc_disk_cache_set_remote(stc_disk_cache *cache,
                               stc_remote_cache *remote);
/* The remote tier in use, NULL when none (owned by the cache). */
stc_remote_cache *stc_disk_cache_remote(const stc_disk_cache *cache);
/* Whether this process should tune key now: true without a remote tier or
 * when it cannot be used; otherwise only when this process took key's lease
 * (stc_remote_cache_claim). */
bool stc_disk_cache_may_tune(stc_disk_cache *cache, const char *key);

/* Parses the bytes of one record (a file's content, or a remote value) with
 * the disk cache's strict rules. On STC_OK the caller owns *out's strings;
 * otherwise *out is zeroed and *problem (may be NULL) names what is wrong.
 * Checks the shape only: key, freshness and file name are the caller's. */
stc_status stc_cache_record_decode(const char *data, size_t size,
                                   stc_cache_record *out,
                                   const char **problem);

/* Test hook: replaces the wall clock used for freshness (NULL restores). */
void stc_disk_cache_set_clock(stc_disk_cache *cache,
                              int64_t (*now_seconds)(void *user), void *user);

#ifdef __cplusplus
}
#endif

#endif /* STC_TUNER_CACHE_H */
