/* stc/object_cache.h - stc-run's compiled-code cache (DESIGN.md section 7,
 * issue 13): the object code of a module kept on disk beside the tuning
 * cache, so that a second start loads it instead of compiling.
 *
 * Layout: <directory>/STC_OBJECT_CACHE_DIRECTORY/<sha256 of key>.obj, one
 * entry per file, checked like tuning records (stc/tuner_cache.h): writes
 * go to a temporary file, fsync, rename; each entry carries its full key,
 * its creation time and an XXH64 checksum over everything before it (format
 * 2; format 1 had SHA-256, ten times slower on a tuned module's objects); a
 * corrupt, truncated, expired, future-dated, wrong-version, other-key or
 * foreign entry is a miss (removed when it is ours to remove); the directory
 * is 0700, symlinks and entries of another user are refused; capacity is kept
 * by removing the oldest entries. No MLIR or LLVM here: stc-cache uses it.
 *
 * An entry holds two opaque byte strings: the object file and the caller's
 * metadata (stc-run keeps its entry-point table and replayed diagnostics
 * there). Thread safety: one handle per thread; processes may share a
 * directory. */
#ifndef STC_OBJECT_CACHE_H
#define STC_OBJECT_CACHE_H

#include "stc/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The entries' format (a format 1 entry is a miss and is replaced) and
 * their directory's name (the layout of the directory is unchanged). */
#define STC_OBJECT_CACHE_FORMAT 2
#define STC_OBJECT_CACHE_DIRECTORY "objects-v1"
/* Defaults: entries are large (megabytes), so fewer than tuning records. */
#define STC_OBJECT_CACHE_CAPACITY 64
#define STC_OBJECT_CACHE_TTL_SECONDS (7u * 24u * 3600u)
/* Bounds an entry must keep (bigger is not ours). */
#define STC_OBJECT_CACHE_MAX_KEY (64u * 1024u)
#define STC_OBJECT_CACHE_MAX_META (64u * 1024u * 1024u)
#define STC_OBJECT_CACHE_MAX_OBJECT (1024u * 1024u * 1024u)

typedef struct stc_object_entry {
  char *key;       /* the full key, NUL-terminated */
  int64_t created; /* unix seconds */
  char *meta;      /* caller's bytes (NUL appended, not counted) */
  size_t meta_size;
  char *object; /* object file bytes (NUL appended, not counted) */
  size_t object_size;
  /* When not NULL, object is these bytes (the file as
   * stc_object_cache_load read it, the object moved to its start, so
   * aligned as malloc aligns: not copied again): freed instead of object
   * by stc_object_entry_clear. */
  char *storage;
} stc_object_entry;

/* Frees an entry's buffers and zeroes it; accepts NULL. */
void stc_object_entry_clear(stc_object_entry *entry);

typedef struct stc_object_cache stc_object_cache;

/* Opens (creating 0700 where missing) <directory>/objects-v1. Statuses as
 * stc_disk_cache_open. capacity and ttl_seconds must be positive. */
stc_status stc_object_cache_open(const char *directory, size_t capacity,
                                 uint64_t ttl_seconds, stc_object_cache **out,
                                 stc_error *err);
void stc_object_cache_close(stc_object_cache *cache);
/* The objects-v1 directory (owned by the cache). */
const char *stc_object_cache_path(const stc_object_cache *cache);

/* Loads the entry for key. STC_OK: *out filled (caller clears it).
 * STC_ERR_NOT_FOUND: a miss; *problem is NULL when nothing was there (or it
 * expired), else a static text saying why the file there was not usable
 * ("checksum mismatch", "truncated", "unsupported format version", "holds
 * another key", "owned by another user", ...), worth a warning. Other
 * statuses are faults (err says what). */
stc_status stc_object_cache_load(stc_object_cache *cache, const char *key,
                                 stc_object_entry *out, const char **problem,
                                 stc_error *err);
/* Saves an entry atomically (entry->created is set to now when 0), then
 * removes the oldest beyond capacity. A failure leaves any previous entry
 * intact; a read-only directory is STC_ERR_PERMISSION. */
stc_status stc_object_cache_save(stc_object_cache *cache,
                                 const stc_object_entry *entry,
                                 stc_error *err);

/* One file of a listing: entry (key, created, sizes; buffers not loaded
 * unless full) is valid only when status is STC_OK. */
typedef struct stc_object_listing {
  const char *path;
  const char *name; /* file name inside the directory */
  stc_status status;
  const stc_object_entry *entry;
  const char *problem; /* why it is not usable, or NULL */
  uint64_t file_size;
} stc_object_listing;

/* Calls fn for every entry file (valid or not), oldest first; fn returns
 * false to stop. Never removes anything. Every file is read and checked. */
stc_status stc_object_cache_list(stc_object_cache *cache,
                                 bool (*fn)(void *user,
                                            const stc_object_listing *item),
                                 void *user, stc_error *err);
/* Removes invalid and expired entries and stale temporary files, then the
 * oldest beyond capacity; *removed (may be NULL) gets the count. */
stc_status stc_object_cache_prune(stc_object_cache *cache, size_t *removed,
                                  stc_error *err);
/* Removes every entry file of ours. */
stc_status stc_object_cache_clear(stc_object_cache *cache, size_t *removed,
                                  stc_error *err);

/* Test hook: replaces the wall clock used for freshness (NULL restores). */
void stc_object_cache_set_clock(stc_object_cache *cache,
                                int64_t (*now_seconds)(void *user),
                                void *user);

/* Encodes an entry into the on-disk bytes (for tests and tools); the caller
 * frees *out. */
stc_status stc_object_entry_encode(const stc_object_entry *entry, char **out,
                                   size_t *size);
/* Decodes on-disk bytes strictly; on failure *problem says why. */
stc_status stc_object_entry_decode(const char *data, size_t size,
                                   stc_object_entry *out,
                                   const char **problem);

#ifdef __cplusplus
}
#endif

#endif /* STC_OBJECT_CACHE_H */
