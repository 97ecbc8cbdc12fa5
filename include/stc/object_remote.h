/* stc/object_remote.h - stc-run's compiled objects in the fleet tier
 * (stc/tuner_remote.h; README "Fleet cache (Redis)").
 *
 * A tuning record from the fleet only chooses among variants compiled into
 * the process and is validated on use; an object from the fleet is code that
 * runs. So remote objects are a separate opt-in (STC_CACHE_REMOTE_OBJECTS=1
 * beside STC_CACHE_REMOTE) and every one is authenticated: the value stored
 * under "stc:v1:obj:<sha256 hex of the object key>" is
 *
 *   "stc-remote-object 1\nmac <64 hex>\n" <object-cache entry bytes>
 *
 * where mac = HMAC-SHA256(fleet key, "stc-remote-object 1\n" <digest> "\n"
 * <entry bytes>) (stc/hash.h, RFC 2104), and the entry bytes are the disk
 * encoding of stc/object_cache.h (full key, creation time, checksum). The MAC
 * is verified (constant-time compare) before anything in the value is
 * parsed; then the entry is decoded strictly, must hold the very key asked
 * for and be fresh. Whoever holds the fleet key can make every machine of
 * the fleet run code: it must be as private as the machines themselves.
 *
 * The fleet key is a file (STC_CACHE_REMOTE_KEY_FILE) of at least
 * STC_FLEET_KEY_MIN_BYTES bytes (e.g. `head -c 32 /dev/urandom`), refused
 * when group or others may read or write it. No MLIR or LLVM here. */
#ifndef STC_OBJECT_REMOTE_H
#define STC_OBJECT_REMOTE_H

#include "stc/object_cache.h"
#include "stc/status.h"
#include "stc/tuner_remote.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STC_FLEET_KEY_MIN_BYTES 32
#define STC_FLEET_KEY_MAX_BYTES 4096

typedef struct stc_fleet_key {
  uint8_t bytes[STC_FLEET_KEY_MAX_BYTES];
  size_t size;
} stc_fleet_key;

/* Reads the fleet key from path (all of its bytes). STC_ERR_PERMISSION when
 * it is not a regular file or group/others have any access to it;
 * STC_ERR_INVALID when shorter than STC_FLEET_KEY_MIN_BYTES or longer than
 * STC_FLEET_KEY_MAX_BYTES; STC_ERR_IO when unreadable. err says which. */
stc_status stc_fleet_key_load(const char *path, stc_fleet_key *key,
                              stc_error *err);
/* Wipes the key's bytes. */
void stc_fleet_key_clear(stc_fleet_key *key);

/* Wraps entry bytes (digest: 64 hex digits, the SHA-256 of the entry's key)
 * into the authenticated value above; the caller frees *out. */
stc_status stc_object_remote_seal(const stc_fleet_key *key, const char *digest,
                                  const char *entry, size_t entry_size,
                                  char **out, size_t *out_size);
/* Checks a value read under digest: STC_OK with *entry and *entry_size pointing
 * into data when its MAC verifies; else STC_ERR_CORRUPT ("not an
 * authenticated object", "fails authentication (MAC mismatch: tampered, or
 * written under another fleet key)") with *problem set. */
stc_status stc_object_remote_unseal(const stc_fleet_key *key,
                                    const char *digest, const char *data,
                                    size_t size, const char **entry,
                                    size_t *entry_size, const char **problem);

/* The opt-in from the environment: STC_CACHE_REMOTE_OBJECTS ("1" on; unset,
 * "" or "0" off), STC_CACHE_REMOTE, STC_CACHE_REMOTE_KEY_FILE and the tier's
 * options (stc_remote_options_from_environment; a bad one keeps its
 * default). STC_OK with *remote NULL: not asked for. STC_OK with *remote
 * set (caller closes it) and key loaded: on. Any other status: asked for
 * and refused; err says why (worth one warning). Uses getenv. */
stc_status stc_object_remote_from_environment(stc_remote_cache **remote,
                                              stc_fleet_key *key,
                                              stc_error *err);

/* Fetches the entry of cache_key from the tier. STC_OK: *out filled (caller
 * clears it), authenticated, holding cache_key, fresh at now (created at
 * most 60 s ahead, less than ttl_seconds ago). STC_ERR_NOT_FOUND: a miss;
 * *problem NULL when nothing usable was stored (absent, expired, too big),
 * else why the stored value was refused (worth a warning). STC_ERR_NOMEM,
 * STC_ERR_INVALID; STC_ERR_UNAVAILABLE or STC_ERR_IO: the tier could not be
 * asked (stc_remote_cache_last_fault says why). */
stc_status stc_object_remote_fetch(stc_remote_cache *remote,
                                   const stc_fleet_key *key,
                                   const char *cache_key, int64_t now,
                                   uint64_t ttl_seconds, stc_object_entry *out,
                                   const char **problem);
/* Stores entry (created must be set) sealed under key, expiring when it
 * goes stale (created + ttl_seconds). STC_ERR_INVALID when the entry is
 * stale, out of bounds or bigger than STC_REMOTE_MAX_OBJECT_VALUE; the
 * tier's statuses otherwise (faults kept for stc_remote_cache_last_fault). */
stc_status stc_object_remote_store(stc_remote_cache *remote,
                                   const stc_fleet_key *key,
                                   const stc_object_entry *entry, int64_t now,
                                   uint64_t ttl_seconds);

#ifdef __cplusplus
}
#endif

#endif /* STC_OBJECT_REMOTE_H */
