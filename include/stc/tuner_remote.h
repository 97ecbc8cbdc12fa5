/* stc/tuner_remote.h - a fleet-wide tier under the tuner's disk cache: a
 * Redis server shared by many machines (README "Fleet cache (Redis)").
 *
 * The tier stores opaque bytes of two kinds, each in its own key namespace:
 * tuning records (the disk cache's record encoding, so that a remote record
 * is checked exactly like a disk record) under
 * "stc:v<format>:rec:<sha256 hex of key>", with short leases under
 * "stc:v<format>:lease:<...>" so that one machine tunes a key while the
 * others run the reference; and stc-run's compiled objects (authenticated
 * by the caller, stc/object_remote.h) under "stc:v<format>:obj:<...>". It talks
 * to Redis through hiredis 0.14 (Debian 12's libhiredis0.14), loaded with
 * dlopen on first use: a machine without it still runs, and the tier reports a
 * fault.
 *
 * Never blocking for long: every connect and command has a timeout
 * (timeout_ms); after a transport failure (refused, timed out, closed,
 * unparsable reply) the tier goes quiet for backoff_ms and answers at once
 * with STC_ERR_UNAVAILABLE; a call that finds the connection in use by
 * another thread does not wait either. Faults are kept as text for one
 * warning (stc_remote_cache_last_fault); the library never prints.
 *
 * Thread safety: a handle may be used from many threads; one connection is
 * shared and taken with a try-lock. */
#ifndef STC_TUNER_REMOTE_H
#define STC_TUNER_REMOTE_H

#include "stc/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stc_remote_options {
  uint32_t timeout_ms; /* connect and each command, default 100 */
  uint32_t backoff_ms; /* quiet time after a failure, default 30000 */
  uint32_t lease_ms;   /* a tuning lease's lifetime, default 30000 */
  uint32_t poll_ms;    /* while another holds a key's lease, the record is
                          looked for again at most this often, default 250 */
  const char *library; /* the hiredis 0.14 shared library to dlopen, NULL:
                          "libhiredis.so.0.14" (copied by open) */
} stc_remote_options;

/* Sets the defaults above. */
void stc_remote_options_init(stc_remote_options *options);

/* Reads STC_CACHE_REMOTE_TIMEOUT_MS, _BACKOFF_MS, _LEASE_MS, _POLL_MS and
 * STC_CACHE_REMOTE_LIBRARY over the values in options; a bad value is left
 * at its old value and reported in err (STC_ERR_INVALID, the others still
 * read). Uses getenv: must not race with setenv. */
stc_status stc_remote_options_from_environment(stc_remote_options *options,
                                               stc_error *err);

typedef struct stc_remote_cache stc_remote_cache;

/* Parses url ("redis://HOST[:PORT][/DB]", HOST a name, an IPv4 address or
 * "[IPv6]"; or "unix:PATH[?db=N]") into a new handle. Connects lazily, on
 * the first operation; only a malformed url fails here (STC_ERR_INVALID
 * with the reason). options may be NULL (defaults). The caller destroys
 * *out with stc_remote_cache_close. */
stc_status stc_remote_cache_open(const char *url,
                                 const stc_remote_options *options,
                                 stc_remote_cache **out, stc_error *err);
/* Closes the connection and frees the handle; accepts NULL. */
void stc_remote_cache_close(stc_remote_cache *remote);
/* The url as given (owned by the handle). */
const char *stc_remote_cache_url(const stc_remote_cache *remote);

/* What a stored value is: its key namespace and its size bound (a bigger
 * value read back is a miss; one to be written is refused). */
typedef enum stc_remote_kind {
  STC_REMOTE_RECORD, /* "rec": tuning records, at most 1 MiB */
  STC_REMOTE_OBJECT, /* "obj": compiled objects, at most
                        STC_REMOTE_MAX_OBJECT_VALUE */
} stc_remote_kind;
#define STC_REMOTE_MAX_RECORD_VALUE (1024u * 1024u)
#define STC_REMOTE_MAX_OBJECT_VALUE (256u * 1024u * 1024u)

/* Statuses of the operations below: STC_OK; STC_ERR_NOT_FOUND (no such
 * record); STC_ERR_UNAVAILABLE (not tried: backing off after a failure, or
 * the connection is busy in another thread); STC_ERR_IO (a fault now: it is
 * kept for stc_remote_cache_last_fault). digest is the 64 hex digits of the
 * SHA-256 of the record's key. */

/* Fetches the bytes of kind stored under digest; on STC_OK the caller frees
 * *data (NUL-terminated after *size bytes). For a record, returns
 * STC_ERR_NOT_FOUND at once, without asking the server, while another
 * machine holds digest's lease and poll_ms has not passed since it was last
 * looked for. */
stc_status stc_remote_cache_get(stc_remote_cache *remote, stc_remote_kind kind,
                                const char *digest, char **data, size_t *size);
/* Stores size bytes (at most the kind's bound, else STC_ERR_INVALID) under
 * digest with an expiry of expire_ms (> 0); for a record, then gives up
 * this process's lease on digest if it holds one. */
stc_status stc_remote_cache_put(stc_remote_cache *remote, stc_remote_kind kind,
                                const char *digest, const char *data,
                                size_t size, uint64_t expire_ms);
/* Removes the value of kind under digest; a missing one is STC_OK. */
stc_status stc_remote_cache_delete(stc_remote_cache *remote,
                                   stc_remote_kind kind, const char *digest);
/* Asks whether this process may tune (record) digest now: *granted is true when
 * it took the lease (lease_ms), or when the server cannot be used (tuning then
 * stays local, as without the tier); false when another process holds the
 * lease, when a record appeared meanwhile (look again), or when the
 * connection is busy. */
void stc_remote_cache_claim(stc_remote_cache *remote, const char *digest,
                            bool *granted);

/* What a scan reports about one stored record: its digest, its bytes and
 * the server's remaining expiry in ms (-1: none, -2: gone meanwhile). */
typedef struct stc_remote_entry {
  const char *digest;
  const char *data;
  size_t size;
  int64_t expire_ms;
} stc_remote_entry;

/* Calls fn for every value of kind of this format version (SCAN, in the
 * server's order); fn returns false to stop. Waits for the server like any
 * command (no try-lock, no backoff): meant for tools. STC_ERR_IO with err set
 * when the server cannot be used. */
stc_status stc_remote_cache_scan(stc_remote_cache *remote, stc_remote_kind kind,
                                 bool (*fn)(void *user,
                                            const stc_remote_entry *entry),
                                 void *user, stc_error *err);

/* Copies the text of the latest fault ("redis://h:p: cannot connect:
 * Connection refused", "...: no reply within 100 ms", "...: cannot load
 * libhiredis.so.0.14: ...") into buffer; false, with buffer "", when there
 * was none. Counts faults in *count when count is not NULL. */
bool stc_remote_cache_last_fault(stc_remote_cache *remote, char *buffer,
                                 size_t size, uint64_t *count);

#ifdef __cplusplus
}
#endif

#endif /* STC_TUNER_REMOTE_H */
