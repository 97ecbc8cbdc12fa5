/* Unit tests for lib/support/hash.c and lib/tuner/cache.c.
 *
 * Hashes are checked against published vectors; the disk cache against
 * every way a record file can go bad (flipped bytes, truncation, expiry,
 * future dates, other versions, other keys, symlinks, foreign owners, a
 * vanished or full directory) and against racing threads and processes. */
#include "stc_test.h"

#include "stc/hash.h"
#include "stc/tuner_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

/* out = a/b; a path too long for out is a test bug, reported loudly. */
static void join(char *out, size_t size, const char *a, const char *b) {
  if (snprintf(out, size, "%s/%s", a, b) >= (int)size)
    fprintf(stderr, "path too long: %s/%s\n", a, b);
}

/* A directory for one test under the harness's scratch directory. Static
 * storage: copy it before calling again. */
static const char *test_dir(const char *name) {
  static char path[4096];
  join(path, sizeof path, stc_test_tmpdir(), name);
  return path;
}

static int64_t fake_clock(void *user) { return *(const int64_t *)user; }

/* Path of the record file for key inside cache. */
static void record_path(const stc_disk_cache *cache, const char *key,
                        char *out, size_t size) {
  char name[70];
  stc_sha256_hex(key, strlen(key), name);
  strcat(name, ".rec");
  join(out, size, stc_disk_cache_path(cache), name);
}

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* Counts entries of dir whose name starts with prefix (or ends with suffix). */
static int count_entries(const char *dir, const char *prefix,
                         const char *suffix) {
  DIR *d = opendir(dir);
  if (!d)
    return -1;
  int count = 0;
  struct dirent *entry;
  while ((entry = readdir(d))) {
    size_t n = strlen(entry->d_name);
    if (prefix && strncmp(entry->d_name, prefix, strlen(prefix)) == 0)
      count++;
    else if (suffix && n > strlen(suffix) &&
             strcmp(entry->d_name + n - strlen(suffix), suffix) == 0)
      count++;
  }
  closedir(d);
  return count;
}

static stc_cache_record make_record(const char *key, const char *winner,
                                    int64_t created) {
  stc_cache_record record = {0};
  record.scope = 1;
  record.key = (char *)key;
  record.winner = (char *)winner;
  record.created = created;
  record.reference_ns = 2000;
  record.winner_ns = 1000;
  record.ratio = 0.5;
  record.verified = true;
  return record;
}

/* Opens a cache in test_dir(name) with a fake clock at *now. */
static stc_disk_cache *open_cache(const char *name, size_t capacity,
                                  uint64_t ttl, int64_t *now) {
  stc_disk_cache *cache = NULL;
  stc_error err;
  if (stc_disk_cache_open(test_dir(name), capacity, ttl, &cache, &err) !=
      STC_OK) {
    fprintf(stderr, "open failed: %s\n", err.message);
    return NULL;
  }
  if (now)
    stc_disk_cache_set_clock(cache, fake_clock, now);
  return cache;
}

/* Saves key=winner at created and expects success. */
static stc_status save(stc_disk_cache *cache, const char *key,
                       const char *winner, int64_t created) {
  stc_cache_record record = make_record(key, winner, created);
  stc_error err;
  return stc_disk_cache_save(cache, &record, &err);
}

/* Loads key; returns the status and, on STC_OK, the winner in winner_out. */
static stc_status load_winner(stc_disk_cache *cache, const char *key,
                              char *winner_out, size_t size) {
  stc_cache_record record;
  stc_error err;
  stc_status status = stc_disk_cache_load(cache, key, &record, &err);
  if (status == STC_OK && winner_out)
    snprintf(winner_out, size, "%s", record.winner);
  stc_cache_record_clear(&record);
  return status;
}

typedef struct listing {
  int count;
  int ok;
  stc_status statuses[64];
  char keys[64][64];
  int stop_after; /* 0: never stop */
} listing;

static bool collect(void *user, const stc_cache_entry *entry) {
  listing *l = user;
  if (l->count < 64) {
    l->statuses[l->count] = entry->status;
    snprintf(l->keys[l->count], sizeof l->keys[0], "%s",
             entry->record ? entry->record->key : "");
  }
  l->count++;
  l->ok += entry->status == STC_OK;
  return !(l->stop_after && l->count >= l->stop_after);
}

/* ---- hashing ------------------------------------------------------------ */

STC_TEST(hash_fnv1a_vectors) {
  STC_CHECK_EQ_U64(stc_hash64("", 0, STC_HASH_SEED), 0xcbf29ce484222325ull);
  STC_CHECK_EQ_U64(stc_hash64_str("a", STC_HASH_SEED), 0xaf63dc4c8601ec8cull);
  STC_CHECK_EQ_U64(stc_hash64_str("foobar", STC_HASH_SEED),
                   0x85944171f73967e8ull);
  /* Continuing from a seed is the same as hashing the concatenation. */
  STC_CHECK_EQ_U64(stc_hash64_str("bar", stc_hash64_str("foo", STC_HASH_SEED)),
                   stc_hash64_str("foobar", STC_HASH_SEED));
  STC_CHECK_EQ_U64(stc_hash64_str(NULL, 42), 42);
}

STC_TEST(hash_sha256_vectors) {
  char hex[65];
  stc_sha256_hex("", 0, hex);
  STC_CHECK_STR_EQ(
      hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  stc_sha256_hex("abc", 3, hex);
  STC_CHECK_STR_EQ(
      hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  stc_sha256_hex(m448, strlen(m448), hex);
  STC_CHECK_STR_EQ(
      hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                     "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
  stc_sha256_hex(m896, strlen(m896), hex);
  STC_CHECK_STR_EQ(
      hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  char *million = malloc(1000000);
  STC_CHECK(million);
  memset(million, 'a', 1000000);
  stc_sha256_hex(million, 1000000, hex);
  free(million);
  STC_CHECK_STR_EQ(
      hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  uint8_t raw[32];
  stc_sha256("abc", 3, raw);
  STC_CHECK_EQ_U64(raw[0], 0xba);
  STC_CHECK_EQ_U64(raw[31], 0xad);
}

/* ---- records ------------------------------------------------------------ */

STC_TEST(cache_record_freshness_and_copy) {
  stc_cache_record record = make_record("k", "w", 1000);
  STC_CHECK(stc_cache_record_is_fresh(&record, 1000, 10));
  STC_CHECK(stc_cache_record_is_fresh(&record, 1009, 10));
  STC_CHECK(!stc_cache_record_is_fresh(&record, 1010, 10));
  STC_CHECK(stc_cache_record_is_fresh(&record, 940, 10));  /* 60 s skew */
  STC_CHECK(!stc_cache_record_is_fresh(&record, 939, 10)); /* beyond skew */
  record.created = INT64_MAX;
  STC_CHECK(!stc_cache_record_is_fresh(&record, INT64_MIN, UINT64_MAX));
  record.created = INT64_MIN;
  STC_CHECK(!stc_cache_record_is_fresh(&record, INT64_MAX, 100));
  STC_CHECK(!stc_cache_record_is_fresh(NULL, 0, 100));

  record.created = 7;
  stc_cache_record copy;
  STC_CHECK_EQ_INT(stc_cache_record_copy(&record, &copy), STC_OK);
  STC_CHECK(copy.key != record.key);
  STC_CHECK_STR_EQ(copy.key, "k");
  STC_CHECK_STR_EQ(copy.winner, "w");
  STC_CHECK_EQ_INT(copy.created, 7);
  stc_cache_record_clear(&copy);
  STC_CHECK(copy.key == NULL && copy.winner == NULL && copy.created == 0);
  stc_cache_record_clear(NULL);
  STC_CHECK(stc_now_seconds() > 1600000000);
}

/* ---- disk cache --------------------------------------------------------- */

STC_TEST(cache_round_trip_every_field) {
  int64_t now = 1700000000;
  stc_disk_cache *cache = open_cache("round_trip", 16, 3600, &now);
  STC_CHECK(cache);
  /* A key with newlines, spaces and UTF-8 must survive byte for byte. */
  const char *key = "op=matmul\nenv=cpu x86\tavx512\nworkload=4x4 \xc3\xa9";
  stc_cache_record record = make_record(key, "tiled 8x8\nv2", now - 5);
  record.scope = 2;
  record.reference_ns = UINT64_MAX;
  record.winner_ns = 123456789;
  record.ratio = 0.1; /* not exact in decimal: the bits must round-trip */
  record.verified = true;
  stc_error err;
  STC_CHECK_EQ_INT(stc_disk_cache_save(cache, &record, &err), STC_OK);

  stc_cache_record out;
  STC_CHECK_EQ_INT(stc_disk_cache_load(cache, key, &out, &err), STC_OK);
  STC_CHECK_EQ_INT(out.scope, 2);
  STC_CHECK_STR_EQ(out.key, key);
  STC_CHECK_STR_EQ(out.winner, "tiled 8x8\nv2");
  STC_CHECK_EQ_INT(out.created, now - 5);
  STC_CHECK_EQ_U64(out.reference_ns, UINT64_MAX);
  STC_CHECK_EQ_U64(out.winner_ns, 123456789);
  STC_CHECK(memcmp(&out.ratio, &record.ratio, sizeof out.ratio) == 0);
  STC_CHECK(out.verified);
  stc_cache_record_clear(&out);

  /* The other value of every flag, and a negative ratio. */
  record.verified = false;
  record.scope = 0;
  record.ratio = -1.0 / 3.0;
  record.reference_ns = 0;
  STC_CHECK_EQ_INT(stc_disk_cache_save(cache, &record, &err), STC_OK);
  STC_CHECK_EQ_INT(stc_disk_cache_load(cache, key, &out, &err), STC_OK);
  STC_CHECK(!out.verified);
  STC_CHECK_EQ_INT(out.scope, 0);
  STC_CHECK_EQ_U64(out.reference_ns, 0);
  STC_CHECK(memcmp(&out.ratio, &record.ratio, sizeof out.ratio) == 0);
  stc_cache_record_clear(&out);

  /* One file, named by the key's digest, private, no temporaries left. */
  char path[4096];
  record_path(cache, key, path, sizeof path);
  struct stat st;
  STC_CHECK(stat(path, &st) == 0);
  STC_CHECK_EQ_INT(st.st_mode & 0777, 0600);
  STC_CHECK_EQ_INT(count_entries(stc_disk_cache_path(cache), NULL, ".rec"), 1);
  STC_CHECK_EQ_INT(count_entries(stc_disk_cache_path(cache), "tmp.", NULL), 0);
  stc_disk_cache_close(cache);
}

STC_TEST(cache_largest_key_round_trips_and_bad_arguments_are_invalid) {
  stc_disk_cache *cache = NULL;
  stc_error err;
  STC_CHECK_EQ_INT(stc_disk_cache_open(test_dir("args"), 0, 10, &cache, &err),
                   STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_disk_cache_open("", 10, 10, &cache, &err),
                   STC_ERR_INVALID);
  STC_CHECK(cache == NULL);
  cache = open_cache("args", 4, 3600, NULL);
  STC_CHECK(cache);

  size_t limit = 384 * 1024;
  char *key = malloc(limit + 2);
  STC_CHECK(key);
  memset(key, 'k', limit + 1);
  key[limit + 1] = 0;
  stc_cache_record record = make_record(key, "w", stc_now_seconds());
  STC_CHECK_EQ_INT(stc_disk_cache_save(cache, &record, &err), STC_ERR_INVALID);
  stc_cache_record out;
  STC_CHECK_EQ_INT(stc_disk_cache_load(cache, key, &out, &err),
                   STC_ERR_INVALID);
  key[limit] = 0; /* exactly the limit is allowed */
  STC_CHECK_EQ_INT(stc_disk_cache_save(cache, &record, &err), STC_OK);
  stc_status loaded = stc_disk_cache_load(cache, key, &out, &err);
  int same = loaded == STC_OK && strcmp(out.key, key) == 0;
  stc_cache_record_clear(&out);
  free(key);
  STC_CHECK_EQ_INT(loaded, STC_OK);
  STC_CHECK(same);

  record = make_record("k", "", 1);
  STC_CHECK_EQ_INT(stc_disk_cache_save(cache, &record, &err), STC_ERR_INVALID);
  record = make_record("", "w", 1);
  STC_CHECK_EQ_INT(stc_disk_cache_save(cache, &record, &err), STC_ERR_INVALID);
  record.key = NULL;
  STC_CHECK_EQ_INT(stc_disk_cache_save(cache, &record, &err), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_disk_cache_load(cache, NULL, &out, &err),
                   STC_ERR_INVALID);
  stc_disk_cache_close(cache);
  stc_disk_cache_close(NULL);
}

STC_TEST(cache_miss_on_absent_key) {
  stc_disk_cache *cache = open_cache("absent", 4, 3600, NULL);
  STC_CHECK(cache);
  stc_cache_record out;
  stc_error err;
  STC_CHECK_EQ_INT(stc_disk_cache_load(cache, "never saved", &out, &err),
                   STC_ERR_NOT_FOUND);
  STC_CHECK(out.key == NULL && out.winner == NULL);
  STC_CHECK_EQ_INT(save(cache, "other", "w", stc_now_seconds()), STC_OK);
  STC_CHECK_EQ_INT(stc_disk_cache_load(cache, "never saved", &out, &err),
                   STC_ERR_NOT_FOUND);
  stc_disk_cache_close(cache);
}

/* Every single flipped byte anywhere in the file makes the record a miss,
 * and the bad file is removed. */
STC_TEST(cache_flipped_byte_is_miss_and_removed) {
  int64_t now = 5000;
  stc_disk_cache *cache = open_cache("flip", 4, 3600, &now);
  STC_CHECK(cache);
  const char *key = "flip-key";
  STC_CHECK_EQ_INT(save(cache, key, "winner", now), STC_OK);
  char path[4096];
  record_path(cache, key, path, sizeof path);
  size_t size;
  char *good = stc_test_read_file(path, &size);
  STC_CHECK(good && size > 100);
  for (size_t i = 0; i < size; ++i) {
    good[i] ^= 0x01;
    int wrote = stc_test_write_file(path, good, size);
    good[i] ^= 0x01;
    if (wrote != 0)
      break;
    stc_status status = load_winner(cache, key, NULL, 0);
    if (status != STC_ERR_NOT_FOUND || exists(path)) {
      fprintf(stderr, "flipped byte %zu: status %d, file %s\n", i, status,
              exists(path) ? "kept" : "removed");
      free(good);
      STC_CHECK(0);
    }
  }
  /* The pristine bytes still load: the test really hit the parser. */
  STC_CHECK(stc_test_write_file(path, good, size) == 0);
  free(good);
  STC_CHECK_EQ_INT(load_winner(cache, key, NULL, 0), STC_OK);
  stc_disk_cache_close(cache);
}

STC_TEST(cache_truncated_record_is_miss) {
  int64_t now = 5000;
  stc_disk_cache *cache = open_cache("truncated", 4, 3600, &now);
  STC_CHECK(cache);
  const char *key = "truncate-key";
  STC_CHECK_EQ_INT(save(cache, key, "winner", now), STC_OK);
  char path[4096];
  record_path(cache, key, path, sizeof path);
  size_t size;
  char *good = stc_test_read_file(path, &size);
  STC_CHECK(good);
  for (size_t length = 0; length < size; ++length) {
    if (stc_test_write_file(path, good, length) != 0)
      break;
    stc_status status = load_winner(cache, key, NULL, 0);
    if (status != STC_ERR_NOT_FOUND || exists(path)) {
      fprintf(stderr, "truncated to %zu: status %d\n", length, status);
      free(good);
      STC_CHECK(0);
    }
  }
  /* Appended garbage after the checksum is not accepted either. */
  char *longer = malloc(size + 1);
  STC_CHECK(longer);
  memcpy(longer, good, size);
  longer[size] = '\n';
  int wrote = stc_test_write_file(path, longer, size + 1);
  free(longer);
  free(good);
  STC_CHECK(wrote == 0);
  STC_CHECK_EQ_INT(load_winner(cache, key, NULL, 0), STC_ERR_NOT_FOUND);
  stc_disk_cache_close(cache);
}

STC_TEST(cache_expired_record_is_miss) {
  int64_t now = 100000;
  stc_disk_cache *cache = open_cache("expired", 4, 100, &now);
  STC_CHECK(cache);
  char path[4096];
  record_path(cache, "k", path, sizeof path);
  STC_CHECK_EQ_INT(save(cache, "k", "w", now - 99), STC_OK);
  STC_CHECK_EQ_INT(load_winner(cache, "k", NULL, 0), STC_OK);
  STC_CHECK_EQ_INT(save(cache, "k", "w", now - 100), STC_OK);
  STC_CHECK_EQ_INT(load_winner(cache, "k", NULL, 0), STC_ERR_NOT_FOUND);
  STC_CHECK(!exists(path));
  /* A record fresh at save time expires as the clock moves on. */
  STC_CHECK_EQ_INT(save(cache, "k", "w", now), STC_OK);
  now += 100;
  STC_CHECK_EQ_INT(load_winner(cache, "k", NULL, 0), STC_ERR_NOT_FOUND);
  stc_disk_cache_close(cache);
}

STC_TEST(cache_future_dated_record_is_miss) {
  int64_t now = 100000;
  stc_disk_cache *cache = open_cache("future", 4, 3600, &now);
  STC_CHECK(cache);
  char path[4096];
  record_path(cache, "k", path, sizeof path);
  STC_CHECK_EQ_INT(save(cache, "k", "w", now + 60), STC_OK); /* skew */
  STC_CHECK_EQ_INT(load_winner(cache, "k", NULL, 0), STC_OK);
  STC_CHECK_EQ_INT(save(cache, "k", "w", now + 61), STC_OK);
  STC_CHECK(exists(path));
  STC_CHECK_EQ_INT(load_winner(cache, "k", NULL, 0), STC_ERR_NOT_FOUND);
  STC_CHECK(!exists(path));
  stc_disk_cache_close(cache);
}

/* Rewrites the record file of key with "version 1" replaced by version_line
 * and a correct checksum, as a newer stc would write it. */
static int rewrite_version(const char *path, const char *version_line) {
  size_t size;
  char *data = stc_test_read_file(path, &size);
  if (!data)
    return -1;
  char *at = strstr(data, "version 1\n");
  char *sum = strstr(data, "checksum ");
  if (!at || !sum) {
    free(data);
    return -1;
  }
  char out[8192];
  size_t prefix = (size_t)(at - data), old = strlen("version 1\n");
  size_t body = prefix + strlen(version_line) + (size_t)(sum - at) - old;
  snprintf(out, sizeof out, "%.*s%s%.*s", (int)prefix, data, version_line,
           (int)(sum - at - (long)old), at + old);
  char hex[65];
  stc_sha256_hex(out, body, hex);
  snprintf(out + body, sizeof out - body, "checksum %s\n", hex);
  free(data);
  return stc_test_write_file(path, out, strlen(out));
}

STC_TEST(cache_wrong_version_record_is_miss) {
  int64_t now = 100000;
  stc_disk_cache *cache = open_cache("version", 4, 3600, &now);
  STC_CHECK(cache);
  char path[4096];
  record_path(cache, "k", path, sizeof path);
  STC_CHECK_EQ_INT(save(cache, "k", "w", now), STC_OK);
  STC_CHECK(rewrite_version(path, "version 2\n") == 0);
  listing l = {0};
  stc_error err;
  STC_CHECK_EQ_INT(stc_disk_cache_list(cache, collect, &l, &err), STC_OK);
  STC_CHECK_EQ_INT(l.count, 1);
  STC_CHECK_EQ_INT(l.statuses[0], STC_ERR_VERSION);
  STC_CHECK_EQ_INT(load_winner(cache, "k", NULL, 0), STC_ERR_NOT_FOUND);
  STC_CHECK(!exists(path));
  /* The same rewrite keeping version 1 loads: only the version differed. */
  STC_CHECK_EQ_INT(save(cache, "k", "w", now), STC_OK);
  STC_CHECK(rewrite_version(path, "version 1\n") == 0);
  STC_CHECK_EQ_INT(load_winner(cache, "k", NULL, 0), STC_OK);
  STC_CHECK(rewrite_version(path, "version 01\n") == 0);
  STC_CHECK_EQ_INT(load_winner(cache, "k", NULL, 0), STC_ERR_NOT_FOUND);
  stc_disk_cache_close(cache);
}

STC_TEST(cache_record_of_another_key_is_miss) {
  int64_t now = 100000;
  stc_disk_cache *cache = open_cache("other_key", 4, 3600, &now);
  STC_CHECK(cache);
  char path_a[4096], path_b[4096];
  record_path(cache, "key-a", path_a, sizeof path_a);
  record_path(cache, "key-b", path_b, sizeof path_b);
  STC_CHECK_EQ_INT(save(cache, "key-a", "winner-a", now), STC_OK);
  /* As after a digest collision: b's file name holds a's (valid) record. */
  STC_CHECK(rename(path_a, path_b) == 0);
  STC_CHECK_EQ_INT(load_winner(cache, "key-b", NULL, 0), STC_ERR_NOT_FOUND);
  STC_CHECK(!exists(path_b));
  STC_CHECK_EQ_INT(load_winner(cache, "key-a", NULL, 0), STC_ERR_NOT_FOUND);
  stc_disk_cache_close(cache);
}

STC_TEST(cache_symlinked_directory_refused) {
  char base[4096], real[4096], link[4096], versioned[4096], elsewhere[4096];
  snprintf(base, sizeof base, "%s", test_dir("symlink_dir"));
  join(real, sizeof real, base, "real");
  join(link, sizeof link, base, "link");
  STC_CHECK(mkdir(base, 0700) == 0 && mkdir(real, 0700) == 0);
  STC_CHECK(symlink(real, link) == 0);
  stc_disk_cache *cache = NULL;
  stc_error err;
  STC_CHECK_EQ_INT(stc_disk_cache_open(link, 4, 60, &cache, &err),
                   STC_ERR_PERMISSION);
  STC_CHECK(cache == NULL);
  STC_CHECK(strstr(err.message, "symbolic link"));
  char slashed[4096];
  join(slashed, sizeof slashed, link, "/");
  STC_CHECK_EQ_INT(stc_disk_cache_open(slashed, 4, 60, &cache, &err),
                   STC_ERR_PERMISSION);
  join(versioned, sizeof versioned, real, "v1");
  STC_CHECK(!exists(versioned));

  /* A symlinked version directory is refused too. */
  join(elsewhere, sizeof elsewhere, base, "elsewhere");
  STC_CHECK(mkdir(elsewhere, 0700) == 0);
  STC_CHECK(symlink(elsewhere, versioned) == 0);
  STC_CHECK_EQ_INT(stc_disk_cache_open(real, 4, 60, &cache, &err),
                   STC_ERR_PERMISSION);
  /* A path through a regular file cannot be created: an i/o error. */
  char file[4096], under[4096];
  join(file, sizeof file, base, "plain");
  join(under, sizeof under, base, "plain/cache");
  STC_CHECK(stc_test_write_file(file, "x", 1) == 0);
  STC_CHECK_EQ_INT(stc_disk_cache_open(under, 4, 60, &cache, &err),
                   STC_ERR_IO);
  STC_CHECK_EQ_INT(stc_disk_cache_open(file, 4, 60, &cache, &err), STC_ERR_IO);
  STC_CHECK(cache == NULL);
}

STC_TEST(cache_symlink_record_not_followed) {
  int64_t now = 100000;
  stc_disk_cache *cache = open_cache("symlink_record", 4, 3600, &now);
  STC_CHECK(cache);
  char target[4096], path[4096];
  join(target, sizeof target, test_dir("symlink_record"), "precious");
  STC_CHECK(stc_test_write_file(target, "precious", 8) == 0);
  record_path(cache, "k", path, sizeof path);
  STC_CHECK(symlink(target, path) == 0);

  stc_cache_record out;
  stc_error err;
  char fault[1024];
  STC_CHECK(!stc_disk_cache_last_fault(cache, fault, sizeof fault));
  STC_CHECK_EQ_INT(stc_disk_cache_load(cache, "k", &out, &err),
                   STC_ERR_PERMISSION);
  STC_CHECK(out.key == NULL);
  /* Issue 11: the warning said "no space or permission?"; the fault text a
   * warning can show says what it is. */
  STC_CHECK_CONTAINS(err.message, "symbolic link (not followed)");
  STC_CHECK(stc_disk_cache_last_fault(cache, fault, sizeof fault));
  STC_CHECK_CONTAINS(fault, "symbolic link (not followed)");
  STC_CHECK_CONTAINS(fault, stc_disk_cache_path(cache));
  listing l = {0};
  STC_CHECK_EQ_INT(stc_disk_cache_list(cache, collect, &l, &err), STC_OK);
  STC_CHECK_EQ_INT(l.count, 1);
  STC_CHECK_EQ_INT(l.statuses[0], STC_ERR_PERMISSION);
  size_t removed = 99;
  STC_CHECK_EQ_INT(stc_disk_cache_prune(cache, &removed, &err), STC_OK);
  STC_CHECK_EQ_INT(removed, 0);
  STC_CHECK_EQ_INT(stc_disk_cache_clear(cache, &removed, &err), STC_OK);
  STC_CHECK_EQ_INT(removed, 0);
  STC_CHECK_EQ_INT(stc_disk_cache_remove(cache, "k", &err),
                   STC_ERR_PERMISSION);
  STC_CHECK_CONTAINS(err.message, "symbolic link (not followed); left alone");
  STC_CHECK(exists(path));
  size_t size;
  char *data = stc_test_read_file(target, &size);
  int intact = data && size == 8 && memcmp(data, "precious", 8) == 0;
  free(data);
  STC_CHECK(intact);

  /* Saving replaces the link itself, never writing through it. */
  STC_CHECK_EQ_INT(save(cache, "k", "w", now), STC_OK);
  struct stat st;
  STC_CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
  data = stc_test_read_file(target, &size);
  intact = data && size == 8 && memcmp(data, "precious", 8) == 0;
  free(data);
  STC_CHECK(intact);
  STC_CHECK_EQ_INT(load_winner(cache, "k", NULL, 0), STC_OK);
  stc_disk_cache_close(cache);
}

STC_TEST(cache_directory_created_private) {
  /* The cache directory and its parent are created; their parent exists. */
  char parent[4096], nested[4096];
  snprintf(parent, sizeof parent, "%s", test_dir("private"));
  STC_CHECK(mkdir(parent, 0700) == 0);
  join(nested, sizeof nested, parent, "a/b");
  mode_t old_mask = umask(0);
  stc_disk_cache *cache = NULL;
  stc_error err;
  stc_status status = stc_disk_cache_open(nested, 4, 60, &cache, &err);
  umask(old_mask);
  STC_CHECK_EQ_INT(status, STC_OK);
  char expected[4096];
  join(expected, sizeof expected, nested, "v1");
  STC_CHECK(strcmp(stc_disk_cache_path(cache), expected) == 0);
  struct stat st;
  STC_CHECK(stat(expected, &st) == 0 && S_ISDIR(st.st_mode));
  STC_CHECK_EQ_INT(st.st_mode & 07777, 0700);
  STC_CHECK_EQ_INT(st.st_uid, geteuid());
  stc_disk_cache_close(cache);

  /* A version directory someone widened loses its group and other bits. */
  STC_CHECK(chmod(expected, 0777) == 0);
  STC_CHECK_EQ_INT(stc_disk_cache_open(nested, 4, 60, &cache, &err), STC_OK);
  STC_CHECK(stat(expected, &st) == 0);
  STC_CHECK_EQ_INT(st.st_mode & 07777, 0700);
  stc_disk_cache_close(cache);
}

/* The version directory is created only when missing: an existing base
 * gets it on first open, a second open finds it, and an entry of that name
 * that is not a directory is refused and left alone. */
STC_TEST(cache_version_directory_made_once_and_checked) {
  char base[4096], version[4096];
  snprintf(base, sizeof base, "%s", test_dir("versiondir"));
  STC_CHECK(mkdir(base, 0700) == 0);
  join(version, sizeof version, base, "v1");
  stc_disk_cache *cache = NULL;
  stc_error err;
  STC_CHECK_EQ_INT(stc_disk_cache_open(base, 4, 60, &cache, &err), STC_OK);
  struct stat st;
  STC_CHECK(stat(version, &st) == 0 && S_ISDIR(st.st_mode));
  STC_CHECK_EQ_INT(st.st_mode & 07777, 0700);
  stc_disk_cache_close(cache);
  STC_CHECK_EQ_INT(stc_disk_cache_open(base, 4, 60, &cache, &err), STC_OK);
  stc_disk_cache_close(cache);
  STC_CHECK(rmdir(version) == 0);
  int fd = open(version, O_CREAT | O_WRONLY | O_EXCL, 0600);
  STC_CHECK(fd >= 0);
  close(fd);
  cache = NULL;
  STC_CHECK_EQ_INT(stc_disk_cache_open(base, 4, 60, &cache, &err), STC_ERR_IO);
  STC_CHECK(cache == NULL);
  STC_CHECK_CONTAINS(err.message, "not a directory");
  STC_CHECK(stat(version, &st) == 0 && S_ISREG(st.st_mode));
}

/* Issue 11: a 0500 version directory was chmod-ed to 0700 and written. Its
 * owner's restriction stays (no bit is ever added), and saving into it is a
 * warning status with a precise text - for root too, who could write. */
STC_TEST(cache_read_only_directory_stays_read_only) {
  int64_t now = 100000;
  stc_disk_cache *cache = open_cache("readonly", 8, 3600, &now);
  STC_CHECK(cache);
  STC_CHECK_EQ_INT(save(cache, "k", "old", now), STC_OK);
  char version[4096];
  snprintf(version, sizeof version, "%s", stc_disk_cache_path(cache));
  stc_disk_cache_close(cache);
  STC_CHECK(chmod(version, 0500) == 0);
  cache = open_cache("readonly", 8, 3600, &now);
  STC_CHECK(cache);
  struct stat st;
  STC_CHECK(stat(version, &st) == 0);
  STC_CHECK_EQ_INT(st.st_mode & 07777, 0500);
  stc_cache_record record = make_record("k", "new", now);
  stc_error err;
  STC_CHECK_EQ_INT(stc_disk_cache_save(cache, &record, &err),
                   STC_ERR_PERMISSION);
  STC_CHECK_CONTAINS(err.message, "read-only (mode 0500); not written");
  char fault[1024];
  STC_CHECK(stc_disk_cache_last_fault(cache, fault, sizeof fault));
  STC_CHECK_CONTAINS(fault, "read-only (mode 0500); not written");
  record = make_record("fresh", "w", now);
  STC_CHECK_EQ_INT(stc_disk_cache_save(cache, &record, &err),
                   STC_ERR_PERMISSION);
  STC_CHECK_EQ_INT(stc_disk_cache_remove(cache, "k", &err), STC_ERR_PERMISSION);
  char winner[64];
  STC_CHECK_EQ_INT(load_winner(cache, "k", winner, sizeof winner), STC_OK);
  STC_CHECK_STR_EQ(winner, "old");
  STC_CHECK_EQ_INT(load_winner(cache, "fresh", NULL, 0), STC_ERR_NOT_FOUND);
  STC_CHECK_EQ_INT(count_entries(version, "tmp.", NULL), 0);
  STC_CHECK(stat(version, &st) == 0);
  STC_CHECK_EQ_INT(st.st_mode & 07777, 0500);
  /* Group and other bits are still taken away, the rest left as it is. */
  STC_CHECK(chmod(version, 0555) == 0);
  stc_disk_cache_close(cache);
  cache = open_cache("readonly", 8, 3600, &now);
  STC_CHECK(cache);
  STC_CHECK(stat(version, &st) == 0);
  STC_CHECK_EQ_INT(st.st_mode & 07777, 0500);
  stc_disk_cache_close(cache);
  chmod(version, 0700);
}

/* Issue 11: with HOME=/nonexistent the runtime created HOME and
 * .cache/stc/v1; with STC_CACHE_DIR=/ it created /v1. Only the cache
 * directory and its parent are ever created, and never in "/" itself. */
STC_TEST(cache_missing_root_is_not_created) {
  char home[4096], missing_home[4200], *directory = NULL;
  snprintf(home, sizeof home, "%s", test_dir("nohome"));
  stc_error err;
  STC_CHECK_EQ_INT(stc_cache_directory_from(NULL, NULL, home, &directory, &err),
                   STC_OK);
  stc_disk_cache *cache = NULL;
  stc_status status = stc_disk_cache_open(directory, 4, 60, &cache, &err);
  free(directory);
  STC_CHECK_EQ_INT(status, STC_ERR_IO);
  STC_CHECK(!cache);
  STC_CHECK(!exists(home));
  snprintf(missing_home, sizeof missing_home, "'%s' does not exist", home);
  STC_CHECK_CONTAINS(err.message, missing_home);

  /* HOME exists: ~/.cache/stc is created (two levels). */
  STC_CHECK(mkdir(home, 0700) == 0);
  STC_CHECK_EQ_INT(stc_cache_directory_from("", "", home, &directory, &err),
                   STC_OK);
  status = stc_disk_cache_open(directory, 4, 60, &cache, &err);
  free(directory);
  STC_CHECK_EQ_INT(status, STC_OK);
  stc_disk_cache_close(cache);

  /* XDG_CACHE_HOME whose parent is missing is not created either. */
  char xdg[4096];
  join(xdg, sizeof xdg, test_dir("noxdg"), "cache");
  STC_CHECK_EQ_INT(stc_cache_directory_from(NULL, xdg, home, &directory, &err),
                   STC_OK);
  status = stc_disk_cache_open(directory, 4, 60, &cache, &err);
  free(directory);
  STC_CHECK_EQ_INT(status, STC_ERR_IO);
  STC_CHECK(!exists(test_dir("noxdg")));

  /* STC_CACHE_DIR=/ (or a spelling of it) never makes /v1. */
  bool had_v1 = exists("/v1");
  STC_CHECK_EQ_INT(stc_disk_cache_open("/", 4, 60, &cache, &err),
                   STC_ERR_PERMISSION);
  STC_CHECK_CONTAINS(err.message, "root directory cannot hold a cache");
  STC_CHECK_EQ_INT(stc_disk_cache_open("/./", 4, 60, &cache, &err),
                   STC_ERR_PERMISSION);
  STC_CHECK(had_v1 || !exists("/v1"));
}

/* Issue 11: under `ulimit -f` below one record's size, a save raised
 * SIGXFSZ, whose default action killed the process and left its temporary
 * file behind. It is now an STC_ERR_IO status saying why. Runs in a child
 * with SIGXFSZ at its default action, as in a real program. */
STC_TEST(cache_file_size_limit_is_a_warning_not_a_kill) {
  int64_t now = 100000;
  stc_disk_cache *cache = open_cache("fsize", 8, 3600, &now);
  STC_CHECK(cache);
  const char *dir = stc_disk_cache_path(cache);
  STC_CHECK_EQ_INT(save(cache, "k", "old", now), STC_OK);
  fflush(NULL);
  pid_t child = fork();
  STC_CHECK(child >= 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_DFL);
    struct rlimit tiny;
    getrlimit(RLIMIT_FSIZE, &tiny);
    tiny.rlim_cur = 64;
    setrlimit(RLIMIT_FSIZE, &tiny);
    stc_cache_record record = make_record("k", "new", now);
    stc_error err;
    stc_status status = stc_disk_cache_save(cache, &record, &err);
    /* Still alive; the signal must not be left pending either. */
    sigset_t pending;
    sigpending(&pending);
    char fault[1024];
    stc_disk_cache_last_fault(cache, fault, sizeof fault);
    int code = status != STC_ERR_IO                              ? 10
               : !strstr(err.message, "file size limit exceeded") ? 11
               : sigismember(&pending, SIGXFSZ)                   ? 12
               : !strstr(fault, "file size limit exceeded")       ? 13
                                                                  : 0;
    _exit(code);
  }
  int wstatus = 0;
  STC_CHECK(waitpid(child, &wstatus, 0) == child);
  STC_CHECK(!WIFSIGNALED(wstatus));
  STC_CHECK(WIFEXITED(wstatus));
  STC_CHECK_EQ_INT(WEXITSTATUS(wstatus), 0);
  char winner[64];
  STC_CHECK_EQ_INT(load_winner(cache, "k", winner, sizeof winner), STC_OK);
  STC_CHECK_STR_EQ(winner, "old");
  STC_CHECK_EQ_INT(count_entries(dir, "tmp.", NULL), 0);
  stc_disk_cache_close(cache);
}

/* The on-disk format across versions: a record written by format 1 and
 * committed (test/unit/fixtures/cache-record-v1.rec) is read back field by
 * field while the format is 1, and a save of the same record reproduces it
 * byte for byte; a later format must see it as a clean miss. */
STC_TEST(cache_committed_v1_record_reads_back) {
  static const char key[] = "stc-fixture|op=linalg.matmul|env=x86_64 avx2|"
                            "workload=f32[64x64:64,1]+off|ctx=";
  char fixture_path[4096];
  join(fixture_path, sizeof fixture_path, STC_TEST_FIXTURES,
       "cache-record-v1.rec");
  size_t fixture_size = 0;
  char *fixture = stc_test_read_file(fixture_path, &fixture_size);
  STC_CHECK(fixture && fixture_size > 0);
  int64_t now = 1700000000 + 10;
  stc_disk_cache *cache = open_cache("fixture", 16, 3600, &now);
  STC_CHECK(cache);
  char path[4096];
  record_path(cache, key, path, sizeof path);
  STC_CHECK(stc_test_write_file(path, fixture, fixture_size) == 0);
  stc_cache_record record;
  stc_error err;
  stc_status status = stc_disk_cache_load(cache, key, &record, &err);
  if (STC_TUNER_CACHE_FORMAT != 1) {
    free(fixture);
    stc_disk_cache_close(cache);
    STC_CHECK_EQ_INT(status, STC_ERR_NOT_FOUND);
    return;
  }
  STC_CHECK_EQ_INT(status, STC_OK);
  bool fields = record.scope == 1 && strcmp(record.key, key) == 0 &&
                strcmp(record.winner, "matmul_tile32_vec") == 0 &&
                record.created == 1700000000 &&
                record.reference_ns == 123456 && record.winner_ns == 65432 &&
                record.ratio == 0.53 && record.verified;
  /* The same record saved by this version: the very same bytes. */
  stc_disk_cache *fresh = open_cache("fixture-resaved", 16, 3600, &now);
  bool same = false;
  if (fresh && stc_disk_cache_save(fresh, &record, &err) == STC_OK) {
    char resaved_path[4096];
    record_path(fresh, key, resaved_path, sizeof resaved_path);
    size_t size = 0;
    char *resaved = stc_test_read_file(resaved_path, &size);
    same = resaved && size == fixture_size &&
           memcmp(resaved, fixture, size) == 0;
    free(resaved);
  }
  stc_disk_cache_close(fresh);
  stc_cache_record_clear(&record);
  free(fixture);
  stc_disk_cache_close(cache);
  STC_CHECK(fields);
  STC_CHECK(same);
}

/* Needs root to make files of another owner (CI runs as root); as another
 * user it reports SKIPPED (never Passed). */
STC_TEST(cache_foreign_owned_entries_refused) {
  const uid_t stranger = 54321;
  int64_t now = 100000;
  stc_disk_cache *cache = open_cache("foreign", 4, 3600, &now);
  STC_CHECK(cache);
  if (geteuid() != 0) {
    stc_disk_cache_close(cache);
    STC_SKIP("not root: files of another owner cannot be made");
  }
  char path[4096];
  record_path(cache, "k", path, sizeof path);
  STC_CHECK_EQ_INT(save(cache, "k", "w", now), STC_OK);
  STC_CHECK(chown(path, stranger, stranger) == 0);
  /* A foreign record is a miss, and it is not ours to delete. */
  STC_CHECK_EQ_INT(load_winner(cache, "k", NULL, 0), STC_ERR_NOT_FOUND);
  STC_CHECK(exists(path));
  size_t removed = 9;
  stc_error err;
  STC_CHECK_EQ_INT(stc_disk_cache_clear(cache, &removed, &err), STC_OK);
  STC_CHECK_EQ_INT(removed, 0);
  STC_CHECK(exists(path));
  stc_disk_cache_close(cache);

  char versioned[4096];
  char base[4096];
  snprintf(base, sizeof base, "%s", test_dir("foreign"));
  join(versioned, sizeof versioned, base, "v1");
  STC_CHECK(chown(versioned, stranger, stranger) == 0);
  STC_CHECK_EQ_INT(stc_disk_cache_open(base, 4, 60, &cache,
                                       &err),
                   STC_ERR_PERMISSION);
  STC_CHECK(strstr(err.message, "another user"));
  STC_CHECK(chown(versioned, 0, 0) == 0);
  STC_CHECK(chown(base, stranger, stranger) == 0);
  STC_CHECK_EQ_INT(stc_disk_cache_open(base, 4, 60, &cache,
                                       &err),
                   STC_ERR_PERMISSION);
  STC_CHECK(chown(base, 0, 0) == 0);
  STC_CHECK_EQ_INT(stc_disk_cache_open(base, 4, 60, &cache,
                                       &err),
                   STC_OK);
  stc_disk_cache_close(cache);
}

STC_TEST(cache_capacity_prunes_oldest) {
  int64_t now = 100000;
  stc_disk_cache *cache = open_cache("capacity", 3, 3600, &now);
  STC_CHECK(cache);
  /* Saved out of creation order: the oldest by record time must go. */
  const int64_t created[6] = {10, 30, 20, 60, 50, 40};
  for (int i = 0; i < 6; ++i) {
    char key[16];
    snprintf(key, sizeof key, "k%lld", (long long)created[i]);
    STC_CHECK_EQ_INT(save(cache, key, "w", now - 1000 + created[i]), STC_OK);
    STC_CHECK(count_entries(stc_disk_cache_path(cache), NULL, ".rec") <= 3);
  }
  listing l = {0};
  stc_error err;
  STC_CHECK_EQ_INT(stc_disk_cache_list(cache, collect, &l, &err), STC_OK);
  STC_CHECK_EQ_INT(l.count, 3);
  STC_CHECK_EQ_INT(l.ok, 3);
  STC_CHECK_STR_EQ(l.keys[0], "k40"); /* oldest first */
  STC_CHECK_STR_EQ(l.keys[1], "k50");
  STC_CHECK_STR_EQ(l.keys[2], "k60");
  /* A record just saved survives its own save even when it is the oldest. */
  STC_CHECK_EQ_INT(save(cache, "k5", "w", now - 1000 + 5), STC_OK);
  STC_CHECK_EQ_INT(load_winner(cache, "k5", NULL, 0), STC_OK);
  STC_CHECK_EQ_INT(load_winner(cache, "k40", NULL, 0), STC_ERR_NOT_FOUND);
  STC_CHECK_EQ_INT(load_winner(cache, "k60", NULL, 0), STC_OK);
  /* The callback can stop a listing early. */
  listing stop = {0};
  stop.stop_after = 1;
  STC_CHECK_EQ_INT(stc_disk_cache_list(cache, collect, &stop, &err), STC_OK);
  STC_CHECK_EQ_INT(stop.count, 1);
  STC_CHECK_STR_EQ(stop.keys[0], "k5");
  stc_disk_cache_close(cache);
}

STC_TEST(cache_remove_record) {
  int64_t now = 100000;
  stc_disk_cache *cache = open_cache("remove", 4, 3600, &now);
  STC_CHECK(cache);
  STC_CHECK_EQ_INT(save(cache, "gone", "w", now), STC_OK);
  STC_CHECK_EQ_INT(save(cache, "kept", "w", now), STC_OK);
  stc_error err;
  STC_CHECK_EQ_INT(stc_disk_cache_remove(cache, "gone", &err), STC_OK);
  STC_CHECK_EQ_INT(load_winner(cache, "gone", NULL, 0), STC_ERR_NOT_FOUND);
  STC_CHECK_EQ_INT(load_winner(cache, "kept", NULL, 0), STC_OK);
  STC_CHECK_EQ_INT(stc_disk_cache_remove(cache, "gone", &err), STC_OK);
  STC_CHECK_EQ_INT(stc_disk_cache_remove(cache, "", &err), STC_ERR_INVALID);
  stc_disk_cache_close(cache);
}

STC_TEST(cache_clear_and_prune) {
  int64_t now = 100000;
  stc_disk_cache *cache = open_cache("clear", 100, 3600, &now);
  STC_CHECK(cache);
  const char *dir = stc_disk_cache_path(cache);
  for (int i = 0; i < 5; ++i) {
    char key[16];
    snprintf(key, sizeof key, "k%d", i);
    STC_CHECK_EQ_INT(save(cache, key, "w", now), STC_OK);
  }
  /* One corrupt and one expired record; prune removes exactly those. */
  char path[4096];
  record_path(cache, "k0", path, sizeof path);
  STC_CHECK(stc_test_write_file(path, "garbage", 7) == 0);
  STC_CHECK_EQ_INT(save(cache, "old", "w", now - 3600), STC_OK);
  /* A stale temporary file of a writer that died, a live one of a writer
   * still working, and a file that is not the cache's. */
  char stale[4096], live[4096], other[4096];
  join(stale, sizeof stale, dir, "tmp.1.2.dead");
  join(live, sizeof live, dir, "tmp.1.3.live");
  join(other, sizeof other, dir, "README");
  STC_CHECK(stc_test_write_file(stale, "x", 1) == 0 &&
            stc_test_write_file(live, "x", 1) == 0 &&
            stc_test_write_file(other, "x", 1) == 0);
  struct timespec times[2] = {{stc_now_seconds() - 7200, 0},
                              {stc_now_seconds() - 7200, 0}};
  STC_CHECK(utimensat(AT_FDCWD, stale, times, 0) == 0);

  listing l = {0};
  stc_error err;
  STC_CHECK_EQ_INT(stc_disk_cache_list(cache, collect, &l, &err), STC_OK);
  STC_CHECK_EQ_INT(l.count, 6);
  STC_CHECK_EQ_INT(l.ok, 4);
  STC_CHECK(exists(stale)); /* listing never removes */

  size_t removed = 0;
  STC_CHECK_EQ_INT(stc_disk_cache_prune(cache, &removed, &err), STC_OK);
  STC_CHECK_EQ_INT(removed, 3); /* corrupt + expired + stale temp */
  STC_CHECK(!exists(path) && !exists(stale) && exists(live));
  STC_CHECK_EQ_INT(load_winner(cache, "k1", NULL, 0), STC_OK);

  STC_CHECK_EQ_INT(stc_disk_cache_clear(cache, &removed, &err), STC_OK);
  STC_CHECK_EQ_INT(removed, 4);
  STC_CHECK_EQ_INT(count_entries(dir, NULL, ".rec"), 0);
  STC_CHECK(exists(live) && exists(other));
  STC_CHECK_EQ_INT(load_winner(cache, "k1", NULL, 0), STC_ERR_NOT_FOUND);
  stc_disk_cache_close(cache);
}

/* Write faults that hold even for root: a file size limit (like a full
 * disk), a vanished directory and a read-only one. A
 * failed save keeps the old record and leaves no temporary file. */
STC_TEST(cache_write_faults_are_errors) {
  int64_t now = 100000;
  stc_disk_cache *cache = open_cache("faults", 8, 3600, &now);
  STC_CHECK(cache);
  const char *dir = stc_disk_cache_path(cache);
  STC_CHECK_EQ_INT(save(cache, "k", "old", now), STC_OK);

  struct rlimit saved, tiny;
  STC_CHECK(getrlimit(RLIMIT_FSIZE, &saved) == 0);
  tiny = saved;
  tiny.rlim_cur = 64;
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
  STC_CHECK(setrlimit(RLIMIT_FSIZE, &tiny) == 0);
  stc_status status = save(cache, "k", "new", now);
  stc_status fresh = save(cache, "fresh", "w", now);
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);
  STC_CHECK_EQ_INT(status, STC_ERR_IO);
  STC_CHECK_EQ_INT(fresh, STC_ERR_IO);
  char winner[64];
  STC_CHECK_EQ_INT(load_winner(cache, "k", winner, sizeof winner), STC_OK);
  STC_CHECK_STR_EQ(winner, "old");
  STC_CHECK_EQ_INT(load_winner(cache, "fresh", NULL, 0), STC_ERR_NOT_FOUND);
  STC_CHECK_EQ_INT(count_entries(dir, "tmp.", NULL), 0);

  {
    /* Refused for root too: the owner's restriction is honoured. */
    STC_CHECK(chmod(dir, 0500) == 0);
    status = save(cache, "k", "new", now);
    stc_status other = save(cache, "fresh", "w", now);
    chmod(dir, 0700);
    STC_CHECK_EQ_INT(status, STC_ERR_PERMISSION);
    STC_CHECK_EQ_INT(other, STC_ERR_PERMISSION);
    STC_CHECK_EQ_INT(load_winner(cache, "k", winner, sizeof winner), STC_OK);
    STC_CHECK_STR_EQ(winner, "old");
    STC_CHECK_EQ_INT(load_winner(cache, "fresh", NULL, 0), STC_ERR_NOT_FOUND);
  }

  /* The directory disappears under an open cache. */
  stc_error err;
  size_t removed;
  STC_CHECK_EQ_INT(stc_disk_cache_clear(cache, &removed, &err), STC_OK);
  STC_CHECK(rmdir(dir) == 0);
  STC_CHECK_EQ_INT(save(cache, "k", "new", now), STC_ERR_IO);
  STC_CHECK_EQ_INT(load_winner(cache, "k", NULL, 0), STC_ERR_NOT_FOUND);
  listing l = {0};
  stc_disk_cache_list(cache, collect, &l, &err);
  STC_CHECK_EQ_INT(l.count, 0);
  stc_disk_cache_close(cache);
}

/* ---- concurrency -------------------------------------------------------- */

#define SHARED_KEYS 8

/* A record whose fields all derive from one number, so that a torn or
 * mixed-up record is detectable. */
static stc_cache_record consistent_record(const char *key, char *winner,
                                          size_t size, uint64_t id,
                                          int64_t created) {
  snprintf(winner, size, "w%llu", (unsigned long long)id);
  stc_cache_record record = make_record(key, winner, created);
  record.reference_ns = id * 3 + 1;
  record.winner_ns = id;
  record.ratio = (double)id / (double)(id * 3 + 1);
  return record;
}

static bool consistent(const stc_cache_record *record, const char *key) {
  char winner[32];
  snprintf(winner, sizeof winner, "w%llu",
           (unsigned long long)record->winner_ns);
  return strcmp(record->key, key) == 0 &&
         strcmp(record->winner, winner) == 0 &&
         record->reference_ns == record->winner_ns * 3 + 1 &&
         record->ratio == (double)record->winner_ns /
                              (double)(record->winner_ns * 3 + 1);
}

typedef struct worker {
  stc_disk_cache *cache;
  unsigned id;
  int iterations;
  int bad; /* inconsistent loads or unexpected statuses */
} worker;

/* Saves and loads shared and own keys; counts anything unexpected. */
static void work(worker *w) {
  for (int i = 0; i < w->iterations; ++i) {
    char key[64], winner[32];
    snprintf(key, sizeof key, "shared-%d", i % SHARED_KEYS);
    stc_cache_record record = consistent_record(
        key, winner, sizeof winner, (uint64_t)w->id * 100000 + (uint64_t)i,
        stc_now_seconds());
    stc_error err;
    if (stc_disk_cache_save(w->cache, &record, &err) != STC_OK)
      w->bad++;
    snprintf(key, sizeof key, "own-%u-%d", w->id, i % 50);
    record.key = key;
    if (stc_disk_cache_save(w->cache, &record, &err) != STC_OK)
      w->bad++;
    snprintf(key, sizeof key, "shared-%d", (i * 7 + (int)w->id) % SHARED_KEYS);
    stc_cache_record out;
    stc_status status = stc_disk_cache_load(w->cache, key, &out, &err);
    if (status == STC_OK ? !consistent(&out, key) : status != STC_ERR_NOT_FOUND)
      w->bad++;
    stc_cache_record_clear(&out);
  }
}

static void *work_thread(void *arg) {
  work(arg);
  return NULL;
}

/* Checks the directory after concurrent writers: every file valid, no
 * temporaries, exactly the expected number of records. */
static bool check_after_race(stc_disk_cache *cache, int expected) {
  listing l = {0};
  stc_error err;
  if (stc_disk_cache_list(cache, collect, &l, &err) != STC_OK)
    return false;
  if (l.count != expected || l.ok != expected) {
    fprintf(stderr, "after race: %d files, %d valid, expected %d\n", l.count,
            l.ok, expected);
    return false;
  }
  for (int k = 0; k < SHARED_KEYS; ++k) {
    char key[32];
    snprintf(key, sizeof key, "shared-%d", k);
    stc_cache_record out;
    stc_status status = stc_disk_cache_load(cache, key, &out, &err);
    bool good = status == STC_OK && consistent(&out, key);
    stc_cache_record_clear(&out);
    if (!good)
      return false;
  }
  return count_entries(stc_disk_cache_path(cache), "tmp.", NULL) == 0;
}

STC_TEST_THREADED(cache_threads_share_keys) {
  stc_disk_cache *cache = open_cache("threads", 1000, 3600, NULL);
  STC_CHECK(cache);
  enum { THREADS = 4 };
  worker workers[THREADS];
  pthread_t threads[THREADS];
  for (unsigned t = 0; t < THREADS; ++t) {
    workers[t] = (worker){cache, t + 1, 150, 0};
    STC_CHECK(pthread_create(&threads[t], NULL, work_thread, &workers[t]) == 0);
  }
  int bad = 0;
  for (int t = 0; t < THREADS; ++t) {
    pthread_join(threads[t], NULL);
    bad += workers[t].bad;
  }
  STC_CHECK_EQ_INT(bad, 0);
  STC_CHECK(check_after_race(cache, SHARED_KEYS + THREADS * 50));
  stc_disk_cache_close(cache);
}

STC_TEST(cache_processes_share_directory) {
  enum { CHILDREN = 4 };
  /* Created once so that the children race on records, not on mkdir. */
  stc_disk_cache *cache = open_cache("processes", 1000, 3600, NULL);
  STC_CHECK(cache);
  fflush(NULL);
  pid_t pids[CHILDREN];
  for (unsigned c = 0; c < CHILDREN; ++c) {
    pids[c] = fork();
    STC_CHECK(pids[c] >= 0);
    if (pids[c] == 0) {
      /* Each process opens its own handle, as separate programs would. */
      stc_disk_cache *own = open_cache("processes", 1000, 3600, NULL);
      if (!own)
        _exit(3);
      worker w = {own, 10 + c, 300, 0};
      work(&w);
      stc_disk_cache_close(own);
      /* _exit: the harness's exit handler would delete the scratch dir. */
      _exit(w.bad ? 1 : 0);
    }
  }
  int failed = 0;
  for (int c = 0; c < CHILDREN; ++c) {
    int wstatus = 0;
    if (waitpid(pids[c], &wstatus, 0) != pids[c] || !WIFEXITED(wstatus) ||
        WEXITSTATUS(wstatus) != 0)
      failed++;
  }
  STC_CHECK_EQ_INT(failed, 0);
  STC_CHECK(check_after_race(cache, SHARED_KEYS + CHILDREN * 50));
  stc_disk_cache_close(cache);
}

/* Capacity holds while processes race: never more files than capacity once
 * all writers are done. */
STC_TEST(cache_processes_respect_capacity) {
  enum { CHILDREN = 3, CAPACITY = 20 };
  stc_disk_cache *cache = open_cache("processes_capacity", CAPACITY, 3600,
                                     NULL);
  STC_CHECK(cache);
  fflush(NULL);
  pid_t pids[CHILDREN];
  for (unsigned c = 0; c < CHILDREN; ++c) {
    pids[c] = fork();
    STC_CHECK(pids[c] >= 0);
    if (pids[c] == 0) {
      stc_disk_cache *own =
          open_cache("processes_capacity", CAPACITY, 3600, NULL);
      if (!own)
        _exit(3);
      worker w = {own, 20 + c, 100, 0};
      work(&w);
      stc_disk_cache_close(own);
      _exit(w.bad ? 1 : 0);
    }
  }
  int failed = 0;
  for (int c = 0; c < CHILDREN; ++c) {
    int wstatus = 0;
    if (waitpid(pids[c], &wstatus, 0) != pids[c] || !WIFEXITED(wstatus) ||
        WEXITSTATUS(wstatus) != 0)
      failed++;
  }
  STC_CHECK_EQ_INT(failed, 0);
  const char *dir = stc_disk_cache_path(cache);
  int files = count_entries(dir, NULL, ".rec");
  STC_CHECK(files > 0 && files <= CAPACITY);
  STC_CHECK_EQ_INT(count_entries(dir, "tmp.", NULL), 0);
  listing l = {0};
  stc_error err;
  STC_CHECK_EQ_INT(stc_disk_cache_list(cache, collect, &l, &err), STC_OK);
  STC_CHECK_EQ_INT(l.ok, files);
  stc_disk_cache_close(cache);
}
