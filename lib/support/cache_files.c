/* The files of a private cache directory (see include/stc/cache_files.h),
 * shared by the tuner's disk cache and stc-run's object cache.
 *
 * In: the directory's descriptor and what names and heads its files have.
 * Out: scans ordered oldest first, files written atomically, files removed
 * (stale temporaries, bad entries, the oldest beyond capacity). */
#include "stc/cache_files.h"

#include "stc/hash.h"
#include "stc/input_bounds.h"
#include "stc/tuner_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define STC_CACHE_TEMP_PREFIX "tmp."
/* Another writer's temporary file younger than this may still be in flight. */
#define STC_CACHE_STALE_TEMP_SECONDS 3600
/* Enough to parse either cache's fixed header up to "created". */
#define STC_CACHE_HEAD_BYTES 256
/* Clock skew tolerated before an entry counts as future-dated. */
#define STC_CACHE_SKEW_SECONDS 60

static stc_status stc_cache_errno_status(int error) {
  return error == EACCES || error == EPERM ? STC_ERR_PERMISSION : STC_ERR_IO;
}

bool stc__cache_files_read_only(const stc__cache_files *files,
                                stc_error *err) {
  struct stat st;
  if (fstat(files->dir_fd, &st) != 0 || (st.st_mode & S_IWUSR))
    return false;
  stc_error_set(err, files->path, 0, 0,
                "cache directory is read-only (mode %04o); not written",
                (unsigned)(st.st_mode & 07777));
  return true;
}

bool stc__cache_files_unlink_if_same(const stc__cache_files *files,
                                     const char *name,
                                     const struct stat *examined) {
  struct stat now;
  if (stc__cache_files_read_only(files, NULL) ||
      fstatat(files->dir_fd, name, &now, AT_SYMLINK_NOFOLLOW) != 0)
    return false;
  if (now.st_dev != examined->st_dev || now.st_ino != examined->st_ino ||
      !S_ISREG(now.st_mode) || now.st_uid != files->uid)
    return false;
  return unlinkat(files->dir_fd, name, 0) == 0;
}

/* ---- entries ------------------------------------------------------------ */

void stc__cache_files_name(const stc__cache_files *files, const char *key,
                           size_t length, char name[70]) {
  stc_sha256_hex(key, length, name);
  snprintf(name + 64, 6, "%s", files->suffix);
}

/* Reads all of regular file fd, expecting size bytes; a byte more means it
 * grew. It stops once the expected bytes are in (the read that brought
 * them asked for one more, so it met the end of the file then): a second
 * read returning 0 would only rule out growth between the two reads, which
 * any moment after it could bring as well. So a record takes one read. */
static int stc_cache_read_all(int fd, char *buffer, size_t size,
                              size_t *used_out) {
  size_t used = 0, want = size + 1;
  while (used < want) {
    ssize_t got = read(fd, buffer + used, want - used);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return errno;
    if (got == 0)
      break;
    used += (size_t)got;
    if (used == size)
      break;
  }
  *used_out = used;
  return 0;
}

/* A big read's buffer is fresh memory (malloc maps it), whose every page
 * faults on first touch: 50 traps for a 200 KB object-cache entry, ~40 us
 * of a 3 ms warm start in a VM. One madvise maps them all at once where
 * the kernel can (5.14+); elsewhere the read faults them in as before. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
enum { CACHE_POPULATE_MIN = 64 * 1024 };

static void populate(char *buffer, size_t size) {
  long page = sysconf(_SC_PAGESIZE);
  if (size < CACHE_POPULATE_MIN || page <= 0)
    return;
  uintptr_t first = ((uintptr_t)buffer + (uintptr_t)page - 1) &
                    ~((uintptr_t)page - 1);
  uintptr_t end = ((uintptr_t)buffer + size) & ~((uintptr_t)page - 1);
  if (end > first)
    (void)madvise((void *)first, end - first, MADV_POPULATE_WRITE);
}

char *stc__cache_files_read(const stc__cache_files *files, const char *name,
                            uint64_t max_size, size_t *size,
                            stc__cache_file_check *check) {
  memset(check, 0, sizeof *check);
  /* O_NONBLOCK: a FIFO planted under an entry name must not hang us. */
  int fd = openat(files->dir_fd, name,
                  O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int error = errno;
    check->exists = error != ENOENT;
    if (error == ENOENT) {
      check->status = STC_ERR_NOT_FOUND;
      check->problem = "absent";
      check->quiet = true;
    } else if (error == ELOOP || error == EMLINK) {
      check->status = STC_ERR_PERMISSION;
      check->problem = "symbolic link (not followed)";
    } else {
      check->status = stc_cache_errno_status(error);
      check->problem = "cannot open";
    }
    return NULL;
  }
  check->exists = true;
  char *data = NULL;
  if (fstat(fd, &check->stat) != 0) {
    check->status = STC_ERR_IO;
    check->problem = "cannot stat";
  } else if (!S_ISREG(check->stat.st_mode)) {
    check->status = STC_ERR_PERMISSION;
    check->problem = "not a regular file";
    check->foreign = true;
  } else if (check->stat.st_uid != files->uid) {
    check->status = STC_ERR_PERMISSION;
    check->problem = "owned by another user";
    check->foreign = true;
  } else if ((uint64_t)check->stat.st_size > max_size) {
    check->status = STC_ERR_CORRUPT;
    check->problem = "too large";
    check->removable = true;
  } else if (!(data = malloc((size_t)check->stat.st_size + 1))) {
    check->status = STC_ERR_NOMEM;
    check->problem = "out of memory";
  } else {
    populate(data, (size_t)check->stat.st_size + 1);
    int error = stc_cache_read_all(fd, data, (size_t)check->stat.st_size,
                                   size);
    if (error) {
      check->status = stc_cache_errno_status(error);
      check->problem = "cannot read";
    } else if (*size > (size_t)check->stat.st_size) {
      check->status = STC_ERR_CORRUPT;
      check->problem = "grew while read";
    }
    if (check->status != STC_OK) {
      free(data);
      data = NULL;
    }
  }
  close(fd);
  return data;
}

const char *stc__cache_age_problem(int64_t created, int64_t now,
                                   uint64_t ttl_seconds) {
  /* Compare in a form that cannot overflow for any int64 inputs. */
  if (created > now &&
      (uint64_t)created - (uint64_t)now > (uint64_t)STC_CACHE_SKEW_SECONDS)
    return "created in the future";
  if (created < now && (uint64_t)now - (uint64_t)created >= ttl_seconds)
    return "expired";
  return NULL;
}

bool stc__cache_files_judge(const stc__cache_files *files, const char *name,
                            const char *stored_key, const char *expected_key,
                            int64_t created, int64_t now, uint64_t ttl_seconds,
                            stc__cache_file_check *check) {
  /* A load looked the file up by expected_key's own name, so a file holding
   * that key sits under its name: hashing the key again (a SHA-256 pass over
   * up to 384 KiB, on every site's first call in a process) would only say
   * so again. A listing knows no key and must hash the stored one. */
  char expected_name[70];
  if (!expected_key)
    stc__cache_files_name(files, stored_key, strlen(stored_key),
                          expected_name);
  const char *age = stc__cache_age_problem(created, now, ttl_seconds);
  if (expected_key && strcmp(stored_key, expected_key) != 0) {
    check->status = STC_ERR_NOT_FOUND;
    check->problem = "holds another key";
  } else if (!expected_key && strcmp(name, expected_name) != 0) {
    check->status = STC_ERR_CORRUPT;
    check->problem = "file name does not match its key";
  } else if (age) {
    check->status = STC_ERR_NOT_FOUND;
    check->problem = age;
    check->quiet = created < now;
  } else {
    return true;
  }
  check->removable = true;
  return false;
}

stc_status stc__cache_files_miss(const stc__cache_files *files,
                                 const char *name,
                                 const stc__cache_file_check *check,
                                 stc_error *err) {
  if (check->removable)
    stc__cache_files_unlink_if_same(files, name, &check->stat);
  stc_error_set(err, files->path, 0, 0, "%s: %s", name, check->problem);
  /* A planted symlink and an unreadable file are faults worth a warning;
   * everything else about a bad or foreign file is just a miss. */
  if (check->status == STC_ERR_NOMEM || check->status == STC_ERR_IO ||
      (check->status == STC_ERR_PERMISSION && !check->foreign))
    return check->status;
  return STC_ERR_NOT_FOUND;
}

/* ---- scans -------------------------------------------------------------- */

void stc__cache_scan_free(stc__cache_scan *scan) {
  for (size_t i = 0; i < scan->count; ++i)
    free(scan->files[i].name);
  free(scan->files);
  memset(scan, 0, sizeof *scan);
}

static bool stc_cache_has_suffix(const char *name, const char *suffix) {
  size_t length = strlen(name), suffix_length = strlen(suffix);
  return length > suffix_length &&
         strcmp(name + length - suffix_length, suffix) == 0;
}

/* A temporary file of a writer that died: ours, regular, and old. */
static bool stc_cache_is_stale_temp(const stc__cache_files *files,
                                    const struct stat *st) {
  return S_ISREG(st->st_mode) && st->st_uid == files->uid &&
         (int64_t)st->st_mtime <
             stc_now_seconds() - STC_CACHE_STALE_TEMP_SECONDS;
}

stc_status stc__cache_files_scan(const stc__cache_files *files,
                                 bool remove_stale, stc__cache_scan *scan,
                                 stc_error *err) {
  memset(scan, 0, sizeof *scan);
  /* A fresh open file description: a dup would share the read position
   * with every other thread scanning. */
  int fd = openat(files->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
  if (!dir) {
    int error = errno;
    if (fd >= 0)
      close(fd);
    stc_error_set(err, files->path, 0, 0, "cannot read cache directory: %s",
                  strerror(error));
    return stc_cache_errno_status(error);
  }
  size_t capacity = 0;
  stc_status status = STC_OK;
  for (;;) {
    errno = 0;
    struct dirent *entry = readdir(dir);
    if (!entry) {
      if (errno) {
        stc_error_set(err, files->path, 0, 0,
                      "cannot read cache directory: %s", strerror(errno));
        status = STC_ERR_IO;
      }
      break;
    }
    const char *name = entry->d_name;
    bool is_temp = strncmp(name, STC_CACHE_TEMP_PREFIX,
                           sizeof STC_CACHE_TEMP_PREFIX - 1) == 0;
    if (!is_temp && !stc_cache_has_suffix(name, files->suffix))
      continue;
    struct stat st;
    if (fstatat(files->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue; /* gone meanwhile: another process renamed or removed it */
    if (is_temp) {
      if (remove_stale && stc_cache_is_stale_temp(files, &st) &&
          stc__cache_files_unlink_if_same(files, name, &st))
        scan->removed++;
      continue;
    }
    if (scan->count == capacity) {
      size_t grown = capacity ? capacity * 2 : 64;
      stc__cache_file *grown_files =
          realloc(scan->files, grown * sizeof *grown_files);
      if (!grown_files) {
        status = STC_ERR_NOMEM;
        break;
      }
      scan->files = grown_files;
      capacity = grown;
    }
    stc__cache_file *file = &scan->files[scan->count];
    file->name = strdup(name);
    if (!file->name) {
      status = STC_ERR_NOMEM;
      break;
    }
    file->ours = S_ISREG(st.st_mode) && st.st_uid == files->uid;
    file->mtime = st.st_mtim;
    file->created = INT64_MIN;
    scan->count++;
    scan->ours += file->ours;
  }
  closedir(dir);
  if (status != STC_OK) {
    if (status == STC_ERR_NOMEM)
      stc_error_set(err, files->path, 0, 0, "out of memory listing cache");
    stc__cache_scan_free(scan);
    return status;
  }
  return STC_OK;
}

/* Reads just enough of an entry file to learn when it was created. */
static int64_t stc_cache_head_created(const stc__cache_files *files,
                                      const char *name) {
  /* O_NONBLOCK: a FIFO planted under an entry name must not hang us. */
  int fd = openat(files->dir_fd, name,
                  O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return INT64_MIN;
  char head[STC_CACHE_HEAD_BYTES];
  size_t used = 0;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    while (used < sizeof head) {
      ssize_t got = read(fd, head + used, sizeof head - used);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        break;
      used += (size_t)got;
    }
  }
  close(fd);
  return files->head_created(head, used);
}

static int stc_cache_file_order(const void *a_, const void *b_) {
  const stc__cache_file *a = a_, *b = b_;
  if (a->created != b->created)
    return a->created < b->created ? -1 : 1;
  if (a->mtime.tv_sec != b->mtime.tv_sec)
    return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
  if (a->mtime.tv_nsec != b->mtime.tv_nsec)
    return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
  return strcmp(a->name, b->name);
}

void stc__cache_files_order(const stc__cache_files *files,
                            stc__cache_scan *scan) {
  for (size_t i = 0; i < scan->count; ++i)
    if (scan->files[i].ours)
      scan->files[i].created =
          stc_cache_head_created(files, scan->files[i].name);
  if (scan->count > 1)
    qsort(scan->files, scan->count, sizeof *scan->files,
          stc_cache_file_order);
}

size_t stc__cache_files_enforce_capacity(const stc__cache_files *files,
                                         stc__cache_scan *scan,
                                         size_t capacity, const char *keep) {
  size_t ours = 0, removed = 0;
  if (stc__cache_files_read_only(files, NULL))
    return 0;
  for (size_t i = 0; i < scan->count; ++i)
    ours += scan->files[i].name && scan->files[i].ours;
  for (size_t i = 0; i < scan->count && ours > capacity; ++i) {
    stc__cache_file *file = &scan->files[i];
    if (!file->name || !file->ours || (keep && strcmp(file->name, keep) == 0))
      continue;
    /* A concurrent pruner may have taken it already; it still left. */
    if (unlinkat(files->dir_fd, file->name, 0) == 0)
      removed++;
    ours--;
  }
  return removed;
}

/* ---- list, prune, clear ------------------------------------------------- */

stc_status stc__cache_files_each(const stc__cache_files *files,
                                 bool (*fn)(void *user, const char *name,
                                            const char *path),
                                 void *user, stc_error *err) {
  stc__cache_scan scan;
  stc_status status = stc__cache_files_scan(files, false, &scan, err);
  if (status != STC_OK)
    return status;
  stc__cache_files_order(files, &scan);
  size_t path_size = strlen(files->path) + 1 + 256 + 1;
  char *path = malloc(path_size);
  if (!path) {
    stc__cache_scan_free(&scan);
    return STC_ERR_NOMEM;
  }
  for (size_t i = 0; i < scan.count; ++i) {
    snprintf(path, path_size, "%s/%s", files->path, scan.files[i].name);
    if (!fn(user, scan.files[i].name, path))
      break;
  }
  free(path);
  stc__cache_scan_free(&scan);
  return STC_OK;
}

stc_status stc__cache_files_prune(
    const stc__cache_files *files, size_t capacity,
    void (*examine)(void *user, const char *name,
                    stc__cache_file_check *check),
    void *user, size_t *removed, stc_error *err) {
  if (removed)
    *removed = 0;
  stc__cache_scan scan;
  stc_status status = stc__cache_files_scan(files, true, &scan, err);
  if (status != STC_OK)
    return status;
  stc__cache_files_order(files, &scan);
  size_t count = scan.removed;
  for (size_t i = 0; i < scan.count; ++i) {
    stc__cache_file *file = &scan.files[i];
    if (!file->ours)
      continue;
    stc__cache_file_check check;
    examine(user, file->name, &check);
    bool gone = !check.exists; /* removed since the scan */
    if (check.removable &&
        stc__cache_files_unlink_if_same(files, file->name, &check.stat)) {
      count++;
      gone = true;
    }
    if (gone) {
      free(file->name);
      file->name = NULL;
    }
  }
  count += stc__cache_files_enforce_capacity(files, &scan, capacity, NULL);
  stc__cache_scan_free(&scan);
  if (removed)
    *removed = count;
  return STC_OK;
}

stc_status stc__cache_files_clear(const stc__cache_files *files,
                                  size_t *removed, stc_error *err) {
  if (removed)
    *removed = 0;
  stc__cache_scan scan;
  stc_status status = stc__cache_files_scan(files, true, &scan, err);
  if (status != STC_OK)
    return status;
  size_t count = scan.removed;
  for (size_t i = 0; i < scan.count; ++i) {
    struct stat st;
    if (scan.files[i].ours &&
        fstatat(files->dir_fd, scan.files[i].name, &st,
                AT_SYMLINK_NOFOLLOW) == 0 &&
        stc__cache_files_unlink_if_same(files, scan.files[i].name, &st))
      count++;
  }
  stc__cache_scan_free(&scan);
  if (removed)
    *removed = count;
  return STC_OK;
}

/* ---- writing ------------------------------------------------------------ */

/* Creates a new temporary file next to the entries. The name is unique per
 * process (pid), per call (counter) and per attempt; O_EXCL settles races. */
static int stc_cache_create_temp(const stc__cache_files *files,
                                 char name[112]) {
  static atomic_uint_fast64_t counter;
  for (int attempt = 0; attempt < 64; ++attempt) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t serial = atomic_fetch_add(&counter, 1);
    snprintf(name, 112, STC_CACHE_TEMP_PREFIX "%ld.%" PRIu64 ".%lx%s",
             (long)getpid(), serial,
             (unsigned long)(now.tv_nsec ^ (long)now.tv_sec),
             files->temp_suffix);
    int fd = openat(files->dir_fd, name,
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0600);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  errno = EEXIST;
  return -1;
}

static int stc_cache_write_all(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t wrote = write(fd, data, size);
    if (wrote < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    if (wrote == 0)
      return EIO;
    data += wrote;
    size -= (size_t)wrote;
  }
  return 0;
}

int stc__cache_files_write(const stc__cache_files *files, const char *name,
                           const char *data, size_t size, const char **step) {
  char temp[112];
  int error = 0;
  *step = "create temporary file";
  stc_file_size_guard guard;
  stc_file_size_guard_begin(&guard);
  int fd = stc_cache_create_temp(files, temp);
  if (fd < 0) {
    error = errno;
  } else {
    if ((error = stc_cache_write_all(fd, data, size)) != 0)
      *step = "write";
    else if (fsync(fd) != 0)
      *step = "sync", error = errno;
    if (close(fd) != 0 && !error)
      *step = "close", error = errno;
    if (!error && renameat(files->dir_fd, temp, files->dir_fd, name) != 0)
      *step = "rename", error = errno;
    if (error)
      unlinkat(files->dir_fd, temp, 0);
  }
  stc_file_size_guard_end(&guard);
  return error;
}

void stc__cache_files_settle(const stc__cache_files *files, size_t capacity,
                             const char *keep) {
  fsync(files->dir_fd);
  stc__cache_scan scan;
  if (stc__cache_files_scan(files, false, &scan, NULL) != STC_OK)
    return;
  if (scan.ours > capacity) {
    stc__cache_files_order(files, &scan);
    stc__cache_files_enforce_capacity(files, &scan, capacity, keep);
  }
  stc__cache_scan_free(&scan);
}
