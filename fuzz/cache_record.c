/* libFuzzer target: the tuner's disk-cache record reader (lib/tuner/cache.c)
 * through its public API, the way a planted or damaged file reaches it.
 *
 * In: arbitrary bytes as the record file of a fixed key. Each input is tried
 * twice: as given, and "repaired" - everything before its last
 * "checksum " line re-checksummed - so that the fuzzer also explores
 * records that pass the checksum (freshness, wrong key, wrong name, field
 * shapes) instead of stopping at SHA-256. Checks: no crash, leak or
 * undefined behaviour; a load that succeeds returns the fixed key and a
 * non-empty winner; listing never fails on a bad file. The cache lives in a
 * private directory under $TMPDIR (use a tmpfs such as /dev/shm for speed). */
#include "stc/hash.h"
#include "stc/tuner_cache.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char key[] = "op=linalg.matmul;env=fuzz;workload=f32[8x8:8,1]";
static stc_disk_cache *cache;
static char record_path[4096];

static int64_t fixed_clock(void *user) {
  (void)user;
  return 1700000000;
}

static bool count_entry(void *user, const stc_cache_entry *entry) {
  (*(size_t *)user)++;
  if (entry->status == STC_OK && (!entry->record || !entry->record->key))
    abort();
  return true;
}

static void setup(void) {
  const char *base = getenv("TMPDIR");
  char directory[4096];
  snprintf(directory, sizeof directory, "%s/stc-fuzz-cache-XXXXXX",
           base ? base : "/tmp");
  if (!mkdtemp(directory))
    abort();
  stc_error err;
  if (stc_disk_cache_open(directory, 16, 3600, &cache, &err) != STC_OK) {
    fprintf(stderr, "cannot open cache: %s\n", err.message);
    abort();
  }
  stc_disk_cache_set_clock(cache, fixed_clock, NULL);
  char name[65];
  stc_sha256_hex(key, strlen(key), name);
  snprintf(record_path, sizeof record_path, "%s/%s.rec",
           stc_disk_cache_path(cache), name);
}

static void try_record(const uint8_t *data, size_t size) {
  int fd = open(record_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0)
    abort();
  if (size && write(fd, data, size) != (ssize_t)size)
    abort();
  close(fd);
  stc_cache_record record;
  stc_error err;
  if (stc_disk_cache_load(cache, key, &record, &err) == STC_OK) {
    if (!record.key || strcmp(record.key, key) != 0 || !record.winner ||
        !record.winner[0])
      abort();
    stc_cache_record_clear(&record);
  }
  size_t entries = 0;
  if (stc_disk_cache_list(cache, count_entry, &entries, &err) != STC_OK)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!cache)
    setup();
  try_record(data, size);
  /* The repaired copy: a correct checksum over what precedes the last
   * "checksum " label. */
  static const char label[] = "checksum ";
  size_t at = size;
  for (size_t i = size; i-- > 0;)
    if (size - i >= sizeof label - 1 &&
        memcmp(data + i, label, sizeof label - 1) == 0) {
      at = i;
      break;
    }
  if (at == size)
    return 0;
  uint8_t *repaired = malloc(at + sizeof label - 1 + 65);
  if (!repaired)
    return 0;
  memcpy(repaired, data, at + sizeof label - 1);
  stc_sha256_hex(data, at, (char *)repaired + at + sizeof label - 1);
  repaired[at + sizeof label - 1 + 64] = '\n';
  try_record(repaired, at + sizeof label - 1 + 65);
  free(repaired);
  return 0;
}
