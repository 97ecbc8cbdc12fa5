/* stc/cache_files.h - internal to stc_core (stc__ names; not a contract for
 * users): the file handling that the tuner's disk cache (lib/tuner/cache.c)
 * and stc-run's object cache (lib/support/object_cache.c) share inside the
 * private directory that stc_cache_private_dir_open gives them: scans,
 * oldest-first order, capacity, stale temporaries, and writing a new file
 * under a temporary name renamed into place.
 *
 * A cache names its entry files <anything><suffix>; names that start with
 * "tmp." are temporaries of writers in flight. Every operation goes through
 * the directory's descriptor (openat and friends), so a path component
 * swapped after open cannot redirect it. Nothing here is MLIR; the runtime
 * links it. */
#ifndef STC_CACHE_FILES_H
#define STC_CACHE_FILES_H

#include "stc/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One cache's directory and what tells its files apart. Borrowed strings
 * and descriptor: the cache owns them and outlives every call. */
typedef struct stc__cache_files {
  int dir_fd;              /* the private directory */
  const char *path;        /* its path, for messages */
  uid_t uid;               /* the owner of the files that are ours */
  const char *suffix;      /* of an entry file: ".rec", ".obj" */
  const char *temp_suffix; /* appended to a temporary's name; "" for none */
  /* The creation time recorded in the first size bytes of an entry file;
   * INT64_MIN when they hold none (the file then sorts oldest). */
  int64_t (*head_created)(const char *head, size_t size);
} stc__cache_files;

/* One entry file found by a scan. */
typedef struct stc__cache_file {
  char *name;      /* owned; NULL once removed by the caller */
  int64_t created; /* INT64_MIN until ordered, or when unreadable: oldest */
  struct timespec mtime;
  bool ours; /* a regular file owned by us: counts toward capacity */
} stc__cache_file;

typedef struct stc__cache_scan {
  stc__cache_file *files; /* owned */
  size_t count;
  size_t ours;    /* files that count toward capacity */
  size_t removed; /* stale temporary files removed while scanning */
} stc__cache_scan;

/* True (with err, which may be NULL, set) when the directory's owner took
 * its write permission away: stc honours that even where it could write (as
 * root), since it never adds permissions the owner removed. */
bool stc__cache_files_read_only(const stc__cache_files *files, stc_error *err);

/* Unlinks name only if it is still the very file examined (a regular file
 * of ours), so that one renamed into place meanwhile by another process
 * survives. */
bool stc__cache_files_unlink_if_same(const stc__cache_files *files,
                                     const char *name,
                                     const struct stat *examined);

/* The name of key's entry file: the SHA-256 hex digest of its length bytes,
 * then the suffix (at most 5 bytes). */
void stc__cache_files_name(const stc__cache_files *files, const char *key,
                           size_t length, char name[70]);

/* What examining one entry file found. */
typedef struct stc__cache_file_check {
  stc_status status;   /* STC_OK or why the file is not usable */
  const char *problem; /* static text, NULL when usable */
  bool exists;         /* something was there under that name */
  bool removable;      /* a regular file of ours whose content is bad */
  bool foreign;        /* not ours (another owner, not a regular file) */
  bool quiet;          /* a miss not worth a word: absent, or expired */
  struct stat stat;    /* valid when exists */
} stc__cache_file_check;

/* Opens entry file name without following a symlink or blocking on a FIFO,
 * checks that it is a regular file of ours of at most max_size bytes, and
 * reads it whole. Returns the bytes (*size of them; the caller frees them)
 * with check->status STC_OK, or NULL with *check saying why. */
char *stc__cache_files_read(const stc__cache_files *files, const char *name,
                            uint64_t max_size, size_t *size,
                            stc__cache_file_check *check);

/* NULL when an entry created at created is usable at now (a little clock
 * skew forgiven), else "created in the future" or "expired". */
const char *stc__cache_age_problem(int64_t created, int64_t now,
                                   uint64_t ttl_seconds);

/* Judges a decoded entry of file name holding stored_key: it must hold
 * expected_key (unless NULL, as when listing), sit under its own name and
 * be fresh. False, with *check saying why (removable), when it is not.
 * With expected_key, name must be expected_key's (stc__cache_files_name),
 * as a load looks it up: the stored key is then not hashed again. */
bool stc__cache_files_judge(const stc__cache_files *files, const char *name,
                            const char *stored_key, const char *expected_key,
                            int64_t created, int64_t now, uint64_t ttl_seconds,
                            stc__cache_file_check *check);

/* After a load found file name unusable: removes it when removable, sets
 * err to "<name>: <problem>", and returns what load reports: the fault for
 * a planted symlink or an unreadable file (NOMEM, IO, PERMISSION of a file
 * not foreign), else STC_ERR_NOT_FOUND, a plain miss. */
stc_status stc__cache_files_miss(const stc__cache_files *files,
                                 const char *name,
                                 const stc__cache_file_check *check,
                                 stc_error *err);

/* Lists the entry files, unordered, into *scan (freed with
 * stc__cache_scan_free, also after an error); with remove_stale, also
 * removes the temporaries of writers that died (ours, over an hour old). */
stc_status stc__cache_files_scan(const stc__cache_files *files,
                                 bool remove_stale, stc__cache_scan *scan,
                                 stc_error *err);
void stc__cache_scan_free(stc__cache_scan *scan);

/* Sorts a scan oldest first: by creation time as recorded, then mtime, then
 * name, so that the order is total and every process agrees on it. Reading
 * the heads costs an open per file of ours, which is why only list, prune
 * and a save that overflows capacity pay it. */
void stc__cache_files_order(const stc__cache_files *files,
                            stc__cache_scan *scan);

/* Removes the oldest files of ours beyond capacity, given an ordered scan;
 * skips entries already removed (name NULL) and keep (may be NULL: the file
 * just saved, which must survive its own save). Returns how many it
 * removed. */
size_t stc__cache_files_enforce_capacity(const stc__cache_files *files,
                                         stc__cache_scan *scan,
                                         size_t capacity, const char *keep);

/* Calls fn with the name and full path of every entry file, oldest first,
 * until it returns false. path is valid during the call only. */
stc_status stc__cache_files_each(const stc__cache_files *files,
                                 bool (*fn)(void *user, const char *name,
                                            const char *path),
                                 void *user, stc_error *err);

/* Removes stale temporaries, the files of ours that examine finds
 * removable, then the oldest beyond capacity. *removed (may be NULL) counts
 * them all. */
stc_status stc__cache_files_prune(
    const stc__cache_files *files, size_t capacity,
    void (*examine)(void *user, const char *name,
                    stc__cache_file_check *check),
    void *user, size_t *removed, stc_error *err);

/* Removes every file of ours and stale temporaries; *removed (may be NULL)
 * counts them. Symlinks and foreign files are never ours to delete. */
stc_status stc__cache_files_clear(const stc__cache_files *files,
                                  size_t *removed, stc_error *err);

/* Writes size bytes of data as entry file name: to a fresh temporary, then
 * fsync, close and rename, so that readers see the old file or the new one,
 * never half of one. A file size limit (ulimit -f) fails the write with
 * EFBIG instead of killing the process. Returns 0, or an errno value with
 * *step naming what failed (the temporary is then gone). */
int stc__cache_files_write(const stc__cache_files *files, const char *name,
                           const char *data, size_t size, const char **step);

/* After a successful write of keep: makes the rename durable (a failure is
 * not reported: losing the file in a crash only costs a rebuild), then
 * removes the oldest files of ours beyond capacity, never keep. */
void stc__cache_files_settle(const stc__cache_files *files, size_t capacity,
                             const char *keep);

#ifdef __cplusplus
}
#endif

#endif /* STC_CACHE_FILES_H */
