/* The part of a cache-file fuzz target that does not depend on which cache
 * it feeds (fuzz/cache_record.c, fuzz/object_entry.c): a private cache
 * directory under $TMPDIR, a fixed clock, the entry file of a fixed key,
 * and each input tried twice: as given, and "repaired" - everything before
 * its last "checksum " label re-checksummed - so that the fuzzer also
 * explores entries that pass the checksum (freshness, wrong key, wrong name,
 * field shapes) instead of stopping at the checksum.
 *
 * Header-only (static functions) because fuzz/run.sh builds each target
 * from its one file plus the core. */
#ifndef STC_FUZZ_CACHE_HARNESS_H
#define STC_FUZZ_CACHE_HARNESS_H

#include "stc/hash.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The clock both targets give their cache: entries created near it are
 * fresh, others are expired or future-dated. */
static int64_t fuzz_fixed_clock(void *user) {
  (void)user;
  return 1700000000;
}

/* Makes a fresh directory <$TMPDIR or /tmp>/<prefix>XXXXXX in directory. */
static void fuzz_cache_directory(const char *prefix, char directory[4096]) {
  const char *base = getenv("TMPDIR");
  snprintf(directory, 4096, "%s/%sXXXXXX", base ? base : "/tmp", prefix);
  if (!mkdtemp(directory))
    abort();
}

/* The path of key's entry file in cache_path: sha256 hex, then suffix. */
static void fuzz_entry_path(const char *cache_path, const char *key,
                            const char *suffix, char path[4096]) {
  char name[65];
  stc_sha256_hex(key, strlen(key), name);
  snprintf(path, 4096, "%s/%s%s", cache_path, name, suffix);
}

/* Replaces the file at path with size bytes of data. */
static void fuzz_write_file(const char *path, const uint8_t *data,
                            size_t size) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0)
    abort();
  if (size && write(fd, data, size) != (ssize_t)size)
    abort();
  close(fd);
}

/* The checksums entries carry, as hex digits into out (NUL after them);
 * each returns how many digits it wrote. */
static inline size_t fuzz_sha256_hex(const uint8_t *data, size_t size, char *out) {
  stc_sha256_hex(data, size, out);
  return 64;
}

static inline size_t fuzz_xxh64_hex(const uint8_t *data, size_t size, char *out) {
  uint64_t h = stc_xxh64(data, size, 0);
  for (int i = 15; i >= 0; i--, h >>= 4)
    out[i] = "0123456789abcdef"[h & 15];
  out[16] = 0;
  return 16;
}

/* Calls try with data, then with its repaired copy (checksummed by
 * checksum) when it has a "checksum " label. */
static void fuzz_try_with_repair(const uint8_t *data, size_t size,
                                 void (*try)(const uint8_t *data,
                                             size_t size),
                                 size_t (*checksum)(const uint8_t *data,
                                                    size_t size, char *out)) {
  try(data, size);
  static const char label[] = "checksum ";
  size_t at = size;
  for (size_t i = size; i-- > 0;)
    if (size - i >= sizeof label - 1 &&
        memcmp(data + i, label, sizeof label - 1) == 0) {
      at = i;
      break;
    }
  if (at == size)
    return;
  uint8_t *repaired = malloc(at + sizeof label - 1 + 65);
  if (!repaired)
    return;
  memcpy(repaired, data, at + sizeof label - 1);
  size_t digits = checksum(data, at, (char *)repaired + at + sizeof label - 1);
  repaired[at + sizeof label - 1 + digits] = '\n';
  try(repaired, at + sizeof label - 1 + digits + 1);
  free(repaired);
}

#endif /* STC_FUZZ_CACHE_HARNESS_H */
