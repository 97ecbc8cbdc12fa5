/* stc/hash.h - hashing shared by region ids, cache keys and checksums.
 * Pure functions; thread-safe. */
#ifndef STC_HASH_H
#define STC_HASH_H

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

/* SHA-256 of bytes into out (32 bytes). */
void stc_sha256(const void *data, size_t size, uint8_t out[32]);
/* SHA-256 as 64 lower-case hex characters plus NUL. */
void stc_sha256_hex(const void *data, size_t size, char out[65]);

#ifdef __cplusplus
}
#endif

#endif /* STC_HASH_H */
