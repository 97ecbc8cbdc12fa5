/* The tuner's disk cache (see include/stc/tuner_cache.h, DESIGN.md section 6).
 *
 * In: a directory, records to save, keys to load. Out: records read back,
 * listings for stc-cache, files under <directory>/v1/.
 *
 * One file per record, named <sha256 hex of key>.rec. The format is text
 * lines followed by length-prefixed bytes, so that keys of any content
 * survive, and a SHA-256 checksum line over everything before it:
 *
 *   stc-tuner-cache
 *   version 1
 *   scope 0
 *   created 1700000000          (unix seconds, may be negative)
 *   reference_ns 123
 *   winner_ns 100
 *   ratio 3feccccccccccccd      (the IEEE-754 bits: exact round trip)
 *   verified 1
 *   key 11
 *   <11 key bytes>
 *   winner 4
 *   <4 winner bytes>
 *   checksum <64 hex digits>
 *
 * Parsing is strict: one canonical spelling of every field, nothing after
 * the checksum line. Anything else is a miss, and the file is removed when it
 * is a regular file of ours (never a symlink, never a foreign file).
 *
 * Concurrency: every file is written once under a unique temporary name and
 * renamed into place, so readers see an old record or a new one, never half
 * of one, across threads and processes. Every file operation goes through a
 * descriptor of the version directory (openat and friends), so swapping a
 * path component after open cannot redirect us. The only mutable state in a
 * handle is the test clock, guarded by a mutex. */
#include "stc/tuner_cache.h"

#include "stc/cache_files.h"
#include "stc/hash.h"
#include "stc/input_bounds.h"
#include "stc/tuner_remote.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* Records are small; anything bigger is not ours. The key bound is the
 * tuner's own request limit (DESIGN.md section 6, "a cache key over 384 KiB"),
 * the winner bound its candidate-name limit. */
#define STC_CACHE_MAX_FILE (1024u * 1024u)
#define STC_CACHE_MAX_KEY (384u * 1024u)
#define STC_CACHE_MAX_WINNER 4096u

#define STC_CACHE_MAGIC "stc-tuner-cache\n"
#define STC_CACHE_SUFFIX ".rec"

struct stc_disk_cache {
  char *path; /* <directory>/v1 */
  int dir_fd; /* the version directory, opened O_DIRECTORY|O_NOFOLLOW */
  uid_t uid;
  size_t capacity;
  uint64_t ttl_seconds;
  pthread_mutex_t clock_lock; /* guards clock, clock_user and last_fault */
  int64_t (*clock)(void *user);
  void *clock_user;
  char last_fault[1024]; /* the latest fault's text, "" when none */
  stc_remote_cache *remote; /* the fleet tier below, NULL: none (owned) */
  stc__cache_files files;   /* dir_fd, path and uid, for the shared scans */
};

/* ---- records ------------------------------------------------------------ */

void stc_cache_record_clear(stc_cache_record *record) {
  if (!record)
    return;
  free(record->key);
  free(record->winner);
  memset(record, 0, sizeof *record);
}

stc_status stc_cache_record_copy(const stc_cache_record *record,
                                 stc_cache_record *out) {
  if (!record || !out)
    return STC_ERR_INVALID;
  stc_cache_record copy = *record;
  copy.key = record->key ? strdup(record->key) : NULL;
  copy.winner = record->winner ? strdup(record->winner) : NULL;
  if ((record->key && !copy.key) || (record->winner && !copy.winner)) {
    stc_cache_record_clear(&copy);
    return STC_ERR_NOMEM;
  }
  *out = copy;
  return STC_OK;
}

bool stc_cache_record_is_fresh(const stc_cache_record *record, int64_t now,
                               uint64_t ttl_seconds) {
  return record &&
         !stc__cache_age_problem(record->created, now, ttl_seconds);
}

int64_t stc_now_seconds(void) {
  struct timespec now;
  if (clock_gettime(CLOCK_REALTIME, &now) != 0)
    return (int64_t)time(NULL);
  return (int64_t)now.tv_sec;
}

/* ---- encoding ----------------------------------------------------------- */

static uint64_t stc_cache_double_bits(double value) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}

static double stc_cache_bits_double(uint64_t bits) {
  double value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

/* The shape rules save enforces and load re-checks. */
static bool stc_cache_key_ok(const char *key, size_t *length) {
  if (!key)
    return false;
  size_t size = strnlen(key, STC_CACHE_MAX_KEY + 1);
  *length = size;
  return size > 0 && size <= STC_CACHE_MAX_KEY;
}

static bool stc_cache_winner_ok(const char *winner, size_t *length) {
  if (!winner)
    return false;
  size_t size = strnlen(winner, STC_CACHE_MAX_WINNER + 1);
  *length = size;
  return size > 0 && size <= STC_CACHE_MAX_WINNER;
}

/* Serializes a valid record; the caller frees *out. */
static stc_status stc_cache_encode(const stc_cache_record *record,
                                   size_t key_length, size_t winner_length,
                                   char **out, size_t *out_size) {
  char head[320];
  int head_length = snprintf(
      head, sizeof head,
      STC_CACHE_MAGIC "version %d\nscope %u\ncreated %" PRId64
                      "\nreference_ns %" PRIu64 "\nwinner_ns %" PRIu64
                      "\nratio %016" PRIx64 "\nverified %d\nkey %zu\n",
      STC_TUNER_CACHE_FORMAT, (unsigned)record->scope, record->created,
      record->reference_ns, record->winner_ns,
      stc_cache_double_bits(record->ratio), record->verified ? 1 : 0,
      key_length);
  char middle[32];
  int middle_length =
      snprintf(middle, sizeof middle, "\nwinner %zu\n", winner_length);
  if (head_length < 0 || (size_t)head_length >= sizeof head ||
      middle_length < 0 || (size_t)middle_length >= sizeof middle)
    return STC_ERR_INVALID;
  static const char checksum_label[] = "checksum ";
  size_t body = (size_t)head_length + key_length + (size_t)middle_length +
                winner_length + 1;
  size_t total = body + (sizeof checksum_label - 1) + 64 + 1;
  char *buffer = malloc(total + 1);
  if (!buffer)
    return STC_ERR_NOMEM;
  char *cursor = buffer;
  memcpy(cursor, head, (size_t)head_length);
  cursor += head_length;
  memcpy(cursor, record->key, key_length);
  cursor += key_length;
  memcpy(cursor, middle, (size_t)middle_length);
  cursor += middle_length;
  memcpy(cursor, record->winner, winner_length);
  cursor += winner_length;
  *cursor++ = '\n';
  memcpy(cursor, checksum_label, sizeof checksum_label - 1);
  cursor += sizeof checksum_label - 1;
  stc_sha256_hex(buffer, body, cursor); /* writes 64 digits and a NUL */
  cursor += 64;
  *cursor++ = '\n';
  *out = buffer;
  *out_size = total;
  return STC_OK;
}

/* ---- strict parsing ----------------------------------------------------- */

typedef struct stc_cache_parser {
  const char *data;
  size_t size;
  size_t at;
  const char *problem; /* first failure, static text */
  stc_status status;
} stc_cache_parser;

static bool stc_cache_fail(stc_cache_parser *parser, stc_status status,
                           const char *problem) {
  if (parser->status == STC_OK) {
    parser->status = status;
    parser->problem = problem;
  }
  return false;
}

/* A file that ends early is reported as truncated rather than malformed. */
static bool stc_cache_expect(stc_cache_parser *parser, const char *literal) {
  size_t length = strlen(literal);
  size_t left = parser->size - parser->at;
  if (left < length) {
    if (memcmp(parser->data + parser->at, literal, left) == 0)
      return stc_cache_fail(parser, STC_ERR_CORRUPT, "truncated");
    return stc_cache_fail(parser, STC_ERR_CORRUPT, "malformed record");
  }
  if (memcmp(parser->data + parser->at, literal, length) != 0)
    return stc_cache_fail(parser, STC_ERR_CORRUPT, "malformed record");
  parser->at += length;
  return true;
}

/* Canonical decimal: no sign, no leading zeros, no overflow, then '\n'. */
static bool stc_cache_unsigned(stc_cache_parser *parser, uint64_t limit,
                               uint64_t *out) {
  size_t start = parser->at;
  uint64_t value = 0;
  while (parser->at < parser->size && parser->data[parser->at] >= '0' &&
         parser->data[parser->at] <= '9') {
    unsigned digit = (unsigned)(parser->data[parser->at] - '0');
    if (digit > limit || value > (limit - digit) / 10)
      return stc_cache_fail(parser, STC_ERR_CORRUPT, "number out of range");
    value = value * 10 + digit;
    parser->at++;
  }
  size_t digits = parser->at - start;
  if (parser->at >= parser->size)
    return stc_cache_fail(parser, STC_ERR_CORRUPT, "truncated");
  if (digits == 0 || (digits > 1 && parser->data[start] == '0') ||
      parser->data[parser->at] != '\n')
    return stc_cache_fail(parser, STC_ERR_CORRUPT, "malformed number");
  parser->at++;
  *out = value;
  return true;
}

static bool stc_cache_field_u64(stc_cache_parser *parser, const char *label,
                                uint64_t limit, uint64_t *out) {
  return stc_cache_expect(parser, label) &&
         stc_cache_unsigned(parser, limit, out);
}

static bool stc_cache_field_i64(stc_cache_parser *parser, const char *label,
                                int64_t *out) {
  if (!stc_cache_expect(parser, label))
    return false;
  bool negative = parser->at < parser->size && parser->data[parser->at] == '-';
  if (negative)
    parser->at++;
  uint64_t magnitude;
  if (!stc_cache_unsigned(parser, negative ? (uint64_t)INT64_MAX + 1
                                           : (uint64_t)INT64_MAX,
                          &magnitude))
    return false;
  if (negative && magnitude == 0)
    return stc_cache_fail(parser, STC_ERR_CORRUPT, "malformed number");
  *out = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
  return true;
}

/* Exactly 16 lower-case hex digits, then '\n'. */
static bool stc_cache_field_bits(stc_cache_parser *parser, const char *label,
                                 uint64_t *out) {
  if (!stc_cache_expect(parser, label))
    return false;
  if (parser->size - parser->at < 17)
    return stc_cache_fail(parser, STC_ERR_CORRUPT, "truncated");
  uint64_t value = 0;
  for (int i = 0; i < 16; ++i) {
    char c = parser->data[parser->at++];
    unsigned digit;
    if (c >= '0' && c <= '9')
      digit = (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      digit = (unsigned)(c - 'a' + 10);
    else
      return stc_cache_fail(parser, STC_ERR_CORRUPT, "malformed ratio");
    value = value << 4 | digit;
  }
  if (parser->data[parser->at++] != '\n')
    return stc_cache_fail(parser, STC_ERR_CORRUPT, "malformed ratio");
  *out = value;
  return true;
}

/* "<label><length>\n<bytes>\n" into a fresh NUL-terminated string. */
static bool stc_cache_field_bytes(stc_cache_parser *parser, const char *label,
                                  uint64_t limit, char **out) {
  uint64_t length;
  if (!stc_cache_field_u64(parser, label, limit, &length))
    return false;
  if (length == 0)
    return stc_cache_fail(parser, STC_ERR_CORRUPT, "empty string field");
  if (parser->size - parser->at < length + 1)
    return stc_cache_fail(parser, STC_ERR_CORRUPT, "truncated");
  const char *bytes = parser->data + parser->at;
  if (memchr(bytes, 0, (size_t)length) || bytes[length] != '\n')
    return stc_cache_fail(parser, STC_ERR_CORRUPT, "malformed string field");
  char *copy = malloc((size_t)length + 1);
  if (!copy)
    return stc_cache_fail(parser, STC_ERR_NOMEM, "out of memory");
  memcpy(copy, bytes, (size_t)length);
  copy[length] = 0;
  parser->at += (size_t)length + 1;
  *out = copy;
  return true;
}

/* Magic, version, scope and created: all that ordering needs. A version
 * other than ours stops here, since its layout may differ. */
static bool stc_cache_parse_head(stc_cache_parser *parser,
                                 stc_cache_record *record) {
  uint64_t version, scope;
  if (!stc_cache_expect(parser, STC_CACHE_MAGIC) ||
      !stc_cache_field_u64(parser, "version ", UINT32_MAX, &version))
    return false;
  if (version != STC_TUNER_CACHE_FORMAT)
    return stc_cache_fail(parser, STC_ERR_VERSION,
                          "unsupported format version");
  if (!stc_cache_field_u64(parser, "scope ", UINT8_MAX, &scope) ||
      !stc_cache_field_i64(parser, "created ", &record->created))
    return false;
  record->scope = (uint8_t)scope;
  return true;
}

/* The creation time in the first size bytes of a record file, for the
 * shared scans' oldest-first order; INT64_MIN when they hold none. */
static int64_t stc_cache_head_created(const char *head, size_t size) {
  stc_cache_parser parser = {head, size, 0, NULL, STC_OK};
  stc_cache_record record = {0};
  return stc_cache_parse_head(&parser, &record) ? record.created : INT64_MIN;
}

/* Parses a whole file into *record (cleared on failure). */
static stc_status stc_cache_decode(const char *data, size_t size,
                                   stc_cache_record *record,
                                   const char **problem) {
  stc_cache_parser parser = {data, size, 0, NULL, STC_OK};
  stc_cache_record parsed = {0};
  uint64_t verified = 0, ratio_bits = 0;
  bool ok = stc_cache_parse_head(&parser, &parsed) &&
            stc_cache_field_u64(&parser, "reference_ns ", UINT64_MAX,
                                &parsed.reference_ns) &&
            stc_cache_field_u64(&parser, "winner_ns ", UINT64_MAX,
                                &parsed.winner_ns) &&
            stc_cache_field_bits(&parser, "ratio ", &ratio_bits) &&
            stc_cache_field_u64(&parser, "verified ", 1, &verified) &&
            stc_cache_field_bytes(&parser, "key ", STC_CACHE_MAX_KEY,
                                  &parsed.key) &&
            stc_cache_field_bytes(&parser, "winner ", STC_CACHE_MAX_WINNER,
                                  &parsed.winner);
  if (ok) {
    size_t body = parser.at;
    char expected[65];
    stc_sha256_hex(data, body, expected);
    ok = stc_cache_expect(&parser, "checksum ");
    if (ok && (size - parser.at < 65 ||
               memcmp(data + parser.at, expected, 64) != 0 ||
               data[parser.at + 64] != '\n'))
      ok = stc_cache_fail(&parser, STC_ERR_CORRUPT,
                          size - parser.at < 65 ? "truncated"
                                                : "checksum mismatch");
    if (ok && parser.at + 65 != size)
      ok = stc_cache_fail(&parser, STC_ERR_CORRUPT,
                          "trailing bytes after checksum");
  }
  if (!ok) {
    stc_cache_record_clear(&parsed);
    *problem = parser.problem;
    return parser.status;
  }
  parsed.ratio = stc_cache_bits_double(ratio_bits);
  parsed.verified = verified != 0;
  *record = parsed;
  *problem = NULL;
  return STC_OK;
}

/* ---- file helpers ------------------------------------------------------- */

static stc_status stc_cache_errno_status(int error) {
  return error == EACCES || error == EPERM ? STC_ERR_PERMISSION : STC_ERR_IO;
}

static int64_t stc_cache_now(stc_disk_cache *cache) {
  pthread_mutex_lock(&cache->clock_lock);
  int64_t (*clock)(void *) = cache->clock;
  void *user = cache->clock_user;
  pthread_mutex_unlock(&cache->clock_lock);
  return clock ? clock(user) : stc_now_seconds();
}

/* Opens, checks and parses record file name; expected_key (may be NULL, as
 * when listing) must then match the stored key. Never removes anything. On
 * STC_OK *record holds the record; otherwise it is left cleared. */
static void stc_cache_examine(stc_disk_cache *cache, const char *name,
                              const char *expected_key, int64_t now,
                              stc_cache_record *record,
                              stc__cache_file_check *check) {
  memset(record, 0, sizeof *record);
  size_t size;
  char *data = stc__cache_files_read(&cache->files, name, STC_CACHE_MAX_FILE,
                                     &size, check);
  if (!data)
    return;
  check->status = stc_cache_decode(data, size, record, &check->problem);
  check->removable = check->status == STC_ERR_CORRUPT ||
                     check->status == STC_ERR_VERSION;
  free(data);
  if (check->status == STC_OK &&
      !stc__cache_files_judge(&cache->files, name, record->key, expected_key,
                              record->created, now, cache->ttl_seconds,
                              check))
    stc_cache_record_clear(record);
}

/* ---- directory ---------------------------------------------------------- */

/* Creates the cache directory and, when missing, its parent, both 0700;
 * never more (DESIGN.md section 6; README "Reliability"). The default
 * <home>/.cache/stc thus appears only in a HOME that exists, and a typo in
 * STC_CACHE_DIR cannot grow a tree of directories, nor can "/" (or any
 * directory that is the filesystem root) hold the version directory.
 * Returns 0 or an errno value, with *missing naming (in a buffer of
 * path's size) the ancestor that would have had to be created. */
static int stc_cache_make_directory(const char *path, char *missing) {
  missing[0] = 0;
  struct stat st, root;
  if (stat(path, &st) == 0) /* the usual case: nothing to create */
    return stat("/", &root) == 0 && st.st_dev == root.st_dev &&
                   st.st_ino == root.st_ino
               ? EPERM
               : 0;
  char *copy = strdup(path);
  if (!copy)
    return ENOMEM;
  /* The parent and the grandparent, without trailing slashes. */
  char *levels[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    char *slash = strrchr(copy, '/');
    if (!slash)
      break;
    while (slash > copy && slash[-1] == '/')
      slash--;
    if (slash == copy) /* a child of "/": the root itself is the parent */
      break;
    *slash = 0;
    levels[i] = strdup(copy);
    if (!levels[i]) {
      free(levels[0]);
      free(copy);
      return ENOMEM;
    }
  }
  free(copy);
  int result = 0;
  /* levels[1] (when there is one) must exist already; create levels[0] if
   * needed, then path. A relative path of one or two components is
   * anchored at the working directory, which exists. */
  if (levels[1] && stat(levels[1], &st) != 0) {
    strcpy(missing, levels[1]);
    result = ENOENT;
  } else if (levels[0] && mkdir(levels[0], 0700) != 0 && errno != EEXIST) {
    result = errno;
  } else if (mkdir(path, 0700) != 0 && errno != EEXIST) {
    result = errno;
  }
  free(levels[0]);
  free(levels[1]);
  return result;
}

/* Why the directory entry `name` could not be opened (open_error: its
 * errno), in the order the checks are made: a symlink, not a directory,
 * another owner, else the error itself. */
static stc_status stc_cache_open_failed(int at_fd, const char *name,
                                        const char *shown, uid_t uid,
                                        bool allow_root_owner, int open_error,
                                        stc_error *err) {
  struct stat st;
  if (fstatat(at_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    stc_error_set(err, shown, 0, 0, "cannot stat cache directory: %s",
                  strerror(errno));
    return STC_ERR_IO;
  }
  if (S_ISLNK(st.st_mode) || open_error == ELOOP) {
    stc_error_set(err, shown, 0, 0,
                  "cache directory is a symbolic link; refused");
    return STC_ERR_PERMISSION;
  }
  if (!S_ISDIR(st.st_mode)) {
    stc_error_set(err, shown, 0, 0, "cache path is not a directory");
    return STC_ERR_IO;
  }
  if (st.st_uid != uid && !(allow_root_owner && st.st_uid == 0)) {
    stc_error_set(err, shown, 0, 0,
                  "cache directory is owned by another user (uid %u); refused",
                  (unsigned)st.st_uid);
    return STC_ERR_PERMISSION;
  }
  stc_error_set(err, shown, 0, 0, "cannot open cache directory: %s",
                strerror(open_error));
  return STC_ERR_IO;
}

/* Opens a directory entry that must be a real directory, not a symlink, and
 * ours (or, with allow_root_owner, root's); any other owner is refused.
 * *st_out (may be NULL) gets the opened directory's status. With
 * create_missing, an entry that does not exist is created (0700) first.
 * Opened first (O_NOFOLLOW | O_DIRECTORY), then checked by fstat on the
 * descriptor: what is checked is what was opened, and a warm start makes
 * two system calls per level instead of four (a stat before the open to
 * check, a stat after it to see the entry was not swapped meanwhile); the
 * reasons a failed open gives are read only then. */
static stc_status stc_cache_open_dir(int at_fd, const char *name,
                                     const char *shown, uid_t uid,
                                     bool allow_root_owner,
                                     bool create_missing, int *out,
                                     struct stat *st_out, stc_error *err) {
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = openat(at_fd, name, flags);
  /* Created only when missing: a mkdirat that fails with EEXIST on every
   * start is a system call for nothing. */
  if (fd < 0 && errno == ENOENT && create_missing) {
    if (mkdirat(at_fd, name, 0700) != 0 && errno != EEXIST) {
      stc_error_set(err, shown, 0, 0, "cannot create cache directory: %s",
                    strerror(errno));
      return STC_ERR_IO;
    }
    fd = openat(at_fd, name, flags);
  }
  if (fd < 0)
    return stc_cache_open_failed(at_fd, name, shown, uid, allow_root_owner,
                                 errno, err);
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
    close(fd);
    stc_error_set(err, shown, 0, 0, "cache path is not a directory");
    return STC_ERR_IO;
  }
  if (st.st_uid != uid && !(allow_root_owner && st.st_uid == 0)) {
    close(fd);
    stc_error_set(err, shown, 0, 0,
                  "cache directory is owned by another user (uid %u); refused",
                  (unsigned)st.st_uid);
    return STC_ERR_PERMISSION;
  }
  *out = fd;
  if (st_out)
    *st_out = st;
  return STC_OK;
}

stc_status stc_cache_private_dir_open(const char *directory,
                                      const char *name, char **path_out,
                                      int *fd_out, stc_error *err) {
  if (!path_out || !fd_out)
    return STC_ERR_INVALID;
  *path_out = NULL;
  *fd_out = -1;
  if (!directory || !directory[0] || !name || !name[0] || strchr(name, '/')) {
    stc_error_set(err, NULL, 0, 0, "cache needs a directory");
    return STC_ERR_INVALID;
  }
  char *base = strdup(directory);
  if (!base)
    return STC_ERR_NOMEM;
  /* "dir/" would otherwise name the target of a symlink "dir". */
  for (size_t n = strlen(base); n > 1 && base[n - 1] == '/'; --n)
    base[n - 1] = 0;
  size_t path_size = strlen(base) + 1 + strlen(name) + 1;
  char *path = malloc(path_size);
  if (!path) {
    free(base);
    return STC_ERR_NOMEM;
  }
  snprintf(path, path_size, "%s/%s", base, name);
  uid_t uid = geteuid();
  int dir_fd = -1;

  /* The usual case first: the base exists, and opening it is all. Else
   * (missing, or refused: the same reasons again, now reported) it is
   * created as stc_cache_make_directory allows, and opened. */
  struct stat base_st;
  int base_fd = -1;
  stc_error quiet;
  stc_status status = stc_cache_open_dir(AT_FDCWD, base, base, uid, true,
                                         false, &base_fd, &base_st, &quiet);
  if (status != STC_OK) {
    char *missing = malloc(strlen(base) + 1);
    int error = missing ? stc_cache_make_directory(base, missing) : ENOMEM;
    status = STC_OK;
    if (error == EPERM) {
      stc_error_set(err, base, 0, 0,
                    "the root directory cannot hold a cache; refused");
      status = STC_ERR_PERMISSION;
    } else if (error == ENOENT && missing[0]) {
      stc_error_set(err, base, 0, 0,
                    "'%s' does not exist; stc creates only the cache "
                    "directory and its parent",
                    missing);
      status = STC_ERR_IO;
    } else if (error) {
      stc_error_set(err, base, 0, 0, "cannot create cache directory: %s",
                    strerror(error));
      status = error == ENOMEM ? STC_ERR_NOMEM : STC_ERR_IO;
    }
    free(missing);
    /* The base may be shared (a root-owned sticky directory such as /tmp);
     * the version directory holding the records must be ours alone. */
    if (status == STC_OK)
      status = stc_cache_open_dir(AT_FDCWD, base, base, uid, true, false,
                                  &base_fd, &base_st, err);
  }
  /* Never the filesystem root (stc_cache_make_directory). */
  struct stat root;
  if (status == STC_OK && stat("/", &root) == 0 &&
      base_st.st_dev == root.st_dev && base_st.st_ino == root.st_ino) {
    stc_error_set(err, base, 0, 0,
                  "the root directory cannot hold a cache; refused");
    status = STC_ERR_PERMISSION;
  }
  struct stat st;
  if (status == STC_OK)
    status = stc_cache_open_dir(base_fd, name, path, uid, false, true,
                                &dir_fd, &st, err);
  /* Someone widened it: take group and other bits away. Never add a bit:
   * an owner who made it read-only (0500) meant it, and saves then become
   * warnings (stc__cache_files_read_only). */
  if (status == STC_OK && (st.st_mode & 077) != 0 &&
      fchmod(dir_fd, st.st_mode & 07700) != 0) {
    stc_error_set(err, path, 0, 0, "cannot make cache directory private: %s",
                  strerror(errno));
    status = STC_ERR_PERMISSION;
  }
  if (base_fd >= 0)
    close(base_fd);
  free(base);
  if (status != STC_OK) {
    if (dir_fd >= 0)
      close(dir_fd);
    free(path);
    return status;
  }
  *path_out = path;
  *fd_out = dir_fd;
  return STC_OK;
}

stc_status stc_disk_cache_open(const char *directory, size_t capacity,
                               uint64_t ttl_seconds, stc_disk_cache **out,
                               stc_error *err) {
  if (!out)
    return STC_ERR_INVALID;
  *out = NULL;
  if (!directory || !directory[0] || capacity == 0 || ttl_seconds == 0) {
    stc_error_set(err, NULL, 0, 0,
                  "cache needs a directory, a capacity and a time-to-live");
    return STC_ERR_INVALID;
  }
  stc_disk_cache *cache = calloc(1, sizeof *cache);
  if (!cache)
    return STC_ERR_NOMEM;
  char version_name[32];
  snprintf(version_name, sizeof version_name, "v%d", STC_TUNER_CACHE_FORMAT);
  cache->uid = geteuid();
  cache->capacity = capacity;
  cache->ttl_seconds = ttl_seconds;
  stc_status status = stc_cache_private_dir_open(
      directory, version_name, &cache->path, &cache->dir_fd, err);
  if (status == STC_OK &&
      pthread_mutex_init(&cache->clock_lock, NULL) != 0)
    status = STC_ERR_NOMEM;
  cache->files = (stc__cache_files){cache->dir_fd, cache->path, cache->uid,
                                    STC_CACHE_SUFFIX, "",
                                    stc_cache_head_created};
  if (status != STC_OK) {
    if (cache->path)
      close(cache->dir_fd);
    free(cache->path);
    free(cache);
    return status;
  }
  *out = cache;
  return STC_OK;
}

void stc_disk_cache_close(stc_disk_cache *cache) {
  if (!cache)
    return;
  close(cache->dir_fd);
  stc_remote_cache_close(cache->remote);
  pthread_mutex_destroy(&cache->clock_lock);
  free(cache->path);
  free(cache);
}

const char *stc_disk_cache_path(const stc_disk_cache *cache) {
  return cache ? cache->path : NULL;
}

void stc_disk_cache_set_clock(stc_disk_cache *cache,
                              int64_t (*now_seconds)(void *user), void *user) {
  if (!cache)
    return;
  pthread_mutex_lock(&cache->clock_lock);
  cache->clock = now_seconds;
  cache->clock_user = now_seconds ? user : NULL;
  pthread_mutex_unlock(&cache->clock_lock);
}

/* ---- faults ------------------------------------------------------------- */

/* Keeps the text of a fault (a status the tuner counts as a cache warning:
 * anything but success, a miss or a bad argument) for
 * stc_disk_cache_last_fault, so that a warning can say what went wrong. */
static void stc_cache_note_fault(stc_disk_cache *cache, stc_status status,
                                 const stc_error *err) {
  if (!cache || status == STC_OK || status == STC_ERR_NOT_FOUND ||
      status == STC_ERR_INVALID)
    return;
  char text[sizeof cache->last_fault];
  stc_error_format(err, text, sizeof text);
  if (!text[0])
    snprintf(text, sizeof text, "%s: %s", cache->path, stc_status_str(status));
  pthread_mutex_lock(&cache->clock_lock);
  memcpy(cache->last_fault, text, sizeof text);
  pthread_mutex_unlock(&cache->clock_lock);
}

bool stc_disk_cache_last_fault(stc_disk_cache *cache, char *buffer,
                               size_t size) {
  if (!cache || !buffer || size == 0)
    return false;
  pthread_mutex_lock(&cache->clock_lock);
  bool have = cache->last_fault[0] != 0;
  snprintf(buffer, size, "%s", cache->last_fault);
  pthread_mutex_unlock(&cache->clock_lock);
  return have;
}

/* ---- load / remove ------------------------------------------------------ */

static stc_status stc_cache_load_unnoted(stc_disk_cache *cache,
                                         const char *key,
                                         stc_cache_record *out,
                                         stc_error *err) {
  size_t key_length;
  if (!cache || !out || !stc_cache_key_ok(key, &key_length)) {
    stc_error_set(err, NULL, 0, 0, "cache load needs a key of 1..%u bytes",
                  STC_CACHE_MAX_KEY);
    return STC_ERR_INVALID;
  }
  char name[70];
  stc__cache_files_name(&cache->files, key, key_length, name);
  stc__cache_file_check check;
  stc_cache_examine(cache, name, key, stc_cache_now(cache), out, &check);
  if (check.status == STC_OK)
    return STC_OK;
  return stc__cache_files_miss(&cache->files, name, &check, err);
}

static stc_status stc_cache_remove_unnoted(stc_disk_cache *cache,
                                           const char *key, stc_error *err) {
  size_t key_length;
  if (!cache || !stc_cache_key_ok(key, &key_length)) {
    stc_error_set(err, NULL, 0, 0, "cache remove needs a key of 1..%u bytes",
                  STC_CACHE_MAX_KEY);
    return STC_ERR_INVALID;
  }
  char name[70];
  stc__cache_files_name(&cache->files, key, key_length, name);
  struct stat st;
  if (fstatat(cache->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT)
      return STC_OK;
    stc_error_set(err, cache->path, 0, 0, "%s: %s", name, strerror(errno));
    return stc_cache_errno_status(errno);
  }
  if (S_ISLNK(st.st_mode)) {
    stc_error_set(err, cache->path, 0, 0,
                  "%s: symbolic link (not followed); left alone", name);
    return STC_ERR_PERMISSION;
  }
  if (!S_ISREG(st.st_mode) || st.st_uid != cache->uid) {
    stc_error_set(err, cache->path, 0, 0,
                  "%s: not a regular file of ours; left alone", name);
    return STC_ERR_PERMISSION;
  }
  if (stc__cache_files_read_only(&cache->files, err))
    return STC_ERR_PERMISSION;
  if (unlinkat(cache->dir_fd, name, 0) != 0 && errno != ENOENT) {
    int error = errno;
    stc_error_set(err, cache->path, 0, 0, "%s: cannot remove: %s", name,
                  strerror(error));
    return stc_cache_errno_status(error);
  }
  return STC_OK;
}

/* ---- directory scans (list, prune, clear, capacity) --------------------- */

/* What list and prune examine each file with: the time, taken once, and
 * (for list) the caller's callback. */
typedef struct stc_cache_walk {
  stc_disk_cache *cache;
  int64_t now;
  bool (*fn)(void *user, const stc_cache_entry *entry);
  void *user;
} stc_cache_walk;

static bool stc_cache_list_file(void *user, const char *name,
                                const char *path) {
  stc_cache_walk *state = user;
  stc_cache_record record;
  stc__cache_file_check check;
  stc_cache_examine(state->cache, name, NULL, state->now, &record, &check);
  if (!check.exists)
    return true; /* removed since the scan */
  stc_cache_entry entry = {path, check.status,
                           check.status == STC_OK ? &record : NULL,
                           check.problem};
  bool more = state->fn(state->user, &entry);
  stc_cache_record_clear(&record);
  return more;
}

stc_status stc_disk_cache_list(stc_disk_cache *cache,
                               bool (*fn)(void *user,
                                          const stc_cache_entry *entry),
                               void *user, stc_error *err) {
  if (!cache || !fn)
    return STC_ERR_INVALID;
  stc_cache_walk state = {cache, stc_cache_now(cache), fn, user};
  return stc__cache_files_each(&cache->files, stc_cache_list_file, &state,
                               err);
}

static void stc_cache_prune_examine(void *user, const char *name,
                                    stc__cache_file_check *check) {
  stc_cache_walk *state = user;
  stc_cache_record record;
  stc_cache_examine(state->cache, name, NULL, state->now, &record, check);
  stc_cache_record_clear(&record);
}

stc_status stc_disk_cache_prune(stc_disk_cache *cache, size_t *removed,
                                stc_error *err) {
  if (!cache) {
    if (removed)
      *removed = 0;
    return STC_ERR_INVALID;
  }
  stc_cache_walk state = {cache, stc_cache_now(cache), NULL, NULL};
  return stc__cache_files_prune(&cache->files, cache->capacity,
                                stc_cache_prune_examine, &state, removed, err);
}

stc_status stc_disk_cache_clear(stc_disk_cache *cache, size_t *removed,
                                stc_error *err) {
  if (!cache) {
    if (removed)
      *removed = 0;
    return STC_ERR_INVALID;
  }
  return stc__cache_files_clear(&cache->files, removed, err);
}

/* ---- save --------------------------------------------------------------- */

static stc_status stc_cache_save_unnoted(stc_disk_cache *cache,
                                         const stc_cache_record *record,
                                         stc_error *err) {
  size_t key_length, winner_length;
  if (!cache || !record || !stc_cache_key_ok(record->key, &key_length) ||
      !stc_cache_winner_ok(record->winner, &winner_length)) {
    stc_error_set(err, NULL, 0, 0,
                  "cache save needs a key of 1..%u bytes and a winner of "
                  "1..%u bytes",
                  STC_CACHE_MAX_KEY, STC_CACHE_MAX_WINNER);
    return STC_ERR_INVALID;
  }
  char *data;
  size_t size;
  stc_status status =
      stc_cache_encode(record, key_length, winner_length, &data, &size);
  if (status != STC_OK) {
    stc_error_set(err, NULL, 0, 0, "cannot encode cache record");
    return status;
  }
  char name[70];
  stc__cache_files_name(&cache->files, record->key, key_length, name);
  if (stc__cache_files_read_only(&cache->files, err)) {
    free(data);
    return STC_ERR_PERMISSION;
  }
  /* A file size limit (ulimit -f) below the record's size must not kill
   * the process: the write fails with EFBIG, a warning like a full disk. */
  const char *step;
  int error = stc__cache_files_write(&cache->files, name, data, size, &step);
  free(data);
  if (error) {
    if (error == EFBIG)
      stc_error_set(err, cache->path, 0, 0,
                    "%s: cannot %s: file size limit exceeded (ulimit -f); "
                    "not saved",
                    name, step);
    else
      stc_error_set(err, cache->path, 0, 0, "%s: cannot %s: %s", name, step,
                    strerror(error));
    return stc_cache_errno_status(error);
  }
  stc__cache_files_settle(&cache->files, cache->capacity, name);
  return STC_OK;
}

/* ---- the remote tier (stc/tuner_remote.h) ------------------------------ */

/* The remote tier keeps the very bytes of a record file, so a record read
 * from it passes the same checks as one read from disk: strict parsing and
 * checksum, the full key, freshness. A usable one is written to disk, so
 * this machine's next process finds it there. Returns STC_OK or
 * STC_ERR_NOT_FOUND: the remote tier's faults are its own, never the disk
 * cache's (stc_remote_cache_last_fault). */
static stc_status stc_cache_load_remote(stc_disk_cache *cache, const char *key,
                                        stc_cache_record *out) {
  char digest[65];
  stc_sha256_hex(key, strlen(key), digest);
  char *data = NULL;
  size_t size = 0;
  if (stc_remote_cache_get(cache->remote, STC_REMOTE_RECORD, digest, &data,
                           &size) != STC_OK)
    return STC_ERR_NOT_FOUND;
  const char *problem = NULL;
  stc_cache_record record;
  stc_status status = stc_cache_decode(data, size, &record, &problem);
  free(data);
  if (status != STC_OK)
    return STC_ERR_NOT_FOUND;
  if (strcmp(record.key, key) != 0 ||
      !stc_cache_record_is_fresh(&record, stc_cache_now(cache),
                                 cache->ttl_seconds)) {
    stc_cache_record_clear(&record);
    return STC_ERR_NOT_FOUND;
  }
  stc_error local;
  stc_error_clear(&local);
  stc_cache_note_fault(cache, stc_cache_save_unnoted(cache, &record, &local),
                       &local);
  *out = record;
  return STC_OK;
}

/* Mirrors a saved record to the remote tier, expiring when it would go
 * stale here (created + time-to-live). */
static void stc_cache_save_remote(stc_disk_cache *cache,
                                  const stc_cache_record *record) {
  size_t key_length, winner_length;
  if (!stc_cache_key_ok(record->key, &key_length) ||
      !stc_cache_winner_ok(record->winner, &winner_length))
    return;
  int64_t now = stc_cache_now(cache);
  if (!stc_cache_record_is_fresh(record, now, cache->ttl_seconds))
    return;
  /* Fresh, so created + ttl > now: the difference cannot overflow past
   * ttl + skew. */
  uint64_t left_seconds =
      record->created >= now
          ? cache->ttl_seconds + (uint64_t)(record->created - now)
          : cache->ttl_seconds - ((uint64_t)now - (uint64_t)record->created);
  char *data;
  size_t size;
  if (stc_cache_encode(record, key_length, winner_length, &data, &size) !=
      STC_OK)
    return;
  char digest[65];
  stc_sha256_hex(record->key, key_length, digest);
  uint64_t expire_ms = left_seconds > UINT64_MAX / 1000 ? UINT64_MAX
                                                        : left_seconds * 1000;
  stc_remote_cache_put(cache->remote, STC_REMOTE_RECORD, digest, data, size,
                       expire_ms);
  free(data);
}

static void stc_cache_remove_remote(stc_disk_cache *cache, const char *key) {
  size_t key_length;
  if (!stc_cache_key_ok(key, &key_length))
    return;
  char digest[65];
  stc_sha256_hex(key, key_length, digest);
  stc_remote_cache_delete(cache->remote, STC_REMOTE_RECORD, digest);
}

void stc_disk_cache_set_remote(stc_disk_cache *cache,
                               stc_remote_cache *remote) {
  if (!cache) {
    stc_remote_cache_close(remote);
    return;
  }
  stc_remote_cache_close(cache->remote);
  cache->remote = remote;
}

stc_remote_cache *stc_disk_cache_remote(const stc_disk_cache *cache) {
  return cache ? cache->remote : NULL;
}

bool stc_disk_cache_may_tune(stc_disk_cache *cache, const char *key) {
  size_t key_length;
  if (!cache || !cache->remote || !stc_cache_key_ok(key, &key_length))
    return true;
  char digest[65];
  stc_sha256_hex(key, key_length, digest);
  bool granted;
  stc_remote_cache_claim(cache->remote, digest, &granted);
  return granted;
}

stc_status stc_cache_record_decode(const char *data, size_t size,
                                   stc_cache_record *out,
                                   const char **problem) {
  const char *why = NULL;
  if (!data || !out)
    return STC_ERR_INVALID;
  stc_status status = size > STC_CACHE_MAX_FILE
                          ? (why = "too large", STC_ERR_CORRUPT)
                          : stc_cache_decode(data, size, out, &why);
  if (status != STC_OK)
    memset(out, 0, sizeof *out);
  if (problem)
    *problem = why;
  return status;
}

stc_status stc_disk_cache_load(stc_disk_cache *cache, const char *key,
                               stc_cache_record *out, stc_error *err) {
  stc_error local;
  stc_error_clear(&local);
  stc_status status = stc_cache_load_unnoted(cache, key, out, &local);
  if (status == STC_ERR_NOT_FOUND && cache->remote)
    status = stc_cache_load_remote(cache, key, out);
  stc_cache_note_fault(cache, status, &local);
  if (err && status != STC_OK)
    *err = local;
  return status;
}

stc_status stc_disk_cache_remove(stc_disk_cache *cache, const char *key,
                                 stc_error *err) {
  stc_error local;
  stc_error_clear(&local);
  stc_status status = stc_cache_remove_unnoted(cache, key, &local);
  if (cache && cache->remote && key)
    stc_cache_remove_remote(cache, key);
  stc_cache_note_fault(cache, status, &local);
  if (err && status != STC_OK)
    *err = local;
  return status;
}

stc_status stc_disk_cache_save(stc_disk_cache *cache,
                               const stc_cache_record *record, stc_error *err) {
  stc_error local;
  stc_error_clear(&local);
  stc_status status = stc_cache_save_unnoted(cache, record, &local);
  if (cache && cache->remote && record)
    stc_cache_save_remote(cache, record);
  stc_cache_note_fault(cache, status, &local);
  if (err && status != STC_OK)
    *err = local;
  return status;
}
