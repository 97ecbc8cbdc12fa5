/* stc/hash.h - hashing shared by region ids, cache keys and checksums.
 * Pure functions; thread-safe. */
#ifndef STC_HASH_H
#define STC_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 64-bit FNV-1a of bytes, continuing from seed (use STC_HASH_SEED to start). */
#define STC_HASH_SEED UINT64_C(0xcbf29ce484222325)
uint64_t stc_hash64(const void *data, size_t size, uint64_t seed);
/* Convenience: hash of a NUL-terminated string, continuing from seed. */
uint64_t stc_hash64_str(const char *text, uint64_t seed);

/* XXH64 (the xxHash 64-bit algorithm) of bytes with seed: a fast checksum
 * (several GB/s; SHA-256 with the SHA extensions ~1 GB/s here) for data
 * whose integrity, not authenticity, is checked (stc-run's object cache:
 * a private directory; the fleet tier signs with HMAC-SHA256). */
uint64_t stc_xxh64(const void *data, size_t size, uint64_t seed);

/* SHA-256 of bytes into out (32 bytes). */
void stc_sha256(const void *data, size_t size, uint8_t out[32]);
/* SHA-256 as 64 lower-case hex characters plus NUL. */
void stc_sha256_hex(const void *data, size_t size, char out[65]);
/* Test-only: with portable, SHA-256 runs its portable rounds from now on;
 * without, the processor's SHA extensions where it has them (the default).
 * Returns whether the extensions are in use now. Not while another thread
 * hashes. */
bool stc__sha256_accelerated(bool portable);
/* True when text (may be NULL) is exactly what stc_sha256_hex writes: 64
 * lower-case hex characters. */
bool stc_is_sha256_hex(const char *text);

/* HMAC-SHA256 (RFC 2104 with SHA-256, as in RFC 4231) of the concatenation
 * of count parts under key (any length; a key longer than the 64-byte block
 * is hashed first). */
typedef struct stc_hmac_part {
  const void *data;
  size_t size;
} stc_hmac_part;
void stc_hmac_sha256_parts(const void *key, size_t key_size,
                           const stc_hmac_part *parts, size_t count,
                           uint8_t out[32]);
/* The same of one part. */
void stc_hmac_sha256(const void *key, size_t key_size, const void *data,
                     size_t size, uint8_t out[32]);
/* Compares size bytes in time that depends on size only (for MACs); true
 * when equal. */
bool stc_bytes_equal_constant_time(const void *a, const void *b, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* STC_HASH_H */
