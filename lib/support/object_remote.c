/* stc-run's compiled objects in the fleet tier (see
 * include/stc/object_remote.h).
 *
 * In: an object-cache entry and the fleet key. Out: the authenticated value
 * stored under "stc:v1:obj:<digest>" through the remote tier (tuner_remote.h,
 * kind STC_REMOTE_OBJECT), and on the way back an entry only when its MAC
 * verifies under the fleet key, it decodes strictly, holds the key asked for
 * and is fresh. Nothing in a value is parsed before its MAC is verified.
 * Stateless apart from the caller's handles: thread-safe as they are. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stc/object_remote.h"

#include "stc/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROBJ_MAGIC "stc-remote-object 1\n"
#define ROBJ_MAC_LABEL "mac "
#define ROBJ_HEAD_BYTES (sizeof ROBJ_MAGIC - 1 + sizeof ROBJ_MAC_LABEL - 1 + 65)
#define ROBJ_SKEW_SECONDS 60

/* ---- the fleet key ------------------------------------------------------ */

void stc_fleet_key_clear(stc_fleet_key *key) {
  if (!key)
    return;
  volatile uint8_t *wipe = key->bytes;
  for (size_t i = 0; i < sizeof key->bytes; ++i)
    wipe[i] = 0;
  key->size = 0;
}

stc_status stc_fleet_key_load(const char *path, stc_fleet_key *key,
                              stc_error *err) {
  if (!key)
    return STC_ERR_INVALID;
  stc_fleet_key_clear(key);
  if (!path || !path[0]) {
    stc_error_set(err, NULL, 0, 0, "no fleet key file given");
    return STC_ERR_INVALID;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    stc_error_set(err, path, 0, 0, "cannot open the fleet key: %s",
                  strerror(errno));
    return errno == EACCES ? STC_ERR_PERMISSION : STC_ERR_IO;
  }
  struct stat st;
  stc_status status = STC_OK;
  if (fstat(fd, &st) != 0) {
    stc_error_set(err, path, 0, 0, "cannot stat the fleet key: %s",
                  strerror(errno));
    status = STC_ERR_IO;
  } else if (!S_ISREG(st.st_mode)) {
    stc_error_set(err, path, 0, 0, "the fleet key is not a regular file");
    status = STC_ERR_PERMISSION;
  } else if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    stc_error_set(err, path, 0, 0,
                  "the fleet key is accessible to group or others (mode "
                  "%04o); make it private (chmod 600)",
                  (unsigned)(st.st_mode & 07777));
    status = STC_ERR_PERMISSION;
  } else if (st.st_size < STC_FLEET_KEY_MIN_BYTES ||
             st.st_size > STC_FLEET_KEY_MAX_BYTES) {
    stc_error_set(err, path, 0, 0,
                  "the fleet key has %lld bytes; it needs %d..%d random "
                  "bytes (head -c 32 /dev/urandom)",
                  (long long)st.st_size, STC_FLEET_KEY_MIN_BYTES,
                  STC_FLEET_KEY_MAX_BYTES);
    status = STC_ERR_INVALID;
  } else {
    size_t used = 0;
    while (used < sizeof key->bytes) {
      ssize_t got = read(fd, key->bytes + used, sizeof key->bytes - used);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0) {
        stc_error_set(err, path, 0, 0, "cannot read the fleet key: %s",
                      strerror(errno));
        status = STC_ERR_IO;
      }
      if (got <= 0)
        break;
      used += (size_t)got;
    }
    if (status == STC_OK &&
        (used < STC_FLEET_KEY_MIN_BYTES || used != (size_t)st.st_size)) {
      stc_error_set(err, path, 0, 0, "the fleet key changed while read");
      status = STC_ERR_IO;
    }
    key->size = used;
  }
  close(fd);
  if (status != STC_OK)
    stc_fleet_key_clear(key);
  return status;
}

/* ---- sealing ------------------------------------------------------------ */

static void robj_mac_hex(const stc_fleet_key *key, const char *digest,
                         const char *entry, size_t entry_size, char out[65]) {
  static const char digits[] = "0123456789abcdef";
  stc_hmac_part parts[] = {{ROBJ_MAGIC, sizeof ROBJ_MAGIC - 1},
                           {digest, 64},
                           {"\n", 1},
                           {entry, entry_size}};
  uint8_t mac[32];
  stc_hmac_sha256_parts(key->bytes, key->size, parts,
                        sizeof parts / sizeof *parts, mac);
  for (int i = 0; i < 32; ++i) {
    out[2 * i] = digits[mac[i] >> 4];
    out[2 * i + 1] = digits[mac[i] & 15];
  }
  out[64] = 0;
}

stc_status stc_object_remote_seal(const stc_fleet_key *key, const char *digest,
                                  const char *entry, size_t entry_size,
                                  char **out, size_t *out_size) {
  if (!key || key->size < STC_FLEET_KEY_MIN_BYTES ||
      !stc_is_sha256_hex(digest) || !entry || !out || !out_size ||
      entry_size > SIZE_MAX - ROBJ_HEAD_BYTES)
    return STC_ERR_INVALID;
  char *value = malloc(ROBJ_HEAD_BYTES + entry_size);
  if (!value)
    return STC_ERR_NOMEM;
  char mac[65];
  robj_mac_hex(key, digest, entry, entry_size, mac);
  size_t at = 0;
  memcpy(value + at, ROBJ_MAGIC, sizeof ROBJ_MAGIC - 1);
  at += sizeof ROBJ_MAGIC - 1;
  memcpy(value + at, ROBJ_MAC_LABEL, sizeof ROBJ_MAC_LABEL - 1);
  at += sizeof ROBJ_MAC_LABEL - 1;
  memcpy(value + at, mac, 64);
  value[at + 64] = '\n';
  at += 65;
  memcpy(value + at, entry, entry_size);
  *out = value;
  *out_size = at + entry_size;
  return STC_OK;
}

stc_status stc_object_remote_unseal(const stc_fleet_key *key,
                                    const char *digest, const char *data,
                                    size_t size, const char **entry,
                                    size_t *entry_size, const char **problem) {
  const char *ignored;
  if (!problem)
    problem = &ignored;
  *problem = NULL;
  if (!key || key->size < STC_FLEET_KEY_MIN_BYTES ||
      !stc_is_sha256_hex(digest) || !data || !entry || !entry_size)
    return STC_ERR_INVALID;
  const size_t magic = sizeof ROBJ_MAGIC - 1, label = sizeof ROBJ_MAC_LABEL - 1;
  if (size < ROBJ_HEAD_BYTES || memcmp(data, ROBJ_MAGIC, magic) != 0 ||
      memcmp(data + magic, ROBJ_MAC_LABEL, label) != 0 ||
      data[magic + label + 64] != '\n') {
    *problem = "not an authenticated object";
    return STC_ERR_CORRUPT;
  }
  const char *body = data + ROBJ_HEAD_BYTES;
  size_t body_size = size - ROBJ_HEAD_BYTES;
  char mac[65];
  robj_mac_hex(key, digest, body, body_size, mac);
  if (!stc_bytes_equal_constant_time(mac, data + magic + label, 64)) {
    *problem = "fails authentication (MAC mismatch: tampered, or written "
               "under another fleet key)";
    return STC_ERR_CORRUPT;
  }
  *entry = body;
  *entry_size = body_size;
  return STC_OK;
}

/* ---- configuration ------------------------------------------------------ */

stc_status stc_object_remote_from_environment(stc_remote_cache **remote,
                                              stc_fleet_key *key,
                                              stc_error *err) {
  if (!remote || !key)
    return STC_ERR_INVALID;
  *remote = NULL;
  const char *opt_in = getenv("STC_CACHE_REMOTE_OBJECTS");
  if (!opt_in || !opt_in[0] || strcmp(opt_in, "0") == 0)
    return STC_OK;
  if (strcmp(opt_in, "1") != 0) {
    stc_error_set(err, NULL, 0, 0,
                  "STC_CACHE_REMOTE_OBJECTS='%.40s' is neither 0 nor 1; "
                  "remote objects are off",
                  opt_in);
    return STC_ERR_INVALID;
  }
  const char *url = getenv("STC_CACHE_REMOTE");
  if (!url || !url[0]) {
    stc_error_set(err, NULL, 0, 0,
                  "STC_CACHE_REMOTE_OBJECTS=1 needs STC_CACHE_REMOTE (the "
                  "fleet's Redis); remote objects are off");
    return STC_ERR_INVALID;
  }
  const char *key_file = getenv("STC_CACHE_REMOTE_KEY_FILE");
  if (!key_file || !key_file[0]) {
    stc_error_set(err, NULL, 0, 0,
                  "STC_CACHE_REMOTE_OBJECTS=1 needs STC_CACHE_REMOTE_KEY_FILE "
                  "(a private file of >= %d random bytes that authenticates "
                  "the fleet's objects); remote objects are off",
                  STC_FLEET_KEY_MIN_BYTES);
    return STC_ERR_INVALID;
  }
  stc_error key_err;
  stc_error_clear(&key_err);
  stc_status status = stc_fleet_key_load(key_file, key, &key_err);
  if (status != STC_OK) {
    stc_error_set(err, key_err.file, 0, 0,
                  "STC_CACHE_REMOTE_KEY_FILE: %s; remote objects are off",
                  key_err.message);
    return status;
  }
  stc_remote_options options;
  stc_remote_options_init(&options);
  stc_remote_options_from_environment(&options, NULL); /* bad: default */
  status = stc_remote_cache_open(url, &options, remote, err);
  if (status != STC_OK) {
    stc_fleet_key_clear(key);
    *remote = NULL;
  }
  return status;
}

/* ---- fetch / store ------------------------------------------------------ */

stc_status stc_object_remote_fetch(stc_remote_cache *remote,
                                   const stc_fleet_key *key,
                                   const char *cache_key, int64_t now,
                                   uint64_t ttl_seconds, stc_object_entry *out,
                                   const char **problem) {
  const char *ignored;
  if (!problem)
    problem = &ignored;
  *problem = NULL;
  if (!remote || !key || !cache_key || !cache_key[0] || !out ||
      ttl_seconds == 0)
    return STC_ERR_INVALID;
  memset(out, 0, sizeof *out);
  char digest[65];
  stc_sha256_hex(cache_key, strlen(cache_key), digest);
  char *data = NULL;
  size_t size = 0;
  stc_status status =
      stc_remote_cache_get(remote, STC_REMOTE_OBJECT, digest, &data, &size);
  if (status != STC_OK)
    return status;
  const char *body = NULL;
  size_t body_size = 0;
  status = stc_object_remote_unseal(key, digest, data, size, &body, &body_size,
                                    problem);
  if (status == STC_OK)
    status = stc_object_entry_decode(body, body_size, out, problem);
  free(data);
  if (status != STC_OK)
    return status == STC_ERR_NOMEM ? status : STC_ERR_NOT_FOUND;
  /* Authentic, so written by a holder of the key: still checked like a disk
   * entry (a replayed value of another key or an old one is a miss). */
  if (strcmp(out->key, cache_key) != 0)
    *problem = "holds another key";
  else if (out->created > now &&
           (uint64_t)out->created - (uint64_t)now > ROBJ_SKEW_SECONDS)
    *problem = "created in the future";
  else if (out->created < now &&
           (uint64_t)now - (uint64_t)out->created >= ttl_seconds)
    *problem = NULL; /* expired: Redis would have dropped it; quiet */
  else
    return STC_OK;
  stc_object_entry_clear(out);
  return STC_ERR_NOT_FOUND;
}

stc_status stc_object_remote_store(stc_remote_cache *remote,
                                   const stc_fleet_key *key,
                                   const stc_object_entry *entry, int64_t now,
                                   uint64_t ttl_seconds) {
  if (!remote || !key || !entry || !entry->key || entry->created == 0 ||
      ttl_seconds == 0)
    return STC_ERR_INVALID;
  uint64_t left_seconds;
  if (entry->created >= now)
    left_seconds = ttl_seconds + (uint64_t)(entry->created - now);
  else if ((uint64_t)now - (uint64_t)entry->created < ttl_seconds)
    left_seconds = ttl_seconds - ((uint64_t)now - (uint64_t)entry->created);
  else
    return STC_ERR_INVALID; /* stale already */
  char *bytes = NULL, *value = NULL;
  size_t size = 0, value_size = 0;
  stc_status status = stc_object_entry_encode(entry, &bytes, &size);
  if (status != STC_OK)
    return status;
  char digest[65];
  stc_sha256_hex(entry->key, strlen(entry->key), digest);
  status =
      stc_object_remote_seal(key, digest, bytes, size, &value, &value_size);
  free(bytes);
  if (status != STC_OK)
    return status;
  uint64_t expire_ms =
      left_seconds > UINT64_MAX / 1000 ? UINT64_MAX : left_seconds * 1000;
  status = value_size > STC_REMOTE_MAX_OBJECT_VALUE
               ? STC_ERR_INVALID
               : stc_remote_cache_put(remote, STC_REMOTE_OBJECT, digest, value,
                                      value_size, expire_ms);
  free(value);
  return status;
}
