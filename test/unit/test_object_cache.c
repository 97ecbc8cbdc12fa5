/* Unit tests for lib/support/object_cache.c, stc-run's compiled-code cache:
 * entries round-trip byte for byte (binary objects, metadata with NULs); every
 * way an entry file goes bad (a flipped byte anywhere, truncation at every
 * length, another format version, another key, a wrong file name, expiry, a
 * future date, a symlink, a directory in its place) is a miss that never
 * crashes, named by a problem text when worth a warning; capacity removes
 * the oldest; listing and pruning see what load sees. */
#include "stc_test.h"

#include "stc/hash.h"
#include "stc/object_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *test_dir(const char *name) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/%s", stc_test_tmpdir(), name);
  return path;
}

static int64_t fake_clock(void *user) { return *(const int64_t *)user; }

static stc_object_cache *open_cache(const char *name, size_t capacity,
                                    int64_t *now) {
  stc_object_cache *cache = NULL;
  stc_error err;
  stc_error_clear(&err);
  if (stc_object_cache_open(test_dir(name), capacity, 3600, &cache, &err) !=
      STC_OK)
    return NULL;
  stc_object_cache_set_clock(cache, fake_clock, now);
  return cache;
}

static void entry_path(stc_object_cache *cache, const char *key, char *out,
                       size_t size) {
  char hex[65];
  stc_sha256_hex(key, strlen(key), hex);
  snprintf(out, size, "%s/%s.obj", stc_object_cache_path(cache), hex);
}

/* A 3000-byte "object" with every byte value, NULs included. */
static char g_object[3000];
static const char g_meta[] = "stc-run meta 1\nopenmp 0\n\0binary\xff";

static stc_object_entry make_entry(const char *key, int64_t created) {
  for (size_t i = 0; i < sizeof g_object; i++)
    g_object[i] = (char)(i * 7);
  return (stc_object_entry){.key = (char *)key,
                            .created = created,
                            .meta = (char *)g_meta,
                            .meta_size = sizeof g_meta - 1,
                            .object = g_object,
                            .object_size = sizeof g_object};
}

STC_TEST(object_cache_round_trip) {
  int64_t now = 1700000000;
  stc_object_cache *cache = open_cache("round_trip", 8, &now);
  STC_CHECK(cache);
  const char *key = "stc-run object key 1\ninput sha256:ab\n\xc3\xa9";
  stc_object_entry entry = make_entry(key, now - 10);
  stc_error err;
  STC_CHECK_EQ_INT(stc_object_cache_save(cache, &entry, &err), STC_OK);
  stc_object_entry out;
  const char *problem = "unset";
  STC_CHECK_EQ_INT(stc_object_cache_load(cache, key, &out, &problem, &err),
                   STC_OK);
  STC_CHECK(problem == NULL);
  STC_CHECK_STR_EQ(out.key, key);
  STC_CHECK_EQ_INT(out.created, now - 10);
  STC_CHECK_EQ_U64(out.meta_size, sizeof g_meta - 1);
  STC_CHECK(memcmp(out.meta, g_meta, sizeof g_meta - 1) == 0);
  STC_CHECK_EQ_U64(out.object_size, sizeof g_object);
  STC_CHECK(memcmp(out.object, g_object, sizeof g_object) == 0);
  /* Not copied again: the object is the read buffer's start, aligned for
   * the JIT to parse in place, NUL after it. */
  STC_CHECK(out.storage != NULL && out.object == out.storage);
  STC_CHECK_EQ_U64((uintptr_t)out.object % 16, 0);
  STC_CHECK_EQ_INT(out.object[out.object_size], 0);
  stc_object_entry_clear(&out);

  /* Absent: a quiet miss. created 0 is stamped with the clock. */
  STC_CHECK_EQ_INT(stc_object_cache_load(cache, "other", &out, &problem, &err),
                   STC_ERR_NOT_FOUND);
  STC_CHECK(problem == NULL);
  entry = make_entry("stamped", 0);
  STC_CHECK_EQ_INT(stc_object_cache_save(cache, &entry, &err), STC_OK);
  STC_CHECK_EQ_INT(
      stc_object_cache_load(cache, "stamped", &out, &problem, &err), STC_OK);
  STC_CHECK_EQ_INT(out.created, now);
  stc_object_entry_clear(&out);

  /* The directory is private. */
  struct stat st;
  STC_CHECK(stat(stc_object_cache_path(cache), &st) == 0);
  STC_CHECK_EQ_INT(st.st_mode & 0777, 0700);
  /* Bad arguments are invalid, never a crash. */
  entry = make_entry("", now);
  STC_CHECK_EQ_INT(stc_object_cache_save(cache, &entry, &err), STC_ERR_INVALID);
  entry = make_entry("k", now);
  entry.object_size = 0;
  STC_CHECK_EQ_INT(stc_object_cache_save(cache, &entry, &err), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_object_cache_load(cache, "", &out, &problem, &err),
                   STC_ERR_INVALID);
  stc_object_cache_close(cache);
}

/* Every single-byte flip and every truncation of a valid entry decodes as a
 * failure (the checksum covers everything before it), never a crash. */
STC_TEST(object_cache_every_flip_and_truncation_is_rejected) {
  stc_object_entry entry = make_entry("key", 1700000000);
  char *data;
  size_t size;
  STC_CHECK_EQ_INT(stc_object_entry_encode(&entry, &data, &size), STC_OK);
  stc_object_entry out;
  const char *problem;
  STC_CHECK_EQ_INT(stc_object_entry_decode(data, size, &out, &problem), STC_OK);
  stc_object_entry_clear(&out);
  size_t failures = 0;
  for (size_t i = 0; i < size; i++) {
    data[i] ^= 0x20;
    failures += stc_object_entry_decode(data, size, &out, &problem) != STC_OK &&
                problem != NULL;
    stc_object_entry_clear(&out);
    data[i] ^= 0x20;
  }
  STC_CHECK_EQ_U64(failures, size);
  failures = 0;
  for (size_t length = 0; length < size; length++) {
    failures += stc_object_entry_decode(data, length, &out, &problem) ==
                STC_ERR_CORRUPT;
    stc_object_entry_clear(&out);
  }
  STC_CHECK_EQ_U64(failures, size);
  free(data);
}

STC_TEST(object_cache_bad_files_are_misses_with_a_problem) {
  int64_t now = 1700000000;
  stc_object_cache *cache = open_cache("bad_files", 8, &now);
  STC_CHECK(cache);
  const char *key = "the key";
  char path[4096];
  entry_path(cache, key, path, sizeof path);
  stc_object_entry entry = make_entry(key, now);
  stc_object_entry out;
  const char *problem;
  stc_error err;
  size_t size;

  /* Flipped byte in the object. */
  STC_CHECK_EQ_INT(stc_object_cache_save(cache, &entry, &err), STC_OK);
  char *data = stc_test_read_file(path, &size);
  STC_CHECK(data);
  data[size / 2] ^= 1;
  STC_CHECK(stc_test_write_file(path, data, size) == 0);
  STC_CHECK_EQ_INT(stc_object_cache_load(cache, key, &out, &problem, &err),
                   STC_ERR_NOT_FOUND);
  STC_CHECK_STR_EQ(problem, "checksum mismatch");
  STC_CHECK(access(path, F_OK) != 0); /* removed: ours and bad */

  /* Truncated. */
  data[size / 2] ^= 1;
  STC_CHECK(stc_test_write_file(path, data, size / 3) == 0);
  STC_CHECK_EQ_INT(stc_object_cache_load(cache, key, &out, &problem, &err),
                   STC_ERR_NOT_FOUND);
  STC_CHECK_STR_EQ(problem, "truncated");

  /* Another version: a later one, or format 1 (an earlier stc's entries,
   * SHA-256 checksums). */
  STC_CHECK(stc_test_write_file(path, data, size) == 0);
  /* The version line follows the 17-byte magic line. */
  STC_CHECK(memcmp(data + 17, "version 2\n", 10) == 0);
  const char *versions[] = {"version 7", "version 1"};
  for (size_t v = 0; v < 2; v++) {
    memcpy(data + 17, versions[v], 9);
    STC_CHECK(stc_test_write_file(path, data, size) == 0);
    STC_CHECK_EQ_INT(stc_object_cache_load(cache, key, &out, &problem, &err),
                     STC_ERR_NOT_FOUND);
    STC_CHECK_STR_EQ(problem, "unsupported format version");
  }
  free(data);

  /* Another key's valid entry under this key's name. */
  stc_object_entry other = make_entry("another key", now);
  STC_CHECK_EQ_INT(stc_object_cache_save(cache, &other, &err), STC_OK);
  char other_path[4096];
  entry_path(cache, "another key", other_path, sizeof other_path);
  STC_CHECK(rename(other_path, path) == 0);
  STC_CHECK_EQ_INT(stc_object_cache_load(cache, key, &out, &problem, &err),
                   STC_ERR_NOT_FOUND);
  STC_CHECK_STR_EQ(problem, "holds another key");

  /* Expired: a quiet miss; future-dated: a miss worth a word. */
  STC_CHECK_EQ_INT(stc_object_cache_save(cache, &entry, &err), STC_OK);
  now += 3600;
  STC_CHECK_EQ_INT(stc_object_cache_load(cache, key, &out, &problem, &err),
                   STC_ERR_NOT_FOUND);
  STC_CHECK(problem == NULL);
  now -= 3600;
  entry.created = now + 3600;
  STC_CHECK_EQ_INT(stc_object_cache_save(cache, &entry, &err), STC_OK);
  STC_CHECK_EQ_INT(stc_object_cache_load(cache, key, &out, &problem, &err),
                   STC_ERR_NOT_FOUND);
  STC_CHECK_STR_EQ(problem, "created in the future");

  /* A symlink is never followed; a directory is not a regular file. */
  unlink(path);
  STC_CHECK(symlink("/etc/passwd", path) == 0);
  STC_CHECK(stc_object_cache_load(cache, key, &out, &problem, &err) != STC_OK);
  STC_CHECK(access("/etc/passwd", F_OK) == 0);
  unlink(path);
  STC_CHECK(mkdir(path, 0700) == 0);
  STC_CHECK_EQ_INT(stc_object_cache_load(cache, key, &out, &problem, &err),
                   STC_ERR_NOT_FOUND);
  STC_CHECK_STR_EQ(problem, "not a regular file");
  rmdir(path);
  stc_object_cache_close(cache);
}

static bool count_valid(void *user, const stc_object_listing *item) {
  size_t *counts = user;
  counts[item->status == STC_OK ? 0 : 1]++;
  return true;
}

STC_TEST(object_cache_capacity_list_prune_clear) {
  int64_t now = 1700000000;
  stc_object_cache *cache = open_cache("capacity", 3, &now);
  STC_CHECK(cache);
  stc_error err;
  char key[32];
  for (int i = 0; i < 5; i++) {
    snprintf(key, sizeof key, "key %d", i);
    stc_object_entry entry = make_entry(key, now - 100 + i);
    STC_CHECK_EQ_INT(stc_object_cache_save(cache, &entry, &err), STC_OK);
  }
  /* The two oldest went. */
  stc_object_entry out;
  const char *problem;
  STC_CHECK_EQ_INT(stc_object_cache_load(cache, "key 0", &out, &problem, &err),
                   STC_ERR_NOT_FOUND);
  STC_CHECK_EQ_INT(stc_object_cache_load(cache, "key 1", &out, &problem, &err),
                   STC_ERR_NOT_FOUND);
  STC_CHECK_EQ_INT(stc_object_cache_load(cache, "key 4", &out, &problem, &err),
                   STC_OK);
  stc_object_entry_clear(&out);
  /* A bad file is listed as such, and pruned. */
  char path[4096];
  entry_path(cache, "key 3", path, sizeof path);
  STC_CHECK(truncate(path, 10) == 0);
  size_t counts[2] = {0, 0};
  STC_CHECK_EQ_INT(stc_object_cache_list(cache, count_valid, counts, &err),
                   STC_OK);
  STC_CHECK_EQ_U64(counts[0], 2);
  STC_CHECK_EQ_U64(counts[1], 1);
  size_t removed = 0;
  STC_CHECK_EQ_INT(stc_object_cache_prune(cache, &removed, &err), STC_OK);
  STC_CHECK_EQ_U64(removed, 1);
  STC_CHECK_EQ_INT(stc_object_cache_clear(cache, &removed, &err), STC_OK);
  STC_CHECK_EQ_U64(removed, 2);
  counts[0] = counts[1] = 0;
  STC_CHECK_EQ_INT(stc_object_cache_list(cache, count_valid, counts, &err),
                   STC_OK);
  STC_CHECK_EQ_U64(counts[0] + counts[1], 0);
  stc_object_cache_close(cache);
}

STC_TEST(object_cache_read_only_directory_is_a_fault_not_a_crash) {
  int64_t now = 1700000000;
  stc_object_cache *cache = open_cache("read_only", 4, &now);
  STC_CHECK(cache);
  STC_CHECK(chmod(stc_object_cache_path(cache), 0500) == 0);
  stc_object_entry entry = make_entry("k", now);
  stc_error err;
  stc_error_clear(&err);
  STC_CHECK_EQ_INT(stc_object_cache_save(cache, &entry, &err),
                   STC_ERR_PERMISSION);
  STC_CHECK_CONTAINS(err.message, "read-only");
  STC_CHECK(chmod(stc_object_cache_path(cache), 0700) == 0);
  stc_object_cache_close(cache);
}
