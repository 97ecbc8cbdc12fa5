/* Unit tests for lib/support/object_remote.c, stc-run's objects in the fleet
 * tier: a sealed entry round-trips; a flip of any byte of the value, a
 * truncation at any length, a value sealed under another fleet key or for
 * another digest is refused before anything is parsed; the fleet key file is
 * refused when group/other may access it, too short, or not a regular file;
 * the opt-in without a key file or without a url is refused with a reason.
 * (Fetch and store against a real server: test/remote-cache/objects*.test.) */
#include "stc_test.h"

#include "stc/hash.h"
#include "stc/object_remote.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static stc_fleet_key test_key(uint8_t seed) {
  stc_fleet_key key = {.size = 32};
  for (int i = 0; i < 32; ++i)
    key.bytes[i] = (uint8_t)(seed + i * 29);
  return key;
}

static const char *test_path(const char *name) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/%s", stc_test_tmpdir(), name);
  return path;
}

static bool write_file(const char *path, const void *data, size_t size,
                       mode_t mode) {
  unlink(path);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0)
    return false;
  bool ok = write(fd, data, size) == (ssize_t)size;
  return close(fd) == 0 && ok && chmod(path, mode) == 0;
}

STC_TEST(object_remote_seal_round_trip_and_every_flip_refused) {
  stc_fleet_key key = test_key(1), other = test_key(2);
  char digest[65], other_digest[65];
  stc_sha256_hex("key", 3, digest);
  stc_sha256_hex("other", 5, other_digest);
  const char entry[] = "entry bytes\0with a NUL and an object";
  char *value;
  size_t size;
  STC_CHECK_EQ_INT(
      stc_object_remote_seal(&key, digest, entry, sizeof entry, &value, &size),
      STC_OK);
  const char *body, *problem;
  size_t body_size;
  STC_CHECK_EQ_INT(stc_object_remote_unseal(&key, digest, value, size, &body,
                                            &body_size, &problem),
                   STC_OK);
  STC_CHECK_EQ_U64(body_size, sizeof entry);
  STC_CHECK(memcmp(body, entry, sizeof entry) == 0);
  /* Another fleet key, another digest (a value moved to another name). */
  STC_CHECK_EQ_INT(stc_object_remote_unseal(&other, digest, value, size, &body,
                                            &body_size, &problem),
                   STC_ERR_CORRUPT);
  STC_CHECK_CONTAINS(problem, "fails authentication");
  STC_CHECK_EQ_INT(stc_object_remote_unseal(&key, other_digest, value, size,
                                            &body, &body_size, &problem),
                   STC_ERR_CORRUPT);
  size_t refused = 0;
  for (size_t i = 0; i < size; ++i) {
    value[i] ^= 0x01;
    problem = NULL;
    refused +=
        stc_object_remote_unseal(&key, digest, value, size, &body, &body_size,
                                 &problem) == STC_ERR_CORRUPT &&
        problem;
    value[i] ^= 0x01;
  }
  STC_CHECK_EQ_U64(refused, size);
  refused = 0;
  for (size_t length = 0; length < size; ++length)
    refused +=
        stc_object_remote_unseal(&key, digest, value, length, &body, &body_size,
                                 &problem) == STC_ERR_CORRUPT;
  STC_CHECK_EQ_U64(refused, size);
  free(value);
  /* No key: nothing is sealed or opened. */
  stc_fleet_key empty = {.size = 0};
  STC_CHECK_EQ_INT(stc_object_remote_seal(&empty, digest, entry, sizeof entry,
                                          &value, &size),
                   STC_ERR_INVALID);
}

STC_TEST(object_remote_fleet_key_file_checks) {
  stc_fleet_key key;
  stc_error err;
  uint8_t bytes[40];
  for (int i = 0; i < 40; ++i)
    bytes[i] = (uint8_t)(i * 31 + 7);
  const char *path = test_path("fleet.key");
  STC_CHECK(write_file(path, bytes, 40, 0600));
  stc_error_clear(&err);
  STC_CHECK_EQ_INT(stc_fleet_key_load(path, &key, &err), STC_OK);
  STC_CHECK_EQ_U64(key.size, 40);
  STC_CHECK(memcmp(key.bytes, bytes, 40) == 0);
  const mode_t loose[] = {0640, 0604, 0620, 0602, 0644};
  for (size_t i = 0; i < sizeof loose / sizeof *loose; ++i) {
    STC_CHECK(chmod(path, loose[i]) == 0);
    stc_error_clear(&err);
    STC_CHECK_EQ_INT(stc_fleet_key_load(path, &key, &err), STC_ERR_PERMISSION);
    STC_CHECK_CONTAINS(err.message, "group or others");
    STC_CHECK_EQ_U64(key.size, 0);
  }
  STC_CHECK(write_file(path, bytes, 31, 0400));
  stc_error_clear(&err);
  STC_CHECK_EQ_INT(stc_fleet_key_load(path, &key, &err), STC_ERR_INVALID);
  STC_CHECK_CONTAINS(err.message, "31 bytes");
  stc_error_clear(&err);
  STC_CHECK_EQ_INT(stc_fleet_key_load(stc_test_tmpdir(), &key, &err),
                   STC_ERR_PERMISSION);
  stc_error_clear(&err);
  STC_CHECK_EQ_INT(stc_fleet_key_load(test_path("absent.key"), &key, &err),
                   STC_ERR_IO);
}

STC_TEST(object_remote_opt_in_needs_url_and_key) {
  stc_remote_cache *remote = (stc_remote_cache *)1;
  stc_fleet_key key;
  stc_error err;
  unsetenv("STC_CACHE_REMOTE_OBJECTS");
  STC_CHECK_EQ_INT(stc_object_remote_from_environment(&remote, &key, &err),
                   STC_OK);
  STC_CHECK(remote == NULL);
  setenv("STC_CACHE_REMOTE_OBJECTS", "1", 1);
  unsetenv("STC_CACHE_REMOTE");
  stc_error_clear(&err);
  STC_CHECK_EQ_INT(stc_object_remote_from_environment(&remote, &key, &err),
                   STC_ERR_INVALID);
  STC_CHECK_CONTAINS(err.message, "needs STC_CACHE_REMOTE");
  setenv("STC_CACHE_REMOTE", "redis://127.0.0.1:1", 1);
  unsetenv("STC_CACHE_REMOTE_KEY_FILE");
  stc_error_clear(&err);
  STC_CHECK_EQ_INT(stc_object_remote_from_environment(&remote, &key, &err),
                   STC_ERR_INVALID);
  STC_CHECK_CONTAINS(err.message, "needs STC_CACHE_REMOTE_KEY_FILE");
  uint8_t bytes[32] = {1};
  const char *path = test_path("env.key");
  STC_CHECK(write_file(path, bytes, 32, 0644));
  setenv("STC_CACHE_REMOTE_KEY_FILE", path, 1);
  stc_error_clear(&err);
  STC_CHECK_EQ_INT(stc_object_remote_from_environment(&remote, &key, &err),
                   STC_ERR_PERMISSION);
  STC_CHECK(remote == NULL);
  STC_CHECK(chmod(path, 0600) == 0);
  stc_error_clear(&err);
  STC_CHECK_EQ_INT(stc_object_remote_from_environment(&remote, &key, &err),
                   STC_OK);
  STC_CHECK(remote != NULL);
  STC_CHECK_EQ_U64(key.size, 32);
  stc_remote_cache_close(remote);
  setenv("STC_CACHE_REMOTE_OBJECTS", "yes", 1);
  stc_error_clear(&err);
  STC_CHECK_EQ_INT(stc_object_remote_from_environment(&remote, &key, &err),
                   STC_ERR_INVALID);
  unsetenv("STC_CACHE_REMOTE_OBJECTS");
  unsetenv("STC_CACHE_REMOTE");
  unsetenv("STC_CACHE_REMOTE_KEY_FILE");
}
