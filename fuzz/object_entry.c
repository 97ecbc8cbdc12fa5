/* libFuzzer target: stc-run's object-cache entry reader
 * (lib/support/object_cache.c) through its public API, the way a planted or
 * damaged entry file reaches it.
 *
 * In: arbitrary bytes as the entry file of a fixed key. Each input is tried
 * twice: as given, and "repaired" (everything before its last "checksum "
 * label re-checksummed), so that the fuzzer gets past SHA-256 to the field
 * shapes, the key comparison and freshness. Checks: no crash, leak or
 * undefined behaviour; a load that succeeds returns the fixed key and a
 * non-empty object; a miss with a problem text leaves nothing allocated;
 * listing never fails on a bad file. */
#include "stc/hash.h"
#include "stc/object_cache.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char key[] = "stc-run object key 1\nopt 2\ninput sha256:00\n";
static stc_object_cache *cache;
static char entry_path[4096];

static int64_t fixed_clock(void *user) {
  (void)user;
  return 1700000000;
}

static bool count_entry(void *user, const stc_object_listing *item) {
  (*(size_t *)user)++;
  if (item->status == STC_OK && (!item->entry || !item->entry->key))
    abort();
  return true;
}

static void setup(void) {
  const char *base = getenv("TMPDIR");
  char directory[4096];
  snprintf(directory, sizeof directory, "%s/stc-fuzz-objects-XXXXXX",
           base ? base : "/tmp");
  if (!mkdtemp(directory))
    abort();
  stc_error err;
  if (stc_object_cache_open(directory, 16, 3600, &cache, &err) != STC_OK) {
    fprintf(stderr, "cannot open cache: %s\n", err.message);
    abort();
  }
  stc_object_cache_set_clock(cache, fixed_clock, NULL);
  char name[65];
  stc_sha256_hex(key, strlen(key), name);
  snprintf(entry_path, sizeof entry_path, "%s/%s.obj",
           stc_object_cache_path(cache), name);
}

static void try_entry(const uint8_t *data, size_t size) {
  int fd = open(entry_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0)
    abort();
  if (size && write(fd, data, size) != (ssize_t)size)
    abort();
  close(fd);
  stc_object_entry entry;
  const char *problem = NULL;
  stc_error err;
  if (stc_object_cache_load(cache, key, &entry, &problem, &err) == STC_OK) {
    if (!entry.key || strcmp(entry.key, key) != 0 || !entry.object ||
        entry.object_size == 0)
      abort();
    stc_object_entry_clear(&entry);
  }
  size_t entries = 0;
  if (stc_object_cache_list(cache, count_entry, &entries, &err) != STC_OK)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!cache)
    setup();
  try_entry(data, size);
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
  try_entry(repaired, at + sizeof label - 1 + 65);
  free(repaired);
  return 0;
}
