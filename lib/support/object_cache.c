/* stc-run's compiled-code cache (see include/stc/object_cache.h).
 *
 * In: a cache directory, entries to save, keys to load. Out: entries read
 * back, listings for stc-cache, files under <directory>/objects-v1/.
 *
 * One file per entry, named <sha256 hex of key>.obj: text lines, then
 * length-prefixed bytes, then an XXH64 checksum line (16 hex digits) over
 * everything before it:
 *
 *   stc-object-cache
 *   version 2
 *   created 1700000000
 *   key 123
 *   <123 key bytes>
 *   meta 45
 *   <45 bytes>
 *   object 67890
 *   <67890 bytes>
 *   checksum <16 hex digits>
 *
 * Parsing is strict (one spelling per field, nothing after the checksum).
 * The directory comes from stc_cache_private_dir_open, the primitive of the
 * tuning cache; scans, capacity, stale temporaries and the write-then-rename
 * are the tuning cache's too (stc/cache_files.h). File operations go through
 * the directory's descriptor (openat), so a path component swapped after
 * open cannot redirect us. */
#include "stc/object_cache.h"

#include "stc/cache_files.h"
#include "stc/hash.h"
#include "stc/input_bounds.h"
#include "stc/tuner_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define OBJ_MAGIC "stc-object-cache\n"
#define OBJ_SUFFIX ".obj"

struct stc_object_cache {
  char *path;
  int dir_fd;
  uid_t uid;
  size_t capacity;
  uint64_t ttl_seconds;
  int64_t (*clock)(void *user);
  void *clock_user;
  stc__cache_files files; /* dir_fd, path and uid, for the shared scans */
};

void stc_object_entry_clear(stc_object_entry *entry) {
  if (!entry)
    return;
  free(entry->key);
  free(entry->meta);
  free(entry->storage ? entry->storage : entry->object);
  memset(entry, 0, sizeof *entry);
}

/* ---- encoding ----------------------------------------------------------- */

/* The checksum of an entry's body: XXH64 as 16 lower-case hex digits
 * (NUL after them). */
#define OBJ_CHECKSUM_DIGITS 16
static void obj_checksum(const char *body, size_t size,
                         char out[OBJ_CHECKSUM_DIGITS + 1]) {
  uint64_t h = stc_xxh64(body, size, 0);
  for (int i = OBJ_CHECKSUM_DIGITS - 1; i >= 0; i--, h >>= 4)
    out[i] = "0123456789abcdef"[h & 15];
  out[OBJ_CHECKSUM_DIGITS] = 0;
}

stc_status stc_object_entry_encode(const stc_object_entry *entry, char **out,
                                   size_t *size) {
  if (!entry || !out || !size || !entry->key ||
      (entry->meta_size && !entry->meta) ||
      (entry->object_size && !entry->object))
    return STC_ERR_INVALID;
  size_t key_size = strlen(entry->key);
  if (key_size == 0 || key_size > STC_OBJECT_CACHE_MAX_KEY ||
      entry->meta_size > STC_OBJECT_CACHE_MAX_META ||
      entry->object_size == 0 ||
      entry->object_size > STC_OBJECT_CACHE_MAX_OBJECT)
    return STC_ERR_INVALID;
  char head[128], meta_line[48], object_line[48];
  int head_length = snprintf(head, sizeof head,
                             OBJ_MAGIC "version %d\ncreated %" PRId64
                                       "\nkey %zu\n",
                             STC_OBJECT_CACHE_FORMAT, entry->created, key_size);
  int meta_length =
      snprintf(meta_line, sizeof meta_line, "\nmeta %zu\n", entry->meta_size);
  int object_length = snprintf(object_line, sizeof object_line,
                               "\nobject %zu\n", entry->object_size);
  static const char label[] = "checksum ";
  size_t body = (size_t)head_length + key_size + (size_t)meta_length +
                entry->meta_size + (size_t)object_length +
                entry->object_size + 1;
  size_t total = body + sizeof label - 1 + OBJ_CHECKSUM_DIGITS + 1;
  char *buffer = malloc(total + 1);
  if (!buffer)
    return STC_ERR_NOMEM;
  char *at = buffer;
  memcpy(at, head, (size_t)head_length), at += head_length;
  memcpy(at, entry->key, key_size), at += key_size;
  memcpy(at, meta_line, (size_t)meta_length), at += meta_length;
  if (entry->meta_size)
    memcpy(at, entry->meta, entry->meta_size), at += entry->meta_size;
  memcpy(at, object_line, (size_t)object_length), at += object_length;
  memcpy(at, entry->object, entry->object_size), at += entry->object_size;
  *at++ = '\n';
  memcpy(at, label, sizeof label - 1), at += sizeof label - 1;
  obj_checksum(buffer, body, at);
  at += OBJ_CHECKSUM_DIGITS;
  *at++ = '\n';
  *out = buffer;
  *size = total;
  return STC_OK;
}

typedef struct obj_parser {
  const char *data;
  size_t size, at;
  const char *problem;
  stc_status status;
} obj_parser;

static bool obj_fail(obj_parser *p, stc_status status, const char *problem) {
  if (p->status == STC_OK) {
    p->status = status;
    p->problem = problem;
  }
  return false;
}

static bool obj_expect(obj_parser *p, const char *literal) {
  size_t length = strlen(literal), left = p->size - p->at;
  if (left < length)
    return obj_fail(p, STC_ERR_CORRUPT,
                    memcmp(p->data + p->at, literal, left) == 0
                        ? "truncated"
                        : "malformed entry");
  if (memcmp(p->data + p->at, literal, length) != 0)
    return obj_fail(p, STC_ERR_CORRUPT, "malformed entry");
  p->at += length;
  return true;
}

/* Canonical decimal (no sign, no leading zero) up to limit, then '\n'. */
static bool obj_number(obj_parser *p, const char *label, uint64_t limit,
                       bool negative_ok, int64_t *signed_out,
                       uint64_t *out) {
  if (!obj_expect(p, label))
    return false;
  bool negative = negative_ok && p->at < p->size && p->data[p->at] == '-';
  p->at += negative;
  size_t start = p->at;
  uint64_t value = 0;
  while (p->at < p->size && p->data[p->at] >= '0' && p->data[p->at] <= '9') {
    unsigned digit = (unsigned)(p->data[p->at] - '0');
    if (value > (limit - digit) / 10)
      return obj_fail(p, STC_ERR_CORRUPT, "number out of range");
    value = value * 10 + digit;
    p->at++;
  }
  size_t digits = p->at - start;
  if (p->at >= p->size)
    return obj_fail(p, STC_ERR_CORRUPT, "truncated");
  if (digits == 0 || (digits > 1 && p->data[start] == '0') ||
      p->data[p->at] != '\n' || (negative && value == 0))
    return obj_fail(p, STC_ERR_CORRUPT, "malformed number");
  p->at++;
  if (out)
    *out = value;
  if (signed_out)
    *signed_out = negative ? (int64_t)(0 - value) : (int64_t)value;
  return true;
}

/* "<label><n>\n<n bytes>\n" copied into a fresh buffer with a NUL added. */
/* A length-prefixed field: copied (NUL-terminated), or with in_place
 * pointed at in the parsed bytes (obj_decode moves it once the checksum is
 * checked). */
static bool obj_field(obj_parser *p, const char *label, uint64_t limit,
                      bool in_place, char **out, size_t *out_size) {
  uint64_t length;
  if (!obj_number(p, label, limit, false, NULL, &length))
    return false;
  if (p->size - p->at < length + 1)
    return obj_fail(p, STC_ERR_CORRUPT, "truncated");
  if (p->data[p->at + length] != '\n')
    return obj_fail(p, STC_ERR_CORRUPT, "malformed entry");
  char *bytes = in_place ? (char *)p->data + p->at : malloc((size_t)length + 1);
  if (!bytes)
    return obj_fail(p, STC_ERR_NOMEM, "out of memory");
  if (!in_place) {
    memcpy(bytes, p->data + p->at, (size_t)length);
    bytes[length] = 0;
  }
  p->at += (size_t)length + 1;
  *out = bytes;
  if (out_size)
    *out_size = (size_t)length;
  return true;
}

static bool obj_bytes(obj_parser *p, const char *label, uint64_t limit,
                      char **out, size_t *out_size) {
  return obj_field(p, label, limit, false, out, out_size);
}

/* Magic, version and created: what ordering needs. Another version stops
 * here, since its layout may differ. */
static bool obj_parse_head(obj_parser *p, int64_t *created) {
  uint64_t version;
  if (!obj_expect(p, OBJ_MAGIC) ||
      !obj_number(p, "version ", UINT32_MAX, false, NULL, &version))
    return false;
  if (version != STC_OBJECT_CACHE_FORMAT)
    return obj_fail(p, STC_ERR_VERSION, "unsupported format version");
  return obj_number(p, "created ", (uint64_t)INT64_MAX, true, created, NULL);
}

/* The creation time in the first size bytes of an entry file, for the
 * shared scans' oldest-first order; INT64_MIN when they hold none. */
static int64_t obj_head_created(const char *head, size_t size) {
  obj_parser p = {head, size, 0, NULL, STC_OK};
  int64_t created = INT64_MIN;
  return obj_parse_head(&p, &created) ? created : INT64_MIN;
}

/* stc_object_entry_decode; with adopt (data is the caller's allocation)
 * the object stays in data, which the entry then owns (storage). */
static stc_status obj_decode(char *data, size_t size, bool adopt,
                             stc_object_entry *out, const char **problem) {
  obj_parser p = {data, size, 0, NULL, STC_OK};
  stc_object_entry parsed = {0};
  size_t key_size = 0;
  bool ok = obj_parse_head(&p, &parsed.created) &&
            obj_bytes(&p, "key ", STC_OBJECT_CACHE_MAX_KEY, &parsed.key,
                      &key_size) &&
            obj_bytes(&p, "meta ", STC_OBJECT_CACHE_MAX_META, &parsed.meta,
                      &parsed.meta_size) &&
            obj_field(&p, "object ", STC_OBJECT_CACHE_MAX_OBJECT, adopt,
                      &parsed.object, &parsed.object_size);
  if (ok && (key_size == 0 || strlen(parsed.key) != key_size))
    ok = obj_fail(&p, STC_ERR_CORRUPT, "malformed key");
  if (ok) {
    size_t body = p.at;
    char expected[OBJ_CHECKSUM_DIGITS + 1];
    obj_checksum(data, body, expected);
    ok = obj_expect(&p, "checksum ");
    if (ok && size - p.at < OBJ_CHECKSUM_DIGITS + 1)
      ok = obj_fail(&p, STC_ERR_CORRUPT, "truncated");
    else if (ok && (memcmp(data + p.at, expected, OBJ_CHECKSUM_DIGITS) != 0 ||
                    data[p.at + OBJ_CHECKSUM_DIGITS] != '\n'))
      ok = obj_fail(&p, STC_ERR_CORRUPT, "checksum mismatch");
    else if (ok && p.at + OBJ_CHECKSUM_DIGITS + 1 != size)
      ok = obj_fail(&p, STC_ERR_CORRUPT, "trailing bytes after checksum");
  }
  if (adopt && parsed.object) {
    if (ok) {
      /* To the start of the allocation, which malloc aligned: an object
       * file is parsed in place, and ELF wants its bytes aligned. */
      memmove(data, parsed.object, parsed.object_size);
      parsed.object = data;
      parsed.object[parsed.object_size] = 0;
      parsed.storage = data;
    } else {
      parsed.object = NULL; /* the caller's bytes, not ours to free */
    }
  }
  if (!ok) {
    stc_object_entry_clear(&parsed);
    *problem = p.problem;
    return p.status;
  }
  *out = parsed;
  *problem = NULL;
  return STC_OK;
}

stc_status stc_object_entry_decode(const char *data, size_t size,
                                   stc_object_entry *out,
                                   const char **problem) {
  /* Not adopted: nothing is written to data. */
  return obj_decode((char *)data, size, false, out, problem);
}

/* ---- directory ---------------------------------------------------------- */

stc_status stc_object_cache_open(const char *directory, size_t capacity,
                                 uint64_t ttl_seconds, stc_object_cache **out,
                                 stc_error *err) {
  if (!out)
    return STC_ERR_INVALID;
  *out = NULL;
  if (capacity == 0 || ttl_seconds == 0) {
    stc_error_set(err, NULL, 0, 0,
                  "object cache needs a capacity and a time-to-live");
    return STC_ERR_INVALID;
  }
  stc_object_cache *cache = calloc(1, sizeof *cache);
  if (!cache)
    return STC_ERR_NOMEM;
  stc_status status = stc_cache_private_dir_open(directory,
                                                 STC_OBJECT_CACHE_DIRECTORY,
                                                 &cache->path,
                                                 &cache->dir_fd, err);
  if (status != STC_OK) {
    free(cache);
    return status;
  }
  cache->uid = geteuid();
  cache->capacity = capacity;
  cache->ttl_seconds = ttl_seconds;
  cache->files = (stc__cache_files){cache->dir_fd, cache->path, cache->uid,
                                    OBJ_SUFFIX, ".o", obj_head_created};
  *out = cache;
  return STC_OK;
}

void stc_object_cache_close(stc_object_cache *cache) {
  if (!cache)
    return;
  close(cache->dir_fd);
  free(cache->path);
  free(cache);
}

const char *stc_object_cache_path(const stc_object_cache *cache) {
  return cache ? cache->path : NULL;
}

void stc_object_cache_set_clock(stc_object_cache *cache,
                                int64_t (*now_seconds)(void *user),
                                void *user) {
  if (!cache)
    return;
  cache->clock = now_seconds;
  cache->clock_user = user;
}

static int64_t obj_now(const stc_object_cache *cache) {
  return cache->clock ? cache->clock(cache->clock_user) : stc_now_seconds();
}

static stc_status obj_errno_status(int error) {
  return error == EACCES || error == EPERM || error == EROFS
             ? STC_ERR_PERMISSION
             : STC_ERR_IO;
}

static void obj_file_name(const stc_object_cache *cache, const char *key,
                          char name[70]) {
  stc__cache_files_name(&cache->files, key, strlen(key), name);
}

/* Reads and checks file name; expected_key (NULL when listing) must match. */
static void obj_examine(const stc_object_cache *cache, const char *name,
                        const char *expected_key, int64_t now,
                        stc_object_entry *entry,
                        stc__cache_file_check *check) {
  memset(entry, 0, sizeof *entry);
  size_t size;
  char *data = stc__cache_files_read(
      &cache->files, name,
      (uint64_t)STC_OBJECT_CACHE_MAX_OBJECT + STC_OBJECT_CACHE_MAX_META +
          STC_OBJECT_CACHE_MAX_KEY + 4096,
      &size, check);
  if (!data)
    return;
  /* The object stays where it was read (160 KB of a tuned module's
   * variants was copied once more here, a page fault per 4 KB). */
  check->status = obj_decode(data, size, true, entry, &check->problem);
  check->removable = check->status == STC_ERR_CORRUPT ||
                     check->status == STC_ERR_VERSION;
  if (check->status != STC_OK)
    free(data);
  if (check->status == STC_OK &&
      !stc__cache_files_judge(&cache->files, name, entry->key, expected_key,
                              entry->created, now, cache->ttl_seconds, check))
    stc_object_entry_clear(entry);
}

stc_status stc_object_cache_load(stc_object_cache *cache, const char *key,
                                 stc_object_entry *out, const char **problem,
                                 stc_error *err) {
  const char *ignored;
  if (!problem)
    problem = &ignored;
  *problem = NULL;
  if (!cache || !out || !key || !key[0] ||
      strlen(key) > STC_OBJECT_CACHE_MAX_KEY) {
    stc_error_set(err, NULL, 0, 0, "object cache load needs a key");
    return STC_ERR_INVALID;
  }
  char name[70];
  obj_file_name(cache, key, name);
  stc__cache_file_check check;
  obj_examine(cache, name, key, obj_now(cache), out, &check);
  if (check.status == STC_OK)
    return STC_OK;
  stc_status status = stc__cache_files_miss(&cache->files, name, &check, err);
  if (status == STC_ERR_NOT_FOUND && !check.quiet)
    *problem = check.problem;
  return status;
}

/* ---- scans -------------------------------------------------------------- */

/* What list and prune examine each file with: the time, taken once, and
 * (for list) the caller's callback. */
typedef struct obj_walk {
  stc_object_cache *cache;
  int64_t now;
  bool (*fn)(void *user, const stc_object_listing *item);
  void *user;
} obj_walk;

static bool obj_list_file(void *user, const char *name, const char *path) {
  obj_walk *walk = user;
  stc_object_entry entry;
  stc__cache_file_check check;
  obj_examine(walk->cache, name, NULL, walk->now, &entry, &check);
  if (!check.exists)
    return true;
  stc_object_listing item = {path,
                             name,
                             check.status,
                             check.status == STC_OK ? &entry : NULL,
                             check.problem,
                             (uint64_t)check.stat.st_size};
  bool more = walk->fn(walk->user, &item);
  stc_object_entry_clear(&entry);
  return more;
}

stc_status stc_object_cache_list(stc_object_cache *cache,
                                 bool (*fn)(void *user,
                                            const stc_object_listing *item),
                                 void *user, stc_error *err) {
  if (!cache || !fn)
    return STC_ERR_INVALID;
  obj_walk walk = {cache, obj_now(cache), fn, user};
  return stc__cache_files_each(&cache->files, obj_list_file, &walk, err);
}

static void obj_prune_examine(void *user, const char *name,
                              stc__cache_file_check *check) {
  obj_walk *walk = user;
  stc_object_entry entry;
  obj_examine(walk->cache, name, NULL, walk->now, &entry, check);
  stc_object_entry_clear(&entry);
}

stc_status stc_object_cache_prune(stc_object_cache *cache, size_t *removed,
                                  stc_error *err) {
  if (!cache) {
    if (removed)
      *removed = 0;
    return STC_ERR_INVALID;
  }
  obj_walk walk = {cache, obj_now(cache), NULL, NULL};
  return stc__cache_files_prune(&cache->files, cache->capacity,
                                obj_prune_examine, &walk, removed, err);
}

stc_status stc_object_cache_clear(stc_object_cache *cache, size_t *removed,
                                  stc_error *err) {
  if (!cache) {
    if (removed)
      *removed = 0;
    return STC_ERR_INVALID;
  }
  return stc__cache_files_clear(&cache->files, removed, err);
}

/* ---- save --------------------------------------------------------------- */

stc_status stc_object_cache_save(stc_object_cache *cache,
                                 const stc_object_entry *entry,
                                 stc_error *err) {
  if (!cache || !entry)
    return STC_ERR_INVALID;
  stc_object_entry stamped = *entry;
  if (stamped.created == 0)
    stamped.created = obj_now(cache);
  char *data;
  size_t size;
  stc_status status = stc_object_entry_encode(&stamped, &data, &size);
  if (status != STC_OK) {
    stc_error_set(err, NULL, 0, 0,
                  status == STC_ERR_NOMEM ? "out of memory encoding an entry"
                                          : "object cache entry out of bounds");
    return status;
  }
  if (stc__cache_files_read_only(&cache->files, NULL)) {
    free(data);
    stc_error_set(err, cache->path, 0, 0,
                  "cache directory is read-only; not written");
    return STC_ERR_PERMISSION;
  }
  char name[70];
  obj_file_name(cache, stamped.key, name);
  /* A file size limit (ulimit -f) must not kill the process (SIGXFSZ). */
  const char *step;
  int error = stc__cache_files_write(&cache->files, name, data, size, &step);
  free(data);
  if (error) {
    stc_error_set(err, cache->path, 0, 0, "%s: cannot %s: %s", name, step,
                  error == EFBIG ? "file size limit exceeded (ulimit -f)"
                                 : strerror(error));
    return obj_errno_status(error);
  }
  stc__cache_files_settle(&cache->files, cache->capacity, name);
  return STC_OK;
}
